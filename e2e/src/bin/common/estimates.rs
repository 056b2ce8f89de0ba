//! `bench --estimates`: the estimates that learn (issue #40) against oc's method, replayed on
//! simulated updates.
//!
//! Pure: no API server. For each seed, one simulated cluster ([`DriftingCluster`]) is updated
//! `--estimate-updates` times in a row; every simulated step's inputs go to the learning
//! ([`observe`]) and to both estimates ([`estimate`], [`oc_estimates`]) with the step's
//! instant as the clock, exactly what the controller's `estimates` reconciler does on each
//! wake-up. The learned state carries over from one update to the next as the `UpdateHistory`
//! object does. The first update of each cluster has nothing learned (the fallback is oc's
//! method itself) and is not scored; every later one is scored at 10/25/50/75/90 % of its true
//! duration, for the control plane (every platform operator at the target) and the whole
//! update (every pool updated).
//!
//! With `ESTIMATES_DEBUG` set, every scored point is printed on stderr (truth, ours with its
//! interval, oc's, and each pool's); with `ESTIMATES_TRACE=SEED:UPDATE` (e.g. `4:2`), every
//! step of that one update (the pools' progress and our estimate of each).

use std::fmt::Write as _;

use anyhow::Context;
use jiff::{SignedDuration, Timestamp};
use update_status_api::history::UpdateHistoryStatus;
use update_status_assess::estimates::{Remaining, estimate, observe, oc_estimates};
use update_status_simulator::{DriftingCluster, PastUpdate, Platform, SimConfig, Simulation};

/// Seeds the constants of `assess/src/estimates/predict.rs` were tuned on (1–3 since round 1;
/// 19–30 looked at in round 3 for the share of a pause, left unchanged); the others were not
/// looked at while tuning.
pub const TUNING_SEEDS: [u64; 15] = [1, 2, 3, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30];
/// Progress points (share of the true duration).
pub const POINTS: [f64; 5] = [0.10, 0.25, 0.50, 0.75, 0.90];
const SCOPES: [&str; 2] = ["control plane", "update"];

/// The shape of every replayed cluster.
pub fn base_config() -> SimConfig {
    SimConfig {
        operators: 20,
        pools: 3,
        masters: 3,
        nodes_per_pool: 8,
        max_unavailable: 2,
        step: SignedDuration::from_secs(30),
        ..SimConfig::default()
    }
}

/// One reading: the instant, ours and oc's per scope.
#[derive(Clone, Debug)]
struct Reading {
    at: Timestamp,
    ours: [Option<Remaining>; 2],
    oc: [Option<f64>; 2],
    pools: Vec<(String, f64)>,
}

/// Errors at one progress point of one scope.
#[derive(Clone, Debug, Default)]
struct Cell {
    ours: Vec<f64>,
    oc: Vec<f64>,
    covered: usize,
}

impl Cell {
    fn mae(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len().max(1) as f64
    }
}

/// Results over every seed.
#[derive(Clone, Debug, Default)]
pub struct Results {
    cells: Vec<Vec<Cell>>,
    scored_updates: usize,
    seeds: Vec<u64>,
    platforms: Vec<&'static str>,
    steps: u64,
}

impl Results {
    /// Worst ratio of the mean absolute errors (ours / oc) at the points after 25 %.
    pub fn worst_ratio(&self) -> f64 {
        let mut worst: f64 = 0.0;
        for row in &self.cells {
            for (p, c) in POINTS.iter().zip(row) {
                if *p > 0.25 {
                    let oc = Cell::mae(&c.oc).max(1.0);
                    worst = worst.max(Cell::mae(&c.ours) / oc);
                }
            }
        }
        worst
    }
    /// Share of the scored points where the truth was inside our interval.
    pub fn coverage(&self) -> f64 {
        let (mut n, mut k) = (0usize, 0usize);
        for c in self.cells.iter().flatten() {
            n += c.ours.len();
            k += c.covered;
        }
        k as f64 / n.max(1) as f64
    }

