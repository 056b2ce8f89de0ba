//! The learned estimate: remaining time of the control plane, each pool and the whole update,
//! from the durations of this cluster's earlier updates, corrected by the pace of the update in
//! progress. See `docs/assessment-contract.md`, "Estimates that learn", for the model and its
//! measured error.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use jiff::Timestamp;
use update_status_api::history::{
    CurrentUpdate, LearnedSource, LearnedUpdate, NodeFactor, NodeGroupTiming, UpdateHistoryStatus,
};
use update_status_api::input::ClusterVersion;

use super::observe::{instance_type, node_role};
use super::oc::target;
use super::stats::{self, Summary};
use crate::control_plane::{MACHINE_CONFIG, is_updated};
use crate::inputs::ClusterInputs;
use crate::nodes::{NodeContext, NodeSource, NodeStage, TimedNode, node_stage};

/// Weight of the `k`-th newest learned update in the operators' weighted median (gentle, so
/// that with 3 updates or more the newest alone is not the median).
pub const MEDIAN_RECENCY: f64 = 0.8;
/// Weight of the `k`-th newest learned update in the node groups' durations: the nodes' pace
/// drifts from one update to the next (the workload grows, the fleet's hardware ages), so the
/// newest update says most of the next one; the older ones only steady a group the newest saw
/// few nodes of. Tuned on seeds 1–3 (0.6 before: whole update at 50 % 0.66 → 0.58 on cloud
/// clusters).
pub const NODE_RECENCY: f64 = 0.2;
/// Pseudo-count of the pace: how many completions of this update weigh as much as the prior
/// (pace 1).
pub const PACE_PRIOR: f64 = 2.0;
/// Bound of one completion's pace (a very slow operator moves the pace by this at most).
pub const PACE_CLAMP: f64 = 4.0;
/// An item in progress is given at least this share of its expected duration.
pub const FLOOR_SHARE: f64 = 0.15;
/// Share of its overrun a phase in progress is still given. Tuned on seeds 1–3 (0.5 before:
/// whole update at 90 % 2.0 → 1.2 min on cloud and vSphere clusters, the 50 % point
/// unchanged): most of an overrun is a block that ends without warning, and the p90 keeps the
/// whole overrun.
pub const OVERRUN_SHARE: f64 = 0.25;
/// Spread (log) always present: what no learning removes.
pub const SIGMA_FLOOR: f64 = 0.12;
/// Spread (log) of the pace between updates when the learned updates cannot tell it.
pub const SIGMA_DRIFT_DEFAULT: f64 = 0.25;
/// Seconds of a node phase that weigh as one completion in the nodes' pace.
pub const NODE_PHASE_UNIT: f64 = 300.0;
/// z of the 10th/90th percentiles of a normal distribution.
pub const Z90: f64 = 1.2816;
/// The upper side of the interval is wider than the lower by this factor (delays are more
/// common than speed-ups: slow operators, blocked drains).
pub const SKEW: f64 = 1.5;
/// Absolute slack (seconds) of both ends: readings are a step apart.
pub const SLACK: f64 = 60.0;

/// A remaining time with its interval (seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Remaining {
    /// p10.
    pub low: f64,
    /// p50.
    pub mid: f64,
    /// p90.
    pub high: f64,
    /// A paused pool: assumed resumed now.
    pub paused: bool,
}

impl Remaining {
    fn zero() -> Self {
        Remaining::default()
    }
    /// The later of two parallel parts.
    pub fn max(self, o: Remaining) -> Remaining {
        Remaining {
            low: self.low.max(o.low),
            mid: self.mid.max(o.mid),
            high: self.high.max(o.high),
            paused: self.paused || o.paused,
        }
    }
    fn with_spread(mid: f64, sigma: f64, extra_high: f64) -> Remaining {
        let mid = mid.max(0.0);
        Remaining {
            low: (mid * (-Z90 * sigma).exp() - SLACK).max(0.0),
            mid,
            high: mid * (Z90 * sigma * SKEW).exp() + SLACK + extra_high,
            paused: false,
        }
    }
}

