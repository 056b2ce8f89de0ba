//! oc's method on the same inputs, for every scope: the fallback of a cluster with no observed
//! update, and what the bench compares with.
//!
//! - Control plane: B.7 (the completion curve, the last update's duration as baseline).
//! - A pool: C.8's node estimates as [`crate::nodes::pool_estimate_seconds`] combines them
//!   (the longest EST of the nodes in flight, `+10m` draining, `+5m` updating or rebooting,
//!   plus 10 minutes per wave of `maxUnavailable` nodes still to start). Where oc says `?`
//!   (no node started yet, a paused pool, a degraded node) the same rule is applied as if
//!   the nodes started now: oc gives no number there, this gives it the most favourable one.
//! - The whole update: the largest of the above (oc has no such number).

use jiff::Timestamp;
use update_status_api::input::ClusterVersion;

use crate::control_plane::oc_estimate_seconds;
use crate::inputs::ClusterInputs;
use crate::nodes::{NODE_UPDATE_SECONDS, NodeContext, NodeStage, TimedNode, node_stage};

/// oc's estimates, in seconds from `now`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OcEstimates {
    /// B.7 (negative when late), `None` without a start in the history.
    pub control_plane: Option<f64>,
    /// Each pool with nodes not updated, in pool order.
    pub pools: Vec<(String, f64)>,
    /// The largest of the above (late control plane counted as 0).
    pub update: Option<f64>,
}

/// The target version nodes are compared with (`history[0].version`).
pub(super) fn target(cv: &ClusterVersion) -> &str {
    cv.status.history.first().map_or("", |h| h.version.as_str())
}

/// oc's method at `now`.
pub fn oc_estimates<N: TimedNode>(
    inputs: &ClusterInputs<'_>,
    nodes: &[N],
    now: Timestamp,
) -> OcEstimates {
    let Some(cv) = inputs.cluster_version else {
        return OcEstimates::default();
    };
    let control_plane = oc_estimate_seconds(inputs, now);
    let ctx = NodeContext::from_inputs(inputs);
    let target = target(cv);
    let pools = ctx.pools();
    // (longest EST in flight, pending, total, finished)
    let mut per_pool = vec![(0u32, 0u32, 0u32, 0u32); pools.len()];
    for node in nodes {
        let Some(p) = ctx
            .pool_of(node)
            .and_then(|pool| pools.iter().position(|q| q.name == pool.name))
        else {
            continue;
        };
        let Some(t) = per_pool.get_mut(p) else {
            continue;
        };
        t.2 += 1;
        match node_stage(&ctx, node, target) {
            NodeStage::Pending => t.1 += 1,
            NodeStage::Drain => t.0 = t.0.max(NODE_UPDATE_SECONDS),
            NodeStage::Reboot => t.0 = t.0.max(NODE_UPDATE_SECONDS / 2),
            NodeStage::Ready | NodeStage::Finished => t.3 += 1,
        }
    }
    let pools: Vec<(String, f64)> = pools
        .iter()
        .zip(per_pool)
        .filter(|(_, (_, _, total, finished))| total > finished)
        .map(|(pool, (longest, pending, total, _))| {
            let waves = pending.div_ceil(pool.max_unavailable_of(total));
            let secs = longest.saturating_add(waves.saturating_mul(NODE_UPDATE_SECONDS));
            (pool.name.clone(), f64::from(secs))
        })
        .collect();
    let update = if control_plane.is_none() && pools.is_empty() {
        None
    } else {
        Some(
            pools
                .iter()
                .map(|(_, s)| *s)
                .fold(control_plane.unwrap_or(0.0).max(0.0), f64::max),
        )
    };
    OcEstimates {
        control_plane,
        pools,
        update,
    }
}
