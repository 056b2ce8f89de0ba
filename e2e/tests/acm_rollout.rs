//! The update-status add-on installed by Placement (`config/acm-placement`) on the real OCM
//! (`hack/ocm-env.sh`: registration controller, add-on manager, placement controller, add-on
//! webhook, a klusterlet agent per managed cluster), as docs/acm.md promises it, in one OCM
//! environment:
//!
//! 1. **Progressive rollout.** `cluster1` is the canary (`update-status-canary=true`): a first
//!    install, then a new agent image (the AddOnDeploymentConfig's `UPDATE_STATUS_IMAGE`), reach
//!    `cluster0` and `cluster2` only once `cluster1`'s agent is rolled out and available (the
//!    Deployment's status, which `set_deployment_available` sets as kubelet and the deployment
//!    controller would) and the soak (`minSuccessTime`, shortened here through the
//!    ClusterManagementAddOn's own field) has passed. **Offline clusters do not stall it**
//!    (issue 47 item 3): `cluster0`'s klusterlet is stopped before the new image, the rollout
//!    Placement drops it (its `tolerationSeconds` shortened through the Placement's own field)
//!    while the install Placement keeps it; `cluster2` gets the new image, `cluster0`'s agent is
//!    left as it is, and catches up once its klusterlet runs again.
//! 2. **ACM's upgrade tools fed.** The agent (the controller, as its ServiceAccount, reporting to
//!    the hub with the credentials OCM issued) publishes ClusterClaims during a simulated update
//!    whose worker pool is paused: the klusterlet copies them to the ManagedCluster, and a
//!    Placement selecting `state.update.openshift.io=Completed,
//!    workers-complete.update.openshift.io=true` selects `cluster1` only once the update is
//!    really complete.
//! 3. **An install that survives the cluster's update.** `cluster1`'s klusterlet is stopped
//!    (SIGSTOP) past the lease grace (shortened through the ManagedCluster's own
//!    `leaseDurationSeconds`): the cluster turns unreachable (taint), a witness Placement without
//!    tolerations drops it, ours keeps it, and the ManagedClusterAddOn keeps its UID and the hub
//!    copies stay.
#![cfg(feature = "e2e")] // needs the local control planes and OCM: `make e2e`

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use update_status_api::acm::{CLAIM_STATE, CLAIM_TARGET, CLAIM_WORKERS_COMPLETE};
use update_status_e2e::addon_agent::{
    ADDON, AGENT_NS, DEPLOYMENT, TIMEOUT, hub_secret_volume, service_account_kubeconfig,
};
use update_status_e2e::controller::{Controller, Launch, workspace_bin};
use update_status_e2e::hub_copies::{KINDS, Local, list_at, wait_mirrored_between};
use update_status_e2e::ocm::{self, OcmEnv, SecretVolume, kinds};
use update_status_e2e::playback::Simulator;
use update_status_e2e::{poll_until, repo_root, wait_for};
use update_status_simulator::{FaultSpec, Faults, SimConfig, Simulation};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

const CONFIG_NS: &str = "open-cluster-management-update-status";
const CLUSTER1: &str = "cluster1";
const CLUSTER2: &str = "cluster2";
/// Offline during a rollout: first by name, so that the rollout's alphabetical order would give
/// it the one slot of the non-canary clusters (maxConcurrency 10% of two) before `cluster2`.
const CLUSTER0: &str = "cluster0";
/// The AddOnDeploymentConfig of the new image ([`switch_image`]).
const NEXT_CONFIG: &str = "update-status-next";
/// The soak of the test's rollout (the shipped one is 10m).
const SOAK: &str = "3s";
/// How long a cluster that must not move yet is watched not moving: five work status syncs
/// (`OCM_STATUS_SYNC_INTERVAL`, 2 s) after the canary reported not available.
const HOLD: Duration = Duration::from_secs(10);

