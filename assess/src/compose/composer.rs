//! The one composition of the rules: **nodes, then pools, then the control plane, then the
//! alerts**, each step reading what the one before gave. [`compose`] runs the whole sequence
//! for a cluster; every path runs it or one of its steps, and no other code combines the rules:
//!
//! - the offline path ([`crate::assess_cluster_nodes`]) and [`super::desired_cluster`] run
//!   [`compose`], each with its own [`NodeSink`] (statuses only; named objects);
//! - the controller's passes run one step each: the control-plane pass [`master_pool`] then
//!   [`control_plane`], the worker-pools pass [`pools`] (fed incrementally from its cache of
//!   node assessments, [`crate::incremental`]), the alerts pass [`alerts`].
//!
//! What comes out are statuses and insights, without names, labels, owners or carry-over:
//! naming them and carrying over what our objects already say is a separate step
//! ([`super::desired`]), and so is when to look again ([`requeue_after`]); the offline path pays
//! for neither.

use std::borrow::Borrow;
use std::collections::HashSet;

use jiff::{SignedDuration, Timestamp};
use update_status_api::crd::{
    ControlPlaneUpdateStatusStatus, UpdateInsightStatus, WorkerPoolUpdateStatusStatus,
};
use update_status_api::input::{Alert, Node};

use crate::alerts::{self, AlertInsight};
use crate::control_plane::{self, ControlPlaneAssessment};
use crate::inputs::ClusterInputs;
use crate::naming;
use crate::nodes::{self, NodeAssessment, NodeContext, NodeSource, PoolAssessment};

/// Where [`compose`] puts each node's assessment as it makes it: the caller decides what it
/// keeps of a node (its insights named, or moved out as bare statuses) and how.
pub trait NodeSink {
    /// Takes `node`'s assessment.
    fn take(&mut self, node: &Node, assessment: NodeAssessment);
    /// Every assessment taken so far, for the pools.
    fn assessed(&self) -> Vec<&NodeAssessment>;
}

/// What the rules say of one cluster, before naming.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Composed {
    /// Every pool's assessment, in pool order (the master included), without copies of its
    /// nodes' insights: its `insights` are the pool's own (D.8).
    pub pools: Vec<PoolAssessment>,
    /// The control plane's (`None` without a ClusterVersion).
    pub control_plane: Option<ControlPlaneAssessment>,
    /// The alert insights (only with `inputs.alerts`, and while an update is in progress).
    pub alerts: Vec<AlertInsight>,
}

impl Composed {
    /// The WorkerPoolUpdateStatus contents: every pool but the master, in pool order.
    pub fn worker_pools(&self) -> impl Iterator<Item = &WorkerPoolUpdateStatusStatus> {
        self.pools
            .iter()
            .filter(|p| !p.is_master)
            .map(|p| &p.status)
    }

    /// The pool-level insights (D.8), in pool order.
    pub fn pool_insights(&self) -> impl Iterator<Item = &UpdateInsightStatus> {
        pool_insights(&self.pools)
    }
}

