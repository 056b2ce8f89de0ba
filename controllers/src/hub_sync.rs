//! Hub sync (optional: `--hub-kubeconfig` + `--cluster-name`): reports this cluster to a fleet
//! hub the way ACM addon agents do. The ControlPlaneUpdateStatus, the WorkerPoolUpdateStatus
//! objects and the health UpdateInsights (progress insights too with `--hub-include-progress`)
//! are copied into the namespace named after the cluster on the hub, and copies whose local
//! object is gone are deleted.
//!
//! - A copy is computed purely ([`desired_copies`]): same kind and `.status`; same name, except
//!   the ControlPlaneUpdateStatus, named after the cluster (`cluster` → `<cluster-name>`,
//!   design.md); our labels (`update.openshift.io/*`, `app.kubernetes.io/managed-by`) plus
//!   `open-cluster-management.io/cluster-name=<cluster-name>`; no owner reference (the owners do
//!   not exist on the hub).
//! - Writes go through hub [`Writer`]s (reconciler [`NAME`], field manager
//!   `update-status-controller/hub-sync`): server-side apply of what differs from reflectors of
//!   the hub namespace label-selected to this cluster's copies ([`hub_selector`]), so a steady
//!   state writes nothing, and only copies labelled for this cluster and by `hub-sync` are ever
//!   deleted.
//! - A pass runs when our objects change (the local watches wake it) or the hub's copies do,
//!   after [`DEBOUNCE`], and at least every [`RESYNC`].
//! - The hub failing (unreachable, slow, credentials rejected, forbidden, namespace or CRDs
//!   missing) never touches the local reconcilers: a warning when an outage starts (and when its
//!   reason changes), `update_status_hub_sync_up 0` and
//!   `update_status_hub_sync_errors_total{reason}`, then retries with exponential back-off from
//!   [`MIN_BACKOFF`] to [`MAX_BACKOFF`] (±10 % jitter: many clusters report to one hub). While
//!   failing, every attempt first probes the hub (one list call), since a pass with nothing to
//!   write proves nothing. The first attempt that succeeds converges the copies. A `401` makes
//!   the next attempt re-read the kubeconfig (rotated credentials).
//!
//! It runs only in the replica that holds the leader-election Lease (`main.rs` starts it with
//! the reconcilers).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use kube::api::ListParams;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus, InsightType, UpdateInsight,
    UpdateInsightStatus, WorkerPoolUpdateStatus, WorkerPoolUpdateStatusStatus, labels,
};

use crate::assess::naming;
use crate::metrics::Metrics;
use crate::watch::{Caches, slim};
use crate::writer::{Desired, PENDING_TTL, SyncStats, WriteError, Writer};

/// Reconciler name of the hub copies (label `update.openshift.io/reconciler`, field manager
/// `update-status-controller/hub-sync`).
pub const NAME: &str = "hub-sync";
/// Collects a burst of local changes (a rolling update) into one pass.
pub const DEBOUNCE: Duration = Duration::from_secs(1);
/// Longest time between passes when nothing wakes the sync (restores copies changed or
/// deleted on the hub behind our back when no watch event said so).
pub const RESYNC: Duration = crate::runner::MAX_REQUEUE;
/// First wait after a failed attempt.
pub const MIN_BACKOFF: Duration = Duration::from_secs(1);
/// Longest wait between attempts while the hub fails: also the longest time the copies lag
/// behind once the hub is back.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Bound on one pass (a hub that accepts connections but never answers).
pub const PASS_TIMEOUT: Duration = Duration::from_secs(120);
/// Connect timeout of the hub client.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the hub sync needs to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubConfig {
    /// Kubeconfig of the hub (`--hub-kubeconfig`), read at start and again after a `401`.
    pub kubeconfig: PathBuf,
    /// The managed cluster's name on the hub (`--cluster-name`): the namespace of the copies,
    /// the name of the ControlPlaneUpdateStatus copy and the value of the
    /// `open-cluster-management.io/cluster-name` label.
    pub cluster_name: String,
    /// Copy progress insights too (`--hub-include-progress`).
    pub include_progress: bool,
}

