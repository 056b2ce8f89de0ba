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
    HealthCounts, HealthInsight, Impact, ImpactLevel, ImpactType, InsightScope, InsightType,
    OperatorCounts, ProgressInsight, Remediation, ResourceRef, ScopeType, UpdateInsightStatus,
    VersionPair,
};
use update_status_api::input::{
    ClusterOperator, ClusterVersion, Condition as InputCondition, UpdateHistory, first_condition,
};

use super::ClusterInputs;
use super::nodes::PoolAssessment;

/// One second in nanoseconds.
const SECOND: i128 = 1_000_000_000;
/// One minute in nanoseconds.
const MINUTE: i128 = 60 * SECOND;
/// One hour in nanoseconds.
const HOUR: i128 = 60 * MINUTE;

/// API group of ClusterVersion and ClusterOperator.
pub const CONFIG_GROUP: &str = "config.openshift.io";

/// Runbook of D.1, D.2 and D.4.
pub const REFERENCE_CO_DEGRADED: &str = "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDegraded.md";
/// Runbook of D.3.
pub const REFERENCE_CO_DOWN: &str = "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDown.md";
/// Documentation of D.5.
pub const REFERENCE_HISTORY: &str = "https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/gathering-data-cluster-update.html#gathering-clusterversion-history-cli_troubleshooting_updates";

/// `source` of D.1.
pub const SOURCE_CV_NO_FAILING: &str = "ClusterVersionNoFailing";
/// `source` of D.2.
pub const SOURCE_CV_FAILING: &str = "ClusterVersionFailing";
/// `source` of D.3.
pub const SOURCE_CO_UNAVAILABLE: &str = "ClusterOperatorUnavailable";
/// `source` of D.4.
pub const SOURCE_CO_DEGRADED: &str = "ClusterOperatorDegraded";
/// `source` of D.5.
pub const SOURCE_PREVIOUS_PARTIAL: &str = "PreviousUpdatePartial";

/// Condition type `Updating`.
pub const CONDITION_UPDATING: &str = "Updating";
/// Condition type `Healthy`.
pub const CONDITION_HEALTHY: &str = "Healthy";
/// Reason of `Updating` when the ClusterVersion has no `Progressing` condition.
pub const REASON_NO_PROGRESSING: &str = "NoProgressingCondition";

/// D.3/D.4: an operator condition gives an insight once it is older than this (strictly).
const CO_INSIGHT_THRESHOLD: i128 = 5 * MINUTE;
/// D.3: an unavailable operator is an Error once older than this (strictly).
const CO_UNAVAILABLE_ERROR: i128 = 20 * MINUTE;
/// D.4: a degraded operator is an Error once older than this (strictly).
const CO_DEGRADED_ERROR: i128 = 40 * MINUTE;

/// Schema limits (characters).
const MAX_SUMMARY: usize = 256;
const MAX_DESCRIPTION: usize = 4096;
const MAX_CONDITION_MESSAGE: usize = 32768;
const MAX_CONDITION_REASON: usize = 1024;
const MAX_PROGRESS_MESSAGE: usize = 4096;
const MAX_VERSION: usize = 128;
const MAX_UPDATING_NAMES: usize = 256;

/// How far `requeue_after` looks ahead for a change of the estimate's assessment.
const REQUEUE_HORIZON: i128 = 30 * 24 * HOUR;

/// Assessment of the control plane.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControlPlaneAssessment {
    /// ControlPlaneUpdateStatus content.
    pub status: ControlPlaneUpdateStatusStatus,
    /// ClusterVersion and ClusterOperator progress insights, then control-plane health insights.
    pub insights: Vec<UpdateInsightStatus>,
}

// ---------------------------------------------------------------------------------------------
// Go duration primitives (nanoseconds)
// ---------------------------------------------------------------------------------------------

/// Go's `Duration.Round(m)`: nearest multiple of `m`, halves away from zero.
fn go_round(ns: i128, m: i128) -> i128 {
    if m <= 0 {
        return ns;
    }
    let r = ns % m;
    if ns < 0 {
        let r = -r;
        if r * 2 < m { ns + r } else { ns - (m - r) }
    } else if r * 2 < m {
        ns - r
    } else {
        ns + (m - r)
    }
}

/// Go's `Duration.Truncate(m)`: toward zero.
fn go_truncate(ns: i128, m: i128) -> i128 {
    if m <= 0 { ns } else { ns - ns % m }
}

/// Go's `Duration.Seconds()`.
fn go_seconds(ns: i128) -> f64 {
    let sec = ns / SECOND;
    let nsec = ns % SECOND;
    sec as f64 + nsec as f64 / 1e9
}

/// Go's `t.Sub(u)`: nanoseconds, saturated to the `i64` range.
fn sub(t: i128, u: i128) -> i128 {
    (t - u).clamp(i128::from(i64::MIN), i128::from(i64::MAX))
}

fn ns(t: Timestamp) -> i128 {
    t.as_nanosecond()
}

fn ts(ns: i128) -> Option<Timestamp> {
    Timestamp::from_nanosecond(ns).ok()
}

fn signed(ns: i128) -> Option<SignedDuration> {
    SignedDuration::try_from_nanos_i128(ns)
}

/// Like [`signed`], saturating instead of failing (inputs here are already bounded).
fn saturating_signed(ns: i128) -> SignedDuration {
    signed(ns).unwrap_or(if ns < 0 {
        SignedDuration::MIN
    } else {
        SignedDuration::MAX
    })
}

// ---------------------------------------------------------------------------------------------
// B.5–B.7: baseline, timewise curve, estimate
// ---------------------------------------------------------------------------------------------

/// B.6: fraction of the update's time elapsed when a fraction `x` of the operators is updated.
pub fn timewise_complete(x: f64) -> f64 {
    let x2 = x * x;
    let x3 = x * x2;
    let x4 = x2 * x2;
    if x < 0.25 {
        -0.03078788 + 2.62886 * x - 3.823954 * x2
    } else if x < 0.9 {
        0.1851215 + 1.64994 * x - 4.676898 * x2 + 5.451824 * x3 - 2.125286 * x4
    } else {
        25053.32 - 107394.3 * x + 172527.2 * x2 - 123107.0 * x3 + 32921.81 * x4
    }
}

/// B.5: duration of the last completed update between the current one and the installation;
/// 1 h when there is none (or its times are unknown).
pub fn baseline_duration(history: &[UpdateHistory]) -> SignedDuration {
    saturating_signed(baseline_ns(history))
}

fn baseline_ns(history: &[UpdateHistory]) -> i128 {
    if history.len() < 3 {
        return HOUR;
    }
    let middle = &history[1..history.len() - 1];
    match middle.iter().find(|h| h.is_completed()) {
        Some(h) => match (h.started_time, h.completion_time) {
            (Some(s), Some(c)) => sub(ns(c), ns(s)),
            _ => HOUR,
        },
        None => HOUR,
    }
}

/// B.7: estimated time to completion (nanoseconds) from the baseline, the time from the start
/// to the last observed operator progress, the time updating so far, and the fraction `x` of
/// updated operators. Whole seconds; rounded to the minute when above 10 minutes.
fn estimate_ns(
    baseline: i128,
    to_last_observed_progress: i128,
    updating_for: i128,
    x: f64,
) -> i128 {
    if x >= 1.0 {
        return 0;
    }
    let c = timewise_complete(x);
    let total = if x > 0.0 && c > 0.0 && to_last_observed_progress > 5 * MINUTE {
        go_seconds(to_last_observed_progress) / c
    } else {
        go_seconds(baseline)
    };
    let remaining = total - go_seconds(updating_for);
    let factor = if remaining < 0.0 { 1.0 / 1.2 } else { 1.2 };
    // Go: time.Duration(remaining*factor) * time.Second (float → int64 truncates toward zero).
    let secs = (remaining * factor) as i64;
    let est = i128::from(secs) * SECOND;
    if est > 10 * MINUTE {
        go_round(est, MINUTE)
    } else {
        go_round(est, SECOND)
    }
}

/// B.7 with `SignedDuration`s (public for tests and tools).
pub fn estimate_completion(
    baseline: SignedDuration,
    to_last_observed_progress: SignedDuration,
    updating_for: SignedDuration,
    x: f64,
) -> SignedDuration {
    saturating_signed(estimate_ns(
        baseline.as_nanos(),
        to_last_observed_progress.as_nanos(),
        updating_for.as_nanos(),
        x,
    ))
}

/// B.4 step 6: the update duration as shown, from the time updating (Go-rounded to 1 min above
/// 10 min, else to 1 s).
pub fn rounded_update_duration(updating_for: SignedDuration) -> SignedDuration {
    saturating_signed(round_update_duration(updating_for.as_nanos()))
}

fn round_update_duration(updating_for: i128) -> i128 {
    if updating_for > 10 * MINUTE {
        go_round(updating_for, MINUTE)
    } else {
        go_round(updating_for, SECOND)
    }
}

/// B.4: the control plane's update duration as `oc` shows it: from `startedAt` to `completedAt`
/// (or `now` while not completed), rounded. `None` when the start is unknown.
pub fn update_duration(
    status: &ControlPlaneUpdateStatusStatus,
    now: Timestamp,
) -> Option<SignedDuration> {
    let started = status.started_at?;
    let end = status.completed_at.unwrap_or(now);
    signed(round_update_duration(sub(ns(end), ns(started))))
}

/// `EstTimeToComplete` of the renderer: `estimatedCompletedAt − now` (`None` when unset).
pub fn estimated_time_to_complete(
    status: &ControlPlaneUpdateStatusStatus,
    now: Timestamp,
) -> Option<SignedDuration> {
    signed(sub(ns(status.estimated_completed_at?), ns(now)))
}

/// `EstDuration` of the renderer (B.7 step 7): `estimatedCompletedAt − startedAt` truncated to
/// whole minutes (`None` when either is unset).
pub fn estimated_duration(status: &ControlPlaneUpdateStatusStatus) -> Option<SignedDuration> {
    let total = sub(ns(status.estimated_completed_at?), ns(status.started_at?));
    signed(go_truncate(total, MINUTE))
}

/// Assessment of a not-completed control plane from its estimate (B.3).
fn assessment_from_estimate(est: i128) -> Assessment {
    if est < -10 * MINUTE {
        Assessment::Stalled
    } else if est < 0 {
        Assessment::ProgressingSlow
    } else {
        Assessment::Progressing
    }
}

