//! End-to-end test harness for update-status.
//!
//! Tests run against a real control plane: etcd, kube-apiserver and kube-controller-manager
//! (garbage collector, namespace and service-account controllers only) on loopback, as
//! started by `hack/local-cluster.sh`. See `e2e/README.md`.
//!
//! - With `UPDATE_STATUS_E2E_REUSE=1`, the cluster named by `KUBECONFIG` is used (this is
//!   what `make test-e2e` does: it starts one cluster for all test binaries).
//! - Otherwise the first [`TestEnv::new`] of a test process runs `hack/local-cluster.sh up`
//!   with its own `CLUSTER_DIR` under the temp dir; every test of the binary shares it, and
//!   a watchdog runs `hack/local-cluster.sh down` once the test process has exited
//!   (`UPDATE_STATUS_E2E_KEEP=1` keeps it, and the test namespaces, for debugging).
//!
//! A [`kube::Client`] is bound to the tokio runtime it was created on, and every
//! `#[tokio::test]` has its own runtime, so each [`TestEnv`] builds its own client; only
//! the cluster is shared.

pub mod addon_agent;
pub mod browser;
pub mod cdp;
pub mod certs;
pub mod controller;
pub mod hosted_objects;
pub mod hub_copies;
pub mod hub_limits;
pub mod kubeconfig;
pub mod monitoring;
pub mod ocm;
pub mod outputs;
pub mod playback;
pub mod prometheus;
pub mod proxy;
pub mod scenario;
pub mod snapshot;
pub mod web;

use std::ffi::OsStr;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube::{Client, Config};
use serde_json::json;

/// Set to `1` to run against the cluster of `KUBECONFIG` instead of starting one.
pub const REUSE_ENV: &str = "UPDATE_STATUS_E2E_REUSE";
/// Set to `1` to keep the cluster started by the harness, and the test namespaces.
pub const KEEP_ENV: &str = "UPDATE_STATUS_E2E_KEEP";
/// Overrides the fixtures folder (the one holding one folder per captured cluster).
pub const FIXTURES_ENV: &str = update_status_testdata::FIXTURES_ENV;
/// Label put on every test namespace.
pub const NAMESPACE_LABEL: &str = "update-status.openshift.io/e2e";
/// Field manager of the harness's own writes.
pub const FIELD_MANAGER: &str = "update-status-e2e";