/// Errors of the hub sync.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// `--cluster-name` is not a DNS-1123 label.
    #[error(
        "invalid cluster name {name:?}: {reason} (it must be a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit)"
    )]
    InvalidClusterName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The hub kubeconfig cannot be read or used.
    #[error("hub kubeconfig {path}: {source}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// No client can be built from the hub kubeconfig.
    #[error("hub kubeconfig {path}: cannot build a client: {source}")]
    Client {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A call to the hub failed.
    #[error("{verb} in namespace {namespace} on the hub: {source}")]
    Api {
        /// What was being done (`list`).
        verb: &'static str,
        /// The hub namespace.
        namespace: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A write to the hub failed.
    #[error("on the hub: {0}")]
    Write(#[from] WriteError),
    /// A pass did not finish in time.
    #[error("a pass took longer than {0:?}")]
    Timeout(Duration),
}

impl HubError {
    /// Why it failed, as the `reason` label of `update_status_hub_sync_errors_total`:
    /// `connect`, `timeout`, `unauthorized`, `forbidden`, `not-found`, `api`, `config` or
    /// `other`.
    pub fn reason(&self) -> &'static str {
        match self {
            HubError::InvalidClusterName { .. } | HubError::Kubeconfig { .. } => "config",
            HubError::Client { .. } => "config",
            HubError::Api { source, .. } => kube_reason(source),
            HubError::Write(WriteError::Api { source, .. }) => kube_reason(source),
            HubError::Write(WriteError::Serialize { .. }) => "other",
            HubError::Timeout(_) => "timeout",
        }
    }
}

/// The reason label of a client error.
fn kube_reason(e: &kube::Error) -> &'static str {
    match e {
        kube::Error::Api(s) => status_reason(s.code),
        kube::Error::HyperError(_) | kube::Error::Service(_) => "connect",
        kube::Error::Auth(_) => "config",
        _ => "other",
    }
}

fn status_reason(code: u16) -> &'static str {
    match code {
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not-found",
        _ => "api",
    }
}

/// The reason label of a hub watch error; `None` for what is routine (a `410 Gone`: the
/// watcher lists again).
fn watch_reason(e: &watcher::Error) -> Option<&'static str> {
    match e {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => Some(kube_reason(e)),
        watcher::Error::WatchError(s) if s.code == 410 => None,
        watcher::Error::WatchError(s) => Some(status_reason(s.code)),
        watcher::Error::NoResourceVersion => Some("api"),
    }
}

/// What an administrator can do about a failure of this reason.
fn hint(reason: &str, namespace: &str) -> String {
    match reason {
        "connect" => "the hub API server is unreachable (address, network, TLS)".to_string(),
        "timeout" => "the hub API server does not answer in time".to_string(),
        "unauthorized" => {
            "the hub rejects the credentials (expired or rotated?); the kubeconfig is read again before the next attempt".to_string()
        }
        "forbidden" => format!(
            "not allowed: bind the Role of config/hub/role.yaml in namespace {namespace} on the hub to this agent's hub identity"
        ),
        "not-found" => format!(
            "namespace {namespace} or the update-status CRDs do not exist on the hub (the namespace comes with the cluster's registration; apply config/crd/ on the hub)"
        ),
        "config" => "check --hub-kubeconfig".to_string(),
        _ => "see the error".to_string(),
    }
}

/// Checks `--cluster-name`: a DNS-1123 label (it names a namespace and is a label value).
pub fn validate_cluster_name(name: &str) -> Result<(), HubError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.len() > 63 {
        "it is longer than 63 characters"
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        "it has characters other than lower-case letters, digits and '-'"
    } else if name.starts_with('-') || name.ends_with('-') {
        "it starts or ends with '-'"
    } else {
        return Ok(());
    };
    Err(HubError::InvalidClusterName {
        name: name.to_string(),
        reason,
    })
}

/// Label selector of this cluster's copies on the hub (ours, by the hub sync, for this
/// cluster): what the hub reflectors see, hence all that a pass may change or delete.
pub fn hub_selector(cluster_name: &str) -> String {
    format!(
        "{}={},{}={NAME},{}={cluster_name}",
        labels::MANAGED_BY,
        labels::MANAGED_BY_VALUE,
        labels::RECONCILER,
        labels::ACM_CLUSTER_NAME,
    )
}

/// The hub copies of this cluster's objects, each list sorted by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HubCopies {
    /// The ControlPlaneUpdateStatus, named after the cluster (at most one).
    pub control_planes: Vec<Desired<ControlPlaneUpdateStatusStatus>>,
    /// One per WorkerPoolUpdateStatus.
    pub worker_pools: Vec<Desired<WorkerPoolUpdateStatusStatus>>,
    /// One per health insight (and progress insight, when asked).
    pub insights: Vec<Desired<UpdateInsightStatus>>,
}

