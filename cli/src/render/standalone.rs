//! The standalone cluster's text, exactly as `oc adm upgrade status` prints it (algorithms.md
//! section E), and the sections the hosted layout shares with it (`super::hosted`).

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::str::FromStr;

use jiff::Timestamp;
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, ControlPlaneUpdateStatusStatus, ImpactLevel,
    InsightType, NodeCounts, NodePhase, ResourceRef, ScopeType, UpdateInsightStatus,
    WorkerPoolUpdateStatusStatus,
};

use crate::gosort::go_sort_slice;
use update_status_assess::control_plane::{
    operator_health_display, round_update_duration, target_version_display,
};
use update_status_assess::nodes::MASTER_POOL;
use update_status_assess::order::node_sort_key;

use update_status_assess::format::{MINUTE, SECOND, ellipsize, round, short_duration, truncate};

use crate::tabwriter::format_table;
use crate::view::View;

/// Name of the control-plane pool.
const MASTER: &str = "master";
/// Rows of a node table that are always printed (C.12).
const ALWAYS_PRINTED_NODES: usize = 10;
/// `len("Description: ")`: width of the labels of a detailed health insight (E.6).
const DETAIL_LABEL_WIDTH: usize = 13;

/// `--details`: which detailed sections to print (E.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Details {
    /// The default, compact output.
    #[default]
    None,
    /// Every detailed section.
    All,
    /// Every node (no omission).
    Nodes,
    /// The "Updating Cluster Operators" table.
    Operators,
    /// The detailed Update Health view.
    Health,
}

impl Details {
    fn operators(self) -> bool {
        matches!(self, Details::All | Details::Operators)
    }
    pub fn nodes(self) -> bool {
        matches!(self, Details::All | Details::Nodes)
    }
    /// The detailed Update Health view (`health`, `all`).
    pub fn health(self) -> bool {
        matches!(self, Details::All | Details::Health)
    }
}

/// `--related` without the detailed Update Health view it adds to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--related adds to the detailed health view: use it with --details=health or --details=all"
)]
pub struct RelatedNeedsHealth;

/// An invalid `--details` value; the text is oc's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value for --details: {0} (must be one of none, all, nodes, health, operators)")]
pub struct InvalidDetails(pub String);

impl FromStr for Details {
    type Err = InvalidDetails;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Details::None),
            "all" => Ok(Details::All),
            "nodes" => Ok(Details::Nodes),
            "operators" => Ok(Details::Operators),
            "health" => Ok(Details::Health),
            other => Err(InvalidDetails(other.to_owned())),
        }
    }
}

/// Views `oc adm upgrade status` refuses to render (E.8): the command fails with this text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// No ControlPlaneUpdateStatus (no ClusterVersion).
    #[error(
        "no cluster version information available - you must be connected to an OpenShift version 4 server to fetch the current version"
    )]
    NoControlPlane,
    /// The ClusterVersion has no `Progressing` condition (`Updating` is Unknown with reason
    /// `NoProgressingCondition`, or missing).
    #[error("no current Progressing info, see `oc describe clusterversion` for more details.")]
    NoProgressingInfo,
}

/// Checks that `view` can be rendered; `oc` fails on these views and so should the caller.
pub fn check(view: &View) -> Result<(), RenderError> {
    let cp = view
        .control_plane
        .as_ref()
        .ok_or(RenderError::NoControlPlane)?;
    match condition(&cp.conditions, "Updating") {
        None => Err(RenderError::NoProgressingInfo),
        Some(c) if c.status == ConditionStatus::Unknown && c.reason == "NoProgressingCondition" => {
            Err(RenderError::NoProgressingInfo)
        }
        Some(_) => Ok(()),
    }
}

/// Renders `view` as `oc adm upgrade status [--details=...]` prints it at `now`.
///
/// Views [`check`] rejects render as the error text followed by a newline.
#[cfg(test)]
pub fn render(view: &View, now: Timestamp, details: Details) -> String {
    render_with(view, now, details, false)
}

