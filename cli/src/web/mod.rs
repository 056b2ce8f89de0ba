//! The picture of the update: `--web` (a live view served on loopback, fed by the plugin's own
//! watches, changes pushed as server-sent events) and `-o html` (the same page as one
//! self-contained file). See `cli/README.md` ("Web view").
//!
//! - [`model`]: the page's data, computed from a [`View`] with the text renderer's functions;
//! - [`page`]: the HTML, the script and stylesheet (`assets/`), the Content-Security-Policies;
//! - [`watch`]: list-then-watch of one kind by label (kube's client only);
//! - [`feed`]: a cluster's or a fleet's watches turned into the page's data at each change;
//! - [`server`]: the read-only HTTP server; [`guard`]: who may use it (the session's token, no
//!   cross-site request, the Host); [`drill`]: the fleet's clusters opened from the grid (capped).

pub mod drill;
pub mod estimates;
pub mod feed;
pub mod guard;
pub mod model;
pub mod page;
pub mod server;
pub mod watch;

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use anyhow::Context as _;
use jiff::Timestamp;
use kube::Client;
use tokio::sync::Notify;

use crate::fleet::{Fleet, FleetFilter};
use crate::show::view::View;
use feed::{ClusterFeed, ClusterScope, FleetFeed};
use model::Source;
use watch::Task;

/// Where to serve.
#[derive(Clone, Copy, Debug)]
pub struct Listen {
    /// `--address` (default 127.0.0.1).
    pub address: IpAddr,
    /// `--port` (0: a free port).
    pub port: u16,
}

/// `-o html` of one cluster.
pub fn html_cluster(view: &View, now: Timestamp, title: String) -> anyhow::Result<String> {
    let page = model::cluster_page(view, now, title, Source::Snapshot);
    Ok(page::file_page(&page)?)
}

/// `--fleet -o html`.
pub fn html_fleet(
    fleet: Fleet,
    now: Timestamp,
    stale_after: jiff::SignedDuration,
) -> anyhow::Result<String> {
    let page = feed::fleet_page(fleet, now, Source::Snapshot, stale_after);
    Ok(page::file_page(&page)?)
}

/// What the live view shows.
pub enum Target {
    /// A snapshot (`--from-dir`): the page never changes.
    Snapshot {
        /// The view.
        view: Box<View>,
        /// Its instant.
        now: Timestamp,
        /// The page's title.
        title: String,
    },
    /// One cluster's objects in a namespace (for a hosted cluster, those labelled with it).
    Cluster {
        /// The namespace.
        namespace: String,
        /// `--hosted-cluster`.
        hosted: Option<String>,
        /// `--now`.
        now: Option<Timestamp>,
    },
    /// `--fleet`.
    Fleet {
        /// `--selector`, `--clusterset`.
        filter: FleetFilter,
        /// `--now`.
        now: Option<Timestamp>,
    },
}

/// Serves `target` on `listen` until Ctrl-C (or SIGTERM); `client` reads the API (not used for
/// a snapshot). Prints where it listens on stdout.
pub async fn serve(listen: Listen, target: Target, client: Option<Client>) -> anyhow::Result<()> {
    // The watches list first: their errors are the text view's, before anything is served.
    let (served, title, _task) = start(target, client).await?;
    let token = guard::Token::generate()?;
    let addr = SocketAddr::new(listen.address, listen.port);
    let bound = server::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    if !listen.address.is_loopback() {
        eprintln!(
            "warning: --address {}: the view is served beyond this machine over plain HTTP: anyone who can reach {} and read the URL's token (on the network, or in a browser's history) can read the view",
            listen.address, bound.addr
        );
    }
    let keys = guard::Keys::new(token, bound.addr.port())?;
    let url = match bound.addr {
        SocketAddr::V6(a) => format!("http://[{}]:{}{}/", a.ip(), a.port(), keys.path),
        SocketAddr::V4(a) => format!("http://{a}{}/", keys.path),
    };
    {
        // The only place the token is shown: the URL the user opens (the page then keeps it in
        // a cookie scoped to the session's path and takes it out of the address bar).
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "Serving the update status of {} at {url}?{}={} (read-only; Ctrl-C to stop)",
            crate::show::escape::text(&title, crate::show::escape::Newlines::Escape),
            guard::TOKEN_PARAM,
            keys.token.reveal()
        )
        .and_then(|()| out.flush())
        .context("cannot write to standard output")?;
    }
    server::serve(bound, served, keys, stopped())
        .await
        .context("the web server failed")?;
    eprintln!("Stopped serving {url}");
    Ok(())
}

/// What `target` serves (its page, and with `--fleet` the clusters opened from the grid), its
/// title, and the task that feeds it (`None`: a snapshot's page never changes).
async fn start(
    target: Target,
    client: Option<Client>,
) -> anyhow::Result<(server::Served, String, Option<Task>)> {
    let client = || client.clone().context("no Kubernetes client");
    let (served, (title, task)) = match target {
        Target::Snapshot { view, now, title } => {
            let page = model::cluster_page(&view, now, title.clone(), Source::Snapshot);
            drop(view);
            let served = server::Served {
                main: feed::fixed(page::script_json(&page)?),
                clusters: None,
            };
            (served, (title, None))
        }
        Target::Cluster {
            namespace,
            hosted,
            now,
        } => {
            let title = match &hosted {
                Some(h) => format!("hosted cluster {h} (namespace {namespace})"),
                None => format!("namespace {namespace}"),
            };
            let changed = Arc::new(Notify::new());
            let scope = ClusterScope {
                namespace: &namespace,
                hosted: hosted.as_deref(),
            };
            let cluster =
                ClusterFeed::start(&client()?, scope, title.clone(), &changed, true).await?;
            let (main, task) = feed::publish(cluster, changed, now);
            (
                server::Served {
                    main,
                    clusters: None,
                },
                (title, Some(task)),
            )
        }
        Target::Fleet { filter, now } => {
            let changed = Arc::new(Notify::new());
            let (fleet, warnings) = FleetFeed::start(&client()?, &filter, &changed).await?;
            for w in warnings {
                eprintln!(
                    "warning: {}",
                    crate::show::escape::text(&w, crate::show::escape::Newlines::Escape)
                );
            }
            let (main, task) = feed::publish(fleet, changed, now);
            (
                server::Served {
                    main,
                    clusters: Some(server::Drill::new(client()?, now)),
                },
                ("the fleet".to_owned(), Some(task)),
            )
        }
    };
    Ok((served, title, task))
}

/// Ctrl-C or SIGTERM.
async fn stopped() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    () = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => ctrl_c.await,
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}
