//! A hub restore as the klusterlets see it (issue #47, docs/acm.md "Hub backup and restore"):
//! ACM's backup brings back only what carries `cluster.open-cluster-management.io/backup` (and
//! never a ClusterManagementAddOn), so a restore that missed our labelled set has no definition of
//! the add-on and renders no ManifestWork for it; a klusterlet then finds the AppliedManifestWork
//! of a ManifestWork missing from its hub and deletes it, with what it applied, after its eviction
//! grace period. What the test cannot do here: a new hub (another API server, hence another hub
//! hash in the AppliedManifestWorks' names) and the klusterlets' move to it (their bootstrap);
//! the hub stays the same and a frozen klusterlet does not see the ManifestWork go, so that,
//! restarted, it finds it missing as it would on the restored hub.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use crate::ocm::{self, OcmEnv, kinds};
use crate::wait::poll_until;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The label ACM's backup selects by.
pub const BACKUP_LABEL: &str = "cluster.open-cluster-management.io/backup";

/// The objects of `config/acm` (its kustomize build) that carry [`BACKUP_LABEL`]: what a
/// restore brings back.
pub fn labelled_set(root: &Path) -> Result<Vec<Value>, BoxError> {
    let dir = root.join("config/acm");
    let out = Command::new("kubectl")
        .args(["kustomize", &dir.display().to_string()])
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "kubectl kustomize {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let docs = serde_saphyr::from_multiple::<Value>(&String::from_utf8(out.stdout)?)?;
    Ok(docs
        .into_iter()
        .filter(|d| d["metadata"]["labels"].get(BACKUP_LABEL).is_some())
        .collect())
}

/// Applies `set` on the hub (server-side, as `kubectl apply --server-side -k config/acm`), as a
/// restore would create it.
pub async fn apply_labelled_set(env: &OcmEnv, set: &[Value]) -> Result<(), BoxError> {
    let file = env.dir().join("labelled-set.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": set});
    std::fs::write(&file, serde_json::to_vec(&list)?)?;
    env.kubectl_hub(["apply", "--server-side", "-f", &file.display().to_string()])
        .await?;
    Ok(())
}

/// The add-on's definition in `set` (its ClusterManagementAddOns, AddOnTemplates and
/// AddOnDeploymentConfigs: what renders the ManifestWorks), as (kind, namespace, name).
pub fn addon_definition(set: &[Value]) -> Vec<(String, Option<String>, String)> {
    set.iter()
        .filter(|d| {
            matches!(
                d["kind"].as_str(),
                Some("ClusterManagementAddOn" | "AddOnTemplate" | "AddOnDeploymentConfig")
            )
        })
        .map(|d| {
            let s = |v: &Value| v.as_str().map(String::from);
            (
                s(&d["kind"]).unwrap_or_default(),
                s(&d["metadata"]["namespace"]),
                s(&d["metadata"]["name"]).unwrap_or_default(),
            )
        })
        .collect()
}

fn definition_api(
    hub: &Client,
    kind: &str,
    namespace: Option<&str>,
) -> Result<Api<DynamicObject>, BoxError> {
    let ar = match kind {
        "ClusterManagementAddOn" => kinds::cluster_management_addon(),
        "AddOnTemplate" => kinds::addon_template(),
        "AddOnDeploymentConfig" => kinds::addon_deployment_config(),
        other => return Err(format!("not a kind of the add-on's definition: {other}").into()),
    };
    Ok(match namespace {
        Some(ns) => Api::namespaced_with(hub.clone(), ns, &ar),
        None => Api::all_with(hub.clone(), &ar),
    })
}

/// Deletes the add-on's definition of `set` from the hub (as a restore without the labelled set
/// lacks it) and waits until it is gone.
pub async fn delete_addon_definition(
    hub: &Client,
    set: &[Value],
    timeout: Duration,
) -> Result<(), BoxError> {
    let objects = addon_definition(set);
    if objects.is_empty() {
        return Err("the labelled set holds no definition of the add-on".into());
    }
    for (kind, ns, name) in &objects {
        let api = definition_api(hub, kind, ns.as_deref())?;
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => return Err(format!("deleting {kind} {name}: {e}").into()),
        }
    }
    for (kind, ns, name) in &objects {
        let api = definition_api(hub, kind, ns.as_deref())?;
        ocm::wait_gone(&api, name, &format!("{kind} {name} on the hub"), timeout).await?;
    }
    Ok(())
}

/// Lets ManifestWork `cluster/name` go from the hub without its cluster's work agent (frozen)
/// finishing it: once OCM deletes it, its finalizer (the work agent's) is removed, as if the hub
/// never had it.
pub async fn drop_work(
    hub: &Client,
    cluster: &str,
    name: &str,
    timeout: Duration,
) -> Result<(), BoxError> {
    let works: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), cluster, &kinds::manifest_work());
    let what = format!("ManifestWork {cluster}/{name}");
    poll_until(timeout, &format!("{what} being deleted"), || async {
        match works.get_opt(name).await {
            Ok(Some(w)) => w.metadata.deletion_timestamp.is_some().then_some(()),
            Ok(None) => Some(()),
            Err(_) => None,
        }
    })
    .await?;
    let patch = json!({"metadata": {"finalizers": null}});
    match works
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.is_not_found() => {}
        Err(e) => return Err(format!("removing the finalizers of {what}: {e}").into()),
    }
    ocm::wait_gone(&works, name, &what, timeout).await?;
    Ok(())
}

/// The AppliedManifestWork of ManifestWork `work` on a managed cluster, if any.
pub async fn applied_work(spoke: &Client, work: &str) -> Result<Option<DynamicObject>, BoxError> {
    let api: Api<DynamicObject> = Api::all_with(spoke.clone(), &kinds::applied_manifest_work());
    Ok(api
        .list(&Default::default())
        .await?
        .items
        .into_iter()
        .find(|a| a.data["spec"]["manifestWorkName"] == work))
}

/// When the work agent started counting the eviction grace of an AppliedManifestWork
/// (`status.evictionStartTime`), if it is.
pub fn eviction_start(applied: &DynamicObject) -> Result<Option<jiff::Timestamp>, BoxError> {
    match applied.data["status"]["evictionStartTime"].as_str() {
        None => Ok(None),
        Some(t) => Ok(Some(t.parse()?)),
    }
}

/// Waits until the work agent of `spoke` has marked ManifestWork `work`'s AppliedManifestWork
/// for eviction, and returns when it started counting.
pub async fn wait_eviction_start(
    spoke: &Client,
    work: &str,
    timeout: Duration,
) -> Result<jiff::Timestamp, BoxError> {
    Ok(poll_until(
        timeout,
        &format!("the AppliedManifestWork of {work} marked for eviction"),
        || async {
            let a = applied_work(spoke, work).await.ok()??;
            eviction_start(&a).ok()?
        },
    )
    .await?)
}
