//! The controller's HTTP endpoints.
//!
//! - `/metrics` ([`serve_metrics`]): by default HTTPS ([`tls`]: the certificate of
//!   `--metrics-cert-dir`, reloaded when it changes, else a self-signed one), readable only by
//!   clients whose bearer token passes a TokenReview and a SubjectAccessReview for `get` on
//!   `/metrics` ([`auth`]). `--metrics-secure=false` serves it as plain HTTP without
//!   authentication, for local development and tests.
//! - `/healthz` and `/readyz` ([`serve_probes`]): plain HTTP on their own port, answering `ok`
//!   or why not, and nothing else; what they check is a [`Probes`].
//!
//! The connection slots of `/metrics` ([`slots`]: per source in the handshake, and overall) and
//! its authorization ([`auth`]) are here too; what they count is the metrics layer's
//! (`crate::metrics::scrape_auth`).
//!
//! May import: [`crate::metrics`].

pub mod auth;
pub mod slots;
pub mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::metrics::Metrics;
use auth::Authorizer;
use tls::{CertError, CertResolver};

/// How long a client may take for its TLS handshake (from its connection): a scraper on the
/// cluster network needs milliseconds; an idle connection holds its slot no longer.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a client may take to send request headers (an idle kept-alive connection is closed
/// after it too).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
pub use slots::{MAX_CONNECTIONS, MAX_HANDSHAKES_PER_SOURCE};
/// Longest a connection is kept: then it is closed after its current request.
pub const MAX_CONNECTION_AGE: Duration = Duration::from_secs(300);
/// Largest request head read (request line and headers, the bearer token included).
pub const MAX_REQUEST_HEAD: usize = 16 * 1024;

/// How `/metrics` is served.
#[derive(Debug, Clone)]
pub struct MetricsServerConfig {
    /// Listen address (`--metrics-bind-address`).
    pub bind: SocketAddr,
    /// HTTPS with authentication and authorization (`--metrics-secure`).
    pub secure: bool,
    /// Folder of `tls.crt` and `tls.key` (`--metrics-cert-dir`); none: self-signed.
    pub cert_dir: Option<PathBuf>,
}

/// An endpoint cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The address cannot be listened on.
    #[error("binding the {what} endpoint to {addr}: {source}")]
    Bind {
        /// `metrics` or `health probe`.
        what: &'static str,
        /// The address.
        addr: SocketAddr,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The serving certificate cannot be loaded or generated.
    #[error("the /metrics serving certificate (--metrics-cert-dir): {0}")]
    Cert(#[from] CertError),
    /// The TLS configuration cannot be built.
    #[error("the /metrics TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
}

/// A running endpoint.
#[derive(Debug)]
pub struct Serving {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Serving {
    /// The address it listens on (the actual port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting connections.
    pub fn abort(&self) {
        self.task.abort();
    }

    /// Resolves when the server stops (only on an error, which it logs): what a supervisor
    /// awaits. Dropping this future stops the server.
    pub async fn wait(self) {
        struct AbortOnDrop(JoinHandle<()>);
        impl Drop for AbortOnDrop {
            fn drop(&mut self) {
                self.0.abort();
            }
        }
        let mut guard = AbortOnDrop(self.task);
        let _ = (&mut guard.0).await;
    }
}

type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// What `/healthz` (live) and `/readyz` (ready) report: `Ok` → 200 `ok`, `Err(why)` → 503
/// `why`. Both are `Ok` until set.
#[derive(Clone)]
pub struct Probes {
    live: Check,
    ready: Check,
}

impl Default for Probes {
    fn default() -> Self {
        Probes {
            live: Arc::new(|| Ok(())),
            ready: Arc::new(|| Ok(())),
        }
    }
}

impl std::fmt::Debug for Probes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probes")
            .field("live", &self.live())
            .field("ready", &self.ready())
            .finish()
    }
}

impl Probes {
    /// Live and ready.
    pub fn new() -> Self {
        Self::default()
    }

    /// `/healthz` answers with `check`.
    pub fn with_live(
        mut self,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.live = Arc::new(check);
        self
    }

    /// `/readyz` answers with `check`.
    pub fn with_ready(
        mut self,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.ready = Arc::new(check);
        self
    }

    /// Whether the process works (the kubelet restarts it otherwise).
    pub fn live(&self) -> Result<(), String> {
        (self.live)()
    }

