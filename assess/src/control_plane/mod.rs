//! Control-plane assessment (algorithms.md sections B and D.1–D.5, contract in
//! `docs/assessment-contract.md`).
//!
//! Pure: `(inputs, now) -> desired objects`. Durations are carried as `i128` nanoseconds and
//! follow Go's `time.Duration` semantics where the output depends on them (rounding halves away
//! from zero, float→int truncation toward zero, subtraction saturating to the `i64` range).
//!
//! Decisions where the specification is silent (documented here so the renderer and the
//! reconciler can rely on them):
//! - A missing timestamp is "unknown", never "now": a ClusterOperator condition without
//!   `lastTransitionTime` counts as old (it crosses every threshold, as Go's zero time does) and
//!   its insight has no `startedAt`; a history entry without `startedTime` gives no timing
//!   (duration and estimate as with an empty history).
//! - An empty version string in the history reads as `unknown`.
//! - `Updating` with a `Progressing` condition of status `Unknown` (or anything else than
//!   `True`/`False`) gets reason `ClusterVersionProgressingUnknown`.
//! - `Healthy=False` carries as transition time the earliest instant one of the current
//!   Error/Critical insights reached that level (e.g. operator unavailable since LTT + 20 min);
//!   `Healthy=True` has none (unknown).
//! - D.1's `startedAt` is `now` as specified; the reconciler keeps the stored value of an
//!   existing insight (the insight name does not depend on it).

use jiff::{SignedDuration, Timestamp};
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, ControlPlaneUpdateStatusStatus, ControlPlaneVersions,
    InsightType, ProgressInsight, UpdateInsightStatus, VersionPair, limits,
};
use update_status_api::input::{ClusterVersion, Condition as InputCondition, first_condition};

use crate::format::{MINUTE, cut_noting, ellipsize};
use crate::inputs::{ClusterInputs, McoImage};
use crate::nodes::PoolAssessment;

mod constants;
mod estimate;
mod health;
mod nanos;
mod operators;
mod versions;
use constants::{CO_DEGRADED_ERROR, CO_INSIGHT_THRESHOLD, CO_UNAVAILABLE_ERROR};
pub use constants::{
    CONDITION_HEALTHY, CONDITION_UPDATING, CONFIG_GROUP, MACHINE_CONFIG, OPERATOR_IMAGE,
    REASON_NO_PROGRESSING, REFERENCE_CO_DEGRADED, REFERENCE_CO_DOWN, REFERENCE_HISTORY,
    REFERENCE_MCO, SOURCE_CO_DEGRADED, SOURCE_CO_UNAVAILABLE, SOURCE_CV_FAILING,
    SOURCE_CV_NO_FAILING, SOURCE_MCO_DEPLOYMENT_ABSENT, SOURCE_PREVIOUS_PARTIAL,
};
pub use estimate::*;
use health::*;
use nanos::{go_seconds, ns, signed, ts};
pub use operators::*;
pub use versions::*;

/// Assessment of the control plane.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControlPlaneAssessment {
    /// ControlPlaneUpdateStatus content.
    pub status: ControlPlaneUpdateStatusStatus,
    /// ClusterVersion and ClusterOperator progress insights, then control-plane health insights.
    pub insights: Vec<UpdateInsightStatus>,
}

// ---------------------------------------------------------------------------------------------
// The assessment
// ---------------------------------------------------------------------------------------------

/// What the whole assessment derives from the inputs, shared by [`assess_control_plane`] and
/// [`requeue_after`].
struct Facts<'a> {
    cv: &'a ClusterVersion,
    cv_name: String,
    operators: Vec<OperatorFacts<'a>>,
    summary: OperatorSummary,
    model: EstimateModel,
    progressing: Option<&'a InputCondition>,
}

fn gather<'a>(inputs: &ClusterInputs<'a>) -> Option<Facts<'a>> {
    let cv = inputs.cluster_version?;
    let cv_name = cv
        .metadata
        .name
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "version".to_string());
    let desired = cv.status.desired.version.as_str();
    let mco_image = inputs.mco_image.image();
    let operators: Vec<_> = inputs
        .cluster_operators
        .iter()
        .filter(|co| co.is_platform_operator())
        .map(|co| classify(co, desired, mco_image))
        .collect();
    let summary = summarize(&operators);
    let counts = &summary.counts;
    let completed = counts.updated == counts.total;
    let x = if counts.total == 0 {
        1.0
    } else {
        f64::from(counts.updated) / f64::from(counts.total)
    };
    let history = &cv.status.history;
    let current = history.first();
    let mut last_observed_progress = summary.last_observed_progress;
    if counts.total - counts.updated == 1 && summary.mco_started_updating.is_some() {
        last_observed_progress = summary.mco_started_updating;
    }
    let model = EstimateModel {
        started: current.and_then(|h| h.started_time).map(ns),
        completion: current
            .filter(|h| h.is_completed())
            .and_then(|h| h.completion_time)
            .map(ns),
        last_observed_progress,
        baseline: baseline_ns(history),
        x,
        completed,
    };
    Some(Facts {
        cv,
        cv_name,
        operators,
        summary,
        model,
        progressing: first_condition(&cv.status.conditions, "Progressing"),
    })
}

