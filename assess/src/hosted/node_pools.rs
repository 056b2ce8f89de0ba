//! NodePool → WorkerPoolUpdateStatus (hosted.md §8), through the standalone pool rules:
//!
//! - every NodePool becomes a MachineConfigPool-like [`PoolContext`] (selector: the Node
//!   label `hypershift.openshift.io/nodePool=<name>`; configuration: the MachineSet's target
//!   config-version hash; paused: `ReconciliationActive=False` or `spec.pausedUntil`), and its
//!   target version a one-entry ClusterVersion history, so [`nodes::aggregate_pool`] gives the
//!   counts, the assessment, the completion, the node insight order and D.8 as standalone;
//! - **InPlace** pools with the hosted Nodes: the standalone node rules ([`nodes::assess_node`])
//!   on the Nodes, whose machine-config annotations the HyperShift in-place upgrader writes with
//!   config-version hashes; two MachineConfig stand-ins map the target and current hashes to
//!   the target and current versions;
//! - **Replace** pools (and InPlace pools without the hosted Nodes): one member per Machine
//!   ([`machine_member`]), by its version and CAPI state.

use std::collections::{BTreeMap, HashMap};

use jiff::{SignedDuration, Timestamp};
use serde_json::json;
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, InsightScope, InsightType, NodePhase, ProgressInsight,
    ResourceRef, ScopeType, UpdateInsightStatus, VersionPair, WorkerPoolUpdateStatusStatus, labels,
    limits,
};
use update_status_api::hosted::{
    CAPI_GROUP, CURRENT_CONFIG_VERSION_ANNOTATION, Machine, MachineSet, NODE_POOL_LABEL, NodePool,
    TARGET_CONFIG_VERSION_ANNOTATION, UPGRADE_IN_PROGRESS_FALSE_ANNOTATION, annotation,
    control_plane_namespace,
};
use update_status_api::input::{
    ClusterVersion, MachineConfig, MachineConfigPool, NODE_CURRENT_CONFIG, NODE_DESIRED_CONFIG,
    NODE_STATE, Node,
};

use super::control_plane::HostedControlPlaneFacts;
use super::facts::{
    NodePoolFacts, REASON_IN_PLACE_FAILED, facts, find, machines_of, node_pools_of,
};
use super::inputs::HostedInputs;
use super::{health, objects};
use crate::compose::{self, Desired, Labels};
use crate::format::ellipsize;
use crate::naming;
use crate::nodes::{self, NodeAssessment, NodeContext, PoolAssessment, PoolContext};

/// The NodePools' share.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePoolsShare {
    /// One WorkerPoolUpdateStatus per NodePool of the HostedCluster, by NodePool name.
    pub statuses: Vec<Desired<WorkerPoolUpdateStatusStatus>>,
    /// Their node progress and health insights, then the pool insights.
    pub insights: Vec<Desired<UpdateInsightStatus>>,
    /// When time alone changes this share.
    pub requeue_after: Option<SignedDuration>,
}

