//! The UpdateInsight kind: one progress or health insight about one resource, with its scope
//! and, for progress insights, the progress of a ClusterVersion, ClusterOperator or Node.

// kube-derive expands each `printcolumn(...)` into attributes clippy sees as duplicates.
#![allow(clippy::duplicated_attributes)]

use jiff::Timestamp;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::assessment::{Assessment, NodePhase};
use crate::crd::condition::Condition;
use crate::crd::health::HealthInsight;
use crate::crd::limits;
use crate::crd::resource::ResourceRef;

label_enum! {
    /// Which part of the cluster an insight is about.
    pub enum ScopeType {
        /// The control plane (ClusterVersion, ClusterOperators, master pool).
        #[default]
        ControlPlane,
        /// A worker pool.
        WorkerPool,
        /// The whole cluster (e.g. a firing alert).
        Cluster,
    }
}

impl ScopeType {
    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            ScopeType::ControlPlane => "control-plane",
            ScopeType::WorkerPool => "worker-pool",
            ScopeType::Cluster => "cluster",
        }
    }
}

/// Scope of an insight.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default, Hash)]
#[x_kube(validation = kube::core::Rule::new("self.type != 'WorkerPool' || has(self.pool)").message("a WorkerPool scope names its pool"))]
pub struct InsightScope {
    /// `ControlPlane`, `WorkerPool` or `Cluster`.
    #[serde(rename = "type")]
    pub type_: ScopeType,
    /// The pool, for `WorkerPool` scope (and for control-plane node insights: `master`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = limits::POOL))]
    pub pool: Option<String>,
}

/// `Progress` (one per ClusterVersion, ClusterOperator, Node) or `Health` (one per problem).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Default, Hash)]
pub enum InsightType {
    /// How far an object is in the update.
    #[default]
    Progress,
    /// Something needs attention.
    Health,
}

impl InsightType {
    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            InsightType::Progress => "progress",
            InsightType::Health => "health",
        }
    }
}
/// Current and target version of an object.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default, Hash)]
pub struct VersionPair {
    /// Version it runs (empty when unknown).
    #[serde(default)]
    #[schemars(length(max = limits::VERSION))]
    pub current: String,
    /// Version it is going to (empty when unknown).
    #[serde(default)]
    #[schemars(length(max = limits::VERSION))]
    pub target: String,
}

/// Progress of one ClusterVersion, ClusterOperator or Node.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default, Hash)]
#[serde(rename_all = "camelCase")]
pub struct ProgressInsight {
    /// Assessment (`Updated`/`Updating`/`Waiting` for operators; `Completed`, `Progressing`,
    /// `Outdated`, `Degraded`, `Unavailable`, `Excluded` for nodes; the control plane's for the ClusterVersion).
    pub assessment: Assessment,
    /// Node phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<NodePhase>,
    /// Current and target version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<VersionPair>,
    /// Node estimate as `oc` shows it: `+10m`, `+5m`, `?` (unknown), `-` (nothing left).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 32))]
    pub estimate: String,
    /// Node: `estimate` in seconds, for scripts (`+10m` → 600, `+5m` → 300, `-` → 0; absent
    /// when `?`): the time left from the assessment, as `oc` estimates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_seconds: Option<u32>,
    /// ClusterVersion: the control plane's estimated completion (its
    /// `estimatedCompletedAt`), while not completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_completed_at: Option<Timestamp>,
    /// What is going on, in words (may be multi-line).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = limits::PROGRESS_MESSAGE))]
    pub message: String,
    /// Since when the assessment holds, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
    /// Node: when update-status first observed it in each phase of its update to the target
    /// (absent while it has not started; a snapshot read offline is one observation, so its
    /// current phase is stamped with the instant of the reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<NodeTimeline>,
    /// `Updating` (reason = node phase or operator state), `Available`, `Degraded`, `Healthy`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}
/// When update-status first observed a node in each phase of its update (issue #40): what the
/// learned estimates time its drain, reboot and return by, kept with the insight that is
/// written at each of these changes anyway, so a controller restart loses none of them.
/// A node already draining or rebooting when first observed (the controller started during
/// the update) is stamped at that first observation; a node first observed on the target
/// configuration has none (when it got there was not observed: a node joining, a node not
/// ready outside an update); a phase passed between two observations is absent. Kept until
/// the node's next update starts.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Default, Hash)]
#[serde(rename_all = "camelCase")]
pub struct NodeTimeline {
    /// First observed draining.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_started_at: Option<Timestamp>,
    /// First observed applying the configuration or rebooting (the drain ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reboot_started_at: Option<Timestamp>,
    /// First observed on the target configuration, before it is uncordoned and ready, after
    /// having been observed draining or rebooting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<Timestamp>,
    /// The machine-config daemon said `Degraded` or `Unreconcilable` during this update (e.g. a
    /// drain held by a PodDisruptionBudget): its phase times measure an incident.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incident: bool,
}

/// An UpdateInsight: one progress or health insight about one resource.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[kube(
    group = "update.openshift.io",
    version = "v1alpha1",
    kind = "UpdateInsight",
    plural = "updateinsights",
    shortname = "uins",
    category = "updatestatus",
    namespaced,
    status = "UpdateInsightStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "One fine-grained insight into a cluster update: the progress of a ClusterVersion, ClusterOperator or Node, or a problem (health) with its impact and remediation.",
    printcolumn(name = "Type", type_ = "string", json_path = ".status.type"),
    printcolumn(name = "Scope", type_ = "string", json_path = ".status.scope.type"),
    printcolumn(name = "Kind", type_ = "string", json_path = ".status.resource.kind"),
    printcolumn(
        name = "Resource",
        type_ = "string",
        json_path = ".status.resource.name"
    ),
    printcolumn(
        name = "Assessment",
        type_ = "string",
        json_path = ".status.progress.assessment"
    ),
    printcolumn(
        name = "Level",
        type_ = "string",
        json_path = ".status.health.impact.level"
    ),
    printcolumn(
        name = "Impact",
        type_ = "string",
        json_path = ".status.health.impact.type"
    ),
    printcolumn(
        name = "Summary",
        type_ = "string",
        json_path = ".status.health.impact.summary",
        priority = 1
    ),
    printcolumn(
        name = "Message",
        type_ = "string",
        json_path = ".status.progress.message",
        priority = 1
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct UpdateInsightSpec {}

/// Content of an UpdateInsight.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("self.type == 'Progress' ? (has(self.progress) && !has(self.health)) : (has(self.health) && !has(self.progress))").message("a Progress insight carries .progress only, a Health insight .health only"))]
pub struct UpdateInsightStatus {
    /// `Progress` or `Health`.
    #[serde(rename = "type")]
    pub type_: InsightType,
    /// What it is about.
    pub resource: ResourceRef,
    /// Which part of the cluster.
    pub scope: InsightScope,
    /// Set iff `type` is `Progress`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<ProgressInsight>,
    /// Set iff `type` is `Health`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthInsight>,
}
