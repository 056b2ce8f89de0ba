//! A simulated update against the real control plane and the real controller binary.
//!
//! The simulator plays a short update (5 operators, 2 pools, 10 nodes) with one injected
//! fault: the first worker node's drain is blocked by a PodDisruptionBudget for 3 steps. The
//! controller evaluates at a fixed instant after the simulated update (`--assess-at`), so at
//! every step the objects it writes must equal what the pure logic
//! (`update_status_assess::compose::desired_cluster`) computes from the inputs read back
//! from the API at that instant. The fault must show as a NodeDegraded health insight while it
//! holds and be gone once it clears; the update must end Completed with no health insight.
//! The simulated cluster is 4.18+: `machine-config` reports an `operator-image` and the MCO
//! Deployment exists, so `machine-config` ends updated, and `kubectl update-status` online
//! says the same `Completion` as offline on the simulation's snapshot.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::{Duration, Instant};

use jiff::Timestamp;
use update_status_api::crd::{
    Assessment, ImpactLevel, ImpactType, InsightType, UpdateInsightStatus,
};
use update_status_assess::control_plane::SOURCE_MCO_DEPLOYMENT_ABSENT;
use update_status_assess::nodes::SOURCE_NODE_DEGRADED;
use update_status_e2e::controller::Controller;
use update_status_e2e::outputs::{Outputs, read_outputs};
use update_status_e2e::playback::{self, Simulator};
use update_status_e2e::scenario::{self, ASSESS_AT, Size};
use update_status_e2e::{TestEnv, exclusive_cluster_state};
use update_status_simulator as simulator;

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Per-step wait for the controller to catch up.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

fn degraded_insight<'a>(outputs: &'a Outputs, node: &str) -> Option<&'a UpdateInsightStatus> {
    outputs.insights.values().find(|i| {
        i.resource.name == node
            && i.health
                .as_ref()
                .is_some_and(|h| h.source == SOURCE_NODE_DEGRADED)
    })
}

