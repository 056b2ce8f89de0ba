//! The hosted simulation's step logic against the pure hosted assessment (`desired_hosted`):
//! invariants at every step, each stage and each fault as the logic reads them. No API server.

use jiff::SignedDuration;
use update_status_api::crd::{Assessment, UpdateInsightStatus};
use update_status_api::hosted::{NodePool, RELEASE_VERSION_ANNOTATION, annotation};
use update_status_assess::compose::{DesiredCluster, Existing, ExistingInsights};
use update_status_assess::hosted::desired_hosted;
use update_status_assess::hosted::health::{
    SOURCE_BEHIND, SOURCE_DRAIN_FAILED, SOURCE_INVALID_RELEASE_IMAGE, SOURCE_UPDATE_BLOCKED,
};

use super::super::{FaultSpec, NodeStep, Part};
use super::*;

fn small() -> HostedSimConfig {
    HostedSimConfig {
        step: SignedDuration::from_secs(30),
        ..Default::default()
    }
}

fn with(faults: HostedFaults) -> HostedSimulation {
    HostedSimulation::new(HostedSimConfig { faults, ..small() }).expect("sim")
}

/// What the pure logic wants now (management view, or with the hosted Nodes).
fn desired(sim: &HostedSimulation, guest: bool) -> DesiredCluster {
    let inputs = sim.inputs().expect("inputs");
    let existing = Existing {
        control_plane: None,
        insights: ExistingInsights::new(&[]),
        ..Default::default()
    };
    desired_hosted(&inputs.as_hosted_inputs(guest), &existing, sim.now()).cluster
}

fn health<'a>(d: &'a DesiredCluster, source: &str) -> Vec<&'a UpdateInsightStatus> {
    d.insights
        .iter()
        .map(|i| &i.status)
        .filter(|s| s.health.as_ref().is_some_and(|h| h.source == source))
        .collect()
}

fn cp_assessment(d: &DesiredCluster) -> Assessment {
    d.control_plane
        .as_ref()
        .map_or(Assessment::Unknown, |c| c.status.assessment)
}

fn pool_assessments(d: &DesiredCluster) -> Vec<(String, Assessment)> {
    d.worker_pools
        .iter()
        .map(|w| (w.name.clone(), w.status.assessment))
        .collect()
}

#[test]
fn bad_configurations_are_refused() {
    for c in [
        HostedSimConfig {
            replace_replicas: 0,
            ..small()
        },
        HostedSimConfig {
            max_surge: 0,
            max_unavailable: 0,
            ..small()
        },
        HostedSimConfig {
            to_version: "4.17.12".into(),
            ..small()
        },
        HostedSimConfig {
            name: "Not_A_Name".into(),
            ..small()
        },
        HostedSimConfig {
            step: SignedDuration::ZERO,
            ..small()
        },
        HostedSimConfig {
            to_version: "4.17.13".into(),
            faults: HostedFaults {
                blocked_update: Some(FaultSpec::auto(2)),
                ..Default::default()
            },
            ..small()
        },
        HostedSimConfig {
            faults: HostedFaults {
                blocked_drain: Some(FaultSpec::on("m-1", 2)),
                ..Default::default()
            },
            ..small()
        },
    ] {
        let e = HostedSimulation::new(c.clone()).err();
        assert!(e.is_some(), "{c:?}");
    }
}

#[test]
fn a_new_hosted_cluster_is_settled_and_everything_is_to_be_written() {
    let sim = HostedSimulation::new(small()).expect("sim");
    assert_eq!(sim.stage(), HostedStage::Idle);
    // HostedCluster, 2 NodePools, MachineDeployment, MachineSet, 3 + 3 Machines; two parts.
    assert_eq!(sim.dirty().len(), (1 + 2 + 1 + 1 + 6) * 2);
    assert_eq!(sim.control_plane_namespace(), "clusters-demo");
    let inputs = sim.inputs().expect("inputs");
    assert_eq!(inputs.machines.len(), 6);
    assert_eq!(inputs.guest_nodes.len(), 6);
    assert_eq!(inputs.node_pools.len(), 2);
    assert!(inputs.node_pools.iter().any(NodePool::is_in_place));
    let d = desired(&sim, false);
    assert_eq!(cp_assessment(&d), Assessment::Completed);
    let cp = d.control_plane.as_ref().expect("cp");
    assert_eq!(cp.name, "demo");
    assert_eq!(cp.status.versions.target, "4.17.12");
    assert_eq!(
        pool_assessments(&d),
        [
            ("demo-inplace".to_string(), Assessment::Completed),
            ("demo-workers".to_string(), Assessment::Completed)
        ]
    );
    assert!(d.insights.iter().all(|i| i.status.health.is_none()));
}

