//! Tests of the renderer.

use super::*;
use crate::show::render::common::Details;
use crate::show::render::control_plane::estimate_text;
use crate::show::render::worker_pools::sort_nodes;
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, ControlPlaneUpdateStatusStatus, ControlPlaneVersions,
    HealthCounts, HealthInsight, Impact, ImpactLevel, ImpactType, InsightScope, InsightType,
    NodeCounts, NodePhase, OperatorCounts, ProgressInsight, Remediation, ResourceRef, ScopeType,
    UpdateInsightStatus, VersionPair, WorkerPoolUpdateStatusStatus,
};

fn ts(s: &str) -> Timestamp {
    s.parse()
        .unwrap_or_else(|e| panic!("bad test timestamp {s}: {e}"))
}

const NOW: &str = "2024-01-01T12:00:00Z";

fn cond(type_: &str, status: ConditionStatus, reason: &str) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status,
        reason: reason.to_owned(),
        ..Default::default()
    }
}

/// A progressing control plane: 10 of 20 operators, started 30 minutes before NOW.
fn progressing_cp() -> ControlPlaneUpdateStatusStatus {
    ControlPlaneUpdateStatusStatus {
        assessment: Assessment::Progressing,
        versions: ControlPlaneVersions {
            target: "4.15.1".into(),
            previous: "4.15.0".into(),
            ..Default::default()
        },
        completion_percent: 50,
        started_at: Some(ts("2024-01-01T11:30:00Z")),
        completed_at: None,
        estimated_completed_at: Some(ts("2024-01-01T12:40:00Z")),
        operators: OperatorCounts {
            total: 20,
            updated: 10,
            updating: 1,
            waiting: 9,
            healthy: 20,
            updating_names: vec!["etcd".into()],
            ..Default::default()
        },
        nodes: NodeCounts::default(),
        health_insights: HealthCounts::default(),
        conditions: vec![cond(
            "Updating",
            ConditionStatus::True,
            "ClusterVersionProgressing",
        )],
    }
}

fn view(cp: ControlPlaneUpdateStatusStatus) -> View {
    View {
        control_plane: Some(cp),
        ..Default::default()
    }
}

fn node(pool: &str, name: &str, assessment: Assessment, phase: NodePhase) -> UpdateInsightStatus {
    let updating = matches!(
        phase,
        NodePhase::Draining | NodePhase::Updating | NodePhase::Rebooting
    );
    let mut conditions = vec![
        cond(
            "Updating",
            if updating {
                ConditionStatus::True
            } else {
                ConditionStatus::False
            },
            phase.as_str(),
        ),
        cond("Available", ConditionStatus::True, "AsExpected"),
        cond("Degraded", ConditionStatus::False, "AsExpected"),
    ];
    match assessment {
        Assessment::Unavailable => {
            conditions[1] = cond("Available", ConditionStatus::False, "Unavailable")
        }
        Assessment::Degraded => conditions[2] = cond("Degraded", ConditionStatus::True, "Degraded"),
        _ => {}
    }
    UpdateInsightStatus {
        type_: InsightType::Progress,
        resource: ResourceRef {
            group: String::new(),
            kind: "Node".into(),
            name: name.into(),
            namespace: None,
        },
        scope: InsightScope {
            type_: if pool == MASTER {
                ScopeType::ControlPlane
            } else {
                ScopeType::WorkerPool
            },
            pool: Some(pool.into()),
        },
        progress: Some(ProgressInsight {
            assessment,
            phase: Some(phase),
            version: Some(VersionPair {
                current: if phase == NodePhase::Updated {
                    "4.15.1".into()
                } else {
                    "4.15.0".into()
                },
                target: "4.15.1".into(),
            }),
            estimate: match phase {
                NodePhase::Draining => "+10m",
                NodePhase::Updating | NodePhase::Rebooting => "+5m",
                NodePhase::Updated | NodePhase::Paused => "-",
                NodePhase::Pending => "?",
            }
            .into(),
            estimate_seconds: None,
            estimated_completed_at: None,
            message: String::new(),
            since: None,
            timeline: None,
            conditions,
        }),
        health: None,
    }
}

