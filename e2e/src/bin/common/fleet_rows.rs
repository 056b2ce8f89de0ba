//! `bench --fleet-rows N` (issue #38, item 5): a hub holding the copies of N clusters, each in
//! its own namespace (a ControlPlaneUpdateStatus with a heartbeat, a WorkerPoolUpdateStatus and
//! `--fleet-row-insights` health insights), on a fresh local control plane: the release
//! `kubectl-update_status --fleet` (text and `-o json`: bytes read, median wall time, peak RSS,
//! through `live_cli`), and the live grid (`--fleet --web`): the server's start (its lists and
//! watches) and the page's interactive time in headless Chromium with all N tiles drawn.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::StreamExt as _;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use update_status_api::crd::{ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus};
use update_status_e2e::browser::{self, Chromium, Open};
use update_status_e2e::web::WebServer;

use super::live_cli::{self, LiveRun};

/// Goal of `--fleet` (median wall time, s), as for the hosted fleet.
pub const GOAL_S: f64 = 2.0;
/// Goal of `--fleet`'s peak RSS (MiB).
pub const GOAL_MIB: f64 = 100.0;
/// Goal of the grid: server started (lists and watches), s.
pub const GOAL_SERVE_S: f64 = 5.0;
/// Goal of the grid: page interactive with every tile, ms.
pub const GOAL_PAGE_MS: f64 = 2000.0;

/// The results.
#[derive(Debug, Default, Clone)]
pub struct RowsRun {
    /// Clusters (rows).
    pub rows: usize,
    /// Health insights per cluster.
    pub per_row: usize,
    /// Time to write them all (s).
    pub populate_s: f64,
    /// `--fleet`.
    pub text: LiveRun,
    /// `--fleet -o json`.
    pub json: LiveRun,
    /// `--fleet --web`: from the start to the printed URL (s).
    pub serve_s: f64,
    /// The grid's interactive time after navigation (ms, median of 3 loads).
    pub page_ms: f64,
    /// Tiles on the page.
    pub tiles: usize,
    /// Bytes of the grid's data (one `view` event).
    pub data_bytes: usize,
    /// `--baseline-cli`'s `--fleet` and `--fleet -o json` on the same hub, and whether their
    /// outputs were byte for byte this plugin's.
    pub baseline: Option<Baseline>,
}

/// Another build of the plugin (e.g. the last release) measured on the same hub.
#[derive(Debug, Default, Clone)]
pub struct Baseline {
    /// `--fleet`.
    pub text: LiveRun,
    /// `--fleet -o json`.
    pub json: LiveRun,
    /// Both outputs were this plugin's, byte for byte.
    pub same_output: bool,
}

/// The stdout of `cli args` on the hub of `kubeconfig`.
fn output(cli: &Path, kubeconfig: &Path, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let out = std::process::Command::new(cli)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("running {}", cli.display()))?;
    anyhow::ensure!(out.status.success(), "{} {args:?} failed", cli.display());
    Ok(out.stdout)
}

/// Whether `cli` and `baseline` print the same `--fleet` and `--fleet -o json`, both evaluated
/// at the same instant (`--now`: the reports' ages and the JSON's `now` are then the same).
fn same_outputs(cli: &Path, baseline: &Path, kubeconfig: &Path) -> anyhow::Result<bool> {
    let now = jiff::Timestamp::now().to_string();
    for format in [&[][..], &["-o", "json"][..]] {
        let mut args = vec!["--fleet", "--now", now.as_str()];
        args.extend_from_slice(format);
        if output(cli, kubeconfig, &args)? != output(baseline, kubeconfig, &args)? {
            super::process::log(&format!("fleet rows: {args:?} differs from the baseline"));
            return Ok(false);
        }
    }
    Ok(true)
}

/// The baseline's runs on the hub of `kubeconfig`, and the outputs compared.
async fn measure_baseline(
    cli: &Path,
    baseline: &Path,
    kubeconfig: &Path,
    work: &Path,
) -> anyhow::Result<Baseline> {
    Ok(Baseline {
        text: live_cli::measure(baseline, kubeconfig, work, &["--fleet"]).await?,
        json: live_cli::measure(baseline, kubeconfig, work, &["--fleet", "-o", "json"]).await?,
        same_output: same_outputs(cli, baseline, kubeconfig)?,
    })
}

fn ns(i: usize) -> String {
    format!("bench-row-{i:05}")
}

