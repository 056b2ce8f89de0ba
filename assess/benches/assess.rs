//! Benchmarks of the pure assessment at 500, 2,000 and 5,000 nodes (`make bench` runs them,
//! then `e2e/src/bin/bench.rs` copies the results into `docs/benchmarks.md`).
//!
//! The synthetic cluster is mid-update: 34 platform operators (26 updated, `machine-config`
//! progressing), a master pool of 3 nodes and two worker pools sharing the rest; 60 % of the
//! workers updated, 10 % draining, updating or rebooting, 1 % degraded by a blocked drain, 1 %
//! not ready, the others pending.
//!
//! - `nodes/assess_nodes`: everything from scratch (context, every node, every pool);
//! - `nodes/per_node_and_aggregate`: the worker-pools reconciler's full pass (context,
//!   `assess_node` per node, `aggregate_pool` per pool);
//! - `nodes/aggregate_cached`: its pass after a single node event (the other nodes'
//!   assessments come from its cache: only `aggregate_pool` per pool);
//! - `control_plane/assess_control_plane`: the control-plane reconciler's pass;
//! - `cluster/assess_cluster`: what the CLI's offline mode runs.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use jiff::Timestamp;
use serde_json::{Value, json};
use update_status_api::input::{
    ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool, Node,
};
use update_status_assess::nodes::{self, NodeContext};
use update_status_assess::test_support::{condition, from_json};
use update_status_assess::{ClusterInputs, assess_cluster, compose, control_plane};

const SIZES: [usize; 3] = [500, 2_000, 5_000];
const FROM: &str = "4.17.12";
const TO: &str = "4.18.3";
const NOW: &str = "2026-01-01T12:00:00Z";
const STARTED: &str = "2026-01-01T11:00:00Z";

struct Inputs {
    cv: ClusterVersion,
    cos: Vec<ClusterOperator>,
    pools: Vec<MachineConfigPool>,
    mcs: Vec<MachineConfig>,
    nodes: Vec<Node>,
}

impl Inputs {
    fn view(&self) -> ClusterInputs<'_> {
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

fn rendered(pool: &str, version: &str) -> String {
    format!("rendered-{pool}-{}", version.replace('.', ""))
}

fn inputs(total: usize) -> Inputs {
    let cv = from_json(json!({
        "metadata": {"name": "version"},
        "status": {
            "desired": {"version": TO, "image": "img-to"},
            "history": [
                {"state": "Partial", "startedTime": STARTED, "version": TO, "image": "img-to"},
                {"state": "Completed", "startedTime": "2025-11-20T10:00:00Z", "completionTime": "2025-11-20T11:10:00Z", "version": FROM, "image": "img-from"},
                {"state": "Completed", "startedTime": "2025-10-01T10:00:00Z", "completionTime": "2025-10-01T10:45:00Z", "version": "4.17.5", "image": "img-install"},
            ],
            "conditions": [
                condition("Available", "True", "", "Done applying 4.17.12", "2025-11-20T11:10:00Z"),
                condition("Failing", "False", "", "", "2025-11-20T11:10:00Z"),
                condition("Progressing", "True", "", "Working towards 4.18.3: 26 of 34 done (76% complete), waiting on machine-config", STARTED),
            ],
        },
    }));
    let cos = (0..34)
        .map(|i| {
            let name = if i == 33 {
                "machine-config".to_string()
            } else {
                format!("operator-{i:02}")
            };
            let updated = i < 26;
            let progressing = i == 33;
            from_json(json!({
                "metadata": {"name": name, "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"}},
                "status": {
                    "versions": [{"name": "operator", "version": if updated { TO } else { FROM }}],
                    "conditions": [
                        condition("Available", "True", "AsExpected", "", "2025-11-20T11:10:00Z"),
                        condition("Degraded", if i == 30 { "True" } else { "False" }, "AsExpected", "a replica is crash-looping", "2026-01-01T11:20:00Z"),
                        condition("Progressing", if progressing { "True" } else { "False" }, "", "Working towards 4.18.3", "2026-01-01T11:40:00Z"),
                    ],
                },
            }))
        })
        .collect();
    let pool_names = ["master", "worker", "infra"];
    let pools = pool_names
        .iter()
        .map(|p| {
            from_json(json!({
                "metadata": {"name": p},
                "spec": {
                    "nodeSelector": {"matchLabels": {format!("node-role.kubernetes.io/{p}"): ""}},
                    "configuration": {"name": rendered(p, TO)},
                    "paused": false,
                },
            }))
        })
        .collect();
    let mcs = pool_names
        .iter()
        .flat_map(|p| [(rendered(p, FROM), FROM), (rendered(p, TO), TO)])
        .map(|(name, v)| {
            from_json(json!({"metadata": {"name": name, "annotations": {"machineconfiguration.openshift.io/release-image-version": v}}}))
        })
        .collect();
    let nodes = (0..total)
        .map(|i| {
            let (pool, role_labels) = match i {
                0..=2 => ("master", vec!["master"]),
                _ if i % 4 == 0 => ("infra", vec!["worker", "infra"]),
                _ => ("worker", vec!["worker"]),
            };
            let labels: serde_json::Map<String, Value> = role_labels
                .iter()
                .map(|r| (format!("node-role.kubernetes.io/{r}"), json!("")))
                .collect();
            let (old, new) = (rendered(pool, FROM), rendered(pool, TO));
            // (current, desired, state, desiredDrain, lastAppliedDrain, unschedulable, ready, reason)
            let bucket = i % 100;
            let (current, desired, state, dd, lad, cordoned, ready, reason) = match bucket {
                0..=59 => (&new, &new, "Done", format!("uncordon-{new}"), format!("uncordon-{new}"), false, "True", ""),
                60..=62 => (&old, &new, "Working", format!("drain-{new}"), format!("uncordon-{old}"), true, "True", ""),
                63..=65 => (&old, &new, "Working", format!("drain-{new}"), format!("drain-{new}"), true, "True", ""),
                66..=68 => (&old, &new, "Rebooting", format!("drain-{new}"), format!("drain-{new}"), true, "Unknown", ""),
                69 => (&new, &new, "Done", format!("uncordon-{new}"), format!("drain-{new}"), true, "True", ""),
                70 => (&old, &new, "Degraded", format!("drain-{new}"), format!("uncordon-{old}"), true, "True", "failed to drain node: after 1 hour: PodDisruptionBudget shop/checkout-pdb"),
                71 => (&old, &old, "Done", format!("uncordon-{old}"), format!("uncordon-{old}"), false, "False", ""),
                _ => (&old, &old, "Done", format!("uncordon-{old}"), format!("uncordon-{old}"), false, "True", ""),
            };
            from_json(json!({
                "metadata": {
                    "name": format!("ip-10-0-{}-{}.us-east-2.compute.internal", 16 + i / 250, i % 250 + 2),
                    "resourceVersion": format!("{}", 1000 + i),
                    "labels": labels,
                    "annotations": {
                        "machineconfiguration.openshift.io/currentConfig": current,
                        "machineconfiguration.openshift.io/desiredConfig": desired,
                        "machineconfiguration.openshift.io/state": state,
                        "machineconfiguration.openshift.io/reason": reason,
                        "machineconfiguration.openshift.io/desiredDrain": dd,
                        "machineconfiguration.openshift.io/lastAppliedDrain": lad,
                    },
                },
                "spec": {"unschedulable": cordoned},
                "status": {"conditions": [
                    condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "", "2025-10-01T10:00:00Z"),
                    condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "", "2025-10-01T10:00:00Z"),
                    condition("Ready", ready, "KubeletReady", "", "2026-01-01T11:30:00Z"),
                ]},
            }))
        })
        .collect();
    Inputs {
        cv,
        cos,
        pools,
        mcs,
        nodes,
    }
}

