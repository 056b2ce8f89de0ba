//! [`ClusterReadings`]: what the control-plane and estimates reconcilers read of the caches for
//! one pass, owned, and the [`ClusterInputs`] the core takes from it.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use update_status_api::input::{
    ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool, McoDeployment,
};
use update_status_assess::{ClusterInputs, McoImage, order};

use super::watch::{Caches, cloned};
use crate::runtime::existing::Cached;

/// The ClusterVersion, ClusterOperators (in oc's order), MachineConfigPools, MachineConfigs and
/// the MCO Deployment, copied out of the caches for one pass.
pub struct ClusterReadings {
    cluster_version: Option<ClusterVersion>,
    cluster_operators: Vec<ClusterOperator>,
    pools: Vec<MachineConfigPool>,
    machine_configs: Vec<MachineConfig>,
    mco: Option<Arc<McoDeployment>>,
}

impl ClusterReadings {
    /// Reads them now.
    pub fn of(caches: &Caches) -> Self {
        let mut cluster_operators: Vec<ClusterOperator> = cloned(&caches.cluster_operators.state());
        // The cache has no order; the API lists by name, and so does `oc`.
        cluster_operators.sort_by(order::compare_operators);
        ClusterReadings {
            cluster_version: caches.cluster_version(),
            cluster_operators,
            pools: cloned(&caches.pools.state()),
            machine_configs: cloned(&caches.machine_configs.state()),
            mco: caches.mco_deployment(),
        }
    }

    /// A fingerprint of what [`ClusterReadings::of`] would read now: each object's kind, name
    /// and resourceVersion, without copying them.
    pub fn key(caches: &Caches) -> u64 {
        fn add<K: Cached>(sum: &mut u64, kind: u8, objs: &[Arc<K>]) {
            for o in objs {
                let mut h = std::hash::DefaultHasher::new();
                (kind, o.cached_name(), o.cached_resource_version()).hash(&mut h);
                *sum = sum.wrapping_add(h.finish());
            }
        }
        let mut sum = 0u64;
        add(&mut sum, 0, &caches.cluster_versions.state());
        add(&mut sum, 1, &caches.cluster_operators.state());
        add(&mut sum, 2, &caches.pools.state());
        add(&mut sum, 3, &caches.machine_configs.state());
        add(&mut sum, 4, &caches.mco_deployments.state());
        sum
    }

    /// The core's inputs (no nodes, alerts or pods: the callers pass the nodes they cache).
    pub fn inputs(&self) -> ClusterInputs<'_> {
        ClusterInputs {
            cluster_version: self.cluster_version.as_ref(),
            cluster_operators: &self.cluster_operators,
            pools: &self.pools,
            machine_configs: &self.machine_configs,
            mco_image: McoImage::of_deployment(self.mco.as_deref()),
            ..Default::default()
        }
    }
}
