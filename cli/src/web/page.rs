//! The HTML of the web view: the live page (its script and stylesheet served as files) and the
//! self-contained `-o html` file (script, stylesheet and data inline), and their
//! Content-Security-Policies.
//!
//! No string from the cluster is ever written into the markup: the data travels as JSON (in the
//! file, a `<script type="application/json">` block, which the browser never runs, with `<`, `>`
//! and `&` escaped so that no value can close it) and the script inserts it as text.

use base64::Engine as _;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The page's script.
pub const APP_JS: &str = include_str!("assets/app.js");
/// The page's stylesheet.
pub const APP_CSS: &str = include_str!("assets/app.css");

/// The policy of the live view (an HTTP header): only its own script, stylesheet and event
/// stream; no inline code, no frame, no form, no plugin; Trusted Types required for any HTML
/// sink.
pub const LIVE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'";

/// What can go wrong making a page.
#[derive(Debug, thiserror::Error)]
#[error("cannot serialise the page's data: {0}")]
pub struct PageError(#[from] serde_json::Error);

/// `sha256-<base64>` of `text`, as a CSP source.
fn csp_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The policy of the `-o html` file (a `<meta>`): only the inline script and stylesheet it
/// carries (by hash), nothing else at all: no network.
pub fn file_csp() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'; require-trusted-types-for 'script'; trusted-types 'none'",
        csp_hash(APP_JS),
        csp_hash(APP_CSS)
    )
}

/// JSON safe inside a `<script type="application/json">` element: `<`, `>` and `&` (and the
/// line separators some parsers dislike) as `\u` escapes, which JSON decodes to the same value.
pub fn script_json<T: Serialize>(value: &T) -> Result<String, PageError> {
    let json = serde_json::to_string(value)?;
    let mut out = String::with_capacity(json.len() + json.len() / 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    Ok(out)
}

const HEAD: &str = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
const META: &str = "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<link rel=\"icon\" href=\"data:,\">\n<title>Update status</title>\n";
const BODY: &str = "<body>\n<div id=\"app\"><p>Loading the update status…</p></div>\n<noscript><p>This view needs JavaScript; kubectl update-status prints the same facts as text.</p></noscript>\n";

/// The live page: its script and stylesheet are `<base>/app.js` and `<base>/app.css` (see
/// [`LIVE_CSP`]), `base` the session's path (URL-safe base64 after `/s/`: nothing to escape).
pub fn live_page(base: &str) -> String {
    format!(
        "{HEAD}{META}<link rel=\"stylesheet\" href=\"{base}/app.css\">\n</head>\n{BODY}<script src=\"{base}/app.js\"></script>\n</body>\n</html>\n"
    )
}

/// The self-contained page of `data` (see [`file_csp`]).
pub fn file_page<T: Serialize>(data: &T) -> Result<String, PageError> {
    let json = script_json(data)?;
    let csp = file_csp();
    Ok(format!(
        "{HEAD}<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n{META}<style>{APP_CSS}</style>\n</head>\n{BODY}<script type=\"application/json\" id=\"update-status-data\">{json}</script>\n<script>{APP_JS}</script>\n</body>\n</html>\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_its_element() {
        let value =
            serde_json::json!({"name": "</script><script>alert(1)</script>", "b": "a&b>\u{2028}"});
        let json = script_json(&value).expect("json");
        assert!(
            !json.contains('<') && !json.contains('>') && !json.contains('&'),
            "{json}"
        );
        let back: serde_json::Value = serde_json::from_str(&json).expect("parse");
        assert_eq!(back, value);
    }

    #[test]
    fn file_page_holds_everything_and_allows_only_its_own_code() {
        let page =
            file_page(&serde_json::json!({"kind": "cluster", "title": "<b>x</b>"})).expect("page");
        assert!(page.contains(&csp_hash(APP_JS)) && page.contains(&csp_hash(APP_CSS)));
        assert!(page.contains("default-src 'none'"));
        assert!(!page.contains("<b>x</b>"), "a value was written as markup");
        for external in [
            "src=\"http",
            "href=\"http",
            "src=\"/",
            "href=\"/",
            "@import",
            "url(http",
        ] {
            assert!(!page.contains(external), "{external}");
        }
        // The hashes are of exactly what is inline.
        assert!(page.contains(&format!("<script>{APP_JS}</script>")));
        assert!(page.contains(&format!("<style>{APP_CSS}</style>")));
    }

    #[test]
    fn the_live_page_has_no_inline_code() {
        let page = live_page("/s/abc");
        assert!(!page.contains("<script>") && !page.contains("<style>"));
        assert!(page.contains("src=\"/s/abc/app.js\"") && page.contains("href=\"/s/abc/app.css\""));
        assert!(LIVE_CSP.contains("script-src 'self'") && !LIVE_CSP.contains("unsafe"));
    }
}
