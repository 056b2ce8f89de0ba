//! Learning: what one reading of the cluster at `now` adds to an [`UpdateHistoryStatus`].
//!
//! Called on every reading (the controller's wake-ups, the bench's simulated steps). Operator
//! completion times come from the inputs themselves (`Progressing` turning `False` once at the
//! target), so a restart loses none; node phases are timed from the readings (first seen in a
//! phase), so a node that changes phase while nobody watches is timed from the next reading.

use jiff::Timestamp;
use update_status_api::history::{
    CurrentUpdate, FinishedNode, LearnedSource, LearnedUpdate, MAX_FINISHED_NODES, MAX_NODE_GROUPS,
    MAX_OPERATORS, MAX_TRACKED_NODES, MAX_UPDATES, NodeGroupTiming, OperatorTiming, PausedPool,
    PoolTiming, TrackedNode, UpdateHistoryStatus,
};
use update_status_api::input::{
    ClusterVersion, NODE_CURRENT_CONFIG, NODE_DESIRED_CONFIG, NODE_DESIRED_DRAIN,
    NODE_LAST_APPLIED_DRAIN, NODE_STATE, UpdateHistory,
};

use super::node::TimedNode;
use super::stats;
use crate::control_plane::is_updated;
use crate::inputs::ClusterInputs;
use crate::nodes::{NodeContext, NodeSource};

/// Label of a node's instance type.
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
const ROLE_PREFIX: &str = "node-role.kubernetes.io/";

/// Where a node is in the update, as far as timing goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeStage {
    /// Not started (or not going to the target: nothing to time).
    Pending,
    /// Draining (C.6).
    Drain,
    /// Applying the new configuration and rebooting.
    Reboot,
    /// On the new configuration, not yet uncordoned and ready.
    Ready,
    /// Updated, uncordoned and ready.
    Finished,
}

/// A node's stage towards `target` (the ClusterVersion's `history[0].version`).
pub fn node_stage(ctx: &NodeContext, node: &impl TimedNode, target: &str) -> NodeStage {
    let current = node.annotation(NODE_CURRENT_CONFIG).unwrap_or_default();
    let desired = node.annotation(NODE_DESIRED_CONFIG).unwrap_or_default();
    let version = |c: &str| ctx.machine_config_version(c).unwrap_or_default();
    if !current.is_empty()
        && version(current) == target
        && (desired.is_empty() || current == desired)
    {
        return if node.ready() && !node.unschedulable() {
            NodeStage::Finished
        } else {
            NodeStage::Ready
        };
    }
    if desired.is_empty() || current == desired || version(desired) != target {
        return NodeStage::Pending;
    }
    let want = node.annotation(NODE_DESIRED_DRAIN).unwrap_or_default();
    let applied = node.annotation(NODE_LAST_APPLIED_DRAIN).unwrap_or_default();
    if want.starts_with("drain") && want != applied {
        NodeStage::Drain
    } else {
        NodeStage::Reboot
    }
}

/// The machine-config daemon says the node is `Degraded` or `Unreconcilable`.
fn in_incident(node: &impl TimedNode) -> bool {
    matches!(
        node.annotation(NODE_STATE),
        Some("Degraded" | "Unreconcilable")
    )
}

/// The role of a node for grouping: `master` for control-plane nodes, else `worker`.
pub fn node_role(node: &impl NodeSource) -> &'static str {
    let has = |r: &str| node.label(&format!("{ROLE_PREFIX}{r}")).is_some();
    if has("master") || has("control-plane") {
        "master"
    } else {
        "worker"
    }
}

/// The instance type label ("" when absent).
pub fn instance_type(node: &impl NodeSource) -> &str {
    node.label(INSTANCE_TYPE_LABEL).unwrap_or_default()
}

fn secs_between(from: Timestamp, to: Timestamp) -> f64 {
    (to.as_millisecond() - from.as_millisecond()).max(0) as f64 / 1000.0
}

