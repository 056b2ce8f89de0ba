//! Hosted clusters under ACM with no hand work (issue #47 item 7), on the local OCM hub with
//! `config/acm` applied and the hub controller (`--mode=hub`) running: a managed cluster becomes
//! a hosting cluster (it gets a ManagedClusterAddOn `hypershift-addon`, as the multicluster
//! engine gives one to every cluster hosting HyperShift control planes), and a ManagedCluster is
//! imported as one of its hosted clusters (ACM's hosted-import annotations). Then, with nothing
//! done by hand:
//!
//! 1. the Placement `update-status-hosted` selects the hosting cluster and OCM installs the
//!    add-on `update-status-hosted` there: config/hosted's Deployment (`--mode=hosted`, in
//!    `openshift-update-status-hosted`) through the ManifestWork, and its hub credentials;
//! 2. the hub controller gives the hosted cluster's namespace the ResourceQuota and the RoleBinding
//!    of the hosting cluster's agent;
//! 3. that agent, the controller started as the rendered Deployment starts it (its arguments, its
//!    ServiceAccount, the hub kubeconfig OCM wrote), reports a simulated HostedCluster into the
//!    hosted cluster's namespace, through the admission policies; a HostedCluster mapped to a
//!    cluster it does not host is refused there;
//! 4. the hosting cluster losing the hypershift add-on takes the add-on, the binding and the
//!    quota away.
//!
//! Also (item 8): `config/acm-placement`'s Placement leaves the hosted cluster out by its import
//! annotation, before any claim could say it is hosted.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::Client;
use kube::api::Api;
use serde_json::{Value, json};
use update_status_simulator::hosted::{HostedSimConfig, HostedSimulation};
use update_status_tools::playback::HostedSimulator;

use crate::controller::{Controller, Launch, workspace_bin};
use crate::hub_copies::list_at;
use crate::ocm::{self, OcmEnv, SecretVolume};
use crate::paths::repo_root;
use crate::wait::{kubectl_wait_retrying, poll_until, wait_for};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The hosted add-on.
pub const HOSTED_ADDON: &str = "update-status-hosted";
/// Its agent's namespace on the hosting cluster.
pub const HOSTED_NS: &str = "openshift-update-status-hosted";
/// The hosted cluster's ManagedCluster (and HostedCluster) name.
pub const HOSTED: &str = "hosted1";
/// The multicluster engine's add-on on clusters hosting HyperShift control planes.
const HYPERSHIFT_ADDON: &str = "hypershift-addon";
const CONFIG_NS: &str = "open-cluster-management-update-status";
const TIMEOUT: Duration = Duration::from_secs(90);

/// The hosted ManagedCluster `name`, imported in hosted mode on `hosting` (ACM's annotations).
fn hosted_managed_cluster(name: &str, hosting: &str) -> Value {
    json!({
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {
            "name": name,
            "labels": {"vendor": "OpenShift", "update-status": "enabled"},
            "annotations": {
                "import.open-cluster-management.io/klusterlet-deploy-mode": "Hosted",
                "import.open-cluster-management.io/hosting-cluster-name": hosting,
            },
        },
        "spec": {"hubAcceptsClient": true},
    })
}

async fn apply_json(env: &OcmEnv, dir: &Path, name: &str, v: &Value) -> Result<PathBuf, BoxError> {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, v.to_string())?;
    env.kubectl_hub(["apply", "--server-side", "-f", &path.display().to_string()])
        .await?;
    Ok(path)
}

