//! [`ClusterReadings`]: what the control-plane and estimates reconcilers read of the caches for
//! one pass, owned, and the [`ClusterInputs`] the core takes from it.
//!
//! The stores read are listed once (`readings!` below): the struct, the copy
//! ([`ClusterReadings::of`]) and its fingerprint ([`ClusterReadings::key`], which spares the
//! estimates a pass when nothing they read changed) are all made from that list, so an input
//! cannot be read without being fingerprinted. Each field is read from its own store only.

use std::sync::Arc;

use update_status_api::input::{
    ClusterOperator, ClusterVersion, MCO_DEPLOYMENT, MachineConfig, MachineConfigPool,
    McoDeployment,
};
use update_status_assess::{ClusterInputs, McoImage, order};

use super::fingerprint;
use super::watch::{Caches, cloned, cluster_version_of};

/// `ClusterReadings` from its list of `field: Type = store => read;`: `read` makes the field
/// from the objects of `caches.store` (and nothing else); [`ClusterReadings::key`] fingerprints
/// every `store` of the list, [`ClusterReadings::STORES`] names them.
macro_rules! readings {
    ($( $(#[$doc:meta])* $field:ident: $ty:ty = $store:ident => $read:path; )+) => {
        /// The inputs of one pass, copied out of the caches (see the module's documentation).
        pub struct ClusterReadings {
            $( $(#[$doc])* $field: $ty, )+
        }

        impl ClusterReadings {
            /// The stores of [`Caches`] read, in the order of the list.
            pub const STORES: &[&str] = &[$( stringify!($store) ),+];

            /// Reads them now.
            pub fn of(caches: &Caches) -> Self {
                ClusterReadings {
                    $( $field: $read(&caches.$store.state()), )+
                }
            }

            /// A fingerprint of what [`ClusterReadings::of`] would read now: each object's
            /// store, name and resourceVersion, without copying them.
            pub fn key(caches: &Caches) -> u64 {
                let mut kinds = 0u8..;
                let mut sum = 0u64;
                $(
                    let kind = kinds.next().unwrap_or(u8::MAX);
                    sum = sum.wrapping_add(fingerprint::objects(kind, &caches.$store.state()));
                )+
                sum
            }
        }
    };
}

readings! {
    /// The ClusterVersion (`version`, else the only one there is).
    cluster_version: Option<ClusterVersion> = cluster_versions => cluster_version_of;
    /// The ClusterOperators, in oc's order.
    cluster_operators: Vec<ClusterOperator> = cluster_operators => operators_in_order;
    /// The MachineConfigPools.
    pools: Vec<MachineConfigPool> = pools => cloned;
    /// The MachineConfigs (their metadata).
    machine_configs: Vec<MachineConfig> = machine_configs => cloned;
    /// The machine-config operator's Deployment.
    mco: Option<Arc<McoDeployment>> = mco_deployments => mco_deployment_of;
}

/// The machine-config operator's Deployment among `all`, if there.
fn mco_deployment_of(all: &[Arc<McoDeployment>]) -> Option<Arc<McoDeployment>> {
    all.iter()
        .find(|d| d.metadata.name.as_deref() == Some(MCO_DEPLOYMENT))
        .cloned()
}

/// The ClusterOperators of `all`, copied, by name: the cache has no order; the API lists by
/// name, and so does `oc`.
fn operators_in_order(all: &[Arc<ClusterOperator>]) -> Vec<ClusterOperator> {
    let mut operators = cloned(all);
    operators.sort_by(order::compare_operators);
    operators
}

impl ClusterReadings {
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

#[cfg(test)]
mod tests {
    use kube::runtime::reflector::{self, Store, store::Writer};
    use kube::runtime::watcher;

    use super::*;
    use crate::cache::watch::Unreadable;

    /// A store with its writer.
    fn store<K>() -> (Store<K>, Writer<K>)
    where
        K: kube::Resource<DynamicType = ()> + Clone,
    {
        reflector::store()
    }

    /// `o` named `name` at resourceVersion `rv`, applied by `w`.
    fn put<K>(w: &mut Writer<K>, mut o: K, name: &str, rv: &str)
    where
        K: kube::Resource<DynamicType = ()> + Clone,
    {
        o.meta_mut().name = Some(name.into());
        o.meta_mut().resource_version = Some(rv.into());
        w.apply_watcher_event(&watcher::Event::Apply(o));
    }

    /// Every store of [`Caches`] either is an input of a pass, which must be in
    /// [`ClusterReadings::STORES`] and move [`ClusterReadings::key`] when one of its objects
    /// changes, or is not, said here: `Caches` is built without `..`, so a store added to it
    /// does not compile here until it is sorted into one or the other.
    #[test]
    fn every_input_store_is_read_and_fingerprinted() {
        let (cv, mut cv_w) = store::<ClusterVersion>();
        let (co, mut co_w) = store::<ClusterOperator>();
        let (mcp, mut mcp_w) = store::<MachineConfigPool>();
        let (mc, mut mc_w) = store::<MachineConfig>();
        let (mco, mut mco_w) = store::<McoDeployment>();
        let caches = Caches {
            cluster_versions: cv,
            cluster_operators: co,
            pools: mcp,
            machine_configs: mc,
            mco_deployments: mco,
            // Not inputs of the readings: the nodes (the callers pass theirs, the estimates
            // fingerprint them by `CompactNode::timing_key`), our own objects, the unreadable.
            nodes: reflector::store().0,
            insights: reflector::store().0,
            control_plane_statuses: reflector::store().0,
            worker_pool_statuses: reflector::store().0,
            unreadable: Unreadable::default(),
        };
        let inputs = [
            "cluster_versions",
            "cluster_operators",
            "pools",
            "machine_configs",
            "mco_deployments",
        ];
        assert_eq!(ClusterReadings::STORES, inputs);

        let mut keys = vec![ClusterReadings::key(&caches)];
        let mut moved = |what: &str| {
            let key = ClusterReadings::key(&caches);
            assert!(!keys.contains(&key), "a change of {what} leaves the key");
            keys.push(key);
        };
        put(&mut cv_w, ClusterVersion::default(), "version", "1");
        moved("cluster_versions");
        put(&mut co_w, ClusterOperator::default(), "dns", "1");
        moved("cluster_operators");
        put(&mut co_w, ClusterOperator::default(), "dns", "2");
        moved("a cluster operator's resourceVersion");
        put(&mut mcp_w, MachineConfigPool::default(), "worker", "1");
        moved("pools");
        put(&mut mc_w, MachineConfig::default(), "rendered-worker", "1");
        moved("machine_configs");
        put(&mut mco_w, McoDeployment::default(), MCO_DEPLOYMENT, "1");
        moved("mco_deployments");

        let r = ClusterReadings::of(&caches);
        assert!(r.cluster_version.is_some());
        assert_eq!(r.cluster_operators.len(), 1);
        assert_eq!((r.pools.len(), r.machine_configs.len()), (1, 1));
        assert!(r.mco.is_some());
    }
}