/// Assesses the control plane; `None` without a ClusterVersion.
///
/// `master_pool` gives the control-plane node counts (zero without it).
pub fn assess_control_plane(
    inputs: &ClusterInputs<'_>,
    master_pool: Option<&PoolAssessment>,
    now: Timestamp,
) -> Option<ControlPlaneAssessment> {
    let facts = gather(inputs)?;
    let now_ns = ns(now);
    let cv = facts.cv;
    let history = &cv.status.history;
    let counts = facts.summary.counts.clone();
    let completed = facts.model.completed;

    let versions = versions_from_history(history);
    let started_at = match history.first() {
        Some(h) => h.started_time,
        None => facts.progressing.and_then(|p| p.last_transition_time),
    };
    let completed_at = history
        .first()
        .filter(|h| h.is_completed())
        .and_then(|h| h.completion_time);

    let est = facts.model.estimate_at(now_ns);
    let assessment = if facts.progressing.is_none() {
        Assessment::Unknown
    } else {
        facts.model.assessment_at(now_ns)
    };
    let estimated_completed_at = if completed { None } else { ts(now_ns + est) };
    let completion_percent = if counts.total == 0 {
        100
    } else {
        (f64::from(counts.updated) / f64::from(counts.total) * 100.0).round_ties_even() as u32
    };

    let drafts = health_drafts(inputs, &facts, &versions, now);
    let health: Vec<_> = drafts.into_iter().filter_map(HealthDraft::build).collect();

    let updating = updating_condition(facts.progressing);
    let healthy = healthy_condition(&health);
    let health: Vec<UpdateInsightStatus> = health.into_iter().map(|(i, _)| i).collect();

    let status = ControlPlaneUpdateStatusStatus {
        assessment,
        versions,
        completion_percent,
        started_at,
        completed_at,
        estimated_completed_at,
        operators: counts,
        nodes: master_pool
            .map(|p| p.status.nodes.clone())
            .unwrap_or_default(),
        health_insights: crate::insight::tally(&health),
        conditions: vec![updating.clone(), healthy],
    };

    let mut insights = Vec::with_capacity(1 + facts.operators.len() + health.len());
    insights.push(cluster_version_progress_insight(
        &facts.cv_name,
        &status,
        updating,
    ));
    let desired = ellipsize(&cv.status.desired.version, limits::VERSION);
    for op in facts.operators.iter().filter(|o| !o.co.name().is_empty()) {
        insights.push(operator_progress_insight(op, &desired));
    }
    insights.extend(health);
    Some(ControlPlaneAssessment { status, insights })
}

/// The control plane's health insight drafts: D.1/D.2, then per operator D.3, D.4, then D.5.
fn health_drafts(
    inputs: &ClusterInputs<'_>,
    facts: &Facts<'_>,
    versions: &ControlPlaneVersions,
    now: Timestamp,
) -> Vec<HealthDraft> {
    let now_ns = ns(now);
    let cv = facts.cv;
    let history = &cv.status.history;
    let completed = facts.model.completed;
    let mut drafts: Vec<HealthDraft> = cluster_version_insight(cv, &facts.cv_name, now)
        .into_iter()
        .collect();
    for op in facts.operators.iter().filter(|o| !o.co.name().is_empty()) {
        drafts.extend(operator_insights(op.co, now_ns));
    }
    if !completed && versions.previous_partial {
        drafts.push(previous_partial_insight(
            versions,
            &facts.cv_name,
            history.first().and_then(|h| h.started_time),
        ));
    }
    if let McoImage::Absent(why) = inputs.mco_image
        && facts
            .operators
            .iter()
            .any(|o| o.co.name() == MACHINE_CONFIG && o.co.version(OPERATOR_IMAGE).is_some())
    {
        drafts.push(mco_deployment_absent_insight(why, now));
    }
    drafts
}

/// The ClusterVersion's progress insight, from the control plane's `status` and its
/// `Updating` condition.
fn cluster_version_progress_insight(
    cv_name: &str,
    status: &ControlPlaneUpdateStatusStatus,
    updating: Condition,
) -> UpdateInsightStatus {
    let versions = &status.versions;
    UpdateInsightStatus {
        type_: InsightType::Progress,
        resource: config_ref("ClusterVersion", cv_name),
        scope: control_plane_scope(),
        progress: Some(ProgressInsight {
            assessment: status.assessment,
            phase: None,
            version: Some(VersionPair {
                current: versions.previous.clone(),
                target: versions.target.clone(),
            }),
            estimate: String::new(),
            estimate_seconds: None,
            estimated_completed_at: status.estimated_completed_at,
            message: cut_noting(&target_version_display(versions), limits::PROGRESS_MESSAGE),
            since: status.started_at,
            timeline: None,
            conditions: vec![updating],
        }),
        health: None,
    }
}