    /// The Markdown table and the closing line.
    pub fn report(&self) -> String {
        let mut s = String::new();
        let tuned: Vec<String> = TUNING_SEEDS.iter().map(u64::to_string).collect();
        let seeds: Vec<String> = self.seeds.iter().map(u64::to_string).collect();
        let overlap = self.seeds.iter().any(|s| TUNING_SEEDS.contains(s));
        let _ = writeln!(
            s,
            "Seeds {} ({}tuned on {}), platforms {}; {} scored updates (the first update of each cluster has nothing learned: not scored); {} simulated steps of 30 s.\n",
            seeds.join(","),
            if overlap { "some " } else { "none " },
            tuned.join(","),
            self.platforms.join(","),
            self.scored_updates,
            self.steps,
        );
        let _ = writeln!(
            s,
            "| scope | progress | MAE ours (min) | MAE oc (min) | ratio ours/oc | truth in our p10–p90 |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for (scope, row) in SCOPES.iter().zip(&self.cells) {
            for (p, c) in POINTS.iter().zip(row) {
                let (ours, oc) = (Cell::mae(&c.ours), Cell::mae(&c.oc));
                let _ = writeln!(
                    s,
                    "| {scope} | {:.0} % | {:.1} | {:.1} | {:.2} | {:.0} % |",
                    p * 100.0,
                    ours / 60.0,
                    oc / 60.0,
                    ours / oc.max(1.0),
                    100.0 * c.covered as f64 / c.ours.len().max(1) as f64
                );
            }
        }
        let _ = writeln!(
            s,
            "\nestimates: worst ratio {:.2} (ours/oc, after 25 %), coverage {:.2}",
            self.worst_ratio(),
            self.coverage()
        );
        s
    }
}

fn secs(a: Timestamp, b: Timestamp) -> f64 {
    (b.as_millisecond() - a.as_millisecond()) as f64 / 1000.0
}