#[tokio::test]
async fn a_simulated_update_is_reported_as_the_pure_logic_predicts_at_every_step() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("sim").await?;
    let client = env.client();
    let now: Timestamp = ASSESS_AT.parse()?;
    let sim = scenario::blocked_drain(Size {
        operators: 5,
        nodes_per_pool: 7,
        seed: 3,
    })?;
    let blocked = sim
        .blocked_drain_target()
        .ok_or("no blocked-drain target")?
        .to_string();
    let started = Instant::now();
    let mut simulator = scenario::install(&client, sim).await?;
    let controller = Controller::start(&env, ns.name(), &["--assess-at", ASSESS_AT])?;
    let log = controller.log.display().to_string();

    let mut fault_steps = 0;
    let mut cleared_steps = 0;
    let mut completion_steps = 0;
    let mut stages = Vec::new();
    let mut waits = Vec::new();
    loop {
        let step = simulator.simulation().steps();
        // The API holds exactly what the simulation wrote (the fields the logic reads).
        let inputs = playback::read_inputs(&client).await?;
        assert_eq!(
            inputs.normalized(),
            simulator.simulation().inputs()?.normalized(),
            "inputs in the API at step {step}"
        );
        let t0 = Instant::now();
        let got = scenario::until_outputs_match(
            &client,
            ns.name(),
            &inputs,
            now,
            STEP_TIMEOUT,
            &format!("step {step}"),
            &log,
        )
        .await?;
        waits.push(t0.elapsed());

        // The fault, as the administrator sees it.
        let fault = simulator.simulation().fault_status();
        match (&fault.blocked_drain, degraded_insight(&got, &blocked)) {
            (Some(_), Some(i)) => {
                fault_steps += 1;
                let h = i.health.as_ref().ok_or("health")?;
                assert_eq!(h.impact.level, ImpactLevel::Error);
                assert_eq!(h.impact.type_, ImpactType::UpdateStalled);
                assert_eq!(h.impact.summary, format!("Node {blocked} is degraded"));
                assert!(
                    h.impact.description.starts_with("failed to drain node: ")
                        && h.impact.description.contains("PodDisruptionBudget"),
                    "{}",
                    h.impact.description
                );
                let pool = got.pools.get("worker").ok_or("worker pool status")?;
                assert_eq!(pool.assessment, Assessment::Degraded);
            }
            (Some(_), None) => {
                return Err(format!(
                    "step {step}: the blocked drain of {blocked} has no NodeDegraded insight"
                )
                .into());
            }
            (None, Some(_)) => {
                return Err(format!(
                    "step {step}: NodeDegraded insight of {blocked} without the fault"
                )
                .into());
            }
            (None, None) => {
                if fault_steps > 0 {
                    cleared_steps += 1;
                }
            }
        }

        // The CLI online (our objects) and offline (the simulation's snapshot,
        // mco-deployment.yaml included) say the same Completion while the update runs.
        let (online, offline) = cli_online_and_offline(&env, ns.name(), &simulator)?;
        if let Some(line) = completion_line(&online) {
            assert_eq!(
                Some(line.clone()),
                completion_line(&offline),
                "online and offline Completion at step {step}"
            );
            completion_steps += 1;
        }

        stages.push(simulator.simulation().stage());
        if simulator.simulation().is_completed() {
            break;
        }
        if step > 200 {
            return Err("the simulated update did not complete in 200 steps".into());
        }
        simulator.step().await?;
    }

    assert_eq!(fault_steps, 3, "the fault held for 3 steps");
    assert!(cleared_steps > 0, "the fault cleared before the end");
    let end = read_outputs(&client, ns.name()).await?;
    let cp = end
        .control_plane
        .as_ref()
        .ok_or("no ControlPlaneUpdateStatus")?;
    assert_eq!(cp.assessment, Assessment::Completed);
    assert_eq!(cp.completion_percent, 100);
    assert_eq!(cp.versions.target, "4.18.3");
    assert_eq!(cp.versions.previous, "4.17.12");
    assert_eq!(cp.nodes.updated, 3);
    // 4.18+: machine-config's operator-image equals its Deployment's image: it counts as
    // updated (all operators are).
    assert_eq!(
        cp.operators.updated, cp.operators.total,
        "{:?}",
        cp.operators
    );
    let mco = end
        .insights
        .values()
        .find(|i| {
            i.resource.kind == "ClusterOperator" && i.resource.name == simulator::MACHINE_CONFIG
        })
        .and_then(|i| i.progress.as_ref())
        .ok_or("no machine-config progress insight")?;
    assert_eq!(mco.assessment, Assessment::Updated, "{mco:?}");
    assert!(
        !end.insights.values().any(|i| i
            .health
            .as_ref()
            .is_some_and(|h| h.source == SOURCE_MCO_DEPLOYMENT_ABSENT)),
        "the controller saw the MCO Deployment"
    );
    // Once the update is over, online and offline both say so, in the same words.
    let (online, offline) = cli_online_and_offline(&env, ns.name(), &simulator)?;
    assert_eq!(
        String::from_utf8_lossy(&online.stdout),
        String::from_utf8_lossy(&offline.stdout),
        "online and offline output at the end"
    );
    assert!(
        completion_steps > 0,
        "the CLI never showed a Completion line during the update"
    );
    let worker = end.pools.get("worker").ok_or("worker pool status")?;
    assert_eq!(worker.assessment, Assessment::Completed);
    assert_eq!(worker.nodes.updated, 7);
    assert!(
        end.insights
            .values()
            .all(|i| i.type_ == InsightType::Progress),
        "no health insight after the update"
    );
    let nodes_completed = end
        .insights
        .values()
        .filter(|i| i.resource.kind == "Node")
        .filter(|i| i.progress.as_ref().map(|p| p.assessment) == Some(Assessment::Completed))
        .count();
    assert_eq!(nodes_completed, 10);
    let mut sorted = waits.clone();
    sorted.sort();
    eprintln!(
        "simulated update: {} steps ({} checks) in {:.1}s; stages {:?} .. {:?}; controller caught up in median {:?}, max {:?}; {} simulator writes, {} controller writes; {} objects at the end (what ACM Search would index: docs/acm.md)",
        simulator.simulation().steps(),
        waits.len(),
        started.elapsed().as_secs_f64(),
        stages.first(),
        stages.last(),
        sorted.get(sorted.len() / 2),
        sorted.last(),
        simulator.writes(),
        controller.writes()?,
        end.insights.len() + end.pools.len() + usize::from(end.control_plane.is_some()),
    );
    Ok(())
}

/// `kubectl update-status` online (our objects in `ns`) and offline (the simulation written as a
/// snapshot), both at [`ASSESS_AT`].
fn cli_online_and_offline(
    env: &TestEnv,
    ns: &str,
    simulator: &Simulator,
) -> Result<(std::process::Output, std::process::Output), Box<dyn std::error::Error + Send + Sync>>
{
    let online = env.plugin(&["-n", ns, "--now", ASSESS_AT])?;
    let dir = std::env::temp_dir().join(format!("us-e2e-sim-snapshot-{}", std::process::id()));
    simulator.simulation().write_snapshot(&dir)?;
    if !dir.join("mco-deployment.yaml").exists() {
        return Err("the simulation's snapshot has no mco-deployment.yaml".into());
    }
    let offline = env.plugin(&[
        "--from-dir",
        dir.to_str().ok_or("path")?,
        "--now",
        ASSESS_AT,
    ]);
    std::fs::remove_dir_all(&dir)?;
    Ok((online, offline?))
}

/// The `Completion:` line of an output, if it has one (not once the update is over).
fn completion_line(out: &std::process::Output) -> Option<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.starts_with("Completion:"))
        .map(str::to_string)
}
