//! A real Open Cluster Management (OCM) environment for e2e tests: a hub and managed clusters, each
//! a local control plane, with OCM's registration controller, add-on manager, placement
//! controller, add-on webhook and one klusterlet agent per managed cluster as local processes, as
//! started by `hack/ocm-env.sh` (OCM built from source by `hack/build-ocm.sh`).
//!
//! - [`OcmEnv::shared`] starts the environment on first use in a test process (its own
//!   `OCM_ENV_DIR` under the temp dir) and every test of the binary shares it; a watchdog runs
//!   `hack/ocm-env.sh down` once the test process has exited (`UPDATE_STATUS_E2E_KEEP=1` keeps it).
//!   With `UPDATE_STATUS_OCM_ENV_DIR=<dir>`, the environment already running there (started by
//!   `OCM_ENV_DIR=<dir> hack/ocm-env.sh up`) is used and left alone.
//! - There is no kubelet on any cluster. The helpers stand in for it where OCM depends on it:
//!   [`SecretVolume`] materialises an add-on's hub-kubeconfig Secret into a directory as a secret
//!   volume would, and [`set_deployment_available`] reports a Deployment's pods as available.
//! - [`force_rotation`] makes the registration agent renew an add-on's client certificate now,
//!   through the same path as a renewal at 75-80% of the certificate's lifetime.
//!
//! OCM kinds are handled as [`DynamicObject`]s (see [`kinds`]); there is no OCM Rust crate.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::config::KubeconfigError;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use crate::{KEEP_ENV, client_for, poll_until, repo_root};

/// A test scenario's error.
pub type ScenarioError = Box<dyn std::error::Error + Send + Sync>;

/// Runs `scenario` in a task of its own, so that a failed assertion (a panic) comes back as an
/// error like any other; on failure, prints the state of the environment and the last lines of
/// its logs, prefixed with `test`.
pub async fn run_scenario<F>(env: &OcmEnv, test: &str, scenario: F) -> Result<(), ScenarioError>
where
    F: std::future::Future<Output = Result<(), ScenarioError>> + Send + 'static,
{
    let result = match tokio::spawn(scenario).await {
        Ok(r) => r,
        Err(e) if e.is_panic() => {
            let payload = e.into_panic();
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            Err(message.into())
        }
        Err(e) => Err(e.into()),
    };
    if result.is_err() {
        eprintln!(
            "{test}: failed; OCM environment:\n{}\n{}",
            env.status().await,
            env.log_tails(30)
        );
    }
    result
}

/// Set to a directory to use the OCM environment running there instead of starting one.
pub const ENV_DIR_ENV: &str = "UPDATE_STATUS_OCM_ENV_DIR";
/// Where the add-on manager mounts the hub kubeconfig Secret in a template add-on's Deployments
/// (and what `{{HUB_KUBECONFIG}}` expands to, plus `/kubeconfig`).
pub const HUB_KUBECONFIG_MOUNT: &str = "/managed/hub-kubeconfig";
/// Label of OCM objects naming their managed cluster (CSRs, namespaces, ...).
pub const CLUSTER_NAME_LABEL: &str = "open-cluster-management.io/cluster-name";
/// Label of OCM objects naming their add-on (add-on CSRs, ManifestWorks, RoleBindings).
pub const ADDON_NAME_LABEL: &str = "open-cluster-management.io/addon-name";
/// Field manager of the harness's writes to OCM objects.
pub const FIELD_MANAGER: &str = "update-status-e2e-ocm";

/// The Secret in which the registration agent keeps an add-on's hub credentials (keys
/// `kubeconfig`, `tls.crt`, `tls.key`, `cluster-name`), in the add-on's install namespace on the
/// managed cluster.
pub fn hub_kubeconfig_secret(addon: &str) -> String {
    format!("{addon}-hub-kubeconfig")
}

/// The hub user of an add-on's client certificate when the add-on is a template add-on (agent
/// name `<addon>-agent`).
pub fn template_addon_user(cluster: &str, addon: &str) -> String {
    format!("system:open-cluster-management:cluster:{cluster}:addon:{addon}:agent:{addon}-agent")
}

/// The hub groups of an add-on's client certificate.
pub fn addon_groups(cluster: &str, addon: &str) -> [String; 2] {
    [
        format!("system:open-cluster-management:cluster:{cluster}:addon:{addon}"),
        format!("system:open-cluster-management:addon:{addon}"),
    ]
}

/// The OCM kinds the harness and tests use, as [`ApiResource`]s for [`DynamicObject`]s.
pub mod kinds {
    use kube::api::GroupVersionKind;
    use kube::discovery::ApiResource;

    fn ar(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
    }

