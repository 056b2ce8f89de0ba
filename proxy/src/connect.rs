//! The proxy a client uses ([`proxy_for`]: a kubeconfig's `proxy-url`, else the environment
//! read by [`crate::env`]), the `CONNECT` tunnel through it ([`Connector`]) and the TLS
//! configuration that verifies an `https://` proxy ([`proxy_tls`]). No text of this module
//! quotes a proxy URL.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::Uri;
use hyper_rustls::{HttpsConnector, MaybeHttpsStream};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::proxy::matcher::{Intercept, Matcher};

use hyper_util::rt::TokioIo;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tokio::net::TcpStream;

use crate::env::ProxyEnv;

/// The environment variable naming the PEM bundle of the proxy's CA (set by OCM's add-on
/// manager with the AddOnDeploymentConfig's `proxyConfig.caBundle`, mounted at
/// `/managed/proxy-ca/ca-bundle.crt`).
pub const CA_BUNDLE_ENV: &str = "CA_BUNDLE_FILE_PATH";

/// What is wrong with a proxy setting. The texts never quote the proxy URL (it may hold a
/// password).
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The URL does not parse as `scheme://[user[:password]@]host[:port]`.
    #[error(
        "{origin}: the proxy URL is not valid (expected http://[user:password@]host:port or https://...)"
    )]
    Invalid {
        /// Where the URL comes from (`proxy-url of <kubeconfig>`, `HTTPS_PROXY`...).
        origin: String,
    },
    /// A scheme other than `http` or `https` (SOCKS).
    #[error("{origin}: proxy scheme {scheme} is not supported (http:// and https:// proxies are)")]
    Scheme {
        /// Where the URL comes from.
        origin: String,
        /// The scheme.
        scheme: String,
    },
    /// The CAs to verify an `https://` proxy cannot be used.
    #[error("the CA bundle of the https proxy {proxy}: {problem}")]
    Tls {
        /// The proxy (without credentials).
        proxy: String,
        /// What is wrong.
        problem: String,
    },
}

/// How long a proxy may take to answer `CONNECT` (after the TCP connection to it, which the
/// connector's own connect timeout bounds): Go's transport allows a minute when the request has
/// no deadline, as kubectl's requests have none. Without it, a proxy that accepts and never
/// answers holds the call forever.
pub const TUNNEL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The error of a tunnel the proxy did not open within [`TUNNEL_TIMEOUT`] (no proxy URL in it).
#[derive(Debug, thiserror::Error)]
#[error("the proxy did not answer CONNECT within {}s", TUNNEL_TIMEOUT.as_secs())]
pub struct TunnelTimeout;

/// `f` (a tunnel's opening), failed with [`TunnelTimeout`] past [`TUNNEL_TIMEOUT`].
async fn within<T, E: Into<BoxError>>(
    f: impl Future<Output = Result<T, E>>,
) -> Result<T, BoxError> {
    match tokio::time::timeout(TUNNEL_TIMEOUT, f).await {
        Ok(r) => r.map_err(Into::into),
        Err(_) => Err(Box::new(TunnelTimeout)),
    }
}

/// A proxy to send a client's connections through.
#[derive(Clone)]
pub struct Proxy {
    intercept: Intercept,
}

impl Proxy {
    /// The proxy's URL, without user information.
    pub fn uri(&self) -> &Uri {
        self.intercept.uri()
    }

    /// Reached over TLS (`https://`).
    pub fn is_tls(&self) -> bool {
        self.uri().scheme_str() == Some("https")
    }

    fn checked(intercept: Intercept, origin: &str) -> Result<Proxy, ProxyError> {
        match intercept.uri().scheme_str() {
            Some("http" | "https") => Ok(Proxy { intercept }),
            other => Err(ProxyError::Scheme {
                origin: origin.to_string(),
                scheme: other.unwrap_or_default().to_string(),
            }),
        }
    }
}

