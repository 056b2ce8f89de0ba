//! The front end the `load-snapshot`, `simulate-update` and `simulate-hosted-update` binaries
//! share: the client, Ctrl-C, and the simulators' dry run and playback loop ([`Player`],
//! [`dry_run`], [`play`]).

use std::fmt::Display;
use std::future::Future;
use std::path::Path;

use crate::playback::{HostedSimulator, PlaybackError, Simulator};
use anyhow::Context;
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};
use update_status_simulator::hosted::HostedSimulation;
use update_status_simulator::playback::PlaybackArgs;
use update_status_simulator::{SimulatedUpdate, Simulation, StepReport};

/// A client for the cluster of `kubeconfig`, else of `KUBECONFIG` / `~/.kube/config`.
pub async fn client(kubeconfig: Option<&Path>) -> anyhow::Result<Client> {
    match kubeconfig {
        Some(path) => client_for(path)
            .await
            .with_context(|| format!("using kubeconfig {}", path.display())),
        None => Client::try_default()
            .await
            .context("creating a client from KUBECONFIG / ~/.kube/config"),
    }
}

/// A client for the cluster of the kubeconfig file `path`.
async fn client_for(path: &Path) -> anyhow::Result<Client> {
    let kubeconfig = Kubeconfig::read_from(path)?;
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
    Ok(Client::try_from(config)?)
}

/// Runs a simulator binary's `run` until it ends or Ctrl-C: exits 1 with the error, 130 when
/// interrupted.
pub async fn run_or_interrupt(
    name: &str,
    run: impl std::future::Future<Output = anyhow::Result<()>>,
) {
    tokio::select! {
        result = run => {
            if let Err(e) = result {
                eprintln!("{name}: error: {e:#}");
                std::process::exit(1);
            }
        }
        _ = tokio::signal::ctrl_c() => {
            eprintln!("{name}: interrupted");
            std::process::exit(130);
        }
    }
}

/// Waits `start_delay`, then ticks every `interval` (1 s if it is not a positive duration);
/// a late tick delays the next ones rather than bursting.
pub async fn step_ticker(
    interval: jiff::SignedDuration,
    start_delay: jiff::SignedDuration,
) -> tokio::time::Interval {
    use std::time::Duration;
    let interval = Duration::try_from(interval)
        .ok()
        .filter(|d| !d.is_zero())
        .unwrap_or(Duration::from_secs(1));
    tokio::time::sleep(Duration::try_from(start_delay).unwrap_or_default()).await;
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker
}

/// One line per simulated step: number, instant, stage, summary and (when applied) the writes.
pub fn print_step<S: Display>(r: &StepReport<S>, writes: Option<usize>) {
    let writes = writes.map(|w| format!(" ({w} writes)")).unwrap_or_default();
    println!(
        "step {:>4}  {}  {:<13} {}{writes}",
        r.step,
        r.at.strftime("%H:%M:%SZ"),
        r.stage.to_string(),
        r.summary,
    );
}

/// Steps `sim` without an API server, printing each step, until it completes or
/// `--max-steps` (100,000 at the most).
pub fn dry_run(sim: &mut impl SimulatedUpdate, playback: &PlaybackArgs) {
    sim.dry_run(playback.max_steps.unwrap_or(100_000), |r| {
        print_step(r, None)
    });
}

/// A simulated update played against an API server: the playback's [`Simulator`] or
/// [`HostedSimulator`].
pub trait Player {
    /// The simulation played.
    type Sim: SimulatedUpdate;
    /// The simulation.
    fn simulation(&self) -> &Self::Sim;
    /// Writes made so far.
    fn writes(&self) -> u64;
    /// One step of the simulation, then its changes written.
    fn step(
        &mut self,
    ) -> impl Future<Output = Result<StepReport<<Self::Sim as SimulatedUpdate>::Stage>, PlaybackError>>;
}

impl Player for Simulator {
    type Sim = Simulation;
    fn simulation(&self) -> &Simulation {
        Simulator::simulation(self)
    }
    fn writes(&self) -> u64 {
        Simulator::writes(self)
    }
    async fn step(&mut self) -> Result<StepReport, PlaybackError> {
        Simulator::step(self).await
    }
}

impl Player for HostedSimulator {
    type Sim = HostedSimulation;
    fn simulation(&self) -> &HostedSimulation {
        HostedSimulator::simulation(self)
    }
    fn writes(&self) -> u64 {
        HostedSimulator::writes(self)
    }
    async fn step(
        &mut self,
    ) -> Result<update_status_simulator::hosted::HostedStepReport, PlaybackError> {
        HostedSimulator::step(self).await
    }
}

/// Plays the installed update: waits the start delay, then a step every interval, printed,
/// until it completes or `--max-steps`. Returns the steps taken.
pub async fn play<P: Player>(player: &mut P, playback: &PlaybackArgs) -> anyhow::Result<u64> {
    let mut ticker = step_ticker(playback.interval, playback.start_delay).await;
    let mut steps = 0;
    while !PlaybackArgs::done(
        player.simulation().is_completed(),
        steps,
        playback.max_steps,
    ) {
        ticker.tick().await;
        let before = player.writes();
        let r = player.step().await?;
        steps += 1;
        print_step(&r, Some((player.writes() - before) as usize));
    }
    Ok(steps)
}

/// The last line of a playback: whether the update completed, after how many steps and writes.
pub fn print_end(name: &str, player: &impl Player, steps: u64) {
    println!(
        "{name}: {} after {steps} steps ({} writes)",
        if player.simulation().is_completed() {
            "update completed"
        } else {
            "stopped"
        },
        player.writes()
    );
}
