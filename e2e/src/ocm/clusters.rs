//! ManagedClusters and Placements on the hub: a cluster joined, its claims, the clusters a
//! Placement selects.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::Value;

use crate::ocm::conditions::condition_status;
use crate::ocm::env::OcmEnv;
use crate::ocm::error::{OcmError, api_err, timeout_err};
use crate::ocm::kinds;
use crate::wait::poll_until;

/// Waits until the ManagedCluster `cluster` is joined (`ManagedClusterJoined`) and available
/// (`ManagedClusterConditionAvailable`).
pub async fn wait_cluster_joined(
    hub: &Client,
    cluster: &str,
    timeout: Duration,
) -> Result<DynamicObject, OcmError> {
    let api: Api<DynamicObject> = Api::all_with(hub.clone(), &kinds::managed_cluster());
    poll_until(
        timeout,
        &format!("ManagedCluster {cluster} to be joined and available"),
        || async {
            let mc = api.get_opt(cluster).await.ok()??;
            (condition_status(&mc, "ManagedClusterJoined").as_deref() == Some("True")
                && condition_status(&mc, "ManagedClusterConditionAvailable").as_deref()
                    == Some("True"))
            .then_some(mc)
        },
    )
    .await
    .map_err(timeout_err)
}
/// The clusters a Placement `namespace/name` selects now: the `status.decisions` of its
/// PlacementDecisions (label `cluster.open-cluster-management.io/placement=<name>`).
pub async fn placement_decisions(
    hub: &Client,
    namespace: &str,
    name: &str,
) -> Result<BTreeSet<String>, OcmError> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), namespace, &kinds::placement_decision());
    let list = api
        .list(&ListParams::default().labels(&format!(
            "cluster.open-cluster-management.io/placement={name}"
        )))
        .await
        .map_err(api_err(format!(
            "listing the PlacementDecisions of Placement {namespace}/{name}"
        )))?;
    Ok(list
        .items
        .iter()
        .filter_map(|d| d.data.pointer("/status/decisions")?.as_array().cloned())
        .flatten()
        .filter_map(|d| d.get("clusterName")?.as_str().map(String::from))
        .collect())
}

/// The claims of ManagedCluster `cluster` on the hub (`status.clusterClaims`: name → value).
pub async fn cluster_claims(
    hub: &Client,
    cluster: &str,
) -> Result<BTreeMap<String, String>, OcmError> {
    let api: Api<DynamicObject> = Api::all_with(hub.clone(), &kinds::managed_cluster());
    let mc = api
        .get(cluster)
        .await
        .map_err(api_err(format!("reading ManagedCluster {cluster}")))?;
    Ok(claims_of(&mc))
}

/// The claims a ManagedCluster `mc` carries (`status.clusterClaims`: name → value).
pub fn claims_of(mc: &DynamicObject) -> BTreeMap<String, String> {
    mc.data
        .pointer("/status/clusterClaims")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some((
                c.get("name")?.as_str()?.to_string(),
                c.get("value")?.as_str()?.to_string(),
            ))
        })
        .collect()
}

/// The namespaces OpenShift has that the agent's manifests put objects in (a Role reading the
/// machine-config operator's Deployment; the console's dashboard ConfigMap): a managed cluster
/// of these tests is a plain control plane, whose ManifestWork could not apply them without.
pub const OPENSHIFT_NAMESPACES: [&str; 2] = [
    "openshift-machine-config-operator",
    "openshift-config-managed",
];

/// Creates [`OPENSHIFT_NAMESPACES`] on `cluster` (those missing).
pub async fn create_openshift_namespaces(env: &OcmEnv, cluster: &str) -> Result<(), OcmError> {
    for ns in OPENSHIFT_NAMESPACES {
        match env
            .kubectl_cluster(cluster, ["create", "namespace", ns])
            .await
        {
            Err(e) if !e.to_string().contains("AlreadyExists") => return Err(e),
            _ => {}
        }
    }
    Ok(())
}
