//! Unit tests of the hosted adapters on hand-written objects (hosted.md §2–§8).

use jiff::Timestamp;
use serde_json::Value;
use update_status_api::crd::{
    Assessment, ConditionStatus, ImpactLevel, InsightType, NodePhase, UpdateInsightStatus,
    WorkerPoolUpdateStatusStatus, labels,
};
use update_status_api::hosted::{HostedCluster, Machine, MachineDeployment, MachineSet, NodePool};
use update_status_api::input::{ClusterOperator, Node};

use super::*;
use crate::compose::{Desired, Existing};
use crate::test_support::condition;
use crate::test_support::hosted::*;

const NOW: &str = "2026-01-01T10:00:00Z";

fn now() -> Timestamp {
    NOW.parse().expect("now")
}

fn c(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    condition(type_, status, reason, message, "2026-01-01T09:00:00Z")
}

/// The conditions of a settled HostedCluster.
fn settled() -> Vec<Value> {
    vec![
        c("Available", "True", "AsExpected", ""),
        c("Progressing", "False", "AsExpected", ""),
        c("Degraded", "False", "AsExpected", ""),
        c(
            "ClusterVersionProgressing",
            "False",
            "FromClusterVersion",
            "Cluster version is 4.15.1",
        ),
        c("ClusterVersionSucceeding", "True", "FromClusterVersion", ""),
        c(
            "ClusterVersionAvailable",
            "True",
            "FromClusterVersion",
            "Done applying 4.15.1",
        ),
        c("ValidReleaseImage", "True", "AsExpected", ""),
    ]
}

/// A settled NodePool's conditions.
fn np_settled() -> Vec<Value> {
    vec![
        c("UpdatingVersion", "False", "AsExpected", ""),
        c("Ready", "True", "AsExpected", ""),
        c("AllMachinesReady", "True", "AsExpected", ""),
        c("AllNodesHealthy", "True", "AsExpected", ""),
        c("ValidReleaseImage", "True", "AsExpected", ""),
    ]
}

#[derive(Default)]
struct World {
    pools: Vec<NodePool>,
    machines: Vec<Machine>,
    sets: Vec<MachineSet>,
    deployments: Vec<MachineDeployment>,
    operators: Option<Vec<ClusterOperator>>,
    nodes: Vec<Node>,
    unreachable: Option<&'static str>,
    reported: caps::Reported,
}

impl World {
    fn run(&self, hc: &HostedCluster) -> DesiredHosted {
        let guest = self.operators.as_ref().map(|ops| GuestInputs {
            cluster_operators: ops,
            nodes: &self.nodes,
            reported: self.reported,
        });
        let inputs = HostedInputs {
            hosted_cluster: hc,
            node_pools: &self.pools,
            machines: &self.machines,
            machine_sets: &self.sets,
            machine_deployments: &self.deployments,
            guest,
            guest_unreachable: self.unreachable,
        };
        desired_hosted(&inputs, &Existing::default(), now())
    }
}

fn healthy_machine(name: &str, pool: &str, version: &str) -> Machine {
    machine(
        name,
        pool,
        MachineState {
            release_version: Some(version),
            spec_version: version,
            healthy: true,
            node: Some(name),
            ..Default::default()
        },
    )
}

fn pool<'a>(d: &'a DesiredHosted, name: &str) -> &'a Desired<WorkerPoolUpdateStatusStatus> {
    d.cluster
        .worker_pools
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no WorkerPoolUpdateStatus {name}"))
}

fn health_sources(d: &DesiredHosted) -> Vec<(String, ImpactLevel)> {
    d.cluster
        .insights
        .iter()
        .filter_map(|i| i.status.health.as_ref())
        .map(|h| (h.source.clone(), h.impact.level))
        .collect()
}

fn has_source(d: &DesiredHosted, source: &str) -> bool {
    health_sources(d).iter().any(|(s, _)| s == source)
}

fn node_progress<'a>(d: &'a DesiredHosted, name: &str) -> &'a UpdateInsightStatus {
    &d.cluster
        .insights
        .iter()
        .find(|i| {
            i.status.type_ == InsightType::Progress
                && i.status.resource.name == name
                && matches!(i.status.resource.kind.as_str(), "Node" | "Machine")
        })
        .unwrap_or_else(|| panic!("no progress insight for {name}"))
        .status
}

fn completed_hc(version: &str) -> HostedCluster {
    hosted_cluster(
        (version, version),
        hc_history(&[(
            "Completed",
            version,
            "2025-12-01T08:00:00Z",
            Some("2025-12-01T09:00:00Z"),
        )]),
        &[],
        settled(),
        None,
    )
}

