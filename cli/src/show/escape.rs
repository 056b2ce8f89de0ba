//! Safe terminal output: every string that comes from the cluster (or from a snapshot file) is
//! escaped before the text output or an error message prints it, so that an object cannot
//! drive the admin's terminal (retitle it, hide or rewrite lines, plant links) nor forge lines
//! that look like ours. `-o json` / `-o yaml` keep the exact values, with what a terminal acts
//! on written as escapes of the same value (`crate::show::report::serialise`).
//!
//! The visible forms follow `kubectl` (cli-runtime's `printers.EscapeTerminal`, used by
//! `kubectl describe`, `kubectl events` and `-o custom-columns`, turns ESC into `^[` and CR into
//! `\r`) and extend it:
//!
//! | character | printed as |
//! |---|---|
//! | ESC (starts CSI and OSC sequences) | `^[` |
//! | CR | `\r` |
//! | LF, TAB | as they are in the text view (oc prints them so: see below); `\n`, `\t` in our own tables and warnings |
//! | other C0 controls U+0000–U+001F (BEL `^G`, BS `^H`...) | caret notation `^@`…`^_` |
//! | DEL U+007F | `^?` |
//! | C1 controls U+0080–U+009F (8-bit CSI U+009B, OSC U+009D...) | `\u009b` |
//! | bidi overrides and isolates U+202A–U+202E, U+2066–U+2069 | `\u202e` |
//! | bidi marks LRM U+200E, RLM U+200F, ALM U+061C | `\u200f` |
//! | zero-width characters: ZWSP, ZWNJ, ZWJ U+200B–U+200D, word joiner and invisible operators U+2060–U+2064, U+180E, BOM U+FEFF | `\u200b` |
//! | deprecated format characters U+206A–U+206F | `\u206a` |
//! | line and paragraph separators U+2028, U+2029 | `\u2028` |
//! | the other default-ignorable characters: soft hyphen U+00AD, combining grapheme joiner U+034F, Hangul fillers U+115F, U+1160, U+3164, U+FFA0, Khmer inherent vowels U+17B4, U+17B5, variation selectors U+180B–U+180F, U+FE00–U+FE0F, U+E0100–U+E01EF, tag characters U+E0000–U+E007F, U+2065, U+FFF0–U+FFF8, U+1BCA0–U+1BCA3, U+1D173–U+1D17A, the rest of U+E0000–U+E0FFF | `\u00ad`, beyond U+FFFF `\u{e0001}` |
//!
//! The last six rows ([`crate::show::invisible::invisible`]: Unicode's default-ignorable characters
//! and U+2028/U+2029) print nothing or move text: a name with a zero-width character, a soft
//! hyphen, a variation selector or a tag character looks like another name (`etcd` and
//! `et\u{200b}cd`), a bidi mark reorders what follows, a Hangul filler looks like a blank, and
//! U+2028/U+2029 break lines in some terminals and editors without being a line feed (issues
//! #38, #48). An emoji written with ZWJ or U+FE0F shows as its parts with `\u200d` or `\ufe0f`
//! between them, a flag of tag characters as `\u{e0067}`...: the price of never hiding a
//! character (`-o json|yaml` keep the exact value). Beyond U+FFFF the escape is `\u{e0001}`:
//! `\ue0001` would read as U+E000 and a `1`.
//!
//! **Line feeds and tabs** are printed as they are in the oc-identical text view, as kubectl's
//! own escaper does (it replaces only ESC and CR): oc prints them, and its tabwriter aligns the
//! rows around them (a machine-config daemon message holding a `podman pull` retry log spans
//! several lines, and moves the columns of the rows after it). Escaping them changed the text
//! and the column widths of the whole table, so the output was no longer oc's. The price: a
//! message can start a line of its own, as it can in oc's output and `kubectl describe`; it
//! still cannot drive the terminal (every other control, escape sequence and bidi override is
//! made visible). Our own tables (`--fleet`) and warnings escape them (`\n`, `\t`): nothing
//! there is oc's layout. See docs/design-decisions.md, "Line feeds and tabs in the text view".

use std::borrow::Cow;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::show::view::View;

/// Whether line feeds and tabs are printed as they are or escaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Newlines {
    /// Printed as they are (the oc-identical text view, error messages).
    Keep,
    /// Printed as `\n` and `\t` (our own tables and warnings).
    Escape,
}

