//! The Update Health section (E.6; oc's `health.go`): the health insights in oc's order (D.11),
//! as a table or the detailed view.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use jiff::Timestamp;
use update_status_api::crd::{
    ControlPlaneUpdateStatusStatus, ImpactLevel, InsightType, ResourceRef, ScopeType,
    UpdateInsightStatus,
};
use update_status_assess::format::{SECOND, round, short_duration, truncate};

use super::common::{Details, elapsed};
use super::order::pool_position;
use crate::show::gosort::go_sort_slice;
use crate::show::tabwriter::format_table;
use crate::show::view::View;

/// `len("Description: ")`: width of the labels of a detailed health insight (E.6).
const DETAIL_LABEL_WIDTH: usize = 13;

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
