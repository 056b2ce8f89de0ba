//! The three kinds update-status writes (group `update.openshift.io`, version `v1alpha1`,
//! all namespaced, all in the kubectl category `updatestatus`). See `docs/assessment-contract.md` and
//! `shared/reference/design.md`.
//!
//! Everything lives in `.status` (the status subresource); the objects have no spec. An object
//! changes only when its meaning changes: there are no heartbeat fields.

// kube-derive expands each `printcolumn(...)` into attributes clippy sees as duplicates.
#![allow(clippy::duplicated_attributes)]

use jiff::Timestamp;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// API group of the three kinds.
pub const GROUP: &str = "update.openshift.io";
/// API version of the three kinds.
pub const VERSION: &str = "v1alpha1";
/// kubectl category shared by the three kinds.
pub const CATEGORY: &str = "updatestatus";

/// Schema limits of the fields update-status writes (the CRDs' `maxLength`/`maxItems`): the
/// assessment cuts its texts to these, so every object it produces is valid.
pub mod limits {
    /// `Condition.reason`.
    pub const CONDITION_REASON: usize = 1024;
    /// `Condition.message`.
    pub const CONDITION_MESSAGE: usize = 32768;
    /// `ResourceRef.group`.
    pub const RESOURCE_GROUP: usize = 253;
    /// `ResourceRef.kind`.
    pub const RESOURCE_KIND: usize = 63;
    /// `ResourceRef.name`.
    pub const RESOURCE_NAME: usize = 253;
    /// `ResourceRef.namespace`.
    pub const NAMESPACE: usize = 63;
    /// `InsightScope.pool`.
    pub const POOL: usize = 253;
    /// Every version string.
    pub const VERSION: usize = 128;
    /// `ProgressInsight.message`: 32 KiB characters, more than any real message (oc prints
    /// messages whole; a real etcd message reached 4,000+ characters, OCPBUGS-60768). One
    /// UpdateInsight holds at most one such text plus a few condition messages: far below the
    /// API server's object size limit.
    pub const PROGRESS_MESSAGE: usize = 32768;
    /// `Impact.summary`.
    pub const SUMMARY: usize = 256;
    /// `Impact.description`: 32 KiB characters, like [`PROGRESS_MESSAGE`].
    pub const DESCRIPTION: usize = 32768;
    /// `Remediation.reference`.
    pub const REFERENCE: usize = 512;
    /// `HealthInsight.related` (items the schema admits).
    pub const RELATED: usize = 128;
    /// `HealthInsight.related` (items the assessment lists: the rest are counted in
    /// `relatedOmitted`).
    pub const RELATED_SHOWN: usize = 10;
    /// `HealthInsight.source`.
    pub const SOURCE: usize = 63;
    /// `ControlPlaneUpdateStatus.operators.updatingNames` (items).
    pub const UPDATING_NAMES: usize = 256;
}

/// Label keys: the query surface (`kubectl get updateinsights -l ...`).
pub mod labels {
    /// `progress` or `health`.
    pub const INSIGHT_TYPE: &str = "update.openshift.io/insight-type";
    /// Kind of the resource an insight is about (`Node`, `ClusterOperator`, ...).
    pub const RESOURCE_KIND: &str = "update.openshift.io/resource-kind";
    /// Name of the resource an insight is about (shortened with a hash when longer than 63).
    pub const RESOURCE_NAME: &str = "update.openshift.io/resource-name";
    /// `control-plane`, `worker-pool` or `cluster`.
    pub const SCOPE: &str = "update.openshift.io/scope";
    /// Pool name, on pool-scoped objects.
    pub const POOL: &str = "update.openshift.io/pool";
    /// Slug of the assessment, on progress insights and status objects.
    pub const ASSESSMENT: &str = "update.openshift.io/assessment";
    /// Slug of the impact level, on health insights.
    pub const IMPACT_LEVEL: &str = "update.openshift.io/impact-level";
    /// Slug of the impact type, on health insights.
    pub const IMPACT_TYPE: &str = "update.openshift.io/impact-type";
    /// Rule that produced a health insight (slug of `status.health.source`).
    pub const SOURCE: &str = "update.openshift.io/source";
    /// Cluster ID.
    pub const CLUSTER: &str = "update.openshift.io/cluster";
    /// Reconciler that owns the object (`control-plane`, `worker-pools`, `alerts`).
    pub const RECONCILER: &str = "update.openshift.io/reconciler";
    /// Hub copies: managed cluster name (ACM convention).
    pub const ACM_CLUSTER_NAME: &str = "open-cluster-management.io/cluster-name";
    /// Hub copies of a hosted cluster: `<namespace>.<name>` of the HostedCluster they come from
    /// (its session sees and deletes only these).
    pub const HOSTED_CLUSTER: &str = "update.openshift.io/hosted-cluster";
    /// Standard managed-by label.
    pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
    /// Value of [`MANAGED_BY`].
    pub const MANAGED_BY_VALUE: &str = "update-status-controller";
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// `True`, `False` or `Unknown`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Default, Hash)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// It does not.
    False,
    /// Cannot tell.
    #[default]
    Unknown,
}