    /// Whether it is ready to serve.
    pub fn ready(&self) -> Result<(), String> {
        (self.ready)()
    }
}

fn probe_answer(r: Result<(), String>) -> (StatusCode, String) {
    match r {
        Ok(()) => (StatusCode::OK, "ok".to_string()),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, why),
    }
}

async fn bind(
    what: &'static str,
    addr: SocketAddr,
) -> Result<(TcpListener, SocketAddr), ServerError> {
    let bind_err = |source| ServerError::Bind { what, addr, source };
    let listener = TcpListener::bind(addr).await.map_err(bind_err)?;
    let local = listener.local_addr().map_err(bind_err)?;
    Ok((listener, local))
}

fn spawn_plain(what: &'static str, listener: TcpListener, app: Router) -> JoinHandle<()> {
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "{what} server stopped");
        }
    })
}

/// Serves `/healthz` and `/readyz` (plain HTTP, no authentication, no data) on `bind`.
pub async fn serve_probes(bind_addr: SocketAddr, health: Probes) -> Result<Serving, ServerError> {
    let live = health.clone();
    let app = Router::new()
        .route(
            "/healthz",
            get(move || async move { probe_answer(live.live()) }),
        )
        .route(
            "/readyz",
            get(move || async move { probe_answer(health.ready()) }),
        );
    let (listener, addr) = bind("health probe", bind_addr).await?;
    tracing::info!(%addr, "serving /healthz, /readyz (HTTP)");
    Ok(Serving {
        addr,
        task: spawn_plain("health probe", listener, app),
    })
}