/// The standalone pool and node context standing for a NodePool: a pool selecting the
/// NodePool's Nodes, rendering the target config hash, and MachineConfig stand-ins mapping the
/// target and current hashes to versions.
fn context(
    np: &NodePool,
    f: &NodePoolFacts,
    ms: Option<&MachineSet>,
) -> (NodeContext, PoolContext) {
    let target_hash = ms
        .and_then(|m| annotation(&m.metadata, TARGET_CONFIG_VERSION_ANNOTATION))
        .unwrap_or_default();
    let current_hash = ms
        .and_then(|m| annotation(&m.metadata, CURRENT_CONFIG_VERSION_ANNOTATION))
        .unwrap_or_default();
    let pool: MachineConfigPool = serde_json::from_value(json!({
        "metadata": {"name": np.name()},
        "spec": {
            "nodeSelector": {"matchLabels": {NODE_POOL_LABEL: np.name()}},
            "paused": f.paused,
            "configuration": {"name": target_hash}
        }
    }))
    .unwrap_or_default();
    let cv: ClusterVersion = serde_json::from_value(json!({
        "status": {"history": [{"state": "Partial", "version": f.target}]}
    }))
    .unwrap_or_default();
    let mut mcs: Vec<MachineConfig> = Vec::new();
    for (hash, version) in [
        (current_hash, f.current.as_str()),
        (target_hash, f.target.as_str()),
    ] {
        if !hash.is_empty() && !version.is_empty() {
            mcs.extend(
                serde_json::from_value(json!({"metadata": {"name": hash, "annotations": {
                    update_status_api::input::MC_RELEASE_IMAGE_VERSION: version}}}))
                .ok(),
            );
        }
    }
    let ctx = NodeContext::new(Some(&cv), std::slice::from_ref(&pool), &mcs);
    let mut pool_ctx = PoolContext::new(&pool);
    pool_ctx.resource = objects::node_pool_ref(np);
    (ctx, pool_ctx)
}

/// InPlace: the hosted Nodes of the pool: those labelled `hypershift.openshift.io/nodePool=<pool>`,
/// and those a Machine of the pool names that do not carry the label yet (the HCCO sets it
/// once after the node joins; they get it here, hosted.md §1). Nodes without machine-config
/// annotations count as done when the pool's current config is its target (HyperShift's
/// `nodeNeedsUpgrade`).
fn in_place_nodes<'a>(
    pool: &PoolContext,
    nodes: &'a [Node],
    ms: Option<&MachineSet>,
    machine_nodes: &[&str],
) -> Vec<std::borrow::Cow<'a, Node>> {
    let target = ms.and_then(|m| annotation(&m.metadata, TARGET_CONFIG_VERSION_ANNOTATION));
    let current = ms.and_then(|m| annotation(&m.metadata, CURRENT_CONFIG_VERSION_ANNOTATION));
    let settled = target.is_some() && target == current;
    nodes
        .iter()
        .filter_map(|n| {
            let labelled = n
                .metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(NODE_POOL_LABEL));
            let mut node = if pool.selects(n) {
                std::borrow::Cow::Borrowed(n)
            } else if !labelled && machine_nodes.contains(&n.name()) {
                let mut n = n.clone();
                n.metadata
                    .labels
                    .get_or_insert_with(BTreeMap::new)
                    .insert(NODE_POOL_LABEL.to_string(), pool.name.clone());
                std::borrow::Cow::Owned(n)
            } else {
                return None;
            };
            if node.annotation(NODE_CURRENT_CONFIG).is_none()
                && let (true, Some(h)) = (settled, target)
            {
                let a = node
                    .to_mut()
                    .metadata
                    .annotations
                    .get_or_insert_with(BTreeMap::new);
                a.insert(NODE_CURRENT_CONFIG.to_string(), h.to_string());
                a.insert(NODE_DESIRED_CONFIG.to_string(), h.to_string());
                a.insert(NODE_STATE.to_string(), "Done".to_string());
            }
            Some(node)
        })
        .collect()
}

