//! `bench`: the controller at scale on the real local control plane (`make bench`).
//!
//! For each size (default 500, 2,000 and 5,000 nodes), on a fresh local control plane:
//!
//! 1. the simulator creates a cluster in the middle of an update (34 operators, `machine-config`
//!    rolling the nodes; master pool of 3 nodes, one worker pool with the rest);
//! 2. **raw write rate**: the same insights the controller will write, written into another
//!    namespace as fast as the API server takes them (`common/raw_writes.rs`), before the cold
//!    start and again after it (the share uses the mean), and once more with a watch;
//!    **cold start**: the release controller starts on the cluster; convergence = the last write
//!    before all its objects exist and its write counter stays still for 3 s;
//! 3. **steady state**: 60 s with no semantic change, but kubelet heartbeats at the real rate
//!    (every node posts its status every 5 min, i.e. N/300 node status writes per second):
//!    the controller should write nothing;
//! 4. **isolated changes**: a few worker nodes walk through their update one phase at a time
//!    (Draining, Updating, Rebooting, Done, uncordoned), waiting for each change to show in
//!    the node's UpdateInsight: latency from the node write to the insight's watch event
//!    (p50/p99), and the controller's writes per change (from `update_status_api_writes_total`);
//! 5. **burst**: 100 pending worker nodes start draining at once (as the machine-config
//!    controller does when it picks a wave): time until every insight shows it, writes per
//!    node;
//! 6. the controller's peak RSS (`VmHWM`) and CPU time (`utime + stime`);
//! 7. **offline CLI**: the same cluster dumped as a snapshot folder, analysed by
//!    `kubectl-update_status --from-dir` (wall time and peak RSS).
//!
//! After the sizes, the **fleet** (`common/fleet.rs`, `--fleet N`, 0 to skip): N small simulated
//! HostedClusters mid-update, the controller in hosted mode reporting each to a separate local
//! hub (its own etcd and kube-apiserver): cold start of the fleet, hub objects, hub writes
//! during an update wave and in a steady state, the controller's memory, the hub etcd's size,
//! `kubectl-update_status --fleet` over all N clusters, and the hub at 10,000 clusters derived
//! from the per-cluster figures. `--only-fleet` runs it alone.
//!
//! Before it, the **fleet rows** (`common/fleet_rows.rs`, `--fleet-rows N`, default 5,000, 0 to
//! skip): a hub with the copies of N clusters, `--fleet-row-insights` health insights each,
//! read by `kubectl-update_status --fleet` (text, JSON) and its live grid in headless Chromium
//! (issue #38, item 5). `--only-fleet-rows` runs it alone.
//!
//! Before the sizes, without a control plane (`offline_cli`): the offline CLI on the
//! simulator's snapshot of a 5,003-node cluster in 5 pools as JSON (`--offline-nodes-per-pool`,
//! 0 to skip) and on a must-gather with 20,000 worker nodes in one block-YAML `nodes.yaml`
//! (`update_status_testdata::must_gather`), the way real captures of large clusters come
//! (`--must-gather-nodes`, 0 to skip); then the web view of a 5,000-node snapshot loaded in
//! headless Chromium (`web_page`: interactive time, goal ≤ 1 s; `--web-nodes`, 0 to skip).
//! `--only-offline` stops after them.
//!
//! Then it writes a Markdown report (default `docs/benchmarks.md`) with the machine, the
//! command, these results, and the criterion results of `assess/benches/assess.rs` if
//! `target/criterion` holds them.
//!
//! This file holds the flags, the order of the cases and the report around their sections; each
//! case is in `common/`: the sizes in `common/size.rs` (their section: `common/size_report.rs`),
//! the fleet in `common/fleet.rs` (`common/fleet_report.rs`), the fleet rows, the offline CLI,
//! the web page and the estimates replay in their own files, and what they share (the processes,
//! the controller) in `common/process.rs` and `common/controller.rs`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use jiff::Timestamp;
use update_status_e2e::repo_root;
use update_status_simulator::Platform;

#[path = "common/controller.rs"]
mod controller;
#[path = "common/criterion.rs"]
mod criterion;
#[path = "common/estimates.rs"]
mod estimates;
#[path = "common/fleet.rs"]
mod fleet;
#[path = "common/fleet_counts.rs"]
mod fleet_counts;
#[path = "common/fleet_report.rs"]
mod fleet_report;
#[path = "common/fleet_rows.rs"]
mod fleet_rows;
#[path = "common/hub_etcd.rs"]
mod hub_etcd;
#[path = "common/hub_identities.rs"]
mod hub_identities;
#[path = "common/insight_watch.rs"]
mod insight_watch;
#[path = "common/live_cli.rs"]
mod live_cli;
#[path = "common/offline_cli.rs"]
mod offline_cli;
#[path = "common/process.rs"]
mod process;
#[path = "common/raw_writes.rs"]
mod raw_writes;
#[path = "common/size.rs"]
mod size;
#[path = "common/size_report.rs"]
mod size_report;
#[path = "common/web_page.rs"]
mod web_page;

