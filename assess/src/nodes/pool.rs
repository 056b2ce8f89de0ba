//! C.10, D.8: the pools, aggregated from their nodes' assessments.

use std::collections::HashMap;

use jiff::Timestamp;
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, ImpactLevel, ImpactType, InsightScope, NodeCounts,
    NodePhase, ScopeType, UpdateInsightStatus, WorkerPoolUpdateStatusStatus, limits,
};

use super::constants::{PAUSED_POOL_DESCRIPTION, PAUSED_POOL_REFERENCE, SOURCE_POOL_PAUSED};
use super::context::{NodeContext, PoolContext};
use super::node::{NodeAssessment, assess_node};
use crate::format::ellipsize;
use crate::inputs::ClusterInputs;
use crate::insight::{HealthDraft, tally};
use crate::order::compare_node_insights;

/// Assessment of every pool and its nodes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodesAssessment {
    /// One per MachineConfigPool, in pool order (`master`, `worker`, then the others by name).
    pub pools: Vec<PoolAssessment>,
}

impl NodesAssessment {
    /// The master pool's assessment, which feeds the control plane's node summary.
    pub fn control_plane_pool(&self) -> Option<&PoolAssessment> {
        self.pools.iter().find(|p| p.is_master)
    }

    /// A pool's assessment by name.
    pub fn pool(&self, name: &str) -> Option<&PoolAssessment> {
        self.pools.iter().find(|p| p.name == name)
    }
}

/// Assessment of one pool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolAssessment {
    /// Pool name.
    pub name: String,
    /// `master`: its nodes are the control plane's.
    pub is_master: bool,
    /// Status content (for the master pool, its counts feed ControlPlaneUpdateStatus).
    pub status: WorkerPoolUpdateStatusStatus,
    /// Node progress insights (C.9 order), then node health insights (by node name, D.6 before
    /// D.7), then the pool's D.8 insight.
    pub insights: Vec<UpdateInsightStatus>,
}

/// C.10 counts of a pool's nodes.
pub fn pool_counts<'a>(nodes: impl IntoIterator<Item = &'a NodeAssessment>) -> NodeCounts {
    let mut c = NodeCounts::default();
    let (mut completed, mut assessed_progressing) = (0, 0);
    for n in nodes {
        c.total += 1;
        if n.phase == NodePhase::Updated && !n.is_updating {
            completed += 1;
        }
        if n.assessment == Assessment::Progressing {
            assessed_progressing += 1;
        }
        if !n.is_unavailable {
            c.available += 1;
        }
        if n.is_degraded {
            c.degraded += 1;
        }
        match n.phase {
            NodePhase::Paused => {
                c.excluded += 1;
                c.outdated += 1;
            }
            NodePhase::Pending => {
                c.pending += 1;
                c.outdated += 1;
            }
            NodePhase::Draining | NodePhase::Updating | NodePhase::Rebooting => {
                if n.phase == NodePhase::Draining {
                    c.draining += 1;
                }
                c.outdated += 1;
                if !n.is_degraded {
                    c.progressing += 1;
                }
            }
            NodePhase::Updated => {}
        }
    }
    c.updated = c.total - c.outdated;
    // An empty pool has no node table (and keeps the counts of an empty pool unchanged).
    if c.total > 0 {
        c.completed = Some(completed);
        c.assessed_progressing = Some(assessed_progressing);
    }
    c
}

/// C.10 assessment from counts (`Empty` for a pool with no nodes).
pub fn pool_assessment(c: &NodeCounts) -> Assessment {
    if c.total == 0 {
        Assessment::Empty
    } else if c.updated == c.total {
        Assessment::Completed
    } else if c.pending == c.total {
        Assessment::Pending
    } else if c.degraded > 0 {
        Assessment::Degraded
    } else if c.excluded > 0 {
        Assessment::Excluded
    } else {
        Assessment::Progressing
    }
}

