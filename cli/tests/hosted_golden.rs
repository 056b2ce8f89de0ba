//! Hosted-mode goldens: the built binary, run offline with `--hosted-cluster demo` on each
//! hand-written case of `testdata/hosted/cases`, must print `expected.txt` (default) and
//! `expected-detailed.txt` (`--details=all`) byte for byte. These outputs are this project's
//! (oc has no hosted mode), produced by the code and checked by reading them.

use std::path::Path;
use std::process::Command;

fn run(dir: &Path, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-update_status"))
        .arg("--from-dir")
        .arg(dir)
        .args(["--hosted-cluster", "demo"])
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the binary: {e}"));
    assert!(
        out.status.success(),
        "{} {extra:?}: exit {:?}, stderr:\n{}",
        dir.display(),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}: unexpected warnings:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn cases() -> Vec<std::path::PathBuf> {
    let root = update_status_testdata::hosted_cases_dir();
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    cases
}

#[test]
fn every_hosted_case_prints_its_expected_outputs() {
    let cases = cases();
    assert!(cases.len() >= 3, "{cases:?}");
    for dir in cases {
        for (file, extra) in [
            ("expected.txt", &[][..]),
            ("expected-detailed.txt", &["--details=all"][..]),
        ] {
            let expected = std::fs::read_to_string(dir.join(file))
                .unwrap_or_else(|e| panic!("{}/{file}: {e}", dir.display()));
            assert_eq!(run(&dir, extra), expected, "{}/{file}", dir.display());
        }
    }
}

#[test]
fn an_unknown_hosted_cluster_names_the_ones_found() {
    let dir = update_status_testdata::hosted_cases_dir().join("cp-updating");
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-update_status"))
        .arg("--from-dir")
        .arg(&dir)
        .args(["--hosted-cluster", "nope"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no HostedCluster nope") && stderr.contains("clusters/demo"),
        "{stderr}"
    );
}

#[test]
fn the_hosted_report_names_the_node_pools_and_the_hosted_cluster() {
    let dir = update_status_testdata::hosted_cases_dir().join("inplace-failed");
    let text = run(&dir, &["-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&text).expect("json report");
    let text = v.to_string();
    assert!(text.contains("\"NodePool\""), "{text}");
    assert!(text.contains("NodePoolInPlaceUpdateFailed"), "{text}");
}
