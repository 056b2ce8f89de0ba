//! Credentials never leave: URLs are shown without user information (`user:password@`) and
//! without the values of token-like query parameters, wherever they are logged, put into an
//! insight or copied to the hub.
//!
//! URLs are parsed with the `url` crate (the WHATWG URL standard, what browsers and most HTTP
//! stacks follow), never split by hand: a password may hold `#`, `?`, `/` or `@`, and a
//! hand-made split that stops at the first of them leaves the rest of the password in the
//! output. Whatever does not parse, or parses in a way where part of a password may have
//! landed outside the user information (an `@` after the authority), is replaced whole by
//! [`REDACTED`] (the scheme kept): an unreadable URL in a log is better than a leaked password.

use url::Url;

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

/// Scheme prepended to a URL written without one (`host:port/path`), and removed again.
const ASSUMED_SCHEME: &str = "http://";

/// `url` with its user information removed and the values of token-like query parameters
/// replaced by [`REDACTED`]; anything else (scheme, host, port, path, other parameters) is
/// kept, so the URL still says where it points. The URL comes back normalized as the WHATWG
/// standard writes it (lower-case scheme and host, `/` for an empty path of `http(s)`).
/// A URL that does not parse, or where an `@` follows the end of the authority (so part of a
/// password may sit in the path, query or fragment), becomes `<scheme>://REDACTED` (or
/// `REDACTED` without a scheme).
pub fn redact_url(url: &str) -> String {
    redact_parsed(url, |parsed| {
        let mut out = parsed.clone();
        let query = parsed.query().map(redact_query);
        let fragment = parsed.fragment().map(redact_query);
        out.set_query(query.as_deref());
        out.set_fragment(fragment.as_deref());
        out
    })
}

/// `scheme://host[:port]/path` of `url` without user information, query or fragment, and
/// without a trailing `/`: the endpoint a message names. Unparseable or ambiguous URLs as in
/// [`redact_url`].
pub fn redact_endpoint(url: &str) -> String {
    let out = redact_parsed(url, |parsed| {
        let mut out = parsed.clone();
        out.set_query(None);
        out.set_fragment(None);
        out
    });
    out.trim_end_matches('/').to_string()
}

/// Parses `input` (with [`ASSUMED_SCHEME`] when it has none), removes its user information,
/// applies `edit`, and writes it back (without the assumed scheme). Refuses, as described in
/// [`redact_url`], what cannot be parsed safely.
fn redact_parsed(input: &str, edit: impl FnOnce(&Url) -> Url) -> String {
    let trimmed = input.trim();
    let (scheme, rest, assumed) = match trimmed.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest, false),
        None => (None, trimmed, true),
    };
    let refused = || match scheme.filter(|s| is_scheme(s)) {
        Some(s) => format!("{s}://{REDACTED}"),
        None => REDACTED.to_string(),
    };
    if scheme.is_some_and(|s| !is_scheme(s)) {
        return refused();
    }
    // An `@` after the first delimiter that ends an authority: what precedes it may be user
    // information that a parser (rightly, by the standard) did not read as such.
    if let Some(end) = rest.find(['/', '?', '#', '\\'])
        && rest[end..].contains('@')
    {
        return refused();
    }
    let text = if assumed {
        format!("{ASSUMED_SCHEME}{rest}")
    } else {
        trimmed.to_string()
    };
    let Ok(mut parsed) = Url::parse(&text) else {
        return refused();
    };
    if parsed.cannot_be_a_base() || parsed.host_str().is_none() {
        return refused();
    }
    if parsed.set_username("").is_err() || parsed.set_password(None).is_err() {
        return refused();
    }
    let out = edit(&parsed).to_string();
    if assumed {
        out.strip_prefix(ASSUMED_SCHEME).unwrap_or(&out).to_string()
    } else {
        out
    }
}

/// A URL scheme: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
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