/// A condition (`Updating`, `Healthy`, `Available`, `Degraded`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default, Hash)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type.
    #[serde(rename = "type")]
    #[schemars(length(min = 1, max = 64))]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: ConditionStatus,
    /// CamelCase reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = limits::CONDITION_REASON))]
    pub reason: String,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = limits::CONDITION_MESSAGE))]
    pub message: String,
    /// When the condition last changed: the input's transition time when the condition is
    /// copied from one; else when update-status first observed its current status (kept
    /// across restarts, changed only when the status changes). Objects written by the CLI's
    /// offline mode say their evaluation instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Timestamp>,
}

/// What an object is about.
#[derive(
    Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default, PartialOrd, Ord, Hash,
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// API group (empty for the core group).
    #[serde(default)]
    #[schemars(length(max = limits::RESOURCE_GROUP))]
    pub group: String,
    /// Kind, e.g. `Node`.
    #[schemars(length(min = 1, max = limits::RESOURCE_KIND))]
    pub kind: String,
    /// Name.
    #[schemars(length(min = 1, max = limits::RESOURCE_NAME))]
    pub name: String,
    /// Namespace, for namespaced resources (and alerts: the alert's `namespace` label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = limits::NAMESPACE))]
    pub namespace: Option<String>,
}

/// Which part of the cluster an insight is about.
#[derive(
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    JsonSchema,
    Default,
    Hash,
    PartialOrd,
    Ord,
)]
pub enum ScopeType {
    /// The control plane (ClusterVersion, ClusterOperators, master pool).
    #[default]
    ControlPlane,
    /// A worker pool.
    WorkerPool,
    /// The whole cluster (e.g. a firing alert).
    Cluster,
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

/// Assessment of a control plane, a pool, an operator or a node.
#[derive(
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    JsonSchema,
    Default,
    Hash,
    PartialOrd,
    Ord,
)]
pub enum Assessment {
    /// Cannot tell.
    #[default]
    Unknown,
    /// Moving.
    Progressing,
    /// Moving, but behind the estimate (less than 10 minutes late).
    #[serde(rename = "Progressing - Slow")]
    ProgressingSlow,
    /// Far behind the estimate (more than 10 minutes late).
    Stalled,
    /// Done.
    Completed,
    /// Pool: no node started yet.
    Pending,
    /// Pool or node: degraded.
    Degraded,
    /// Pool: paused with outdated nodes; node: excluded by a paused pool.
    Excluded,
    /// Pool with no nodes.
    Empty,
    /// Node: not updated and not updating.
    Outdated,
    /// Node: unavailable while not updating.
    Unavailable,
    /// Operator: at the target version.
    Updated,
    /// Operator: progressing toward the target.
    Updating,
    /// Operator: not at the target and not progressing.
    Waiting,
}

