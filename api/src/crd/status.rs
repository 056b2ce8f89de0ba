//! The two status kinds: ControlPlaneUpdateStatus (one per cluster) and WorkerPoolUpdateStatus
//! (one per worker pool), with their versions and their operator, node and health counts.

// kube-derive expands each `printcolumn(...)` into attributes clippy sees as duplicates.
#![allow(clippy::duplicated_attributes)]

use jiff::Timestamp;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::crd::assessment::Assessment;
use crate::crd::condition::Condition;
use crate::crd::limits;
use crate::crd::resource::ResourceRef;

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