#[test]
fn not_updating() {
    let hc = completed_hc("4.15.1");
    let w = World {
        pools: vec![node_pool(
            "np1",
            "Replace",
            2,
            ("4.15.1", "4.15.1"),
            np_settled(),
        )],
        machines: vec![
            healthy_machine("m1", "np1", "4.15.1"),
            healthy_machine("m2", "np1", "4.15.1"),
        ],
        deployments: vec![machine_deployment("np1", "4.15.1", 2)],
        ..Default::default()
    };
    let d = w.run(&hc);
    let cp = d.cluster.control_plane.as_ref().expect("control plane");
    assert_eq!(cp.name, HC);
    assert_eq!(
        cp.owner.as_ref().map(|o| o.kind.as_str()),
        Some("HostedCluster")
    );
    assert_eq!(cp.labels.get(labels::CLUSTER).map(String::as_str), Some(HC));
    assert_eq!(cp.status.assessment, Assessment::Completed);
    assert_eq!(cp.status.versions.target, "4.15.1");
    assert_eq!(cp.status.completion_percent, 100);
    assert_eq!(
        cp.status.nodes.total, 0,
        "no control-plane nodes in hosted mode"
    );

    let p = pool(&d, "np1");
    assert_eq!(p.owner.as_ref().map(|o| o.kind.as_str()), Some("NodePool"));
    assert_eq!(p.owner.as_ref().map(|o| o.name.as_str()), Some("np1"));
    assert_eq!(p.status.resource.kind, "NodePool");
    assert_eq!(p.status.assessment, Assessment::Completed);
    assert_eq!((p.status.nodes.total, p.status.nodes.updated), (2, 2));
    assert_eq!(p.status.target_version, "4.15.1");
    assert!(health_sources(&d).is_empty(), "{:?}", health_sources(&d));
    for i in &d.cluster.insights {
        assert!(i.name.starts_with("demo-"), "{}", i.name);
        assert_eq!(i.labels.get(labels::CLUSTER).map(String::as_str), Some(HC));
        assert!(
            i.owner.as_ref().is_some_and(|o| o.kind != "Node"),
            "{} is owned by {:?}",
            i.name,
            i.owner
        );
    }
    assert_eq!(d.requeue_after, None);
}

fn updating_hc() -> HostedCluster {
    let mut conditions = settled();
    conditions[3] = c(
        "ClusterVersionProgressing",
        "True",
        "FromClusterVersion",
        "Working towards 4.16.0: 500 of 900 done (55% complete)",
    );
    hosted_cluster(
        ("4.16.0", "4.16.0"),
        hc_history(&[
            ("Partial", "4.16.0", "2026-01-01T09:30:00Z", None),
            (
                "Completed",
                "4.15.1",
                "2025-12-01T08:00:00Z",
                Some("2025-12-01T09:00:00Z"),
            ),
        ]),
        &[],
        conditions,
        None,
    )
}

#[test]
fn control_plane_updating_without_and_with_the_hosted_operators() {
    let hc = updating_hc();
    let d = World::default().run(&hc);
    let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
    assert_eq!(cp.assessment, Assessment::Progressing);
    assert_eq!(cp.versions.target, "4.16.0");
    assert_eq!(cp.versions.previous, "4.15.1");
    assert_eq!(
        cp.started_at,
        Some("2026-01-01T09:30:00Z".parse().expect("ts"))
    );
    assert_eq!(
        cp.completion_percent, 0,
        "no operator detail: no percentage"
    );
    let updating = cp
        .conditions
        .iter()
        .find(|c| c.type_ == "Updating")
        .expect("Updating");
    assert_eq!(updating.status, ConditionStatus::True);
    // The ClusterVersion progress insight is about the HostedCluster.
    let hc_progress = d
        .cluster
        .insights
        .iter()
        .find(|i| {
            i.status.type_ == InsightType::Progress && i.status.resource.kind == "HostedCluster"
        })
        .expect("HostedCluster progress insight");
    assert_eq!(hc_progress.name, "demo-hostedcluster-demo");
    assert_eq!(hc_progress.status.resource.namespace.as_deref(), Some(NS));

    // With the hosted ClusterOperators: the standalone operator counts and completion.
    let w = World {
        operators: Some(vec![
            crate::test_support::co("etcd", "4.16.0", vec![]),
            crate::test_support::co("kube-apiserver", "4.15.1", vec![]),
        ]),
        ..Default::default()
    };
    let d = w.run(&hc);
    let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
    assert_eq!((cp.operators.total, cp.operators.updated), (2, 1));
    assert_eq!(cp.completion_percent, 50);
    assert!(matches!(
        cp.assessment,
        Assessment::Progressing | Assessment::ProgressingSlow
    ));
    assert!(cp.estimated_completed_at.is_some());
    let co = d
        .cluster
        .insights
        .iter()
        .find(|i| i.status.resource.name == "etcd")
        .expect("operator insight");
    assert_eq!(
        co.name, "demo-clusteroperator-etcd",
        "names embed the cluster"
    );
    assert_eq!(
        co.owner.as_ref().map(|o| o.kind.as_str()),
        Some("HostedCluster")
    );
}

