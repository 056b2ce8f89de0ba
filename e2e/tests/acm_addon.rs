//! update-status as an Open Cluster Management add-on, against the real OCM (built from source by
//! `hack/build-ocm.sh`, run by `hack/ocm-env.sh`: a hub with its CSR signer, OCM's registration
//! controller, add-on manager and add-on webhook, and two managed clusters with their klusterlet
//! agents). `config/acm` is applied on the hub as a fleet admin would, the add-on is enabled for
//! `cluster1`, and the test checks what docs/acm.md promises:
//!
//! 1. the agent's manifests (those of `config/openshift`: `config/default` and its monitoring
//!    objects) arrive on `cluster1` through the ManifestWork, the Deployment reporting to the hub
//!    with OCM's credentials;
//! 2. the add-on's hub identity can write in hub namespace `cluster1` and is forbidden elsewhere;
//! 3. the release controller, started as the rendered Deployment starts it (its arguments, as its
//!    ServiceAccount, with the hub kubeconfig OCM wrote, projected as the kubelet would), keeps the
//!    copies in hub namespace `cluster1` equal to its local objects, and owned by the
//!    ManagedClusterAddOn, at every step of a simulated update;
//! 4. a forced renewal of the add-on's certificate is followed with no restart and no failed call;
//! 5. `kubectl update-status --fleet` on the hub lists `cluster2` as soon as its add-on is enabled
//!    ("Not reported"), then with its status once its own agent reports;
//! 6. disabling the add-on for `cluster1` removes its copies on the hub (garbage collection through
//!    the owner reference) and the agent's manifests on `cluster1`;
//! 7. a hub restore that missed the add-on's definition (`e2e/src/hub_restore.rs`): the
//!    klusterlets, with a short eviction grace, find its ManifestWorks missing; `cluster2`, with
//!    nothing applied again, loses its agent after the grace (its CRDs, namespace and
//!    UpdateHistory stay); on `cluster1`, the labelled set of `config/acm` applied again within
//!    the grace keeps the agent's Deployment and its UpdateHistory (same UIDs) past it.
//!
//! Stand-ins for the kubelet (there is none): the Secret is projected into a folder as a Secret
//! volume is, and the Deployment's status is set to available. The controller runs as a process
//! with the Deployment's arguments, except its bind addresses (free loopback ports), the files of
//! its volumes (the projected folder, an empty serving-certificate folder), the Prometheus flags
//! (no Prometheus here) and `/metrics` served in plain HTTP for the test to read its counters
//! (the secure endpoint has its own tests).
#![cfg(feature = "e2e")] // needs the local control planes and OCM: `make e2e`

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DynamicObject};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use update_status_e2e::addon_agent::{
    ADDON, AGENT_NS, DEPLOYMENT, TIMEOUT, agent_container, counter, hub_secret_volume,
    service_account_kubeconfig, start_agent,
};
use update_status_e2e::controller::{release_bin, workspace_bin};
use update_status_e2e::hub_copies::{KINDS, Local, list_at, wait_mirrored_between};
use update_status_e2e::hub_restore;
use update_status_e2e::ocm::{self, OcmEnv, OcmOptions, kinds};
use update_status_e2e::playback::Simulator;
use update_status_e2e::{poll_until, repo_root};
use update_status_simulator::{SimConfig, Simulation};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

const CLUSTER1: &str = "cluster1";
const CLUSTER2: &str = "cluster2";
/// The klusterlets' `--appliedmanifestwork-eviction-grace-period` (step 7): long enough to apply
/// the labelled set again within it on a loaded machine, short for the test's wall time.
const EVICTION_GRACE: Duration = Duration::from_secs(20);