fn operator_progress_insight(op: &OperatorFacts<'_>, desired: &str) -> UpdateInsightStatus {
    let co = op.co;
    let mut updating = match op.progressing {
        Some(p) => copy_condition(CONDITION_UPDATING, p),
        None => Condition {
            type_: CONDITION_UPDATING.to_string(),
            ..Default::default()
        },
    };
    updating.status = match op.assessment {
        Assessment::Updating => ConditionStatus::True,
        Assessment::Unknown => ConditionStatus::Unknown,
        _ => ConditionStatus::False,
    };
    let mut conditions = vec![updating];
    for type_ in ["Available", "Degraded"] {
        if let Some(c) = co.condition(type_) {
            conditions.push(copy_condition(type_, c));
        }
    }
    UpdateInsightStatus {
        type_: InsightType::Progress,
        resource: config_ref("ClusterOperator", co.name()),
        scope: control_plane_scope(),
        progress: Some(ProgressInsight {
            assessment: op.assessment,
            phase: None,
            version: Some(VersionPair {
                current: ellipsize(co.version("operator").unwrap_or_default(), limits::VERSION),
                target: desired.to_string(),
            }),
            estimate: String::new(),
            estimate_seconds: None,
            estimated_completed_at: None,
            message: String::new(),
            since: op.progressing.and_then(|p| p.last_transition_time),
            timeline: None,
            conditions,
        }),
        health: None,
    }
}

/// When time alone will next change the control plane's answer: the next crossing of a D.3/D.4
/// threshold (LTT + 5/20/40 min, strictly after) or of the estimate across 0 / −10 min (the
/// assessment turning `Progressing - Slow` / `Stalled`, also when the estimate switches from
/// the baseline to the curve as the time to the last observed progress passes 5 min).
///
/// Returns the delay from `now` (at least 1 ns), or `None` when nothing is scheduled to change
/// (no ClusterVersion, completed control plane and no pending threshold). The estimate itself
/// drifts every second; [`estimate_moved`] decides when that is worth a write. D.1's
/// `startedAt = now` is deliberately ignored (the reconciler keeps the stored value).
pub fn requeue_after(inputs: &ClusterInputs<'_>, now: Timestamp) -> Option<SignedDuration> {
    let facts = gather(inputs)?;
    let now_ns = ns(now);
    let mut next: Option<i128> = None;
    let mut consider = |t: i128| {
        if t > now_ns {
            next = Some(next.map_or(t, |n| n.min(t)));
        }
    };
    for op in &facts.operators {
        if let Some(ltt) = op
            .co
            .condition("Available")
            .filter(|a| a.is_false())
            .and_then(|a| a.last_transition_time)
        {
            consider(ns(ltt) + CO_INSIGHT_THRESHOLD + 1);
            consider(ns(ltt) + CO_UNAVAILABLE_ERROR + 1);
        }
        if let Some(ltt) = op
            .co
            .condition("Degraded")
            .filter(|d| d.is_true())
            .and_then(|d| d.last_transition_time)
        {
            consider(ns(ltt) + CO_INSIGHT_THRESHOLD + 1);
            consider(ns(ltt) + CO_DEGRADED_ERROR + 1);
        }
    }
    if facts.progressing.is_some()
        && let Some(t) = facts.model.next_assessment_change(now_ns)
    {
        consider(t);
    }
    next.and_then(|t| signed(t - now_ns))
}

/// B.7's estimated time to completion at `now`, in seconds (negative when late; 0 when the
/// control plane is completed); `None` without a ClusterVersion or without a start in its
/// history. The estimates that learn (`crate::estimates`) fall back to it and compare with it.
pub fn oc_estimate_seconds(inputs: &ClusterInputs<'_>, now: Timestamp) -> Option<f64> {
    let facts = gather(inputs)?;
    facts.model.started?;
    Some(go_seconds(facts.model.estimate_at(ns(now))))
}

/// Whether a recomputed `estimatedCompletedAt` (`new`) differs enough from the stored one
/// (`old`) to be worth a write.
///
/// The estimate is recomputed from `now` and drifts a little on every evaluation (by up to
/// 0.2 s per second while the update runs ahead of the curve), so writing every change would be
/// a heartbeat. Rule: a change of presence (set ↔ unset) always counts; otherwise the two
/// instants must differ by more than `max(1 min, 10 % of |new − now|)` — a far estimate
/// tolerates more drift than a near one, and the renderer's precision (minutes above 10 min,
/// `<10m` below) hides smaller moves.
pub fn estimate_moved(old: Option<Timestamp>, new: Option<Timestamp>, now: Timestamp) -> bool {
    match (old, new) {
        (None, None) => false,
        (Some(_), None) | (None, Some(_)) => true,
        (Some(old), Some(new)) => {
            let diff = (ns(old) - ns(new)).abs();
            let tolerance = MINUTE.max((ns(new) - ns(now)).abs() / 10);
            diff > tolerance
        }
    }
}

#[cfg(test)]
mod tests;
