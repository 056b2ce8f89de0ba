//! Watches: one reflector (in-memory cache) per input and output kind, each waking the tasks
//! that depend on it, as the start-up routes them ([`Routes`]: this layer knows no reconciler).
//! No polling: the API server pushes changes. Our own objects wake the reconciler that wrote
//! them (by their `update.openshift.io/reconciler` label), not every reconciler;
//! MachineConfigs are watched metadata-only.
//!
//! Input kinds are watched as [`DynamicObject`]s (which always decode) and decoded one object at
//! a time: an object we cannot read is skipped and recorded in [`Unreadable`] (the control-plane
//! reconciler turns it into a health insight), so one bad object never stops a cache from
//! syncing. Watch errors are logged at most once per [`ERROR_LOG_INTERVAL`] per watch and
//! error, with the count of repeats suppressed, and reported to [`Health`] for `/readyz`.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use kube::core::{ApiResource, DynamicObject, PartialObjectMeta};
use kube::runtime::reflector::{self, Lookup, Store};
use kube::runtime::utils::ResetTimerBackoff;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus, labels,
};
use update_status_api::input::{
    ClusterOperator, ClusterVersion, MCO_DEPLOYMENT, MCO_NAMESPACE, MachineConfig,
    MachineConfigPool, McoDeployment, Node,
};

use update_status_assess::insight::{InputPlace, UnreadableInput};
use update_status_assess::redact::redact_urls_in;

use crate::cache::insights::CachedInsight;
use crate::cache::nodes::CompactNode;
use crate::runtime::existing::Cached;
use crate::runtime::health::Health;
use crate::runtime::supervisor::Tasks;

/// The caches every reconciler reads.
#[derive(Clone)]
pub struct Caches {
    /// ClusterVersions (the singleton `version`).
    pub cluster_versions: Store<ClusterVersion>,
    /// ClusterOperators.
    pub cluster_operators: Store<ClusterOperator>,
    /// MachineConfigPools.
    pub pools: Store<MachineConfigPool>,
    /// MachineConfigs (metadata only is kept).
    pub machine_configs: Store<MachineConfig>,
    /// Nodes (reduced to the fields we read, with shared strings: see [`crate::cache::nodes`]).
    pub nodes: Store<CompactNode>,
    /// The machine-config operator's Deployment (at most the one, reduced to its containers'
    /// names and images).
    pub mco_deployments: Store<McoDeployment>,
    /// Our UpdateInsights in our namespace (progress insights projected unless the hub sync
    /// copies them: see [`start`] and [`crate::cache::insights`]).
    pub insights: Store<CachedInsight>,
    /// Our ControlPlaneUpdateStatus objects.
    pub control_plane_statuses: Store<ControlPlaneUpdateStatus>,
    /// Our WorkerPoolUpdateStatus objects.
    pub worker_pool_statuses: Store<WorkerPoolUpdateStatus>,
    /// Input objects that cannot be decoded (left out of the caches above).
    pub unreadable: Unreadable,
}

