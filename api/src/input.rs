//! Typed views of the OpenShift objects update-status reads: only the fields the assessment uses.
//!
//! Every field is optional or defaulted and unknown fields are ignored, so a partial, older or
//! newer object still deserializes. `null` is read as the field's default and a malformed
//! timestamp as "unknown" (`None`): one odd field never makes a whole object unreadable.
//! The types implement [`kube::Resource`] so the controller can watch them directly.

use std::borrow::Cow;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::core::{ClusterResourceScope, NamespaceResourceScope, Resource};
use serde::{Deserialize, Deserializer, Serialize};

/// Annotation prefix of the machine-config daemon and controller on Nodes and MachineConfigs.
pub const MCO_PREFIX: &str = "machineconfiguration.openshift.io/";
/// Node annotation: rendered MachineConfig currently applied.
pub const NODE_CURRENT_CONFIG: &str = "machineconfiguration.openshift.io/currentConfig";
/// Node annotation: rendered MachineConfig the node should reach.
pub const NODE_DESIRED_CONFIG: &str = "machineconfiguration.openshift.io/desiredConfig";
/// Node annotation: machine-config daemon state (`Working`, `Done`, `Degraded`, `Rebooting`, `Unreconcilable`).
pub const NODE_STATE: &str = "machineconfiguration.openshift.io/state";
/// Node annotation: human-readable reason set with a Degraded/Unreconcilable state.
pub const NODE_REASON: &str = "machineconfiguration.openshift.io/reason";
/// Node annotation: requested drain (`drain-<x>` / `uncordon-<x>`).
pub const NODE_DESIRED_DRAIN: &str = "machineconfiguration.openshift.io/desiredDrain";
/// Node annotation: last drain request the controller completed.
pub const NODE_LAST_APPLIED_DRAIN: &str = "machineconfiguration.openshift.io/lastAppliedDrain";
/// Node annotation: layered OS image currently applied.
pub const NODE_CURRENT_IMAGE: &str = "machineconfiguration.openshift.io/currentImage";
/// Node annotation: layered OS image the node should reach.
pub const NODE_DESIRED_IMAGE: &str = "machineconfiguration.openshift.io/desiredImage";
/// MachineConfig annotation: the OpenShift release a rendered config belongs to.
pub const MC_RELEASE_IMAGE_VERSION: &str =
    "machineconfiguration.openshift.io/release-image-version";
/// Pool label: on-cluster layering enabled.
pub const POOL_LAYERING_ENABLED: &str = "machineconfiguration.openshift.io/layering-enabled";
/// Pool annotation: newest image equivalent to the rendered config (layered pools).
pub const POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG: &str =
    "machineconfiguration.openshift.io/newestImageEquivalentConfig";
/// A ClusterOperator is part of the release payload iff it has an annotation with one of these prefixes.
pub const PLATFORM_OPERATOR_ANNOTATION_PREFIXES: [&str; 2] = [
    "include.release.openshift.io/",
    "exclude.release.openshift.io/",
];

/// Reads `null` as the type's default (a `deserialize_with` of the input types and of the
/// snapshot reader's fast path).
pub fn nullable<'de, D, T>(de: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(de)?.unwrap_or_default())
}

/// Reads a timestamp leniently: missing, `null`, empty or malformed → `None`.
fn lenient_time<'de, D>(de: D) -> Result<Option<Timestamp>, D::Error>
where
    D: Deserializer<'de>,
{
    let raw = Option::<serde_json::Value>::deserialize(de)?;
    Ok(match raw {
        Some(serde_json::Value::String(s)) => s.parse::<Timestamp>().ok(),
        _ => None,
    })
}

