//! Node and pool assessment (algorithms.md sections C and D.6–D.8, OC variant).
//!
//! Built for thousands of nodes and for a reconciler that must not recompute everything on each
//! node event. Three layers:
//!
//! 1. [`NodeContext`]: everything shared by all nodes, built once per change of the
//!    ClusterVersion, the MachineConfigPools or the MachineConfigs (target version, multi-arch
//!    flag, MachineConfig name → version map, compiled pools in membership order).
//! 2. [`assess_node`]: a pure per-node function (pool membership, C.2–C.8 facts, the node's
//!    progress insight and its D.6/D.7 health insights). Its result can be cached per node and
//!    recomputed only when that node (or the context) changes, or when
//!    [`node_requeue_after`] says time alone changes it.
//! 3. [`aggregate_pool`]: C.10 counts and assessment, D.8 and the pool conditions from the
//!    (cached) node assessments of one pool.
//!
//! [`assess_nodes`] composes the three for the whole cluster.
//!
//! Nothing here reads the clock: `now` is always passed in. Bad input (missing or malformed
//! annotations, unknown MachineConfigs, nodes without conditions, pools without selector or
//! configuration, no ClusterVersion) never panics.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use update_status_api::crd::limits;

pub use crate::format::go_quote;
use crate::format::{cut_noting, ellipsize};
use crate::insight::{HealthDraft, tally};
use crate::related::{DrainEvidence, DrainFailure};
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, ImpactLevel, ImpactType, InsightScope, InsightType,
    NodeCounts, NodePhase, ProgressInsight, ResourceRef, ScopeType, UpdateInsightStatus,
    VersionPair, WorkerPoolUpdateStatusStatus,
};
use update_status_api::input::{
    ClusterVersion, MachineConfig, MachineConfigPool, NODE_CURRENT_CONFIG, NODE_CURRENT_IMAGE,
    NODE_DESIRED_CONFIG, NODE_DESIRED_DRAIN, NODE_DESIRED_IMAGE, NODE_LAST_APPLIED_DRAIN,
    NODE_REASON, NODE_STATE, Node, POOL_LAYERING_ENABLED, POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG,
    first_condition, selector_matches,
};

use super::ClusterInputs;

mod availability;
mod context;
mod node;
mod pool;
mod source;
mod trim;
pub use crate::order::{
    MASTER_POOL, WORKER_POOL, compare_node_insights, node_assessment_rank, node_phase_rank,
    node_sort_key,
};
pub use availability::*;
pub use context::*;
pub use node::*;
pub use pool::*;
pub use source::NodeSource;
pub use trim::trim_node;

/// `source` of D.6 insights.
pub const SOURCE_NODE_UNAVAILABLE: &str = "NodeUnavailable";
/// `source` of D.7 insights.
pub const SOURCE_NODE_DEGRADED: &str = "NodeDegraded";
/// `source` of D.8 insights.
pub const SOURCE_POOL_PAUSED: &str = "PoolPaused";

/// Reference of D.6 and D.7.
pub const MCO_REFERENCE: &str = "https://docs.openshift.com/container-platform/latest/post_installation_configuration/machine-configuration-tasks.html#understanding-the-machine-config-operator";
/// Reference of D.8.
pub const PAUSED_POOL_REFERENCE: &str = "https://docs.openshift.com/container-platform/latest/support/troubleshooting/troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues";
/// Description of D.8.
pub const PAUSED_POOL_DESCRIPTION: &str = "Pool is paused, which stops all changes to the nodes in the pool, including updates. The nodes will not be updated until the pool is unpaused by the administrator.";

/// API group of MachineConfigPools.
const MCO_GROUP: &str = "machineconfiguration.openshift.io";

/// A `Not ready` node is not "seriously" unavailable before this long (C.4).
pub const NOT_READY_GRACE: SignedDuration = SignedDuration::from_secs(5 * 60);
/// A node with disk pressure or unavailable network is not "seriously" unavailable before this long (C.4).
pub const PRESSURE_GRACE: SignedDuration = SignedDuration::from_secs(60);

// Machine-config daemon states (`Working` and any other state read as updating, C.7).
const STATE_DONE: &str = "Done";
const STATE_REBOOTING: &str = "Rebooting";
const STATE_DEGRADED: &str = "Degraded";
const STATE_UNRECONCILABLE: &str = "Unreconcilable";

// C.4 reason texts.
const REASON_NOT_READY: &str = "Not ready";
const REASON_DISK_PRESSURE: &str = "Disk pressure";
const REASON_NETWORK_UNAVAILABLE: &str = "Network unavailable";
const REASON_UNSCHEDULABLE: &str = "Node is marked unschedulable";
const REASON_MCD_PROCESSING: &str = "Machine Config Daemon is processing the node";

#[cfg(test)]
mod tests;
