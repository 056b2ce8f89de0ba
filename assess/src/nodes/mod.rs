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

mod availability;
mod constants;
mod context;
mod node;
mod pool;
mod source;
mod stage;
mod timed;
mod trim;
pub use crate::format::go_quote;
pub use crate::order::{
    MASTER_POOL, WORKER_POOL, compare_node_insights, node_assessment_rank, node_phase_rank,
    node_sort_key,
};
pub use availability::*;
pub use constants::{
    MCO_REFERENCE, NOT_READY_GRACE, PAUSED_POOL_DESCRIPTION, PAUSED_POOL_REFERENCE, PRESSURE_GRACE,
    SOURCE_NODE_DEGRADED, SOURCE_NODE_UNAVAILABLE, SOURCE_POOL_PAUSED,
};
pub use context::*;
pub use node::*;
pub use pool::*;
pub use source::NodeSource;
pub use stage::{NodeStage, Stamps, in_incident, node_stage, timeline};
pub use timed::TimedNode;
pub use trim::trim_node;

#[cfg(test)]
mod tests;
