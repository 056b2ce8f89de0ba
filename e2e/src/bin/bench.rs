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

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use futures::StreamExt;
use jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use update_status_api::crd::{
    Assessment, ControlPlaneUpdateStatus, NodePhase, UpdateInsight, WorkerPoolUpdateStatus, labels,
};
use update_status_assess::nodes::{self as node_assess, NodeContext};
use update_status_assess::{assess_cluster, naming};
use update_status_e2e::playback::Simulator;
use update_status_e2e::{client_for, repo_root};
use update_status_simulator::{NodeStep, Simulation};

#[path = "common/estimates.rs"]
mod estimates;
#[path = "common/fleet.rs"]
mod fleet;
#[path = "common/fleet_rows.rs"]
mod fleet_rows;
#[path = "common/hub_identities.rs"]
mod hub_identities;
#[path = "common/live_cli.rs"]
mod live_cli;
#[path = "common/offline_cli.rs"]
mod offline_cli;
#[path = "common/raw_writes.rs"]
mod raw_writes;
#[path = "common/web_page.rs"]
mod web_page;

const NAMESPACE: &str = "openshift-update-status";
/// The live CLI's views the bench measures, with their goals (bytes, median s, peak MiB).
const LIVE_VIEWS: [&[&str]; 2] = [&[], &["--details", "all"]];
const LIVE_GOALS: [(Option<u64>, f64, f64); 2] = [(Some(1_000_000), 0.3, 25.0), (None, 1.0, 60.0)];
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
}

impl Run {
    /// The raw write rate: the mean of the rates before and after the cold start (writes/s).
    fn raw_rate(&self) -> f64 {
        (self.raw.rate() + self.raw_after.rate()) / 2.0
    }
}

/// Results for one size.
#[derive(Debug, Default, Clone)]
struct Run {
    nodes: usize,
    objects: usize,
    populate_s: f64,
    populate_writes: u64,
    cold_s: f64,
    cold_writes: u64,
    cold_cpu_s: f64,
    /// From the controller's start to its first write (±25 ms).
    cold_first_write_s: f64,
    /// The API server's raw write rate for the same insights.
    raw: raw_writes::RawRun,
    /// The same after the cold start.
    raw_after: raw_writes::RawRun,
    /// The same with a watch decoding every event of the namespace (after the cold start).
    raw_watched: raw_writes::RawRun,
    /// Mean time of one UpdateInsight apply inside the API server during the cold start (ms).
    cold_apply_ms: f64,
    steady_writes: u64,
    steady_heartbeats: u64,
    steady_cpu_s: f64,
    changes: usize,
    change_writes: BTreeMap<String, u64>,
    latencies: Vec<Duration>,
    /// Node write round trips during the isolated changes.
    node_writes: Vec<Duration>,
    /// Mean worker-pools reconcile pass during the isolated changes.
    pass_ms: f64,
    burst: usize,
    burst_s: f64,
    burst_writes: u64,
    rss_hwm_kib: u64,
    rss_kib: u64,
    /// The controller's peak RSS on the same control plane before the cluster is created (no
    /// nodes, no objects): what the RSS grows from.
    empty_hwm_kib: u64,
    cpu_s: f64,
    cli_s: f64,
    cli_hwm_kib: u64,
    cli_ok: bool,
    snapshot_mib: f64,
    /// The live CLI, default view and `--details=all`.
    live: [live_cli::LiveRun; 2],
}

impl Run {
    fn change_writes_total(&self) -> u64 {
        self.change_writes.values().sum()
    }
    fn per_change(&self) -> f64 {
        self.change_writes_total() as f64 / self.changes.max(1) as f64
    }
    fn percentile(&self, p: f64) -> Duration {
        percentile(&self.latencies, p)
    }
}

/// The `p` quantile (nearest rank) of durations.
fn percentile(v: &[Duration], p: f64) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1)) - 1;
    v.get(i).copied().unwrap_or_default()
}

fn log(msg: &str) {
    eprintln!("bench: [{}] {msg}", Timestamp::now().strftime("%H:%M:%S"));
}