/// Everything B.4–B.7 need, so the estimate can be evaluated at any instant.
#[derive(Clone, Copy, Debug)]
struct EstimateModel {
    /// `history[0].startedTime` (None: no timing).
    started: Option<i128>,
    /// `history[0].completionTime` when `history[0]` is Completed.
    completion: Option<i128>,
    /// mcoStartedUpdating or the latest Progressing LTT (B.2, B.4 step 2), before step 3.
    last_observed_progress: Option<i128>,
    baseline: i128,
    x: f64,
    completed: bool,
}

impl EstimateModel {
    /// `(updating_for, to_last_observed_progress)` at `now` (B.4).
    fn timing_at(&self, now: i128) -> (i128, i128) {
        let Some(started) = self.started else {
            return (0, 0);
        };
        let last = self
            .last_observed_progress
            .filter(|&l| l > started)
            .unwrap_or(now);
        let to_last = sub(last, started);
        let end = self.completion.unwrap_or(now);
        (sub(end, started), to_last)
    }

    /// Estimated time to completion at `now` (0 when completed).
    fn estimate_at(&self, now: i128) -> i128 {
        if self.completed {
            return 0;
        }
        let (updating_for, to_last) = self.timing_at(now);
        estimate_ns(self.baseline, to_last, updating_for, self.x)
    }

    fn assessment_at(&self, now: i128) -> Assessment {
        if self.completed {
            Assessment::Completed
        } else {
            assessment_from_estimate(self.estimate_at(now))
        }
    }

    /// First instant after `now` at which the assessment differs from the one at `now`, within
    /// the horizon. The estimate is monotone on each segment between the structural breakpoint
    /// (to-last-observed-progress crossing 5 min while it tracks `now`), so the first change
    /// inside a segment is found by bisection.
    fn next_assessment_change(&self, now: i128) -> Option<i128> {
        let started = self.started?;
        if self.completed {
            return None;
        }
        let horizon = now + REQUEUE_HORIZON;
        let tracks_now = self.last_observed_progress.is_none_or(|l| l <= started);
        let mut segments = Vec::with_capacity(2);
        let breakpoint = started + 5 * MINUTE;
        if tracks_now && breakpoint >= now && breakpoint < horizon {
            segments.push((now, breakpoint));
            segments.push((breakpoint + 1, horizon));
        } else {
            segments.push((now, horizon));
        }
        let current = self.assessment_at(now);
        for (start, end) in segments {
            if start > now && self.assessment_at(start) != current {
                return Some(start);
            }
            if self.assessment_at(end) == self.assessment_at(start) {
                continue;
            }
            // Invariant: assessment(lo) == assessment(start), assessment(hi) differs.
            let base = self.assessment_at(start);
            let (mut lo, mut hi) = (start, end);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if self.assessment_at(mid) == base {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return Some(hi);
        }
        None
    }
}

// ---------------------------------------------------------------------------------------------
// B.2: operators
// ---------------------------------------------------------------------------------------------

/// How one platform operator stands (B.2).
#[derive(Clone, Debug)]
struct OperatorFacts<'a> {
    co: &'a ClusterOperator,
    updated: bool,
    progressing: Option<&'a InputCondition>,
    assessment: Assessment,
}

/// B.2 "updated": some `operator` version equals the desired version; for `machine-config` also
/// every `operator-image` equals the MCO image (multi-arch migrations keep the version).
fn is_updated(co: &ClusterOperator, desired: &str, mco_image: &str) -> bool {
    let versions = &co.status.versions;
    if co.name() == "machine-config"
        && versions
            .iter()
            .any(|v| v.name == "operator-image" && v.version != mco_image)
    {
        return false;
    }
    versions
        .iter()
        .any(|v| v.name == "operator" && v.version == desired)
}

fn classify<'a>(co: &'a ClusterOperator, desired: &str, mco_image: &str) -> OperatorFacts<'a> {
    let updated = is_updated(co, desired, mco_image);
    let progressing = co.condition("Progressing");
    let assessment = if updated {
        Assessment::Updated
    } else {
        match progressing {
            Some(p) if p.is_true() => Assessment::Updating,
            Some(p) if p.is_false() => Assessment::Waiting,
            _ => Assessment::Unknown,
        }
    };
    OperatorFacts {
        co,
        updated,
        progressing,
        assessment,
    }
}

/// B.2 counts and the progress signals.
#[derive(Clone, Debug, Default)]
struct OperatorSummary {
    counts: OperatorCounts,
    last_observed_progress: Option<i128>,
    mco_started_updating: Option<i128>,
}