/// A kubeconfig for the hosted agent's ServiceAccount on `cluster`, in `dir`.
async fn hosted_agent_kubeconfig(
    env: &OcmEnv,
    cluster: &str,
    dir: &Path,
) -> Result<PathBuf, BoxError> {
    let config = crate::addon_agent::token_kubeconfig(
        env,
        cluster,
        HOSTED_NS,
        "update-status-controller",
        "hosted-agent",
    )
    .await?;
    let path = dir.join(format!("{cluster}-hosted-agent.kubeconfig"));
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// The hosted agent's container as the ManifestWork applied it on `cluster`.
async fn rendered_args(spoke: &Client, cluster: &str) -> Result<Vec<String>, BoxError> {
    let deployments: Api<Deployment> = Api::namespaced(spoke.clone(), HOSTED_NS);
    let d = poll_until(
        TIMEOUT,
        &format!(
            "Deployment {HOSTED_NS}/update-status-controller on {cluster}, through the ManifestWork"
        ),
        || async {
            deployments
                .get_opt("update-status-controller")
                .await
                .ok()
                .flatten()
        },
    )
    .await?;
    Ok(d.spec
        .template
        .spec
        .and_then(|p| p.containers.into_iter().next())
        .and_then(|c| c.args)
        .unwrap_or_default())
}

/// Starts the workspace's controller as the rendered hosted Deployment runs it.
fn start_hosted_agent(
    args: &[String],
    kubeconfig: &Path,
    hub_kubeconfig: &Path,
    work: &Path,
) -> Result<Controller, BoxError> {
    let certs = work.join("hosted-agent-metrics-tls");
    std::fs::create_dir_all(&certs)?;
    let mut flags = Vec::new();
    for a in args {
        let (flag, value) = a.split_once('=').unwrap_or((a.as_str(), ""));
        match flag {
            "--metrics-bind-address" | "--health-probe-bind-address" | "--namespace" => {}
            "--metrics-cert-dir" => flags.push(format!("--metrics-cert-dir={}", certs.display())),
            "--hub-kubeconfig" => {
                if value != format!("{}/kubeconfig", ocm::HUB_KUBECONFIG_MOUNT) {
                    return Err(format!("the hosted Deployment's hub kubeconfig is {value}, not the mounted Secret's").into());
                }
                flags.push(format!("--hub-kubeconfig={}", hub_kubeconfig.display()));
            }
            _ => flags.push(a.clone()),
        }
    }
    for want in ["--mode=hosted", "--leader-elect"] {
        if !flags.iter().any(|f| f == want) {
            return Err(format!("the rendered hosted Deployment lacks {want}: {args:?}").into());
        }
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    Ok(Controller::launch(
        &Launch {
            bin: workspace_bin("update-status-controller", "UPDATE_STATUS_CONTROLLER_BIN"),
            kubeconfig: kubeconfig.to_path_buf(),
            log: work.join("hosted-agent.log"),
        },
        HOSTED_NS,
        port,
        &flags,
    )?)
}

/// The whole scenario (see the module documentation); `hosting` is a joined managed cluster,
/// `work` a scratch folder. Prints what it measured.
pub async fn check(env: &OcmEnv, hosting: &str, work: &Path) -> Result<(), BoxError> {
    let hub = env.hub_client().await?;
    let spoke = env.cluster_client(hosting).await?;
    std::fs::create_dir_all(work)?;
    let hosted_mc = apply_json(
        env,
        work,
        "hosted-managed-cluster",
        &hosted_managed_cluster(HOSTED, hosting),
    )
    .await?;
    let namespaces: Api<Namespace> = Api::all(hub.clone());
    poll_until(
        TIMEOUT,
        &format!("namespace {HOSTED}, labelled for its cluster"),
        || async {
            let ns = namespaces.get_opt(HOSTED).await.ok()??;
            ns.metadata
                .labels?
                .contains_key(ocm::CLUSTER_NAME_LABEL)
                .then_some(())
        },
    )
    .await?;

    // 1. The hosting cluster gets the hosted add-on.
    let t = Instant::now();
    ocm::enable_addon(&hub, hosting, HYPERSHIFT_ADDON).await?;
    let hosted_addons = ocm::addons_api(&hub, hosting);
    poll_until(
        TIMEOUT,
        &format!("ManagedClusterAddOn {hosting}/{HOSTED_ADDON}, by its Placement"),
        || async { hosted_addons.get_opt(HOSTED_ADDON).await.ok().flatten() },
    )
    .await
    .map_err(|e| placement_diagnosis(env, hosting, e))?;
    let args = rendered_args(&spoke, hosting).await?;
    let installed = t.elapsed();

    // 2. The hub controller's quota and binding in the hosted cluster's namespace.
    let bindings: Api<RoleBinding> = Api::namespaced(hub.clone(), HOSTED);
    let quotas: Api<ResourceQuota> = Api::namespaced(hub.clone(), HOSTED);
    let binding = poll_until(
        TIMEOUT,
        &format!("RoleBinding {HOSTED}/update-status-hosted"),
        || async {
            bindings
                .get_opt("update-status-hosted")
                .await
                .ok()
                .flatten()
        },
    )
    .await?;
    let group = format!("system:open-cluster-management:cluster:{hosting}:addon:{HOSTED_ADDON}");
    let subjects = binding.subjects.clone().unwrap_or_default();
    if subjects.len() != 1 || subjects[0].kind != "Group" || subjects[0].name != group {
        return Err(
            format!("the binding's subjects are {subjects:?}, not the group {group}").into(),
        );
    }
    poll_until(
        TIMEOUT,
        &format!("ResourceQuota {HOSTED}/update-status"),
        || async { quotas.get_opt("update-status").await.ok().flatten() },
    )
    .await?;
    let bound = t.elapsed();

    // 3. The hosted agent reports the hosted cluster; one mapped to a cluster it does not host
    // is refused.
    let report = report_hosted_cluster(env, &spoke, hosting, &args, work).await;
    // 4. The hosting cluster loses the hypershift add-on: the rest goes.
    let t = Instant::now();
    ocm::disable_addon(&hub, hosting, HYPERSHIFT_ADDON).await?;
    ocm::wait_gone(&hosted_addons, HOSTED_ADDON, "the hosted add-on", TIMEOUT).await?;
    ocm::wait_gone(
        &bindings,
        "update-status-hosted",
        "the hosted cluster's binding",
        TIMEOUT,
    )
    .await?;
    ocm::wait_gone(
        &quotas,
        "update-status",
        "the hosted cluster's quota",
        TIMEOUT,
    )
    .await?;
    let removed = t.elapsed();
    // Item 8: the add-on's own Placement (config/acm-placement) leaves the hosted cluster out.
    let excluded = match &report {
        Ok(_) => placement_excludes_hosted(env, &hub, hosting, work).await,
        Err(_) => Ok(()),
    };
    let _ = env.delete_on_hub(&hosted_mc).await;
    let copies = report?;
    excluded?;
    eprintln!(
        "acm_hosted: the hosted add-on installed {:.1}s after the hypershift add-on, its binding and quota {:.1}s; {copies} copies of {HOSTED} reported; all removed {:.1}s after",
        installed.as_secs_f64(),
        bound.as_secs_f64(),
        removed.as_secs_f64()
    );
    Ok(())
}

/// What the hosted add-on's Placement saw, for an error that its add-on never came: the
/// hosting cluster's labels and the Placement's decisions and conditions.
fn placement_diagnosis(env: &OcmEnv, hosting: &str, e: impl std::fmt::Display) -> BoxError {
    let show = |args: &[&str]| {
        std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(env.hub_kubeconfig())
            .args(args)
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout).into_owned()
                    + &String::from_utf8_lossy(&o.stderr)
            })
            .unwrap_or_else(|e| e.to_string())
    };
    let labels = show(&[
        "get",
        "managedcluster",
        hosting,
        "-o",
        "jsonpath={.metadata.labels}",
    ]);
    let placement = show(&[
        "get",
        "placement",
        HOSTED_ADDON,
        "-n",
        CONFIG_NS,
        "-o",
        "jsonpath={.status}",
    ]);
    let decisions = show(&[
        "get",
        "placementdecisions",
        "-n",
        CONFIG_NS,
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}: {.status.decisions}{\"\\n\"}{end}",
    ]);
    format!(
        "{e}\n{hosting}'s labels: {labels}\nPlacement status: {placement}\ndecisions:\n{decisions}"
    )
    .into()
}