fn cluster(dir: &Path, cmd: &str) -> anyhow::Result<()> {
    let out = Command::new(repo_root().join("hack/local-cluster.sh"))
        .arg(cmd)
        .env("CLUSTER_DIR", dir)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running hack/local-cluster.sh {cmd}"))?;
    if !out.status.success() && cmd != "down" {
        bail!(
            "hack/local-cluster.sh {cmd} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// The controller process.
struct Controller {
    child: Child,
    metrics: String,
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Controller {
    fn start(bin: &Path, kubeconfig: &Path, log: &Path, extra: &[&str]) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let metrics = format!("127.0.0.1:{port}");
        let out = std::fs::File::create(log)?;
        let err = out.try_clone()?;
        // Plain-HTTP /metrics (scraped below); the probes on a port of their own.
        let child = Command::new(bin)
            .args(["--namespace", NAMESPACE, "--metrics-bind-address", &metrics])
            .args([
                "--metrics-secure=false",
                "--health-probe-bind-address",
                "127.0.0.1:0",
            ])
            .args(extra)
            .env("KUBECONFIG", kubeconfig)
            .env(
                "RUST_LOG",
                std::env::var("BENCH_CONTROLLER_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        Ok(Controller { child, metrics })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    async fn scrape(&self) -> Option<String> {
        let addr = self.metrics.clone();
        tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(&addr).ok()?;
            s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
            s.write_all(format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
                .ok()?;
            let mut body = String::new();
            s.read_to_string(&mut body).ok()?;
            Some(body)
        })
        .await
        .ok()
        .flatten()
    }

    /// `update_status_api_writes_total` by `kind/verb`.
    async fn writes(&self) -> Option<BTreeMap<String, u64>> {
        let text = self.scrape().await?;
        let mut out = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("update_status_api_writes_total{") else {
                continue;
            };
            let Some((labels, value)) = rest.split_once("} ") else {
                continue;
            };
            let get = |key: &str| {
                labels
                    .split(',')
                    .find_map(|kv| kv.strip_prefix(&format!("{key}=\"")))
                    .map(|v| v.trim_end_matches('"').to_string())
                    .unwrap_or_default()
            };
            let n = value.trim().parse::<f64>().unwrap_or(0.0) as u64;
            *out.entry(format!("{} {}", get("kind"), get("verb")))
                .or_default() += n;
        }
        Some(out)
    }

    /// (sum, count) of the worker-pools reconcile duration histogram.
    async fn pass_time(&self) -> Option<(f64, f64)> {
        let text = self.scrape().await?;
        let get = |metric: &str| {
            text.lines()
                .find(|l| l.starts_with(metric) && l.contains("reconciler=\"worker-pools\""))
                .and_then(|l| l.rsplit(' ').next())
                .and_then(|v| v.parse::<f64>().ok())
        };
        Some((
            get("update_status_reconcile_duration_seconds_sum")?,
            get("update_status_reconcile_duration_seconds_count")?,
        ))
    }

    async fn total_writes(&self) -> Option<u64> {
        self.writes().await.map(|w| w.values().sum())
    }

    /// Waits until the write counter has not moved for `quiet`; returns (writes, instant of
    /// the last change).
    async fn settle(&self, quiet: Duration, timeout: Duration) -> anyhow::Result<(u64, Instant)> {
        let deadline = Instant::now() + timeout;
        let mut last = self.total_writes().await.unwrap_or(0);
        let mut changed = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = self.total_writes().await.unwrap_or(last);
            if now != last {
                last = now;
                changed = Instant::now();
            } else if changed.elapsed() >= quiet {
                return Ok((last, changed));
            }
            if Instant::now() > deadline {
                bail!("the controller kept writing for {timeout:?}");
            }
        }
    }
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// (VmHWM, VmRSS) in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// utime + stime in seconds.
fn cpu_seconds(pid: u32, ticks: f64) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces, inside parentheses).
    let Some((_, rest)) = text.rsplit_once(')') else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state): utime is field 14, stime field 15.
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (get(11) + get(12)) / ticks
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Expected node insight (assessment, phase) of one node of the simulation.
fn expected_node(
    sim: &Simulation,
    ctx: &NodeContext,
    index: usize,
) -> anyhow::Result<(Assessment, Option<NodePhase>)> {
    let node = sim.node_input(index)?;
    let a =
        node_assess::assess_node(ctx, &node, Timestamp::now()).context("the node is in no pool")?;
    let p = a.progress.progress.context("no progress")?;
    Ok((p.assessment, p.phase))
}

type Seen = Arc<Mutex<HashMap<String, (Assessment, Option<NodePhase>, Instant)>>>;

/// Watches the node progress insights; records the last content and when it arrived. The
/// flag turns true once the initial list is complete (before that, events of the list may
/// still be in flight and would distort the first latencies).
fn watch_node_insights(client: &Client) -> (Seen, Arc<std::sync::atomic::AtomicBool>) {
    let seen: Seen = Arc::default();
    let listed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let api: Api<UpdateInsight> = Api::namespaced(client.clone(), NAMESPACE);
    let cfg = watcher::Config::default().labels(&format!("{}=Node", labels::RESOURCE_KIND));
    let (s, done) = (seen.clone(), listed.clone());
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(watcher(api, cfg).default_backoff());
        while let Some(ev) = stream.next().await {
            let obj = match ev {
                Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => o,
                Ok(watcher::Event::InitDone) => {
                    done.store(true, std::sync::atomic::Ordering::SeqCst);
                    continue;
                }
                _ => continue,
            };
            let at = Instant::now();
            let (Some(name), Some(p)) = (
                obj.metadata.name.clone(),
                obj.status.as_ref().and_then(|s| s.progress.as_ref()),
            ) else {
                continue;
            };
            if let Ok(mut m) = s.lock() {
                m.insert(name, (p.assessment, p.phase, at));
            }
        }
    });
    (seen, listed)
}