impl Assessment {
    /// Text as `oc adm upgrade status` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Assessment::Unknown => "Unknown",
            Assessment::Progressing => "Progressing",
            Assessment::ProgressingSlow => "Progressing - Slow",
            Assessment::Stalled => "Stalled",
            Assessment::Completed => "Completed",
            Assessment::Pending => "Pending",
            Assessment::Degraded => "Degraded",
            Assessment::Excluded => "Excluded",
            Assessment::Empty => "Empty",
            Assessment::Outdated => "Outdated",
            Assessment::Unavailable => "Unavailable",
            Assessment::Updated => "Updated",
            Assessment::Updating => "Updating",
            Assessment::Waiting => "Waiting",
        }
    }

    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            Assessment::ProgressingSlow => "progressing-slow",
            Assessment::Unknown => "unknown",
            Assessment::Progressing => "progressing",
            Assessment::Stalled => "stalled",
            Assessment::Completed => "completed",
            Assessment::Pending => "pending",
            Assessment::Degraded => "degraded",
            Assessment::Excluded => "excluded",
            Assessment::Empty => "empty",
            Assessment::Outdated => "outdated",
            Assessment::Unavailable => "unavailable",
            Assessment::Updated => "updated",
            Assessment::Updating => "updating",
            Assessment::Waiting => "waiting",
        }
    }
}

/// Where a node is in its update.
#[derive(
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    JsonSchema,
    Default,
    Hash,
    PartialOrd,
    Ord,
)]
pub enum NodePhase {
    /// Being drained.
    Draining,
    /// Applying the new configuration.
    Updating,
    /// Rebooting into it.
    Rebooting,
    /// Its pool is paused.
    Paused,
    /// Not started.
    #[default]
    Pending,
    /// At the target.
    Updated,
}

impl NodePhase {
    /// Text as `oc adm upgrade status` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            NodePhase::Draining => "Draining",
            NodePhase::Updating => "Updating",
            NodePhase::Rebooting => "Rebooting",
            NodePhase::Paused => "Paused",
            NodePhase::Pending => "Pending",
            NodePhase::Updated => "Updated",
        }
    }
    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            NodePhase::Draining => "draining",
            NodePhase::Updating => "updating",
            NodePhase::Rebooting => "rebooting",
            NodePhase::Paused => "paused",
            NodePhase::Pending => "pending",
            NodePhase::Updated => "updated",
        }
    }
}

/// Severity of a health insight.
#[derive(
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    JsonSchema,
    Default,
    Hash,
    PartialOrd,
    Ord,
)]
pub enum ImpactLevel {
    /// Cannot tell (e.g. the alert source is unreachable).
    #[default]
    Unknown,
    /// For information.
    Info,
    /// May need attention.
    Warning,
    /// Needs attention.
    Error,
    /// Needs attention now.
    Critical,
}

impl ImpactLevel {
    /// Text as shown.
    pub fn as_str(self) -> &'static str {
        match self {
            ImpactLevel::Unknown => "Unknown",
            ImpactLevel::Info => "Info",
            ImpactLevel::Warning => "Warning",
            ImpactLevel::Error => "Error",
            ImpactLevel::Critical => "Critical",
        }
    }
    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            ImpactLevel::Unknown => "unknown",
            ImpactLevel::Info => "info",
            ImpactLevel::Warning => "warning",
            ImpactLevel::Error => "error",
            ImpactLevel::Critical => "critical",
        }
    }
}

/// What a problem affects.
#[derive(
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    JsonSchema,
    Default,
    Hash,
    PartialOrd,
    Ord,
)]
pub enum ImpactType {
    /// No impact.
    #[default]
    None,
    /// Unknown impact.
    Unknown,
    /// The API may be unavailable.
    #[serde(rename = "API Availability")]
    ApiAvailability,
    /// Less capacity for workloads.
    #[serde(rename = "Cluster Capacity")]
    ClusterCapacity,
    /// Applications may be unavailable.
    #[serde(rename = "Application Availability")]
    ApplicationAvailability,
    /// Applications are down.
    #[serde(rename = "Application Outage")]
    ApplicationOutage,
    /// Data may be lost.
    #[serde(rename = "Data Loss")]
    DataLoss,
    /// The update goes slower.
    #[serde(rename = "Update Speed")]
    UpdateSpeed,
    /// The update does not proceed.
    #[serde(rename = "Update Stalled")]
    UpdateStalled,
}