/// The learned estimates; `None` when nothing was observed (no learned update, or no update
/// followed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Learned {
    /// Every platform operator at the target.
    pub control_plane: Remaining,
    /// Each pool with nodes to update, in pool order.
    pub pools: Vec<(String, Remaining)>,
    /// Everything.
    pub update: Remaining,
}

/// The observed learned updates, newest first.
fn observed(status: &UpdateHistoryStatus) -> impl Iterator<Item = &LearnedUpdate> {
    status
        .updates
        .iter()
        .filter(|u| u.source == LearnedSource::Observed)
}

/// Own duration of each operator in one update: its completion minus the previous one's.
fn own_durations(operators: &[update_status_api::history::OperatorTiming]) -> Vec<(&str, f64)> {
    let mut prev = 0u32;
    operators
        .iter()
        .map(|o| {
            let own = o.completed_after_seconds.saturating_sub(prev);
            prev = prev.max(o.completed_after_seconds);
            (o.name.as_str(), f64::from(own))
        })
        .collect()
}

/// What was learned of the operators: own duration by name, and the learned order.
struct OperatorModel<'a> {
    own: HashMap<&'a str, f64>,
    median: f64,
}

impl<'a> OperatorModel<'a> {
    fn of(status: &'a UpdateHistoryStatus) -> Self {
        // The weighted median over the learned updates: one update where an operator was
        // unusually slow does not make it slow in the next.
        let mut acc: HashMap<&str, Vec<(f64, f64)>> = HashMap::new();
        for (k, u) in observed(status).enumerate() {
            let w = MEDIAN_RECENCY.powi(k as i32);
            for (name, own) in own_durations(&u.operators) {
                acc.entry(name).or_default().push((own, w));
            }
        }
        let own: HashMap<&str, f64> = acc
            .into_iter()
            .filter_map(|(n, v)| weighted_median(v).map(|m| (n, m)))
            .collect();
        let mut v: Vec<f64> = own.values().copied().collect();
        v.sort_by(f64::total_cmp);
        let median = v.get(v.len() / 2).copied().unwrap_or(60.0);
        OperatorModel { own, median }
    }
    fn own(&self, name: &str) -> f64 {
        self.own.get(name).copied().unwrap_or(self.median)
    }
}

/// The value at half the total weight (`None` without weight).
fn weighted_median(mut v: Vec<(f64, f64)>) -> Option<f64> {
    v.retain(|(x, w)| x.is_finite() && *w > 0.0);
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = v.iter().map(|(_, w)| w).sum();
    let mut acc = 0.0;
    for (x, w) in &v {
        acc += w;
        if acc >= total / 2.0 {
            return Some(*x);
        }
    }
    None
}

/// Geometric mean of bounded ratios, shrunk towards 1 by [`PACE_PRIOR`]; and the number of
/// ratios.
fn pace(ratios: impl IntoIterator<Item = (f64, f64)>) -> (f64, f64) {
    let (mut sum, mut n) = (0.0, 0.0);
    for (r, w) in ratios {
        if r.is_finite() && r > 0.0 && w > 0.0 {
            sum += r.ln().clamp(-PACE_CLAMP.ln(), PACE_CLAMP.ln()) * w;
            n += w;
        }
    }
    ((sum / (n + PACE_PRIOR)).exp(), n)
}

/// Pseudo-count of a remembered node's deviation: after `n` updates it is believed by
/// `n / (n + NODE_FACTOR_PRIOR)` (one update's phase also varies by chance).
pub const NODE_FACTOR_PRIOR: f64 = 0.5;

/// Expected phase durations of a node (drain, reboot, ready), and the spread of one node;
/// `drain_log`/`reboot_log`: the group's mean of `ln(1 + seconds)` (what a remembered node's
/// deviation is counted from; `None` when the group cannot say).
#[derive(Clone, Copy, Debug, Default)]
struct NodeModel {
    drain: f64,
    reboot: f64,
    ready: f64,
    log_sd: f64,
    drain_log: Option<f64>,
    reboot_log: Option<f64>,
}

