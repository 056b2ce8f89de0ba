//! The worker-pools share, incrementally: a way of feeding the composition's pools step
//! ([`compose::composer::pools`]) that keeps thousands of nodes cheap (see
//! `docs/benchmarks.md`), not a composition of its own. Pure; the worker-pools reconciler keeps
//! it between passes.
//!
//! - each node's assessment is cached by resourceVersion (and uid): a node event re-assesses
//!   that node only ([`crate::nodes::assess_node`]), and one that changes nothing the
//!   assessment reads (a kubelet heartbeat) ends there;
//! - the desired insight objects are built from the cached assessments as they are iterated
//!   ([`WorkerPools::insights`], [`compose::node_insights`]), never all held at once: at
//!   thousands of nodes they were the largest thing the share held;
//! - pools are re-aggregated and named ([`compose::pools_share`]: the pools step, then naming)
//!   only when a node assessment, the context (ClusterVersion target, pools, MachineConfigs)
//!   or a pool's identity changed.
//!
//! The result is, by construction, what [`compose::desired_cluster`] computes from the same
//! inputs for the nodes and pools (a test checks it at every step of simulated updates).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use update_status_api::crd::{UpdateInsight, UpdateInsightStatus, WorkerPoolUpdateStatusStatus};
use update_status_api::input::{ClusterVersion, MachineConfig, MachineConfigPool, Node};

use crate::compose::since::PriorConditions;
use crate::compose::{self, Desired, Existing, ExistingInsights, Labels, since};
use crate::naming;
use crate::nodes::{self, NodeAssessment, NodeContext, NodeSource, PoolAssessment};
use crate::related::DrainEvidence;

/// A node's assessment, valid while its resourceVersion (and uid) and the context are
/// unchanged and its time threshold (if any) has not passed.
#[derive(Clone, Debug)]
struct CachedNode {
    resource_version: Option<String>,
    uid: Option<String>,
    assessment: Option<NodeAssessment>,
    /// The node's owner reference: its insights' owner.
    owner: Option<OwnerReference>,
}

/// What one [`WorkerPools::update`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Update {
    /// The pools were re-aggregated (some input changed).
    pub aggregated: bool,
    /// When time alone next changes a node's assessment.
    pub next_change: Option<Timestamp>,
}

/// The worker-pools share, kept between passes.
#[derive(Clone, Debug)]
pub struct WorkerPools {
    context: Option<NodeContext>,
    /// Boxed: a `CachedNode` is about 700 bytes, and a hash table holds its values inline with
    /// up to twice the slots it needs (and both tables while it grows).
    nodes: HashMap<String, Box<CachedNode>>,
    /// The cluster labels of the last update (the insights' base labels).
    base: Labels,
    /// Owner references of the pools, by name (a re-created pool changes them).
    pool_owners: BTreeMap<String, OwnerReference>,
    /// The last aggregation.
    pools: compose::PoolsShare,
    /// Some input changed since the last aggregation.
    dirty: bool,
}

impl Default for WorkerPools {
    fn default() -> Self {
        WorkerPools {
            context: None,
            nodes: HashMap::new(),
            base: Labels::new(),
            pool_owners: BTreeMap::new(),
            pools: compose::PoolsShare::default(),
            dirty: true,
        }
    }
}

/// The inputs one [`WorkerPools::update`] reads: the ClusterVersion, the pools and their
/// MachineConfigs (the nodes' context), and the nodes as a watch cache holds them.
#[derive(Debug)]
pub struct PoolInputs<'a, N> {
    /// The ClusterVersion (its target).
    pub cluster_version: Option<&'a ClusterVersion>,
    /// The MachineConfigPools.
    pub pools: &'a [MachineConfigPool],
    /// The MachineConfigs.
    pub machine_configs: &'a [MachineConfig],
    /// The nodes.
    pub nodes: &'a [N],
}

