//! Read-side views of the HyperShift and cluster-api objects hosted mode reads on a management
//! cluster (`HostedCluster`, `NodePool`, `Machine`, `MachineSet`, `MachineDeployment`): only
//! the fields the assessment uses (see `docs/hosted.md` and the reference hosted.md §2–§6).
//!
//! Every field is optional or defaulted and unknown fields are ignored, so a partial, older or
//! newer object still deserializes (`null` reads as the default, a malformed timestamp as
//! unknown). The types are made with `kube::CustomResource` (schema disabled: the real CRDs are
//! vendored in `testdata/hosted/crds/`), so they implement [`kube::Resource`] and can be watched.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::input::{Condition, Release, UpdateHistory, nullable};

/// API group of HostedCluster and NodePool.
pub const HYPERSHIFT_GROUP: &str = "hypershift.openshift.io";
/// API group of Machine, MachineSet and MachineDeployment.
pub const CAPI_GROUP: &str = "cluster.x-k8s.io";
/// Machine annotation: `<namespace>/<nodepool>` of the NodePool the Machine belongs to.
pub const NODE_POOL_ANNOTATION: &str = "hypershift.openshift.io/nodePool";
/// Node label: the NodePool name (set once by the HCCO).
pub const NODE_POOL_LABEL: &str = "hypershift.openshift.io/nodePool";
/// Machine annotation (HyperShift since 2026-03): the OCP version the Machine runs.
pub const RELEASE_VERSION_ANNOTATION: &str = "hypershift.openshift.io/release-version";
/// MachineSet annotation (InPlace): the config-version hash the pool goes to.
pub const TARGET_CONFIG_VERSION_ANNOTATION: &str =
    "hypershift.openshift.io/nodePoolTargetConfigVersion";
/// MachineSet annotation (InPlace): the config-version hash the pool is at.
pub const CURRENT_CONFIG_VERSION_ANNOTATION: &str =
    "hypershift.openshift.io/nodePoolCurrentConfigVersion";
/// MachineSet annotation (InPlace): a node of the pool is degraded (message).
pub const UPGRADE_IN_PROGRESS_FALSE_ANNOTATION: &str =
    "hypershift.openshift.io/nodePoolUpgradeInProgressFalse";
/// HostedCluster annotation forcing an update past `ClusterVersionUpgradeable=False`.
pub const FORCE_UPGRADE_TO_ANNOTATION: &str = "hypershift.openshift.io/force-upgrade-to";

/// The namespace of a HostedCluster's control plane: `<namespace>-<name>`, every `.` of the
/// name replaced by `-` (HyperShift's `HostedControlPlaneNamespace`).
pub fn control_plane_namespace(namespace: &str, name: &str) -> String {
    format!("{namespace}-{}", name.replace('.', "-"))
}

/// The NodePool (`namespace`, `name`) a Machine belongs to, from its
/// [`NODE_POOL_ANNOTATION`]; `None` without it or when it is not `<namespace>/<name>`.
pub fn node_pool_of_machine(m: &Machine) -> Option<(&str, &str)> {
    let value = annotation(&m.metadata, NODE_POOL_ANNOTATION)?;
    let (ns, name) = value.split_once('/')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains('/')).then_some((ns, name))
}

/// An annotation's value, if present.
pub fn annotation<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> Option<&'a str> {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

// ---------------------------------------------------------------------------------------------
// HostedCluster
// ---------------------------------------------------------------------------------------------

read_kind! {
    /// `hypershift.openshift.io/v1beta1` HostedCluster spec (only what updates read).
    HostedClusterSpec,
    kube(
        group = "hypershift.openshift.io", version = "v1beta1", kind = "HostedCluster",
        plural = "hostedclusters", namespaced, status = "HostedClusterStatus"
    ) {
        /// The desired OCP release of the control plane (`spec.release.image`).
        #[serde(default, deserialize_with = "nullable")]
        pub release: ReleaseImage,
        /// Release override for the management-side components only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub control_plane_release: Option<ReleaseImage>,
        /// RFC3339 time or `true`: reconciliation paused until then.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub paused_until: Option<String>,
        /// The update channel.
        #[serde(default, deserialize_with = "nullable")]
        pub channel: String,
    }
}

