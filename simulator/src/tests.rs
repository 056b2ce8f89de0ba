//! The simulation against the pure assessment: invariants at every step, faults as the
//! logic reads them.

use std::collections::BTreeSet;

use jiff::SignedDuration;
use update_status_api::crd::{Assessment, NodePhase};
use update_status_api::input::{
    NODE_CURRENT_CONFIG, NODE_DESIRED_CONFIG, NODE_LAST_APPLIED_DRAIN, NODE_REASON, NODE_STATE,
    Node,
};
use update_status_assess::{assess_cluster, nodes as node_assess};

use super::state::OpPhase;
use super::*;

fn small() -> SimConfig {
    SimConfig {
        operators: 5,
        pools: 2,
        masters: 3,
        nodes_per_pool: 6,
        max_unavailable: 2,
        ..Default::default()
    }
}

/// The [`small`] cluster with `faults`.
fn small_with(faults: Faults) -> Simulation {
    Simulation::new(SimConfig { faults, ..small() }).expect("sim")
}

fn annotation<'a>(n: &'a Node, key: &str) -> &'a str {
    n.annotation(key).unwrap_or_default()
}

#[test]
fn bad_configurations_are_refused() {
    for c in [
        SimConfig {
            operators: 0,
            ..small()
        },
        SimConfig {
            pools: 0,
            ..small()
        },
        SimConfig {
            to_version: "4.17.12".into(),
            ..small()
        },
        SimConfig {
            step: SignedDuration::ZERO,
            ..small()
        },
        SimConfig {
            operators: 1,
            faults: Faults {
                degraded_operator: Some(FaultSpec::auto(2)),
                ..Default::default()
            },
            ..small()
        },
        SimConfig {
            faults: Faults {
                blocked_drain: Some(FaultSpec::on("nope", 2)),
                ..Default::default()
            },
            ..small()
        },
    ] {
        assert!(Simulation::new(c.clone()).is_err(), "{c:?}");
    }
}

#[test]
fn a_new_cluster_is_not_updating_and_everything_is_to_be_written() {
    let sim = Simulation::new(small()).expect("sim");
    assert_eq!(sim.stage(), Stage::Idle);
    // 3 MCs per pool, 2 pools, the CV, 5 operators, 9 nodes, the MCO Deployment; all but MCs
    // and the Deployment have a status.
    let objects = 6 + 2 + 1 + 5 + 9 + 1;
    assert_eq!(sim.dirty().len(), objects * 2 - 7);
    let inputs = sim.inputs().expect("inputs");
    assert_eq!(inputs.nodes.len(), 9);
    assert_eq!(inputs.cluster_operators.len(), 5);
    assert!(
        inputs
            .cluster_operators
            .iter()
            .all(|c| c.is_platform_operator())
    );
    let out = assess_cluster(&inputs.as_cluster_inputs(), sim.now());
    let cp = out.control_plane.expect("cp");
    assert_eq!(cp.assessment, Assessment::Completed);
    assert_eq!(cp.versions.target, "4.17.12");
    assert_eq!(out.worker_pools.len(), 1);
    assert_eq!(out.worker_pools[0].1.assessment, Assessment::Completed);
    assert!(
        out.insights.iter().all(|i| i.health.is_none()),
        "no health insight"
    );
}

/// Steps to completion, checking invariants at every step; returns the reports.
fn run_checked(sim: &mut Simulation, max: u64) -> Vec<StepReport> {
    sim.take_dirty();
    let mut reports = Vec::new();
    let mut last_at = sim.now();
    while !sim.is_completed() && reports.len() < max as usize {
        let r = sim.step();
        assert!(r.at > last_at, "time moves forward");
        last_at = r.at;
        let dirty = sim.take_dirty();
        assert_eq!(dirty.len(), r.changes);
        // At most one operator updates at a time.
        assert!(
            sim.updating_operators().len() <= 1,
            "{:?}",
            sim.updating_operators()
        );
        // maxUnavailable holds in every pool.
        for (p, pool) in sim.pools.iter().enumerate() {
            let unavailable = pool
                .pick_order
                .iter()
                .filter(|&&i| sim.nodes[i].step.in_flight() || sim.nodes[i].ready.status != "True")
                .count();
            assert!(
                unavailable as u32
                    <= pool.max_unavailable.max(1) + u32::from(sim.faults.not_ready_node.is_some()),
                "pool {p} over maxUnavailable at step {}",
                r.step
            );
            // A node targets the new config only once its pool does.
            for &i in &pool.pick_order {
                if sim.nodes[i].desired_config == pool.new_config {
                    assert_eq!(pool.config, pool.new_config);
                }
            }
        }
        reports.push(r);
    }
    reports
}