    /// `ManagedCluster` (cluster-scoped, hub).
    pub fn managed_cluster() -> ApiResource {
        ar(
            "cluster.open-cluster-management.io",
            "v1",
            "ManagedCluster",
            "managedclusters",
        )
    }
    /// `ManagedClusterAddOn` v1beta1 (in the cluster's namespace, hub).
    pub fn managed_cluster_addon() -> ApiResource {
        ar(
            "addon.open-cluster-management.io",
            "v1beta1",
            "ManagedClusterAddOn",
            "managedclusteraddons",
        )
    }
    /// `ClusterManagementAddOn` v1beta1 (cluster-scoped, hub).
    pub fn cluster_management_addon() -> ApiResource {
        ar(
            "addon.open-cluster-management.io",
            "v1beta1",
            "ClusterManagementAddOn",
            "clustermanagementaddons",
        )
    }
    /// `AddOnTemplate` v1alpha1 (cluster-scoped, hub).
    pub fn addon_template() -> ApiResource {
        ar(
            "addon.open-cluster-management.io",
            "v1alpha1",
            "AddOnTemplate",
            "addontemplates",
        )
    }
    /// `AddOnDeploymentConfig` v1alpha1 (namespaced, hub).
    pub fn addon_deployment_config() -> ApiResource {
        ar(
            "addon.open-cluster-management.io",
            "v1alpha1",
            "AddOnDeploymentConfig",
            "addondeploymentconfigs",
        )
    }
    /// `Placement` v1beta1 (namespaced, hub).
    pub fn placement() -> ApiResource {
        ar(
            "cluster.open-cluster-management.io",
            "v1beta1",
            "Placement",
            "placements",
        )
    }
    /// `PlacementDecision` v1beta1 (namespaced, hub; written by the placement controller).
    pub fn placement_decision() -> ApiResource {
        ar(
            "cluster.open-cluster-management.io",
            "v1beta1",
            "PlacementDecision",
            "placementdecisions",
        )
    }
    /// `ManifestWork` (in the cluster's namespace, hub).
    pub fn manifest_work() -> ApiResource {
        ar(
            "work.open-cluster-management.io",
            "v1",
            "ManifestWork",
            "manifestworks",
        )
    }
}

/// What can go wrong with the OCM environment or its helpers.
#[derive(Debug, thiserror::Error)]
pub enum OcmError {
    /// The environment did not start (shared by every test of the process).
    #[error("the OCM environment did not start: {0}")]
    Start(String),
    /// The environment runs with other managed clusters than asked for.
    #[error("the OCM environment of this process has managed clusters {have:?}, not {want:?}")]
    OtherClusters {
        /// Those of the running environment.
        have: Vec<String>,
        /// Those asked for.
        want: Vec<String>,
    },
    /// No managed cluster of that name in the environment.
    #[error("no managed cluster {0:?} in the OCM environment")]
    UnknownCluster(String),
    /// A program could not be run or failed.
    #[error("{what}: {message}")]
    Command {
        /// What was run.
        what: String,
        /// Why it failed (its standard error).
        message: String,
    },
    /// A kubeconfig could not be read or used.
    #[error("kubeconfig {path}: {source}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// The kube error.
        #[source]
        source: KubeconfigError,
    },
    /// A client could not be built.
    #[error("creating a client: {0}")]
    Client(String),
    /// An API call failed.
    #[error("{action}: {source}")]
    Api {
        /// What was being done.
        action: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// A file system operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An object is not as OCM would have made it.
    #[error("{0}")]
    Unexpected(String),
    /// A condition did not hold in time.
    #[error("timed out after {timeout:?} waiting for {what}")]
    Timeout {
        /// What was waited for.
        what: String,
        /// The timeout.
        timeout: Duration,
    },
}

