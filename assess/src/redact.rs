//! Credentials never leave: URLs are shown without user information (`user:password@`) and
//! without the values of token-like query parameters, wherever they are logged, put into an
//! insight or copied to the hub.

/// Query parameters whose values are credentials (compared case-insensitively; a parameter
/// whose name contains one of these is redacted too, e.g. `x_access_token`).
const SECRET_PARAMETERS: [&str; 8] = [
    "token",
    "password",
    "passwd",
    "secret",
    "key",
    "auth",
    "credential",
    "signature",
];

/// What replaces a secret.
pub const REDACTED: &str = "REDACTED";

/// `url` with its user information removed and the values of token-like query parameters
/// replaced by [`REDACTED`]; anything else (scheme, host, port, path, other parameters) is
/// kept, so the URL still says where it points.
pub fn redact_url(url: &str) -> String {
    let (before_fragment, fragment) = match url.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (url, None),
    };
    let (base, query) = match before_fragment.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (before_fragment, None),
    };
    let (scheme, rest) = match base.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, base),
    };
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let host = authority.rsplit('@').next().unwrap_or_default();
    let mut out = match scheme {
        Some(s) => format!("{s}://{host}{path}"),
        None => format!("{host}{path}"),
    };
    if let Some(q) = query {
        out.push('?');
        out.push_str(&redact_query(q));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(&redact_query(f));
    }
    out
}

fn redact_query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if is_secret(name) => format!("{name}={REDACTED}"),
            _ => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_PARAMETERS.iter().any(|s| name.contains(s))
}

/// `text` with every URL in it (`<scheme>://...` up to the next whitespace or quote) passed
/// through [`redact_url`]: for error messages that may quote a URL.
pub fn redact_urls_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        // The scheme: the letters (and `+.-`) just before `://`.
        let head = &rest[..i];
        let start = head
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
            .last()
            .map_or(i, |(j, _)| j);
        let end = rest[i..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .map_or(rest.len(), |j| i + j);
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_information_and_token_parameters_are_removed() {
        assert_eq!(
            redact_url("https://user:s3cret@thanos:9091/prefix"),
            "https://thanos:9091/prefix"
        );
        assert_eq!(
            redact_url("https://h/p?access_token=abc&step=1&PASSWORD=x&client_secret=y#token=z"),
            "https://h/p?access_token=REDACTED&step=1&PASSWORD=REDACTED&client_secret=REDACTED#token=REDACTED"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:9090/"),
            "http://127.0.0.1:9090/"
        );
        assert_eq!(redact_url("127.0.0.1:9090/p"), "127.0.0.1:9090/p");
        assert_eq!(redact_url("https://a@b@host/x@y"), "https://host/x@y");
    }

    #[test]
    fn urls_inside_text_are_redacted_and_the_rest_kept() {
        let text = "requesting https://u:pw@h:1/api/v1/alerts?token=t: connection refused \
                    (\"http://x:y@other/\")";
        let out = redact_urls_in(text);
        assert_eq!(
            out,
            "requesting https://h:1/api/v1/alerts?token=REDACTED connection refused \
             (\"http://other/\")"
        );
        assert!(!out.contains("pw") && !out.contains("token=t"));
        assert_eq!(redact_urls_in("no url here"), "no url here");
        assert_eq!(redact_urls_in("://x:y@z"), "://z");
    }
}