#[test]
fn a_cvo_failure_is_the_standalone_cluster_version_failing_insight() {
    let mut hc = updating_hc();
    if let Some(s) = hc.status.as_mut()
        && let Some(cond) = s
            .conditions
            .iter_mut()
            .find(|c| c.type_ == "ClusterVersionSucceeding")
    {
        cond.status = "False".into();
        cond.reason = "ClusterOperatorDegraded".into();
        cond.message = "Cluster operator console is degraded".into();
    }
    let d = World::default().run(&hc);
    let failing = d
        .cluster
        .insights
        .iter()
        .find(|i| {
            i.status
                .health
                .as_ref()
                .is_some_and(|h| h.source == "ClusterVersionFailing")
        })
        .expect("ClusterVersionFailing");
    assert_eq!(failing.status.resource.kind, "HostedCluster");
    let h = failing.status.health.as_ref().expect("health");
    assert_eq!(h.impact.description, "Cluster operator console is degraded");
    assert!(
        h.impact.summary.contains("ClusterOperatorDegraded"),
        "{}",
        h.impact.summary
    );
}

#[test]
fn version_skew_control_plane_done_node_pool_on_the_old_version() {
    let hc = hosted_cluster(
        ("4.16.0", "4.16.0"),
        hc_history(&[
            (
                "Completed",
                "4.16.0",
                "2026-01-01T08:00:00Z",
                Some("2026-01-01T09:00:00Z"),
            ),
            (
                "Completed",
                "4.15.1",
                "2025-12-01T08:00:00Z",
                Some("2025-12-01T09:00:00Z"),
            ),
        ]),
        &[],
        settled(),
        None,
    );
    let w = World {
        pools: vec![node_pool(
            "np1",
            "Replace",
            1,
            ("4.15.1", "4.15.1"),
            np_settled(),
        )],
        machines: vec![healthy_machine("m1", "np1", "4.15.1")],
        deployments: vec![machine_deployment("np1", "4.15.1", 1)],
        ..Default::default()
    };
    let d = w.run(&hc);
    assert_eq!(
        d.cluster
            .control_plane
            .as_ref()
            .expect("cp")
            .status
            .assessment,
        Assessment::Completed
    );
    let p = pool(&d, "np1");
    assert_eq!(p.status.assessment, Assessment::Completed);
    assert_eq!(p.status.target_version, "4.15.1");
    assert_eq!(
        health_sources(&d),
        vec![(health::SOURCE_BEHIND.to_string(), ImpactLevel::Info)]
    );
    let behind = d
        .cluster
        .insights
        .iter()
        .find(|i| i.status.health.is_some())
        .expect("insight");
    assert_eq!(behind.owner.as_ref().map(|o| o.name.as_str()), Some("np1"));
    assert_eq!(p.status.health_insights.info, 1);
}

#[test]
fn replace_rollout_mid_way() {
    let hc = completed_hc("4.16.0");
    let mut np_conditions = np_settled();
    np_conditions[0] = c(
        "UpdatingVersion",
        "True",
        "AsExpected",
        "Updating version in progress. Target version: 4.16.0",
    );
    let old = |name: &str, deleting: Option<&'static str>, draining| {
        machine(
            name,
            "np1",
            MachineState {
                release_version: None,
                spec_version: "4.15.1",
                healthy: true,
                deleting_since: deleting,
                draining,
                node: Some(name),
            },
        )
    };
    let w = World {
        pools: vec![node_pool(
            "np1",
            "Replace",
            3,
            ("4.16.0", "4.15.1"),
            np_conditions,
        )],
        machines: vec![
            healthy_machine("new-1", "np1", "4.16.0"),
            machine(
                "new-2",
                "np1",
                MachineState {
                    release_version: Some("4.16.0"),
                    spec_version: "4.16.0",
                    healthy: false,
                    ..Default::default()
                },
            ),
            old(
                "old-1",
                Some("2026-01-01T09:40:00Z"),
                Some(("False", "Draining", "2026-01-01T09:40:00Z")),
            ),
            old("old-2", None, None),
        ],
        deployments: vec![machine_deployment("np1", "4.16.0", 3)],
        ..Default::default()
    };
    let d = w.run(&hc);
    let p = pool(&d, "np1");
    assert_eq!(p.status.assessment, Assessment::Progressing);
    assert_eq!(p.status.target_version, "4.16.0");
    let n = &p.status.nodes;
    assert_eq!(n.total, 3, "the surge Machine does not raise the total");
    assert_eq!(n.updated, 1);
    assert_eq!(n.pending, 1);
    assert_eq!(n.draining, 1);
    assert_eq!(n.progressing, 2);
    assert_eq!(p.status.completion_percent, 33);

    let phase = |name: &str| {
        node_progress(&d, name)
            .progress
            .as_ref()
            .and_then(|p| p.phase)
    };
    assert_eq!(phase("new-1"), Some(NodePhase::Updated));
    assert_eq!(phase("new-2"), Some(NodePhase::Updating));
    assert_eq!(phase("old-1"), Some(NodePhase::Draining));
    assert_eq!(phase("old-2"), Some(NodePhase::Pending));
    // new-2 has no Node yet: it is reported as its Machine.
    assert_eq!(node_progress(&d, "new-2").resource.kind, "Machine");
    // Draining for 20 minutes: a drain insight about the Machine.
    assert!(
        has_source(&d, health::SOURCE_DRAIN_FAILED),
        "{:?}",
        health_sources(&d)
    );
    // The NodePool update is not stuck yet: it will be 30 min after the last progress.
    assert!(!has_source(&d, health::SOURCE_UPDATE_STUCK));
    assert!(d.requeue_after.is_some());
}

