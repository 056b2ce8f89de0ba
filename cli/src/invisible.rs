//! The characters that print nothing or move text (issue #38), in a module of their own: the
//! text escaper (`crate::escape`) and the JSON and YAML writer (`crate::report`) both use them,
//! and neither imports the other.

/// Characters that are not controls but print nothing or move text: the bidi overrides,
/// isolates and marks, the zero-width characters, the deprecated format characters and the
/// line and paragraph separators (the table in `crate::escape`). Escaped in the text output
/// (`crate::escape`), and written as escapes of the same value in `-o json|yaml`
/// (`crate::report::raw_unsafe`).
pub fn invisible(c: char) -> bool {
    matches!(
        c,
        // Bidi overrides and embeddings, isolates.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        // Bidi marks: LRM, RLM, ALM.
        | '\u{200e}' | '\u{200f}' | '\u{061c}'
        // Zero-width: ZWSP, ZWNJ, ZWJ; word joiner and invisible operators; Mongolian vowel
        // separator; zero-width no-break space (BOM).
        | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{180e}' | '\u{feff}'
        // Deprecated format characters (symmetric swapping, shaping, digit shapes).
        | '\u{206a}'..='\u{206f}'
        // Line and paragraph separators.
        | '\u{2028}' | '\u{2029}'
    )
}
