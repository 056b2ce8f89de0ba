//! Renders update-status objects exactly like `oc adm upgrade status` (algorithms.md section E),
//! from the objects alone plus `now` (docs/assessment-contract.md says where each fact lives).
//!
//! The input is a [`View`]: the ControlPlaneUpdateStatus status, the WorkerPoolUpdateStatus
//! statuses and every UpdateInsight status of one cluster. Online they come from the API, offline
//! from the same pure logic the controller runs; the renderer cannot tell the difference.

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

use update_status_assess::control_plane::{
    operator_health_display, round_update_duration, target_version_display,
};
use update_status_assess::gosort::go_sort_slice;
use update_status_assess::nodes::MASTER_POOL;
use update_status_assess::order::node_sort_key;

use crate::duration::{MINUTE, SECOND, ellipsize, round, short_duration, truncate};
use crate::tabwriter::format_table;

/// Name of the control-plane pool.
const MASTER: &str = "master";
/// Rows of a node table that are always printed (C.12).
const ALWAYS_PRINTED_NODES: usize = 10;
/// `len("Description: ")`: width of the labels of a detailed health insight (E.6).
const DETAIL_LABEL_WIDTH: usize = 13;

/// What the renderer reads: the content of one cluster's update-status objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct View {
    /// The ControlPlaneUpdateStatus `.status` (`None`: there is none).
    pub control_plane: Option<ControlPlaneUpdateStatusStatus>,
    /// Every WorkerPoolUpdateStatus `.status` with its pool name, in any order.
    pub worker_pools: Vec<(String, WorkerPoolUpdateStatusStatus)>,
    /// Every UpdateInsight `.status` (progress and health), in any order.
    pub insights: Vec<UpdateInsightStatus>,
    /// The node progress insights are only those the compact node tables print (a selective
    /// read): the omitted-nodes footers subtract them from the statuses' node counts.
    pub printed_nodes_only: bool,
}

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
    fn health(self) -> bool {
        matches!(self, Details::All | Details::Health)
    }
}

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
pub fn render(view: &View, now: Timestamp, details: Details) -> String {
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
    update_health(&mut out, cp, view, now, details);
    out
}

/// B.1: the CV is progressing, or some worker pool with nodes is not fully updated.
fn is_updating(view: &View) -> bool {
    let cp_progressing = view.control_plane.as_ref().is_some_and(|cp| {
        condition(&cp.conditions, "Updating").is_some_and(|c| c.status == ConditionStatus::True)
    });
    let workers_outdated = view
        .worker_pools
        .iter()
        .any(|(_, p)| p.nodes.total > 0 && p.nodes.updated < p.nodes.total);
    cp_progressing || workers_outdated
}

fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// `a − b` in nanoseconds.
fn elapsed(a: Timestamp, b: Timestamp) -> i128 {
    a.as_nanosecond() - b.as_nanosecond()
}

