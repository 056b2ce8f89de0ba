//! Names, labels, owners and resource references of the objects of one hosted cluster.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use update_status_api::crd::{ResourceRef, UpdateInsightStatus};
use update_status_api::hosted::{HYPERSHIFT_GROUP, HostedCluster, NodePool};

use crate::compose::{Desired, Labels};
use crate::naming;

/// Longest object name.
const MAX_NAME: usize = 253;

/// The labels every object of this hosted cluster carries: `update.openshift.io/cluster=<name>`.
pub(super) fn hosted_labels(hc: &HostedCluster) -> Labels {
    naming::cluster_labels(Some(hc.name()))
}

/// The HostedCluster as an insight resource.
pub fn hosted_cluster_ref(hc: &HostedCluster) -> ResourceRef {
    ResourceRef {
        group: HYPERSHIFT_GROUP.to_string(),
        kind: "HostedCluster".to_string(),
        name: hc.name().to_string(),
        namespace: Some(hc.namespace().to_string()).filter(|n| !n.is_empty()),
    }
}

/// A NodePool as an insight resource.
pub fn node_pool_ref(np: &NodePool) -> ResourceRef {
    ResourceRef {
        group: HYPERSHIFT_GROUP.to_string(),
        kind: "NodePool".to_string(),
        name: np.name().to_string(),
        namespace: np.metadata.namespace.clone().filter(|n| !n.is_empty()),
    }
}

/// An UpdateInsight of this hosted cluster: named as standalone, then prefixed with the
/// cluster name (several HostedClusters share a namespace, and node or operator names repeat
/// across them), labelled as standalone plus `base`.
pub(super) fn insight(
    status: UpdateInsightStatus,
    hc: &HostedCluster,
    base: &Labels,
    owner: Option<OwnerReference>,
) -> Desired<UpdateInsightStatus> {
    let mut d = Desired::insight(status, "", base, owner);
    d.name = prefixed(hc, &d.name);
    d
}

/// `<cluster>-<name>`, DNS-safe.
pub(super) fn prefixed(hc: &HostedCluster, name: &str) -> String {
    naming::dns_subdomain(&format!("{}-{name}", hc.name()), MAX_NAME)
}
