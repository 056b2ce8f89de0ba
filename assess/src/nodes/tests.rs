//! Unit tests of the module.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use update_status_api::crd::{
    Assessment, ConditionStatus, ImpactLevel, ImpactType, InsightType, NodeCounts, NodePhase,
    ScopeType, UpdateInsightStatus,
};
use update_status_api::input::{
    ClusterVersion, MCO_PREFIX, MachineConfig, MachineConfigPool, Node, POOL_LAYERING_ENABLED,
    POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG,
};

use super::constants::{REASON_MCD_PROCESSING, REASON_UNSCHEDULABLE};
use super::*;
use crate::format::ellipsize;
use crate::inputs::ClusterInputs;
use crate::test_support::{label_selector, mc, pool};

const OLD: &str = "rendered-worker-old";
const NEW: &str = "rendered-worker-new";
const M_OLD: &str = "rendered-master-old";
const M_NEW: &str = "rendered-master-new";
const WORKER_LABEL: &str = "node-role.kubernetes.io/worker";
const MASTER_LABEL: &str = "node-role.kubernetes.io/master";

fn ts(s: &str) -> Timestamp {
    s.parse().expect("timestamp")
}

fn now() -> Timestamp {
    ts("2024-01-01T12:00:00Z")
}

fn ago(secs: i64) -> String {
    now()
        .checked_sub(SignedDuration::from_secs(secs))
        .expect("in range")
        .to_string()
}

fn cv_with(history: Value, progressing: &str) -> ClusterVersion {
    serde_json::from_value(json!({
        "metadata": {"name": "version"},
        "status": {
            "history": history,
            "conditions": [{"type": "Progressing", "status": progressing}]
        }
    }))
    .expect("cv")
}

fn cv() -> ClusterVersion {
    cv_with(
        json!([
            {"state": "Partial", "version": "4.2", "image": "img-b"},
            {"state": "Completed", "version": "4.1", "image": "img-a"}
        ]),
        "True",
    )
}

fn mcs() -> Vec<MachineConfig> {
    vec![
        mc(OLD, Some("4.1")),
        mc(NEW, Some("4.2")),
        mc(M_OLD, Some("4.1")),
        mc(M_NEW, Some("4.2")),
        mc("rendered-worker-unannotated", None),
    ]
}

fn pools(worker_paused: bool) -> Vec<MachineConfigPool> {
    vec![
        pool("worker", NEW, label_selector(WORKER_LABEL), worker_paused),
        pool("master", M_NEW, label_selector(MASTER_LABEL), false),
    ]
}

fn ctx() -> NodeContext {
    NodeContext::new(Some(&cv()), &pools(false), &mcs())
}

/// A worker node with MCO annotations (`key` without the prefix), Ready=True.
fn node(name: &str, ann: &[(&str, &str)]) -> Node {
    crate::test_support::node(
        name,
        &[WORKER_LABEL],
        ann,
        vec![
            json!({"type": "Ready", "status": "True", "lastTransitionTime": "2023-01-01T00:00:00Z"}),
            json!({"type": "DiskPressure", "status": "False"}),
            json!({"type": "NetworkUnavailable", "status": "False"}),
        ],
    )
}

fn conditions(mut n: Node, conds: Value) -> Node {
    n.status.conditions = serde_json::from_value(conds).expect("conditions");
    n
}

fn cordoned(mut n: Node) -> Node {
    n.spec.unschedulable = true;
    n
}

fn in_master(mut n: Node) -> Node {
    n.metadata.labels = Some([(MASTER_LABEL.to_string(), String::new())].into());
    n
}

fn without(mut n: Node, keys: &[&str]) -> Node {
    if let Some(a) = n.metadata.annotations.as_mut() {
        for k in keys {
            a.remove(&format!("{MCO_PREFIX}{k}"));
        }
    }
    n
}

fn pending(name: &str) -> Node {
    node(
        name,
        &[
            ("currentConfig", OLD),
            ("desiredConfig", OLD),
            ("state", "Done"),
            ("desiredDrain", "uncordon-rendered-worker-old"),
            ("lastAppliedDrain", "uncordon-rendered-worker-old"),
        ],
    )
}

fn draining(name: &str) -> Node {
    cordoned(node(
        name,
        &[
            ("currentConfig", OLD),
            ("desiredConfig", NEW),
            ("state", "Working"),
            ("desiredDrain", "drain-rendered-worker-new"),
            ("lastAppliedDrain", "uncordon-rendered-worker-old"),
        ],
    ))
}

fn updating(name: &str, state: &str) -> Node {
    cordoned(node(
        name,
        &[
            ("currentConfig", OLD),
            ("desiredConfig", NEW),
            ("state", state),
            ("desiredDrain", "drain-rendered-worker-new"),
            ("lastAppliedDrain", "drain-rendered-worker-new"),
        ],
    ))
}

fn updated(name: &str) -> Node {
    node(
        name,
        &[
            ("currentConfig", NEW),
            ("desiredConfig", NEW),
            ("state", "Done"),
            ("desiredDrain", "uncordon-rendered-worker-new"),
            ("lastAppliedDrain", "uncordon-rendered-worker-new"),
        ],
    )
}

fn assess(n: &Node) -> NodeAssessment {
    assess_with(&ctx(), n)
}

fn assess_with(ctx: &NodeContext, n: &Node) -> NodeAssessment {
    let a = assess_node(ctx, n, now()).expect("node in a pool");
    check_invariants(&a);
    a
}