#[tokio::test]
async fn the_addon_rolls_out_progressively_feeds_acm_and_survives_an_unreachable_cluster()
-> TestResult {
    let started = Instant::now();
    let env = OcmEnv::shared(&[CLUSTER0, CLUSTER1, CLUSTER2]).await?;
    eprintln!(
        "acm_rollout: OCM environment ready after {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let hub = env.hub_client().await?;
    let result = ocm::run_scenario(env, "acm_rollout", scenario(env, hub.clone())).await;
    // Whatever happened, the klusterlet runs again (a stopped one would hold `down`).
    let _ = env.signal_agent(CLUSTER1, "CONT");
    let _ = env.signal_agent(CLUSTER0, "CONT");
    if result.is_ok() {
        env.stop().await?;
    }
    eprintln!(
        "acm_rollout: {:.1}s in all",
        started.elapsed().as_secs_f64()
    );
    result
}

async fn scenario(env: &'static OcmEnv, hub: Client) -> TestResult {
    let work = env.work_dir("acm-rollout-test")?;
    for c in [CLUSTER0, CLUSTER1, CLUSTER2] {
        ocm::wait_cluster_joined(&hub, c, TIMEOUT).await?;
        // As on OpenShift: the namespaces the agent's manifests put objects in.
        let _ = ocm::create_openshift_namespaces(env, c).await;
        // ACM sets vendor=OpenShift from the cluster's product claim; OCM alone sets nothing.
        let mut labels = vec!["update-status=enabled", "vendor=OpenShift"];
        if c == CLUSTER1 {
            labels.push("update-status-canary=true");
        }
        let mut args = vec!["label", "--overwrite", "managedcluster", c];
        args.extend(labels);
        env.kubectl_hub(args).await?;
    }
    freeze_placements(env, &hub).await?;
    let placement_dir = repo_root().join("config/acm-placement");
    env.kubectl_hub([
        "apply",
        "--server-side",
        "-k",
        &placement_dir.display().to_string(),
    ])
    .await?;
    // The hub controller keeping the quota without which the agent may not write.
    let _hub_controller = update_status_e2e::hub_limits::start_quota_keeper(env, &work).await?;
    // The soak, shortened through the ClusterManagementAddOn's own field (of each Placement).
    let soak: Vec<Value> = (0..install_placements(env).await?.len())
        .map(|i| {
            json!({
                "op": "replace",
                "path": format!("/spec/installStrategy/placements/{i}/rolloutStrategy/progressive/minSuccessTime"),
                "value": SOAK,
            })
        })
        .collect();
    patch_cma(env, &Value::Array(soak)).await?;

    canary_first_with_stale_group_labels(env, &hub).await?;
    let t = Instant::now();
    progressive_rollout(env, &hub).await?;
    eprintln!(
        "acm_rollout: progressive rollout checked in {:.1}s",
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let (agent, _volume) = start_agent(env, &hub, &work).await?;
    claims_follow_the_update(env, &hub, &agent).await?;
    no_foreign_claims(env, &agent, &work).await?;
    eprintln!(
        "acm_rollout: cluster claims checked in {:.1}s",
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    survives_unreachable(env, &hub, &agent).await?;
    eprintln!(
        "acm_rollout: unreachable cluster checked in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    drop(agent);
    Ok(())
}

// --- 0. the placement controller's first install, stopped at its worst moment ------------

const PLACEMENTS: [&str; 2] = [ADDON, "update-status-rollout"];
const SCHEDULING_DISABLE: &str =
    "cluster.open-cluster-management.io/experimental-scheduling-disable";
const FREEZER: &str = "update-status-e2e-freeze";

/// Before the add-on's Placements exist: creates them with scheduling disabled (an annotation of
/// their own field manager, which `kubectl apply -k` leaves) and writes their PlacementDecisions
/// as the placement controller leaves them for a moment on a first install. Its first pass, before
/// the cluster set binding is bound, selects no cluster: PlacementDecision 1 in the unnamed group
/// 0. Its next pass patches the clusters (the canaries) into PlacementDecision 1 and returns,
/// leaving the group labels (`canary`) to the pass after (`createOrUpdatePlacementDecision`);
/// PlacementDecision 2 holds the others. Under load (hack/stress.sh) the add-on manager once
/// configured cluster0 with the canary in that moment.
async fn freeze_placements(env: &OcmEnv, hub: &Client) -> TestResult {
    let _ = env.kubectl_hub(["create", "namespace", CONFIG_NS]).await;
    let placements: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), CONFIG_NS, &kinds::placement());
    let decisions: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), CONFIG_NS, &kinds::placement_decision());
    let pp = PatchParams::apply(FREEZER).force();
    for p in PLACEMENTS {
        let placement = json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "Placement",
            "metadata": {"name": p, "annotations": {SCHEDULING_DISABLE: "true"}},
            "spec": {},
        });
        placements.patch(p, &pp, &Patch::Apply(&placement)).await?;
        for (i, clusters) in [vec![CLUSTER1], vec![CLUSTER0, CLUSTER2]]
            .into_iter()
            .enumerate()
        {
            let name = format!("{p}-decision-{}", i + 1);
            let decision = json!({
                "apiVersion": "cluster.open-cluster-management.io/v1beta1",
                "kind": "PlacementDecision",
                "metadata": {"name": name, "labels": {
                    "cluster.open-cluster-management.io/placement": p,
                    "cluster.open-cluster-management.io/decision-group-name": "",
                    "cluster.open-cluster-management.io/decision-group-index": i.to_string(),
                }},
            });
            decisions
                .patch(&name, &pp, &Patch::Apply(&decision))
                .await?;
            let status = json!({
                "apiVersion": "cluster.open-cluster-management.io/v1beta1",
                "kind": "PlacementDecision",
                "status": {"decisions": clusters.iter()
                    .map(|c| json!({"clusterName": c, "reason": ""}))
                    .collect::<Vec<_>>()},
            });
            decisions
                .patch_status(&name, &pp, &Patch::Apply(&status))
                .await?;
        }
    }
    Ok(())
}

/// With the decisions of [`freeze_placements`] (the canary cluster1 in group 0, its label not yet
/// `canary`), the add-on manager configures the canary alone: the rollout strategy holds group 0
/// mandatory by index too. Then the placement controller takes the Placements back.
async fn canary_first_with_stale_group_labels(env: &OcmEnv, hub: &Client) -> TestResult {
    let first = poll_until(TIMEOUT, "a first ManifestWork", || async {
        for c in [CLUSTER0, CLUSTER1, CLUSTER2] {
            if work_image(hub, c).await.is_some() {
                return Some(c);
            }
        }
        None
    })
    .await?;
    let until = Instant::now() + HOLD;
    while Instant::now() < until {
        let with_work: Vec<&str> = {
            let mut v = Vec::new();
            for c in [CLUSTER0, CLUSTER1, CLUSTER2] {
                if work_image(hub, c).await.is_some() {
                    v.push(c);
                }
            }
            v
        };
        assert_eq!(
            with_work,
            vec![CLUSTER1],
            "group 0 unnamed for a moment (first: {first}): only the canary may be configured"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for p in PLACEMENTS {
        let annotation = format!("{SCHEDULING_DISABLE}-");
        env.kubectl_hub(["annotate", "placement", "-n", CONFIG_NS, p, &annotation])
            .await?;
    }
    Ok(())
}

// --- 1. progressive rollout -----------------------------------------------------------

/// The agent image in the ManifestWork of `cluster` on the hub (`None`: no work yet).
async fn work_image(hub: &Client, cluster: &str) -> Option<String> {
    let works: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), cluster, &kinds::manifest_work());
    let w = works
        .get_opt(&format!("addon-{ADDON}-deploy-0"))
        .await
        .ok()??;
    w.data
        .pointer("/spec/workload/manifests")?
        .as_array()?
        .iter()
        .find(|m| m["kind"] == "Deployment" && m["metadata"]["name"] == DEPLOYMENT)?
        .pointer("/spec/template/spec/containers/0/image")?
        .as_str()
        .map(String::from)
}

