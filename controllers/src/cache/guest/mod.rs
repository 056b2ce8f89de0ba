//! `--hosted-kubeconfig-access`: reading inside each hosted cluster. For every HostedCluster
//! with `status.kubeconfig.name`, one task follows that Secret (a watch of the one Secret, by
//! name, in the HostedCluster's namespace: no other Secret is read or cached), builds a kube
//! client from its key `kubeconfig`, and watches the hosted cluster's ClusterOperators and
//! Nodes into two caches (Nodes trimmed as standalone: [`update_status_assess::nodes::trim_node`]). A new
//! content of the Secret (rotation) replaces the client and the caches; a HostedCluster gone (or
//! its reference changed) stops its task ([`Guests::sync`]).
//!
//! A hosted cluster that cannot be read (Secret missing or without the key, a kubeconfig that is
//! not valid or asks for what we do not run, connection refused, 401/403, ...) is reported as
//! [`GuestView::Unreachable`] with a short reason ([`GuestError`], [`watch_reason`]) that never
//! carries the token, password, client key or kubeconfig contents: reasons are fixed texts plus
//! the server URL without user information, and any error text quoted is scrubbed of the
//! kubeconfig's credentials. One hosted cluster failing never stops the others: each has its own
//! task, client and caches.
//!
//! Kubeconfigs come from Secrets others can write: exec plugins, auth providers and file
//! references (`tokenFile`, `client-certificate`, `client-key`, `certificate-authority`) are
//! refused, only inline credentials are used.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::core::{ApiResource, DynamicObject};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use tokio::sync::Notify;
use update_status_api::hosted::HostedCluster;
use update_status_api::input::{ClusterOperator, Node};
use update_status_assess::insight::UnreadableInput;

use crate::cache::watch::{Decoder, INPUT_PAGE_SIZE, Unreadable, slim};
use tracing::Instrument;
use update_status_assess::hosted::caps::{
    MAX_GUEST_CLUSTER_OPERATORS, MAX_GUEST_NODES, Reported, trim_operator,
};
use update_status_assess::nodes::trim_node;

mod kubeconfig;

pub use kubeconfig::{
    Credentials, GuestClient, GuestError, guest_client, kubeconfig_of, parse_kubeconfig,
    watch_reason,
};

