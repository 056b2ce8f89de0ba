//! `UpdateHistory`: what this cluster's updates took, learned by watching them, and the
//! remaining-time estimates made from it (issue #40; `docs/assessment-contract.md`,
//! "Estimates that learn").
//!
//! One object per cluster, written by the controller's `estimates` reconciler only. Bounded:
//! at most [`MAX_UPDATES`] learned updates, at most [`MAX_OPERATORS`] operators and
//! [`MAX_NODE_GROUPS`] node groups per update, and, for the update in progress, the nodes in
//! flight only (finished nodes are folded into their group's running statistics), so its size
//! does not grow with the number of updates nor with the number of nodes.

// kube-derive expands each `printcolumn(...)` into attributes clippy sees as duplicates.
#![allow(clippy::duplicated_attributes)]

use jiff::Timestamp;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Learned updates kept (the oldest is dropped first).
pub const MAX_UPDATES: usize = 5;
/// Operators kept per learned update.
pub const MAX_OPERATORS: usize = 128;
/// Node groups (pool, role, instance type) kept per learned update.
pub const MAX_NODE_GROUPS: usize = 32;
/// Nodes tracked in flight at once (beyond, further nodes are not timed).
pub const MAX_TRACKED_NODES: usize = 256;
/// Nodes remembered one by one across updates: the most deviant from their group.
pub const MAX_NODE_FACTORS: usize = 64;
/// Finished nodes of the update in progress whose phase times are kept until it is learned.
pub const MAX_FINISHED_NODES: usize = 256;
/// Name of the one object per cluster.
pub const UPDATE_HISTORY_NAME: &str = "cluster";

/// One per cluster: the durations learned from this cluster's updates and the estimates of the
/// update in progress.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[kube(
    group = "update.openshift.io",
    version = "v1alpha1",
    kind = "UpdateHistory",
    plural = "updatehistories",
    shortname = "uhist",
    category = "updatestatus",
    namespaced,
    status = "UpdateHistoryStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "Durations learned from this cluster's updates (operators, node phases by group, pools, control plane), and the remaining-time estimates of the update in progress made from them.",
    printcolumn(
        name = "Method",
        type_ = "string",
        json_path = ".status.estimates.method"
    ),
    printcolumn(
        name = "Estimated",
        type_ = "date",
        json_path = ".status.estimates.update.estimatedCompletionTime"
    ),
    printcolumn(
        name = "Latest",
        type_ = "date",
        json_path = ".status.estimates.update.latestCompletionTime"
    ),
    printcolumn(
        name = "Learned",
        type_ = "integer",
        json_path = ".status.learnedUpdates"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
pub struct UpdateHistorySpec {}

/// Content of an UpdateHistory.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct UpdateHistoryStatus {
    /// Number of learned updates (`updates`), for the printer column.
    #[serde(default)]
    pub learned_updates: u32,
    /// Learned updates, newest first (at most 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 5))]
    pub updates: Vec<LearnedUpdate>,
    /// The update in progress, as observed so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<CurrentUpdate>,
    /// Nodes persistently slower or faster than their group (at most 64, the most deviant).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub node_factors: Vec<NodeFactor>,
    /// Estimates of the update in progress (absent when nothing updates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimates: Option<UpdateEstimates>,
}

/// Where a learned update comes from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Default)]
pub enum LearnedSource {
    /// Watched by the controller: operators, node phases, pools, control plane.
    #[default]
    Observed,
    /// Seeded from the ClusterVersion history on first start: the control plane's duration only.
    ClusterVersionHistory,
}

/// Running statistics of durations in seconds (a log-normal summary: constant size whatever
/// the number of samples).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DurationStats {
    /// Samples.
    pub count: u32,
    /// Sum of the durations (seconds).
    pub sum_seconds: f64,
    /// Sum of `ln(1 + seconds)`.
    pub sum_log: f64,
    /// Sum of `ln(1 + seconds)²`.
    pub sum_log_sq: f64,
}

/// When an operator reached the target version, counted from the update's start.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct OperatorTiming {
    /// ClusterOperator name.
    pub name: String,
    /// Seconds from the update's start to its `operator` version at the target.
    pub completed_after_seconds: u32,
}

/// Per-node phase durations of one group of nodes: one pool, one role, one instance type.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeGroupTiming {
    /// MachineConfigPool.
    pub pool: String,
    /// `master` or `worker` (from the `node-role.kubernetes.io/` labels).
    pub role: String,
    /// `node.kubernetes.io/instance-type` label ("" when absent).
    #[serde(default)]
    pub instance_type: String,
    /// Picked → drained (C.7 Draining).
    pub drain: DurationStats,
    /// Drained → back from the reboot (C.7 Updating and Rebooting).
    pub reboot: DurationStats,
    /// Back from the reboot → updated and uncordoned, ready.
    pub ready: DurationStats,
}

/// How long one pool took.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PoolTiming {
    /// MachineConfigPool.
    pub name: String,
    /// Seconds from the update's start to its last node updated.
    pub completed_after_seconds: u32,
    /// Seconds the pool spent paused while it had nodes to update.
    #[serde(default)]
    pub paused_seconds: u32,
}