/// Once the rollout reached `cluster` (its Deployment on the managed cluster runs `image`), checks
/// for [`HOLD`] that each of `others` stays at its image (`None`: no ManifestWork) while
/// `cluster`'s agent is not available, then that `cluster`'s rollout says why it waits.
async fn hold_while_canary_unavailable(
    hub: &Client,
    spoke: &Client,
    (cluster, image): (&str, &str),
    others: &[(&str, Option<&str>)],
    what: &str,
) -> TestResult {
    wait_agent_image(
        spoke,
        image,
        &format!("{what}: {image} in {cluster}'s Deployment"),
    )
    .await?;
    let until = Instant::now() + HOLD;
    while Instant::now() < until {
        for &(other, other_image) in others {
            assert_eq!(
                work_image(hub, other).await.as_deref(),
                other_image,
                "{what}: {other} must wait for {cluster}'s agent to be available"
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let mca = ocm::addons_api(hub, cluster).get(ADDON).await?;
    let progressing = ocm::condition(&mca, "Progressing").cloned();
    assert!(
        progressing.as_ref().is_some_and(|c| c["status"] == "True"
            && c["message"]
                .as_str()
                .is_some_and(|m| m.contains("work is not ready"))),
        "{what}: {cluster}'s rollout waits for its agent: {progressing:?}"
    );
    Ok(())
}

/// Waits until the agent's Deployment on `spoke` runs `image` (`what` names the wait).
async fn wait_agent_image(spoke: &Client, image: &str, what: &str) -> TestResult {
    let deployments: Api<Deployment> = Api::namespaced(spoke.clone(), AGENT_NS);
    wait_for(TIMEOUT, what, || async {
        deployments
            .get_opt(DEPLOYMENT)
            .await
            .ok()
            .flatten()
            .is_some_and(|d| deployment_image(&d).as_deref() == Some(image))
    })
    .await?;
    Ok(())
}

/// Why the rollout may wait on `cluster`: its ManifestWork's conditions and the manifests not
/// applied or not available.
async fn work_diagnosis(env: &OcmEnv, cluster: &str) -> String {
    let path = "jsonpath={.status.conditions}{\"\\n\"}{range .status.resourceStatus.manifests[*]}{.resourceMeta.kind}/{.resourceMeta.name}: {range .conditions[?(@.status!=\"True\")]}{.type}={.status} {.message}; {end}{\"\\n\"}{end}";
    let work = format!("addon-{ADDON}-deploy-0");
    match env
        .kubectl_hub(["get", "manifestwork", "-n", cluster, &work, "-o", path])
        .await
    {
        Ok(out) => format!("{cluster}'s ManifestWork {work}: {out}"),
        Err(e) => format!("{cluster}'s ManifestWork {work} unreadable: {e}"),
    }
}

async fn progressive_rollout(env: &OcmEnv, hub: &Client) -> TestResult {
    first_install(env, hub).await?;
    let offline = take_offline(env, hub, CLUSTER0).await?;
    let new_image = "update-status-controller:next";
    let result = new_image_while_offline(env, hub, new_image).await;
    // Whatever happened, cluster0's klusterlet runs again.
    env.signal_agent(CLUSTER0, "CONT")?;
    result?;
    catches_up(env, hub, CLUSTER0, new_image, offline).await
}

/// A first install: the canary `cluster1` first; then the others one at a time (maxConcurrency:
/// 10% of two), by name: `cluster0`, then `cluster2`.
async fn first_install(env: &OcmEnv, hub: &Client) -> TestResult {
    let spoke1 = env.cluster_client(CLUSTER1).await?;
    // All selected, all enabled (the install itself is not paced: the configuration is).
    let all = BTreeSet::from([CLUSTER0.into(), CLUSTER1.into(), CLUSTER2.into()]);
    wait_for(
        TIMEOUT,
        "the Placement selects the three clusters",
        || async {
            ocm::placement_decisions(hub, CONFIG_NS, ADDON)
                .await
                .is_ok_and(|d| d == all)
        },
    )
    .await?;
    poll_until(TIMEOUT, "cluster1's ManifestWork", || {
        work_image(hub, CLUSTER1)
    })
    .await?;
    // The others get nothing while the canary's agent is not available.
    hold_while_canary_unavailable(
        hub,
        &spoke1,
        (CLUSTER1, "update-status-controller"),
        &[(CLUSTER0, None), (CLUSTER2, None)],
        "first install",
    )
    .await?;
    ocm::set_deployment_available(&spoke1, AGENT_NS, DEPLOYMENT).await?;
    let available = Instant::now();
    for c in [CLUSTER0, CLUSTER2] {
        let image = poll_until(TIMEOUT, &format!("{c}'s ManifestWork"), || {
            work_image(hub, c)
        })
        .await;
        let image = match image {
            Ok(i) => i,
            Err(e) => return Err(format!("{e}; {}", work_diagnosis(env, CLUSTER1).await).into()),
        };
        eprintln!(
            "acm_rollout: {c} got its first install {:.1}s after cluster1's agent was available",
            available.elapsed().as_secs_f64()
        );
        assert_eq!(image, "update-status-controller");
        let spoke = env.cluster_client(c).await?;
        wait_deployment(&spoke).await?;
        ocm::set_deployment_available(&spoke, AGENT_NS, DEPLOYMENT).await?;
    }
    for c in [CLUSTER0, CLUSTER1, CLUSTER2] {
        ocm::wait_addon_condition(hub, c, ADDON, "Available", "True", TIMEOUT).await?;
        ocm::wait_addon_condition(hub, c, ADDON, "Progressing", "False", TIMEOUT).await?;
    }
    Ok(())
}

/// A new image: as docs/acm.md says (and `make deploy-acm` does), a new AddOnDeploymentConfig,
/// and the ClusterManagementAddOn pointed at it; the add-on manager renders every cluster from
/// the live object its status names, so editing the old one in place would reach every cluster.
async fn switch_image(env: &OcmEnv, hub: &Client, new_image: &str) -> TestResult {
    let new_config = NEXT_CONFIG;
    let configs: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), CONFIG_NS, &kinds::addon_deployment_config());
    let mut adc = configs.get(ADDON).await?;
    adc.metadata = kube::api::ObjectMeta {
        name: Some(new_config.into()),
        namespace: Some(CONFIG_NS.into()),
        ..Default::default()
    };
    adc.data["spec"]["customizedVariables"] =
        json!([{"name": "UPDATE_STATUS_IMAGE", "value": new_image}]);
    configs.create(&Default::default(), &adc).await?;
    patch_cma(
        env,
        &json!([
            {"op": "test", "path": "/spec/supportedConfigs/1/resource", "value": "addondeploymentconfigs"},
            {"op": "replace", "path": "/spec/supportedConfigs/1/defaultConfig/name", "value": new_config},
        ]),
    )
    .await?;
    Ok(())
}

/// A new image while `cluster0` is offline: the canary first, then `cluster2`, which
/// `cluster0` (first by name) must not hold up; `cluster0`'s agent is left as it is.
async fn new_image_while_offline(env: &OcmEnv, hub: &Client, new_image: &str) -> TestResult {
    let spoke1 = env.cluster_client(CLUSTER1).await?;
    let spoke2 = env.cluster_client(CLUSTER2).await?;
    switch_image(env, hub, new_image).await?;
    hold_while_canary_unavailable(
        hub,
        &spoke1,
        (CLUSTER1, new_image),
        &[
            (CLUSTER0, Some("update-status-controller")),
            (CLUSTER2, Some("update-status-controller")),
        ],
        "new image",
    )
    .await?;
    ocm::set_deployment_available(&spoke1, AGENT_NS, DEPLOYMENT).await?;
    let available = Instant::now();
    let moved = poll_until(
        TIMEOUT,
        "the new image in cluster2's ManifestWork (cluster0 offline)",
        || async { (work_image(hub, CLUSTER2).await.as_deref() == Some(new_image)).then_some(()) },
    )
    .await;
    if let Err(e) = moved {
        let progression = install_progressions(env).await;
        return Err(format!("{e}; the rollout: {progression}").into());
    }
    // An offline cluster's agent is left as it is: it rejoins the rollout when it is back.
    assert_eq!(
        work_image(hub, CLUSTER0).await.as_deref(),
        Some("update-status-controller"),
        "cluster0's ManifestWork while it is offline"
    );
    eprintln!(
        "acm_rollout: cluster2 got the new image {:.1}s after cluster1's agent ran it",
        available.elapsed().as_secs_f64()
    );
    wait_agent_image(&spoke2, new_image, "the new image in cluster2's Deployment").await?;
    ocm::set_deployment_available(&spoke2, AGENT_NS, DEPLOYMENT).await?;
    ocm::wait_addon_condition(hub, CLUSTER2, ADDON, "Progressing", "False", TIMEOUT).await?;
    fleet_shows_the_lagging_agent(env)
}

/// The plugin's `--fleet` on the hub (issue 47 item 4), while `cluster0` is offline with the
/// old deployment config. The add-on manager passed it over: its ManagedClusterAddOn keeps the
/// old configuration as desired and applied, its last rollout `Completed` (seen here); only the
/// ClusterManagementAddOn names the new one. Its row says the new one is pending (`fleetDesired`,
/// `Pending (deployment config)`); `cluster2`'s reads as rolled out.
fn fleet_shows_the_lagging_agent(env: &OcmEnv) -> TestResult {
    let fleet = |args: &[&str]| -> Result<String, BoxError> {
        let out = std::process::Command::new(workspace_bin(
            "kubectl-update_status",
            "UPDATE_STATUS_CLI_BIN",
        ))
        .arg("--fleet")
        .args(args)
        .env("KUBECONFIG", env.hub_kubeconfig())
        .stdin(std::process::Stdio::null())
        .output()?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!("kubectl update-status --fleet {args:?}: {err}").into());
        }
        Ok(String::from_utf8(out.stdout)?)
    };
    let report: Value = serde_json::from_str(&fleet(&["-o", "json"])?)?;
    let add_on = |cluster: &str| -> Result<Value, BoxError> {
        let rows = report["clusters"].as_array().cloned().unwrap_or_default();
        let row = rows.into_iter().find(|r| r["cluster"] == cluster);
        let row = row.ok_or_else(|| format!("no fleet row for {cluster}: {report}"))?;
        Ok(row["addOn"].clone())
    };
    let (lagging, current) = (add_on(CLUSTER0)?, add_on(CLUSTER2)?);
    eprintln!("acm_rollout: --fleet addOn of cluster0: {lagging}; of cluster2: {current}");
    let config = |a: &Value, which: &str| a["deploymentConfig"][which]["name"].clone();
    assert_eq!(config(&current, "desired"), NEXT_CONFIG, "{current}");
    assert_eq!(config(&current, "applied"), NEXT_CONFIG, "{current}");
    assert!(
        current["deploymentConfig"].get("fleetDesired").is_none(),
        "{current}"
    );
    assert_eq!(config(&lagging, "applied"), ADDON, "{lagging}");
    assert_eq!(config(&lagging, "fleetDesired"), NEXT_CONFIG, "{lagging}");
    let text = fleet(&[])?;
    let line = |cluster: &str| {
        let mut lines = text.lines();
        lines
            .find(|l| l.split_whitespace().next() == Some(cluster))
            .unwrap_or_default()
    };
    assert!(
        line(CLUSTER0).contains("Pending (deployment config)"),
        "{text}"
    );
    assert!(!line(CLUSTER2).contains("deployment config"), "{text}");
    Ok(())
}