/// Step 3 of [`check`]: the number of copies the hosted agent wrote into the hosted cluster's
/// namespace.
async fn report_hosted_cluster(
    env: &OcmEnv,
    spoke: &Client,
    hosting: &str,
    args: &[String],
    work: &Path,
) -> Result<usize, BoxError> {
    let secret = format!("{HOSTED_ADDON}-hub-kubeconfig");
    ocm::wait_secret(
        spoke,
        HOSTED_NS,
        &secret,
        &["kubeconfig", "tls.crt", "tls.key"],
        TIMEOUT,
    )
    .await?;
    let volume = SecretVolume::mount(
        spoke,
        HOSTED_NS,
        &secret,
        &work.join("hosted-agent-hub"),
        TIMEOUT,
    )
    .await?;
    let crds = repo_root()
        .join("testdata/hosted/crds")
        .display()
        .to_string();
    env.kubectl_cluster(hosting, ["apply", "--server-side", "-f", &crds])
        .await?;
    kubectl_wait_retrying(TIMEOUT, || {
        let wait = [
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "-f",
            &crds,
        ];
        env.kubectl_cluster(hosting, wait)
    })
    .await?;
    let mut sims = Vec::new();
    for (name, managed) in [(HOSTED, None), ("stray", Some(hosting))] {
        let mut sim = HostedSimulator::new(
            spoke.clone(),
            HostedSimulation::new(HostedSimConfig {
                namespace: "clusters".into(),
                name: name.into(),
                replace_replicas: 1,
                in_place_replicas: 1,
                ..Default::default()
            })?,
        );
        sim.install().await?;
        if let Some(m) = managed {
            // Mapped to the hosting cluster itself: no binding of the hosted agent there.
            env.kubectl_cluster(
                hosting,
                [
                    "annotate",
                    "hostedcluster",
                    name,
                    "-n",
                    "clusters",
                    "--overwrite",
                    &format!("cluster.open-cluster-management.io/managedcluster-name={m}"),
                ],
            )
            .await?;
        }
        sims.push(sim);
    }
    let kubeconfig = hosted_agent_kubeconfig(env, hosting, work).await?;
    let agent = start_hosted_agent(args, &kubeconfig, &volume.kubeconfig(), work)?;
    let hub_kc = env.hub_kubeconfig();
    let log = agent.log.clone();
    let copies = poll_until(
        TIMEOUT,
        &format!("{HOSTED}'s copies in its hub namespace, from the hosted agent"),
        || async {
            let planes = list_at(&hub_kc, "controlplaneupdatestatuses", HOSTED, None)
                .await
                .ok()?;
            let pools = list_at(&hub_kc, "workerpoolupdatestatuses", HOSTED, None)
                .await
                .ok()?;
            let ok = planes
                .iter()
                .any(|p| p["metadata"]["name"] == HOSTED && p.get("status").is_some())
                && pools.len() == 2;
            ok.then_some(planes.len() + pools.len())
        },
    )
    .await
    .map_err(|e| format!("{e} (hosted agent log: {})", log.display()))?;
    // The stray one: refused in the hosting cluster's namespace, which the hosted agent may not
    // write (its session's metric says so), and nothing of it there.
    wait_for(
        TIMEOUT,
        "the stray HostedCluster's session refused",
        || async {
            agent.metrics().is_ok_and(|m| {
                m.lines().any(|l| {
                    l.starts_with("update_status_hub_sync_up{")
                        && l.contains("clusters/stray")
                        && l.ends_with(" 0")
                })
            })
        },
    )
    .await
    .map_err(|e| format!("{e} (hosted agent log: {})", log.display()))?;
    let stray = list_at(
        &hub_kc,
        "controlplaneupdatestatuses",
        hosting,
        Some("update.openshift.io/hosted-cluster=clusters.stray"),
    )
    .await?;
    if !stray.is_empty() {
        return Err(format!("the hosted agent wrote into {hosting}'s namespace: {stray:?}").into());
    }
    let text = std::fs::read_to_string(&log)?;
    if text.contains("BEGIN") && text.contains("PRIVATE KEY") {
        return Err("a key in the hosted agent's log".into());
    }
    drop(agent);
    drop(sims);
    Ok(copies)
}

