//! The add-on's must-gather (`must-gather/gather`) run as a script, as a support engineer runs
//! it (with the cluster's kubeconfig, through kubectl), against the local OCM environment: on a
//! managed cluster whose agent reports to the hub, and on the hub. [`check`] reads what it wrote
//! back: `kubectl update-status --from-dir` on the cluster's gather prints what `oc adm upgrade
//! status` printed for the captured cluster loaded there (the round trip); the add-on's state is
//! there on both sides (ManagedClusterAddOn, ManifestWork, AppliedManifestWork, ResourceQuota,
//! the hub copies, equal to the hub's); and nothing secret is (no key, the add-on's client key
//! neither, and a proxy password shows as `REDACTED`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use crate::hub_copies::list_at;
use crate::ocm::{self, OcmEnv};
use crate::paths::{repo_root, workspace_bin};
use crate::wait::poll_until;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The agent's namespace on a managed cluster.
const AGENT_NS: &str = "openshift-update-status";
/// The password of the proxy set in the add-on's deployment config while gathering.
const PROXY_PASSWORD: &str = "gather-s3cret";
const TIMEOUT: Duration = Duration::from_secs(90);

/// The script.
pub fn script() -> PathBuf {
    repo_root().join("must-gather/gather")
}

/// Runs the gather against the cluster of `kubeconfig` into `out` (emptied first), with
/// kubectl; returns how long it took.
pub async fn run(kubeconfig: &Path, out: &Path) -> Result<Duration, BoxError> {
    let _ = std::fs::remove_dir_all(out);
    let t = Instant::now();
    let (kubeconfig, dir) = (kubeconfig.to_path_buf(), out.to_path_buf());
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("bash")
            .arg(script())
            .arg(&dir)
            .env("KUBECONFIG", &kubeconfig)
            .env("KUBECTL", "kubectl")
            .stdin(Stdio::null())
            .output()
    })
    .await??;
    if !output.status.success() {
        return Err(format!(
            "{} {} failed: {}",
            script().display(),
            out.display(),
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(t.elapsed())
}

/// The objects of a file the gather wrote (a List, one object, or several documents).
pub fn objects(path: &Path) -> Result<Vec<Value>, BoxError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for doc in serde_saphyr::from_multiple::<Value>(&text)? {
        match doc["items"].as_array() {
            Some(items) if doc["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                out.extend(items.iter().cloned())
            }
            _ if doc.is_null() => {}
            _ => out.push(doc),
        }
    }
    Ok(out)
}

fn names(objects: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = objects
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    v.sort();
    v
}

/// Every file under `dir` containing one of `needles`, with the needle.
pub fn files_containing(dir: &Path, needles: &[&str]) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                let text = String::from_utf8_lossy(&bytes);
                for n in needles
                    .iter()
                    .filter(|n| !n.is_empty() && text.contains(**n))
                {
                    found.push((p.clone(), n.to_string()));
                }
            }
        }
    }
    found
}

/// `kubectl-update_status` with `args`: its standard output.
fn plugin(args: &[&str]) -> Result<String, BoxError> {
    let bin = workspace_bin("kubectl-update_status", "UPDATE_STATUS_CLI_BIN");
    let out = std::process::Command::new(&bin)
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "kubectl-update_status {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// Sets (or with `None` removes) the proxy of the add-on's deployment config
/// (`open-cluster-management-update-status/update-status`), which OCM renders into the agent's
/// Deployment (its environment) in the ManifestWork and on the cluster.
async fn set_proxy(hub: &Client, url: Option<&str>) -> Result<(), BoxError> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        hub.clone(),
        "open-cluster-management-update-status",
        &ocm::kinds::addon_deployment_config(),
    );
    api.patch(
        "update-status",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"proxyConfig": url.map(|u| json!({"httpsProxy": u}))}})),
    )
    .await?;
    Ok(())
}

/// The round trip of the cluster's gather and the add-on's state in both gathers (see the
/// module documentation). `case` is the captured cluster loaded on `cluster`, whose agent runs
/// and reports to the hub.
pub async fn check(env: &OcmEnv, cluster: &str, case: &Path, work: &Path) -> Result<(), BoxError> {
    let hub = env.hub_client().await?;
    let (hub_kc, spoke_kc) = (env.hub_kubeconfig(), env.cluster_kubeconfig(cluster)?);
    // A proxy with a password, rendered into the ManifestWork and the agent's Deployment.
    let proxy = format!("http://support:{PROXY_PASSWORD}@proxy.update-status.invalid:3128");
    set_proxy(&hub, Some(&proxy)).await?;
    let spoke = env.cluster_client(cluster).await?;
    let deployments: Api<Deployment> = Api::namespaced(spoke, AGENT_NS);
    let rendered = poll_until(TIMEOUT, "the proxy in the agent's Deployment", || async {
        let d = deployments
            .get_opt("update-status-controller")
            .await
            .ok()??;
        serde_json::to_string(&d)
            .ok()?
            .contains(PROXY_PASSWORD)
            .then_some(())
    })
    .await;
    let result = match rendered {
        Ok(()) => gather_and_read(env, cluster, case, work, &hub_kc, &spoke_kc).await,
        Err(e) => Err(e.into()),
    };
    set_proxy(&hub, None).await?;
    result
}