/// A node assessed at `now`, its transition times carried over: what this node's insight
/// last said (`cached`, in memory: also before the cache shows our write), else what our
/// object says.
fn assess_carried(
    ctx: &NodeContext,
    node: &Node,
    cached: Option<&CachedNode>,
    existing: &Existing<'_>,
    now: Timestamp,
) -> Option<NodeAssessment> {
    let mut assessment = nodes::assess_node(ctx, node, now);
    if let Some(a) = assessment.as_mut() {
        let name = naming::insight_name(&a.progress, "");
        let previous = cached
            .and_then(|c| c.assessment.as_ref())
            .and_then(|p| p.progress.progress.as_ref());
        let prior_timeline = match previous {
            Some(p) => p.timeline,
            None => existing.insights.timeline(&name),
        };
        nodes::carry_timeline(a, prior_timeline.as_ref(), now);
        if let Some(p) = a.progress.progress.as_mut() {
            match previous {
                Some(prior) => since::carry(&mut p.conditions, &name, &prior.conditions[..], now),
                None => since::carry(&mut p.conditions, &name, &existing.insights, now),
            }
        }
    }
    assessment
}

impl WorkerPools {
    /// Brings the share up to date with the inputs (`nodes` as a watch cache holds them) and
    /// our objects (`existing`, for the carry-over: `startedAt`, the conditions' transition
    /// times), at `now`.
    pub fn update<N: NodeSource>(
        &mut self,
        inputs: PoolInputs<'_, N>,
        existing: &Existing<'_>,
        base: &Labels,
        now: Timestamp,
    ) -> Update {
        let ctx = self.refresh_context(&inputs);
        let next_change = self.refresh_nodes(&ctx, inputs.nodes, existing, now);
        if &self.base != base {
            self.base = base.clone();
        }
        let aggregated = self.dirty;
        if self.dirty {
            self.aggregate(&ctx, existing, base, now);
        }
        Update {
            aggregated,
            next_change,
        }
    }

    /// The nodes' context of `inputs`; a new one (or new pool owners) drops the cached
    /// assessments (or marks the pools to re-aggregate).
    fn refresh_context<N>(&mut self, inputs: &PoolInputs<'_, N>) -> NodeContext {
        let ctx = NodeContext::new(inputs.cluster_version, inputs.pools, inputs.machine_configs);
        if self.context.as_ref() != Some(&ctx) {
            self.nodes.clear();
            self.context = Some(ctx.clone());
            self.dirty = true;
        }
        let pool_owners = compose::pool_owners(inputs.pools);
        if pool_owners != self.pool_owners {
            self.pool_owners = pool_owners;
            self.dirty = true;
        }
        ctx
    }

    /// Nodes: re-assesses those whose object changed or whose time threshold passed, forgets
    /// those gone. When time alone next changes a node's assessment.
    fn refresh_nodes(
        &mut self,
        ctx: &NodeContext,
        nodes: &[impl NodeSource],
        existing: &Existing<'_>,
        now: Timestamp,
    ) -> Option<Timestamp> {
        let mut seen: HashSet<&str> = HashSet::with_capacity(nodes.len());
        let mut next_change: Option<Timestamp> = None;
        for node in nodes {
            let name = node.name();
            self.refresh_node(ctx, node, existing, now);
            if let Some(t) = self
                .nodes
                .get(name)
                .and_then(|c| c.assessment.as_ref())
                .and_then(|a| a.changes_at)
            {
                next_change = Some(next_change.map_or(t, |n: Timestamp| n.min(t)));
            }
            seen.insert(name);
        }
        let before = self.nodes.len();
        self.nodes.retain(|name, _| seen.contains(name.as_str()));
        if self.nodes.len() != before {
            self.dirty = true;
        }
        next_change
    }