/// `s` with every control character, escape sequence introducer and bidi override made
/// visible (see the module documentation); borrowed when there is nothing to escape.
pub fn text(s: &str, newlines: Newlines) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_escape(c, newlines)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !needs_escape(c, newlines) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7f}' => out.push_str("^?"),
            c if u32::from(c) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            c if u32::from(c) > 0xffff => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push_str(&format!("\\u{:04x}", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char, newlines: Newlines) -> bool {
    match c {
        '\n' | '\t' => newlines == Newlines::Escape,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        c => crate::show::invisible::invisible(c),
    }
}

/// Escapes every string of `v` in place for the text view (line feeds and tabs kept); returns
/// whether anything changed.
fn escape_value(v: &mut Value) -> bool {
    match v {
        Value::String(s) => match text(s, Newlines::Keep) {
            Cow::Borrowed(_) => false,
            Cow::Owned(escaped) => {
                *s = escaped;
                true
            }
        },
        Value::Array(items) => {
            // Every item is escaped: no short-circuit.
            let mut changed = false;
            for item in items.iter_mut() {
                changed |= escape_value(item);
            }
            changed
        }
        Value::Object(map) => {
            let mut changed = false;
            for item in map.values_mut() {
                changed |= escape_value(item);
            }
            changed
        }
        _ => false,
    }
}

/// Escapes the strings of `object` in place. Objects with nothing to escape are left as they
/// are (not re-decoded).
fn escape_in_place<T: Serialize + DeserializeOwned>(
    object: &mut T,
) -> Result<(), serde_json::Error> {
    let mut value = serde_json::to_value(&*object)?;
    if escape_value(&mut value) {
        *object = serde_json::from_value(value)?;
    }
    Ok(())
}

/// The view with every string escaped for the text output, in place: a large capture's
/// thousands of insights are not copied.
pub fn view(mut v: View) -> Result<View, serde_json::Error> {
    if let Some(cp) = v.control_plane.as_mut() {
        escape_in_place(cp)?;
    }
    for (name, pool) in &mut v.worker_pools {
        if let Cow::Owned(escaped) = text(name, Newlines::Keep) {
            *name = escaped;
        }
        escape_in_place(pool)?;
    }
    for insight in &mut v.insights {
        escape_in_place(insight)?;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{
        Condition, HealthInsight, Impact, InsightType, ProgressInsight, UpdateInsightStatus,
    };

    #[test]
    fn controls_become_visible_like_kubectl() {
        let nasty = "a\x1b]0;owned\x07b\x1b[2Kc\rd\te\u{7f}f\u{9b}31mg\u{202e}h\0i";
        assert_eq!(
            text(nasty, Newlines::Escape),
            "a^[]0;owned^Gb^[[2Kc\\rd\\te^?f\\u009b31mg\\u202eh^@i"
        );
        assert_eq!(text("x\ny\tz", Newlines::Escape), "x\\ny\\tz");
        assert_eq!(text("x\ny\tz", Newlines::Keep), "x\ny\tz");
        assert_eq!(
            text("a\tb\nc\r\x1b[2J\u{202e}", Newlines::Keep),
            "a\tb\nc\\r^[[2J\\u202e",
            "kept: LF and TAB only; CR, ESC and bidi still escaped"
        );
        let clean = "Cluster operator etcd is degraded — ünïcode, émoji 🚀";
        assert!(matches!(text(clean, Newlines::Escape), Cow::Borrowed(_)));
    }

    /// Issue #38: the characters that print nothing or move text passed through.
    #[test]
    fn invisible_and_reordering_characters_become_visible() {
        let cases = [
            ("a\u{2028}b\u{2029}c", "a\\u2028b\\u2029c"),
            ("\u{200e}l\u{200f}r\u{061c}a", "\\u200el\\u200fr\\u061ca"),
            ("et\u{200b}cd\u{200c}\u{200d}", "et\\u200bcd\\u200c\\u200d"),
            (
                "\u{feff}bom\u{2060}wj\u{2064}\u{180e}",
                "\\ufeffbom\\u2060wj\\u2064\\u180e",
            ),
            ("x\u{206a}\u{206f}", "x\\u206a\\u206f"),
        ];
        for (raw, want) in cases {
            for newlines in [Newlines::Keep, Newlines::Escape] {
                assert_eq!(text(raw, newlines), want, "{raw:?}");
            }
        }
        // Their neighbours stay: visible letters, ordinary spaces, the en and em spaces,
        // right-to-left letters, Hangul, an emoji without a variation selector.
        let kept = "ü \u{2002}\u{2003} hyphen- שלום مرحبا 한글 🚀";
        assert!(
            matches!(text(kept, Newlines::Keep), Cow::Borrowed(_)),
            "{kept}"
        );
    }

    /// Issue #48: the rest of Unicode's default-ignorable characters passed through: tag
    /// characters, variation selectors, Hangul fillers, the soft hyphen, the combining
    /// grapheme joiner, the Khmer inherent vowels. Beyond U+FFFF the escape is `\u{e0001}`
    /// (`\ue0001` would read as U+E000 and a `1`).
    #[test]
    fn default_ignorable_characters_become_visible() {
        let cases = [
            (
                "flag\u{e0001}\u{e0020}\u{e007f}",
                "flag\\u{e0001}\\u{e0020}\\u{e007f}",
            ),
            ("\u{2764}\u{fe0f}\u{fe00}", "\u{2764}\\ufe0f\\ufe00"),
            ("vs\u{e0100}\u{e01ef}", "vs\\u{e0100}\\u{e01ef}"),
            (
                "\u{115f}\u{1160}h\u{3164}\u{ffa0}",
                "\\u115f\\u1160h\\u3164\\uffa0",
            ),
            ("soft\u{ad}hy\u{34f}cgj", "soft\\u00adhy\\u034fcgj"),
            ("k\u{17b4}\u{17b5}", "k\\u17b4\\u17b5"),
            ("m\u{180b}\u{180f}\u{2065}", "m\\u180b\\u180f\\u2065"),
        ];
        for (raw, want) in cases {
            for newlines in [Newlines::Keep, Newlines::Escape] {
                assert_eq!(text(raw, newlines), want, "{raw:?}");
            }
        }
    }

    /// The web page's script escapes what the text output escapes (its `vis`, which shows
    /// cluster texts as the text output prints them): the character class of its regular
    /// expression is exactly [`needs_escape`]'s set (line feeds and tabs included: `vis` keeps
    /// or escapes them as `Newlines` does).
    #[test]
    fn the_web_page_escapes_what_the_text_output_escapes() {
        let js = crate::web::page::APP_JS;
        let start = js.find("/[\\u0000-").expect("the page's escaper") + 2;
        let len = js
            .get(start..)
            .and_then(|t| t.find("]/gu"))
            .expect("its end (flag u: one match per code point)");
        let class = js.get(start..start + len).expect("the class");
        let ranges = js_class_ranges(class);
        let mut differ = Vec::new();
        for c in (0..=0x10ffff_u32).filter_map(char::from_u32) {
            let in_page = ranges.iter().any(|&(a, b)| (a..=b).contains(&u32::from(c)));
            if in_page != needs_escape(c, Newlines::Escape) {
                differ.push(format!("U+{:04X}", u32::from(c)));
            }
        }
        assert!(
            differ.is_empty(),
            "app.js's vis() and escape.rs differ on {differ:?} ({class})"
        );
    }

    /// The ranges of a JavaScript character class of escapes only (`\u0000-\u001f\u061c`,
    /// `\u{e0000}-\u{e0fff}`), in code points.
    fn js_class_ranges(class: &str) -> Vec<(u32, u32)> {
        // One escape at the start of `rest`, which moves past it.
        fn one(rest: &mut &str) -> Option<u32> {
            let body = rest.strip_prefix("\\u")?;
            let (hex, after) = match body.strip_prefix('{') {
                Some(braced) => braced.split_once('}')?,
                None => (body.get(..4)?, body.get(4..)?),
            };
            *rest = after;
            u32::from_str_radix(hex, 16).ok()
        }
        let mut rest = class;
        let mut ranges = Vec::new();
        while let Some(a) = one(&mut rest) {
            let b = match rest.strip_prefix('-') {
                Some(mut after) => {
                    let b = one(&mut after).expect("a range's end");
                    rest = after;
                    b
                }
                None => a,
            };
            ranges.push((a, b));
        }
        assert!(rest.is_empty(), "not an escape: {rest:?} of {class}");
        ranges
    }

    #[test]
    fn the_text_view_keeps_line_feeds_and_tabs_as_oc_prints_them() {
        let insight = UpdateInsightStatus {
            type_: InsightType::Progress,
            progress: Some(ProgressInsight {
                message: "one\ntwo\x1b[8m".into(),
                conditions: vec![Condition {
                    message: "first\nsecond\x07".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            health: Some(HealthInsight {
                impact: Impact {
                    summary: "s\tforged".into(),
                    description: "d1\nd2\u{9d}".into(),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        let v = view(View {
            insights: vec![insight],
            worker_pools: vec![("w\x1b".into(), Default::default())],
            ..Default::default()
        })
        .expect("escape");
        let i = &v.insights[0];
        let p = i.progress.as_ref().expect("progress");
        assert_eq!(p.message, "one\ntwo^[[8m");
        assert_eq!(p.conditions[0].message, "first\nsecond^G");
        let h = i.health.as_ref().expect("health");
        assert_eq!(h.impact.summary, "s\tforged");
        assert_eq!(h.impact.description, "d1\nd2\\u009d");
        assert_eq!(v.worker_pools[0].0, "w^[");
    }

    #[test]
    fn a_clean_view_is_unchanged() {
        let view_in = View {
            insights: vec![UpdateInsightStatus {
                resource: update_status_api::crd::ResourceRef {
                    name: "etcd".into(),
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(view(view_in.clone()).expect("escape"), view_in);
    }
}
