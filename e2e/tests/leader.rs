//! Two replicas with `--leader-elect`: only the Lease holder writes; when it dies, the other
//! takes the Lease over (after it expires) and carries on.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::Duration;

use update_status_e2e::controller::Controller;
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case, poll_until, wait_for};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Lease duration (30 s) + follower retry (5 s) + slack.
const TAKEOVER: Duration = Duration::from_secs(75);
const TIMEOUT: Duration = Duration::from_secs(60);

async fn holder(env: &TestEnv, ns: &str) -> Option<String> {
    env.kubectl_ok([
        "get",
        "lease",
        "update-status-controller",
        "-n",
        ns,
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ])
    .await
    .ok()
    .filter(|h| !h.is_empty())
}

#[tokio::test]
async fn only_the_leader_writes_and_a_follower_takes_over() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("leader").await?;
    let n = ns.name().to_string();
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let a = Controller::start(
        &env,
        &n,
        &["--leader-elect", "--leader-identity", "replica-a"],
    )?;
    let b = Controller::start(
        &env,
        &n,
        &["--leader-elect", "--leader-identity", "replica-b"],
    )?;

    let first = poll_until(TIMEOUT, "a leader", || holder(&env, &n)).await?;
    wait_for(TIMEOUT, "the control-plane status", || async {
        env.kubectl(["get", "controlplaneupdatestatus", "cluster", "-n", &n])
            .await
            .is_ok_and(|o| o.status.success())
    })
    .await?;
    let (leader, follower) = if first == "replica-a" { (a, b) } else { (b, a) };
    let follower_name = if first == "replica-a" {
        "replica-b"
    } else {
        "replica-a"
    };
    // The writer counts a batch of writes when the whole batch is done, so an object can be
    // visible a moment before its write is counted.
    wait_for(TIMEOUT, "the leader's writes to be counted", || async {
        leader.writes().is_ok_and(|w| w > 0)
    })
    .await?;
    assert_eq!(follower.writes()?, 0, "the follower wrote");

    // The leader dies; its objects stay. Something removes the status object meanwhile.
    drop(leader);
    env.kubectl_ok(["delete", "controlplaneupdatestatus", "cluster", "-n", &n])
        .await?;
    poll_until(TAKEOVER, "the follower to take the Lease", || async {
        holder(&env, &n).await.filter(|h| h == follower_name)
    })
    .await?;
    wait_for(
        TIMEOUT,
        "the new leader to restore the status object",
        || async {
            env.kubectl(["get", "controlplaneupdatestatus", "cluster", "-n", &n])
                .await
                .is_ok_and(|o| o.status.success())
        },
    )
    .await?;
    wait_for(TIMEOUT, "the new leader's writes to be counted", || async {
        follower.writes().is_ok_and(|w| w > 0)
    })
    .await?;
    Ok(())
}
