//! Renders one hosted cluster (HyperShift) in the `oc adm upgrade status` layout: the Control
//! Plane section from the ControlPlaneUpdateStatus named after the HostedCluster, "Worker
//! Upgrade" listing the NodePools, a node table per NodePool (Nodes, or Machines that have no
//! Node yet), and Update Health. oc has no hosted mode: the differences from the standalone
//! layout are ours (see `docs/hosted.md`).

use std::fmt::Write as _;

use jiff::Timestamp;
use update_status_api::crd::{Assessment, ConditionStatus};
use update_status_assess::control_plane::{operator_health_display, target_version_display};
use update_status_assess::hosted::control_plane::{
    CONDITION_MANAGEMENT_SIDE_UPDATED, CONDITION_UPDATE_REQUESTED,
};

use update_status_assess::format::short_duration;

use super::common::{Details, condition};
use super::control_plane::{completed_line, estimate_text, update_timing, updating_operators};
use super::health::{HealthView, update_health};
use super::standalone::RenderError;
use super::worker_pools::{node_table, pool_members, pool_table, sort_nodes};
use crate::show::view::View;

/// Renders the hosted cluster `name` from `view` at `now`; with `related` each detailed health
/// insight also lists its `related` resources (`--related`).
pub fn render_with(
    name: &str,
    view: &View,
    now: Timestamp,
    details: Details,
    related: bool,
) -> String {
    let Some(cp) = view.control_plane.as_ref() else {
        return format!("{}\n", RenderError::NoControlPlane);
    };
    let cp_updating = condition(&cp.conditions, "Updating")
        .is_some_and(|c| c.status == ConditionStatus::True)
        || matches!(cp.assessment, Assessment::Pending | Assessment::Stalled);
    let pools_updating = view.worker_pools.iter().any(|(_, p)| {
        p.nodes.total > 0 && p.nodes.updated < p.nodes.total
            || matches!(p.assessment, Assessment::Degraded | Assessment::Progressing)
    });
    if !cp_updating && !pools_updating {
        return format!("The hosted cluster {name} is not updating.\n");
    }
    let mut out = String::new();
    control_plane_block(&mut out, cp, cp_updating, now);
    if cp.assessment != Assessment::Completed || cp_updating {
        updating_operators(&mut out, cp, view, now, details);
    }

    let pools: Vec<_> = view
        .worker_pools
        .iter()
        .map(|(n, p)| (n.as_str(), p))
        .collect();
    if !pools.is_empty() {
        out.push_str("\n= Worker Upgrade =\n\n");
        pool_table(&mut out, "NODEPOOL", &pools);
        for (pool, _) in &pools {
            // Nodes, and Machines that have no Node yet.
            let nodes = pool_members(view, pool, &["Node", "Machine"]);
            if nodes.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\nNodePool Nodes: {pool}");
            node_table(&mut out, &sort_nodes(nodes), details, None);
        }
    }

    out.push_str("\n= Update Health =\n");
    update_health(&mut out, cp, view, now, HealthView::of(details, related));
    out
}

/// The Control Plane section.
fn control_plane_block(
    out: &mut String,
    cp: &update_status_api::crd::ControlPlaneUpdateStatusStatus,
    updating: bool,
    now: Timestamp,
) {
    out.push_str("= Control Plane =\n");
    if !updating && cp.assessment == Assessment::Completed {
        completed_line(out, cp, now);
        return;
    }
    let (_, duration) = update_timing(cp, now);
    let ops = &cp.operators;
    let _ = writeln!(out, "Assessment:      {}", cp.assessment.as_str());
    let _ = writeln!(
        out,
        "Target Version:  {}",
        target_version_display(&cp.versions)
    );
    if let Some(r) = condition(&cp.conditions, CONDITION_UPDATE_REQUESTED) {
        let state = if r.status == ConditionStatus::True {
            "not yet accepted by the hosted cluster version operator"
        } else {
            "refused"
        };
        let _ = writeln!(out, "Requested:       {state} ({})", r.reason);
    }
    if !ops.updating_names.is_empty() {
        let _ = writeln!(out, "Updating:        {}", ops.updating_names.join(", "));
    }
    if ops.total > 0 {
        let _ = writeln!(
            out,
            "Completion:      {}% ({} operators updated, {} updating, {} waiting)",
            cp.completion_percent, ops.updated, ops.updating, ops.waiting
        );
    } else {
        out.push_str("Completion:      unknown (the hosted cluster's operators are not read)\n");
    }
    let _ = write!(out, "Duration:        {}", short_duration(duration));
    if let Some(est) = estimate_text(cp, now) {
        let _ = write!(out, " (Est. Time Remaining: {est})");
    }
    out.push('\n');
    if let Some(m) = condition(&cp.conditions, CONDITION_MANAGEMENT_SIDE_UPDATED) {
        let state = if m.status == ConditionStatus::True {
            "Updated"
        } else {
            "Updating"
        };
        let _ = writeln!(out, "Management Side: {state}");
    }
    if ops.total > 0 {
        let _ = writeln!(out, "Operator Health: {}", operator_health_display(ops));
    }
}