/// The input objects the watches could not decode, by kind and `namespace/name` (or `name`).
#[derive(Clone, Default)]
pub struct Unreadable(Arc<Mutex<BTreeMap<(&'static str, String), UnreadableInput>>>);

impl Unreadable {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(&'static str, String), UnreadableInput>> {
        // Plain map: consistent whatever panicked while holding the lock.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every unreadable input, sorted by kind and name.
    pub fn all(&self) -> Vec<UnreadableInput> {
        self.lock().values().cloned().collect()
    }

    /// Records (`Some`) or clears (`None`) `kind`/`name`; whether anything changed.
    fn set(&self, kind: &'static str, name: &str, u: Option<UnreadableInput>) -> bool {
        let mut map = self.lock();
        let key = (kind, name.to_string());
        match u {
            Some(u) => map.insert(key, u.clone()).as_ref() != Some(&u),
            None => map.remove(&key).is_some(),
        }
    }

    /// After a (re-)list: the unreadable objects of `kind` are exactly `listed`.
    fn relisted(&self, kind: &'static str, listed: BTreeMap<String, UnreadableInput>) {
        let mut map = self.lock();
        map.retain(|(k, _), _| *k != kind);
        map.extend(listed.into_iter().map(|(name, u)| ((kind, name), u)));
    }
}

/// Decodes input events of kind `K` from [`DynamicObject`]s, one object at a time.
pub(crate) struct Decoder<K> {
    kind: &'static str,
    unreadable: Unreadable,
    /// The unreadable objects of the list in progress.
    listing: BTreeMap<String, UnreadableInput>,
    /// Drops, from a decoded object, what the assessment never reads (see [`trim_node`]).
    trim: fn(&mut K),
}

impl<K> Decoder<K>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Default,
{
    pub(crate) fn new(kind: &'static str, unreadable: Unreadable, trim: fn(&mut K)) -> Self {
        Decoder {
            kind,
            unreadable,
            listing: BTreeMap::new(),
            trim,
        }
    }

    /// `obj` decoded and trimmed (see [`decode`]).
    fn decode(&self, obj: DynamicObject) -> Result<K, (K, UnreadableInput)> {
        let mut k = decode::<K>(self.kind, obj)?;
        (self.trim)(&mut k);
        Ok(k)
    }

    /// The event for the cache, if any: an unreadable object is recorded and left out (an
    /// update that makes a cached object unreadable removes it from the cache).
    pub(crate) fn event(
        &mut self,
        event: watcher::Event<DynamicObject>,
    ) -> Option<watcher::Event<K>> {
        use watcher::Event;
        match event {
            Event::Init => {
                self.listing.clear();
                Some(Event::Init)
            }
            Event::InitDone => {
                self.unreadable
                    .relisted(self.kind, std::mem::take(&mut self.listing));
                Some(Event::InitDone)
            }
            Event::InitApply(o) => match self.decode(o) {
                Ok(k) => Some(Event::InitApply(k)),
                Err((_, u)) => {
                    if self.unreadable.lock().get(&(self.kind, u.key())) != Some(&u) {
                        warn_unreadable(&u);
                    }
                    self.listing.insert(u.key(), u);
                    None
                }
            },
            Event::Apply(o) => match self.decode(o) {
                Ok(k) => {
                    self.unreadable.set(self.kind, &key_of(&k), None);
                    Some(Event::Apply(k))
                }
                Err((stub, u)) => {
                    if self.unreadable.set(self.kind, &u.key(), Some(u.clone())) {
                        warn_unreadable(&u);
                    }
                    Some(Event::Delete(stub))
                }
            },
            Event::Delete(o) => {
                let k = decode::<K>(self.kind, o).unwrap_or_else(|(stub, _)| stub);
                self.unreadable.set(self.kind, &key_of(&k), None);
                Some(Event::Delete(k))
            }
        }
    }
}

fn name_of<K: Resource>(k: &K) -> &str {
    k.meta().name.as_deref().unwrap_or_default()
}

/// `namespace/name` (`name` when cluster-scoped): the key of [`Unreadable`].
fn key_of<K: Resource>(k: &K) -> String {
    match k.meta().namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{}", name_of(k)),
        _ => name_of(k).to_string(),
    }
}

fn warn_unreadable(u: &UnreadableInput) {
    tracing::warn!(
        kind = %u.kind,
        name = %u.key(),
        problem = %u.problem,
        "input object cannot be read; leaving it out (see its health insight)"
    );
}

/// Longest decoding problem kept (serde's messages are short; a quoted value may not be).
const MAX_PROBLEM: usize = 300;

/// `obj` as a `K`; else a `K` with `obj`'s metadata only (to remove it from a cache) and what
/// is wrong (the path of the field and serde's message, never the object).
pub fn decode<K>(kind: &str, obj: DynamicObject) -> Result<K, (K, UnreadableInput)>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Default,
{
    let metadata = obj.metadata.clone();
    // The object's fields, moved (not copied: a Node's JSON is mostly images and nodeInfo),
    // plus its metadata; `apiVersion` and `kind` are not read.
    let mut value = obj.data;
    if let serde_json::Value::Object(fields) = &mut value {
        fields.insert(
            "metadata".to_string(),
            serde_json::to_value(&metadata).unwrap_or_default(),
        );
    }
    match serde_path_to_error::deserialize::<_, K>(value) {
        Ok(k) => Ok(k),
        Err(e) => {
            let path = e.path().to_string();
            let mut problem = format!("{path}: {}", e.inner());
            if problem.chars().count() > MAX_PROBLEM {
                problem = problem.chars().take(MAX_PROBLEM).collect::<String>() + "...";
            }
            let mut stub = K::default();
            *stub.meta_mut() = metadata;
            let u = UnreadableInput {
                group: K::group(&()).into_owned(),
                kind: kind.to_string(),
                name: name_of(&stub).to_string(),
                place: Box::new(InputPlace {
                    namespace: stub.meta().namespace.clone(),
                    uid: stub.meta().uid.clone(),
                    owners: stub
                        .meta()
                        .owner_references
                        .iter()
                        .flatten()
                        .map(|o| (o.kind.clone(), o.name.clone()))
                        .collect(),
                }),
                problem,
            };
            Err((stub, u))
        }
    }
}

/// The cached objects, owned (the assessment reads slices).
pub fn cloned<K: Clone>(objs: &[Arc<K>]) -> Vec<K> {
    objs.iter().map(|o| (**o).clone()).collect()
}

impl Caches {
    /// The ClusterVersion (`version`, else the only one there is).
    pub fn cluster_version(&self) -> Option<ClusterVersion> {
        cluster_version_of(&self.cluster_versions.state())
    }
}

/// The ClusterVersion among `all` (`version`, else the first).
pub fn cluster_version_of(all: &[Arc<ClusterVersion>]) -> Option<ClusterVersion> {
    all.iter()
        .find(|c| c.metadata.name.as_deref() == Some("version"))
        .or_else(|| all.first())
        .map(|c| (**c).clone())
}

/// Whom a watch's events wake: a notifier per task to wake, handed in by the start-up (this
/// layer knows no reconciler).
#[derive(Clone, Default)]
pub struct Wake {
    /// Woken by every event.
    always: Vec<Arc<Notify>>,
    /// Woken by events on objects labelled `update.openshift.io/reconciler=<name>` only (and by
    /// the start and end of a list): a reconciler's own writes wake it (to confirm them and to
    /// restore what others delete), not the other reconcilers.
    owner: Vec<(&'static str, Arc<Notify>)>,
}

impl Wake {
    /// Wakes every one of `wake` at every event.
    pub fn always(wake: Vec<Arc<Notify>>) -> Self {
        Wake {
            always: wake,
            owner: Vec::new(),
        }
    }

    /// Wakes `always` at every event, and each `(reconciler, wake)` of `owners` at the events
    /// on objects labelled `update.openshift.io/reconciler=<reconciler>` (and at the start and
    /// end of a list): for our own objects.
    pub fn owned(always: Vec<Arc<Notify>>, owners: Vec<(&'static str, Arc<Notify>)>) -> Self {
        Wake {
            always,
            owner: owners,
        }
    }

    /// Notifies whom `event` concerns.
    fn notify<K: Cached>(&self, event: &watcher::Event<K>) {
        let label = match event {
            watcher::Event::Apply(o) | watcher::Event::Delete(o) | watcher::Event::InitApply(o) => {
                Some(o.cached_label(labels::RECONCILER))
            }
            watcher::Event::Init | watcher::Event::InitDone => None,
        };
        for w in &self.always {
            w.notify_one();
        }
        for (name, w) in &self.owner {
            if label.is_none_or(|l| l == Some(*name)) {
                w.notify_one();
            }
        }
    }
}

/// Whom each watch of [`start`] wakes: the routing of wake-ups, as data. The start-up builds it
/// from the reconcilers it runs (`crate::app`); the watches only notify.
#[derive(Clone, Default)]
pub struct Routes {
    /// ClusterVersion events.
    pub cluster_versions: Wake,
    /// ClusterOperator events.
    pub cluster_operators: Wake,
    /// MachineConfigPool events.
    pub pools: Wake,
    /// MachineConfig events.
    pub machine_configs: Wake,
    /// Node events.
    pub nodes: Wake,
    /// Events of the machine-config operator's Deployment.
    pub mco_deployments: Wake,
    /// Events of our UpdateInsights.
    pub insights: Wake,
    /// Events of our ControlPlaneUpdateStatus objects.
    pub control_plane_statuses: Wake,
    /// Events of our WorkerPoolUpdateStatus objects.
    pub worker_pool_statuses: Wake,
}

/// Starts every watch (as tasks of `w`, named `watch/<Kind>`), each waking whom `routes`
/// says; the caches list in the background ([`Caches::synced`] tells when all did).
///
/// Our progress insights are cached projected ([`crate::cache::insights::ProgressEntry`]: names and
/// fingerprints) unless `keep_progress` (the hub sync copies them whole,
/// `--hub-include-progress`).
pub fn start(mut w: Watches<'_>, namespace: &str, routes: Routes, keep_progress: bool) -> Caches {
    let labelled = watcher::Config::default().labels(&format!(
        "{}={}",
        labels::MANAGED_BY,
        labels::MANAGED_BY_VALUE
    ));
    let all = watcher::Config::default;
    let unreadable = w.unreadable.clone();
    let client = w.client.clone();
    Caches {
        cluster_versions: w.spawn_input_in(
            None,
            routes.cluster_versions,
            "ClusterVersion",
            keep_all,
        ),
        cluster_operators: w.spawn_input_in(
            None,
            routes.cluster_operators,
            "ClusterOperator",
            keep_all,
        ),
        pools: w.spawn_input_in(None, routes.pools, "MachineConfigPool", keep_all),
        machine_configs: w.spawn_metadata(
            Api::all(client.clone()),
            all(),
            routes.machine_configs,
            "MachineConfig",
        ),
        nodes: w.spawn_nodes(routes.nodes),
        // One object, by name (the Role grants nothing else: config/rbac/mco_deployment.yaml).
        mco_deployments: w.spawn(
            Api::namespaced(client.clone(), MCO_NAMESPACE),
            all().fields(&format!("metadata.name={MCO_DEPLOYMENT}")),
            routes.mco_deployments,
            "Deployment",
        ),
        insights: w.spawn_insights(
            Api::namespaced(client.clone(), namespace),
            labelled.clone(),
            routes.insights,
            keep_progress,
        ),
        control_plane_statuses: w.spawn(
            Api::namespaced(client.clone(), namespace),
            labelled.clone(),
            routes.control_plane_statuses,
            "ControlPlaneUpdateStatus",
        ),
        worker_pool_statuses: w.spawn(
            Api::namespaced(client.clone(), namespace),
            labelled,
            routes.worker_pool_statuses,
            "WorkerPoolUpdateStatus",
        ),
        unreadable,
    }
}

impl Caches {
    /// Resolves once every cache has listed once (`Err`: a watch task ended before).
    pub async fn synced(&self) -> Result<(), reflector::store::WriterDropped> {
        self.cluster_versions.wait_until_ready().await?;
        self.cluster_operators.wait_until_ready().await?;
        self.pools.wait_until_ready().await?;
        self.machine_configs.wait_until_ready().await?;
        self.nodes.wait_until_ready().await?;
        self.mco_deployments.wait_until_ready().await?;
        self.insights.wait_until_ready().await?;
        self.control_plane_statuses.wait_until_ready().await?;
        self.worker_pool_statuses.wait_until_ready().await
    }
}

/// A MachineConfig from its metadata (all the assessment reads: its name and the
/// release-version annotation), as watched metadata-only: rendered MachineConfigs carry the
/// whole ignition config, which we never read.
pub fn machine_config(meta: PartialObjectMeta<MachineConfig>) -> MachineConfig {
    MachineConfig {
        metadata: meta.metadata,
    }
}

/// Keeps nothing more than decoding kept (the input types declare only what is read).
pub(crate) fn keep_all<K>(_: &mut K) {}

/// Objects per page of an input's initial list: the watcher holds a whole page as decoded
/// JSON (`DynamicObject`s) until it has handed every object on, so the page, not the cache,
/// sets the list's peak at thousands of Nodes (500, kube's default, cost ~MiB of
/// transient JSON per list at 5,000 nodes; see `docs/benchmarks.md`).
pub const INPUT_PAGE_SIZE: u32 = 100;

/// Drops what we never read from cached objects (managed fields are large).
pub(crate) fn slim<K: Resource>(obj: &mut K) {
    let meta = obj.meta_mut();
    meta.managed_fields = None;
    if let Some(a) = meta.annotations.as_mut() {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
}

/// `event` with its objects mapped by `f` (a projection for a cache).
fn map_event<A, B>(event: watcher::Event<A>, mut f: impl FnMut(A) -> B) -> watcher::Event<B> {
    use watcher::Event;
    match event {
        Event::Apply(o) => Event::Apply(f(o)),
        Event::Delete(o) => Event::Delete(f(o)),
        Event::InitApply(o) => Event::InitApply(f(o)),
        Event::Init => Event::Init,
        Event::InitDone => Event::InitDone,
    }
}

/// Shortest and longest wait between two attempts of a failing watch.
const WATCH_RETRY_MIN: Duration = Duration::from_millis(500);
const WATCH_RETRY_MAX: Duration = Duration::from_secs(5);

/// Retry delays of a failing watch: 0.5 s doubling up to 5 s, back to 0.5 s after a minute
/// without errors (kube's [`watcher::ExponentialBackoff`] in a [`ResetTimerBackoff`]). kube's
/// default goes up to 30 s (client-go's choice for thousands of clients); one controller with a
/// handful of watches can afford to notice a returning API server within seconds: that is when
/// an admin looks. No jitter: kube's adds up to +100 %, which would break the 5 s cap.
fn watch_backoff() -> ResetTimerBackoff<watcher::ExponentialBackoff> {
    let exponential = backon::ExponentialBuilder::default()
        .with_min_delay(WATCH_RETRY_MIN)
        .with_max_delay(WATCH_RETRY_MAX)
        .with_factor(2.0)
        .without_max_times();
    ResetTimerBackoff::new(exponential.into(), Duration::from_secs(60))
}

/// What an admin should check when a watch fails, from the error.
pub fn watch_error_hint(e: &watcher::Error) -> &'static str {
    let code = match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s))
        | watcher::Error::WatchError(s) => Some(s.code),
        watcher::Error::NoResourceVersion => {
            return "the API server sent no resourceVersion; does this resource support watch?";
        }
        watcher::Error::InitialListFailed(kube::Error::SerdeError(_))
        | watcher::Error::WatchStartFailed(kube::Error::SerdeError(_))
        | watcher::Error::WatchFailed(kube::Error::SerdeError(_)) => {
            return "an object of this kind cannot be decoded (a field of an unexpected type): \
                    check the objects of this kind, not the connection";
        }
        _ => None,
    };
    match code {
        Some(404) => "the kind is not served: is its CRD installed?",
        Some(401) => "the API server does not accept our credentials",
        Some(403) => "RBAC: is the controller allowed to list and watch it?",
        Some(410) => "the watch expired (resourceVersion too old); re-listing",
        Some(c) if c >= 500 => "the API server is failing (see its logs)",
        Some(_) => "the API server rejected the request",
        None => "cannot reach the API server (down, restarting, or the network)",
    }
}

/// At most one log line per watch and error in this interval (the repeats are counted).
pub const ERROR_LOG_INTERVAL: Duration = Duration::from_secs(60);
/// Longest error text logged or reported (an error never carries a whole object).
const MAX_ERROR: usize = 500;

/// Rate limit of a watch's error logs: the same error at most once per interval.
#[derive(Default)]
struct ErrorLog {
    last: Option<(String, Instant)>,
    suppressed: u64,
}

impl ErrorLog {
    /// Whether to log `error` at `now`, and how many repeats were suppressed before it.
    fn admit(&mut self, error: &str, now: Instant) -> Option<u64> {
        if let Some((last, at)) = &self.last
            && last == error
            && now.saturating_duration_since(*at) < ERROR_LOG_INTERVAL
        {
            self.suppressed += 1;
            return None;
        }
        self.last = Some((error.to_string(), now));
        Some(std::mem::take(&mut self.suppressed))
    }
}

/// A watch error as logged: credentials redacted, cut to [`MAX_ERROR`] characters.
fn error_text(e: &watcher::Error) -> String {
    let text = redact_urls_in(&e.to_string());
    if text.chars().count() > MAX_ERROR {
        text.chars().take(MAX_ERROR).collect::<String>() + "..."
    } else {
        text
    }
}

/// Longest wait for the first passes before our UpdateInsights are watched (see
/// [`Watches::spawn_insights`]); under the writers' trust in their own writes
/// ([`crate::runtime::writer::PENDING_TTL`]).
pub const FIRST_BURST_MAX: Duration = Duration::from_secs(20);

/// The events of `events` up to the end of its first list (`InitDone`), then nothing: the
/// next item would open the watch.
fn until_listed<S, K>(events: S) -> impl futures::Stream<Item = S::Item> + Send
where
    S: futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send,
    K: Send,
{
    futures::stream::unfold(
        (Box::pin(events), false),
        |(mut events, listed)| async move {
            if listed {
                return None;
            }
            let item = events.next().await?;
            let listed = matches!(item, Ok(watcher::Event::InitDone));
            Some((item, (events, listed)))
        },
    )
}

/// Spawns the watches as supervised tasks.
pub struct Watches<'a> {
    pub(crate) tasks: &'a mut Tasks,
    pub(crate) health: Arc<Health>,
    pub(crate) client: kube::Client,
    pub(crate) unreadable: Unreadable,
}

