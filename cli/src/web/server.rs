//! The live view's HTTP server (axum, which the workspace already uses for the controller's
//! endpoints; HTTP/1 only): read-only endpoints, a strict Content-Security-Policy and the
//! page's changes pushed as server-sent events.
//!
//! Every path is under the session's (`/s/<random>`, [`guard::Keys::path`]; below, `/` is that
//! path):
//!
//! | path | what |
//! |---|---|
//! | `/` | the page (a cluster, or the fleet with `--fleet`) |
//! | `/c/<namespace>`, `/c/<namespace>/<hosted cluster>` | with `--fleet`: one cluster's page, from the hub copies |
//! | `/app.js`, `/app.css` | the page's script and stylesheet |
//! | `/api/view`, `/api/c/...` | the page's data now (JSON) |
//! | `/events`, `/events/c/...` | the page's data at each change (`text/event-stream`, event `view`) |
//!
//! Only `GET` and `HEAD` are answered (anything else: 405). Before any handler, [`guard`]
//! refuses a `Host` that is neither an IP address nor `localhost` (403: DNS rebinding), a
//! cross-site request (403) and a request without the session's token (401); the token in the
//! query sets the cookie the page's later requests carry. A cluster's name in a path is checked
//! before anything is asked of the hub (400: a namespace is a DNS-1123 label, a hosted cluster's
//! name a DNS-1123 subdomain of at most 63 characters); [`drill`] caps the clusters watched at
//! once.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

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
use tokio::sync::watch;

use super::drill::{self, HubOpener, Key, Views};
use super::feed::Published;
use super::guard::{self, Decision, Keys};
use super::page::{APP_CSS, APP_JS, LIVE_CSP, live_page};

/// What the server serves.
pub struct Served {
    /// The data of `/`.
    pub main: Published,
    /// With `--fleet`: how to open one cluster's view.
    pub clusters: Option<Drill>,
}

/// Opens the views of a fleet's clusters on demand, at most [`drill::MAX_OPEN`] at once.
pub struct Drill(Views<HubOpener>);

impl Drill {
    /// Views of the clusters of the hub `client` reads, evaluated at `now` (else the clock).
    pub fn new(client: Client, now: Option<Timestamp>) -> Self {
        Drill(Views::new(HubOpener { client, now }))
    }
}

#[derive(Clone)]
struct App {
    served: Arc<Served>,
    shutdown: watch::Receiver<bool>,
    /// The session's path ([`guard::Keys::path`]).
    base: Arc<str>,
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

/// [`guard::decide`] before any handler; the cookie set when the token came in the query.
async fn guard(State(keys): State<Arc<Keys>>, request: Request, next: Next) -> Response {
    let decision = guard::decide(&keys, request.method(), request.uri(), request.headers());
    let mut response = match decision {
        Decision::Allow { set_cookie } => {
            let mut r = next.run(request).await;
            if set_cookie {
                r.headers_mut()
                    .append(header::SET_COOKIE, keys.set_cookie());
            }
            r
        }
        Decision::Refuse(status, text) => {
            let mut r = (status, text).into_response();
            if status == StatusCode::UNAUTHORIZED {
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"kubectl update-status\""),
                );
            }
            r
        }
    };
    security_headers(response.headers_mut());
    response
}

/// A DNS-1123 label (a namespace's name): 1 to 63 lower-case letters, digits and '-', starting
/// and ending with a letter or digit.
fn dns_label(s: &str) -> bool {
    (1..=63).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A hosted cluster's name: a DNS-1123 subdomain (the name of its ControlPlaneUpdateStatus)
/// that is also a label value (`update.openshift.io/cluster`), so at most 63 characters: DNS
/// labels joined by dots (no `..`, no leading or trailing dot).
fn hosted_name(s: &str) -> bool {
    s.len() <= 63 && s.split('.').all(dns_label)
}

/// The cluster a path names, or 400 saying what is wrong (the name quoted, escaped and cut).
#[allow(clippy::result_large_err)]
fn cluster_key(namespace: String, hosted: Option<String>) -> Result<Key, Response> {
    let quoted = |s: &str| {
        let cut: String = s.chars().take(80).collect();
        format!("{:?}{}", cut, if cut.len() < s.len() { "..." } else { "" })
    };
    if !dns_label(&namespace) {
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "{}: not a namespace name (a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit)\n",
                quoted(&namespace)
            ),
        )
            .into_response());
    }
    if let Some(h) = hosted.as_deref().filter(|h| !hosted_name(h)) {
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "{}: not a hosted cluster's name (a DNS-1123 subdomain of at most 63 characters: lower-case letters, digits, '-' and '.', each part starting and ending with a letter or digit)\n",
                quoted(h)
            ),
        )
            .into_response());
    }
    Ok((namespace, hosted))
}

fn typed(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body.into()).into_response()
}

async fn page(State(app): State<App>) -> Response {
    typed("text/html; charset=utf-8", live_page(&app.base))
}

async fn cluster_page(state: State<App>, Path(ns): Path<String>) -> Response {
    match cluster_key(ns, None) {
        Ok(_) => page(state).await,
        Err(r) => r,
    }
}

