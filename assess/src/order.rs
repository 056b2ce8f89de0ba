//! Presentation order, in one place. Pools are not sorted: they keep the MachineConfigPool list
//! order (offline the file's, online by name as an API server lists them), as `oc` does. Here:
//! pool membership (which pool a node matching several belongs to), ClusterOperators (by name,
//! as the API lists them and `oc` shows them) and node progress insights (C.9).

use std::cmp::Ordering;

use update_status_api::crd::{Assessment, NodePhase, UpdateInsightStatus};
use update_status_api::input::ClusterOperator;

/// Name of the control-plane pool.
pub const MASTER_POOL: &str = "master";
/// Name of the default worker pool.
pub const WORKER_POOL: &str = "worker";

/// Membership rank of a pool (a node matched by several pools belongs to the first): `master`,
/// the custom pools by name, then `worker`.
pub fn pool_membership_rank(name: &str) -> (u8, &str) {
    match name {
        MASTER_POOL => (0, ""),
        WORKER_POOL => (2, ""),
        other => (1, other),
    }
}

/// Order of ClusterOperators: by name.
pub fn compare_operators(a: &ClusterOperator, b: &ClusterOperator) -> Ordering {
    a.metadata.name.cmp(&b.metadata.name)
}

/// C.9 rank of a node assessment (Degraded 0 < Unavailable 1 < Progressing 2 < Excluded 3 <
/// Outdated 4 < Completed 5; anything else last).
pub fn node_assessment_rank(a: Assessment) -> u8 {
    match a {
        Assessment::Degraded => 0,
        Assessment::Unavailable => 1,
        Assessment::Progressing => 2,
        Assessment::Excluded => 3,
        Assessment::Outdated => 4,
        Assessment::Completed => 5,
        _ => 6,
    }
}

/// C.9 rank of a phase (Draining 0 < Updating 1 < Rebooting 2 < Paused 3 < Pending 4 < Updated 5;
/// none last).
pub fn node_phase_rank(p: Option<NodePhase>) -> u8 {
    match p {
        Some(NodePhase::Draining) => 0,
        Some(NodePhase::Updating) => 1,
        Some(NodePhase::Rebooting) => 2,
        Some(NodePhase::Paused) => 3,
        Some(NodePhase::Pending) => 4,
        Some(NodePhase::Updated) => 5,
        None => 6,
    }
}

/// C.9 sort key of a node progress insight: (assessment rank, phase rank, node name).
pub fn node_sort_key(insight: &UpdateInsightStatus) -> (u8, u8, &str) {
    let (a, p) = insight.progress.as_ref().map_or((6, 6), |p| {
        (node_assessment_rank(p.assessment), node_phase_rank(p.phase))
    });
    (a, p, insight.resource.name.as_str())
}

/// C.9 comparator of node progress insights (use with `sort_by`).
pub fn compare_node_insights(a: &UpdateInsightStatus, b: &UpdateInsightStatus) -> Ordering {
    node_sort_key(a).cmp(&node_sort_key(b))
}