/// Reads a boolean leniently (`true`, `"true"`); anything else is `false`.
fn lenient_bool<'de, D>(de: D) -> Result<bool, D::Error>
where
    D: Deserializer<'de>,
{
    let raw = Option::<serde_json::Value>::deserialize(de)?;
    Ok(match raw {
        Some(serde_json::Value::Bool(b)) => b,
        Some(serde_json::Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    })
}

/// A status condition as OpenShift and core Kubernetes objects carry it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type, e.g. `Progressing`.
    #[serde(rename = "type", default, deserialize_with = "nullable")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default, deserialize_with = "nullable")]
    pub status: String,
    /// Machine-readable reason.
    #[serde(default, deserialize_with = "nullable")]
    pub reason: String,
    /// Human-readable message.
    #[serde(default, deserialize_with = "nullable")]
    pub message: String,
    /// When the status last changed.
    #[serde(
        default,
        deserialize_with = "lenient_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_transition_time: Option<Timestamp>,
}

impl Condition {
    /// `status == "True"`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
    /// `status == "False"`.
    pub fn is_false(&self) -> bool {
        self.status == "False"
    }
}

/// First condition of a type (ClusterVersion semantics).
pub fn first_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Last condition of a type (ClusterOperator and Node semantics: a repeated type's last entry wins).
pub fn last_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().rev().find(|c| c.type_ == type_)
}

macro_rules! cluster_resource {
    ($ty:ty, $group:literal, $version:literal, $kind:literal, $plural:literal) => {
        cluster_resource!($ty, $group, $version, $kind, $plural, ClusterResourceScope);
    };
    ($ty:ty, $group:literal, $version:literal, $kind:literal, $plural:literal, $scope:ty) => {
        impl Resource for $ty {
            type DynamicType = ();
            type Scope = $scope;
            fn kind(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind)
            }
            fn group(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($group)
            }
            fn version(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($version)
            }
            fn api_version(_: &()) -> Cow<'_, str> {
                if $group.is_empty() {
                    Cow::Borrowed($version)
                } else {
                    Cow::Owned(format!("{}/{}", $group, $version))
                }
            }
            fn plural(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($plural)
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// `config.openshift.io/v1` ClusterVersion (singleton `version`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ClusterVersion {
    /// Object metadata.
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: ObjectMeta,
    /// Observed state.
    #[serde(default, deserialize_with = "nullable")]
    pub status: ClusterVersionStatus,
}
cluster_resource!(
    ClusterVersion,
    "config.openshift.io",
    "v1",
    "ClusterVersion",
    "clusterversions"
);

/// Status of a ClusterVersion.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ClusterVersionStatus {
    /// The release the cluster is reconciling to.
    #[serde(default, deserialize_with = "nullable")]
    pub desired: Release,
    /// Update history, newest first.
    #[serde(default, deserialize_with = "nullable")]
    pub history: Vec<UpdateHistory>,
    /// Conditions (`Progressing`, `Failing`, ...); the first of a type wins.
    #[serde(default, deserialize_with = "nullable")]
    pub conditions: Vec<Condition>,
}

/// A release: version and image pull spec.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Release {
    /// Semantic version, e.g. `4.14.1`.
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
    /// Release image pull spec.
    #[serde(default, deserialize_with = "nullable")]
    pub image: String,
}

/// One entry of ClusterVersion `status.history`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UpdateHistory {
    /// `Partial` or `Completed`.
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
    /// When the update started.
    #[serde(
        default,
        deserialize_with = "lenient_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub started_time: Option<Timestamp>,
    /// When the update completed (unset while partial).
    #[serde(
        default,
        deserialize_with = "lenient_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub completion_time: Option<Timestamp>,
    /// Target version of this entry.
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
    /// Target image of this entry.
    #[serde(default, deserialize_with = "nullable")]
    pub image: String,
}

impl UpdateHistory {
    /// `state == "Completed"`.
    pub fn is_completed(&self) -> bool {
        self.state == "Completed"
    }
    /// `state == "Partial"`.
    pub fn is_partial(&self) -> bool {
        self.state == "Partial"
    }
}

