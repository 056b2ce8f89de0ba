//! D.1–D.5: the control-plane health rules, and the object helpers they share.

use jiff::Timestamp;
use update_status_api::crd::{
    Condition, ConditionStatus, ControlPlaneVersions, ImpactLevel, ImpactType, InsightScope,
    ResourceRef, ScopeType, UpdateInsightStatus, limits,
};
use update_status_api::input::{
    ClusterOperator, ClusterVersion, Condition as InputCondition, MCO_DEPLOYMENT, MCO_NAMESPACE,
    first_condition,
};

use super::constants::{
    CO_DEGRADED_ERROR, CO_INSIGHT_THRESHOLD, CO_UNAVAILABLE_ERROR, CONDITION_HEALTHY,
    CONDITION_UPDATING, CONFIG_GROUP, MACHINE_CONFIG, OPERATOR_IMAGE, REASON_NO_PROGRESSING,
    REFERENCE_CO_DEGRADED, REFERENCE_CO_DOWN, REFERENCE_HISTORY, REFERENCE_MCO, SOURCE_CO_DEGRADED,
    SOURCE_CO_UNAVAILABLE, SOURCE_CV_FAILING, SOURCE_CV_NO_FAILING, SOURCE_MCO_DEPLOYMENT_ABSENT,
    SOURCE_PREVIOUS_PARTIAL,
};
use super::nanos::{ns, sub, ts};
use crate::format::ellipsize;

pub(super) fn status_of(raw: &str) -> ConditionStatus {
    match raw {
        "True" => ConditionStatus::True,
        "False" => ConditionStatus::False,
        _ => ConditionStatus::Unknown,
    }
}

pub(super) fn copy_condition(type_: &str, c: &InputCondition) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: status_of(&c.status),
        reason: ellipsize(&c.reason, limits::CONDITION_REASON),
        message: ellipsize(&c.message, limits::CONDITION_MESSAGE),
        last_transition_time: c.last_transition_time,
    }
}

pub(super) fn config_ref(kind: &str, name: &str) -> ResourceRef {
    ResourceRef {
        group: CONFIG_GROUP.to_string(),
        kind: kind.to_string(),
        name: name.to_string(),
        namespace: None,
    }
}

pub(super) fn control_plane_scope() -> InsightScope {
    InsightScope {
        type_: ScopeType::ControlPlane,
        pool: None,
    }
}

/// What a health rule produced, before the completeness filter.
pub(super) struct HealthDraft {
    pub(super) resource: ResourceRef,
    pub(super) started_at: Option<Timestamp>,
    pub(super) level: ImpactLevel,
    pub(super) type_: ImpactType,
    pub(super) summary: String,
    pub(super) description: String,
    pub(super) reference: &'static str,
    pub(super) source: &'static str,
    /// When the insight reached its level (for the `Healthy` condition), when known.
    pub(super) level_since: Option<i128>,
}

impl HealthDraft {
    /// D.0 through [`crate::insight::HealthDraft::build`], with the instant it reached its level.
    pub(super) fn build(self) -> Option<(UpdateInsightStatus, Option<i128>)> {
        let level_since = self.level_since;
        crate::insight::HealthDraft {
            resource: self.resource,
            scope: control_plane_scope(),
            source: self.source,
            started_at: self.started_at,
            level: self.level,
            type_: self.type_,
            summary: self.summary,
            description: self.description,
            reference: self.reference,
        }
        .build()
        .map(|s| (s, level_since))
    }
}

/// Age of a condition at `now` (Go: `now.Sub(LTT)`; a missing LTT is Go's zero time, i.e. very
/// old, so it crosses every threshold).
pub(super) fn condition_age(c: &InputCondition, now: i128) -> i128 {
    c.last_transition_time
        .map_or(i128::from(i64::MAX), |t| sub(now, ns(t)))
}

