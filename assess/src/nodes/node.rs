//! C.2–C.8: the facts of one node and its assessment.

use jiff::{SignedDuration, Timestamp};
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, ImpactLevel, ImpactType, InsightScope, InsightType,
    NodePhase, NodeTimeline, ProgressInsight, ResourceRef, UpdateInsightStatus, VersionPair,
    limits,
};
use update_status_api::input::{
    NODE_CURRENT_CONFIG, NODE_DESIRED_CONFIG, NODE_DESIRED_DRAIN, NODE_LAST_APPLIED_DRAIN,
    NODE_REASON, NODE_STATE, Node,
};

use super::availability::Availability;
use super::constants::{
    MCO_REFERENCE, SOURCE_NODE_DEGRADED, SOURCE_NODE_UNAVAILABLE, STATE_DEGRADED, STATE_DONE,
    STATE_REBOOTING, STATE_UNRECONCILABLE,
};
use super::context::{NodeContext, PoolContext};
use super::stage::{NodeStage, in_incident, node_stage, timeline};
use crate::format::{cut_noting, ellipsize};
use crate::insight::HealthDraft;
use crate::related::{DrainEvidence, DrainFailure};

/// The per-node facts of C.2–C.8, before building insights.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct NodeFacts<'a> {
    pub(super) pool: &'a PoolContext,
    pub(super) current_version: &'a str,
    pub(super) is_updated: bool,
    pub(super) is_updating: bool,
    pub(super) is_degraded: bool,
    pub(super) is_draining: bool,
    pub(super) availability: Availability,
    pub(super) phase: NodePhase,
    pub(super) assessment: Assessment,
    pub(super) estimate: &'static str,
    pub(super) degraded_reason: &'a str,
}

pub(super) fn node_facts<'a>(ctx: &'a NodeContext, node: &'a Node) -> Option<NodeFacts<'a>> {
    if node.name().is_empty() {
        return None;
    }
    let pool = ctx.pool_of(node)?;
    let current_config = node.annotation(NODE_CURRENT_CONFIG);
    let desired_config = node.annotation(NODE_DESIRED_CONFIG);
    let current_version = current_config.and_then(|c| ctx.machine_config_version(c));
    let desired_version = desired_config.and_then(|c| ctx.machine_config_version(c));
    let latest = ctx.target_version.as_str();

    // C.3 (OC variant).
    let has_desired = desired_config.is_some();
    let matched = current_config.unwrap_or_default() == desired_config.unwrap_or_default();
    let desired_is_pool_target = desired_config.unwrap_or_default() == pool.configuration;
    let is_updated = !latest.is_empty()
        && current_version == Some(latest)
        && (!ctx.multi_arch_migration || !has_desired || (matched && desired_is_pool_target));
    let is_updating = !latest.is_empty()
        && !is_updated
        && current_version.is_some()
        && desired_version == Some(latest)
        && !matched
        && desired_is_pool_target;

    let state = node.annotation(NODE_STATE).unwrap_or_default();
    let availability = Availability::of(node, pool);
    // C.5
    let is_degraded = !desired_config.unwrap_or_default().is_empty()
        && matches!(state, STATE_DEGRADED | STATE_UNRECONCILABLE);
    // C.6
    let is_draining = is_draining(node, is_updating);

    // C.7
    let phase = if is_updating && is_draining {
        NodePhase::Draining
    } else if is_updating {
        match state {
            STATE_REBOOTING => NodePhase::Rebooting,
            STATE_DONE => NodePhase::Updated,
            // `Working`, empty/absent, and anything else (Degraded, Unreconcilable).
            _ => NodePhase::Updating,
        }
    } else if is_updated {
        NodePhase::Updated
    } else if pool.paused {
        NodePhase::Paused
    } else {
        NodePhase::Pending
    };

    // C.8
    let (mut assessment, mut estimate) = match phase {
        NodePhase::Paused => (Assessment::Excluded, "-"),
        NodePhase::Pending => (Assessment::Outdated, "?"),
        NodePhase::Draining => (Assessment::Progressing, "+10m"),
        NodePhase::Updating | NodePhase::Rebooting => (Assessment::Progressing, "+5m"),
        NodePhase::Updated => (Assessment::Completed, "-"),
    };
    let stalled_estimate = if is_updated { "-" } else { "?" };
    if availability.is_unavailable && !is_updating {
        assessment = Assessment::Unavailable;
        estimate = stalled_estimate;
    }
    if is_degraded {
        assessment = Assessment::Degraded;
        estimate = stalled_estimate;
    }

    Some(NodeFacts {
        pool,
        current_version: current_version.unwrap_or_default(),
        is_updated,
        is_updating,
        is_degraded,
        is_draining,
        availability,
        phase,
        assessment,
        estimate,
        degraded_reason: node.annotation(NODE_REASON).unwrap_or_default(),
    })
}