/// How long a new connection may take to list both kinds before it counts as unreachable
/// (errors count at once).
pub const CONNECT_GRACE: Duration = Duration::from_secs(20);
/// How long a connection that worked may fail before its cached objects are no longer used
/// (short outages, e.g. the hosted API server restarting during its own update, are ridden out).
pub const STALE_GRACE: Duration = Duration::from_secs(60);
/// What the reconciler uses of one hosted cluster.
#[derive(Debug)]
pub enum GuestView {
    /// Not known yet (just connecting): leave the HostedCluster for now and look again within
    /// the delay (its objects' events wake the reconciler sooner).
    Waiting(Duration),
    /// Read: its ClusterOperators and Nodes. `recheck`: a failing watch's grace ends then.
    Ready {
        /// ClusterOperators.
        cluster_operators: Vec<ClusterOperator>,
        /// Nodes (trimmed).
        nodes: Vec<Node>,
        /// When to look again (a failure is being ridden out).
        recheck: Option<Duration>,
        /// Its ClusterOperators and Nodes that cannot be decoded (left out of the above).
        unreadable: Vec<UnreadableInput>,
        /// How many it reports, when more than the caches keep (their caps).
        reported: Reported,
    },
    /// Cannot be read: why (redacted).
    Unreachable(String),
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Which of the two watches.
const OPERATORS: usize = 0;
const NODES: usize = 1;

/// The state of a connection's two watches.
#[derive(Default)]
struct ConnStatus {
    synced: [bool; 2],
    /// A failing watch: why, since when.
    failing: [Option<(String, Instant)>; 2],
    /// Objects the hosted cluster has of each kind (at least), kept or not ([`Capped`]).
    reported: [usize; 2],
}

/// A hosted cluster's client and caches.
struct GuestConn {
    since: Instant,
    server: String,
    cluster_operators: Store<ClusterOperator>,
    nodes: Store<Node>,
    status: Arc<Mutex<ConnStatus>>,
    /// What the two watches could not decode.
    unreadable: Unreadable,
    _tasks: [AbortOnDrop; 2],
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Plain data: consistent whatever panicked while holding the lock.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl GuestConn {
    fn start(g: GuestClient, who: &str, wake: &Arc<Notify>) -> Self {
        let status = Arc::new(Mutex::new(ConnStatus::default()));
        let unreadable = Unreadable::default();
        let ctx = |slot| WatchCtx {
            slot,
            who: who.to_string(),
            server: g.server.clone(),
            credentials: g.credentials.clone(),
            status: status.clone(),
            wake: wake.clone(),
            unreadable: unreadable.clone(),
        };
        // Each kind trimmed to what the assessment reads and capped in number (issue #29: the
        // tenant makes them); ClusterOperators listed a few at a time (a page of the initial list
        // is held whole as JSON, and each may be up to etcd's object limit, ~1.5 MB).
        let (cluster_operators, a) = guest_watch::<ClusterOperator>(
            &g.client,
            "ClusterOperator",
            trim_operator,
            Limits {
                max: MAX_GUEST_CLUSTER_OPERATORS,
                page: OPERATORS_PAGE_SIZE,
            },
            ctx(OPERATORS),
        );
        let (nodes, b) = guest_watch::<Node>(
            &g.client,
            "Node",
            trim_node,
            Limits {
                max: MAX_GUEST_NODES,
                page: INPUT_PAGE_SIZE,
            },
            ctx(NODES),
        );
        GuestConn {
            since: Instant::now(),
            server: g.server,
            cluster_operators,
            nodes,
            status,
            unreadable,
            _tasks: [a, b],
        }
    }

    fn view(&self) -> GuestView {
        let s = lock(&self.status);
        let failing = s.failing.iter().flatten().min_by_key(|(_, since)| *since);
        let synced = s.synced.iter().all(|x| *x);
        match failing {
            Some((why, since)) => {
                let left = STALE_GRACE.saturating_sub(since.elapsed());
                if !synced || left.is_zero() {
                    GuestView::Unreachable(why.clone())
                } else {
                    self.ready(Some(left), &s.reported)
                }
            }
            None if synced => self.ready(None, &s.reported),
            None => match CONNECT_GRACE.checked_sub(self.since.elapsed()) {
                Some(left) if !left.is_zero() => GuestView::Waiting(left),
                _ => GuestView::Unreachable(format!(
                    "no complete answer from {} within {}s",
                    self.server,
                    CONNECT_GRACE.as_secs()
                )),
            },
        }
    }

    fn ready(&self, recheck: Option<Duration>, reported: &[usize; 2]) -> GuestView {
        let mut cluster_operators: Vec<ClusterOperator> = self
            .cluster_operators
            .state()
            .iter()
            .map(|o| (**o).clone())
            .collect();
        cluster_operators.sort_by(update_status_assess::order::compare_operators);
        let mut nodes: Vec<Node> = self.nodes.state().iter().map(|n| (**n).clone()).collect();
        nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        GuestView::Ready {
            cluster_operators,
            nodes,
            recheck,
            unreadable: self.unreadable.all(),
            reported: Reported {
                cluster_operators: reported[OPERATORS],
                nodes: reported[NODES],
            },
        }
    }
}

/// Objects per page of the initial list of a hosted cluster's ClusterOperators.
const OPERATORS_PAGE_SIZE: u32 = 10;
/// Names of objects past a cap remembered (as 64-bit hashes, to count them) at most.
const MAX_OVER_TRACKED: usize = 100_000;

/// A guest watch's bounds: objects kept at most, objects per page of its lists.
#[derive(Clone, Copy)]
struct Limits {
    max: usize,
    page: u32,
}

/// Keeps at most `max` objects of a watch (the first seen, by name): changes of others are
/// dropped before the cache, only counted (a hash of their names) for [`ConnStatus::reported`]
/// (a new one wakes the reconciler: the count it reports changed). Deletions always pass (a
/// no-op for the cache when the object was not kept, but they wake the reconciler: an
/// unreadable object's insight goes with it).
struct Capped {
    max: usize,
    kept: std::collections::HashSet<String>,
    over: std::collections::HashSet<u64>,
    status: Arc<Mutex<ConnStatus>>,
    slot: usize,
    wake: Arc<Notify>,
}

impl Capped {
    fn new(max: usize, status: Arc<Mutex<ConnStatus>>, slot: usize, wake: Arc<Notify>) -> Self {
        Capped {
            max,
            kept: Default::default(),
            over: Default::default(),
            status,
            slot,
            wake,
        }
    }