#[tokio::test]
async fn update_status_is_a_real_ocm_addon() -> TestResult {
    let env = OcmEnv::shared_with(OcmOptions {
        clusters: vec![CLUSTER1.into(), CLUSTER2.into()],
        // Step 7: the klusterlets' eviction grace, 60 minutes by default.
        eviction_grace: Some(format!("{}s", EVICTION_GRACE.as_secs())),
        ..OcmOptions::default()
    })
    .await?;
    let hub = env.hub_client().await?;
    let result = ocm::run_scenario(env, "acm_addon", scenario(env, hub.clone())).await;
    for c in [CLUSTER1, CLUSTER2] {
        let _ = ocm::disable_addon(&hub, c, ADDON).await;
    }
    if result.is_ok() {
        env.stop().await?;
    }
    result
}

/// The plugin's `--fleet -o json` on the hub.
fn fleet(hub_kubeconfig: &Path) -> Result<Value, BoxError> {
    let bin = workspace_bin("kubectl-update_status", "UPDATE_STATUS_CLI_BIN");
    let out = Command::new(&bin)
        .args(["--fleet", "-o", "json"])
        .env("KUBECONFIG", hub_kubeconfig)
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "kubectl update-status --fleet: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

fn row<'a>(report: &'a Value, cluster: &str) -> Option<&'a Value> {
    report["clusters"]
        .as_array()?
        .iter()
        .find(|r| r["cluster"] == cluster)
}

