//! Go-compatible formatting, the one copy shared by the assessment and the CLI: Go
//! `time.Duration` semantics needed to print durations exactly like `oc adm upgrade status`,
//! Go's `%q` quoting ([`go_quote`]) and the `...` cut of long texts ([`ellipsize`]).
//!
//! Durations are carried as **`i128` nanoseconds**. Go's `time.Duration` is an `int64`, so every
//! meaningful value fits in `i64`; the wider type only spares callers overflow handling when they
//! subtract timestamps. Formatting accepts any `i128`. [`round`] saturates its result to the `i64`
//! range exactly like Go's `Duration.Round` (which returns `minDuration`/`maxDuration` on overflow),
//! and [`parse_go_duration`] rejects whatever Go's `time.ParseDuration` rejects, including values
//! outside the `i64` range.
//!
//! Provided:
//! * `time.Duration.String()` as [`go_duration_string`] (`0s`, `1.5ms`, `1h0m10s`, `-5m0s`, …);
//! * `Duration.Round(m)` (halves away from zero) and `Duration.Truncate(m)` as [`round`] and
//!   [`truncate`];
//! * `time.ParseDuration` as [`parse_go_duration`];
//! * oc's `shortDuration` as [`short_duration`] (`1h0m0s` → `1h`, `2m0.000368975s` → `2m`,
//!   `0s` → `now`).

/// One nanosecond.
pub const NANOSECOND: i128 = 1;
/// One microsecond in nanoseconds.
pub const MICROSECOND: i128 = 1_000 * NANOSECOND;
/// One millisecond in nanoseconds.
pub const MILLISECOND: i128 = 1_000 * MICROSECOND;
/// One second in nanoseconds.
pub const SECOND: i128 = 1_000 * MILLISECOND;
/// One minute in nanoseconds.
pub const MINUTE: i128 = 60 * SECOND;
/// One hour in nanoseconds.
pub const HOUR: i128 = 60 * MINUTE;

/// Go's `minDuration` / `maxDuration`: the saturation bounds of `Duration.Round`.
const MIN_DURATION: i128 = i64::MIN as i128;
const MAX_DURATION: i128 = i64::MAX as i128;

/// Formats `ns` like Go's `time.Duration.String()`.
///
/// Zero is `0s`; magnitudes below one second use the largest of `ns`, `µs` (U+00B5) and `ms` that
/// keeps the integer part non-zero, with a decimal fraction (`1.5ms`); everything else is
/// `[-][<h>h][<m>m]<s>[.<frac>]s`, hours only when ≥ 1 h and minutes when ≥ 1 min or hours are
/// shown (`1h0m10s`). Fractions never have trailing zeros and the dot is omitted when they are 0.
pub fn go_duration_string(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let u = ns.unsigned_abs();
    let second = SECOND.unsigned_abs();
    if u < second {
        let (prec, unit) = match u {
            0 => return "0s".to_owned(),
            u if u < MICROSECOND.unsigned_abs() => (0, "ns"),
            u if u < MILLISECOND.unsigned_abs() => (3, "µs"),
            _ => (6, "ms"),
        };
        let (int, frac) = split_fraction(u, prec);
        return format!("{sign}{int}{frac}{unit}");
    }
    let (secs, frac) = split_fraction(u, 9);
    let mins = secs / 60;
    let mut out = String::from(sign);
    if mins > 0 {
        let hours = mins / 60;
        if hours > 0 {
            out.push_str(&format!("{hours}h"));
        }
        out.push_str(&format!("{}m", mins % 60));
    }
    out.push_str(&format!("{}{frac}s", secs % 60));
    out
}

/// Go's `fmtFrac`: splits `v` into `v / 10^prec` and the fractional digits as `.ddd` without
/// trailing zeros (empty when the fraction is zero).
fn split_fraction(v: u128, prec: u32) -> (u128, String) {
    let scale = 10u128.pow(prec);
    let frac = v % scale;
    if frac == 0 {
        return (v / scale, String::new());
    }
    let digits = format!("{frac:0width$}", width = prec as usize);
    (v / scale, format!(".{}", digits.trim_end_matches('0')))
}

