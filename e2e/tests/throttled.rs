//! The controller against a throttled API server: the real kube-apiserver is restarted with
//! `--enable-priority-and-fairness=false --max-requests-inflight=1
//! --max-mutating-requests-inflight=1` (API Priority and Fairness off, so the plain max-inflight
//! limits apply and a request over them gets `429 Too Many Requests` with `Retry-After` at
//! once), and the same simulated update is played twice: once on the normal API server, once on
//! the throttled one. The controller runs as a ServiceAccount (cluster-admin by a binding): the
//! admin certificate is in `system:masters`, which the max-inflight filter never rejects. A
//! second client of that ServiceAccount keeps writing a ConfigMap and listing Nodes meanwhile,
//! so the controller's requests do meet full slots.
//!
//! Both runs must end with exactly the objects the pure logic computes from the final inputs
//! (no update lost), hence the same objects; the API server must really have answered 429s.
//! The writes and the time to converge of both runs are printed (`throttled e2e:` lines).
//! The API server gets its normal flags back at the end, also when the test fails (a guard).
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use update_status_e2e::controller::Controller;
use update_status_e2e::kubeconfig::service_account_config;
use update_status_e2e::outputs::{Outputs, differences};
use update_status_e2e::playback;
use update_status_e2e::scenario::{self, ASSESS_AT, Size};
use update_status_e2e::{TestEnv, client_for, exclusive_cluster_state, run_local_cluster};

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The throttled API server's extra flags.
const THROTTLE: &str = "--enable-priority-and-fairness=false --max-requests-inflight=1 --max-mutating-requests-inflight=1";
/// Pause between simulator steps: the controller sees (most) intermediate states.
const STEP_PAUSE: Duration = Duration::from_millis(300);
const CONVERGE_TIMEOUT: Duration = Duration::from_secs(180);
const SA: &str = "throttled-controller";

/// Restarts the API server with its normal flags when dropped, unless [`Throttled::restore`]
/// already did.
struct Throttled {
    dir: PathBuf,
    armed: bool,
}

impl Throttled {
    fn restart(dir: &Path, extra: &str) -> TestResult {
        run_local_cluster(dir, "stop-apiserver", &[])?;
        let vars = [("APISERVER_EXTRA_ARGS".to_string(), extra.to_string())];
        run_local_cluster(dir, "start-apiserver", &vars)?;
        Ok(())
    }

    fn start(dir: &Path) -> TestResult<Self> {
        let guard = Throttled {
            dir: dir.to_path_buf(),
            armed: true,
        };
        Self::restart(dir, THROTTLE)?;
        Ok(guard)
    }

    fn restore(mut self) -> TestResult {
        self.armed = false;
        Self::restart(&self.dir, "")
    }
}

impl Drop for Throttled {
    fn drop(&mut self) {
        if self.armed
            && let Err(e) = Self::restart(&self.dir, "")
        {
            eprintln!("throttled e2e: could not restore the API server's normal flags: {e}");
        }
    }
}

/// What one run measured.
#[derive(Debug)]
struct Run {
    outputs: Outputs,
    controller_writes: u64,
    throttled_write_errors: u64,
    /// From the controller's start to objects equal to the pure logic's.
    converge: Duration,
    /// From the simulator's last step to objects equal to the pure logic's.
    after_last_step: Duration,
    steps: u64,
    /// 429s the API server answered during the run.
    rejected: u64,
}