/// [`render`], and with `related` (ours, not oc's: `--related`) each health insight of the
/// detailed Update Health view also lists what it points at (its `related` resources).
pub fn render_with(view: &View, now: Timestamp, details: Details, related: bool) -> String {
    if let Err(e) = check(view) {
        return format!("{e}\n");
    }
    let Some(cp) = view.control_plane.as_ref() else {
        return format!("{}\n", RenderError::NoControlPlane);
    };
    if !is_updating(view) {
        return "The cluster is not updating.\n".to_owned();
    }
    let mut out = String::new();
    control_plane_block(&mut out, cp, view, now, details);

    let master_nodes = pool_nodes(view, MASTER);
    if !master_nodes.is_empty() {
        let sorted = sort_nodes(master_nodes);
        if sorted.iter().all(|n| phase(n) == Some(NodePhase::Updated)) {
            let version = sorted.first().map(|n| node_version(n)).unwrap_or_default();
            let _ = writeln!(
                out,
                "\nAll control plane nodes successfully updated to {version}"
            );
        } else {
            out.push_str("\nControl Plane Nodes\n");
            node_table(
                &mut out,
                &sorted,
                details,
                view.printed_nodes_only.then_some(&cp.nodes),
            );
        }
    }

    let pools = ordered_pools(view);
    if pools.iter().any(|(_, p)| p.nodes.total > 0) {
        out.push_str("\n= Worker Upgrade =\n\n");
        worker_pool_table(&mut out, &pools);
        for (name, pool) in &pools {
            let nodes = pool_nodes(view, name);
            if nodes.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\nWorker Pool Nodes: {name}");
            let counts = view.printed_nodes_only.then_some(&pool.nodes);
            node_table(&mut out, &sort_nodes(nodes), details, counts);
        }
    }

    out.push_str("\n= Update Health =\n");
    update_health(&mut out, cp, view, now, HealthView::of(details, related));
    out
}

/// B.1: the CV is progressing, or some worker pool with nodes is not fully updated.
pub fn is_updating(view: &View) -> bool {
    let cp_progressing = view.control_plane.as_ref().is_some_and(|cp| {
        condition(&cp.conditions, "Updating").is_some_and(|c| c.status == ConditionStatus::True)
    });
    let workers_outdated = view
        .worker_pools
        .iter()
        .any(|(_, p)| p.nodes.total > 0 && p.nodes.updated < p.nodes.total);
    cp_progressing || workers_outdated
}

pub(super) fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// `a − b` in nanoseconds.
fn elapsed(a: Timestamp, b: Timestamp) -> i128 {
    a.as_nanosecond() - b.as_nanosecond()
}

/// E.3's estimate text, or `None` when there is no estimate (`EstTimeToComplete == 0`).
pub fn estimate_text(cp: &ControlPlaneUpdateStatusStatus, now: Timestamp) -> Option<String> {
    let at = cp.estimated_completed_at?;
    let est = round_update_duration(elapsed(at, now));
    if est == 0 {
        return None;
    }
    Some(if cp.versions.multi_arch_migration {
        "N/A for Multi-Architecture Migration".to_owned()
    } else if est < -10 * MINUTE {
        let started = cp.started_at.unwrap_or(now);
        let est_duration = truncate(elapsed(at, started), MINUTE);
        format!(
            "N/A; estimate duration was {}",
            short_duration(est_duration)
        )
    } else if est < 10 * MINUTE {
        "<10m".to_owned()
    } else {
        short_duration(est)
    })
}

/// E.3.
fn control_plane_block(
    out: &mut String,
    cp: &ControlPlaneUpdateStatusStatus,
    view: &View,
    now: Timestamp,
    details: Details,
) {
    out.push_str("= Control Plane =\n");
    let ops = &cp.operators;
    if ops.updated == ops.total {
        completed_line(out, cp, now);
        return;
    }
    let (_, duration) = update_timing(cp, now);
    let _ = writeln!(out, "Assessment:      {}", cp.assessment.as_str());
    let _ = writeln!(
        out,
        "Target Version:  {}",
        target_version_display(&cp.versions)
    );
    if !ops.updating_names.is_empty() {
        let _ = writeln!(out, "Updating:        {}", ops.updating_names.join(", "));
    }
    let _ = writeln!(
        out,
        "Completion:      {}% ({} operators updated, {} updating, {} waiting)",
        cp.completion_percent, ops.updated, ops.updating, ops.waiting
    );
    let _ = write!(out, "Duration:        {}", short_duration(duration));
    if let Some(est) = estimate_text(cp, now) {
        let _ = write!(out, " (Est. Time Remaining: {est})");
    }
    out.push('\n');
    let _ = writeln!(out, "Operator Health: {}", operator_health_display(ops));

    updating_operators(out, cp, view, now, details);
}