    fn hash(name: &str) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault};
        BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(name)
    }

    /// The event, or `None` when it is about an object past the cap.
    fn admit<K: Resource>(&mut self, ev: watcher::Event<K>) -> Option<watcher::Event<K>> {
        use watcher::Event;
        let out = match &ev {
            Event::Init => {
                self.kept.clear();
                self.over.clear();
                Some(ev)
            }
            Event::InitDone => Some(ev),
            Event::InitApply(o) | Event::Apply(o) => {
                let name = o.meta().name.as_deref().unwrap_or_default();
                if self.kept.contains(name) {
                    Some(ev)
                } else if self.kept.len() < self.max {
                    self.over.remove(&Self::hash(name));
                    self.kept.insert(name.to_string());
                    Some(ev)
                } else {
                    if self.over.len() < MAX_OVER_TRACKED && self.over.insert(Self::hash(name)) {
                        self.wake.notify_one();
                    }
                    None
                }
            }
            Event::Delete(o) => {
                let name = o.meta().name.as_deref().unwrap_or_default();
                if !self.kept.remove(name) {
                    self.over.remove(&Self::hash(name));
                }
                Some(ev)
            }
        };
        lock(&self.status).reported[self.slot] = self.kept.len() + self.over.len();
        out
    }
}

/// What one guest watch reports to.
struct WatchCtx {
    slot: usize,
    /// `namespace/name` of the HostedCluster (logs).
    who: String,
    server: String,
    credentials: Credentials,
    status: Arc<Mutex<ConnStatus>>,
    wake: Arc<Notify>,
    /// Where the decoder records what it cannot decode (reported as insights of the
    /// HostedCluster).
    unreadable: Unreadable,
}

/// Retry delays of a failing guest watch: 1 s doubling up to 30 s (a hosted cluster down for
/// long is polled gently; the management cluster's own watches use 5 s).
fn guest_backoff() -> kube::runtime::utils::ResetTimerBackoff<watcher::ExponentialBackoff> {
    let exponential = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_secs(1))
        .with_max_delay(Duration::from_secs(30))
        .with_factor(2.0)
        .without_max_times();
    kube::runtime::utils::ResetTimerBackoff::new(exponential.into(), Duration::from_secs(120))
}

/// Watches `kind` in the hosted cluster into a cache (objects decoded one at a time: an
/// undecodable one is logged once, left out and recorded in `ctx.unreadable`, as the
/// management watches do).
fn guest_watch<K>(
    client: &kube::Client,
    kind: &'static str,
    trim: fn(&mut K),
    limits: Limits,
    ctx: WatchCtx,
) -> (Store<K>, AbortOnDrop)
where
    K: Resource<DynamicType = ()>
        + Clone
        + Debug
        + DeserializeOwned
        + Default
        + Send
        + Sync
        + 'static,
{
    let ar = ApiResource::erase::<K>(&());
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let (reader, writer) = reflector::store();
    // The management watches' decoder: an undecodable object is left out, warned about once
    // per problem (the task's span names the hosted cluster) and recorded for its insight.
    let mut decoder = Decoder::<K>::new(kind, ctx.unreadable.clone(), trim);
    let mut capped = Capped::new(limits.max, ctx.status.clone(), ctx.slot, ctx.wake.clone());
    let events = watcher(api, watcher::Config::default().page_size(limits.page))
        .map_ok(move |ev| decoder.event(ev).and_then(|ev| capped.admit(ev)))
        .try_filter_map(|ev| std::future::ready(Ok(ev)));
    let stream = events
        .backoff(guest_backoff())
        .modify(slim::<K>)
        .reflect(writer);
    let span = tracing::info_span!("hosted-cluster-watch", hosted_cluster = %ctx.who, kind);
    let task = tokio::spawn(
        async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(ev) = stream.next().await {
            let mut s = lock(&ctx.status);
            match ev {
                Ok(watcher::Event::Init) => continue,
                Ok(ev) => {
                    if s.failing[ctx.slot].take().is_some() {
                        tracing::info!(hosted_cluster = %ctx.who, kind, server = %ctx.server, "hosted cluster watch recovered");
                    }
                    if matches!(ev, watcher::Event::InitDone) && !s.synced[ctx.slot] {
                        s.synced[ctx.slot] = true;
                        tracing::info!(hosted_cluster = %ctx.who, kind, server = %ctx.server, "hosted cluster listed");
                    }
                }
                Err(e) => {
                    let why = watch_reason(&e, kind, &ctx.server, &ctx.credentials);
                    let since = match s.failing[ctx.slot].take() {
                        Some((old, since)) => {
                            if old != why {
                                tracing::warn!(hosted_cluster = %ctx.who, kind, reason = %why, "hosted cluster cannot be read; retrying with backoff");
                            }
                            since
                        }
                        None => {
                            tracing::warn!(hosted_cluster = %ctx.who, kind, reason = %why, "hosted cluster cannot be read; retrying with backoff");
                            Instant::now()
                        }
                    };
                    s.failing[ctx.slot] = Some((why, since));
                }
            }
            drop(s);
            ctx.wake.notify_one();
        }
    }
        .instrument(span),
    );
    (reader, AbortOnDrop(task))
}

