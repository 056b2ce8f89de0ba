//! The pure assessment's criterion results (`assess/benches/assess.rs`, written under
//! `target/criterion`) as a Markdown table for the report.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The table of the criterion medians under `dir` (`target/criterion`); `None` when it holds
/// none.
pub fn criterion_table(dir: &Path) -> Option<String> {
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
