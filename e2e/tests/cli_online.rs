//! The API carries everything the renderer needs: with the controller running on a loaded
//! snapshot (evaluating at the snapshot's instant), `kubectl update-status` online prints
//! exactly what `oc adm upgrade status` printed for that cluster — the same bytes as the
//! offline mode's golden outputs.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

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
    for (details, file) in [
        ("none", "expected.output"),
        ("all", "expected.detailed-output"),
    ] {
        let expected = std::fs::read_to_string(dir.join(file))?;
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