/// What a HostedCluster's task found.
enum LinkState {
    /// Reading the Secret (since).
    Starting(Instant),
    /// The kubeconfig cannot be used.
    Broken(GuestError),
    /// A client from the Secret's current kubeconfig.
    Connected(GuestConn),
}

/// One HostedCluster's link: the task following its Secret, and what it found.
struct Link {
    secret: String,
    state: Arc<Mutex<LinkState>>,
    _task: AbortOnDrop,
}

/// The hosted clusters read from inside (`--hosted-kubeconfig-access`), by HostedCluster.
pub struct Guests {
    client: kube::Client,
    wake: Arc<Notify>,
    links: HashMap<(String, String), Link>,
}

impl Guests {
    /// No links yet; `client`: the management cluster (Secrets); `wake`: the hosted reconciler.
    pub fn new(client: kube::Client, wake: Arc<Notify>) -> Self {
        Guests {
            client,
            wake,
            links: HashMap::new(),
        }
    }

    /// Starts the links of new HostedClusters (or of a changed `status.kubeconfig`), stops
    /// those of HostedClusters gone, deleting, or without a kubeconfig.
    pub fn sync<'a>(&mut self, hcs: impl IntoIterator<Item = &'a HostedCluster>) {
        let mut wanted: BTreeMap<(String, String), String> = BTreeMap::new();
        for hc in hcs {
            if hc.metadata.deletion_timestamp.is_some() {
                continue;
            }
            if let Some(secret) = hc.kubeconfig_secret() {
                wanted.insert(
                    (hc.namespace().to_string(), hc.name().to_string()),
                    secret.to_string(),
                );
            }
        }
        self.links
            .retain(|key, link| wanted.get(key).is_some_and(|s| *s == link.secret));
        for (key, secret) in wanted {
            if self.links.contains_key(&key) {
                continue;
            }
            let link = self.start(&key.0, &key.1, &secret);
            self.links.insert(key, link);
        }
    }

    /// Number of links (tests, logs).
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// Whether there is no link.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// What to use of `hc` now.
    pub fn view(&self, hc: &HostedCluster) -> GuestView {
        let key = (hc.namespace().to_string(), hc.name().to_string());
        let Some(link) = self.links.get(&key) else {
            return GuestView::Unreachable(
                GuestError::NoKubeconfigYet(format!("{}/{}", key.0, key.1)).to_string(),
            );
        };
        match &*lock(&link.state) {
            LinkState::Starting(since) => match CONNECT_GRACE.checked_sub(since.elapsed()) {
                Some(left) if !left.is_zero() => GuestView::Waiting(left),
                _ => GuestView::Unreachable(format!(
                    "Secret {}/{} not read within {}s",
                    key.0,
                    link.secret,
                    CONNECT_GRACE.as_secs()
                )),
            },
            LinkState::Broken(e) => GuestView::Unreachable(e.to_string()),
            LinkState::Connected(conn) => conn.view(),
        }
    }

    fn start(&self, namespace: &str, name: &str, secret: &str) -> Link {
        let state = Arc::new(Mutex::new(LinkState::Starting(Instant::now())));
        let follower = SecretFollower {
            secrets: Api::namespaced(self.client.clone(), namespace),
            secret_ref: format!("{namespace}/{secret}"),
            secret: secret.to_string(),
            who: format!("{namespace}/{name}"),
            state: state.clone(),
            wake: self.wake.clone(),
            current: None,
        };
        tracing::info!(hosted_cluster = %follower.who, secret = %follower.secret_ref, "reading the hosted cluster's admin kubeconfig");
        Link {
            secret: secret.to_string(),
            state,
            _task: AbortOnDrop(tokio::spawn(follower.run())),
        }
    }
}