/// `config.openshift.io/v1` ClusterOperator.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ClusterOperator {
    /// Object metadata (annotations decide whether it is a platform operator).
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: ObjectMeta,
    /// Observed state.
    #[serde(default, deserialize_with = "nullable")]
    pub status: ClusterOperatorStatus,
}
cluster_resource!(
    ClusterOperator,
    "config.openshift.io",
    "v1",
    "ClusterOperator",
    "clusteroperators"
);

impl ClusterOperator {
    /// Name of the operator (empty if unset).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Part of the release payload: has an `include.release.openshift.io/` or
    /// `exclude.release.openshift.io/` annotation (values ignored).
    pub fn is_platform_operator(&self) -> bool {
        self.metadata.annotations.as_ref().is_some_and(|a| {
            a.keys().any(|k| {
                PLATFORM_OPERATOR_ANNOTATION_PREFIXES
                    .iter()
                    .any(|p| k.starts_with(p))
            })
        })
    }

    /// Version reported under `name` (`operator`, `operator-image`, ...).
    pub fn version(&self, name: &str) -> Option<&str> {
        self.status
            .versions
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.version.as_str())
    }

    /// Last condition of a type.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        last_condition(&self.status.conditions, type_)
    }
}

/// Status of a ClusterOperator.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ClusterOperatorStatus {
    /// `Available`, `Degraded`, `Progressing`, ...; the last of a type wins.
    #[serde(default, deserialize_with = "nullable")]
    pub conditions: Vec<Condition>,
    /// Operand versions.
    #[serde(default, deserialize_with = "nullable")]
    pub versions: Vec<OperandVersion>,
}

/// A named version of a ClusterOperator.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct OperandVersion {
    /// Operand name (`operator`, `operator-image`, ...).
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// Its version.
    #[serde(default, deserialize_with = "nullable")]
    pub version: String,
}

/// `machineconfiguration.openshift.io/v1` MachineConfigPool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MachineConfigPool {
    /// Object metadata.
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default, deserialize_with = "nullable")]
    pub spec: MachineConfigPoolSpec,
}
cluster_resource!(
    MachineConfigPool,
    "machineconfiguration.openshift.io",
    "v1",
    "MachineConfigPool",
    "machineconfigpools"
);

impl MachineConfigPool {
    /// Name of the pool (empty if unset).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
}

/// Spec of a MachineConfigPool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MachineConfigPoolSpec {
    /// Selects the nodes of the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<LabelSelector>,
    /// A paused pool applies no changes to its nodes.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub paused: bool,
    /// The pool's target rendered config.
    #[serde(default, deserialize_with = "nullable")]
    pub configuration: PoolConfiguration,
    /// How many nodes may update at once: a count or a percentage of the pool (unset: 1; a
    /// malformed value reads as unset).
    #[serde(
        default,
        deserialize_with = "lenient_int_or_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_unavailable: Option<IntOrString>,
}

impl MachineConfigPoolSpec {
    /// `maxUnavailable` for a pool of `total` nodes, as the machine-config controller reads it:
    /// a count, or a percentage rounded down; at least 1.
    pub fn max_unavailable_of(&self, total: u32) -> u32 {
        let n = match &self.max_unavailable {
            None => 1,
            Some(IntOrString::Int(n)) => u32::try_from(*n).unwrap_or(0),
            Some(IntOrString::String(s)) => s
                .strip_suffix('%')
                .and_then(|p| p.trim().parse::<u64>().ok())
                .map_or(1, |p| {
                    u32::try_from(p.saturating_mul(u64::from(total)) / 100).unwrap_or(u32::MAX)
                }),
        };
        n.max(1)
    }
}