/// Whether a (possibly percent-encoded) parameter name names a credential.
fn is_secret(name: &str) -> bool {
    let decoded: String = url::form_urlencoded::parse(name.as_bytes())
        .map(|(k, v)| format!("{k}{v}"))
        .collect();
    let decoded = decoded.to_ascii_lowercase();
    let raw = name.to_ascii_lowercase();
    SECRET_PARAMETERS
        .iter()
        .any(|s| decoded.contains(s) || raw.contains(s))
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
        let word_end = rest[i..]
            .find(char::is_whitespace)
            .map_or(rest.len(), |j| i + j);
        let quote_end = rest[i..word_end]
            .find(['"', '\'', '<', '>', '`'])
            .map_or(word_end, |j| i + j);
        // A quote followed by an `@` in the same word is taken as part of the URL (a password
        // may hold quotes): the whole word is redacted then.
        let end = if rest[quote_end..word_end].contains('@') {
            word_end
        } else {
            quote_end
        };
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
        // Percent-encoded parameter names are recognized too.
        assert_eq!(
            redact_url("https://h/?acc%65ss_t%6Fken=abc"),
            "https://h/?acc%65ss_t%6Fken=REDACTED"
        );
    }

    /// The review's reproduction: a `#` in the password ended the hand-made split early.
    #[test]
    fn a_password_with_a_hash_or_an_at_never_shows() {
        for (url, password) in [
            ("https://u:p#w@h", "p#w"),
            ("https://u:p?w@h/x", "p?w"),
            ("https://u:p/w@h/x", "p/w"),
            ("https://u:p@w@h/x", "p@w"),
            ("u:p#w@h:9090", "p#w"),
            ("https://a@b@host/x@y", "b"),
            ("https://u:p%23w@h/", "p%23w"),
        ] {
            let out = redact_url(url);
            assert!(!out.contains(password), "{url} -> {out}");
            assert!(!out.contains("w@"), "{url} -> {out}");
        }
        assert_eq!(redact_url("https://u:p#w@h"), "https://REDACTED");
        assert_eq!(redact_url("https://u:p@w@h/x"), "https://h/x");
        assert_eq!(redact_url("u:p@h:9090/x"), "h:9090/x");
        assert_eq!(redact_url("https://[::1]:9091/"), "https://[::1]:9091/");
        assert_eq!(redact_url("https://u:p@[::1]:9091/"), "https://[::1]:9091/");
        assert_eq!(redact_url("not a url at all"), "REDACTED");
        assert_eq!(redact_url("h t://u:p@h"), "REDACTED");
    }

    #[test]
    fn endpoints_lose_query_fragment_and_trailing_slash() {
        assert_eq!(
            redact_endpoint("https://u:p@thanos:9091/prefix/?token=t#x"),
            "https://thanos:9091/prefix"
        );
        assert_eq!(redact_endpoint("https://u:p#w@h"), "https://REDACTED");
        assert_eq!(redact_endpoint("127.0.0.1:9090/p/"), "127.0.0.1:9090/p");
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
        assert_eq!(redact_urls_in("://x:y@z"), "REDACTED");
        assert_eq!(
            redact_urls_in("GET https://u:p#w@h failed"),
            "GET https://REDACTED failed"
        );
    }
}

#[cfg(test)]
mod proptests {
    //! Whatever the URL looks like, the password in its user information never comes out,
    //! raw, percent-encoded or percent-decoded.

    use super::*;
    use proptest::prelude::*;

    /// Password characters: anything printable that is not a space, `@`, `#`, `%`, `:`, `/`,
    /// `?` and `\` included, between two markers that nothing else in the URL can hold (the
    /// rest of the URL is lower-case): no part of the password may show, not only all of it.
    fn password() -> impl Strategy<Value = String> {
        "[!-~]{1,12}".prop_map(|s| format!("PW{s}QZ"))
    }

    fn host() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z][a-z0-9-]{0,10}(\\.[a-z]{2,5}){0,2}",
            Just("[::1]".to_string()),
            Just("[2001:db8::7]".to_string()),
            Just("127.0.0.1".to_string()),
        ]
    }

    fn percent_encoded(s: &str) -> String {
        url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
    }

    fn percent_decoded(s: &str) -> String {
        url::form_urlencoded::parse(s.as_bytes())
            .map(|(k, v)| format!("{k}{v}"))
            .collect()
    }

    fn leaks(out: &str, password: &str) -> bool {
        let forms = [
            password.to_string(),
            percent_encoded(password),
            percent_decoded(password),
        ];
        out.contains("PW") || out.contains("QZ") || forms.iter().any(|f| out.contains(f.as_str()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn the_password_never_shows(
            scheme in prop_oneof![
                Just("https://"), Just("http://"), Just(""), Just("HTTPS://"), Just("thanos+x://")
            ],
            user in "[a-z0-9._-]{0,8}",
            password in password(),
            encode in any::<bool>(),
            host in host(),
            port in proptest::option::of(1u16..),
            path in "(/[a-z0-9._~-]{0,8}){0,3}",
            query in proptest::option::of("[a-z_]{1,8}=[a-z0-9]{0,8}"),
        ) {
            let pw = if encode { percent_encoded(&password) } else { password.clone() };
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            let query = query.map(|q| format!("?{q}")).unwrap_or_default();
            let url = format!("{scheme}{user}:{pw}@{host}{port}{path}{query}");
            let out = redact_url(&url);
            prop_assert!(!leaks(&out, &password), "{} -> {}", url, out);
            let endpoint = redact_endpoint(&url);
            prop_assert!(!leaks(&endpoint, &password), "{} -> {}", url, endpoint);
            let text = redact_urls_in(&format!("error: GET {url}: refused"));
            if !scheme.is_empty() {
                prop_assert!(!leaks(&text, &password), "{} -> {}", url, text);
            }
        }

        #[test]
        fn garbage_never_panics_and_keeps_no_user_information(input in "\\PC{0,60}") {
            let out = redact_url(&input);
            // User information is removed, and an `@` anywhere else is refused.
            prop_assert!(!out.contains('@'), "{:?} -> {:?}", input, out);
            let _ = redact_endpoint(&input);
            let _ = redact_urls_in(&input);
        }
    }
}