async fn wait_seen(
    seen: &Seen,
    name: &str,
    want: (Assessment, Option<NodePhase>),
    timeout: Duration,
) -> anyhow::Result<Instant> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(at) = seen
            .lock()
            .ok()
            .and_then(|m| m.get(name).filter(|v| (v.0, v.1) == want).map(|v| v.2))
        {
            return Ok(at);
        }
        if Instant::now() > deadline {
            bail!("insight {name} never showed {want:?} within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn node_insight_name(sim: &Simulation, index: usize) -> String {
    naming::insight_name(
        &update_status_api::crd::UpdateInsightStatus {
            type_: update_status_api::crd::InsightType::Progress,
            resource: update_status_api::crd::ResourceRef {
                kind: "Node".into(),
                name: sim.node_name(index).unwrap_or_default().to_string(),
                ..Default::default()
            },
            ..Default::default()
        },
        "",
    )
}

/// The controller's peak RSS (KiB) on a control plane with nothing but our CRDs and namespace:
/// started, left until its caches listed and its write counter stayed quiet for 3 s, stopped.
async fn empty_cluster_hwm(args: &Args, kubeconfig: &Path, log: &Path) -> anyhow::Result<u64> {
    let controller = Controller::start(&args.controller, kubeconfig, log, &[])?;
    // The metrics endpoint answers once the caches are being filled; then 3 quiet seconds.
    let deadline = Instant::now() + Duration::from_secs(60);
    while controller.scrape().await.is_none() {
        if Instant::now() > deadline {
            bail!(
                "the controller did not serve /metrics on the empty cluster (log {})",
                log.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    controller
        .settle(Duration::from_secs(3), Duration::from_secs(60))
        .await?;
    Ok(memory_kib(controller.pid()).0)
}

async fn bench_size(args: &Args, n: usize, ticks: f64) -> anyhow::Result<Run> {
    let mut run = Run {
        nodes: n,
        ..Default::default()
    };
    let dir = repo_root().join(&args.cluster_dir);
    log(&format!(
        "{n} nodes: fresh local control plane in {}",
        dir.display()
    ));
    cluster(&dir, "down")?;
    cluster(&dir, "up")?;
    let kubeconfig = dir.join("kubeconfig");
    let client = client_for(&kubeconfig).await?;
    let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    ns.patch(
        NAMESPACE,
        &PatchParams::apply("bench"),
        &Patch::Apply(serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})),
    )
    .await?;

    // The controller on the empty cluster first: the RSS it needs whatever the node count
    // (binary, runtime, TLS, watches), which the growth per node is counted from.
    let work = repo_root().join("target/bench");
    std::fs::create_dir_all(&work)?;
    run.empty_hwm_kib = empty_cluster_hwm(
        args,
        &kubeconfig,
        &work.join(format!("controller-{n}-empty.log")),
    )
    .await?;
    log(&format!(
        "{n} nodes: controller peak RSS on the empty cluster {:.1} MiB",
        mib(run.empty_hwm_kib)
    ));

    // A cluster in the middle of its update: the nodes are rolling.
    let start = Timestamp::now()
        .checked_sub(SignedDuration::from_secs(3600))
        .unwrap_or_else(|_| Timestamp::now());
    let max_unavailable = (n as u32 / 20).max(1);
    let sim = offline_cli::mid_node_roll(2, n.saturating_sub(3), max_unavailable, Some(start))?;
    let mut simulator = Simulator::new(client.clone(), sim).with_concurrency(args.concurrency);
    let t = Instant::now();
    simulator.install().await?;
    run.populate_s = t.elapsed().as_secs_f64();
    run.populate_writes = simulator.writes();
    log(&format!(
        "{n} nodes: created the cluster ({} writes in {:.1}s)",
        run.populate_writes, run.populate_s
    ));

    let inputs = simulator.simulation().inputs()?;
    let expected = assess_cluster(&inputs.as_cluster_inputs(), Timestamp::now());
    let want_insights = expected.insights.len();
    let want_pools = expected.worker_pools.len();
    run.objects = want_insights + want_pools + 1;

    // The API server's raw write rate for the same objects, before the controller starts.
    let mut named = update_status_assess::compose::desired_cluster(
        &inputs.as_cluster_inputs(),
        &update_status_assess::compose::Existing::default(),
        &update_status_assess::compose::Labels::new(),
        Timestamp::now(),
    );
    // The same owner references as the controller's (the Nodes' real uids): the garbage
    // collector tracks every new dependent, on the same CPUs.
    raw_writes::own_by_live_nodes(&client, &mut named.insights).await?;
    let raw = |namespace: &'static str, watched: bool| {
        let (client, named) = (client.clone(), &named);
        async move {
            let r = raw_writes::raw_write_rate(
                &client,
                &named.insights,
                args.concurrency,
                namespace,
                watched,
            )
            .await?;
            log(&format!(
                "{n} nodes: raw write rate{}: {} writes in {:.1}s ({:.0}/s, {} at a time, namespace {namespace}); {:.1} ms per object, {:.1} ms per apply in the API server",
                if watched { " with a watch" } else { "" },
                r.writes,
                r.secs,
                r.rate(),
                args.concurrency,
                r.object_ms,
                r.apply_ms,
            ));
            anyhow::Ok(r)
        }
    };
    // A first run warms the API server up for the kind (its first writes of UpdateInsights ran
    // up to 30 % slower than the next ones); not counted.
    raw(raw_writes::RAW_WARMUP_NAMESPACE, false).await?;
    run.raw = raw(raw_writes::RAW_NAMESPACE, false).await?;

    // Cold start.
    let controller_log = work.join(format!("controller-{n}.log"));
    let server_before = raw_writes::server_apply_time(&client).await?;
    let t0 = Instant::now();
    let controller = Controller::start(&args.controller, &kubeconfig, &controller_log, &[])?;
    let pid = controller.pid();
    let insights: Api<UpdateInsight> = Api::namespaced(client.clone(), NAMESPACE);
    let cps: Api<ControlPlaneUpdateStatus> = Api::namespaced(client.clone(), NAMESPACE);
    let wps: Api<WorkerPoolUpdateStatus> = Api::namespaced(client.clone(), NAMESPACE);
    let deadline = Instant::now() + Duration::from_secs(900);
    // The first write: before it, the process starts, lists its caches and assesses.
    let first_write = loop {
        if controller.total_writes().await.unwrap_or(0) > 0 {
            break Instant::now();
        }
        if Instant::now() > deadline {
            bail!(
                "the controller wrote nothing (log {})",
                controller_log.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    run.cold_first_write_s = first_write.duration_since(t0).as_secs_f64();
    let (cold_writes, last_change) = loop {
        let (w, at) = controller
            .settle(Duration::from_secs(3), Duration::from_secs(900))
            .await?;
        let have_i = insights
            .list_metadata(&ListParams::default())
            .await?
            .items
            .len();
        let have_c = cps.list_metadata(&ListParams::default()).await?.items.len();
        let have_w = wps.list_metadata(&ListParams::default()).await?.items.len();
        if w > 0 && have_i >= want_insights && have_c == 1 && have_w == want_pools {
            break (w, at);
        }
        if Instant::now() > deadline {
            bail!(
                "cold start did not converge: {have_i}/{want_insights} insights, {have_c} control plane, {have_w}/{want_pools} pools (log {})",
                controller_log.display()
            );
        }
    };
    run.cold_s = last_change.duration_since(t0).as_secs_f64();
    run.cold_writes = cold_writes;
    run.cold_cpu_s = cpu_seconds(pid, ticks);
    run.cold_apply_ms =
        raw_writes::server_apply_ms(server_before, raw_writes::server_apply_time(&client).await?);
    log(&format!(
        "{n} nodes: cold start converged in {:.1}s ({cold_writes} writes, {:.1} CPU s, {:.1} ms per apply in the API server)",
        run.cold_s, run.cold_cpu_s, run.cold_apply_ms
    ));
    // The raw rate again after the cold start (the API server and etcd now hold the objects of
    // both runs, as the cold start found them after the first), then with a watch.
    run.raw_after = raw(raw_writes::RAW_AFTER_NAMESPACE, false).await?;
    run.raw_watched = raw(raw_writes::RAW_WATCHED_NAMESPACE, true).await?;
    drop(named);

    // Steady state, with kubelet heartbeats (each node every 5 min).
    let w0 = controller.total_writes().await.unwrap_or(0);
    let c0 = cpu_seconds(pid, ticks);
    let per_sec = if args.no_heartbeats {
        0
    } else {
        n.div_ceil(300)
    };
    let mut next = 0;
    let steady_end = Instant::now() + Duration::from_secs(args.steady);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    while Instant::now() < steady_end {
        tick.tick().await;
        for _ in 0..per_sec {
            simulator
                .simulation_mut()
                .heartbeat(next % n, Timestamp::now());
            next += 1;
            run.steady_heartbeats += 1;
        }
        simulator.flush().await?;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    run.steady_writes = controller.total_writes().await.unwrap_or(0) - w0;
    run.steady_cpu_s = cpu_seconds(pid, ticks) - c0;
    log(&format!(
        "{n} nodes: steady state {}s: {} writes ({} heartbeats, {:.2} CPU s)",
        args.steady, run.steady_writes, run.steady_heartbeats, run.steady_cpu_s
    ));

    // Isolated changes: worker nodes walk their update one phase at a time.
    let (seen, listed) = watch_node_insights(&client);
    let ctx = NodeContext::from_inputs(&simulator.simulation().inputs()?.as_cluster_inputs());
    let pending: Vec<usize> = (0..simulator.simulation().node_count())
        .filter(|&i| {
            simulator.simulation().node_pool(i) == Some("worker")
                && simulator.simulation().node_step(i) == Some(NodeStep::Pending)
        })
        .collect();
    // Let the watch list everything first.
    let listing = Instant::now();
    while !listed.load(std::sync::atomic::Ordering::SeqCst) {
        if listing.elapsed() > Duration::from_secs(120) {
            bail!("the benchmark's watch of the insights never finished listing");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let first = pending.first().copied().context("no pending worker node")?;
    wait_seen(
        &seen,
        &node_insight_name(simulator.simulation(), first),
        expected_node(simulator.simulation(), &ctx, first)?,
        Duration::from_secs(60),
    )
    .await?;
    let before = controller.writes().await.unwrap_or_default();
    let passes_before = controller.pass_time().await.unwrap_or_default();
    let walkers = args.changes.div_ceil(5);
    let mut done = 0;
    'walk: for &i in pending.iter().take(walkers) {
        let name = node_insight_name(simulator.simulation(), i);
        for _ in 0..5 {
            if done == args.changes {
                break 'walk;
            }
            simulator
                .simulation_mut()
                .advance_node(i)
                .context("node cannot advance")?;
            let want = expected_node(simulator.simulation(), &ctx, i)?;
            let t = Instant::now();
            simulator.flush().await?;
            run.node_writes.push(t.elapsed());
            let at = wait_seen(&seen, &name, want, Duration::from_secs(30)).await?;
            run.latencies.push(at.saturating_duration_since(t));
            done += 1;
        }
    }
    run.changes = done;
    controller
        .settle(Duration::from_secs(2), Duration::from_secs(120))
        .await?;
    let after = controller.writes().await.unwrap_or_default();
    let passes_after = controller.pass_time().await.unwrap_or_default();
    run.pass_ms =
        (passes_after.0 - passes_before.0) * 1e3 / (passes_after.1 - passes_before.1).max(1.0);
    for (k, v) in &after {
        let d = v - before.get(k).copied().unwrap_or(0);
        if d > 0 {
            run.change_writes.insert(k.clone(), d);
        }
    }
    let mut slowest: Vec<(usize, Duration)> = run.latencies.iter().copied().enumerate().collect();
    slowest.sort_by_key(|s| std::cmp::Reverse(s.1));
    slowest.truncate(5);
    log(&format!(
        "{n} nodes: {done} isolated changes: {:.2} writes/change, p50 {:?}, p99 {:?} (slowest (change #, latency) {slowest:?}; node write p50 {:?} p99 {:?}; mean worker-pools pass {:.1} ms)",
        run.per_change(),
        run.percentile(0.5),
        run.percentile(0.99),
        percentile(&run.node_writes, 0.5),
        percentile(&run.node_writes, 0.99),
        run.pass_ms,
    ));

    // Burst: a wave of pending nodes starts draining at once.
    let wave: Vec<usize> = pending
        .iter()
        .skip(walkers)
        .take(args.burst)
        .copied()
        .collect();
    let w0 = controller.total_writes().await.unwrap_or(0);
    let mut wants = Vec::new();
    for &i in &wave {
        simulator
            .simulation_mut()
            .advance_node(i)
            .context("node cannot advance")?;
        wants.push((
            node_insight_name(simulator.simulation(), i),
            expected_node(simulator.simulation(), &ctx, i)?,
        ));
    }
    let t = Instant::now();
    simulator.flush().await?;
    let mut last = t;
    for (name, want) in &wants {
        last = last.max(wait_seen(&seen, name, *want, Duration::from_secs(60)).await?);
    }
    run.burst = wave.len();
    run.burst_s = last.saturating_duration_since(t).as_secs_f64();
    let (w1, _) = controller
        .settle(Duration::from_secs(2), Duration::from_secs(120))
        .await?;
    run.burst_writes = w1 - w0;
    log(&format!(
        "{n} nodes: burst of {}: all insights in {:.2}s, {} writes",
        run.burst, run.burst_s, run.burst_writes
    ));

    let (hwm, rss) = memory_kib(pid);
    run.rss_hwm_kib = hwm;
    run.rss_kib = rss;
    run.cpu_s = cpu_seconds(pid, ticks);
    drop(controller);

    // The live CLI on the objects the controller wrote.
    for (i, view) in LIVE_VIEWS.iter().enumerate() {
        let mut argv = vec!["-n", NAMESPACE];
        argv.extend_from_slice(view);
        let live = live_cli::measure(&args.cli, &kubeconfig, &work, &argv).await?;
        log(&format!(
            "{n} nodes: live CLI {view:?}: {} bytes from the API server, median {:.2}s, peak RSS {:.0} MiB, {} lines, ok={}",
            live.bytes,
            live.median_s,
            mib(live.hwm_kib),
            live.lines,
            live.ok
        ));
        run.live[i] = live;
    }

    // Offline CLI on the same cluster.
    let snap = work.join(format!("snapshot-{n}"));
    simulator.simulation().write_snapshot(&snap)?;
    run.snapshot_mib = std::fs::read_dir(&snap)?
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum::<u64>() as f64
        / (1024.0 * 1024.0);
    let (s, hwm, ok) = offline_cli::run_cli(&args.cli, &snap)?;
    run.cli_s = s;
    run.cli_hwm_kib = hwm;
    run.cli_ok = ok;
    log(&format!(
        "{n} nodes: offline CLI {:.2}s, peak RSS {:.0} MiB, ok={ok}; controller peak RSS {:.0} MiB, {:.1} CPU s",
        s,
        mib(hwm),
        mib(run.rss_hwm_kib),
        run.cpu_s
    ));
    if !(args.keep && Some(&n) == args.sizes.last()) {
        cluster(&dir, "down")?;
    }
    Ok(run)
}

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

fn criterion_table(dir: &Path) -> Option<String> {
    let read = |path: PathBuf| -> Option<f64> {
        let text = std::fs::read_to_string(path).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v.pointer("/median/point_estimate")?.as_f64()
    };
    let fmt = |ns: f64| {
        if ns >= 1e6 {
            format!("{:.2} ms", ns / 1e6)
        } else {
            format!("{:.1} µs", ns / 1e3)
        }
    };
    let mut out = String::new();
    let rows = [
        (
            "nodes",
            "assess_nodes",
            "`assess_nodes` (context, every node, every pool)",
        ),
        (
            "nodes",
            "per_node_and_aggregate",
            "`assess_node` per node + `aggregate_pool` (the worker-pools reconciler's full pass)",
        ),
        (
            "nodes",
            "aggregate_cached",
            "`aggregate_pool` over cached node assessments (its pass after one node event)",
        ),
        (
            "cluster",
            "assess_cluster",
            "`assess_cluster` (what the offline CLI runs)",
        ),
        (
            "control_plane",
            "control_plane_share",
            "`control_plane_share` (the control-plane reconciler's pass: master counts from the node cache, complete objects)",
        ),
    ];
    let mut any = false;
    let _ = writeln!(out, "| benchmark | 500 nodes | 2,000 nodes | 5,000 nodes |");
    let _ = writeln!(out, "|---|---|---|---|");
    for (group, bench, label) in rows {
        let cells: Vec<String> = [500, 2000, 5000]
            .iter()
            .map(|n| {
                read(
                    dir.join(group)
                        .join(bench)
                        .join(n.to_string())
                        .join("new/estimates.json"),
                )
                .map(|ns| {
                    any = true;
                    format!("{} ({:.2} µs/node)", fmt(ns), ns / 1e3 / f64::from(*n))
                })
                .unwrap_or_else(|| "–".into())
            })
            .collect();
        let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
    }
    if let Some(ns) = read(dir.join("control_plane/assess_control_plane/new/estimates.json")) {
        any = true;
        let _ = writeln!(
            out,
            "| `assess_control_plane` (34 operators; independent of the node count) | {} | | |",
            fmt(ns)
        );
    }
    any.then_some(out)
}

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
    let _ = writeln!(s, "## The controller on a real API server\n");
    let mut header = "| | goal |".to_string();
    let mut sep = "|---|---|".to_string();
    for r in runs {
        let _ = write!(header, " {} nodes |", r.nodes);
        sep.push_str("---|");
    }
    let _ = writeln!(s, "{header}\n{sep}");
    let ok = |b: bool| if b { " ✅" } else { " ❌" };
    let row = |s: &mut String, label: &str, goal: &str, cell: &dyn Fn(&Run) -> String| {
        let cells: Vec<String> = runs.iter().map(cell).collect();
        let _ = writeln!(s, "| {label} | {goal} | {} |", cells.join(" | "));
    };
    row(
        &mut s,
        "objects written by the controller (status objects + insights)",
        "",
        &|r| r.objects.to_string(),
    );
    row(
        &mut s,
        "creating the simulated cluster (simulator writes, time)",
        "",
        &|r| format!("{} writes, {:.1} s", r.populate_writes, r.populate_s),
    );
    row(&mut s, "cold start: convergence time", "", &|r| {
        format!("{:.1} s", r.cold_s)
    });
    row(&mut s, "cold start: API writes (per object)", "", &|r| {
        format!(
            "{} ({:.2})",
            r.cold_writes,
            r.cold_writes as f64 / r.objects.max(1) as f64
        )
    });
    row(
        &mut s,
        "API server's raw write rate: the same insights created and status-written as fast as it takes them, before and after the cold start (mean)",
        "",
        &|r| {
            format!(
                "{} writes, {:.1} s ({:.0}/s) and {:.1} s ({:.0}/s): {:.0}/s",
                r.raw.writes,
                r.raw.secs,
                r.raw.rate(),
                r.raw_after.secs,
                r.raw_after.rate(),
                r.raw_rate()
            )
        },
    );
    row(
        &mut s,
        "cold start: write rate, share of the raw rate",
        "≥ 0.9",
        &|r| {
            let cold = r.cold_writes as f64 / r.cold_s.max(1e-9);
            let share = cold / r.raw_rate().max(1e-9);
            format!("{cold:.0}/s: {share:.2}{}", ok(share >= 0.9))
        },
    );
    row(
        &mut s,
        "… controller start → first write; the write phase's rate and share of the raw rate",
        "",
        &|r| {
            let phase = (r.cold_s - r.cold_first_write_s).max(1e-9);
            let rate = r.cold_writes as f64 / phase;
            let raw = r.raw_rate();
            format!(
                "{:.2} s; {rate:.0}/s, {:.2}",
                r.cold_first_write_s,
                rate / raw.max(1e-9)
            )
        },
    );
    row(
        &mut s,
        "… raw rate with a watch decoding every event of the namespace (as the controller's cache of its objects), share of the raw rate",
        "",
        &|r| {
            let watched = r.raw_watched.rate();
            let raw = r.raw_rate();
            let cold = r.cold_writes as f64 / r.cold_s.max(1e-9);
            format!(
                "{} writes, {:.1} s ({watched:.0}/s): {:.2}; the cold start's share of it {:.2}",
                r.raw_watched.writes,
                r.raw_watched.secs,
                watched / raw.max(1e-9),
                cold / watched.max(1e-9)
            )
        },
    );
    row(
        &mut s,
        "… time of one UpdateInsight apply inside the API server (`apiserver_request_duration_seconds`): raw before / cold start / raw after / raw with a watch",
        "",
        &|r| {
            format!(
                "{:.1} / {:.1} / {:.1} / {:.1} ms",
                r.raw.apply_ms, r.cold_apply_ms, r.raw_after.apply_ms, r.raw_watched.apply_ms
            )
        },
    );
    row(&mut s, "cold start: controller CPU", "", &|r| {
        format!("{:.1} s", r.cold_cpu_s)
    });
    row(
        &mut s,
        "steady state: API writes over the period (heartbeats received)",
        "0",
        &|r| {
            format!(
                "{}{} ({} heartbeats)",
                r.steady_writes,
                ok(r.steady_writes == 0),
                r.steady_heartbeats
            )
        },
    );
    row(
        &mut s,
        "steady state: controller CPU over the period",
        "",
        &|r| format!("{:.2} s", r.steady_cpu_s),
    );
    row(
        &mut s,
        "isolated node changes: API writes per change",
        "≤ 2",
        &|r| format!("{:.2}{}", r.per_change(), ok(r.per_change() <= 2.0)),
    );
    row(
        &mut s,
        "… of which UpdateInsight status / UpdateInsight labels (assessment changed) / WorkerPoolUpdateStatus",
        "",
        &|r| {
            let per = |k: &str| {
                r.change_writes.get(k).copied().unwrap_or(0) as f64 / r.changes.max(1) as f64
            };
            format!(
                "{:.2} / {:.2} / {:.2}",
                per("UpdateInsight apply-status"),
                per("UpdateInsight apply"),
                per("WorkerPoolUpdateStatus apply-status") + per("WorkerPoolUpdateStatus apply")
            )
        },
    );
    row(&mut s, "event → insight latency p50", "", &|r| {
        format!("{:.0} ms", r.percentile(0.5).as_secs_f64() * 1e3)
    });
    row(&mut s, "event → insight latency p99", "≤ 1 s", &|r| {
        let p = r.percentile(0.99);
        format!(
            "{:.0} ms{}",
            p.as_secs_f64() * 1e3,
            ok(p <= Duration::from_secs(1))
        )
    });
    row(
        &mut s,
        "worker-pools reconcile pass, mean during the isolated changes",
        "",
        &|r| format!("{:.0} ms", r.pass_ms),
    );
    row(
        &mut s,
        "burst (nodes starting to drain at once): all insights updated / writes per node",
        "",
        &|r| {
            format!(
                "{}: {:.2} s / {:.2}",
                r.burst,
                r.burst_s,
                r.burst_writes as f64 / r.burst.max(1) as f64
            )
        },
    );
    row(
        &mut s,
        "controller peak RSS (VmHWM)",
        "≤ 40 MiB at 5,000",
        &|r| {
            let m = mib(r.rss_hwm_kib);
            format!(
                "{m:.0} MiB{}",
                if r.nodes >= 5000 { ok(m <= 40.0) } else { "" }
            )
        },
    );
    row(
        &mut s,
        "… growth per node: (peak − peak on the empty cluster) / nodes (empty-cluster peak)",
        "",
        &|r| {
            format!(
                "{:.1} KiB ({:.0} MiB)",
                r.rss_hwm_kib.saturating_sub(r.empty_hwm_kib) as f64 / r.nodes.max(1) as f64,
                mib(r.empty_hwm_kib)
            )
        },
    );
    row(&mut s, "controller RSS at the end", "", &|r| {
        format!("{:.0} MiB", mib(r.rss_kib))
    });
    row(&mut s, "controller CPU, whole run", "", &|r| {
        format!("{:.1} s", r.cpu_s)
    });
    for (i, (view, goal)) in ["default view", "`--details=all`"]
        .iter()
        .zip(LIVE_GOALS)
        .enumerate()
    {
        let (bytes_goal, s_goal, mib_goal) = goal;
        let goal_text = match bytes_goal {
            Some(b) => format!(
                "≤ {:.0} MB, ≤ {s_goal} s, ≤ {mib_goal:.0} MiB",
                b as f64 / 1e6
            ),
            None => format!("≤ {s_goal} s, ≤ {mib_goal:.0} MiB"),
        };
        row(
            &mut s,
            &format!(
                "live CLI, {view}: bytes from the API server / median wall time of 5 / peak RSS"
            ),
            &goal_text,
            &|r| {
                let l = &r.live[i];
                let met = bytes_goal.is_none_or(|b| l.bytes <= b)
                    && l.median_s <= s_goal
                    && mib(l.hwm_kib) <= mib_goal
                    && l.ok;
                format!(
                    "{:.2} MB / {:.2} s / {:.0} MiB{}",
                    l.bytes as f64 / 1e6,
                    l.median_s,
                    mib(l.hwm_kib),
                    ok(met)
                )
            },
        );
    }
    row(
        &mut s,
        "offline CLI (`kubectl-update_status --from-dir`): wall time / peak RSS (snapshot size)",
        "",
        &|r| {
            format!(
                "{:.2} s / {:.0} MiB ({:.1} MiB){}",
                r.cli_s,
                mib(r.cli_hwm_kib),
                r.snapshot_mib,
                if r.cli_ok { "" } else { " — failed" }
            )
        },
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "How each figure is measured:\n\n\
- *cold start*: the controller starts on the populated cluster; convergence is the time of its last write before every expected object exists and its write counter (`update_status_api_writes_total` on `/metrics`) has not moved for 3 s. A new object costs two writes (metadata, then the status subresource).\n\
- *raw write rate*: before the controller starts, the bench writes the same insights (names, labels, owners, statuses and field manager: what the controller will write) into another namespace, `--concurrency` objects at a time, each as the controller does (server-side apply of the metadata, then of the status); the cold start's share is its writes per second over that rate (issue #16 asks ≥ 0.9). A first such run into a namespace of its own warms the API server up and is not counted (the first writes of a kind ran up to 30 % slower). The same writes are made again into a second namespace after the cold start (the API server and etcd then hold what the cold start found, plus its objects; the share uses the mean of both rates, which brackets that drift and the machine's), then into a third while a watcher decodes every event there, as the controller's cache of its own objects does: what that watch costs (the API server sends every write back to the controller as an event: a controller that caches its objects cannot write faster than this). The write phase runs from the controller's first write (its `/metrics` polled every 25 ms) to its last. The time of one apply inside the API server is the change of `apiserver_request_duration_seconds` (sum over count, verb `APPLY`, UpdateInsights and their status) over each phase, read from the API server's `/metrics`: the rest of a write's round trip is the network, TLS and both sides' HTTP and JSON.\n\
- *steady state*: nothing changes but kubelet heartbeats (`lastHeartbeatTime` of every node's conditions, each node every 5 min, spread evenly): the controller re-reads those nodes and must write nothing.\n\
- *isolated node changes*: worker nodes walk their update one phase at a time (Draining → Updating → Rebooting → Done (still cordoned) → uncordoned), one change in flight at a time; latency is from just before the node write to the arrival of the node's UpdateInsight watch event showing the new assessment and phase (so it includes the API round trips, the controller's 100 ms debounce and the benchmark's own watch). Every change rewrites the node's insight status (1 write); the 3 of 5 changes that move the node's assessment (Outdated → Progressing → Unavailable → Completed) also rewrite the insight's `assessment` label, a separate metadata write since the status subresource cannot change labels (0.6 per change); the pool's counts change too, but a WorkerPoolUpdateStatus change that is only in its counts is written at most once per second (`POOL_STATUS_MIN_INTERVAL`), so the pool costs a fraction of a write per change. The isolated p99 is the 99th of the 100 samples (nearest rank); the slowest sample is in the log of `make bench`.\n\
- *burst*: that many pending worker nodes start draining in one go (what the machine-config controller does with `maxUnavailable`): two writes per node insight (label and status, the assessment moves), while the pool status is written once or twice for the whole wave.\n\
- *RSS and CPU*: `/proc/<pid>/status` `VmHWM`/`VmRSS` and `/proc/<pid>/stat` `utime + stime` of the controller process (the API server and etcd run on the same 2 CPUs). The growth per node subtracts the peak RSS of the same controller started, before the cluster is created, on the empty control plane (our CRDs and namespace only) and left 3 s after its caches listed.\n"
    );
    if let Some(f) = fleet {
        let _ = writeln!(s, "{}", fleet::report(f));
    }
    if !offline.is_empty() {
        let _ = writeln!(s, "{}", offline_cli::report(offline));
    }
    if let Some(t) = criterion_table(&args.criterion) {
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
        let results = estimates::run(&args.seeds, args.estimate_updates)?;
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
            &args.cli,
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
        println!("{}", fleet::report(&f));
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
        let mut size_args = args.clone();
        // --keep keeps the last control plane: the fleet's, if it runs.
        size_args.keep =
            args.keep && args.fleet == 0 && args.fleet_rows == 0 && i + 1 == args.sizes.len();
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
