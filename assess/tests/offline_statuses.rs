//! The offline path's statuses are the desired objects' statuses: [`assess_cluster`] (and
//! [`assess_cluster_nodes`] with the nodes borrowed or owned, as the CLI hands them over) gives
//! exactly the statuses of [`compose::desired_cluster`] with no objects of ours, in the same
//! order, on every fixture at several instants, on a fixture with the captured alerts of
//! `tests/data`, and on random mid-update clusters (pools paused or not, nodes updating,
//! draining, degraded, not ready, cordoned, in no pool or without a name). Everywhere, the
//! nodes trimmed by [`trim_node`] to what the assessment reads (as the controller caches
//! them) give the same statuses.

mod common;

use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;
use serde_json::{Value, json};
use update_status_api::input::{
    AlertsResponse, ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool, Node,
};
use update_status_assess::nodes::trim_node;
use update_status_assess::test_support::{condition, from_json};
use update_status_assess::{
    ClusterAssessment, ClusterInputs, assess_cluster, assess_cluster_nodes, compose,
};

/// What `assess_cluster` gave before it had its own composition: the statuses of the whole
/// desired composition.
fn reference(inputs: &ClusterInputs<'_>, now: Timestamp) -> ClusterAssessment {
    ClusterAssessment::from(compose::desired_cluster(
        inputs,
        &compose::Existing::default(),
        &compose::Labels::new(),
        now,
    ))
}

/// Every way in: borrowed inputs, nodes borrowed apart, nodes owned (the CLI's); and the
/// nodes trimmed to what the assessment reads (the controller's cache) give the same.
fn check(inputs: &ClusterInputs<'_>, now: Timestamp) -> ClusterAssessment {
    let want = reference(inputs, now);
    let mut trimmed = inputs.nodes.to_vec();
    trimmed.iter_mut().for_each(trim_node);
    let trimmed_inputs = ClusterInputs {
        nodes: &trimmed,
        ..*inputs
    };
    assert_eq!(reference(&trimmed_inputs, now), want, "nodes trimmed");
    assert_eq!(assess_cluster(inputs, now), want);
    let without_nodes = ClusterInputs {
        nodes: &[],
        ..*inputs
    };
    assert_eq!(
        assess_cluster_nodes(&without_nodes, inputs.nodes.iter(), now),
        want
    );
    assert_eq!(
        assess_cluster_nodes(&without_nodes, inputs.nodes.to_vec(), now),
        want
    );
    want
}

#[test]
fn every_fixture_gives_the_desired_statuses_at_several_instants() {
    let mut insights = 0;
    for dir in common::fixture_dirs() {
        let (snap, now) = common::load_case(&dir);
        let inputs = snap.inputs();
        for later in [0, 5 * 60, 3600, 24 * 3600] {
            let want = check(&inputs, now + SignedDuration::from_secs(later));
            insights += want.insights.len();
        }
    }
    assert!(insights > 100, "{insights}");
}

#[test]
fn the_captured_alerts_give_the_desired_statuses() {
    let dir = update_status_testdata::oc_status_case(
        "4.16.0-ec2-control-plane-updated-pdb-prohibits-draining",
    );
    let (snap, now) = common::load_case(&dir);
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/alerts-4.16.0-ec2-pdb.json"),
    )
    .expect("alerts file");
    let alerts: AlertsResponse = serde_json::from_str(&text).expect("alerts JSON");
    let inputs = ClusterInputs {
        alerts: Some(&alerts.data.alerts),
        ..snap.inputs()
    };
    let want = check(&inputs, now);
    let from_alerts = want
        .insights
        .iter()
        .filter(|i| i.health.as_ref().is_some_and(|h| h.source == "Alert"))
        .count();
    assert!(from_alerts > 0, "no alert insight");
}

const FROM: &str = "4.17.12";
const TO: &str = "4.18.3";
const STARTED: &str = "2026-01-01T11:00:00Z";

fn rendered(pool: &str, version: &str) -> String {
    format!("rendered-{pool}-{}", version.replace('.', ""))
}

