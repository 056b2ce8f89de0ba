//! `bench --fleet N`: a fleet of N hosted clusters reported to one hub (issue #16, goal 5).
//!
//! Two control planes on this machine: the **management** cluster (the benchmark's usual one,
//! with the HyperShift and cluster-api CRDs) and the **hub**, a second etcd + kube-apiserver
//! (+ kube-controller-manager, as `hack/local-cluster.sh` starts it) whose etcd size and write
//! rate are the hub's own. Then:
//!
//! 1. N small simulated HostedClusters (`update_status_simulator::hosted`: a Replace and
//!    an InPlace NodePool of `--fleet-machines` Machines each) are created on the management
//!    cluster, concurrently, each stepped to a different point of its update (control plane
//!    updating, NodePools rolling); the hub gets the namespace of each managed cluster, as ACM
//!    creates it;
//!    with `--fleet-identity addon` (the default) each managed cluster also gets an add-on
//!    identity of its own, as ACM gives them ([`super::hub_identities`]);
//! 2. **cold start of the fleet**: the release controller starts with `--mode=hosted` and
//!    `--hub-addon-secrets` (each hosted cluster's own identity) or `--hub-kubeconfig <hub>` (one
//!    shared), one hub-sync session per HostedCluster, one process; done when every hub copy
//!    exists (as many per kind as the local objects to copy) and neither the local nor the hub
//!    write counter has moved for 3 s;
//! 3. **update wave**: every simulated cluster steps `--fleet-wave` times, as fast as the
//!    management API server takes it; the hub writes (`update_status_hub_writes_total`) from the
//!    first simulator write until the copies are converged again, their rate, and the highest
//!    rate over one second; then every copy is compared with its local object (the wave must be
//!    mirrored);
//! 4. **steady state**: `--steady` seconds in which nothing changes: hub writes (goal 0);
//! 5. the controller's peak RSS and RSS per cluster, its open file descriptors and its TCP
//!    connections to the hub; the hub API server's open watches of our kinds; the hub
//!    kube-apiserver's RSS; the hub etcd's database size (compacted and defragmented, so only
//!    live data counts) before the controller started and at the end, per cluster;
//! 6. `kubectl-update_status --fleet` (and `-o json`) on the hub over all N clusters: bytes from
//!    the hub, median wall time of 5 runs, peak RSS (goal ≤ 2 s).
//!
//! [`super::fleet_report`] writes the table and the derived "hub at 3,500 clusters" (ACM's
//! supported scale) and "at 10,000 clusters" paragraphs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt};
use jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use update_status_e2e::playback::HostedSimulator;
use update_status_e2e::{client_for, repo_root};
use update_status_simulator::hosted::{HostedSimConfig, HostedSimulation};

use super::controller::Controller;
use super::fleet_counts::{
    KINDS, compare, counters, hub_counts, hub_json_bytes, local_to_copy, settle,
};
use super::hub_etcd::Etcd;
use super::hub_identities::{self, Identity};
use super::live_cli::{self, LiveRun};
use super::process::{cluster, cpu_seconds, log, memory_kib, mib, pid_of};

/// Namespace of the HostedClusters and their NodePools (the control planes are in
/// `clusters-<name>`).
const CLUSTERS_NAMESPACE: &str = "clusters";
/// The goal of `--fleet` over the whole fleet (median wall time, s).
pub const FLEET_CLI_GOAL_S: f64 = 2.0;
/// Simulated time per step.
const SIM_STEP: SignedDuration = SignedDuration::from_secs(20);