/// Reads an int-or-string leniently: anything else (an object, a float) → `None`.
fn lenient_int_or_string<'de, D>(de: D) -> Result<Option<IntOrString>, D::Error>
where
    D: Deserializer<'de>,
{
    let raw = Option::<serde_json::Value>::deserialize(de)?;
    Ok(match raw {
        Some(serde_json::Value::Number(n)) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .map(IntOrString::Int),
        Some(serde_json::Value::String(s)) => Some(IntOrString::String(s)),
        _ => None,
    })
}

/// Reference to a rendered MachineConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PoolConfiguration {
    /// Rendered MachineConfig name.
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
}

/// `machineconfiguration.openshift.io/v1` MachineConfig (metadata only: name and annotations matter).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MachineConfig {
    /// Object metadata.
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: ObjectMeta,
}
cluster_resource!(
    MachineConfig,
    "machineconfiguration.openshift.io",
    "v1",
    "MachineConfig",
    "machineconfigs"
);

impl MachineConfig {
    /// The OpenShift version this rendered config belongs to, if annotated (non-empty).
    pub fn release_version(&self) -> Option<&str> {
        self.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(MC_RELEASE_IMAGE_VERSION))
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// Core `v1` Node, reduced to what the assessment reads (keeps memory small at thousands of nodes).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Node {
    /// Object metadata (labels select the pool, annotations carry the MCO state).
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default, deserialize_with = "nullable")]
    pub spec: NodeSpec,
    /// Observed state.
    #[serde(default, deserialize_with = "nullable")]
    pub status: NodeStatus,
}
cluster_resource!(Node, "", "v1", "Node", "nodes");

impl Node {
    /// Name of the node (empty if unset).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// An annotation's value, if present.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .map(String::as_str)
    }
}

/// Spec of a Node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct NodeSpec {
    /// Cordoned.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub unschedulable: bool,
}

/// Status of a Node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct NodeStatus {
    /// `Ready`, `DiskPressure`, `NetworkUnavailable`, ... in list order.
    #[serde(default, deserialize_with = "nullable")]
    pub conditions: Vec<Condition>,
}

/// A Prometheus alert as `/api/v1/alerts` returns it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Alert {
    /// Labels (`alertname`, `severity`, `namespace`, ...).
    #[serde(default, deserialize_with = "nullable")]
    pub labels: std::collections::BTreeMap<String, String>,
    /// Annotations (`summary`, `description`, `message`, `runbook_url`).
    #[serde(default, deserialize_with = "nullable")]
    pub annotations: std::collections::BTreeMap<String, String>,
    /// `firing` or `pending`.
    #[serde(default, deserialize_with = "nullable")]
    pub state: String,
    /// When the alert became active.
    #[serde(
        default,
        deserialize_with = "lenient_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub active_at: Option<Timestamp>,
}

/// The body of Prometheus' `/api/v1/alerts`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct AlertsResponse {
    /// `success` or `error`.
    #[serde(default, deserialize_with = "nullable")]
    pub status: String,
    /// The payload.
    #[serde(default, deserialize_with = "nullable")]
    pub data: AlertsData,
}

/// `data` of [`AlertsResponse`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct AlertsData {
    /// Active alerts.
    #[serde(default, deserialize_with = "nullable")]
    pub alerts: Vec<Alert>,
}