impl std::fmt::Display for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let u = self.uri();
        write!(
            f,
            "{}://{}",
            u.scheme_str().unwrap_or("http"),
            u.authority().map(|a| a.as_str()).unwrap_or_default()
        )
    }
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Proxy({self})")
    }
}

/// The proxy for the requests of a client to `dst`: `explicit` (a kubeconfig's `proxy-url`,
/// `origin` naming it in errors) for every request, else the environment's (see the module
/// documentation); `None`: connect directly.
pub fn proxy_for(
    dst: &Uri,
    explicit: Option<&str>,
    origin: &str,
) -> Result<Option<Proxy>, ProxyError> {
    proxy_with(dst, explicit, origin, &ProxyEnv::from_env())
}

/// [`proxy_for`] with the environment's settings in `env` (tests).
pub fn proxy_with(
    dst: &Uri,
    explicit: Option<&str>,
    origin: &str,
    env: &ProxyEnv,
) -> Result<Option<Proxy>, ProxyError> {
    if let Some(url) = explicit.map(str::trim).filter(|u| !u.is_empty()) {
        return parse(url, origin).map(Some);
    }
    match env.proxy_url(dst) {
        Some(url) => parse(url.trim(), "the proxy environment variables").map(Some),
        None => Ok(None),
    }
}

/// A proxy URL, `origin` naming it in errors (which never quote it).
fn parse(url: &str, origin: &str) -> Result<Proxy, ProxyError> {
    let invalid = || ProxyError::Invalid {
        origin: origin.to_string(),
    };
    // A scheme the matcher does not know makes no proxy at all: the URL itself says which.
    if let Ok(u) = url.parse::<Uri>()
        && let Some(s) = u.scheme_str()
        && !matches!(s, "http" | "https")
    {
        return Err(ProxyError::Scheme {
            origin: origin.to_string(),
            scheme: s.to_string(),
        });
    }
    // hyper-util's parsing (user information as Basic credentials, a URL without a scheme taken
    // as http://, as Go does), for any destination.
    let m = Matcher::builder().all(url.to_string()).build();
    let probe = Uri::from_static("https://destination");
    let i = m.intercept(&probe).ok_or_else(invalid)?;
    Proxy::checked(i, origin)
}

/// Whether the environment's proxy settings send requests to `dst` through a proxy.
pub fn env_proxies(dst: &Uri) -> bool {
    ProxyEnv::from_env().proxy_url(dst).is_some()
}

/// A rustls configuration to verify an `https://` proxy: the CAs in `roots` (DER, the
/// destination's) and those of the bundle named by [`CA_BUNDLE_ENV`]; with neither, the
/// system's.
pub fn proxy_tls(proxy: &Proxy, roots: &[Vec<u8>]) -> Result<rustls::ClientConfig, ProxyError> {
    let err = |problem: String| ProxyError::Tls {
        proxy: proxy.to_string(),
        problem,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| err(e.to_string()))?;
    let mut store = rustls::RootCertStore::empty();
    for der in roots {
        // A destination CA that is not a usable root is skipped (it may be an intermediate).
        let _ = store.add(CertificateDer::from(der.clone()));
    }
    if let Some(path) = std::env::var_os(CA_BUNDLE_ENV).filter(|p| !p.is_empty()) {
        let shown = std::path::Path::new(&path).display().to_string();
        match std::fs::read(&path) {
            Ok(pem) => {
                let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
                    .collect::<Result<_, _>>()
                    .map_err(|e| err(format!("{CA_BUNDLE_ENV}={shown}: {e}")))?;
                store.add_parsable_certificates(certs);
            }
            // OCM sets the variable only with a bundle; a missing file is the kubelet not
            // having written it yet, or a variable meant for something else.
            Err(e) => tracing::warn!(
                file = %shown,
                error = %e,
                "cannot read the proxy CA bundle named by {CA_BUNDLE_ENV}; verifying the proxy without it"
            ),
        }
    }
    let tls = if store.is_empty() {
        use hyper_rustls::ConfigBuilderExt as _;
        builder
            .with_native_roots()
            .map_err(|e| {
                err(format!(
                    "no CA given and the system's cannot be loaded: {e}"
                ))
            })?
            .with_no_client_auth()
    } else {
        builder.with_root_certificates(store).with_no_client_auth()
    };
    Ok(tls)
}