impl NodeModel {
    /// This node's model: its group's, moved by its remembered deviation.
    fn for_node(mut self, factor: Option<&NodeFactor>) -> NodeModel {
        let Some(f) = factor else {
            return self;
        };
        let trust = f64::from(f.updates) / (f64::from(f.updates) + NODE_FACTOR_PRIOR);
        // Interpolated in logs between the group's mean (trust 0) and the node's own
        // (group's log mean + its deviation).
        let moved = |mean: f64, log: Option<f64>, dev: f64| match log {
            Some(l) if mean > 0.0 => {
                let own = (l + dev).exp() - 1.0;
                (mean.ln() * (1.0 - trust) + own.max(1.0).ln() * trust).exp()
            }
            _ => mean,
        };
        self.drain = moved(self.drain, self.drain_log, f.drain);
        self.reboot = moved(self.reboot, self.reboot_log, f.reboot);
        self
    }
}

impl NodeModel {
    fn total(&self) -> f64 {
        self.drain + self.reboot + self.ready
    }
}

fn group_model<'a>(
    groups: impl Iterator<Item = (&'a NodeGroupTiming, f64)> + Clone,
) -> Option<NodeModel> {
    let d = stats::merge(groups.clone().map(|(g, w)| (&g.drain, w)));
    let r = stats::merge(groups.clone().map(|(g, w)| (&g.reboot, w)));
    let y = stats::merge(groups.map(|(g, w)| (&g.ready, w)));
    if d.is_empty() && r.is_empty() {
        return None;
    }
    let mean = |s: Summary| if s.is_empty() { 0.0 } else { s.mean };
    let log = |s: Summary| (s.weight >= 2.0).then_some(s.mean_log);
    Some(NodeModel {
        drain: mean(d),
        reboot: mean(r),
        ready: mean(y),
        log_sd: d.log_sd.max(r.log_sd),
        drain_log: log(d),
        reboot_log: log(r),
    })
}

/// The node model of a node: its group (pool, role, instance type), else its pool and role,
/// else its role, else every node learned.
struct NodeModels<'a> {
    groups: Vec<(&'a NodeGroupTiming, f64)>,
    cache: HashMap<(String, &'static str, String), Option<NodeModel>>,
}

impl<'a> NodeModels<'a> {
    fn of(status: &'a UpdateHistoryStatus) -> Self {
        let groups = observed(status)
            .enumerate()
            .flat_map(|(k, u)| {
                u.node_groups
                    .iter()
                    .map(move |g| (g, NODE_RECENCY.powi(k as i32)))
            })
            .collect();
        NodeModels {
            groups,
            cache: HashMap::new(),
        }
    }
    fn model(&mut self, pool: &str, role: &'static str, itype: &str) -> Option<NodeModel> {
        let key = (pool.to_string(), role, itype.to_string());
        if let Some(m) = self.cache.get(&key) {
            return *m;
        }
        let g = &self.groups;
        let m = group_model(
            g.iter()
                .filter(|(x, _)| x.pool == pool && x.role == role && x.instance_type == itype)
                .copied(),
        )
        .or_else(|| {
            group_model(
                g.iter()
                    .filter(|(x, _)| x.pool == pool && x.role == role)
                    .copied(),
            )
        })
        .or_else(|| group_model(g.iter().filter(|(x, _)| x.role == role).copied()))
        .or_else(|| group_model(g.iter().copied()));
        self.cache.insert(key, m);
        m
    }
}

/// Pace of the nodes of this update: each finished phase against its group's learned mean.
fn node_pace(current: &CurrentUpdate, models: &mut NodeModels<'_>) -> (f64, f64) {
    let mut ratios = Vec::new();
    for g in &current.node_groups {
        let role: &'static str = if g.role == "master" {
            "master"
        } else {
            "worker"
        };
        let Some(m) = models.model(&g.pool, role, &g.instance_type) else {
            continue;
        };
        for (s, learned) in [
            (&g.drain, m.drain),
            (&g.reboot, m.reboot),
            (&g.ready, m.ready),
        ] {
            if s.count > 0 && learned >= 15.0 {
                let mean = s.sum_seconds / f64::from(s.count);
                // Weighted by the time at stake: a 5-minute phase counts as one, the
                // 30-second ones little.
                ratios.push((
                    mean / learned,
                    f64::from(s.count) * learned / NODE_PHASE_UNIT,
                ));
            }
        }
    }
    pace(ratios)
}