/// Steps to completion, checking invariants at every step; returns the stages seen, in order.
fn run_checked(sim: &mut HostedSimulation, max: u64, guest: bool) -> Vec<HostedStage> {
    sim.take_dirty();
    let mut stages = vec![sim.stage()];
    let mut last_at = sim.now();
    let c = sim.config().clone();
    for _ in 0..max {
        if sim.is_completed() {
            break;
        }
        let r = sim.step();
        assert!(r.at > last_at, "time moves forward");
        last_at = r.at;
        let (dirty, lifecycle) = sim.take_dirty();
        assert_eq!(dirty.len() + lifecycle.len(), r.changes, "step {}", r.step);
        if stages.last() != Some(&r.stage) {
            stages.push(r.stage);
        }
        let inputs = sim.inputs().expect("inputs");
        let replace: Vec<_> = inputs
            .machines
            .iter()
            .filter(|m| {
                annotation(&m.metadata, "hypershift.openshift.io/nodePool")
                    == Some("clusters/demo-workers")
            })
            .collect();
        assert!(
            replace.len() <= (c.replace_replicas + c.max_surge) as usize,
            "step {}: {} Replace machines",
            r.step,
            replace.len()
        );
        let available = replace
            .iter()
            .filter(|m| !m.is_deleting() && m.condition("NodeHealthy").is_some_and(|h| h.is_true()))
            .count();
        assert!(
            available >= (c.replace_replicas - c.max_unavailable) as usize,
            "step {}: {available} available Replace machines",
            r.step
        );
        let in_flight = (0..sim.machines.len())
            .filter(|&i| sim.machines[i].pool == IN_PLACE && sim.machines[i].step.in_flight())
            .count();
        assert!(in_flight <= c.in_place_max_unavailable as usize);
        // The pure logic reads every step.
        let d = desired(sim, guest);
        assert!(d.control_plane.is_some());
        assert_eq!(d.worker_pools.len(), 2);
    }
    stages
}

#[test]
fn an_update_goes_through_every_stage_and_completes() {
    let mut sim = HostedSimulation::new(small()).expect("sim");
    let stages = run_checked(&mut sim, 200, false);
    assert_eq!(
        stages,
        [
            HostedStage::Idle,
            HostedStage::Requested,
            HostedStage::ControlPlane,
            HostedStage::ControlPlaneDone,
            HostedStage::NodePools,
            HostedStage::Completed
        ]
    );
    let inputs = sim.inputs().expect("inputs");
    assert!(
        inputs
            .node_pools
            .iter()
            .all(|p| p.current_version() == "4.18.3")
    );
    assert_eq!(inputs.machines.len(), 6);
    assert!(
        inputs
            .machines
            .iter()
            .all(|m| m.version() == Some("4.18.3") && !m.is_deleting())
    );
    let d = desired(&sim, false);
    assert_eq!(cp_assessment(&d), Assessment::Completed);
    assert_eq!(
        d.control_plane
            .as_ref()
            .map(|c| c.status.versions.target.as_str()),
        Some("4.18.3")
    );
    assert!(
        pool_assessments(&d)
            .iter()
            .all(|(_, a)| *a == Assessment::Completed)
    );
    assert!(d.insights.iter().all(|i| i.status.health.is_none()));
    // Every Replace Machine was replaced; the InPlace ones were updated in place.
    assert!(sim.machines.iter().filter(|m| m.pool == REPLACE).count() >= 6);
    assert_eq!(
        sim.machines.iter().filter(|m| m.pool == IN_PLACE).count(),
        3
    );
}