fn summarize(operators: &[OperatorFacts<'_>]) -> OperatorSummary {
    let mut s = OperatorSummary::default();
    let c = &mut s.counts;
    for op in operators {
        c.total += 1;
        if op.updated {
            c.updated += 1;
        }
        if let Some(p) = op.progressing {
            if let Some(ltt) = p.last_transition_time.map(ns) {
                s.last_observed_progress =
                    Some(s.last_observed_progress.map_or(ltt, |l| l.max(ltt)));
            }
            if !op.updated && p.is_true() {
                c.updating += 1;
                if c.updating_names.len() < MAX_UPDATING_NAMES {
                    c.updating_names.push(op.co.name().to_string());
                }
                if op.co.name() == "machine-config"
                    && let Some(ltt) = p.last_transition_time
                {
                    s.mco_started_updating = Some(ns(ltt));
                }
            } else if !op.updated && p.is_false() {
                c.waiting += 1;
            }
        }
        let available = op.co.condition("Available").is_some_and(|a| a.is_true());
        if !available {
            c.unavailable += 1;
        } else if op.co.condition("Degraded").is_some_and(|d| d.is_true()) {
            c.degraded += 1;
        }
    }
    c.healthy = c.total - c.unavailable - c.degraded;
    s
}

/// The "Operator Health" line of `oc adm upgrade status` (B.2 `StatusSummary`).
pub fn operator_health_display(counts: &OperatorCounts) -> String {
    let mut out = format!("{} Healthy", counts.healthy);
    if counts.unavailable > 0 {
        out.push_str(&format!(", {} Unavailable", counts.unavailable));
    }
    if counts.degraded > 0 {
        out.push_str(&format!(", {} Available but degraded", counts.degraded));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// B.8: versions
// ---------------------------------------------------------------------------------------------

fn version_or_unknown(v: &str) -> String {
    if v.is_empty() {
        "unknown".to_string()
    } else {
        ellipsize(v, MAX_VERSION)
    }
}

/// B.8 `versionsFromHistory`, plus `lastCompleted` (D.5).
pub fn versions_from_history(history: &[UpdateHistory]) -> ControlPlaneVersions {
    let target = history
        .first()
        .map_or_else(|| "unknown".to_string(), |h| version_or_unknown(&h.version));
    match history {
        [] => ControlPlaneVersions {
            target,
            previous: "unknown".to_string(),
            ..Default::default()
        },
        [_] => ControlPlaneVersions {
            target,
            installation: true,
            ..Default::default()
        },
        [current, previous, older @ ..] => {
            let previous_partial = previous.is_partial();
            let last_completed = if previous_partial {
                older
                    .iter()
                    .find(|h| h.is_completed())
                    .map_or_else(|| "unknown".to_string(), |h| version_or_unknown(&h.version))
            } else {
                String::new()
            };
            ControlPlaneVersions {
                target,
                previous: version_or_unknown(&previous.version),
                previous_partial,
                last_completed,
                installation: false,
                multi_arch_migration: current.version == previous.version
                    && current.image != previous.image,
            }
        }
    }
}

/// The "Target Version" text of B.8: `<target> (a new install)`, `<target> (from incomplete
/// <previous>)`, `<target> to Multi-Architecture` or `<target> (from <previous>)`.
pub fn target_version_display(v: &ControlPlaneVersions) -> String {
    if v.installation {
        format!("{} (a new install)", v.target)
    } else if v.previous_partial {
        format!("{} (from incomplete {})", v.target, v.previous)
    } else if v.multi_arch_migration {
        format!("{} to Multi-Architecture", v.target)
    } else {
        format!("{} (from {})", v.target, v.previous)
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers for objects
// ---------------------------------------------------------------------------------------------

/// Cuts `s` to at most `max` characters, ending in `...` when cut.
fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let keep = max.saturating_sub(3);
    let mut out: String = s.chars().take(keep).collect();
    out.push_str("...");
    out
}

fn status_of(raw: &str) -> ConditionStatus {
    match raw {
        "True" => ConditionStatus::True,
        "False" => ConditionStatus::False,
        _ => ConditionStatus::Unknown,
    }
}

fn copy_condition(type_: &str, c: &InputCondition) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: status_of(&c.status),
        reason: ellipsize(&c.reason, MAX_CONDITION_REASON),
        message: ellipsize(&c.message, MAX_CONDITION_MESSAGE),
        last_transition_time: c.last_transition_time,
    }
}

fn config_ref(kind: &str, name: &str) -> ResourceRef {
    ResourceRef {
        group: CONFIG_GROUP.to_string(),
        kind: kind.to_string(),
        name: name.to_string(),
        namespace: None,
    }
}

fn control_plane_scope() -> InsightScope {
    InsightScope {
        type_: ScopeType::ControlPlane,
        pool: None,
    }
}

/// What a health rule produced, before the completeness filter.
struct HealthDraft {
    resource: ResourceRef,
    started_at: Option<Timestamp>,
    level: ImpactLevel,
    type_: ImpactType,
    summary: String,
    description: String,
    reference: &'static str,
    source: &'static str,
    /// When the insight reached its level (for the `Healthy` condition), when known.
    level_since: Option<i128>,
}

impl HealthDraft {
    /// D.0: no insight without summary, description or reference; long texts are cut.
    fn build(self) -> Option<(UpdateInsightStatus, Option<i128>)> {
        if self.summary.is_empty() || self.description.is_empty() || self.reference.is_empty() {
            return None;
        }
        Some((
            UpdateInsightStatus {
                type_: InsightType::Health,
                resource: self.resource,
                scope: control_plane_scope(),
                progress: None,
                health: Some(HealthInsight {
                    started_at: self.started_at,
                    impact: Impact {
                        level: self.level,
                        type_: self.type_,
                        summary: ellipsize(&self.summary, MAX_SUMMARY),
                        description: ellipsize(&self.description, MAX_DESCRIPTION),
                    },
                    remediation: Remediation {
                        reference: self.reference.to_string(),
                    },
                    related: Vec::new(),
                    source: self.source.to_string(),
                }),
            },
            self.level_since,
        ))
    }
}

/// Age of a condition at `now` (Go: `now.Sub(LTT)`; a missing LTT is Go's zero time, i.e. very
/// old, so it crosses every threshold).
fn condition_age(c: &InputCondition, now: i128) -> i128 {
    c.last_transition_time
        .map_or(i128::from(i64::MAX), |t| sub(now, ns(t)))
}

/// D.1, D.2: the ClusterVersion's Failing condition.
fn cluster_version_insight(
    cv: &ClusterVersion,
    cv_name: &str,
    now: Timestamp,
) -> Option<HealthDraft> {
    let resource = config_ref("ClusterVersion", cv_name);
    match first_condition(&cv.status.conditions, "Failing") {
        None => Some(HealthDraft {
            resource,
            started_at: Some(now),
            level: ImpactLevel::Warning,
            type_: ImpactType::UpdateStalled,
            summary: format!("Cluster Version {cv_name} has no Failing condition"),
            description: "Current status of Cluster Version reconciliation is unclear.  See 'oc -n openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1' to debug.".to_string(),
            reference: REFERENCE_CO_DEGRADED,
            source: SOURCE_CV_NO_FAILING,
            level_since: None,
        }),
        Some(f) if f.is_false() => None,
        Some(f) => {
            let verb = if f.status == "Unknown" { "may be failing" } else { "is failing" };
            Some(HealthDraft {
                resource,
                started_at: f.last_transition_time,
                level: ImpactLevel::Warning,
                type_: ImpactType::UpdateStalled,
                summary: format!(
                    "Cluster Version {cv_name} {verb} to proceed with the update ({})",
                    f.reason
                ),
                description: f.message.clone(),
                reference: REFERENCE_CO_DEGRADED,
                source: SOURCE_CV_FAILING,
                level_since: None,
            })
        }
    }
}

/// D.3, D.4 for one platform operator.
fn operator_insights(co: &ClusterOperator, now: i128) -> Vec<HealthDraft> {
    let name = co.name();
    let mut out = Vec::new();
    let message_or_none = |m: &str| {
        if m.is_empty() {
            "<no message>".to_string()
        } else {
            m.to_string()
        }
    };
    if let Some(a) = co.condition("Available").filter(|a| a.is_false()) {
        let age = condition_age(a, now);
        if age > CO_INSIGHT_THRESHOLD {
            let error = age > CO_UNAVAILABLE_ERROR;
            out.push(HealthDraft {
                resource: config_ref("ClusterOperator", name),
                started_at: a.last_transition_time,
                level: if error {
                    ImpactLevel::Error
                } else {
                    ImpactLevel::Warning
                },
                type_: ImpactType::ApiAvailability,
                summary: format!("Cluster Operator {name} is unavailable ({})", a.reason),
                description: message_or_none(&a.message),
                reference: REFERENCE_CO_DOWN,
                source: SOURCE_CO_UNAVAILABLE,
                level_since: error
                    .then(|| {
                        a.last_transition_time
                            .map(|t| ns(t) + CO_UNAVAILABLE_ERROR + 1)
                    })
                    .flatten(),
            });
        }
    }
    if let Some(d) = co.condition("Degraded").filter(|d| d.is_true()) {
        let age = condition_age(d, now);
        if age > CO_INSIGHT_THRESHOLD {
            let error = age > CO_DEGRADED_ERROR;
            out.push(HealthDraft {
                resource: config_ref("ClusterOperator", name),
                started_at: d.last_transition_time,
                level: if error {
                    ImpactLevel::Error
                } else {
                    ImpactLevel::Warning
                },
                type_: ImpactType::ApiAvailability,
                summary: format!("Cluster Operator {name} is degraded ({})", d.reason),
                description: message_or_none(&d.message),
                reference: REFERENCE_CO_DEGRADED,
                source: SOURCE_CO_DEGRADED,
                level_since: error
                    .then(|| {
                        d.last_transition_time
                            .map(|t| ns(t) + CO_DEGRADED_ERROR + 1)
                    })
                    .flatten(),
            });
        }
    }
    out
}

/// D.5: the previous update never completed.
fn previous_partial_insight(
    versions: &ControlPlaneVersions,
    cv_name: &str,
    started: Option<Timestamp>,
) -> HealthDraft {
    HealthDraft {
        resource: config_ref("ClusterVersion", cv_name),
        started_at: started,
        level: ImpactLevel::Warning,
        type_: ImpactType::None,
        summary: format!(
            "Previous update to {} never completed, last complete update was {}",
            versions.previous, versions.last_completed
        ),
        description: format!(
            "Current update to {} was initiated while the previous update to version {} was still in progress",
            versions.target, versions.previous
        ),
        reference: REFERENCE_HISTORY,
        source: SOURCE_PREVIOUS_PARTIAL,
        level_since: None,
    }
}

fn count_levels(insights: &[UpdateInsightStatus]) -> HealthCounts {
    let mut c = HealthCounts::default();
    for h in insights.iter().filter_map(|i| i.health.as_ref()) {
        match h.impact.level {
            ImpactLevel::Critical => c.critical += 1,
            ImpactLevel::Error => c.error += 1,
            ImpactLevel::Warning => c.warning += 1,
            ImpactLevel::Info => c.info += 1,
            ImpactLevel::Unknown => c.unknown += 1,
        }
    }
    c
}

fn updating_condition(progressing: Option<&InputCondition>) -> Condition {
    match progressing {
        None => Condition {
            type_: CONDITION_UPDATING.to_string(),
            status: ConditionStatus::Unknown,
            reason: REASON_NO_PROGRESSING.to_string(),
            message: "ClusterVersion has no Progressing condition".to_string(),
            last_transition_time: None,
        },
        Some(p) => {
            let status = status_of(&p.status);
            let reason = match status {
                ConditionStatus::True => "ClusterVersionProgressing",
                ConditionStatus::False => "ClusterVersionNotProgressing",
                ConditionStatus::Unknown => "ClusterVersionProgressingUnknown",
            };
            Condition {
                type_: CONDITION_UPDATING.to_string(),
                status,
                reason: reason.to_string(),
                message: ellipsize(&p.message, MAX_CONDITION_MESSAGE),
                last_transition_time: p.last_transition_time,
            }
        }
    }
}

fn healthy_condition(insights: &[(UpdateInsightStatus, Option<i128>)]) -> Condition {
    let bad: Vec<_> = insights
        .iter()
        .filter(|(i, _)| {
            i.health
                .as_ref()
                .is_some_and(|h| h.impact.level >= ImpactLevel::Error)
        })
        .collect();
    if bad.is_empty() {
        return Condition {
            type_: CONDITION_HEALTHY.to_string(),
            status: ConditionStatus::True,
            reason: "AsExpected".to_string(),
            message: "No control-plane health insight at level Error or Critical".to_string(),
            last_transition_time: None,
        };
    }
    let since = if bad.iter().all(|(_, s)| s.is_some()) {
        bad.iter().filter_map(|(_, s)| *s).min().and_then(ts)
    } else {
        None
    };
    Condition {
        type_: CONDITION_HEALTHY.to_string(),
        status: ConditionStatus::False,
        reason: "ErrorHealthInsights".to_string(),
        message: format!(
            "{} control-plane health insight(s) at level Error or Critical",
            bad.len()
        ),
        last_transition_time: since,
    }
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
    let mco_image = inputs.mco_image.unwrap_or_default();
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

    // Health insights: D.1/D.2, then per operator D.3, D.4, then D.5.
    let mut drafts: Vec<HealthDraft> = cluster_version_insight(cv, &facts.cv_name, now)
        .into_iter()
        .collect();
    for op in facts.operators.iter().filter(|o| !o.co.name().is_empty()) {
        drafts.extend(operator_insights(op.co, now_ns));
    }
    if !completed && versions.previous_partial {
        drafts.push(previous_partial_insight(
            &versions,
            &facts.cv_name,
            history.first().and_then(|h| h.started_time),
        ));
    }
    let health: Vec<_> = drafts.into_iter().filter_map(HealthDraft::build).collect();

    let updating = updating_condition(facts.progressing);
    let healthy = healthy_condition(&health);
    let health: Vec<UpdateInsightStatus> = health.into_iter().map(|(i, _)| i).collect();

    let status = ControlPlaneUpdateStatusStatus {
        assessment,
        versions: versions.clone(),
        completion_percent,
        started_at,
        completed_at,
        estimated_completed_at,
        operators: counts,
        nodes: master_pool
            .map(|p| p.status.nodes.clone())
            .unwrap_or_default(),
        health_insights: count_levels(&health),
        conditions: vec![updating.clone(), healthy],
    };

    let mut insights = Vec::with_capacity(1 + facts.operators.len() + health.len());
    insights.push(UpdateInsightStatus {
        type_: InsightType::Progress,
        resource: config_ref("ClusterVersion", &facts.cv_name),
        scope: control_plane_scope(),
        progress: Some(ProgressInsight {
            assessment,
            phase: None,
            version: Some(VersionPair {
                current: versions.previous.clone(),
                target: versions.target.clone(),
            }),
            estimate: String::new(),
            message: ellipsize(&target_version_display(&versions), MAX_PROGRESS_MESSAGE),
            since: started_at,
            conditions: vec![updating],
        }),
        health: None,
    });
    let desired = ellipsize(&cv.status.desired.version, MAX_VERSION);
    for op in facts.operators.iter().filter(|o| !o.co.name().is_empty()) {
        insights.push(operator_progress_insight(op, &desired));
    }
    insights.extend(health);
    Some(ControlPlaneAssessment { status, insights })
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
                current: ellipsize(co.version("operator").unwrap_or_default(), MAX_VERSION),
                target: desired.to_string(),
            }),
            estimate: String::new(),
            message: String::new(),
            since: op.progressing.and_then(|p| p.last_transition_time),
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
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use update_status_api::crd::{NodeCounts, WorkerPoolUpdateStatusStatus};

    const NOW: &str = "2024-01-01T12:00:00Z";

    fn now() -> Timestamp {
        NOW.parse().expect("now")
    }

    /// `now − secs`.
    fn ago(secs: i64) -> Timestamp {
        now() - SignedDuration::from_secs(secs)
    }

    fn cond(type_: &str, status: &str, ltt: Option<Timestamp>) -> Value {
        let mut c = json!({"type": type_, "status": status, "reason": format!("{type_}Reason"), "message": format!("{type_} message")});
        if let Some(t) = ltt {
            c["lastTransitionTime"] = json!(t.to_string());
        }
        c
    }

    fn co(name: &str, version: &str, conditions: Vec<Value>) -> ClusterOperator {
        serde_json::from_value(json!({
            "metadata": {"name": name, "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"}},
            "status": {"versions": [{"name": "operator", "version": version}], "conditions": conditions}
        }))
        .expect("co")
    }

    /// A healthy platform operator at `version` with Progressing `progressing` since `ltt`.
    fn healthy_co(name: &str, version: &str, progressing: &str, ltt: Timestamp) -> ClusterOperator {
        co(
            name,
            version,
            vec![
                cond("Available", "True", Some(ltt)),
                cond("Degraded", "False", Some(ltt)),
                cond("Progressing", progressing, Some(ltt)),
            ],
        )
    }

    /// History entries `(state, version, started, completed)`, newest first.
    fn history(entries: &[(&str, &str, Option<Timestamp>, Option<Timestamp>)]) -> Vec<Value> {
        entries
            .iter()
            .enumerate()
            .map(|(i, (state, version, started, completed))| {
                let mut h =
                    json!({"state": state, "version": version, "image": format!("img-{i}")});
                if let Some(s) = started {
                    h["startedTime"] = json!(s.to_string());
                }
                if let Some(c) = completed {
                    h["completionTime"] = json!(c.to_string());
                }
                h
            })
            .collect()
    }

    fn cv(desired: &str, history: Vec<Value>, conditions: Vec<Value>) -> ClusterVersion {
        serde_json::from_value(json!({
            "metadata": {"name": "version"},
            "status": {"desired": {"version": desired}, "history": history, "conditions": conditions}
        }))
        .expect("cv")
    }

    /// An update to 4.2 from 4.1 started `started_secs` ago, Progressing=True, Failing=False.
    fn updating_cv(started_secs: i64) -> ClusterVersion {
        cv(
            "4.2",
            history(&[
                ("Partial", "4.2", Some(ago(started_secs)), None),
                ("Completed", "4.1", Some(ago(100_000)), Some(ago(90_000))),
            ]),
            vec![
                cond("Progressing", "True", Some(ago(started_secs))),
                cond("Failing", "False", Some(ago(started_secs))),
            ],
        )
    }

    fn assess_at(
        cv: &ClusterVersion,
        cos: &[ClusterOperator],
        at: Timestamp,
    ) -> ControlPlaneAssessment {
        let inputs = ClusterInputs {
            cluster_version: Some(cv),
            cluster_operators: cos,
            ..Default::default()
        };
        assess_control_plane(&inputs, None, at).expect("assessment")
    }

    fn assess(cv: &ClusterVersion, cos: &[ClusterOperator]) -> ControlPlaneAssessment {
        assess_at(cv, cos, now())
    }

    fn health(a: &ControlPlaneAssessment) -> Vec<&HealthInsight> {
        a.insights
            .iter()
            .filter_map(|i| i.health.as_ref())
            .collect()
    }

    fn summaries(a: &ControlPlaneAssessment) -> Vec<String> {
        health(a).iter().map(|h| h.impact.summary.clone()).collect()
    }

    fn progress_of<'a>(a: &'a ControlPlaneAssessment, name: &str) -> &'a ProgressInsight {
        a.insights
            .iter()
            .find(|i| i.type_ == InsightType::Progress && i.resource.name == name)
            .and_then(|i| i.progress.as_ref())
            .expect("progress insight")
    }

    fn condition<'a>(conds: &'a [Condition], type_: &str) -> &'a Condition {
        conds.iter().find(|c| c.type_ == type_).expect("condition")
    }

    fn d(mins: i128, secs: i128) -> i128 {
        mins * MINUTE + secs * SECOND
    }

    // ----- G.1–G.9, G.17, G.20: operator classification and counts -----

    #[test]
    fn g01_two_waiting_operators() {
        let cos = [
            healthy_co("a", "4.1", "False", ago(60)),
            healthy_co("b", "4.1", "False", ago(60)),
        ];
        let st = assess(&updating_cv(600), &cos).status;
        assert_eq!(
            (
                st.operators.total,
                st.operators.waiting,
                st.operators.updating
            ),
            (2, 2, 0)
        );
        assert!(st.operators.updating_names.is_empty());
        assert_eq!(
            progress_of(&assess(&updating_cv(600), &cos), "a").assessment,
            Assessment::Waiting
        );
    }

    #[test]
    fn g02_updating_operator_is_listed_with_its_condition() {
        let cos = [
            healthy_co("a", "4.1", "True", ago(60)),
            healthy_co("b", "4.1", "False", ago(60)),
        ];
        let a = assess(&updating_cv(600), &cos);
        assert_eq!(a.status.operators.updating_names, ["a"]);
        assert_eq!(
            (a.status.operators.updating, a.status.operators.waiting),
            (1, 1)
        );
        let p = progress_of(&a, "a");
        assert_eq!(p.assessment, Assessment::Updating);
        let u = condition(&p.conditions, "Updating");
        assert_eq!(u.status, ConditionStatus::True);
        assert_eq!(u.reason, "ProgressingReason");
        assert_eq!(u.message, "Progressing message");
        assert_eq!(u.last_transition_time, Some(ago(60)));
        assert_eq!(p.since, Some(ago(60)));
        assert_eq!(
            p.version,
            Some(VersionPair {
                current: "4.1".into(),
                target: "4.2".into()
            })
        );
        let av = condition(&p.conditions, "Available");
        assert_eq!(
            (av.status, av.reason.as_str()),
            (ConditionStatus::True, "AvailableReason")
        );
    }

    #[test]
    fn g03_unavailable_operator_is_still_waiting() {
        let cos = [co(
            "a",
            "4.1",
            vec![
                cond("Available", "False", Some(ago(60))),
                cond("Progressing", "False", Some(ago(60))),
            ],
        )];
        let st = assess(&updating_cv(600), &cos).status;
        assert_eq!(
            (
                st.operators.unavailable,
                st.operators.waiting,
                st.operators.healthy
            ),
            (1, 1, 0)
        );
    }

    #[test]
    fn g04_only_platform_operators_count() {
        let bad = vec![
            cond("Available", "False", Some(ago(3600))),
            cond("Degraded", "True", Some(ago(3600))),
        ];
        let mut random = co("random", "4.1", bad.clone());
        random.metadata.annotations = Some([("random".to_string(), "x".to_string())].into());
        let mut empty = co("empty", "4.1", bad.clone());
        empty.metadata.annotations = Some(Default::default());
        let mut none = co("none", "4.1", bad);
        none.metadata.annotations = None;
        let cos = [
            random,
            empty,
            none,
            healthy_co("a", "4.2", "False", ago(60)),
        ];
        let a = assess(&updating_cv(600), &cos);
        assert_eq!(a.status.operators.total, 1);
        assert_eq!(a.status.operators.unavailable, 0);
        assert_eq!(summaries(&a), Vec::<String>::new());
        assert_eq!(
            a.insights
                .iter()
                .filter(|i| i.resource.kind == "ClusterOperator")
                .count(),
            1
        );
    }

    #[test]
    fn g05_available_unknown_or_missing_is_unavailable() {
        let cos = [
            co(
                "u",
                "4.2",
                vec![cond("Available", "Unknown", Some(ago(3600)))],
            ),
            co("m", "4.2", vec![]),
        ];
        let a = assess(&updating_cv(600), &cos);
        assert_eq!(a.status.operators.unavailable, 2);
        assert_eq!(a.status.operators.healthy, 0);
        // Unknown/missing count as unavailable but give no insight (D.3 needs False).
        assert_eq!(summaries(&a), Vec::<String>::new());
    }

    #[test]
    fn g06_g07_degraded_counts() {
        let cos = [
            co(
                "d",
                "4.2",
                vec![
                    cond("Available", "True", None),
                    cond("Degraded", "True", Some(ago(60))),
                ],
            ),
            co(
                "u",
                "4.2",
                vec![
                    cond("Available", "True", None),
                    cond("Degraded", "Unknown", Some(ago(60))),
                ],
            ),
            co("m", "4.2", vec![cond("Available", "True", None)]),
        ];
        let st = assess(&updating_cv(600), &cos).status;
        assert_eq!(
            (
                st.operators.degraded,
                st.operators.unavailable,
                st.operators.healthy
            ),
            (1, 0, 2)
        );
        assert_eq!(
            operator_health_display(&st.operators),
            "2 Healthy, 1 Available but degraded"
        );
    }

    #[test]
    fn g08_degraded_unavailable_progressing() {
        let cos = [co(
            "a",
            "4.1",
            vec![
                cond("Available", "False", Some(ago(60))),
                cond("Degraded", "True", Some(ago(60))),
                cond("Progressing", "True", Some(ago(60))),
            ],
        )];
        let st = assess(&updating_cv(600), &cos).status;
        assert_eq!((st.operators.unavailable, st.operators.degraded), (1, 0));
        assert_eq!(st.operators.updating_names, ["a"]);
    }

    #[test]
    fn g09_updated_operator_with_progressing_true() {
        let cos = [healthy_co("a", "4.2", "True", ago(60))];
        let a = assess(&updating_cv(600), &cos);
        let o = &a.status.operators;
        assert_eq!((o.updated, o.updating, o.waiting), (1, 0, 0));
        let p = progress_of(&a, "a");
        assert_eq!(p.assessment, Assessment::Updated);
        assert_eq!(
            condition(&p.conditions, "Updating").status,
            ConditionStatus::False
        );
    }

    #[test]
    fn operator_without_progressing_is_unknown() {
        let cos = [co("a", "4.1", vec![cond("Available", "True", None)])];
        let a = assess(&updating_cv(600), &cos);
        let p = progress_of(&a, "a");
        assert_eq!(p.assessment, Assessment::Unknown);
        assert_eq!(
            condition(&p.conditions, "Updating").status,
            ConditionStatus::Unknown
        );
        assert_eq!(p.since, None);
        let o = &a.status.operators;
        assert_eq!((o.total, o.updated, o.updating, o.waiting), (1, 0, 0, 0));
    }

    #[test]
    fn g17_completion_and_assessment() {
        let old = |n: &str| healthy_co(n, "4.1", "False", ago(60));
        let new = |n: &str| healthy_co(n, "4.2", "False", ago(60));
        let mut not_platform = co("x", "4.1", vec![]);
        not_platform.metadata.annotations = None;
        let cv = updating_cv(600);
        let st = assess(&cv, &[old("a"), old("b"), old("c"), not_platform.clone()]).status;
        assert_eq!(
            (st.completion_percent, st.assessment),
            (0, Assessment::Progressing)
        );
        let st = assess(&cv, &[new("a"), new("b"), new("c"), not_platform.clone()]).status;
        assert_eq!(
            (st.completion_percent, st.assessment),
            (100, Assessment::Completed)
        );
        assert_eq!(st.estimated_completed_at, None);
        let st = assess(&cv, &[new("a"), new("b"), old("c"), not_platform]).status;
        assert_eq!(
            (st.completion_percent, st.assessment),
            (67, Assessment::Progressing)
        );
        // 32/33 → 97; 1/8 = 12.5 → 12 (half to even); no platform operator → 100 and completed.
        let many: Vec<_> = (0..33)
            .map(|i| {
                if i < 32 {
                    new(&format!("o{i}"))
                } else {
                    old("z")
                }
            })
            .collect();
        assert_eq!(assess(&cv, &many).status.completion_percent, 97);
        let eighth: Vec<_> = (0..8)
            .map(|i| {
                if i < 1 {
                    new(&format!("o{i}"))
                } else {
                    old(&format!("o{i}"))
                }
            })
            .collect();
        assert_eq!(assess(&cv, &eighth).status.completion_percent, 12);
        let st = assess(&cv, &[]).status;
        assert_eq!(
            (st.completion_percent, st.assessment),
            (100, Assessment::Completed)
        );
    }

    #[test]
    fn g20_status_summary() {
        let counts = |healthy, unavailable, degraded| OperatorCounts {
            healthy,
            unavailable,
            degraded,
            ..Default::default()
        };
        assert_eq!(operator_health_display(&counts(2, 0, 0)), "2 Healthy");
        assert_eq!(
            operator_health_display(&counts(2, 1, 0)),
            "2 Healthy, 1 Unavailable"
        );
        assert_eq!(
            operator_health_display(&counts(2, 0, 1)),
            "2 Healthy, 1 Available but degraded"
        );
        assert_eq!(
            operator_health_display(&counts(1, 1, 1)),
            "1 Healthy, 1 Unavailable, 1 Available but degraded"
        );
    }

    // ----- G.10, G.19, D.3, D.4: operator health insights -----

    #[test]
    fn g10_fresh_conditions_give_no_insight() {
        let cos = [co(
            "a",
            "4.1",
            vec![
                cond("Available", "False", Some(now())),
                cond("Degraded", "True", Some(now())),
            ],
        )];
        let a = assess(&updating_cv(600), &cos);
        assert!(health(&a).is_empty());
        assert_eq!(a.status.health_insights, HealthCounts::default());
    }

    fn co_insight_levels(
        available_age: Option<i64>,
        degraded_age: Option<i64>,
    ) -> Vec<(String, ImpactLevel)> {
        let mut conds = Vec::new();
        if let Some(age) = available_age {
            conds.push(cond("Available", "False", Some(ago(age))));
        }
        if let Some(age) = degraded_age {
            conds.push(cond("Degraded", "True", Some(ago(age))));
        }
        let a = assess(&updating_cv(600), &[co("a", "4.1", conds)]);
        health(&a)
            .iter()
            .map(|h| (h.source.clone(), h.impact.level))
            .collect()
    }

    #[test]
    fn g19_thresholds() {
        let un = |l| vec![(SOURCE_CO_UNAVAILABLE.to_string(), l)];
        let de = |l| vec![(SOURCE_CO_DEGRADED.to_string(), l)];
        assert_eq!(co_insight_levels(Some(5 * 60 - 1), None), vec![]);
        assert_eq!(
            co_insight_levels(Some(5 * 60), None),
            vec![],
            "strictly greater"
        );
        assert_eq!(
            co_insight_levels(Some(5 * 60 + 1), None),
            un(ImpactLevel::Warning)
        );
        assert_eq!(
            co_insight_levels(Some(20 * 60), None),
            un(ImpactLevel::Warning)
        );
        assert_eq!(
            co_insight_levels(Some(20 * 60 + 1), None),
            un(ImpactLevel::Error)
        );
        assert_eq!(co_insight_levels(None, Some(5 * 60 - 1)), vec![]);
        assert_eq!(
            co_insight_levels(None, Some(5 * 60 + 1)),
            de(ImpactLevel::Warning)
        );
        assert_eq!(
            co_insight_levels(None, Some(40 * 60)),
            de(ImpactLevel::Warning)
        );
        assert_eq!(
            co_insight_levels(None, Some(40 * 60 + 1)),
            de(ImpactLevel::Error)
        );
        // Both fire, unavailable first.
        assert_eq!(
            co_insight_levels(Some(30 * 60), Some(30 * 60)),
            vec![
                (SOURCE_CO_UNAVAILABLE.to_string(), ImpactLevel::Error),
                (SOURCE_CO_DEGRADED.to_string(), ImpactLevel::Warning)
            ]
        );
    }

    #[test]
    fn operator_insight_texts_and_line_breaks() {
        let mut available = cond("Available", "False", Some(ago(600)));
        available["reason"] = json!("UnavailableReplicas");
        available["message"] = json!("");
        let mut degraded = cond("Degraded", "True", Some(ago(3000)));
        degraded["reason"] = json!("Broken");
        degraded["message"] = json!("line one\nline two");
        let a = assess(
            &updating_cv(600),
            &[co("etcd", "4.1", vec![available, degraded])],
        );
        let hs: Vec<_> = a
            .insights
            .iter()
            .filter(|i| i.type_ == InsightType::Health)
            .collect();
        assert_eq!(hs.len(), 2);
        let un = hs[0].health.as_ref().expect("health");
        assert_eq!(hs[0].resource, config_ref("ClusterOperator", "etcd"));
        assert_eq!(hs[0].resource.group, "config.openshift.io");
        assert_eq!(
            hs[0].scope,
            InsightScope {
                type_: ScopeType::ControlPlane,
                pool: None
            }
        );
        assert_eq!(
            un.impact.summary,
            "Cluster Operator etcd is unavailable (UnavailableReplicas)"
        );
        assert_eq!(un.impact.description, "<no message>");
        assert_eq!(un.impact.type_, ImpactType::ApiAvailability);
        assert_eq!(un.remediation.reference, REFERENCE_CO_DOWN);
        assert_eq!(un.started_at, Some(ago(600)));
        let de = hs[1].health.as_ref().expect("health");
        assert_eq!(
            de.impact.summary,
            "Cluster Operator etcd is degraded (Broken)"
        );
        assert_eq!(de.impact.description, "line one\nline two");
        assert_eq!(de.impact.level, ImpactLevel::Error);
        assert_eq!(de.remediation.reference, REFERENCE_CO_DEGRADED);
        assert_eq!(de.source, SOURCE_CO_DEGRADED);
        assert_eq!(a.status.health_insights.error, 1);
        assert_eq!(a.status.health_insights.warning, 1);
        let healthy = condition(&a.status.conditions, CONDITION_HEALTHY);
        assert_eq!(healthy.status, ConditionStatus::False);
        // Degraded since 50 min: Error since LTT + 40 min (+1 ns).
        assert_eq!(
            healthy.last_transition_time,
            ts(ns(ago(3000)) + CO_DEGRADED_ERROR + 1)
        );
    }

    #[test]
    fn operator_condition_without_timestamp_counts_as_old() {
        let a = assess(
            &updating_cv(600),
            &[co("a", "4.1", vec![cond("Available", "False", None)])],
        );
        let h = health(&a);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].impact.level, ImpactLevel::Error);
        assert_eq!(h[0].started_at, None);
        assert_eq!(
            condition(&a.status.conditions, CONDITION_HEALTHY).last_transition_time,
            None
        );
    }

    #[test]
    fn long_texts_are_cut_to_the_schema() {
        let mut degraded = cond("Degraded", "True", Some(ago(3600)));
        degraded["reason"] = json!("R".repeat(300));
        degraded["message"] = json!("é".repeat(5000));
        let a = assess(
            &updating_cv(600),
            &[co(
                "a",
                "4.1",
                vec![cond("Available", "True", None), degraded],
            )],
        );
        let h = health(&a)[0];
        assert_eq!(h.impact.summary.chars().count(), 256);
        assert!(h.impact.summary.ends_with("RRR..."));
        assert_eq!(h.impact.description.chars().count(), 4096);
        assert!(h.impact.description.ends_with("é..."));
        assert_eq!(ellipsize("abc", 3), "abc");
        assert_eq!(ellipsize("abcd", 3), "...");
        assert_eq!(ellipsize("abcdef", 5), "ab...");
    }

    // ----- G.11, G.12, D.1, D.2: ClusterVersion insights -----

    fn with_failing(failing: Option<Value>) -> ClusterVersion {
        let mut conditions = vec![cond("Progressing", "True", Some(ago(600)))];
        conditions.extend(failing);
        cv(
            "4.2",
            history(&[
                ("Partial", "4.2", Some(ago(600)), None),
                ("Completed", "4.1", Some(ago(9000)), Some(ago(8000))),
            ]),
            conditions,
        )
    }

    #[test]
    fn d1_no_failing_condition() {
        let a = assess(&with_failing(None), &[]);
        let h = health(&a);
        assert_eq!(h.len(), 1);
        assert_eq!(
            h[0].impact.summary,
            "Cluster Version version has no Failing condition"
        );
        assert_eq!(
            h[0].impact.description,
            "Current status of Cluster Version reconciliation is unclear.  See 'oc -n openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1' to debug."
        );
        assert_eq!(h[0].impact.level, ImpactLevel::Warning);
        assert_eq!(h[0].impact.type_, ImpactType::UpdateStalled);
        assert_eq!(h[0].remediation.reference, REFERENCE_CO_DEGRADED);
        assert_eq!(h[0].started_at, Some(now()));
        assert_eq!(h[0].source, SOURCE_CV_NO_FAILING);
    }

    #[test]
    fn g11_failing_true() {
        let mut f = cond("Failing", "True", Some(ago(120)));
        f["reason"] = json!("ClusterOperatorsDegraded");
        f["message"] = json!("Cluster operators etcd are degraded");
        let a = assess(&with_failing(Some(f.clone())), &[]);
        let h = health(&a);
        assert_eq!(h.len(), 1);
        assert_eq!(
            h[0].impact.summary,
            "Cluster Version version is failing to proceed with the update (ClusterOperatorsDegraded)"
        );
        assert_eq!(
            h[0].impact.description,
            "Cluster operators etcd are degraded"
        );
        assert_eq!(h[0].started_at, Some(ago(120)));
        assert_eq!(h[0].source, SOURCE_CV_FAILING);
        let cv_insight = a
            .insights
            .iter()
            .find(|i| i.health.is_some())
            .expect("insight");
        assert_eq!(cv_insight.resource, config_ref("ClusterVersion", "version"));
        // D.0: without a message (description) the insight is dropped.
        f["message"] = json!("");
        assert!(health(&assess(&with_failing(Some(f)), &[])).is_empty());
    }

    #[test]
    fn g12_failing_unknown_and_false() {
        let a = assess(
            &with_failing(Some(cond("Failing", "Unknown", Some(ago(60))))),
            &[],
        );
        assert_eq!(
            summaries(&a),
            ["Cluster Version version may be failing to proceed with the update (FailingReason)"]
        );
        let a = assess(
            &with_failing(Some(cond("Failing", "False", Some(ago(60))))),
            &[],
        );
        assert!(health(&a).is_empty());
    }

    #[test]
    fn failing_is_reported_after_control_plane_completion() {
        let mut c = with_failing(Some(cond("Failing", "True", Some(ago(60)))));
        c.status.history[0].state = "Completed".into();
        let a = assess(&c, &[healthy_co("a", "4.2", "False", ago(60))]);
        assert_eq!(a.status.assessment, Assessment::Completed);
        assert_eq!(health(&a).len(), 1);
    }

    // ----- G.21, D.5, B.8: versions -----

    #[test]
    fn g21_versions_from_history() {
        let v = versions_from_history(&[]);
        assert_eq!(
            (v.target.as_str(), v.previous.as_str()),
            ("unknown", "unknown")
        );
        assert_eq!(target_version_display(&v), "unknown (from unknown)");
        for state in ["Partial", "Completed"] {
            let h: Vec<UpdateHistory> =
                serde_json::from_value(json!(history(&[(state, "4.1", Some(ago(60)), None)])))
                    .expect("h");
            let v = versions_from_history(&h);
            assert!(v.installation);
            assert_eq!(v.previous, "");
            assert_eq!(target_version_display(&v), "4.1 (a new install)");
        }
        let h: Vec<UpdateHistory> = serde_json::from_value(json!(history(&[
            ("Partial", "4.3", Some(ago(60)), None),
            ("Partial", "4.2", Some(ago(600)), None),
            ("Partial", "4.1", Some(ago(6000)), None),
        ])))
        .expect("h");
        let v = versions_from_history(&h);
        assert!(v.previous_partial);
        assert_eq!(v.last_completed, "unknown");
        assert_eq!(target_version_display(&v), "4.3 (from incomplete 4.2)");
        let h: Vec<UpdateHistory> = serde_json::from_value(json!(history(&[
            ("Partial", "4.3", Some(ago(60)), None),
            ("Partial", "4.2", Some(ago(600)), None),
            ("Partial", "4.1", Some(ago(6000)), None),
            ("Completed", "4.0", Some(ago(60000)), Some(ago(50000))),
            ("Completed", "3.9", Some(ago(90000)), Some(ago(80000))),
        ])))
        .expect("h");
        assert_eq!(versions_from_history(&h).last_completed, "4.0");
        let h: Vec<UpdateHistory> = serde_json::from_value(json!(history(&[
            ("Partial", "4.3", Some(ago(60)), None),
            ("Completed", "4.2", Some(ago(600)), Some(ago(500))),
        ])))
        .expect("h");
        let v = versions_from_history(&h);
        assert!(!v.previous_partial && !v.multi_arch_migration);
        assert_eq!(v.last_completed, "");
        assert_eq!(target_version_display(&v), "4.3 (from 4.2)");
    }

    #[test]
    fn d5_previous_update_partial() {
        let c = cv(
            "4.3",
            history(&[
                ("Partial", "4.3", Some(ago(89)), None),
                ("Partial", "4.2", Some(ago(6000)), Some(ago(5000))),
                ("Completed", "4.1", Some(ago(60000)), Some(ago(50000))),
            ]),
            vec![
                cond("Progressing", "True", Some(ago(89))),
                cond("Failing", "False", None),
            ],
        );
        let a = assess(&c, &[healthy_co("a", "4.2", "True", ago(30))]);
        let h = health(&a);
        assert_eq!(h.len(), 1);
        assert_eq!(
            h[0].impact.summary,
            "Previous update to 4.2 never completed, last complete update was 4.1"
        );
        assert_eq!(
            h[0].impact.description,
            "Current update to 4.3 was initiated while the previous update to version 4.2 was still in progress"
        );
        assert_eq!(
            (h[0].impact.level, h[0].impact.type_),
            (ImpactLevel::Warning, ImpactType::None)
        );
        assert_eq!(h[0].remediation.reference, REFERENCE_HISTORY);
        assert_eq!(h[0].started_at, Some(ago(89)));
        assert_eq!(h[0].source, SOURCE_PREVIOUS_PARTIAL);
        let res = &a
            .insights
            .iter()
            .find(|i| i.health.is_some())
            .expect("insight")
            .resource;
        assert_eq!(res, &config_ref("ClusterVersion", "version"));
        // No insight once the control plane completed.
        let a = assess(&c, &[healthy_co("a", "4.3", "False", ago(30))]);
        assert!(health(&a).is_empty());
    }

    #[test]
    fn multi_arch_migration() {
        let c = cv(
            "4.18",
            history(&[
                ("Partial", "4.18", Some(ago(600)), None),
                ("Completed", "4.18", Some(ago(9000)), Some(ago(8000))),
            ]),
            vec![
                cond("Progressing", "True", Some(ago(600))),
                cond("Failing", "False", None),
            ],
        );
        let mut mco = healthy_co("machine-config", "4.18", "True", ago(60));
        mco.status.versions.push(
            serde_json::from_value(json!({"name": "operator-image", "version": "img-new"}))
                .expect("v"),
        );
        let cos = [mco];
        let run = |image: Option<&str>| {
            let inputs = ClusterInputs {
                cluster_version: Some(&c),
                cluster_operators: &cos,
                mco_image: image,
                ..Default::default()
            };
            assess_control_plane(&inputs, None, now())
                .expect("a")
                .status
        };
        let st = run(Some("img-old"));
        assert_eq!((st.operators.updated, st.operators.updating), (0, 1));
        assert!(st.versions.multi_arch_migration);
        assert_eq!(
            target_version_display(&st.versions),
            "4.18 to Multi-Architecture"
        );
        assert_eq!(run(Some("img-new")).operators.updated, 1);
        assert_eq!(
            run(None).operators.updated,
            0,
            "no deployment: any operator-image is not updated"
        );
        // The operator-image rule is machine-config only.
        let mut other = healthy_co("etcd", "4.18", "False", ago(60));
        other.status.versions.push(
            serde_json::from_value(json!({"name": "operator-image", "version": "x"})).expect("v"),
        );
        let inputs = ClusterInputs {
            cluster_version: Some(&c),
            cluster_operators: std::slice::from_ref(&other),
            ..Default::default()
        };
        assert_eq!(
            assess_control_plane(&inputs, None, now())
                .expect("a")
                .status
                .operators
                .updated,
            1
        );
    }

    // ----- B.4–B.7, G.13–G.16, G.18, G.22 -----

    #[test]
    fn b6_timewise_curve_samples() {
        let samples = [
            (0.0, -0.0308),
            (0.1, 0.1939),
            (0.2, 0.3420),
            (0.5, 0.3895),
            (0.75, 0.4194),
            (0.9, 0.4785),
            (0.97, 0.6982),
            (0.99, 0.8321),
            (1.0, 1.03),
        ];
        for (x, want) in samples {
            let got = timewise_complete(x);
            assert!((got - want).abs() < 0.00051, "f({x}) = {got}, want {want}");
        }
    }

    #[test]
    fn g22_estimate_vectors() {
        let e = |base: i128, to_last: i128, upd: i128, x: f64| estimate_ns(base, to_last, upd, x);
        assert_eq!(e(HOUR, d(30, 0), d(30, 0), 0.0), d(36, 0));
        assert_eq!(e(HOUR, d(30, 0), d(31, 0), 0.0), d(35, 0));
        assert_eq!(e(HOUR, d(30, 0), d(30, 0), 0.2), d(69, 0));
        assert_eq!(e(HOUR, d(30, 0), d(35, 0), 0.2), d(63, 0));
        assert_eq!(e(HOUR, d(30, 0), d(30, 0), 0.75), d(50, 0));
        assert_eq!(e(HOUR, d(20, 0), d(20, 0), 0.99), d(4, 50));
        assert_eq!(e(d(80, 0), d(4, 0), d(10, 0), 0.05), d(84, 0));
        assert_eq!(e(HOUR, d(30, 0), d(30, 0), 1.0), 0);
        // Late: remaining × 1/1.2, truncated to whole seconds, kept in seconds precision.
        assert_eq!(e(HOUR, 0, d(70, 0), 0.0), -500 * SECOND);
        assert_eq!(e(HOUR, 0, d(60, 0) + 1_500_000_000, 0.0), -SECOND);
        assert_eq!(e(HOUR, 0, d(60, 0) + 1_000_000_000, 0.0), 0);
        // Exactly 5 min to the last progress is "too early" → baseline.
        assert_eq!(e(HOUR, d(5, 0), d(5, 0), 0.5), e(HOUR, 0, d(5, 0), 0.5));
        assert_ne!(e(HOUR, d(5, 0) + 1, d(5, 0), 0.5), e(HOUR, 0, d(5, 0), 0.5));
        // Minute rounding above 10 min, halves away from zero: 10m30s → 11m.
        assert_eq!(
            e(d(8, 45), 0, 0, 0.0),
            d(10, 30) - d(10, 30) % MINUTE + MINUTE
        );
        let sd = |n: i128| SignedDuration::from_nanos_i128(n);
        assert_eq!(
            estimate_completion(sd(HOUR), sd(d(30, 0)), sd(d(30, 0)), 0.0),
            sd(d(36, 0))
        );
    }

    #[test]
    fn g22_baseline_duration() {
        let h =
            |entries: &[(&str, &str, Option<Timestamp>, Option<Timestamp>)]| -> Vec<UpdateHistory> {
                serde_json::from_value(json!(history(entries))).expect("history")
            };
        let one_hour = SignedDuration::from_hours(1);
        assert_eq!(baseline_duration(&[]), one_hour);
        let e = ("Completed", "4.1", Some(ago(6000)), Some(ago(5700)));
        assert_eq!(baseline_duration(&h(&[e])), one_hour);
        assert_eq!(baseline_duration(&h(&[e, e])), one_hour);
        let p = ("Partial", "4.1", Some(ago(6000)), None);
        assert_eq!(
            baseline_duration(&h(&[p, p, p, e])),
            one_hour,
            "only partials between"
        );
        let five = ("Completed", "4.2", Some(ago(6000)), Some(ago(5700)));
        let other = ("Completed", "4.1", Some(ago(9000)), Some(ago(6000)));
        assert_eq!(
            baseline_duration(&h(&[p, p, five, other, e])),
            SignedDuration::from_mins(5)
        );
        let no_times = ("Completed", "4.2", None, None);
        assert_eq!(baseline_duration(&h(&[p, no_times, e])), one_hour);
    }

    #[test]
    fn g18_duration_rounding() {
        let r = |n: i128| round_update_duration(n);
        assert_eq!(r(HOUR + 20 * SECOND), HOUR);
        assert_eq!(r(d(30, 0)), d(30, 0));
        assert_eq!(r(333 * SECOND), d(5, 33));
        assert_eq!(r(637 * SECOND), d(11, 0));
        assert_eq!(
            r(d(10, 0) + 400_000_000),
            d(10, 0),
            "10 min is not above 10 min"
        );
        assert_eq!(r(d(5, 33) + 500_000_000), d(5, 34), "halves away from zero");
        // From the status: partial started 1 h ago; completed after 30 min.
        let st = assess(
            &updating_cv(3600),
            &[healthy_co("a", "4.1", "False", ago(60))],
        )
        .status;
        assert_eq!(
            update_duration(&st, now()),
            Some(SignedDuration::from_hours(1))
        );
        let mut c = updating_cv(3600);
        c.status.history[0].state = "Completed".into();
        c.status.history[0].completion_time = Some(ago(1800));
        let st = assess(&c, &[healthy_co("a", "4.2", "False", ago(60))]).status;
        assert_eq!(st.completed_at, Some(ago(1800)));
        assert_eq!(
            update_duration(&st, now()),
            Some(SignedDuration::from_mins(30))
        );
    }

    fn model(cv: &ClusterVersion, cos: &[ClusterOperator]) -> EstimateModel {
        let inputs = ClusterInputs {
            cluster_version: Some(cv),
            cluster_operators: cos,
            ..Default::default()
        };
        gather(&inputs).expect("facts").model
    }

    #[test]
    fn g13_last_observed_progress_is_the_latest_progressing_transition() {
        // Update started 30 min ago; operators' Progressing flipped 27 and 24 min after start.
        let cos = [
            healthy_co("a", "4.2", "False", ago(3 * 60)),
            healthy_co("b", "4.1", "True", ago(6 * 60)),
            healthy_co("c", "4.1", "False", ago(20 * 60)),
        ];
        let (updating_for, to_last) = model(&updating_cv(30 * 60), &cos).timing_at(ns(now()));
        assert_eq!((updating_for, to_last), (d(30, 0), d(27, 0)));
        let cos = [
            healthy_co("b", "4.1", "True", ago(6 * 60)),
            healthy_co("c", "4.1", "False", ago(20 * 60)),
        ];
        assert_eq!(
            model(&updating_cv(30 * 60), &cos).timing_at(ns(now())).1,
            d(24, 0)
        );
    }

    #[test]
    fn g14_progress_before_start_means_now() {
        let cos = [
            healthy_co("a", "4.1", "False", ago(40 * 60)),
            healthy_co("b", "4.1", "True", ago(30 * 60)),
        ];
        let m = model(&updating_cv(30 * 60), &cos);
        assert_eq!(
            m.timing_at(ns(now())),
            (d(30, 0), d(30, 0)),
            "equal to the start is not after it"
        );
        let m = model(&updating_cv(30 * 60), &[]);
        assert_eq!(m.timing_at(ns(now())).1, d(30, 0));
    }

    #[test]
    fn g16_machine_config_last_uses_its_start() {
        let mut cos: Vec<_> = (0..3)
            .map(|i| healthy_co(&format!("o{i}"), "4.2", "False", ago(45 * 60)))
            .collect();
        cos.push(healthy_co("machine-config", "4.1", "True", ago(20 * 60)));
        let m = model(&updating_cv(50 * 60), &cos);
        assert_eq!(m.timing_at(ns(now())).1, d(30, 0));
        // With two operators left the latest transition wins.
        cos.push(healthy_co("z", "4.1", "False", ago(10 * 60)));
        assert_eq!(
            model(&updating_cv(50 * 60), &cos).timing_at(ns(now())).1,
            d(40, 0)
        );
    }

    #[test]
    fn g15_stalled_and_slow() {
        // x = 0, baseline 1 h (two history entries): est = (3600 − updatingFor) × 1/1.2 when late.
        let cos = [healthy_co("a", "4.1", "False", ago(60 * 60 * 3))];
        let st = assess(&updating_cv(65 * 60), &cos).status;
        assert_eq!(st.assessment, Assessment::ProgressingSlow);
        assert_eq!(
            estimated_time_to_complete(&st, now()),
            Some(SignedDuration::from_secs(-250))
        );
        let st = assess(&updating_cv(75 * 60), &cos).status;
        assert_eq!(st.assessment, Assessment::Stalled);
        assert_eq!(
            estimated_time_to_complete(&st, now()),
            Some(SignedDuration::from_secs(-750))
        );
        assert_eq!(estimated_duration(&st), Some(SignedDuration::from_mins(62)));
        let st = assess(&updating_cv(30 * 60), &cos).status;
        assert_eq!(st.assessment, Assessment::Progressing);
        assert_eq!(
            estimated_time_to_complete(&st, now()),
            Some(SignedDuration::from_mins(36))
        );
        assert_eq!(
            st.estimated_completed_at,
            Some(now() + SignedDuration::from_mins(36))
        );
        // Boundaries: est = −10 min exactly is Slow, one second more is Stalled.
        assert_eq!(
            assessment_from_estimate(-10 * MINUTE),
            Assessment::ProgressingSlow
        );
        assert_eq!(
            assessment_from_estimate(-10 * MINUTE - SECOND),
            Assessment::Stalled
        );
        assert_eq!(assessment_from_estimate(0), Assessment::Progressing);
        assert_eq!(
            assessment_from_estimate(-SECOND),
            Assessment::ProgressingSlow
        );
    }

    // ----- Bad input, conditions, status plumbing -----

    #[test]
    fn missing_cluster_version_gives_none() {
        let inputs = ClusterInputs::default();
        assert!(assess_control_plane(&inputs, None, now()).is_none());
        assert!(requeue_after(&inputs, now()).is_none());
    }

    #[test]
    fn missing_progressing_is_unknown() {
        let c = cv(
            "4.2",
            history(&[("Partial", "4.2", Some(ago(600)), None)]),
            vec![cond("Failing", "False", None)],
        );
        let st = assess(&c, &[healthy_co("a", "4.1", "False", ago(60))]).status;
        assert_eq!(st.assessment, Assessment::Unknown);
        let u = condition(&st.conditions, CONDITION_UPDATING);
        assert_eq!(
            (u.status, u.reason.as_str()),
            (ConditionStatus::Unknown, REASON_NO_PROGRESSING)
        );
        assert_eq!(u.last_transition_time, None);
    }

    #[test]
    fn updating_condition_follows_progressing() {
        let st = assess(&updating_cv(600), &[]).status;
        let u = condition(&st.conditions, CONDITION_UPDATING);
        assert_eq!(
            (u.status, u.reason.as_str()),
            (ConditionStatus::True, "ClusterVersionProgressing")
        );
        assert_eq!(u.last_transition_time, Some(ago(600)));
        assert_eq!(u.message, "Progressing message");
        let mut c = updating_cv(600);
        c.status.conditions[0].status = "False".into();
        let u = condition(&assess(&c, &[]).status.conditions, CONDITION_UPDATING).clone();
        assert_eq!(
            (u.status, u.reason.as_str()),
            (ConditionStatus::False, "ClusterVersionNotProgressing")
        );
        c.status.conditions[0].status = "Unknown".into();
        let u = condition(&assess(&c, &[]).status.conditions, CONDITION_UPDATING).clone();
        assert_eq!(u.status, ConditionStatus::Unknown);
        let healthy = condition(&assess(&c, &[]).status.conditions, CONDITION_HEALTHY).clone();
        assert_eq!(
            (healthy.status, healthy.last_transition_time),
            (ConditionStatus::True, None)
        );
    }

    #[test]
    fn empty_history() {
        let c = cv(
            "4.2",
            vec![],
            vec![
                cond("Progressing", "True", Some(ago(600))),
                cond("Failing", "False", None),
            ],
        );
        let a = assess(&c, &[healthy_co("a", "4.1", "False", ago(60))]);
        let st = &a.status;
        assert_eq!(
            (st.versions.target.as_str(), st.versions.previous.as_str()),
            ("unknown", "unknown")
        );
        assert_eq!(st.started_at, Some(ago(600)));
        assert_eq!(st.completed_at, None);
        // No timing: the estimate is the baseline (1 h × 1.2).
        assert_eq!(
            estimated_time_to_complete(st, now()),
            Some(SignedDuration::from_mins(72))
        );
        assert_eq!(st.assessment, Assessment::Progressing);
        let p = progress_of(&a, "version");
        assert_eq!(p.message, "unknown (from unknown)");
        assert_eq!(p.since, Some(ago(600)));
    }

    #[test]
    fn missing_timestamps_and_empty_objects_do_not_panic() {
        let c = cv(
            "",
            history(&[
                ("Partial", "", None, None),
                ("Completed", "4.1", None, None),
            ]),
            vec![
                cond("Progressing", "True", None),
                cond("Failing", "True", None),
            ],
        );
        let nameless: ClusterOperator = serde_json::from_value(json!({
            "metadata": {"annotations": {"include.release.openshift.io/x": ""}}
        }))
        .expect("co");
        let cos = [
            nameless,
            co("a", "4.1", vec![cond("Progressing", "True", None)]),
        ];
        let a = assess(&c, &cos);
        assert_eq!(a.status.started_at, None);
        assert_eq!(a.status.versions.target, "unknown");
        assert_eq!(a.status.operators.total, 2);
        // Progress insights only for named operators (plus the ClusterVersion).
        assert_eq!(
            a.insights.iter().filter(|i| i.progress.is_some()).count(),
            2
        );
        let _ = requeue_after(
            &ClusterInputs {
                cluster_version: Some(&c),
                cluster_operators: &cos,
                ..Default::default()
            },
            now(),
        );
        // A completely empty ClusterVersion.
        let empty = ClusterVersion::default();
        let a = assess(&empty, &[]);
        assert_eq!(a.status.assessment, Assessment::Unknown);
        assert_eq!(a.insights[0].resource.name, "version");
        // Completed history entry without completion time: treated as now.
        let mut c = updating_cv(600);
        c.status.history[0].state = "Completed".into();
        let st = assess(&c, &[healthy_co("a", "4.2", "False", ago(60))]).status;
        assert_eq!(st.completed_at, None);
        assert_eq!(st.assessment, Assessment::Completed);
    }

    #[test]
    fn node_counts_come_from_the_master_pool() {
        let pool = PoolAssessment {
            name: "master".into(),
            is_master: true,
            status: WorkerPoolUpdateStatusStatus {
                nodes: NodeCounts {
                    total: 3,
                    updated: 1,
                    outdated: 2,
                    available: 3,
                    ..Default::default()
                },
                ..Default::default()
            },
            insights: vec![],
        };
        let c = updating_cv(600);
        let inputs = ClusterInputs {
            cluster_version: Some(&c),
            ..Default::default()
        };
        let st = assess_control_plane(&inputs, Some(&pool), now())
            .expect("a")
            .status;
        assert_eq!(st.nodes, pool.status.nodes);
        assert_eq!(assess(&c, &[]).status.nodes, NodeCounts::default());
    }

    #[test]
    fn insight_order_progress_then_health() {
        let cos = [
            co(
                "b",
                "4.1",
                vec![
                    cond("Degraded", "True", Some(ago(3600))),
                    cond("Available", "False", Some(ago(3600))),
                ],
            ),
            co(
                "a",
                "4.1",
                vec![
                    cond("Degraded", "True", Some(ago(3600))),
                    cond("Available", "True", None),
                ],
            ),
        ];
        let mut c = updating_cv(600);
        c.status.conditions.retain(|x| x.type_ != "Failing");
        let a = assess(&c, &cos);
        let order: Vec<_> = a
            .insights
            .iter()
            .map(|i| {
                (
                    i.type_,
                    i.resource.name.clone(),
                    i.health.as_ref().map(|h| h.source.clone()),
                )
            })
            .collect();
        assert_eq!(
            order,
            vec![
                (InsightType::Progress, "version".to_string(), None),
                (InsightType::Progress, "b".to_string(), None),
                (InsightType::Progress, "a".to_string(), None),
                (
                    InsightType::Health,
                    "version".to_string(),
                    Some(SOURCE_CV_NO_FAILING.to_string())
                ),
                (
                    InsightType::Health,
                    "b".to_string(),
                    Some(SOURCE_CO_UNAVAILABLE.to_string())
                ),
                (
                    InsightType::Health,
                    "b".to_string(),
                    Some(SOURCE_CO_DEGRADED.to_string())
                ),
                (
                    InsightType::Health,
                    "a".to_string(),
                    Some(SOURCE_CO_DEGRADED.to_string())
                ),
            ]
        );
        assert_eq!(
            a.status.health_insights,
            HealthCounts {
                error: 3,
                warning: 1,
                ..Default::default()
            }
        );
    }

    // ----- requeue_after, estimate_moved -----

    fn inputs<'a>(c: &'a ClusterVersion, cos: &'a [ClusterOperator]) -> ClusterInputs<'a> {
        ClusterInputs {
            cluster_version: Some(c),
            cluster_operators: cos,
            ..Default::default()
        }
    }

    #[test]
    fn requeue_at_operator_thresholds() {
        let c = updating_cv(600);
        let cos = [co(
            "a",
            "4.2",
            vec![cond("Available", "False", Some(ago(3 * 60)))],
        )];
        let wait = requeue_after(&inputs(&c, &cos), now()).expect("requeue");
        assert_eq!(wait.as_nanos(), d(2, 0) + 1);
        // Just before: no insight; at the requeue instant: Warning.
        let at = now() + wait;
        assert!(health(&assess_at(&c, &cos, at - SignedDuration::from_nanos(1))).is_empty());
        assert_eq!(
            health(&assess_at(&c, &cos, at))[0].impact.level,
            ImpactLevel::Warning
        );
        let cos = [co(
            "a",
            "4.2",
            vec![
                cond("Available", "True", None),
                cond("Degraded", "True", Some(ago(10 * 60))),
            ],
        )];
        assert_eq!(
            requeue_after(&inputs(&c, &cos), now()).map(|w| w.as_nanos()),
            Some(d(30, 0) + 1)
        );
        let cos = [co(
            "a",
            "4.2",
            vec![cond("Available", "False", Some(ago(19 * 60)))],
        )];
        assert_eq!(
            requeue_after(&inputs(&c, &cos), now()).map(|w| w.as_nanos()),
            Some(d(1, 0) + 1)
        );
        // Completed control plane with old conditions only: nothing scheduled.
        let cos = [co(
            "a",
            "4.2",
            vec![cond("Available", "False", Some(ago(3600)))],
        )];
        assert_eq!(requeue_after(&inputs(&c, &cos), now()), None);
    }

    /// The requeue instant is exactly where the assessment changes.
    fn assert_change_at(
        c: &ClusterVersion,
        cos: &[ClusterOperator],
        from: Assessment,
        to: Assessment,
    ) -> i128 {
        assert_eq!(assess(c, cos).status.assessment, from);
        let wait = requeue_after(&inputs(c, cos), now()).expect("requeue");
        let at = now() + wait;
        assert_eq!(
            assess_at(c, cos, at - SignedDuration::from_nanos(1))
                .status
                .assessment,
            from
        );
        assert_eq!(assess_at(c, cos, at).status.assessment, to);
        wait.as_nanos()
    }

    #[test]
    fn requeue_when_the_estimate_crosses_zero_and_minus_ten_minutes() {
        // Baseline 1 h, x = 0: est < 0 once updatingFor > 3601.2 s (trunc(−1.2/1.2) = −1).
        let cos = [healthy_co("a", "4.1", "False", ago(5 * 3600))];
        let wait = assert_change_at(
            &updating_cv(30 * 60),
            &cos,
            Assessment::Progressing,
            Assessment::ProgressingSlow,
        );
        assert!((wait - (d(30, 1) + 200_000_000)).abs() <= 1_000, "{wait}");
        // est < −10 min once remaining ≤ −601 × 1.2 s, i.e. updatingFor ≥ 72m1.2s.
        let wait = assert_change_at(
            &updating_cv(65 * 60),
            &cos,
            Assessment::ProgressingSlow,
            Assessment::Stalled,
        );
        let want = d(7, 1) + 200_000_000;
        assert!((wait - want).abs() <= 1_000, "{wait}");
        // Stalled stays stalled: nothing scheduled.
        assert_eq!(
            requeue_after(&inputs(&updating_cv(80 * 60), &cos), now()),
            None
        );
        // With a fixed last observed progress (curve): the crossing is at start + total.
        let cos = [
            healthy_co("a", "4.2", "False", ago(29 * 60)),
            healthy_co("b", "4.1", "False", ago(29 * 60)),
        ];
        // x = 0.5, to_last = 15 min, total = 900 / f(0.5) s; Stalled once
        // remaining ≤ −721.2 s.
        let total = 900.0 / timewise_complete(0.5);
        let wait = assert_change_at(
            &updating_cv(44 * 60),
            &cos,
            Assessment::ProgressingSlow,
            Assessment::Stalled,
        );
        let want = ((total + 721.2 - 44.0 * 60.0) * 1e9) as i128;
        assert!((wait - want).abs() <= 1_000, "{wait} vs {want}");
    }

    #[test]
    fn requeue_when_the_curve_replaces_the_baseline() {
        // Started 4 min ago, progress tracks now (all transitions before the start), x = 0.5:
        // at 5 min the estimate switches from the baseline to to_last / f(x); with f(0.5) < 1
        // it stays positive, so no change of assessment is due.
        let cos = [
            healthy_co("a", "4.2", "False", ago(3600)),
            healthy_co("b", "4.1", "False", ago(3600)),
        ];
        assert_eq!(
            requeue_after(&inputs(&updating_cv(4 * 60), &cos), now()),
            None
        );
        // A tiny baseline (2 min) makes the update late before 5 min, then the curve
        // (total = 2 × elapsed at x = 0.5) puts it back on time right after 5 min.
        let c = cv(
            "4.2",
            history(&[
                ("Partial", "4.2", Some(ago(4 * 60)), None),
                ("Completed", "4.1", Some(ago(9000)), Some(ago(8000))),
                ("Completed", "4.0", Some(ago(20000)), Some(ago(20000 - 120))),
                ("Completed", "3.9", Some(ago(40000)), Some(ago(30000))),
            ]),
            vec![
                cond("Progressing", "True", Some(ago(4 * 60))),
                cond("Failing", "False", None),
            ],
        );
        let c2 = {
            let mut c2 = c.clone();
            c2.status.history.swap(1, 2);
            c2
        };
        assert_eq!(baseline_ns(&c2.status.history), 2 * MINUTE);
        let wait = assert_change_at(
            &c2,
            &cos,
            Assessment::ProgressingSlow,
            Assessment::Progressing,
        );
        assert_eq!(wait, MINUTE + 1);
    }

    #[test]
    fn estimate_moved_rule() {
        let n = now();
        let at = |mins: i64| Some(n + SignedDuration::from_mins(mins));
        assert!(!estimate_moved(None, None, n));
        assert!(estimate_moved(None, at(5), n));
        assert!(estimate_moved(at(5), None, n));
        assert!(!estimate_moved(at(5), at(5), n));
        // Near estimates: 1 min tolerance.
        assert!(!estimate_moved(at(6), at(5), n));
        assert!(estimate_moved(
            Some(n + SignedDuration::from_secs(361)),
            at(5),
            n
        ));
        // Far estimates: 10 % of the distance (100 min → 10 min).
        assert!(!estimate_moved(at(110), at(100), n));
        assert!(estimate_moved(at(111), at(100), n));
        // In the past too (a late update).
        assert!(!estimate_moved(at(-105), at(-100), n));
        assert!(estimate_moved(at(-120), at(-100), n));
    }

    #[test]
    fn go_primitives() {
        assert_eq!(go_round(90 * SECOND, MINUTE), 2 * MINUTE);
        assert_eq!(go_round(-90 * SECOND, MINUTE), -2 * MINUTE);
        assert_eq!(go_round(-89 * SECOND, MINUTE), -MINUTE);
        assert_eq!(go_round(29 * SECOND, MINUTE), 0);
        assert_eq!(go_truncate(-119 * SECOND, MINUTE), -MINUTE);
        assert_eq!(go_truncate(119 * SECOND, MINUTE), MINUTE);
        assert_eq!(go_seconds(1_500_000_000), 1.5);
        assert_eq!(go_seconds(-1_500_000_000), -1.5);
        assert_eq!(sub(i128::from(i64::MAX) * 4, 0), i128::from(i64::MAX));
    }
}
