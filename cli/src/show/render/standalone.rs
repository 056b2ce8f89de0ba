//! The standalone cluster's text, exactly as `oc adm upgrade status` prints it (algorithms.md
//! section E; oc's `status.go`): whether it can be rendered, whether the cluster is updating, and
//! the sections in order ([`super::control_plane`], [`super::worker_pools`], [`super::health`]).

use std::fmt::Write as _;

use jiff::Timestamp;
use update_status_api::crd::{ConditionStatus, NodePhase};

use super::common::{Details, condition};
use super::control_plane::control_plane_block;
use super::health::{HealthView, update_health};
use super::worker_pools::{
    node_table, node_version, ordered_pools, phase, pool_nodes, sort_nodes, worker_pool_table,
};
use crate::show::view::View;

/// Name of the control-plane pool.
pub(super) const MASTER: &str = "master";

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

/// `render` (the tests' entry), and with `related` (ours, not oc's: `--related`) each health
/// insight of the detailed Update Health view also lists what it points at (its `related`
/// resources).
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

#[cfg(test)]
mod tests;
