//! Watches: one reflector (in-memory cache) per input and output kind, each waking the
//! reconcilers that depend on it. No polling: the API server pushes changes. Our own objects
//! wake the reconciler that wrote them (by their `update.openshift.io/reconciler` label), not
//! every reconciler; MachineConfigs are watched metadata-only.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, Store};
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

use crate::supervisor::Tasks;

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
    /// Nodes (reduced to the fields we read).
    pub nodes: Store<Node>,
    /// The machine-config operator's Deployment (at most the one, reduced to its containers'
    /// names and images).
    pub mco_deployments: Store<McoDeployment>,
    /// Our UpdateInsights in our namespace.
    pub insights: Store<UpdateInsight>,
    /// Our ControlPlaneUpdateStatus objects.
    pub control_plane_statuses: Store<ControlPlaneUpdateStatus>,
    /// Our WorkerPoolUpdateStatus objects.
    pub worker_pool_statuses: Store<WorkerPoolUpdateStatus>,
}

impl Caches {
    /// The ClusterVersion (`version`, else the only one there is).
    pub fn cluster_version(&self) -> Option<ClusterVersion> {
        let all = self.cluster_versions.state();
        all.iter()
            .find(|c| c.metadata.name.as_deref() == Some("version"))
            .or_else(|| all.first())
            .map(|c| (**c).clone())
    }

    /// The machine-config operator's Deployment, if there is one.
    pub fn mco_deployment(&self) -> Option<Arc<McoDeployment>> {
        self.mco_deployments
            .state()
            .into_iter()
            .find(|d| d.metadata.name.as_deref() == Some(MCO_DEPLOYMENT))
    }
}

/// Which reconcilers to wake.
#[derive(Clone, Default)]
pub struct Wakers {
    /// The control-plane reconciler.
    pub control_plane: Arc<Notify>,
    /// The worker-pools reconciler.
    pub worker_pools: Arc<Notify>,
    /// The alerts reconciler (woken by our status objects: the update's start and whether an
    /// update is in progress; it polls Prometheus on its own schedule).
    pub alerts: Arc<Notify>,
    /// The hub sync (woken by any of our objects; idle without `--hub-kubeconfig`).
    pub hub_sync: Arc<Notify>,
}

/// Whom a watch's events wake.
#[derive(Clone, Default)]
struct Wake {
    /// Woken by every event.
    always: Vec<Arc<Notify>>,
    /// Woken by events on objects labelled `update.openshift.io/reconciler=<name>` only (and by
    /// the start and end of a list): a reconciler's own writes wake it (to confirm them and to
    /// restore what others delete), not the other reconcilers.
    owner: Vec<(&'static str, Arc<Notify>)>,
}

impl Wake {
    fn always(wake: Vec<Arc<Notify>>) -> Self {
        Wake {
            always: wake,
            owner: Vec::new(),
        }
    }

    /// Notifies whom `event` concerns.
    fn notify<K: Resource>(&self, event: &watcher::Event<K>) {
        let label = match event {
            watcher::Event::Apply(o) | watcher::Event::Delete(o) | watcher::Event::InitApply(o) => {
                Some(
                    o.meta()
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(labels::RECONCILER)),
                )
            }
            watcher::Event::Init | watcher::Event::InitDone => None,
        };
        for w in &self.always {
            w.notify_one();
        }
        for (name, w) in &self.owner {
            if label.is_none_or(|l| l.is_some_and(|l| l == name)) {
                w.notify_one();
            }
        }
    }
}