#[test]
fn each_stage_reads_as_hosted_md_says() {
    let mut sim = HostedSimulation::new(small()).expect("sim");
    sim.step();
    assert_eq!(sim.stage(), HostedStage::Requested);
    let d = desired(&sim, false);
    assert_eq!(
        cp_assessment(&d),
        Assessment::Pending,
        "requested, not accepted"
    );
    assert_eq!(
        d.control_plane
            .as_ref()
            .map(|c| c.status.versions.target.as_str()),
        Some("4.18.3")
    );
    sim.step();
    assert_eq!(sim.stage(), HostedStage::ControlPlane);
    assert_eq!(
        cp_assessment(&desired(&sim, false)),
        Assessment::Progressing
    );
    while sim.stage() == HostedStage::ControlPlane {
        sim.step();
    }
    assert_eq!(sim.stage(), HostedStage::ControlPlaneDone);
    let d = desired(&sim, false);
    assert_eq!(cp_assessment(&d), Assessment::Completed);
    assert_eq!(health(&d, SOURCE_BEHIND).len(), 2, "both pools lag behind");
    sim.step();
    assert_eq!(sim.stage(), HostedStage::NodePools);
    let mut progressing = false;
    let mut in_place_updating = false;
    while !sim.is_completed() {
        let d = desired(&sim, true);
        progressing |= pool_assessments(&d)
            .iter()
            .all(|(_, a)| *a == Assessment::Progressing);
        // With the hosted Nodes, an in-place node shows its machine-config phase.
        in_place_updating |= d.insights.iter().any(|i| {
            i.status.progress.as_ref().is_some_and(|p| {
                p.phase.is_some_and(|ph| {
                    matches!(
                        ph,
                        update_status_api::crd::NodePhase::Draining
                            | update_status_api::crd::NodePhase::Rebooting
                    )
                })
            }) && i.status.scope.pool.as_deref() == Some("demo-inplace")
        });
        sim.step();
    }
    assert!(progressing, "both pools were Progressing at some step");
    assert!(
        in_place_updating,
        "an in-place node was seen draining or rebooting"
    );
}

#[test]
fn an_invalid_release_image_blocks_until_fixed() {
    let mut sim = with(HostedFaults {
        invalid_image: Some(FaultSpec::auto(3)),
        ..Default::default()
    });
    sim.step();
    let f = sim.fault_status();
    assert!(f.invalid_image.is_some(), "{f:?}");
    let inputs = sim.inputs().expect("inputs");
    assert_eq!(
        inputs.hosted_cluster.spec.release.image,
        f.invalid_image.clone().unwrap_or_default()
    );
    let d = desired(&sim, false);
    assert_eq!(health(&d, SOURCE_INVALID_RELEASE_IMAGE).len(), 1);
    assert_eq!(health(&d, SOURCE_UPDATE_BLOCKED).len(), 1);
    assert_eq!(cp_assessment(&d), Assessment::Stalled);
    for _ in 0..2 {
        sim.step();
        assert!(sim.fault_status().invalid_image.is_some());
        assert_eq!(sim.stage(), HostedStage::Requested);
    }
    sim.step();
    assert!(sim.fault_status().is_clear());
    let d = desired(&sim, false);
    assert!(health(&d, SOURCE_INVALID_RELEASE_IMAGE).is_empty());
    assert_eq!(cp_assessment(&d), Assessment::Pending, "fixed: requested");
    let stages = run_checked(&mut sim, 200, false);
    assert_eq!(stages.last(), Some(&HostedStage::Completed));
}

#[test]
fn a_minor_update_blocked_by_upgradeable_false_stalls_until_acknowledged() {
    let mut sim = with(HostedFaults {
        blocked_update: Some(FaultSpec::auto(4)),
        ..Default::default()
    });
    let before = sim.inputs().expect("inputs");
    assert!(
        before
            .hosted_cluster
            .condition("ClusterVersionUpgradeable")
            .is_some_and(|c| c.is_false()),
        "the gate is there before the update"
    );
    sim.step();
    assert!(sim.fault_status().blocked_update);
    let d = desired(&sim, false);
    let blocked = health(&d, SOURCE_UPDATE_BLOCKED);
    assert_eq!(blocked.len(), 1);
    let text = serde_json::to_string(blocked[0]).unwrap_or_default();
    assert!(
        text.contains("ClusterVersionUpgradeable condition is false"),
        "{text}"
    );
    assert_eq!(cp_assessment(&d), Assessment::Stalled);
    let mut n = 1;
    while sim.fault_status().blocked_update {
        sim.step();
        n += 1;
    }
    assert_eq!(n, 5, "blocked for 4 steps");
    assert!(health(&desired(&sim, false), SOURCE_UPDATE_BLOCKED).is_empty());
    assert_eq!(
        run_checked(&mut sim, 200, false).last(),
        Some(&HostedStage::Completed)
    );
}

#[test]
fn both_request_faults_in_a_row() {
    let mut sim = with(HostedFaults {
        invalid_image: Some(FaultSpec::auto(2)),
        blocked_update: Some(FaultSpec::auto(2)),
        ..Default::default()
    });
    let mut seen = Vec::new();
    for _ in 0..6 {
        sim.step();
        let f = sim.fault_status();
        seen.push((f.invalid_image.is_some(), f.blocked_update));
    }
    assert_eq!(
        seen,
        [
            (true, false),
            (true, false),
            (false, true),
            (false, true),
            (false, false),
            (false, false)
        ]
    );
    assert_eq!(sim.stage(), HostedStage::ControlPlane);
}

