//! One size of the controller on a real API server (`bench --sizes`): a fresh local control
//! plane, a simulated cluster of N nodes mid-update, the API server's raw write rate, the
//! controller's cold start, steady state, isolated changes and burst, its memory and CPU, and
//! the live and offline CLI on the result.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ListParams, Patch, PatchParams};
use update_status_api::crd::{ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus};
use update_status_assess::assess_cluster;
use update_status_assess::nodes::NodeContext;
use update_status_e2e::playback::Simulator;
use update_status_e2e::{client_for, repo_root};
use update_status_simulator::NodeStep;

use super::controller::{Controller, NAMESPACE};
use super::insight_watch::{expected_node, node_insight_name, wait_seen, watch_node_insights};
use super::process::{cluster, cpu_seconds, log, memory_kib, mib};
use super::{live_cli, offline_cli, raw_writes};

/// The live CLI's views the bench measures (their goals: `size_report::LIVE_GOALS`).
pub const LIVE_VIEWS: [&[&str]; 2] = [&[], &["--details", "all"]];

impl Run {
    /// The raw write rate: the mean of the rates before and after the cold start (writes/s).
    pub fn raw_rate(&self) -> f64 {
        (self.raw.rate() + self.raw_after.rate()) / 2.0
    }
}

/// One size's settings (from `bench`'s flags).
pub struct SizeArgs<'a> {
    /// Isolated node changes to time (walked 5 phases per node).
    pub changes: usize,
    /// Nodes changed at once in the burst.
    pub burst: usize,
    /// Seconds of steady state.
    pub steady: u64,
    /// No kubelet heartbeats during the steady state.
    pub no_heartbeats: bool,
    /// State dir of the control plane (re-created), under the repository.
    pub cluster_dir: &'a Path,
    /// The controller binary.
    pub controller: &'a Path,
    /// The kubectl plugin binary.
    pub cli: &'a Path,
    /// Concurrent requests when creating the cluster and in the raw write rate.
    pub concurrency: usize,
    /// Keep the control plane running at the end.
    pub keep: bool,
}

/// Results for one size.
#[derive(Debug, Default, Clone)]
pub struct Run {
    pub nodes: usize,
    pub objects: usize,
    pub populate_s: f64,
    pub populate_writes: u64,
    pub cold_s: f64,
    pub cold_writes: u64,
    pub cold_cpu_s: f64,
    /// From the controller's start to its first write (±25 ms).
    pub cold_first_write_s: f64,
    /// The API server's raw write rate for the same insights.
    pub raw: raw_writes::RawRun,
    /// The same after the cold start.
    pub raw_after: raw_writes::RawRun,
    /// The same with a watch decoding every event of the namespace (after the cold start).
    pub raw_watched: raw_writes::RawRun,
    /// Mean time of one UpdateInsight apply inside the API server during the cold start (ms).
    pub cold_apply_ms: f64,
    pub steady_writes: u64,
    pub steady_heartbeats: u64,
    pub steady_cpu_s: f64,
    /// The steady state's writes by kind and verb (`UpdateHistory apply-status 1`).
    pub steady_write_kinds: String,
    /// The steady state's reconcile passes by reconciler: count / seconds.
    pub steady_passes: String,
    pub changes: usize,
    pub change_writes: BTreeMap<String, u64>,
    pub latencies: Vec<Duration>,
    /// Node write round trips during the isolated changes.
    pub node_writes: Vec<Duration>,
    /// Mean worker-pools reconcile pass during the isolated changes.
    pub pass_ms: f64,
    pub burst: usize,
    pub burst_s: f64,
    pub burst_writes: u64,
    pub rss_hwm_kib: u64,
    pub rss_kib: u64,
    /// The controller's peak RSS on the same control plane before the cluster is created (no
    /// nodes, no objects): what the RSS grows from.
    pub empty_hwm_kib: u64,
    pub cpu_s: f64,
    pub cli_s: f64,
    pub cli_hwm_kib: u64,
    pub cli_ok: bool,
    pub snapshot_mib: f64,
    /// The live CLI, default view and `--details=all`.
    pub live: [live_cli::LiveRun; 2],
}

impl Run {
    pub fn change_writes_total(&self) -> u64 {
        self.change_writes.values().sum()
    }
    pub fn per_change(&self) -> f64 {
        self.change_writes_total() as f64 / self.changes.max(1) as f64
    }
    pub fn percentile(&self, p: f64) -> Duration {
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

/// The controller's peak RSS (KiB) on a control plane with nothing but our CRDs and namespace:
/// started, left until its caches listed and its write counter stayed quiet for 3 s, stopped.
async fn empty_cluster_hwm(
    args: &SizeArgs<'_>,
    kubeconfig: &Path,
    log: &Path,
) -> anyhow::Result<u64> {
    let controller = Controller::start(args.controller, kubeconfig, log, &[])?;
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

pub async fn bench_size(args: &SizeArgs<'_>, n: usize, ticks: f64) -> anyhow::Result<Run> {
    let mut run = Run {
        nodes: n,
        ..Default::default()
    };
    let dir = repo_root().join(args.cluster_dir);
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
    let controller = Controller::start(args.controller, &kubeconfig, &controller_log, &[])?;
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
    let kinds0 = controller.writes().await.unwrap_or_default();
    let passes0 = controller.pass_times().await.unwrap_or_default();
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
    // What wrote, and the reconcilers' passes (count, time).
    let kinds1 = controller.writes().await.unwrap_or_default();
    run.steady_write_kinds = kinds1
        .iter()
        .filter_map(|(k, v)| {
            let d = v.saturating_sub(kinds0.get(k).copied().unwrap_or(0));
            (d > 0).then(|| format!("{k} {d}"))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let passes1 = controller.pass_times().await.unwrap_or_default();
    run.steady_passes = passes1
        .iter()
        .map(|(r, (secs, count))| {
            let (s0, c0) = passes0.get(r).copied().unwrap_or_default();
            format!("{r} {:.0} / {:.2} s", count - c0, secs - s0)
        })
        .collect::<Vec<_>>()
        .join(", ");
    log(&format!(
        "{n} nodes: steady state: writes [{}], passes [{}]",
        run.steady_write_kinds, run.steady_passes
    ));
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
        let live = live_cli::measure(args.cli, &kubeconfig, &work, &argv).await?;
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
    let (s, hwm, ok) = offline_cli::run_cli(args.cli, &snap)?;
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
    if !args.keep {
        cluster(&dir, "down")?;
    }
    Ok(run)
}
