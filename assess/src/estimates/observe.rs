//! Learning: what one reading of the cluster at `now` adds to an [`UpdateHistoryStatus`].
//!
//! Called on every reading (the controller's wake-ups, the bench's simulated steps). Operator
//! completion times come from the inputs themselves (`Progressing` turning `False` once at the
//! target), so a restart loses none; node phases are timed from the readings (first seen in a
//! phase). A phase this learner did not see itself (a restart, a new leader, a stage passed
//! between two of its passes) is taken from the node's progress insight, whose timeline the
//! worker-pools reconciler stamps by the same rule ([`observe_resuming`]); without one, a node
//! that changes phase while nobody watches is timed from the next reading.

use jiff::Timestamp;
use update_status_api::crd::NodeTimeline;
use update_status_api::history::{
    CurrentUpdate, FinishedNode, LearnedSource, LearnedUpdate, MAX_FINISHED_NODES, MAX_NODE_GROUPS,
    MAX_OPERATORS, MAX_TRACKED_NODES, MAX_UPDATES, NodeGroupTiming, OperatorTiming, PausedPool,
    PoolTiming, TrackedNode, UpdateHistoryStatus,
};
use update_status_api::input::{ClusterVersion, UpdateHistory};

use super::stats;
use crate::control_plane::is_updated;
use crate::inputs::ClusterInputs;
use crate::nodes::{
    NodeContext, NodeSource, NodeStage, Stamps, TimedNode, in_incident, node_stage,
};

/// Label of a node's instance type.
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
const ROLE_PREFIX: &str = "node-role.kubernetes.io/";

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

/// Stamps a followed node observed in `stage` at `now` ([`Stamps::stamp`], the rule of the
/// nodes' insights). A stamp it lacks is first taken from `resumed` (its insight's timeline,
/// read only then): what happened while this state was not followed here (a restart).
fn stamp(
    n: &mut TrackedNode,
    stage: NodeStage,
    now: Timestamp,
    resumed: impl FnOnce() -> Option<NodeTimeline>,
) {
    let mut s = Stamps {
        drain: n.drain_at,
        reboot: n.reboot_at,
        ready: n.ready_at,
    };
    let lacks = match stage {
        NodeStage::Pending => false,
        NodeStage::Drain => s.drain.is_none() && s.reboot.is_none() && s.ready.is_none(),
        NodeStage::Reboot => s.reboot.is_none() && s.ready.is_none(),
        NodeStage::Ready | NodeStage::Finished => {
            s.drain.is_none() || s.reboot.is_none() || s.ready.is_none()
        }
    };
    if lacks && let Some(t) = resumed() {
        let r = Stamps::from(&t);
        s.drain = s.drain.or(r.drain);
        s.reboot = s.reboot.or(r.reboot);
        s.ready = s.ready.or(r.ready);
        n.incident |= t.incident;
    }
    s.stamp(stage, now);
    (n.drain_at, n.reboot_at, n.ready_at) = (s.drain, s.reboot, s.ready);
}

/// `t` when all its times are within the update started at `started` (not later than `now`).
fn of_update(t: NodeTimeline, started: Timestamp, now: Timestamp) -> Option<NodeTimeline> {
    let s = Stamps::from(&t);
    [s.drain, s.reboot, s.ready]
        .into_iter()
        .flatten()
        .all(|at| at >= started && at <= now)
        .then_some(t)
}

/// Folds a finished node's phases into its group (`end`: when it was first seen finished,
/// when observed): its drain, its reboot and its return; an incident is not learned.
fn fold(current: &mut CurrentUpdate, n: &TrackedNode, end: Option<Timestamp>) {
    if n.incident {
        return;
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
        if let (Some(a), Some(b)) = (n.ready_at, end) {
            stats::add(&mut g.ready, secs_between(a, b));
        }
    }
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
    let resume = Resume {
        timeline: &|_| None,
        just_read: false,
    };
    observe_resuming(status, inputs, nodes, &resume, now)
}

/// What [`observe_resuming`] resumes the nodes from.
pub struct Resume<'a> {
    /// A node's progress insight's timeline, by node name ([`crate::nodes::timeline`]).
    pub timeline: &'a (dyn Fn(&str) -> Option<NodeTimeline> + Sync),
    /// `status` was just read from the object (this replica's first pass since): nodes that
    /// finished since it was written without being followed in it are learned too.
    pub just_read: bool,
}

/// [`observe`], resuming the times a node lacks from its progress insight (`resume`), when
/// they belong to this update: the times of a node in flight that `status` does not follow
/// yet or followed from an older write (a restart, a new leader: what was not written yet)
/// and, on the first pass after a read, the nodes that finished meanwhile.
pub fn observe_resuming<N: TimedNode>(
    status: &mut UpdateHistoryStatus,
    inputs: &ClusterInputs<'_>,
    nodes: &[N],
    resume: &Resume<'_>,
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
        let reading = Reading {
            inputs,
            nodes,
            resume,
            now,
        };
        let done = follow(&mut current, &reading, h0);
        if done {
            learn(status, current, now);
        } else {
            status.current = Some(current);
        }
    }
    status.learned_updates = status.updates.len() as u32;
    *status != before
}

/// One reading of the cluster at `now`, which the followed update is brought up to date with.
struct Reading<'r, 'i, N> {
    inputs: &'r ClusterInputs<'i>,
    nodes: &'r [N],
    resume: &'r Resume<'r>,
    now: Timestamp,
}