#[test]
fn in_place_rollout_mid_way_and_failed() {
    let hc = completed_hc("4.16.0");
    let ms = machine_set("np1", "4.16.0", 3, ("h2", "h1"), &[]);
    let nodes = |n2_state: &str| {
        vec![
            hosted_node(
                "n1",
                "np1",
                &[
                    ("currentConfig", "h2"),
                    ("desiredConfig", "h2"),
                    ("state", "Done"),
                ],
            ),
            hosted_node(
                "n2",
                "np1",
                &[
                    ("currentConfig", "h1"),
                    ("desiredConfig", "h2"),
                    ("state", n2_state),
                    ("reason", "failed to pull the OS image"),
                ],
            ),
            hosted_node(
                "n3",
                "np1",
                &[
                    ("currentConfig", "h1"),
                    ("desiredConfig", "h1"),
                    ("state", "Done"),
                ],
            ),
        ]
    };
    let mut running = np_settled();
    running[0] = c(
        "UpdatingVersion",
        "True",
        "AsExpected",
        "Updating version in progress",
    );
    let w = World {
        pools: vec![node_pool(
            "np1",
            "InPlace",
            3,
            ("4.16.0", "4.15.1"),
            running,
        )],
        sets: vec![ms.clone()],
        operators: Some(vec![]),
        nodes: nodes("Working"),
        ..Default::default()
    };
    let d = w.run(&hc);
    let p = pool(&d, "np1");
    assert_eq!(p.status.assessment, Assessment::Progressing);
    assert_eq!((p.status.nodes.total, p.status.nodes.updated), (3, 1));
    assert_eq!(p.status.nodes.pending, 1);
    assert_eq!(p.status.target_version, "4.16.0");
    let n1 = node_progress(&d, "n1").progress.as_ref().expect("p");
    assert_eq!(n1.phase, Some(NodePhase::Updated));
    assert_eq!(
        n1.version.as_ref().map(|v| v.current.as_str()),
        Some("4.16.0")
    );
    let n2 = node_progress(&d, "n2").progress.as_ref().expect("p");
    assert!(matches!(
        n2.phase,
        Some(NodePhase::Updating | NodePhase::Draining)
    ));
    assert_eq!(
        node_progress(&d, "n3")
            .progress
            .as_ref()
            .and_then(|p| p.phase),
        Some(NodePhase::Pending)
    );

    // The upgrader reports a degraded node: the pool fails.
    let mut failed = np_settled();
    failed[0] = c(
        "UpdatingVersion",
        "False",
        "InplaceUpgradeFailed",
        "Node n2 in nodepool degraded: failed to pull the OS image",
    );
    let w = World {
        pools: vec![node_pool("np1", "InPlace", 3, ("4.16.0", "4.15.1"), failed)],
        sets: vec![machine_set(
            "np1",
            "4.16.0",
            3,
            ("h2", "h1"),
            &[(
                "hypershift.openshift.io/nodePoolUpgradeInProgressFalse",
                "Node n2 in nodepool degraded: failed to pull the OS image",
            )],
        )],
        operators: Some(vec![]),
        nodes: nodes("Degraded"),
        ..Default::default()
    };
    let d = w.run(&hc);
    let p = pool(&d, "np1");
    assert_eq!(p.status.assessment, Assessment::Degraded);
    assert_eq!(p.status.nodes.degraded, 1);
    assert!(
        has_source(&d, health::SOURCE_IN_PLACE_FAILED),
        "{:?}",
        health_sources(&d)
    );
    assert!(has_source(&d, "NodeDegraded"), "{:?}", health_sources(&d));
    let node_insight = d
        .cluster
        .insights
        .iter()
        .find(|i| {
            i.status
                .health
                .as_ref()
                .is_some_and(|h| h.source == "NodeDegraded")
        })
        .expect("NodeDegraded");
    assert!(
        node_insight.name.starts_with("demo-"),
        "{}",
        node_insight.name
    );
    assert_eq!(
        node_insight.owner.as_ref().map(|o| o.kind.as_str()),
        Some("NodePool"),
        "a hosted Node never owns a management object"
    );
    let healthy = p
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Healthy")
        .expect("Healthy");
    assert_eq!(healthy.status, ConditionStatus::False);
}