/// One Machine as a pool member (Replace, or InPlace without the hosted Nodes), hosted.md §8:
/// updated (target version, not deleting, `NodeHealthy=True`), updating (target version not
/// healthy yet: a new node provisioning; or being deleted: draining until `DrainingSucceeded`),
/// pending (older version, not deleting), unavailable (`NodeHealthy≠True` or its Node not
/// ready or cordoned, unless updating), degraded (phase `Failed`).
pub fn machine_member(
    m: &Machine,
    f: &NodePoolFacts,
    pool: &PoolContext,
    node: Option<&Node>,
    cp_namespace: &str,
) -> NodeAssessment {
    let state = MachineState::of(m, f, pool, node);
    let (resource, name) = machine_resource(m, cp_namespace);
    let progress = UpdateInsightStatus {
        type_: InsightType::Progress,
        resource,
        scope: InsightScope {
            type_: ScopeType::WorkerPool,
            pool: Some(pool.name.clone()),
        },
        progress: Some(ProgressInsight {
            assessment: state.assessment,
            phase: Some(state.phase),
            version: Some(VersionPair {
                current: ellipsize(state.version, limits::VERSION),
                target: ellipsize(state.target, limits::VERSION),
            }),
            estimate: String::new(),
            estimate_seconds: None,
            estimated_completed_at: None,
            message: state.message(m),
            since: None,
            timeline: None,
            conditions: state.conditions(),
        }),
        health: None,
    };
    NodeAssessment {
        name: name.to_string(),
        pool: pool.name.clone(),
        is_master: false,
        assessment: state.assessment,
        phase: state.phase,
        current_version: state.version.to_string(),
        is_updated: state.phase == NodePhase::Updated,
        is_updating: state.is_updating,
        is_unavailable: state.is_unavailable,
        is_degraded: state.failed,
        is_draining: state.phase == NodePhase::Draining,
        seriously_unavailable: state.is_unavailable,
        // A Machine has no oc estimate: its pool's is unknown.
        estimate_seconds: None,
        changes_at: None,
        // Machines are not timed: the learned estimates read MachineConfig nodes.
        stage: crate::nodes::NodeStage::Pending,
        incident: false,
        progress,
        health: Vec::new(),
        drain: None,
    }
}

/// What [`machine_member`] reads of a Machine: its versions, and the phase and assessment
/// they give.
struct MachineState<'a> {
    /// The pool's target version (its current one when it has none).
    target: &'a str,
    /// The Machine's version ("" when unknown).
    version: &'a str,
    at_target: bool,
    failed: bool,
    phase: NodePhase,
    is_updating: bool,
    is_unavailable: bool,
    assessment: Assessment,
}

impl<'a> MachineState<'a> {
    fn of(m: &'a Machine, f: &'a NodePoolFacts, pool: &PoolContext, node: Option<&Node>) -> Self {
        let target = if f.target.is_empty() {
            &f.current
        } else {
            &f.target
        };
        let version = m.version().unwrap_or_default();
        let at_target = !target.is_empty() && version == target;
        let healthy = m.condition("NodeHealthy").is_some_and(|c| c.is_true());
        let node_ok = node.is_none_or(|n| {
            !n.spec.unschedulable
                && n.status
                    .conditions
                    .iter()
                    .rev()
                    .find(|c| c.type_ == "Ready")
                    .is_none_or(|c| c.is_true())
        });
        let failed = m.status.as_ref().is_some_and(|s| s.phase == "Failed");
        let drained = m
            .condition("DrainingSucceeded")
            .is_some_and(|c| c.is_true());
        let (phase, is_updating) = if m.is_deleting() {
            (
                if drained {
                    NodePhase::Updating
                } else {
                    NodePhase::Draining
                },
                true,
            )
        } else if at_target && healthy {
            (NodePhase::Updated, false)
        } else if at_target && f.updating {
            (NodePhase::Updating, true)
        } else if at_target {
            (NodePhase::Updated, false)
        } else if pool.paused {
            (NodePhase::Paused, false)
        } else {
            (NodePhase::Pending, false)
        };
        let is_unavailable = !is_updating && (!healthy || !node_ok);
        let assessment = if failed {
            Assessment::Degraded
        } else if is_updating {
            Assessment::Progressing
        } else if is_unavailable {
            Assessment::Unavailable
        } else if phase == NodePhase::Updated {
            Assessment::Completed
        } else if phase == NodePhase::Paused {
            Assessment::Excluded
        } else {
            Assessment::Outdated
        };
        MachineState {
            target,
            version,
            at_target,
            failed,
            phase,
            is_updating,
            is_unavailable,
            assessment,
        }
    }

