//! `update-status-controller`: watches ClusterVersion, ClusterOperators, MachineConfigPools,
//! MachineConfigs and Nodes, and writes ControlPlaneUpdateStatus, WorkerPoolUpdateStatus and
//! UpdateInsight objects into its namespace (`--mode=hosted`: HostedClusters and their
//! NodePools, for every hosted cluster). Serves `/metrics` (HTTPS, authorized scrapers only,
//! unless `--metrics-secure=false`) and, on their own port, `/healthz` and `/readyz`.
//! With `--prometheus-url`, it also polls Prometheus' firing alerts into health insights; with
//! `--hub-kubeconfig` and `--cluster-name`, it copies its objects to a fleet hub.
//!
//! The start-up is a library (`update_status_controllers::app`): this file only parses the
//! flags, sets up logging and the allocator, and runs it.

use clap::Parser;
use update_status_controllers::app::{self, Args};

/// jemalloc, with the options of `.cargo/config.toml` (one arena, freed pages returned within a
/// second): glibc's malloc kept two arenas of freed pages after the cold start, 96 → 79 MiB
/// peak RSS at 5,000 nodes (docs/benchmarks.md, "Controller memory"). mimalloc was worse.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    app::init_logging(args.log_format);
    app::run(args).await
}