/// E.3's "Updating Cluster Operators" table (`--details=operators`).
pub(super) fn updating_operators(
    out: &mut String,
    cp: &ControlPlaneUpdateStatusStatus,
    view: &View,
    now: Timestamp,
    details: Details,
) {
    let ops = &cp.operators;
    if details.operators() && !ops.updating_names.is_empty() {
        out.push_str("\nUpdating Cluster Operators\n");
        let mut table = String::from("NAME\tSINCE\tREASON\tMESSAGE\n");
        for name in &ops.updating_names {
            let updating = view
                .insights
                .iter()
                .find(|i| {
                    i.type_ == InsightType::Progress
                        && i.resource.kind == "ClusterOperator"
                        && &i.resource.name == name
                })
                .and_then(|i| i.progress.as_ref())
                .and_then(|p| condition(&p.conditions, "Updating"));
            let since = updating
                .and_then(|c| c.last_transition_time)
                .map_or_else(|| "-".to_owned(), |t| short_duration(elapsed(now, t)));
            let reason = match updating.map(|c| c.reason.as_str()) {
                Some(r) if !r.is_empty() => ellipsize(r, 20),
                _ => "-".to_owned(),
            };
            let message = updating.map(|c| c.message.as_str()).unwrap_or_default();
            let mut lines = message.split('\n');
            let first = lines.next().unwrap_or_default();
            let _ = writeln!(table, "{name}\t{since}\t{reason}\t{first}");
            for line in lines {
                let _ = writeln!(table, "\t\t\t{line}");
            }
        }
        out.push_str(&format_table(&table));
    }
}

/// When the control plane's update ended (`now` while it runs) and how long it took, rounded
/// as oc rounds it.
pub fn update_timing(cp: &ControlPlaneUpdateStatusStatus, now: Timestamp) -> (Timestamp, i128) {
    let end = cp.completed_at.unwrap_or(now);
    let duration = cp
        .started_at
        .map(|s| round_update_duration(elapsed(end, s)))
        .unwrap_or(0);
    (end, duration)
}

/// E.3's single line of a completed control-plane update.
pub(super) fn completed_line(
    out: &mut String,
    cp: &ControlPlaneUpdateStatusStatus,
    now: Timestamp,
) {
    let (end, duration) = update_timing(cp, now);
    let _ = writeln!(
        out,
        "Update to {} successfully completed at {} (duration: {})",
        cp.versions.target,
        rfc3339_seconds(end),
        short_duration(duration)
    );
}

/// Go's `time.RFC3339` of a UTC time: seconds precision, fraction truncated, `Z`.
fn rfc3339_seconds(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The worker pools in display order: the view's, which is the MachineConfigPool list order
/// (offline the file's, online by name, as an API server lists them); `oc` sorts nothing.
fn ordered_pools(view: &View) -> Vec<(&str, &WorkerPoolUpdateStatusStatus)> {
    view.worker_pools
        .iter()
        .map(|(n, p)| (n.as_str(), p))
        .collect()
}

/// Position of a pool in tie-breaking order: `master` first, then the worker pools in the
/// view's (list) order, unknown pools last by name.
fn pool_position<'a>(view: &View, pool: &'a str) -> (usize, &'a str) {
    if pool == MASTER_POOL {
        return (0, "");
    }
    view.worker_pools
        .iter()
        .position(|(n, _)| n == pool)
        .map_or((usize::MAX, pool), |i| (i + 1, ""))
}

/// The node progress insights of a pool (in input order).
fn pool_nodes<'a>(view: &'a View, pool: &str) -> Vec<&'a UpdateInsightStatus> {
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

