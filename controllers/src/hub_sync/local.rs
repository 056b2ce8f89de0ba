//! The local objects a hub session copies ([`LocalObjects`]): our three kinds, all of them
//! (standalone mode) or those of one hosted cluster (hosted mode).

use std::sync::Arc;

use kube::runtime::reflector::Store;
use update_status_api::crd::{ControlPlaneUpdateStatus, WorkerPoolUpdateStatus};

use crate::cache::insights::CachedInsight;

/// The local objects a hub session copies: our three kinds, every one of them (standalone
/// mode) or those of one hosted cluster (hosted mode: in the HostedCluster's namespace and
/// labelled `update.openshift.io/cluster=<its name>`).
#[derive(Clone)]
pub struct LocalObjects {
    /// Our ControlPlaneUpdateStatus objects.
    pub control_plane_statuses: Store<ControlPlaneUpdateStatus>,
    /// Our WorkerPoolUpdateStatus objects.
    pub worker_pool_statuses: Store<WorkerPoolUpdateStatus>,
    /// Our UpdateInsights (progress insights whole only when they are copied).
    pub insights: Store<CachedInsight>,
    /// `(namespace, name)` of the HostedCluster whose objects are copied; `None`: all.
    hosted_cluster: Option<(String, String)>,
}

impl LocalObjects {
    /// Every object of the three stores.
    pub fn all(
        control_plane_statuses: Store<ControlPlaneUpdateStatus>,
        worker_pool_statuses: Store<WorkerPoolUpdateStatus>,
        insights: Store<CachedInsight>,
    ) -> Self {
        LocalObjects {
            control_plane_statuses,
            worker_pool_statuses,
            insights,
            hosted_cluster: None,
        }
    }

    /// Only the objects of the HostedCluster `namespace/name`.
    pub fn scoped(&self, namespace: &str, name: &str) -> Self {
        LocalObjects {
            hosted_cluster: Some((namespace.to_string(), name.to_string())),
            ..self.clone()
        }
    }

    /// The objects of `store` in scope.
    pub(super) fn select<K>(&self, store: &Store<K>) -> Vec<Arc<K>>
    where
        K: kube::runtime::reflector::Lookup<DynamicType = ()>
            + crate::runtime::existing::Cached
            + Clone
            + 'static,
    {
        match &self.hosted_cluster {
            None => store.state(),
            Some((ns, name)) => crate::cache::hosted::labelled(store, ns, name),
        }
    }
}

impl From<&crate::cache::watch::Caches> for LocalObjects {
    fn from(c: &crate::cache::watch::Caches) -> Self {
        LocalObjects::all(
            c.control_plane_statuses.clone(),
            c.worker_pool_statuses.clone(),
            c.insights.clone(),
        )
    }
}