/// Writes cluster `i`'s namespace and copies (server-side apply, metadata then status).
async fn write_row(client: &Client, i: usize, per_row: usize) -> anyhow::Result<u64> {
    let ns = ns(i);
    let pp = PatchParams::apply("update-status-bench").force();
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .patch(
            &ns,
            &pp,
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
            ),
        )
        .await?;
    let labels = json!({"open-cluster-management.io/cluster-name": ns, "app.kubernetes.io/managed-by": "update-status-controller"});
    let heartbeat = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let mut writes = 1;
    macro_rules! put {
        ($kind:ty, $k:expr, $name:expr, $meta:expr, $status:expr) => {{
            let api: Api<$kind> = Api::namespaced(client.clone(), &ns);
            let name: String = $name;
            api.patch(&name, &pp, &Patch::Apply(json!({"apiVersion": "update.openshift.io/v1alpha1", "kind": $k,
                "metadata": $meta, "spec": {}}))).await?;
            api.patch_status(&name, &pp, &Patch::Apply(json!({"apiVersion": "update.openshift.io/v1alpha1", "kind": $k,
                "metadata": {"name": name}, "status": $status}))).await?;
            writes += 2;
        }};
    }
    let nodes = json!({"available": 3, "degraded": 0, "draining": 0, "excluded": 0, "outdated": 0, "pending": 0, "progressing": 0, "total": 3, "updated": 3});
    put!(
        ControlPlaneUpdateStatus,
        "ControlPlaneUpdateStatus",
        ns.clone(),
        json!({"name": ns, "labels": labels, "annotations": {"update.openshift.io/last-reported": heartbeat}}),
        json!({"assessment": "Progressing", "completionPercent": (i % 100), "versions": {"target": "4.18.3", "previous": "4.18.2"},
            "healthInsights": {}, "nodes": nodes,
            "operators": {"degraded": 0, "healthy": 34, "total": 34, "unavailable": 0, "updated": 20, "updating": 1, "waiting": 13}})
    );
    put!(
        WorkerPoolUpdateStatus,
        "WorkerPoolUpdateStatus",
        "worker".to_owned(),
        json!({"name": "worker", "labels": labels}),
        json!({"assessment": "Progressing", "completionPercent": 40, "healthInsights": {}, "resource": {"kind": "MachineConfigPool", "group": "machineconfiguration.openshift.io", "name": "worker"},
            "nodes": {"available": 6, "degraded": 0, "draining": 1, "excluded": 0, "outdated": 3, "pending": 2, "progressing": 1, "total": 10, "updated": 4}})
    );
    for k in 0..per_row {
        let mut l = labels.clone();
        // The labels the controller writes on a health insight and the hub sync copies
        // (`assess::naming`): `--fleet` counts by the level label.
        l["update.openshift.io/insight-type"] = json!("health");
        l["update.openshift.io/impact-level"] = json!(if k == 0 { "error" } else { "warning" });
        l["update.openshift.io/impact-type"] = json!("update-speed");
        l["update.openshift.io/source"] = json!("node-degraded");
        put!(
            UpdateInsight,
            "UpdateInsight",
            format!("health-{k}"),
            json!({"name": format!("health-{k}"), "labels": l}),
            json!({"type": "Health", "resource": {"kind": "Node", "name": format!("worker-{k}")},
                "scope": {"type": "WorkerPool", "pool": "worker"},
                "health": {"source": "NodeDegraded",
                    "impact": {"level": if k == 0 { "Error" } else { "Warning" }, "type": "Update Speed", "summary": "a node is slow to drain"},
                    "remediation": {"reference": "https://docs.openshift.com/"}}})
        );
    }
    Ok(writes)
}