/// Seconds from `t` to `now`.
fn since(t: Option<Timestamp>, now: Timestamp) -> f64 {
    t.map_or(0.0, |t| {
        (now.as_millisecond() - t.as_millisecond()).max(0) as f64 / 1000.0
    })
}

/// One phase in progress: what is left of it (at least [`FLOOR_SHARE`]), and by how much it
/// overran.
///
/// A phase that overran is given a quarter of its overrun again (a blocked drain, a slow
/// operator: the longer it has overrun, the longer it is likely to go on).
fn left(expected: f64, elapsed: f64) -> (f64, f64) {
    let overrun = (elapsed - expected).max(0.0);
    let rest = (expected - elapsed)
        .max(FLOOR_SHARE * expected)
        .max(OVERRUN_SHARE * overrun);
    (rest, overrun)
}

/// The learned estimates at `now`; `None` without an observed update or an update followed.
pub fn learned<N: TimedNode>(
    status: &UpdateHistoryStatus,
    inputs: &ClusterInputs<'_>,
    nodes: &[N],
    now: Timestamp,
) -> Option<Learned> {
    let current = status.current.as_ref()?;
    observed(status).next()?;
    let cv = inputs.cluster_version?;
    let scope = Learning {
        status,
        current,
        inputs,
        cv,
        now,
    };
    let sigma_drift = sigma_drift(status);
    let ops = scope.operators_left();

    // Nodes.
    let ctx = NodeContext::from_inputs(inputs);
    let (per_pool, n_nodes) = scope.pool_work(&ctx, nodes);
    let target = target(cv);
    let rollout_started = ctx
        .pools()
        .iter()
        .any(|p| ctx.machine_config_version(&p.configuration) == Some(target));
    let start_delay = if rollout_started { 0.0 } else { ops.rest };

    let n_pace = ops.n + n_nodes;
    let sigma_pace = sigma_drift * (PACE_PRIOR / (n_pace + PACE_PRIOR)).sqrt();
    let (pool_estimates, master_rest) =
        scope.pool_estimates(&ctx, per_pool, start_delay, sigma_pace);
    let control_plane = ops.control_plane(master_rest, sigma_pace);
    let update = pool_estimates
        .iter()
        .fold(control_plane, |acc, (_, r)| acc.max(*r));
    Some(Learned {
        control_plane,
        pools: pool_estimates,
        update,
    })
}

/// Between-update spread of the control plane's duration (log).
fn sigma_drift(status: &UpdateHistoryStatus) -> f64 {
    let cps: Vec<f64> = observed(status)
        .map(|u| f64::from(u.control_plane_seconds.max(1)).ln())
        .collect();
    if cps.len() >= 3 {
        let m = cps.iter().sum::<f64>() / cps.len() as f64;
        (cps.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (cps.len() - 1) as f64)
            .sqrt()
            .max(0.1)
    } else {
        SIGMA_DRIFT_DEFAULT
    }
}

/// What [`learned`] reads: the learned updates, the update followed, the inputs and `now`.
struct Learning<'a, 'i> {
    status: &'a UpdateHistoryStatus,
    current: &'a CurrentUpdate,
    inputs: &'a ClusterInputs<'i>,
    cv: &'a ClusterVersion,
    now: Timestamp,
}

/// What the platform operators have left, at the pace of this update.
struct OperatorsLeft {
    /// How many completions the operators' pace is from.
    n: f64,
    /// Their remaining time, and how much the one in progress overran.
    rest: f64,
    overrun: f64,
    /// Operators not at the target (machine-config aside).
    items: usize,
    /// machine-config is at the target.
    mco_done: bool,
    /// machine-config's learned own duration, at the pace.
    mco_own: f64,
}

impl OperatorsLeft {
    /// The control plane: the operators, then machine-config, which completes with the master
    /// pool (`master`; or its learned own duration when there is no master pool to follow).
    fn control_plane(&self, master: Option<Remaining>, sigma_pace: f64) -> Remaining {
        let ops_sigma = (sigma_pace.powi(2) + SIGMA_FLOOR.powi(2)).sqrt();
        if self.mco_done && self.items == 0 {
            return Remaining::zero();
        }
        let ops_part = Remaining::with_spread(self.rest, ops_sigma, self.overrun);
        match (self.mco_done, master) {
            (true, _) => ops_part,
            (false, Some(m)) => m.max(ops_part),
            (false, None) => {
                Remaining::with_spread(self.rest + self.mco_own, ops_sigma, self.overrun)
            }
        }
    }
}

