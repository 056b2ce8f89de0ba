//! The update-status add-on's agent as the e2e tests run it on a managed cluster of the local
//! OCM environment ([`crate::ocm`]): the Deployment the ManifestWork applied, the hub Secret OCM
//! wrote projected as the kubelet would, a kubeconfig of the agent's ServiceAccount, and the
//! release controller started with the rendered container's arguments and environment.

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Container;
use kube::Client;
use kube::api::Api;
use serde_json::{Value, json};

use crate::controller::{Controller, Launch, release_bin};
use crate::ocm::{self, OcmEnv, SecretVolume};
use crate::wait::poll_until;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The add-on's name.
pub const ADDON: &str = "update-status";
/// The agent's namespace on a managed cluster.
pub const AGENT_NS: &str = "openshift-update-status";
/// The agent's Deployment (and ServiceAccount).
pub const DEPLOYMENT: &str = "update-status-controller";
/// The agent's hub Secret, written by OCM's registration agent.
pub const SECRET: &str = "update-status-hub-kubeconfig";
/// For OCM to act on a change (controller round trips, a work status sync of 2 s).
pub const TIMEOUT: Duration = Duration::from_secs(90);

/// The agent's Deployment, once the ManifestWork has applied it on `cluster`.
pub async fn agent_deployment(spoke: &Client, cluster: &str) -> Result<Deployment, BoxError> {
    wait_deployment(spoke, AGENT_NS, DEPLOYMENT, cluster, TIMEOUT).await
}

/// Deployment `namespace`/`name` of the `spoke` client's cluster (named `cluster` in the
/// time-out error), once it exists: waits up to `timeout`.
pub async fn wait_deployment(
    spoke: &Client,
    namespace: &str,
    name: &str,
    cluster: &str,
    timeout: Duration,
) -> Result<Deployment, BoxError> {
    let deployments: Api<Deployment> = Api::namespaced(spoke.clone(), namespace);
    Ok(poll_until(
        timeout,
        &format!("Deployment {namespace}/{name} on {cluster}"),
        || async { deployments.get_opt(name).await.ok().flatten() },
    )
    .await?)
}

/// The Deployment's first container, once the ManifestWork has applied it on `cluster`.
pub async fn agent_container(spoke: &Client, cluster: &str) -> Result<Container, BoxError> {
    let d = agent_deployment(spoke, cluster).await?;
    d.spec
        .template
        .spec
        .and_then(|p| p.containers.into_iter().next())
        .ok_or_else(|| {
            format!("Deployment {AGENT_NS}/{DEPLOYMENT} on {cluster} has no container").into()
        })
}

/// The agent's hub Secret, once OCM has written it, projected into `dir` as the kubelet's Secret
/// volume would be (the Deployment mounts it at `/managed/hub-kubeconfig`).
pub async fn hub_secret_volume(spoke: &Client, dir: &Path) -> Result<SecretVolume, BoxError> {
    ocm::wait_secret(
        spoke,
        AGENT_NS,
        SECRET,
        &["kubeconfig", "tls.crt", "tls.key"],
        TIMEOUT,
    )
    .await?;
    Ok(SecretVolume::mount(spoke, AGENT_NS, SECRET, dir, TIMEOUT).await?)
}

/// A kubeconfig for the agent's ServiceAccount on `cluster` (a token minted with kubectl), in
/// `dir`.
pub async fn service_account_kubeconfig(
    env: &OcmEnv,
    cluster: &str,
    dir: &Path,
) -> Result<PathBuf, BoxError> {
    let config = token_kubeconfig(env, cluster, AGENT_NS, DEPLOYMENT, "agent").await?;
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{cluster}-agent.kubeconfig"));
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

/// A kubeconfig (JSON) for ServiceAccount `namespace`/`account` on `cluster`: a token minted with
/// `kubectl create token` (1 h) and the server of the managed cluster's admin kubeconfig; `user`
/// names its user and context.
pub async fn token_kubeconfig(
    env: &OcmEnv,
    cluster: &str,
    namespace: &str,
    account: &str,
    user: &str,
) -> Result<Value, BoxError> {
    let token = env
        .kubectl_cluster(
            cluster,
            ["create", "token", account, "-n", namespace, "--duration=1h"],
        )
        .await?;
    let admin = env.cluster_kubeconfig(cluster)?;
    let kc = kube::config::Kubeconfig::read_from(&admin)?;
    let server = kc
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .ok_or("no cluster in the managed cluster's kubeconfig")?;
    Ok(json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": server}],
        "users": [{"name": user, "user": {"token": token.trim()}}],
        "contexts": [{"name": user, "context": {"cluster": cluster, "user": user}}],
        "current-context": user,
    }))
}

