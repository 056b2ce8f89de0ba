//! The node tables (E.4, with C.12's omission) and the Worker Upgrade pool table (E.5; oc's
//! `workerpool.go`).

use std::fmt::Write as _;

use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, InsightType, NodeCounts, NodePhase,
    UpdateInsightStatus, WorkerPoolUpdateStatusStatus,
};
use update_status_assess::order::node_sort_key;

use super::common::{Details, condition};
use crate::show::tabwriter::format_table;
use crate::show::view::View;

/// Rows of a node table that are always printed (C.12).
const ALWAYS_PRINTED_NODES: usize = 10;

/// The worker pools in display order: the view's, which is the MachineConfigPool list order
/// (offline the file's, online by name, as an API server lists them); `oc` sorts nothing.
pub(super) fn ordered_pools(view: &View) -> Vec<(&str, &WorkerPoolUpdateStatusStatus)> {
    view.worker_pools
        .iter()
        .map(|(n, p)| (n.as_str(), p))
        .collect()
}

/// The node progress insights of a pool (in input order).
pub(super) fn pool_nodes<'a>(view: &'a View, pool: &str) -> Vec<&'a UpdateInsightStatus> {
    pool_members(view, pool, &["Node"])
}

/// The progress insights about resources of `kinds` in a pool (in input order).
pub(super) fn pool_members<'a>(
    view: &'a View,
    pool: &str,
    kinds: &[&str],
) -> Vec<&'a UpdateInsightStatus> {
    view.insights
        .iter()
        .filter(|i| {
            i.type_ == InsightType::Progress
                && i.progress.is_some()
                && kinds.contains(&i.resource.kind.as_str())
                && i.scope.pool.as_deref() == Some(pool)
        })
        .collect()
}

pub(super) fn phase(node: &UpdateInsightStatus) -> Option<NodePhase> {
    node.progress.as_ref().and_then(|p| p.phase)
}

fn node_assessment(node: &UpdateInsightStatus) -> Assessment {
    node.progress
        .as_ref()
        .map_or(Assessment::Unknown, |p| p.assessment)
}

fn node_condition<'a>(node: &'a UpdateInsightStatus, type_: &str) -> Option<&'a Condition> {
    node.progress
        .as_ref()
        .and_then(|p| condition(&p.conditions, type_))
}

fn node_condition_is(node: &UpdateInsightStatus, type_: &str, status: ConditionStatus) -> bool {
    node_condition(node, type_).is_some_and(|c| c.status == status)
}

/// VERSION cell: the current version, `?` when unknown.
pub(super) fn node_version(node: &UpdateInsightStatus) -> String {
    match node.progress.as_ref().and_then(|p| p.version.as_ref()) {
        Some(v) if !v.current.is_empty() => v.current.clone(),
        _ => "?".to_owned(),
    }
}

pub(super) fn sort_nodes(mut nodes: Vec<&UpdateInsightStatus>) -> Vec<&UpdateInsightStatus> {
    nodes.sort_by(|a, b| node_sort_key(a).cmp(&node_sort_key(b)));
    nodes
}

/// Counts of the nodes a compact node table leaves out (C.12).
#[derive(Default)]
pub(super) struct Omitted {
    total: u32,
    completed: u32,
    available: u32,
    progressing: u32,
    outdated: u32,
    draining: u32,
    excluded: u32,
}

impl Omitted {
    /// Counts `node` in.
    fn add(&mut self, node: &UpdateInsightStatus) {
        let unavailable = node_condition_is(node, "Available", ConditionStatus::False);
        let updating = node_condition_is(node, "Updating", ConditionStatus::True);
        let ph = phase(node);
        self.total += 1;
        if !updating && ph == Some(NodePhase::Updated) {
            self.completed += 1;
        } else {
            self.outdated += 1;
        }
        if !unavailable {
            self.available += 1;
        }
        if ph == Some(NodePhase::Draining) {
            self.draining += 1;
        }
        if ph == Some(NodePhase::Paused) {
            self.excluded += 1;
        }
        if node_assessment(node) == Assessment::Progressing {
            self.progressing += 1;
        }
    }