impl Learning<'_, '_> {
    /// The operators' part: their own learned durations at this update's pace, the one in
    /// progress given what is left of it.
    fn operators_left(&self) -> OperatorsLeft {
        let (current, inputs, now) = (self.current, self.inputs, self.now);
        let started = current.started_at;
        let ops = OperatorModel::of(self.status);
        let actual = own_durations(&current.operators);
        let (pace_ops, n_ops) = pace(actual.iter().filter(|(n, _)| *n != MACHINE_CONFIG).map(
            |(n, a)| {
                (
                    *a / ops.own(n).max(1.0),
                    if ops.own(n) >= 15.0 { 1.0 } else { 0.0 },
                )
            },
        ));
        let desired = self.cv.status.desired.version.as_str();
        let mco = inputs.mco_image.image();
        let last_done = Timestamp::from_second(
            started.as_second()
                + i64::from(
                    current
                        .operators
                        .iter()
                        .map(|o| o.completed_after_seconds)
                        .max()
                        .unwrap_or(0),
                ),
        )
        .ok();
        let mut ops_left = 0.0;
        let mut first_own: f64 = 0.0;
        let mut mco_done = true;
        let mut ops_items = 0usize;
        for co in inputs
            .cluster_operators
            .iter()
            .filter(|c| c.is_platform_operator())
        {
            if is_updated(co, desired, mco) {
                continue;
            }
            if co.name() == MACHINE_CONFIG {
                mco_done = false;
                continue;
            }
            let own = ops.own(co.name()) * pace_ops;
            if co
                .condition("Progressing")
                .is_some_and(|c| c.status == "True")
            {
                first_own = first_own.max(own);
            }
            ops_left += own;
            ops_items += 1;
        }
        let in_op = since(last_done.or(Some(started)), now);
        let in_op = if first_own > 0.0 { in_op } else { 0.0 };
        let (ops_rest, ops_overrun) = if ops_items > 0 {
            let (current_rest, overrun) = left(first_own, in_op);
            (ops_left - first_own + current_rest, overrun)
        } else {
            (0.0, 0.0)
        };
        OperatorsLeft {
            n: n_ops,
            rest: ops_rest,
            overrun: ops_overrun,
            items: ops_items,
            mco_done,
            mco_own: ops.own(MACHINE_CONFIG) * pace_ops,
        }
    }

    /// The nodes' part, per pool of `ctx` (in pool order): what each node not finished has
    /// left at this update's pace; and how many completions the pace is from.
    fn pool_work<N: TimedNode>(&self, ctx: &NodeContext, nodes: &[N]) -> (Vec<PoolWork>, f64) {
        let (current, now) = (self.current, self.now);
        let mut models = NodeModels::of(self.status);
        let factors: HashMap<&str, &NodeFactor> = self
            .status
            .node_factors
            .iter()
            .map(|f| (f.name.as_str(), f))
            .collect();
        let (pace_nodes, n_nodes) = node_pace(current, &mut models);
        let target = target(self.cv);
        let pools = ctx.pools();
        let mut per_pool: Vec<PoolWork> = vec![PoolWork::default(); pools.len()];
        for node in nodes {
            let Some(pool) = ctx.pool_of(node) else {
                continue;
            };
            let Some(p) = pools.iter().position(|q| q.name == pool.name) else {
                continue;
            };
            let stage = node_stage(ctx, node, target);
            let w = &mut per_pool[p];
            w.total += 1;
            if stage == NodeStage::Finished {
                continue;
            }
            let m = node_model(&mut models, &pool.name, node)
                .unwrap_or(OC_NODE)
                .for_node(factors.get(node.name()).copied());
            let m = NodeModel {
                drain: m.drain * pace_nodes,
                reboot: m.reboot * pace_nodes,
                ready: m.ready * pace_nodes,
                ..m
            };
            w.log_sd = w.log_sd.max(m.log_sd);
            let tracked = current.nodes.iter().find(|n| n.name == node.name());
            let (rest, over) = match stage {
                NodeStage::Pending => {
                    w.pending.push(m.total());
                    continue;
                }
                NodeStage::Drain => {
                    let (r, o) = left(m.drain, since(tracked.and_then(|t| t.drain_at), now));
                    (r + m.reboot + m.ready, o)
                }
                NodeStage::Reboot => {
                    let (r, o) = left(m.reboot, since(tracked.and_then(|t| t.reboot_at), now));
                    (r + m.ready, o)
                }
                NodeStage::Ready | NodeStage::Finished => {
                    left(m.ready, since(tracked.and_then(|t| t.ready_at), now))
                }
            };
            w.in_flight.push(rest);
            w.overrun = w.overrun.max(over);
        }
        (per_pool, n_nodes)
    }

