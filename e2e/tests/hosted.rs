//! Hosted mode (`--mode=hosted`) on a real kube-apiserver with the real HyperShift and
//! cluster-api CRDs (`testdata/hosted/crds/`, applied here server-side), driven by the hosted
//! simulator (`update_status_simulator::hosted`): a HostedCluster with a Replace NodePool
//! (MachineDeployment, Machines really deleted and replaced) and an InPlace NodePool
//! (MachineSet with the config-version annotations), updating with three faults in turn (an
//! invalid release image, a minor update blocked by `ClusterVersionUpgradeable=False`, a Machine
//! that cannot be drained).
//!
//! At **every step** of the simulated update: the objects the controller wrote must equal what
//! `desired_hosted` wants from the inputs read back from the API (names, labels, owners,
//! status); the inputs read back must mean the same as the simulation's own (the same
//! `desired_hosted`: the simulated objects survive the real CRDs' validation and pruning); and
//! each fault must show as its health insight exactly while it holds. Then: a second simulated
//! HostedCluster in the same namespace and the `update.openshift.io/cluster` label query; the
//! CLI's `--hosted-cluster` view (mid-rollout); and, with the controller stopped, the garbage
//! collector removing a deleted NodePool's objects and then a deleted HostedCluster's.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, UpdateInsight, UpdateInsightStatus, WorkerPoolUpdateStatus, labels,
};
use update_status_api::hosted::{HostedCluster, NodePool, control_plane_namespace};
use update_status_assess::compose::{DesiredCluster, Existing, ExistingInsights};
use update_status_assess::hosted::desired_hosted;
use update_status_assess::hosted::health::{
    SOURCE_DRAIN_FAILED, SOURCE_INVALID_RELEASE_IMAGE, SOURCE_UPDATE_BLOCKED,
};
use update_status_e2e::controller::Controller;
use update_status_e2e::hosted_objects::{
    self, ClusterRbacGuard, KINDS, Live, compare_seen, install_hosted_crds, list, live, seen_all,
};
use update_status_e2e::playback::{self, HostedSimulator};
use update_status_e2e::{TestEnv, poll_until, repo_root, wait_for};
use update_status_simulator::FaultSpec;
use update_status_simulator::hosted::{
    HostedFaults, HostedSimConfig, HostedSimInputs, HostedSimulation, HostedStage,
};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

const TIMEOUT: Duration = Duration::from_secs(60);
/// The garbage collector notices a new kind (HostedCluster, NodePool) at its next discovery
/// resync (30 s): allow for it.
const GC_TIMEOUT: Duration = Duration::from_secs(120);
/// Simulated instant of step 0.
const START: &str = "2026-01-01T09:00:00Z";
/// Simulated time per step: the whole update (about 35 steps) takes under 3 simulated
/// minutes, so at `NOW` no drain has lasted the 10 minutes that would report it without a
/// fault, and no NodePool has been stuck for 30.
const SIM_STEP: SignedDuration = SignedDuration::from_secs(5);
/// The instant the controller (`--assess-at`) and `desired_hosted` evaluate at: after the
/// simulated update.
const NOW: &str = "2026-01-01T09:10:00Z";

/// What `desired_hosted` wants at `NOW` from `inputs`, with our objects `live` as they are.
fn wanted(
    inputs: &HostedSimInputs,
    live: &Live,
    cluster: &str,
) -> Result<DesiredCluster, BoxError> {
    let arcs: Vec<Arc<UpdateInsight>> = live.insights.iter().cloned().map(Arc::new).collect();
    let pools: Vec<Arc<WorkerPoolUpdateStatus>> = live.wps.iter().cloned().map(Arc::new).collect();
    let existing = Existing {
        control_plane: live.cps.iter().find(|c| c.name_any() == cluster),
        worker_pools: &pools,
        insights: ExistingInsights::new(&arcs),
    };
    let now: Timestamp = NOW.parse()?;
    Ok(desired_hosted(&inputs.as_hosted_inputs(false), &existing, now).cluster)
}

/// The differences between what `desired_hosted` wants for `cluster` (inputs and our objects
/// read back from the API) and the objects there; empty when equal.
async fn differences(client: &Client, ns: &str, cluster: &str) -> Result<Vec<String>, BoxError> {
    let inputs = playback::read_hosted_inputs(client, ns, cluster).await?;
    let got = live(client, ns, cluster).await?;
    let want = wanted(&inputs, &got, cluster)?;
    Ok(hosted_objects::differences(&want, &got))
}