/// Does a label selector select the labels read through `get` (label key → value)? A selector
/// with an unknown operator selects nothing.
pub fn selector_matches<'a>(
    selector: &LabelSelector,
    get: impl Fn(&str) -> Option<&'a str>,
) -> bool {
    let labels_ok = selector
        .match_labels
        .as_ref()
        .is_none_or(|m| m.iter().all(|(k, v)| get(k) == Some(v.as_str())));
    let exprs_ok = selector.match_expressions.as_ref().is_none_or(|exprs| {
        exprs.iter().all(|e| {
            let values = e.values.as_deref().unwrap_or_default();
            let value = get(&e.key);
            match e.operator.as_str() {
                "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
                "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
    });
    labels_ok && exprs_ok
}

/// Namespace of the machine-config operator's Deployment.
pub const MCO_NAMESPACE: &str = "openshift-machine-config-operator";
/// Name of the machine-config operator's Deployment (and of its container).
pub const MCO_DEPLOYMENT: &str = "machine-config-operator";

/// `apps/v1` Deployment, reduced to what the assessment reads: the containers' names and
/// images of `openshift-machine-config-operator/machine-config-operator` (A.3). Everything
/// else is ignored when read, so a cache of it keeps only that.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct McoDeployment {
    /// Object metadata.
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: ObjectMeta,
    /// Desired state (only the pod template's containers).
    #[serde(default, deserialize_with = "nullable")]
    pub spec: McoDeploymentSpec,
}
cluster_resource!(
    McoDeployment,
    "apps",
    "v1",
    "Deployment",
    "deployments",
    NamespaceResourceScope
);

/// `spec` of a [`McoDeployment`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct McoDeploymentSpec {
    /// The pod template.
    #[serde(default, deserialize_with = "nullable")]
    pub template: McoPodTemplate,
}

/// `spec.template` of a [`McoDeployment`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct McoPodTemplate {
    /// The pod spec.
    #[serde(default, deserialize_with = "nullable")]
    pub spec: McoPodSpec,
}

/// `spec.template.spec` of a [`McoDeployment`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct McoPodSpec {
    /// The containers (name and image only).
    #[serde(default, deserialize_with = "nullable")]
    pub containers: Vec<ContainerImage>,
}

/// A container's name and image.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ContainerImage {
    /// Container name.
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// Container image.
    #[serde(default, deserialize_with = "nullable")]
    pub image: String,
}

impl McoDeployment {
    /// A.3, the one rule (offline and online): the image of the container named
    /// `machine-config-operator`; `None` without such a container or with an empty image.
    pub fn operator_image(&self) -> Option<&str> {
        self.spec
            .template
            .spec
            .containers
            .iter()
            .find(|c| c.name == MCO_DEPLOYMENT)
            .map(|c| c.image.as_str())
            .filter(|i| !i.is_empty())
    }
}

/// Core `v1` Pod, reduced to what the drain rules read: name, namespace, labels (which
/// PodDisruptionBudgets select it) and the node it runs on. Read only for nodes whose drain
/// fails.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Pod {
    /// Object metadata.
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: ObjectMeta,
    /// The node it is bound to.
    #[serde(default, deserialize_with = "nullable")]
    pub spec: PodSpec,
}
cluster_resource!(Pod, "", "v1", "Pod", "pods", NamespaceResourceScope);

/// `spec` of a [`Pod`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    /// The node it runs on (empty: not scheduled).
    #[serde(default, deserialize_with = "nullable")]
    pub node_name: String,
}

impl Pod {
    /// Keeps only what the drain rules read (name, namespace, labels; the node name).
    pub fn trimmed(self) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: self.metadata.name,
                namespace: self.metadata.namespace,
                labels: self.metadata.labels,
                ..Default::default()
            },
            spec: self.spec,
        }
    }
}

/// `policy/v1` PodDisruptionBudget, reduced to what the drain rules read: which pods it
/// selects and how many disruptions it allows now.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PodDisruptionBudget {
    /// Object metadata.
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: ObjectMeta,
    /// Its pod selector.
    #[serde(default, deserialize_with = "nullable")]
    pub spec: PodDisruptionBudgetSpec,
    /// Its disruption controller's view.
    #[serde(default, deserialize_with = "nullable")]
    pub status: PodDisruptionBudgetStatus,
}
cluster_resource!(
    PodDisruptionBudget,
    "policy",
    "v1",
    "PodDisruptionBudget",
    "poddisruptionbudgets",
    NamespaceResourceScope
);

