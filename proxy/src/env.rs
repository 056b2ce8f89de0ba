//! The proxy environment as Go's `golang.org/x/net/http/httpproxy` reads it (what client-go,
//! `oc` and `kubectl` use through `net/http.ProxyFromEnvironment`):
//!
//! - `HTTPS_PROXY` (else `https_proxy`) for `https://` destinations, `HTTP_PROXY` (else
//!   `http_proxy`) for `http://` ones; nothing else (`ALL_PROXY` is curl's, not Go's). A value
//!   without a scheme is `http://`.
//! - `localhost` and loopback addresses (`127.0.0.0/8`, `::1`) are never proxied.
//! - `NO_PROXY` (else `no_proxy`): comma-separated, case-insensitive entries, `*` for every
//!   destination; an IP address (`10.0.0.1`, `2001:db8::1`), optionally with a port
//!   (`10.0.0.1:443`, `[2001:db8::1]:443`); a CIDR (`10.0.0.0/8`); a domain, optionally with a
//!   port: `example.com` matches `example.com` and its subdomains, `.example.com` and
//!   `*.example.com` only its subdomains. An entry with a port matches only that port (the
//!   destination's, or its scheme's default). Malformed entries are ignored.
//!
//! Not ported: IDNA (Kubernetes and Prometheus hosts are ASCII: a non-ASCII entry matches
//! nothing) and the CGI rule (`REQUEST_METHOD`: no CGI runs these programs).

use std::net::IpAddr;

use hyper::Uri;

/// The proxy settings of an environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyEnv {
    /// `HTTP_PROXY`.
    pub http: Option<String>,
    /// `HTTPS_PROXY`.
    pub https: Option<String>,
    /// `NO_PROXY`.
    pub no: NoProxy,
}

impl ProxyEnv {
    /// Settings from the process's environment (upper case first, empty values ignored).
    pub fn from_env() -> ProxyEnv {
        let get = |names: [&str; 2]| {
            names
                .iter()
                .filter_map(|n| std::env::var(n).ok())
                .find(|v| !v.is_empty())
        };
        ProxyEnv {
            http: get(["HTTP_PROXY", "http_proxy"]),
            https: get(["HTTPS_PROXY", "https_proxy"]),
            no: NoProxy::parse(&get(["NO_PROXY", "no_proxy"]).unwrap_or_default()),
        }
    }

    /// Settings from these values (tests, and whoever has them elsewhere).
    pub fn new(http: &str, https: &str, no: &str) -> ProxyEnv {
        let some = |v: &str| (!v.is_empty()).then(|| v.to_string());
        ProxyEnv {
            http: some(http),
            https: some(https),
            no: NoProxy::parse(no),
        }
    }

    /// The proxy URL (as set: it may hold credentials) for requests to `dst`, or `None` to
    /// connect directly.
    pub fn proxy_url(&self, dst: &Uri) -> Option<&str> {
        let url = match dst.scheme_str() {
            Some("https") => self.https.as_deref(),
            Some("http") => self.http.as_deref(),
            _ => None,
        }?;
        self.no.use_proxy(dst).then_some(url)
    }
}