/// What the fleet part measures.
#[derive(Debug, Default, Clone)]
pub struct FleetRun {
    pub clusters: usize,
    /// One add-on identity per cluster, or one shared.
    pub identity: Option<Identity>,
    /// Making the add-on identities (hub Role and RoleBinding, certificate, Secret), s.
    pub identities_s: f64,
    /// The controller's established TCP connections to the hub API server, at the end.
    pub hub_connections: usize,
    /// The hub API server's open watches of our kinds, at the end.
    pub hub_watches: u64,
    /// Machines of each NodePool.
    pub machines: u32,
    pub populate_s: f64,
    pub populate_writes: u64,
    /// Hub copies by kind, at the end.
    pub hub_objects: BTreeMap<&'static str, usize>,
    /// Their size as JSON (what a list returns), at the end.
    pub hub_json_bytes: u64,
    pub cold_s: f64,
    pub cold_hub_writes: u64,
    pub cold_local_writes: u64,
    pub cold_cpu_s: f64,
    /// Last local write of the cold start → last hub write.
    pub cold_hub_lag_s: f64,
    pub wave_steps: usize,
    pub wave_sim_writes: u64,
    /// First simulator write of the wave → last hub write before convergence.
    pub wave_s: f64,
    pub wave_hub_writes: u64,
    pub wave_local_writes: u64,
    /// Last local write of the wave → last hub write.
    pub wave_hub_lag_s: f64,
    /// Highest hub writes in one second of the wave.
    pub wave_peak_rate: f64,
    /// Every hub copy equals its local object after the wave.
    pub mirrored: bool,
    pub mirror_error: String,
    pub steady_s: u64,
    pub steady_hub_writes: u64,
    pub steady_local_writes: u64,
    pub steady_cpu_s: f64,
    pub rss_hwm_kib: u64,
    pub rss_kib: u64,
    pub cpu_s: f64,
    pub fds: usize,
    pub threads: usize,
    pub hub_apiserver_rss_kib: u64,
    /// The hub kube-apiserver's RSS before the controller started.
    pub hub_apiserver_before_kib: u64,
    /// The same controller without the hub sync on the same fleet: (VmHWM, VmRSS) once
    /// its caches are synced and its first pass is done.
    pub local_only_kib: (u64, u64),
    /// Hub etcd database size (compacted, defragmented): before the controller, at the end.
    pub etcd_before: u64,
    pub etcd_after: u64,
    /// `--fleet`, `--fleet -o json`.
    pub cli: [LiveRun; 2],
    /// Rows in the JSON report (must be N).
    pub cli_rows: usize,
}

impl FleetRun {
    pub fn hub_total(&self) -> usize {
        self.hub_objects.values().sum()
    }
    pub fn per_cluster(&self, x: f64) -> f64 {
        x / self.clusters.max(1) as f64
    }
    pub fn wave_rate(&self) -> f64 {
        self.wave_hub_writes as f64 / self.wave_s.max(1e-9)
    }
    pub fn etcd_per_cluster(&self) -> f64 {
        self.per_cluster(self.etcd_after.saturating_sub(self.etcd_before) as f64)
    }
    /// The hub sync's share of the RSS per cluster (RSS with minus without the hub sync).
    pub fn sessions_kib_per_cluster(&self) -> f64 {
        self.per_cluster(self.rss_kib.saturating_sub(self.local_only_kib.1) as f64)
    }
    pub fn cli_ok(&self, i: usize) -> bool {
        let l = &self.cli[i];
        l.ok && l.median_s <= FLEET_CLI_GOAL_S && (i == 0 || self.cli_rows == self.clusters)
    }
}

/// The fleet part's settings (from `bench`'s flags).
pub struct FleetArgs<'a> {
    pub clusters: usize,
    pub identity: Identity,
    pub machines: u32,
    pub wave: usize,
    pub steady: u64,
    pub concurrency: usize,
    pub controller: &'a Path,
    pub cli: &'a Path,
    pub management_dir: PathBuf,
    pub hub_dir: PathBuf,
    pub namespace: &'a str,
    pub keep: bool,
}

/// The HostedCluster (and managed cluster) name of cluster `i`.
fn cluster_name(i: usize) -> String {
    format!("fleet-{i:05}")
}
/// Applies a namespace.
async fn namespace(client: &Client, name: &str) -> anyhow::Result<()> {
    let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    ns.patch(
        name,
        &PatchParams::apply("bench"),
        &Patch::Apply(serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})),
    )
    .await
    .with_context(|| format!("creating namespace {name}"))?;
    Ok(())
}