/// `round_half_even(updated / total × 100)`, 0 for an empty pool.
pub fn completion_percent(updated: u32, total: u32) -> u32 {
    if total == 0 {
        return 0;
    }
    // Same float computation as `oc` (`%.0f` rounds the binary value half to even).
    let pct = f64::from(updated) / f64::from(total) * 100.0;
    pct.round_ties_even().clamp(0.0, 100.0) as u32
}

/// Aggregates a pool from its nodes' assessments (nodes of other pools are ignored): C.10
/// counts and assessment, D.8, health counts and conditions.
pub fn aggregate_pool<'a>(
    ctx: &NodeContext,
    pool: &PoolContext,
    nodes: impl IntoIterator<Item = &'a NodeAssessment>,
) -> PoolAssessment {
    aggregate(ctx, pool, nodes, true)
}

/// [`aggregate_pool`] without copies of the nodes' insights: the same status, and `insights`
/// holds the pool's own insight (D.8) only. For callers that keep each node's insights
/// themselves (the worker-pools share): at thousands of nodes the copies were a second set
/// of every node insight, held between passes.
pub fn aggregate_pool_status<'a>(
    ctx: &NodeContext,
    pool: &PoolContext,
    nodes: impl IntoIterator<Item = &'a NodeAssessment>,
) -> PoolAssessment {
    aggregate(ctx, pool, nodes, false)
}

fn aggregate<'a>(
    ctx: &NodeContext,
    pool: &PoolContext,
    nodes: impl IntoIterator<Item = &'a NodeAssessment>,
    node_insights: bool,
) -> PoolAssessment {
    let mut members: Vec<&NodeAssessment> =
        nodes.into_iter().filter(|n| n.pool == pool.name).collect();
    let counts = pool_counts(members.iter().copied());
    let assessment = pool_assessment(&counts);

    let mut insights = Vec::new();
    if node_insights {
        insights.reserve(members.len() + 1);
        members.sort_by(|a, b| compare_node_insights(&a.progress, &b.progress));
        insights.extend(members.iter().map(|n| n.progress.clone()));
        members.sort_by(|a, b| a.name.cmp(&b.name));
        insights.extend(members.iter().flat_map(|n| n.health.iter().cloned()));
    }
    // D.8
    if pool.paused && counts.excluded > 0 {
        insights.extend(paused_pool_insight(pool));
    }

    let health = if node_insights {
        tally(&insights)
    } else {
        tally(members.iter().flat_map(|n| &n.health).chain(&insights))
    };

    let conditions = pool_conditions(&members, counts.total, health.critical + health.error);

    PoolAssessment {
        name: pool.name.clone(),
        is_master: pool.is_master,
        status: WorkerPoolUpdateStatusStatus {
            resource: pool.resource.clone(),
            assessment,
            paused: pool.paused,
            completion_percent: completion_percent(counts.updated, counts.total),
            target_version: ellipsize(&ctx.target_version, limits::VERSION),
            estimate_seconds: pool_estimate_seconds(pool, &members, &counts),
            nodes: counts,
            health_insights: health,
            conditions,
        },
        insights,
    }
}

/// D.8: outdated nodes in a paused pool will not be updated.
fn paused_pool_insight(pool: &PoolContext) -> Option<UpdateInsightStatus> {
    HealthDraft {
        resource: pool.resource.clone(),
        scope: InsightScope {
            type_: ScopeType::WorkerPool,
            pool: Some(pool.name.clone()),
        },
        source: SOURCE_POOL_PAUSED,
        started_at: None,
        level: ImpactLevel::Warning,
        type_: ImpactType::UpdateStalled,
        summary: format!(
            "Outdated nodes in a paused pool '{}' will not be updated",
            pool.name
        ),
        description: PAUSED_POOL_DESCRIPTION.to_string(),
        reference: PAUSED_POOL_REFERENCE,
    }
    .build()
}