/// One generated node: its pool (0 master, 1 worker, 2 infra, 3 none), its state (an index
/// into the states below), cordoned, its Ready status, and whether it has a name.
type NodeSpec = (usize, usize, bool, usize, bool);

/// A mid-update cluster: the ClusterVersion, 3 operators (machine-config updating), the pools
/// (`paused`: infra's), their MachineConfigs and the nodes of `specs`.
struct Cluster {
    cv: ClusterVersion,
    cos: Vec<ClusterOperator>,
    pools: Vec<MachineConfigPool>,
    mcs: Vec<MachineConfig>,
    nodes: Vec<Node>,
}

impl Cluster {
    fn new(specs: &[NodeSpec], paused: bool) -> Self {
        let cv = from_json(json!({
            "metadata": {"name": "version"},
            "status": {
                "desired": {"version": TO, "image": "img-to"},
                "history": [
                    {"state": "Partial", "startedTime": STARTED, "version": TO, "image": "img-to"},
                    {"state": "Completed", "startedTime": "2025-11-20T10:00:00Z", "completionTime": "2025-11-20T11:10:00Z", "version": FROM, "image": "img-from"},
                ],
                "conditions": [
                    condition("Available", "True", "", "Done applying 4.17.12", "2025-11-20T11:10:00Z"),
                    condition("Failing", "False", "", "", "2025-11-20T11:10:00Z"),
                    condition("Progressing", "True", "", "Working towards 4.18.3", STARTED),
                ],
            },
        }));
        let cos = ["etcd", "kube-apiserver", "machine-config"]
            .iter()
            .map(|name| {
                let updated = *name != "machine-config";
                from_json(json!({
                    "metadata": {"name": name, "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"}},
                    "status": {
                        "versions": [{"name": "operator", "version": if updated { TO } else { FROM }}],
                        "conditions": [
                            condition("Available", "True", "AsExpected", "", "2025-11-20T11:10:00Z"),
                            condition("Degraded", "False", "AsExpected", "", "2026-01-01T11:20:00Z"),
                            condition("Progressing", if updated { "False" } else { "True" }, "", "Working towards 4.18.3", "2026-01-01T11:40:00Z"),
                        ],
                    },
                }))
            })
            .collect();
        let names = ["master", "worker", "infra"];
        let pools = names
            .iter()
            .map(|p| {
                from_json(json!({
                    "metadata": {"name": p, "uid": format!("uid-{p}")},
                    "spec": {
                        "nodeSelector": {"matchLabels": {format!("node-role.kubernetes.io/{p}"): ""}},
                        "configuration": {"name": rendered(p, TO)},
                        "paused": paused && *p == "infra",
                    },
                }))
            })
            .collect();
        let mcs = names
            .iter()
            .flat_map(|p| [(rendered(p, FROM), FROM), (rendered(p, TO), TO)])
            .map(|(name, v)| {
                from_json(json!({"metadata": {"name": name, "annotations": {"machineconfiguration.openshift.io/release-image-version": v}}}))
            })
            .collect();
        let nodes = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| node(i, *spec))
            .collect();
        Cluster {
            cv,
            cos,
            pools,
            mcs,
            nodes,
        }
    }

    fn inputs(&self) -> ClusterInputs<'_> {
        ClusterInputs {
            cluster_version: Some(&self.cv),
            cluster_operators: &self.cos,
            pools: &self.pools,
            machine_configs: &self.mcs,
            nodes: &self.nodes,
            ..Default::default()
        }
    }
}