    /// Each pool's remaining time (its work `per_pool`, in the order of `ctx`'s pools) after
    /// `start_delay`, and the master pool's.
    fn pool_estimates(
        &self,
        ctx: &NodeContext,
        per_pool: Vec<PoolWork>,
        start_delay: f64,
        sigma_pace: f64,
    ) -> (Vec<(String, Remaining)>, Option<Remaining>) {
        let mut pool_estimates = Vec::new();
        let mut master_rest: Option<Remaining> = None;
        for (pool, w) in ctx.pools().iter().zip(per_pool) {
            if w.total == 0 || (w.pending.is_empty() && w.in_flight.is_empty()) {
                continue;
            }
            let slots = pool.max_unavailable_of(w.total) as usize;
            let span = expected_makespan(&w.in_flight, &w.pending, slots);
            let items = (w.pending.len() + w.in_flight.len()).max(1) as f64;
            let per_item = w.log_sd / items.sqrt();
            let sigma = (sigma_pace.powi(2) + per_item.powi(2) + SIGMA_FLOOR.powi(2)).sqrt();
            let paused = pool.paused && !w.pending.is_empty();
            // A pool paused for `t` is taken to stay paused for `t` more (the median of a pause
            // whose length is unknown), up to 3 `t` for the p90.
            let pause = if paused {
                since(
                    self.current
                        .paused
                        .iter()
                        .find(|p| p.name == pool.name)
                        .and_then(|p| p.since),
                    self.now,
                )
            } else {
                0.0
            };
            let mut r =
                Remaining::with_spread(start_delay + span + pause, sigma, w.overrun + 2.0 * pause);
            r.paused = paused;
            if pool.is_master {
                master_rest = Some(r);
            }
            pool_estimates.push((pool.name.clone(), r));
        }
        (pool_estimates, master_rest)
    }
}

/// oc's node timing (`+10m` draining, `+5m` updating/rebooting) for a node of no learned group.
const OC_NODE: NodeModel = NodeModel {
    drain: 300.0,
    reboot: 300.0,
    ready: 0.0,
    log_sd: 0.3,
    drain_log: None,
    reboot_log: None,
};

fn node_model(
    models: &mut NodeModels<'_>,
    pool: &str,
    node: &impl NodeSource,
) -> Option<NodeModel> {
    models.model(pool, node_role(node), instance_type(node))
}

#[derive(Clone, Debug, Default)]
struct PoolWork {
    total: u32,
    in_flight: Vec<f64>,
    pending: Vec<f64>,
    overrun: f64,
    log_sd: f64,
}

/// When the last node is done: `slots` nodes at a time (`maxUnavailable`), the nodes in flight
/// first, then each pending node on the first free slot (as the machine-config controller
/// picks them).
fn makespan(in_flight: &[f64], pending: &[f64], slots: usize) -> f64 {
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let ms = |s: f64| (s.max(0.0) * 1000.0) as u64;
    for &r in in_flight {
        heap.push(Reverse(ms(r)));
    }
    while heap.len() < slots.max(1) {
        heap.push(Reverse(0));
    }
    let mut end = heap.iter().map(|Reverse(t)| *t).max().unwrap_or(0);
    for &d in pending {
        let Some(Reverse(t)) = heap.pop() else {
            break;
        };
        let done = t + ms(d);
        end = end.max(done);
        heap.push(Reverse(done));
    }
    end as f64 / 1000.0
}