/// Labels of a copy: the local object's labels of ours (`update.openshift.io/*` and
/// `app.kubernetes.io/managed-by`) except the local reconciler's name (the hub writer puts
/// its own), plus the cluster-name label. Labels set by others stay home.
pub fn copy_labels(
    local: &BTreeMap<String, String>,
    cluster_name: &str,
) -> BTreeMap<String, String> {
    let mut l: BTreeMap<String, String> = local
        .iter()
        .filter(|(k, _)| {
            (k.starts_with("update.openshift.io/") && k.as_str() != labels::RECONCILER)
                || k.as_str() == labels::MANAGED_BY
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    l.insert(
        labels::ACM_CLUSTER_NAME.to_string(),
        cluster_name.to_string(),
    );
    l
}

/// A local object worth copying: named, with a status, not being deleted.
fn live<K: Resource>(o: &K) -> bool {
    o.meta().name.is_some() && o.meta().deletion_timestamp.is_none()
}

fn copy<S: Clone>(
    name: String,
    local: &BTreeMap<String, String>,
    status: &S,
    cluster_name: &str,
) -> Desired<S> {
    Desired {
        name,
        labels: copy_labels(local, cluster_name),
        owner: None,
        status: status.clone(),
    }
}

/// The hub copies of the local objects (pure): see the module documentation. Objects without
/// a status yet or being deleted are not copied (so their copies go). The ControlPlaneUpdateStatus
/// copied is the one named `cluster` if there are several.
pub fn desired_copies(
    cluster_name: &str,
    include_progress: bool,
    control_planes: &[Arc<ControlPlaneUpdateStatus>],
    worker_pools: &[Arc<WorkerPoolUpdateStatus>],
    insights: &[Arc<UpdateInsight>],
) -> HubCopies {
    let cp = control_planes
        .iter()
        .filter(|o| live(&***o))
        .filter_map(|o| Some((o.name_any(), o, o.status.as_ref()?)))
        .min_by(|a, b| {
            let rank = |n: &str| (n != naming::CONTROL_PLANE_STATUS_NAME, n.to_string());
            rank(&a.0).cmp(&rank(&b.0))
        })
        .map(|(_, o, s)| copy(cluster_name.to_string(), o.labels(), s, cluster_name));
    let mut pools: Vec<_> = worker_pools
        .iter()
        .filter(|o| live(&***o))
        .filter_map(|o| {
            Some(copy(
                o.name_any(),
                o.labels(),
                o.status.as_ref()?,
                cluster_name,
            ))
        })
        .collect();
    pools.sort_by(|a, b| a.name.cmp(&b.name));
    let mut copies: Vec<_> = insights
        .iter()
        .filter(|o| live(&***o))
        .filter_map(|o| {
            let s = o.status.as_ref()?;
            (s.type_ == InsightType::Health || include_progress)
                .then(|| copy(o.name_any(), o.labels(), s, cluster_name))
        })
        .collect();
    copies.sort_by(|a, b| a.name.cmp(&b.name));
    HubCopies {
        control_planes: cp.into_iter().collect(),
        worker_pools: pools,
        insights: copies,
    }
}

/// A client for the hub from its kubeconfig (its current context), with a
/// [`CONNECT_TIMEOUT`]. Reads the file; does not contact the hub.
pub async fn load_client(path: &Path) -> Result<kube::Client, HubError> {
    let kc_err = |source| HubError::Kubeconfig {
        path: path.to_path_buf(),
        source,
    };
    let kubeconfig = Kubeconfig::read_from(path).map_err(kc_err)?;
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(kc_err)?;
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    kube::Client::try_from(config).map_err(|e| HubError::Client {
        path: path.to_path_buf(),
        source: Box::new(e),
    })
}

/// Wait before attempt `failures + 1`: [`MIN_BACKOFF`] doubled per consecutive failure up to
/// [`MAX_BACKOFF`], times `1 + jitter` (`jitter` in [-0.1, 0.1]), never above the cap.
pub fn backoff(failures: u32, jitter: f64) -> Duration {
    crate::clock::backoff(MIN_BACKOFF, MAX_BACKOFF, failures, jitter)
}

/// What the hub watches tell the sync loop (shared by successive sessions).
#[derive(Default)]
struct Signals {
    /// A hub watch (re)listed: the hub answers, worth an attempt even while backing off.
    listed: Notify,
    /// A hub watch failed since the loop last looked: the next attempt counts as failed if the
    /// watches have not listed, and probes the hub if they have.
    unhealthy: AtomicBool,
    /// A hub call was answered `401`: re-read the kubeconfig before the next attempt.
    reload: AtomicBool,
    /// Per watched kind: the reason of the outage reported (a warning per outage and per
    /// change of reason, across sessions).
    reported: Mutex<[Option<&'static str>; 3]>,
}

impl Signals {
    /// Records the reason a watch fails; `true` if it was not reported yet.
    fn report(&self, slot: usize, reason: &'static str) -> bool {
        let mut r = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        let new = r.get(slot).is_some_and(|old| *old != Some(reason));
        if let Some(old) = r.get_mut(slot) {
            *old = Some(reason);
        }
        new
    }

    /// Records that a watch works; `true` if it was failing.
    fn recovered(&self, slot: usize) -> bool {
        let mut r = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        r.get_mut(slot).and_then(Option::take).is_some()
    }
}

/// One hub client with its reflectors and writers; dropping it stops the reflectors.
struct Session {
    client: kube::Client,
    namespace: String,
    control_planes: Writer<ControlPlaneUpdateStatus>,
    worker_pools: Writer<WorkerPoolUpdateStatus>,
    insights: Writer<UpdateInsight>,
    hub_control_planes: Store<ControlPlaneUpdateStatus>,
    hub_worker_pools: Store<WorkerPoolUpdateStatus>,
    hub_insights: Store<UpdateInsight>,
    listed: Vec<Arc<AtomicBool>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// The reflectors' context.
#[derive(Clone)]
struct WatchContext {
    selector: String,
    namespace: String,
    wake: Arc<Notify>,
    signals: Arc<Signals>,
    metrics: Arc<Metrics>,
}

impl Session {
    fn start(client: kube::Client, ctx: &WatchContext) -> Self {
        let ns = ctx.namespace.as_str();
        let mut listed = Vec::new();
        let mut tasks = Vec::new();
        let (hub_control_planes, l, t) = spawn_watch(
            Api::namespaced(client.clone(), ns),
            ctx,
            0,
            "ControlPlaneUpdateStatus",
        );
        listed.push(l);
        tasks.push(t);
        let (hub_worker_pools, l, t) = spawn_watch(
            Api::namespaced(client.clone(), ns),
            ctx,
            1,
            "WorkerPoolUpdateStatus",
        );
        listed.push(l);
        tasks.push(t);
        let (hub_insights, l, t) =
            spawn_watch(Api::namespaced(client.clone(), ns), ctx, 2, "UpdateInsight");
        listed.push(l);
        tasks.push(t);
        let metrics = ctx.metrics.clone();
        Session {
            control_planes: Writer::for_hub(client.clone(), ns, NAME, metrics.clone()),
            worker_pools: Writer::for_hub(client.clone(), ns, NAME, metrics.clone()),
            insights: Writer::for_hub(client.clone(), ns, NAME, metrics),
            client,
            namespace: ns.to_string(),
            hub_control_planes,
            hub_worker_pools,
            hub_insights,
            listed,
            tasks,
        }
    }

    /// Every hub reflector has listed once (before that, an empty cache would read as "no
    /// copies yet" and cost a write per object).
    fn listed(&self) -> bool {
        self.listed.iter().all(|l| l.load(Ordering::SeqCst))
    }

    fn has_pending(&self) -> bool {
        self.control_planes.has_pending()
            || self.worker_pools.has_pending()
            || self.insights.has_pending()
    }

    /// One cheap call that tells whether the hub answers and lets us read our namespace.
    async fn probe(&self, selector: &str) -> Result<(), HubError> {
        let api: Api<ControlPlaneUpdateStatus> =
            Api::namespaced(self.client.clone(), &self.namespace);
        api.list_metadata(&ListParams::default().labels(selector).limit(1))
            .await
            .map(drop)
            .map_err(|e| HubError::Api {
                verb: "list controlplaneupdatestatuses",
                namespace: self.namespace.clone(),
                source: Box::new(e),
            })
    }

    /// Makes the hub copies match `copies`; stops at the first kind that fails.
    async fn sync(&mut self, copies: &HubCopies) -> Result<SyncStats, HubError> {
        let a = self
            .control_planes
            .sync(&copies.control_planes, &self.hub_control_planes.state())
            .await?;
        let b = self
            .worker_pools
            .sync(&copies.worker_pools, &self.hub_worker_pools.state())
            .await?;
        let c = self
            .insights
            .sync(&copies.insights, &self.hub_insights.state())
            .await?;
        Ok(SyncStats {
            meta_writes: a.meta_writes + b.meta_writes + c.meta_writes,
            status_writes: a.status_writes + b.status_writes + c.status_writes,
            deletes: a.deletes + b.deletes + c.deletes,
            unchanged: a.unchanged + b.unchanged + c.unchanged,
        })
    }
}

/// A reflector of our copies of kind `K` in the hub namespace: wakes the sync on every event,
/// says when it has listed, reports its errors (a warning per outage, a metric per error).
/// `slot` is the kind's index in [`Signals::reported`].
fn spawn_watch<K>(
    api: Api<K>,
    ctx: &WatchContext,
    slot: usize,
    kind: &'static str,
) -> (Store<K>, Arc<AtomicBool>, JoinHandle<()>)
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store();
    let listed = Arc::new(AtomicBool::new(false));
    let stream = watcher(api, watcher::Config::default().labels(&ctx.selector))
        .default_backoff()
        .modify(slim::<K>)
        .reflect(writer);
    let ctx = ctx.clone();
    let done = listed.clone();
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(ev) = stream.next().await {
            match ev {
                // Yielded before every (re)list attempt: proves nothing yet.
                Ok(watcher::Event::Init) => {}
                Ok(ev) => {
                    if ctx.signals.recovered(slot) {
                        tracing::info!(kind, namespace = %ctx.namespace, "hub watch recovered");
                    }
                    if matches!(ev, watcher::Event::InitDone) {
                        done.store(true, Ordering::SeqCst);
                        ctx.signals.listed.notify_one();
                    }
                    ctx.wake.notify_one();
                }
                Err(e) => {
                    let Some(reason) = watch_reason(&e) else {
                        continue;
                    };
                    ctx.metrics.hub_sync_failed(reason);
                    ctx.signals.unhealthy.store(true, Ordering::SeqCst);
                    if reason == "unauthorized" {
                        ctx.signals.reload.store(true, Ordering::SeqCst);
                    }
                    if ctx.signals.report(slot, reason) {
                        tracing::warn!(
                            kind,
                            namespace = %ctx.namespace,
                            reason,
                            error = %e,
                            hint = %hint(reason, &ctx.namespace),
                            "hub watch failing; retrying with back-off"
                        );
                    }
                    ctx.wake.notify_one();
                }
            }
        }
    });
    (reader, listed, task)
}

/// The hub sync task (see the module documentation).
pub struct HubSync {
    config: HubConfig,
    client: kube::Client,
    local: Caches,
    wake: Arc<Notify>,
    metrics: Arc<Metrics>,
}

impl HubSync {
    /// Checks the configuration and reads the hub kubeconfig (no call to the hub): a wrong
    /// name or an unreadable kubeconfig is a configuration error, reported before anything
    /// starts. `wake` is notified when our local objects change ([`crate::watch::Wakers`]).
    pub async fn new(
        config: HubConfig,
        local: Caches,
        wake: Arc<Notify>,
        metrics: Arc<Metrics>,
    ) -> Result<Self, HubError> {
        validate_cluster_name(&config.cluster_name)?;
        let client = load_client(&config.kubeconfig).await?;
        Ok(HubSync {
            config,
            client,
            local,
            wake,
            metrics,
        })
    }

    fn desired(&self) -> HubCopies {
        desired_copies(
            &self.config.cluster_name,
            self.config.include_progress,
            &self.local.control_plane_statuses.state(),
            &self.local.worker_pool_statuses.state(),
            &self.local.insights.state(),
        )
    }

    /// Runs until `shutdown` changes. Never fails: hub errors are logged, counted and retried.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        let ns = self.config.cluster_name.clone();
        let selector = hub_selector(&ns);
        let signals = Arc::new(Signals::default());
        let ctx = WatchContext {
            selector: selector.clone(),
            namespace: ns.clone(),
            wake: self.wake.clone(),
            signals: signals.clone(),
            metrics: self.metrics.clone(),
        };
        tracing::info!(
            namespace = %ns,
            kubeconfig = %self.config.kubeconfig.display(),
            include_progress = self.config.include_progress,
            "hub sync on: reporting to the hub"
        );
        let mut session = Session::start(self.client.clone(), &ctx);
        let mut failures: u32 = 0;
        let mut reported: Option<&'static str> = None;
        loop {
            let wait = if failures > 0 {
                backoff(failures, crate::clock::jitter())
            } else if session.has_pending() {
                // Re-check once our writes are no longer trusted over the cache.
                PENDING_TTL + Duration::from_secs(1)
            } else {
                RESYNC
            };
            tokio::select! {
                _ = self.wake.notified(), if failures == 0 => {}
                _ = signals.listed.notified() => {}
                _ = tokio::time::sleep(wait) => {}
                _ = shutdown.changed() => return,
            }
            tokio::select! {
                _ = tokio::time::sleep(DEBOUNCE) => {}
                _ = shutdown.changed() => return,
            }
            if signals.reload.swap(false, Ordering::SeqCst) {
                match load_client(&self.config.kubeconfig).await {
                    Ok(client) => {
                        tracing::info!(kubeconfig = %self.config.kubeconfig.display(), "hub credentials rejected: kubeconfig read again");
                        // The old reflectors stop with the old session.
                        session = Session::start(client, &ctx);
                    }
                    Err(e) => {
                        failures = failures.saturating_add(1);
                        self.failed(&e, &mut reported, failures);
                        signals.reload.store(true, Ordering::SeqCst);
                        continue;
                    }
                }
            }
            if !session.listed() {
                // The reflectors report their own errors and their first list wakes us; while
                // they fail, back off (a reload, for one, waits for it).
                if signals.unhealthy.swap(false, Ordering::SeqCst) {
                    failures = failures.saturating_add(1);
                }
                continue;
            }
            let watch_failed = signals.unhealthy.swap(false, Ordering::SeqCst);
            let probe = failures > 0 || watch_failed;
            let copies = self.desired();
            let pass = async {
                if probe {
                    session.probe(&selector).await?;
                }
                session.sync(&copies).await
            };
            let result = tokio::select! {
                r = tokio::time::timeout(PASS_TIMEOUT, pass) => r.unwrap_or(Err(HubError::Timeout(PASS_TIMEOUT))),
                _ = shutdown.changed() => return,
            };
            match result {
                Ok(stats) => {
                    self.metrics.hub_sync_succeeded(
                        jiff::Timestamp::now().as_millisecond() as f64 / 1000.0,
                    );
                    if failures > 0 {
                        tracing::info!(namespace = %ns, failed_attempts = failures, "hub sync recovered");
                    }
                    failures = 0;
                    reported = None;
                    if stats.writes() > 0 {
                        tracing::info!(
                            namespace = %ns,
                            writes = stats.writes(),
                            deletes = stats.deletes,
                            copies = copies.control_planes.len() + copies.worker_pools.len() + copies.insights.len(),
                            "hub copies updated"
                        );
                    }
                }
                Err(e) => {
                    failures = failures.saturating_add(1);
                    self.failed(&e, &mut reported, failures);
                    if e.reason() == "unauthorized" {
                        signals.reload.store(true, Ordering::SeqCst);
                    }
                }
            }
        }
    }

    /// Counts a failed attempt; warns when an outage starts or its reason changes.
    fn failed(&self, e: &HubError, reported: &mut Option<&'static str>, failures: u32) {
        let reason = e.reason();
        self.metrics.hub_sync_failed(reason);
        let ns = &self.config.cluster_name;
        if *reported != Some(reason) {
            tracing::warn!(
                namespace = %ns,
                reason,
                error = %e,
                hint = %hint(reason, ns),
                "hub sync failed; retrying with back-off (local status objects are not affected)"
            );
            *reported = Some(reason);
        } else {
            tracing::debug!(namespace = %ns, reason, error = %e, failures, "hub sync still failing");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
    use update_status_api::crd::{
        Assessment, ControlPlaneUpdateStatusSpec, HealthInsight, Impact, ImpactLevel, ResourceRef,
        UpdateInsightSpec, WorkerPoolUpdateStatusSpec,
    };

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn owner(kind: &str, name: &str) -> Option<Vec<OwnerReference>> {
        Some(vec![OwnerReference {
            api_version: "v1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: "u".into(),
            ..Default::default()
        }])
    }

    fn cp(name: &str, assessment: Assessment) -> Arc<ControlPlaneUpdateStatus> {
        let mut o = ControlPlaneUpdateStatus::new(name, ControlPlaneUpdateStatusSpec {});
        o.metadata.namespace = Some("openshift-update-status".into());
        o.metadata.labels = Some(map(&[
            (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
            (labels::RECONCILER, "control-plane"),
            (labels::SCOPE, "control-plane"),
            (labels::ASSESSMENT, "progressing"),
            (labels::CLUSTER, "abc-123"),
            ("team", "someone else's"),
        ]));
        o.metadata.owner_references = owner("ClusterVersion", "version");
        o.status = Some(ControlPlaneUpdateStatusStatus {
            assessment,
            completion_percent: 40,
            ..Default::default()
        });
        Arc::new(o)
    }

    fn pool(name: &str) -> Arc<WorkerPoolUpdateStatus> {
        let mut o = WorkerPoolUpdateStatus::new(name, WorkerPoolUpdateStatusSpec {});
        o.metadata.labels = Some(map(&[
            (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
            (labels::RECONCILER, "worker-pools"),
            (labels::POOL, name),
        ]));
        o.metadata.owner_references = owner("MachineConfigPool", name);
        let mut status = WorkerPoolUpdateStatusStatus {
            assessment: Assessment::Degraded,
            ..Default::default()
        };
        status.resource.name = name.into();
        status.nodes.total = 3;
        o.status = Some(status);
        Arc::new(o)
    }

    fn insight(name: &str, type_: InsightType) -> Arc<UpdateInsight> {
        let mut o = UpdateInsight::new(name, UpdateInsightSpec {});
        o.metadata.labels = Some(map(&[
            (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
            (labels::RECONCILER, "worker-pools"),
            (labels::INSIGHT_TYPE, type_.slug()),
        ]));
        o.metadata.owner_references = owner("Node", name);
        o.status = Some(UpdateInsightStatus {
            type_,
            resource: ResourceRef {
                kind: "Node".into(),
                name: name.into(),
                ..Default::default()
            },
            progress: (type_ == InsightType::Progress).then(Default::default),
            health: (type_ == InsightType::Health).then(|| HealthInsight {
                impact: Impact {
                    level: ImpactLevel::Error,
                    summary: "s".into(),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        });
        Arc::new(o)
    }

    fn names<S>(d: &[Desired<S>]) -> Vec<&str> {
        d.iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn hub_copies_are_renamed_relabelled_ownerless_with_the_same_status() {
        let cps = [cp("cluster", Assessment::Progressing)];
        let pools = [pool("worker"), pool("infra")];
        let insights = [
            insight("node-b", InsightType::Health),
            insight("node-a", InsightType::Progress),
            insight("node-a-drain", InsightType::Health),
        ];
        let c = desired_copies("prod-east", false, &cps, &pools, &insights);

        // The control plane is named after the cluster.
        assert_eq!(names(&c.control_planes), ["prod-east"]);
        let copy = &c.control_planes[0];
        assert_eq!(Some(&copy.status), cps[0].status.as_ref());
        assert_eq!(copy.owner, None, "owners do not exist on the hub");
        assert_eq!(
            copy.labels,
            map(&[
                (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
                (labels::SCOPE, "control-plane"),
                (labels::ASSESSMENT, "progressing"),
                (labels::CLUSTER, "abc-123"),
                (labels::ACM_CLUSTER_NAME, "prod-east"),
            ]),
            "ours without the local reconciler (the hub writer sets hub-sync), plus the cluster name; not other teams' labels"
        );

        // Pools keep their names, sorted.
        assert_eq!(names(&c.worker_pools), ["infra", "worker"]);
        assert_eq!(Some(&c.worker_pools[1].status), pools[0].status.as_ref());
        assert_eq!(c.worker_pools[1].labels[labels::POOL], "worker");
        assert_eq!(
            c.worker_pools[1].labels[labels::ACM_CLUSTER_NAME],
            "prod-east"
        );
        assert!(c.worker_pools.iter().all(|p| p.owner.is_none()));

        // Health insights only, unless asked.
        assert_eq!(names(&c.insights), ["node-a-drain", "node-b"]);
        assert!(c.insights.iter().all(|i| i.owner.is_none()
            && i.labels[labels::ACM_CLUSTER_NAME] == "prod-east"
            && !i.labels.contains_key(labels::RECONCILER)));
        let with_progress = desired_copies("prod-east", true, &cps, &pools, &insights);
        assert_eq!(
            names(&with_progress.insights),
            ["node-a", "node-a-drain", "node-b"]
        );
        assert_eq!(
            with_progress.insights[0].labels[labels::INSIGHT_TYPE],
            "progress"
        );
    }

    #[test]
    fn hub_copies_skip_objects_without_status_or_being_deleted() {
        let mut no_status = (*insight("pending", InsightType::Health)).clone();
        no_status.status = None;
        let mut deleting = (*insight("going", InsightType::Health)).clone();
        deleting.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        let mut cp_no_status = (*cp("cluster", Assessment::Completed)).clone();
        cp_no_status.status = None;
        let c = desired_copies(
            "c1",
            false,
            &[Arc::new(cp_no_status)],
            &[],
            &[
                Arc::new(no_status),
                Arc::new(deleting),
                insight("kept", InsightType::Health),
            ],
        );
        assert!(c.control_planes.is_empty());
        assert_eq!(names(&c.insights), ["kept"]);
        assert_eq!(
            desired_copies("c1", true, &[], &[], &[]),
            HubCopies::default(),
            "nothing local: every copy goes"
        );
    }

    #[test]
    fn hub_gets_one_control_plane_preferably_the_one_named_cluster() {
        let c = desired_copies(
            "c1",
            false,
            &[
                cp("another", Assessment::Stalled),
                cp("cluster", Assessment::Progressing),
                cp("aaa", Assessment::Unknown),
            ],
            &[],
            &[],
        );
        assert_eq!(c.control_planes.len(), 1);
        assert_eq!(c.control_planes[0].name, "c1");
        assert_eq!(
            c.control_planes[0].status.assessment,
            Assessment::Progressing
        );
        let c = desired_copies(
            "c1",
            false,
            &[
                cp("hosted-b", Assessment::Stalled),
                cp("hosted-a", Assessment::Unknown),
            ],
            &[],
            &[],
        );
        assert_eq!(
            c.control_planes[0].status.assessment,
            Assessment::Unknown,
            "else the first by name"
        );
    }

    #[test]
    fn hub_selector_names_our_copies_of_this_cluster() {
        assert_eq!(
            hub_selector("prod-east"),
            "app.kubernetes.io/managed-by=update-status-controller,update.openshift.io/reconciler=hub-sync,open-cluster-management.io/cluster-name=prod-east"
        );
    }

    #[test]
    fn hub_cluster_names_are_dns_labels() {
        for ok in ["a", "prod-east-1", "0abc", &"a".repeat(63)] {
            assert!(validate_cluster_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Prod", "prod_east", "-a", "a-", "a.b", &"a".repeat(64)] {
            let e = validate_cluster_name(bad).expect_err(bad);
            assert!(e.to_string().contains("DNS-1123 label"), "{e}");
            assert_eq!(e.reason(), "config");
        }
    }

    #[test]
    fn hub_backoff_doubles_up_to_the_cap_with_bounded_jitter() {
        assert_eq!(backoff(1, 0.0), MIN_BACKOFF);
        assert_eq!(backoff(2, 0.0), MIN_BACKOFF * 2);
        assert_eq!(backoff(4, 0.0), MIN_BACKOFF * 8);
        assert_eq!(backoff(30, 0.0), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX, 0.1), MAX_BACKOFF, "never above the cap");
        assert_eq!(backoff(1, -1.0), MIN_BACKOFF.mul_f64(0.9), "jitter clamped");
    }

    #[test]
    fn hub_watch_outages_are_reported_once_per_reason() {
        let s = Signals::default();
        assert!(s.report(0, "unauthorized"));
        assert!(!s.report(0, "unauthorized"), "once per outage");
        assert!(s.report(1, "unauthorized"), "per kind");
        assert!(s.report(0, "forbidden"), "again when the reason changes");
        assert!(s.recovered(0));
        assert!(!s.recovered(0));
        assert!(s.report(0, "forbidden"), "a new outage");
        assert!(!s.report(7, "connect") && !s.recovered(7), "no such kind");
    }

    #[test]
    fn hub_error_reasons() {
        let api = |code: u16| HubError::Api {
            verb: "list",
            namespace: "c1".into(),
            source: Box::new(kube::Error::Api(Box::new(kube::core::Status {
                code,
                ..Default::default()
            }))),
        };
        assert_eq!(api(401).reason(), "unauthorized");
        assert_eq!(api(403).reason(), "forbidden");
        assert_eq!(api(404).reason(), "not-found");
        assert_eq!(api(500).reason(), "api");
        assert_eq!(HubError::Timeout(PASS_TIMEOUT).reason(), "timeout");
        let gone = watcher::Error::WatchError(Box::new(kube::core::Status {
            code: 410,
            ..Default::default()
        }));
        assert_eq!(watch_reason(&gone), None, "a 410 is a routine re-list");
        let forbidden =
            watcher::Error::InitialListFailed(kube::Error::Api(Box::new(kube::core::Status {
                code: 403,
                ..Default::default()
            })));
        assert_eq!(watch_reason(&forbidden), Some("forbidden"));
        assert!(hint("forbidden", "c1").contains("config/hub/role.yaml"));
        assert!(hint("not-found", "c1").contains("namespace c1"));
    }
}