/// Brings the followed update up to date; true when it is complete (every operator at the
/// target, every pool updated).
fn follow<N: TimedNode>(
    current: &mut CurrentUpdate,
    reading: &Reading<'_, '_, N>,
    h0: &UpdateHistory,
) -> bool {
    if reading.inputs.cluster_version.is_none() {
        return false;
    }
    follow_operators(current, reading.inputs, reading.now);
    let pools_done = follow_nodes(current, reading, &h0.version);
    current.control_plane_completed_at.is_some() && pools_done
}

/// Times the platform operators that reached the target, and the control plane once they all
/// did.
fn follow_operators(current: &mut CurrentUpdate, inputs: &ClusterInputs<'_>, now: Timestamp) {
    let started = current.started_at;
    let Some(cv) = inputs.cluster_version else {
        return;
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
}

/// Times the nodes; true when every pool with nodes is updated.
fn follow_nodes<N: TimedNode>(
    current: &mut CurrentUpdate,
    reading: &Reading<'_, '_, N>,
    target: &str,
) -> bool {
    let ctx = NodeContext::from_inputs(reading.inputs);
    let pools = ctx.pools();
    // Per pool: (nodes, finished).
    let mut tally = vec![(0usize, 0usize); pools.len()];
    for node in reading.nodes {
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
        follow_node(current, reading, &pool.name, node, stage);
    }
    // Nodes that left (deleted): forget them.
    if !current.nodes.is_empty() {
        let names: std::collections::HashSet<&str> =
            reading.nodes.iter().map(NodeSource::name).collect();
        current.nodes.retain(|n| names.contains(n.name.as_str()));
    }
    let mut all_done = true;
    for (pool, (total, finished)) in pools.iter().zip(tally) {
        // Pauses while the pool had nodes to update.
        let outdated = finished < total;
        follow_pause(current, &pool.name, pool.paused && outdated, reading.now);
        if total == 0 {
            continue;
        }
        if outdated {
            all_done = false;
        } else {
            pool_done(current, &pool.name, reading.now);
        }
    }
    all_done
}

/// Times one node of pool `pool` observed in `stage`.
fn follow_node<N: TimedNode>(
    current: &mut CurrentUpdate,
    reading: &Reading<'_, '_, N>,
    pool: &str,
    node: &N,
    stage: NodeStage,
) {
    let (started, now, resume) = (current.started_at, reading.now, reading.resume);
    let name = node.name();
    let tracked = current.nodes.iter().position(|n| n.name == name);
    // Its insight's timeline, when it is this update's (read only when needed).
    let resumed = || (resume.timeline)(name).and_then(|t| of_update(t, started, now));
    match (stage, tracked) {
        (NodeStage::Pending, _) => {}
        (NodeStage::Finished, Some(i)) => {
            let mut n = current.nodes.remove(i);
            stamp(&mut n, NodeStage::Finished, now, resumed);
            fold(current, &n, Some(now));
        }
        (NodeStage::Finished, None) => {
            // Finished since the state was written, unfollowed here: from its insight,
            // when its update started after that write (never folded), without the
            // time it took to return (its end was not observed).
            let Some(written) = current.written_at.filter(|_| resume.just_read) else {
                return;
            };
            let Some(t) = resumed() else {
                return;
            };
            let s = Stamps::from(&t);
            let first = [s.drain, s.reboot, s.ready].into_iter().flatten().min();
            if t.incident || first.is_none_or(|f| f <= written) {
                return;
            }
            let Some(group) = group_index(current, pool, node) else {
                return;
            };
            let n = TrackedNode {
                name: name.to_string(),
                group,
                drain_at: s.drain,
                reboot_at: s.reboot,
                ready_at: s.ready,
                incident: false,
            };
            fold(current, &n, None);
        }
        (stage, Some(i)) => {
            if let Some(n) = current.nodes.get_mut(i) {
                n.incident |= in_incident(node);
                stamp(n, stage, now, resumed);
            }
        }
        (stage, None) => {
            if current.nodes.len() >= MAX_TRACKED_NODES {
                return;
            }
            let Some(group) = group_index(current, pool, node) else {
                return;
            };
            let mut n = TrackedNode {
                name: name.to_string(),
                group,
                incident: in_incident(node),
                ..Default::default()
            };
            stamp(&mut n, stage, now, resumed);
            current.nodes.push(n);
        }
    }
}

/// Follows pool `pool`'s pause (`paused`: paused while it has nodes to update).
fn follow_pause(current: &mut CurrentUpdate, pool: &str, paused: bool, now: Timestamp) {
    let entry = current.paused.iter().position(|p| p.name == pool);
    match (paused, entry) {
        (true, None) if current.paused.len() < MAX_NODE_GROUPS => current.paused.push(PausedPool {
            name: pool.to_string(),
            since: Some(now),
            paused_seconds: 0,
        }),
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
}

/// Pool `pool` (with nodes) is updated: its timing, once.
fn pool_done(current: &mut CurrentUpdate, pool: &str, now: Timestamp) {
    if current.pools.iter().any(|p| p.name == pool) || current.pools.len() >= MAX_NODE_GROUPS {
        return;
    }
    let paused_seconds = current
        .paused
        .iter()
        .find(|p| p.name == pool)
        .map_or(0, |p| p.paused_seconds);
    current.pools.push(PoolTiming {
        name: pool.to_string(),
        completed_after_seconds: secs_u32(current.started_at, now),
        paused_seconds,
    });
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