/// Contract invariants of every node assessment.
fn check_invariants(a: &NodeAssessment) {
    let p = a.progress.progress.as_ref().expect("progress");
    let updating = &p.conditions[0];
    assert_eq!(updating.type_, "Updating");
    assert_eq!(updating.reason, a.phase.as_str());
    assert_eq!(
        a.is_updated,
        updating.status == ConditionStatus::False && a.phase == NodePhase::Updated,
        "isUpdated ⇔ Updating=False ∧ phase Updated"
    );
    assert_eq!(p.conditions[1].type_, "Available");
    assert_eq!(
        p.conditions[1].status == ConditionStatus::False,
        a.is_unavailable
    );
    assert_eq!(p.conditions[2].type_, "Degraded");
    assert_eq!(
        p.conditions[2].status == ConditionStatus::True,
        a.is_degraded
    );
    assert_eq!(a.progress.type_, InsightType::Progress);
    assert_eq!(a.progress.resource.kind, "Node");
    assert_eq!(a.progress.resource.group, "");
    for h in &a.health {
        assert_eq!(h.resource, a.progress.resource);
        assert_eq!(h.scope, a.progress.scope);
    }
}

/// (assessment, phase, version, estimate, message).
fn row(a: &NodeAssessment) -> (Assessment, NodePhase, String, String, String) {
    let p = a.progress.progress.as_ref().expect("progress");
    (
        p.assessment,
        p.phase.expect("phase"),
        p.version.as_ref().expect("version").current.clone(),
        p.estimate.clone(),
        p.message.clone(),
    )
}

fn r(
    a: Assessment,
    p: NodePhase,
    v: &str,
    est: &str,
    msg: &str,
) -> (Assessment, NodePhase, String, String, String) {
    (a, p, v.into(), est.into(), msg.into())
}

fn sources(a: &NodeAssessment) -> Vec<&str> {
    a.health
        .iter()
        .filter_map(|h| h.health.as_ref().map(|h| h.source.as_str()))
        .collect()
}

// ---- G.23–G.35: single nodes -----------------------------------------------------------

#[test]
fn g23_pending_node() {
    let a = assess(&pending("a"));
    assert_eq!(
        row(&a),
        r(Assessment::Outdated, NodePhase::Pending, "4.1", "?", "")
    );
    assert!(a.health.is_empty());
    assert!(!a.is_updating && !a.is_updated && !a.is_unavailable);
}

#[test]
fn g24_draining_node() {
    let a = assess(&draining("a"));
    assert_eq!(
        row(&a),
        r(
            Assessment::Progressing,
            NodePhase::Draining,
            "4.1",
            "+10m",
            ""
        )
    );
    assert!(a.is_unavailable, "cordoned");
    assert!(a.health.is_empty());
}

#[test]
fn g25_drain_applied_but_mcd_still_done_while_updating_is_draining() {
    let a = assess(&updating("a", "Done"));
    assert_eq!(a.phase, NodePhase::Draining);
    assert_eq!(a.assessment, Assessment::Progressing);
    assert_eq!(row(&a).3, "+10m");
}

#[test]
fn g26_updating_and_rebooting() {
    assert_eq!(
        row(&assess(&updating("a", "Working"))),
        r(
            Assessment::Progressing,
            NodePhase::Updating,
            "4.1",
            "+5m",
            ""
        )
    );
    assert_eq!(
        row(&assess(&updating("a", "Rebooting"))),
        r(
            Assessment::Progressing,
            NodePhase::Rebooting,
            "4.1",
            "+5m",
            ""
        )
    );
    // Any other state while updating reads as Updating (C.7).
    assert_eq!(assess(&updating("a", "Weird")).phase, NodePhase::Updating);
    assert_eq!(
        assess(&without(updating("a", "x"), &["state"])).phase,
        NodePhase::Updating
    );
}

#[test]
fn g27_updated_node() {
    let a = assess(&updated("a"));
    assert_eq!(
        row(&a),
        r(Assessment::Completed, NodePhase::Updated, "4.2", "-", "")
    );
    assert!(a.is_updated && !a.is_updating && a.health.is_empty());
}

