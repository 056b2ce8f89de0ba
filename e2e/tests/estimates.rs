//! The estimates that learn (issue #40) on the real control plane: what the controller learns
//! of an update survives a restart in the middle of it and a change of leader in the middle of
//! the next one, and the second update is estimated from the first.
//!
//! Two short simulated updates of one cluster (5 operators, a master and a worker pool of 2
//! nodes each), in wall-clock time (a step a second, the simulation's clock on the wall
//! clock, so the controller's own clock times the phases):
//! 1. update 1 with one controller, killed (SIGKILL) once the nodes roll and started again: no
//!    update observed yet, so the estimates say oc's method (`OcBaseline`, with the message
//!    saying why); at the end the `UpdateHistory` holds update 1 learned, with the operators
//!    timed before the restart;
//! 2. update 2 with two replicas under `--leader-elect`; the leader is stopped (SIGTERM) once
//!    the nodes roll, the other takes over: the estimates are `Learned` from the start, and at
//!    the end both updates are learned, the second one whole.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use kube::Api;
use update_status_api::history::{
    EstimateMethod, LearnedSource, UPDATE_HISTORY_NAME, UpdateHistory, UpdateHistoryStatus,
};
use update_status_e2e::controller::Controller;
use update_status_e2e::playback::{self, Simulator};
use update_status_e2e::{TestEnv, exclusive_cluster_state, poll_until};
use update_status_simulator::{Durations, PastUpdate, SimConfig, Simulation, Stage};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);
const STEP: Duration = Duration::from_secs(1);
const OPERATORS: usize = 5;

fn config(from: &str, to: &str, history: Vec<PastUpdate>) -> SimConfig {
    SimConfig {
        operators: OPERATORS,
        pools: 2,
        masters: 2,
        nodes_per_pool: 2,
        max_unavailable: 1,
        installed_version: "4.18.1".into(),
        from_version: from.into(),
        to_version: to.into(),
        seed: 11,
        start: Timestamp::now(),
        step: SignedDuration::from_secs(1),
        durations: Some(Durations {
            instance_types: vec!["m6i.2xlarge".into(); 2]
                .into_iter()
                .chain(vec!["m6i.xlarge".into(); 2])
                .collect(),
            history,
            ..Default::default()
        }),
        ..SimConfig::default()
    }
}

async fn history(api: &Api<UpdateHistory>) -> Option<UpdateHistoryStatus> {
    api.get_opt(UPDATE_HISTORY_NAME)
        .await
        .ok()
        .flatten()
        .and_then(|h| h.status)
}

/// Plays the simulation a step a second (wall clock, from `t0`: step k at `start` + k s)
/// until `stop` holds or the update completes; pushes the methods the estimates said.
async fn play(
    sim: &mut Simulator,
    api: &Api<UpdateHistory>,
    t0: Instant,
    methods: &mut Vec<EstimateMethod>,
    stop: impl Fn(&Simulation) -> bool,
) -> TestResult {
    loop {
        let k = sim.simulation().steps() as u32 + 1;
        if k > 300 {
            return Err("the simulated update did not complete in 300 steps".into());
        }
        if let Some(wait) = (STEP * k).checked_sub(t0.elapsed()) {
            tokio::time::sleep(wait).await;
        }
        sim.step().await?;
        if let Some(m) = history(api)
            .await
            .and_then(|h| h.estimates)
            .map(|e| e.method)
        {
            methods.push(m);
        }
        if sim.simulation().is_completed() || stop(sim.simulation()) {
            return Ok(());
        }
    }
}

fn rolling(s: &Simulation) -> bool {
    s.stage() == Stage::Nodes
}

