//! Who may use the live view's server, decided before any handler runs.
//!
//! - **The Host** is an IP address or `localhost` (a web page cannot reach the server through a
//!   DNS name rebound to 127.0.0.1: DNS rebinding), else 403.
//! - **No cross-site request**: `Sec-Fetch-Site` other than `same-origin` or `none` (a request a
//!   page of another origin made, including another port of the same host: `same-site`), or an
//!   `Origin` other than the server's own, is refused (403) before it reaches a handler, so a
//!   page in the user's browser cannot make the server open watches. One exception: a top-level
//!   navigation (`Sec-Fetch-Mode: navigate`, `Sec-Fetch-Dest: document`) carrying the right
//!   token in its query, which is the user following the printed link from another page (a
//!   chat, a ticket); whoever has the token has the view anyway.
//! - **The session's path** (`/s/<16 random bytes>`, [`Keys::path`]): everything is served under
//!   it, and any other path is 404 before the token is looked at. The cookie is scoped to it
//!   (`Path=/s/<...>`): a browser sends cookies to every port of a host, so with `Path=/` the
//!   view's token would reach any server another user runs on 127.0.0.1 that the browser
//!   visits; scoped, it reaches only a request for the session's path, which another server
//!   cannot make the browser send without knowing it.
//! - **The session's token** ([`Token`], 32 bytes from the operating system's generator, in
//!   URL-safe base64): every request carries it, as the cookie the first answer sets
//!   (`HttpOnly; SameSite=Strict; Path=<the session's path>`, named after the port:
//!   [`cookie_name`]), in the query (`?token=`, the URL printed for the user) or as
//!   `Authorization: Bearer`; else 401. It is compared in constant time, never logged, and
//!   printed once, in the URL.

use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode, Uri};
use base64::Engine as _;
use ring::rand::{SecureRandom as _, SystemRandom};
use subtle::ConstantTimeEq as _;

/// Bytes of randomness in a token (as Jupyter's: 256 bits).
pub const TOKEN_BYTES: usize = 32;

/// The query parameter of the printed URL.
pub const TOKEN_PARAM: &str = "token";

/// What can go wrong making a token.
#[derive(Debug, thiserror::Error)]
#[error("cannot read random bytes from the operating system for the web view's token")]
pub struct TokenError;

/// The session's secret. Its `Debug` never shows it.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// A new token: [`TOKEN_BYTES`] bytes from the operating system's generator (ring's
    /// `SystemRandom`: `getrandom(2)` on Linux), URL-safe base64 without padding (43
    /// characters, none of which a URL or a cookie needs to escape).
    pub fn generate() -> Result<Token, TokenError> {
        let mut bytes = [0u8; TOKEN_BYTES];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| TokenError)?;
        Ok(Token(
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes),
        ))
    }

    /// The token, for the URL printed once for the user and nowhere else.
    pub fn reveal(&self) -> &str {
        &self.0
    }

    /// `candidate` is the token (constant time in their contents: `subtle`).
    fn matches(&self, candidate: &str) -> bool {
        bool::from(self.0.as_bytes().ct_eq(candidate.as_bytes()))
    }
}

/// The cookie's name: one per port (cookies are not scoped by port, so two servers on one host
/// would otherwise overwrite each other's).
pub fn cookie_name(port: u16) -> String {
    format!("update-status-{port}")
}

/// Bytes of randomness in the session's path.
pub const PATH_BYTES: usize = 16;

/// What the server knows to decide.
#[derive(Debug)]
pub struct Keys {
    /// The session's token.
    pub token: Token,
    /// [`cookie_name`] of the port served.
    pub cookie: String,
    /// The session's path, `/s/<PATH_BYTES random bytes, URL-safe base64>` (no trailing `/`):
    /// everything is served under it, and the cookie is scoped to it.
    pub path: String,
}