/// Follows one HostedCluster's kubeconfig Secret.
struct SecretFollower {
    secrets: Api<Secret>,
    secret_ref: String,
    secret: String,
    who: String,
    state: Arc<Mutex<LinkState>>,
    wake: Arc<Notify>,
    /// Digest of the kubeconfig in use (`None`: none).
    current: Option<[u8; 32]>,
}

impl SecretFollower {
    async fn run(mut self) {
        // The one Secret, by name: nothing else is listed, and nothing of it is cached (only a
        // digest of its kubeconfig and the client made from it are kept).
        let config = watcher::Config::default().fields(&format!("metadata.name={}", self.secret));
        let stream = watcher(self.secrets.clone(), config).backoff(guest_backoff());
        let mut stream = std::pin::pin!(stream);
        let mut listed = false;
        let mut last_error: Option<String> = None;
        while let Some(ev) = stream.next().await {
            match ev {
                Ok(watcher::Event::Init) => {
                    listed = false;
                    continue;
                }
                Ok(watcher::Event::InitApply(s) | watcher::Event::Apply(s)) => {
                    listed = true;
                    last_error = None;
                    self.apply(&s).await;
                }
                Ok(watcher::Event::InitDone) => {
                    last_error = None;
                    if !listed {
                        self.broken(GuestError::SecretMissing(self.secret_ref.clone()));
                    }
                }
                Ok(watcher::Event::Delete(_)) => {
                    self.broken(GuestError::SecretMissing(self.secret_ref.clone()));
                }
                Err(e) => {
                    let why = secret_error(&e);
                    if last_error.as_ref() != Some(&why) {
                        tracing::warn!(hosted_cluster = %self.who, secret = %self.secret_ref, reason = %why, "the hosted cluster's kubeconfig Secret cannot be read; retrying with backoff");
                        last_error = Some(why.clone());
                    }
                    // A connection already made goes on with its kubeconfig.
                    if !matches!(&*lock(&self.state), LinkState::Connected(_)) {
                        self.set(LinkState::Broken(GuestError::SecretUnreadable {
                            secret: self.secret_ref.clone(),
                            why,
                        }));
                        self.current = None;
                    }
                }
            }
            self.wake.notify_one();
        }
    }

    fn set(&self, state: LinkState) {
        *lock(&self.state) = state;
    }

    fn broken(&mut self, e: GuestError) {
        tracing::warn!(hosted_cluster = %self.who, reason = %e, "the hosted cluster cannot be read");
        self.current = None;
        self.set(LinkState::Broken(e));
    }

    /// A (new) content of the Secret: a new client and caches if the kubeconfig changed.
    async fn apply(&mut self, secret: &Secret) {
        let bytes = match kubeconfig_of(secret, &self.secret_ref) {
            Ok(b) => b,
            Err(e) => return self.broken(e),
        };
        let digest: [u8; 32] = Sha256::digest(&bytes).into();
        if self.current == Some(digest) {
            return;
        }
        match guest_client(&bytes, &self.secret_ref).await {
            Ok(g) => {
                tracing::info!(hosted_cluster = %self.who, server = %g.server, rotated = self.current.is_some(), "connecting to the hosted cluster with the kubeconfig of its Secret");
                self.current = Some(digest);
                // The old connection (if any) stops when replaced.
                self.set(LinkState::Connected(GuestConn::start(
                    g, &self.who, &self.wake,
                )));
            }
            Err(e) => {
                self.broken(e);
                // Not retried until the Secret changes.
                self.current = Some(digest);
            }
        }
    }
}

/// Why the Secret cannot be read (status code and a fixed hint; never its contents).
fn secret_error(e: &watcher::Error) -> String {
    let code = match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s))
        | watcher::Error::WatchError(s) => Some(s.code),
        _ => None,
    };
    match code {
        Some(403) => {
            "403 Forbidden: bind the ClusterRole update-status-controller-hosted-kubeconfig \
                      in this namespace (config/rbac/hosted/kubeconfig-access)"
                .to_string()
        }
        Some(c) => format!("the management API server answered {c}"),
        None => "the management API server cannot be reached".to_string(),
    }
}

#[cfg(test)]
mod tests;