/// The stream of a [`Connector`]: a TCP connection to the destination or to the proxy (a
/// tunnel), or a TLS connection to an `https://` proxy carrying the tunnel.
pub type Stream = MaybeHttpsStream<TokioIo<TcpStream>>;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A connector for hyper's client: direct, or through an HTTP `CONNECT` tunnel of a proxy. The
/// TLS to the destination (hyper-rustls' connector wrapping this one) runs inside the tunnel.
#[derive(Clone)]
pub enum Connector {
    /// Straight to the destination.
    Direct(HttpConnector),
    /// Through an `http://` proxy.
    Tunnel(Tunnel<HttpConnector>),
    /// Through an `https://` proxy.
    TlsTunnel(Tunnel<HttpsConnector<HttpConnector>>),
}

impl Connector {
    /// A connector over `http` (its timeouts and options), through `proxy` if any;
    /// `proxy_tls` gives the TLS configuration of an `https://` proxy.
    pub fn new(
        http: HttpConnector,
        proxy: Option<&Proxy>,
        proxy_tls: impl FnOnce(&Proxy) -> Result<rustls::ClientConfig, ProxyError>,
    ) -> Result<Self, ProxyError> {
        let Some(proxy) = proxy else {
            return Ok(Connector::Direct(http));
        };
        fn with_auth<C>(t: Tunnel<C>, proxy: &Proxy) -> Tunnel<C> {
            match proxy.intercept.basic_auth() {
                Some(a) => t.with_auth(a.clone()),
                None => t,
            }
        }
        if proxy.is_tls() {
            // CONNECT is HTTP/1.1: the proxy's TLS offers nothing else.
            let https = hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(proxy_tls(proxy)?)
                .https_or_http()
                .enable_http1()
                .wrap_connector(http);
            Ok(Connector::TlsTunnel(with_auth(
                Tunnel::new(proxy.uri().clone(), https),
                proxy,
            )))
        } else {
            Ok(Connector::Tunnel(with_auth(
                Tunnel::new(proxy.uri().clone(), http),
                proxy,
            )))
        }
    }
}

