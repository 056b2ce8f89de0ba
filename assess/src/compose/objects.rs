//! The desired objects as values: an object as update-status wants it ([`Desired`]), the labels
//! every object carries ([`Labels`], [`base_labels`]) and every object for one cluster
//! ([`DesiredCluster`]).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use update_status_api::crd::{
    ControlPlaneUpdateStatusStatus, UpdateInsightStatus, WorkerPoolUpdateStatusStatus,
};

use crate::naming;

/// An object as update-status wants it.
#[derive(Clone, Debug, PartialEq)]
pub struct Desired<S> {
    /// Object name.
    pub name: String,
    /// Our labels (the writer adds the reconciler and managed-by labels).
    pub labels: BTreeMap<String, String>,
    /// The single owner (design.md), when known.
    pub owner: Option<OwnerReference>,
    /// Status content.
    pub status: S,
}

impl Desired<UpdateInsightStatus> {
    /// An UpdateInsight: named from its content (and `identity`, see
    /// [`naming::insight_name`]), labelled from its content ([`naming::insight_labels`]) plus
    /// `base` (the cluster labels), with its single owner.
    pub fn insight(
        status: UpdateInsightStatus,
        identity: &str,
        base: &Labels,
        owner: Option<OwnerReference>,
    ) -> Self {
        let mut labels = naming::insight_labels(&status);
        labels.extend(base.iter().map(|(k, v)| (k.clone(), v.clone())));
        Desired {
            name: naming::insight_name(&status, identity),
            labels,
            owner,
            status,
        }
    }
}

/// Labels every object carries besides its own ([`base_labels`]).
pub type Labels = BTreeMap<String, String>;

/// The labels every object carries: the cluster label when the cluster ID is known.
pub fn base_labels(cluster_id: Option<&str>) -> Labels {
    naming::cluster_labels(cluster_id)
}

/// Every object update-status wants for one cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DesiredCluster {
    /// The ControlPlaneUpdateStatus `cluster` (`None` without a ClusterVersion).
    pub control_plane: Option<Desired<ControlPlaneUpdateStatusStatus>>,
    /// One WorkerPoolUpdateStatus per non-master pool, in pool order.
    pub worker_pools: Vec<Desired<WorkerPoolUpdateStatusStatus>>,
    /// Every UpdateInsight: the control plane's, each node's (input order), the pools', then
    /// the alerts'.
    pub insights: Vec<Desired<UpdateInsightStatus>>,
}