/// Starts every watch (as tasks of `tasks`, named `watch/<Kind>`); the caches list in the
/// background ([`Caches::synced`] tells when all did).
pub fn start(client: &kube::Client, namespace: &str, wakers: &Wakers, tasks: &mut Tasks) -> Caches {
    use crate::{control_plane_reconciler as cp, worker_pools_reconciler as wp};
    let inputs = |w: &[&Arc<Notify>]| Wake::always(w.iter().map(|w| Arc::clone(w)).collect());
    let ours = |always: Vec<Arc<Notify>>, owners: &[(&'static str, &Arc<Notify>)]| Wake {
        always,
        owner: owners.iter().map(|(n, w)| (*n, Arc::clone(w))).collect(),
    };
    let (cpw, wpw, hub, alerts) = (
        &wakers.control_plane,
        &wakers.worker_pools,
        &wakers.hub_sync,
        &wakers.alerts,
    );
    let labelled = watcher::Config::default().labels(&format!(
        "{}={}",
        labels::MANAGED_BY,
        labels::MANAGED_BY_VALUE
    ));
    let all = watcher::Config::default;
    let mut w = Watches { tasks };
    Caches {
        cluster_versions: w.spawn(
            Api::all(client.clone()),
            all(),
            inputs(&[cpw, wpw]),
            "ClusterVersion",
        ),
        cluster_operators: w.spawn(
            Api::all(client.clone()),
            all(),
            inputs(&[cpw]),
            "ClusterOperator",
        ),
        pools: w.spawn(
            Api::all(client.clone()),
            all(),
            // The control-plane reconciler counts the master pool's nodes itself.
            inputs(&[cpw, wpw]),
            "MachineConfigPool",
        ),
        machine_configs: w.spawn_metadata(
            Api::all(client.clone()),
            all(),
            inputs(&[cpw, wpw]),
            "MachineConfig",
        ),
        nodes: w.spawn(Api::all(client.clone()), all(), inputs(&[cpw, wpw]), "Node"),
        // One object, by name (the Role grants nothing else: config/rbac/mco_deployment.yaml).
        mco_deployments: w.spawn(
            Api::namespaced(client.clone(), MCO_NAMESPACE),
            all().fields(&format!("metadata.name={MCO_DEPLOYMENT}")),
            inputs(&[cpw]),
            "Deployment",
        ),
        insights: w.spawn(
            Api::namespaced(client.clone(), namespace),
            labelled.clone(),
            ours(vec![hub.clone()], &[(cp::NAME, cpw), (wp::NAME, wpw)]),
            "UpdateInsight",
        ),
        control_plane_statuses: w.spawn(
            Api::namespaced(client.clone(), namespace),
            labelled.clone(),
            ours(vec![alerts.clone(), hub.clone()], &[(cp::NAME, cpw)]),
            "ControlPlaneUpdateStatus",
        ),
        worker_pool_statuses: w.spawn(
            Api::namespaced(client.clone(), namespace),
            labelled,
            ours(vec![alerts.clone(), hub.clone()], &[(wp::NAME, wpw)]),
            "WorkerPoolUpdateStatus",
        ),
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

/// Drops what we never read from cached objects (managed fields are large).
pub(crate) fn slim<K: Resource>(obj: &mut K) {
    let meta = obj.meta_mut();
    meta.managed_fields = None;
    if let Some(a) = meta.annotations.as_mut() {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
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

/// Spawns the watches as supervised tasks.
struct Watches<'a> {
    tasks: &'a mut Tasks,
}

impl Watches<'_> {
    /// A watch of full objects of kind `K` into a cache.
    fn spawn<K>(
        &mut self,
        api: Api<K>,
        config: watcher::Config,
        wake: Wake,
        what: &'static str,
    ) -> Store<K>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    {
        self.cache(watcher(api, config), wake, what)
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
        let stream = watcher(api, config).map_ok(|event| match event {
            watcher::Event::Apply(o) => watcher::Event::Apply(machine_config(o)),
            watcher::Event::Delete(o) => watcher::Event::Delete(machine_config(o)),
            watcher::Event::InitApply(o) => watcher::Event::InitApply(machine_config(o)),
            watcher::Event::Init => watcher::Event::Init,
            watcher::Event::InitDone => watcher::Event::InitDone,
        });
        self.cache(stream, wake, what)
    }

    fn cache<K, S>(&mut self, events: S, wake: Wake, what: &'static str) -> Store<K>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
        S: futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    {
        let (reader, writer) = reflector::store();
        let stream = events
            .backoff(watch_backoff())
            .modify(slim::<K>)
            .reflect(writer);
        self.tasks.spawn(format!("watch/{what}"), async move {
            let mut stream = std::pin::pin!(stream);
            let mut failing = false;
            while let Some(ev) = stream.next().await {
                match ev {
                    Ok(ev) => {
                        // `Init` comes before every (re-)list attempt, successful or not: only a
                        // listed or watched object, or the end of a list, shows a recovery.
                        if failing && !matches!(ev, watcher::Event::Init) {
                            tracing::info!(kind = what, "watch recovered");
                            failing = false;
                        }
                        wake.notify(&ev);
                    }
                    Err(e) => {
                        // The watcher retries with backoff; say why once per outage.
                        if !failing {
                            tracing::warn!(kind = what, error = %e, hint = watch_error_hint(&e), "watch failing; retrying with backoff");
                            failing = true;
                        }
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
    }
}
