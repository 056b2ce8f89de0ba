//! The report's fleet section: the table of `bench --fleet N`, how it is measured, and what the
//! hub would need at 3,500 and 10,000 clusters, derived from the per-cluster figures.

use std::fmt::Write as _;

use super::fleet::{FLEET_CLI_GOAL_S, FleetRun};
use super::hub_identities::Identity;
use super::process::mib;

/// The fleets the projections are for: ACM's supported scale, and ten thousand.
const PROJECTED: [usize; 2] = [3_500, 10_000];

/// `n` rounded, with thousands separated by commas (`31,240`).
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
}