/// C.6.
pub(super) fn is_draining(node: &Node, is_updating: bool) -> bool {
    let desired = node.annotation(NODE_DESIRED_DRAIN).unwrap_or_default();
    let applied = node.annotation(NODE_LAST_APPLIED_DRAIN).unwrap_or_default();
    if desired.is_empty() || applied.is_empty() {
        return false;
    }
    if desired != applied && desired.split('-').next() == Some("drain") {
        return true;
    }
    is_updating && node.annotation(NODE_STATE) == Some(STATE_DONE)
}

// ------------------------------------------------------------------------------------------------
// Per-node assessment
// ------------------------------------------------------------------------------------------------

/// Everything about one node: facts, its progress insight and its health insights. Pure
/// function of (context, node, now): cache it per node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeAssessment {
    /// Node name.
    pub name: String,
    /// Its pool.
    pub pool: String,
    /// The pool is `master`.
    pub is_master: bool,
    /// C.8 assessment.
    pub assessment: Assessment,
    /// C.7 phase.
    pub phase: NodePhase,
    /// Version of the current rendered config (empty when unknown).
    pub current_version: String,
    /// C.3.
    pub is_updated: bool,
    /// C.3.
    pub is_updating: bool,
    /// C.4.
    pub is_unavailable: bool,
    /// C.5.
    pub is_degraded: bool,
    /// C.6.
    pub is_draining: bool,
    /// C.4 at `now`.
    pub seriously_unavailable: bool,
    /// C.8's EST in seconds ([`estimate_seconds`]; the pools read it, not the insight).
    pub estimate_seconds: Option<u32>,
    /// When time alone would change this assessment (a D.6 insight would appear).
    pub changes_at: Option<Timestamp>,
    /// Its stage as the learned estimates time it.
    pub stage: NodeStage,
    /// The daemon says `Degraded` or `Unreconcilable`.
    pub incident: bool,
    /// The node's progress insight.
    pub progress: UpdateInsightStatus,
    /// Its health insights (D.6 then D.7), already filtered for completeness; their
    /// `related` is the node's pool and target MachineConfig (rule N), and the drain's
    /// blockers are added by [`with_drain_blockers`].
    pub health: Vec<UpdateInsightStatus>,
    /// The node is degraded by a failed drain: what its message says (rule D1, boxed: most
    /// nodes have none).
    pub drain: Option<Box<DrainFailure>>,
}

impl NodeAssessment {
    /// Time until this assessment changes by time alone, if it does.
    pub fn requeue_after(&self, now: Timestamp) -> Option<SignedDuration> {
        self.changes_at
            .map(|t| t.duration_since(now))
            .filter(|d| d.is_positive())
    }
}

