//! `simulate-update`: creates a synthetic OpenShift cluster (ClusterVersion, platform
//! ClusterOperators, MachineConfigPools, rendered MachineConfigs, Nodes) in the cluster of
//! `KUBECONFIG` (or `--kubeconfig`), then plays an update from `--from` to `--to`, one step
//! every `--interval`, with optional injected faults. See `update_status_simulator` (the
//! simulation), `update_status_tools::playback` (writing it to the API server) and
//! docs/reference.md's "Simulator" section.
//!
//! Exits 0 once the update completed (or after `--max-steps`), 130 on Ctrl-C.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use jiff::Timestamp;
use update_status_simulator::playback::PlaybackArgs;
use update_status_simulator::{FaultSpec, Faults, SimConfig, Simulation};
use update_status_tools::front;
use update_status_tools::playback::{self, Simulator};

/// Plays a simulated OpenShift update against a Kubernetes API server.
#[derive(Parser, Debug)]
#[command(name = "simulate-update", version)]
struct Args {
    /// Kubeconfig file (default: $KUBECONFIG, ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Platform ClusterOperators, machine-config included (it updates last).
    #[arg(long, default_value_t = 12)]
    operators: usize,
    /// MachineConfigPools: master, worker, then custom pools (infra, gpu, edge, ...).
    #[arg(long, default_value_t = 2)]
    pools: usize,
    /// Nodes of the master pool.
    #[arg(long, default_value_t = 3)]
    masters: usize,
    /// Nodes of each non-master pool.
    #[arg(long, default_value_t = 7)]
    nodes_per_pool: usize,
    /// maxUnavailable of the non-master pools (the master pool rolls one node at a time).
    #[arg(long, default_value_t = 2)]
    max_unavailable: u32,
    /// Version the cluster was installed at (oldest history entry).
    #[arg(long, default_value = "4.17.5")]
    installed: String,
    /// Version the cluster runs before the update.
    #[arg(long, default_value = "4.17.12")]
    from: String,
    /// Version it updates to.
    #[arg(long, default_value = "4.18.3")]
    to: String,
    /// Seed of step durations and node order: the same seed plays the same update.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    playback: PlaybackArgs,
    /// Fault: this operator is Degraded=True while it updates, for STEPS steps (TARGET `auto`:
    /// one in the middle of the update).
    #[arg(long, value_name = "TARGET[:STEPS]")]
    degraded_operator: Option<FaultSpec>,
    /// Fault: this node's drain is blocked by a PodDisruptionBudget for STEPS steps (`auto`:
    /// the first worker node to drain).
    #[arg(long, value_name = "TARGET[:STEPS]")]
    blocked_drain: Option<FaultSpec>,
    /// Fault: this node is NotReady for STEPS steps once the pools start rolling (`auto`: the
    /// last worker node to update).
    #[arg(long, value_name = "TARGET[:STEPS]")]
    not_ready_node: Option<FaultSpec>,
    /// Fault: this pool is paused for STEPS steps once the pools start rolling (`auto`: the
    /// last pool).
    #[arg(long, value_name = "TARGET[:STEPS]")]
    paused_pool: Option<FaultSpec>,
    /// Fault: this operator starts updating and never finishes (`auto`: one in the middle).
    #[arg(long, value_name = "TARGET")]
    stalled_operator: Option<FaultSpec>,
    /// Delete every ClusterVersion, ClusterOperator, MachineConfigPool, MachineConfig and Node
    /// first.
    #[arg(long)]
    clean: bool,
    /// Concurrent API requests.
    #[arg(long, default_value_t = playback::DEFAULT_CONCURRENCY)]
    concurrency: usize,
    /// Write the final state as a snapshot folder (readable by `kubectl update-status --from-dir`).
    #[arg(long, value_name = "DIR")]
    snapshot: Option<PathBuf>,
}

fn config(args: &Args) -> SimConfig {
    SimConfig {
        operators: args.operators,
        pools: args.pools,
        masters: args.masters,
        nodes_per_pool: args.nodes_per_pool,
        max_unavailable: args.max_unavailable,
        installed_version: args.installed.clone(),
        from_version: args.from.clone(),
        to_version: args.to.clone(),
        seed: args.seed,
        start: args.playback.start_at(Timestamp::now()),
        step: args.playback.sim_step(),
        faults: Faults {
            degraded_operator: args.degraded_operator.clone(),
            blocked_drain: args.blocked_drain.clone(),
            not_ready_node: args.not_ready_node.clone(),
            paused_pool: args.paused_pool.clone(),
            stalled_operator: args.stalled_operator.clone(),
        },
        durations: None,
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let mut sim = Simulation::new(config(&args))?;
    println!(
        "simulate-update: {} operators, {} pools, {} nodes, {} -> {}, seed {}",
        args.operators,
        args.pools,
        sim.node_count(),
        args.from,
        args.to,
        args.seed
    );
    if args.playback.dry_run {
        front::dry_run(&mut sim, &args.playback);
        if let Some(dir) = &args.snapshot {
            sim.write_snapshot(dir)?;
        }
        return Ok(());
    }

    let client = front::client(args.kubeconfig.as_deref()).await?;
    if args.clean {
        playback::clear(&client)
            .await
            .context("deleting the earlier cluster")?;
        println!("simulate-update: deleted the objects of an earlier cluster");
    }
    let mut simulator = Simulator::new(client, sim).with_concurrency(args.concurrency);
    let started = std::time::Instant::now();
    let n = simulator
        .install()
        .await
        .context("creating the simulated cluster")?;
    println!(
        "simulate-update: created the cluster at {} ({n} writes in {:.1}s)",
        args.from,
        started.elapsed().as_secs_f64()
    );
    let steps = front::play(&mut simulator, &args.playback).await?;
    if let Some(dir) = &args.snapshot {
        simulator.simulation().write_snapshot(dir)?;
        println!(
            "simulate-update: wrote the final state to {}",
            dir.display()
        );
    }
    front::print_end("simulate-update", &simulator, steps);
    Ok(())
}

#[tokio::main]
async fn main() {
    front::run_or_interrupt("simulate-update", run(Args::parse())).await;
}