/// A release reference by image (`spec.release`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ReleaseImage {
    /// Release image pull spec.
    #[serde(default, deserialize_with = "nullable")]
    pub image: String,
}

/// Status of a HostedCluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HostedClusterStatus {
    /// A verbatim copy of the hosted ClusterVersion's status (absent before the first report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<HostedClusterVersionStatus>,
    /// Management-side components only (HyperShift since 2026-03; absent on older ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_version: Option<ControlPlaneVersionStatus>,
    /// `metav1.Condition`s: `Available`, `Progressing`, `Degraded`, `ClusterVersion*`,
    /// `ValidReleaseImage`, `ReconciliationActive`, ...
    #[serde(default, deserialize_with = "nullable")]
    pub conditions: Vec<Condition>,
    /// The admin kubeconfig Secret (same namespace, key [`KUBECONFIG_SECRET_KEY`]), once the
    /// HyperShift operator has published it (read with `--hosted-kubeconfig-access`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubeconfig: Option<SecretName>,
}

/// The key of the admin kubeconfig in the Secret `status.kubeconfig` names.
pub const KUBECONFIG_SECRET_KEY: &str = "kubeconfig";

/// A reference to a Secret in the same namespace (`corev1.LocalObjectReference`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct SecretName {
    /// Secret name.
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
}

/// HostedCluster `status.version` (configv1 `ClusterVersionStatus`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HostedClusterVersionStatus {
    /// The release the hosted CVO reconciles to.
    #[serde(default, deserialize_with = "nullable")]
    pub desired: Release,
    /// Update history, newest first.
    #[serde(default, deserialize_with = "nullable")]
    pub history: Vec<UpdateHistory>,
    /// Recommended updates.
    #[serde(default, deserialize_with = "nullable")]
    pub available_updates: Vec<Release>,
    /// Conditional updates (only their release is read).
    #[serde(default, deserialize_with = "nullable")]
    pub conditional_updates: Vec<ConditionalUpdate>,
}

/// One conditional update (only the release is read).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ConditionalUpdate {
    /// The release.
    #[serde(default, deserialize_with = "nullable")]
    pub release: Release,
}

/// HostedCluster `status.controlPlaneVersion`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ControlPlaneVersionStatus {
    /// The release the management-side components go to.
    #[serde(default, deserialize_with = "nullable")]
    pub desired: Release,
    /// History, newest first.
    #[serde(default, deserialize_with = "nullable")]
    pub history: Vec<UpdateHistory>,
}

impl HostedCluster {
    /// Name (empty if unset).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    /// Namespace (empty if unset).
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
    /// The first condition of a type.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
    }
    /// The name of its admin kubeconfig Secret (`status.kubeconfig.name`), when published.
    pub fn kubeconfig_secret(&self) -> Option<&str> {
        self.status
            .as_ref()
            .and_then(|s| s.kubeconfig.as_ref())
            .map(|k| k.name.as_str())
            .filter(|n| !n.is_empty())
    }
}

// ---------------------------------------------------------------------------------------------
// NodePool
// ---------------------------------------------------------------------------------------------

read_kind! {
    /// `hypershift.openshift.io/v1beta1` NodePool spec (only what updates read).
    NodePoolSpec,
    kube(
        group = "hypershift.openshift.io", version = "v1beta1", kind = "NodePool",
        plural = "nodepools", namespaced, status = "NodePoolStatus"
    ) {
        /// The HostedCluster this pool belongs to (same namespace).
        #[serde(default, deserialize_with = "nullable")]
        pub cluster_name: String,
        /// The release the pool's nodes go to.
        #[serde(default, deserialize_with = "nullable")]
        pub release: ReleaseImage,
        /// Desired node count (exclusive with `autoScaling`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub replicas: Option<i32>,
        /// Autoscaling bounds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub auto_scaling: Option<NodePoolAutoScaling>,
        /// How updates are applied.
        #[serde(default, deserialize_with = "nullable")]
        pub management: NodePoolManagement,
        /// RFC3339 time or `true`: reconciliation paused until then.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub paused_until: Option<String>,
    }
}