/// The whole composition: every node of `nodes` assessed into `sink` (borrowed or owned: owned
/// nodes are dropped one by one as they are assessed), the pools aggregated from what the sink
/// holds, the control plane from the master pool, and, when `inputs.alerts` were read, the
/// alert insights from the control plane's and pools' statuses. `inputs.nodes` is not read.
pub fn compose<N: Borrow<Node>>(
    inputs: &ClusterInputs<'_>,
    nodes: impl IntoIterator<Item = N>,
    sink: &mut impl NodeSink,
    now: Timestamp,
) -> Composed {
    let ctx = NodeContext::from_inputs(inputs);
    for node in nodes {
        let node = node.borrow();
        if let Some(a) = nodes::assess_node(&ctx, node, now) {
            sink.take(node, a);
        }
    }
    let pools = pools(&ctx, &sink.assessed());
    let master = pools.iter().find(|p| p.is_master);
    let control_plane = control_plane(inputs, master, now);
    let alerts = match (inputs.alerts, control_plane.as_ref()) {
        (Some(firing), Some(cp)) => {
            let worker_pools = pools.iter().filter(|p| !p.is_master).map(|p| &p.status);
            alerts(&cp.status, worker_pools, Some(firing), now).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    Composed {
        pools,
        control_plane,
        alerts,
    }
}

/// The pools step: every pool of `ctx` aggregated from the node assessments (`assessed`: each
/// node's, in any order), in pool order, without copies of the nodes' insights.
pub fn pools(ctx: &NodeContext, assessed: &[&NodeAssessment]) -> Vec<PoolAssessment> {
    ctx.pools()
        .iter()
        .map(|p| nodes::aggregate_pool_status(ctx, p, assessed.iter().copied()))
        .collect()
}

/// The pool-level insights (D.8) of `pools`, in pool order (the node insights a pool may hold
/// copies of are left out).
pub fn pool_insights(pools: &[PoolAssessment]) -> impl Iterator<Item = &UpdateInsightStatus> {
    pools
        .iter()
        .flat_map(|p| p.insights.iter().filter(|i| i.resource.kind != "Node"))
}

/// The master pool's assessment (what the control plane's node counts come from), from the
/// node inputs: the nodes the master pool selects are assessed and aggregated. Also returns
/// when time alone changes one of those nodes. (The control-plane pass's way to the
/// [`control_plane`] step without assessing every node.)
pub fn master_pool<N: NodeSource>(
    ctx: &NodeContext,
    nodes: impl IntoIterator<Item = N>,
    now: Timestamp,
) -> (Option<PoolAssessment>, Option<Timestamp>) {
    let Some(master) = ctx.pools().iter().find(|p| p.is_master) else {
        return (None, None);
    };
    let assessed: Vec<NodeAssessment> = nodes
        .into_iter()
        .filter(|n| master.selects(n))
        .filter_map(|n| nodes::assess_node(ctx, &n.node(), now))
        .collect();
    let changes_at = assessed.iter().filter_map(|a| a.changes_at).min();
    (
        Some(nodes::aggregate_pool(ctx, master, &assessed)),
        changes_at,
    )
}

/// The control-plane step: the ControlPlaneUpdateStatus content and the control plane's
/// insights, from the inputs and the master pool (`None` without a ClusterVersion).
pub fn control_plane(
    inputs: &ClusterInputs<'_>,
    master: Option<&PoolAssessment>,
    now: Timestamp,
) -> Option<ControlPlaneAssessment> {
    control_plane::assess_control_plane(inputs, master, now)
}

/// The alerts step: `None` while no update is in progress (B.1's gate, see
/// [`alerts::update_in_progress`]: then there is no alert insight at all, of any kind);
/// else the insights of the `firing` alerts (none when not read), one per distinct object name
/// (identical label sets, e.g. two unmerged Prometheus replicas, are one object), at most
/// [`alerts::MAX_ALERT_INSIGHTS`] and one saying how many were left out past it.
pub fn alerts<'a>(
    control_plane: &ControlPlaneUpdateStatusStatus,
    worker_pools: impl IntoIterator<Item = &'a WorkerPoolUpdateStatusStatus>,
    firing: Option<&[Alert]>,
    now: Timestamp,
) -> Option<Vec<AlertInsight>> {
    if !alerts::update_in_progress(Some(control_plane), worker_pools) {
        return None;
    }
    let mut seen = HashSet::new();
    Some(
        alerts::assess_alert_insights_capped(
            firing.unwrap_or_default(),
            control_plane.started_at,
            now,
        )
        .into_iter()
        .filter(|a| seen.insert(naming::insight_name(&a.status, &a.identity)))
        .collect(),
    )
}

/// When time alone next changes the control plane's share: the control plane's own
/// thresholds, and those of the master pool's nodes (`master_changes_at`, from
/// [`master_pool`]). A step of its own: only the controller needs it.
pub fn requeue_after(
    inputs: &ClusterInputs<'_>,
    master_changes_at: Option<Timestamp>,
    now: Timestamp,
) -> Option<SignedDuration> {
    let own = control_plane::requeue_after(inputs, now);
    let master = master_changes_at
        .map(|t| t.duration_since(now))
        .filter(|d| d.is_positive());
    match (own, master) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