/// E.3's estimate text, or `None` when there is no estimate (`EstTimeToComplete == 0`).
fn estimate_text(cp: &ControlPlaneUpdateStatusStatus, now: Timestamp) -> Option<String> {
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
    let end = cp.completed_at.unwrap_or(now);
    let duration = cp
        .started_at
        .map(|s| round_update_duration(elapsed(end, s)))
        .unwrap_or(0);
    if ops.updated == ops.total {
        let _ = writeln!(
            out,
            "Update to {} successfully completed at {} (duration: {})",
            cp.versions.target,
            rfc3339_seconds(end),
            short_duration(duration)
        );
        return;
    }
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
    view.insights
        .iter()
        .filter(|i| {
            i.type_ == InsightType::Progress
                && i.progress.is_some()
                && i.resource.kind == "Node"
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

fn sort_nodes(mut nodes: Vec<&UpdateInsightStatus>) -> Vec<&UpdateInsightStatus> {
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
fn node_table(
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
    let mut table = String::from("WORKER POOL\tASSESSMENT\tCOMPLETION\tSTATUS\n");
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
fn health_since(started_at: Option<Timestamp>, now: Timestamp) -> String {
    started_at.map_or_else(
        || "-".to_owned(),
        |t| short_duration(truncate(elapsed(now, t), SECOND)),
    )
}

/// E.6 (with D.10 when there is no health insight).
fn update_health(
    out: &mut String,
    cp: &ControlPlaneUpdateStatusStatus,
    view: &View,
    now: Timestamp,
    details: Details,
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
    if details.health() {
        let entries: Vec<String> = health.iter().map(|i| detailed_insight(i, now)).collect();
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

/// One insight of the detailed health view (E.6), newline-terminated.
fn detailed_insight(i: &UpdateInsightStatus, now: Timestamp) -> String {
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
    for r in std::iter::once(&i.resource).chain(h.related.iter()) {
        let name = match r.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => format!("{ns}/{}", r.name),
            _ => r.name.clone(),
        };
        resources.entry(resource_kind(r)).or_default().push(name);
    }
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
    let indent = " ".repeat(DETAIL_LABEL_WIDTH + 2);
    let description = h.impact.description.replace('\n', &format!("\n{indent}, "));
    let _ = writeln!(out, "{}{description}", label("Description:"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{
        ControlPlaneVersions, HealthCounts, HealthInsight, Impact, ImpactType, InsightScope,
        NodeCounts, OperatorCounts, ProgressInsight, Remediation, VersionPair,
    };

    fn ts(s: &str) -> Timestamp {
        s.parse()
            .unwrap_or_else(|e| panic!("bad test timestamp {s}: {e}"))
    }

    const NOW: &str = "2024-01-01T12:00:00Z";

    fn cond(type_: &str, status: ConditionStatus, reason: &str) -> Condition {
        Condition {
            type_: type_.to_owned(),
            status,
            reason: reason.to_owned(),
            ..Default::default()
        }
    }

    /// A progressing control plane: 10 of 20 operators, started 30 minutes before NOW.
    fn progressing_cp() -> ControlPlaneUpdateStatusStatus {
        ControlPlaneUpdateStatusStatus {
            assessment: Assessment::Progressing,
            versions: ControlPlaneVersions {
                target: "4.15.1".into(),
                previous: "4.15.0".into(),
                ..Default::default()
            },
            completion_percent: 50,
            started_at: Some(ts("2024-01-01T11:30:00Z")),
            completed_at: None,
            estimated_completed_at: Some(ts("2024-01-01T12:40:00Z")),
            operators: OperatorCounts {
                total: 20,
                updated: 10,
                updating: 1,
                waiting: 9,
                healthy: 20,
                updating_names: vec!["etcd".into()],
                ..Default::default()
            },
            nodes: NodeCounts::default(),
            health_insights: HealthCounts::default(),
            conditions: vec![cond(
                "Updating",
                ConditionStatus::True,
                "ClusterVersionProgressing",
            )],
        }
    }

    fn view(cp: ControlPlaneUpdateStatusStatus) -> View {
        View {
            control_plane: Some(cp),
            ..Default::default()
        }
    }

    fn node(
        pool: &str,
        name: &str,
        assessment: Assessment,
        phase: NodePhase,
    ) -> UpdateInsightStatus {
        let updating = matches!(
            phase,
            NodePhase::Draining | NodePhase::Updating | NodePhase::Rebooting
        );
        let mut conditions = vec![
            cond(
                "Updating",
                if updating {
                    ConditionStatus::True
                } else {
                    ConditionStatus::False
                },
                phase.as_str(),
            ),
            cond("Available", ConditionStatus::True, "AsExpected"),
            cond("Degraded", ConditionStatus::False, "AsExpected"),
        ];
        match assessment {
            Assessment::Unavailable => {
                conditions[1] = cond("Available", ConditionStatus::False, "Unavailable")
            }
            Assessment::Degraded => {
                conditions[2] = cond("Degraded", ConditionStatus::True, "Degraded")
            }
            _ => {}
        }
        UpdateInsightStatus {
            type_: InsightType::Progress,
            resource: ResourceRef {
                group: String::new(),
                kind: "Node".into(),
                name: name.into(),
                namespace: None,
            },
            scope: InsightScope {
                type_: if pool == MASTER {
                    ScopeType::ControlPlane
                } else {
                    ScopeType::WorkerPool
                },
                pool: Some(pool.into()),
            },
            progress: Some(ProgressInsight {
                assessment,
                phase: Some(phase),
                version: Some(VersionPair {
                    current: if phase == NodePhase::Updated {
                        "4.15.1".into()
                    } else {
                        "4.15.0".into()
                    },
                    target: "4.15.1".into(),
                }),
                estimate: match phase {
                    NodePhase::Draining => "+10m",
                    NodePhase::Updating | NodePhase::Rebooting => "+5m",
                    NodePhase::Updated | NodePhase::Paused => "-",
                    NodePhase::Pending => "?",
                }
                .into(),
                message: String::new(),
                since: None,
                conditions,
            }),
            health: None,
        }
    }

    fn health(
        kind: &str,
        name: &str,
        pool: Option<&str>,
        scope: ScopeType,
        source: &str,
        level: ImpactLevel,
        started_at: Option<&str>,
    ) -> UpdateInsightStatus {
        UpdateInsightStatus {
            type_: InsightType::Health,
            resource: ResourceRef {
                group: if kind == "Node" {
                    String::new()
                } else {
                    "config.openshift.io".into()
                },
                kind: kind.into(),
                name: name.into(),
                namespace: None,
            },
            scope: InsightScope {
                type_: scope,
                pool: pool.map(str::to_owned),
            },
            progress: None,
            health: Some(HealthInsight {
                started_at: started_at.map(ts),
                impact: Impact {
                    level,
                    type_: ImpactType::UpdateStalled,
                    summary: format!("{source} {name}"),
                    description: "line one\nline two".into(),
                },
                remediation: Remediation {
                    reference: "https://example.com/runbook".into(),
                },
                related: Vec::new(),
                source: source.into(),
            }),
        }
    }

    /// [`progressing_cp`] with every operator updated: what is left is the nodes.
    fn operators_updated_cp() -> ControlPlaneUpdateStatusStatus {
        let mut cp = progressing_cp();
        cp.operators.updated = 20;
        cp.operators.updating_names.clear();
        cp
    }

    /// A health insight about a ClusterOperator.
    fn operator_health(
        name: &str,
        source: &str,
        level: ImpactLevel,
        since: &str,
    ) -> UpdateInsightStatus {
        let scope = ScopeType::ControlPlane;
        health(
            "ClusterOperator",
            name,
            None,
            scope,
            source,
            level,
            Some(since),
        )
    }

    /// A `NodeDegraded` health insight (no start time).
    fn node_degraded(name: &str, pool: &str, scope: ScopeType) -> UpdateInsightStatus {
        let level = ImpactLevel::Error;
        health("Node", name, Some(pool), scope, "NodeDegraded", level, None)
    }

    fn pool_status(total: u32, updated: u32) -> WorkerPoolUpdateStatusStatus {
        WorkerPoolUpdateStatusStatus {
            assessment: if updated == total {
                Assessment::Completed
            } else {
                Assessment::Progressing
            },
            completion_percent: (updated * 100).checked_div(total).unwrap_or(0),
            nodes: NodeCounts {
                total,
                updated,
                outdated: total - updated,
                available: total,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn section<'a>(out: &'a str, start: &str) -> &'a str {
        let from = out
            .find(start)
            .unwrap_or_else(|| panic!("no {start:?} in:\n{out}"));
        &out[from..]
    }

    #[test]
    fn details_parse_and_oc_error_text() {
        assert_eq!("all".parse::<Details>(), Ok(Details::All));
        assert_eq!("health".parse::<Details>(), Ok(Details::Health));
        let err = "everything".parse::<Details>().expect_err("invalid");
        assert_eq!(
            err.to_string(),
            "invalid value for --details: everything (must be one of none, all, nodes, health, operators)"
        );
    }

    #[test]
    fn not_updating_gate() {
        let mut cp = progressing_cp();
        cp.conditions = vec![cond(
            "Updating",
            ConditionStatus::False,
            "ClusterVersionNotProgressing",
        )];
        let mut v = view(cp);
        let now = ts(NOW);
        assert_eq!(
            render(&v, now, Details::All),
            "The cluster is not updating.\n"
        );
        // A completed worker pool and an empty one keep it "not updating".
        v.worker_pools.push(("worker".into(), pool_status(3, 3)));
        v.worker_pools.push(("empty".into(), pool_status(0, 0)));
        assert_eq!(
            render(&v, now, Details::None),
            "The cluster is not updating.\n"
        );
        // An outdated worker pool makes it updating even though the CV is not progressing.
        v.worker_pools.push(("infra".into(), pool_status(2, 1)));
        let out = render(&v, now, Details::None);
        assert!(out.starts_with("= Control Plane =\n"), "{out}");
    }

    #[test]
    fn missing_progressing_is_an_error() {
        let mut cp = progressing_cp();
        cp.conditions = vec![cond(
            "Updating",
            ConditionStatus::Unknown,
            "NoProgressingCondition",
        )];
        let v = view(cp);
        assert_eq!(check(&v), Err(RenderError::NoProgressingInfo));
        assert_eq!(
            render(&v, ts(NOW), Details::None),
            "no current Progressing info, see `oc describe clusterversion` for more details.\n"
        );
        assert_eq!(check(&View::default()), Err(RenderError::NoControlPlane));
    }

    #[test]
    fn in_progress_control_plane_block() {
        let v = view(progressing_cp());
        let out = render(&v, ts(NOW), Details::None);
        let expected = "= Control Plane =
Assessment:      Progressing
Target Version:  4.15.1 (from 4.15.0)
Updating:        etcd
Completion:      50% (10 operators updated, 1 updating, 9 waiting)
Duration:        30m (Est. Time Remaining: 40m)
Operator Health: 20 Healthy

= Update Health =
SINCE   LEVEL   IMPACT   MESSAGE
30m     Info    None     Update is proceeding well
";
        assert_eq!(out, expected);
    }

    #[test]
    fn completed_control_plane_block() {
        let mut cp = operators_updated_cp();
        cp.assessment = Assessment::Completed;
        cp.started_at = Some(ts("2024-01-01T08:11:02Z"));
        cp.completed_at = Some(ts("2024-01-01T11:42:58.5Z"));
        cp.estimated_completed_at = None;
        cp.conditions = vec![cond(
            "Updating",
            ConditionStatus::False,
            "ClusterVersionNotProgressing",
        )];
        let mut v = view(cp);
        v.worker_pools.push(("worker".into(), pool_status(2, 1)));
        v.insights.push(node(
            MASTER,
            "master-0",
            Assessment::Completed,
            NodePhase::Updated,
        ));
        v.insights.push(node(
            "worker",
            "worker-a",
            Assessment::Outdated,
            NodePhase::Pending,
        ));
        v.insights.push(node(
            "worker",
            "worker-b",
            Assessment::Completed,
            NodePhase::Updated,
        ));
        let out = render(&v, ts(NOW), Details::Operators);
        let expected = "= Control Plane =
Update to 4.15.1 successfully completed at 2024-01-01T11:42:58Z (duration: 3h32m)

All control plane nodes successfully updated to 4.15.1

= Worker Upgrade =

WORKER POOL   ASSESSMENT    COMPLETION   STATUS
worker        Progressing   50% (1/2)    2 Available, 0 Progressing, 0 Draining

Worker Pool Nodes: worker
NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE
worker-a   Outdated     Pending   4.15.0    ?     
worker-b   Completed    Updated   4.15.1    -     

= Update Health =
SINCE      LEVEL   IMPACT   MESSAGE
3h48m58s   Info    None     Update is proceeding well
";
        assert_eq!(out, expected);
    }

    fn estimate_for(mut cp: ControlPlaneUpdateStatusStatus, est: &str) -> Option<String> {
        let now = ts(NOW);
        let est = crate::duration::parse_go_duration(est).expect("test duration");
        let at = Timestamp::from_nanosecond(now.as_nanosecond() + est).expect("in range");
        cp.estimated_completed_at = Some(at);
        estimate_text(&cp, now)
    }

    #[test]
    fn estimate_texts() {
        let cp = progressing_cp();
        assert_eq!(estimate_for(cp.clone(), "1h25m"), Some("1h25m".into()));
        assert_eq!(estimate_for(cp.clone(), "10m"), Some("10m".into()));
        assert_eq!(estimate_for(cp.clone(), "9m59s"), Some("<10m".into()));
        assert_eq!(estimate_for(cp.clone(), "-5m"), Some("<10m".into()));
        assert_eq!(estimate_for(cp.clone(), "-10m"), Some("<10m".into()));
        // Started 30m ago, estimated end 10m1s ago: the estimated duration was
        // (updatingFor + est) = 19m59s, truncated to minutes.
        assert_eq!(
            estimate_for(cp.clone(), "-10m1s"),
            Some("N/A; estimate duration was 19m".into())
        );
        assert_eq!(estimate_for(cp.clone(), "0s"), None);
        let mut no_estimate = cp.clone();
        no_estimate.estimated_completed_at = None;
        assert_eq!(estimate_text(&no_estimate, ts(NOW)), None);
        let mut multi = cp;
        multi.versions.multi_arch_migration = true;
        assert_eq!(
            estimate_for(multi.clone(), "-1h"),
            Some("N/A for Multi-Architecture Migration".into())
        );
        let out = render(&view(multi), ts(NOW), Details::None);
        assert!(
            out.contains("\nTarget Version:  4.15.1 to Multi-Architecture\n"),
            "{out}"
        );
    }

    #[test]
    fn estimate_is_rounded_like_oc() {
        // 1h24m40s left → rounded to the minute above 10 minutes.
        assert_eq!(
            estimate_for(progressing_cp(), "1h24m40s"),
            Some("1h25m".into())
        );
    }

    #[test]
    fn target_version_and_operator_health_lines() {
        let mut cp = progressing_cp();
        cp.versions.previous_partial = true;
        cp.operators.healthy = 17;
        cp.operators.unavailable = 1;
        cp.operators.degraded = 2;
        let out = render(&view(cp.clone()), ts(NOW), Details::None);
        assert!(
            out.contains("\nTarget Version:  4.15.1 (from incomplete 4.15.0)\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "\nOperator Health: 17 Healthy, 1 Unavailable, 2 Available but degraded\n"
            ),
            "{out}"
        );
        cp.versions = ControlPlaneVersions {
            target: "4.15.1".into(),
            installation: true,
            ..Default::default()
        };
        let out = render(&view(cp), ts(NOW), Details::None);
        assert!(
            out.contains("\nTarget Version:  4.15.1 (a new install)\n"),
            "{out}"
        );
    }

    #[test]
    fn operators_table_with_multi_line_message_and_long_reason() {
        let mut v = view(progressing_cp());
        v.insights.push(UpdateInsightStatus {
            type_: InsightType::Progress,
            resource: ResourceRef {
                group: "config.openshift.io".into(),
                kind: "ClusterOperator".into(),
                name: "etcd".into(),
                namespace: None,
            },
            scope: InsightScope::default(),
            progress: Some(ProgressInsight {
                assessment: Assessment::Updating,
                conditions: vec![Condition {
                    type_: "Updating".into(),
                    status: ConditionStatus::True,
                    reason: "NodeInstaller::PerhapsTooLong".into(),
                    message: "first\nsecond".into(),
                    last_transition_time: Some(ts("2024-01-01T11:58:00.4Z")),
                }],
                ..Default::default()
            }),
            health: None,
        });
        let out = render(&v, ts(NOW), Details::Operators);
        let table = section(&out, "\nUpdating Cluster Operators\n");
        assert!(
            table.starts_with(
                "\nUpdating Cluster Operators
NAME   SINCE   REASON                 MESSAGE
etcd   1m59s   NodeInstaller::Pe...   first
                                      second

"
            ),
            "{table}"
        );
        // Not shown without --details=operators.
        let out = render(&v, ts(NOW), Details::Nodes);
        assert!(!out.contains("Updating Cluster Operators"), "{out}");
    }

    #[test]
    fn node_sorting_follows_c9() {
        let nodes = [
            node(
                "worker",
                "a-completed",
                Assessment::Completed,
                NodePhase::Updated,
            ),
            node(
                "worker",
                "b-outdated",
                Assessment::Outdated,
                NodePhase::Pending,
            ),
            node(
                "worker",
                "c-excluded",
                Assessment::Excluded,
                NodePhase::Paused,
            ),
            node(
                "worker",
                "d-reboot",
                Assessment::Progressing,
                NodePhase::Rebooting,
            ),
            node(
                "worker",
                "e-drain",
                Assessment::Progressing,
                NodePhase::Draining,
            ),
            node(
                "worker",
                "f-unavail",
                Assessment::Unavailable,
                NodePhase::Updated,
            ),
            node(
                "worker",
                "g-degraded",
                Assessment::Degraded,
                NodePhase::Pending,
            ),
            node(
                "worker",
                "a-degraded",
                Assessment::Degraded,
                NodePhase::Pending,
            ),
            node(
                "worker",
                "h-degraded",
                Assessment::Degraded,
                NodePhase::Draining,
            ),
        ];
        let sorted = sort_nodes(nodes.iter().collect());
        let names: Vec<&str> = sorted.iter().map(|n| n.resource.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "h-degraded",
                "a-degraded",
                "g-degraded",
                "f-unavail",
                "e-drain",
                "d-reboot",
                "c-excluded",
                "b-outdated",
                "a-completed"
            ]
        );
    }

    #[test]
    fn node_omission_footer_counts() {
        let mut v = view(operators_updated_cp());
        let mut nodes = Vec::new();
        // 10 draining nodes fill the always-printed rows (sorted before the q* ones by name).
        for i in 0..10 {
            nodes.push(node(
                "worker",
                &format!("p{i:02}"),
                Assessment::Progressing,
                NodePhase::Draining,
            ));
        }
        // Omitted: 2 draining, 1 paused, 3 pending, 4 completed.
        for i in 0..2 {
            nodes.push(node(
                "worker",
                &format!("q{i}"),
                Assessment::Progressing,
                NodePhase::Draining,
            ));
        }
        nodes.push(node(
            "worker",
            "r0",
            Assessment::Excluded,
            NodePhase::Paused,
        ));
        for i in 0..3 {
            nodes.push(node(
                "worker",
                &format!("s{i}"),
                Assessment::Outdated,
                NodePhase::Pending,
            ));
        }
        for i in 0..4 {
            nodes.push(node(
                "worker",
                &format!("t{i}"),
                Assessment::Completed,
                NodePhase::Updated,
            ));
        }
        // An unavailable updating node (not interesting) is omitted and not available.
        let mut unavailable_updating =
            node("worker", "u0", Assessment::Progressing, NodePhase::Updating);
        if let Some(p) = unavailable_updating.progress.as_mut() {
            p.conditions[1] = cond("Available", ConditionStatus::False, "Unavailable");
        }
        nodes.push(unavailable_updating);
        v.insights = nodes;
        v.worker_pools.push(("worker".into(), pool_status(21, 4)));
        let out = render(&v, ts(NOW), Details::None);
        let footer = "...\nOmitted additional 11 Total, 4 Completed, 10 Available, 3 Progressing, 7 Outdated, 2 Draining, 1 Excluded, and 0 Degraded nodes.\nPass along --details=nodes to see all information.\n";
        assert!(out.contains(footer), "{out}");
        assert!(out.contains("\np09 "), "{out}");
        assert!(!out.contains("\nq0 "), "{out}");
        let all = render(&v, ts(NOW), Details::Nodes);
        assert!(!all.contains("Omitted"), "{all}");
        assert!(all.contains("\nt3 "), "{all}");

        // A selective read: only the 10 printed nodes, the footer from the pool's counts.
        let mut selective = v.clone();
        selective.printed_nodes_only = true;
        selective
            .insights
            .retain(|i| i.resource.name.starts_with('p'));
        let mut pool = pool_status(21, 4);
        pool.nodes = NodeCounts {
            total: 21,
            available: 20,
            draining: 12,
            excluded: 1,
            completed: Some(4),
            assessed_progressing: Some(13),
            ..Default::default()
        };
        selective.worker_pools = vec![("worker".into(), pool)];
        let sel = render(&selective, ts(NOW), Details::None);
        assert_eq!(
            sel.split_once("= Update Health =")
                .map(|(a, _)| a.split_once("Worker Pool Nodes").map(|(_, b)| b.to_owned())),
            out.split_once("= Update Health =")
                .map(|(a, _)| a.split_once("Worker Pool Nodes").map(|(_, b)| b.to_owned())),
            "selective:\n{sel}\nfull:\n{out}"
        );
        assert!(sel.contains(footer), "{sel}");
    }

    #[test]
    fn interesting_nodes_beyond_row_ten_are_printed() {
        let mut v = view(operators_updated_cp());
        use Assessment::{Degraded, Outdated, Unavailable};
        use NodePhase::{Draining, Pending};
        let mut add = |name: &str, assessment, phase| {
            v.insights.push(node("worker", name, assessment, phase));
        };
        for i in 0..12 {
            add(&format!("d{i:02}"), Degraded, Draining);
        }
        for i in 0..2 {
            add(&format!("u{i}"), Unavailable, Pending);
        }
        add("z-pending", Outdated, Pending);
        v.worker_pools.push(("worker".into(), pool_status(15, 0)));
        let out = render(&v, ts(NOW), Details::None);
        assert!(out.contains("\nd11 "), "{out}");
        assert!(out.contains("\nu1 "), "{out}");
        assert!(!out.contains("z-pending"), "{out}");
        assert!(out.contains("Omitted additional 1 Total, 0 Completed, 1 Available, 0 Progressing, 1 Outdated, 0 Draining, 0 Excluded, and 0 Degraded nodes."), "{out}");
    }

    #[test]
    fn node_name_substitution_needs_eight_bytes() {
        let mut v = view(operators_updated_cp());
        let mut long = node(
            "worker",
            "worker-1",
            Assessment::Degraded,
            NodePhase::Draining,
        );
        let mut short = node("worker", "wkr-2", Assessment::Degraded, NodePhase::Draining);
        for (n, name) in [(&mut long, "worker-1"), (&mut short, "wkr-2")] {
            if let Some(p) = n.progress.as_mut() {
                p.message = format!("failed to drain node: {name} after 1 hour ({name})");
            }
        }
        v.insights = vec![long, short];
        v.worker_pools.push(("worker".into(), pool_status(2, 0)));
        let out = render(&v, ts(NOW), Details::None);
        assert!(
            out.contains("failed to drain node: <node> after 1 hour (<node>)"),
            "{out}"
        );
        assert!(
            out.contains("failed to drain node: wkr-2 after 1 hour (wkr-2)"),
            "{out}"
        );
    }

    #[test]
    fn health_sorting_and_hint_line() {
        let mut v = view(progressing_cp());
        use ImpactLevel::{Error, Warning};
        const DEGRADED: &str = "ClusterOperatorDegraded";
        const AT_11: &str = "2024-01-01T11:00:00Z";
        v.insights = vec![
            health(
                "ClusterVersion",
                "version",
                None,
                ScopeType::ControlPlane,
                "ClusterVersionFailing",
                Warning,
                Some("2024-01-01T12:00:00Z"),
            ),
            operator_health("kube-scheduler", DEGRADED, Error, AT_11),
            operator_health("etcd", DEGRADED, Error, AT_11),
            operator_health("etcd", "ClusterOperatorUnavailable", Error, AT_11),
            operator_health("dns", DEGRADED, Error, "2024-01-01T11:30:00Z"),
            node_degraded("b-node", "worker", ScopeType::WorkerPool),
            node_degraded("a-node", "infra", ScopeType::WorkerPool),
            node_degraded("m-node", "master", ScopeType::ControlPlane),
            health(
                "Alert",
                "NodeDown",
                None,
                ScopeType::Cluster,
                "Alert",
                Warning,
                Some("2024-01-01T12:00:00Z"),
            ),
        ];
        // Tied pools follow the list order (here `worker` listed before `infra`).
        v.worker_pools = vec![
            ("worker".into(), pool_status(1, 0)),
            ("infra".into(), pool_status(1, 0)),
        ];
        let out = render(&v, ts(NOW), Details::None);
        let expected = "= Update Health =
SINCE   LEVEL     IMPACT           MESSAGE
30m     Error     Update Stalled   ClusterOperatorDegraded dns
1h      Error     Update Stalled   ClusterOperatorUnavailable etcd
1h      Error     Update Stalled   ClusterOperatorDegraded etcd
1h      Error     Update Stalled   ClusterOperatorDegraded kube-scheduler
-       Error     Update Stalled   NodeDegraded m-node
-       Error     Update Stalled   NodeDegraded b-node
-       Error     Update Stalled   NodeDegraded a-node
now     Warning   Update Stalled   Alert NodeDown
now     Warning   Update Stalled   ClusterVersionFailing version

Run with --details=health for additional description and links to related online documentation
";
        assert_eq!(section(&out, "= Update Health ="), expected);
    }

    #[test]
    fn hint_line_rule() {
        let now = ts(NOW);
        let one = |level| {
            let mut v = view(progressing_cp());
            v.insights = vec![health(
                "ClusterVersion",
                "version",
                None,
                ScopeType::ControlPlane,
                "PreviousUpdatePartial",
                level,
                Some("2024-01-01T11:30:00Z"),
            )];
            render(&v, now, Details::None)
        };
        let hint = "\nRun with --details=health";
        assert!(!one(ImpactLevel::Info).contains(hint));
        assert!(one(ImpactLevel::Warning).contains(hint));
        let mut v = view(progressing_cp());
        let info = health(
            "ClusterVersion",
            "version",
            None,
            ScopeType::ControlPlane,
            "PreviousUpdatePartial",
            ImpactLevel::Info,
            None,
        );
        v.insights = vec![info.clone(), info];
        assert!(render(&v, now, Details::None).contains(hint));
        // Detailed health view: no hint.
        assert!(!render(&v, now, Details::Health).contains(hint));
    }

    #[test]
    fn all_is_well_is_synthesised_and_never_detailed() {
        let mut cp = progressing_cp();
        cp.started_at = Some(ts("2024-01-01T11:45:55.6Z"));
        let v = view(cp);
        let expected_tail = "= Update Health =
SINCE   LEVEL   IMPACT   MESSAGE
14m4s   Info    None     Update is proceeding well
";
        for details in [Details::None, Details::All, Details::Health] {
            let out = render(&v, ts(NOW), details);
            assert_eq!(section(&out, "= Update Health ="), expected_tail);
        }
    }

    #[test]
    fn detailed_health_view() {
        let mut v = view(progressing_cp());
        let mut node_insight = node_degraded("worker-1", "worker", ScopeType::WorkerPool);
        if let Some(h) = node_insight.health.as_mut() {
            h.related.push(ResourceRef {
                group: "machineconfiguration.openshift.io".into(),
                kind: "MachineConfigPool".into(),
                name: "worker".into(),
                namespace: None,
            });
        }
        v.insights = vec![
            node_insight,
            operator_health(
                "etcd",
                "ClusterOperatorDegraded",
                ImpactLevel::Warning,
                "2024-01-01T11:58:47Z",
            ),
        ];
        let out = render(&v, ts(NOW), Details::Health);
        let expected = "= Update Health =
Message: NodeDegraded worker-1
  Since:       -
  Level:       Error
  Impact:      Update Stalled
  Reference:   https://example.com/runbook
  Resources:
    machineconfigpools.machineconfiguration.openshift.io: worker
                                                   nodes: worker-1
  Description: line one
               , line two

Message: ClusterOperatorDegraded etcd
  Since:       1m13s
  Level:       Warning
  Impact:      Update Stalled
  Reference:   https://example.com/runbook
  Resources:
    clusteroperators.config.openshift.io: etcd
  Description: line one
               , line two
";
        assert_eq!(section(&out, "= Update Health ="), expected);
    }

    #[test]
    fn pools_table_in_list_order_and_empty_pool() {
        let mut v = view(operators_updated_cp());
        let mut degraded = pool_status(59, 22);
        degraded.assessment = Assessment::Degraded;
        degraded.completion_percent = 37;
        degraded.nodes.available = 44;
        degraded.nodes.progressing = 5;
        degraded.nodes.draining = 12;
        degraded.nodes.degraded = 7;
        degraded.nodes.excluded = 1;
        let mut empty = pool_status(0, 0);
        empty.assessment = Assessment::Empty;
        v.worker_pools = vec![
            ("zbeast".into(), empty),
            ("infra".into(), pool_status(2, 2)),
            ("worker".into(), degraded),
        ];
        let out = render(&v, ts(NOW), Details::None);
        let expected = "
= Worker Upgrade =

WORKER POOL   ASSESSMENT   COMPLETION    STATUS
zbeast        Empty                      0 Total
infra         Completed    100% (2/2)    2 Available, 0 Progressing, 0 Draining
worker        Degraded     37% (22/59)   44 Available, 5 Progressing, 12 Draining, 1 Excluded, 7 Degraded

= Update Health =
";
        assert!(out.contains(expected), "{out}");
    }
}
