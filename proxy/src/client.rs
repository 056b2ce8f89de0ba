//! The Kubernetes client of a hub (the controller's) and of the CLI: HTTP/2 when the server
//! offers it, through the proxy chosen by [`crate::connect::proxy_for`], with a bounded retry of
//! throttled calls.

use std::time::Duration;

use kube::client::ClientBuilder;
use kube::client::retry::RetryPolicy;
use tower::buffer::BufferLayer;
use tower::retry::RetryLayer;

use crate::connect::{Connector, Proxy, ProxyError, proxy_tls};

/// First wait before retrying a throttled call without `Retry-After`.
pub const RETRY_MIN: Duration = Duration::from_millis(100);
/// Longest wait between two tries of a throttled call (a longer `Retry-After` is not honoured:
/// the call fails and the writer backs the object off instead).
pub const RETRY_MAX: Duration = Duration::from_secs(2);
/// Retries of one throttled call.
pub const RETRY_ATTEMPTS: u32 = 10;
/// Calls queued for the client's service (it is always ready: the queue stays short).
pub const BUFFER: usize = 1024;

/// Errors while making a client.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The configuration cannot be used (TLS material, proxy, auth).
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// The retry parameters are invalid (a bug: they are constants).
    #[error("retry policy: {0}")]
    Retry(String),
    /// The proxy configuration cannot be used.
    #[error(transparent)]
    Proxy(#[from] ProxyError),
    /// The kubeconfig's `tls-server-name` is not a valid server name.
    #[error("the kubeconfig's tls-server-name is not a valid DNS name or IP address")]
    ServerName,
}

/// Interval of the HTTP/2 pings of a hub connection: with every watch and call of a session on
/// one connection, a dead connection must be noticed without waiting for a watch to time out.
pub const HUB_PING_INTERVAL: Duration = Duration::from_secs(30);
/// How long a ping may stay unanswered before the connection is closed (and its calls fail,
/// to be retried on a new one).
pub const HUB_PING_TIMEOUT: Duration = Duration::from_secs(10);

/// A client for a fleet hub (and the CLI), with a bounded retry of throttled calls
/// ([`RETRY_MIN`] to [`RETRY_MAX`], [`RETRY_ATTEMPTS`] times), that speaks HTTP/2 when the
/// server offers it (ALPN `h2`, as kube-apiserver does): every watch and call of a hub session
/// then shares **one** connection, where kube's own client (HTTP/1.1 only) opens one per watch.
/// At thousands of clusters that is thousands of connections and file descriptors on the hub
/// fewer (docs/benchmarks.md, "Fleet"). Dead connections are found by HTTP/2 pings
/// ([`HUB_PING_INTERVAL`], [`HUB_PING_TIMEOUT`]). A server without HTTP/2 gets HTTP/1.1.
///
/// Through `proxy` when given ([`crate::connect::proxy_for`]: the kubeconfig's `proxy-url`, else
/// `HTTPS_PROXY`/`NO_PROXY`): the one connection is then one `CONNECT` tunnel, and an
/// `https://` proxy is verified with the kubeconfig's CAs and the bundle of
/// `CA_BUNDLE_FILE_PATH`. The kubeconfig's `tls-server-name` names the server the certificate
/// must be valid for, as kube's own client does.
///
/// Made from kube's pieces (its TLS configuration, base-URI, authentication and header layers)
/// around hyper's client with HTTP/2 enabled: kube builds its connector with HTTP/1.1 only, and
/// its proxy support only into that connector.
pub fn build_http2(
    config: kube::Config,
    proxy: Option<&Proxy>,
) -> Result<kube::Client, ClientError> {
    use http_body_util::BodyExt as _;
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::rt::{TokioExecutor, TokioTimer};
    use kube::client::{ConfigExt as _, DynBody};
    use tower::{BoxError, ServiceBuilder, ServiceExt as _};

    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(config.connect_timeout);
    let roots = config.root_cert.clone().unwrap_or_default();
    let connector = Connector::new(http, proxy, |p| proxy_tls(p, &roots))?;
    let tls = config.rustls_client_config()?;
    let mut builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    if let Some(name) = &config.tls_server_name {
        let name = rustls::pki_types::ServerName::try_from(name.clone())
            .map_err(|_| ClientError::ServerName)?;
        builder =
            builder.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name));
    }
    let https = builder.enable_all_versions().wrap_connector(connector);
    let hyper = hyper_util::client::legacy::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        // The pool's idle clock is tokio's too (without it, the pool reads the system clock):
        // the same time in production, and a unit test can advance it past hyper's 90 s.
        .pool_timer(TokioTimer::new())
        .http2_keep_alive_interval(Some(HUB_PING_INTERVAL))
        .http2_keep_alive_timeout(HUB_PING_TIMEOUT)
        .http2_keep_alive_while_idle(true)
        // The shared HTTP/2 connection stays in the pool as long as it is open. hyper's default
        // (90 s) expires it 90 s after the last request *started* on it, although the session's
        // watches are still streaming over it: the next call then opens a second connection,
        // and both stay open until those watches end (1.85 connections per cluster measured in
        // a fleet whose cold start took longer than 90 s). A dead connection is closed by the
        // pings above and then leaves the pool.
        .pool_idle_timeout(None)
        .build(https);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(hyper)
        .map_response(|r: hyper::Response<hyper::body::Incoming>| {
            r.map(|body| Box::new(body.map_err(BoxError::from)) as Box<DynBody>)
        })
        .boxed();
    let policy = RetryPolicy::new(RETRY_MIN, RETRY_MAX, RETRY_ATTEMPTS, true)
        .map_err(|e| ClientError::Retry(e.to_string()))?;
    Ok(
        ClientBuilder::new(service, config.default_namespace.clone())
            .with_layer(&BufferLayer::new(BUFFER))
            .with_layer(&RetryLayer::new(policy))
            .build(),
    )
}
