//! Unit tests of the module.

use super::nanos::sub;
use super::*;
use crate::format::{HOUR, SECOND, round as go_round, truncate as go_truncate};
use crate::test_support::{co, cond, cv, history};
use serde_json::{Value, json};
use update_status_api::crd::{HealthCounts, HealthInsight};
use update_status_api::crd::{ImpactLevel, ImpactType, InsightScope, OperatorCounts, ScopeType};
use update_status_api::crd::{NodeCounts, WorkerPoolUpdateStatusStatus};
use update_status_api::input::{ClusterOperator, UpdateHistory};

const NOW: &str = "2024-01-01T12:00:00Z";

fn now() -> Timestamp {
    NOW.parse().expect("now")
}

/// `now − secs`.
fn ago(secs: i64) -> Timestamp {
    now() - SignedDuration::from_secs(secs)
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
    degraded["message"] = json!("é".repeat(40_000));
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
    assert_eq!(h.impact.description.chars().count(), 32768);
    assert!(
        h.impact
            .description
            .ends_with("é [... cut: 40000 characters, too long to store]")
    );
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
        serde_json::from_value(json!({"name": "operator-image", "version": "img-new"})).expect("v"),
    );
    let cos = [mco];
    let assess = |image: McoImage<'_>| {
        let inputs = ClusterInputs {
            cluster_version: Some(&c),
            cluster_operators: &cos,
            mco_image: image,
            ..Default::default()
        };
        assess_control_plane(&inputs, None, now()).expect("a")
    };
    let run = |image: Option<&str>| assess(image.into()).status;
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
    // Only the controller says it found no Deployment: one Info insight, same counts.
    let mco_sources = |a: &ControlPlaneAssessment| -> Vec<(ImpactLevel, String, String)> {
        a.insights
            .iter()
            .filter_map(|i| i.health.as_ref().map(|h| (i, h)))
            .filter(|(_, h)| h.source == SOURCE_MCO_DEPLOYMENT_ABSENT)
            .map(|(i, h)| {
                (
                    h.impact.level,
                    i.resource.kind.clone(),
                    h.impact.summary.clone(),
                )
            })
            .collect()
    };
    let absent = assess(McoImage::Absent("Deployment x not found"));
    assert_eq!(
        absent.status.operators,
        assess(McoImage::NotRead).status.operators
    );
    assert_eq!(
        mco_sources(&absent),
        [(
            ImpactLevel::Info,
            "Deployment".to_string(),
            "machine-config-operator image unknown: Deployment x not found".to_string()
        )]
    );
    assert_eq!(absent.status.health_insights.info, 1);
    assert!(
        mco_sources(&assess(McoImage::NotRead)).is_empty(),
        "offline: nothing said"
    );
    assert!(mco_sources(&assess(McoImage::Observed("img-new"))).is_empty());
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
    let h = |entries: &[(&str, &str, Option<Timestamp>, Option<Timestamp>)]| -> Vec<UpdateHistory> {
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