#[test]
fn a_machine_that_cannot_drain_is_reported_while_it_cannot() {
    let mut sim = with(HostedFaults {
        blocked_drain: Some(FaultSpec::auto(4)),
        ..Default::default()
    });
    sim.take_dirty();
    let mut held = 0;
    let mut machine = None;
    while !sim.is_completed() && sim.steps() < 200 {
        sim.step();
        let f = sim.fault_status();
        let d = desired(&sim, false);
        let failed = health(&d, SOURCE_DRAIN_FAILED);
        if let Some(m) = &f.blocked_drain {
            held += 1;
            machine = Some(m.clone());
            assert_eq!(failed.len(), 1, "step {}: {failed:?}", sim.steps());
            assert_eq!(&failed[0].resource.name, m);
            assert_eq!(failed[0].resource.kind, "Machine");
            let inputs = sim.inputs().expect("inputs");
            let stuck = inputs
                .machines
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(m))
                .expect("the stuck machine exists");
            assert!(stuck.is_deleting());
            let c = stuck
                .condition("DrainingSucceeded")
                .expect("drain condition");
            assert_eq!(
                (c.status.as_str(), c.reason.as_str()),
                ("False", DRAINING_FAILED)
            );
            // The rollout waits: no more surge while the old Machine is still there.
            assert!(inputs.machines.len() <= 7);
        } else {
            assert!(failed.is_empty(), "step {}: {failed:?}", sim.steps());
        }
    }
    assert_eq!(held, 4);
    assert!(sim.is_completed());
    assert_eq!(sim.blocked_drain_target(), machine.as_deref());
}

#[test]
fn rendered_objects_respect_the_crd_constraints_we_know() {
    let mut sim = with(HostedFaults {
        blocked_drain: Some(FaultSpec::auto(2)),
        ..Default::default()
    });
    let mut seen_refs = 0;
    while !sim.is_completed() {
        sim.step();
        let (dirty, _) = sim.take_dirty();
        for (r, part) in dirty {
            let Some(body) = sim.render(r, part) else {
                continue;
            };
            seen_refs += 1;
            // cluster-api conditions: reason and message absent or non-empty.
            for c in body["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
            {
                for k in ["reason", "message"] {
                    if r != HostedRef::HostedCluster && !matches!(r, HostedRef::NodePool(_)) {
                        assert!(
                            c.get(k)
                                .is_none_or(|v| v.as_str().is_some_and(|s| !s.is_empty())),
                            "{r:?}: {c}"
                        );
                    }
                }
                assert!(c["lastTransitionTime"].is_string(), "{r:?}: {c}");
            }
            if r == HostedRef::HostedCluster && part == Part::Status {
                assert!(body["status"]["version"]["availableUpdates"].is_array());
                for c in body["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    assert!(c["reason"].as_str().is_some_and(|s| !s.is_empty()), "{c}");
                    assert!(c["message"].is_string(), "{c}");
                }
            }
        }
    }
    assert!(seen_refs > 20);
    // The InPlace Machines carry the new version in their annotation, their spec stays.
    let inputs = sim.inputs().expect("inputs");
    for m in inputs.machines.iter().filter(|m| {
        annotation(&m.metadata, "hypershift.openshift.io/nodePool") == Some("clusters/demo-inplace")
    }) {
        assert_eq!(
            annotation(&m.metadata, RELEASE_VERSION_ANNOTATION),
            Some("4.18.3")
        );
        assert_eq!(m.spec.version.as_deref(), Some("4.17.12"));
    }
    assert!(
        sim.machines
            .iter()
            .filter(|m| m.pool == IN_PLACE)
            .all(|m| m.step == NodeStep::Updated)
    );
}

#[test]
fn surge_and_unavailability_are_honoured() {
    for (surge, unavailable) in [(1, 0), (2, 0), (0, 1), (1, 1)] {
        let mut sim = HostedSimulation::new(HostedSimConfig {
            replace_replicas: 4,
            max_surge: surge,
            max_unavailable: unavailable,
            in_place_max_unavailable: 2,
            seed: 7,
            ..small()
        })
        .expect("sim");
        let stages = run_checked(&mut sim, 300, true);
        assert_eq!(
            stages.last(),
            Some(&HostedStage::Completed),
            "{surge}/{unavailable}"
        );
    }
}

#[test]
fn the_same_seed_plays_the_same_update() {
    let play = || {
        let mut sim = HostedSimulation::new(small()).expect("sim");
        let mut out = Vec::new();
        while !sim.is_completed() {
            out.push(sim.step().summary);
        }
        out
    };
    assert_eq!(play(), play());
}
