//! `simulate-hosted-update`: creates a synthetic hosted cluster on the management cluster of
//! `KUBECONFIG` (or `--kubeconfig`): a HostedCluster in `--namespace`, a Replace and an
//! InPlace NodePool, and their MachineDeployment, MachineSet and Machines in the control-plane
//! namespace `<namespace>-<name>`; then plays its update from `--from` to `--to`, one step
//! every `--interval`, with optional injected faults. The HyperShift and cluster-api CRDs must
//! be installed (`testdata/hosted/crds/`). See `update_status_simulator::hosted` (the
//! simulation), `update_status_tools::playback` (writing it to the API server) and
//! `docs/hosted.md` ("Simulated hosted update").
//!
//! A separate binary rather than a mode of `simulate-update`: the objects, the flags and what
//! `--clean` deletes (one HostedCluster's namespaced objects, not every cluster-scoped
//! OpenShift object) all differ.
//!
//! Exits 0 once the update completed (or after `--max-steps`), 130 on Ctrl-C.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use jiff::Timestamp;
use update_status_simulator::FaultSpec;
use update_status_simulator::hosted::{HostedFaults, HostedSimConfig, HostedSimulation};
use update_status_simulator::playback::PlaybackArgs;
use update_status_tools::front;
use update_status_tools::playback::{self, HostedSimulator};

/// Plays a simulated hosted-cluster (HyperShift) update against a Kubernetes API server.
#[derive(Parser, Debug)]
#[command(name = "simulate-hosted-update", version)]
struct Args {
    /// Kubeconfig file (default: $KUBECONFIG, ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Namespace of the HostedCluster and its NodePools.
    #[arg(long, short = 'n', default_value = "clusters")]
    namespace: String,
    /// HostedCluster name (NodePools: <name>-workers, Replace; <name>-inplace, InPlace).
    #[arg(long, default_value = "demo")]
    name: String,
    /// Machines of the Replace NodePool.
    #[arg(long, default_value_t = 3)]
    replace_replicas: u32,
    /// maxSurge of the Replace NodePool.
    #[arg(long, default_value_t = 1)]
    max_surge: u32,
    /// maxUnavailable of the Replace NodePool.
    #[arg(long, default_value_t = 0)]
    max_unavailable: u32,
    /// Machines of the InPlace NodePool.
    #[arg(long, default_value_t = 3)]
    in_place_replicas: u32,
    /// maxUnavailable of the InPlace NodePool (at least 1).
    #[arg(long, default_value_t = 1)]
    in_place_max_unavailable: u32,
    /// Steps the hosted control plane takes once it accepted the update.
    #[arg(long, default_value_t = 6)]
    control_plane_steps: u32,
    /// Version the cluster was installed at (oldest history entry).
    #[arg(long, default_value = "4.17.5")]
    installed: String,
    /// Version it runs before the update.
    #[arg(long, default_value = "4.17.12")]
    from: String,
    /// Version it updates to.
    #[arg(long, default_value = "4.18.3")]
    to: String,
    /// Seed of step durations and Machine names: the same seed plays the same update.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    playback: PlaybackArgs,
    /// Fault: the update names an invalid release image (ValidReleaseImage=False, Progressing
    /// Blocked) for STEPS steps, then the image is fixed.
    #[arg(long, value_name = "auto[:STEPS]")]
    invalid_image: Option<FaultSpec>,
    /// Fault: the minor update is refused by ClusterVersionUpgradeable=False (Progressing
    /// Blocked) for STEPS steps once requested, then acknowledged.
    #[arg(long, value_name = "auto[:STEPS]")]
    blocked_update: Option<FaultSpec>,
    /// Fault: the first old Machine of the Replace NodePool cannot be drained
    /// (DrainingSucceeded=False, reason DrainingFailed) for STEPS steps.
    #[arg(long, value_name = "auto[:STEPS]")]
    blocked_drain: Option<FaultSpec>,
    /// Delete this HostedCluster, its NodePools and the cluster-api objects of its
    /// control-plane namespace first.
    #[arg(long)]
    clean: bool,
}

fn config(args: &Args) -> HostedSimConfig {
    HostedSimConfig {
        namespace: args.namespace.clone(),
        name: args.name.clone(),
        replace_replicas: args.replace_replicas,
        max_surge: args.max_surge,
        max_unavailable: args.max_unavailable,
        in_place_replicas: args.in_place_replicas,
        in_place_max_unavailable: args.in_place_max_unavailable,
        control_plane_steps: args.control_plane_steps,
        installed_version: args.installed.clone(),
        from_version: args.from.clone(),
        to_version: args.to.clone(),
        seed: args.seed,
        start: args.playback.start_at(Timestamp::now()),
        step: args.playback.sim_step(),
        faults: HostedFaults {
            invalid_image: args.invalid_image.clone(),
            blocked_update: args.blocked_update.clone(),
            blocked_drain: args.blocked_drain.clone(),
        },
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let mut sim = HostedSimulation::new(config(&args))?;
    println!(
        "simulate-hosted-update: HostedCluster {}/{}, NodePools {} (control plane namespace {}), {} -> {}, seed {}",
        args.namespace,
        args.name,
        sim.node_pool_names().join(", "),
        sim.control_plane_namespace(),
        args.from,
        args.to,
        args.seed
    );
    if args.playback.dry_run {
        front::dry_run(&mut sim, &args.playback);
        return Ok(());
    }
    let client = front::client(args.kubeconfig.as_deref()).await?;
    if args.clean {
        playback::clear_hosted(&client, &args.namespace, &args.name)
            .await
            .context("deleting the earlier hosted cluster")?;
        println!(
            "simulate-hosted-update: deleted the objects of an earlier {}/{}",
            args.namespace, args.name
        );
    }
    let mut simulator = HostedSimulator::new(client, sim);
    let n = simulator.install().await.context(
        "creating the simulated hosted cluster (are the HyperShift and cluster-api CRDs of testdata/hosted/crds installed?)",
    )?;
    println!(
        "simulate-hosted-update: created the hosted cluster at {} ({n} writes)",
        args.from
    );
    let steps = front::play(&mut simulator, &args.playback).await?;
    front::print_end("simulate-hosted-update", &simulator, steps);
    Ok(())
}

#[tokio::main]
async fn main() {
    front::run_or_interrupt("simulate-hosted-update", run(Args::parse())).await;
}