/// `config/acm-placement`'s Placement (applied alone: config/acm's install strategy stays manual)
/// selects `hosting`, labelled like the hosted cluster, and not the hosted cluster.
async fn placement_excludes_hosted(
    env: &OcmEnv,
    hub: &Client,
    hosting: &str,
    work: &Path,
) -> Result<(), BoxError> {
    let text = std::fs::read_to_string(repo_root().join("config/acm-placement/placement.yaml"))?;
    let placement = crate::acm_recipes::documents(&text)?
        .into_iter()
        .find(|d| d["kind"] == "Placement")
        .ok_or("config/acm-placement/placement.yaml has no Placement")?;
    let name = placement["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    env.kubectl_hub([
        "label",
        "--overwrite",
        "managedcluster",
        hosting,
        "vendor=OpenShift",
        "update-status=enabled",
    ])
    .await?;
    let file = apply_json(env, work, "acm-placement", &placement).await?;
    let result = poll_until(
        TIMEOUT,
        &format!("Placement {name} selecting {hosting}"),
        || async {
            let d = ocm::placement_decisions(hub, CONFIG_NS, &name).await.ok()?;
            d.contains(hosting).then_some(d)
        },
    )
    .await;
    let _ = env
        .kubectl_hub([
            "delete",
            "--ignore-not-found",
            "-f",
            &file.display().to_string(),
        ])
        .await;
    let _ = env
        .kubectl_hub([
            "label",
            "managedcluster",
            hosting,
            "vendor-",
            "update-status-",
        ])
        .await;
    let decided = result?;
    if decided.contains(HOSTED) {
        return Err(
            format!("Placement {name} selects the hosted cluster {HOSTED}: {decided:?}").into(),
        );
    }
    Ok(())
}