/// `spec` of a [`PodDisruptionBudget`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PodDisruptionBudgetSpec {
    /// Which pods of its namespace it covers (unset: none; empty: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// `status` of a [`PodDisruptionBudget`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetStatus {
    /// Evictions it allows now (unset: not computed yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruptions_allowed: Option<i32>,
}

impl PodDisruptionBudget {
    /// Keeps only what the drain rules read.
    pub fn trimmed(self) -> PodDisruptionBudget {
        PodDisruptionBudget {
            metadata: ObjectMeta {
                name: self.metadata.name,
                namespace: self.metadata.namespace,
                ..Default::default()
            },
            ..self
        }
    }

    /// It allows no eviction now (its disruption controller says 0).
    pub fn at_limit(&self) -> bool {
        self.status.disruptions_allowed == Some(0)
    }

    /// It selects `pod` (same namespace, selector matching its labels; a PDB without a
    /// selector selects nothing, as in policy/v1).
    pub fn selects(&self, pod: &Pod) -> bool {
        let Some(selector) = &self.spec.selector else {
            return false;
        };
        self.metadata.namespace.is_some()
            && self.metadata.namespace == pod.metadata.namespace
            && selector_matches(selector, |k| {
                pod.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(k))
                    .map(String::as_str)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_unavailable_is_a_count_or_a_percentage_rounded_down_at_least_one() {
        let spec = |v: serde_json::Value| -> MachineConfigPoolSpec {
            serde_json::from_value(serde_json::json!({ "maxUnavailable": v })).expect("spec")
        };
        assert_eq!(spec(serde_json::json!(3)).max_unavailable_of(10), 3);
        assert_eq!(spec(serde_json::json!("25%")).max_unavailable_of(10), 2);
        assert_eq!(spec(serde_json::json!("5%")).max_unavailable_of(10), 1);
        assert_eq!(spec(serde_json::json!(0)).max_unavailable_of(10), 1);
        assert_eq!(spec(serde_json::json!(null)).max_unavailable_of(10), 1);
        assert_eq!(spec(serde_json::json!({"x": 1})).max_unavailable_of(10), 1);
        assert_eq!(spec(serde_json::json!("junk")).max_unavailable_of(10), 1);
        assert_eq!(MachineConfigPoolSpec::default().max_unavailable_of(10), 1);
    }

    #[test]
    fn a_pdb_selects_pods_of_its_namespace_by_labels() {
        let pdb: PodDisruptionBudget = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "checkout-pdb", "namespace": "shop"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "checkout"}}},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 2}
        }))
        .expect("pdb");
        let pod = |ns: &str, app: &str| -> Pod {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "p", "namespace": ns, "labels": {"app": app}},
                "spec": {"nodeName": "worker-1", "containers": [{"name": "c"}]}
            }))
            .expect("pod")
        };
        assert!(pdb.at_limit());
        assert!(pdb.selects(&pod("shop", "checkout")));
        assert!(!pdb.selects(&pod("other", "checkout")));
        assert!(!pdb.selects(&pod("shop", "cart")));
        let mut none = pdb.clone();
        none.spec.selector = None;
        assert!(!none.selects(&pod("shop", "checkout")));
        assert_eq!(pod("shop", "x").spec.node_name, "worker-1");
        let trimmed = pod("shop", "x").trimmed();
        assert_eq!(trimmed.metadata.labels.map(|l| l.len()), Some(1));
    }

    #[test]
    fn tolerates_nulls_unknown_fields_and_bad_timestamps() {
        let cv: ClusterVersion = serde_json::from_value(serde_json::json!({
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterVersion",
            "metadata": {"name": "version"},
            "spec": {"channel": "stable-4.14"},
            "status": {
                "desired": {"version": "4.14.1", "image": "img", "url": "x"},
                "history": [
                    {"state": "Partial", "startedTime": "2023-11-03T15:27:00Z", "completionTime": null, "version": "4.14.1", "verified": false},
                    {"state": "Completed", "startedTime": "not a time", "completionTime": "2023-11-03T15:00:00Z", "version": null}
                ],
                "conditions": [{"type": "Progressing", "status": "True", "lastTransitionTime": "2023-11-03T15:27:00Z", "message": null}],
                "availableUpdates": null
            }
        }))
        .expect("lenient parse");
        assert_eq!(cv.status.desired.version, "4.14.1");
        assert_eq!(cv.status.history.len(), 2);
        assert!(cv.status.history[0].completion_time.is_none());
        assert!(cv.status.history[1].started_time.is_none());
        assert_eq!(cv.status.history[1].version, "");
        assert_eq!(cv.status.conditions[0].message, "");
        assert!(cv.status.conditions[0].last_transition_time.is_some());
    }

    #[test]
    fn platform_operator_filter() {
        let mut co = ClusterOperator::default();
        assert!(!co.is_platform_operator());
        co.metadata.annotations = Some([("random".to_string(), String::new())].into());
        assert!(!co.is_platform_operator());
        co.metadata.annotations = Some(
            [(
                "exclude.release.openshift.io/internal-openshift-hosted".to_string(),
                "true".to_string(),
            )]
            .into(),
        );
        assert!(co.is_platform_operator());
    }

    #[test]
    fn last_condition_of_a_type_wins_for_operators() {
        let co: ClusterOperator = serde_json::from_value(serde_json::json!({
            "status": {"conditions": [
                {"type": "Degraded", "status": "True"},
                {"type": "Degraded", "status": "False"}
            ]}
        }))
        .expect("parse");
        assert_eq!(
            co.condition("Degraded").map(|c| c.status.as_str()),
            Some("False")
        );
        assert_eq!(
            first_condition(&co.status.conditions, "Degraded").map(|c| c.status.as_str()),
            Some("True")
        );
    }

    #[test]
    fn selectors() {
        let sel: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"node-role.kubernetes.io/worker": ""},
            "matchExpressions": [{"key": "node-role.kubernetes.io/infra", "operator": "DoesNotExist"}]
        }))
        .expect("parse");
        let worker: std::collections::BTreeMap<String, String> =
            [("node-role.kubernetes.io/worker".to_string(), String::new())].into();
        let mut infra = worker.clone();
        infra.insert("node-role.kubernetes.io/infra".into(), String::new());
        assert!(selector_matches(&sel, |k| worker
            .get(k)
            .map(String::as_str)));
        assert!(!selector_matches(&sel, |k| infra
            .get(k)
            .map(String::as_str)));
        assert!(!selector_matches(&sel, |_| None));
        let bad: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchExpressions": [{"key": "a", "operator": "Bogus"}]
        }))
        .expect("parse");
        assert!(!selector_matches(&bad, |k| worker
            .get(k)
            .map(String::as_str)));
    }

    #[test]
    fn the_mco_image_is_the_machine_config_operator_container_image() {
        let d: McoDeployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "machine-config-operator", "namespace": "openshift-machine-config-operator"},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "kube-rbac-proxy", "image": "proxy"},
                {"name": "machine-config-operator", "image": "mco@sha256:1", "args": ["start"]},
            ]}}},
            "status": {"replicas": 1},
        }))
        .expect("parse");
        assert_eq!(d.operator_image(), Some("mco@sha256:1"));
        assert_eq!(
            serde_json::to_value(&d).expect("json")["spec"]["template"]["spec"]["containers"][1],
            serde_json::json!({"name": "machine-config-operator", "image": "mco@sha256:1"}),
            "only names and images are kept"
        );
        let other: McoDeployment = serde_json::from_value(serde_json::json!({
            "spec": {"template": {"spec": {"containers": [{"name": "x", "image": "y"}, {"name": "machine-config-operator", "image": null}]}}},
        }))
        .expect("parse");
        assert_eq!(other.operator_image(), None);
        assert_eq!(McoDeployment::default().operator_image(), None);
    }
}
