//! The characters that print nothing or move text (issues #38 and #48), in a module of their
//! own: the text escaper (`crate::show::escape`) and the JSON and YAML writer (`crate::show::report`) both
//! use them, and neither imports the other.
//!
//! The set is Unicode's `Default_Ignorable_Code_Point` (DI: what a renderer shows nothing for
//! when it has no glyph: the bidi and zero-width format characters, the soft hyphen, the
//! combining grapheme joiner, the Hangul fillers, the Khmer inherent vowels, the variation
//! selectors, the tag characters...) plus the line and paragraph separators U+2028/U+2029,
//! which break lines in some terminals and editors without being a line feed.
//!
//! [`RANGES`] is the one table. Its copies are checked against it, so they cannot drift apart:
//! the web page's `vis` (`cli/src/web/assets/app.js`, by `escape.rs`'s test
//! `the_web_page_escapes_what_the_text_output_escapes`), the console plugin's `HIDDEN`
//! (`console/src/escape.ts`, by `console/test/escape.test.ts` against app.js's class) and, in
//! that same console test, Unicode's data: node's `\p{Default_Ignorable_Code_Point}`.
//!
//! **A hand table, not a crate**: `unicode-properties` (unicode-rs) has the general category
//! but not DI, and the format category `Cf` is not the set (it misses the variation selectors,
//! the Hangul fillers, U+034F and U+17B4/U+17B5, and holds visible signs such as U+0600, the
//! Arabic number sign); the maintained crate with DI, `icu_properties` (ICU4X), brings a dozen
//! crates and baked data into the CLI for these 17 ranges. DI is stable by construction: its
//! ranges hold their unassigned code points in advance (U+2065, U+FFF0–U+FFF8, all of
//! U+E0000–U+E0FFF), so a new Unicode version does not change it; the console test compares
//! the table with the Unicode data of the JavaScript engine at every run.

/// The ranges of [`invisible`], inclusive, in order: `Default_Ignorable_Code_Point`
/// (DerivedCoreProperties.txt) and the line and paragraph separators.
pub const RANGES: &[(char, char)] = &[
    // Soft hyphen.
    ('\u{ad}', '\u{ad}'),
    // Combining grapheme joiner.
    ('\u{34f}', '\u{34f}'),
    // Arabic letter mark (ALM).
    ('\u{61c}', '\u{61c}'),
    // Hangul choseong and jungseong fillers.
    ('\u{115f}', '\u{1160}'),
    // Khmer inherent vowels AQ and AA.
    ('\u{17b4}', '\u{17b5}'),
    // Mongolian free variation selectors and vowel separator.
    ('\u{180b}', '\u{180f}'),
    // ZWSP, ZWNJ, ZWJ, the bidi marks LRM and RLM.
    ('\u{200b}', '\u{200f}'),
    // Line and paragraph separators (not DI), bidi embeddings and overrides.
    ('\u{2028}', '\u{202e}'),
    // Word joiner, invisible operators, bidi isolates, deprecated format characters.
    ('\u{2060}', '\u{206f}'),
    // Hangul filler.
    ('\u{3164}', '\u{3164}'),
    // Variation selectors 1–16 (U+FE0F makes a character an emoji).
    ('\u{fe00}', '\u{fe0f}'),
    // Zero-width no-break space (BOM).
    ('\u{feff}', '\u{feff}'),
    // Halfwidth Hangul filler.
    ('\u{ffa0}', '\u{ffa0}'),
    // Unassigned, reserved as DI.
    ('\u{fff0}', '\u{fff8}'),
    // Shorthand format controls.
    ('\u{1bca0}', '\u{1bca3}'),
    // Musical symbol beams, ties and phrases (format).
    ('\u{1d173}', '\u{1d17a}'),
    // Tag characters, variation selectors 17–256, the rest reserved as DI.
    ('\u{e0000}', '\u{e0fff}'),
];

/// Characters that are not controls but print nothing or move text ([`RANGES`]: the bidi
/// overrides, isolates and marks, the zero-width characters, the soft hyphen, the variation
/// selectors, the tag characters, the Hangul fillers... and the line and paragraph
/// separators). Escaped in the text output (`crate::show::escape`), and written as escapes of the
/// same value in `-o json|yaml` (`crate::show::report::raw_unsafe`).
pub fn invisible(c: char) -> bool {
    // Below U+00AD: nothing (the controls are escaped on their own).
    c >= '\u{ad}' && RANGES.iter().any(|&(a, b)| (a..=b).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranges_are_ordered_and_apart() {
        for w in RANGES.windows(2) {
            assert!(w[0].0 <= w[0].1 && w[0].1 < w[1].0, "{w:?}");
        }
    }

    /// Issue #48: the characters it lists, each one.
    #[test]
    fn issue_48s_characters_are_invisible() {
        let listed = [
            ('\u{e0000}', '\u{e007f}'),
            ('\u{fe00}', '\u{fe0f}'),
            ('\u{e0100}', '\u{e01ef}'),
            ('\u{115f}', '\u{1160}'),
            ('\u{3164}', '\u{3164}'),
            ('\u{ffa0}', '\u{ffa0}'),
            ('\u{ad}', '\u{ad}'),
            ('\u{34f}', '\u{34f}'),
            ('\u{17b4}', '\u{17b5}'),
        ];
        for (a, b) in listed {
            for c in a..=b {
                assert!(invisible(c), "U+{:04X}", u32::from(c));
            }
        }
        for c in [
            'a',
            ' ',
            '\u{ac}',
            '\u{ae}',
            '\u{34e}',
            '\u{3165}',
            '\u{e1000}',
            '🚀',
        ] {
            assert!(!invisible(c), "U+{:04X}", u32::from(c));
        }
    }
}