/// The simulated objects as the API holds them mean what the simulation means: the same
/// `desired_hosted` from the inputs read back and from the simulation's own inputs (with the
/// API server's uids, which owner references carry). Returns what the read-back inputs want.
async fn read_back_as_simulated(
    client: &Client,
    sim: &HostedSimulation,
) -> Result<DesiredCluster, BoxError> {
    let (ns, cluster) = (sim.namespace(), sim.name());
    let read = playback::read_hosted_inputs(client, ns, cluster).await?;
    let mut own = sim.inputs()?;
    own.hosted_cluster.metadata.uid = read.hosted_cluster.metadata.uid.clone();
    for p in &mut own.node_pools {
        p.metadata.uid = read
            .node_pools
            .iter()
            .find(|r| r.metadata.name == p.metadata.name)
            .and_then(|r| r.metadata.uid.clone());
    }
    let names = |ms: &[update_status_api::hosted::Machine]| -> Vec<(String, bool)> {
        ms.iter().map(|m| (m.name_any(), m.is_deleting())).collect()
    };
    if names(&read.machines) != names(&own.machines) {
        return Err(format!(
            "step {}: Machines (name, deleting) read back {:?}, simulated {:?}",
            sim.steps(),
            names(&read.machines),
            names(&own.machines)
        )
        .into());
    }
    let got = live(client, ns, cluster).await?;
    let from_api = wanted(&read, &got, cluster)?;
    let from_sim = wanted(&own, &got, cluster)?;
    let mut diffs = Vec::new();
    for ((kind, a), b) in KINDS
        .into_iter()
        .zip(seen_all(&from_sim))
        .zip(seen_all(&from_api))
    {
        compare_seen(&mut diffs, kind, a, b);
    }
    if !diffs.is_empty() {
        return Err(format!(
            "step {}: the inputs read back mean something else than the simulated ones (simulated = want, read back = got):\n{}",
            sim.steps(),
            diffs.join("\n")
        )
        .into());
    }
    Ok(from_api)
}

/// The health insights of `source` in `d`.
fn health<'a>(d: &'a DesiredCluster, source: &str) -> Vec<&'a UpdateInsightStatus> {
    d.insights
        .iter()
        .map(|i| &i.status)
        .filter(|s| s.health.as_ref().is_some_and(|h| h.source == source))
        .collect()
}

