//! The controller against a real control plane: load a captured cluster, run the real
//! `update-status-controller` binary, and check what it writes the way a user would (kubectl
//! with label selectors); then change inputs and check the objects follow; then count writes
//! in steady state.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams};
use serde_json::json;
use update_status_api::input::{MachineConfigPool, Node};
use update_status_e2e::controller::Controller;
use update_status_e2e::{
    TestEnv, exclusive_cluster_state, oc_status_case, poll_until, quiet_period, wait_for,
};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);

async fn get_json(
    env: &TestEnv,
    args: &[&str],
) -> Result<serde_json::Value, Box<dyn std::error::Error + Send + Sync>> {
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["-o", "json"]);
    Ok(serde_json::from_str(&env.kubectl_ok(a).await?)?)
}

fn names(list: &serde_json::Value) -> Vec<String> {
    let mut v: Vec<String> = list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["status"]["resource"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[tokio::test]
async fn control_plane_and_pools_follow_the_inputs_with_no_steady_state_writes() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("ctrl").await?;
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let controller = Controller::start(&env, ns.name(), &[])?;
    let n = ns.name();
    let log_hint = || format!("(controller log: {})", controller.log.display());

    // The control plane status, as in the snapshot's expected output (with the master pool's
    // node counts from its first version: see first_write.rs).
    let cp = poll_until(
        TIMEOUT,
        "ControlPlaneUpdateStatus cluster with 3 nodes",
        || async {
            let cp = get_json(
                &env,
                &["get", "controlplaneupdatestatus", "cluster", "-n", n],
            )
            .await
            .ok()?;
            (cp["status"]["nodes"]["total"] == 3).then_some(cp)
        },
    )
    .await
    .map_err(|e| format!("{e} {}", log_hint()))?;
    let st = &cp["status"];
    assert_eq!(st["versions"]["target"], "4.14.1", "{st}");
    assert_eq!(st["versions"]["previous"], "4.14.0-rc.3", "{st}");
    assert_eq!(st["operators"]["total"], 33, "{st}");
    assert_eq!(st["operators"]["updated"], 32, "{st}");
    assert_eq!(
        st["operators"]["updatingNames"],
        json!(["machine-config"]),
        "{st}"
    );
    assert_eq!(st["completionPercent"], 97, "{st}");
    assert_eq!(st["nodes"]["total"], 3, "{st}");
    assert_eq!(
        cp["metadata"]["ownerReferences"][0]["kind"],
        "ClusterVersion"
    );

    // Health insights of the control plane, selected by label like an admin would.
    let wanted_errors = [
        "control-plane-machine-set",
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
    ];
    let errors = poll_until(TIMEOUT, "5 Error health insights", || async {
        let l = get_json(&env, &["get", "updateinsights", "-n", n, "-l", "update.openshift.io/insight-type=health,update.openshift.io/impact-level in (error,critical)"]).await.ok()?;
        (names(&l) == wanted_errors).then_some(l)
    })
    .await
    .map_err(|e| format!("{e} {}", log_hint()))?;
    for item in errors["items"].as_array().into_iter().flatten() {
        assert_eq!(
            item["metadata"]["ownerReferences"][0]["kind"], "ClusterOperator",
            "{item}"
        );
    }
    let warnings = get_json(
        &env,
        &[
            "get",
            "updateinsights",
            "-n",
            n,
            "-l",
            "update.openshift.io/impact-level=warning",
        ],
    )
    .await?;
    assert_eq!(
        names(&warnings),
        ["version"],
        "the ClusterVersion Failing insight"
    );

    // Progress insights: one per platform operator and per node, plus the ClusterVersion.
    let nodes = poll_until(TIMEOUT, "6 node progress insights", || async {
        let l = get_json(
            &env,
            &[
                "get",
                "updateinsights",
                "-n",
                n,
                "-l",
                "update.openshift.io/insight-type=progress,update.openshift.io/resource-kind=Node",
            ],
        )
        .await
        .ok()?;
        (names(&l).len() == 6).then_some(l)
    })
    .await
    .map_err(|e| format!("{e} {}", log_hint()))?;
    for item in nodes["items"].as_array().into_iter().flatten() {
        assert_eq!(
            item["status"]["progress"]["assessment"], "Outdated",
            "{item}"
        );
        assert_eq!(item["status"]["progress"]["phase"], "Pending", "{item}");
        assert_eq!(
            item["metadata"]["ownerReferences"][0]["kind"], "Node",
            "{item}"
        );
    }
    let pool = get_json(&env, &["get", "workerpoolupdatestatus", "worker", "-n", n]).await?;
    assert_eq!(pool["status"]["assessment"], "Pending", "{pool}");
    assert_eq!(pool["status"]["nodes"]["total"], 3, "{pool}");

    // Steady state: nothing changes, so nothing is written.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = controller.writes()?;
    let quiet = quiet_period(30);
    tokio::time::sleep(quiet).await;
    let after = controller.writes()?;
    assert_eq!(
        after,
        before,
        "writes in {quiet:?} of steady state {}",
        log_hint()
    );
    eprintln!("steady state: {before} writes to converge, 0 over {quiet:?}");

    // An operator recovers: its Degraded insight goes away, and only it.
    let started = Instant::now();
    env.clear_operator_degraded("kube-apiserver").await?;
    wait_for(TIMEOUT, "the kube-apiserver degraded insight to be deleted", || async {
        get_json(&env, &["get", "updateinsights", "-n", n, "-l", "update.openshift.io/insight-type=health,update.openshift.io/impact-level=error"])
            .await
            .is_ok_and(|l| names(&l) == ["control-plane-machine-set", "etcd", "kube-controller-manager", "kube-scheduler"])
    })
    .await?;
    eprintln!("input change reflected in {:?}", started.elapsed());

    // A node is deleted: garbage collection takes its insight with it.
    let node_api: Api<Node> = Api::all(env.client());
    node_api
        .delete(
            "ip-10-0-99-40.us-east-2.compute.internal",
            &DeleteParams::background(),
        )
        .await?;
    wait_for(TIMEOUT, "the deleted node's insight to go", || async {
        get_json(
            &env,
            &[
                "get",
                "updateinsights",
                "-n",
                n,
                "-l",
                "update.openshift.io/resource-kind=Node",
            ],
        )
        .await
        .is_ok_and(|l| names(&l).len() == 5)
    })
    .await?;

    // A pool is deleted: its status object goes with it.
    let pools: Api<MachineConfigPool> = Api::all(env.client());
    pools.delete("worker", &DeleteParams::background()).await?;
    wait_for(TIMEOUT, "the worker pool status to go", || async {
        env.kubectl(["get", "workerpoolupdatestatus", "worker", "-n", n])
            .await
            .is_ok_and(|o| !o.status.success())
    })
    .await?;
    Ok(())
}
