//! The controller-side bad-input corpus (`testdata/bad-inputs/controller/`, format in its
//! `README.md`) against the real control plane: each case's poison objects are loaded on top of a
//! good snapshot, and the controller (started after them: the restart case) must still sync its
//! caches (`/readyz` 200), write every object it writes without the poison, and show the
//! expected health insights ("MachineConfigPool infra cannot be read: ...").
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use update_status_e2e::controller::{Controller, plain_get};
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case, poll_until, repo_root};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const GOOD: &str = "4.14.1-degraded";
const TIMEOUT: Duration = Duration::from_secs(90);
/// Our kinds, as `kubectl get` names them.
const OURS: [&str; 3] = [
    "updateinsights",
    "controlplaneupdatestatuses",
    "workerpoolupdatestatuses",
];

fn corpus() -> PathBuf {
    repo_root().join("testdata/bad-inputs/controller")
}

/// `kind/name` of every object of ours in `ns`, and the insights' statuses.
async fn ours(env: &TestEnv, ns: &str) -> Result<(BTreeSet<String>, Vec<Value>), String> {
    let mut names = BTreeSet::new();
    let mut insights = Vec::new();
    for kind in OURS {
        let out = env
            .kubectl_ok(["get", kind, "-n", ns, "-o", "json"])
            .await
            .map_err(|e| e.to_string())?;
        let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
        for item in list["items"].as_array().into_iter().flatten() {
            let name = item["metadata"]["name"].as_str().unwrap_or_default();
            names.insert(format!("{kind}/{name}"));
            if kind == "updateinsights" {
                insights.push(item["status"].clone());
            }
        }
    }
    Ok((names, insights))
}

/// The objects of a controller run once they stop changing (the same for 5 s, at least one).
async fn settled(env: &TestEnv, ns: &str) -> Result<BTreeSet<String>, String> {
    let start = tokio::time::Instant::now();
    let mut last = (BTreeSet::new(), start);
    loop {
        let (names, _) = ours(env, ns).await?;
        if names != last.0 {
            last = (names, tokio::time::Instant::now());
        } else if !names.is_empty() && last.1.elapsed() >= Duration::from_secs(5) {
            return Ok(names);
        }
        if start.elapsed() > TIMEOUT {
            return Err(format!("the objects in {ns} never settled: {:?}", last.0));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn case_dirs() -> Vec<PathBuf> {
    let root = corpus();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("corpus {} cannot be read: {e}", root.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 3, "corpus too small: {dirs:?}");
    dirs
}

fn expected(case: &Path) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
    Ok(serde_json::from_str(&std::fs::read_to_string(
        case.join("expected.json"),
    )?)?)
}

/// Loads `case` on top of the good snapshot, runs the controller and checks it.
async fn check(env: &TestEnv, case: &Path, baseline: &BTreeSet<String>) -> TestResult {
    let name = case.file_name().and_then(|n| n.to_str()).unwrap_or("case");
    env.replace_snapshot(&oc_status_case(GOOD)).await?;
    // Only the objects: a case may hold nothing but a patch.
    let has_objects = std::fs::read_dir(case)?
        .filter_map(Result::ok)
        .any(|e| e.path().extension().is_some_and(|x| x == "yaml"));
    if has_objects {
        env.load_snapshot(case).await?;
    }
    let patch = case.join("clusterversion-status.jsonpatch");
    if patch.exists() {
        env.kubectl_ok([
            "patch",
            "clusterversion",
            "version",
            "--subresource=status",
            "--type=json",
            "--patch-file",
            &patch.to_string_lossy(),
        ])
        .await?;
    }
    let ns = env.namespace("bad").await?;
    let controller = Controller::start(env, ns.name(), &[])?;
    let log = controller.log.display().to_string();

    // Caches sync whatever the poison: the probe says ready.
    poll_until(TIMEOUT, &format!("{name}: /readyz 200"), || async {
        plain_get(controller.probe_addr(), "/readyz")
            .ok()
            .filter(|answer| {
                answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200")
            })
    })
    .await
    .map_err(|e| format!("{e} (controller log {log})"))?;

    let want = expected(case)?;
    let wanted: Vec<Value> = want["insights"].as_array().cloned().unwrap_or_default();
    poll_until(
        TIMEOUT,
        &format!("{name}: the good objects and the expected insights"),
        || async {
            let (names, insights) = ours(env, ns.name()).await.ok()?;
            let missing: Vec<&String> = baseline.difference(&names).collect();
            let all_there = wanted.iter().all(|w| {
                insights.iter().any(|i| {
                    let h = &i["health"];
                    h["source"] == w["source"]
                        && i["resource"]["kind"] == w["kind"]
                        && i["resource"]["name"] == w["name"]
                        && h["impact"]["summary"]
                            .as_str()
                            .zip(w["summary_starts_with"].as_str())
                            .is_some_and(|(s, p)| s.starts_with(p))
                })
            });
            (missing.is_empty() && all_there).then_some(())
        },
    )
    .await
    .map_err(|e| format!("{e}; expected {want}; controller log {log}"))?;

    // The controller logged the problem once per object, never the object itself.
    let text = std::fs::read_to_string(&controller.log)?;
    for w in &wanted {
        let needle = format!("name={}", w["name"].as_str().unwrap_or_default());
        let lines = text
            .lines()
            .filter(|l| l.contains("cannot be read") && l.contains(&needle))
            .count();
        assert_eq!(lines, 1, "{name}: one warning for {needle} in {log}");
    }
    assert!(
        !text.contains("managedFields"),
        "{name}: an object dumped in {log}"
    );
    drop(controller);
    ns.delete().await?;
    Ok(())
}

async fn run(cases: impl Fn(&Value) -> bool) -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    // What the controller writes without any poison.
    env.replace_snapshot(&oc_status_case(GOOD)).await?;
    let ns = env.namespace("good").await?;
    let baseline = {
        let _controller = Controller::start(&env, ns.name(), &[])?;
        settled(&env, ns.name()).await?
    };
    ns.delete().await?;
    assert!(
        baseline
            .iter()
            .any(|n| n.starts_with("workerpoolupdatestatuses/")),
        "{baseline:?}"
    );
    let mut ran = 0;
    for case in case_dirs() {
        if cases(&expected(&case)?) {
            check(&env, &case, &baseline).await?;
            ran += 1;
        }
    }
    assert!(ran > 0, "no case ran");
    env.replace_snapshot(&oc_status_case(GOOD)).await?;
    Ok(())
}

#[tokio::test]
async fn poison_inputs_never_stop_the_controller() -> TestResult {
    run(|e| e["needs"].is_null()).await
}

#[tokio::test]
async fn poison_inputs_that_needed_valid_names() -> TestResult {
    run(|e| !e["needs"].is_null()).await
}
