//! Offline mode: analyse a captured cluster (a folder in the `testdata/oc-status`
//! layout) with the controller's pure logic, then render it like the online objects.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use update_status_assess::{ClusterAssessment, assess_cluster_nodes};
use update_status_snapshot::{Snapshot, SnapshotError, SnapshotWarning};

use crate::show::escape::{self, Newlines};
use crate::show::view::View;

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
    let inputs = snap.inputs();
    Ok((view_of(assess_cluster_nodes(&inputs, nodes, now)), now))
}

/// Runs the pure assessment on a snapshot left whole (the property tests).
#[cfg(test)]
pub fn assess(snap: &Snapshot, now: Timestamp) -> View {
    view_of(update_status_assess::assess_cluster(&snap.inputs(), now))
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

#[cfg(test)]
mod tests {
    use update_status_assess::compose;
    use update_status_simulator::{FaultSpec, Faults, SimConfig, Simulation};

    use super::*;

    /// The offline path as the CLI runs it ([`load`]: the snapshot read from its files, large
    /// JSON as it streams, the Nodes handed over and dropped as assessed) gives exactly the
    /// statuses of the desired objects ([`compose::desired_cluster`] on the same snapshot read
    /// whole), at every few steps of simulated updates: one with faults (a paused pool, a node
    /// not ready, a blocked drain, a degraded operator), one with 603 nodes (a `nodes.yaml` of
    /// over 1 MiB, read as it streams).
    #[test]
    fn simulated_snapshots_give_the_desired_statuses() {
        let faulty = SimConfig {
            operators: 8,
            pools: 3,
            masters: 3,
            nodes_per_pool: 8,
            max_unavailable: 2,
            faults: Faults {
                paused_pool: Some(FaultSpec::auto(4)),
                not_ready_node: Some(FaultSpec::auto(8)),
                blocked_drain: Some(FaultSpec::auto(3)),
                degraded_operator: Some(FaultSpec::auto(3)),
                ..Default::default()
            },
            ..Default::default()
        };
        let large = SimConfig {
            operators: 34,
            pools: 5,
            masters: 3,
            nodes_per_pool: 150,
            max_unavailable: 8,
            ..Default::default()
        };
        let dir = std::env::temp_dir().join(format!("us-offline-sim-{}", std::process::id()));
        let (mut checked, mut streamed) = (0, 0);
        for (config, every) in [(faulty, 3), (large, 10)] {
            let mut sim = Simulation::new(config).expect("simulation");
            for step in 0..400 {
                if step % every == 0 || sim.is_completed() {
                    std::fs::remove_dir_all(&dir).ok();
                    sim.write_snapshot(&dir).expect("snapshot");
                    let (view, now) = load(&dir, None).expect("offline load");
                    let snap = Snapshot::from_dir(&dir).expect("snapshot read");
                    let want = ClusterAssessment::from(compose::desired_cluster(
                        &snap.inputs(),
                        &compose::Existing::default(),
                        &compose::Labels::new(),
                        now,
                    ));
                    assert_eq!(now, sim.now());
                    assert_eq!(view.control_plane, want.control_plane, "step {step}");
                    assert_eq!(view.worker_pools, want.worker_pools, "step {step}");
                    assert_eq!(view.insights, want.insights, "step {step}");
                    checked += 1;
                    let size = std::fs::metadata(dir.join("nodes.yaml")).map_or(0, |m| m.len());
                    streamed += usize::from(size >= 1024 * 1024);
                }
                if sim.is_completed() {
                    break;
                }
                sim.step();
            }
            assert!(sim.is_completed(), "the update completes");
        }
        std::fs::remove_dir_all(&dir).ok();
        assert!(checked > 10, "{checked}");
        assert!(streamed > 0, "no nodes.yaml of 1 MiB or more");
    }
}