fn now() -> Timestamp {
    match NOW.parse() {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

fn bench_nodes(c: &mut Criterion) {
    let now = now();
    let mut g = c.benchmark_group("nodes");
    for n in SIZES {
        let data = inputs(n);
        let view = data.view();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("assess_nodes", n), &view, |b, v| {
            b.iter(|| nodes::assess_nodes(black_box(v), now))
        });
        g.bench_with_input(
            BenchmarkId::new("per_node_and_aggregate", n),
            &view,
            |b, v| {
                b.iter(|| {
                    let ctx = NodeContext::from_inputs(v);
                    let assessed: Vec<_> = v
                        .nodes
                        .iter()
                        .filter_map(|node| nodes::assess_node(&ctx, node, now))
                        .collect();
                    ctx.pools()
                        .iter()
                        .map(|p| nodes::aggregate_pool(&ctx, p, assessed.iter()))
                        .collect::<Vec<_>>()
                })
            },
        );
        let ctx = NodeContext::from_inputs(&view);
        let assessed: Vec<_> = data
            .nodes
            .iter()
            .filter_map(|node| nodes::assess_node(&ctx, node, now))
            .collect();
        g.bench_with_input(
            BenchmarkId::new("aggregate_cached", n),
            &assessed,
            |b, assessed| {
                b.iter(|| {
                    ctx.pools()
                        .iter()
                        .map(|p| nodes::aggregate_pool(&ctx, p, assessed.iter()))
                        .collect::<Vec<_>>()
                })
            },
        );
    }
    g.finish();
}

fn bench_control_plane(c: &mut Criterion) {
    let now = now();
    let data = inputs(500);
    let view = data.view();
    let pools = nodes::assess_nodes(&view, now);
    let master = pools.control_plane_pool();
    let mut g = c.benchmark_group("control_plane");
    g.bench_function("assess_control_plane", |b| {
        b.iter(|| control_plane::assess_control_plane(black_box(&view), master, now))
    });
    // What one control-plane reconciler pass computes: the master pool's counts from the whole
    // node cache, then the complete desired objects.
    for n in SIZES {
        let data = inputs(n);
        let view = data.view();
        let base = compose::base_labels(Some("bench"));
        let existing = compose::ExistingInsights::default();
        g.bench_with_input(BenchmarkId::new("control_plane_share", n), &view, |b, v| {
            b.iter(|| {
                let naming = compose::Naming {
                    existing: &existing,
                    base: &base,
                };
                compose::control_plane_share(black_box(v), v.nodes, None, naming, now)
            })
        });
    }
    g.finish();
}

fn bench_cluster(c: &mut Criterion) {
    let now = now();
    let mut g = c.benchmark_group("cluster");
    for n in SIZES {
        let data = inputs(n);
        let view = data.view();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("assess_cluster", n), &view, |b, v| {
            b.iter(|| assess_cluster(black_box(v), now))
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_nodes, bench_control_plane, bench_cluster
}
criterion_main!(benches);
