//! Watches: one reflector (in-memory cache) per input and output kind, each waking the
//! reconcilers that depend on it. No polling: the API server pushes changes.

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus, labels,
};
use update_status_api::input::{
    ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool, Node,
};

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
}

/// Starts every watch. `synced` turns true when all caches have listed once.
pub fn start(
    client: &kube::Client,
    namespace: &str,
    wakers: &Wakers,
    synced: Arc<AtomicBool>,
) -> Caches {
    let cp = || vec![wakers.control_plane.clone()];
    let wp = || vec![wakers.worker_pools.clone()];
    let both = || vec![wakers.control_plane.clone(), wakers.worker_pools.clone()];
    let ours = watcher::Config::default().labels(&format!(
        "{}={}",
        labels::MANAGED_BY,
        labels::MANAGED_BY_VALUE
    ));
    let all = watcher::Config::default;
    let caches = Caches {
        cluster_versions: spawn(Api::all(client.clone()), all(), both(), "ClusterVersion"),
        cluster_operators: spawn(Api::all(client.clone()), all(), cp(), "ClusterOperator"),
        pools: spawn(Api::all(client.clone()), all(), wp(), "MachineConfigPool"),
        machine_configs: spawn(Api::all(client.clone()), all(), wp(), "MachineConfig"),
        nodes: spawn(Api::all(client.clone()), all(), wp(), "Node"),
        insights: spawn(
            Api::namespaced(client.clone(), namespace),
            ours.clone(),
            both(),
            "UpdateInsight",
        ),
        control_plane_statuses: spawn(
            Api::namespaced(client.clone(), namespace),
            ours.clone(),
            vec![wakers.control_plane.clone(), wakers.alerts.clone()],
            "ControlPlaneUpdateStatus",
        ),
        worker_pool_statuses: spawn(
            Api::namespaced(client.clone(), namespace),
            ours,
            vec![wakers.worker_pools.clone(), wakers.alerts.clone()],
            "WorkerPoolUpdateStatus",
        ),
    };
    let c = caches.clone();
    tokio::spawn(async move {
        let results = [
            c.cluster_versions.wait_until_ready().await,
            c.cluster_operators.wait_until_ready().await,
            c.pools.wait_until_ready().await,
            c.machine_configs.wait_until_ready().await,
            c.nodes.wait_until_ready().await,
            c.insights.wait_until_ready().await,
            c.control_plane_statuses.wait_until_ready().await,
            c.worker_pool_statuses.wait_until_ready().await,
        ];
        if results.iter().all(Result::is_ok) {
            tracing::info!("all caches synced");
            synced.store(true, Ordering::SeqCst);
        }
    });
    caches
}

/// Drops what we never read from cached objects (managed fields are large).
fn slim<K: Resource>(obj: &mut K) {
    let meta = obj.meta_mut();
    meta.managed_fields = None;
    if let Some(a) = meta.annotations.as_mut() {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
}

fn spawn<K>(
    api: Api<K>,
    config: watcher::Config,
    wake: Vec<Arc<Notify>>,
    what: &'static str,
) -> Store<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store();
    let stream = watcher(api, config)
        .default_backoff()
        .modify(slim::<K>)
        .reflect(writer);
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        let mut failing = false;
        while let Some(ev) = stream.next().await {
            match ev {
                Ok(_) => {
                    if failing {
                        tracing::info!(kind = what, "watch recovered");
                        failing = false;
                    }
                    for w in &wake {
                        w.notify_one();
                    }
                }
                Err(e) => {
                    // The watcher retries with backoff; say why once per outage.
                    if !failing {
                        tracing::warn!(kind = what, error = %e, "watch failing (is the CRD installed and are we allowed to list/watch it?); retrying with backoff");
                        failing = true;
                    }
                }
            }
        }
    });
    reader
}