/// A health insight about `(kind, name)` in `(scope, pool)`.
fn health(
    (kind, name): (&str, &str),
    (scope, pool): (ScopeType, Option<&str>),
    source: &str,
    level: ImpactLevel,
    started_at: Option<&str>,
) -> UpdateInsightStatus {
    UpdateInsightStatus {
        type_: InsightType::Health,
        resource: ResourceRef {
            group: if kind == "Node" {
                String::new()
            } else {
                "config.openshift.io".into()
            },
            kind: kind.into(),
            name: name.into(),
            namespace: None,
        },
        scope: InsightScope {
            type_: scope,
            pool: pool.map(str::to_owned),
        },
        progress: None,
        health: Some(HealthInsight {
            started_at: started_at.map(ts),
            impact: Impact {
                level,
                type_: ImpactType::UpdateStalled,
                summary: format!("{source} {name}"),
                description: "line one\nline two".into(),
            },
            remediation: Remediation {
                reference: "https://example.com/runbook".into(),
            },
            related: Vec::new(),
            related_omitted: 0,
            caveat: None,
            source: source.into(),
        }),
    }
}

/// [`progressing_cp`] with every operator updated: what is left is the nodes.
fn operators_updated_cp() -> ControlPlaneUpdateStatusStatus {
    let mut cp = progressing_cp();
    cp.operators.updated = 20;
    cp.operators.updating_names.clear();
    cp
}

/// A health insight about a ClusterOperator.
fn operator_health(
    name: &str,
    source: &str,
    level: ImpactLevel,
    since: &str,
) -> UpdateInsightStatus {
    let scope = ScopeType::ControlPlane;
    health(
        ("ClusterOperator", name),
        (scope, None),
        source,
        level,
        Some(since),
    )
}

/// A `NodeDegraded` health insight (no start time).
fn node_degraded(name: &str, pool: &str, scope: ScopeType) -> UpdateInsightStatus {
    let level = ImpactLevel::Error;
    health(
        ("Node", name),
        (scope, Some(pool)),
        "NodeDegraded",
        level,
        None,
    )
}