/// Starts the release controller as the rendered container starts it, on `cluster`: its
/// arguments and environment, with the bind addresses on free loopback ports, the hub kubeconfig
/// at `hub_kubeconfig` (the projected Secret), an empty serving-certificate folder, no Prometheus.
pub fn start_agent(
    container: &Container,
    kubeconfig: &Path,
    hub_kubeconfig: &Path,
    work: &Path,
    cluster: &str,
) -> Result<Controller, BoxError> {
    start_agent_with(
        container,
        kubeconfig,
        hub_kubeconfig,
        work,
        cluster,
        &[],
        false,
    )
}

/// As [`start_agent`], with `extra` flags after the container's (e.g. a Prometheus of the
/// test, a short heartbeat interval) and, with `container_env`, the container's literal
/// environment variables (those OCM's add-on manager adds: `HTTPS_PROXY`, `NO_PROXY`, ...).
pub fn start_agent_with(
    container: &Container,
    kubeconfig: &Path,
    hub_kubeconfig: &Path,
    work: &Path,
    cluster: &str,
    extra: &[String],
    container_env: bool,
) -> Result<Controller, BoxError> {
    let mount = ocm::HUB_KUBECONFIG_MOUNT;
    let certs = work.join(format!("{cluster}-metrics-tls"));
    std::fs::create_dir_all(&certs)?;
    let mut args = Vec::new();
    for a in container.args.iter().flatten() {
        let (flag, value) = a.split_once('=').unwrap_or((a.as_str(), ""));
        match flag {
            // Launch sets these (free loopback ports, our namespace).
            "--metrics-bind-address" | "--health-probe-bind-address" | "--namespace" => {}
            // No Prometheus in this environment.
            "--prometheus-url" | "--prometheus-token-file" | "--prometheus-ca-file" => {}
            "--metrics-cert-dir" => args.push(format!("--metrics-cert-dir={}", certs.display())),
            "--hub-kubeconfig" => {
                assert_eq!(
                    value,
                    format!("{mount}/kubeconfig"),
                    "the mounted Secret's kubeconfig"
                );
                args.push(format!("--hub-kubeconfig={}", hub_kubeconfig.display()));
            }
            _ => args.push(a.clone()),
        }
    }
    assert!(
        args.iter()
            .any(|a| a == &format!("--cluster-name={cluster}")),
        "the rendered Deployment names its cluster: {args:?}"
    );
    assert!(
        args.iter().any(|a| a == "--leader-elect"),
        "as the Deployment: leader election on: {args:?}"
    );
    args.extend(extra.iter().cloned());
    let extra: Vec<&str> = args.iter().map(String::as_str).collect();
    let env: Vec<(String, String)> = if container_env {
        container
            .env
            .iter()
            .flatten()
            .filter_map(|e| Some((e.name.clone(), e.value.clone()?)))
            .collect()
    } else {
        Vec::new()
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    Ok(Controller::launch_with_env(
        &Launch {
            bin: release_bin(
                "update-status-controller",
                "UPDATE_STATUS_CONTROLLER_RELEASE_BIN",
            ),
            kubeconfig: kubeconfig.to_path_buf(),
            log: work.join(format!("{cluster}-controller.log")),
        },
        AGENT_NS,
        port,
        &extra,
        &env,
    )?)
}

/// The sum of a metric's series (`name` followed by labels or a space).
pub fn counter(metrics: &str, name: &str) -> f64 {
    metrics
        .lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}