/// Replays `updates` updates of one cluster per seed.
pub fn run(seeds: &[u64], updates: usize, platform: Option<Platform>) -> anyhow::Result<Results> {
    let mut results = Results {
        cells: vec![vec![Cell::default(); POINTS.len()]; SCOPES.len()],
        seeds: seeds.to_vec(),
        ..Default::default()
    };
    let trace = std::env::var("ESTIMATES_TRACE").ok();
    for &seed in seeds {
        let cluster = match platform {
            Some(p) => DriftingCluster::on(seed, base_config(), updates, p),
            None => DriftingCluster::new(seed, base_config(), updates),
        };
        results.platforms.push(cluster.platform().name());
        let mut learned = UpdateHistoryStatus::default();
        let mut history: Vec<PastUpdate> = Vec::new();
        for k in 0..updates {
            let config = cluster.update(k, history.clone());
            let to = config.to_version.clone();
            let mut sim =
                Simulation::new(config).with_context(|| format!("seed {seed}, update {k}"))?;
            let mut readings = Vec::new();
            let (mut started, mut cp_done, mut all_done) = (None, None, None);
            let mut pool_done: Vec<(String, Timestamp)> = Vec::new();
            for _ in 0..20_000 {
                let report = sim.step();
                results.steps += 1;
                let now = report.at;
                started.get_or_insert(now);
                let inputs = sim.inputs().context("simulated inputs")?;
                let view = inputs.as_cluster_inputs();
                observe(&mut learned, &view, &inputs.nodes, now);
                let ours = estimate(&learned, &view, &inputs.nodes, now);
                let oc = oc_estimates(&view, &inputs.nodes, now);
                let (ops_done, ops_total) = sim.operator_progress();
                if ops_done == ops_total && cp_done.is_none() {
                    cp_done = Some(now);
                }
                let pools_done = sim.pool_progress().iter().all(|(_, d, t, _, _)| d == t);
                if cp_done.is_some() && pools_done {
                    all_done = Some(now);
                }
                let ours_of = |e: Option<&update_status_api::history::Estimate>| {
                    e.map(|e| Remaining {
                        low: f64::from(e.earliest_remaining_seconds),
                        mid: f64::from(e.remaining_seconds),
                        high: f64::from(e.latest_remaining_seconds),
                        paused: e.paused,
                    })
                };
                readings.push(Reading {
                    at: now,
                    ours: [
                        ours_of(ours.as_ref().and_then(|e| e.control_plane.as_ref())),
                        ours_of(ours.as_ref().and_then(|e| e.update.as_ref())),
                    ],
                    oc: [oc.control_plane.map(|s| s.max(0.0)), oc.update],
                    pools: ours
                        .as_ref()
                        .map(|e| {
                            e.pools
                                .iter()
                                .map(|p| (p.name.clone(), f64::from(p.estimate.remaining_seconds)))
                                .collect()
                        })
                        .unwrap_or_default(),
                });
                if trace.as_deref() == Some(&format!("{seed}:{k}")) {
                    let r = readings.last().map(|r| r.pools.clone()).unwrap_or_default();
                    eprintln!(
                        "{:.1} min: pools (name, updated, total, in flight, paused) {:?}, ours {:?}, operators done {:?}",
                        secs(started.unwrap_or(now), now) / 60.0,
                        sim.pool_progress(),
                        r.iter()
                            .map(|(n, s)| format!("{n} {:.1}", s / 60.0))
                            .collect::<Vec<_>>(),
                        sim.operator_progress()
                    );
                }
                for (name, d, t, _, _) in sim.pool_progress() {
                    if d == t && !pool_done.iter().any(|(n, _)| n == &name) {
                        pool_done.push((name, now));
                    }
                }
                if all_done.is_some() {
                    break;
                }
            }
            let (Some(start), Some(cp), Some(end)) = (started, cp_done, all_done) else {
                anyhow::bail!("seed {seed}, update {k}: the simulated update did not complete");
            };
            // One more reading so the learning sees the update complete.
            if let Ok(inputs) = sim.inputs() {
                observe(
                    &mut learned,
                    &inputs.as_cluster_inputs(),
                    &inputs.nodes,
                    end,
                );
            }
            history.insert(
                0,
                PastUpdate {
                    version: to,
                    started: start,
                    completed: cp,
                },
            );
            if k == 0 {
                continue;
            }
            results.scored_updates += 1;
            for (scope, done) in [cp, end].into_iter().enumerate() {
                let total = secs(start, done);
                for (pi, p) in POINTS.iter().enumerate() {
                    let want = start.as_millisecond() as f64 + p * total * 1000.0;
                    // The last reading at or before the point.
                    let Some(r) = readings
                        .iter()
                        .rev()
                        .find(|r| r.at.as_millisecond() as f64 <= want)
                    else {
                        continue;
                    };
                    let truth = secs(r.at, done);
                    if std::env::var_os("ESTIMATES_DEBUG").is_some() {
                        let o = r.ours[scope].unwrap_or_default();
                        eprintln!(
                            "seed {seed} update {k} {} {:.0}%: truth {:.1} ours {:.1} [{:.1}, {:.1}] oc {:.1}",
                            SCOPES[scope],
                            p * 100.0,
                            truth / 60.0,
                            o.mid / 60.0,
                            o.low / 60.0,
                            o.high / 60.0,
                            r.oc[scope].unwrap_or(0.0) / 60.0
                        );
                        for (name, est) in &r.pools {
                            let t = pool_done
                                .iter()
                                .find(|(n, _)| n == name)
                                .map_or(0.0, |(_, d)| secs(r.at, *d));
                            eprintln!(
                                "    pool {name}: truth {:.1} ours {:.1}",
                                t / 60.0,
                                est / 60.0
                            );
                        }
                    }
                    let cell = &mut results.cells[scope][pi];
                    let ours = r.ours[scope].unwrap_or_default();
                    let oc = r.oc[scope].unwrap_or(0.0);
                    cell.ours.push((ours.mid - truth).abs());
                    cell.oc.push((oc - truth).abs());
                    if ours.low <= truth && truth <= ours.high {
                        cell.covered += 1;
                    }
                }
            }
        }
        let bytes = serde_json::to_vec(&learned).map(|v| v.len()).unwrap_or(0);
        eprintln!(
            "bench: estimates: seed {seed}: {} updates replayed, learned state {bytes} bytes",
            updates
        );
    }
    Ok(results)
}