fn pool_status(total: u32, updated: u32) -> WorkerPoolUpdateStatusStatus {
    WorkerPoolUpdateStatusStatus {
        assessment: if updated == total {
            Assessment::Completed
        } else {
            Assessment::Progressing
        },
        completion_percent: (updated * 100).checked_div(total).unwrap_or(0),
        nodes: NodeCounts {
            total,
            updated,
            outdated: total - updated,
            available: total,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn section<'a>(out: &'a str, start: &str) -> &'a str {
    let from = out
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in:\n{out}"));
    &out[from..]
}

#[test]
fn details_parse_and_oc_error_text() {
    assert_eq!("all".parse::<Details>(), Ok(Details::All));
    assert_eq!("health".parse::<Details>(), Ok(Details::Health));
    let err = "everything".parse::<Details>().expect_err("invalid");
    assert_eq!(
        err.to_string(),
        "invalid value for --details: everything (must be one of none, all, nodes, health, operators)"
    );
}

#[test]
fn not_updating_gate() {
    let mut cp = progressing_cp();
    cp.conditions = vec![cond(
        "Updating",
        ConditionStatus::False,
        "ClusterVersionNotProgressing",
    )];
    let mut v = view(cp);
    let now = ts(NOW);
    assert_eq!(
        render(&v, now, Details::All),
        "The cluster is not updating.\n"
    );
    // A completed worker pool and an empty one keep it "not updating".
    v.worker_pools.push(("worker".into(), pool_status(3, 3)));
    v.worker_pools.push(("empty".into(), pool_status(0, 0)));
    assert_eq!(
        render(&v, now, Details::None),
        "The cluster is not updating.\n"
    );
    // An outdated worker pool makes it updating even though the CV is not progressing.
    v.worker_pools.push(("infra".into(), pool_status(2, 1)));
    let out = render(&v, now, Details::None);
    assert!(out.starts_with("= Control Plane =\n"), "{out}");
}

#[test]
fn missing_progressing_is_an_error() {
    let mut cp = progressing_cp();
    cp.conditions = vec![cond(
        "Updating",
        ConditionStatus::Unknown,
        "NoProgressingCondition",
    )];
    let v = view(cp);
    assert_eq!(check(&v), Err(RenderError::NoProgressingInfo));
    assert_eq!(
        render(&v, ts(NOW), Details::None),
        "no current Progressing info, see `oc describe clusterversion` for more details.\n"
    );
    assert_eq!(check(&View::default()), Err(RenderError::NoControlPlane));
}

#[test]
fn in_progress_control_plane_block() {
    let v = view(progressing_cp());
    let out = render(&v, ts(NOW), Details::None);
    let expected = "= Control Plane =
Assessment:      Progressing
Target Version:  4.15.1 (from 4.15.0)
Updating:        etcd
Completion:      50% (10 operators updated, 1 updating, 9 waiting)
Duration:        30m (Est. Time Remaining: 40m)
Operator Health: 20 Healthy

= Update Health =
SINCE   LEVEL   IMPACT   MESSAGE
30m     Info    None     Update is proceeding well
";
    assert_eq!(out, expected);
}

#[test]
fn completed_control_plane_block() {
    let mut cp = operators_updated_cp();
    cp.assessment = Assessment::Completed;
    cp.started_at = Some(ts("2024-01-01T08:11:02Z"));
    cp.completed_at = Some(ts("2024-01-01T11:42:58.5Z"));
    cp.estimated_completed_at = None;
    cp.conditions = vec![cond(
        "Updating",
        ConditionStatus::False,
        "ClusterVersionNotProgressing",
    )];
    let mut v = view(cp);
    v.worker_pools.push(("worker".into(), pool_status(2, 1)));
    v.insights.push(node(
        MASTER,
        "master-0",
        Assessment::Completed,
        NodePhase::Updated,
    ));
    v.insights.push(node(
        "worker",
        "worker-a",
        Assessment::Outdated,
        NodePhase::Pending,
    ));
    v.insights.push(node(
        "worker",
        "worker-b",
        Assessment::Completed,
        NodePhase::Updated,
    ));
    let out = render(&v, ts(NOW), Details::Operators);
    let expected = "= Control Plane =
Update to 4.15.1 successfully completed at 2024-01-01T11:42:58Z (duration: 3h32m)

All control plane nodes successfully updated to 4.15.1

= Worker Upgrade =

WORKER POOL   ASSESSMENT    COMPLETION   STATUS
worker        Progressing   50% (1/2)    2 Available, 0 Progressing, 0 Draining

Worker Pool Nodes: worker
NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE
worker-a   Outdated     Pending   4.15.0    ?     
worker-b   Completed    Updated   4.15.1    -     

= Update Health =
SINCE      LEVEL   IMPACT   MESSAGE
3h48m58s   Info    None     Update is proceeding well
";
    assert_eq!(out, expected);
}

fn estimate_for(mut cp: ControlPlaneUpdateStatusStatus, est: &str) -> Option<String> {
    let now = ts(NOW);
    let est = update_status_assess::format::parse_go_duration(est).expect("test duration");
    let at = Timestamp::from_nanosecond(now.as_nanosecond() + est).expect("in range");
    cp.estimated_completed_at = Some(at);
    estimate_text(&cp, now)
}

#[test]
fn estimate_texts() {
    let cp = progressing_cp();
    assert_eq!(estimate_for(cp.clone(), "1h25m"), Some("1h25m".into()));
    assert_eq!(estimate_for(cp.clone(), "10m"), Some("10m".into()));
    assert_eq!(estimate_for(cp.clone(), "9m59s"), Some("<10m".into()));
    assert_eq!(estimate_for(cp.clone(), "-5m"), Some("<10m".into()));
    assert_eq!(estimate_for(cp.clone(), "-10m"), Some("<10m".into()));
    // Started 30m ago, estimated end 10m1s ago: the estimated duration was
    // (updatingFor + est) = 19m59s, truncated to minutes.
    assert_eq!(
        estimate_for(cp.clone(), "-10m1s"),
        Some("N/A; estimate duration was 19m".into())
    );
    assert_eq!(estimate_for(cp.clone(), "0s"), None);
    let mut no_estimate = cp.clone();
    no_estimate.estimated_completed_at = None;
    assert_eq!(estimate_text(&no_estimate, ts(NOW)), None);
    let mut multi = cp;
    multi.versions.multi_arch_migration = true;
    assert_eq!(
        estimate_for(multi.clone(), "-1h"),
        Some("N/A for Multi-Architecture Migration".into())
    );
    let out = render(&view(multi), ts(NOW), Details::None);
    assert!(
        out.contains("\nTarget Version:  4.15.1 to Multi-Architecture\n"),
        "{out}"
    );
}

#[test]
fn estimate_is_rounded_like_oc() {
    // 1h24m40s left → rounded to the minute above 10 minutes.
    assert_eq!(
        estimate_for(progressing_cp(), "1h24m40s"),
        Some("1h25m".into())
    );
}

#[test]
fn target_version_and_operator_health_lines() {
    let mut cp = progressing_cp();
    cp.versions.previous_partial = true;
    cp.operators.healthy = 17;
    cp.operators.unavailable = 1;
    cp.operators.degraded = 2;
    let out = render(&view(cp.clone()), ts(NOW), Details::None);
    assert!(
        out.contains("\nTarget Version:  4.15.1 (from incomplete 4.15.0)\n"),
        "{out}"
    );
    assert!(
        out.contains("\nOperator Health: 17 Healthy, 1 Unavailable, 2 Available but degraded\n"),
        "{out}"
    );
    cp.versions = ControlPlaneVersions {
        target: "4.15.1".into(),
        installation: true,
        ..Default::default()
    };
    let out = render(&view(cp), ts(NOW), Details::None);
    assert!(
        out.contains("\nTarget Version:  4.15.1 (a new install)\n"),
        "{out}"
    );
}

#[test]
fn operators_table_with_multi_line_message_and_long_reason() {
    let mut v = view(progressing_cp());
    v.insights.push(UpdateInsightStatus {
        type_: InsightType::Progress,
        resource: ResourceRef {
            group: "config.openshift.io".into(),
            kind: "ClusterOperator".into(),
            name: "etcd".into(),
            namespace: None,
        },
        scope: InsightScope::default(),
        progress: Some(ProgressInsight {
            assessment: Assessment::Updating,
            conditions: vec![Condition {
                type_: "Updating".into(),
                status: ConditionStatus::True,
                reason: "NodeInstaller::PerhapsTooLong".into(),
                message: "first\nsecond".into(),
                last_transition_time: Some(ts("2024-01-01T11:58:00.4Z")),
            }],
            ..Default::default()
        }),
        health: None,
    });
    let out = render(&v, ts(NOW), Details::Operators);
    let table = section(&out, "\nUpdating Cluster Operators\n");
    assert!(
        table.starts_with(
            "\nUpdating Cluster Operators
NAME   SINCE   REASON                 MESSAGE
etcd   1m59s   NodeInstaller::Pe...   first
                                      second

"
        ),
        "{table}"
    );
    // Not shown without --details=operators.
    let out = render(&v, ts(NOW), Details::Nodes);
    assert!(!out.contains("Updating Cluster Operators"), "{out}");
}

#[test]
fn node_sorting_follows_c9() {
    let nodes = [
        node(
            "worker",
            "a-completed",
            Assessment::Completed,
            NodePhase::Updated,
        ),
        node(
            "worker",
            "b-outdated",
            Assessment::Outdated,
            NodePhase::Pending,
        ),
        node(
            "worker",
            "c-excluded",
            Assessment::Excluded,
            NodePhase::Paused,
        ),
        node(
            "worker",
            "d-reboot",
            Assessment::Progressing,
            NodePhase::Rebooting,
        ),
        node(
            "worker",
            "e-drain",
            Assessment::Progressing,
            NodePhase::Draining,
        ),
        node(
            "worker",
            "f-unavail",
            Assessment::Unavailable,
            NodePhase::Updated,
        ),
        node(
            "worker",
            "g-degraded",
            Assessment::Degraded,
            NodePhase::Pending,
        ),
        node(
            "worker",
            "a-degraded",
            Assessment::Degraded,
            NodePhase::Pending,
        ),
        node(
            "worker",
            "h-degraded",
            Assessment::Degraded,
            NodePhase::Draining,
        ),
    ];
    let sorted = sort_nodes(nodes.iter().collect());
    let names: Vec<&str> = sorted.iter().map(|n| n.resource.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "h-degraded",
            "a-degraded",
            "g-degraded",
            "f-unavail",
            "e-drain",
            "d-reboot",
            "c-excluded",
            "b-outdated",
            "a-completed"
        ]
    );
}