/// A kind as a watch names it (task `watch/<what>`, metrics, logs) and what is trimmed of its
/// objects before they are stored.
pub(crate) struct Trimmed<K> {
    pub(crate) what: &'static str,
    pub(crate) trim: fn(&mut K),
}

impl<'a> Watches<'a> {
    /// Watches run as tasks of `tasks`, read with `client`, report to `health`; their
    /// undecodable objects are counted in a new [`Unreadable`].
    pub fn new(client: &kube::Client, health: &Arc<Health>, tasks: &'a mut Tasks) -> Self {
        Watches {
            tasks,
            health: health.clone(),
            client: client.clone(),
            unreadable: Unreadable::default(),
        }
    }

    /// A watch of an input kind in `namespace` (`None`: all), decoded object by object (see
    /// [`Decoder`]), each object trimmed by `trim` to what the assessment reads.
    pub(crate) fn spawn_input_in<K>(
        &mut self,
        namespace: Option<&str>,
        wake: Wake,
        what: &'static str,
        trim: fn(&mut K),
    ) -> Store<K>
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
        let stream = self.input_events(namespace, what, trim);
        self.cache_slimmed(stream, wake, what)
    }

    /// The events of an input kind in `namespace` (`None`: all), decoded object by object (see
    /// [`Decoder`]), each object trimmed by `trim`.
    fn input_events<K>(
        &self,
        namespace: Option<&str>,
        what: &'static str,
        trim: fn(&mut K),
    ) -> impl futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Default + Send + 'static,
    {
        let ar = ApiResource::erase::<K>(&());
        let api: Api<DynamicObject> = match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        let mut decoder = Decoder::<K>::new(what, self.unreadable.clone(), trim);
        watcher(api, watcher::Config::default().page_size(INPUT_PAGE_SIZE))
            .map_ok(move |ev| decoder.event(ev))
            .try_filter_map(|ev| std::future::ready(Ok(ev)))
    }

    /// A watch of full objects of kind `K` into a cache.
    pub(crate) fn spawn<K>(
        &mut self,
        api: Api<K>,
        config: watcher::Config,
        wake: Wake,
        what: &'static str,
    ) -> Store<K>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    {
        self.cache_slimmed(watcher(api, config), wake, what)
    }

    /// A watch of objects of kind `K` into a cache, each object trimmed by `trim` before it is
    /// stored.
    pub(crate) fn spawn_trimmed<K>(
        &mut self,
        api: Api<K>,
        config: watcher::Config,
        wake: Wake,
        kind: Trimmed<K>,
    ) -> Store<K>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    {
        let trim = kind.trim;
        let events = watcher(api, config).map_ok(move |ev| ev.modify(trim));
        self.cache_slimmed(events, wake, kind.what)
    }

    /// A watch of our UpdateInsights, cached as [`CachedInsight`]s (progress insights
    /// projected unless `keep_progress`).
    ///
    /// Listed at once, but watched only once the first passes ended (or after
    /// [`FIRST_BURST_MAX`]), from a second list: a cold start writes thousands of insights, and
    /// a watch open meanwhile has the API server send each write back as an event while it
    /// takes the next ones (at 5,000 nodes, alternated quick runs: 0.88–0.96 of the raw write
    /// rate this way, 0.80–0.96 with the watch open from the start; `docs/benchmarks.md`).
    /// Meanwhile the writers trust their own writes ([`crate::runtime::writer::PENDING_TTL`],
    /// longer than the wait); an insight deleted or edited by someone else meanwhile shows in
    /// the second list and is written again. Both lists read pages of [`INPUT_PAGE_SIZE`]
    /// (kube's default 500 raised the cold start's peak RSS from 42 to 52 MiB at 5,000 nodes).
    pub(crate) fn spawn_insights(
        &mut self,
        api: Api<UpdateInsight>,
        config: watcher::Config,
        wake: Wake,
        keep_progress: bool,
    ) -> Store<CachedInsight> {
        let cached = move |mut o: UpdateInsight| {
            slim(&mut o);
            CachedInsight::new(o, keep_progress)
        };
        let health = self.health.clone();
        let first_burst = async move {
            let _ = tokio::time::timeout(FIRST_BURST_MAX, health.first_passes()).await;
            tracing::debug!("first passes ended: watching our UpdateInsights");
        };
        let config = config.page_size(INPUT_PAGE_SIZE);
        let events = until_listed(watcher(api.clone(), config.clone()))
            .chain(futures::stream::once(first_burst).filter_map(|()| std::future::ready(None)))
            .chain(watcher(api, config))
            .map_ok(move |ev| map_event(ev, cached));
        self.cache(events, wake, "UpdateInsight")
    }

    /// The watch of Nodes, decoded one at a time (see [`Decoder`]), cached as
    /// [`CompactNode`]s.
    fn spawn_nodes(&mut self, wake: Wake) -> Store<CompactNode> {
        // `CompactNode::new` trims.
        let stream = self
            .input_events::<Node>(None, "Node", keep_all)
            .map_ok(|ev| map_event(ev, CompactNode::new));
        self.cache(stream, wake, "Node")
    }

    /// A metadata-only watch of kind `K` (`PartialObjectMetadata` on the wire), cached as `K`
    /// built from the metadata by [`machine_config`].
    fn spawn_metadata(
        &mut self,
        api: Api<PartialObjectMeta<MachineConfig>>,
        config: watcher::Config,
        wake: Wake,
        what: &'static str,
    ) -> Store<MachineConfig> {
        let stream = watcher(api, config).map_ok(|ev| map_event(ev, machine_config));
        self.cache_slimmed(stream, wake, what)
    }

    /// [`Watches::cache`] of objects [`slim`]med first.
    fn cache_slimmed<K, S>(&mut self, events: S, wake: Wake, what: &'static str) -> Store<K>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
        S: futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    {
        self.cache(events.modify(slim::<K>), wake, what)
    }

    fn cache<K, S>(&mut self, events: S, wake: Wake, what: &'static str) -> Store<K>
    where
        K: Lookup<DynamicType = ()> + Cached + Clone + Debug + Send + Sync + 'static,
        S: futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    {
        let (reader, writer) = reflector::store();
        // `reflector`, not `.reflect`: the latter wants a `Resource`, the former any `Lookup`.
        let stream = reflector::reflector(writer, events.backoff(watch_backoff()));
        let health = self.health.clone();
        health.cache_started(what);
        self.tasks.spawn(format!("watch/{what}"), async move {
            let mut stream = std::pin::pin!(stream);
            let mut failing = false;
            let mut errors = ErrorLog::default();
            while let Some(ev) = stream.next().await {
                match ev {
                    Ok(ev) => {
                        // `Init` comes before every (re-)list attempt, successful or not: only a
                        // listed or watched object, or the end of a list, shows a recovery.
                        if failing && !matches!(ev, watcher::Event::Init) {
                            tracing::info!(kind = what, "watch recovered");
                            failing = false;
                            errors = ErrorLog::default();
                        }
                        if matches!(ev, watcher::Event::InitDone) {
                            health.cache_synced(what);
                        }
                        wake.notify(&ev);
                    }
                    Err(e) => {
                        // The watcher retries with backoff; say why, once per interval and error.
                        let text = error_text(&e);
                        if let Some(suppressed) = errors.admit(&text, Instant::now()) {
                            tracing::warn!(kind = what, error = %text, hint = watch_error_hint(&e), suppressed, "watch failing; retrying with backoff");
                        }
                        health.cache_error(what, format!("{text} ({})", watch_error_hint(&e)));
                        failing = true;
                    }
                }
            }
        });
        reader
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;
    use kube::runtime::utils::Backoff;
    use update_status_assess::nodes::trim_node;

    fn insight(reconciler: &str) -> UpdateInsight {
        let mut o = UpdateInsight::new("x", Default::default());
        o.metadata.labels = Some([(labels::RECONCILER.to_string(), reconciler.to_string())].into());
        o
    }

    /// Which of (control-plane, worker-pools, hub) an insight event wakes.
    fn woken(event: &watcher::Event<UpdateInsight>) -> [bool; 3] {
        let (cp, wp, hub) = (
            Arc::new(Notify::new()),
            Arc::new(Notify::new()),
            Arc::new(Notify::new()),
        );
        let wake = Wake {
            always: vec![hub.clone()],
            owner: vec![("control-plane", cp.clone()), ("worker-pools", wp.clone())],
        };
        wake.notify(event);
        // A stored permit makes `notified()` ready at once.
        [&cp, &wp, &hub].map(|n| {
            let mut f = std::pin::pin!(n.notified());
            f.as_mut().enable()
        })
    }

    #[test]
    fn our_objects_wake_only_the_reconciler_that_wrote_them() {
        use watcher::Event;
        assert_eq!(
            woken(&Event::Apply(insight("worker-pools"))),
            [false, true, true]
        );
        assert_eq!(
            woken(&Event::Delete(insight("control-plane"))),
            [true, false, true]
        );
        assert_eq!(
            woken(&Event::InitApply(insight("alerts"))),
            [false, false, true]
        );
        assert_eq!(
            woken(&Event::Apply(UpdateInsight::new(
                "unlabelled",
                Default::default()
            ))),
            [false, false, true]
        );
        assert_eq!(
            woken(&Event::InitDone),
            [true, true, true],
            "a relist may hide deletions"
        );
    }

    fn dynamic(json: serde_json::Value) -> DynamicObject {
        serde_json::from_value(json).expect("a DynamicObject decodes from any object")
    }

    fn pool(name: &str, selector: serde_json::Value) -> DynamicObject {
        dynamic(serde_json::json!({
            "apiVersion": "machineconfiguration.openshift.io/v1",
            "kind": "MachineConfigPool",
            "metadata": {"name": name, "uid": format!("uid-{name}")},
            "spec": {"nodeSelector": selector, "paused": false},
        }))
    }

    #[test]
    fn one_unreadable_object_is_skipped_and_named_the_others_are_cached() {
        use watcher::Event;
        let unreadable = Unreadable::default();
        let mut d =
            Decoder::<MachineConfigPool>::new("MachineConfigPool", unreadable.clone(), keep_all);
        let good = serde_json::json!({"matchLabels": {"node-role.kubernetes.io/worker": ""}});
        let bad = serde_json::json!({"matchLabels": "node-role=infra"});
        assert!(matches!(d.event(Event::Init), Some(Event::Init)));
        let Some(Event::InitApply(p)) = d.event(Event::InitApply(pool("worker", good.clone())))
        else {
            panic!("a good pool is cached");
        };
        assert_eq!(p.metadata.name.as_deref(), Some("worker"));
        assert!(
            d.event(Event::InitApply(pool("infra", bad.clone())))
                .is_none()
        );
        assert!(
            unreadable.all().is_empty(),
            "published at the end of the list"
        );
        assert!(matches!(d.event(Event::InitDone), Some(Event::InitDone)));
        let all = unreadable.all();
        assert_eq!(all.len(), 1);
        assert_eq!(
            (all[0].kind.as_str(), all[0].name.as_str()),
            ("MachineConfigPool", "infra")
        );
        assert_eq!(all[0].group, "machineconfiguration.openshift.io");
        assert!(
            all[0]
                .problem
                .starts_with("spec.nodeSelector.matchLabels: invalid type"),
            "{}",
            all[0].problem
        );
        assert!(!all[0].problem.contains("uid-infra"), "no object dump");

        // A cached pool that turns unreadable leaves the cache; fixed, it comes back.
        let Some(Event::Delete(stub)) = d.event(Event::Apply(pool("worker", bad))) else {
            panic!("an unreadable update removes the cached object");
        };
        assert_eq!(stub.metadata.uid.as_deref(), Some("uid-worker"));
        assert_eq!(unreadable.all().len(), 2);
        assert!(matches!(
            d.event(Event::Apply(pool("infra", good.clone()))),
            Some(Event::Apply(_))
        ));
        assert!(matches!(
            d.event(Event::Delete(pool("worker", serde_json::json!(7)))),
            Some(Event::Delete(_))
        ));
        assert!(unreadable.all().is_empty());
    }

    #[test]
    fn nodes_keep_what_the_assessment_reads_and_bad_nodes_are_still_named() {
        use watcher::Event;
        let node = |conditions: serde_json::Value| {
            dynamic(serde_json::json!({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": "worker-0",
                    "uid": "uid-0",
                    "resourceVersion": "7",
                    "creationTimestamp": "2026-01-01T00:00:00Z",
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Machine", "name": "m", "uid": "u"}],
                    "labels": {"node-role.kubernetes.io/worker": "", "kubernetes.io/hostname": "worker-0"},
                    "annotations": {
                        "machineconfiguration.openshift.io/state": "Done",
                        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                    },
                },
                "spec": {"unschedulable": true, "providerID": "aws:///x"},
                "status": {
                    "conditions": conditions,
                    "images": [{"names": ["quay.io/a@sha256:1"], "sizeBytes": 1}],
                    "nodeInfo": {"kubeletVersion": "v1.28.0"},
                },
            }))
        };
        let unreadable = Unreadable::default();
        let mut d = Decoder::<Node>::new("Node", unreadable.clone(), trim_node);
        let Some(Event::Apply(n)) = d.event(Event::Apply(node(
            serde_json::json!([{"type": "Ready", "status": "True", "reason": "KubeletReady"}]),
        ))) else {
            panic!("a good node is cached");
        };
        assert!(n.spec.unschedulable);
        assert_eq!(n.status.conditions[0].type_, "Ready");
        assert!(
            n.status.conditions[0].reason.is_empty(),
            "reasons are not read"
        );
        assert_eq!(
            (
                n.metadata.uid.as_deref(),
                n.metadata.resource_version.as_deref()
            ),
            (Some("uid-0"), Some("7"))
        );
        assert_eq!(n.metadata.labels.as_ref().map(|l| l.len()), Some(2));
        assert_eq!(
            n.metadata
                .annotations
                .as_ref()
                .map(|a| a.keys().map(String::as_str).collect::<Vec<_>>()),
            Some(vec!["machineconfiguration.openshift.io/state"])
        );
        assert!(n.metadata.owner_references.is_none() && n.metadata.creation_timestamp.is_none());

        // Trimming comes after decoding: a wrong type is still an unreadable Node, named.
        let Some(Event::Delete(stub)) = d.event(Event::Apply(node(serde_json::json!("Ready"))))
        else {
            panic!("an unreadable node leaves the cache");
        };
        assert_eq!(stub.metadata.name.as_deref(), Some("worker-0"));
        let all = unreadable.all();
        assert_eq!(
            (all.len(), all[0].kind.as_str(), all[0].name.as_str()),
            (1, "Node", "worker-0")
        );
        assert!(
            all[0].problem.starts_with("status.conditions"),
            "{}",
            all[0].problem
        );
    }

    #[test]
    fn repeated_errors_are_logged_once_per_interval_with_a_count() {
        let mut log = ErrorLog::default();
        let t0 = Instant::now();
        assert_eq!(log.admit("boom", t0), Some(0));
        assert_eq!(log.admit("boom", t0 + Duration::from_secs(1)), None);
        assert_eq!(log.admit("boom", t0 + Duration::from_secs(2)), None);
        assert_eq!(log.admit("other", t0 + Duration::from_secs(3)), Some(2));
        assert_eq!(log.admit("other", t0 + Duration::from_secs(4)), None);
        assert_eq!(log.admit("other", t0 + ERROR_LOG_INTERVAL * 2), Some(1));
    }

    #[test]
    fn machine_configs_keep_name_and_annotations() {
        let mut meta = PartialObjectMeta::<MachineConfig>::default();
        meta.metadata.name = Some("rendered-worker-1".into());
        meta.metadata.annotations = Some(
            [(
                update_status_api::input::MC_RELEASE_IMAGE_VERSION.to_string(),
                "4.15.0".to_string(),
            )]
            .into(),
        );
        let mc = machine_config(meta);
        assert_eq!(mc.metadata.name.as_deref(), Some("rendered-worker-1"));
        assert_eq!(
            mc.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(update_status_api::input::MC_RELEASE_IMAGE_VERSION))
                .map(String::as_str),
            Some("4.15.0")
        );
    }

    fn api(code: u16) -> kube::Error {
        kube::Error::Api(Status::failure("x", "y").with_code(code).boxed())
    }

    #[test]
    fn watch_retries_back_off_to_five_seconds_and_reset() {
        let mut b = watch_backoff();
        let secs: Vec<f64> = (0..7)
            .filter_map(|_| b.next())
            .map(|d| d.as_secs_f64())
            .collect();
        assert_eq!(secs, [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]);
        b.reset();
        let first = b.next().map(|d| d.as_secs_f64()).unwrap_or_default();
        assert!((0.45..0.55).contains(&first), "{first}");
    }

    #[test]
    fn watch_errors_say_what_to_check() {
        assert!(watch_error_hint(&watcher::Error::InitialListFailed(api(404))).contains("CRD"));
        assert!(watch_error_hint(&watcher::Error::WatchStartFailed(api(403))).contains("RBAC"));
        assert!(watch_error_hint(&watcher::Error::WatchFailed(api(401))).contains("credentials"));
        assert!(
            watch_error_hint(&watcher::Error::WatchError(
                Status::failure("gone", "Expired").with_code(410).boxed()
            ))
            .contains("expired")
        );
        assert!(watch_error_hint(&watcher::Error::InitialListFailed(api(503))).contains("failing"));
        let unreachable = kube::Error::Service("connection refused".into());
        assert!(
            watch_error_hint(&watcher::Error::InitialListFailed(unreachable))
                .contains("cannot reach the API server")
        );
        assert!(watch_error_hint(&watcher::Error::NoResourceVersion).contains("resourceVersion"));
        let undecodable =
            serde_json::from_str::<MachineConfigPool>("{\"spec\": 1}").expect_err("not a pool");
        let hint = watch_error_hint(&watcher::Error::InitialListFailed(kube::Error::SerdeError(
            undecodable,
        )));
        assert!(hint.contains("cannot be decoded"), "{hint}");
        assert!(!hint.contains("reach"), "{hint}");
    }

    #[tokio::test]
    async fn the_first_list_ends_without_opening_the_watch() {
        use watcher::Event::{Init, InitApply, InitDone};
        let polled_past = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = polled_past.clone();
        let events = futures::stream::iter(vec![
            Ok(Init),
            Ok(InitApply(insight("control-plane"))),
            Ok(InitDone),
        ])
        // What comes after the list: the watch, which must not be asked for anything.
        // (Pending, not an event: a stream that never ends nor yields would hang the test.)
        .chain(futures::stream::poll_fn(move |_| {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            std::task::Poll::<Option<Result<watcher::Event<UpdateInsight>, watcher::Error>>>::Pending
        }));
        let got: Vec<_> =
            tokio::time::timeout(Duration::from_secs(5), until_listed(events).collect())
                .await
                .expect("the stream ends with its first list");
        let kinds: Vec<&str> = got
            .iter()
            .map(|e| match e {
                Ok(Init) => "Init",
                Ok(InitApply(_)) => "InitApply",
                Ok(InitDone) => "InitDone",
                Ok(_) => "other",
                Err(_) => "error",
            })
            .collect();
        assert_eq!(kinds, ["Init", "InitApply", "InitDone"]);
        assert!(
            !polled_past.load(std::sync::atomic::Ordering::SeqCst),
            "the watch was opened"
        );
    }
}