impl tower::Service<Uri> for Connector {
    type Response = Stream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Stream, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        match self {
            Connector::Direct(c) => c.poll_ready(cx).map_err(BoxError::from),
            Connector::Tunnel(c) => c.poll_ready(cx).map_err(BoxError::from),
            Connector::TlsTunnel(c) => c.poll_ready(cx).map_err(BoxError::from),
        }
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        match self {
            Connector::Direct(c) => {
                let f = c.call(dst);
                Box::pin(async move { Ok(MaybeHttpsStream::Http(f.await?)) })
            }
            Connector::Tunnel(c) => {
                let f = c.call(dst);
                Box::pin(async move { Ok(MaybeHttpsStream::Http(within(f).await?)) })
            }
            Connector::TlsTunnel(c) => {
                let f = c.call(dst);
                Box::pin(async move { within(f).await })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(https: &str, no: &str) -> ProxyEnv {
        ProxyEnv::new("", https, no)
    }

    fn uri(s: &str) -> Uri {
        s.parse().expect("uri")
    }

    #[test]
    fn the_kubeconfig_proxy_wins_and_the_environment_honours_no_proxy() {
        let hub = uri("https://hub.example.com:6443");
        let e = env("http://proxy.corp:3128", "localhost,.svc,10.0.0.0/8");
        let p = proxy_with(&hub, None, "x", &e)
            .expect("ok")
            .expect("proxied");
        assert_eq!(p.to_string(), "http://proxy.corp:3128");
        assert!(!p.is_tls());
        for direct in [
            "https://localhost:6443",
            "https://thanos-querier.openshift-monitoring.svc:9091",
            "https://10.1.2.3:443",
        ] {
            assert!(
                proxy_with(&uri(direct), None, "x", &e)
                    .expect("ok")
                    .is_none(),
                "{direct} is in NO_PROXY"
            );
        }
        let explicit = proxy_with(
            &uri("https://localhost:6443"),
            Some("https://other.corp:8443"),
            "x",
            &e,
        )
        .expect("ok")
        .expect("explicit");
        assert_eq!(
            explicit.to_string(),
            "https://other.corp:8443",
            "a kubeconfig's proxy-url is used for every request, as client-go does"
        );
        assert!(explicit.is_tls());
        assert!(
            proxy_with(&hub, None, "x", &env("", ""))
                .expect("ok")
                .is_none()
        );
    }

    #[test]
    fn proxy_credentials_never_show() {
        let hub = uri("https://hub:6443");
        let p = proxy_with(
            &hub,
            Some("http://agent:s3cr%40t@proxy.corp:3128"),
            "proxy-url of /hub/kubeconfig",
            &env("", ""),
        )
        .expect("ok")
        .expect("proxy");
        let shown = format!("{p} {p:?} {}", p.uri());
        assert!(
            !shown.contains("s3cr") && !shown.contains("agent"),
            "{shown}"
        );
        let auth = p.intercept.basic_auth().expect("basic auth");
        assert!(auth.is_sensitive());
        let from_env = proxy_with(&hub, None, "x", &env("http://u:pw@proxy:1", ""))
            .expect("ok")
            .expect("proxy");
        assert_eq!(from_env.to_string(), "http://proxy:1");
        for (bad, why) in [
            ("socks5://proxy:1080", "not supported"),
            ("http://", "not valid"),
        ] {
            let e = proxy_with(&hub, Some(bad), "proxy-url of /k", &env("", "")).expect_err(bad);
            assert!(
                e.to_string().contains(why) && e.to_string().contains("proxy-url of /k"),
                "{bad}: {e}"
            );
        }
        let e = proxy_with(&hub, Some("ftp://user:hunter2@proxy:21"), "o", &env("", ""))
            .expect_err("ftp");
        assert!(!e.to_string().contains("hunter2"), "{e}");
    }

    /// A proxy that accepts the connection and never answers `CONNECT` (a black hole, a stuck
    /// middlebox) fails the connection after [`TUNNEL_TIMEOUT`], as Go's transport does after a
    /// minute, instead of hanging the CLI or a controller's call forever; the error quotes no
    /// proxy URL.
    #[tokio::test(start_paused = true)]
    async fn a_proxy_that_never_answers_connect_times_out() {
        use tower::Service as _;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let held = tokio::spawn(async move {
            let (conn, _) = listener.accept().await.expect("accept");
            std::future::pending::<()>().await;
            drop(conn);
        });
        let dst = uri("https://api.example.com:6443");
        let url = format!("http://alice:pw-never-shown@127.0.0.1:{port}");
        let proxy = proxy_with(&dst, Some(&url), "x", &env("", ""))
            .expect("ok")
            .expect("proxied");
        let mut c = Connector::new(HttpConnector::new(), Some(&proxy), |_| {
            unreachable!("an http proxy")
        })
        .expect("connector");
        let started = tokio::time::Instant::now();
        let err = match tokio::time::timeout(TUNNEL_TIMEOUT * 10, c.call(dst)).await {
            Err(_) => panic!(
                "still waiting for the proxy after {:?}",
                TUNNEL_TIMEOUT * 10
            ),
            Ok(Ok(_)) => panic!("a tunnel through a silent proxy"),
            Ok(Err(e)) => e.to_string(),
        };
        assert_eq!(started.elapsed(), TUNNEL_TIMEOUT, "{err}");
        assert!(
            !err.contains("pw-never-shown") && err.contains("CONNECT"),
            "{err}"
        );
        held.abort();
    }
}