#[test]
fn node_omission_footer_counts() {
    let mut v = view(operators_updated_cp());
    // 10 draining nodes fill the always-printed rows (sorted before the q* ones by name).
    // Omitted: 2 draining, 1 paused, 3 pending, 4 completed.
    let groups = [
        ("p", 10, Assessment::Progressing, NodePhase::Draining),
        ("q", 2, Assessment::Progressing, NodePhase::Draining),
        ("r", 1, Assessment::Excluded, NodePhase::Paused),
        ("s", 3, Assessment::Outdated, NodePhase::Pending),
        ("t", 4, Assessment::Completed, NodePhase::Updated),
    ];
    let mut nodes = Vec::new();
    for (prefix, count, assessment, phase) in groups {
        let width = if count > 9 { 2 } else { 1 };
        for i in 0..count {
            let name = format!("{prefix}{i:0width$}");
            nodes.push(node("worker", &name, assessment, phase));
        }
    }
    // An unavailable updating node (not interesting) is omitted and not available.
    let mut unavailable_updating =
        node("worker", "u0", Assessment::Progressing, NodePhase::Updating);
    if let Some(p) = unavailable_updating.progress.as_mut() {
        p.conditions[1] = cond("Available", ConditionStatus::False, "Unavailable");
    }
    nodes.push(unavailable_updating);
    v.insights = nodes;
    v.worker_pools.push(("worker".into(), pool_status(21, 4)));
    let out = render(&v, ts(NOW), Details::None);
    let footer = "...\nOmitted additional 11 Total, 4 Completed, 10 Available, 3 Progressing, 7 Outdated, 2 Draining, 1 Excluded, and 0 Degraded nodes.\nPass along --details=nodes to see all information.\n";
    assert!(out.contains(footer), "{out}");
    assert!(out.contains("\np09 "), "{out}");
    assert!(!out.contains("\nq0 "), "{out}");
    let all = render(&v, ts(NOW), Details::Nodes);
    assert!(!all.contains("Omitted"), "{all}");
    assert!(all.contains("\nt3 "), "{all}");

    // A selective read: only the 10 printed nodes, the footer from the pool's counts.
    let mut selective = v.clone();
    selective.printed_nodes_only = true;
    selective
        .insights
        .retain(|i| i.resource.name.starts_with('p'));
    let mut pool = pool_status(21, 4);
    pool.nodes = NodeCounts {
        total: 21,
        available: 20,
        draining: 12,
        excluded: 1,
        completed: Some(4),
        assessed_progressing: Some(13),
        ..Default::default()
    };
    selective.worker_pools = vec![("worker".into(), pool)];
    let sel = render(&selective, ts(NOW), Details::None);
    assert_eq!(
        sel.split_once("= Update Health =")
            .map(|(a, _)| a.split_once("Worker Pool Nodes").map(|(_, b)| b.to_owned())),
        out.split_once("= Update Health =")
            .map(|(a, _)| a.split_once("Worker Pool Nodes").map(|(_, b)| b.to_owned())),
        "selective:\n{sel}\nfull:\n{out}"
    );
    assert!(sel.contains(footer), "{sel}");
}

