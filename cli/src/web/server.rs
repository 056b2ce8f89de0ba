//! The live view's HTTP server (axum, which the workspace already uses for the controller's
//! endpoints; HTTP/1 only): read-only endpoints, a strict Content-Security-Policy and the
//! page's changes pushed as server-sent events.
//!
//! | path | what |
//! |---|---|
//! | `/` | the page (a cluster, or the fleet with `--fleet`) |
//! | `/c/<namespace>`, `/c/<namespace>/<hosted cluster>` | with `--fleet`: one cluster's page, from the hub copies |
//! | `/app.js`, `/app.css` | the page's script and stylesheet |
//! | `/api/view`, `/api/c/...` | the page's data now (JSON) |
//! | `/events`, `/events/c/...` | the page's data at each change (`text/event-stream`, event `view`) |
//!
//! Only `GET` and `HEAD` are answered (anything else: 405). A request whose `Host` is neither an
//! IP address nor `localhost` is refused (403): a web page cannot reach the server through a
//! DNS name rebound to 127.0.0.1 (DNS rebinding).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::Stream;
use jiff::Timestamp;
use kube::Client;
use tokio::sync::{Mutex, Notify, watch};

use super::feed::{self, ClusterFeed, Published};
use super::page::{APP_CSS, APP_JS, LIVE_CSP, live_page};
use super::watch::Task;

/// What the server serves.
pub struct Served {
    /// The data of `/`.
    pub main: Published,
    /// With `--fleet`: how to open one cluster's view.
    pub clusters: Option<Drill>,
}

/// Opens the views of a fleet's clusters on demand (one set of watches per open cluster,
/// dropped a minute after its last page closed).
pub struct Drill {
    client: Client,
    now: Option<Timestamp>,
    open: Mutex<HashMap<(String, Option<String>), Opened>>,
}

struct Opened {
    data: Published,
    readers: Arc<AtomicUsize>,
    last_used: Instant,
    _task: Task,
}

impl Drill {
    /// Views of the clusters of the hub `client` reads, evaluated at `now` (else the clock).
    pub fn new(client: Client, now: Option<Timestamp>) -> Self {
        Drill {
            client,
            now,
            open: Mutex::new(HashMap::new()),
        }
    }

    async fn get(
        &self,
        namespace: String,
        hosted: Option<String>,
    ) -> Result<(Published, Arc<AtomicUsize>), Response> {
        let valid = |s: &str| {
            !s.is_empty()
                && s.len() <= 253
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        };
        if !valid(&namespace) || hosted.as_deref().is_some_and(|h| !valid(h)) {
            return Err((StatusCode::NOT_FOUND, "no such cluster\n").into_response());
        }
        let mut open = self.open.lock().await;
        open.retain(|_, o| {
            o.readers.load(Ordering::Relaxed) > 0 || o.last_used.elapsed() < Duration::from_secs(60)
        });
        let key = (namespace, hosted);
        if let Some(o) = open.get_mut(&key) {
            o.last_used = Instant::now();
            return Ok((o.data.clone(), Arc::clone(&o.readers)));
        }
        let (namespace, hosted) = (&key.0, key.1.as_deref());
        let title = match hosted {
            Some(h) => format!("hosted cluster {h} (namespace {namespace}, hub copies)"),
            None => format!("cluster {namespace} (hub copies)"),
        };
        let changed = Arc::new(Notify::new());
        let cluster = ClusterFeed::start(&self.client, namespace, hosted, title, &changed)
            .await
            .map_err(|e| (StatusCode::BAD_GATEWAY, format!("{e}\n")).into_response())?;
        let (data, task) = feed::publish(cluster, changed, self.now);
        let readers = Arc::new(AtomicUsize::new(0));
        open.insert(
            key,
            Opened {
                data: data.clone(),
                readers: Arc::clone(&readers),
                last_used: Instant::now(),
                _task: task,
            },
        );
        Ok((data, readers))
    }
}

#[derive(Clone)]
struct App {
    served: Arc<Served>,
    shutdown: watch::Receiver<bool>,
}

/// The server's answer headers (on every answer, errors included).
fn security_headers(headers: &mut axum::http::HeaderMap) {
    let set = |h: &mut axum::http::HeaderMap, k: HeaderName, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(headers, header::CONTENT_SECURITY_POLICY, LIVE_CSP);
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    set(headers, header::CACHE_CONTROL, "no-store");
    set(
        headers,
        HeaderName::from_static("cross-origin-opener-policy"),
        "same-origin",
    );
    set(
        headers,
        HeaderName::from_static("cross-origin-resource-policy"),
        "same-origin",
    );
}

/// `Host` is an IP address or `localhost`, with an optional port.
fn host_allowed(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        // [v6]:port
        return rest
            .split_once(']')
            .is_some_and(|(ip, port)| ip.parse::<IpAddr>().is_ok() && valid_port(port));
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if valid_port(&format!(":{port}")) => name,
            _ => host,
        }
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok()
}