impl ImpactType {
    /// Text as shown.
    pub fn as_str(self) -> &'static str {
        match self {
            ImpactType::None => "None",
            ImpactType::Unknown => "Unknown",
            ImpactType::ApiAvailability => "API Availability",
            ImpactType::ClusterCapacity => "Cluster Capacity",
            ImpactType::ApplicationAvailability => "Application Availability",
            ImpactType::ApplicationOutage => "Application Outage",
            ImpactType::DataLoss => "Data Loss",
            ImpactType::UpdateSpeed => "Update Speed",
            ImpactType::UpdateStalled => "Update Stalled",
        }
    }
    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            ImpactType::None => "none",
            ImpactType::Unknown => "unknown",
            ImpactType::ApiAvailability => "api-availability",
            ImpactType::ClusterCapacity => "cluster-capacity",
            ImpactType::ApplicationAvailability => "application-availability",
            ImpactType::ApplicationOutage => "application-outage",
            ImpactType::DataLoss => "data-loss",
            ImpactType::UpdateSpeed => "update-speed",
            ImpactType::UpdateStalled => "update-stalled",
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
    /// `Updating` (reason = node phase or operator state), `Available`, `Degraded`, `Healthy`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}

/// Impact of a problem.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
pub struct Impact {
    /// Severity.
    pub level: ImpactLevel,
    /// What it affects.
    #[serde(rename = "type")]
    pub type_: ImpactType,
    /// One line.
    #[schemars(length(min = 1, max = limits::SUMMARY))]
    pub summary: String,
    /// Details.
    #[serde(default)]
    #[schemars(length(max = limits::DESCRIPTION))]
    pub description: String,
}

/// What to do about a problem.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
pub struct Remediation {
    /// A runbook or documentation URL.
    #[schemars(length(min = 1, max = limits::REFERENCE))]
    pub reference: String,
}

/// A problem worth an administrator's attention.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct HealthInsight {
    /// When the problem began, when known. Kept across controller restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// Impact.
    pub impact: Impact,
    /// Remediation.
    pub remediation: Remediation,
    /// Other resources involved, each read from an input (the pods and PodDisruptionBudgets
    /// blocking a node's drain, the node's pool and target MachineConfig, the objects an
    /// alert's labels name): at most [`limits::RELATED_SHOWN`], most telling first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = limits::RELATED))]
    pub related: Vec<ResourceRef>,
    /// How many more related resources there are than `related` lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub related_omitted: u32,
    /// The rule that produced it (`ClusterOperatorDegraded`, `NodeDegraded`, `Alert`, ...).
    #[schemars(length(min = 1, max = limits::SOURCE))]
    pub source: String,
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

/// Versions of a control-plane update.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("!self.installation || self.previous == ''").message("an installation has no previous version"))]
pub struct ControlPlaneVersions {
    /// Version being installed or updated to (`unknown` without history).
    #[schemars(length(max = limits::VERSION))]
    pub target: String,
    /// Version updated from (empty for an installation, `unknown` without history).
    #[serde(default)]
    #[schemars(length(max = limits::VERSION))]
    pub previous: String,
    /// The update to `previous` never completed.
    #[serde(default)]
    pub previous_partial: bool,
    /// Last completed version before `previous`, when `previous` is partial (`unknown` if none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = limits::VERSION))]
    pub last_completed: String,
    /// This is the cluster's installation, not an update.
    #[serde(default)]
    pub installation: bool,
    /// Same version, new (multi-architecture) image.
    #[serde(default)]
    pub multi_arch_migration: bool,
}