/// Sum of the samples of `metric` in a Prometheus text whose labels contain every `labels` item.
fn metric_sum(text: &str, metric: &str, labels: &[&str]) -> u64 {
    text.lines()
        .filter(|l| {
            l.strip_prefix(metric)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter(|l| labels.iter().all(|want| l.contains(want)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// The 429s the API server has answered since it started (its own `/metrics`, as admin).
async fn api_rejections(env: &TestEnv) -> TestResult<u64> {
    let text = env.kubectl_ok(["get", "--raw", "/metrics"]).await?;
    Ok(
        metric_sum(&text, "apiserver_request_total", &["code=\"429\""])
            + metric_sum(&text, "apiserver_dropped_requests_total", &[])
            + metric_sum(&text, "apiserver_flowcontrol_rejected_requests_total", &[]),
    )
}

/// Other traffic of the ServiceAccount until `stop`: a ConfigMap patched and Nodes listed in a
/// loop (errors, 429s included, are ignored).
fn background_load(
    client: Client,
    ns: &str,
    stop: Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let nodes: Api<Node> = Api::all(client);
    let writer = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let patch = serde_json::json!({"data": {"i": i.to_string()}});
                let _ = cms
                    .patch("load", &PatchParams::default(), &Patch::Merge(&patch))
                    .await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let reader = tokio::spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            let _ = nodes.list(&ListParams::default()).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    vec![writer, reader]
}

/// Plays the simulated update with the controller (as the ServiceAccount) writing into a new
/// namespace, and waits until its objects equal the pure logic's.
async fn run(env: &TestEnv, kubeconfig: &Path, label: &str) -> TestResult<Run> {
    let client = env.client();
    let now: Timestamp = ASSESS_AT.parse()?;
    let ns = env.namespace(&format!("throttled-{label}")).await?;
    let n = ns.name().to_string();
    let sim = scenario::blocked_drain(Size {
        operators: 5,
        nodes_per_pool: 7,
        seed: 3,
    })?;
    let mut simulator = scenario::install(&client, sim).await?;

    let sa_client = client_for(kubeconfig).await?;
    Api::<ConfigMap>::namespaced(client.clone(), &n)
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": "load"}}))?,
        )
        .await?;
    let stop = Arc::new(AtomicBool::new(false));
    let load = background_load(sa_client, &n, stop.clone());
    let rejected_before = api_rejections(env).await?;

    let started = Instant::now();
    let controller = Controller::start_via(kubeconfig, &n, &["--assess-at", ASSESS_AT])?;
    let log = controller.log.display().to_string();
    while !simulator.simulation().is_completed() {
        if simulator.simulation().steps() > 200 {
            return Err("the simulated update did not complete in 200 steps".into());
        }
        tokio::time::sleep(STEP_PAUSE).await;
        simulator.step().await?;
    }
    let last_step = Instant::now();
    let inputs = playback::read_inputs(&client).await?;
    assert_eq!(
        inputs.normalized(),
        simulator.simulation().inputs()?.normalized(),
        "{label}: the API holds the simulation's final inputs"
    );
    let outputs =
        scenario::until_outputs_match(&client, &n, &inputs, now, CONVERGE_TIMEOUT, label, &log)
            .await?;
    let converge = started.elapsed();
    let after_last_step = last_step.elapsed();
    stop.store(true, Ordering::Relaxed);
    for task in load {
        task.await?;
    }
    let metrics = controller.metrics()?;
    let result = Run {
        outputs,
        controller_writes: controller.writes()?,
        throttled_write_errors: metric_sum(
            &metrics,
            "update_status_write_errors_total",
            &["reason=\"throttled\""],
        ),
        converge,
        after_last_step,
        steps: simulator.simulation().steps(),
        rejected: api_rejections(env).await?.saturating_sub(rejected_before),
    };
    eprintln!(
        "throttled e2e: {label}: {} steps; converged {:.1}s after the controller's start ({:.1}s after the last step); {} controller writes ({} refused as throttled); the API server answered {} 429s; controller log {log}",
        result.steps,
        result.converge.as_secs_f64(),
        result.after_last_step.as_secs_f64(),
        result.controller_writes,
        result.throttled_write_errors,
        result.rejected,
    );
    drop(controller);
    ns.delete().await?;
    Ok(result)
}

#[tokio::test]
async fn a_throttled_api_server_loses_no_update() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let Some(dir) = env.cluster_dir().map(Path::to_path_buf) else {
        eprintln!(
            "skipped: the API server can only be restarted on a cluster of hack/local-cluster.sh"
        );
        return Ok(());
    };
    // The controller's identity: a ServiceAccount bound to cluster-admin (not system:masters).
    let home = env.namespace("throttled-sa").await?;
    let binding = format!("{}-{SA}", home.name());
    env.kubectl_ok(["create", "serviceaccount", SA, "-n", home.name()])
        .await?;
    env.kubectl_ok([
        "create",
        "clusterrolebinding",
        &binding,
        "--clusterrole=cluster-admin",
        &format!("--serviceaccount={}:{SA}", home.name()),
    ])
    .await?;
    let creds_dir = std::env::temp_dir().join(format!("update-status-{}", home.name()));
    std::fs::create_dir_all(&creds_dir)?;
    let result = async {
        let sa = service_account_config(&env, home.name(), SA, &creds_dir).await?;
        let normal = run(&env, &sa.kubeconfig, "unthrottled").await?;
        let throttled = {
            let guard = Throttled::start(&dir)?;
            let run = run(&env, &sa.kubeconfig, "throttled").await;
            guard.restore()?;
            run?
        };
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>((normal, throttled))
    }
    .await;
    let _ = std::fs::remove_dir_all(&creds_dir);
    let _ = env
        .kubectl([
            "delete",
            "clusterrolebinding",
            &binding,
            "--ignore-not-found",
        ])
        .await;
    let (normal, throttled) = result?;

    assert!(
        throttled.rejected > 0,
        "the throttled API server answered no 429: the test measured nothing"
    );
    let diff = differences(&normal.outputs, &throttled.outputs, ASSESS_AT.parse()?);
    assert!(
        diff.is_empty(),
        "the throttled run's objects differ from the unthrottled run's:\n{}",
        diff.join("\n")
    );
    eprintln!(
        "throttled e2e: summary: writes {} unthrottled vs {} throttled; converged in {:.1}s vs {:.1}s ({:.1}s vs {:.1}s after the last step); 429s {} vs {}",
        normal.controller_writes,
        throttled.controller_writes,
        normal.converge.as_secs_f64(),
        throttled.converge.as_secs_f64(),
        normal.after_last_step.as_secs_f64(),
        throttled.after_last_step.as_secs_f64(),
        normal.rejected,
        throttled.rejected,
    );
    Ok(())
}