/// Go's `Duration.Round(m)`: rounds `ns` to the nearest multiple of `m`, halfway values away
/// from zero. `m <= 0` returns `ns` unchanged. A result outside the `i64` range saturates to
/// `i64::MIN`/`i64::MAX`, as Go does on overflow.
pub fn round(ns: i128, m: i128) -> i128 {
    if m <= 0 {
        return ns;
    }
    // |r| < m, so neither the negation nor doubling (in u128) can overflow.
    let r = ns % m;
    let less_than_half = |x: i128| x.unsigned_abs() * 2 < m.unsigned_abs();
    let rounded = if ns < 0 {
        let r = -r;
        if less_than_half(r) {
            ns.checked_add(r)
        } else {
            ns.checked_sub(m - r)
        }
    } else if less_than_half(r) {
        ns.checked_sub(r)
    } else {
        ns.checked_add(m - r)
    };
    match rounded {
        Some(v) => v.clamp(MIN_DURATION, MAX_DURATION),
        None if ns < 0 => MIN_DURATION,
        None => MAX_DURATION,
    }
}

/// Go's `Duration.Truncate(m)`: rounds `ns` toward zero to a multiple of `m`. `m <= 0` returns
/// `ns` unchanged.
pub fn truncate(ns: i128, m: i128) -> i128 {
    if m <= 0 {
        return ns;
    }
    ns - ns % m
}