fn secs_u32(from: Timestamp, to: Timestamp) -> u32 {
    secs_between(from, to).round().min(f64::from(u32::MAX)) as u32
}

/// Seeds the learned updates from the ClusterVersion history (control-plane durations of the
/// completed updates, installation excluded), when nothing was learned yet. True when it
/// added any.
pub fn seed_from_history(status: &mut UpdateHistoryStatus, cv: &ClusterVersion) -> bool {
    if !status.updates.is_empty() || status.current.is_some() {
        return false;
    }
    let history = &cv.status.history;
    let Some(last) = history.len().checked_sub(1) else {
        return false;
    };
    let seeded: Vec<LearnedUpdate> = history[..last]
        .iter()
        .enumerate()
        .filter(|(_, h)| h.is_completed())
        .filter_map(|(i, h)| {
            let (s, c) = (h.started_time?, h.completion_time?);
            (c > s).then(|| LearnedUpdate {
                source: LearnedSource::ClusterVersionHistory,
                from: history
                    .get(i + 1)
                    .map(|p| p.version.clone())
                    .unwrap_or_default(),
                to: h.version.clone(),
                started_at: s,
                control_plane_seconds: secs_u32(s, c),
                ..Default::default()
            })
        })
        .take(MAX_UPDATES)
        .collect();
    let added = !seeded.is_empty();
    status.updates = seeded;
    status.learned_updates = status.updates.len() as u32;
    added
}

/// The update the ClusterVersion says is current: `history[0]` with a start.
fn current_entry(cv: &ClusterVersion) -> Option<&UpdateHistory> {
    cv.status
        .history
        .first()
        .filter(|h| h.started_time.is_some())
}

/// Learns from one reading at `now`. True when `status` changed.
pub fn observe<N: TimedNode>(
    status: &mut UpdateHistoryStatus,
    inputs: &ClusterInputs<'_>,
    nodes: &[N],
    now: Timestamp,
) -> bool {
    let Some(cv) = inputs.cluster_version else {
        return false;
    };
    let before = status.clone();
    seed_from_history(status, cv);
    let Some(h0) = current_entry(cv) else {
        return *status != before;
    };
    let Some(started) = h0.started_time else {
        return *status != before;
    };
    // A history of one entry is the installation: nothing to learn from it.
    let is_update = cv.status.history.len() >= 2;
    let same = status
        .current
        .as_ref()
        .is_some_and(|c| c.started_at == started && c.to == h0.version);
    if !same {
        // Another update replaced the one we followed before it finished: not learned.
        status.current = None;
        let known = status
            .updates
            .iter()
            .any(|u| u.started_at == started && u.source == LearnedSource::Observed);
        if is_update && h0.is_partial() && !known {
            status.current = Some(CurrentUpdate {
                from: cv
                    .status
                    .history
                    .get(1)
                    .map(|h| h.version.clone())
                    .unwrap_or_default(),
                to: h0.version.clone(),
                started_at: started,
                ..Default::default()
            });
        }
    }
    if let Some(mut current) = status.current.take() {
        let done = follow(&mut current, inputs, nodes, h0, now);
        if done {
            learn(status, current, now);
        } else {
            status.current = Some(current);
        }
    }
    status.learned_updates = status.updates.len() as u32;
    *status != before
}