/// NodePool `spec.autoScaling`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct NodePoolAutoScaling {
    /// Minimum nodes.
    #[serde(default)]
    pub min: i32,
    /// Maximum nodes.
    #[serde(default)]
    pub max: i32,
}

/// NodePool `spec.management`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolManagement {
    /// `Replace` or `InPlace`.
    #[serde(default, deserialize_with = "nullable")]
    pub upgrade_type: String,
}

/// Status of a NodePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolStatus {
    /// The latest applied release (changes only when a rollout completes).
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
    /// Available nodes.
    #[serde(default)]
    pub replicas: i32,
    /// Conditions (`UpdatingVersion`, `UpdatingConfig`, `Ready`, `AllMachinesReady`, ...).
    #[serde(default, deserialize_with = "nullable")]
    pub conditions: Vec<Condition>,
}

/// `Replace`.
pub const UPGRADE_TYPE_REPLACE: &str = "Replace";
/// `InPlace`.
pub const UPGRADE_TYPE_IN_PLACE: &str = "InPlace";

impl NodePool {
    /// Name (empty if unset).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    /// The first condition of a type.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
    }
    /// `spec.management.upgradeType == InPlace`.
    pub fn is_in_place(&self) -> bool {
        self.spec.management.upgrade_type == UPGRADE_TYPE_IN_PLACE
    }
    /// `status.version` (empty when not reported yet).
    pub fn current_version(&self) -> &str {
        self.status
            .as_ref()
            .map(|s| s.version.as_str())
            .unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------------
// cluster-api
// ---------------------------------------------------------------------------------------------

/// A cluster-api kind of replicated machines (MachineSet, MachineDeployment): its spec has the
/// desired count and the machines' template.
macro_rules! capi_machines {
    ($(#[$meta:meta])* $spec:ident: $kind:tt, $plural:tt, $status:tt) => {
        read_kind! {
            $(#[$meta])*
            $spec,
            kube(
                group = "cluster.x-k8s.io", version = "v1beta1", kind = $kind, plural = $plural,
                namespaced, status = $status
            ) {
                /// Desired machines.
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub replicas: Option<i32>,
                /// Template of the machines (its `spec.version` is the target).
                #[serde(default, deserialize_with = "nullable")]
                pub template: MachineTemplate,
            }
        }
    };
}

read_kind! {
    /// `cluster.x-k8s.io/v1beta1` Machine spec.
    MachineSpec,
    kube(
        group = "cluster.x-k8s.io", version = "v1beta1", kind = "Machine", plural = "machines",
        namespaced, status = "MachineStatus"
    ) {
        /// The OCP version the Machine was created for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub version: Option<String>,
    }
}

/// Status of a Machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MachineStatus {
    /// The Node this Machine became.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_ref: Option<NodeRef>,
    /// `Pending`, `Provisioning`, `Provisioned`, `Running`, `Deleting`, `Deleted`, `Failed`.
    #[serde(default, deserialize_with = "nullable")]
    pub phase: String,
    /// CAPI conditions (`Ready`, `NodeHealthy`, `DrainingSucceeded`, ...).
    #[serde(default, deserialize_with = "nullable")]
    pub conditions: Vec<Condition>,
}

/// A reference to the Node of a Machine.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct NodeRef {
    /// Node name.
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
}

impl Machine {
    /// Name (empty if unset).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    /// The last condition of a type.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()
            .and_then(|s| s.conditions.iter().rev().find(|c| c.type_ == type_))
    }
    /// The version it runs: annotation `release-version`, else `spec.version`.
    pub fn version(&self) -> Option<&str> {
        annotation(&self.metadata, RELEASE_VERSION_ANNOTATION)
            .or(self.spec.version.as_deref())
            .filter(|v| !v.is_empty())
    }
    /// Being deleted.
    pub fn is_deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }
    /// The Node name, when the Machine has one.
    pub fn node_name(&self) -> Option<&str> {
        self.status
            .as_ref()
            .and_then(|s| s.node_ref.as_ref())
            .map(|r| r.name.as_str())
            .filter(|n| !n.is_empty())
    }
}