/// What can go wrong in the harness.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reuse was asked for without a kubeconfig.
    #[error("{REUSE_ENV}=1 but KUBECONFIG is not set (run: eval \"$(hack/local-cluster.sh env)\")")]
    NoKubeconfig,
    /// Reuse was asked for with a KUBECONFIG listing several files.
    #[error("{REUSE_ENV}=1 needs KUBECONFIG to name a single file, not {0:?}")]
    SeveralKubeconfigs(String),
    /// The local control plane did not start (shared by every test of the process).
    #[error("the local control plane did not start: {0}")]
    ClusterStart(String),
    /// A `hack/local-cluster.sh` command on the running control plane failed.
    #[error("local control plane: {0}")]
    LocalCluster(String),
    /// A program could not be run.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The kubeconfig could not be read or used.
    #[error("kubeconfig {path}: {source}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// The kube error.
        #[source]
        source: KubeconfigError,
    },
    /// The client could not be built.
    #[error("creating a client: {0}")]
    Client(#[source] kube::Error),
    /// An API call made by the harness failed.
    #[error("{action}: {source}")]
    Api {
        /// What was being done.
        action: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// kubectl exited with a failure.
    #[error("kubectl {args} failed ({status}): {stderr}")]
    Kubectl {
        /// The arguments.
        args: String,
        /// The exit status.
        status: std::process::ExitStatus,
        /// Its standard error.
        stderr: String,
    },
    /// A [`wait_for`] condition did not hold in time.
    #[error("timed out after {timeout:?} waiting for {what}")]
    Timeout {
        /// What was waited for.
        what: String,
        /// The timeout.
        timeout: Duration,
    },
}

/// A control plane the tests talk to.
#[derive(Debug)]
struct Cluster {
    kubeconfig: PathBuf,
    /// `CLUSTER_DIR` when the harness started the cluster itself.
    dir: Option<PathBuf>,
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// The repository root (parent of the e2e crate).
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Runs `hack/local-cluster.sh <command>` on the cluster in `dir` with extra environment
/// variables, blocking (e.g. from a `Drop` that must restore the cluster).
pub fn run_local_cluster(
    dir: &Path,
    command: &str,
    vars: &[(String, String)],
) -> Result<(), Error> {
    let script = repo_root().join("hack/local-cluster.sh");
    let out = Command::new(&script)
        .arg(command)
        .env("CLUSTER_DIR", dir)
        .envs(vars.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::LocalCluster(format!("cannot run {}: {e}", script.display())))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(Error::LocalCluster(format!(
            "{} {command} ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )))
    }
}

/// The folder of captured clusters (see [`update_status_testdata::oc_status_dir`]).
pub fn fixtures_dir() -> PathBuf {
    update_status_testdata::oc_status_dir()
}

/// The folder of one `oc adm upgrade status` snapshot, e.g. `oc_status_case("4.14.1-degraded")`.
pub fn oc_status_case(name: &str) -> PathBuf {
    fixtures_dir().join(name)
}

fn shared_cluster() -> Result<&'static Cluster, Error> {
    static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
    CLUSTER
        .get_or_init(start_or_reuse_cluster)
        .as_ref()
        .map_err(|message| Error::ClusterStart(message.clone()))
}

fn start_or_reuse_cluster() -> Result<Cluster, String> {
    if env_flag(REUSE_ENV) {
        let value = std::env::var("KUBECONFIG").map_err(|_| Error::NoKubeconfig.to_string())?;
        if value.is_empty() {
            return Err(Error::NoKubeconfig.to_string());
        }
        if value.contains(':') {
            return Err(Error::SeveralKubeconfigs(value).to_string());
        }
        // `hack/e2e.sh` exports the CLUSTER_DIR of the control plane it started: then tests
        // may also drive that control plane (e.g. stop and start its API server).
        let kubeconfig = PathBuf::from(value);
        let dir = std::env::var_os("CLUSTER_DIR")
            .map(PathBuf::from)
            .filter(|d| d.join("kubeconfig") == kubeconfig);
        return Ok(Cluster { kubeconfig, dir });
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!(
        "update-status-e2e-{}-{nanos:x}",
        std::process::id()
    ));
    let script = repo_root().join("hack/local-cluster.sh");
    let started = Instant::now();
    let output = Command::new(&script)
        .arg("up")
        .env("CLUSTER_DIR", &dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} up ({}) with CLUSTER_DIR={}:\n{}{}",
            script.display(),
            output.status,
            dir.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    eprintln!(
        "e2e: local control plane up in {:.1}s, CLUSTER_DIR={}",
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    if env_flag(KEEP_ENV) {
        eprintln!(
            "e2e: {KEEP_ENV}=1: leaving it running; stop it with CLUSTER_DIR={} {} down",
            dir.display(),
            script.display()
        );
    } else {
        spawn_reaper(&script, &dir)?;
    }
    Ok(Cluster {
        kubeconfig: dir.join("kubeconfig"),
        dir: Some(dir),
    })
}

/// Starts a detached watchdog that runs `local-cluster.sh down` once this process is gone:
/// Rust test binaries have no process-exit hook.
fn spawn_reaper(script: &Path, dir: &Path) -> Result<(), String> {
    Command::new("setsid")
        .args([
            "sh",
            "-c",
            r#"while kill -0 "$1" 2>/dev/null; do sleep 0.5; done; exec "$2" down"#,
            "update-status-e2e-reaper",
        ])
        .arg(std::process::id().to_string())
        .arg(script)
        .env("CLUSTER_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot start the cluster reaper (setsid sh): {e}"))
}

/// A client for the cluster of `kubeconfig` (its current context): the one place the e2e
/// crate's tests and binaries build clients.
pub async fn client_for(kubeconfig: &Path) -> Result<Client, Error> {
    let kc_err = |source| Error::Kubeconfig {
        path: kubeconfig.to_path_buf(),
        source,
    };
    let kc = Kubeconfig::read_from(kubeconfig).map_err(kc_err)?;
    let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(kc_err)?;
    Client::try_from(config).map_err(Error::Client)
}

/// One test's view of the shared control plane.
pub struct TestEnv {
    client: Client,
    cluster: &'static Cluster,
}

impl TestEnv {
    /// Connects to the shared control plane, starting it on first use in this process.
    pub async fn new() -> Result<Self, Error> {
        let cluster = tokio::task::spawn_blocking(shared_cluster)
            .await
            .map_err(|e| Error::ClusterStart(format!("start-up task failed: {e}")))??;
        let client = client_for(&cluster.kubeconfig).await?;
        Ok(TestEnv { client, cluster })
    }

    /// A client (admin) for this test.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The admin kubeconfig of the cluster.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.cluster.kubeconfig
    }

    /// The `CLUSTER_DIR` (logs, PKI) when the cluster was started by `hack/local-cluster.sh`
    /// (by the harness itself, or by `hack/e2e.sh`).
    pub fn cluster_dir(&self) -> Option<&Path> {
        self.cluster.dir.as_deref()
    }

    /// Runs `hack/local-cluster.sh <command>` on this cluster (e.g. `stop-apiserver`); `None`
    /// when the cluster was not started by that script (a cluster given by `KUBECONFIG`).
    pub async fn local_cluster(&self, command: &str) -> Option<Result<(), Error>> {
        self.local_cluster_with(command, &[]).await
    }

    /// As [`TestEnv::local_cluster`], with extra environment variables for the script (e.g.
    /// `APISERVER_EXTRA_ARGS` for `start-apiserver`).
    pub async fn local_cluster_with(
        &self,
        command: &str,
        vars: &[(&str, &str)],
    ) -> Option<Result<(), Error>> {
        let dir = self.cluster_dir()?.to_path_buf();
        let command = command.to_string();
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let run = tokio::task::spawn_blocking(move || run_local_cluster(&dir, &command, &vars));
        Some(match run.await {
            Ok(r) => r,
            Err(e) => Err(Error::LocalCluster(format!("task failed: {e}"))),
        })
    }

    /// Runs the real kubectl against the cluster (`--kubeconfig` set), off the runtime's
    /// threads, and returns its output whatever the exit status.
    pub async fn kubectl<I, S>(&self, args: I) -> Result<Output, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(&self.cluster.kubeconfig)
            .args(args)
            .stdin(Stdio::null());
        tokio::task::spawn_blocking(move || cmd.output())
            .await
            .map_err(|e| Error::Spawn {
                program: "kubectl".into(),
                source: std::io::Error::other(e),
            })?
            .map_err(|source| Error::Spawn {
                program: "kubectl".into(),
                source,
            })
    }

    /// Runs kubectl and returns its standard output; a failed exit is an error carrying
    /// its standard error.
    pub async fn kubectl_ok<I, S>(&self, args: I) -> Result<String, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<String> = args
            .into_iter()
            .map(|a| a.as_ref().to_string_lossy().into_owned())
            .collect();
        let out = self.kubectl(&args).await?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(Error::Kubectl {
                args: args.join(" "),
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// Binds ServiceAccount `service_account` of `namespace` (which must exist) to the shipped
    /// `update-status-metrics-reader` ClusterRole in `namespace`, as a scraper is bound in the
    /// controller's namespace. Applies `config/prometheus/metrics-reader.yaml` first (its
    /// RoleBinding for prometheus-k8s goes into `openshift-update-status`, created if the shared
    /// test cluster does not have it yet).
    pub async fn bind_metrics_reader(
        &self,
        namespace: &str,
        service_account: &str,
    ) -> Result<(), Error> {
        if self
            .kubectl(["get", "namespace", "openshift-update-status"])
            .await
            .map_or(true, |o| !o.status.success())
        {
            // Another test may create it meanwhile: the apply below says if it is missing.
            let _ = self
                .kubectl(["create", "namespace", "openshift-update-status"])
                .await;
        }
        let shipped = repo_root().join("config/prometheus/metrics-reader.yaml");
        self.kubectl_ok(["apply", "-f", &shipped.display().to_string()])
            .await?;
        self.kubectl_ok([
            "create",
            "rolebinding",
            "-n",
            namespace,
            "update-status-metrics-reader",
            "--clusterrole=update-status-metrics-reader",
            &format!("--serviceaccount={namespace}:{service_account}"),
        ])
        .await?;
        Ok(())
    }

    /// Creates a namespace named `<prefix>-<random>`; it is deleted when the returned
    /// guard is dropped (or by [`TestNamespace::delete`]).
    pub async fn namespace(&self, prefix: &str) -> Result<TestNamespace, Error> {
        let name = namespace_name(prefix);
        let api: Api<Namespace> = Api::all(self.client.clone());
        let body = json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {NAMESPACE_LABEL: "true"}},
        });
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER),
            &Patch::Apply(&body),
        )
        .await
        .map_err(|source| Error::Api {
            action: format!("creating namespace {name}"),
            source,
        })?;
        Ok(TestNamespace {
            name,
            client: self.client.clone(),
            kubeconfig: self.cluster.kubeconfig.clone(),
            deleted: false,
        })
    }

    /// Loads a snapshot folder (see [`snapshot::load_dir`]).
    pub async fn load_snapshot(&self, dir: &Path) -> Result<usize, snapshot::Error> {
        snapshot::load_dir(&self.client, dir).await
    }

    /// Removes the objects of any earlier snapshot, then loads this one, so the cluster
    /// holds exactly this snapshot. Hold [`exclusive_cluster_state`] around it and the
    /// assertions that depend on it.
    pub async fn replace_snapshot(&self, dir: &Path) -> Result<usize, snapshot::Error> {
        snapshot::clear(&self.client).await?;
        snapshot::load_dir(&self.client, dir).await
    }

    /// Runs the built kubectl plugin (`kubectl update-status`, `UPDATE_STATUS_CLI_BIN` overrides
    /// the binary) against the cluster, as a user would.
    pub fn plugin(&self, args: &[&str]) -> Result<Output, Error> {
        let bin = controller::workspace_bin("kubectl-update_status", "UPDATE_STATUS_CLI_BIN");
        Command::new(&bin)
            .args(args)
            .env("KUBECONFIG", &self.cluster.kubeconfig)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| Error::Spawn {
                program: bin.display().to_string(),
                source,
            })
    }

    /// A ClusterOperator recovers: its `Degraded` condition becomes `False` (`AsExpected`), the
    /// other conditions stay as they are.
    pub async fn clear_operator_degraded(&self, operator: &str) -> Result<(), kube::Error> {
        let cos: Api<update_status_api::input::ClusterOperator> = Api::all(self.client());
        let co = cos.get(operator).await?;
        let mut conditions =
            serde_json::to_value(&co.status.conditions).map_err(kube::Error::SerdeError)?;
        for c in conditions.as_array_mut().into_iter().flatten() {
            if c["type"] == "Degraded" {
                c["status"] = json!("False");
                c["reason"] = json!("AsExpected");
            }
        }
        cos.patch_status(
            operator,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": conditions}})),
        )
        .await?;
        Ok(())
    }
}