/// Permutations of the pending nodes [`expected_makespan`] averages over.
pub const ORDERS: u64 = 8;

/// [`makespan`] averaged over [`ORDERS`] orders of the pending nodes (the listed one and
/// fixed pseudo-random shuffles): the machine-config controller's choice of the next node is
/// not known in advance, and with nodes of different durations the order moves the end.
fn expected_makespan(in_flight: &[f64], pending: &[f64], slots: usize) -> f64 {
    if pending.len() < 2 {
        return makespan(in_flight, pending, slots);
    }
    let mut order = pending.to_vec();
    let mut total = makespan(in_flight, &order, slots);
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 1..ORDERS {
        // Fisher–Yates with a xorshift: deterministic, so the estimate does not jitter.
        for i in (1..order.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        total += makespan(in_flight, &order, slots);
    }
    total / ORDERS as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makespan_fills_free_slots_first() {
        // Two slots, one busy for 100 s: four pending nodes of 60 s end at 180 s.
        assert_eq!(makespan(&[100.0], &[60.0; 4], 2), 180.0);
        // More in flight than slots (maxUnavailable lowered): the longest ends it.
        assert_eq!(makespan(&[50.0, 80.0, 20.0], &[], 1), 80.0);
        assert_eq!(makespan(&[], &[], 3), 0.0);
    }

    #[test]
    fn a_slow_pending_node_is_expected_anywhere_in_the_order() {
        // One slot: the order does not matter.
        assert_eq!(expected_makespan(&[], &[60.0, 60.0, 300.0], 1), 420.0);
        // Two slots: listed last, the slow node ends at 360 s; first, at 300 s. The average
        // over orders lies between.
        let listed = makespan(&[], &[60.0, 60.0, 60.0, 60.0, 300.0], 2);
        let first = makespan(&[], &[300.0, 60.0, 60.0, 60.0, 60.0], 2);
        let avg = expected_makespan(&[], &[60.0, 60.0, 60.0, 60.0, 300.0], 2);
        assert_eq!((listed, first), (420.0, 300.0));
        assert!(first < avg && avg < listed, "{avg}");
    }

    #[test]
    fn a_remembered_node_moves_its_group_model() {
        let group = NodeModel {
            drain: 200.0,
            reboot: 300.0,
            ready: 30.0,
            log_sd: 0.2,
            drain_log: Some((1.0f64 + 180.0).ln()),
            reboot_log: Some((1.0f64 + 290.0).ln()),
        };
        let slow = NodeFactor {
            name: "n".into(),
            updates: 4,
            drain: 2.5f64.ln(),
            reboot: 0.0,
        };
        let m = group.for_node(Some(&slow));
        // Trust 4 / 4.5: most of the way to 181 × 2.5 − 1 ≈ 452 s.
        assert!(m.drain > 400.0 && m.drain < 452.0, "{m:?}");
        assert!((m.reboot - 290.0).abs() < 2.0, "{m:?}");
        assert_eq!(group.for_node(None).drain, 200.0);
    }

    #[test]
    fn an_unusual_update_does_not_move_the_median() {
        // Newest first, weights 1, 0.8, 0.64: the slow one (the newest) is outweighed.
        assert_eq!(
            weighted_median(vec![(400.0, 1.0), (100.0, 0.8), (110.0, 0.64)]),
            Some(110.0)
        );
        assert_eq!(weighted_median(vec![(100.0, 1.0)]), Some(100.0));
        assert_eq!(weighted_median(vec![]), None);
    }

    #[test]
    fn pace_is_shrunk_and_bounded() {
        assert_eq!(pace([]).0, 1.0);
        let (p, n) = pace([(2.0, 1.0), (2.0, 1.0)]);
        assert_eq!(n, 2.0);
        assert!((p - 2f64.sqrt()).abs() < 1e-9, "{p}");
        // One operator 100× slower moves the pace as one 4× slower would.
        assert_eq!(pace([(100.0, 1.0)]).0, pace([(4.0, 1.0)]).0);
    }
}