    /// The progress insight's message.
    fn message(&self, m: &Machine) -> String {
        if self.failed {
            "Machine phase is Failed".to_string()
        } else if m.is_deleting() {
            format!("Machine {} is being replaced", m.name())
        } else if self.at_target && self.is_updating {
            "New Machine is provisioning, its Node has not joined yet".to_string()
        } else if self.is_unavailable {
            "Node is not healthy".to_string()
        } else {
            String::new()
        }
    }

    /// The progress insight's `Updating`, `Available` and `Degraded` conditions.
    fn conditions(&self) -> Vec<Condition> {
        let flag = |b: bool| {
            if b {
                ConditionStatus::True
            } else {
                ConditionStatus::False
            }
        };
        vec![
            Condition {
                type_: "Updating".into(),
                status: flag(self.is_updating),
                reason: self.phase.as_str().into(),
                ..Default::default()
            },
            Condition {
                type_: "Available".into(),
                status: flag(!self.is_unavailable),
                reason: if self.is_unavailable {
                    "Unavailable"
                } else {
                    "AsExpected"
                }
                .into(),
                ..Default::default()
            },
            Condition {
                type_: "Degraded".into(),
                status: flag(self.failed),
                reason: if self.failed {
                    "Degraded"
                } else {
                    "AsExpected"
                }
                .into(),
                ..Default::default()
            },
        ]
    }
}

/// What a Machine's insight is about: its Node once it has one, else the Machine (in the
/// control-plane namespace); and the member's name.
fn machine_resource<'m>(m: &'m Machine, cp_namespace: &str) -> (ResourceRef, &'m str) {
    match m.node_name() {
        Some(n) => (
            ResourceRef {
                group: String::new(),
                kind: "Node".into(),
                name: n.to_string(),
                namespace: None,
            },
            n,
        ),
        None => (
            ResourceRef {
                group: CAPI_GROUP.into(),
                kind: "Machine".into(),
                name: m.name().to_string(),
                namespace: Some(cp_namespace.to_string()).filter(|n| !n.is_empty()),
            },
            m.name(),
        ),
    }
}

/// One NodePool assessed: the standalone pool aggregate plus its facts.
pub fn assess_node_pool(
    inputs: &HostedInputs<'_>,
    np: &NodePool,
    now: Timestamp,
) -> (PoolAssessment, NodePoolFacts, Option<Timestamp>) {
    let hc = inputs.hosted_cluster;
    let f = facts(inputs, np, now);
    let ms = if f.in_place {
        find(inputs.machine_sets, np.name(), |m| &m.metadata)
    } else {
        None
    };
    let (ctx, pool) = context(np, &f, ms);
    let cp_ns = control_plane_namespace(hc.namespace(), hc.name());
    let guest_nodes = inputs.guest.map(|g| g.nodes);
    let mut changes_at = None;
    let members: Vec<NodeAssessment> = match guest_nodes {
        Some(nodes) if f.in_place => {
            let machine_nodes: Vec<&str> = machines_of(hc, np, inputs.machines)
                .into_iter()
                .filter_map(Machine::node_name)
                .collect();
            in_place_nodes(&pool, nodes, ms, &machine_nodes)
                .iter()
                .filter_map(|n| nodes::assess_node(&ctx, n, now))
                .inspect(|a| changes_at = min_time(changes_at, a.changes_at))
                .collect()
        }
        _ => {
            let by_name: HashMap<&str, &Node> = guest_nodes
                .unwrap_or_default()
                .iter()
                .map(|n| (n.name(), n))
                .collect();
            machines_of(hc, np, inputs.machines)
                .into_iter()
                .map(|m| {
                    let node = m.node_name().and_then(|n| by_name.get(n).copied());
                    machine_member(m, &f, &pool, node, &cp_ns)
                })
                .collect()
        }
    };
    let mut pa = nodes::aggregate_pool(&ctx, &pool, &members);
    hosted_counts(&mut pa.status, &f, np);
    (pa, f, changes_at)
}