/// How long the steady-state checks watch for writes: `UPDATE_STATUS_E2E_QUIET_SECONDS`, else
/// `default_seconds`.
pub fn quiet_period(default_seconds: u64) -> Duration {
    Duration::from_secs(
        std::env::var("UPDATE_STATUS_E2E_QUIET_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default_seconds),
    )
}

/// Serialises the tests of one process that change cluster-scoped state (snapshots:
/// ClusterVersion, ClusterOperators, Nodes, ...). Tests in one binary run in parallel.
pub async fn exclusive_cluster_state() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

/// A namespace created for one test.
pub struct TestNamespace {
    name: String,
    client: Client,
    kubeconfig: PathBuf,
    deleted: bool,
}

impl TestNamespace {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Deletes it now (the namespace controller then removes its content).
    pub async fn delete(mut self) -> Result<(), Error> {
        self.deleted = true;
        let api: Api<Namespace> = Api::all(self.client.clone());
        match api.delete(&self.name, &DeleteParams::background()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
            Err(source) => Err(Error::Api {
                action: format!("deleting namespace {}", self.name),
                source,
            }),
        }
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        if self.deleted || env_flag(KEEP_ENV) {
            return;
        }
        // Drop cannot await, and the test's runtime may already be shutting down: ask
        // kubectl, without waiting for the namespace controller.
        let result = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args([
                "delete",
                "namespace",
                &self.name,
                "--wait=false",
                "--ignore-not-found",
            ])
            .stdin(Stdio::null())
            .output();
        match result {
            Ok(out) if out.status.success() => {}
            Ok(out) => eprintln!(
                "e2e: deleting namespace {} failed: {}",
                self.name,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => eprintln!(
                "e2e: deleting namespace {}: cannot run kubectl: {e}",
                self.name
            ),
        }
    }
}

/// `<prefix>-<6 random chars>`, a valid DNS label.
fn namespace_name(prefix: &str) -> String {
    let mut clean: String = prefix
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    clean.truncate(55);
    let clean = clean.trim_matches('-');
    let clean = if clean.is_empty() { "e2e" } else { clean };
    format!("{clean}-{}", random_suffix())
}

fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(d.as_nanos());
    }
    let mut n = hasher.finish();
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..6)
        .map(|_| {
            let c = alphabet[(n % 36) as usize];
            n /= 36;
            c as char
        })
        .collect()
}