#[tokio::test]
async fn learned_durations_survive_a_restart_and_a_leader_change() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("estimates").await?;
    let n = ns.name().to_string();
    let client = env.client();
    let api: Api<UpdateHistory> = Api::namespaced(client.clone(), &n);
    let started = Instant::now();

    // Update 1: one controller, restarted in the middle.
    playback::clear(&client).await?;
    let mut sim = Simulator::new(
        client.clone(),
        Simulation::new(config("4.18.2", "4.18.3", vec![]))?,
    );
    sim.install().await?;
    let t0 = Instant::now();
    let controller = Controller::start(&env, &n, &[])?;
    let mut methods = Vec::new();
    play(&mut sim, &api, t0, &mut methods, rolling).await?;
    // What the first controller learned so far, then SIGKILL: nothing is flushed on the way
    // out; the next one starts at once. The operators' times wait up to 30 s for a write (the
    // history's coalescing) while the simulation stands still: a node that takes that long.
    let paused = Instant::now();
    let before = poll_until(TIMEOUT, "operators timed before the restart", || async {
        history(&api)
            .await
            .and_then(|h| h.current)
            .filter(|c| !c.operators.is_empty())
    })
    .await?;
    drop(controller);
    let _restarted = Controller::start(&env, &n, &[])?;
    // Then on, a step a second again: catching up the pause in a burst would roll every node
    // between two of the controller's passes, leaving it no phase to time (CI, 2026-12-06).
    // The simulation's clock stays behind the wall clock by the pause; the phases are timed
    // by the controller's own clock.
    let t0 = t0 + paused.elapsed();
    play(&mut sim, &api, t0, &mut methods, |_| false).await?;
    let first = sim.simulation().history_entry(0).ok_or("no history")?;
    let learned = poll_until(TIMEOUT, "update 1 learned", || async {
        history(&api).await.filter(|h| {
            h.updates
                .iter()
                .any(|u| u.source == LearnedSource::Observed)
        })
    })
    .await?;
    assert!(
        methods.iter().all(|m| *m == EstimateMethod::OcBaseline),
        "no update observed yet: oc's method, said so ({methods:?})"
    );
    for o in &before.operators {
        assert!(
            learned.updates[0].operators.contains(o),
            "{o:?}, timed before the restart, is kept"
        );
    }
    let u1 = &learned.updates[0];
    assert_eq!((u1.from.as_str(), u1.to.as_str()), ("4.18.2", "4.18.3"));
    assert_eq!(
        u1.operators.len(),
        OPERATORS,
        "every operator timed: {u1:?}"
    );
    assert!(
        u1.node_groups.iter().any(|g| g.reboot.count > 0),
        "node phases timed: {:?}",
        u1.node_groups
    );
    assert!(learned.current.is_none());
    drop(_restarted);

    // Update 2: two replicas; the leader steps down in the middle.
    playback::clear(&client).await?;
    let past = vec![PastUpdate {
        version: "4.18.3".into(),
        started: first.0,
        completed: first.1,
    }];
    let mut sim = Simulator::new(
        client.clone(),
        Simulation::new(config("4.18.3", "4.18.4", past))?,
    );
    sim.install().await?;
    let a = Controller::start_replica(&env, &n, "replica-a")?;
    let b = Controller::start_replica(&env, &n, "replica-b")?;
    let lease = || env.lease_holder(&n);
    let leader = poll_until(TIMEOUT, "a leader", lease).await?;
    let t0 = Instant::now();
    let mut methods = Vec::new();
    play(&mut sim, &api, t0, &mut methods, rolling).await?;
    // The leader steps down (SIGTERM hands the Lease over); the other carries on.
    if leader == "replica-a" { &a } else { &b }.terminate()?;
    play(&mut sim, &api, t0, &mut methods, |_| false).await?;
    let done = poll_until(TIMEOUT, "update 2 learned", || async {
        history(&api)
            .await
            .filter(|h| h.updates.len() >= 2 && h.updates[0].to == "4.18.4" && h.current.is_none())
    })
    .await?;
    let other = lease().await.unwrap_or_default();
    assert_ne!(other, leader, "the other replica leads after the handover");
    assert!(
        methods.contains(&EstimateMethod::Learned)
            && methods.iter().all(|m| *m == EstimateMethod::Learned),
        "update 2 estimated from update 1: {methods:?}"
    );
    assert_eq!(done.updates[1].to, "4.18.3", "update 1 kept");
    assert_eq!(done.updates[0].operators.len(), OPERATORS);
    let obj = api.get(UPDATE_HISTORY_NAME).await?;
    let bytes = serde_json::to_vec(&obj)?.len();
    eprintln!(
        "estimates: 2 updates learned across a restart and a leader change in {:.1}s; UpdateHistory {bytes} bytes",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