/// Go's `time.ParseDuration`: a possibly signed sequence of decimal numbers, each with an
/// optional fraction and a unit (`ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`), e.g. `-1.5h`,
/// `2h45m`, or the bare `0`. Returns `None` wherever Go returns an error (including values that
/// do not fit Go's `int64`). Fractions go through `float64` exactly like Go, so results are
/// bit-for-bit Go's.
pub fn parse_go_duration(s: &str) -> Option<i128> {
    const LIMIT: u64 = 1 << 63;
    let mut rest = s;
    let mut neg = false;
    if let Some(stripped) = rest.strip_prefix('-') {
        neg = true;
        rest = stripped;
    } else if let Some(stripped) = rest.strip_prefix('+') {
        rest = stripped;
    }
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let is_digit_or_dot = |c: u8| c == b'.' || c.is_ascii_digit();
    let mut d: u64 = 0;
    while !rest.is_empty() {
        if !rest.as_bytes().first().is_some_and(|&c| is_digit_or_dot(c)) {
            return None;
        }
        // [0-9]*
        let before = rest.len();
        let (mut v, after_int) = leading_int(rest)?;
        rest = after_int;
        let pre = rest.len() != before;
        // (\.[0-9]*)?
        let mut post = false;
        let (mut f, mut scale) = (0u64, 1f64);
        if let Some(after_dot) = rest.strip_prefix('.') {
            let before = after_dot.len();
            let (x, sc, after_frac) = leading_fraction(after_dot);
            (f, scale, rest) = (x, sc, after_frac);
            post = rest.len() != before;
        }
        if !pre && !post {
            return None;
        }
        // Unit: everything up to the next digit or dot (both ASCII, so a char boundary).
        let unit_len = rest.bytes().position(is_digit_or_dot).unwrap_or(rest.len());
        if unit_len == 0 {
            return None;
        }
        let (unit_str, after_unit) = rest.split_at(unit_len);
        rest = after_unit;
        let unit: u64 = match unit_str {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        if v > LIMIT / unit {
            return None;
        }
        v *= unit;
        if f > 0 {
            // Go: v += uint64(float64(f) * (float64(unit) / scale)); the product is at most
            // 3.6e12 (one hour), so the float→int conversion never saturates.
            v = v.checked_add((f as f64 * (unit as f64 / scale)) as u64)?;
            if v > LIMIT {
                return None;
            }
        }
        // Go adds in uint64 with wrap-around (only reachable as 2^63 + 2^63).
        d = d.wrapping_add(v);
        if d > LIMIT {
            return None;
        }
    }
    if neg {
        return Some(-i128::from(d));
    }
    if d > LIMIT - 1 {
        return None;
    }
    Some(i128::from(d))
}

/// Go's `leadingInt`: consumes `[0-9]*`, failing on values above 2^63.
fn leading_int(s: &str) -> Option<(u64, &str)> {
    let end = s
        .bytes()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(s.len());
    let mut x: u64 = 0;
    for c in s.bytes().take(end) {
        if x > (1 << 63) / 10 {
            return None;
        }
        x = x * 10 + u64::from(c - b'0');
        if x > 1 << 63 {
            return None;
        }
    }
    Some((x, &s[end..]))
}

/// Go's `leadingFraction`: consumes `[0-9]*`, silently dropping precision once the
/// accumulator would overflow; returns the digits as an integer and `10^(digits kept)`.
fn leading_fraction(s: &str) -> (u64, f64, &str) {
    let end = s
        .bytes()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(s.len());
    let (mut x, mut scale, mut overflow) = (0u64, 1f64, false);
    for c in s.bytes().take(end) {
        if overflow {
            continue;
        }
        if x > ((1u64 << 63) - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(c - b'0');
        if y > 1 << 63 {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, &s[end..])
}

/// oc's `shortDuration`: Go's duration string with the noise removed.
///
/// `0s` → `now`; `<h>h0m0s` → `<h>h`; `…m0s` → `…m`; a string with a fraction is cut at the `.`
/// (truncating toward zero), given an `s` suffix, re-parsed and shortened again
/// (`2m0.000368975s` → `2m0s` → `2m`, `0.5s` → `now`, and the oc quirk `1.5ms` → `1s`);
/// anything else is kept (`1h0m10s`, `500ms`).
pub fn short_duration(ns: i128) -> String {
    shorten(go_duration_string(ns))
}

/// The string-level body of oc's `shortDuration`, applied to a Go duration string.
fn shorten(orig: String) -> String {
    if orig == "0h0m0s" || orig == "0s" {
        return "now".to_owned();
    }
    if let Some(hours) = orig.strip_suffix("h0m0s") {
        return format!("{hours}h");
    }
    if let Some(minutes) = orig.strip_suffix("m0s") {
        return format!("{minutes}m");
    }
    if let Some((whole, _)) = orig.split_once('.') {
        // oc ignores the parse error (the value is then 0, i.e. "now"); the cut string is always
        // valid in practice (`1h2m3` + `s`, `1` + `s`, …).
        let reparsed = parse_go_duration(&format!("{whole}s")).unwrap_or(0);
        return short_duration(reparsed);
    }
    orig
}

/// `s` cut to at most `max` characters (runes): a longer string keeps `max − 3` and ends in
/// `...` (how the assessment fits texts to the schema limits, and how `oc` shortens columns).
pub fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

/// `s` whole when it has at most `max` characters; beyond, its start and a note saying it was
/// cut, `max` characters in all (for texts shown whole, whose limit no real text reaches).
pub fn cut_noting(s: &str, max: usize) -> String {
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    let note = format!(" [... cut: {total} characters, too long to store]");
    let keep = max.saturating_sub(note.chars().count());
    let mut out: String = s.chars().take(keep).collect();
    out.push_str(&note);
    out
}

/// Go `%q` of a string: double-quoted with Go escapes (control and non-space whitespace
/// characters escaped; other characters kept).
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || (c.is_whitespace() && c != ' ') || c == '\u{feff}' => {
                let n = c as u32;
                if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses a test vector; test inputs are always valid.
    fn d(s: &str) -> i128 {
        parse_go_duration(s).unwrap_or_else(|| panic!("invalid test duration {s:?}"))
    }

    #[test]
    fn go_string_below_one_second() {
        let cases: &[(i128, &str)] = &[
            (0, "0s"),
            (1, "1ns"),
            (999, "999ns"),
            (1_000, "1µs"),
            (1_100, "1.1µs"),
            (999_999, "999.999µs"),
            (1_000_000, "1ms"),
            (1_500_000, "1.5ms"),
            (2_200_000, "2.2ms"),
            (100_000_000, "100ms"),
            (500_000_000, "500ms"),
            (999_999_999, "999.999999ms"),
            (-1, "-1ns"),
            (-1_100, "-1.1µs"),
            (-1_500_000, "-1.5ms"),
        ];
        for &(ns, want) in cases {
            assert_eq!(go_duration_string(ns), want, "{ns}ns");
        }
    }

    #[test]
    fn go_string_seconds_and_above() {
        let cases: &[(i128, &str)] = &[
            (SECOND, "1s"),
            (SECOND + 500 * MILLISECOND, "1.5s"),
            (45 * SECOND + 368_975, "45.000368975s"),
            (MINUTE, "1m0s"),
            (2 * MINUTE + 368_975, "2m0.000368975s"),
            (10 * MINUTE, "10m0s"),
            (HOUR, "1h0m0s"),
            (HOUR + 10 * SECOND, "1h0m10s"),
            (HOUR + MINUTE + SECOND, "1h1m1s"),
            (3723 * SECOND, "1h2m3s"),
            (100 * HOUR + 1, "100h0m0.000000001s"),
            (-5 * MINUTE, "-5m0s"),
            (-(HOUR + 30 * MINUTE), "-1h30m0s"),
            (i128::from(i64::MAX), "2562047h47m16.854775807s"),
            (i128::from(i64::MIN), "-2562047h47m16.854775808s"),
        ];
        for &(ns, want) in cases {
            assert_eq!(go_duration_string(ns), want, "{ns}ns");
        }
    }

    #[test]
    fn go_string_roundtrips_through_parse() {
        for ns in [
            0,
            1,
            1_100,
            1_500_000,
            SECOND,
            2 * MINUTE + 368_975,
            HOUR + 10 * SECOND,
            -5 * MINUTE,
            i128::from(i64::MAX),
            i128::from(i64::MIN),
        ] {
            assert_eq!(
                parse_go_duration(&go_duration_string(ns)),
                Some(ns),
                "{ns}ns"
            );
        }
    }

    /// The vectors of Go's `TestParseDuration`.
    #[test]
    fn parse_valid() {
        let cases: &[(&str, i128)] = &[
            ("0", 0),
            ("5s", 5 * SECOND),
            ("30s", 30 * SECOND),
            ("1478s", 1478 * SECOND),
            ("-5s", -5 * SECOND),
            ("+5s", 5 * SECOND),
            ("-0", 0),
            ("+0", 0),
            ("5.0s", 5 * SECOND),
            ("5.6s", 5 * SECOND + 600 * MILLISECOND),
            ("5.s", 5 * SECOND),
            (".5s", 500 * MILLISECOND),
            ("1.0s", SECOND),
            ("1.00s", SECOND),
            ("1.004s", SECOND + 4 * MILLISECOND),
            ("1.0040s", SECOND + 4 * MILLISECOND),
            ("100.00100s", 100 * SECOND + MILLISECOND),
            ("10ns", 10),
            ("11us", 11 * MICROSECOND),
            ("12µs", 12 * MICROSECOND),
            ("12μs", 12 * MICROSECOND),
            ("13ms", 13 * MILLISECOND),
            ("14s", 14 * SECOND),
            ("15m", 15 * MINUTE),
            ("16h", 16 * HOUR),
            ("3h30m", 3 * HOUR + 30 * MINUTE),
            ("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND),
            ("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND)),
            (
                "1h2m3s4ms5us6ns",
                HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6,
            ),
            (
                "39h9m14.425s",
                39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND,
            ),
            ("52763797000ns", 52_763_797_000),
            ("0.3333333333333333333h", 20 * MINUTE),
            ("9007199254740993ns", (1 << 53) + 1),
            ("9223372036854775807ns", i128::from(i64::MAX)),
            ("9223372036854775.807us", i128::from(i64::MAX)),
            ("9223372036s854ms775us807ns", i128::from(i64::MAX)),
            ("-9223372036854775808ns", i128::from(i64::MIN)),
            ("-9223372036854775.808us", i128::from(i64::MIN)),
            ("0.100000000000000000000h", 6 * MINUTE),
            (
                "0.830103483285477580700h",
                49 * MINUTE + 48 * SECOND + 372_539_827,
            ),
        ];
        for &(s, want) in cases {
            assert_eq!(parse_go_duration(s), Some(want), "{s:?}");
        }
    }

    /// The error vectors of Go's `TestParseDuration`.
    #[test]
    fn parse_invalid() {
        for s in [
            "",
            "3",
            "-",
            "s",
            ".",
            "-.",
            ".s",
            "+.s",
            "1d",
            "1.5",
            "5s3",
            "x5s",
            "1 s",
            "9223372036854775808ns",
            "9223372036854775.808us",
            "9223372036854ms775us808ns",
            "9223372036s854ms775us808ns",
            "-9223372036854775809ns",
            "99999999999999999999h",
        ] {
            assert_eq!(parse_go_duration(s), None, "{s:?}");
        }
    }

    #[test]
    fn round_halves_away_from_zero() {
        let cases: &[(i128, i128, i128)] = &[
            (90 * SECOND, MINUTE, 2 * MINUTE),
            (89 * SECOND + 999 * MILLISECOND, MINUTE, MINUTE),
            (30 * SECOND, MINUTE, MINUTE),
            (29 * SECOND, MINUTE, 0),
            (-30 * SECOND, MINUTE, -MINUTE),
            (-29 * SECOND, MINUTE, 0),
            (-90 * SECOND, MINUTE, -2 * MINUTE),
            (-89 * SECOND, MINUTE, -MINUTE),
            (1_500_000_000, SECOND, 2 * SECOND),
            (1_499_999_999, SECOND, SECOND),
            (-1_500_000_000, SECOND, -2 * SECOND),
            (5 * MINUTE, MINUTE, 5 * MINUTE),
            (0, MINUTE, 0),
            // m <= 0: unchanged.
            (1234, 0, 1234),
            (1234, -5, 1234),
            // Overflow saturates like Go's maxDuration/minDuration.
            (i128::from(i64::MAX) - 1, SECOND, i128::from(i64::MAX)),
            (i128::from(i64::MIN) + 1, SECOND, i128::from(i64::MIN)),
            (i128::from(i64::MAX), 1, i128::from(i64::MAX)),
        ];
        for &(ns, m, want) in cases {
            assert_eq!(round(ns, m), want, "round({ns}, {m})");
        }
    }

    #[test]
    fn cut_noting_keeps_whole_texts_and_says_when_it_cuts() {
        assert_eq!(cut_noting("abc", 3), "abc");
        let cut = cut_noting(&"é".repeat(100), 60);
        assert_eq!(cut.chars().count(), 60);
        assert!(cut.starts_with("éé"), "{cut}");
        assert!(
            cut.ends_with(" [... cut: 100 characters, too long to store]"),
            "{cut}"
        );
    }

    #[test]
    fn truncate_toward_zero() {
        let cases: &[(i128, i128, i128)] = &[
            (90 * SECOND, MINUTE, MINUTE),
            (119 * SECOND, MINUTE, MINUTE),
            (-90 * SECOND, MINUTE, -MINUTE),
            (-119 * SECOND, MINUTE, -MINUTE),
            (
                58 * MINUTE + 18 * SECOND + 368_975,
                SECOND,
                58 * MINUTE + 18 * SECOND,
            ),
            (368_975, SECOND, 0),
            (1234, 0, 1234),
            (1234, -1, 1234),
        ];
        for &(ns, m, want) in cases {
            assert_eq!(truncate(ns, m), want, "truncate({ns}, {m})");
        }
    }

    /// B.4 / G.18: Duration is rounded to 1 min above 10 min, else to 1 s.
    #[test]
    fn update_duration_rounding_vectors() {
        assert_eq!(short_duration(round(HOUR, MINUTE)), "1h");
        assert_eq!(short_duration(round(30 * MINUTE, MINUTE)), "30m");
        assert_eq!(short_duration(round(333 * SECOND, SECOND)), "5m33s");
        assert_eq!(short_duration(round(637 * SECOND, MINUTE)), "11m");
        // B.7: a slightly negative estimate keeps seconds precision.
        assert_eq!(
            short_duration(round(-(4 * MINUTE + 50 * SECOND), SECOND)),
            "-4m50s"
        );
        assert_eq!(
            short_duration(round(4 * MINUTE + 50 * SECOND, SECOND)),
            "4m50s"
        );
    }

    /// G.49: the vectors of oc's `TestShortDuration`.
    #[test]
    fn short_duration_oc_vectors() {
        let cases = [
            ("1s", "1s"),
            ("1m", "1m"),
            ("1h", "1h"),
            ("1h1m1s", "1h1m1s"),
            ("1h10m", "1h10m"),
            ("1h0m10s", "1h0m10s"),
            ("10h10m", "10h10m"),
            ("10h10m10s", "10h10m10s"),
            ("10m", "10m"),
            ("0m", "now"),
            ("45.000368975s", "45s"),
            ("2m0.000368975s", "2m"),
        ];
        for (input, want) in cases {
            assert_eq!(short_duration(d(input)), want, "{input}");
        }
    }

    /// E.7 vectors, including the quirks.
    #[test]
    fn short_duration_spec_vectors() {
        assert_eq!(short_duration(0), "now");
        assert_eq!(short_duration(HOUR), "1h");
        assert_eq!(short_duration(10 * HOUR), "10h");
        assert_eq!(short_duration(10 * MINUTE), "10m");
        assert_eq!(short_duration(HOUR + 10 * MINUTE), "1h10m");
        assert_eq!(short_duration(-5 * MINUTE), "-5m");
        assert_eq!(short_duration(-HOUR), "-1h");
        assert_eq!(short_duration(45 * SECOND + 368_975), "45s");
        assert_eq!(short_duration(2 * MINUTE + 368_975), "2m");
        assert_eq!(short_duration(HOUR + 10 * SECOND), "1h0m10s");
        assert_eq!(short_duration(HOUR + MINUTE + SECOND), "1h1m1s");
        // Sub-second values print in ms/µs/ns; only those with a fraction get cut.
        assert_eq!(short_duration(500 * MILLISECOND), "500ms");
        assert_eq!(short_duration(1_500_000), "1s"); // "1.5ms" → "1" + "s": the oc quirk
        assert_eq!(short_duration(-1_500_000), "-1s");
        assert_eq!(short_duration(1_100), "1s"); // "1.1µs"
        // "368.975µs" → "368" + "s" → 6m8s: the quirk turns microseconds into seconds.
        assert_eq!(short_duration(368_975), "6m8s");
        assert_eq!(short_duration(SECOND + 500 * MILLISECOND), "1s");
        assert_eq!(short_duration(-(SECOND + 500 * MILLISECOND)), "-1s");
        assert_eq!(short_duration(HOUR + 368_975), "1h"); // 1h0m0.000368975s → 1h0m0s → 1h
    }

    /// String-level quirks that no `Duration.String()` output reaches directly.
    #[test]
    fn shorten_string_quirks() {
        assert_eq!(shorten("0s".to_owned()), "now");
        assert_eq!(shorten("0h0m0s".to_owned()), "now");
        assert_eq!(shorten("1h0m0s".to_owned()), "1h");
        assert_eq!(shorten("10m0s".to_owned()), "10m");
        assert_eq!(shorten("0.5s".to_owned()), "now");
        assert_eq!(shorten("-0.5s".to_owned()), "now");
        assert_eq!(shorten("1.5ms".to_owned()), "1s");
        assert_eq!(shorten("500ms".to_owned()), "500ms");
        assert_eq!(shorten("1h0m10s".to_owned()), "1h0m10s");
        assert_eq!(shorten("-5m0s".to_owned()), "-5m");
    }

    /// "Since" values of the golden outputs: `now` is the latest transition + 368,975 ns, so
    /// every raw difference carries that fraction.
    #[test]
    fn short_duration_fixture_values() {
        let frac = 368_975;
        let cases: &[(i128, &str)] = &[
            (58 * MINUTE + 18 * SECOND + frac, "58m18s"),
            (HOUR + 17 * SECOND + frac, "1h0m17s"),
            (HOUR + 4 * MINUTE + 41 * SECOND + frac, "1h4m41s"),
            (14 * MINUTE + 4 * SECOND + frac, "14m4s"),
            (MINUTE + 10 * SECOND + frac, "1m10s"),
            (2 * MINUTE + frac, "2m"),
            (45 * SECOND + frac, "45s"),
            (6 * MINUTE + 8 * SECOND + frac, "6m8s"),
            (22 * MINUTE + 44 * SECOND + frac, "22m44s"),
        ];
        for &(ns, want) in cases {
            assert_eq!(short_duration(ns), want, "{}", go_duration_string(ns));
            // The health table truncates to 1 s first; the result must be identical.
            assert_eq!(short_duration(truncate(ns, SECOND)), want);
        }
        // A bare fraction is where truncating first matters: "368.975µs" would become 6m8s.
        assert_eq!(short_duration(truncate(frac, SECOND)), "now");
    }
}
