//! Offline mode: analyse a captured cluster (a folder in the `testdata/oc-status`
//! layout) with the controller's pure logic, then render it like the online objects.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use update_status_api::snapshot::{Snapshot, SnapshotError, SnapshotWarning};
use update_status_assess::{ClusterAssessment, ClusterInputs, assess_cluster_nodes};

use crate::escape::{self, Newlines};
use crate::render::View;

/// What can go wrong in offline mode.
#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    /// The snapshot could not be read (the text names the file).
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// No `--now`, no `now` file, and no condition timestamp to derive it from.
    #[error(
        "{dir}: cannot tell the instant to evaluate the snapshot at (no `now` file and no ClusterVersion or ClusterOperator condition with a lastTransitionTime); pass --now <RFC3339>"
    )]
    NoNow {
        /// The snapshot folder.
        dir: PathBuf,
    },
}

/// Reads the snapshot in `dir` and assesses it at `now`: the `--now` value when given, else
/// the snapshot's `now` file, else [`Snapshot::derived_now`]. Returns the view and the instant
/// used.
pub fn load(dir: &Path, now: Option<Timestamp>) -> Result<(View, Timestamp), OfflineError> {
    let mut snap = Snapshot::from_dir(dir)?;
    for warning in &snap.warnings {
        let text = warning.to_string();
        let text = escape::text(&text, Newlines::Escape);
        match warning {
            // oc's own note, word for word where it is fixed (oc prints it bare).
            SnapshotWarning::Alerts { .. } => eprintln!("{text}"),
            SnapshotWarning::Duplicate { .. } => eprintln!("warning: {text}"),
        }
    }
    let now = now
        .or(snap.now)
        .or_else(|| snap.derived_now())
        .ok_or_else(|| OfflineError::NoNow {
            dir: dir.to_path_buf(),
        })?;
    // The Nodes are most of a large capture: they are handed over to the assessment, which
    // drops each one once assessed, so they are never all alive next to all their insights.
    let nodes = std::mem::take(&mut snap.nodes);
    let inputs = ClusterInputs::from_snapshot(&snap);
    Ok((view_of(assess_cluster_nodes(&inputs, nodes, now)), now))
}

/// Runs the pure assessment on a snapshot left whole (the property tests).
#[cfg(test)]
pub fn assess(snap: &Snapshot, now: Timestamp) -> View {
    view_of(update_status_assess::assess_cluster(
        &ClusterInputs::from_snapshot(snap),
        now,
    ))
}

fn view_of(assessment: ClusterAssessment) -> View {
    View {
        control_plane: assessment.control_plane,
        worker_pools: assessment.worker_pools,
        insights: assessment.insights,
        printed_nodes_only: false,
    }
}

#[cfg(test)]
mod proptests;