use controller::NAMESPACE;
use process::{clock_ticks, cluster, log};
use size::{Run, SizeArgs, bench_size};

/// What follows this line in the report is kept when the report is regenerated.
const KEEP_MARKER: &str =
    "<!-- Notes below this line are kept when `make bench` rewrites the file. -->";

/// Scale benchmarks of update-status on the local control plane.
#[derive(Parser, Debug, Clone)]
#[command(name = "bench", about)]
struct Args {
    /// Cluster sizes (nodes).
    #[arg(long, value_delimiter = ',', default_values_t = [500, 2_000, 5_000])]
    sizes: Vec<usize>,
    /// Isolated node changes to time (walked 5 phases per node).
    #[arg(long, default_value_t = 100)]
    changes: usize,
    /// Nodes changed at once in the burst.
    #[arg(long, default_value_t = 100)]
    burst: usize,
    /// Seconds of steady state.
    #[arg(long, default_value_t = 60)]
    steady: u64,
    /// No kubelet heartbeats during the steady state.
    #[arg(long)]
    no_heartbeats: bool,
    /// State dir of the benchmark's control plane (re-created for each size).
    #[arg(long, default_value = ".cache/bench-cluster")]
    cluster_dir: PathBuf,
    /// The controller binary.
    #[arg(long, default_value = "target/release/update-status-controller")]
    controller: PathBuf,
    /// The kubectl plugin binary.
    #[arg(long, default_value = "target/release/kubectl-update_status")]
    cli: PathBuf,
    /// Concurrent requests when creating the cluster.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// Where criterion wrote its results.
    #[arg(long, default_value = "target/criterion")]
    criterion: PathBuf,
    /// The report.
    #[arg(long, default_value = "docs/benchmarks.md")]
    out: PathBuf,
    /// Keep the last control plane running.
    #[arg(long)]
    keep: bool,
    /// Nodes of the generated must-gather the offline CLI reads (0: skip that case).
    #[arg(long, default_value_t = 20_000)]
    must_gather_nodes: usize,
    /// Nodes of each of the 4 worker pools of the simulated snapshot the offline CLI reads
    /// (1,250: 5,003 nodes with the 3 masters; 0: skip that case).
    #[arg(long, default_value_t = 1_250)]
    offline_nodes_per_pool: usize,
    /// Only the offline CLI cases (no control plane, no sizes): prints their table, writes no
    /// report.
    #[arg(long, alias = "only-must-gather")]
    only_offline: bool,
    /// Hosted clusters of the fleet part: hosted mode reporting them to a separate hub (0: skip
    /// it).
    #[arg(long, default_value_t = 1_000)]
    fleet: usize,
    /// Machines of each of the two NodePools of a fleet cluster.
    #[arg(long, default_value_t = 2)]
    fleet_machines: u32,
    /// Whose identity writes a fleet cluster's hub copies: `addon`, one add-on identity per
    /// managed cluster as ACM gives them (`--hub-addon-secrets`), or `shared`, one hub kubeconfig.
    #[arg(long, value_enum, default_value = "addon")]
    fleet_identity: hub_identities::Identity,
    /// Update steps every fleet cluster takes in the wave.
    #[arg(long, default_value_t = 2)]
    fleet_wave: usize,
    /// State dir of the fleet's hub control plane.
    #[arg(long, default_value = ".cache/bench-hub")]
    hub_dir: PathBuf,
    /// Only the fleet part (no offline cases, no sizes): prints its section, writes no report.
    #[arg(long, conflicts_with = "only_offline")]
    only_fleet: bool,
    /// Nodes of the snapshot whose web view (`--from-dir --web`) is loaded in headless Chromium
    /// with the offline cases (0: skip it).
    #[arg(long, default_value_t = 5_000)]
    web_nodes: usize,
    /// Clusters of the hub read by `--fleet` and its grid after the sizes, each in its own
    /// namespace (0: skip that case).
    #[arg(long, default_value_t = 5_000)]
    fleet_rows: usize,
    /// Health insights of each of those clusters.
    #[arg(long, default_value_t = 10)]
    fleet_row_insights: usize,
    /// Only that case: prints its section, writes no report.
    #[arg(long, conflicts_with_all = ["only_offline", "only_fleet"])]
    only_fleet_rows: bool,
    /// Another build of the plugin (e.g. the previous release's) that the fleet rows case also
    /// measures on the same hub, checking that it prints byte for byte the same.
    #[arg(long)]
    baseline_cli: Option<PathBuf>,
    /// Only the estimates replay (pure, no control plane: `common/estimates.rs`): prints its
    /// table and the line `estimates: worst ratio R (ours/oc, after 25 %), coverage C`.
    #[arg(long, conflicts_with_all = ["only_offline", "only_fleet", "only_fleet_rows"])]
    estimates: bool,
    /// Seeds of the estimates replay (one simulated cluster each).
    #[arg(long, value_delimiter = ',', default_values_t = [4, 5, 6, 7, 8])]
    seeds: Vec<u64>,
    /// Updates of each simulated cluster in the estimates replay (the first is not scored).
    #[arg(long, default_value_t = 6)]
    estimate_updates: usize,
    /// Platform of every simulated cluster of the estimates replay (`cloud`, `vsphere`,
    /// `metal`); by default each seed draws its own.
    #[arg(long, value_parser = parse_platform)]
    estimate_platform: Option<Platform>,
}