fn api_err(action: impl Into<String>) -> impl FnOnce(kube::Error) -> OcmError {
    let action = action.into();
    move |source| OcmError::Api { action, source }
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> OcmError {
    let what = what.into();
    move |source| OcmError::Io { what, source }
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

fn script() -> PathBuf {
    repo_root().join("hack/ocm-env.sh")
}

/// How to start the environment (see `hack/ocm-env.sh` for the meaning of each).
#[derive(Clone, Debug, Default)]
pub struct OcmOptions {
    /// Names of the managed clusters (`OCM_CLUSTERS`).
    pub clusters: Vec<String>,
    /// Lifetime of the certificates the hub signs (`OCM_SIGNING_DURATION`, e.g. `"10m"`);
    /// `None`: kube-controller-manager's default, one year.
    pub signing_duration: Option<String>,
}

/// A running OCM environment (shared by the tests of a process).
#[derive(Debug)]
pub struct OcmEnv {
    dir: PathBuf,
    clusters: Vec<String>,
    /// Started by this process (not `UPDATE_STATUS_OCM_ENV_DIR`).
    started_here: bool,
}

impl OcmEnv {
    /// The environment of this process with these managed clusters, started on first use.
    pub async fn shared(clusters: &[&str]) -> Result<&'static OcmEnv, OcmError> {
        Self::shared_with(OcmOptions {
            clusters: clusters.iter().map(|c| c.to_string()).collect(),
            ..OcmOptions::default()
        })
        .await
    }

    /// As [`OcmEnv::shared`], with options; every caller of a process must ask for the same
    /// clusters (the options of the first one are used).
    pub async fn shared_with(options: OcmOptions) -> Result<&'static OcmEnv, OcmError> {
        static ENV: OnceLock<Result<OcmEnv, String>> = OnceLock::new();
        let want = options.clusters.clone();
        let env = tokio::task::spawn_blocking(move || {
            ENV.get_or_init(|| start_or_reuse(&options))
                .as_ref()
                .map_err(|message| OcmError::Start(message.clone()))
        })
        .await
        .map_err(|e| OcmError::Start(format!("start-up task failed: {e}")))??;
        if env.clusters != want {
            return Err(OcmError::OtherClusters {
                have: env.clusters.clone(),
                want,
            });
        }
        Ok(env)
    }

    /// The state directory (`OCM_ENV_DIR`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The managed clusters.
    pub fn clusters(&self) -> &[String] {
        &self.clusters
    }

    /// Where the OCM processes log (`<component>.log`: controller, manager, webhook,
    /// agent-`<cluster>`).
    pub fn log_dir(&self) -> PathBuf {
        self.dir.join("ocm")
    }

    /// The admin kubeconfig of the hub.
    pub fn hub_kubeconfig(&self) -> PathBuf {
        self.dir.join("hub/kubeconfig")
    }

    /// The admin kubeconfig of a managed cluster.
    pub fn cluster_kubeconfig(&self, cluster: &str) -> Result<PathBuf, OcmError> {
        if !self.clusters.iter().any(|c| c == cluster) {
            return Err(OcmError::UnknownCluster(cluster.to_string()));
        }
        Ok(self.dir.join("clusters").join(cluster).join("kubeconfig"))
    }

    /// The directory in which the klusterlet agent of `cluster` keeps the hub credentials it
    /// obtained (its `--hub-kubeconfig-dir`).
    pub fn agent_hub_kubeconfig_dir(&self, cluster: &str) -> Result<PathBuf, OcmError> {
        self.cluster_kubeconfig(cluster)?;
        Ok(self
            .log_dir()
            .join(format!("agent-{cluster}/hub-kubeconfig")))
    }

    /// An admin client of the hub (bound to the calling test's runtime).
    pub async fn hub_client(&self) -> Result<Client, OcmError> {
        client(&self.hub_kubeconfig()).await
    }

    /// An admin client of a managed cluster.
    pub async fn cluster_client(&self, cluster: &str) -> Result<Client, OcmError> {
        client(&self.cluster_kubeconfig(cluster)?).await
    }

    /// Runs kubectl on the hub (as admin) and returns its standard output.
    pub async fn kubectl_hub<I, S>(&self, args: I) -> Result<String, OcmError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        kubectl(&self.hub_kubeconfig(), args).await
    }

    /// Runs kubectl on a managed cluster (as admin) and returns its standard output.
    pub async fn kubectl_cluster<I, S>(&self, cluster: &str, args: I) -> Result<String, OcmError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        kubectl(&self.cluster_kubeconfig(cluster)?, args).await
    }

    /// Sends `signal` (`STOP`, `CONT`, ...) to the klusterlet agent of `cluster` and its restart
    /// loop (one process group): `STOP` freezes the agent as a cluster that drops off the network
    /// would look to the hub (no lease renewal, no status), `CONT` resumes it.
    pub fn signal_agent(&self, cluster: &str, signal: &str) -> Result<(), OcmError> {
        self.cluster_kubeconfig(cluster)?;
        let pidfile = self.log_dir().join(format!("agent-{cluster}.pid"));
        let pid = std::fs::read_to_string(&pidfile)
            .map_err(io_err(format!("reading {}", pidfile.display())))?;
        let pid = pid.trim();
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            return Err(OcmError::Unexpected(format!(
                "{} does not hold a process id: {pid:?}",
                pidfile.display()
            )));
        }
        let what = format!("kill -{signal} -- -{pid} (the agent of {cluster})");
        let out = Command::new("kill")
            .args([&format!("-{signal}"), "--", &format!("-{pid}")])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| OcmError::Command {
                what: what.clone(),
                message: e.to_string(),
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(OcmError::Command {
                what,
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// Stops the environment now (`hack/ocm-env.sh down`) instead of after the test process
    /// exits, so that its teardown does not overlap the next test binary: for the end of the last
    /// test of a binary that uses it. A no-op for an environment this process did not start or
    /// with `UPDATE_STATUS_E2E_KEEP=1`; later uses of the environment fail.
    pub async fn stop(&self) -> Result<(), OcmError> {
        if !self.started_here || env_flag(KEEP_ENV) {
            return Ok(());
        }
        let dir = self.dir.clone();
        let out = tokio::task::spawn_blocking(move || {
            Command::new(script())
                .arg("down")
                .env("OCM_ENV_DIR", &dir)
                .stdin(Stdio::null())
                .output()
        })
        .await
        .map_err(|e| OcmError::Command {
            what: format!("{} down", script().display()),
            message: format!("task failed: {e}"),
        })?
        .map_err(|e| OcmError::Command {
            what: format!("{} down", script().display()),
            message: e.to_string(),
        })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(OcmError::Command {
                what: format!(
                    "OCM_ENV_DIR={} {} down ({})",
                    self.dir.display(),
                    script().display(),
                    out.status
                ),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// The last `lines` lines of every OCM process's log (without library-go's repeated
    /// complaint that the test API servers have no request-header CA), for failure messages: the
    /// logs go with the environment when it is removed.
    pub fn log_tails(&self, lines: usize) -> String {
        let mut out = String::new();
        let Ok(entries) = std::fs::read_dir(self.log_dir()) else {
            return format!("(no logs in {})", self.log_dir().display());
        };
        let mut logs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        for log in logs {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let kept: Vec<&str> = text
                .lines()
                .filter(|l| !l.contains("extension-apiserver-authentication"))
                .collect();
            let tail = &kept[kept.len().saturating_sub(lines)..];
            out.push_str(&format!(
                "--- {} (last {} lines)\n",
                log.display(),
                tail.len()
            ));
            for l in tail {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    /// `hack/ocm-env.sh status`: the state of every component, for failure messages.
    pub async fn status(&self) -> String {
        let dir = self.dir.clone();
        let run = tokio::task::spawn_blocking(move || {
            Command::new(script())
                .arg("status")
                .env("OCM_ENV_DIR", &dir)
                .stdin(Stdio::null())
                .output()
        });
        match run.await {
            Ok(Ok(out)) => format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            Ok(Err(e)) => format!("cannot run {}: {e}", script().display()),
            Err(e) => format!("status task failed: {e}"),
        }
    }
}

async fn client(kubeconfig: &Path) -> Result<Client, OcmError> {
    client_for(kubeconfig).await.map_err(|e| match e {
        crate::Error::Kubeconfig { path, source } => OcmError::Kubeconfig { path, source },
        other => OcmError::Client(other.to_string()),
    })
}

/// Runs kubectl with `kubeconfig`, off the runtime's threads; a failed exit is an error carrying
/// its standard error.
pub async fn kubectl<I, S>(kubeconfig: &Path, args: I) -> Result<String, OcmError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect();
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .args(&args)
        .stdin(Stdio::null());
    let what = format!("kubectl {}", args.join(" "));
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .map_err(|e| OcmError::Command {
            what: what.clone(),
            message: format!("task failed: {e}"),
        })?
        .map_err(|e| OcmError::Command {
            what: what.clone(),
            message: format!("cannot run kubectl: {e}"),
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(OcmError::Command {
            what: format!("{what} ({})", out.status),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

fn start_or_reuse(options: &OcmOptions) -> Result<OcmEnv, String> {
    if let Some(dir) = std::env::var_os(ENV_DIR_ENV).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        let env_file = dir.join("ocm/env");
        let text = std::fs::read_to_string(&env_file).map_err(|e| {
            format!(
                "{ENV_DIR_ENV}={}: cannot read {} ({e}); start it with OCM_ENV_DIR={} {} up",
                dir.display(),
                env_file.display(),
                dir.display(),
                script().display()
            )
        })?;
        let clusters = text
            .lines()
            .find_map(|l| l.strip_prefix("OCM_CLUSTERS="))
            .map(|v| {
                v.trim_matches('"')
                    .split_whitespace()
                    .map(String::from)
                    .collect::<Vec<_>>()
            })
            .ok_or_else(|| format!("{} has no OCM_CLUSTERS line", env_file.display()))?;
        eprintln!(
            "e2e: using the OCM environment in {} (clusters {clusters:?})",
            dir.display()
        );
        return Ok(OcmEnv {
            dir,
            clusters,
            started_here: false,
        });
    }
    if options.clusters.is_empty() {
        return Err("no managed cluster asked for".into());
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!(
        "update-status-ocm-env-{}-{nanos:x}",
        std::process::id()
    ));
    let started = Instant::now();
    eprintln!(
        "e2e: starting an OCM hub and managed clusters {:?} in {} (hack/ocm-env.sh up, about a minute)",
        options.clusters,
        dir.display()
    );
    // The reaper first: a failed or interrupted start-up leaves nothing running either.
    if !env_flag(KEEP_ENV) {
        spawn_reaper(&dir)?;
    }
    let mut cmd = Command::new(script());
    cmd.arg("up")
        .env("OCM_ENV_DIR", &dir)
        .env("OCM_CLUSTERS", options.clusters.join(" "))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Its progress lines go to the test's standard error as they come.
        .stderr(Stdio::inherit());
    match &options.signing_duration {
        Some(d) => cmd.env("OCM_SIGNING_DURATION", d),
        None => cmd.env_remove("OCM_SIGNING_DURATION"),
    };
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", script().display()))?;
    if !status.success() {
        return Err(format!(
            "{} up ({status}) with OCM_ENV_DIR={}: see its output above and the logs in {}",
            script().display(),
            dir.display(),
            dir.join("ocm").display()
        ));
    }
    eprintln!(
        "e2e: OCM environment up in {:.1}s, OCM_ENV_DIR={}",
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    if env_flag(KEEP_ENV) {
        eprintln!(
            "e2e: {KEEP_ENV}=1: leaving it running; stop it with OCM_ENV_DIR={} {} down",
            dir.display(),
            script().display()
        );
    }
    Ok(OcmEnv {
        dir,
        clusters: options.clusters.clone(),
        started_here: true,
    })
}

/// A detached watchdog that runs `hack/ocm-env.sh down` once this process is gone.
fn spawn_reaper(dir: &Path) -> Result<(), String> {
    Command::new("setsid")
        .args([
            "sh",
            "-c",
            r#"while kill -0 "$1" 2>/dev/null; do sleep 0.5; done; exec "$2" down"#,
            "update-status-ocm-env-reaper",
        ])
        .arg(std::process::id().to_string())
        .arg(script())
        .env("OCM_ENV_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot start the OCM environment's reaper (setsid sh): {e}"))
}

// --- conditions and waiting ----------------------------------------------------------

/// The status (`True`, `False`, `Unknown`) of condition `type_` of an OCM object.
pub fn condition_status(obj: &DynamicObject, type_: &str) -> Option<String> {
    condition(obj, type_).and_then(|c| c.get("status")?.as_str().map(String::from))
}

/// Condition `type_` of an OCM object, whole (`status`, `reason`, `message`, ...).
pub fn condition<'a>(obj: &'a DynamicObject, type_: &str) -> Option<&'a Value> {
    obj.data
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// Waits until the ManagedCluster `cluster` is joined (`ManagedClusterJoined`) and available
/// (`ManagedClusterConditionAvailable`).
pub async fn wait_cluster_joined(
    hub: &Client,
    cluster: &str,
    timeout: Duration,
) -> Result<DynamicObject, OcmError> {
    let api: Api<DynamicObject> = Api::all_with(hub.clone(), &kinds::managed_cluster());
    poll_until(
        timeout,
        &format!("ManagedCluster {cluster} to be joined and available"),
        || async {
            let mc = api.get_opt(cluster).await.ok()??;
            (condition_status(&mc, "ManagedClusterJoined").as_deref() == Some("True")
                && condition_status(&mc, "ManagedClusterConditionAvailable").as_deref()
                    == Some("True"))
            .then_some(mc)
        },
    )
    .await
    .map_err(timeout_err)
}

fn timeout_err(e: crate::Error) -> OcmError {
    match e {
        crate::Error::Timeout { what, timeout } => OcmError::Timeout { what, timeout },
        other => OcmError::Unexpected(other.to_string()),
    }
}

/// The clusters a Placement `namespace/name` selects now: the `status.decisions` of its
/// PlacementDecisions (label `cluster.open-cluster-management.io/placement=<name>`).
pub async fn placement_decisions(
    hub: &Client,
    namespace: &str,
    name: &str,
) -> Result<std::collections::BTreeSet<String>, OcmError> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), namespace, &kinds::placement_decision());
    let list = api
        .list(&ListParams::default().labels(&format!(
            "cluster.open-cluster-management.io/placement={name}"
        )))
        .await
        .map_err(api_err(format!(
            "listing the PlacementDecisions of Placement {namespace}/{name}"
        )))?;
    Ok(list
        .items
        .iter()
        .filter_map(|d| d.data.pointer("/status/decisions")?.as_array().cloned())
        .flatten()
        .filter_map(|d| d.get("clusterName")?.as_str().map(String::from))
        .collect())
}

/// The claims of ManagedCluster `cluster` on the hub (`status.clusterClaims`: name → value).
pub async fn cluster_claims(
    hub: &Client,
    cluster: &str,
) -> Result<BTreeMap<String, String>, OcmError> {
    let api: Api<DynamicObject> = Api::all_with(hub.clone(), &kinds::managed_cluster());
    let mc = api
        .get(cluster)
        .await
        .map_err(api_err(format!("reading ManagedCluster {cluster}")))?;
    Ok(mc
        .data
        .pointer("/status/clusterClaims")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some((
                c.get("name")?.as_str()?.to_string(),
                c.get("value")?.as_str()?.to_string(),
            ))
        })
        .collect())
}

/// The ManagedClusterAddOns of a cluster's hub namespace.
pub fn addons_api(hub: &Client, cluster: &str) -> Api<DynamicObject> {
    Api::namespaced_with(hub.clone(), cluster, &kinds::managed_cluster_addon())
}

/// Enables add-on `addon` for `cluster` as `clusteradm addon enable` does: a ManagedClusterAddOn
/// named after the add-on in the cluster's hub namespace.
pub async fn enable_addon(
    hub: &Client,
    cluster: &str,
    addon: &str,
) -> Result<DynamicObject, OcmError> {
    let ar = kinds::managed_cluster_addon();
    let mut obj = DynamicObject::new(addon, &ar).within(cluster);
    obj.data = json!({"spec": {}});
    addons_api(hub, cluster)
        .create(&PostParams::default(), &obj)
        .await
        .map_err(api_err(format!(
            "creating ManagedClusterAddOn {cluster}/{addon} on the hub"
        )))
}

/// Disables add-on `addon` for `cluster`: deletes its ManagedClusterAddOn (already gone: fine).
pub async fn disable_addon(hub: &Client, cluster: &str, addon: &str) -> Result<(), OcmError> {
    match addons_api(hub, cluster)
        .delete(addon, &DeleteParams::background())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
        Err(source) => Err(OcmError::Api {
            action: format!("deleting ManagedClusterAddOn {cluster}/{addon} on the hub"),
            source,
        }),
    }
}

/// Waits until condition `type_` of the ManagedClusterAddOn `cluster/addon` has `status`;
/// the error names the condition as last seen.
pub async fn wait_addon_condition(
    hub: &Client,
    cluster: &str,
    addon: &str,
    type_: &str,
    status: &str,
    timeout: Duration,
) -> Result<DynamicObject, OcmError> {
    let api = addons_api(hub, cluster);
    let last = Arc::new(Mutex::new(String::from("not seen")));
    let result = poll_until(
        timeout,
        &format!("ManagedClusterAddOn {cluster}/{addon} condition {type_}={status}"),
        || {
            let (api, last) = (api.clone(), last.clone());
            async move {
                let mca = api.get_opt(addon).await.ok()??;
                if let Ok(mut l) = last.lock() {
                    *l = condition(&mca, type_).map_or("absent".into(), Value::to_string);
                }
                (condition_status(&mca, type_).as_deref() == Some(status)).then_some(mca)
            }
        },
    )
    .await;
    result.map_err(|e| match timeout_err(e) {
        OcmError::Timeout { what, timeout } => OcmError::Timeout {
            what: format!(
                "{what} (last seen: {})",
                last.lock().map(|l| l.clone()).unwrap_or_default()
            ),
            timeout,
        },
        other => other,
    })
}

/// The namespace on the managed cluster in which the add-on is installed and its Secret kept
/// (`status.namespace` of its ManagedClusterAddOn, set by the add-on manager).
pub async fn wait_addon_namespace(
    hub: &Client,
    cluster: &str,
    addon: &str,
    timeout: Duration,
) -> Result<String, OcmError> {
    let api = addons_api(hub, cluster);
    poll_until(
        timeout,
        &format!("status.namespace of ManagedClusterAddOn {cluster}/{addon}"),
        || async {
            let mca = api.get_opt(addon).await.ok()??;
            let ns = mca.data.pointer("/status/namespace")?.as_str()?;
            (!ns.is_empty()).then(|| ns.to_string())
        },
    )
    .await
    .map_err(timeout_err)
}

/// Waits until the object `name` of `api` is gone.
pub async fn wait_gone<K>(
    api: &Api<K>,
    name: &str,
    what: &str,
    timeout: Duration,
) -> Result<(), OcmError>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let gone = poll_until(timeout, &format!("{what} to be deleted"), || async {
        match api.get_opt(name).await {
            Ok(None) => Some(()),
            _ => None,
        }
    })
    .await;
    gone.map_err(timeout_err)
}

/// Waits until the Secret `namespace/name` exists with every key of `keys`.
pub async fn wait_secret(
    client: &Client,
    namespace: &str,
    name: &str,
    keys: &[&str],
    timeout: Duration,
) -> Result<Secret, OcmError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    poll_until(
        timeout,
        &format!("Secret {namespace}/{name} with keys {keys:?}"),
        || async {
            let s = api.get_opt(name).await.ok()??;
            let data = s.data.as_ref()?;
            keys.iter().all(|k| data.contains_key(*k)).then_some(s)
        },
    )
    .await
    .map_err(timeout_err)
}

fn secret_bytes(secret: &Secret, key: &str) -> Option<Vec<u8>> {
    secret.data.as_ref()?.get(key).map(|b| b.0.clone())
}

// --- standing in for kubelet ---------------------------------------------------------

/// Reports the Deployment `namespace/name` as rolled out with all its replicas available, as
/// kubelet and the deployment controller would (neither runs in the test clusters): the work
/// agent then feeds the replicas back to the hub, and the add-on manager's health check makes the
/// ManagedClusterAddOn `Available`.
pub async fn set_deployment_available(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<(), OcmError> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let d = api
        .get(name)
        .await
        .map_err(api_err(format!("reading Deployment {namespace}/{name}")))?;
    let replicas = d.spec.replicas.unwrap_or(1);
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map_err(|e| OcmError::Unexpected(format!("rounding the time: {e}")))?
        .to_string();
    let condition = |type_: &str, reason: &str| {
        json!({
            "type": type_, "status": "True", "reason": reason,
            "message": "set by the e2e harness, standing in for kubelet",
            "lastUpdateTime": now, "lastTransitionTime": now,
        })
    };
    let status = json!({"status": {
        "observedGeneration": d.metadata.generation.unwrap_or(1),
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            condition("Available", "MinimumReplicasAvailable"),
            condition("Progressing", "NewReplicaSetAvailable"),
        ],
    }});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .map_err(api_err(format!(
            "setting the status of Deployment {namespace}/{name}"
        )))?;
    Ok(())
}

#[derive(Default)]
struct VolumeState {
    writes: u64,
    last: Option<BTreeMap<String, ByteString>>,
    error: Option<String>,
}

/// A Secret of a managed cluster materialised into a directory the way kubelet's secret volume
/// does, and kept up to date while this value lives: every key is a symbolic link `<key>` ->
/// `..data/<key>`, `..data` a symbolic link to a timestamped directory holding the files, swapped
/// atomically (rename) when the Secret's data changes. A deleted Secret leaves the last content,
/// as for a running pod. This stands in for kubelet, which the test clusters do not run.
pub struct SecretVolume {
    dir: PathBuf,
    state: Arc<Mutex<VolumeState>>,
    writes: tokio::sync::watch::Receiver<u64>,
    task: tokio::task::JoinHandle<()>,
    label: String,
}

impl Drop for SecretVolume {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SecretVolume {
    /// Starts projecting Secret `namespace/name` into `dir` (created; must be empty or absent)
    /// and waits for the first write (the Secret must exist within `timeout`).
    pub async fn mount(
        client: &Client,
        namespace: &str,
        name: &str,
        dir: &Path,
        timeout: Duration,
    ) -> Result<SecretVolume, OcmError> {
        let label = format!("Secret {namespace}/{name} projected into {}", dir.display());
        std::fs::create_dir_all(dir).map_err(io_err(format!("creating {}", dir.display())))?;
        let not_empty = std::fs::read_dir(dir)
            .map_err(io_err(format!("reading {}", dir.display())))?
            .next()
            .is_some();
        if not_empty {
            return Err(OcmError::Unexpected(format!(
                "{label}: {} is not empty",
                dir.display()
            )));
        }
        let state = Arc::new(Mutex::new(VolumeState::default()));
        let (tx, rx) = tokio::sync::watch::channel(0u64);
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let (task_dir, task_state, task_label) = (dir.to_path_buf(), state.clone(), label.clone());
        let task = tokio::spawn(async move {
            let mut events = watcher(api, config)
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(event) = events.next().await {
                let secret = match event {
                    Ok(s) => s,
                    Err(e) => {
                        // The watcher retries with back-off; remember the error for the report.
                        if let Ok(mut st) = task_state.lock() {
                            st.error = Some(format!("{task_label}: watch: {e}"));
                        }
                        continue;
                    }
                };
                let data = secret.data.clone().unwrap_or_default();
                let Ok(mut st) = task_state.lock() else {
                    return;
                };
                if st.last.as_ref() == Some(&data) {
                    continue;
                }
                match write_atomically(&task_dir, &data, st.writes) {
                    Ok(()) => {
                        st.writes += 1;
                        st.last = Some(data);
                        st.error = None;
                        let _ = tx.send(st.writes);
                    }
                    Err(e) => st.error = Some(format!("{task_label}: {e}")),
                }
            }
        });
        let volume = SecretVolume {
            dir: dir.to_path_buf(),
            state,
            writes: rx,
            task,
            label,
        };
        volume.wait_writes(1, timeout).await?;
        Ok(volume)
    }

    /// The directory (what the container would see at its mount path).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<dir>/kubeconfig`: the `{{HUB_KUBECONFIG}}` of a template add-on, here.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    /// How many times the content was written (1 after [`SecretVolume::mount`]).
    pub fn writes(&self) -> u64 {
        *self.writes.borrow()
    }

    /// Waits until the content was written at least `n` times.
    pub async fn wait_writes(&self, n: u64, timeout: Duration) -> Result<(), OcmError> {
        let mut rx = self.writes.clone();
        let waited = tokio::time::timeout(timeout, rx.wait_for(|w| *w >= n)).await;
        match waited {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(OcmError::Unexpected(format!(
                "{}: the projection stopped",
                self.label
            ))),
            Err(_) => {
                let error = self
                    .state
                    .lock()
                    .ok()
                    .and_then(|s| s.error.clone())
                    .map(|e| format!(" (last error: {e})"))
                    .unwrap_or_default();
                Err(OcmError::Timeout {
                    what: format!("write {n} of the {}{error}", self.label),
                    timeout,
                })
            }
        }
    }
}

static VOLUME_SEQ: AtomicU64 = AtomicU64::new(0);

/// kubelet's AtomicWriter, reduced: a new timestamped directory with the files, `..data`
/// switched to it by renaming a fresh symbolic link over it, the per-key links, the old
/// directory removed.
fn write_atomically(
    dir: &Path,
    data: &BTreeMap<String, ByteString>,
    generation: u64,
) -> Result<(), String> {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let ts = jiff::Timestamp::now().strftime("%Y_%m_%d_%H_%M_%S");
    let seq = VOLUME_SEQ.fetch_add(1, Ordering::Relaxed);
    let versioned = format!("..{ts}.{generation}-{seq}");
    let new_dir = dir.join(&versioned);
    std::fs::create_dir(&new_dir).map_err(|e| format!("creating {}: {e}", new_dir.display()))?;
    let written = data.iter().try_for_each(|(key, value)| {
        if key.contains('/') || key.starts_with("..") || key.is_empty() {
            return Err(format!("Secret key {key:?} cannot be a file name"));
        }
        let file = new_dir.join(key);
        std::fs::write(&file, &value.0).map_err(|e| format!("writing {}: {e}", file.display()))?;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644))
            .map_err(|e| format!("chmod {}: {e}", file.display()))
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&new_dir);
        return Err(e);
    }
    let old = std::fs::read_link(dir.join("..data")).ok();
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    symlink(&versioned, &tmp).map_err(|e| format!("linking {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join("..data"))
        .map_err(|e| format!("switching {}/..data: {e}", dir.display()))?;
    for key in data.keys() {
        let link = dir.join(key);
        if std::fs::symlink_metadata(&link).is_err() {
            symlink(format!("..data/{key}"), &link)
                .map_err(|e| format!("linking {}: {e}", link.display()))?;
        }
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("..") && !data.contains_key(&name) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    if let Some(old) = old.filter(|o| o.as_os_str() != versioned.as_str()) {
        let _ = std::fs::remove_dir_all(dir.join(old));
    }
    Ok(())
}

// --- credential rotation -------------------------------------------------------------

/// The certificates before and after a rotation.
#[derive(Clone, Debug)]
pub struct Rotation {
    /// `tls.crt` before.
    pub old_cert: Vec<u8>,
    /// `tls.crt` after (a new key too).
    pub new_cert: Vec<u8>,
}

/// Makes the registration agent of `cluster` renew the client certificate of `addon` now, and
/// waits until its Secret (`<addon>-hub-kubeconfig` in `namespace` of the managed cluster) holds
/// the new certificate and key.
///
/// How: the agent requests a new certificate when the Secret's certificate is due (20-25% of its
/// lifetime left), invalid, or when the Secret's other keys differ from what it wrote. The last is
/// the trigger here: the Secret's `cluster-name` is set to another value; the agent then makes a
/// new key and CSR, the add-on manager approves it, the hub's signer signs it, and the agent writes
/// the new `tls.crt`/`tls.key` with `cluster-name` restored, in one update. `kubeconfig`,
/// `tls.crt` and `tls.key` stay valid throughout. Before that, the add-on's issued CSRs are deleted
/// from the hub (as kube-controller-manager's CSR cleaner does after an hour): the agent stops
/// requesting certificates for an add-on while 10 of its CSRs exist.
pub async fn force_rotation(
    hub: &Client,
    managed: &Client,
    cluster: &str,
    addon: &str,
    namespace: &str,
    timeout: Duration,
) -> Result<Rotation, OcmError> {
    let name = hub_kubeconfig_secret(addon);
    let what = format!("Secret {namespace}/{name} on managed cluster {cluster}");
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), namespace);
    let before = secrets
        .get(&name)
        .await
        .map_err(api_err(format!("reading {what}")))?;
    let old_cert = secret_bytes(&before, "tls.crt")
        .ok_or_else(|| OcmError::Unexpected(format!("{what} has no tls.crt")))?;
    let cluster_name = secret_bytes(&before, "cluster-name")
        .ok_or_else(|| OcmError::Unexpected(format!("{what} has no cluster-name")))?;

    let csrs: Api<CertificateSigningRequest> = Api::all(hub.clone());
    let selector = format!("{CLUSTER_NAME_LABEL}={cluster},{ADDON_NAME_LABEL}={addon}");
    poll_until(
        timeout,
        &format!("no pending CSR of add-on {addon} of {cluster} on the hub"),
        || async {
            let list = csrs
                .list(&ListParams::default().labels(&selector))
                .await
                .ok()?;
            list.items
                .iter()
                .all(|c| {
                    let status = c.status.as_ref();
                    status.is_some_and(|s| s.certificate.is_some())
                        || status
                            .and_then(|s| s.conditions.as_ref())
                            .is_some_and(|cs| {
                                cs.iter()
                                    .any(|c| c.type_ == "Denied" || c.type_ == "Failed")
                            })
                })
                .then_some(())
        },
    )
    .await
    .map_err(timeout_err)?;
    let issued = csrs
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(api_err(format!(
            "listing the CSRs of add-on {addon} of {cluster} on the hub"
        )))?;
    for csr in issued.items {
        let csr_name = csr.name_any();
        match csrs.delete(&csr_name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(source) => {
                return Err(OcmError::Api {
                    action: format!("deleting issued CSR {csr_name} on the hub"),
                    source,
                });
            }
        }
    }

    let trigger = json!({"data": {"cluster-name": ByteString(b"rotation-forced-by-e2e".to_vec())}});
    secrets
        .patch(&name, &PatchParams::default(), &Patch::Merge(&trigger))
        .await
        .map_err(api_err(format!("changing cluster-name in {what}")))?;
    let new_cert = poll_until(timeout, &format!("a new certificate in {what}"), || async {
        let s = secrets.get_opt(&name).await.ok()??;
        let cert = secret_bytes(&s, "tls.crt")?;
        (cert != old_cert && secret_bytes(&s, "cluster-name")? == cluster_name).then_some(cert)
    })
    .await
    .map_err(timeout_err)?;
    Ok(Rotation { old_cert, new_cert })
}