/// One learned update.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct LearnedUpdate {
    /// Observed, or seeded from the ClusterVersion history.
    pub source: LearnedSource,
    /// Version updated from ("" when unknown).
    #[serde(default)]
    pub from: String,
    /// Version updated to.
    pub to: String,
    /// When it started (`history[0].startedTime`).
    pub started_at: Timestamp,
    /// Seconds until every platform operator was at the target (ClusterVersion completion
    /// for a seeded update).
    pub control_plane_seconds: u32,
    /// Seconds until every pool was updated (absent for a seeded update).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_seconds: Option<u32>,
    /// Operators in the order they reached the target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 128))]
    pub operators: Vec<OperatorTiming>,
    /// Node phases by group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub node_groups: Vec<NodeGroupTiming>,
    /// Pools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub pools: Vec<PoolTiming>,
}

/// A node in flight, and when it entered each phase.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct TrackedNode {
    /// Node name.
    pub name: String,
    /// Index of its group in `CurrentUpdate.nodeGroups`.
    pub group: u32,
    /// First seen draining.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_at: Option<Timestamp>,
    /// First seen updating or rebooting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reboot_at: Option<Timestamp>,
    /// First seen on the new configuration, not yet uncordoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_at: Option<Timestamp>,
    /// Seen `Degraded` or `Unreconcilable` (e.g. a drain blocked by a PodDisruptionBudget):
    /// an incident, not how long this node's phases take; its phases are not learned.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incident: bool,
}

/// A node's phases against its group's in the same updates: `ln(1 + seconds)` less the
/// group's mean of it, averaged over the updates it was seen in (newest weighing most).
/// Positive: slower than its group.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeFactor {
    /// Node name.
    pub name: String,
    /// Updates it was measured in (capped).
    pub updates: u32,
    /// Log deviation of its drain.
    pub drain: f64,
    /// Log deviation of its apply and reboot.
    pub reboot: f64,
}

/// A node finished in the update in progress: its phase times, kept until the update is
/// learned (its deviation from its group is measured against the whole update's group).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct FinishedNode {
    /// Node name.
    pub name: String,
    /// Index of its group in `CurrentUpdate.nodeGroups`.
    pub group: u32,
    /// Seconds draining.
    pub drain_seconds: u32,
    /// Seconds applying and rebooting.
    pub reboot_seconds: u32,
}

/// The update in progress, as observed so far.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct CurrentUpdate {
    /// Version updated from.
    #[serde(default)]
    pub from: String,
    /// Version updated to.
    pub to: String,
    /// `history[0].startedTime`.
    pub started_at: Timestamp,
    /// When every platform operator was first seen at the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane_completed_at: Option<Timestamp>,
    /// Operators seen at the target, in that order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 128))]
    pub operators: Vec<OperatorTiming>,
    /// Node groups of the nodes seen so far, with the phases of the nodes already finished.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub node_groups: Vec<NodeGroupTiming>,
    /// Nodes in flight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 256))]
    pub nodes: Vec<TrackedNode>,
    /// Nodes finished so far (incidents excluded), at most 256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 256))]
    pub finished: Vec<FinishedNode>,
    /// Pools done so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub pools: Vec<PoolTiming>,
    /// Pools that were paused while they had nodes to update.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub paused: Vec<PausedPool>,
    /// When the controller wrote this state. A node that finished since without being
    /// followed here (a restart while it was on its last steps) is learned from its progress
    /// insight's timeline when that timeline starts after this instant (so it was never folded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_at: Option<Timestamp>,
}

/// A pool paused while it had nodes to update.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PausedPool {
    /// MachineConfigPool.
    pub name: String,
    /// First seen paused, while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
    /// Seconds it was paused before (pauses that ended).
    #[serde(default)]
    pub paused_seconds: u32,
}

/// How an estimate was made.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Default)]
pub enum EstimateMethod {
    /// From durations this controller observed in earlier updates of this cluster.
    Learned,
    /// No observed update: oc's method (its completion curve, `maxUnavailable` waves of
    /// 10 minutes), with the last update's duration from the ClusterVersion history as the
    /// baseline.
    #[default]
    OcBaseline,
}

/// A remaining-time estimate with its interval.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    /// Remaining seconds at `computedAt`, median (p50).
    pub remaining_seconds: u32,
    /// Remaining seconds at `computedAt`, low end of the interval (p10).
    pub earliest_remaining_seconds: u32,
    /// Remaining seconds at `computedAt`, high end of the interval (p90).
    pub latest_remaining_seconds: u32,
    /// `computedAt + remainingSeconds`.
    pub estimated_completion_time: Timestamp,
    /// `computedAt + earliestRemainingSeconds`.
    pub earliest_completion_time: Timestamp,
    /// `computedAt + latestRemainingSeconds`.
    pub latest_completion_time: Timestamp,
    /// Paused: the estimate assumes it is resumed now.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
}

/// A pool's estimate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct PoolEstimate {
    /// MachineConfigPool.
    pub name: String,
    /// Its estimate.
    pub estimate: Estimate,
}

/// Estimates of the update in progress.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct UpdateEstimates {
    /// `Learned`, or `OcBaseline` when this cluster has no observed update yet.
    pub method: EstimateMethod,
    /// Why this method, in words (e.g. the fallback to oc's method).
    pub message: String,
    /// The instant the remaining seconds are counted from.
    pub computed_at: Timestamp,
    /// The control plane (every platform operator at the target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<Estimate>,
    /// Each pool (master included) with nodes to update.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub pools: Vec<PoolEstimate>,
    /// The whole update: control plane and every pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<Estimate>,
}