async fn hosted_page(state: State<App>, Path((ns, name)): Path<(String, String)>) -> Response {
    match cluster_key(ns, Some(name)) {
        Ok(_) => page(state).await,
        Err(r) => r,
    }
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

/// The view of the cluster a path names (400 before any hub call when the name is not one).
async fn cluster_target(
    app: &App,
    namespace: String,
    hosted: Option<String>,
) -> Result<drill::View, Response> {
    let Some(drill) = &app.served.clusters else {
        return Err((StatusCode::NOT_FOUND, "not a fleet view\n").into_response());
    };
    let key = cluster_key(namespace, hosted)?;
    drill
        .0
        .get(key)
        .await
        .map_err(|e| (StatusCode::BAD_GATEWAY, format!("{e}\n")).into_response())
}

async fn cluster_data(State(app): State<App>, Path(ns): Path<String>) -> Response {
    match cluster_target(&app, ns, None).await {
        Ok(view) => json(&view.data),
        Err(r) => r,
    }
}

async fn hosted_data(State(app): State<App>, Path((ns, name)): Path<(String, String)>) -> Response {
    match cluster_target(&app, ns, Some(name)).await {
        Ok(view) => json(&view.data),
        Err(r) => r,
    }
}

/// The events of `data`; with `view` (a fleet's cluster), counted as a page showing it, and
/// ended when it is closed (the page reconnects, which opens it again).
fn stream(
    app: &App,
    data: Published,
    view: Option<drill::View>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>> + use<>> {
    // The reader keeps the view open while the stream lives.
    let reader = view.as_ref().map(drill::View::reader);
    let closed = view.as_ref().map(drill::View::closed);
    drop(view);
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
    // Ends with the server (Ctrl-C does not wait for the open pages), or with the view.
    let mut shutdown = app.shutdown.clone();
    let stop = async move {
        let server = async move {
            let _ = shutdown.wait_for(|stop| *stop).await;
        };
        match closed {
            Some(closed) => {
                tokio::select! {
                    () = server => {}
                    () = closed => {}
                }
            }
            None => server.await,
        }
    };
    Sse::new(futures::StreamExt::take_until(events, stop)).keep_alive(KeepAlive::default())
}

async fn main_events(State(app): State<App>) -> Response {
    stream(&app, app.served.main.clone(), None).into_response()
}

async fn cluster_events(State(app): State<App>, Path(ns): Path<String>) -> Response {
    match cluster_target(&app, ns, None).await {
        Ok(view) => stream(&app, view.data.clone(), Some(view)).into_response(),
        Err(r) => r,
    }
}

async fn hosted_events(
    State(app): State<App>,
    Path((ns, name)): Path<(String, String)>,
) -> Response {
    match cluster_target(&app, ns, Some(name)).await {
        Ok(view) => stream(&app, view.data.clone(), Some(view)).into_response(),
        Err(r) => r,
    }
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found\n").into_response()
}

fn router(app: App, keys: Arc<Keys>) -> Router {
    let at = |path: &str| format!("{}{path}", keys.path);
    let root = if keys.path.is_empty() {
        "/"
    } else {
        &keys.path
    };
    Router::new()
        .route(root, get(page))
        .route(&at("/"), get(page))
        .route(&at("/c/{ns}"), get(cluster_page))
        .route(&at("/c/{ns}/{name}"), get(hosted_page))
        .route(&at("/app.js"), get(script))
        .route(&at("/app.css"), get(style))
        .route(&at("/api/view"), get(main_data))
        .route(&at("/api/c/{ns}"), get(cluster_data))
        .route(&at("/api/c/{ns}/{name}"), get(hosted_data))
        .route(&at("/events"), get(main_events))
        .route(&at("/events/c/{ns}"), get(cluster_events))
        .route(&at("/events/c/{ns}/{name}"), get(hosted_events))
        .fallback(not_found)
        .with_state(app)
        .layer(middleware::from_fn_with_state(keys, guard))
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

/// Serves `served` under the session's path to the holders of its token (`keys`) until `stop`
/// completes.
pub async fn serve(
    bound: Bound,
    served: Served,
    keys: Keys,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (tx, rx) = watch::channel(false);
    let app = App {
        served: Arc::new(served),
        shutdown: rx,
        base: Arc::from(keys.path.as_str()),
    };
    let keys = Arc::new(keys);
    axum::serve(bound.listener, router(app, keys))
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
    fn namespaces_are_dns_labels_hosted_clusters_short_dns_subdomains() {
        for ok in ["a", "ns-1", "0", &"a".repeat(63)] {
            assert!(cluster_key(ok.to_owned(), None).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "..",
            ".",
            "a.b",
            "-a",
            "a-",
            "A",
            "a_b",
            "a/b",
            "a%2e",
            "é",
            &"a".repeat(64),
        ] {
            let r = cluster_key(bad.to_owned(), None).expect_err(bad);
            assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{bad}");
        }
        for ok in ["demo", "a.b", "x-1.y-2", &"a".repeat(63)] {
            assert!(
                cluster_key("ns".to_owned(), Some(ok.to_owned())).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "",
            "..",
            ".",
            "a..b",
            ".a",
            "a.",
            "a.-b",
            "UP",
            "a_b",
            &"a".repeat(64),
        ] {
            let r = cluster_key("ns".to_owned(), Some(bad.to_owned())).expect_err(bad);
            assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{bad}");
        }
    }
}