#[test]
fn g28_degraded_while_draining() {
    let mut n = draining("a");
    n.metadata
        .annotations
        .as_mut()
        .expect("annotations")
        .extend([
            (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
            (
                format!("{MCO_PREFIX}reason"),
                "PDB prohibits draining".to_string(),
            ),
        ]);
    let a = assess(&n);
    assert_eq!(
        row(&a),
        r(
            Assessment::Degraded,
            NodePhase::Draining,
            "4.1",
            "?",
            "PDB prohibits draining"
        )
    );
    assert_eq!(sources(&a), [SOURCE_NODE_DEGRADED]);
    let h = a.health[0].health.as_ref().expect("health");
    assert_eq!(h.impact.level, ImpactLevel::Error);
    assert_eq!(h.impact.type_, ImpactType::UpdateStalled);
    assert_eq!(h.impact.summary, "Node a is degraded");
    assert_eq!(h.impact.description, "PDB prohibits draining");
    assert_eq!(h.remediation.reference, MCO_REFERENCE);
    assert_eq!(h.started_at, None);
}

#[test]
fn g29_updated_node_missing_desired_config() {
    let a = assess(&without(updated("a"), &["desiredConfig"]));
    assert_eq!(
        row(&a),
        r(
            Assessment::Unavailable,
            NodePhase::Updated,
            "4.2",
            "-",
            REASON_MCD_PROCESSING
        )
    );
    assert!(a.health.is_empty());
}

#[test]
fn g30_missing_current_config() {
    let a = assess(&without(updated("a"), &["currentConfig"]));
    assert_eq!(
        row(&a),
        r(
            Assessment::Unavailable,
            NodePhase::Pending,
            "",
            "?",
            REASON_MCD_PROCESSING
        )
    );
}

#[test]
fn g31_draining_without_drain_annotations_is_updating() {
    for key in ["desiredDrain", "lastAppliedDrain"] {
        let a = assess(&without(draining("a"), &[key]));
        assert_eq!(
            row(&a),
            r(
                Assessment::Progressing,
                NodePhase::Updating,
                "4.1",
                "+5m",
                ""
            ),
            "{key}"
        );
    }
    // An uncordon request differing from the applied one is not a drain.
    let mut n = draining("a");
    n.metadata
        .annotations
        .as_mut()
        .expect("annotations")
        .insert(
            format!("{MCO_PREFIX}desiredDrain"),
            "uncordon-rendered-worker-new".into(),
        );
    assert_eq!(assess(&n).phase, NodePhase::Updating);
}

#[test]
fn g32_missing_state() {
    let a = assess(&without(pending("a"), &["state"]));
    assert_eq!(
        row(&a),
        r(
            Assessment::Unavailable,
            NodePhase::Pending,
            "4.1",
            "?",
            REASON_MCD_PROCESSING
        )
    );
    let a = assess(&without(draining("a"), &["state"]));
    assert_eq!(a.phase, NodePhase::Draining);
    assert_eq!(a.assessment, Assessment::Progressing);
    let a = assess(&without(updated("a"), &["state"]));
    assert_eq!(
        row(&a),
        r(
            Assessment::Unavailable,
            NodePhase::Updated,
            "4.2",
            "-",
            REASON_MCD_PROCESSING
        )
    );
}

#[test]
fn g33_updating_node_missing_two_annotations() {
    for keys in [
        ["desiredConfig", "state"],
        ["currentConfig", "state"],
        ["currentConfig", "desiredConfig"],
    ] {
        let a = assess(&without(updating("a", "Working"), &keys));
        let version = if keys.contains(&"currentConfig") {
            ""
        } else {
            "4.1"
        };
        assert_eq!(
            row(&a),
            r(
                Assessment::Unavailable,
                NodePhase::Pending,
                version,
                "?",
                REASON_UNSCHEDULABLE
            ),
            "{keys:?}"
        );
        assert!(a.health.is_empty(), "unschedulable alone is not serious");
    }
}

#[test]
fn g34_node_without_mcd_annotations() {
    let a = assess(&node("a", &[]));
    assert_eq!(
        row(&a),
        r(
            Assessment::Unavailable,
            NodePhase::Pending,
            "",
            "?",
            REASON_MCD_PROCESSING
        )
    );
    assert!(a.health.is_empty());
}

#[test]
fn g35_updated_but_unschedulable() {
    let a = assess(&cordoned(updated("a")));
    assert_eq!(
        row(&a),
        r(
            Assessment::Unavailable,
            NodePhase::Updated,
            "4.2",
            "-",
            REASON_UNSCHEDULABLE
        )
    );
    assert!(a.health.is_empty());
}

// ---- G.36–G.40: ordering and pools -----------------------------------------------------

#[test]
fn g36_sort_order() {
    let mut degraded = pending("d");
    degraded
        .metadata
        .annotations
        .as_mut()
        .expect("ann")
        .extend([
            (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
            (format!("{MCO_PREFIX}reason"), "boom".to_string()),
        ]);
    let nodes = [
        updated("a-completed"),
        pending("b-outdated"),
        updating("c-updating", "Working"),
        draining("z-draining"),
        updating("b-rebooting", "Rebooting"),
        without(pending("y-unavailable"), &["state"]),
        cordoned(updated("x-unavailable-updated")),
        degraded,
    ];
    let mut insights: Vec<UpdateInsightStatus> = nodes.iter().map(|n| assess(n).progress).collect();
    insights.sort_by(compare_node_insights);
    let names: Vec<&str> = insights.iter().map(|i| i.resource.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "d",
            "y-unavailable",
            "x-unavailable-updated",
            "z-draining",
            "c-updating",
            "b-rebooting",
            "b-outdated",
            "a-completed"
        ]
    );
    assert!(node_sort_key(&insights[0]) < node_sort_key(&insights[1]));
}

#[test]
fn g37_unavailable_insight_scope_and_start() {
    let since = ago(600);
    let not_ready = json!([{"type": "Ready", "status": "False", "message": "kubelet down", "lastTransitionTime": since}]);
    let worker = assess(&conditions(pending("worker-1"), not_ready.clone()));
    let master_node = in_master(node(
        "master-1",
        &[
            ("currentConfig", M_OLD),
            ("desiredConfig", M_OLD),
            ("state", "Done"),
        ],
    ));
    let master = assess(&conditions(master_node, not_ready));
    for (a, scope, pool) in [
        (&worker, ScopeType::WorkerPool, "worker"),
        (&master, ScopeType::ControlPlane, "master"),
    ] {
        assert_eq!(a.assessment, Assessment::Unavailable);
        assert_eq!(a.progress.scope.type_, scope);
        assert_eq!(a.progress.scope.pool.as_deref(), Some(pool));
        assert_eq!(sources(a), [SOURCE_NODE_UNAVAILABLE]);
        let h = a.health[0].health.as_ref().expect("health");
        assert_eq!(h.started_at, Some(ts(&since)));
        assert_eq!(h.impact.level, ImpactLevel::Warning);
        assert_eq!(h.impact.type_, ImpactType::UpdateSpeed);
        assert_eq!(h.impact.summary, format!("Node {} is not ready", a.name));
        assert_eq!(
            h.impact.description,
            r#"Node has a Ready!=True condition with Reason "Not ready" and message "kubelet down""#
        );
        assert_eq!(h.remediation.reference, MCO_REFERENCE);
        // Rule N (this used to stay empty): the node's pool and target MachineConfig.
        let related: Vec<(&str, &str)> = h
            .related
            .iter()
            .map(|r| (r.kind.as_str(), r.name.as_str()))
            .collect();
        let target = if pool == "master" { M_OLD } else { OLD };
        assert_eq!(
            related,
            [("MachineConfigPool", pool), ("MachineConfig", target)]
        );
        assert_eq!(h.related_omitted, 0);
        assert_eq!(a.health[0].scope.type_, scope);
    }
    assert!(master.is_master && !worker.is_master);
}

fn pool_of(nodes: &[Node], ctx: &NodeContext, name: &str) -> PoolAssessment {
    let assessed: Vec<NodeAssessment> = nodes
        .iter()
        .filter_map(|n| assess_node(ctx, n, now()))
        .collect();
    aggregate_pool(ctx, ctx.pool(name).expect("pool"), &assessed)
}

#[test]
fn g38_updating_unavailable_plus_completed() {
    let p = pool_of(&[updating("a", "Working"), updated("b")], &ctx(), "worker");
    assert_eq!(p.status.assessment, Assessment::Progressing);
    assert_eq!(p.status.completion_percent, 50);
    let n = &p.status.nodes;
    assert_eq!(
        (n.total, n.updated, n.available, n.progressing, n.outdated),
        (2, 1, 1, 1, 1)
    );
    assert_eq!(p.status.conditions[0].type_, "Updating");
    assert_eq!(p.status.conditions[0].status, ConditionStatus::True);
    assert_eq!(p.status.conditions[1].type_, "Healthy");
    assert_eq!(p.status.conditions[1].status, ConditionStatus::True);
}

#[test]
fn g39_one_degraded_draining_node() {
    let mut n = draining("a");
    n.metadata.annotations.as_mut().expect("ann").extend([
        (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
        (format!("{MCO_PREFIX}reason"), "PDB".to_string()),
    ]);
    let p = pool_of(&[n], &ctx(), "worker");
    assert_eq!(p.status.assessment, Assessment::Degraded);
    let c = &p.status.nodes;
    assert_eq!(
        (
            c.draining,
            c.outdated,
            c.progressing,
            c.available,
            c.degraded
        ),
        (1, 1, 0, 0, 1)
    );
    assert_eq!(p.status.health_insights.error, 1);
    assert_eq!(p.status.conditions[1].status, ConditionStatus::False);
    assert_eq!(p.status.conditions[1].reason, "ErrorInsights");
}

#[test]
fn g40_completed_paused_and_pending_pools() {
    let p = pool_of(&[updated("a"), updated("b")], &ctx(), "worker");
    assert_eq!(p.status.assessment, Assessment::Completed);
    assert_eq!(p.status.completion_percent, 100);
    assert_eq!(p.status.conditions[0].status, ConditionStatus::False);

    let paused_ctx = NodeContext::new(Some(&cv()), &pools(true), &mcs());
    let p = pool_of(&[pending("a")], &paused_ctx, "worker");
    let a = assess_with(&paused_ctx, &pending("a"));
    assert_eq!(
        row(&a),
        r(Assessment::Excluded, NodePhase::Paused, "4.1", "-", "")
    );
    assert_eq!(p.status.assessment, Assessment::Excluded);
    assert!(p.status.paused);
    assert_eq!((p.status.nodes.excluded, p.status.nodes.outdated), (1, 1));
    let d8: Vec<_> = p.insights.iter().filter(|i| i.health.is_some()).collect();
    assert_eq!(d8.len(), 1);
    let i = d8[0];
    assert_eq!(i.scope.type_, ScopeType::WorkerPool);
    assert_eq!(i.scope.pool.as_deref(), Some("worker"));
    assert_eq!(i.resource.kind, "MachineConfigPool");
    assert_eq!(i.resource.group, "machineconfiguration.openshift.io");
    let h = i.health.as_ref().expect("health");
    assert_eq!(h.source, SOURCE_POOL_PAUSED);
    assert_eq!(h.impact.level, ImpactLevel::Warning);
    assert_eq!(h.impact.type_, ImpactType::UpdateStalled);
    assert_eq!(
        h.impact.summary,
        "Outdated nodes in a paused pool 'worker' will not be updated"
    );
    assert_eq!(h.impact.description, PAUSED_POOL_DESCRIPTION);
    assert_eq!(h.remediation.reference, PAUSED_POOL_REFERENCE);
    assert_eq!(h.started_at, None);
    assert_eq!(p.status.health_insights.warning, 1);
    // Last in the pool's insights.
    assert!(p.insights.last().is_some_and(|l| l.health.is_some()));

    // A paused pool whose nodes are all updated has no D.8.
    let p = pool_of(&[updated("a")], &paused_ctx, "worker");
    assert!(p.insights.iter().all(|i| i.health.is_none()));

    let p = pool_of(&[pending("a"), pending("b")], &ctx(), "worker");
    assert_eq!(p.status.assessment, Assessment::Pending);
    assert_eq!(p.status.nodes.pending, 2);
    assert!(p.insights.iter().all(|i| i.health.is_none()));
}

// ---- G.41–G.44: availability details ----------------------------------------------------

#[test]
fn g41_unavailable_since_is_the_earliest_known_ltt() {
    let n = conditions(
        pending("a"),
        json!([
            {"type": "Ready", "status": "False", "lastTransitionTime": ago(100)},
            {"type": "DiskPressure", "status": "True", "lastTransitionTime": ago(300)},
            {"type": "NetworkUnavailable", "status": "True"}
        ]),
    );
    let pool = PoolContext::new(&pools(false)[0]);
    let av = Availability::of(&n, &pool);
    assert_eq!(av.since(), Some(ts(&ago(300))));
    let av = Availability::of(&cordoned(updated("a")), &pool);
    assert_eq!(av.since(), None);
    let a = assess(&cordoned(updated("a")));
    let p = a.progress.progress.as_ref().expect("progress");
    assert_eq!(p.conditions[1].last_transition_time, None);
}

#[test]
fn g42_texts_are_joined() {
    let n = cordoned(conditions(
        pending("node-name"),
        json!([
            {"type": "Ready", "status": "Unknown", "message": "kubelet stopped posting"},
            {"type": "MemoryPressure", "status": "True"},
            {"type": "DiskPressure", "status": "True", "message": "disk pressure"},
            {"type": "NetworkUnavailable", "status": "Unknown", "message": "no \"route\""}
        ]),
    ));
    let pool = PoolContext::new(&pools(false)[0]);
    let av = Availability::of(&n, &pool);
    assert!(av.is_unavailable);
    assert_eq!(
        av.reason(),
        "Not ready | Disk pressure | Network unavailable | Node is marked unschedulable"
    );
    assert_eq!(
        av.message("node-name"),
        "Node node-name is not ready | Node node-name has disk pressure | Node node-name has unavailable network | Node is marked unschedulable"
    );
    assert_eq!(
        av.description(),
        r#"Node has a Ready!=True condition with Reason "Not ready" and message "kubelet stopped posting" | Node has a DiskPressure!=False condition with Reason "Disk pressure" and message "disk pressure" | Node has a NetworkUnavailable!=False condition with Reason "Network unavailable" and message "no \"route\"" | Node is marked unschedulable"#
    );
    // The node table shows the raw reasons; the Available condition carries them too.
    let a = assess(&n);
    assert_eq!(row(&a).4, av.reason());
    let p = a.progress.progress.as_ref().expect("progress");
    assert_eq!(p.conditions[1].reason, "Unavailable");
    assert_eq!(p.conditions[1].message, av.reason());
}

#[test]
fn g43_seriously_unavailable() {
    let av = |bad: Vec<BadCondition>| Availability {
        bad,
        is_unavailable: true,
    };
    let t = |secs| Some(ts(&ago(secs)));
    let disk = |secs| BadCondition::DiskPressure(String::new(), t(secs));
    let net = |secs| BadCondition::NetworkUnavailable(String::new(), t(secs));
    let ready = |secs| BadCondition::NotReady(String::new(), t(secs));
    let cases = [
        (vec![BadCondition::UnexpectedImage("x".into())], true),
        (vec![disk(120)], true),
        (vec![disk(30)], false),
        (vec![disk(30), net(120)], true),
        (vec![net(59)], false),
        (vec![net(60)], true),
        (vec![ready(240)], false),
        (vec![ready(299)], false),
        (vec![ready(300)], true),
        (vec![ready(360)], true),
        (vec![BadCondition::NotReady(String::new(), None)], true),
        (vec![BadCondition::Unschedulable], false),
        (vec![BadCondition::McdProcessing], false),
        (vec![BadCondition::Unschedulable, ready(10)], false),
        (vec![], false),
    ];
    for (bad, serious) in cases {
        assert_eq!(
            av(bad.clone()).seriously_unavailable(now()),
            serious,
            "{bad:?}"
        );
    }
    // When it flips by time alone.
    assert_eq!(av(vec![disk(30)]).serious_at(now()), t(-30));
    assert_eq!(av(vec![ready(180), disk(50)]).serious_at(now()), t(-10));
    assert_eq!(av(vec![ready(400)]).serious_at(now()), None);
    assert_eq!(
        av(vec![BadCondition::Unschedulable]).serious_at(now()),
        None
    );
}

// ---- USC G.56–G.58 that apply ------------------------------------------------------------

#[test]
fn g56_available_condition() {
    let a = assess(&node("a", &[]));
    let c = &a.progress.progress.as_ref().expect("progress").conditions[1];
    assert_eq!(c.status, ConditionStatus::False);
    assert_eq!(c.reason, "Unavailable");
    assert_eq!(c.message, REASON_MCD_PROCESSING);
    assert_eq!(c.last_transition_time, None);

    let since = ago(180);
    let n = conditions(
        pending("a"),
        json!([{"type": "Ready", "status": "False", "lastTransitionTime": since}]),
    );
    let a = assess(&n);
    let c = &a.progress.progress.as_ref().expect("progress").conditions[1];
    assert_eq!(c.status, ConditionStatus::False);
    assert_eq!(c.message, "Not ready");
    assert_eq!(c.last_transition_time, Some(ts(&since)));
    assert!(a.health.is_empty(), "3 min is below the 5 min threshold");
    assert!(!a.seriously_unavailable);
    // Time alone makes it serious in 2 minutes.
    assert_eq!(
        node_requeue_after(&ctx(), &n, now()),
        Some(SignedDuration::from_secs(120))
    );
    assert_eq!(a.requeue_after(now()), Some(SignedDuration::from_secs(120)));
    let later = now()
        .checked_add(SignedDuration::from_secs(120))
        .expect("in range");
    let a = assess_node(&ctx(), &n, later).expect("in pool");
    assert_eq!(sources(&a), [SOURCE_NODE_UNAVAILABLE]);
    assert_eq!(node_requeue_after(&ctx(), &n, later), None);

    // Healthy node: Available=True/AsExpected.
    let a = assess(&updated("a"));
    let c = &a.progress.progress.as_ref().expect("progress").conditions[1];
    assert_eq!(
        (c.status, c.reason.as_str()),
        (ConditionStatus::True, "AsExpected")
    );
    assert_eq!(node_requeue_after(&ctx(), &updated("a"), now()), None);
}

#[test]
fn g57_degraded_node_not_updating() {
    let mut n = pending("a");
    n.metadata.annotations.as_mut().expect("ann").extend([
        (format!("{MCO_PREFIX}state"), "Unreconcilable".to_string()),
        (format!("{MCO_PREFIX}reason"), "bad config".to_string()),
    ]);
    let a = assess(&n);
    assert_eq!(
        row(&a),
        r(
            Assessment::Degraded,
            NodePhase::Pending,
            "4.1",
            "?",
            "bad config"
        )
    );
    let p = a.progress.progress.as_ref().expect("progress");
    assert_eq!(
        (p.conditions[0].status, p.conditions[0].reason.as_str()),
        (ConditionStatus::False, "Pending")
    );
    assert_eq!(p.conditions[2].status, ConditionStatus::True);
    assert_eq!(p.conditions[2].reason, "Degraded");
    assert_eq!(p.conditions[2].message, "bad config");
    assert_eq!(sources(&a), [SOURCE_NODE_DEGRADED]);
    // Degraded state makes the MCD "terminal": the node is available.
    assert!(!a.is_unavailable);

    // Degraded without a reason: the D.7 insight is incomplete and dropped (D.0).
    let n = without(n, &["reason"]);
    let a = assess(&n);
    assert!(a.is_degraded && a.health.is_empty());
    // Degraded state without desiredConfig is not degraded (C.5).
    let a = assess(&without(n, &["desiredConfig"]));
    assert!(!a.is_degraded);
}

#[test]
fn g58_membership_and_invalid_selectors() {
    let mut lonely = pending("a");
    lonely.metadata.labels = None;
    assert!(assess_node(&ctx(), &lonely, now()).is_none());
    assert!(node_requeue_after(&ctx(), &lonely, now()).is_none());

    let mut both = pending("b");
    both.metadata.labels = Some(
        [
            (WORKER_LABEL.to_string(), String::new()),
            ("infra".to_string(), String::new()),
            ("gpu".to_string(), String::new()),
        ]
        .into(),
    );
    let mut ps = pools(false);
    ps.push(pool("infra", NEW, label_selector("infra"), false));
    ps.push(pool("gpu", NEW, label_selector("gpu"), false));
    let c = NodeContext::new(Some(&cv()), &ps, &mcs());
    assert_eq!(assess_with(&c, &both).pool, "gpu", "custom pools by name");
    let names: Vec<&str> = c.pools().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["worker", "master", "infra", "gpu"], "list order");

    // Master wins over everything.
    let mut m = both.clone();
    m.metadata
        .labels
        .as_mut()
        .expect("labels")
        .insert(MASTER_LABEL.into(), String::new());
    let a = assess_with(&c, &m);
    assert_eq!(a.pool, "master");
    assert_eq!(a.progress.scope.type_, ScopeType::ControlPlane);

    // Invalid or missing selectors select nothing.
    let mut ps = pools(false);
    ps.push(pool(
        "gpu",
        NEW,
        json!({"matchExpressions": [{"key": "gpu", "operator": "In", "values": []}]}),
        false,
    ));
    ps.push(pool(
        "infra",
        NEW,
        json!({"matchExpressions": [{"key": "infra", "operator": "Exists", "values": ["x"]}]}),
        false,
    ));
    let mut no_selector = pool("zzz", NEW, Value::Null, false);
    no_selector.spec.node_selector = None;
    ps.push(no_selector);
    let c = NodeContext::new(Some(&cv()), &ps, &mcs());
    assert_eq!(assess_with(&c, &both).pool, "worker");
    let mut only_custom = both.clone();
    only_custom.metadata.labels = Some([("gpu".to_string(), String::new())].into());
    assert!(assess_node(&c, &only_custom, now()).is_none());
    // A valid matchExpressions selector works.
    let mut ps = pools(false);
    ps.push(pool(
        "gpu",
        NEW,
        json!({"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}),
        false,
    ));
    let c = NodeContext::new(Some(&cv()), &ps, &mcs());
    assert_eq!(assess_with(&c, &only_custom).pool, "gpu");
}

// ---- Further edge cases ------------------------------------------------------------------

#[test]
fn no_cluster_version_means_nothing_is_updated_or_updating() {
    let c = NodeContext::new(None, &pools(false), &mcs());
    assert_eq!(c.target_version, "");
    for n in [updated("a"), updating("b", "Working"), draining("c")] {
        let a = assess_with(&c, &n);
        assert!(!a.is_updated && !a.is_updating, "{}", a.name);
        assert_eq!(
            a.progress
                .progress
                .as_ref()
                .expect("p")
                .version
                .as_ref()
                .expect("v")
                .target,
            ""
        );
    }
    // Empty history too.
    let c = NodeContext::new(Some(&cv_with(json!([]), "True")), &pools(false), &mcs());
    assert!(!assess_with(&c, &updated("a")).is_updated);
}

#[test]
fn unknown_machine_configs_and_malformed_annotations() {
    let n = node(
        "a",
        &[
            ("currentConfig", "rendered-worker-unannotated"),
            ("desiredConfig", "does-not-exist"),
            ("state", ""),
            ("desiredDrain", "drain"),
            ("lastAppliedDrain", ""),
        ],
    );
    let a = assess(&n);
    assert_eq!(a.current_version, "");
    assert_eq!(a.phase, NodePhase::Pending);
    assert_eq!(a.assessment, Assessment::Unavailable);
    // Node without conditions or annotations at all, and without a name.
    let bare: Node = serde_json::from_value(json!({
        "metadata": {"name": "bare", "labels": {WORKER_LABEL: ""}}
    }))
    .expect("node");
    assert_eq!(assess(&bare).assessment, Assessment::Unavailable);
    let mut unnamed = bare.clone();
    unnamed.metadata.name = None;
    assert!(assess_node(&ctx(), &unnamed, now()).is_none());
    // Pool without configuration: nothing is "the pool target" unless desired is absent too.
    let mut ps = pools(false);
    ps[0].spec.configuration.name = String::new();
    let c = NodeContext::new(Some(&cv()), &ps, &mcs());
    assert!(!assess_with(&c, &updating("u", "Working")).is_updating);
    // Unnamed pools and duplicated pools do not break anything.
    let mut ps = pools(false);
    ps.push(pool("", NEW, json!({}), false));
    ps.push(pool("worker", OLD, label_selector("nothing"), true));
    let c = NodeContext::new(Some(&cv()), &ps, &mcs());
    assert_eq!(c.pools().len(), 2);
    assert_eq!(
        c.pool("worker").map(|p| p.configuration.as_str()),
        Some(NEW)
    );
}

#[test]
fn multi_arch_migration() {
    let history = json!([
        {"state": "Partial", "version": "4.2", "image": "img-multi"},
        {"state": "Completed", "version": "4.2", "image": "img-amd64"}
    ]);
    let c = NodeContext::new(
        Some(&cv_with(history.clone(), "True")),
        &pools(false),
        &mcs(),
    );
    assert!(c.multi_arch_migration);
    // Same version, new config: not updated until current == desired == pool target.
    let mut ms = mcs();
    ms.push(mc("rendered-worker-multi", Some("4.2")));
    let mut ps = pools(false);
    ps[0].spec.configuration.name = "rendered-worker-multi".into();
    let c = NodeContext::new(Some(&cv_with(history.clone(), "True")), &ps, &ms);
    let n = node(
        "a",
        &[
            ("currentConfig", NEW),
            ("desiredConfig", "rendered-worker-multi"),
            ("state", "Working"),
        ],
    );
    let a = assess_with(&c, &n);
    assert!(!a.is_updated && a.is_updating);
    assert_eq!(a.phase, NodePhase::Updating);
    let done = node(
        "b",
        &[
            ("currentConfig", "rendered-worker-multi"),
            ("desiredConfig", "rendered-worker-multi"),
            ("state", "Done"),
        ],
    );
    assert!(assess_with(&c, &done).is_updated);
    // Without desiredConfig the version alone decides.
    assert!(assess_with(&c, &without(n.clone(), &["desiredConfig"])).is_updated);
    // Not progressing: no migration, the version alone decides.
    let c = NodeContext::new(Some(&cv_with(history, "False")), &ps, &ms);
    assert!(!c.multi_arch_migration);
    assert!(assess_with(&c, &n).is_updated);
}

#[test]
fn layered_pools() {
    let layered = |image: &str| {
        let mut p = pools(false);
        p[0].metadata.labels = Some([(POOL_LAYERING_ENABLED.to_string(), String::new())].into());
        p[0].metadata.annotations = Some(
            [(
                POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG.to_string(),
                image.to_string(),
            )]
            .into(),
        );
        NodeContext::new(Some(&cv()), &p, &mcs())
    };
    let processing = |image: Option<&str>| {
        let mut ann = vec![("currentConfig", OLD), ("desiredConfig", OLD)];
        if let Some(i) = image {
            ann.push(("desiredImage", i));
        }
        node("a", &ann)
    };
    // Layered pool with an image: the node's desired image must be it.
    let c = layered("img-1");
    let a = assess_with(&c, &processing(Some("img-1")));
    assert!(a.is_unavailable);
    let a = assess_with(&c, &processing(Some("img-2")));
    assert!(
        !a.is_unavailable,
        "unexpected image makes the node available"
    );
    let pool = c.pool("worker").expect("pool");
    let av = Availability::of(&processing(Some("img-2")), pool);
    assert_eq!(
        av.bad.last().map(BadCondition::reason).as_deref(),
        Some(
            "Node has an unexpected annotation machineconfiguration.openshift.io/newestImageEquivalentConfig=img-1"
        )
    );
    // Layered label with an empty image, or no label: desired image must be absent or empty.
    for c in [layered(""), ctx()] {
        assert!(assess_with(&c, &processing(None)).is_unavailable);
        assert!(assess_with(&c, &processing(Some(""))).is_unavailable);
        assert!(!assess_with(&c, &processing(Some("img-1"))).is_unavailable);
    }
    // Image "done" needs both image annotations equal and non-empty.
    let mut done = updated("d");
    done.metadata.annotations.as_mut().expect("ann").extend([
        (format!("{MCO_PREFIX}currentImage"), "img-1".to_string()),
        (format!("{MCO_PREFIX}desiredImage"), "img-1".to_string()),
    ]);
    assert!(!assess_with(&layered("img-1"), &done).is_unavailable);
    let half = without(done, &["currentImage"]);
    assert!(assess_with(&layered("img-1"), &half).is_unavailable);
}

#[test]
fn unavailable_and_degraded_node_gets_both_insights() {
    let mut n = conditions(
        pending("node-xyz"),
        json!([{"type": "Ready", "status": "False", "lastTransitionTime": ago(3600)}]),
    );
    n.metadata.annotations.as_mut().expect("ann").extend([
        (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
        (format!("{MCO_PREFIX}reason"), "disk full".to_string()),
    ]);
    let a = assess(&n);
    assert_eq!(a.assessment, Assessment::Degraded);
    assert_eq!(row(&a).4, "disk full");
    assert_eq!(sources(&a), [SOURCE_NODE_UNAVAILABLE, SOURCE_NODE_DEGRADED]);
    let d6 = a.health[0].health.as_ref().expect("health");
    assert_eq!(d6.impact.summary, "Node node-xyz is not ready");
    assert_eq!(d6.impact.description, "disk full");
    assert_eq!(d6.started_at, Some(ts(&ago(3600))));
}

#[test]
fn updating_unavailable_node_has_no_unavailable_insight() {
    let n = conditions(
        updating("a", "Rebooting"),
        json!([{"type": "Ready", "status": "False", "lastTransitionTime": ago(3600)}]),
    );
    let a = assess(&n);
    assert!(a.is_unavailable && a.is_updating && a.seriously_unavailable);
    assert_eq!(a.assessment, Assessment::Progressing);
    assert!(a.health.is_empty());
    assert_eq!(node_requeue_after(&ctx(), &n, now()), None);
}

#[test]
fn long_texts_are_cut_to_the_schema() {
    let long_name = "n".repeat(253);
    let mut n = pending(&long_name);
    n.metadata.annotations.as_mut().expect("ann").extend([
        (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
        (format!("{MCO_PREFIX}reason"), "é".repeat(40_000)),
    ]);
    let a = assess(&n);
    let h = a.health[0].health.as_ref().expect("health");
    assert_eq!(h.impact.summary.chars().count(), 256);
    assert!(h.impact.summary.ends_with("..."));
    assert_eq!(h.impact.description.chars().count(), 32768);
    assert!(h.impact.description.ends_with("too long to store]"));
    let p = a.progress.progress.as_ref().expect("progress");
    assert_eq!(p.message.chars().count(), 32768);
    assert!(p.message.ends_with("too long to store]"));
    assert_eq!(p.conditions[2].message.chars().count(), 32768);
    assert_eq!(ellipsize("abc", 3), "abc");
    assert_eq!(ellipsize("abcd", 3), "...");
}

#[test]
fn empty_pool_and_counts() {
    let mut ps = pools(false);
    ps.push(pool("zbeast", NEW, label_selector("zbeast"), false));
    let c = NodeContext::new(Some(&cv()), &ps, &mcs());
    let p = pool_of(&[updated("a")], &c, "zbeast");
    assert_eq!(p.status.assessment, Assessment::Empty);
    assert_eq!(p.status.completion_percent, 0);
    assert_eq!(p.status.nodes, NodeCounts::default());
    assert_eq!(p.status.target_version, "4.2");
    assert_eq!(p.status.resource.name, "zbeast");
    assert!(p.insights.is_empty());
    assert_eq!(
        p.status
            .conditions
            .iter()
            .map(|c| (c.type_.as_str(), c.status))
            .collect::<Vec<_>>(),
        [
            ("Updating", ConditionStatus::False),
            ("Healthy", ConditionStatus::True)
        ]
    );
}

#[test]
fn footer_counts_of_a_pool() {
    let done = |phase, is_updating, assessment| NodeAssessment {
        phase,
        is_updating,
        assessment,
        ..pool_counts_node()
    };
    let nodes = [
        done(NodePhase::Updated, false, Assessment::Completed),
        // Updated but still updating (MCD state Done): not Completed in the node table.
        done(NodePhase::Updated, true, Assessment::Completed),
        done(NodePhase::Draining, true, Assessment::Progressing),
        // Updating and degraded: progressing in the pool's counts, not assessed Progressing.
        done(NodePhase::Updating, true, Assessment::Degraded),
        done(NodePhase::Pending, false, Assessment::Outdated),
    ];
    let c = pool_counts(nodes.iter());
    assert_eq!(c.total, 5);
    assert_eq!(c.updated, 2);
    assert_eq!(c.completed, Some(1));
    assert_eq!(c.assessed_progressing, Some(1));
    assert_eq!(pool_counts([].iter()).completed, None);
}

fn pool_counts_node() -> NodeAssessment {
    NodeAssessment {
        name: "n".into(),
        pool: "worker".into(),
        is_master: false,
        assessment: Assessment::Completed,
        phase: NodePhase::Updated,
        current_version: String::new(),
        is_updated: false,
        is_updating: false,
        is_unavailable: false,
        is_degraded: false,
        is_draining: false,
        seriously_unavailable: false,
        estimate_seconds: Some(0),
        changes_at: None,
        stage: NodeStage::Finished,
        incident: false,
        progress: UpdateInsightStatus::default(),
        health: Vec::new(),
        drain: None,
    }
}

#[test]
fn completion_rounds_half_to_even() {
    assert_eq!(completion_percent(0, 0), 0);
    assert_eq!(completion_percent(1, 8), 12);
    assert_eq!(completion_percent(3, 8), 38);
    assert_eq!(completion_percent(22, 59), 37);
    assert_eq!(completion_percent(1, 2), 50);
    assert_eq!(completion_percent(3, 3), 100);
    assert_eq!(completion_percent(5, 3), 100);
}

#[test]
fn go_quoting() {
    assert_eq!(go_quote("plain"), "\"plain\"");
    assert_eq!(
        go_quote("a\"b\\c\n\t\u{1}\u{7f}é\u{a0}"),
        "\"a\\\"b\\\\c\\n\\t\\x01\\x7fé\\u00a0\""
    );
}

#[test]
fn assess_nodes_groups_pools_in_list_order() {
    let cvo = cv();
    let mut ps = pools(true);
    ps.push(pool("infra", NEW, label_selector("infra"), false));
    let ms = mcs();
    let mut infra = pending("infra-1");
    infra.metadata.labels = Some(
        [
            (WORKER_LABEL.to_string(), String::new()),
            ("infra".to_string(), String::new()),
        ]
        .into(),
    );
    let mut lonely = pending("lonely");
    lonely.metadata.labels = None;
    let nodes = vec![
        pending("w-2"),
        infra,
        lonely,
        in_master(node(
            "m-1",
            &[
                ("currentConfig", M_NEW),
                ("desiredConfig", M_NEW),
                ("state", "Done"),
            ],
        )),
        updated("w-1"),
    ];
    let inputs = ClusterInputs {
        cluster_version: Some(&cvo),
        pools: &ps,
        machine_configs: &ms,
        nodes: &nodes,
        ..Default::default()
    };
    let out = assess_nodes(&inputs, now());
    let names: Vec<&str> = out.pools.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["worker", "master", "infra"], "list order, as oc");
    let master = out.control_plane_pool().expect("master");
    assert_eq!(master.status.assessment, Assessment::Completed);
    assert_eq!(master.status.nodes.total, 1);
    let worker = out.pool("worker").expect("worker");
    assert_eq!(worker.status.nodes.total, 2);
    assert_eq!(worker.status.assessment, Assessment::Excluded);
    // Progress (C.9 order), then health (D.8 last).
    let kinds: Vec<(&str, &str)> = worker
        .insights
        .iter()
        .map(|i| (i.resource.kind.as_str(), i.resource.name.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Node", "w-2"),
            ("Node", "w-1"),
            ("MachineConfigPool", "worker")
        ]
    );
    assert_eq!(out.pool("infra").expect("infra").status.nodes.total, 1);
}