#[test]
fn interesting_nodes_beyond_row_ten_are_printed() {
    let mut v = view(operators_updated_cp());
    use Assessment::{Degraded, Outdated, Unavailable};
    use NodePhase::{Draining, Pending};
    let mut add = |name: &str, assessment, phase| {
        v.insights.push(node("worker", name, assessment, phase));
    };
    for i in 0..12 {
        add(&format!("d{i:02}"), Degraded, Draining);
    }
    for i in 0..2 {
        add(&format!("u{i}"), Unavailable, Pending);
    }
    add("z-pending", Outdated, Pending);
    v.worker_pools.push(("worker".into(), pool_status(15, 0)));
    let out = render(&v, ts(NOW), Details::None);
    assert!(out.contains("\nd11 "), "{out}");
    assert!(out.contains("\nu1 "), "{out}");
    assert!(!out.contains("z-pending"), "{out}");
    assert!(out.contains("Omitted additional 1 Total, 0 Completed, 1 Available, 0 Progressing, 1 Outdated, 0 Draining, 0 Excluded, and 0 Degraded nodes."), "{out}");
}

#[test]
fn node_name_substitution_needs_eight_bytes() {
    let mut v = view(operators_updated_cp());
    let mut long = node(
        "worker",
        "worker-1",
        Assessment::Degraded,
        NodePhase::Draining,
    );
    let mut short = node("worker", "wkr-2", Assessment::Degraded, NodePhase::Draining);
    for (n, name) in [(&mut long, "worker-1"), (&mut short, "wkr-2")] {
        if let Some(p) = n.progress.as_mut() {
            p.message = format!("failed to drain node: {name} after 1 hour ({name})");
        }
    }
    v.insights = vec![long, short];
    v.worker_pools.push(("worker".into(), pool_status(2, 0)));
    let out = render(&v, ts(NOW), Details::None);
    assert!(
        out.contains("failed to drain node: <node> after 1 hour (<node>)"),
        "{out}"
    );
    assert!(
        out.contains("failed to drain node: wkr-2 after 1 hour (wkr-2)"),
        "{out}"
    );
}