/// A pool's `Updating` (some of its `total` nodes are moving) and `Healthy` (`serious`:
/// health insights of level Error or Critical) conditions.
fn pool_conditions(members: &[&NodeAssessment], total: u32, serious: u32) -> Vec<Condition> {
    let moving = members
        .iter()
        .filter(|n| {
            matches!(
                n.phase,
                NodePhase::Draining | NodePhase::Updating | NodePhase::Rebooting
            )
        })
        .count();
    vec![
        if moving > 0 {
            Condition {
                type_: "Updating".into(),
                status: ConditionStatus::True,
                reason: "NodesUpdating".into(),
                message: format!("{moving} of {total} nodes are draining, updating or rebooting"),
                last_transition_time: None,
            }
        } else {
            Condition {
                type_: "Updating".into(),
                status: ConditionStatus::False,
                reason: "NoNodesUpdating".into(),
                message: "No node is draining, updating or rebooting".into(),
                last_transition_time: None,
            }
        },
        if serious > 0 {
            Condition {
                type_: "Healthy".into(),
                status: ConditionStatus::False,
                reason: "ErrorInsights".into(),
                message: format!("{serious} health insights of level Error or Critical"),
                last_transition_time: None,
            }
        } else {
            Condition {
                type_: "Healthy".into(),
                status: ConditionStatus::True,
                reason: "AsExpected".into(),
                message: String::new(),
                last_transition_time: None,
            }
        },
    ]
}

/// What oc's node estimates say of a whole node update: a node that starts draining is done
/// in 10 minutes (`+10m`).
pub const NODE_UPDATE_SECONDS: u32 = 10 * 60;

/// A pool's estimated time to completion in seconds (see `docs/assessment-contract.md`): the
/// longest EST of its updating nodes, plus one whole node update ([`NODE_UPDATE_SECONDS`])
/// per wave of `maxUnavailable` nodes still to start. 0 when every node is updated; `None`
/// when it cannot be told: an empty pool, a degraded node or an unavailable one that has not
/// started (EST `?`: it may never finish), an excluded node (a paused pool), or no node
/// started yet (the pool's start is unknown).
pub fn pool_estimate_seconds(
    pool: &PoolContext,
    members: &[&NodeAssessment],
    counts: &NodeCounts,
) -> Option<u32> {
    if counts.total == 0 {
        return None;
    }
    if counts.updated == counts.total {
        return Some(0);
    }
    if counts.pending == counts.total {
        return None;
    }
    let mut longest = 0u32;
    let mut pending = 0u32;
    for n in members {
        match (n.assessment, n.estimate_seconds) {
            // Never progresses while paused; may never finish.
            (Assessment::Excluded | Assessment::Degraded, _) => return None,
            (Assessment::Outdated, _) => pending += 1,
            (_, Some(s)) => longest = longest.max(s),
            // EST `?`: an unavailable node that has not started.
            (_, None) => return None,
        }
    }
    let waves = pending.div_ceil(pool.max_unavailable_of(counts.total));
    Some(longest.saturating_add(waves.saturating_mul(NODE_UPDATE_SECONDS)))
}

/// Assesses every pool and node.
pub fn assess_nodes(inputs: &ClusterInputs<'_>, now: Timestamp) -> NodesAssessment {
    let ctx = NodeContext::from_inputs(inputs);
    let assessed: Vec<NodeAssessment> = inputs
        .nodes
        .iter()
        .filter_map(|n| assess_node(&ctx, n, now))
        .collect();
    let index: HashMap<&str, usize> = ctx
        .pools
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    let mut by_pool: Vec<Vec<&NodeAssessment>> = vec![Vec::new(); ctx.pools.len()];
    for n in &assessed {
        if let Some(&i) = index.get(n.pool.as_str())
            && let Some(group) = by_pool.get_mut(i)
        {
            group.push(n);
        }
    }
    NodesAssessment {
        pools: ctx
            .pools
            .iter()
            .zip(by_pool)
            .map(|(pool, members)| aggregate_pool(&ctx, pool, members))
            .collect(),
    }
}