/// The kind and name of a manifest (empty where it has none).
fn kind_and_name(m: &Value) -> (String, String) {
    (
        m["kind"].as_str().unwrap_or_default().to_string(),
        m["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

async fn scenario(env: &'static OcmEnv, hub: Client) -> TestResult {
    let root = repo_root();
    let hub_kc = env.hub_kubeconfig();
    let work = env.work_dir("acm-addon-test")?;
    for c in [CLUSTER1, CLUSTER2] {
        ocm::wait_cluster_joined(&hub, c, TIMEOUT).await?;
        // As on OpenShift: the namespaces the agent's manifests put objects in (the
        // machine-config operator's, the console's dashboards), without which the ManifestWork
        // cannot apply them.
        ocm::create_openshift_namespaces(env, c).await?;
    }

    // config/acm on the hub, as docs/acm.md says; the add-on enabled for cluster1.
    env.apply_acm_config().await?;
    // The hub controller of config/acm/limits, as its Deployment runs it: it gives each cluster
    // namespace with the add-on the ResourceQuota without which the agent may not write.
    let _hub_controller = update_status_e2e::hub_limits::start_hub_controller(
        env,
        release_bin(
            "update-status-controller",
            "UPDATE_STATUS_CONTROLLER_RELEASE_BIN",
        ),
        &work,
        &[],
    )
    .await?;
    ocm::enable_addon(&hub, CLUSTER1, ADDON).await?;

    // 1. The agent's manifests: exactly those of config/openshift (config/default and its
    //    monitoring objects), through the ManifestWork.
    let works: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), CLUSTER1, &kinds::manifest_work());
    let work_name = format!("addon-{ADDON}-deploy-0");
    let manifest_work = poll_until(
        TIMEOUT,
        &format!("ManifestWork {CLUSTER1}/{work_name}"),
        || async { works.get_opt(&work_name).await.ok().flatten() },
    )
    .await?;
    let shipped: BTreeSet<(String, String)> = manifest_work
        .data
        .pointer("/spec/workload/manifests")
        .and_then(Value::as_array)
        .ok_or("the ManifestWork has no manifests")?
        .iter()
        .map(kind_and_name)
        .collect();
    let default = Command::new("kubectl")
        .args([
            "kustomize",
            &root
                .join("config")
                .join(update_status_controllers::acm_manifests::AGENT_OVERLAY)
                .display()
                .to_string(),
        ])
        .output()?;
    let want: BTreeSet<(String, String)> =
        serde_saphyr::from_multiple::<Value>(&String::from_utf8(default.stdout)?)?
            .iter()
            // Not the console plugin (acm_manifests.rs, docs/acm.md "What runs where"): a
            // ConsolePlugin would keep the work from Applied on a cluster without the console.
            .filter(|v| {
                !v.is_null()
                    && v["kind"] != "ConsolePlugin"
                    && v["metadata"]["labels"]["app.kubernetes.io/name"]
                        != "update-status-console-plugin"
            })
            .map(kind_and_name)
            .collect();
    let mut want = want;
    // Where OCM's add-on manager mounts a proxy CA from (acm_manifests.rs, docs/acm.md
    // "Behind a proxy").
    want.insert(("ConfigMap".into(), "update-status-proxy-ca".into()));
    // The cluster's own metrics allowlist for ACM observability, in its add-on's namespace
    // (acm_manifests.rs, docs/acm.md "Fleet alerts").
    want.insert((
        "Namespace".into(),
        "open-cluster-management-addon-observability".into(),
    ));
    want.insert((
        "ConfigMap".into(),
        "observability-metrics-custom-allowlist".into(),
    ));
    assert_eq!(
        shipped, want,
        "the agent's manifests are config/openshift's but the console plugin, the proxy CA's ConfigMap and the metrics allowlist"
    );
    let spoke1 = env.cluster_client(CLUSTER1).await?;
    let container = agent_container(&spoke1, CLUSTER1).await?;
    let args = container.args.clone().unwrap_or_default();
    for a in [
        format!("--hub-kubeconfig={}/kubeconfig", ocm::HUB_KUBECONFIG_MOUNT),
        format!("--cluster-name={CLUSTER1}"),
    ] {
        assert!(args.contains(&a), "{a} in {args:?}");
    }
    assert_eq!(
        container.image.as_deref(),
        Some("update-status-controller"),
        "the image from the AddOnDeploymentConfig's variable"
    );

    // 2. Its hub credentials, projected as the kubelet would; its identity's reach.
    let volume1 = hub_secret_volume(&spoke1, &work.join("cluster1-hub")).await?;
    let addon_client = update_status_e2e::client_for(&volume1.kubeconfig()).await?;
    let insights = |ns: &str| {
        Api::<update_status_api::crd::UpdateInsight>::namespaced(addon_client.clone(), ns)
    };
    insights(CLUSTER1)
        .list(&Default::default())
        .await
        .map_err(|e| format!("the add-on's identity may list updateinsights in {CLUSTER1}: {e}"))?;
    for other in ["default", CLUSTER2] {
        match insights(other).list(&Default::default()).await {
            Err(kube::Error::Api(s)) if s.code == 403 => {}
            r => {
                return Err(
                    format!("the add-on's identity must be forbidden in {other}: {r:?}").into(),
                );
            }
        }
    }
    ocm::set_deployment_available(&spoke1, AGENT_NS, DEPLOYMENT).await?;
    ocm::wait_addon_condition(&hub, CLUSTER1, ADDON, "Available", "True", TIMEOUT).await?;
    let mca_uid = ocm::addons_api(&hub, CLUSTER1)
        .get(ADDON)
        .await?
        .uid()
        .ok_or("the ManagedClusterAddOn has no uid")?;

    // 3. The controller as the Deployment runs it, through a simulated update.
    let spoke1_kc = env.cluster_kubeconfig(CLUSTER1)?;
    let sim = Simulation::new(SimConfig {
        operators: 4,
        pools: 2,
        masters: 1,
        nodes_per_pool: 2,
        max_unavailable: 1,
        seed: 7,
        start: jiff::Timestamp::now(),
        ..Default::default()
    })?;
    let mut simulator = Simulator::new(spoke1.clone(), sim);
    simulator.install().await?;
    let sa_kc = service_account_kubeconfig(env, CLUSTER1, &work).await?;
    let mut agent1 = start_agent(&container, &sa_kc, &volume1.kubeconfig(), &work, CLUSTER1)?;
    let log1 = agent1.log.clone();
    let local = Local {
        namespace: AGENT_NS,
        hosted_cluster: None,
        owner_uid: Some(&mca_uid),
    };
    let mut rotated = false;
    let mut steps = 0;
    loop {
        wait_mirrored_between(
            &spoke1_kc,
            &hub_kc,
            local,
            CLUSTER1,
            false,
            &format!("cluster1's copies at step {steps}"),
            &log1,
        )
        .await?;
        if simulator.simulation().is_completed() {
            break;
        }
        // 4. Mid-update, a forced renewal of the add-on's certificate.
        if steps == 3 && !rotated {
            let before = agent1.metrics()?;
            let (errors, reloads) = (
                counter(&before, "update_status_hub_sync_errors_total"),
                counter(&before, "update_status_hub_credential_reloads_total"),
            );
            let writes = volume1.writes();
            let rotation =
                ocm::force_rotation(&hub, &spoke1, CLUSTER1, ADDON, AGENT_NS, TIMEOUT).await?;
            assert_ne!(rotation.old_cert, rotation.new_cert);
            volume1.wait_writes(writes + 1, TIMEOUT).await?;
            poll_until(
                TIMEOUT,
                "the controller switched to the renewed certificate",
                || async {
                    let m = agent1.metrics().ok()?;
                    (counter(&m, "update_status_hub_credential_reloads_total") > reloads)
                        .then_some(())
                },
            )
            .await?;
            simulator.step().await?;
            steps += 1;
            wait_mirrored_between(
                &spoke1_kc,
                &hub_kc,
                local,
                CLUSTER1,
                false,
                "the step after the renewal",
                &log1,
            )
            .await?;
            let after = agent1.metrics()?;
            assert_eq!(
                counter(&after, "update_status_hub_sync_errors_total"),
                errors,
                "no failed hub call for the renewal"
            );
            agent1.running().map_err(|e| format!("no restart: {e}"))?;
            rotated = true;
            continue;
        }
        simulator.step().await?;
        steps += 1;
        if steps > 200 {
            return Err("the simulated update did not complete in 200 steps".into());
        }
    }
    assert!(
        rotated,
        "the update lasted long enough for the renewal ({steps} steps)"
    );

    // 5. The fleet knows cluster2 as soon as its add-on is enabled, then its report.
    ocm::enable_addon(&hub, CLUSTER2, ADDON).await?;
    let spoke2 = env.cluster_client(CLUSTER2).await?;
    let container2 = agent_container(&spoke2, CLUSTER2).await?;
    let report = poll_until(TIMEOUT, "cluster2's fleet row", || async {
        let r = fleet(&hub_kc).ok()?;
        row(&r, CLUSTER2).is_some().then_some(r)
    })
    .await?;
    let r2 = row(&report, CLUSTER2).ok_or("no cluster2 row")?;
    assert_eq!(r2["reported"], false, "{r2}");
    assert_eq!(r2["namespace"], CLUSTER2, "{r2}");
    assert!(r2["addOn"]["available"].is_string(), "{r2}");
    let r1 = row(&report, CLUSTER1).ok_or("no cluster1 row")?;
    assert_eq!(
        (r1["reported"].clone(), r1["addOn"]["available"].clone()),
        (json!(true), json!("True")),
        "{r1}"
    );
    assert_eq!(r1["to"], "4.18.3", "{r1}");
    assert_eq!(r1["completionPercent"], 100, "{r1}");
    let text = Command::new(workspace_bin(
        "kubectl-update_status",
        "UPDATE_STATUS_CLI_BIN",
    ))
    .arg("--fleet")
    .env("KUBECONFIG", &hub_kc)
    .output()?;
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with(CLUSTER2) && l.contains("Not reported")),
        "{text}"
    );

    let volume2 = hub_secret_volume(&spoke2, &work.join("cluster2-hub")).await?;
    let sim2 = Simulation::new(SimConfig {
        operators: 3,
        pools: 2,
        masters: 1,
        nodes_per_pool: 1,
        seed: 8,
        start: jiff::Timestamp::now(),
        ..Default::default()
    })?;
    let mut simulator2 = Simulator::new(spoke2.clone(), sim2);
    simulator2.install().await?;
    simulator2.step().await?;
    let sa_kc2 = service_account_kubeconfig(env, CLUSTER2, &work).await?;
    let agent2 = start_agent(&container2, &sa_kc2, &volume2.kubeconfig(), &work, CLUSTER2)?;
    let spoke2_kc = env.cluster_kubeconfig(CLUSTER2)?;
    let mca2_uid = ocm::addons_api(&hub, CLUSTER2)
        .get(ADDON)
        .await?
        .uid()
        .ok_or("no uid")?;
    wait_mirrored_between(
        &spoke2_kc,
        &hub_kc,
        Local {
            namespace: AGENT_NS,
            hosted_cluster: None,
            owner_uid: Some(&mca2_uid),
        },
        CLUSTER2,
        false,
        "cluster2's copies",
        &agent2.log,
    )
    .await?;
    let local_cp: Value = serde_json::from_str(
        &env.kubectl_cluster(
            CLUSTER2,
            [
                "get",
                "controlplaneupdatestatus",
                "cluster",
                "-n",
                AGENT_NS,
                "-o",
                "json",
            ],
        )
        .await?,
    )?;
    let report = fleet(&hub_kc)?;
    let r2 = row(&report, CLUSTER2).ok_or("no cluster2 row")?;
    assert_eq!(r2["reported"], true, "{r2}");
    assert_eq!(r2["assessment"], local_cp["status"]["assessment"], "{r2}");
    assert_eq!(
        r2["completionPercent"], local_cp["status"]["completionPercent"],
        "{r2}"
    );
    assert_eq!(r2["to"], local_cp["status"]["versions"]["target"], "{r2}");

    // 6. Disabling the add-on for cluster1: its copies go from the hub (garbage collection), its
    //    manifests from cluster1, but for what the template marks to outlive it (issue #47):
    //    our CRDs and the agent's namespace, with the UpdateHistory the agent wrote.
    drop(agent1);
    let history_before = update_histories(env, CLUSTER1).await?;
    assert!(
        !history_before.is_empty(),
        "the agent wrote cluster1's UpdateHistory"
    );
    ocm::disable_addon(&hub, CLUSTER1, ADDON).await?;
    poll_until(
        TIMEOUT,
        "cluster1's copies garbage-collected on the hub",
        || async {
            for kind in KINDS {
                if !list_at(&hub_kc, kind, CLUSTER1, None)
                    .await
                    .ok()?
                    .is_empty()
                {
                    return None;
                }
            }
            Some(())
        },
    )
    .await?;
    let deployments: Api<Deployment> = Api::namespaced(spoke1.clone(), AGENT_NS);
    ocm::wait_gone(
        &deployments,
        DEPLOYMENT,
        &format!("Deployment {AGENT_NS}/{DEPLOYMENT} on {CLUSTER1}"),
        TIMEOUT,
    )
    .await?;
    let report = fleet(&hub_kc)?;
    assert!(
        row(&report, CLUSTER1).is_none(),
        "cluster1 left the fleet view: {report}"
    );
    what_outlives_the_addon(env, &hub, &spoke1, &history_before).await?;
    drop(agent2);
    drop(volume1);
    drop(volume2);
    restore_without_the_definition(env, &hub, &spoke1, &spoke2).await
}

