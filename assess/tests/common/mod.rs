//! Helpers shared by the fixture tests (each test binary uses some of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use update_status_assess::ClusterInputs;
use update_status_snapshot::Snapshot;
use update_status_testdata::oc_status_cases as fixture_cases;

/// The case folders of the fixtures: at least the 8 of `testdata/oc-status`.
pub fn fixture_dirs() -> Vec<PathBuf> {
    let dirs = fixture_cases();
    assert!(
        dirs.len() >= 8,
        "expected at least 8 fixtures, saw {}",
        dirs.len()
    );
    dirs
}

/// Reads a fixture and the instant its expected outputs were computed at (its `now` file).
pub fn load_case(dir: &Path) -> (Snapshot, Timestamp) {
    let snap = Snapshot::from_dir(dir).unwrap_or_else(|e| panic!("{e}"));
    let now = snap
        .now
        .unwrap_or_else(|| panic!("{}: every fixture has a now file", dir.display()));
    (snap, now)
}

/// The inputs a snapshot holds, without its alerts.
pub fn inputs(snap: &Snapshot) -> ClusterInputs<'_> {
    ClusterInputs {
        alerts: None,
        ..snap.inputs()
    }
}