#[test]
fn in_place_without_the_hosted_nodes_counts_machines() {
    let hc = completed_hc("4.16.0");
    let mut running = np_settled();
    running[0] = c("UpdatingVersion", "True", "AsExpected", "");
    let w = World {
        pools: vec![node_pool(
            "np1",
            "InPlace",
            2,
            ("4.16.0", "4.15.1"),
            running,
        )],
        sets: vec![machine_set("np1", "4.16.0", 2, ("h2", "h1"), &[])],
        machines: vec![
            healthy_machine("m1", "np1", "4.16.0"),
            healthy_machine("m2", "np1", "4.15.1"),
        ],
        ..Default::default()
    };
    let p = w.run(&hc);
    let p = pool(&p, "np1");
    assert_eq!((p.status.nodes.total, p.status.nodes.updated), (2, 1));
    assert_eq!(p.status.assessment, Assessment::Progressing);
}

/// A HostedCluster on 4.16.0 (Completed) whose spec asks for `version` (an available update).
fn on_4_16_0_asking(version: &str, conditions: Vec<Value>) -> HostedCluster {
    hosted_cluster(
        (version, "4.16.0"),
        hc_history(&[(
            "Completed",
            "4.16.0",
            "2026-01-01T08:00:00Z",
            Some("2026-01-01T09:00:00Z"),
        )]),
        &[version],
        conditions,
        None,
    )
}

#[test]
fn blocked_minor_update() {
    let mut conditions = settled();
    conditions[1] = c(
        "Progressing",
        "False",
        "Blocked",
        "ClusterVersionUpgradeable condition is false: Cluster operator cloud-credential should not be upgraded between minor versions",
    );
    conditions.push(c(
        "ClusterVersionUpgradeable",
        "False",
        "FromClusterVersion",
        "x",
    ));
    let hc = on_4_16_0_asking("4.17.0", conditions);
    let d = World::default().run(&hc);
    let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
    assert_eq!(cp.assessment, Assessment::Stalled);
    assert_eq!(
        cp.versions.target, "4.17.0",
        "the version of the requested image"
    );
    assert_eq!(cp.versions.previous, "4.16.0");
    let blocked = d
        .cluster
        .insights
        .iter()
        .find(|i| {
            i.status
                .health
                .as_ref()
                .is_some_and(|h| h.source == health::SOURCE_UPDATE_BLOCKED)
        })
        .expect("blocked insight");
    let h = blocked.status.health.as_ref().expect("h");
    assert_eq!(h.impact.level, ImpactLevel::Error);
    assert!(
        h.impact
            .description
            .contains("ClusterVersionUpgradeable condition is false")
    );
    assert_eq!(cp.health_insights.error, 1);
    let healthy = cp
        .conditions
        .iter()
        .find(|c| c.type_ == "Healthy")
        .expect("Healthy");
    assert_eq!(healthy.status, ConditionStatus::False);
    assert_eq!(healthy.reason, "ErrorHealthInsights");
}

#[test]
fn requested_update_not_yet_accepted_is_pending() {
    let mut conditions = settled();
    conditions[1] = c(
        "Progressing",
        "True",
        "Progressing",
        "HostedCluster is deploying, upgrading, or reconfiguring",
    );
    let hc = on_4_16_0_asking("4.16.1", conditions);
    let d = World::default().run(&hc);
    let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
    assert_eq!(cp.assessment, Assessment::Pending);
    assert_eq!(cp.versions.target, "4.16.1");
    assert_eq!(cp.versions.previous, "4.16.0");
    assert!(
        cp.conditions
            .iter()
            .any(|c| c.type_ == control_plane::CONDITION_UPDATE_REQUESTED
                && c.status == ConditionStatus::True)
    );
}

