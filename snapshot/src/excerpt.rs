//! Short, escaped excerpts of a snapshot file's content for error messages (issue #38): an
//! error about a bad file never echoes more of it than [`EXCERPT_CHARS`] characters at a time.
//! A must-gather comes from elsewhere, and a file in it may hold what must not be printed (a
//! `now` file that is someone's kubeconfig, a token where a field was expected): the message
//! says where and what is wrong, with just enough of the content to recognise it.

/// Most characters of file content quoted in one place of a message.
pub const EXCERPT_CHARS: usize = 40;

/// Most characters of a parser's message kept (its quoted parts cut first).
pub const MESSAGE_CHARS: usize = 300;

/// `s` as a quoted, escaped excerpt: at most [`EXCERPT_CHARS`] characters, Rust-escaped
/// (controls, quotes and invisible characters shown as escapes), followed by `…` and the
/// total length when cut.
pub fn quoted(s: &str) -> String {
    let count = s.chars().count();
    if count <= EXCERPT_CHARS {
        return format!("{s:?}");
    }
    let head: String = s.chars().take(EXCERPT_CHARS).collect();
    format!("{head:?}… ({count} characters)")
}

/// `s` cut to [`EXCERPT_CHARS`] characters (`…` when cut), not quoted: for values shown bare
/// (a kind, an object's name), which the CLI escapes when it prints them.
pub fn bare(s: &str) -> String {
    if s.chars().count() <= EXCERPT_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(EXCERPT_CHARS).collect();
    out.push('…');
    out
}

/// A parser's or decoder's message with every double-quoted part longer than
/// [`EXCERPT_CHARS`] cut (serde's `invalid type: string "…"` quotes the whole value it
/// refused), then the whole cut to [`MESSAGE_CHARS`].
pub fn message(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(MESSAGE_CHARS + 8));
    let mut rest = msg;
    while let Some(open) = rest.find('"') {
        let (before, from_quote) = rest.split_at(open);
        out.push_str(before);
        // The closing quote: the next `"` not escaped by a backslash.
        let body = from_quote.get(1..).unwrap_or_default();
        let mut end = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else {
            // No closing quote: the rest as it is (cut below).
            out.push_str(from_quote);
            rest = "";
            break;
        };
        let inner = body.get(..end).unwrap_or_default();
        let count = inner.chars().count();
        out.push('"');
        if count <= EXCERPT_CHARS {
            out.push_str(inner);
            out.push('"');
        } else {
            // Cut on a character boundary, never inside an escape (`\u{…}`, `\"`).
            let mut cut: String = inner.chars().take(EXCERPT_CHARS).collect();
            if let Some(backslash) = cut.rfind('\\')
                && cut
                    .get(backslash..)
                    .is_some_and(|tail| !tail.contains('}') && tail.len() < 10)
            {
                cut.truncate(backslash);
            }
            out.push_str(&cut);
            out.push_str(&format!("\"… ({count} characters)"));
        }
        rest = body.get(end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    if out.chars().count() > MESSAGE_CHARS {
        let mut cut: String = out.chars().take(MESSAGE_CHARS).collect();
        cut.push('…');
        return cut;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "sha256~Zm9vYmFyYmF6cXV4cXV1eHNlY3JldHRva2VudmFsdWVz";

    #[test]
    fn long_values_are_cut_and_escaped() {
        assert_eq!(quoted("2026-01-01T00:00:00Z"), "\"2026-01-01T00:00:00Z\"");
        let kubeconfig =
            format!("apiVersion: v1\nkind: Config\nusers:\n- user: {{token: {SECRET}}}\n");
        let q = quoted(&kubeconfig);
        assert!(!q.contains("Zm9v"), "{q}");
        assert!(
            q.starts_with("\"apiVersion: v1\\nkind: Config\\nusers:\\n"),
            "{q}"
        );
        assert!(
            q.ends_with(&format!("… ({} characters)", kubeconfig.chars().count())),
            "{q}"
        );
        assert_eq!(quoted("a\u{1b}]0;x\u{7}"), "\"a\\u{1b}]0;x\\u{7}\"");
        assert_eq!(bare(&"k".repeat(41)), format!("{}…", "k".repeat(40)));
    }

    #[test]
    fn quoted_parts_of_a_message_are_cut() {
        let msg = format!("invalid type: string \"{SECRET}{SECRET}\", expected a sequence");
        let cut = message(&msg);
        assert!(!cut.contains(&SECRET[20..]), "{cut}");
        assert!(cut.starts_with("invalid type: string \"sha256~"), "{cut}");
        assert!(cut.ends_with("characters), expected a sequence"), "{cut}");
        // Escaped quotes inside a quoted value do not end it.
        let msg = format!("bad \"a\\\"b{SECRET}\" end");
        let cut = message(&msg);
        assert!(
            cut.ends_with(" end") && !cut.contains(&SECRET[30..]),
            "{cut}"
        );
        // Short quotes and plain text are kept; an unclosed quote is cut with the message.
        assert_eq!(
            message("expected \"a\" at line 2"),
            "expected \"a\" at line 2"
        );
        let open = format!("x \"{}", "y".repeat(1000));
        assert_eq!(message(&open).chars().count(), MESSAGE_CHARS + 1);
    }
}