/// The hosted corrections of the standalone aggregate: surge Machines do not raise the total
/// above the desired replicas; a pool with no version rollout wanted is Completed; an in-place
/// failure is Degraded.
fn hosted_counts(s: &mut WorkerPoolUpdateStatusStatus, f: &NodePoolFacts, np: &NodePool) {
    let c = &mut s.nodes;
    if let Some(desired) = f.desired_replicas
        && c.total > desired
    {
        c.total = desired;
        c.updated = c.updated.min(desired);
        c.available = c.available.min(desired);
        c.outdated = desired - c.updated;
    }
    let failed = np
        .condition("UpdatingVersion")
        .is_some_and(|u| u.is_false() && u.reason == REASON_IN_PLACE_FAILED);
    s.assessment = if failed {
        Assessment::Degraded
    } else {
        nodes::pool_assessment(c)
    };
    if !f.updating && matches!(s.assessment, Assessment::Pending | Assessment::Progressing) {
        s.assessment = Assessment::Completed;
    }
    s.completion_percent = nodes::completion_percent(c.updated, c.total);
    if s.target_version.is_empty() {
        s.target_version = ellipsize(&f.current, limits::VERSION);
    }
}

fn min_time(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The NodePools' share: per NodePool its WorkerPoolUpdateStatus, its members' insights and
/// its pool insights (standalone D.8 and the hosted NodePool rules), all owned by the NodePool.
pub(super) fn node_pools_share(
    inputs: &HostedInputs<'_>,
    cp: &HostedControlPlaneFacts,
    base: &Labels,
    now: Timestamp,
) -> NodePoolsShare {
    let hc = inputs.hosted_cluster;
    let mut out = NodePoolsShare::default();
    let mut next: Option<Timestamp> = None;
    for np in node_pools_of(hc, inputs.node_pools) {
        let (mut pa, f, changes_at) = assess_node_pool(inputs, np, now);
        next = min_time(next, changes_at);
        let machines = machines_of(hc, np, inputs.machines);
        let ms_degraded = find(inputs.machine_sets, np.name(), |m| &m.metadata)
            .and_then(|m| annotation(&m.metadata, UPGRADE_IN_PROGRESS_FALSE_ANNOTATION));
        let view = health::NodePoolView {
            np,
            ms_degraded,
            facts: &f,
            machines: &machines,
        };
        let (extra, extra_next) = health::node_pool_insights(&view, cp, now);
        next = min_time(next, extra_next);
        pa.insights.extend(extra);
        pa.status.health_insights = crate::insight::tally(&pa.insights);
        refresh_healthy(&mut pa.status);
        let owner = compose::owner_of(np);
        out.insights.extend(
            pa.insights
                .into_iter()
                .map(|s| objects::insight(s, hc, base, owner.clone())),
        );
        let mut l = base.clone();
        l.insert(labels::SCOPE.into(), ScopeType::WorkerPool.slug().into());
        l.insert(labels::POOL.into(), naming::label_value(np.name()));
        l.insert(
            labels::ASSESSMENT.into(),
            pa.status.assessment.slug().into(),
        );
        out.statuses.push(Desired {
            name: naming::pool_status_name(np.name()),
            labels: l,
            owner,
            status: pa.status,
        });
    }
    out.requeue_after = next
        .map(|t| t.duration_since(now))
        .filter(|d| d.is_positive());
    out
}

/// The standalone `Healthy` condition again, once the hosted pool insights are counted.
fn refresh_healthy(s: &mut WorkerPoolUpdateStatusStatus) {
    let serious = s.health_insights.critical + s.health_insights.error;
    if serious == 0 {
        return;
    }
    if let Some(c) = s.conditions.iter_mut().find(|c| c.type_ == "Healthy") {
        *c = Condition {
            type_: "Healthy".into(),
            status: ConditionStatus::False,
            reason: "ErrorInsights".into(),
            message: format!("{serious} health insights of level Error or Critical"),
            last_transition_time: None,
        };
    }
}