async fn gather_and_read(
    env: &OcmEnv,
    cluster: &str,
    case: &Path,
    work: &Path,
    hub_kc: &Path,
    spoke_kc: &Path,
) -> Result<(), BoxError> {
    let (on_cluster, on_hub) = (
        work.join("must-gather-cluster"),
        work.join("must-gather-hub"),
    );
    let took_cluster = run(spoke_kc, &on_cluster).await?;
    let took_hub = run(hub_kc, &on_hub).await?;

    // The round trip: what oc printed for the captured cluster.
    let now = std::fs::read_to_string(case.join("now"))?;
    for (details, expected) in [
        (None, "expected.output"),
        (Some("--details=all"), "expected.detailed-output"),
    ] {
        let dir = on_cluster.display().to_string();
        let mut args = vec!["--from-dir", &dir, "--now", now.trim()];
        args.extend(details);
        let printed = plugin(&args)?;
        let want = std::fs::read_to_string(case.join(expected))?;
        if printed != want {
            return Err(format!(
                "kubectl update-status {} on the gather differs from {}:\n{printed}",
                args.join(" "),
                case.join(expected).display()
            )
            .into());
        }
    }

    // The cluster's side: our objects, the agent's Deployment (proxy redacted), the hub copies
    // and the ManagedClusterAddOn as the agent's identity reads them, the AppliedManifestWork.
    let ns = on_cluster.join("namespaces").join(AGENT_NS);
    let local = list_at(spoke_kc, "updateinsights", AGENT_NS, None).await?;
    let gathered = objects(&ns.join("update.openshift.io/updateinsights.yaml"))?;
    if names(&gathered) != names(&local) || local.is_empty() {
        return Err(format!(
            "gathered insights {:?}, the cluster has {:?}",
            names(&gathered),
            names(&local)
        )
        .into());
    }
    let deployment = std::fs::read_to_string(ns.join("apps/deployments.yaml"))?;
    if !deployment.contains("http://REDACTED@proxy.update-status.invalid:3128") {
        return Err("the agent's Deployment was gathered without its (redacted) proxy".into());
    }
    let hub_ns = on_cluster.join("hub/namespaces").join(cluster);
    let copies = list_at(hub_kc, "updateinsights", cluster, None).await?;
    let gathered = objects(&hub_ns.join("update.openshift.io/updateinsights.yaml"))?;
    if names(&gathered) != names(&copies) {
        return Err(format!(
            "hub copies gathered with the agent's identity {:?}, the hub has {:?}",
            names(&gathered),
            names(&copies)
        )
        .into());
    }
    let mca = objects(
        &hub_ns.join("addon.open-cluster-management.io/managedclusteraddons/update-status.yaml"),
    )?;
    if mca
        .first()
        .and_then(|m| m["status"]["conditions"].as_array())
        .is_none()
    {
        return Err("the ManagedClusterAddOn was gathered without its status".into());
    }
    let applied = on_cluster
        .join("cluster-scoped-resources/work.open-cluster-management.io/appliedmanifestworks");
    let applied: Vec<_> = std::fs::read_dir(&applied)
        .map_err(|e| format!("{}: {e}", applied.display()))?
        .filter_map(Result::ok)
        .collect();
    if applied.len() != 1 {
        return Err(format!(
            "{} AppliedManifestWorks of the add-on gathered, want 1",
            applied.len()
        )
        .into());
    }

    // The hub's side.
    let hub_cluster_ns = on_hub.join("namespaces").join(cluster);
    for file in [
        "addon.open-cluster-management.io/managedclusteraddons/update-status.yaml",
        "work.open-cluster-management.io/manifestworks/addon-update-status-deploy-0.yaml",
        "core/resourcequotas/update-status.yaml",
        "update.openshift.io/updateinsights.yaml",
    ] {
        objects(&hub_cluster_ns.join(file))?;
    }
    let work_file =
        std::fs::read_to_string(hub_cluster_ns.join(
            "work.open-cluster-management.io/manifestworks/addon-update-status-deploy-0.yaml",
        ))?;
    if !work_file.contains("REDACTED@proxy.update-status.invalid") {
        return Err("the ManifestWork was gathered without its (redacted) proxy".into());
    }
    for file in [
        "cluster-scoped-resources/addon.open-cluster-management.io/clustermanagementaddons/update-status.yaml",
        "namespaces/open-cluster-management-update-status/addon.open-cluster-management.io/addondeploymentconfigs.yaml",
        "cluster-scoped-resources/admissionregistration.k8s.io/validatingadmissionpolicies/update-status-hub-copies.yaml",
    ] {
        objects(&on_hub.join(file))?;
    }

    // Nothing secret, on either side: the proxy's password, the add-on's client key (as its
    // Secret holds it), any private key.
    let secrets: Api<Secret> = Api::namespaced(env.cluster_client(cluster).await?, AGENT_NS);
    let secret = secrets.get("update-status-hub-kubeconfig").await?;
    let pem = secret
        .data
        .as_ref()
        .and_then(|d| d.get("tls.key"))
        .map(|k| String::from_utf8_lossy(&k.0).into_owned())
        .ok_or("the add-on's Secret has no tls.key")?;
    let body = pem.lines().nth(1).unwrap_or_default().to_string();
    for dir in [&on_cluster, &on_hub] {
        let leaks = files_containing(dir, &[PROXY_PASSWORD, "PRIVATE KEY-----", &body]);
        if !leaks.is_empty() {
            return Err(format!("secrets in the gather: {leaks:?}").into());
        }
    }
    if body.len() < 32 {
        return Err("could not read the add-on's key to look for it".into());
    }
    eprintln!(
        "must_gather: the cluster gathered in {:.1}s, the hub in {:.1}s; --from-dir prints what oc printed",
        took_cluster.as_secs_f64(),
        took_hub.as_secs_f64()
    );
    Ok(())
}
