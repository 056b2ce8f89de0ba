//! Hosted mode's caches (`--mode=hosted`): the watches of HostedClusters, NodePools, the
//! cluster-api Machines, MachineSets and MachineDeployments, and of our objects labelled
//! `update.openshift.io/cluster=<HostedCluster>`, each waking whom the start-up routes
//! ([`HostedRoutes`]). Each hosted cluster's own ClusterOperators and Nodes are read by
//! [`crate::cache::guest`].

use std::sync::Arc;

use kube::runtime::reflector::{Lookup, Store};
use update_status_api::crd::{ControlPlaneUpdateStatus, WorkerPoolUpdateStatus, labels};
use update_status_api::hosted::{HostedCluster, Machine, MachineDeployment, MachineSet, NodePool};

use crate::cache::insights::CachedInsight;
use crate::cache::watch::{Unreadable, Wake, Watches, keep_all};
use crate::runtime::existing::Cached;

/// The caches of hosted mode.
#[derive(Clone)]
pub struct HostedCaches {
    /// HostedClusters (the watched namespace, or all).
    pub hosted_clusters: Store<HostedCluster>,
    /// NodePools (the watched namespace, or all).
    pub node_pools: Store<NodePool>,
    /// cluster-api Machines (all namespaces: they live in the control-plane namespaces).
    pub machines: Store<Machine>,
    /// cluster-api MachineSets.
    pub machine_sets: Store<MachineSet>,
    /// cluster-api MachineDeployments.
    pub machine_deployments: Store<MachineDeployment>,
    /// Our UpdateInsights labelled with a hosted cluster (progress insights projected unless
    /// the hub sync copies them, see [`crate::cache::insights`]).
    pub insights: Store<CachedInsight>,
    /// Our ControlPlaneUpdateStatus objects labelled with a hosted cluster.
    pub control_plane_statuses: Store<ControlPlaneUpdateStatus>,
    /// Our WorkerPoolUpdateStatus objects labelled with a hosted cluster.
    pub worker_pool_statuses: Store<WorkerPoolUpdateStatus>,
    /// Input objects that cannot be decoded (left out of the caches above).
    pub unreadable: Unreadable,
}

/// Whom each hosted watch wakes: the routing of wake-ups, as data (as standalone's
/// [`crate::cache::watch::Routes`]). The start-up builds it from the tasks it runs
/// (`crate::app::hosted`); the watches only notify.
#[derive(Clone, Default)]
pub struct HostedRoutes {
    /// HostedCluster events.
    pub hosted_clusters: Wake,
    /// NodePool events.
    pub node_pools: Wake,
    /// Events of the cluster-api Machines, MachineSets and MachineDeployments.
    pub machines: Wake,
    /// Events of our UpdateInsights labelled with a hosted cluster.
    pub insights: Wake,
    /// Events of our ControlPlaneUpdateStatus objects labelled with a hosted cluster.
    pub control_plane_statuses: Wake,
    /// Events of our WorkerPoolUpdateStatus objects labelled with a hosted cluster.
    pub worker_pool_statuses: Wake,
}

/// Starts the hosted-mode watches (tasks `watch/<Kind>` of `w`), each waking whom `routes` says.
/// `namespace`: where HostedClusters, NodePools and our objects are watched (`None`: all).
/// Our progress insights are cached projected unless `keep_progress` (the hub sync copies
/// them, `--hub-include-progress`).
pub fn start(
    mut w: Watches<'_>,
    namespace: Option<&str>,
    routes: HostedRoutes,
    keep_progress: bool,
) -> HostedCaches {
    let unreadable = w.unreadable.clone();
    let client = w.client.clone();
    // Ours: written by this controller for some hosted cluster.
    let ours = kube::runtime::watcher::Config::default().labels(&format!(
        "{}={},{}",
        labels::MANAGED_BY,
        labels::MANAGED_BY_VALUE,
        labels::CLUSTER
    ));
    HostedCaches {
        hosted_clusters: w.spawn_input_in(
            namespace,
            routes.hosted_clusters,
            "HostedCluster",
            keep_all,
        ),
        node_pools: w.spawn_input_in(namespace, routes.node_pools, "NodePool", keep_all),
        machines: w.spawn_input_in(None, routes.machines.clone(), "Machine", keep_all),
        machine_sets: w.spawn_input_in(None, routes.machines.clone(), "MachineSet", keep_all),
        machine_deployments: w.spawn_input_in(None, routes.machines, "MachineDeployment", keep_all),
        insights: w.spawn_insights(
            api(&client, namespace),
            ours.clone(),
            routes.insights,
            keep_progress,
        ),
        control_plane_statuses: w.spawn(
            api(&client, namespace),
            ours.clone(),
            routes.control_plane_statuses,
            "ControlPlaneUpdateStatus",
        ),
        worker_pool_statuses: w.spawn(
            api(&client, namespace),
            ours,
            routes.worker_pool_statuses,
            "WorkerPoolUpdateStatus",
        ),
        unreadable,
    }
}

/// `K` in `namespace` (`None`: all namespaces).
fn api<K>(client: &kube::Client, namespace: Option<&str>) -> kube::Api<K>
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>,
{
    match namespace {
        Some(ns) => kube::Api::namespaced(client.clone(), ns),
        None => kube::Api::all(client.clone()),
    }
}

impl HostedCaches {
    /// Resolves once every cache has listed once (`Err`: a watch task ended before).
    pub async fn synced(&self) -> Result<(), kube::runtime::reflector::store::WriterDropped> {
        self.hosted_clusters.wait_until_ready().await?;
        self.node_pools.wait_until_ready().await?;
        self.machines.wait_until_ready().await?;
        self.machine_sets.wait_until_ready().await?;
        self.machine_deployments.wait_until_ready().await?;
        self.insights.wait_until_ready().await?;
        self.control_plane_statuses.wait_until_ready().await?;
        self.worker_pool_statuses.wait_until_ready().await
    }
}

/// The objects of `store` in `namespace` whose `update.openshift.io/cluster` label is `cluster`.
pub fn labelled<K>(store: &Store<K>, namespace: &str, cluster: &str) -> Vec<Arc<K>>
where
    K: Lookup<DynamicType = ()> + Cached + Clone + 'static,
{
    store
        .state()
        .into_iter()
        .filter(|o| {
            o.cached_namespace() == Some(namespace)
                && o.cached_label(labels::CLUSTER) == Some(cluster)
        })
        .collect()
}