/// Assesses one node: `None` for a node in no pool (or without a name).
pub fn assess_node(ctx: &NodeContext, node: &Node, now: Timestamp) -> Option<NodeAssessment> {
    let f = node_facts(ctx, node)?;
    let name = node.name();
    let scope = f.pool.node_scope();
    let resource = ResourceRef {
        group: String::new(),
        kind: "Node".to_string(),
        name: name.to_string(),
        namespace: None,
    };
    let stage = node_stage(ctx, node, &ctx.target_version);
    let incident = in_incident(node);
    let d6 = f.availability.is_unavailable && !f.is_updating;
    let seriously_unavailable = f.availability.seriously_unavailable(now);
    let changes_at = if d6 {
        f.availability.serious_at(now)
    } else {
        None
    };

    // This observation alone; [`carry_timeline`] adds what the insight said before.
    let observed = timeline(None, stage, incident, now);
    let progress = progress_insight(ctx, &f, (&resource, &scope), observed);

    let mut health = node_health(&f, name, (&resource, &scope), d6 && seriously_unavailable);

    // Rule N: every node insight points at the node's pool and the MachineConfig it goes to.
    let related = crate::related::of_node(&f.pool.name, node.annotation(NODE_DESIRED_CONFIG));
    for h in &mut health {
        crate::insight::set_related(h, related.iter().cloned());
    }
    let drain = f
        .is_degraded
        .then(|| crate::related::parse_drain_failure(f.degraded_reason))
        .flatten()
        .map(Box::new);

    Some(NodeAssessment {
        name: name.to_string(),
        pool: f.pool.name.clone(),
        is_master: f.pool.is_master,
        assessment: f.assessment,
        phase: f.phase,
        current_version: f.current_version.to_string(),
        is_updated: f.is_updated,
        is_updating: f.is_updating,
        is_unavailable: f.availability.is_unavailable,
        is_degraded: f.is_degraded,
        is_draining: f.is_draining,
        seriously_unavailable,
        estimate_seconds: estimate_seconds(f.estimate),
        changes_at,
        stage,
        incident,
        progress,
        health,
        drain,
    })
}

/// The node's progress insight about `resource` in `scope`, its timeline `observed`.
fn progress_insight(
    ctx: &NodeContext,
    f: &NodeFacts<'_>,
    (resource, scope): (&ResourceRef, &InsightScope),
    observed: Option<NodeTimeline>,
) -> UpdateInsightStatus {
    let message = match f.assessment {
        Assessment::Degraded => f.degraded_reason.to_string(),
        Assessment::Unavailable => f.availability.reason(),
        _ => String::new(),
    };
    UpdateInsightStatus {
        type_: InsightType::Progress,
        resource: resource.clone(),
        scope: scope.clone(),
        progress: Some(ProgressInsight {
            assessment: f.assessment,
            phase: Some(f.phase),
            version: Some(VersionPair {
                current: ellipsize(f.current_version, limits::VERSION),
                target: ellipsize(&ctx.target_version, limits::VERSION),
            }),
            estimate: f.estimate.to_string(),
            estimate_seconds: estimate_seconds(f.estimate),
            estimated_completed_at: None,
            message: cut_noting(&message, limits::PROGRESS_MESSAGE),
            since: None,
            timeline: observed,
            conditions: node_conditions(f),
        }),
        health: None,
    }
}

/// A node progress insight's `Updating`, `Available` and `Degraded` conditions.
fn node_conditions(f: &NodeFacts<'_>) -> Vec<Condition> {
    let mut conditions = Vec::with_capacity(3);
    conditions.push(Condition {
        type_: "Updating".into(),
        status: if f.is_updating {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        },
        reason: f.phase.as_str().into(),
        message: String::new(),
        last_transition_time: None,
    });
    conditions.push(if f.availability.is_unavailable {
        Condition {
            type_: "Available".into(),
            status: ConditionStatus::False,
            reason: "Unavailable".into(),
            message: ellipsize(&f.availability.reason(), limits::CONDITION_MESSAGE),
            last_transition_time: f.availability.since(),
        }
    } else {
        Condition {
            type_: "Available".into(),
            status: ConditionStatus::True,
            reason: "AsExpected".into(),
            ..Default::default()
        }
    });
    conditions.push(if f.is_degraded {
        Condition {
            type_: "Degraded".into(),
            status: ConditionStatus::True,
            reason: "Degraded".into(),
            message: ellipsize(f.degraded_reason, limits::CONDITION_MESSAGE),
            last_transition_time: None,
        }
    } else {
        Condition {
            type_: "Degraded".into(),
            status: ConditionStatus::False,
            reason: "AsExpected".into(),
            ..Default::default()
        }
    });

    conditions
}