fn phase(node: &UpdateInsightStatus) -> Option<NodePhase> {
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
fn node_version(node: &UpdateInsightStatus) -> String {
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
struct Omitted {
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
fn worker_pool_table(out: &mut String, pools: &[(&str, &WorkerPoolUpdateStatusStatus)]) {
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

/// Stable group order of a health insight (the contract's D.11 without an insertion index):
/// pool-scoped insights by pool (by node name, D.6 before D.7, the pool's own insight last),
/// then alerts, then control-plane insights (D.1/D.2, per operator D.3 before D.4, D.5).
fn health_group_key<'a>(
    view: &View,
    i: &'a UpdateInsightStatus,
) -> (u8, (usize, &'a str), u8, &'a str, u8) {
    let source = i.health.as_ref().map_or("", |h| h.source.as_str());
    let name = i.resource.name.as_str();
    if let Some(pool) = i.scope.pool.as_deref() {
        let (sub, rank) = match (i.resource.kind.as_str(), source) {
            ("Node", "NodeUnavailable") => (0, 0),
            ("Node", "NodeDegraded") => (0, 1),
            ("Node", _) => (0, 2),
            _ => (1, 0),
        };
        return (0, pool_position(view, pool), sub, name, rank);
    }
    if i.scope.type_ == ScopeType::Cluster {
        return (1, (0, ""), 0, name, 0);
    }
    let (sub, name, rank) = match source {
        "ClusterVersionNoFailing" | "ClusterVersionFailing" => (0, "", 0),
        "ClusterOperatorUnavailable" => (1, name, 0),
        "ClusterOperatorDegraded" => (1, name, 1),
        "PreviousUpdatePartial" => (2, "", 0),
        _ => (3, name, 0),
    };
    (2, (0, ""), sub, name, rank)
}

/// The health insights in display order, as `oc` sorts them (D.11): in input order
/// ([`health_group_key`]), Go's `sort.Slice` by start descending (unknown = oldest), then stably
/// by level descending. `sort.Slice` is not stable above 12 elements; its port keeps ties
/// exactly where oc puts them.
pub fn sorted_health(view: &View) -> Vec<&UpdateInsightStatus> {
    let mut health: Vec<&UpdateInsightStatus> = view
        .insights
        .iter()
        .filter(|i| i.type_ == InsightType::Health && i.health.is_some())
        .collect();
    health.sort_by(|a, b| health_group_key(view, a).cmp(&health_group_key(view, b)));
    let started = |i: &UpdateInsightStatus| i.health.as_ref().and_then(|h| h.started_at);
    go_sort_slice(&mut health, |a, b| started(a) > started(b));
    let level = |i: &UpdateInsightStatus| {
        i.health
            .as_ref()
            .map_or(ImpactLevel::Unknown, |h| h.impact.level)
    };
    health.sort_by_key(|i| Reverse(level(i)));
    health
}

/// The progress insights in a stable order: the ClusterVersion, ClusterOperators by name, then
/// nodes by pool (`master`, then the view's pool order) and name.
pub fn sorted_progress(view: &View) -> Vec<&UpdateInsightStatus> {
    let mut progress: Vec<&UpdateInsightStatus> = view
        .insights
        .iter()
        .filter(|i| i.type_ == InsightType::Progress)
        .collect();
    progress.sort_by(|a, b| progress_key(view, a).cmp(&progress_key(view, b)));
    progress
}

fn progress_key<'a>(
    view: &View,
    i: &'a UpdateInsightStatus,
) -> (Option<(usize, &'a str)>, u8, &'a str, &'a str) {
    let kind_rank = match i.resource.kind.as_str() {
        "ClusterVersion" => 0,
        "ClusterOperator" => 1,
        _ => 2,
    };
    (
        i.scope.pool.as_deref().map(|p| pool_position(view, p)),
        kind_rank,
        i.resource.kind.as_str(),
        i.resource.name.as_str(),
    )
}

/// SINCE of a health insight: `-` when unknown, else the elapsed time truncated to 1 s.
pub fn health_since(started_at: Option<Timestamp>, now: Timestamp) -> String {
    started_at.map_or_else(
        || "-".to_owned(),
        |t| short_duration(truncate(elapsed(now, t), SECOND)),
    )
}

/// How the Update Health section shows the health insights (`--details`, `--related`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HealthView {
    /// The compact table.
    Table,
    /// The detailed view (`--details=health|all`); with `related` (ours, `--related`) each
    /// insight also lists what it points at.
    Detailed {
        /// `--related`.
        related: bool,
    },
}

impl HealthView {
    /// The view `details` and `related` ask for.
    pub(super) fn of(details: Details, related: bool) -> Self {
        if details.health() {
            HealthView::Detailed { related }
        } else {
            HealthView::Table
        }
    }
}

/// E.6 (with D.10 when there is no health insight).
pub(super) fn update_health(
    out: &mut String,
    cp: &ControlPlaneUpdateStatusStatus,
    view: &View,
    now: Timestamp,
    shown: HealthView,
) {
    let health = sorted_health(view);
    if health.is_empty() {
        // D.10: since = now − (now − startedAt rounded to 1 s).
        let updating_for = cp.started_at.map_or(0, |s| round(elapsed(now, s), SECOND));
        let table = format!(
            "SINCE\tLEVEL\tIMPACT\tMESSAGE\n{}\tInfo\tNone\tUpdate is proceeding well\n",
            short_duration(updating_for)
        );
        out.push_str(&format_table(&table));
        return;
    }
    if let HealthView::Detailed { related } = shown {
        let entries: Vec<String> = health
            .iter()
            .map(|i| detailed_insight(i, now, related))
            .collect();
        out.push_str(&entries.join("\n"));
        return;
    }
    let mut table = String::from("SINCE\tLEVEL\tIMPACT\tMESSAGE\n");
    for i in &health {
        let Some(h) = i.health.as_ref() else { continue };
        let _ = writeln!(
            table,
            "{}\t{}\t{}\t{}",
            health_since(h.started_at, now),
            h.impact.level.as_str(),
            h.impact.type_.as_str(),
            h.impact.summary
        );
    }
    out.push_str(&format_table(&table));
    let single_info = health.len() == 1
        && health[0]
            .health
            .as_ref()
            .is_some_and(|h| h.impact.level == ImpactLevel::Info);
    if !single_info {
        out.push_str("\nRun with --details=health for additional description and links to related online documentation\n");
    }
}

/// `namespace/name`, or `name` for a cluster-scoped resource.
fn qualified_name(r: &ResourceRef) -> String {
    match r.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{}", r.name),
        _ => r.name.clone(),
    }
}

/// `kind` as oc names resources: `nodes`, `clusteroperators.config.openshift.io`.
fn resource_kind(r: &ResourceRef) -> String {
    let mut kind = r.kind.to_lowercase();
    kind.push('s');
    if !r.group.is_empty() {
        kind.push('.');
        kind.push_str(&r.group);
    }
    kind
}

/// One insight of the detailed health view (E.6), newline-terminated. `Resources` lists the
/// resource the insight is about, as oc does; with `related` (ours), a `Related` section then
/// lists what it points at, in its order (most telling first), and how many more there are.
fn detailed_insight(i: &UpdateInsightStatus, now: Timestamp, related: bool) -> String {
    let mut out = String::new();
    let Some(h) = i.health.as_ref() else {
        return out;
    };
    let label = |l: &str| format!("  {l:<DETAIL_LABEL_WIDTH$}");
    let _ = writeln!(out, "Message: {}", h.impact.summary);
    let _ = writeln!(
        out,
        "{}{}",
        label("Since:"),
        health_since(h.started_at, now)
    );
    let _ = writeln!(out, "{}{}", label("Level:"), h.impact.level.as_str());
    let _ = writeln!(out, "{}{}", label("Impact:"), h.impact.type_.as_str());
    let _ = writeln!(out, "{}{}", label("Reference:"), h.remediation.reference);
    let mut resources: BTreeMap<String, Vec<String>> = BTreeMap::new();
    resources
        .entry(resource_kind(&i.resource))
        .or_default()
        .push(qualified_name(&i.resource));
    out.push_str("  Resources:\n");
    // Kinds are right-aligned to the longest one of the insight (E.6: "left-padded").
    let width = resources.keys().map(|k| k.chars().count() + 1).max();
    for (kind, mut names) in resources {
        names.sort();
        names.dedup();
        let _ = writeln!(
            out,
            "    {:>w$} {}",
            format!("{kind}:"),
            names.join(", "),
            w = width.unwrap_or_default()
        );
    }
    if related && (!h.related.is_empty() || h.related_omitted > 0) {
        out.push_str("  Related:\n");
        for r in &h.related {
            let _ = writeln!(out, "    {}: {}", resource_kind(r), qualified_name(r));
        }
        if h.related_omitted > 0 {
            let _ = writeln!(out, "    (and {} more)", h.related_omitted);
        }
    }
    let indent = " ".repeat(DETAIL_LABEL_WIDTH + 2);
    let description = h.impact.description.replace('\n', &format!("\n{indent}, "));
    let _ = writeln!(out, "{}{description}", label("Description:"));
    out
}

#[cfg(test)]
mod tests;