#[test]
fn health_sorting_and_hint_line() {
    let mut v = view(progressing_cp());
    use ImpactLevel::{Error, Warning};
    const DEGRADED: &str = "ClusterOperatorDegraded";
    const AT_11: &str = "2024-01-01T11:00:00Z";
    v.insights = vec![
        health(
            ("ClusterVersion", "version"),
            (ScopeType::ControlPlane, None),
            "ClusterVersionFailing",
            Warning,
            Some("2024-01-01T12:00:00Z"),
        ),
        operator_health("kube-scheduler", DEGRADED, Error, AT_11),
        operator_health("etcd", DEGRADED, Error, AT_11),
        operator_health("etcd", "ClusterOperatorUnavailable", Error, AT_11),
        operator_health("dns", DEGRADED, Error, "2024-01-01T11:30:00Z"),
        node_degraded("b-node", "worker", ScopeType::WorkerPool),
        node_degraded("a-node", "infra", ScopeType::WorkerPool),
        node_degraded("m-node", "master", ScopeType::ControlPlane),
        health(
            ("Alert", "NodeDown"),
            (ScopeType::Cluster, None),
            "Alert",
            Warning,
            Some("2024-01-01T12:00:00Z"),
        ),
    ];
    // Tied pools follow the list order (here `worker` listed before `infra`).
    v.worker_pools = vec![
        ("worker".into(), pool_status(1, 0)),
        ("infra".into(), pool_status(1, 0)),
    ];
    let out = render(&v, ts(NOW), Details::None);
    let expected = "= Update Health =
SINCE   LEVEL     IMPACT           MESSAGE
30m     Error     Update Stalled   ClusterOperatorDegraded dns
1h      Error     Update Stalled   ClusterOperatorUnavailable etcd
1h      Error     Update Stalled   ClusterOperatorDegraded etcd
1h      Error     Update Stalled   ClusterOperatorDegraded kube-scheduler
-       Error     Update Stalled   NodeDegraded m-node
-       Error     Update Stalled   NodeDegraded b-node
-       Error     Update Stalled   NodeDegraded a-node
now     Warning   Update Stalled   Alert NodeDown
now     Warning   Update Stalled   ClusterVersionFailing version

Run with --details=health for additional description and links to related online documentation
";
    assert_eq!(section(&out, "= Update Health ="), expected);
}

#[test]
fn hint_line_rule() {
    let now = ts(NOW);
    let one = |level| {
        let mut v = view(progressing_cp());
        v.insights = vec![health(
            ("ClusterVersion", "version"),
            (ScopeType::ControlPlane, None),
            "PreviousUpdatePartial",
            level,
            Some("2024-01-01T11:30:00Z"),
        )];
        render(&v, now, Details::None)
    };
    let hint = "\nRun with --details=health";
    assert!(!one(ImpactLevel::Info).contains(hint));
    assert!(one(ImpactLevel::Warning).contains(hint));
    let mut v = view(progressing_cp());
    let info = health(
        ("ClusterVersion", "version"),
        (ScopeType::ControlPlane, None),
        "PreviousUpdatePartial",
        ImpactLevel::Info,
        None,
    );
    v.insights = vec![info.clone(), info];
    assert!(render(&v, now, Details::None).contains(hint));
    // Detailed health view: no hint.
    assert!(!render(&v, now, Details::Health).contains(hint));
}

#[test]
fn all_is_well_is_synthesised_and_never_detailed() {
    let mut cp = progressing_cp();
    cp.started_at = Some(ts("2024-01-01T11:45:55.6Z"));
    let v = view(cp);
    let expected_tail = "= Update Health =
SINCE   LEVEL   IMPACT   MESSAGE
14m4s   Info    None     Update is proceeding well
";
    for details in [Details::None, Details::All, Details::Health] {
        let out = render(&v, ts(NOW), details);
        assert_eq!(section(&out, "= Update Health ="), expected_tail);
    }
}

