//! Command-line behaviour of the binary: flags, errors and exit codes.

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    update_status_testdata::oc_status_dir()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubectl-update_status"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the binary: {e}"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn invalid_details_uses_oc_text() {
    let dir = fixtures().join("not-upgrading");
    let dir = dir.to_string_lossy();
    let out = run(&["--from-dir", &dir, "--details=everything"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert_eq!(
        stderr(&out),
        "error: invalid value for --details: everything (must be one of none, all, nodes, health, operators)\n"
    );
}

#[test]
fn unreadable_snapshot_names_the_file() {
    let tmp = std::env::temp_dir().join(format!("update-status-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("mkdir: {e}"));
    let cv = tmp.join("clusterversion.yaml");
    std::fs::write(&cv, "kind: [unclosed").unwrap_or_else(|e| panic!("write: {e}"));
    let out = run(&["--from-dir", &tmp.to_string_lossy()]);
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(out.status.code(), Some(1), "an error");
    let err = stderr(&out);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("clusterversion.yaml"), "{err}");

    let missing = run(&["--from-dir", "/nonexistent/snapshot"]);
    assert_eq!(missing.status.code(), Some(1), "an error");
    let err = stderr(&missing);
    assert!(
        err.contains("/nonexistent/snapshot/clusterversion.yaml is missing"),
        "{err}"
    );
}

#[test]
fn bad_now_is_rejected() {
    let dir = fixtures().join("not-upgrading");
    let out = run(&["--from-dir", &dir.to_string_lossy(), "--now", "yesterday"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a bad flag value is a usage error"
    );
    assert!(stderr(&out).contains("--now"), "{}", stderr(&out));
}

#[test]
fn exit_codes_are_0_ok_1_error_2_usage() {
    let dir = fixtures().join("not-upgrading");
    let dir = dir.to_string_lossy();
    assert_eq!(run(&["--from-dir", &dir]).status.code(), Some(0));
    assert_eq!(run(&["--from-dir", &dir, "--help"]).status.code(), Some(0));
    let missing = run(&["--from-dir", "/nonexistent/snapshot"]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
    for usage in [
        &["--from-dir", &dir, "--bogus"][..],
        &["--from-dir", &dir, "--now", "2024-13-45"],
        &["--from-dir", &dir, "-o", "xml"],
        &["--from-dir", &dir, "--details=everything"],
        &["--from-dir", &dir, "--fleet"],
        &["--from-dir"],
    ] {
        let out = run(usage);
        assert_eq!(out.status.code(), Some(2), "{usage:?}: {}", stderr(&out));
    }
}

#[test]
fn json_and_yaml_reports() {
    let dir = fixtures().join("4.14.1-degraded");
    let dir = dir.to_string_lossy();
    let out = run(&["--from-dir", &dir, "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON: {e}"));
    assert_eq!(v["apiVersion"], "update.openshift.io/v1alpha1");
    assert_eq!(v["kind"], "UpdateStatusReport");
    // The fixture's `now` file.
    let now = std::fs::read_to_string(fixtures().join("4.14.1-degraded/now"))
        .unwrap_or_else(|e| panic!("now: {e}"));
    assert_eq!(v["now"].as_str(), Some(now.trim()));
    assert!(v["controlPlane"].is_object(), "{v}");
    assert!(v["workerPools"].is_array(), "{v}");
    assert!(v["insights"].is_array(), "{v}");

    let out = run(&["--from-dir", &dir, "--output=yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kind: UpdateStatusReport"), "{text}");
}

#[test]
fn offline_conflicts_with_fleet() {
    let out = run(&["--from-dir", "/tmp", "--fleet"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "conflicting flags are a usage error"
    );
}

#[test]
fn malformed_alerts_are_a_note_on_stderr_not_a_failure() {
    let dir = update_status_testdata::oc_differential_dir().join("malformed-alerts-json");
    let out = run(&["--from-dir", &dir.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("Ignoring alerts in 'Update Health'. Error unmarshaling alerts: ")
            && err.contains("alerts.json")
            && err.contains("expected a sequence")
            && err.lines().count() == 1,
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("= Update Health ="));
}