fn parse_platform(s: &str) -> Result<Platform, String> {
    Platform::parse(s).ok_or_else(|| format!("{s:?}: not one of cloud, vsphere, metal"))
}

/// The machine, for the report's header.
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map(|kib| format!("{:.1} GiB", kib / 1024.0 / 1024.0))
        .unwrap_or_else(|| "unknown".into());
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!(
        "{nproc} CPUs ({cpu}), {mem} memory, Linux {kernel}, {rustc}; local control plane: etcd + kube-apiserver + kube-controller-manager v1.37.2 on the same machine"
    )
}

/// The report: its header (command, commit, machine, flags), then each case's section.
fn report(
    args: &Args,
    runs: &[Run],
    offline: &[offline_cli::OfflineRun],
    fleet: Option<&fleet::FleetRun>,
    started: Timestamp,
    took: Duration,
) -> String {
    let command = std::env::var("BENCH_COMMAND")
        .unwrap_or_else(|_| std::env::args().collect::<Vec<_>>().join(" "));
    let commit = Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let mut s = String::new();
    let _ = writeln!(s, "# Benchmarks\n");
    let _ = writeln!(
        s,
        "Generated by `{command}` on {} (commit `{commit}`, {:.0} min). Re-run it to refresh this file.\n",
        started.strftime("%Y-%m-%d %H:%M UTC"),
        took.as_secs_f64() / 60.0
    );
    let _ = writeln!(s, "**Machine:** {}\n", machine());
    let _ = writeln!(
        s,
        "`make bench` runs `cargo bench -p update-status-assess --bench assess` (criterion, pure logic), builds the release binaries, then `target/release/bench` (`e2e/src/bin/bench.rs`): for each size a fresh local control plane, a simulated cluster in the middle of its update (`update_status_simulator`: 34 operators, `machine-config` rolling the nodes, a master pool of 3 nodes and one worker pool with the rest, 5 % `maxUnavailable`), and the release controller on it. Flags used: sizes {:?}, {} isolated changes, burst {}, steady state {} s{}.\n",
        args.sizes,
        args.changes,
        args.burst,
        args.steady,
        if args.no_heartbeats {
            " without heartbeats"
        } else {
            " with kubelet heartbeats (N/300 node status writes per second)"
        }
    );
    s.push_str(&size_report::report(runs));
    if let Some(f) = fleet {
        let _ = writeln!(s, "{}", fleet_report::report(f));
    }
    if !offline.is_empty() {
        let _ = writeln!(s, "{}", offline_cli::report(offline));
    }
    if let Some(t) = criterion::criterion_table(&args.criterion) {
        let _ = writeln!(
            s,
            "## Pure assessment (criterion, `assess/benches/assess.rs`)\n"
        );
        let _ = writeln!(
            s,
            "Median time per call on a synthetic mid-update cluster (3 pools; 60 % of the nodes updated, 10 % draining/updating/rebooting, some degraded or not ready).\n"
        );
        let _ = writeln!(s, "{t}");
    }
    s
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let root = repo_root();
    std::env::set_current_dir(&root)?;
    if args.estimates {
        let t = Instant::now();
        let results = estimates::run(&args.seeds, args.estimate_updates, args.estimate_platform)?;
        println!("{}", results.report());
        log(&format!(
            "estimates replay done in {:.1}s",
            t.elapsed().as_secs_f64()
        ));
        return Ok(());
    }
    let needed = if args.only_offline || args.only_fleet_rows {
        vec![&args.cli]
    } else {
        vec![&args.controller, &args.cli]
    };
    for bin in needed {
        if !bin.exists() {
            bail!(
                "{} is not built (cargo build --release -p update-status-controllers -p update-status-cli)",
                bin.display()
            );
        }
    }
    let started = Timestamp::now();
    let t = Instant::now();
    let ticks = clock_ticks();
    let fleet_args = fleet::FleetArgs {
        clusters: args.fleet,
        identity: args.fleet_identity,
        machines: args.fleet_machines,
        wave: args.fleet_wave,
        steady: args.steady,
        concurrency: args.concurrency,
        controller: &args.controller,
        cli: &args.cli,
        management_dir: root.join(&args.cluster_dir),
        hub_dir: root.join(&args.hub_dir),
        namespace: NAMESPACE,
        keep: args.keep,
    };
    let rows_dir = root.join(&args.cluster_dir);
    let rows_case = || {
        fleet_rows::bench(
            (&args.cli, args.baseline_cli.as_deref()),
            &rows_dir,
            args.fleet_rows,
            args.fleet_row_insights,
            args.concurrency,
        )
    };
    if args.only_fleet_rows {
        if args.fleet_rows == 0 {
            bail!("--only-fleet-rows needs --fleet-rows above 0");
        }
        let r = rows_case().await.context("the fleet rows case")?;
        println!("{}", fleet_rows::report(&r));
        return Ok(());
    }
    if args.only_fleet {
        if args.fleet == 0 {
            bail!("--only-fleet needs --fleet above 0");
        }
        let f = fleet::bench_fleet(&fleet_args, ticks)
            .await
            .with_context(|| format!("the fleet of {} clusters", args.fleet))?;
        println!("{}", fleet_report::report(&f));
        log(&format!(
            "fleet part done in {:.0}s",
            t.elapsed().as_secs_f64()
        ));
        return Ok(());
    }
    let mut offline = Vec::new();
    if args.offline_nodes_per_pool > 0 {
        offline.push(offline_cli::bench_simulated(
            &args.cli,
            args.offline_nodes_per_pool,
        )?);
    }
    if args.must_gather_nodes > 0 {
        offline.push(offline_cli::bench_must_gather(
            &args.cli,
            args.must_gather_nodes,
        )?);
    }
    let web = if args.web_nodes > 0 {
        Some(web_page::bench(&args.cli, args.web_nodes).await?)
    } else {
        None
    };
    if args.only_offline {
        println!("{}", offline_cli::report(&offline));
        if let Some(w) = &web {
            println!("{}", web_page::report(w));
        }
        return Ok(());
    }
    let mut runs = Vec::new();
    for (i, &n) in args.sizes.iter().enumerate() {
        if n < 10 {
            bail!("a size must be at least 10 nodes");
        }
        let size_args = SizeArgs {
            changes: args.changes,
            burst: args.burst,
            steady: args.steady,
            no_heartbeats: args.no_heartbeats,
            cluster_dir: &args.cluster_dir,
            controller: &args.controller,
            cli: &args.cli,
            concurrency: args.concurrency,
            // --keep keeps the last control plane: the fleet's, if it runs.
            keep: args.keep && args.fleet == 0 && args.fleet_rows == 0 && i + 1 == args.sizes.len(),
        };
        match bench_size(&size_args, n, ticks).await {
            Ok(r) => runs.push(r),
            Err(e) => {
                let _ = cluster(&root.join(&args.cluster_dir), "down");
                return Err(e.context(format!("benchmark at {n} nodes")));
            }
        }
    }
    let rows_run = if args.fleet_rows > 0 {
        Some(rows_case().await.context("the fleet rows case")?)
    } else {
        None
    };
    let fleet_run = if args.fleet > 0 {
        Some(
            fleet::bench_fleet(&fleet_args, ticks)
                .await
                .with_context(|| format!("the fleet of {} clusters", args.fleet))?,
        )
    } else {
        None
    };
    let mut text = report(
        &args,
        &runs,
        &offline,
        fleet_run.as_ref(),
        started,
        t.elapsed(),
    );
    if let Some(w) = &web {
        text.push_str(&web_page::report(w));
    }
    if let Some(r) = &rows_run {
        text.push_str(&fleet_rows::report(r));
    }
    // Notes written by hand below the marker survive a re-run.
    if let Some(notes) = std::fs::read_to_string(&args.out).ok().and_then(|old| {
        old.split_once(KEEP_MARKER)
            .map(|(_, rest)| rest.to_string())
    }) {
        text.push_str(KEEP_MARKER);
        text.push_str(&notes);
    }
    if let Some(parent) = args.out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&args.out, &text)?;
    println!("{text}");
    log(&format!("wrote {}", args.out.display()));
    Ok(())
}
