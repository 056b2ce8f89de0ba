//! The API carries everything the renderer needs: with the controller running on a loaded
//! snapshot (evaluating at the snapshot's instant), `kubectl update-status` online prints
//! exactly what `oc adm upgrade status` printed for that cluster — the same bytes as the
//! offline mode's golden outputs.
//!
//! One caveat: oc prints worker pools (and breaks health ties) in MachineConfigPool list order,
//! and an API server lists by name. Where a capture's `machineconfigpools.yaml` is not in name
//! order (`4.14.1-workers-started-updating-multiple-pools`: `worker` before `infra`), oc on the
//! live cluster would print the pools by name, so the online output is compared with the offline
//! output of the same capture with its pool list in name order (the offline path is byte-exact
//! with oc on every vendored case, the pool-order ones included).
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use update_status_e2e::controller::Controller;
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);

fn cli(
    env: &TestEnv,
    args: &[&str],
) -> Result<(String, String, bool), Box<dyn std::error::Error + Send + Sync>> {
    let out = env.plugin(args)?;
    Ok((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    ))
}

async fn online_equals_expected(case: &str) -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let dir = oc_status_case(case);
    let now = std::fs::read_to_string(dir.join("now"))?.trim().to_string();
    let ns = env.namespace("cli").await?;
    env.replace_snapshot(&dir).await?;
    let controller = Controller::start(&env, ns.name(), &["--assess-at", &now])?;
    let listed = as_an_api_server_lists(&dir)?;
    for (details, file) in [
        ("none", "expected.output"),
        ("all", "expected.detailed-output"),
    ] {
        let expected = match &listed {
            None => std::fs::read_to_string(dir.join(file))?,
            Some(copy) => offline(&env, copy.path(), &now, details)?,
        };
        let deadline = Instant::now() + TIMEOUT;
        let mut last;
        loop {
            let (out, err, _) = cli(
                &env,
                &["-n", ns.name(), "--now", &now, "--details", details],
            )?;
            last = format!("{out}{err}");
            if out == expected {
                break;
            }
            if Instant::now() > deadline {
                let first_diff = expected
                    .lines()
                    .zip(out.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(expected.lines().count().min(out.lines().count()));
                return Err(format!(
                    "{case} --details={details}: online output never matched {file} (first difference at line {}; controller log {}):\n{last}",
                    first_diff + 1,
                    controller.log.display()
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    Ok(())
}

/// A copy of the capture with its MachineConfigPools in name order (what an API server lists),
/// or `None` when they already are.
fn as_an_api_server_lists(
    dir: &Path,
) -> Result<Option<TempCopy>, Box<dyn std::error::Error + Send + Sync>> {
    let pools_file = dir.join("machineconfigpools.yaml");
    let pools = update_status_snapshot::read_values(&pools_file)?;
    let name = |p: &serde_json::Value| {
        p["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let mut sorted = pools.clone();
    sorted.sort_by_key(name);
    if sorted == pools {
        return Ok(None);
    }
    let copy = TempCopy::of(dir)?;
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": sorted});
    std::fs::write(
        copy.path().join("machineconfigpools.yaml"),
        serde_json::to_vec(&list)?,
    )?;
    Ok(Some(copy))
}

/// The offline CLI's output for a capture.
fn offline(
    env: &TestEnv,
    dir: &Path,
    now: &str,
    details: &str,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let dir = dir.to_string_lossy();
    let (out, err, ok) = cli(
        env,
        &["--from-dir", &dir, "--now", now, "--details", details],
    )?;
    if !ok {
        return Err(format!("offline CLI failed on {dir}: {err}").into());
    }
    Ok(out)
}

/// A copy of a capture's files in a temporary folder, removed on drop.
struct TempCopy(PathBuf);

impl TempCopy {
    fn of(dir: &Path) -> std::io::Result<Self> {
        let to = std::env::temp_dir().join(format!(
            "update-status-online-{}-{}",
            std::process::id(),
            dir.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        ));
        std::fs::create_dir_all(&to)?;
        let copy = TempCopy(to);
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                std::fs::copy(entry.path(), copy.0.join(entry.file_name()))?;
            }
        }
        Ok(copy)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn online_matches_expected_for_a_degraded_control_plane() -> TestResult {
    online_equals_expected("4.14.1-degraded").await
}

#[tokio::test]
async fn online_matches_expected_for_a_pool_blocked_by_a_pdb() -> TestResult {
    online_equals_expected("4.16.0-ec2-control-plane-updated-pdb-prohibits-draining").await
}

#[tokio::test]
async fn online_matches_expected_for_multiple_pools() -> TestResult {
    online_equals_expected("4.14.1-workers-started-updating-multiple-pools").await
}

#[tokio::test]
async fn online_matches_expected_for_a_partial_previous_update() -> TestResult {
    online_equals_expected("4.15.0-ec2-early").await
}

#[tokio::test]
async fn online_says_when_the_cluster_is_not_updating() -> TestResult {
    online_equals_expected("not-upgrading").await
}