/// Waits until the live objects of `cluster` are what `desired_hosted` wants (and there are
/// some: a ControlPlaneUpdateStatus named after the cluster).
async fn wait_equal(client: &Client, ns: &str, cluster: &str, step: &str) -> TestResult {
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let diffs = differences(client, ns, cluster).await?;
        let cps: Vec<ControlPlaneUpdateStatus> =
            list(client, ns, Some(&format!("{}={cluster}", labels::CLUSTER))).await?;
        if diffs.is_empty() && cps.iter().any(|c| c.name_any() == cluster) {
            let sel = format!("{}={cluster}", labels::CLUSTER);
            let wps = names::<WorkerPoolUpdateStatus>(client, ns, &sel).await?;
            let insights = names::<UpdateInsight>(client, ns, &sel).await?;
            eprintln!(
                "{step}: {cluster}: ControlPlaneUpdateStatus, {} WorkerPoolUpdateStatus, {} UpdateInsights equal desired_hosted",
                wps.len(),
                insights.len()
            );
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "{step}: live objects differ from desired_hosted:\n{}",
                diffs.join("\n")
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

async fn names<K>(client: &Client, ns: &str, selector: &str) -> Result<Vec<String>, BoxError>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    Ok(list::<K>(client, ns, Some(selector))
        .await?
        .iter()
        .map(|o| o.name_any())
        .collect())
}

/// The namespace of the Deployment (and the ServiceAccount, the Lease) in `config/hosted`.
const DEPLOY_NS: &str = "openshift-update-status";

/// The controller's series of one hosted cluster (`hosted_cluster="<ns>/<cluster>"`) say what
/// its objects in the API say: the control plane's assessment (state set), one completion
/// series per NodePool with its ratio, and as many health insights as it has.
/// Retried for a few seconds: the health series come from the controller's cache of our
/// objects, which follows the API.
async fn check_metrics(
    controller: &Controller,
    client: &Client,
    ns: &str,
    cluster: &str,
    step: &str,
) -> TestResult {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match metrics_differ(controller, client, ns, cluster, step).await? {
            None => return Ok(()),
            Some(why) if std::time::Instant::now() > deadline => return Err(why.into()),
            Some(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

async fn metrics_differ(
    controller: &Controller,
    client: &Client,
    ns: &str,
    cluster: &str,
    step: &str,
) -> Result<Option<String>, BoxError> {
    let text = controller.metrics()?;
    let hc = format!("hosted_cluster=\"{ns}/{cluster}\"");
    let value = |prefix: &str| -> Option<f64> {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
    };
    let selector = format!("{}={cluster}", labels::CLUSTER);
    let cps: Api<ControlPlaneUpdateStatus> = Api::namespaced(client.clone(), ns);
    let cp = cps
        .get(cluster)
        .await?
        .status
        .ok_or("ControlPlaneUpdateStatus without status")?;
    let series = format!(
        "update_status_control_plane_assessment{{assessment=\"{}\",{hc}}}",
        cp.assessment.as_str()
    );
    if value(&series) != Some(1.0) {
        return Ok(Some(format!("{step}: {series} not 1 in\n{text}")));
    }
    let wps: Api<WorkerPoolUpdateStatus> = Api::namespaced(client.clone(), ns);
    for wp in wps
        .list(&ListParams::default().labels(&selector))
        .await?
        .items
    {
        let name = wp.name_any();
        let nodes = wp
            .status
            .ok_or("WorkerPoolUpdateStatus without status")?
            .nodes;
        let want = if nodes.total == 0 {
            1.0
        } else {
            f64::from(nodes.updated) / f64::from(nodes.total)
        };
        let series = format!("update_status_worker_pool_completion_ratio{{{hc},pool=\"{name}\"}}");
        match value(&series) {
            Some(got) if (got - want).abs() < 1e-9 => {}
            got => {
                return Ok(Some(format!(
                    "{step}: {series} {got:?}, want {want}, in\n{text}"
                )));
            }
        }
    }
    let ins: Api<UpdateInsight> = Api::namespaced(client.clone(), ns);
    let health = ins
        .list(&ListParams::default().labels(&format!("{selector},{}=health", labels::INSIGHT_TYPE)))
        .await?
        .items
        .len();
    let counted: f64 = text
        .lines()
        .filter(|l| l.starts_with("update_status_health_insights{") && l.contains(&hc))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    if counted as usize != health {
        return Ok(Some(format!(
            "{step}: {counted} health insights of {cluster} in the metrics, {health} in the API:\n{text}"
        )));
    }
    Ok(None)
}

/// Applies `config/hosted` as `make deploy OVERLAY=hosted` does and mints a token of its
/// ServiceAccount.
async fn deploy_hosted(
    env: &TestEnv,
    ns: &str,
) -> Result<update_status_e2e::kubeconfig::ServiceAccountConfig, BoxError> {
    let config = repo_root().join("config/hosted");
    env.kubectl_ok([
        "apply",
        "--server-side",
        "--field-manager=update-status-deploy",
        "-k",
        config.to_str().ok_or("non-UTF-8 path")?,
    ])
    .await?;
    env.kubectl_ok([
        "delete",
        "leases",
        "--all",
        "-n",
        DEPLOY_NS,
        "--ignore-not-found",
    ])
    .await?;
    let dir = std::env::temp_dir().join(format!("update-status-e2e-hosted-{ns}"));
    std::fs::create_dir_all(&dir)?;
    Ok(update_status_e2e::kubeconfig::service_account_config(
        env,
        DEPLOY_NS,
        "update-status-controller",
        &dir,
    )
    .await?)
}

/// The hosted cluster the test updates: three faults in turn.
fn simulation(ns: &str, name: &str, faults: HostedFaults) -> Result<HostedSimulation, BoxError> {
    Ok(HostedSimulation::new(HostedSimConfig {
        namespace: ns.to_string(),
        name: name.to_string(),
        start: START.parse()?,
        step: SIM_STEP,
        seed: 5,
        faults,
        ..Default::default()
    })?)
}

/// Checks that each fault shows as its health insight exactly while it holds; counts the
/// steps each held.
fn check_faults(
    sim: &HostedSimulation,
    d: &DesiredCluster,
    held: &mut [u32; 3],
) -> Result<(), BoxError> {
    let f = sim.fault_status();
    let step = sim.steps();
    let invalid = health(d, SOURCE_INVALID_RELEASE_IMAGE);
    let blocked = health(d, SOURCE_UPDATE_BLOCKED);
    let drain = health(d, SOURCE_DRAIN_FAILED);
    if f.invalid_image.is_some() != (invalid.len() == 1) {
        return Err(format!("step {step}: invalid image {f:?}, insights {invalid:?}").into());
    }
    // Refused while the image is invalid, then while Upgradeable=False.
    let refused = f.invalid_image.is_some() || f.blocked_update;
    if refused != (blocked.len() == 1) {
        return Err(format!("step {step}: faults {f:?}, blocked insights {blocked:?}").into());
    }
    if f.blocked_update
        && !serde_json::to_string(&blocked)
            .unwrap_or_default()
            .contains("ClusterVersionUpgradeable condition is false")
    {
        return Err(format!("step {step}: the blocked insight names the gate: {blocked:?}").into());
    }
    match &f.blocked_drain {
        Some(m) if drain.len() == 1 && &drain[0].resource.name == m => {}
        None if drain.is_empty() => {}
        _ => {
            return Err(
                format!("step {step}: undrainable Machine {f:?}, insights {drain:?}").into(),
            );
        }
    }
    held[0] += u32::from(f.invalid_image.is_some());
    held[1] += u32::from(f.blocked_update);
    held[2] += u32::from(f.blocked_drain.is_some());
    Ok(())
}

#[tokio::test]
async fn hosted_mode_writes_what_desired_hosted_wants() -> TestResult {
    let env = TestEnv::new().await?;
    install_hosted_crds(&env).await?;
    let client = env.client();
    let test_ns = env.namespace("hosted").await?;
    let ns = test_ns.name().to_string();
    let cp_ns = control_plane_namespace(&ns, "demo");

    let sim = simulation(
        &ns,
        "demo",
        HostedFaults {
            invalid_image: Some(FaultSpec::auto(2)),
            blocked_update: Some(FaultSpec::auto(2)),
            blocked_drain: Some(FaultSpec::auto(3)),
        },
    )?;
    let mut simulator = HostedSimulator::new(client.clone(), sim);
    simulator.install().await?;

    // The controller runs as its ServiceAccount with the shipped hosted-mode RBAC
    // (`config/hosted`), with leader election (the Lease Role).
    let _rbac = ClusterRbacGuard {
        kubeconfig: env.kubeconfig_path().to_path_buf(),
        objects: vec![
            "clusterrolebinding/update-status-controller-hosted".into(),
            "clusterrole/update-status-controller-hosted".into(),
        ],
    };
    let sa = deploy_hosted(&env, &ns).await?;
    let controller = Controller::start_via(
        &sa.kubeconfig,
        DEPLOY_NS,
        &[
            "--mode=hosted",
            "--watch-namespace",
            &ns,
            "--assess-at",
            NOW,
            "--leader-elect",
        ],
    )?;
    let log = controller.log.clone();
    let with_log = |e: BoxError| -> BoxError {
        format!(
            "{e}\ncontroller log (tail):\n{}",
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .rev()
                .take(40)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
        )
        .into()
    };

    // (a) Every step of the simulated update: live objects = desired_hosted(read-back inputs),
    // read-back inputs ≡ simulated inputs, faults reported exactly while they hold.
    let mut held = [0u32; 3];
    let mut stages = Vec::new();
    let mut cli_checked = false;
    let started = std::time::Instant::now();
    loop {
        let sim = simulator.simulation();
        let label = format!("step {} ({})", sim.steps(), sim.stage());
        wait_equal(&client, &ns, "demo", &label)
            .await
            .map_err(with_log)?;
        let d = read_back_as_simulated(&client, sim).await?;
        check_faults(sim, &d, &mut held)?;
        // (e) Its metrics, labelled with the hosted cluster, say the same.
        check_metrics(&controller, &client, &ns, "demo", &label)
            .await
            .map_err(with_log)?;
        if stages.last() != Some(&sim.stage()) {
            stages.push(sim.stage());
        }
        if sim.stage() == HostedStage::NodePools && !cli_checked {
            // (d) The CLI renders the hosted cluster mid-rollout.
            let out = env.plugin(&["-n", &ns, "--hosted-cluster", "demo", "--now", NOW])?;
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "kubectl-update_status --hosted-cluster: {stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            for want in [
                "Control Plane",
                "Worker Upgrade",
                "demo-workers",
                "demo-inplace",
            ] {
                assert!(
                    stdout.contains(want),
                    "the CLI output names {want:?}:\n{stdout}"
                );
            }
            cli_checked = true;
        }
        if sim.is_completed() {
            break;
        }
        if sim.steps() > 200 {
            return Err("the simulated update did not complete in 200 steps".into());
        }
        simulator.step().await?;
    }
    eprintln!(
        "{} steps checked in {:.1}s; faults held (invalid image, blocked update, undrainable Machine): {held:?}",
        simulator.simulation().steps(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(held, [2, 2, 3], "each fault held as configured");
    assert_eq!(
        stages,
        [
            HostedStage::Idle,
            HostedStage::Requested,
            HostedStage::ControlPlane,
            HostedStage::ControlPlaneDone,
            HostedStage::NodePools,
            HostedStage::Completed
        ]
    );
    assert!(cli_checked);
    // (f) The update's story as Events regarding the HostedCluster, in its namespace: one
    // start (the image resolving to its version and the requested update actually starting are
    // the same update), one completion.
    let story = |out: &str| -> Vec<String> {
        serde_json::from_str::<serde_json::Value>(out)
            .ok()
            .and_then(|v| v.get("items").and_then(|i| i.as_array()).cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|e| e.get("reason")?.as_str().map(str::to_string))
            .filter(|r| r.starts_with("Update"))
            .collect()
    };
    let told = poll_until(
        Duration::from_secs(20),
        "the hosted update's Events",
        || {
            let (env, ns) = (&env, &ns);
            async move {
                let out = env
                    .kubectl_ok([
                        "events",
                        "-n",
                        ns,
                        "--for",
                        "hostedcluster/demo",
                        "-o",
                        "json",
                    ])
                    .await
                    .ok()?;
                let told = story(&out);
                told.iter().any(|r| r == "UpdateCompleted").then_some(told)
            }
        },
    )
    .await
    .map_err(|e| with_log(e.into()))?;
    assert_eq!(
        told,
        ["UpdateStarted", "UpdateCompleted"],
        "kubectl events --for hostedcluster/demo"
    );
    let wps =
        names::<WorkerPoolUpdateStatus>(&client, &ns, &format!("{}=demo", labels::CLUSTER)).await?;
    assert_eq!(
        wps,
        ["demo-inplace", "demo-workers"],
        "one WorkerPoolUpdateStatus per NodePool"
    );

    // (c) A second simulated HostedCluster in the same namespace: the label query separates
    // them.
    let mut other = HostedSimulator::new(
        client.clone(),
        simulation(&ns, "other", HostedFaults::default())?,
    );
    other.install().await?;
    for _ in 0..3 {
        other.step().await?;
    }
    wait_equal(&client, &ns, "other", "second hosted cluster")
        .await
        .map_err(with_log)?;
    wait_equal(&client, &ns, "demo", "first hosted cluster, with a second")
        .await
        .map_err(with_log)?;
    for cluster in ["demo", "other"] {
        check_metrics(&controller, &client, &ns, cluster, "two hosted clusters")
            .await
            .map_err(with_log)?;
    }
    for (cluster, other) in [("demo", "other"), ("other", "demo")] {
        let out = env
            .kubectl_ok([
                "get",
                "updateinsights",
                "-A",
                "-l",
                &format!("{}={cluster}", labels::CLUSTER),
                "-o",
                "name",
            ])
            .await?;
        let listed: Vec<&str> = out.lines().collect();
        assert!(!listed.is_empty(), "{cluster} has insights");
        for l in &listed {
            assert!(
                l.starts_with(&format!("updateinsight.update.openshift.io/{cluster}-")),
                "{cluster}'s query lists only its insights, got {l} (the other is {other})"
            );
        }
    }
    let out = env.plugin(&["-n", &ns, "--hosted-cluster", "demo", "--now", NOW])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(!stdout.contains("other-"), "only demo's pools:\n{stdout}");

    // (b) Garbage collection, with the controller stopped (it would delete them itself).
    drop(controller);
    let log = std::fs::read_to_string(&log)?;
    assert!(
        // Not a bare "403": a log timestamp such as 01:36:59.664034 contains it.
        !log.to_lowercase().contains("forbidden") && !log.contains("code: 403"),
        "the shipped RBAC is enough:\n{log}"
    );
    let sel = format!("{}=demo", labels::CLUSTER);
    Api::<NodePool>::namespaced(client.clone(), &ns)
        .delete("demo-inplace", &DeleteParams::background())
        .await?;
    wait_for(GC_TIMEOUT, "the deleted NodePool's objects collected", || {
        let (client, ns, sel) = (client.clone(), ns.clone(), sel.clone());
        async move {
            let wps = names::<WorkerPoolUpdateStatus>(&client, &ns, &sel).await;
            let ins: Result<Vec<UpdateInsight>, _> = list(&client, &ns, Some(&sel)).await;
            matches!((wps, ins), (Ok(w), Ok(i)) if !w.iter().any(|n| n == "demo-inplace")
                && !i.iter().any(|i| i.owner_references().iter().any(|r| r.kind == "NodePool" && r.name == "demo-inplace")))
        }
    })
    .await?;
    let left = names::<WorkerPoolUpdateStatus>(&client, &ns, &sel).await?;
    assert_eq!(left, ["demo-workers"], "the other pool's status stays");
    Api::<HostedCluster>::namespaced(client.clone(), &ns)
        .delete("demo", &DeleteParams::background())
        .await?;
    Api::<NodePool>::namespaced(client.clone(), &ns)
        .delete("demo-workers", &DeleteParams::background())
        .await?;
    wait_for(GC_TIMEOUT, "the deleted HostedCluster's objects collected", || {
        let (client, ns, sel) = (client.clone(), ns.clone(), sel.clone());
        async move {
            let a = names::<ControlPlaneUpdateStatus>(&client, &ns, &sel).await;
            let b = names::<WorkerPoolUpdateStatus>(&client, &ns, &sel).await;
            let c = names::<UpdateInsight>(&client, &ns, &sel).await;
            matches!((a, b, c), (Ok(a), Ok(b), Ok(c)) if a.is_empty() && b.is_empty() && c.is_empty())
        }
    })
    .await?;
    let other_cps =
        names::<ControlPlaneUpdateStatus>(&client, &ns, &format!("{}=other", labels::CLUSTER))
            .await?;
    assert_eq!(
        other_cps,
        ["other"],
        "the other HostedCluster's objects stay"
    );

    let nss: Api<Namespace> = Api::all(client.clone());
    for cp in [cp_ns, control_plane_namespace(&ns, "other")] {
        update_status_e2e::playback::clear_hosted(
            &client,
            &ns,
            cp.trim_start_matches(&format!("{ns}-")),
        )
        .await?;
        let _ = nss.delete(&cp, &DeleteParams::background()).await;
    }
    test_ns.delete().await?;
    Ok(())
}

/// Flags hosted mode does not support stop the controller at start, naming the flag (no
/// cluster needed: it exits before connecting).
#[test]
fn hosted_mode_refuses_unsupported_flags() -> TestResult {
    let bin = update_status_e2e::controller::workspace_bin(
        "update-status-controller",
        "UPDATE_STATUS_CONTROLLER_BIN",
    );
    for (flags, named) in [
        (
            &["--cluster-id", "prod-east"][..],
            "--cluster-id not supported with --mode=hosted",
        ),
        (
            &["--prometheus-url", "https://prometheus.example:9091"][..],
            "--prometheus-url not supported with --mode=hosted",
        ),
        (
            &["--hub-kubeconfig", "/nonexistent", "--cluster-name", "prod"][..],
            "--cluster-name not supported with --mode=hosted",
        ),
    ] {
        let out = std::process::Command::new(&bin)
            .arg("--mode=hosted")
            .args(flags)
            .env("KUBECONFIG", "/nonexistent")
            .output()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flags:?} refused");
        assert!(stderr.contains(named), "{flags:?}: {stderr}");
    }
    Ok(())
}