fn node(i: usize, (pool, state, cordoned, ready, named): NodeSpec) -> Node {
    let pool = ["master", "worker", "infra", "none"][pool % 4];
    let mut labels = serde_json::Map::new();
    labels.insert(format!("node-role.kubernetes.io/{pool}"), json!(""));
    if pool == "infra" {
        // Infra nodes also carry the worker role: the pools' order decides.
        labels.insert("node-role.kubernetes.io/worker".into(), json!(""));
    }
    let (old, new) = (rendered(pool, FROM), rendered(pool, TO));
    let drain = |c: &str| format!("drain-{c}");
    let uncordon = |c: &str| format!("uncordon-{c}");
    // (current, desired, state, desiredDrain, lastAppliedDrain, reason)
    let (current, desired, mcd, dd, lad, reason) = match state % 8 {
        0 => (&new, &new, "Done", uncordon(&new), uncordon(&new), ""),
        1 => (&old, &new, "Working", drain(&new), uncordon(&old), ""),
        2 => (&old, &new, "Working", drain(&new), drain(&new), ""),
        3 => (&old, &new, "Rebooting", drain(&new), drain(&new), ""),
        4 => (&new, &new, "Done", uncordon(&new), drain(&new), ""),
        5 => (
            &old,
            &new,
            "Degraded",
            drain(&new),
            uncordon(&old),
            "failed to drain node: PodDisruptionBudget shop/checkout-pdb",
        ),
        6 => (&old, &old, "Done", uncordon(&old), uncordon(&old), ""),
        _ => (
            &old,
            &old,
            "Unreconcilable",
            String::new(),
            String::new(),
            "odd",
        ),
    };
    let ready = ["True", "False", "Unknown"][ready % 3];
    let mut metadata = json!({
        "uid": format!("uid-node-{i}"),
        "labels": labels,
        "annotations": {
            "machineconfiguration.openshift.io/currentConfig": current,
            "machineconfiguration.openshift.io/desiredConfig": desired,
            "machineconfiguration.openshift.io/state": mcd,
            "machineconfiguration.openshift.io/reason": reason,
            "machineconfiguration.openshift.io/desiredDrain": dd,
            "machineconfiguration.openshift.io/lastAppliedDrain": lad,
        },
    });
    if named {
        metadata["name"] = json!(format!("node-{i:04}"));
    }
    let conditions: Vec<Value> = vec![
        condition(
            "DiskPressure",
            if i.is_multiple_of(13) {
                "True"
            } else {
                "False"
            },
            "",
            "",
            "2026-01-01T11:58:00Z",
        ),
        condition(
            "MemoryPressure",
            if i.is_multiple_of(11) {
                "True"
            } else {
                "False"
            },
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
            "2026-01-01T11:00:00Z",
        ),
        condition(
            "Ready",
            ready,
            "KubeletReady",
            "kubelet is posting ready status",
            "2026-01-01T11:30:00Z",
        ),
    ];
    from_json(json!({
        "metadata": metadata,
        "spec": {"unschedulable": cordoned},
        "status": {"conditions": conditions},
    }))
}

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (
        0..4usize,
        0..8usize,
        any::<bool>(),
        0..3usize,
        prop::bool::weighted(0.97),
    )
}

#[test]
fn a_large_mid_update_cluster_gives_the_desired_statuses() {
    let specs: Vec<NodeSpec> = (0..3_000usize)
        .map(|i| {
            (
                if i < 3 { 0 } else { 1 + i % 2 },
                i % 8,
                i.is_multiple_of(5),
                i % 7 % 3,
                true,
            )
        })
        .collect();
    for paused in [false, true] {
        let cluster = Cluster::new(&specs, paused);
        let now: Timestamp = "2026-01-01T12:00:00Z".parse().expect("now");
        let want = check(&cluster.inputs(), now);
        assert_eq!(want.worker_pools.len(), 2);
        assert!(want.insights.len() > 3_000, "{}", want.insights.len());
        let sources: std::collections::BTreeSet<&str> = want
            .insights
            .iter()
            .filter_map(|i| Some(i.health.as_ref()?.source.as_str()))
            .collect();
        assert!(sources.contains("NodeDegraded"), "{sources:?}");
        assert!(sources.contains("NodeUnavailable"), "{sources:?}");
        assert_eq!(sources.contains("PoolPaused"), paused, "{sources:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_clusters_give_the_desired_statuses(
        specs in prop::collection::vec(node_spec(), 0..40),
        paused in any::<bool>(),
        minutes in 0..120i64,
    ) {
        let cluster = Cluster::new(&specs, paused);
        let now: Timestamp = "2026-01-01T11:55:00Z".parse().expect("now");
        let want = check(&cluster.inputs(), now + SignedDuration::from_mins(minutes));
        prop_assert!(want.control_plane.is_some());
    }
}
