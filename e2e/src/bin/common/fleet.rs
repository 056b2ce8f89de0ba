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
//! [`report`] writes the table and the derived "hub at 3,500 clusters" (ACM's supported scale)
//! and "at 10,000 clusters" paragraphs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt};
use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus, labels,
};
use update_status_e2e::playback::HostedSimulator;
use update_status_e2e::{client_for, repo_root};
use update_status_simulator::hosted::{HostedSimConfig, HostedSimulation};

use super::hub_identities::{self, Identity};
use super::live_cli::{self, LiveRun};
use super::{Controller, cluster, cpu_seconds, log, memory_kib, mib};

/// Namespace of the HostedClusters and their NodePools (the control planes are in
/// `clusters-<name>`).
const CLUSTERS_NAMESPACE: &str = "clusters";
/// The goal of `--fleet` over the whole fleet (median wall time, s).
const FLEET_CLI_GOAL_S: f64 = 2.0;
/// The fleets the projections are for: ACM's supported scale, and ten thousand.
const PROJECTED: [usize; 2] = [3_500, 10_000];
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
    fn hub_total(&self) -> usize {
        self.hub_objects.values().sum()
    }
    fn per_cluster(&self, x: f64) -> f64 {
        x / self.clusters.max(1) as f64
    }
    fn wave_rate(&self) -> f64 {
        self.wave_hub_writes as f64 / self.wave_s.max(1e-9)
    }
    fn etcd_per_cluster(&self) -> f64 {
        self.per_cluster(self.etcd_after.saturating_sub(self.etcd_before) as f64)
    }
    /// The hub sync's share of the RSS per cluster (RSS with minus without the hub sync).
    fn sessions_kib_per_cluster(&self) -> f64 {
        self.per_cluster(self.rss_kib.saturating_sub(self.local_only_kib.1) as f64)
    }
    fn cli_ok(&self, i: usize) -> bool {
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

/// A client's counters: (local writes, hub writes), from `/metrics`.
async fn counters(c: &Controller) -> Option<(u64, u64)> {
    let text = c.scrape().await?;
    // The heartbeats (one write per cluster and `--hub-heartbeat-interval`, 5 min here) are not
    // copies: left out, so that the fleet settles and its steady state means "no copy written"
    // (their cost is docs/acm.md's, "Freshness and the agent's health").
    let sum = |metric: &str| -> u64 {
        text.lines()
            .filter(|l| l.starts_with(metric) && !l.contains("verb=\"heartbeat\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    };
    Some((
        sum("update_status_api_writes_total{"),
        sum("update_status_hub_writes_total{"),
    ))
}

/// The counters over time until neither has moved for `quiet`.
struct Settled {
    local: u64,
    hub: u64,
    /// When either counter last moved.
    last_change: Instant,
    /// When the local write counter last moved (the hub copies follow the local objects).
    last_local_change: Instant,
    /// (instant, hub writes) every 250 ms.
    samples: Vec<(Instant, u64)>,
}

impl Settled {
    /// Highest hub write rate over one second.
    fn peak_rate(&self) -> f64 {
        let mut peak = 0.0f64;
        for (i, &(t0, w0)) in self.samples.iter().enumerate() {
            if let Some(&(t1, w1)) = self.samples[i..]
                .iter()
                .find(|(t, _)| t.duration_since(t0) >= Duration::from_secs(1))
            {
                peak = peak.max((w1 - w0) as f64 / t1.duration_since(t0).as_secs_f64());
            }
        }
        peak
    }
}

async fn settle(c: &Controller, quiet: Duration, timeout: Duration) -> anyhow::Result<Settled> {
    let deadline = Instant::now() + timeout;
    let (mut local, mut hub) = counters(c).await.unwrap_or_default();
    let mut last_change = Instant::now();
    let mut last_local_change = last_change;
    let mut samples = vec![(last_change, hub)];
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = counters(c).await.unwrap_or((local, hub));
        samples.push((Instant::now(), now.1));
        if now.0 != local {
            last_local_change = Instant::now();
        }
        if now != (local, hub) {
            (local, hub) = now;
            last_change = Instant::now();
        } else if last_change.elapsed() >= quiet {
            return Ok(Settled {
                local,
                hub,
                last_change,
                last_local_change,
                samples,
            });
        }
        if Instant::now() > deadline {
            bail!("the controller kept writing for {timeout:?}");
        }
    }
}

/// Names of the objects of kind `K` everywhere, by namespace (metadata only), with `selector`.
async fn count_by_namespace<K>(
    client: &Client,
    selector: &str,
) -> anyhow::Result<BTreeMap<String, usize>>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    let list = api
        .list_metadata(&ListParams::default().labels(selector))
        .await
        .with_context(|| format!("listing {}", K::plural(&())))?;
    let mut out = BTreeMap::new();
    for o in list.items {
        *out.entry(o.metadata.namespace.unwrap_or_default())
            .or_default() += 1;
    }
    Ok(out)
}

/// What the hub should hold per kind: our local objects to copy (every ControlPlaneUpdateStatus
/// and WorkerPoolUpdateStatus, the health insights).
async fn local_to_copy(client: &Client) -> anyhow::Result<[usize; 3]> {
    let ours = format!("{}={}", labels::MANAGED_BY, labels::MANAGED_BY_VALUE);
    let health = format!("{ours},{}=health", labels::INSIGHT_TYPE);
    Ok([
        count_by_namespace::<ControlPlaneUpdateStatus>(client, &ours)
            .await?
            .values()
            .sum(),
        count_by_namespace::<WorkerPoolUpdateStatus>(client, &ours)
            .await?
            .values()
            .sum(),
        count_by_namespace::<UpdateInsight>(client, &health)
            .await?
            .values()
            .sum(),
    ])
}

const KINDS: [&str; 3] = [
    "ControlPlaneUpdateStatus",
    "WorkerPoolUpdateStatus",
    "UpdateInsight",
];

/// The hub copies per kind (and how many hub namespaces hold a ControlPlaneUpdateStatus).
async fn hub_counts(hub: &Client) -> anyhow::Result<([usize; 3], usize)> {
    let sel = format!("{},{}", labels::ACM_CLUSTER_NAME, labels::MANAGED_BY);
    let cps = count_by_namespace::<ControlPlaneUpdateStatus>(hub, &sel).await?;
    let wps = count_by_namespace::<WorkerPoolUpdateStatus>(hub, &sel).await?;
    let ins = count_by_namespace::<UpdateInsight>(hub, &sel).await?;
    Ok((
        [cps.values().sum(), wps.values().sum(), ins.values().sum()],
        cps.len(),
    ))
}

/// Every hub copy has the status of its local object, and the hub holds no other copy
/// (ControlPlaneUpdateStatus and WorkerPoolUpdateStatus of every cluster; health insights by
/// count per cluster). `Err` says what differs.
async fn compare(local: &Client, hub: &Client, n: usize) -> anyhow::Result<Result<(), String>> {
    // Local objects carry the hosted cluster's name (= the managed cluster's here).
    let cluster_of =
        |l: &BTreeMap<String, String>| l.get(labels::CLUSTER).cloned().unwrap_or_default();
    let l_cp: Vec<ControlPlaneUpdateStatus> = Api::namespaced(local.clone(), CLUSTERS_NAMESPACE)
        .list(&ListParams::default())
        .await?
        .items;
    let h_cp: Vec<ControlPlaneUpdateStatus> = Api::all(hub.clone())
        .list(&ListParams::default())
        .await?
        .items;
    let l_wp: Vec<WorkerPoolUpdateStatus> = Api::namespaced(local.clone(), CLUSTERS_NAMESPACE)
        .list(&ListParams::default())
        .await?
        .items;
    let h_wp: Vec<WorkerPoolUpdateStatus> = Api::all(hub.clone())
        .list(&ListParams::default())
        .await?
        .items;
    let mut want = BTreeMap::new();
    for o in &l_cp {
        let c = cluster_of(o.labels());
        want.insert(("cp", c.clone(), c), serde_json::to_value(&o.status)?);
    }
    for o in &l_wp {
        let c = cluster_of(o.labels());
        want.insert(("wp", c, o.name_any()), serde_json::to_value(&o.status)?);
    }
    let mut have = BTreeMap::new();
    for o in &h_cp {
        let ns = o.namespace().unwrap_or_default();
        have.insert(("cp", ns, o.name_any()), serde_json::to_value(&o.status)?);
    }
    for o in &h_wp {
        let ns = o.namespace().unwrap_or_default();
        have.insert(("wp", ns, o.name_any()), serde_json::to_value(&o.status)?);
    }
    if want.len() != n * 3 {
        return Ok(Err(format!(
            "{} local status objects, {} expected",
            want.len(),
            n * 3
        )));
    }
    let differ: Vec<_> = want
        .iter()
        .filter(|(k, v)| have.get(*k) != Some(*v))
        .map(|(k, _)| format!("{}/{}/{}", k.0, k.1, k.2))
        .chain(
            have.keys()
                .filter(|k| !want.contains_key(*k))
                .map(|k| format!("extra {}/{}/{}", k.0, k.1, k.2)),
        )
        .collect();
    if !differ.is_empty() {
        return Ok(Err(format!(
            "{} hub copies differ from their local object: {:?}",
            differ.len(),
            &differ[..differ.len().min(5)]
        )));
    }
    let health = format!(
        "{}={},{}=health",
        labels::MANAGED_BY,
        labels::MANAGED_BY_VALUE,
        labels::INSIGHT_TYPE
    );
    let l_h: Vec<UpdateInsight> = Api::namespaced(local.clone(), CLUSTERS_NAMESPACE)
        .list(&ListParams::default().labels(&health))
        .await?
        .items;
    let mut want_h: BTreeMap<String, usize> = BTreeMap::new();
    for o in &l_h {
        *want_h
            .entry(o.labels().get(labels::CLUSTER).cloned().unwrap_or_default())
            .or_default() += 1;
    }
    let have_h =
        count_by_namespace::<UpdateInsight>(hub, &format!("{},{health}", labels::ACM_CLUSTER_NAME))
            .await?;
    if want_h != have_h {
        return Ok(Err(format!(
            "health insights per cluster differ: {} local, {} on the hub",
            want_h.values().sum::<usize>(),
            have_h.values().sum::<usize>()
        )));
    }
    Ok(Ok(()))
}

/// Bytes of the hub copies as JSON (what listing them returns).
async fn hub_json_bytes(hub: &Client) -> anyhow::Result<u64> {
    let sel = format!("{},{}", labels::ACM_CLUSTER_NAME, labels::MANAGED_BY);
    let lp = ListParams::default().labels(&sel);
    let a = serde_json::to_vec(
        &Api::<ControlPlaneUpdateStatus>::all(hub.clone())
            .list(&lp)
            .await?
            .items,
    )?;
    let b = serde_json::to_vec(
        &Api::<WorkerPoolUpdateStatus>::all(hub.clone())
            .list(&lp)
            .await?
            .items,
    )?;
    let c = serde_json::to_vec(
        &Api::<UpdateInsight>::all(hub.clone())
            .list(&lp)
            .await?
            .items,
    )?;
    Ok((a.len() + b.len() + c.len()) as u64)
}

/// The hub etcd, through its HTTP gateway (`/v3/...`) and `/metrics`.
struct Etcd {
    url: String,
}

impl Etcd {
    fn of(cluster_dir: &Path) -> anyhow::Result<Self> {
        let ports = std::fs::read_to_string(cluster_dir.join("ports.env"))
            .context("reading the hub's ports.env")?;
        let port = ports
            .lines()
            .find_map(|l| l.strip_prefix("ETCD_PORT="))
            .context("no ETCD_PORT in the hub's ports.env")?;
        Ok(Etcd {
            url: format!("127.0.0.1:{}", port.trim()),
        })
    }

    /// One plain-HTTP request; the body of the answer.
    async fn http(&self, method: &str, path: &str, body: &str) -> anyhow::Result<String> {
        let (addr, req) = (
            self.url.clone(),
            format!(
                "{method} {path} HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                self.url,
                body.len()
            ),
        );
        tokio::task::spawn_blocking(move || -> anyhow::Result<String> {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(&addr)?;
            s.set_read_timeout(Some(Duration::from_secs(120)))?;
            s.write_all(req.as_bytes())?;
            let mut out = String::new();
            s.read_to_string(&mut out)?;
            let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
            if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
                bail!("etcd {}: {head}", req.lines().next().unwrap_or_default());
            }
            Ok(body.to_string())
        })
        .await?
    }

    /// Compacts the history up to the current revision and defragments: the database then
    /// holds the live keys only. Returns its size in bytes.
    async fn live_size(&self) -> anyhow::Result<u64> {
        let range = self
            .http("POST", "/v3/kv/range", r#"{"key":"AA==","limit":1}"#)
            .await?;
        let v: serde_json::Value = serde_json::from_str(&range)?;
        let rev = v
            .pointer("/header/revision")
            .and_then(|r| {
                r.as_str()
                    .map(str::to_string)
                    .or_else(|| Some(r.to_string()))
            })
            .context("no revision in etcd's answer")?;
        // Compacting a revision already compacted is an error: ignore it.
        let _ = self
            .http(
                "POST",
                "/v3/kv/compaction",
                &format!(r#"{{"revision":"{rev}","physical":true}}"#),
            )
            .await;
        self.http("POST", "/v3/maintenance/defragment", "{}")
            .await?;
        let metrics = self.http("GET", "/metrics", "").await?;
        metrics
            .lines()
            .find_map(|l| l.strip_prefix("etcd_mvcc_db_total_size_in_bytes "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map(|v| v as u64)
            .context("no etcd_mvcc_db_total_size_in_bytes in etcd's /metrics")
    }
}

fn pid_of(cluster_dir: &Path, component: &str) -> Option<u32> {
    std::fs::read_to_string(cluster_dir.join(format!("{component}.pid")))
        .ok()?
        .trim()
        .parse()
        .ok()
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
    for args in [
        vec!["apply", "--server-side", "--force-conflicts", "-f"],
        vec![
            "wait",
            "--for",
            "condition=Established",
            "--timeout",
            "60s",
            "-f",
        ],
    ] {
        let out = std::process::Command::new("kubectl")
            .args(&args)
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
    }
    Ok(())
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
    match compare(&client, &hub, n).await? {
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

fn thousands(n: f64) -> String {
    let s = format!("{:.0}", n);
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The fleet section of the report: the table, how it is measured, the projection.
pub fn report(r: &FleetRun) -> String {
    let mut s = String::new();
    let n = r.clusters;
    let ok = |b: bool| if b { " ✅" } else { " ❌" };
    let _ = writeln!(s, "## A fleet on one hub (hosted mode, hub sync)\n");
    let identity = match r.identity {
        Some(Identity::Shared) => "`--hub-kubeconfig` (one identity shared by every cluster)",
        _ => {
            "`--hub-addon-secrets` (**one add-on identity per managed cluster**, as ACM gives them: a client certificate of `system:open-cluster-management:cluster:<c>:addon:update-status:agent:…` signed by the hub's CA, the hub sync's Role bound to its group in its own namespace, its Secret on the management cluster)"
        }
    };
    let _ = writeln!(
        s,
        "`bench --fleet {n}` (`e2e/src/bin/common/fleet.rs`): a management cluster with {nn} simulated HostedClusters mid-update (each a Replace and an InPlace NodePool of {m} Machines, spread from the control plane updating to the NodePools rolling), the release controller on it with `--mode=hosted` and {identity}, one hub-sync session per HostedCluster in one process, and a **separate** local control plane as the hub (its own etcd and kube-apiserver, the {nn} managed clusters' namespaces created beforehand).\n",
        m = r.machines,
        nn = thousands(n as f64)
    );
    let _ = writeln!(s, "| | goal | {} clusters |", thousands(n as f64));
    let _ = writeln!(s, "|---|---|---|");
    let mut row = |label: &str, goal: &str, cell: String| {
        let _ = writeln!(s, "| {label} | {goal} | {cell} |");
    };
    row(
        "creating the fleet on the management cluster (simulator writes, time)",
        "",
        format!("{} writes, {:.1} s", r.populate_writes, r.populate_s),
    );
    if r.identity != Some(Identity::Shared) {
        row(
            "making the add-on identities (hub Role and RoleBinding, client certificate, Secret)",
            "",
            format!("{:.1} s", r.identities_s),
        );
    }
    row(
        "hub objects: total (ControlPlaneUpdateStatus / WorkerPoolUpdateStatus / UpdateInsight), per cluster",
        "",
        format!(
            "{} ({} / {} / {}), {:.1}",
            r.hub_total(),
            r.hub_objects.get("ControlPlaneUpdateStatus").unwrap_or(&0),
            r.hub_objects.get("WorkerPoolUpdateStatus").unwrap_or(&0),
            r.hub_objects.get("UpdateInsight").unwrap_or(&0),
            r.per_cluster(r.hub_total() as f64)
        ),
    );
    row(
        "cold start of the fleet: every copy on the hub (hub writes, local writes, controller CPU; last hub write after the last local one)",
        "",
        format!(
            "{:.1} s ({} hub, {} local, {:.1} CPU s; +{:.1} s)",
            r.cold_s, r.cold_hub_writes, r.cold_local_writes, r.cold_cpu_s, r.cold_hub_lag_s
        ),
    );
    row(
        &format!(
            "update wave ({} step{} of every cluster, {} simulator writes): hub writes, per cluster step",
            r.wave_steps,
            if r.wave_steps == 1 { "" } else { "s" },
            r.wave_sim_writes
        ),
        "",
        format!(
            "{} ({:.2})",
            r.wave_hub_writes,
            r.wave_hub_writes as f64 / (n * r.wave_steps).max(1) as f64
        ),
    );
    row(
        "update wave: hub writes/s (until the copies converged) / peak over 1 s (local writes meanwhile; last hub write after the last local one)",
        "",
        format!(
            "{:.0}/s over {:.1} s / {:.0}/s ({} local; +{:.1} s)",
            r.wave_rate(),
            r.wave_s,
            r.wave_peak_rate,
            r.wave_local_writes,
            r.wave_hub_lag_s
        ),
    );
    row(
        "after the wave: every hub copy equals its local object",
        "yes",
        if r.mirrored {
            "yes ✅".into()
        } else {
            format!("no ❌ ({})", r.mirror_error)
        },
    );
    row(
        &format!("steady state ({} s): hub writes (local writes)", r.steady_s),
        "0",
        format!(
            "{}{} ({})",
            r.steady_hub_writes,
            ok(r.steady_hub_writes == 0),
            r.steady_local_writes
        ),
    );
    row(
        "steady state: controller CPU over the period",
        "",
        format!("{:.2} s", r.steady_cpu_s),
    );
    row(
        "controller peak RSS (VmHWM) / at the end / per cluster",
        "",
        format!(
            "{:.0} MiB / {:.0} MiB / {:.0} KiB",
            mib(r.rss_hwm_kib),
            mib(r.rss_kib),
            r.per_cluster(r.rss_hwm_kib as f64)
        ),
    );
    row(
        "… the same controller without the hub sync on the same fleet: RSS; the hub sync's share per cluster",
        "",
        format!(
            "{:.0} MiB; {:.0} KiB",
            mib(r.local_only_kib.1),
            r.sessions_kib_per_cluster()
        ),
    );
    row(
        "controller: open file descriptors / threads / CPU, whole run",
        "",
        format!("{} / {} / {:.1} s", r.fds, r.threads, r.cpu_s),
    );
    row(
        "controller's TCP connections to the hub (per cluster): HTTP/2, a session's watches and calls on one",
        "≤ 1 per cluster",
        format!(
            "{} ({:.2}){}",
            r.hub_connections,
            r.per_cluster(r.hub_connections as f64),
            ok(r.hub_connections <= r.clusters)
        ),
    );
    row(
        "hub API server: open watches of our kinds (per cluster)",
        "",
        format!(
            "{} ({:.1})",
            r.hub_watches,
            r.per_cluster(r.hub_watches as f64)
        ),
    );
    row(
        "hub etcd database (compacted, defragmented): before the controller → at the end, per cluster",
        "",
        format!(
            "{:.1} MB → {:.1} MB, {:.1} KB",
            r.etcd_before as f64 / 1e6,
            r.etcd_after as f64 / 1e6,
            r.etcd_per_cluster() / 1e3
        ),
    );
    row(
        "hub copies as JSON (what a list returns), per cluster",
        "",
        format!(
            "{:.1} MB, {:.1} KB",
            r.hub_json_bytes as f64 / 1e6,
            r.per_cluster(r.hub_json_bytes as f64) / 1e3
        ),
    );
    row(
        "hub kube-apiserver RSS: before the controller → at the end, per cluster",
        "",
        format!(
            "{:.0} MiB → {:.0} MiB, {:.0} KiB",
            mib(r.hub_apiserver_before_kib),
            mib(r.hub_apiserver_rss_kib),
            r.per_cluster(
                r.hub_apiserver_rss_kib
                    .saturating_sub(r.hub_apiserver_before_kib) as f64
            )
        ),
    );
    for (i, view) in ["`--fleet`", "`--fleet -o json`"].iter().enumerate() {
        let l = &r.cli[i];
        row(
            &format!(
                "{view} on the hub over all clusters: bytes from the hub / median wall time of 5 / peak RSS{}",
                if i == 1 { " (rows)" } else { "" }
            ),
            "≤ 2 s",
            format!(
                "{:.2} MB / {:.2} s / {:.0} MiB{}{}",
                l.bytes as f64 / 1e6,
                l.median_s,
                mib(l.hwm_kib),
                if i == 1 {
                    format!(" ({} rows)", r.cli_rows)
                } else {
                    String::new()
                },
                ok(r.cli_ok(i))
            ),
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "How it is measured: the cold start ends at the last write (local or hub, `update_status_api_writes_total` and `update_status_hub_writes_total` on `/metrics`) before the hub holds as many copies per kind as there are local objects to copy and neither counter has moved for 3 s. The wave's time runs from the first simulator write to the last hub write before both counters are still for 3 s again; its peak is the highest hub write count over one second (sampled every 250 ms). The etcd sizes are `etcd_mvcc_db_total_size_in_bytes` after the bench compacted the history to the current revision and defragmented (`/v3/kv/compaction`, `/v3/maintenance/defragment`): live data only, as a hub compacting every 5 min and defragmenting now and then holds; \"before\" is the hub with its {n} empty namespaces. The fleet CLI runs as in the live CLI rows above (bytes through a counting proxy, 5 timed runs straight to the hub).\n"
    );
    for p in PROJECTED {
        let _ = writeln!(s, "{}", projection(r, p));
    }
    s
}

/// What the hub would need at `projected` clusters, from the per-cluster figures.
fn projection(r: &FleetRun, projected: usize) -> String {
    let p = projected as f64;
    let k = p / r.clusters.max(1) as f64;
    let etcd = r.etcd_before as f64 + r.etcd_per_cluster() * p;
    let per_step = r.wave_hub_writes as f64 / (r.clusters * r.wave_steps).max(1) as f64;
    let api_per = r.per_cluster(
        r.hub_apiserver_rss_kib
            .saturating_sub(r.hub_apiserver_before_kib) as f64,
    );
    let cli = &r.cli[1];
    let cli_10k = cli.median_s * k;
    let mut s = String::new();
    let _ = writeln!(s, "### The hub at {} clusters (derived)\n", thousands(p));
    let _ = writeln!(
        s,
        "From the per-cluster figures measured above at {} clusters, linear in the number of clusters (each cluster has its own hub namespace, copies and watches; nothing on the hub is shared between clusters):\n",
        thousands(r.clusters as f64)
    );
    let _ = writeln!(
        s,
        "- **objects:** {} copies ({:.1} per cluster: 1 ControlPlaneUpdateStatus, {:.1} WorkerPoolUpdateStatus, {:.1} health insights) plus the {} namespaces; progress insights are copied only with `--hub-include-progress`.",
        thousands(r.hub_total() as f64 * k),
        r.per_cluster(r.hub_total() as f64),
        r.per_cluster(*r.hub_objects.get("WorkerPoolUpdateStatus").unwrap_or(&0) as f64),
        r.per_cluster(*r.hub_objects.get("UpdateInsight").unwrap_or(&0) as f64),
        thousands(p)
    );
    let _ = writeln!(
        s,
        "- **etcd:** about {:.0} MB of live data ({:.1} KB per cluster over an empty hub of {:.1} MB), far below etcd's default 2 GiB quota; between two compactions (every 5 min by default) each write also keeps its old version.",
        etcd / 1e6,
        r.etcd_per_cluster() / 1e3,
        r.etcd_before as f64 / 1e6
    );
    let _ = writeln!(
        s,
        "- **writes:** {per_step:.2} hub writes per cluster per update step, {:.1} per cluster at a cold start, {} in the steady state. A fleet-wide wave of {} clusters each taking one step a minute is about {:.0} hub writes/s; a wave as dense as the one measured ({} clusters × {} steps in {:.0} s, paced by the management side's {} local writes) would be about {} writes/s on average and {} writes/s at its peak second ({:.0}/s and {:.0}/s measured).",
        r.cold_hub_writes as f64 / r.clusters.max(1) as f64,
        r.steady_hub_writes,
        thousands(p),
        per_step * p / 60.0,
        thousands(r.clusters as f64),
        r.wave_steps,
        r.wave_s,
        thousands(r.wave_local_writes as f64),
        thousands(r.wave_rate() * k),
        thousands(r.wave_peak_rate * k),
        r.wave_rate(),
        r.wave_peak_rate,
    );
    let _ = writeln!(
        s,
        "- **watches, connections and the hub API server's memory:** each session watches its own namespace, one watch per kind ({:.1} open watches per cluster measured): {} watches at {} clusters, on {} connections ({:.2} per cluster measured: HTTP/2, every watch and call of a session on one connection, where kube's own client opened one HTTP/1.1 connection per watch). The hub kube-apiserver's RSS (Go heap with its garbage-collection headroom included) grew by {:.0} KiB per cluster, so about {:.1} GiB at {}.",
        r.per_cluster(r.hub_watches as f64),
        thousands(r.per_cluster(r.hub_watches as f64) * p),
        thousands(p),
        thousands(r.per_cluster(r.hub_connections as f64) * p),
        r.per_cluster(r.hub_connections as f64),
        api_per,
        api_per * p / 1024.0 / 1024.0,
        thousands(p)
    );
    let _ = writeln!(
        s,
        "- **the process holding the sessions:** {:.0} KiB peak RSS per cluster for the whole controller (its management-side caches of HostedClusters, NodePools and Machines included), of which {:.0} KiB are the hub sync (RSS with minus without it on the same fleet: per session a hub client of its own with its TLS connection and credentials, 3 watches, 3 reflectors and 3 writers): {:.1} GiB and {:.1} GiB at {} in one process, if linear. A management cluster holds far fewer hosted clusters; {} clusters report from many processes, and the hub's load is the same.",
        r.per_cluster(r.rss_hwm_kib as f64),
        r.sessions_kib_per_cluster(),
        r.per_cluster(r.rss_hwm_kib as f64) * p / 1024.0 / 1024.0,
        r.sessions_kib_per_cluster() * p / 1024.0 / 1024.0,
        thousands(p),
        thousands(p)
    );
    let _ = writeln!(
        s,
        "- **`kubectl update-status --fleet`:** lists every ControlPlaneUpdateStatus, WorkerPoolUpdateStatus and health insight of the hub: {:.1} MB at {} clusters, about {:.0} MB at {}; linearly {:.1} s ({:.2} s measured), {} the 2 s goal.",
        cli.bytes as f64 / 1e6,
        thousands(r.clusters as f64),
        cli.bytes as f64 * k / 1e6,
        thousands(p),
        cli_10k,
        cli.median_s,
        if cli_10k <= FLEET_CLI_GOAL_S {
            "within"
        } else {
            "beyond"
        }
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1_000.0), "1,000");
        assert_eq!(thousands(31_240.4), "31,240");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
    }

    #[test]
    fn the_peak_rate_is_the_most_writes_over_one_second() {
        let t = Instant::now();
        let at = |ms: u64, w: u64| (t + Duration::from_millis(ms), w);
        let s = Settled {
            local: 0,
            hub: 0,
            last_change: t,
            last_local_change: t,
            samples: vec![
                at(0, 0),
                at(500, 10),
                at(1_000, 20),
                at(1_500, 120),
                at(2_000, 130),
            ],
        };
        // The best one-second windows: 0.5 s → 1.5 s and 1.0 s → 2.0 s, 110 writes each.
        assert_eq!(s.peak_rate(), 110.0);
        let quiet = Settled {
            samples: vec![at(0, 5), at(250, 5)],
            ..s
        };
        assert_eq!(quiet.peak_rate(), 0.0, "no window of a second");
    }

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
