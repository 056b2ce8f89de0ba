//! The hub's limits on the agents (`config/acm/limits`): `update-status-controller --mode=hub`
//! started on the local OCM hub as its Deployment (`hub-controller.yaml`) starts it, with a token
//! of its ServiceAccount (so its RBAC and the policy bounding its quota writes are exercised),
//! and what the add-on identity writes on the hub, made as the hub sync makes it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::controller::{Controller, Launch};
use crate::ocm::OcmEnv;
use crate::paths::repo_root;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Namespace of the hub controller (and of the add-on's deployment config).
pub const HUB_NAMESPACE: &str = "open-cluster-management-update-status";
/// The hub controller's ServiceAccount and Deployment.
pub const HUB_CONTROLLER: &str = "update-status-hub";
/// The ResourceQuota it keeps in every cluster namespace with the add-on.
pub const QUOTA: &str = "update-status";

/// The arguments of the hub controller's container in `config/acm/limits/hub-controller.yaml`.
pub fn shipped_args() -> Result<Vec<String>, BoxError> {
    let path = repo_root().join("config/acm/limits/hub-controller.yaml");
    let text = std::fs::read_to_string(&path)?;
    let deployment = serde_saphyr::from_multiple::<Value>(&text)?
        .into_iter()
        .find(|d| d["kind"] == "Deployment")
        .ok_or_else(|| format!("no Deployment in {}", path.display()))?;
    let args = deployment
        .pointer("/spec/template/spec/containers/0/args")
        .and_then(Value::as_array)
        .ok_or("the hub controller's container has no args")?;
    Ok(args
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect())
}

/// A kubeconfig for the hub controller's ServiceAccount on the hub (a one-hour token minted
/// with kubectl), in `dir`.
pub async fn hub_controller_kubeconfig(env: &OcmEnv, dir: &Path) -> Result<PathBuf, BoxError> {
    let token = env
        .kubectl_hub([
            "create",
            "token",
            HUB_CONTROLLER,
            "-n",
            HUB_NAMESPACE,
            "--duration=1h",
        ])
        .await?;
    let kc = kube::config::Kubeconfig::read_from(env.hub_kubeconfig())?;
    let server = kc
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .ok_or("no cluster in the hub's kubeconfig")?;
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "hub", "cluster": server}],
        "users": [{"name": HUB_CONTROLLER, "user": {"token": token.trim()}}],
        "contexts": [{"name": "hub", "context": {"cluster": "hub", "user": HUB_CONTROLLER}}],
        "current-context": "hub",
    });
    std::fs::create_dir_all(dir)?;
    let path = dir.join("hub-controller.kubeconfig");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// The hub controller of `config/acm/limits` as its Deployment runs it ([`start_hub_controller`]
/// with the workspace's debug build, no extra flag): it gives each cluster namespace with the
/// add-on the ResourceQuota without which the agent may not write. For the tests that need an
/// agent writing to the hub, not the limits themselves.
pub async fn start_quota_keeper(env: &OcmEnv, work: &Path) -> Result<Controller, BoxError> {
    let bin = crate::controller::workspace_bin(
        "update-status-controller",
        "UPDATE_STATUS_CONTROLLER_BIN",
    );
    start_hub_controller(env, bin, work, &[]).await
}

/// Starts `bin` (an `update-status-controller`) on the hub as the shipped Deployment does: its
/// arguments (but the bind addresses and the namespace, which [`Controller::launch`] sets, and the
/// JSON log format), as its ServiceAccount; `extra` flags after them. `config/acm` must be applied.
pub async fn start_hub_controller(
    env: &OcmEnv,
    bin: PathBuf,
    work: &Path,
    extra: &[&str],
) -> Result<Controller, BoxError> {
    let kubeconfig = hub_controller_kubeconfig(env, work).await?;
    let mut args: Vec<String> = shipped_args()?
        .into_iter()
        .filter(|a| {
            let flag = a.split('=').next().unwrap_or_default();
            !matches!(
                flag,
                "--metrics-bind-address"
                    | "--health-probe-bind-address"
                    | "--namespace"
                    | "--log-format"
            )
        })
        .collect();
    if !args.iter().any(|a| a == "--mode=hub") {
        return Err(format!("the shipped hub controller does not run --mode=hub: {args:?}").into());
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    Ok(Controller::launch(
        &Launch {
            bin,
            kubeconfig,
            log: work.join(format!("hub-controller-{port}.log")),
        },
        HUB_NAMESPACE,
        port,
        &args,
    )?)
}

/// What the hub sync writes for one copy (its labels; an owner, a status by the caller), in
/// `cluster`'s namespace, as a server-side apply body.
pub fn copy_body(kind: &str, name: &str, cluster: &str) -> Value {
    json!({
        "apiVersion": "update.openshift.io/v1alpha1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": cluster,
            "labels": {
                "app.kubernetes.io/managed-by": "update-status-controller",
                "update.openshift.io/reconciler": "hub-sync",
                "open-cluster-management.io/cluster-name": cluster,
            },
        },
        "spec": {},
    })
}