fn valid_port(s: &str) -> bool {
    s.is_empty()
        || s.strip_prefix(':')
            .is_some_and(|p| p.parse::<u16>().is_ok())
}

async fn guard(request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let mut response = if host_allowed(host) {
        next.run(request).await
    } else {
        (
            StatusCode::FORBIDDEN,
            "this server answers only requests to an IP address or localhost\n",
        )
            .into_response()
    };
    security_headers(response.headers_mut());
    response
}

fn typed(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body.into()).into_response()
}

async fn page() -> Response {
    typed("text/html; charset=utf-8", live_page())
}

async fn script() -> Response {
    typed("text/javascript; charset=utf-8", APP_JS)
}

async fn style() -> Response {
    typed("text/css; charset=utf-8", APP_CSS)
}

fn json(data: &Published) -> Response {
    let body = data.borrow().as_str().to_owned();
    typed("application/json", body)
}

async fn main_data(State(app): State<App>) -> Response {
    json(&app.served.main)
}

async fn cluster_target(
    app: &App,
    namespace: String,
    hosted: Option<String>,
) -> Result<(Published, Arc<AtomicUsize>), Response> {
    match &app.served.clusters {
        Some(drill) => drill.get(namespace, hosted).await,
        None => Err((StatusCode::NOT_FOUND, "not a fleet view\n").into_response()),
    }
}

async fn cluster_data(State(app): State<App>, Path(ns): Path<String>) -> Response {
    match cluster_target(&app, ns, None).await {
        Ok((data, _)) => json(&data),
        Err(r) => r,
    }
}

async fn hosted_data(State(app): State<App>, Path((ns, name)): Path<(String, String)>) -> Response {
    match cluster_target(&app, ns, Some(name)).await {
        Ok((data, _)) => json(&data),
        Err(r) => r,
    }
}

/// Counts a reader of a drilled-down view while its stream lives.
struct Reader(Option<Arc<AtomicUsize>>);

impl Drop for Reader {
    fn drop(&mut self) {
        if let Some(r) = &self.0 {
            r.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

fn stream(
    app: &App,
    data: Published,
    readers: Option<Arc<AtomicUsize>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>> + use<>> {
    if let Some(r) = &readers {
        r.fetch_add(1, Ordering::Relaxed);
    }
    let reader = Reader(readers);
    let mut shutdown = app.shutdown.clone();
    let events = futures::stream::unfold(
        (data, true, reader),
        move |(mut data, first, reader)| async move {
            if !first {
                data.changed().await.ok()?;
            }
            let json = Arc::clone(&data.borrow_and_update());
            let mut event = Event::default().event("view").data(json.as_str());
            if first {
                event = event.retry(Duration::from_secs(1));
            }
            Some((Ok(event), (data, false, reader)))
        },
    );
    // Ends with the server: Ctrl-C does not wait for the open pages.
    let stop = async move {
        let _ = shutdown.wait_for(|stop| *stop).await;
    };
    Sse::new(futures::StreamExt::take_until(events, stop)).keep_alive(KeepAlive::default())
}

async fn main_events(State(app): State<App>) -> Response {
    stream(&app, app.served.main.clone(), None).into_response()
}

async fn cluster_events(State(app): State<App>, Path(ns): Path<String>) -> Response {
    match cluster_target(&app, ns, None).await {
        Ok((data, readers)) => stream(&app, data, Some(readers)).into_response(),
        Err(r) => r,
    }
}

async fn hosted_events(
    State(app): State<App>,
    Path((ns, name)): Path<(String, String)>,
) -> Response {
    match cluster_target(&app, ns, Some(name)).await {
        Ok((data, readers)) => stream(&app, data, Some(readers)).into_response(),
        Err(r) => r,
    }
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found\n").into_response()
}

fn router(app: App) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/c/{ns}", get(page))
        .route("/c/{ns}/{name}", get(page))
        .route("/app.js", get(script))
        .route("/app.css", get(style))
        .route("/api/view", get(main_data))
        .route("/api/c/{ns}", get(cluster_data))
        .route("/api/c/{ns}/{name}", get(hosted_data))
        .route("/events", get(main_events))
        .route("/events/c/{ns}", get(cluster_events))
        .route("/events/c/{ns}/{name}", get(hosted_events))
        .fallback(not_found)
        .with_state(app)
        .layer(middleware::from_fn(guard))
}

/// A bound server, not yet serving.
pub struct Bound {
    listener: tokio::net::TcpListener,
    /// Where it listens.
    pub addr: SocketAddr,
}

/// Binds `addr` (port 0: a free port).
pub async fn bind(addr: SocketAddr) -> std::io::Result<Bound> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    Ok(Bound { listener, addr })
}

/// Serves `served` until `stop` completes.
pub async fn serve(
    bound: Bound,
    served: Served,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (tx, rx) = watch::channel(false);
    let app = App {
        served: Arc::new(served),
        shutdown: rx,
    };
    axum::serve(bound.listener, router(app))
        .with_graceful_shutdown(async move {
            stop.await;
            let _ = tx.send(true);
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