/// The image of a Deployment's first container.
fn deployment_image(d: &Deployment) -> Option<String> {
    d.spec
        .template
        .spec
        .as_ref()?
        .containers
        .first()?
        .image
        .clone()
}

async fn wait_deployment(spoke: &Client) -> TestResult {
    let deployments: Api<Deployment> = Api::namespaced(spoke.clone(), AGENT_NS);
    wait_for(TIMEOUT, "the agent's Deployment", || async {
        deployments
            .get_opt(DEPLOYMENT)
            .await
            .ok()
            .flatten()
            .is_some()
    })
    .await?;
    Ok(())
}

// --- the agent of cluster1 --------------------------------------------------------------

/// The controller on cluster1 as its Deployment runs it: its ServiceAccount (the RBAC the
/// ManifestWork applied, ClusterClaims included), the hub kubeconfig OCM wrote (projected as a
/// Secret volume), `--leader-elect`.
async fn start_agent(
    env: &OcmEnv,
    hub: &Client,
    work: &Path,
) -> Result<(Agent, SecretVolume), BoxError> {
    let spoke1 = env.cluster_client(CLUSTER1).await?;
    let volume = hub_secret_volume(&spoke1, &work.join("cluster1-hub")).await?;
    let sa = service_account_kubeconfig(env, CLUSTER1, work).await?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let hub_kc = format!("--hub-kubeconfig={}", volume.kubeconfig().display());
    let controller = Controller::launch(
        &Launch {
            bin: workspace_bin("update-status-controller", "UPDATE_STATUS_CONTROLLER_BIN"),
            kubeconfig: sa,
            log: work.join("cluster1-controller.log"),
        },
        AGENT_NS,
        port,
        &[hub_kc.as_str(), "--cluster-name=cluster1", "--leader-elect"],
    )?;
    let mca_uid = ocm::addons_api(hub, CLUSTER1)
        .get(ADDON)
        .await?
        .uid()
        .ok_or("the ManagedClusterAddOn has no uid")?;
    Ok((
        Agent {
            controller,
            mca_uid,
        },
        volume,
    ))
}

