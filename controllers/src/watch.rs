//! Watches: one reflector (in-memory cache) per input and output kind, each waking the
//! reconcilers that depend on it. No polling: the API server pushes changes.

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::utils::{Backoff, ResetTimerBackoff};
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
    /// The hub sync (woken by any of our objects; idle without `--hub-kubeconfig`).
    pub hub_sync: Arc<Notify>,
}

/// Starts every watch. `synced` turns true when all caches have listed once.
pub fn start(
    client: &kube::Client,
    namespace: &str,
    wakers: &Wakers,
    synced: Arc<AtomicBool>,
) -> Caches {
    let cp = || vec![wakers.control_plane.clone()];
    let both = || vec![wakers.control_plane.clone(), wakers.worker_pools.clone()];
    let hub = || wakers.hub_sync.clone();
    let ours = watcher::Config::default().labels(&format!(
        "{}={}",
        labels::MANAGED_BY,
        labels::MANAGED_BY_VALUE
    ));
    let all = watcher::Config::default;
    let caches = Caches {
        cluster_versions: spawn(Api::all(client.clone()), all(), both(), "ClusterVersion"),
        cluster_operators: spawn(Api::all(client.clone()), all(), cp(), "ClusterOperator"),
        // The control-plane reconciler counts the master pool's nodes itself.
        pools: spawn(Api::all(client.clone()), all(), both(), "MachineConfigPool"),
        machine_configs: spawn(Api::all(client.clone()), all(), both(), "MachineConfig"),
        nodes: spawn(Api::all(client.clone()), all(), both(), "Node"),
        insights: spawn(
            Api::namespaced(client.clone(), namespace),
            ours.clone(),
            vec![
                wakers.control_plane.clone(),
                wakers.worker_pools.clone(),
                hub(),
            ],
            "UpdateInsight",
        ),
        control_plane_statuses: spawn(
            Api::namespaced(client.clone(), namespace),
            ours.clone(),
            vec![wakers.control_plane.clone(), wakers.alerts.clone(), hub()],
            "ControlPlaneUpdateStatus",
        ),
        worker_pool_statuses: spawn(
            Api::namespaced(client.clone(), namespace),
            ours,
            vec![wakers.worker_pools.clone(), wakers.alerts.clone(), hub()],
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

/// Retry delays of a failing watch: 0.5 s doubling up to 5 s, ±10 % jitter, back to 0.5 s after
/// a minute without errors. kube's default goes up to 30 s (client-go's choice for thousands of
/// clients); one controller with a handful of watches can afford to notice a returning API
/// server within seconds: that is when an admin looks.
fn watch_backoff() -> ResetTimerBackoff<WatchBackoff> {
    ResetTimerBackoff::new(WatchBackoff { failures: 0 }, Duration::from_secs(60))
}

/// Exponential backoff without a limit on attempts (see [`watch_backoff`]).
struct WatchBackoff {
    /// Consecutive failures so far.
    failures: u32,
}

impl Iterator for WatchBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        self.failures = self.failures.saturating_add(1);
        Some(crate::clock::backoff(
            WATCH_RETRY_MIN,
            WATCH_RETRY_MAX,
            self.failures,
            crate::clock::jitter(),
        ))
    }
}

impl Backoff for WatchBackoff {
    fn reset(&mut self) {
        self.failures = 0;
    }
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
        .backoff(watch_backoff())
        .modify(slim::<K>)
        .reflect(writer);
    tokio::spawn(async move {
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
                    for w in &wake {
                        w.notify_one();
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn api(code: u16) -> kube::Error {
        kube::Error::Api(Status::failure("x", "y").with_code(code).boxed())
    }

    #[test]
    fn watch_retries_back_off_to_five_seconds_and_reset() {
        let mut b = WatchBackoff { failures: 0 };
        let secs: Vec<f64> = (0..7)
            .filter_map(|_| b.next())
            .map(|d| d.as_secs_f64())
            .collect();
        for (got, want) in secs.iter().zip([0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]) {
            assert!((got / want - 1.0).abs() <= 0.1 + 1e-9, "{secs:?}");
        }
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