/// A parsed `NO_PROXY`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NoProxy {
    all: bool,
    ips: Vec<IpMatch>,
    domains: Vec<DomainMatch>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum IpMatch {
    Cidr(IpAddr, u8),
    Ip(IpAddr, String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct DomainMatch {
    /// With a leading dot.
    host: String,
    port: String,
    /// The entry had no leading dot: the domain itself matches too.
    match_host: bool,
}

impl NoProxy {
    /// Parses `NO_PROXY` as Go's `httpproxy` does (its `config.init`).
    pub fn parse(raw: &str) -> NoProxy {
        let mut out = NoProxy::default();
        for p in raw.split(',') {
            let p = p.trim().to_ascii_lowercase();
            if p.is_empty() {
                continue;
            }
            if p == "*" {
                return NoProxy {
                    all: true,
                    ..NoProxy::default()
                };
            }
            if let Some((ip, bits)) = parse_cidr(&p) {
                out.ips.push(IpMatch::Cidr(ip, bits));
                continue;
            }
            let (host, port) = match split_host_port(&p) {
                Some(("", _)) => continue,
                Some((h, port)) => (h.to_string(), port.to_string()),
                None => (p.clone(), String::new()),
            };
            if let Ok(ip) = host.parse::<IpAddr>() {
                out.ips.push(IpMatch::Ip(ip, port));
                continue;
            }
            if host.is_empty() {
                continue;
            }
            // `*.example.com` is `.example.com`; `example.com` matches itself too.
            let host = match host.strip_prefix('*') {
                Some(h) if h.starts_with('.') => h.to_string(),
                _ => host,
            };
            let (host, match_host) = match host.starts_with('.') {
                true => (host, false),
                false => (format!(".{host}"), true),
            };
            out.domains.push(DomainMatch {
                host,
                port,
                match_host,
            });
        }
        out
    }

    /// Whether requests to `dst` may use a proxy (Go's `useProxy` on `canonicalAddr(dst)`).
    pub fn use_proxy(&self, dst: &Uri) -> bool {
        let Some(host) = dst.host() else {
            return true;
        };
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let port = match (dst.port_u16(), dst.scheme_str()) {
            (Some(p), _) => p.to_string(),
            (None, Some("http")) => "80".to_string(),
            (None, Some("https")) => "443".to_string(),
            (None, Some("socks5")) => "1080".to_string(),
            (None, _) => String::new(),
        };
        self.use_proxy_for(host, &port)
    }

    fn use_proxy_for(&self, host: &str, port: &str) -> bool {
        if host == "localhost" {
            return false;
        }
        let ip = host.parse::<IpAddr>().ok().map(|ip| ip.to_canonical());
        if ip.is_some_and(|ip| ip.is_loopback()) {
            return false;
        }
        if self.all {
            return false;
        }
        let host = host.trim().to_ascii_lowercase();
        if let Some(ip) = ip {
            return !self.ips.iter().any(|m| match m {
                IpMatch::Cidr(net, bits) => in_cidr(ip, *net, *bits),
                IpMatch::Ip(want, p) => want.to_canonical() == ip && (p.is_empty() || p == port),
            });
        }
        !self.domains.iter().any(|m| {
            (host.ends_with(&m.host) || (m.match_host && host == m.host[1..]))
                && (m.port.is_empty() || m.port == port)
        })
    }
}

/// Go's `net.SplitHostPort`: `host:port` or `[host]:port` (brackets removed); `None` without a
/// port or with more than one colon outside brackets.
fn split_host_port(s: &str) -> Option<(&str, &str)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = after.strip_prefix(':')?;
        return (!port.contains([':', '[', ']'])).then_some((host, port));
    }
    let (host, port) = s.rsplit_once(':')?;
    (!host.contains([':', '[', ']']) && !port.contains([']', '['])).then_some((host, port))
}

/// `ip/bits` (Go's `net.ParseCIDR`).
fn parse_cidr(s: &str) -> Option<(IpAddr, u8)> {
    let (ip, bits) = s.split_once('/')?;
    let ip: IpAddr = ip.parse().ok()?;
    if !bits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let bits: u8 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((ip, bits))
}