/// Operator counts of a control-plane update.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("self.updated <= self.total && self.updating <= self.total && self.waiting <= self.total").message("operator counts cannot exceed the total"))]
pub struct OperatorCounts {
    /// Platform operators.
    pub total: u32,
    /// At the target version.
    pub updated: u32,
    /// Not updated and Progressing=True.
    pub updating: u32,
    /// Not updated and Progressing=False.
    pub waiting: u32,
    /// Neither unavailable nor degraded.
    pub healthy: u32,
    /// Available missing or not True.
    pub unavailable: u32,
    /// Available but Degraded=True.
    pub degraded: u32,
    /// Names of the updating operators, in operator order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = limits::UPDATING_NAMES), inner(length(max = limits::RESOURCE_NAME)))]
    pub updating_names: Vec<String>,
}

/// Node counts of a pool.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("self.updated <= self.total && self.outdated <= self.total && self.available <= self.total").message("node counts cannot exceed the total"))]
pub struct NodeCounts {
    /// Nodes in the pool.
    pub total: u32,
    /// At the target (phase Updated).
    pub updated: u32,
    /// Not at the target.
    pub outdated: u32,
    /// Not unavailable.
    pub available: u32,
    /// Draining, updating or rebooting, and not degraded.
    pub progressing: u32,
    /// Draining.
    pub draining: u32,
    /// Excluded by a paused pool.
    pub excluded: u32,
    /// Degraded.
    pub degraded: u32,
    /// Not started.
    pub pending: u32,
    /// Phase Updated and not updating: the node tables' `Completed` (the omitted-nodes footer
    /// subtracts the printed nodes from it). Absent on objects written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<u32>,
    /// Assessed `Progressing` (updating, neither degraded nor unavailable): the node tables'
    /// `Progressing` (the footer's count). Absent on objects written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assessed_progressing: Option<u32>,
}

/// Health insights by level.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
pub struct HealthCounts {
    /// Critical.
    #[serde(default)]
    pub critical: u32,
    /// Error.
    #[serde(default)]
    pub error: u32,
    /// Warning.
    #[serde(default)]
    pub warning: u32,
    /// Info.
    #[serde(default)]
    pub info: u32,
    /// Unknown.
    #[serde(default)]
    pub unknown: u32,
}