fn install_hosted_crds(kubeconfig: &Path) -> anyhow::Result<()> {
    let dir = repo_root().join("testdata/hosted/crds");
    let kubectl = |args: &[&str]| -> anyhow::Result<()> {
        let out = std::process::Command::new("kubectl")
            .args(args)
            .arg(&dir)
            .env("KUBECONFIG", kubeconfig)
            .output()
            .context("running kubectl")?;
        if !out.status.success() {
            bail!(
                "kubectl {} {}: {}",
                args.join(" "),
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    };
    kubectl(&["apply", "--server-side", "--force-conflicts", "-f"])?;
    // kubectl fails at once on a CRD without status conditions yet: wait again (for 60 s).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match kubectl(&[
            "wait",
            "--for",
            "condition=Established",
            "--timeout",
            "60s",
            "-f",
        ]) {
            Err(e)
                if e.to_string().contains(update_status_e2e::CONDITIONS_UNSET)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            done => return done,
        }
    }
}

/// The simulations: cluster `i` stepped `pre[i]` times before the controller starts, so the
/// fleet is spread over the update, and each still has `wave` steps to go.
fn simulations(
    n: usize,
    machines: u32,
    wave: usize,
) -> anyhow::Result<(Vec<HostedSimulation>, Vec<u64>)> {
    let config = |i: usize, start: Timestamp| HostedSimConfig {
        namespace: CLUSTERS_NAMESPACE.into(),
        name: cluster_name(i),
        replace_replicas: machines,
        in_place_replicas: machines,
        control_plane_steps: 4,
        seed: i as u64 + 1,
        start,
        step: SIM_STEP,
        ..Default::default()
    };
    let mut sims = Vec::with_capacity(n);
    let mut pre = Vec::with_capacity(n);
    for i in 0..n {
        // Each seed plays its own update: its length is that simulation's.
        let total = HostedSimulation::new(config(i, Timestamp::now()))?.run_to_completion(1_000);
        let room = total.saturating_sub(wave as u64 + 1);
        if room < 2 {
            bail!("a hosted update of {total} steps leaves no room for a wave of {wave}");
        }
        // 1 ..= room, spread (a prime stride) over the fleet.
        let k = 1 + (i as u64 * 7_919) % room;
        // Simulated time reaches the wall clock at the end of the wave.
        let behind = SIM_STEP * i32::try_from(k + wave as u64).unwrap_or(i32::MAX);
        let start = Timestamp::now()
            .checked_sub(behind)
            .unwrap_or_else(|_| Timestamp::now());
        sims.push(HostedSimulation::new(config(i, start))?);
        pre.push(k);
    }
    Ok((sims, pre))
}

