//! The offline CLI (`kubectl-update_status --from-dir`) on large captures, without a control
//! plane (issue #16 goal 1): a simulated mid-update cluster of 5,003 nodes in 5 pools written
//! as JSON lists (the simulator's snapshot writer), and a must-gather of 20,000 generated
//! worker nodes in block YAML (`update_status_testdata::must_gather`). Each case is timed as
//! the median wall time of [`RUNS`] runs, with the highest peak RSS (`VmHWM`) of those runs.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use jiff::SignedDuration;
use update_status_e2e::repo_root;
use update_status_simulator::{SimConfig, Simulation, Stage};

use super::process::{log, memory_kib, mib};

/// Runs timed per case.
pub const RUNS: usize = 7;

/// One offline case with its goals.
#[derive(Debug, Default, Clone)]
pub struct OfflineRun {
    /// What was read (`5,003 nodes, 5 pools, JSON`).
    pub label: String,
    /// The input files and their sizes in MiB (the largest first).
    pub files: Vec<(String, f64)>,
    /// Median wall time of [`RUNS`] runs.
    pub median_s: f64,
    /// Highest `VmHWM` of those runs.
    pub hwm_kib: u64,
    /// Every run succeeded.
    pub ok: bool,
    /// Goal on the median wall time (s).
    pub goal_s: f64,
    /// Goal on the peak RSS (MiB), if any.
    pub goal_mib: Option<f64>,
}

impl OfflineRun {
    /// Whether every goal is met.
    pub fn met(&self) -> bool {
        self.ok
            && self.median_s <= self.goal_s
            && self.goal_mib.is_none_or(|g| mib(self.hwm_kib) <= g)
    }

    fn goal_text(&self) -> String {
        match self.goal_mib {
            Some(m) => format!("≤ {} s, ≤ {m:.0} MiB", self.goal_s),
            None => format!("≤ {} s", self.goal_s),
        }
    }

    /// `11.1 MiB: nodes.yaml 11.0 MiB, 6 other files 41 KiB`.
    fn files_text(&self) -> String {
        let total: f64 = self.files.iter().map(|(_, s)| s).sum();
        let (big, small): (Vec<_>, Vec<_>) = self.files.iter().partition(|(_, s)| *s >= 0.1);
        let mut parts: Vec<String> = big
            .iter()
            .map(|(f, s)| format!("`{f}` {s:.1} MiB"))
            .collect();
        if !small.is_empty() {
            let kib: f64 = small.iter().map(|(_, s)| s * 1024.0).sum();
            parts.push(format!("{} other files {kib:.0} KiB", small.len()));
        }
        format!("{total:.1} MiB: {}", parts.join(", "))
    }

    fn log(&self) {
        log(&format!(
            "offline CLI, {} ({}): median {:.3}s of {RUNS}, peak RSS {:.0} MiB, ok={}",
            self.label,
            self.files_text(),
            self.median_s,
            mib(self.hwm_kib),
            self.ok
        ));
    }
}

/// Runs the CLI offline once, output discarded; returns (seconds, peak RSS KiB, success).
pub fn run_cli(cli: &Path, dir: &Path) -> anyhow::Result<(f64, u64, bool)> {
    let started = Instant::now();
    let mut child = Command::new(cli)
        .arg("--from-dir")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}", cli.display()))?;
    let mut hwm = 0;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        hwm = hwm.max(memory_kib(child.id()).0);
        std::thread::sleep(Duration::from_millis(2));
    };
    Ok((started.elapsed().as_secs_f64(), hwm, status.success()))
}

/// Median wall time, highest peak RSS and overall success of `runs` runs.
fn measure(cli: &Path, dir: &Path, runs: usize) -> anyhow::Result<(f64, u64, bool)> {
    let mut times = Vec::with_capacity(runs);
    let (mut hwm, mut ok) = (0, true);
    for _ in 0..runs {
        let (s, h, o) = run_cli(cli, dir)?;
        times.push(s);
        hwm = hwm.max(h);
        ok &= o;
    }
    times.sort_by(f64::total_cmp);
    Ok((times.get(runs / 2).copied().unwrap_or_default(), hwm, ok))
}

/// Sizes (MiB) of the regular files directly in `dir`, the largest first.
fn file_sizes(dir: &Path) -> anyhow::Result<Vec<(String, f64)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if meta.is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            files.push((name, meta.len() as f64 / (1024.0 * 1024.0)));
        }
    }
    files.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(files)
}

/// The simulated mid-update cluster of issue #16: 34 operators, `pools` pools (master with 3
/// nodes, then `nodes_per_pool` each), the nodes rolling. Deterministic (fixed seed and start).
pub fn simulated_snapshot(pools: usize, nodes_per_pool: usize) -> anyhow::Result<Simulation> {
    let max_unavailable = (nodes_per_pool as u32 / 20).max(1);
    mid_node_roll(pools, nodes_per_pool, max_unavailable, None)
}