fn in_cidr(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    let prefix = |a: u128, len: u32| {
        if bits == 0 {
            0
        } else {
            a >> (len - u32::from(bits))
        }
    };
    match (ip, net.to_canonical()) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            prefix(u128::from(u32::from(a)), 32) == prefix(u128::from(u32::from(n)), 32)
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => prefix(u128::from(a), 128) == prefix(u128::from(n), 128),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    //! Cases ported from Go's own tests of these rules: `golang.org/x/net/http/httpproxy`,
    //! `proxy_test.go` at x/net v0.57.0 (`proxyForURLTests`, `UseProxyTests` with its `noProxy`,
    //! `TestInvalidNoProxy`, `TestAllNoProxy`). Left out: the IDNA cases, the CGI cases and
    //! the IPv6 zone in a URL (`http::Uri` does not parse it).
    use super::*;

    fn uri(s: &str) -> Uri {
        s.parse().expect("uri")
    }

    /// Go's `proxyForURLTests` (the proxy chosen, before its URL is parsed).
    #[test]
    fn proxy_for_url_as_go() {
        let default = "http://example.com";
        let cases: &[(&str, &str, &str, &str, Option<&str>)] = &[
            // (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, request, want)
            ("127.0.0.1:8080", "", "", default, Some("127.0.0.1:8080")),
            (
                "http.proxy.tld",
                "secure.proxy.tld",
                "",
                "http://insecure.tld/",
                Some("http.proxy.tld"),
            ),
            (
                "http.proxy.tld",
                "secure.proxy.tld",
                "",
                "https://secure.tld/",
                Some("secure.proxy.tld"),
            ),
            (
                "http.proxy.tld",
                "https://secure.proxy.tld",
                "",
                "https://secure.tld/",
                Some("https://secure.proxy.tld"),
            ),
            ("http.proxy.tld", "", "", "https://secure.tld/", None),
            ("http.proxy.tld", "", "", "ftp://insecure.tld/", None),
            ("", "", "", default, None),
            ("proxy", "", "example.com", "http://example.com/", None),
            (
                "proxy",
                "",
                ".example.com",
                "http://example.com/",
                Some("proxy"),
            ),
            (
                "proxy",
                "",
                "ample.com",
                "http://example.com/",
                Some("proxy"),
            ),
            ("proxy", "", "example.com", "http://foo.example.com/", None),
            (
                "proxy",
                "",
                ".foo.com",
                "http://example.com/",
                Some("proxy"),
            ),
        ];
        for (http, https, no, req, want) in cases {
            let env = ProxyEnv::new(http, https, no);
            assert_eq!(
                env.proxy_url(&uri(req)),
                *want,
                "http_proxy={http:?} https_proxy={https:?} no_proxy={no:?} req={req:?}"
            );
        }
    }

    const NO_PROXY: &str = "foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, 10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:2]:443, [2001:db8::52:0:3]:80, 2002:db8:a::45/64";

    /// Go's `UseProxyTests`: (host, proxied), each asked on port 80.
    const USE_PROXY: &[(&str, bool)] = &[
        // Never proxy localhost:
        ("localhost", false),
        ("127.0.0.1", false),
        ("127.0.0.2", false),
        ("[::1]", false),
        ("[::2]", true),                       // not a loopback address
        ("192.168.1.1", false),                // matches exact IPv4
        ("192.168.1.2", true),                 // ports do not match
        ("192.168.1.3", false),                // matches exact IPv4:port
        ("192.168.1.4", true),                 // no match
        ("10.0.0.2", false),                   // matches IPv4/CIDR
        ("[2001:db8::52:0:1]", false),         // matches exact IPv6
        ("[2001:db8::52:0:2]", true),          // no match
        ("[2001:db8::52:0:3]", false),         // matches exact [IPv6]:port
        ("[2002:db8:a::123]", false),          // matches IPv6/CIDR
        ("[fe80::424b:c8be:1643:a1b6]", true), // no match
        ("barbaz.net", true),                  // does not match as .barbaz.net
        ("www.barbaz.net", false),             // does match as .barbaz.net
        ("foobar.com", false),                 // does match as foobar.com
        ("www.foobar.com", false),             // match because NO_PROXY includes "foobar.com"
        ("foofoobar.com", true),               // not match as a part of foobar.com
        ("baz.com", true),                     // not match as a part of barbaz.com
        ("localhost.net", true),               // not match as suffix of address
        ("local.localhost", true),             // not match as prefix as address
        ("barbarbaz.net", true),               // not match, wrong domain
        ("wildcard.io", true),                 // does not match as *.wildcard.io
        ("nested.wildcard.io", false),         // match as *.wildcard.io
        ("awildcard.io", true),                // not a match because of '*'
    ];

    #[test]
    fn use_proxy_as_go() {
        let no = NoProxy::parse(NO_PROXY);
        for (host, proxied) in USE_PROXY {
            // Go asks for `host:80`; so does an http:// URL without a port.
            assert_eq!(
                no.use_proxy(&uri(&format!("http://{host}/"))),
                *proxied,
                "{host}"
            );
            assert_eq!(
                no.use_proxy(&uri(&format!("https://{host}:80/"))),
                *proxied,
                "{host}"
            );
        }
    }

    #[test]
    fn an_invalid_entry_is_ignored_and_star_excludes_everything() {
        // Go's TestInvalidNoProxy.
        assert!(NoProxy::parse(":1").use_proxy(&uri("http://example.com")));
        // Go's TestAllNoProxy.
        let all = NoProxy::parse("*");
        for (host, _) in USE_PROXY {
            assert!(!all.use_proxy(&uri(&format!("http://{host}/"))), "{host}");
        }
    }

    #[test]
    fn ports_case_and_loopback_as_go() {
        let no = NoProxy::parse("Hub.Example.com:6443, .svc, , 10.0.0.0/8,");
        // A port in the entry matches that port only; the destination's default port counts.
        assert!(!no.use_proxy(&uri("https://hub.example.com:6443")));
        assert!(no.use_proxy(&uri("https://hub.example.com")));
        assert!(!no.use_proxy(&uri("https://api.hub.example.com:6443")));
        assert!(!no.use_proxy(&uri("https://thanos.openshift-monitoring.svc:9091")));
        assert!(no.use_proxy(&uri("https://svc")), ".svc: only subdomains");
        assert!(!no.use_proxy(&uri("https://10.1.2.3")));
        assert!(!no.use_proxy(&uri("https://[::ffff:10.1.2.3]")));
        // Implicit loopback, whatever NO_PROXY says, and an IPv4-mapped loopback.
        let none = NoProxy::parse("");
        for direct in [
            "https://localhost:6443",
            "https://127.9.9.9",
            "https://[::ffff:127.0.0.1]",
        ] {
            assert!(!none.use_proxy(&uri(direct)), "{direct}");
        }
        assert!(none.use_proxy(&uri("https://localhost.example.com")));
        let port = NoProxy::parse("example.com:443");
        assert!(!port.use_proxy(&uri("https://example.com")));
        assert!(port.use_proxy(&uri("http://example.com")));
    }
}