impl Keys {
    /// The keys of a new session on `port`: `token`, and a new random path.
    pub fn new(token: Token, port: u16) -> Result<Keys, TokenError> {
        let mut bytes = [0u8; PATH_BYTES];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| TokenError)?;
        Ok(Keys {
            token,
            cookie: cookie_name(port),
            path: format!(
                "/s/{}",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
            ),
        })
    }

    /// The `Set-Cookie` value that lets the page's later requests (script, events, its links)
    /// in without the token in the address.
    pub fn set_cookie(&self) -> HeaderValue {
        // The token, the path and the name are URL-safe base64 and `update-status-<digits>`:
        // always a valid header value.
        HeaderValue::from_str(&format!(
            "{}={}; HttpOnly; SameSite=Strict; Path={}",
            self.cookie,
            self.token.reveal(),
            self.cookie_path()
        ))
        .unwrap_or_else(|_| HeaderValue::from_static("update-status=; Max-Age=0"))
    }
}

impl Keys {
    /// The cookie's `Path`: the session's (`/` only for a server without one, in tests).
    fn cookie_path(&self) -> &str {
        if self.path.is_empty() {
            "/"
        } else {
            &self.path
        }
    }

    /// `path` is the session's path or under it.
    pub fn in_session(&self, path: &str) -> bool {
        path.strip_prefix(self.path.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }
}

/// The guard's decision.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    /// Let it through; `set_cookie` when the token came in the query.
    Allow {
        /// Answer with the cookie.
        set_cookie: bool,
    },
    /// Refuse with this status and text.
    Refuse(StatusCode, &'static str),
}

const NOT_FOUND: &str = "not found\n";
const HOST_REFUSED: &str = "this server answers only requests to an IP address or localhost\n";
const CROSS_SITE: &str = "refused: a cross-site request (another site or port made it); open the URL kubectl update-status printed\n";
const NO_TOKEN: &str = "this view needs the token of the URL kubectl update-status printed (http://<address>:<port>/?token=...): open that URL\n";

/// Decides on a request from its method, URI and headers.
pub fn decide(keys: &Keys, method: &Method, uri: &Uri, headers: &HeaderMap) -> Decision {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !host_allowed(host) {
        return Decision::Refuse(StatusCode::FORBIDDEN, HOST_REFUSED);
    }
    if !keys.in_session(uri.path()) {
        return Decision::Refuse(StatusCode::NOT_FOUND, NOT_FOUND);
    }
    let in_query = query_token(uri).is_some_and(|t| keys.token.matches(t));
    let authenticated = in_query
        || cookie_tokens(headers, &keys.cookie).any(|t| keys.token.matches(t))
        || bearer(headers).is_some_and(|t| keys.token.matches(t));
    if cross_site(headers, host) && !(in_query && method == Method::GET && navigation(headers)) {
        return Decision::Refuse(StatusCode::FORBIDDEN, CROSS_SITE);
    }
    if !authenticated {
        return Decision::Refuse(StatusCode::UNAUTHORIZED, NO_TOKEN);
    }
    Decision::Allow {
        set_cookie: in_query,
    }
}

/// `Host` is an IP address or `localhost`, with an optional port.
pub fn host_allowed(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        // [v6]:port
        return rest
            .split_once(']')
            .is_some_and(|(ip, port)| ip.parse::<std::net::IpAddr>().is_ok() && valid_port(port));
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if valid_port(&format!(":{port}")) => name,
            _ => host,
        }
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

fn valid_port(s: &str) -> bool {
    s.is_empty()
        || s.strip_prefix(':')
            .is_some_and(|p| p.parse::<u16>().is_ok())
}

/// A page of another origin made the request: `Sec-Fetch-Site` says so (anything but
/// `same-origin` and `none`, the user's own navigation), or `Origin` is not this server's
/// (`http://<Host>`; `null` included). A client sending neither (curl, an old browser) is not
/// cross-site: the token still decides.
fn cross_site(headers: &HeaderMap, host: &str) -> bool {
    let fetch_site = headers.get_all("sec-fetch-site").iter().any(|v| {
        !matches!(
            v.to_str().map(str::to_ascii_lowercase).as_deref(),
            Ok("same-origin" | "none")
        )
    });
    let own = format!("http://{host}");
    let origin = headers
        .get_all(header::ORIGIN)
        .iter()
        .any(|v| !v.to_str().is_ok_and(|o| o.eq_ignore_ascii_case(&own)));
    fetch_site || origin
}

/// A top-level navigation (the user following a link), not a script's request or a frame.
fn navigation(headers: &HeaderMap) -> bool {
    let is = |name: &str, want: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case(want))
    };
    is("sec-fetch-mode", "navigate") && is("sec-fetch-dest", "document")
}