/// A simulated cluster 8 steps into its node roll (34 operators, 3 masters, `pools` pools of
/// `nodes_per_pool`, seed 42, 30 s steps), started at `start` (`None`: the simulator's fixed
/// default). The benchmark's cluster and the offline snapshot are both this one.
pub fn mid_node_roll(
    pools: usize,
    nodes_per_pool: usize,
    max_unavailable: u32,
    start: Option<jiff::Timestamp>,
) -> anyhow::Result<Simulation> {
    let defaults = SimConfig::default();
    let mut sim = Simulation::new(SimConfig {
        operators: 34,
        pools,
        masters: 3,
        nodes_per_pool,
        max_unavailable,
        seed: 42,
        start: start.unwrap_or(defaults.start),
        step: SignedDuration::from_secs(30),
        ..defaults
    })?;
    while sim.stage() != Stage::Nodes && !sim.is_completed() {
        sim.step();
    }
    for _ in 0..8 {
        sim.step();
    }
    Ok(sim)
}

/// The CLI on the simulator's snapshot of 3 + 4 × `nodes_per_pool` nodes in 5 pools (JSON
/// lists, as `write_snapshot` writes them). Goals: ≤ 0.15 s and ≤ 40 MiB.
pub fn bench_simulated(cli: &Path, nodes_per_pool: usize) -> anyhow::Result<OfflineRun> {
    let sim = simulated_snapshot(5, nodes_per_pool)?;
    let nodes = sim.node_count();
    let dir = repo_root().join(format!("target/bench/offline-snapshot-{nodes}"));
    let _ = std::fs::remove_dir_all(&dir);
    sim.write_snapshot(&dir)?;
    let files = file_sizes(&dir)?;
    let (median_s, hwm_kib, ok) = measure(cli, &dir, RUNS)?;
    std::fs::remove_dir_all(&dir)?;
    let run = OfflineRun {
        label: format!("{nodes} nodes, 5 pools, JSON (simulator snapshot)"),
        files,
        median_s,
        hwm_kib,
        ok,
        goal_s: 0.15,
        goal_mib: Some(40.0),
    };
    run.log();
    Ok(run)
}

/// The CLI on a must-gather of `nodes` generated worker nodes in one block-YAML file.
/// Goal: ≤ 1 s.
pub fn bench_must_gather(cli: &Path, nodes: usize) -> anyhow::Result<OfflineRun> {
    let root = repo_root().join(format!("target/bench/must-gather-{nodes}"));
    let _ = std::fs::remove_dir_all(&root);
    let csr = update_status_testdata::must_gather::write(&root, nodes)
        .with_context(|| format!("writing a must-gather in {}", root.display()))?;
    let size = std::fs::metadata(csr.join("core/nodes/generated.yaml"))?.len();
    let (median_s, hwm_kib, ok) = measure(cli, &root, RUNS)?;
    std::fs::remove_dir_all(&root)?;
    let run = OfflineRun {
        label: format!("must-gather, {nodes} generated nodes, block YAML"),
        files: vec![(
            "core/nodes/generated.yaml".to_string(),
            size as f64 / (1024.0 * 1024.0),
        )],
        median_s,
        hwm_kib,
        ok,
        goal_s: 1.0,
        goal_mib: None,
    };
    run.log();
    Ok(run)
}

/// The report's section on these cases.
pub fn report(runs: &[OfflineRun]) -> String {
    let mut s = String::from(
        "## The offline CLI on large captures\n\n\
`kubectl-update_status --from-dir`, output discarded, median wall time of 7 runs and the highest peak RSS (`VmHWM`) of those runs. The 5,003-node snapshot is the simulator's (`update_status_simulator`: 34 operators, a master pool of 3 nodes and 4 pools of 1,250 nodes, 8 steps into the node roll, JSON lists as `write_snapshot` writes them); the must-gather is `update_status_testdata::must_gather` (the objects of `testdata/oc-status/4.14.1-workers-started-updating-multiple-pools` plus generated worker nodes as heavy as real ones, in one block-YAML `core/nodes/generated.yaml`).\n\n\
| case (input files, MiB) | goal | median wall time / peak RSS |\n|---|---|---|\n",
    );
    for r in runs {
        let _ = writeln!(
            s,
            "| {} ({}) | {} | {:.3} s / {:.0} MiB{} {} |",
            r.label,
            r.files_text(),
            r.goal_text(),
            r.median_s,
            mib(r.hwm_kib),
            if r.ok { "" } else { " — failed" },
            if r.met() { "✅" } else { "❌" }
        );
    }
    s
}