/// A node's health insights: D.6 (`seriously_unavailable`: unavailable long enough, and not
/// updating) and D.7, about `subject` (its resource and scope).
fn node_health(
    f: &NodeFacts<'_>,
    name: &str,
    (resource, scope): (&ResourceRef, &InsightScope),
    seriously_unavailable: bool,
) -> Vec<UpdateInsightStatus> {
    let mut health = Vec::new();
    // D.6
    if seriously_unavailable {
        let description = if f.is_degraded {
            f.degraded_reason.to_string()
        } else {
            f.availability.description()
        };
        health.extend(
            HealthDraft {
                resource: resource.clone(),
                scope: scope.clone(),
                source: SOURCE_NODE_UNAVAILABLE,
                started_at: f.availability.since(),
                level: ImpactLevel::Warning,
                type_: ImpactType::UpdateSpeed,
                summary: f.availability.message(name),
                description,
                reference: MCO_REFERENCE,
            }
            .build(),
        );
    }
    // D.7
    if f.is_degraded {
        health.extend(
            HealthDraft {
                resource: resource.clone(),
                scope: scope.clone(),
                source: SOURCE_NODE_DEGRADED,
                started_at: None,
                level: ImpactLevel::Error,
                type_: ImpactType::UpdateStalled,
                summary: format!("Node {name} is degraded"),
                description: f.degraded_reason.to_string(),
                reference: MCO_REFERENCE,
            }
            .build(),
        );
    }

    health
}

/// Carries a node's timeline over: `prior` is what its insight said before (our object, or
/// the last assessment in memory); the stages observed now are added to it
/// ([`super::stage::timeline`]).
pub fn carry_timeline(a: &mut NodeAssessment, prior: Option<&NodeTimeline>, now: Timestamp) {
    if let Some(p) = a.progress.progress.as_mut() {
        p.timeline = timeline(prior, a.stage, a.incident, now);
    }
}

/// A node's EST (C.8) in seconds: `+10m` → 600, `+5m` → 300, `-` → 0, `?` (unknown) → `None`.
pub fn estimate_seconds(estimate: &str) -> Option<u32> {
    match estimate {
        "-" => Some(0),
        "+5m" => Some(5 * 60),
        "+10m" => Some(10 * 60),
        _ => None,
    }
}

/// A node's health insights with the blockers of its failed drain (rules D1–D3, from the
/// message and `evidence`) listed first in their `related`, before its pool and
/// MachineConfig. Only the D.7 (degraded) insight of a node whose drain fails changes.
pub fn with_drain_blockers<'a>(
    assessment: &'a NodeAssessment,
    evidence: &'a DrainEvidence,
) -> impl Iterator<Item = UpdateInsightStatus> + 'a {
    let blockers = assessment
        .drain
        .as_ref()
        .map(|f| crate::related::drain_blockers(&assessment.name, f, evidence))
        .unwrap_or_default();
    assessment.health.iter().map(move |h| {
        let mut h = h.clone();
        let degraded = h
            .health
            .as_ref()
            .is_some_and(|x| x.source == SOURCE_NODE_DEGRADED);
        if degraded && !blockers.is_empty() {
            let rest = h
                .health
                .as_ref()
                .map(|x| x.related.clone())
                .unwrap_or_default();
            crate::insight::set_related(&mut h, blockers.iter().cloned().chain(rest));
        }
        h
    })
}

/// When time alone will change this node's assessment (a not-yet-serious `Not ready` older than
/// 5 min, or disk pressure / unavailable network older than 1 min, makes a D.6 insight appear):
/// the delay from `now`. `None` when time alone changes nothing.
pub fn node_requeue_after(
    ctx: &NodeContext,
    node: &Node,
    now: Timestamp,
) -> Option<SignedDuration> {
    let f = node_facts(ctx, node)?;
    if !f.availability.is_unavailable || f.is_updating {
        return None;
    }
    f.availability
        .serious_at(now)
        .map(|t| t.duration_since(now))
        .filter(|d| d.is_positive())
}