struct Agent {
    controller: Controller,
    mca_uid: String,
}

// --- 2. claims --------------------------------------------------------------------------

/// The Placement of docs/acm.md that selects the clusters whose update is really complete.
const COMPLETE: &str = "update-complete";

async fn claims_follow_the_update(env: &OcmEnv, hub: &Client, agent: &Agent) -> TestResult {
    let complete = json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "Placement",
        "metadata": {"name": COMPLETE, "namespace": CONFIG_NS},
        "spec": {
            "clusterSets": ["global"],
            "predicates": [{"requiredClusterSelector": {"claimSelector": {"matchExpressions": [
                {"key": CLAIM_STATE, "operator": "In", "values": ["Completed"]},
                {"key": CLAIM_WORKERS_COMPLETE, "operator": "In", "values": ["true"]},
            ]}}}],
            "tolerations": [
                {"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists"},
                {"key": "cluster.open-cluster-management.io/unavailable", "operator": "Exists"},
            ],
        },
    });
    let placements = apply_placement(hub, COMPLETE, &complete).await?;
    let spoke1 = env.cluster_client(CLUSTER1).await?;
    let sim = Simulation::new(SimConfig {
        operators: 3,
        pools: 2,
        masters: 1,
        nodes_per_pool: 2,
        seed: 11,
        start: jiff::Timestamp::now(),
        faults: Faults {
            // Paused long enough for the control plane to complete while the pool waits.
            paused_pool: Some(FaultSpec::auto(40)),
            ..Default::default()
        },
        ..Default::default()
    })?;
    let mut simulator = Simulator::new(spoke1.clone(), sim);
    simulator.install().await?;
    // Before the update: the installed version is complete.
    let claims = wait_claims(hub, "the claims of the installed version", |c| {
        c.get(CLAIM_STATE).map(String::as_str) == Some("Completed")
    })
    .await?;
    eprintln!("acm_rollout: claims before the update: {claims:?}");
    wait_selected(hub, COMPLETE, true, "the installed version").await?;

    let counter = ClaimChanges::start(hub.clone(), CLUSTER1);
    let writes_before = claim_writes(&agent.controller)?;
    let cps: Api<DynamicObject> = Api::namespaced_with(
        spoke1.clone(),
        AGENT_NS,
        &kube::discovery::ApiResource::erase::<update_status_api::crd::ControlPlaneUpdateStatus>(
            &(),
        ),
    );
    // The update starts: no longer complete.
    simulator.step().await?;
    let mut steps = 1;
    wait_claims(hub, "the claims once the update started", |c| {
        c.get(CLAIM_STATE).map(String::as_str) == Some("Progressing")
    })
    .await?;
    wait_selected(hub, COMPLETE, false, "the update started").await?;
    let mut saw_paused = false;
    while !simulator.simulation().is_completed() {
        simulator.step().await?;
        steps += 1;
        if steps > 300 {
            return Err("the simulated update did not complete in 300 steps".into());
        }
        if simulator.simulation().is_completed() {
            break;
        }
        // While not complete, the cluster is never selected as complete.
        let selected = ocm::placement_decisions(hub, CONFIG_NS, COMPLETE).await?;
        assert!(
            !selected.contains(CLUSTER1),
            "step {steps}: cluster1 selected as complete mid-update"
        );
        let paused = simulator.simulation().fault_status().paused_pool.is_some();
        if !paused || saw_paused {
            continue;
        }
        // The control plane done, the pool paused: the claim says Paused, not Completed.
        let cp_done = cps
            .get_opt("cluster")
            .await?
            .and_then(|o| {
                o.data
                    .pointer("/status/assessment")?
                    .as_str()
                    .map(String::from)
            })
            .is_some_and(|a| a == "Completed");
        if cp_done {
            let claims = wait_claims(hub, "the claims with a paused pool", |c| {
                c.get(CLAIM_STATE).map(String::as_str) == Some("Paused")
            })
            .await?;
            assert_eq!(
                claims.get(CLAIM_WORKERS_COMPLETE).map(String::as_str),
                Some("false")
            );
            assert_eq!(claims.get(CLAIM_TARGET).map(String::as_str), Some("4.18.3"));
            wait_selected(hub, COMPLETE, false, "a paused pool").await?;
            saw_paused = true;
        }
    }
    assert!(
        saw_paused,
        "the control plane completed while the pool was paused"
    );
    let claims = wait_claims(hub, "the claims at the end of the update", |c| {
        c.get(CLAIM_STATE).map(String::as_str) == Some("Completed")
            && c.get(CLAIM_WORKERS_COMPLETE).map(String::as_str) == Some("true")
    })
    .await?;
    assert_eq!(claims.get(CLAIM_TARGET).map(String::as_str), Some("4.18.3"));
    wait_selected(hub, COMPLETE, true, "the completed update").await?;
    let seen = counter.seen();
    let changes = seen.len().saturating_sub(1);
    let claim_writes = claim_writes(&agent.controller)? - writes_before;
    eprintln!(
        "acm_rollout: one update ({steps} steps): {claim_writes} ClusterClaim writes by the agent, {changes} changes of cluster1's claims on the hub's ManagedCluster: {}",
        seen.join(" -> ")
    );
    placements.delete(COMPLETE, &Default::default()).await?;
    Ok(())
}