/// Brings the followed update up to date; true when it is complete (every operator at the
/// target, every pool updated).
fn follow<N: TimedNode>(
    current: &mut CurrentUpdate,
    inputs: &ClusterInputs<'_>,
    nodes: &[N],
    h0: &UpdateHistory,
    now: Timestamp,
) -> bool {
    let started = current.started_at;
    let Some(cv) = inputs.cluster_version else {
        return false;
    };
    let desired = cv.status.desired.version.as_str();
    let mco = inputs.mco_image.image();
    let mut all_updated = true;
    let mut platform = 0usize;
    for co in inputs
        .cluster_operators
        .iter()
        .filter(|c| c.is_platform_operator())
    {
        platform += 1;
        if !is_updated(co, desired, mco) {
            all_updated = false;
            continue;
        }
        let name = co.name();
        if current.operators.iter().any(|o| o.name == name)
            || current.operators.len() >= MAX_OPERATORS
        {
            continue;
        }
        // Progressing turned False once at the target: that instant, when it is within the
        // update; else now (first seen).
        let at = co
            .condition("Progressing")
            .filter(|c| c.status == "False")
            .and_then(|c| c.last_transition_time)
            .filter(|t| *t >= started && *t <= now)
            .unwrap_or(now);
        let timing = OperatorTiming {
            name: name.to_string(),
            completed_after_seconds: secs_u32(started, at),
        };
        let pos = current
            .operators
            .partition_point(|o| o.completed_after_seconds <= timing.completed_after_seconds);
        current.operators.insert(pos, timing);
    }
    if all_updated && platform > 0 && current.control_plane_completed_at.is_none() {
        let last = current
            .operators
            .iter()
            .map(|o| o.completed_after_seconds)
            .max()
            .unwrap_or(0);
        let at = Timestamp::from_second(started.as_second() + i64::from(last)).unwrap_or(now);
        current.control_plane_completed_at = Some(at.min(now));
    }
    let pools_done = follow_nodes(current, inputs, nodes, &h0.version, now);
    current.control_plane_completed_at.is_some() && pools_done
}

/// Times the nodes; true when every pool with nodes is updated.
fn follow_nodes<N: TimedNode>(
    current: &mut CurrentUpdate,
    inputs: &ClusterInputs<'_>,
    nodes: &[N],
    target: &str,
    now: Timestamp,
) -> bool {
    let ctx = NodeContext::from_inputs(inputs);
    let started = current.started_at;
    let pools = ctx.pools();
    // Per pool: (nodes, finished).
    let mut tally = vec![(0usize, 0usize); pools.len()];
    for node in nodes {
        let Some(pool) = ctx.pool_of(node) else {
            continue;
        };
        let Some(p) = pools.iter().position(|q| q.name == pool.name) else {
            continue;
        };
        let stage = node_stage(&ctx, node, target);
        if let Some(t) = tally.get_mut(p) {
            t.0 += 1;
            if stage == NodeStage::Finished {
                t.1 += 1;
            }
        }
        let name = node.name();
        let tracked = current.nodes.iter().position(|n| n.name == name);
        match (stage, tracked) {
            (NodeStage::Pending, _) => {}
            (NodeStage::Finished, Some(i)) => {
                let n = current.nodes.remove(i);
                if n.incident {
                    continue;
                }
                if let (Some(a), Some(b), Some(c)) = (n.drain_at, n.reboot_at, n.ready_at)
                    && current.finished.len() < MAX_FINISHED_NODES
                {
                    current.finished.push(FinishedNode {
                        name: n.name.clone(),
                        group: n.group,
                        drain_seconds: secs_u32(a, b),
                        reboot_seconds: secs_u32(b, c),
                    });
                }
                if let Some(g) = current.node_groups.get_mut(n.group as usize) {
                    if let (Some(a), Some(b)) = (n.drain_at, n.reboot_at) {
                        stats::add(&mut g.drain, secs_between(a, b));
                    }
                    if let (Some(a), Some(b)) = (n.reboot_at, n.ready_at) {
                        stats::add(&mut g.reboot, secs_between(a, b));
                    }
                    if let Some(a) = n.ready_at {
                        stats::add(&mut g.ready, secs_between(a, now));
                    }
                }
            }
            (NodeStage::Finished, None) => {}
            (stage, Some(i)) => {
                if let Some(n) = current.nodes.get_mut(i) {
                    n.incident |= in_incident(node);
                    match stage {
                        NodeStage::Reboot if n.reboot_at.is_none() => n.reboot_at = Some(now),
                        NodeStage::Ready if n.ready_at.is_none() => {
                            n.reboot_at.get_or_insert(now);
                            n.ready_at = Some(now);
                        }
                        _ => {}
                    }
                }
            }
            (stage, None) => {
                if current.nodes.len() >= MAX_TRACKED_NODES {
                    continue;
                }
                let Some(group) = group_index(current, &pool.name, node) else {
                    continue;
                };
                let mut n = TrackedNode {
                    name: name.to_string(),
                    group,
                    incident: in_incident(node),
                    ..Default::default()
                };
                match stage {
                    NodeStage::Drain => n.drain_at = Some(now),
                    NodeStage::Reboot => n.reboot_at = Some(now),
                    _ => n.ready_at = Some(now),
                }
                current.nodes.push(n);
            }
        }
    }
    // Nodes that left (deleted): forget them.
    if !current.nodes.is_empty() {
        let names: std::collections::HashSet<&str> = nodes.iter().map(NodeSource::name).collect();
        current.nodes.retain(|n| names.contains(n.name.as_str()));
    }
    let mut all_done = true;
    for (pool, (total, finished)) in pools.iter().zip(tally) {
        // Pauses while the pool had nodes to update.
        let outdated = finished < total;
        let entry = current.paused.iter().position(|p| p.name == pool.name);
        match (pool.paused && outdated, entry) {
            (true, None) if current.paused.len() < MAX_NODE_GROUPS => {
                current.paused.push(PausedPool {
                    name: pool.name.clone(),
                    since: Some(now),
                    paused_seconds: 0,
                })
            }
            (true, Some(i)) => {
                if let Some(p) = current.paused.get_mut(i) {
                    p.since.get_or_insert(now);
                }
            }
            (false, Some(i)) => {
                if let Some(p) = current.paused.get_mut(i)
                    && let Some(since) = p.since.take()
                {
                    p.paused_seconds = p.paused_seconds.saturating_add(secs_u32(since, now));
                }
            }
            _ => {}
        }
        if total == 0 {
            continue;
        }
        if outdated {
            all_done = false;
        } else if !current.pools.iter().any(|p| p.name == pool.name)
            && current.pools.len() < MAX_NODE_GROUPS
        {
            let paused_seconds = current
                .paused
                .iter()
                .find(|p| p.name == pool.name)
                .map_or(0, |p| p.paused_seconds);
            current.pools.push(PoolTiming {
                name: pool.name.clone(),
                completed_after_seconds: secs_u32(started, now),
                paused_seconds,
            });
        }
    }
    all_done
}