#[test]
fn an_update_runs_to_completion_operators_one_by_one_machine_config_last() {
    let mut sim = Simulation::new(small()).expect("sim");
    let reports = run_checked(&mut sim, 500);
    assert!(sim.is_completed(), "{:?}", reports.last());
    let stages: Vec<Stage> = reports.iter().map(|r| r.stage).collect();
    assert_eq!(stages.first(), Some(&Stage::ControlPlane));
    assert_eq!(stages.last(), Some(&Stage::Completed));
    let first_nodes = stages
        .iter()
        .position(|s| *s == Stage::Nodes)
        .expect("nodes stage");
    assert!(
        stages[..first_nodes]
            .iter()
            .all(|s| *s == Stage::ControlPlane)
    );
    let inputs = sim.inputs().expect("inputs");
    let cv = &inputs.cluster_version;
    assert_eq!(cv.status.history.len(), 3);
    assert_eq!(cv.status.history[0].state, "Completed");
    assert!(cv.status.history[0].completion_time.is_some());
    assert_eq!(cv.status.desired.version, "4.18.3");
    let progressing = cv
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Progressing")
        .expect("progressing");
    assert_eq!(progressing.status, "False");
    assert!(
        inputs
            .cluster_operators
            .iter()
            .all(|c| c.version("operator") == Some("4.18.3"))
    );
    for n in &inputs.nodes {
        assert_eq!(
            annotation(n, NODE_CURRENT_CONFIG),
            annotation(n, NODE_DESIRED_CONFIG)
        );
        assert_eq!(annotation(n, NODE_STATE), "Done");
        assert!(annotation(n, NODE_LAST_APPLIED_DRAIN).starts_with("uncordon-"));
        assert!(!n.spec.unschedulable);
    }
    let out = assess_cluster(&inputs.as_cluster_inputs(), sim.now());
    let cp = out.control_plane.expect("cp");
    assert_eq!(cp.assessment, Assessment::Completed);
    assert_eq!(cp.completion_percent, 100);
    assert_eq!(out.worker_pools[0].1.assessment, Assessment::Completed);
    assert!(out.insights.iter().all(|i| i.health.is_none()));
    // Completed is a fixed point.
    let r = sim.step();
    assert_eq!(r.changes, 0);
    assert_eq!(r.stage, Stage::Completed);
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another() {
    let run = |seed| {
        let mut sim = Simulation::new(SimConfig { seed, ..small() }).expect("sim");
        let mut out = Vec::new();
        while !sim.is_completed() && out.len() < 500 {
            let r = sim.step();
            out.push((r.summary, sim.take_dirty()));
        }
        out
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
}

#[test]
fn machine_config_waits_for_the_master_pool_and_the_cluster_version_for_every_pool() {
    let mut sim = Simulation::new(small()).expect("sim");
    sim.take_dirty();
    let mco = sim.operators.len() - 1;
    while !sim.is_completed() && sim.steps() < 500 {
        sim.step();
        let masters_done = sim.pool_done(0);
        if sim.operators[mco].phase == OpPhase::Done {
            assert!(masters_done, "machine-config done before the master pool");
        }
        if sim.cv.progressing.status == "False" && sim.stage != Stage::Idle {
            assert!(
                sim.pool_done(1),
                "ClusterVersion completed before the worker pool"
            );
        }
    }
    assert!(sim.is_completed());
}

#[test]
fn a_node_walks_through_the_daemon_phases_as_the_logic_reads_them() {
    let mut sim = Simulation::new(small()).expect("sim");
    while sim.stage() != Stage::Nodes {
        sim.step();
    }
    // A worker node nobody picked yet.
    let i = (0..sim.node_count())
        .find(|&i| {
            sim.node_pool(i) == Some("worker") && sim.node_step(i) == Some(NodeStep::Pending)
        })
        .expect("a pending worker");
    let name = sim.node_name(i).expect("name").to_string();
    let assess = |sim: &Simulation| {
        let inputs = sim.inputs().expect("inputs");
        let ctx = node_assess::NodeContext::from_inputs(&inputs.as_cluster_inputs());
        let node = inputs
            .nodes
            .iter()
            .find(|n| n.name() == name)
            .expect("node");
        let a = node_assess::assess_node(&ctx, node, sim.now()).expect("assessed");
        (a.assessment, a.phase)
    };
    assert_eq!(assess(&sim), (Assessment::Outdated, NodePhase::Pending));
    let expected = [
        (
            NodeStep::Draining,
            Assessment::Progressing,
            NodePhase::Draining,
        ),
        (
            NodeStep::Updating,
            Assessment::Progressing,
            NodePhase::Updating,
        ),
        (
            NodeStep::Rebooting,
            Assessment::Progressing,
            NodePhase::Rebooting,
        ),
        // Updated but still cordoned.
        (NodeStep::Done, Assessment::Unavailable, NodePhase::Updated),
        (NodeStep::Updated, Assessment::Completed, NodePhase::Updated),
    ];
    for (step, assessment, phase) in expected {
        sim.take_dirty();
        let before = sim.object(ObjectRef::Node(i)).expect("node");
        assert_eq!(sim.advance_node(i), Some(step));
        assert!(sim.dirty().contains(&(ObjectRef::Node(i), Part::Main)));
        assert_eq!(assess(&sim), (assessment, phase), "after {step:?}");
        // What a watcher sees between the two writes of this step, in the playback's order:
        // never a health insight (a moment's unavailable node would be a false alarm).
        let first = if sim.status_first(ObjectRef::Node(i)) {
            Part::Status
        } else {
            Part::Main
        };
        if sim.dirty().len() == 2 {
            let mut between = before.clone();
            let part = sim.render(ObjectRef::Node(i), first).expect("part");
            let keys: &[&str] = match first {
                Part::Main => &["metadata", "spec"],
                Part::Status => &["status"],
            };
            for key in keys {
                if let (Some(v), Some(o)) = (part.get(*key), between.as_object_mut()) {
                    o.insert((*key).into(), v.clone());
                }
            }
            let node: Node = serde_json::from_value(between).expect("node");
            let inputs = sim.inputs().expect("inputs");
            let ctx = node_assess::NodeContext::from_inputs(&inputs.as_cluster_inputs());
            // Past the not-ready grace: a reboot can take that long.
            let later = sim.now() + SignedDuration::from_hours(1);
            let a = node_assess::assess_node(&ctx, &node, later).expect("assessed");
            assert!(
                a.health.is_empty(),
                "between the writes of {step:?} ({first:?} first): {:?}",
                a.health
            );
        }
    }
    assert_eq!(sim.advance_node(i), None);
}

#[test]
fn a_blocked_drain_degrades_the_node_then_clears() {
    let mut sim = small_with(Faults {
        blocked_drain: Some(FaultSpec::auto(3)),
        ..Default::default()
    });
    let target = sim.blocked_drain_target().expect("target").to_string();
    let mut seen_steps = 0;
    let mut cleared_after = false;
    while !sim.is_completed() && sim.steps() < 500 {
        sim.step();
        let inputs = sim.inputs().expect("inputs");
        let node = inputs
            .nodes
            .iter()
            .find(|n| n.name() == target)
            .expect("node");
        let out = assess_cluster(&inputs.as_cluster_inputs(), sim.now());
        let degraded_insight = out.insights.iter().any(|i| {
            i.health
                .as_ref()
                .is_some_and(|h| h.source == node_assess::SOURCE_NODE_DEGRADED)
                && i.resource.name == target
        });
        if sim.fault_status().blocked_drain.is_some() {
            seen_steps += 1;
            assert_eq!(annotation(node, NODE_STATE), "Degraded");
            assert!(annotation(node, NODE_REASON).starts_with("failed to drain node: "));
            assert!(annotation(node, NODE_REASON).contains("PodDisruptionBudget"));
            assert!(degraded_insight, "NodeDegraded insight while blocked");
            let pool = out
                .worker_pools
                .iter()
                .find(|(n, _)| n == "worker")
                .expect("pool");
            assert_eq!(pool.1.assessment, Assessment::Degraded);
        } else {
            assert!(!degraded_insight, "no NodeDegraded insight once cleared");
            if seen_steps > 0 {
                cleared_after = true;
                assert_eq!(annotation(node, NODE_REASON), "");
            }
        }
    }
    assert_eq!(seen_steps, 3);
    assert!(cleared_after);
    assert!(sim.is_completed());
}

#[test]
fn a_degraded_operator_holds_the_update_until_it_recovers() {
    let mut sim = small_with(Faults {
        degraded_operator: Some(FaultSpec::on("kube-controller-manager", 4)),
        ..Default::default()
    });
    sim.take_dirty();
    let mut degraded_steps = 0;
    while !sim.is_completed() && sim.steps() < 500 {
        sim.step();
        if sim.fault_status().degraded_operator.is_some() {
            degraded_steps += 1;
            assert_eq!(sim.updating_operators(), ["kube-controller-manager"]);
            let inputs = sim.inputs().expect("inputs");
            let co = inputs
                .cluster_operators
                .iter()
                .find(|c| c.name() == "kube-controller-manager")
                .expect("co");
            assert_eq!(
                co.condition("Degraded").map(|c| c.status.as_str()),
                Some("True")
            );
            assert_ne!(co.version("operator"), Some("4.18.3"));
            // Far enough in the future, the pure logic reports it.
            let later = sim.now() + SignedDuration::from_secs(3600);
            let out = assess_cluster(&inputs.as_cluster_inputs(), later);
            assert!(out.insights.iter().any(|i| {
                i.health
                    .as_ref()
                    .is_some_and(|h| h.source == "ClusterOperatorDegraded")
                    && i.resource.name == "kube-controller-manager"
            }));
        }
    }
    assert_eq!(degraded_steps, 4);
    assert!(sim.is_completed());
}

#[test]
fn a_paused_pool_excludes_its_nodes_until_unpaused() {
    let mut sim = small_with(Faults {
        paused_pool: Some(FaultSpec::on("worker", 5)),
        ..Default::default()
    });
    let mut paused_steps = 0;
    while !sim.is_completed() && sim.steps() < 500 {
        sim.step();
        if sim.fault_status().paused_pool.is_some() {
            paused_steps += 1;
            let progress = sim.pool_progress();
            assert_eq!(progress[1].3, 0, "no worker node in flight while paused");
            let inputs = sim.inputs().expect("inputs");
            let out = assess_cluster(&inputs.as_cluster_inputs(), sim.now());
            assert_eq!(out.worker_pools[0].1.assessment, Assessment::Excluded);
            assert!(out.insights.iter().any(|i| {
                i.health
                    .as_ref()
                    .is_some_and(|h| h.source == node_assess::SOURCE_POOL_PAUSED)
            }));
        }
    }
    assert_eq!(paused_steps, 5);
    assert!(sim.is_completed());
}

#[test]
fn a_not_ready_node_is_unavailable_and_skipped_until_it_recovers() {
    let mut sim = small_with(Faults {
        not_ready_node: Some(FaultSpec::auto(6)),
        ..Default::default()
    });
    let mut steps = 0;
    while !sim.is_completed() && sim.steps() < 500 {
        sim.step();
        if let Some(name) = sim.fault_status().not_ready_node {
            steps += 1;
            let i = sim.node_names().position(|n| n == name).expect("node");
            assert_eq!(sim.node_step(i), Some(NodeStep::Pending));
            let inputs = sim.inputs().expect("inputs");
            let later = sim.now() + SignedDuration::from_secs(600);
            let out = assess_cluster(&inputs.as_cluster_inputs(), later);
            let progress = out
                .insights
                .iter()
                .find(|s| s.resource.name == name && s.progress.is_some())
                .expect("progress");
            assert_eq!(
                progress.progress.as_ref().map(|p| p.assessment),
                Some(Assessment::Unavailable)
            );
            assert!(out.insights.iter().any(|i| {
                i.health
                    .as_ref()
                    .is_some_and(|h| h.source == node_assess::SOURCE_NODE_UNAVAILABLE)
                    && i.resource.name == name
            }));
        }
    }
    assert_eq!(steps, 6);
    assert!(sim.is_completed());
}

#[test]
fn a_stalled_operator_never_completes() {
    let mut sim = small_with(Faults {
        stalled_operator: Some(FaultSpec::auto(0)),
        ..Default::default()
    });
    sim.run_to_completion(200);
    assert!(!sim.is_completed());
    assert_eq!(sim.stage(), Stage::ControlPlane);
    let stalled = sim.fault_status().stalled_operator.expect("stalled");
    assert_eq!(sim.updating_operators(), [stalled.as_str()]);
    let inputs = sim.inputs().expect("inputs");
    let cv = &inputs.cluster_version;
    let p = cv
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Progressing")
        .expect("p");
    assert!(
        p.message.ends_with(&format!("waiting on {stalled}")),
        "{}",
        p.message
    );
    // Nothing moves any more but time.
    sim.take_dirty();
    assert_eq!(sim.step().changes, 0);
}

#[test]
fn progressing_transition_times_change_only_with_the_status() {
    let mut sim = Simulation::new(small()).expect("sim");
    sim.step();
    let started = sim.cv.progressing.ltt;
    for _ in 0..4 {
        sim.step();
    }
    assert_eq!(sim.cv.progressing.ltt, started);
    assert_ne!(sim.cv.progressing.message, "");
    assert_eq!(sim.cv.history[0].started, started);
}

#[test]
fn the_snapshot_reads_back_with_the_api_crate() {
    let mut sim = Simulation::new(small()).expect("sim");
    sim.run_to_completion(12);
    let dir = std::env::temp_dir().join(format!("us-sim-snap-{}", std::process::id()));
    sim.write_snapshot(&dir).expect("write");
    let snap = update_status_snapshot::Snapshot::from_dir(&dir).expect("read");
    std::fs::remove_dir_all(&dir).ok();
    let inputs = sim.inputs().expect("inputs");
    assert_eq!(snap.nodes, inputs.nodes);
    assert_eq!(snap.cluster_version.as_ref(), Some(&inputs.cluster_version));
    assert_eq!(snap.machine_config_pools, inputs.pools);
    assert_eq!(snap.now, Some(sim.now()));
}

#[test]
fn sizes_and_names_scale() {
    let sim = Simulation::new(SimConfig {
        operators: 40,
        pools: 4,
        masters: 3,
        nodes_per_pool: 700,
        ..Default::default()
    })
    .expect("sim");
    assert_eq!(sim.node_count(), 2103);
    let names: BTreeSet<&str> = sim.node_names().collect();
    assert_eq!(names.len(), 2103, "unique node names");
    assert_eq!(sim.operators.len(), 40);
    assert_eq!(
        sim.operators.last().map(|o| o.name.as_str()),
        Some(MACHINE_CONFIG)
    );
    let pools: Vec<String> = sim.pool_progress().into_iter().map(|p| p.0).collect();
    assert_eq!(pools, ["master", "worker", "infra", "gpu"]);
    let inputs = sim.inputs().expect("inputs");
    let ctx = node_assess::NodeContext::from_inputs(&inputs.as_cluster_inputs());
    // Custom pools win over worker (C.1).
    let infra = inputs
        .nodes
        .iter()
        .find(|n| {
            n.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key("node-role.kubernetes.io/infra"))
        })
        .expect("infra node");
    assert_eq!(ctx.pool_of(infra).map(|p| p.name.as_str()), Some("infra"));
}

/// 4.18+: `machine-config` reports an `operator-image`; it equals the MCO Deployment's image
/// before and after the update, and the Deployment moves first (the operator counts as
/// updated only at the end). The snapshot carries the Deployment.
#[test]
fn the_mco_deployment_image_moves_first_and_machine_config_catches_up() {
    use update_status_assess::McoImage;
    let mut sim = Simulation::new(small()).expect("sim");
    let images = |sim: &Simulation| {
        let inputs = sim.inputs().expect("inputs");
        let co = inputs
            .cluster_operators
            .iter()
            .find(|c| c.name() == MACHINE_CONFIG)
            .expect("machine-config")
            .version("operator-image")
            .map(str::to_string);
        let deployment = inputs
            .mco_deployment
            .as_ref()
            .and_then(|d| d.operator_image())
            .map(str::to_string);
        (co, deployment)
    };
    let (co, deployment) = images(&sim);
    assert!(co.is_some());
    assert_eq!(co, deployment, "before the update");
    let mut differed = false;
    while !sim.is_completed() && sim.steps() < 500 {
        sim.step();
        let (co, deployment) = images(&sim);
        differed |= co != deployment;
    }
    assert!(sim.is_completed());
    assert!(
        differed,
        "the Deployment moved before the operator reported it"
    );
    let (co_end, deployment_end) = images(&sim);
    assert_eq!(co_end, deployment_end, "after the update");
    assert_ne!(co_end, co, "a new image");
    let inputs = sim.inputs().expect("inputs");
    let online = inputs.as_cluster_inputs();
    assert!(matches!(online.mco_image, McoImage::Observed(_)));
    let cp = assess_cluster(&online, sim.now())
        .control_plane
        .expect("control plane");
    assert_eq!(
        cp.operators.updated, cp.operators.total,
        "machine-config updated"
    );

    let dir = std::env::temp_dir().join(format!("fidmco-snap-{}", std::process::id()));
    sim.write_snapshot(&dir).expect("snapshot");
    let snap = update_status_snapshot::Snapshot::from_dir(&dir).expect("read back");
    std::fs::remove_dir_all(&dir).expect("cleanup");
    assert_eq!(snap.mco_image, deployment_end);
}