/// The `token` parameter of the query (raw: a token needs no escaping).
fn query_token(uri: &Uri) -> Option<&str> {
    uri.query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == TOKEN_PARAM).then_some(v)
    })
}

/// The values of the cookies named `name` (every `Cookie` header).
fn cookie_tokens<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(move |c| {
            let (k, v) = c.trim().split_once('=')?;
            (k == name).then_some(v)
        })
}

/// `Authorization: Bearer <token>`.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Keys {
        Keys {
            token: Token::generate().expect("token"),
            cookie: cookie_name(8080),
            path: String::new(),
        }
    }

    /// RFC 6265's path-match (section 5.1.4): whether a browser sends a cookie of `cookie_path`
    /// with a request for `request_path`, whatever the port.
    fn path_match(cookie_path: &str, request_path: &str) -> bool {
        request_path == cookie_path
            || request_path
                .strip_prefix(cookie_path)
                .is_some_and(|rest| cookie_path.ends_with('/') || rest.starts_with('/'))
    }

    #[test]
    fn the_cookie_reaches_no_other_server_of_the_host() {
        let k = Keys::new(Token::generate().expect("token"), 8080).expect("keys");
        let t = k.token.reveal().to_owned();
        let set = k.set_cookie();
        let set = set.to_str().expect("ascii");
        let path = set
            .split("; ")
            .find_map(|a| a.strip_prefix("Path="))
            .expect("a Path");
        // Another user's server on another port of 127.0.0.1: the pages a browser visits
        // there (its root, anything it links to without knowing the session's path) carry no
        // cookie of this session.
        for elsewhere in [
            "/",
            "/index.html",
            "/s/",
            "/s/x",
            "/events",
            "/api/view",
            "/c/ns",
        ] {
            assert!(!path_match(path, elsewhere), "{set}: sent with {elsewhere}");
        }
        // The session's own requests carry it.
        for own in ["", "/", "/events", "/c/ns/hosted", "/app.js"] {
            assert!(path_match(path, &format!("{}{own}", k.path)), "{own}");
        }
        // The path is the session's, unguessable: another session's differs.
        let other = Keys::new(Token::generate().expect("token"), 8080).expect("keys");
        assert_ne!(k.path, other.path);
        assert!(k.path.len() >= "/s/".len() + 22, "{}", k.path);
        // And the server answers nothing outside it, even to the right token.
        let cookie = format!("{}={t}", k.cookie);
        for outside in [
            "/".to_owned(),
            "/events".to_owned(),
            format!("{}x/", k.path),
        ] {
            assert_eq!(
                decide_with(
                    &k,
                    &format!("{outside}?token={t}"),
                    &[HOST, ("cookie", &cookie)]
                ),
                Decision::Refuse(StatusCode::NOT_FOUND, NOT_FOUND),
                "{outside}"
            );
        }
        assert_eq!(
            decide_with(
                &k,
                &format!("{}/events", k.path),
                &[HOST, ("cookie", &cookie)]
            ),
            Decision::Allow { set_cookie: false }
        );
    }

    fn decide_with(keys: &Keys, uri: &str, headers: &[(&str, &str)]) -> Decision {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                HeaderValue::from_str(v).expect("value"),
            );
        }
        decide(keys, &Method::GET, &uri.parse().expect("uri"), &map)
    }

    const HOST: (&str, &str) = ("host", "127.0.0.1:8080");

    #[test]
    fn only_ip_addresses_and_localhost_are_served() {
        for ok in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "localhost:1",
            "LOCALHOST",
            "[::1]:9000",
            "[::1]",
            "10.0.0.5:80",
        ] {
            assert!(host_allowed(ok), "{ok}");
        }
        for bad in [
            "",
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.nip.io:80",
            "[::1]:x",
            "127.0.0.1:99999",
        ] {
            assert!(!host_allowed(bad), "{bad}");
        }
        // Even with the token.
        let k = keys();
        let uri = format!("/?token={}", k.token.reveal());
        assert_eq!(
            decide_with(&k, &uri, &[("host", "rebound.example:8080")]),
            Decision::Refuse(StatusCode::FORBIDDEN, HOST_REFUSED)
        );
    }

    #[test]
    fn tokens_are_32_random_bytes_in_url_safe_base64() {
        let a = Token::generate().expect("token");
        let b = Token::generate().expect("token");
        assert_eq!(a.reveal().len(), 43);
        assert!(
            a.reveal()
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'),
            "{}",
            a.reveal()
        );
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(a.reveal())
            .expect("base64");
        assert_eq!(raw.len(), TOKEN_BYTES);
        assert_ne!(a.reveal(), b.reveal());
        assert!(!format!("{a:?}").contains(a.reveal()));
    }

    #[test]
    fn without_the_token_nothing_is_served() {
        let k = keys();
        let t = k.token.reveal().to_owned();
        let unauthorized = Decision::Refuse(StatusCode::UNAUTHORIZED, NO_TOKEN);
        // Nothing, or a wrong token anywhere.
        let mut wrong = t.clone().into_bytes();
        wrong[42] = if wrong[42] == b'A' { b'B' } else { b'A' };
        let wrong = String::from_utf8(wrong).expect("ascii");
        for (uri, headers) in [
            ("/".to_owned(), vec![HOST]),
            ("/api/view".to_owned(), vec![HOST]),
            (format!("/?token={wrong}"), vec![HOST]),
            (format!("/?token={}", &t[..42]), vec![HOST]),
            (format!("/?token={t}x"), vec![HOST]),
            ("/?token=".to_owned(), vec![HOST]),
            (format!("/?tok={t}"), vec![HOST]),
        ] {
            assert_eq!(decide_with(&k, &uri, &headers), unauthorized, "{uri}");
        }
        let cookie = format!("{}={wrong}", k.cookie);
        assert_eq!(
            decide_with(&k, "/events", &[HOST, ("cookie", &cookie)]),
            unauthorized
        );
        // The right token under another port's cookie name.
        let other = format!("{}={t}", cookie_name(8081));
        assert_eq!(
            decide_with(&k, "/events", &[HOST, ("cookie", &other)]),
            unauthorized
        );
        let bearer = format!("Bearer {wrong}");
        assert_eq!(
            decide_with(&k, "/api/view", &[HOST, ("authorization", &bearer)]),
            unauthorized
        );
    }

    #[test]
    fn the_token_in_the_query_sets_the_cookie_which_then_suffices() {
        let k = keys();
        let t = k.token.reveal().to_owned();
        assert_eq!(
            decide_with(
                &k,
                &format!("/?token={t}"),
                &[HOST, ("sec-fetch-site", "none")]
            ),
            Decision::Allow { set_cookie: true }
        );
        assert_eq!(
            decide_with(&k, &format!("/c/ns?a=b&token={t}"), &[HOST]),
            Decision::Allow { set_cookie: true }
        );
        let set = k.set_cookie();
        let set = set.to_str().expect("ascii");
        assert_eq!(
            set,
            format!("update-status-8080={t}; HttpOnly; SameSite=Strict; Path=/")
        );
        // The browser's later requests: the cookie among others.
        let cookie = format!("other=1; {}={t}; x=y", k.cookie);
        for path in ["/events", "/app.js", "/api/c/ns", "/c/ns/name"] {
            assert_eq!(
                decide_with(
                    &k,
                    path,
                    &[HOST, ("cookie", &cookie), ("sec-fetch-site", "same-origin")]
                ),
                Decision::Allow { set_cookie: false },
                "{path}"
            );
        }
        // A second Cookie header (HTTP/2 splits them).
        let mine = format!("{}={t}", k.cookie);
        assert_eq!(
            decide_with(&k, "/events", &[HOST, ("cookie", "a=b"), ("cookie", &mine)]),
            Decision::Allow { set_cookie: false }
        );
        let bearer = format!("Bearer {t}");
        assert_eq!(
            decide_with(&k, "/api/view", &[HOST, ("authorization", &bearer)]),
            Decision::Allow { set_cookie: false }
        );
    }

    #[test]
    fn cross_site_requests_are_refused_even_with_the_cookie() {
        let k = keys();
        let t = k.token.reveal().to_owned();
        let cookie = format!("{}={t}", k.cookie);
        let forbidden = Decision::Refuse(StatusCode::FORBIDDEN, CROSS_SITE);
        for headers in [
            vec![("sec-fetch-site", "cross-site")],
            // Another port of the same host is the same site, not the same origin.
            vec![("sec-fetch-site", "same-site")],
            vec![("sec-fetch-site", "something-new")],
            vec![("origin", "http://evil.example")],
            vec![("origin", "null")],
            vec![("origin", "http://127.0.0.1:8081")],
            vec![("origin", "https://127.0.0.1:8080")],
            vec![
                ("sec-fetch-site", "same-origin"),
                ("origin", "http://localhost:8080"),
            ],
        ] {
            let mut all = vec![HOST, ("cookie", cookie.as_str())];
            all.extend(headers.iter().copied());
            for path in ["/api/c/ns", "/events/c/ns", "/api/view", "/"] {
                assert_eq!(decide_with(&k, path, &all), forbidden, "{path} {headers:?}");
            }
        }
        // The page's own requests.
        for headers in [
            vec![("sec-fetch-site", "same-origin")],
            vec![("origin", "http://127.0.0.1:8080")],
            vec![
                ("sec-fetch-site", "same-origin"),
                ("origin", "HTTP://127.0.0.1:8080"),
            ],
            vec![],
        ] {
            let mut all = vec![HOST, ("cookie", cookie.as_str())];
            all.extend(headers.iter().copied());
            assert_eq!(
                decide_with(&k, "/events/c/ns", &all),
                Decision::Allow { set_cookie: false },
                "{headers:?}"
            );
        }
    }

    #[test]
    fn a_link_followed_from_another_site_opens_only_with_the_token() {
        let k = keys();
        let t = k.token.reveal().to_owned();
        let nav = [
            HOST,
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-mode", "navigate"),
            ("sec-fetch-dest", "document"),
        ];
        assert_eq!(
            decide_with(&k, &format!("/?token={t}"), &nav),
            Decision::Allow { set_cookie: true }
        );
        let forbidden = Decision::Refuse(StatusCode::FORBIDDEN, CROSS_SITE);
        // Without it (the Strict cookie would not come along anyway), with a wrong one, or as a
        // frame or a script's request: refused.
        let cookie = format!("{}={t}", k.cookie);
        let mut with_cookie = nav.to_vec();
        with_cookie.push(("cookie", &cookie));
        assert_eq!(decide_with(&k, "/", &with_cookie), forbidden);
        assert_eq!(decide_with(&k, "/?token=x", &nav), forbidden);
        let frame = [
            HOST,
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-mode", "navigate"),
            ("sec-fetch-dest", "iframe"),
        ];
        assert_eq!(decide_with(&k, &format!("/?token={t}"), &frame), forbidden);
        let fetch = [
            HOST,
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-mode", "no-cors"),
            ("sec-fetch-dest", "empty"),
        ];
        assert_eq!(
            decide_with(&k, &format!("/api/c/ns?token={t}"), &fetch),
            forbidden
        );
    }
}