/// Serves `/metrics` as `config` says; `authorizer` reviews the scrapers' tokens (unused with
/// `secure: false`).
pub async fn serve_metrics(
    config: MetricsServerConfig,
    metrics: Arc<Metrics>,
    authorizer: Arc<Authorizer>,
) -> Result<Serving, ServerError> {
    let app = Router::new().route(
        "/metrics",
        get(move || {
            let m = metrics.clone();
            async move { m.render() }
        }),
    );
    if !config.secure {
        if config.cert_dir.is_some() {
            tracing::warn!("--metrics-cert-dir is ignored with --metrics-secure=false");
        }
        let (listener, addr) = bind("metrics", config.bind).await?;
        tracing::warn!(%addr, "serving /metrics over plain HTTP without authentication (--metrics-secure=false)");
        return Ok(Serving {
            addr,
            task: spawn_plain("metrics", listener, app),
        });
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let resolver = Arc::new(CertResolver::new(
        config.cert_dir.clone(),
        provider.clone(),
    )?);
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(resolver.clone());
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let metrics_for_limits = authorizer.metrics();
    let app = app.route_layer(axum::middleware::from_fn_with_state(
        authorizer,
        auth::require_access,
    ));
    let (listener, addr) = bind("metrics", config.bind).await?;
    tracing::info!(%addr, "serving /metrics (HTTPS; TokenReview and SubjectAccessReview for get /metrics)");
    let acceptor = TlsAcceptor::from(Arc::new(tls));
    Ok(Serving {
        addr,
        task: tokio::spawn(async move {
            // The certificate is reloaded beside the server, never during a handshake.
            tokio::select! {
                () = serve_tls(listener, acceptor, app, metrics_for_limits) => {}
                () = resolver.follow(tls::CHECK_INTERVAL) => {}
            }
        }),
    })
}

/// Accepts TLS connections and serves HTTP/1.1 on them, one task per connection: at most
/// [`MAX_CONNECTIONS`] at once and [`MAX_HANDSHAKES_PER_SOURCE`] handshakes from one address
/// ([`slots`]: a newcomer takes the place of the oldest connection not yet served an allowed
/// request), each with a handshake within [`TLS_HANDSHAKE_TIMEOUT`], a bounded request head
/// ([`MAX_REQUEST_HEAD`], read within [`HEADER_READ_TIMEOUT`]) and age ([`MAX_CONNECTION_AGE`]).
async fn serve_tls(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    app: Router,
    metrics: Option<Arc<Metrics>>,
) {
    let slots = Arc::new(slots::Slots::default());
    let mut log = AdmissionLog {
        metrics,
        full_logged: false,
        evicting_logged: false,
    };
    loop {
        let (tcp, peer) = accept(&listener).await;
        let admission = match slots.admit(peer.ip()) {
            Ok(a) => a,
            Err(refusal) => {
                // Closed at once: the client sees a reset and may retry; nothing is buffered.
                drop(tcp);
                log.refused(&refusal, peer);
                continue;
            }
        };
        log.admitted(admission.evicted);
        let slot = Arc::new(admission.slot);
        tokio::spawn(serve_connection(
            acceptor.clone(),
            tcp,
            peer,
            slot,
            app.clone(),
        ));
    }
}

/// The next connection of `listener`; an error (out of file descriptors and the like) is
/// logged and retried after a pause, not spun on.
async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(c) => return c,
            Err(e) => {
                tracing::warn!(error = %e, "accepting a /metrics connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The refusals and evictions of the connection slots: counted, and warned about once per
/// episode.
struct AdmissionLog {
    metrics: Option<Arc<Metrics>>,
    /// The last refusal was "full" and was warned about.
    full_logged: bool,
    /// The last admission evicted a connection and was warned about.
    evicting_logged: bool,
}

impl AdmissionLog {
    /// A connection from `peer` refused a slot.
    fn refused(&mut self, refusal: &slots::Refusal, peer: SocketAddr) {
        let reason = match refusal {
            slots::Refusal::Source { .. } => "source",
            slots::Refusal::Full => "connections",
        };
        if let Some(m) = &self.metrics {
            m.scrape_auth.refused(reason);
        }
        match refusal {
            slots::Refusal::Source { first: true } => tracing::warn!(
                source = %peer.ip(),
                max = MAX_HANDSHAKES_PER_SOURCE,
                "too many /metrics TLS handshakes from one address; closing its new connections until some finish"
            ),
            slots::Refusal::Full if !std::mem::replace(&mut self.full_logged, true) => {
                tracing::warn!(
                    max = MAX_CONNECTIONS,
                    "too many /metrics connections, all trusted or in their handshake; closing new ones until some end"
                );
            }
            _ => {}
        }
    }

    /// A connection admitted, in the place of one from `evicted` if any.
    fn admitted(&mut self, evicted: Option<std::net::IpAddr>) {
        if let Some(ip) = evicted {
            if let Some(m) = &self.metrics {
                m.scrape_auth.refused("evicted");
            }
            if !std::mem::replace(&mut self.evicting_logged, true) {
                tracing::warn!(
                    max = MAX_CONNECTIONS,
                    source = %ip,
                    "too many /metrics connections: new ones take the place of the oldest not served an allowed request, from the busiest address"
                );
            }
        } else {
            self.evicting_logged = false;
        }
        self.full_logged = false;
    }
}

/// One connection in its `slot`: the TLS handshake, then HTTP/1.1 until it ends, is too old, or
/// is evicted for a newcomer.
async fn serve_connection(
    acceptor: TlsAcceptor,
    tcp: TcpStream,
    peer: SocketAddr,
    slot: Arc<slots::Slot>,
    app: Router,
) {
    let service = TowerToHyperService::new(trusting(app, slot.clone()));
    let evicted = slot.evicted.clone();
    let handshake = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(tcp));
    let stream = tokio::select! {
        r = handshake => r,
        () = evicted.notified() => return,
    };
    slot.handshake_done();
    let stream = match stream {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_REQUEST_HEAD)
        .serve_connection(TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    let served = tokio::select! {
        r = conn.as_mut() => r,
        () = tokio::time::sleep(MAX_CONNECTION_AGE) => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
        // Closed for a newcomer (never a trusted connection): dropped at once.
        () = evicted.notified() => Ok(()),
    };
    if let Err(e) = served {
        tracing::debug!(%peer, error = %e, "/metrics connection ended with an error");
    }
}

/// `app`, marking the connection of `slot` trusted once it answers a request `200` (its token
/// passed the review: only `/metrics` is routed, behind it).
fn trusting(
    app: Router,
    slot: Arc<slots::Slot>,
) -> tower::util::MapResponse<
    Router,
    impl FnOnce(axum::response::Response) -> axum::response::Response + Clone,
> {
    tower::ServiceExt::<axum::http::Request<hyper::body::Incoming>>::map_response(
        app,
        move |res: axum::response::Response| {
            if res.status() == StatusCode::OK {
                slot.trust();
            }
            res
        },
    )
}

#[cfg(test)]
mod tests;