/// A MachineSet/MachineDeployment template's `spec.version`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MachineTemplate {
    /// Template spec.
    #[serde(default, deserialize_with = "nullable")]
    pub spec: MachineSpec,
}

capi_machines! {
    /// `cluster.x-k8s.io/v1beta1` MachineSet spec (InPlace pools).
    MachineSetSpec: "MachineSet", "machinesets", "MachineSetStatus"
}

/// Status of a MachineSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetStatus {
    /// Machines.
    #[serde(default)]
    pub replicas: i32,
    /// Ready machines.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Available machines.
    #[serde(default)]
    pub available_replicas: i32,
}

capi_machines! {
    /// `cluster.x-k8s.io/v1beta1` MachineDeployment spec (Replace pools).
    MachineDeploymentSpec: "MachineDeployment", "machinedeployments", "MachineDeploymentStatus"
}

/// Status of a MachineDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentStatus {
    /// Machines.
    #[serde(default)]
    pub replicas: i32,
    /// Machines with the current template.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Ready machines.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Available machines.
    #[serde(default)]
    pub available_replicas: i32,
    /// Unavailable machines.
    #[serde(default)]
    pub unavailable_replicas: i32,
}

/// The template version of a MachineSet or MachineDeployment (empty → `None`).
pub fn template_version(t: &MachineTemplate) -> Option<&str> {
    t.spec.version.as_deref().filter(|v| !v.is_empty())
}

/// Annotations of an object as a map (empty without any).
pub fn annotations(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> BTreeMap<String, String> {
    meta.annotations.clone().unwrap_or_default()
}

/// Reads an RFC3339 `pausedUntil` (`true` → paused with no end): `Some(None)` paused for ever,
/// `Some(Some(t))` paused until `t`, `None` not paused (or unparsable).
pub fn paused_until(value: Option<&str>) -> Option<Option<Timestamp>> {
    let v = value?.trim();
    if v.eq_ignore_ascii_case("true") {
        return Some(None);
    }
    v.parse::<Timestamp>().ok().map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_plane_namespace_replaces_dots() {
        assert_eq!(
            control_plane_namespace("clusters", "a.b.c"),
            "clusters-a-b-c"
        );
    }

    #[test]
    fn partial_objects_deserialize() {
        let hc: HostedCluster = serde_json::from_value(serde_json::json!({
            "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
            "metadata": {"name": "h", "namespace": "clusters"},
            "spec": {"release": {"image": "quay.io/x:4.15.1"}, "platform": {"type": "AWS"}},
            "status": {"version": {"history": null}, "conditions": [{"type": "Progressing", "status": "False", "lastTransitionTime": "garbage"}]}
        }))
        .expect("hc");
        assert_eq!(hc.spec.release.image, "quay.io/x:4.15.1");
        assert!(
            hc.condition("Progressing")
                .is_some_and(|c| c.last_transition_time.is_none())
        );
        let m: Machine = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "m", "annotations": {NODE_POOL_ANNOTATION: "clusters/np"}},
            "spec": {"clusterName": "infra", "version": "4.15.1"}
        }))
        .expect("machine");
        assert_eq!(node_pool_of_machine(&m), Some(("clusters", "np")));
        assert_eq!(m.version(), Some("4.15.1"));
    }
}
