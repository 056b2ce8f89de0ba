//! The controller's HTTP endpoints.
//!
//! - `/metrics` ([`serve_metrics`]): by default HTTPS ([`tls`]: the certificate of
//!   `--metrics-cert-dir`, reloaded when it changes, else a self-signed one), readable only by
//!   clients whose bearer token passes a TokenReview and a SubjectAccessReview for `get` on
//!   `/metrics` ([`auth`]). `--metrics-secure=false` serves it as plain HTTP without
//!   authentication, for local development and tests.
//! - `/healthz` and `/readyz` ([`serve_probes`]): plain HTTP on their own port, answering `ok`
//!   or why not, and nothing else; what they check is a [`Probes`].

pub mod auth;
pub mod tls;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use super::registry::Metrics;
use auth::Authorizer;
use tls::{CertError, CertResolver};

/// How long a client may take for its TLS handshake (from its connection): a scraper on the
/// cluster network needs milliseconds; an idle connection holds its slot no longer.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a client may take to send request headers (an idle kept-alive connection is closed
/// after it too).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Most `/metrics` connections open at once (TLS handshakes included); a connection past it is
/// closed at once and counted (`update_status_metrics_auth_refused_total{reason="connections"}`).
/// A connection costs its TLS and HTTP buffers (tens of KiB): this bounds them.
pub const MAX_CONNECTIONS: usize = 512;
/// Most `/metrics` connections open at once from one address (TLS handshakes included): a
/// source past it has its new connections closed at once and counted
/// (`update_status_metrics_auth_refused_total{reason="source"}`), so one client, however many
/// idle connections it opens, never takes the slots [`MAX_CONNECTIONS`] leaves to the others
/// (Prometheus scrapes over one connection per target and replica).
pub const MAX_CONNECTIONS_PER_SOURCE: usize = 16;
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

/// The connections open per source address, each counted while its [`SourceSlot`] lives.
#[derive(Default)]
struct PerSource {
    /// Open connections by address, and whether the limit was logged since it was last reached.
    open: Mutex<HashMap<IpAddr, (usize, bool)>>,
}

/// One connection's place in its source's count (released on drop).
struct SourceSlot {
    table: Arc<PerSource>,
    ip: IpAddr,
}

impl PerSource {
    /// A slot for a connection from `ip`, or `Err(first)` when it already has
    /// [`MAX_CONNECTIONS_PER_SOURCE`] open (`first`: the first refusal since it went under).
    fn acquire(table: &Arc<PerSource>, ip: IpAddr) -> Result<SourceSlot, bool> {
        let ip = ip.to_canonical();
        let mut open = table
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (count, logged) = open.entry(ip).or_insert((0, false));
        if *count >= MAX_CONNECTIONS_PER_SOURCE {
            return Err(!std::mem::replace(logged, true));
        }
        *count += 1;
        Ok(SourceSlot {
            table: table.clone(),
            ip,
        })
    }
}

impl Drop for SourceSlot {
    fn drop(&mut self) {
        let mut open = self
            .table
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((count, logged)) = open.get_mut(&self.ip) {
            *count = count.saturating_sub(1);
            *logged = false;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Accepts TLS connections and serves HTTP/1.1 on them, one task per connection: at most
/// [`MAX_CONNECTIONS`] at once and [`MAX_CONNECTIONS_PER_SOURCE`] from one address, each with a
/// handshake within [`TLS_HANDSHAKE_TIMEOUT`], a bounded request head ([`MAX_REQUEST_HEAD`],
/// read within [`HEADER_READ_TIMEOUT`]) and age ([`MAX_CONNECTION_AGE`]).
async fn serve_tls(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    app: Router,
    metrics: Option<Arc<Metrics>>,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let sources = Arc::new(PerSource::default());
    let mut full_logged = false;
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // Out of file descriptors and the like: do not spin.
                tracing::warn!(error = %e, "accepting a /metrics connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // The source's own limit first: a source past it takes no global slot.
        let source_slot = match PerSource::acquire(&sources, peer.ip()) {
            Ok(s) => s,
            Err(first) => {
                drop(tcp);
                if let Some(m) = &metrics {
                    m.scrape_auth.refused("source");
                }
                if first {
                    tracing::warn!(
                        source = %peer.ip(),
                        max = MAX_CONNECTIONS_PER_SOURCE,
                        "too many /metrics connections from one address; closing its new ones until some end"
                    );
                }
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            // Closed at once: the client sees a reset and may retry; nothing is buffered.
            drop(tcp);
            if let Some(m) = &metrics {
                m.scrape_auth.refused("connections");
            }
            if !std::mem::replace(&mut full_logged, true) {
                tracing::warn!(
                    max = MAX_CONNECTIONS,
                    "too many /metrics connections; closing new ones until some end"
                );
            }
            continue;
        };
        full_logged = false;
        let acceptor = acceptor.clone();
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _slots = (slot, source_slot);
            let stream =
                match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
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
            };
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "/metrics connection ended with an error");
            }
        });
    }
}

#[cfg(test)]
mod tests;