#[test]
fn detailed_health_view() {
    let mut v = view(progressing_cp());
    let mut node_insight = node_degraded("worker-1", "worker", ScopeType::WorkerPool);
    if let Some(h) = node_insight.health.as_mut() {
        h.related.push(ResourceRef {
            group: "machineconfiguration.openshift.io".into(),
            kind: "MachineConfigPool".into(),
            name: "worker".into(),
            namespace: None,
        });
    }
    v.insights = vec![
        node_insight,
        operator_health(
            "etcd",
            "ClusterOperatorDegraded",
            ImpactLevel::Warning,
            "2024-01-01T11:58:47Z",
        ),
    ];
    // oc's view: `related` is ours, so Resources lists the insight's resource only.
    let out = render(&v, ts(NOW), Details::Health);
    let expected = "= Update Health =
Message: NodeDegraded worker-1
  Since:       -
  Level:       Error
  Impact:      Update Stalled
  Reference:   https://example.com/runbook
  Resources:
    nodes: worker-1
  Description: line one
               , line two

Message: ClusterOperatorDegraded etcd
  Since:       1m13s
  Level:       Warning
  Impact:      Update Stalled
  Reference:   https://example.com/runbook
  Resources:
    clusteroperators.config.openshift.io: etcd
  Description: line one
               , line two
";
    assert_eq!(section(&out, "= Update Health ="), expected);
}

#[test]
fn related_resources_are_listed_apart_with_related() {
    let mut v = view(progressing_cp());
    let mut node_insight = node_degraded("worker-1", "worker", ScopeType::WorkerPool);
    if let Some(h) = node_insight.health.as_mut() {
        h.related = vec![
            ResourceRef {
                kind: "Pod".into(),
                name: "checkout-1".into(),
                namespace: Some("shop".into()),
                ..Default::default()
            },
            ResourceRef {
                group: "policy".into(),
                kind: "PodDisruptionBudget".into(),
                name: "checkout-pdb".into(),
                namespace: Some("shop".into()),
            },
        ];
        h.related_omitted = 3;
    }
    let plain = node_degraded("worker-2", "worker", ScopeType::WorkerPool);
    v.insights = vec![node_insight, plain];
    let out = render_with(&v, ts(NOW), Details::Health, true);
    let expected = "= Update Health =
Message: NodeDegraded worker-1
  Since:       -
  Level:       Error
  Impact:      Update Stalled
  Reference:   https://example.com/runbook
  Resources:
    nodes: worker-1
  Related:
    pods: shop/checkout-1
    poddisruptionbudgets.policy: shop/checkout-pdb
    (and 3 more)
  Description: line one
               , line two

Message: NodeDegraded worker-2
  Since:       -
  Level:       Error
  Impact:      Update Stalled
  Reference:   https://example.com/runbook
  Resources:
    nodes: worker-2
  Description: line one
               , line two
";
    assert_eq!(section(&out, "= Update Health ="), expected);
    // Without --related: oc's text, byte for byte.
    let oc = render(&v, ts(NOW), Details::Health);
    assert!(!oc.contains("Related:") && !oc.contains("checkout"), "{oc}");
    // The compact view has no place for it.
    assert_eq!(
        render_with(&v, ts(NOW), Details::None, true),
        render(&v, ts(NOW), Details::None)
    );
}

#[test]
fn pools_table_in_list_order_and_empty_pool() {
    let mut v = view(operators_updated_cp());
    let mut degraded = pool_status(59, 22);
    degraded.assessment = Assessment::Degraded;
    degraded.completion_percent = 37;
    degraded.nodes.available = 44;
    degraded.nodes.progressing = 5;
    degraded.nodes.draining = 12;
    degraded.nodes.degraded = 7;
    degraded.nodes.excluded = 1;
    let mut empty = pool_status(0, 0);
    empty.assessment = Assessment::Empty;
    v.worker_pools = vec![
        ("zbeast".into(), empty),
        ("infra".into(), pool_status(2, 2)),
        ("worker".into(), degraded),
    ];
    let out = render(&v, ts(NOW), Details::None);
    let expected = "
= Worker Upgrade =

WORKER POOL   ASSESSMENT   COMPLETION    STATUS
zbeast        Empty                      0 Total
infra         Completed    100% (2/2)    2 Available, 0 Progressing, 0 Draining
worker        Degraded     37% (22/59)   44 Available, 5 Progressing, 12 Draining, 1 Excluded, 7 Degraded

= Update Health =
";
    assert!(out.contains(expected), "{out}");
}