/// D.1, D.2: the ClusterVersion's Failing condition.
pub(super) fn cluster_version_insight(
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
pub(super) fn operator_insights(co: &ClusterOperator, now: i128) -> Vec<HealthDraft> {
    [CO_UNAVAILABLE, CO_DEGRADED]
        .iter()
        .filter_map(|rule| rule.draft(co, now))
        .collect()
}

/// D.3: `Available=False`.
const CO_UNAVAILABLE: OperatorRule = OperatorRule {
    condition: "Available",
    bad: false,
    state: "unavailable",
    error_after: CO_UNAVAILABLE_ERROR,
    reference: REFERENCE_CO_DOWN,
    source: SOURCE_CO_UNAVAILABLE,
};

/// D.4: `Degraded=True`.
const CO_DEGRADED: OperatorRule = OperatorRule {
    condition: "Degraded",
    bad: true,
    state: "degraded",
    error_after: CO_DEGRADED_ERROR,
    reference: REFERENCE_CO_DEGRADED,
    source: SOURCE_CO_DEGRADED,
};

/// D.3 / D.4: an operator condition that is bad for longer than [`CO_INSIGHT_THRESHOLD`] is a
/// warning, and an error after `error_after`.
struct OperatorRule {
    condition: &'static str,
    /// The condition's bad status (`True` when `true`).
    bad: bool,
    /// `unavailable` or `degraded`, in the summary.
    state: &'static str,
    error_after: i128,
    reference: &'static str,
    source: &'static str,
}

impl OperatorRule {
    fn draft(&self, co: &ClusterOperator, now: i128) -> Option<HealthDraft> {
        let name = co.name();
        let c = co
            .condition(self.condition)
            .filter(|c| if self.bad { c.is_true() } else { c.is_false() })?;
        let age = condition_age(c, now);
        if age <= CO_INSIGHT_THRESHOLD {
            return None;
        }
        let error = age > self.error_after;
        Some(HealthDraft {
            resource: config_ref("ClusterOperator", name),
            started_at: c.last_transition_time,
            level: if error {
                ImpactLevel::Error
            } else {
                ImpactLevel::Warning
            },
            type_: ImpactType::ApiAvailability,
            summary: format!("Cluster Operator {name} is {} ({})", self.state, c.reason),
            description: if c.message.is_empty() {
                "<no message>".to_string()
            } else {
                c.message.clone()
            },
            reference: self.reference,
            source: self.source,
            level_since: error
                .then(|| c.last_transition_time.map(|t| ns(t) + self.error_after + 1))
                .flatten(),
        })
    }
}

/// D.5: the previous update never completed.
pub(super) fn previous_partial_insight(
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

pub(super) fn updating_condition(progressing: Option<&InputCondition>) -> Condition {
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
                message: ellipsize(&p.message, limits::CONDITION_MESSAGE),
                last_transition_time: p.last_transition_time,
            }
        }
    }
}

pub(super) fn healthy_condition(insights: &[(UpdateInsightStatus, Option<i128>)]) -> Condition {
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

/// The controller found no machine-config operator image (see [`McoImage::Absent`]) while
/// `machine-config` reports an `operator-image`: say so, the operator then counts as not
/// updated (B.2's comparison with `""`, as oc does).
pub(super) fn mco_deployment_absent_insight(why: &str, now: Timestamp) -> HealthDraft {
    HealthDraft {
        resource: ResourceRef {
            group: "apps".to_string(),
            kind: "Deployment".to_string(),
            name: MCO_DEPLOYMENT.to_string(),
            namespace: Some(MCO_NAMESPACE.to_string()),
        },
        started_at: Some(now),
        level: ImpactLevel::Info,
        type_: ImpactType::None,
        summary: format!("{MCO_DEPLOYMENT} image unknown: {why}"),
        description: format!(
            "The {MACHINE_CONFIG} ClusterOperator reports an {OPERATOR_IMAGE} version, which must equal the image of the {MCO_DEPLOYMENT} container of the {MCO_NAMESPACE}/{MCO_DEPLOYMENT} Deployment for the operator to count as updated. That image is not known ({why}), so {MACHINE_CONFIG} counts as not updated."
        ),
        reference: REFERENCE_MCO,
        source: SOURCE_MCO_DEPLOYMENT_ABSENT,
        level_since: None,
    }
}