/// Runs the case on a fresh control plane in `dir`; with `baseline`, that build of the plugin
/// too, on the same hub.
pub async fn bench(
    (cli, baseline): (&Path, Option<&Path>),
    dir: &Path,
    rows: usize,
    per_row: usize,
    concurrency: usize,
) -> anyhow::Result<RowsRun> {
    super::process::cluster(dir, "down")?;
    super::process::cluster(dir, "up")?;
    let kubeconfig = dir.join("kubeconfig");
    let client = update_status_e2e::client_for(&kubeconfig).await?;
    super::process::log(&format!(
        "fleet rows: writing {rows} clusters' copies ({per_row} health insights each)"
    ));
    let t = Instant::now();
    let results: Vec<anyhow::Result<u64>> = futures::stream::iter(0..rows)
        .map(|i| write_row(&client, i, per_row))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let writes: u64 = results
        .into_iter()
        .collect::<anyhow::Result<Vec<u64>>>()
        .context("writing the copies")?
        .into_iter()
        .sum();
    let populate_s = t.elapsed().as_secs_f64();
    super::process::log(&format!("fleet rows: {writes} writes in {populate_s:.0}s"));
    let work = dir.join("fleet-rows");
    std::fs::create_dir_all(&work)?;
    let text = live_cli::measure(cli, &kubeconfig, &work, &["--fleet"]).await?;
    let json = live_cli::measure(cli, &kubeconfig, &work, &["--fleet", "-o", "json"]).await?;
    if text.lines < rows + 1 {
        anyhow::bail!("--fleet printed {} lines for {rows} clusters", text.lines);
    }
    let baseline = match baseline {
        Some(b) => Some(measure_baseline(cli, b, &kubeconfig, &work).await?),
        None => None,
    };
    // The live grid.
    let t = Instant::now();
    let server = WebServer::start(cli, &["--fleet"], Some(&kubeconfig))
        .map_err(|e| anyhow::anyhow!("--fleet --web: {e}"))?;
    let serve_s = t.elapsed().as_secs_f64();
    let browser = Chromium::shared()
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .connect()
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let page = browser::open(&browser, &server.url, &Open::default())
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut times = Vec::new();
    let mut tiles = 0;
    for _ in 0..3 {
        page.goto(server.url.as_str())
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        browser::wait_for(
            &page,
            "performance.getEntriesByName('update-status:interactive').length > 0",
            Duration::from_secs(60),
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        let (ms, n): (f64, usize) = browser::eval(
            &page,
            "[performance.getEntriesByName('update-status:interactive')[0].startTime, document.querySelectorAll('.fleet .tile').length]",
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(ms);
        tiles = n;
    }
    let data_bytes: usize = browser::eval(
        &page,
        "(async () => (await (await fetch('/api/view')).text()).length)()",
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let _ = page.close().await;
    drop(server);
    times.sort_by(f64::total_cmp);
    super::process::cluster(dir, "down")?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(RowsRun {
        rows,
        per_row,
        populate_s,
        text,
        json,
        serve_s,
        page_ms: times[times.len() / 2],
        tiles,
        data_bytes,
        baseline,
    })
}

/// The report's section.
pub fn report(r: &RowsRun) -> String {
    let mut s = format!(
        "## A hub of {} clusters × {} health insights (`--fleet-rows`)\n\n",
        r.rows, r.per_row
    );
    let _ = writeln!(
        s,
        "The copies of {} clusters in as many namespaces (each a ControlPlaneUpdateStatus with a heartbeat, a WorkerPoolUpdateStatus and {} health insights: {} objects), written in {:.0} s on a fresh local control plane; the release plugin reads them in pages of 500 and joins them in linear time (issue #38, item 5).\n",
        r.rows,
        r.per_row,
        r.rows * (2 + r.per_row),
        r.populate_s
    );
    let over = |ok: bool| if ok { "" } else { " **over**" };
    let _ = writeln!(s, "| | goal | result |\n|---|---|---|");
    for (name, run) in [("`--fleet`", &r.text), ("`--fleet -o json`", &r.json)] {
        let mib = run.hwm_kib as f64 / 1024.0;
        let _ = writeln!(
            s,
            "| {name}: median wall time of 5 | ≤ {GOAL_S:.0} s | {:.2} s{} |\n| {name}: peak RSS | ≤ {GOAL_MIB:.0} MiB | {mib:.0} MiB{} |\n| {name}: bytes from the API server | | {:.1} MB |",
            run.median_s,
            over(run.median_s <= GOAL_S),
            over(mib <= GOAL_MIB),
            run.bytes as f64 / 1e6,
        );
    }
    let _ = writeln!(
        s,
        "| `--fleet --web`: lists and watches started (URL printed) | ≤ {GOAL_SERVE_S:.0} s | {:.1} s{} |\n| the grid interactive with its {} tiles (median of 3 loads) | ≤ {GOAL_PAGE_MS:.0} ms | {:.0} ms{} |\n| the grid's data (one `view` event) | | {:.0} KiB |\n",
        r.serve_s,
        over(r.serve_s <= GOAL_SERVE_S),
        r.tiles,
        r.page_ms,
        over(r.page_ms <= GOAL_PAGE_MS),
        r.data_bytes as f64 / 1024.0
    );
    if let Some(b) = &r.baseline {
        let _ = writeln!(
            s,
            "The baseline plugin (`--baseline-cli`) on the same hub: `--fleet` {:.2} s, {:.1} MB; `-o json` {:.2} s, {:.1} MB; outputs byte for byte the same: {}.\n",
            b.text.median_s,
            b.text.bytes as f64 / 1e6,
            b.json.median_s,
            b.json.bytes as f64 / 1e6,
            if b.same_output { "yes" } else { "**no**" },
        );
    }
    s
}