/// The ClusterClaim write errors of the controller so far (`update_status_write_errors_total`).
fn claim_write_errors(controller: &Controller) -> Result<f64, BoxError> {
    Ok(controller
        .metrics()?
        .lines()
        .filter(|l| {
            l.starts_with("update_status_write_errors_total{") && l.contains("ClusterClaim")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

/// Issue #48 item 3: the agent's ServiceAccount creates only its own three claims (its claims
/// were created above, through server-side apply): not `region.open-cluster-management.io`, which
/// the klusterlet sets and Placements and TALM trust, nor any other. A foreign claim carrying the
/// agent's label costs no refused DELETE.
async fn no_foreign_claims(env: &OcmEnv, agent: &Agent, work: &Path) -> TestResult {
    let sa = service_account_kubeconfig(env, CLUSTER1, work).await?;
    let as_agent = update_status_e2e::client_for(&sa).await?;
    let resource = kube::discovery::ApiResource {
        group: "cluster.open-cluster-management.io".into(),
        version: "v1alpha1".into(),
        api_version: "cluster.open-cluster-management.io/v1alpha1".into(),
        kind: "ClusterClaim".into(),
        plural: "clusterclaims".into(),
    };
    let claim = |name: &str| -> Result<DynamicObject, BoxError> {
        Ok(serde_json::from_value(json!({
            "apiVersion": "cluster.open-cluster-management.io/v1alpha1",
            "kind": "ClusterClaim",
            "metadata": {"name": name, "labels": {"update.openshift.io/reconciler": "cluster-claims"}},
            "spec": {"value": "forged"},
        }))?)
    };
    let api: Api<DynamicObject> = Api::all_with(as_agent, &resource);
    for name in ["region.open-cluster-management.io", "anything.example.com"] {
        let by_create = api.create(&Default::default(), &claim(name)?).await;
        let by_apply = api
            .patch(
                name,
                &PatchParams::apply("attacker"),
                &Patch::Apply(&claim(name)?),
            )
            .await;
        for (how, r) in [("create", by_create), ("apply", by_apply)] {
            match r {
                Err(kube::Error::Api(e)) if e.code == 403 => {}
                other => {
                    return Err(format!(
                        "{how} of claim {name} as the agent: want 403, got {other:?}"
                    )
                    .into());
                }
            }
        }
    }
    // A foreign claim labelled as ours (by the cluster's admin): left alone, no refused DELETE.
    let spoke = env.cluster_client(CLUSTER1).await?;
    let admin: Api<DynamicObject> = Api::all_with(spoke, &resource);
    let errors_before = claim_write_errors(&agent.controller)?;
    admin
        .create(&Default::default(), &claim("foreign.example.com")?)
        .await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let errors = claim_write_errors(&agent.controller)? - errors_before;
    assert!(
        admin.get_opt("foreign.example.com").await?.is_some(),
        "the foreign claim is not the agent's to delete"
    );
    assert_eq!(errors, 0.0, "no refused DELETE of the foreign claim");
    admin
        .delete("foreign.example.com", &Default::default())
        .await?;
    eprintln!(
        "acm_rollout: the agent's ServiceAccount: 4 creations of foreign claims refused (403); a foreign claim labelled as ours: {errors} refused writes in 5 s"
    );
    Ok(())
}

/// The ClusterClaim writes of the controller so far (`update_status_api_writes_total`).
fn claim_writes(controller: &Controller) -> Result<f64, BoxError> {
    Ok(controller
        .metrics()?
        .lines()
        .filter(|l| l.starts_with("update_status_api_writes_total{") && l.contains("ClusterClaim"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

/// Waits until cluster1's claims on the hub satisfy `ok`; returns them.
async fn wait_claims(
    hub: &Client,
    what: &str,
    ok: impl Fn(&std::collections::BTreeMap<String, String>) -> bool,
) -> Result<std::collections::BTreeMap<String, String>, BoxError> {
    let last = std::sync::Mutex::new(Default::default());
    let r = poll_until(TIMEOUT, what, || async {
        let c = ocm::cluster_claims(hub, CLUSTER1).await.ok()?;
        if let Ok(mut l) = last.lock() {
            *l = c.clone();
        }
        ok(&c).then_some(c)
    })
    .await;
    r.map_err(|e| {
        format!(
            "{e} (last seen: {:?})",
            last.lock().map(|l| l.clone()).unwrap_or_default()
        )
        .into()
    })
}

/// Applies Placement `body` as `name` in the configuration namespace of the hub, as an admin
/// does; the Placements' API there, to delete it at the end.
async fn apply_placement(
    hub: &Client,
    name: &str,
    body: &Value,
) -> Result<Api<DynamicObject>, kube::Error> {
    let placements: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), CONFIG_NS, &kinds::placement());
    placements
        .patch(
            name,
            &PatchParams::apply("update-status-e2e").force(),
            &Patch::Apply(body),
        )
        .await?;
    Ok(placements)
}

/// `kubectl patch --type=json -p <patch>` of the ClusterManagementAddOn on the hub.
async fn patch_cma(env: &OcmEnv, patch: &Value) -> Result<String, ocm::OcmError> {
    env.kubectl_hub([
        "patch",
        "clustermanagementaddons.v1alpha1.addon.open-cluster-management.io",
        ADDON,
        "--type=json",
        "-p",
        &patch.to_string(),
    ])
    .await
}

async fn wait_selected(hub: &Client, placement: &str, selected: bool, what: &str) -> TestResult {
    let verb = if selected {
        "selects"
    } else {
        "does not select"
    };
    wait_for(
        TIMEOUT,
        &format!("Placement {placement} {verb} cluster1 ({what})"),
        || async {
            ocm::placement_decisions(hub, CONFIG_NS, placement)
                .await
                .is_ok_and(|d| d.contains(CLUSTER1) == selected)
        },
    )
    .await?;
    Ok(())
}

/// Records the changes of a cluster's update claims in its ManagedCluster on the hub (a watch):
/// each distinct set, as `name=value` lines.
struct ClaimChanges {
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl ClaimChanges {
    fn start(hub: Client, cluster: &str) -> Self {
        use futures::StreamExt;
        use kube::runtime::{WatchStreamExt, watcher};
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let api: Api<DynamicObject> = Api::all_with(hub, &kinds::managed_cluster());
        let config = watcher::Config::default().fields(&format!("metadata.name={cluster}"));
        let record = seen.clone();
        let task = tokio::spawn(async move {
            let mut events = watcher(api, config)
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(Ok(mc)) = events.next().await {
                let ours: Vec<String> = ocm::claims_of(&mc)
                    .into_iter()
                    .filter_map(|(n, v)| {
                        n.strip_suffix(".update.openshift.io")
                            .map(|short| format!("{short}={v}"))
                    })
                    .collect();
                let ours = ours.join(",");
                if let Ok(mut s) = record.lock()
                    && s.last() != Some(&ours)
                {
                    s.push(ours);
                }
            }
        });
        ClaimChanges { seen, task }
    }

    /// The distinct claim sets seen, the first one (when the watch started) included.
    fn seen(&self) -> Vec<String> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for ClaimChanges {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// --- 3. unreachable -----------------------------------------------------------------------

/// A Placement like ours without the tolerations: it drops a cluster once it is tainted, which
/// tells the test the placement controller has seen the taint.
const WITNESS: &str = "witness-no-tolerations";

async fn survives_unreachable(env: &OcmEnv, hub: &Client, agent: &Agent) -> TestResult {
    let hub_kc = env.hub_kubeconfig();
    let spoke1_kc = env.cluster_kubeconfig(CLUSTER1)?;
    // The agent keeps copies owned by the ManagedClusterAddOn in the hub namespace.
    wait_mirrored_between(
        &spoke1_kc,
        &hub_kc,
        Local {
            namespace: AGENT_NS,
            hosted_cluster: None,
            owner_uid: Some(&agent.mca_uid),
        },
        CLUSTER1,
        false,
        "cluster1's copies before it becomes unreachable",
        &agent.controller.log,
    )
    .await?;
    let copies_before = copies(&hub_kc).await?;
    assert!(!copies_before.is_empty(), "cluster1 has copies on the hub");

    let witness = json!({
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "Placement",
        "metadata": {"name": WITNESS, "namespace": CONFIG_NS},
        "spec": {
            "clusterSets": ["global"],
            "predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"update-status": "enabled"}}}}],
        },
    });
    let placements = apply_placement(hub, WITNESS, &witness).await?;
    wait_selected(hub, WITNESS, true, "the witness, before").await?;

    // The lease grace: 5 x leaseDurationSeconds (pkg/registration/hub/lease): 10 s.
    set_lease(hub, CLUSTER1, 2).await?;
    // The hub counts the grace from the last renewal with the cluster's current
    // leaseDurationSeconds: stopped now, the cluster is unreachable within 10 s.
    env.signal_agent(CLUSTER1, "STOP")?;
    let stopped = Instant::now();
    let result = async {
        wait_unreachable(hub, CLUSTER1).await?;
        eprintln!(
            "acm_rollout: cluster1 unreachable {:.1}s after its klusterlet stopped",
            stopped.elapsed().as_secs_f64()
        );
        // The placement controller has acted on the taint: the witness dropped cluster1.
        wait_selected(
            hub,
            WITNESS,
            false,
            "the witness drops the unreachable cluster",
        )
        .await?;
        // The add-on manager acts on decisions within a second or two; give it five.
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            let ours = ocm::placement_decisions(hub, CONFIG_NS, ADDON).await?;
            assert!(
                ours.contains(CLUSTER1),
                "our Placement keeps unreachable cluster1: {ours:?}"
            );
            let mca = ocm::addons_api(hub, CLUSTER1).get_opt(ADDON).await?;
            assert_eq!(
                mca.and_then(|m| m.uid()).as_deref(),
                Some(agent.mca_uid.as_str()),
                "cluster1's ManagedClusterAddOn is kept (same UID) while unreachable"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let copies_during = copies(&hub_kc).await?;
        assert_eq!(copies_during, copies_before, "the hub copies stay");
        Ok::<(), BoxError>(())
    }
    .await;
    env.signal_agent(CLUSTER1, "CONT")?;
    result?;
    ocm::wait_cluster_joined(hub, CLUSTER1, TIMEOUT).await?;
    set_lease(hub, CLUSTER1, 60).await?;
    wait_selected(hub, WITNESS, true, "the witness, once cluster1 is back").await?;
    placements.delete(WITNESS, &Default::default()).await?;
    Ok(())
}

/// The names of cluster1's copies on the hub, of every kind.
async fn copies(hub_kc: &Path) -> Result<BTreeSet<String>, BoxError> {
    let mut names = BTreeSet::new();
    for kind in KINDS {
        for o in list_at(hub_kc, kind, CLUSTER1, None).await? {
            names.insert(format!(
                "{kind}/{}",
                o["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
    }
    Ok(names)
}

/// The ManagedCluster's `leaseDurationSeconds` (the lease grace is five of them).
async fn set_lease(hub: &Client, cluster: &str, seconds: u32) -> TestResult {
    let clusters: Api<DynamicObject> = Api::all_with(hub.clone(), &kinds::managed_cluster());
    let lease = Patch::Merge(json!({"spec": {"leaseDurationSeconds": seconds}}));
    clusters
        .patch(cluster, &PatchParams::default(), &lease)
        .await?;
    Ok(())
}

/// Waits until the registration controller taints `cluster` unreachable.
async fn wait_unreachable(hub: &Client, cluster: &str) -> TestResult {
    let clusters: Api<DynamicObject> = Api::all_with(hub.clone(), &kinds::managed_cluster());
    wait_for(
        TIMEOUT,
        &format!("{cluster} tainted unreachable"),
        || async {
            clusters.get(cluster).await.ok().is_some_and(|mc| {
                mc.data
                    .pointer("/spec/taints")
                    .and_then(Value::as_array)
                    .is_some_and(|t| {
                        t.iter()
                            .any(|t| t["key"] == "cluster.open-cluster-management.io/unreachable")
                    })
            })
        },
    )
    .await?;
    Ok(())
}

// --- offline during a rollout ------------------------------------------------------------

/// The Placements of the add-on's install strategy, in order.
async fn install_placements(env: &OcmEnv) -> Result<Vec<String>, BoxError> {
    let out = env
        .kubectl_hub([
            "get",
            "clustermanagementaddons.v1alpha1.addon.open-cluster-management.io",
            ADDON,
            "-o",
            "jsonpath={.spec.installStrategy.placements[*].name}",
        ])
        .await?;
    Ok(out.split_whitespace().map(String::from).collect())
}

/// What an admin reads when a rollout halts (docs/acm.md, "Rollout halted"): each Placement's
/// install progression.
async fn install_progressions(env: &OcmEnv) -> String {
    let path = "jsonpath={range .status.installProgressions[*]}{.name}: {.conditions[?(@.type==\"Progressing\")].message}; {end}";
    env.kubectl_hub([
        "get",
        "clustermanagementaddons.v1alpha1.addon.open-cluster-management.io",
        ADDON,
        "-o",
        path,
    ])
    .await
    .unwrap_or_else(|e| format!("unreadable: {e}"))
}

/// Stops `cluster`'s klusterlet past the lease grace (2 s leases: 10 s) and waits until every
/// Placement of the add-on that tolerates the taint only for a while (`tolerationSeconds`,
/// shortened to 1 s through the Placement's own field) has dropped it, while ours keeps it and its
/// ManagedClusterAddOn. Returns when the klusterlet was stopped.
async fn take_offline(env: &OcmEnv, hub: &Client, cluster: &str) -> Result<Instant, BoxError> {
    let mca_uid = ocm::addons_api(hub, cluster).get(ADDON).await?.uid();
    set_lease(hub, cluster, 2).await?;
    env.signal_agent(cluster, "STOP")?;
    let stopped = Instant::now();
    wait_unreachable(hub, cluster).await?;
    let placements: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), CONFIG_NS, &kinds::placement());
    for name in install_placements(env).await? {
        let p = placements.get(&name).await?;
        let mut tolerations = p.data["spec"]["tolerations"].clone();
        let Some(list) = tolerations.as_array_mut() else {
            continue;
        };
        let mut limited = false;
        for t in list
            .iter_mut()
            .filter(|t| t.get("tolerationSeconds").is_some())
        {
            t["tolerationSeconds"] = json!(1);
            limited = true;
        }
        if !limited {
            continue;
        }
        let patch = Patch::Merge(json!({"spec": {"tolerations": tolerations}}));
        placements
            .patch(&name, &PatchParams::default(), &patch)
            .await?;
        wait_for(
            TIMEOUT,
            &format!("Placement {name} drops {cluster}"),
            || async {
                ocm::placement_decisions(hub, CONFIG_NS, &name)
                    .await
                    .is_ok_and(|d| !d.is_empty() && !d.contains(cluster))
            },
        )
        .await?;
    }
    eprintln!(
        "acm_rollout: {cluster} offline (out of the rollout) {:.1}s after its klusterlet stopped",
        stopped.elapsed().as_secs_f64()
    );
    let ours = ocm::placement_decisions(hub, CONFIG_NS, ADDON).await?;
    assert!(ours.contains(cluster), "{ADDON} keeps offline {cluster}");
    let now = ocm::addons_api(hub, cluster).get_opt(ADDON).await?;
    assert_eq!(
        now.and_then(|m| m.uid()),
        mca_uid,
        "{cluster}'s ManagedClusterAddOn is kept while offline"
    );
    Ok(stopped)
}

/// `cluster`, back, gets `image` (its ManifestWork, then its Deployment) and completes.
async fn catches_up(
    env: &OcmEnv,
    hub: &Client,
    cluster: &str,
    image: &str,
    stopped: Instant,
) -> TestResult {
    ocm::wait_cluster_joined(hub, cluster, TIMEOUT).await?;
    let back = Instant::now();
    set_lease(hub, cluster, 60).await?;
    let spoke = env.cluster_client(cluster).await?;
    wait_agent_image(
        &spoke,
        image,
        &format!("{image} in {cluster}'s Deployment once it is back"),
    )
    .await?;
    eprintln!(
        "acm_rollout: {cluster} runs the new image {:.1}s after it was back ({:.1}s offline)",
        back.elapsed().as_secs_f64(),
        (back - stopped).as_secs_f64()
    );
    ocm::set_deployment_available(&spoke, AGENT_NS, DEPLOYMENT).await?;
    ocm::wait_addon_condition(hub, cluster, ADDON, "Progressing", "False", TIMEOUT).await?;
    ocm::wait_addon_condition(hub, cluster, ADDON, "Available", "True", TIMEOUT).await?;
    Ok(())
}