    /// The pool's nodes (`counts`) but the `printed` ones; `None` when `counts` lacks a count
    /// or is smaller than what was printed (a status from another version or out of step).
    fn all_but(counts: &NodeCounts, printed: &Omitted) -> Option<Omitted> {
        let completed = counts.completed?;
        let all = Omitted {
            total: counts.total,
            completed,
            available: counts.available,
            progressing: counts.assessed_progressing?,
            outdated: counts.total.checked_sub(completed)?,
            draining: counts.draining,
            excluded: counts.excluded,
        };
        Some(Omitted {
            total: all.total.checked_sub(printed.total)?,
            completed: all.completed.checked_sub(printed.completed)?,
            available: all.available.checked_sub(printed.available)?,
            progressing: all.progressing.checked_sub(printed.progressing)?,
            outdated: all.outdated.checked_sub(printed.outdated)?,
            draining: all.draining.checked_sub(printed.draining)?,
            excluded: all.excluded.checked_sub(printed.excluded)?,
        })
    }
}

/// Whether a compact node table prints `node` whatever its rank (C.12): degraded, or
/// unavailable and not updating.
fn is_interesting(node: &UpdateInsightStatus) -> bool {
    let degraded = node_condition_is(node, "Degraded", ConditionStatus::True);
    let unavailable = node_condition_is(node, "Available", ConditionStatus::False);
    let updating = node_condition_is(node, "Updating", ConditionStatus::True);
    degraded || (unavailable && !updating)
}

/// E.4: a node table (sorted nodes) with C.12's omission and footer. With `counts` (a
/// selective read: `nodes` are only the printed ones), the footer counts the pool's other nodes.
pub(super) fn node_table(
    out: &mut String,
    nodes: &[&UpdateInsightStatus],
    details: Details,
    counts: Option<&NodeCounts>,
) {
    let mut table = String::from("NAME\tASSESSMENT\tPHASE\tVERSION\tEST\tMESSAGE\n");
    let mut omitted = Omitted::default();
    let mut printed = Omitted::default();
    for (i, node) in nodes.iter().enumerate() {
        if details.nodes() || i < ALWAYS_PRINTED_NODES || is_interesting(node) {
            printed.add(node);
            let p = node.progress.as_ref();
            let name = node.resource.name.as_str();
            let raw = p.map(|p| p.message.as_str()).unwrap_or_default();
            let message = if name.len() >= 8 {
                raw.replace(name, "<node>")
            } else {
                raw.to_owned()
            };
            let _ = writeln!(
                table,
                "{name}\t{}\t{}\t{}\t{}\t{message}",
                node_assessment(node).as_str(),
                phase(node).map(NodePhase::as_str).unwrap_or_default(),
                node_version(node),
                p.map(|p| p.estimate.as_str()).unwrap_or_default(),
            );
            continue;
        }
        omitted.add(node);
    }
    out.push_str(&format_table(&table));
    if let Some(counts) = counts {
        omitted = Omitted::all_but(counts, &printed).unwrap_or(omitted);
    }
    if omitted.total > 0 {
        let o = &omitted;
        let _ = writeln!(
            out,
            "...\nOmitted additional {} Total, {} Completed, {} Available, {} Progressing, {} Outdated, {} Draining, {} Excluded, and 0 Degraded nodes.\nPass along --details=nodes to see all information.",
            o.total, o.completed, o.available, o.progressing, o.outdated, o.draining, o.excluded
        );
    }
}

/// E.5.
pub(super) fn worker_pool_table(out: &mut String, pools: &[(&str, &WorkerPoolUpdateStatusStatus)]) {
    pool_table(out, "WORKER POOL", pools);
}

/// E.5 with the first column named `header` (hosted mode: `NODEPOOL`).
pub(super) fn pool_table(
    out: &mut String,
    header: &str,
    pools: &[(&str, &WorkerPoolUpdateStatusStatus)],
) {
    let mut table = format!("{header}\tASSESSMENT\tCOMPLETION\tSTATUS\n");
    for (name, pool) in pools {
        let n = &pool.nodes;
        if n.total == 0 {
            let _ = writeln!(table, "{name}\tEmpty\t\t{} Total", n.total);
            continue;
        }
        let mut status = format!(
            "{} Available, {} Progressing, {} Draining",
            n.available, n.progressing, n.draining
        );
        if n.excluded > 0 {
            let _ = write!(status, ", {} Excluded", n.excluded);
        }
        if n.degraded > 0 {
            let _ = write!(status, ", {} Degraded", n.degraded);
        }
        let _ = writeln!(
            table,
            "{name}\t{}\t{}% ({}/{})\t{status}",
            pool.assessment.as_str(),
            pool.completion_percent,
            n.total.saturating_sub(n.outdated),
            n.total
        );
    }
    out.push_str(&format_table(&table));
}