#[test]
fn invalid_release_image() {
    let mut conditions = settled();
    conditions[1] = c(
        "Progressing",
        "False",
        "Blocked",
        "release image is invalid",
    );
    conditions[6] = c(
        "ValidReleaseImage",
        "False",
        "InvalidImage",
        "failed to pull the release image: manifest unknown",
    );
    let mut hc = completed_hc("4.16.0");
    hc.spec.release.image = "quay.io/openshift-release-dev/ocp-release:nope".into();
    if let Some(s) = hc.status.as_mut() {
        s.conditions = serde_json::from_value(Value::Array(conditions)).expect("conditions");
    }
    let d = World::default().run(&hc);
    let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
    assert_eq!(cp.assessment, Assessment::Stalled);
    assert_eq!(
        cp.versions.target,
        "quay.io/openshift-release-dev/ocp-release:nope"
    );
    let sources = health_sources(&d);
    assert!(
        sources.contains(&(
            health::SOURCE_INVALID_RELEASE_IMAGE.to_string(),
            ImpactLevel::Error
        )),
        "{sources:?}"
    );
}

#[test]
fn node_pool_with_zero_replicas_is_empty() {
    let hc = completed_hc("4.16.0");
    let w = World {
        pools: vec![node_pool(
            "np0",
            "Replace",
            0,
            ("4.16.0", "4.16.0"),
            np_settled(),
        )],
        deployments: vec![machine_deployment("np0", "4.16.0", 0)],
        ..Default::default()
    };
    let d = w.run(&hc);
    let p = pool(&d, "np0");
    assert_eq!(p.status.assessment, Assessment::Empty);
    assert_eq!(p.status.nodes.total, 0);
    assert_eq!(p.status.completion_percent, 0);
    assert!(health_sources(&d).is_empty());
}

#[test]
fn control_plane_version_present_or_absent() {
    // Older HyperShift: no status.controlPlaneVersion, no management-side condition.
    let d = World::default().run(&updating_hc());
    let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
    assert!(
        !cp.conditions
            .iter()
            .any(|c| c.type_ == control_plane::CONDITION_MANAGEMENT_SIDE_UPDATED)
    );
    assert_eq!(cp.versions.target, "4.16.0");

    // Newer: the management side is done while status.version is still Partial.
    let mut hc = updating_hc();
    let newer = hosted_cluster(
        ("4.16.0", "4.16.0"),
        vec![],
        &[],
        vec![],
        Some(hc_history(&[(
            "Completed",
            "4.16.0",
            "2026-01-01T09:30:00Z",
            Some("2026-01-01T09:50:00Z"),
        )])),
    );
    if let (Some(s), Some(n)) = (hc.status.as_mut(), newer.status) {
        s.control_plane_version = n.control_plane_version;
    }
    let d = World::default().run(&hc);
    let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
    assert_eq!(cp.assessment, Assessment::Progressing);
    let m = cp
        .conditions
        .iter()
        .find(|c| c.type_ == control_plane::CONDITION_MANAGEMENT_SIDE_UPDATED)
        .expect("ManagementSideUpdated");
    assert_eq!(m.status, ConditionStatus::True);
}

#[test]
fn unreachable_hosted_cluster_and_degraded_requeue() {
    let mut conditions = settled();
    conditions[2] = condition(
        "Degraded",
        "True",
        "UnavailableReplicas",
        "kube-apiserver has 1 unavailable replica",
        "2026-01-01T09:55:00Z",
    );
    let mut hc = completed_hc("4.15.1");
    if let Some(s) = hc.status.as_mut() {
        s.conditions = serde_json::from_value(Value::Array(conditions)).expect("conditions");
    }
    let w = World {
        unreachable: Some("Get \"https://api.demo:6443\": dial tcp: i/o timeout"),
        ..Default::default()
    };
    let d = w.run(&hc);
    assert!(has_source(&d, health::SOURCE_UNREACHABLE));
    assert!(
        !has_source(&d, health::SOURCE_DEGRADED),
        "degraded for 5 min only"
    );
    assert_eq!(d.requeue_after, Some(jiff::SignedDuration::from_mins(5)));
}

#[test]
fn node_pools_of_other_clusters_are_ignored() {
    let hc = completed_hc("4.15.1");
    let mut other = node_pool("other", "Replace", 1, ("4.15.1", "4.15.1"), np_settled());
    other.spec.cluster_name = "another".into();
    let w = World {
        pools: vec![other],
        ..Default::default()
    };
    assert!(w.run(&hc).cluster.worker_pools.is_empty());
}