/// The index of a node's group in `current.node_groups`, created when new (`None` past the
/// bound).
fn group_index(current: &mut CurrentUpdate, pool: &str, node: &impl NodeSource) -> Option<u32> {
    let role = node_role(node);
    let itype = instance_type(node);
    if let Some(i) = current
        .node_groups
        .iter()
        .position(|g| g.pool == pool && g.role == role && g.instance_type == itype)
    {
        return u32::try_from(i).ok();
    }
    if current.node_groups.len() >= MAX_NODE_GROUPS {
        return None;
    }
    current.node_groups.push(NodeGroupTiming {
        pool: pool.to_string(),
        role: role.to_string(),
        instance_type: itype.to_string(),
        ..Default::default()
    });
    u32::try_from(current.node_groups.len() - 1).ok()
}

/// The followed update is complete: it becomes the newest learned update.
fn learn(status: &mut UpdateHistoryStatus, current: CurrentUpdate, now: Timestamp) {
    super::factors::fold(status, &current);
    let started = current.started_at;
    let cp_end = current.control_plane_completed_at.unwrap_or(now);
    let learned = LearnedUpdate {
        source: LearnedSource::Observed,
        from: current.from,
        to: current.to,
        started_at: started,
        control_plane_seconds: secs_u32(started, cp_end),
        total_seconds: Some(secs_u32(started, now)),
        operators: current.operators,
        node_groups: current.node_groups,
        pools: current.pools,
    };
    status.updates.retain(|u| u.started_at != started);
    status.updates.insert(0, learned);
    status.updates.truncate(MAX_UPDATES);
}
