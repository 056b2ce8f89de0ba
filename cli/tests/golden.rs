//! Golden tests: the built binary, run offline on each `testdata/oc-status` snapshot,
//! must print `expected.output` (default) and `expected.detailed-output` (`--details=all`)
//! byte for byte.
//!
//! Fixtures: `$UPDATE_STATUS_FIXTURES`, else `testdata/oc-status` (vendored: `testdata/PROVENANCE.md`),
//! plus the simulated `testdata/oc-differential` cases (outputs of the real oc).
//!
//! Deliberate differences from `oc adm upgrade status`: none so far. Where one is introduced,
//! document it next to the fixture's test below and keep it minimal.

use std::path::PathBuf;
use std::process::Command;

fn fixtures() -> PathBuf {
    update_status_testdata::oc_status_dir()
}

/// Where a case lives: the `oc-differential` set, else the `oc-status` folder.
fn case_dir(fixture: &str) -> PathBuf {
    if DIFFERENTIAL.contains(&fixture) {
        update_status_testdata::oc_differential_dir().join(fixture)
    } else {
        fixtures().join(fixture)
    }
}

/// Every `oc-differential` case this file tests.
const DIFFERENTIAL: &[&str] = &[
    "alerts-sharing-labels",
    "health-tie-order-unstable-sort",
    "long-description-truncated",
    "malformed-alerts-json",
    "multiline-node-message",
    "pool-order",
    "pool-order-in-health-ties",
];

/// Every fixture this file tests (`every_fixture_is_tested` keeps the list complete).
const FIXTURES: &[&str] = &[
    "4.14.1-degraded",
    "4.14.1-workers-started-updating-multiple-pools",
    "4.15.0-ec2-b02-cos-not-annotated",
    "4.15.0-ec2-early",
    "4.16.0-ec2-control-plane-updated-pdb-prohibits-draining",
    "4.16.0-single-node",
    "no-version-upgrading",
    "not-upgrading",
];

/// Runs the binary offline on `fixture` with `extra` arguments; returns stdout, failing on a
/// non-zero exit.
fn run(fixture: &str, extra: &[&str]) -> String {
    let dir = case_dir(fixture);
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-update_status"))
        .arg("--from-dir")
        .arg(&dir)
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the binary: {e}"));
    assert!(
        out.status.success(),
        "{fixture} {extra:?}: exit {:?}, stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{fixture}: stdout is not UTF-8: {e}"))
}

/// A readable diff: every differing line with its number, `cat -A` style line ends.
fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.split_inclusive('\n').collect();
    let a: Vec<&str> = actual.split_inclusive('\n').collect();
    let show = |l: Option<&&str>| match l {
        None => "<missing>".to_owned(),
        Some(l) => l.replace('\n', "$"),
    };
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        if e.get(i) != a.get(i) {
            out.push_str(&format!(
                "line {}:\n  expected: {}\n  actual:   {}\n",
                i + 1,
                show(e.get(i)),
                show(a.get(i))
            ));
        }
    }
    out
}

fn check(fixture: &str, expected_file: &str, extra: &[&str]) {
    let path = case_dir(fixture).join(expected_file);
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let actual = run(fixture, extra);
    assert!(
        expected == actual,
        "{fixture} {extra:?} differs from {expected_file}:\n{}\n--- actual output ---\n{actual}",
        diff(&expected, &actual)
    );
}

macro_rules! golden {
    ($($name:ident => $fixture:literal),* $(,)?) => {
        /// Every case with its two golden tests.
        const GOLDEN: &[&str] = &[$($fixture),*];
        mod normal {
            use super::check;
            $( #[test] fn $name() { check($fixture, "expected.output", &[]); } )*
        }
        mod detailed {
            use super::check;
            $( #[test] fn $name() { check($fixture, "expected.detailed-output", &["--details=all"]); } )*
        }
    };
}

golden! {
    degraded_4_14_1 => "4.14.1-degraded",
    workers_started_updating_multiple_pools_4_14_1 => "4.14.1-workers-started-updating-multiple-pools",
    cos_not_annotated_empty_pool_4_15_0 => "4.15.0-ec2-b02-cos-not-annotated",
    early_partial_previous_4_15_0 => "4.15.0-ec2-early",
    control_plane_updated_pdb_prohibits_draining_4_16_0 => "4.16.0-ec2-control-plane-updated-pdb-prohibits-draining",
    single_node_4_16_0 => "4.16.0-single-node",
    no_version_upgrading => "no-version-upgrading",
    not_upgrading => "not-upgrading",
    health_tie_order_unstable_sort => "health-tie-order-unstable-sort",
    long_description_truncated => "long-description-truncated",
    malformed_alerts_json => "malformed-alerts-json",
    pool_order => "pool-order",
    pool_order_in_health_ties => "pool-order-in-health-ties",
    multiline_node_message => "multiline-node-message",
    alerts_sharing_labels => "alerts-sharing-labels",
}

#[test]
fn every_listed_case_has_its_golden_tests() {
    for case in FIXTURES.iter().chain(DIFFERENTIAL) {
        assert!(
            GOLDEN.contains(case),
            "{case} is listed but has no golden! entry"
        );
    }
}

#[test]
fn every_fixture_is_tested() {
    let dir = fixtures();
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .filter(|e| e.path().join("expected.output").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut listed: Vec<&str> = FIXTURES.to_vec();
    listed.sort();
    assert_eq!(found, listed, "fixtures in {} vs FIXTURES", dir.display());
}

#[test]
fn every_differential_case_is_tested() {
    let found: Vec<String> = update_status_testdata::oc_differential_cases()
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert_eq!(found, DIFFERENTIAL, "oc-differential cases vs DIFFERENTIAL");
}