#[test]
fn an_in_place_node_without_the_pool_label_is_found_through_its_machine() {
    let hc = completed_hc("4.16.0");
    let mut running = np_settled();
    running[0] = c("UpdatingVersion", "True", "AsExpected", "");
    let mut fresh = hosted_node(
        "n9",
        "np1",
        &[
            ("currentConfig", "h1"),
            ("desiredConfig", "h2"),
            ("state", "Working"),
        ],
    );
    fresh.metadata.labels = None;
    let mut stranger = hosted_node("x1", "np1", &[]);
    stranger.metadata.labels = None;
    let w = World {
        pools: vec![node_pool(
            "np1",
            "InPlace",
            1,
            ("4.16.0", "4.15.1"),
            running,
        )],
        sets: vec![machine_set("np1", "4.16.0", 1, ("h2", "h1"), &[])],
        machines: vec![healthy_machine("n9", "np1", "4.15.1")],
        operators: Some(vec![]),
        nodes: vec![fresh, stranger],
        ..Default::default()
    };
    let d = w.run(&hc);
    let p = pool(&d, "np1");
    assert_eq!(
        p.status.nodes.total, 1,
        "the unlabelled node of no Machine is not counted"
    );
    assert_eq!(p.status.nodes.updated, 0);
    assert!(node_progress(&d, "n9").progress.is_some());
}

#[test]
fn objects_without_status_give_unknown_not_a_crash() {
    let hc: HostedCluster = crate::test_support::from_json(serde_json::json!({
        "metadata": {"name": HC, "namespace": NS},
        "spec": {"release": {"image": image("4.16.0")}},
    }));
    let np: NodePool = crate::test_support::from_json(serde_json::json!({
        "metadata": {"name": "np1", "namespace": NS},
        "spec": {"clusterName": HC, "management": {"upgradeType": "Replace"}},
    }));
    let m: Machine = crate::test_support::from_json(serde_json::json!({
        "metadata": {"name": "m1", "namespace": cp_ns(),
                     "annotations": {"hypershift.openshift.io/nodePool": format!("{NS}/np1")}},
        "spec": {},
    }));
    let w = World {
        pools: vec![np],
        machines: vec![m],
        ..Default::default()
    };
    let d = w.run(&hc);
    let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
    assert_eq!(cp.assessment, Assessment::Unknown);
    assert!(
        has_source(&d, "ClusterVersionNoFailing"),
        "{:?}",
        health_sources(&d)
    );
    let p = pool(&d, "np1");
    assert_eq!(p.status.nodes.total, 1);
    assert_eq!(p.status.nodes.updated, 0);
}

#[test]
fn a_second_pass_on_its_own_objects_is_unchanged() {
    use std::sync::Arc;
    use update_status_api::crd::{
        ControlPlaneUpdateStatus, ControlPlaneUpdateStatusSpec, UpdateInsight, UpdateInsightSpec,
    };
    let hc = updating_hc();
    let w = World {
        operators: Some(vec![
            crate::test_support::co("etcd", "4.16.0", vec![]),
            crate::test_support::co("kube-apiserver", "4.15.1", vec![]),
        ]),
        unreachable: None,
        ..Default::default()
    };
    let guest = w.operators.as_ref().map(|ops| GuestInputs {
        cluster_operators: ops,
        nodes: &w.nodes,
        reported: Default::default(),
    });
    let inputs = HostedInputs {
        hosted_cluster: &hc,
        node_pools: &w.pools,
        machines: &w.machines,
        machine_sets: &w.sets,
        machine_deployments: &w.deployments,
        guest,
        guest_unreachable: Some("dial tcp: i/o timeout"),
    };
    let first = desired_hosted(&inputs, &Existing::default(), now());
    let objs: Vec<Arc<UpdateInsight>> = first
        .cluster
        .insights
        .iter()
        .map(|d| {
            let mut o = UpdateInsight::new(&d.name, UpdateInsightSpec {});
            o.status = Some(d.status.clone());
            Arc::new(o)
        })
        .collect();
    let cp_desired = first.cluster.control_plane.as_ref().expect("cp");
    let mut cp = ControlPlaneUpdateStatus::new(&cp_desired.name, ControlPlaneUpdateStatusSpec {});
    cp.status = Some(cp_desired.status.clone());
    let existing = Existing {
        control_plane: Some(&cp),
        insights: crate::compose::ExistingInsights::new(&objs),
        ..Default::default()
    };
    let later = now() + jiff::SignedDuration::from_secs(30);
    let second = desired_hosted(&inputs, &existing, later);
    assert_eq!(second.cluster, first.cluster);
    // The unreachable insight keeps its first start.
    assert!(has_source(&second, health::SOURCE_UNREACHABLE));
}

/// `n` ClusterOperators `op-000`, ... (platform ones, 4.16.0: updated).
fn many_operators(n: usize) -> Vec<ClusterOperator> {
    (0..n)
        .map(|i| crate::test_support::co(&format!("op-{i:04}"), "4.16.0", vec![]))
        .collect()
}