/// Polls `check` until it returns `Some`, at short, growing intervals (20 ms up to 250 ms),
/// and returns the value; fails with [`Error::Timeout`] naming `what` after `timeout`.
pub async fn poll_until<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    let mut interval = Duration::from_millis(20);
    loop {
        if let Some(v) = check().await {
            return Ok(v);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::Timeout {
                what: what.to_string(),
                timeout,
            });
        }
        tokio::time::sleep(interval.min(deadline - now)).await;
        interval = (interval * 2).min(Duration::from_millis(250));
    }
}

/// Polls the predicate until it holds (see [`poll_until`]).
pub async fn wait_for<F, Fut>(timeout: Duration, what: &str, mut check: F) -> Result<(), Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    poll_until(timeout, what, || {
        let fut = check();
        async move { fut.await.then_some(()) }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names_are_dns_labels() {
        let a = namespace_name("GC Test_1");
        assert!(a.starts_with("gc-test-1-"), "{a}");
        assert_eq!(a.len(), "gc-test-1-".len() + 6);
        assert_ne!(namespace_name("x"), namespace_name("x"));
        let long = namespace_name(&"a".repeat(100));
        assert!(long.len() <= 63, "{long}");
        assert!(namespace_name("--").starts_with("e2e-"));
    }

    #[tokio::test]
    async fn wait_for_polls_and_times_out() {
        let mut n = 0;
        wait_for(Duration::from_secs(5), "n to reach 3", || {
            n += 1;
            let done = n >= 3;
            async move { done }
        })
        .await
        .expect("reaches 3");
        let err = wait_for(Duration::from_millis(100), "never", || async { false })
            .await
            .expect_err("times out");
        assert!(err.to_string().contains("waiting for never"), "{err}");
    }
}