    /// One node: re-assessed unless its cached assessment is fresh (same resourceVersion and
    /// uid, time threshold not passed); cached again unless the assessment is the same.
    fn refresh_node(
        &mut self,
        ctx: &NodeContext,
        node: &impl NodeSource,
        existing: &Existing<'_>,
        now: Timestamp,
    ) {
        let name = node.name();
        let rv = node.resource_version();
        let uid = node.uid();
        let cached = self.nodes.get(name).map(Box::as_ref);
        let fresh = cached.is_some_and(|c| {
            c.resource_version.as_deref() == rv
                && c.uid.as_deref() == uid
                && c.assessment
                    .as_ref()
                    .and_then(|a| a.changes_at)
                    .is_none_or(|t| t > now)
        });
        if fresh {
            return;
        }
        let whole = node.node();
        let assessment = assess_carried(ctx, &whole, cached, existing, now);
        let same = cached.is_some_and(|c| c.assessment == assessment && c.uid.as_deref() == uid);
        if same {
            if let Some(c) = self.nodes.get_mut(name) {
                c.resource_version = rv.map(str::to_string);
            }
        } else {
            self.nodes.insert(
                name.to_string(),
                Box::new(CachedNode {
                    resource_version: rv.map(str::to_string),
                    uid: uid.map(str::to_string),
                    assessment,
                    owner: compose::owner_of(whole.as_ref()),
                }),
            );
            self.dirty = true;
        }
    }

    /// Re-aggregates and names the pools; the conditions' transition times are the last
    /// aggregation's, else what our objects say.
    fn aggregate(
        &mut self,
        ctx: &NodeContext,
        existing: &Existing<'_>,
        base: &Labels,
        now: Timestamp,
    ) {
        let assessed: Vec<&NodeAssessment> = self
            .nodes
            .values()
            .filter_map(|c| c.assessment.as_ref())
            .collect();
        let mut pools =
            compose::pools_share(ctx, &assessed, &self.pool_owners, &existing.insights, base);
        for d in &mut pools.statuses {
            let previous = self
                .pools
                .statuses
                .iter()
                .find(|p| p.name == d.name)
                .map(|p| &p.status.conditions[..]);
            match previous {
                Some(prior) => since::carry(&mut d.status.conditions, &d.name, prior, now),
                None => since::carry(
                    &mut d.status.conditions,
                    &d.name,
                    existing.worker_pools,
                    now,
                ),
            }
        }
        self.pools = pools;
        self.dirty = false;
    }

    /// Every desired UpdateInsight, each node's (built from its cached assessment as the
    /// iterator reaches it, `startedAt` carried over from `existing`, our UpdateInsights as
    /// they are; a failed drain's blockers from `evidence`), then the pools'.
    pub fn insights<'a>(
        &'a self,
        existing: &'a [Arc<UpdateInsight>],
        evidence: &'a DrainEvidence,
    ) -> impl Iterator<Item = Desired<UpdateInsightStatus>> + 'a {
        let existing = ExistingInsights::new(existing);
        self.nodes
            .values()
            .flat_map(move |c| match &c.assessment {
                Some(a) => {
                    compose::node_insights(a, c.owner.clone(), &existing, &self.base, evidence)
                }
                None => Vec::new(),
            })
            .chain(self.pools.insights.iter().cloned())
    }

    /// The nodes whose drain fails and whose message names no PodDisruptionBudget (rule D2):
    /// whose pods and budgets are worth looking up, by name, with the pods the message names
    /// (`(namespace, name)`; none: any pod of the node may be the one).
    pub fn drain_lookups(&self) -> impl Iterator<Item = (&str, &[(String, String)])> {
        self.node_assessments().filter_map(|a| {
            let drain = a.drain.as_ref().filter(|d| d.needs_lookup())?;
            Some((a.name.as_str(), drain.pods.as_slice()))
        })
    }

    /// The desired WorkerPoolUpdateStatus objects, in pool order.
    pub fn statuses(&self) -> &[Desired<WorkerPoolUpdateStatusStatus>] {
        &self.pools.statuses
    }

    /// Every pool's assessment of the last aggregation, in pool order (the master included);
    /// their `insights` are the pools' own (see [`compose::PoolsShare::pools`]).
    pub fn pools(&self) -> &[PoolAssessment] {
        &self.pools.pools
    }

    /// Every node's assessment (any order).
    pub fn node_assessments(&self) -> impl Iterator<Item = &NodeAssessment> {
        self.nodes.values().filter_map(|c| c.assessment.as_ref())
    }
}