fn over_cap_summaries(d: &DesiredHosted) -> Vec<String> {
    d.cluster
        .insights
        .iter()
        .filter_map(|i| i.status.health.as_ref())
        .filter(|h| h.source == caps::SOURCE_OVER_CAP)
        .map(|h| h.impact.summary.clone())
        .collect()
}

/// Issue #29 item 2: a hosted cluster with more ClusterOperators than the cap is assessed on
/// the first `MAX_GUEST_CLUSTER_OPERATORS` and gets one insight saying so; one under it (the
/// other hosted cluster) gets none, and its counts are its own.
#[test]
fn a_hosted_cluster_past_the_operator_cap_shows_the_first_ones_and_says_so() {
    let max = caps::MAX_GUEST_CLUSTER_OPERATORS;
    let hc = updating_hc();
    let flood = World {
        operators: Some(many_operators(max + 60)),
        ..Default::default()
    };
    let d = flood.run(&hc);
    let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
    assert_eq!(cp.operators.total as usize, max);
    assert_eq!(
        over_cap_summaries(&d),
        [format!(
            "hosted cluster {}/{} reports {} ClusterOperators, more than {max}; showing the first {max}",
            hc.namespace(),
            hc.name(),
            max + 60
        )]
    );
    assert!(cp.health_insights.warning >= 1, "the insight is counted");
    // A cache that kept only `max` of 5,000: the count it reports is what the insight says.
    let cached = World {
        operators: Some(many_operators(max)),
        reported: caps::Reported {
            cluster_operators: 5_000,
            nodes: 0,
        },
        ..Default::default()
    };
    let s = over_cap_summaries(&cached.run(&hc));
    assert_eq!(s.len(), 1);
    assert!(s[0].contains("reports 5000 ClusterOperators, more than 200; showing the first 200"));
    // At the cap exactly, and another hosted cluster with a few: nothing said, all counted.
    for n in [max, 3] {
        let ok = World {
            operators: Some(many_operators(n)),
            ..Default::default()
        };
        let d = ok.run(&hc);
        assert!(over_cap_summaries(&d).is_empty());
        let cp = &d.cluster.control_plane.as_ref().expect("cp").status;
        assert_eq!(cp.operators.total as usize, n);
    }
}

/// Issue #29 item 2: a ClusterOperator of ~500 KB of tenant text is kept in under 8 KB, still a
/// platform operator, its read conditions and versions as the assessment sees them; ordinary
/// operators give the same assessment trimmed or not.
#[test]
fn trimmed_operators_are_small_and_assess_the_same() {
    let big = "x".repeat(100_000);
    let mut conditions: Vec<Value> = (0..50)
        .map(|i| c(&format!("Custom{i}"), "True", &big, &big))
        .collect();
    conditions.push(c("Progressing", "False", "Old", &big));
    conditions.push(c("Progressing", "True", "Working", "rolling out"));
    let mut co = crate::test_support::co("fat", "4.16.0", conditions);
    let a = co.metadata.annotations.get_or_insert_default();
    for i in 0..5 {
        a.insert(format!("tenant/{i}"), big.clone());
        a.insert(format!("include.release.openshift.io/p{i}"), big.clone());
    }
    co.metadata.labels = Some([("l".to_string(), big.clone())].into());
    for _ in 0..50 {
        co.status
            .versions
            .push(update_status_api::input::OperandVersion {
                name: "operator".into(),
                version: big.clone(),
            });
    }
    let before = serde_json::to_vec(&co).expect("json").len();
    assert!(before > 500_000, "{before}");
    caps::trim_operator(&mut co);
    let after = serde_json::to_vec(&co).expect("json").len();
    assert!(after < 8_192, "{after} bytes kept");
    assert!(co.is_platform_operator());
    let p = co.condition("Progressing").expect("kept");
    assert_eq!((p.status.as_str(), p.reason.as_str()), ("True", "Working"));
    assert_eq!(co.version("operator"), Some("4.16.0"));

    let hc = updating_hc();
    let ops = vec![
        crate::test_support::co("etcd", "4.16.0", vec![c("Progressing", "False", "", "")]),
        crate::test_support::co(
            "kube-apiserver",
            "4.15.1",
            vec![
                c("Available", "True", "", ""),
                c("Degraded", "True", "Bad", "it hurts"),
                c("Progressing", "True", "Rolling", "2 of 3"),
            ],
        ),
    ];
    let mut trimmed = ops.clone();
    trimmed.iter_mut().for_each(caps::trim_operator);
    assert_ne!(trimmed, ops, "trimming changed something");
    let whole = World {
        operators: Some(ops),
        ..Default::default()
    };
    let cut = World {
        operators: Some(trimmed),
        ..Default::default()
    };
    assert_eq!(whole.run(&hc).cluster, cut.run(&hc).cluster);
}