/// One per cluster: how the control-plane update goes.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[kube(
    group = "update.openshift.io",
    version = "v1alpha1",
    kind = "ControlPlaneUpdateStatus",
    plural = "controlplaneupdatestatuses",
    shortname = "cpus",
    category = "updatestatus",
    namespaced,
    status = "ControlPlaneUpdateStatusStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "How the update of a cluster's control plane goes: assessment, versions, completion, duration and estimate.",
    printcolumn(
        name = "Assessment",
        type_ = "string",
        json_path = ".status.assessment"
    ),
    printcolumn(
        name = "Target",
        type_ = "string",
        json_path = ".status.versions.target"
    ),
    printcolumn(
        name = "Previous",
        type_ = "string",
        json_path = ".status.versions.previous"
    ),
    printcolumn(
        name = "Completion",
        type_ = "integer",
        json_path = ".status.completionPercent"
    ),
    printcolumn(name = "Started", type_ = "date", json_path = ".status.startedAt"),
    printcolumn(
        name = "Estimated",
        type_ = "date",
        json_path = ".status.estimatedCompletedAt",
        priority = 1
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct ControlPlaneUpdateStatusSpec {}

/// Content of a ControlPlaneUpdateStatus.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneUpdateStatusStatus {
    /// `Progressing`, `Progressing - Slow`, `Stalled`, `Completed` or `Unknown`.
    pub assessment: Assessment,
    /// Versions.
    pub versions: ControlPlaneVersions,
    /// Completed operators in percent (rounded half to even).
    #[schemars(range(min = 0, max = 100))]
    pub completion_percent: u32,
    /// When the update started (history[0]), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When it completed, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Timestamp>,
    /// Estimated completion, while not completed. Recomputed when the inputs change or the
    /// estimate moves by more than a tolerance; never on a timer alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_completed_at: Option<Timestamp>,
    /// Operators.
    pub operators: OperatorCounts,
    /// Control-plane (master pool) nodes.
    pub nodes: NodeCounts,
    /// Control-plane health insights by level.
    pub health_insights: HealthCounts,
    /// `Updating` (from ClusterVersion Progressing) and `Healthy` (no Error/Critical insight).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}

/// One per worker pool: how the pool's update goes.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[kube(
    group = "update.openshift.io",
    version = "v1alpha1",
    kind = "WorkerPoolUpdateStatus",
    plural = "workerpoolupdatestatuses",
    shortname = "wpus",
    category = "updatestatus",
    namespaced,
    status = "WorkerPoolUpdateStatusStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "How the update of one worker pool goes: assessment, completion and node counts.",
    printcolumn(
        name = "Assessment",
        type_ = "string",
        json_path = ".status.assessment"
    ),
    printcolumn(
        name = "Completion",
        type_ = "integer",
        json_path = ".status.completionPercent"
    ),
    printcolumn(
        name = "Updated",
        type_ = "integer",
        json_path = ".status.nodes.updated"
    ),
    printcolumn(name = "Total", type_ = "integer", json_path = ".status.nodes.total"),
    printcolumn(
        name = "Degraded",
        type_ = "integer",
        json_path = ".status.nodes.degraded"
    ),
    printcolumn(name = "Paused", type_ = "boolean", json_path = ".status.paused"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct WorkerPoolUpdateStatusSpec {}

/// Content of a WorkerPoolUpdateStatus.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolUpdateStatusStatus {
    /// The pool (a MachineConfigPool; a NodePool in hosted mode).
    pub resource: ResourceRef,
    /// `Completed`, `Pending`, `Degraded`, `Excluded`, `Progressing` or `Empty`.
    pub assessment: Assessment,
    /// The pool is paused.
    #[serde(default)]
    pub paused: bool,
    /// Updated nodes in percent (rounded half to even; 0 for an empty pool).
    #[schemars(range(min = 0, max = 100))]
    pub completion_percent: u32,
    /// Version the nodes go to.
    #[serde(default)]
    #[schemars(length(max = limits::VERSION))]
    pub target_version: String,
    /// Node counts.
    pub nodes: NodeCounts,
    /// Health insights of the pool and its nodes by level.
    pub health_insights: HealthCounts,
    /// Estimated time to complete the pool's update, in seconds, as of this assessment (oc's
    /// node estimates and the pool's `maxUnavailable`: `docs/assessment-contract.md`); 0 when
    /// completed, absent when it cannot be told (a degraded, unavailable or excluded node, no
    /// node started yet, an empty pool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_seconds: Option<u32>,
    /// `Updating` and `Healthy`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;

    #[test]
    fn crds_have_category_shortnames_status_and_cel() {
        for (crd, short) in [
            (UpdateInsight::crd(), "uins"),
            (ControlPlaneUpdateStatus::crd(), "cpus"),
            (WorkerPoolUpdateStatus::crd(), "wpus"),
        ] {
            assert_eq!(crd.spec.group, GROUP);
            assert_eq!(crd.spec.scope, "Namespaced");
            assert_eq!(
                crd.spec.names.categories.as_deref(),
                Some(&[CATEGORY.to_string()][..])
            );
            assert_eq!(
                crd.spec.names.short_names.as_deref(),
                Some(&[short.to_string()][..])
            );
            let v = &crd.spec.versions[0];
            assert_eq!(v.name, VERSION);
            assert!(
                v.subresources
                    .as_ref()
                    .and_then(|s| s.status.as_ref())
                    .is_some()
            );
            assert!(
                v.additional_printer_columns
                    .as_ref()
                    .is_some_and(|c| c.len() >= 5)
            );
            let text = serde_json::to_string(&crd).expect("json");
            assert!(
                text.contains("x-kubernetes-validations"),
                "{short} has no CEL rule"
            );
        }
    }

    #[test]
    fn enums_serialize_as_oc_prints_them() {
        assert_eq!(
            serde_json::to_value(Assessment::ProgressingSlow).expect("json"),
            "Progressing - Slow"
        );
        assert_eq!(
            serde_json::to_value(ImpactType::ApiAvailability).expect("json"),
            "API Availability"
        );
        for a in [Assessment::ProgressingSlow, Assessment::Completed] {
            assert_eq!(serde_json::to_value(a).expect("json"), a.as_str());
        }
    }
}