/// The UpdateHistories in the agent's namespace on `cluster`: (name, uid), none if the kind or
/// the namespace is gone.
async fn update_histories(env: &OcmEnv, cluster: &str) -> Result<Vec<(String, String)>, BoxError> {
    let out = env
        .kubectl_cluster(
            cluster,
            [
                "get",
                "updatehistories.update.openshift.io",
                "-n",
                AGENT_NS,
                "--ignore-not-found",
                "-o",
                "json",
            ],
        )
        .await;
    let out = match out {
        Ok(o) => o,
        // The kind itself is gone (its CRD deleted with the add-on).
        Err(e)
            if e.to_string()
                .contains("the server doesn't have a resource type") =>
        {
            return Ok(Vec::new());
        }
        Err(e) => return Err(e.into()),
    };
    if out.trim().is_empty() {
        return Ok(Vec::new());
    }
    let list: Value = serde_json::from_str(&out)?;
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            (
                h["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                h["metadata"]["uid"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect())
}

/// After the add-on was disabled for cluster1 (its Deployment gone): our CRDs and its
/// UpdateHistory are still there (`addon.open-cluster-management.io/deletion-orphan` in the
/// template); enabled again, the agent's manifests come back to the same UpdateHistory.
async fn what_outlives_the_addon(
    env: &'static OcmEnv,
    hub: &Client,
    spoke1: &Client,
    history_before: &[(String, String)],
) -> TestResult {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: Api<CustomResourceDefinition> = Api::all(spoke1.clone());
    for crd in [
        "updateinsights.update.openshift.io",
        "controlplaneupdatestatuses.update.openshift.io",
        "workerpoolupdatestatuses.update.openshift.io",
        "updatehistories.update.openshift.io",
    ] {
        let c = crds
            .get_opt(crd)
            .await?
            .ok_or_else(|| format!("CRD {crd} deleted on {CLUSTER1} with the add-on"))?;
        assert!(
            c.metadata.deletion_timestamp.is_none(),
            "CRD {crd} is being deleted on {CLUSTER1}"
        );
    }
    assert_eq!(
        update_histories(env, CLUSTER1).await?,
        history_before,
        "cluster1's UpdateHistory outlives the add-on"
    );
    ocm::enable_addon(hub, CLUSTER1, ADDON).await?;
    let deployments: Api<Deployment> = Api::namespaced(spoke1.clone(), AGENT_NS);
    poll_until(
        TIMEOUT,
        "the agent's Deployment back on cluster1",
        || async { deployments.get_opt(DEPLOYMENT).await.ok().flatten() },
    )
    .await?;
    assert_eq!(
        update_histories(env, CLUSTER1).await?,
        history_before,
        "the add-on enabled again finds cluster1's UpdateHistory"
    );
    Ok(())
}

/// The UID of the agent's Deployment on a managed cluster, once it is there.
async fn deployment_uid(spoke: &Client, cluster: &str) -> Result<String, BoxError> {
    let d = update_status_e2e::addon_agent::agent_deployment(spoke, cluster).await?;
    Ok(d.uid().ok_or("the Deployment has no uid")?)
}

/// 7. A hub restored without the add-on's definition (issue #47, docs/acm.md "Hub backup and
///    restore"), as the klusterlets see it: their ManifestWorks missing from the hub. Both
///    klusterlets are frozen while the definition (ClusterManagementAddOns, AddOnTemplates,
///    AddOnDeploymentConfig of the labelled set) goes from the hub and the ManifestWorks with
///    it; each is then restarted (a fresh list of the hub, which no longer has them).
///    Control, `cluster2`: nothing comes back; after the grace its agent is gone, while what the
///    template marks `deletion-orphan` stays. `cluster1`: the labelled set applied again within
///    the grace (and its ManagedClusterAddOn, which a restore brings back with the managed
///    clusters): past the grace, the same Deployment and UpdateHistory.
async fn restore_without_the_definition(
    env: &'static OcmEnv,
    hub: &Client,
    spoke1: &Client,
    spoke2: &Client,
) -> TestResult {
    let work = format!("addon-{ADDON}-deploy-0");
    let mut before = Vec::new();
    for (c, spoke) in [(CLUSTER1, spoke1), (CLUSTER2, spoke2)] {
        poll_until(TIMEOUT, &format!("{c}'s AppliedManifestWork"), || async {
            hub_restore::applied_work(spoke, &work).await.ok().flatten()
        })
        .await?;
        before.push((
            deployment_uid(spoke, c).await?,
            update_histories(env, c).await?,
        ));
    }
    let set = hub_restore::labelled_set(&repo_root())?;
    for c in [CLUSTER1, CLUSTER2] {
        env.signal_agent(c, "STOP")?;
    }
    let lost = async {
        hub_restore::delete_addon_definition(hub, &set, TIMEOUT).await?;
        for c in [CLUSTER1, CLUSTER2] {
            hub_restore::drop_work(hub, c, &work, TIMEOUT).await?;
            env.kill_agent_process(c)?;
        }
        Ok::<_, BoxError>(())
    }
    .await;
    if let Err(e) = lost {
        for c in [CLUSTER1, CLUSTER2] {
            env.signal_agent(c, "CONT")?;
        }
        return Err(e);
    }

    // Control: cluster2, nothing applied again.
    env.signal_agent(CLUSTER2, "CONT")?;
    hub_restore::wait_eviction_start(spoke2, &work, TIMEOUT).await?;
    let deployments2: Api<Deployment> = Api::namespaced(spoke2.clone(), AGENT_NS);
    ocm::wait_gone(
        &deployments2,
        DEPLOYMENT,
        &format!("Deployment {AGENT_NS}/{DEPLOYMENT} on {CLUSTER2} (evicted)"),
        EVICTION_GRACE + TIMEOUT,
    )
    .await?;
    kept_on(spoke2, CLUSTER2).await?;
    assert_eq!(
        update_histories(env, CLUSTER2).await?,
        before[1].1,
        "cluster2's UpdateHistory outlives the eviction (deletion-orphan)"
    );

    // cluster1: the labelled set applied again within the grace.
    env.signal_agent(CLUSTER1, "CONT")?;
    let start = hub_restore::wait_eviction_start(spoke1, &work, TIMEOUT).await?;
    hub_restore::apply_labelled_set(env, &set).await?;
    // A restore brings the ManagedClusterAddOns back with the managed clusters (ACM's own
    // backup); here they may have gone with their ClusterManagementAddOn (their owner).
    if ocm::addons_api(hub, CLUSTER1)
        .get_opt(ADDON)
        .await?
        .is_none()
    {
        eprintln!("e2e: step 7: {CLUSTER1}'s ManagedClusterAddOn went with the definition");
        ocm::enable_addon(hub, CLUSTER1, ADDON).await?;
    }
    // Past the grace (counted from the agent's own start, plus its deletion's round trips).
    let past = start.checked_add(EVICTION_GRACE + Duration::from_secs(10))?;
    let wait = past.duration_since(jiff::Timestamp::now());
    if wait.is_positive() {
        tokio::time::sleep(Duration::try_from(wait)?).await;
    }
    let deployments1: Api<Deployment> = Api::namespaced(spoke1.clone(), AGENT_NS);
    assert_eq!(
        deployments1
            .get_opt(DEPLOYMENT)
            .await?
            .and_then(|d| d.uid()),
        Some(before[0].0.clone()),
        "cluster1's agent (same Deployment) outlives the grace with the labelled set applied again"
    );
    assert_eq!(
        update_histories(env, CLUSTER1).await?,
        before[0].1,
        "cluster1's UpdateHistory, the same"
    );
    let applied = hub_restore::applied_work(spoke1, &work)
        .await?
        .ok_or("cluster1's AppliedManifestWork is gone")?;
    assert_eq!(
        hub_restore::eviction_start(&applied)?,
        None,
        "the work agent stopped counting the grace"
    );
    Ok(())
}

/// What the template marks `deletion-orphan` on `cluster`: the UpdateHistory CRD and the agent's
/// namespace, there and not being deleted.
async fn kept_on(spoke: &Client, cluster: &str) -> TestResult {
    use k8s_openapi::api::core::v1::Namespace;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crd = Api::<CustomResourceDefinition>::all(spoke.clone())
        .get_opt("updatehistories.update.openshift.io")
        .await?
        .ok_or_else(|| format!("the UpdateHistory CRD went from {cluster}"))?;
    let ns = Api::<Namespace>::all(spoke.clone())
        .get_opt(AGENT_NS)
        .await?
        .ok_or_else(|| format!("namespace {AGENT_NS} went from {cluster}"))?;
    assert!(
        crd.metadata.deletion_timestamp.is_none() && ns.metadata.deletion_timestamp.is_none(),
        "the UpdateHistory CRD and {AGENT_NS} are being deleted on {cluster}"
    );
    Ok(())
}
