//! The simulated update most e2e tests play, and the wait they share: a short update whose first
//! worker node's drain is blocked by a PodDisruptionBudget for 3 steps, written to the local
//! control plane; then, at a step, "wait until the controller's objects equal what the pure
//! logic computes from the inputs the API holds" ([`until_outputs_match`]).
//!
//! Used by `tests/simulated_update.rs`, `tests/events.rs` and `tests/throttled.rs`, which differ
//! in the cluster's size and seed, in what they check at each step and in how the controller
//! runs (its flags, its identity, a throttled API server).

use std::cell::RefCell;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::Client;
use update_status_simulator::{FaultSpec, Faults, SimConfig, SimError, SimInputs, Simulation};
use update_status_tools::playback::{self, PlaybackError, Simulator};

use crate::outputs::{Outputs, differences, expected_outputs, read_outputs};
use crate::wait::poll_until;

/// The simulated update's start.
pub const START: &str = "2026-01-01T03:00:00Z";
/// The instant the controller (`--assess-at`) and the pure logic evaluate at: after the
/// simulated update's end, so every step's objects are a function of the inputs alone.
pub const ASSESS_AT: &str = "2026-01-01T06:00:00Z";

/// The size of a [`blocked_drain`] update.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// ClusterOperators besides the ones every simulation has.
    pub operators: usize,
    /// Nodes in each of the two worker pools (3 masters besides).
    pub nodes_per_pool: usize,
    /// The simulator's seed.
    pub seed: u64,
}

/// An update from 4.17.12 to 4.18.3 of a cluster of `size` (two worker pools, 3 masters, 2
/// nodes at a time, a step a minute from [`START`]) in which the first worker node's drain is
/// blocked by a PodDisruptionBudget for 3 steps.
pub fn blocked_drain(size: Size) -> Result<Simulation, SimError> {
    Simulation::new(blocked_drain_config(size))
}

/// The configuration of [`blocked_drain`].
pub fn blocked_drain_config(size: Size) -> SimConfig {
    SimConfig {
        operators: size.operators,
        pools: 2,
        masters: 3,
        nodes_per_pool: size.nodes_per_pool,
        max_unavailable: 2,
        seed: size.seed,
        start: START.parse().expect("START is an RFC 3339 instant"),
        step: SignedDuration::from_secs(60),
        faults: Faults {
            blocked_drain: Some(FaultSpec::auto(3)),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Clears the simulated kinds from the API server and writes the simulation's first state.
pub async fn install(client: &Client, sim: Simulation) -> Result<Simulator, PlaybackError> {
    playback::clear(client).await?;
    let mut simulator = Simulator::new(client.clone(), sim);
    simulator.install().await?;
    Ok(simulator)
}

/// Waits (up to `timeout`) until our objects in `ns` equal what the pure logic computes at
/// `now` from `inputs` (as [`playback::read_inputs`] read them back from the API), and returns
/// them. On time-out the error names `what`, the controller's `log` and the differences last
/// seen.
pub async fn until_outputs_match(
    client: &Client,
    ns: &str,
    inputs: &SimInputs,
    now: Timestamp,
    timeout: Duration,
    what: &str,
    log: &str,
) -> Result<Outputs, String> {
    let want = expected_outputs(inputs, now);
    let last = RefCell::new(Vec::new());
    poll_until(
        timeout,
        &format!("the controller's objects to match the pure logic ({what})"),
        || {
            let (want, last) = (&want, &last);
            async move {
                let got = read_outputs(client, ns).await.ok()?;
                let diff = differences(want, &got, now);
                let matched = diff.is_empty();
                *last.borrow_mut() = diff;
                matched.then_some(got)
            }
        },
    )
    .await
    .map_err(|e| {
        format!(
            "{e}; controller log {log}; differences:\n{}",
            last.borrow().join("\n")
        )
    })
}
