//! The API server goes away and comes back (the real kube-apiserver process is stopped and
//! started again; etcd keeps the data): the controller says why it cannot watch, keeps running
//! and serving `/metrics`, and once the API server is back its watches resume and it catches
//! up with changes, including an object of its own deleted behind its back.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::Duration;

use serde_json::Value;
use update_status_e2e::controller::Controller;
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case, wait_for};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);
/// Long enough for every watch to fail and back off a few times.
const OUTAGE: Duration = Duration::from_secs(15);

async fn error_insights(env: &TestEnv, ns: &str) -> Option<Vec<String>> {
    let out = env
        .get_insights(
            ns,
            "update.openshift.io/insight-type=health,update.openshift.io/impact-level=error",
            "json",
        )
        .await
        .ok()?;
    let list: Value = serde_json::from_str(&out).ok()?;
    let mut names: Vec<String> = list["items"]
        .as_array()?
        .iter()
        .filter_map(|i| i["status"]["resource"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    Some(names)
}

#[tokio::test]
async fn the_controller_survives_an_api_server_outage_and_catches_up() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    if env.cluster_dir().is_none() {
        // A cluster given by KUBECONFIG (not ours to stop): nothing to test here.
        eprintln!(
            "skipped: the API server can only be stopped on a cluster of hack/local-cluster.sh"
        );
        return Ok(());
    }
    let ns = env.namespace("outage").await?;
    let n = ns.name().to_string();
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let mut controller = Controller::start(&env, &n, &[])?;
    let log = controller.log.clone();
    let hint = || format!("(controller log: {})", log.display());
    let all = [
        "control-plane-machine-set",
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
    ];
    wait_for(TIMEOUT, "the 5 Error health insights", || async {
        error_insights(&env, &n).await.is_some_and(|v| v == all)
    })
    .await
    .map_err(|e| format!("{e} {}", hint()))?;

    // The outage.
    env.local_cluster("stop-apiserver")
        .await
        .ok_or("no cluster dir")??;
    let outage = tokio::time::sleep(OUTAGE);
    let restart = async {
        outage.await;
        match env.local_cluster("start-apiserver").await {
            Some(started) => started.map_err(|e| e.to_string()),
            None => Err("no cluster dir".to_string()),
        }
    };
    // Whatever happens in the test, the API server is started again for the next tests.
    let during = async {
        tokio::time::sleep(OUTAGE - Duration::from_secs(2)).await;
        controller
            .running()
            .map_err(|e| format!("during the outage: {e} {}", hint()))?;
        controller
            .metrics()
            .map_err(|e| format!("/metrics during the outage: {e} {}", hint()))?;
        Ok::<_, String>(())
    };
    let (during, restarted) = tokio::join!(during, restart);
    restarted?;
    during?;
    let text = std::fs::read_to_string(&log)?;
    assert!(
        text.contains("watch failing"),
        "the log says why the watches fail {}",
        hint()
    );

    // Back: an input change is followed (the watches resumed) ...
    let back = std::time::Instant::now();
    env.clear_operator_degraded("etcd").await?;
    let rest: Vec<&str> = all.iter().copied().filter(|n| *n != "etcd").collect();
    wait_for(
        TIMEOUT,
        "the etcd insight to go after the outage",
        || async { error_insights(&env, &n).await.is_some_and(|v| v == rest) },
    )
    .await
    .map_err(|e| format!("{e} {}", hint()))?;
    eprintln!(
        "after the outage, an input change was followed in {:?}",
        back.elapsed()
    );

    // ... and an object of ours deleted behind its back is written again.
    let deleted = std::time::Instant::now();
    env.kubectl_ok(["delete", "controlplaneupdatestatus", "cluster", "-n", &n])
        .await?;
    // Well within the writer's memory of its recent writes (PENDING_TTL, 30 s), which must not
    // keep it from seeing the deletion.
    wait_for(
        Duration::from_secs(15),
        "the control-plane status to be restored",
        || async {
            env.kubectl(["get", "controlplaneupdatestatus", "cluster", "-n", &n])
                .await
                .is_ok_and(|o| o.status.success())
        },
    )
    .await
    .map_err(|e| format!("{e} {}", hint()))?;
    eprintln!(
        "a deleted status object was restored in {:?}",
        deleted.elapsed()
    );
    controller.running()?;
    Ok(())
}