/// The controller without the hub sync on the same fleet (everything already written): its
/// memory once its first reconcile pass is done and it has been quiet for 5 s.
async fn local_only(
    a: &FleetArgs<'_>,
    kubeconfig: &Path,
    work: &Path,
) -> anyhow::Result<(u64, u64)> {
    let log_path = work.join(format!("controller-fleet-{}-no-hub.log", a.clusters));
    let c = Controller::start(a.controller, kubeconfig, &log_path, &["--mode=hosted"])?;
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let passes: f64 = c
            .scrape()
            .await
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("update_status_reconcile_duration_seconds_count"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        if passes > 0.0 {
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "the controller without hub sync never reconciled (log {})",
                log_path.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    settle(&c, Duration::from_secs(5), Duration::from_secs(600)).await?;
    let mem = memory_kib(c.pid());
    log(&format!(
        "fleet of {}: without hub sync: peak RSS {:.0} MiB, RSS {:.0} MiB",
        a.clusters,
        mib(mem.0),
        mib(mem.1)
    ));
    Ok(mem)
}

/// Runs the fleet part; the control planes are stopped at the end (unless `keep`).
pub async fn bench_fleet(a: &FleetArgs<'_>, ticks: f64) -> anyhow::Result<FleetRun> {
    let result = run(a, ticks).await;
    if result.is_err() || !a.keep {
        let _ = cluster(&a.management_dir, "down");
        let _ = cluster(&a.hub_dir, "down");
    }
    result
}

async fn run(a: &FleetArgs<'_>, ticks: f64) -> anyhow::Result<FleetRun> {
    let n = a.clusters;
    let mut run = FleetRun {
        clusters: n,
        identity: Some(a.identity),
        machines: a.machines,
        wave_steps: a.wave,
        steady_s: a.steady,
        ..Default::default()
    };
    log(&format!(
        "fleet of {n}: fresh management cluster in {} and hub in {}",
        a.management_dir.display(),
        a.hub_dir.display()
    ));
    for dir in [&a.management_dir, &a.hub_dir] {
        cluster(dir, "down")?;
        cluster(dir, "up")?;
    }
    let kubeconfig = a.management_dir.join("kubeconfig");
    let hub_kubeconfig = a.hub_dir.join("kubeconfig");
    install_hosted_crds(&kubeconfig)?;
    let client = client_for(&kubeconfig).await?;
    let hub = client_for(&hub_kubeconfig).await?;
    namespace(&client, a.namespace).await?;
    namespace(&client, CLUSTERS_NAMESPACE).await?;

    // The fleet, mid-update; the hub namespaces of the managed clusters.
    let (sims, pre) = simulations(n, a.machines, a.wave)?;
    let mut simulators: Vec<HostedSimulator> = sims
        .into_iter()
        .map(|s| HostedSimulator::new(client.clone(), s))
        .collect();
    let t = Instant::now();
    futures::stream::iter(simulators.iter_mut().zip(&pre))
        .map(|(s, &k)| async move {
            s.install().await?;
            for _ in 0..k {
                s.step().await?;
            }
            anyhow::Ok(())
        })
        .buffer_unordered(a.concurrency)
        .try_collect::<Vec<()>>()
        .await?;
    futures::stream::iter((0..n).map(cluster_name))
        .map(|name| {
            let hub = hub.clone();
            async move { namespace(&hub, &name).await }
        })
        .buffer_unordered(a.concurrency)
        .try_collect::<Vec<()>>()
        .await?;
    run.populate_s = t.elapsed().as_secs_f64();
    run.populate_writes = simulators.iter().map(HostedSimulator::writes).sum::<u64>() + n as u64;
    let work = repo_root().join("target/bench");
    std::fs::create_dir_all(&work)?;
    if a.identity == Identity::Addon {
        // Each managed cluster's add-on identity: its Secret on the management cluster in a
        // namespace named after it (`--hub-addon-secret-namespace={cluster}`).
        let t = Instant::now();
        let names: Vec<String> = (0..n).map(cluster_name).collect();
        futures::stream::iter(&names)
            .map(|name| {
                let client = client.clone();
                async move { namespace(&client, name).await }
            })
            .buffer_unordered(a.concurrency)
            .try_collect::<Vec<()>>()
            .await?;
        hub_identities::provision(
            &names,
            &hub,
            &client,
            &a.hub_dir,
            &hub_kubeconfig,
            &work.join("fleet-certs"),
            a.concurrency,
        )
        .await?;
        run.identities_s = t.elapsed().as_secs_f64();
        log(&format!(
            "fleet of {n}: {n} add-on identities (hub Role and RoleBinding, client certificate, Secret) in {:.1}s",
            run.identities_s
        ));
    }
    let mut stages: BTreeMap<String, usize> = BTreeMap::new();
    for s in &simulators {
        *stages
            .entry(s.simulation().stage().to_string())
            .or_default() += 1;
    }
    log(&format!(
        "fleet of {n}: created the hosted clusters and hub namespaces ({} writes in {:.1}s); stages {stages:?}",
        run.populate_writes, run.populate_s
    ));

    let etcd = Etcd::of(&a.hub_dir)?;
    run.etcd_before = etcd.live_size().await?;
    run.hub_apiserver_before_kib =
        pid_of(&a.hub_dir, "kube-apiserver").map_or(0, |p| memory_kib(p).1);

    // Cold start of the fleet.
    let controller_log = work.join(format!("controller-fleet-{n}.log"));
    let hub_arg = hub_kubeconfig.display().to_string();
    let hub_flags: Vec<&str> = match a.identity {
        Identity::Addon => vec![
            "--mode=hosted",
            "--hub-kubeconfig",
            &hub_arg,
            "--hub-addon-secrets",
            "--hub-addon-secret-namespace={cluster}",
        ],
        Identity::Shared => vec!["--mode=hosted", "--hub-kubeconfig", &hub_arg],
    };
    let t0 = Instant::now();
    let controller = Controller::start(a.controller, &kubeconfig, &controller_log, &hub_flags)?;
    let pid = controller.pid();
    let deadline = Instant::now() + Duration::from_secs(1_800);
    let cold = loop {
        let s = settle(
            &controller,
            Duration::from_secs(3),
            Duration::from_secs(1_800),
        )
        .await?;
        let want = local_to_copy(&client).await?;
        let (have, namespaces) = hub_counts(&hub).await?;
        if s.hub > 0 && want[0] == n && want == have && namespaces == n {
            break s;
        }
        if Instant::now() > deadline {
            bail!(
                "the fleet's cold start did not converge: local {want:?}, hub {have:?} (log {})",
                controller_log.display()
            );
        }
        log(&format!(
            "fleet of {n}: not converged yet: local {want:?}, hub {have:?} in {namespaces} namespaces"
        ));
    };
    run.cold_s = cold.last_change.duration_since(t0).as_secs_f64();
    run.cold_local_writes = cold.local;
    run.cold_hub_writes = cold.hub;
    run.cold_cpu_s = cpu_seconds(pid, ticks);
    run.cold_hub_lag_s = cold
        .last_change
        .saturating_duration_since(cold.last_local_change)
        .as_secs_f64();
    log(&format!(
        "fleet of {n}: cold start converged in {:.1}s ({} local writes, {} hub writes, the last {:.1}s after the last local one, {:.1} CPU s, RSS {:.0} MiB)",
        run.cold_s,
        run.cold_local_writes,
        run.cold_hub_writes,
        run.cold_hub_lag_s,
        run.cold_cpu_s,
        mib(memory_kib(pid).1)
    ));

    // The update wave: every cluster steps `wave` times.
    let t = Instant::now();
    let before = simulators.iter().map(HostedSimulator::writes).sum::<u64>();
    for _ in 0..a.wave {
        futures::stream::iter(simulators.iter_mut())
            .map(|s| async move { s.step().await.map(drop) })
            .buffer_unordered(a.concurrency)
            .try_collect::<Vec<()>>()
            .await?;
    }
    run.wave_sim_writes = simulators.iter().map(HostedSimulator::writes).sum::<u64>() - before;
    let stepped = t.elapsed();
    let waved = settle(
        &controller,
        Duration::from_secs(3),
        Duration::from_secs(1_800),
    )
    .await?;
    run.wave_s = waved.last_change.duration_since(t).as_secs_f64();
    run.wave_hub_writes = waved.hub - cold.hub;
    run.wave_local_writes = waved.local - cold.local;
    run.wave_peak_rate = waved.peak_rate();
    run.wave_hub_lag_s = waved
        .last_change
        .saturating_duration_since(waved.last_local_change)
        .as_secs_f64();
    log(&format!(
        "fleet of {n}: wave of {} steps per cluster ({} simulator writes in {:.1}s): {} hub writes ({} local) in {:.1}s, {:.0}/s, peak {:.0}/s; the last hub write {:.1}s after the last local one",
        a.wave,
        run.wave_sim_writes,
        stepped.as_secs_f64(),
        run.wave_hub_writes,
        run.wave_local_writes,
        run.wave_s,
        run.wave_rate(),
        run.wave_peak_rate,
        run.wave_hub_lag_s
    ));
    match compare(&client, &hub, CLUSTERS_NAMESPACE, n).await? {
        Ok(()) => run.mirrored = true,
        Err(e) => {
            log(&format!(
                "fleet of {n}: the hub does not mirror the wave: {e}"
            ));
            run.mirror_error = e;
        }
    }

    // Steady state: nothing changes.
    let c0 = cpu_seconds(pid, ticks);
    let (l0, h0) = counters(&controller).await.unwrap_or_default();
    tokio::time::sleep(Duration::from_secs(a.steady)).await;
    let (l1, h1) = counters(&controller).await.unwrap_or_default();
    run.steady_hub_writes = h1 - h0;
    run.steady_local_writes = l1 - l0;
    run.steady_cpu_s = cpu_seconds(pid, ticks) - c0;
    log(&format!(
        "fleet of {n}: steady state {}s: {} hub writes, {} local writes, {:.2} CPU s",
        a.steady, run.steady_hub_writes, run.steady_local_writes, run.steady_cpu_s
    ));

    (run.rss_hwm_kib, run.rss_kib) = memory_kib(pid);
    run.cpu_s = cpu_seconds(pid, ticks);
    run.fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count);
    run.hub_connections =
        hub_identities::connections_to(pid, hub_identities::server_port(&hub_kubeconfig)?);
    run.hub_watches = hub_identities::hub_watches(&hub_kubeconfig)?;
    log(&format!(
        "fleet of {n}: {} TCP connections from the controller to the hub, {} open watches of our kinds on the hub",
        run.hub_connections, run.hub_watches
    ));
    run.threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count);
    run.hub_apiserver_rss_kib = pid_of(&a.hub_dir, "kube-apiserver").map_or(0, |p| memory_kib(p).1);
    let (have, _) = hub_counts(&hub).await?;
    for (kind, count) in KINDS.iter().zip(have) {
        run.hub_objects.insert(kind, count);
    }
    run.hub_json_bytes = hub_json_bytes(&hub).await?;
    drop(controller);
    run.etcd_after = etcd.live_size().await?;
    run.local_only_kib = local_only(a, &kubeconfig, &work).await?;
    log(&format!(
        "fleet of {n}: controller peak RSS {:.0} MiB, RSS {:.0} MiB, {} fds, {} threads, {:.1} CPU s; hub: {} copies ({:.1} MB as JSON), kube-apiserver RSS {:.0} MiB, etcd {:.1} → {:.1} MB",
        mib(run.rss_hwm_kib),
        mib(run.rss_kib),
        run.fds,
        run.threads,
        run.cpu_s,
        run.hub_total(),
        run.hub_json_bytes as f64 / 1e6,
        mib(run.hub_apiserver_rss_kib),
        run.etcd_before as f64 / 1e6,
        run.etcd_after as f64 / 1e6
    ));

    // The fleet view on the hub.
    for (i, view) in [&["--fleet"][..], &["--fleet", "-o", "json"]]
        .iter()
        .enumerate()
    {
        let live = live_cli::measure(a.cli, &hub_kubeconfig, &work, view).await?;
        log(&format!(
            "fleet of {n}: {view:?}: {} bytes from the hub, median {:.2}s, peak RSS {:.0} MiB, {} lines, ok={}",
            live.bytes,
            live.median_s,
            mib(live.hwm_kib),
            live.lines,
            live.ok
        ));
        run.cli[i] = live;
    }
    let out = std::process::Command::new(a.cli)
        .args(["--fleet", "-o", "json"])
        .env("KUBECONFIG", &hub_kubeconfig)
        .output()
        .context("running the CLI")?;
    run.cli_rows = serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .ok()
        .and_then(|v| v.get("clusters")?.as_array().map(Vec::len))
        .unwrap_or(0);
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fleet_cluster_is_mid_update_through_the_wave() {
        let wave = 2;
        let (sims, pre) = simulations(60, 2, wave).expect("simulations");
        assert_eq!(sims.len(), 60);
        let mut stages = std::collections::BTreeSet::new();
        for (mut sim, k) in sims.into_iter().zip(pre) {
            assert!(k >= 1, "{} not started", sim.name());
            for _ in 0..k {
                sim.step();
            }
            stages.insert(sim.stage().to_string());
            for _ in 0..wave {
                assert!(
                    !sim.is_completed(),
                    "{} completed before the wave",
                    sim.name()
                );
                sim.step();
            }
            assert_eq!(sim.name(), cluster_name(sim.config().seed as usize - 1));
        }
        assert!(
            stages.len() >= 3,
            "the fleet is spread over the update: {stages:?}"
        );
    }
}
