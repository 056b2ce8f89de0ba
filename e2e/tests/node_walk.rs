//! One node walked through an update by editing its machine-config annotations, as the
//! machine-config daemon does: Pending → Draining → Updating → Rebooting → Updated. Its
//! UpdateInsight and the pool's WorkerPoolUpdateStatus follow, with few writes per step.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::{Duration, Instant};

use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};
use update_status_api::input::{MachineConfig, MachineConfigPool, Node};
use update_status_e2e::controller::Controller;
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case, poll_until};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);
const NODE: &str = "ip-10-0-20-162.us-east-2.compute.internal";
const NEW: &str = "rendered-worker-0000000000000000000000000000e2e1";

/// `UpdateInsight` writes so far, from the controller's metrics.
fn insight_writes(c: &Controller) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
    Ok(c.metrics()?
        .lines()
        .filter(|l| {
            l.starts_with("update_status_api_writes_total{") && l.contains("kind=\"UpdateInsight\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64)
}

/// Waits until the controller has made no write for a second (converged).
async fn quiet(c: &Controller) -> TestResult {
    let deadline = Instant::now() + TIMEOUT;
    let mut last = c.writes()?;
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = c.writes()?;
        if now == last {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("the controller never stopped writing".into());
        }
        last = now;
    }
}

async fn get_json(env: &TestEnv, args: &[&str]) -> Option<Value> {
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["-o", "json"]);
    serde_json::from_str(&env.kubectl_ok(a).await.ok()?).ok()
}

#[tokio::test]
async fn a_node_walks_through_its_update_and_the_pool_follows() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("walk").await?;
    let n = ns.name().to_string();
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let controller = Controller::start(&env, &n, &[])?;
    let insight = format!("node-{NODE}");

    // Before: Outdated / Pending.
    let node_insight = |want_phase: &'static str| {
        let env = &env;
        let n = n.clone();
        let insight = insight.clone();
        async move {
            poll_until(
                TIMEOUT,
                &format!("node insight in phase {want_phase}"),
                || async {
                    let v = get_json(env, &["get", "updateinsight", &insight, "-n", &n]).await?;
                    (v["status"]["progress"]["phase"] == want_phase).then_some(v)
                },
            )
            .await
        }
    };
    let pool = |pred: fn(&Value) -> bool, what: &'static str| {
        let env = &env;
        let n = n.clone();
        async move {
            poll_until(TIMEOUT, what, || async {
                let v =
                    get_json(env, &["get", "workerpoolupdatestatus", "worker", "-n", &n]).await?;
                pred(&v["status"]).then_some(v)
            })
            .await
        }
    };
    let v = node_insight("Pending").await?;
    assert_eq!(v["status"]["progress"]["assessment"], "Outdated", "{v}");
    pool(
        |s| s["assessment"] == "Pending" && s["nodes"]["total"] == 3,
        "pool Pending",
    )
    .await?;

    // The MCO renders a config for 4.14.1 and makes it the pool's target.
    let pp = PatchParams::apply("e2e-mco").force();
    let mcs: Api<MachineConfig> = Api::all(env.client());
    mcs.patch(
        NEW,
        &pp,
        &Patch::Apply(json!({
            "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
            "metadata": {"name": NEW, "annotations": {"machineconfiguration.openshift.io/release-image-version": "4.14.1"}},
        })),
    )
    .await?;
    let pools: Api<MachineConfigPool> = Api::all(env.client());
    pools
        .patch(
            "worker",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"configuration": {"name": NEW}}})),
        )
        .await?;

    let nodes: Api<Node> = Api::all(env.client());
    let annotate = |a: Value| {
        let nodes = nodes.clone();
        async move {
            nodes
                .patch(
                    NODE,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"annotations": a}})),
                )
                .await
        }
    };
    let mcd = |k: &str| format!("machineconfiguration.openshift.io/{k}");
    // (step, annotations, phase, assessment, estimate, pool check)
    type PoolCheck = fn(&Value) -> bool;
    let steps: [(&str, Value, &str, &str, &str, PoolCheck); 4] = [
        (
            "drain requested",
            json!({mcd("desiredConfig"): NEW, mcd("desiredDrain"): format!("drain-{NEW}"), mcd("state"): "Working"}),
            "Draining",
            "Progressing",
            "+10m",
            |s| {
                s["assessment"] == "Progressing"
                    && s["nodes"]["draining"] == 1
                    && s["nodes"]["progressing"] == 1
            },
        ),
        (
            "drained",
            json!({mcd("lastAppliedDrain"): format!("drain-{NEW}")}),
            "Updating",
            "Progressing",
            "+5m",
            |s| s["nodes"]["draining"] == 0 && s["nodes"]["progressing"] == 1,
        ),
        (
            "rebooting",
            json!({mcd("state"): "Rebooting"}),
            "Rebooting",
            "Progressing",
            "+5m",
            |s| s["nodes"]["progressing"] == 1 && s["nodes"]["updated"] == 0,
        ),
        (
            "done",
            json!({mcd("currentConfig"): NEW, mcd("state"): "Done", mcd("desiredDrain"): format!("uncordon-{NEW}"), mcd("lastAppliedDrain"): format!("uncordon-{NEW}")}),
            "Updated",
            "Completed",
            "-",
            |s| {
                s["nodes"]["updated"] == 1
                    && s["completionPercent"] == 33
                    && s["nodes"]["progressing"] == 0
            },
        ),
    ];
    for (step, annotations, phase, assessment, estimate, pool_check) in steps {
        quiet(&controller).await?;
        let before = insight_writes(&controller)?;
        let started = Instant::now();
        annotate(annotations).await?;
        let v = node_insight(phase).await?;
        let latency = started.elapsed();
        let p = &v["status"]["progress"];
        assert_eq!(p["assessment"], assessment, "{step}: {v}");
        assert_eq!(p["estimate"], estimate, "{step}: {v}");
        assert_eq!(
            v["metadata"]["labels"]["update.openshift.io/assessment"],
            assessment.to_lowercase(),
            "{step}: {v}"
        );
        pool(pool_check, "the pool to follow").await?;
        quiet(&controller).await?;
        let writes = insight_writes(&controller)? - before;
        eprintln!("{step}: insight in {latency:?}, {writes} UpdateInsight writes");
        assert!(
            writes <= 2,
            "{step}: {writes} UpdateInsight writes for one node state change"
        );
    }
    let v = node_insight("Updated").await?;
    assert_eq!(
        v["status"]["progress"]["version"]["current"], "4.14.1",
        "{v}"
    );
    Ok(())
}
