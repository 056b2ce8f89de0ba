//! [`TestEnv`]: one test's view of the shared control plane (a client, kubectl, the plugin, its
//! namespaces, snapshots loaded into it), and the lock of the tests that change its
//! cluster-scoped state.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use update_status_tools::snapshot;

use crate::cluster::{Cluster, client_for, run_local_cluster, shared_cluster};
use crate::error::Error;
use crate::namespace::TestNamespace;
use crate::paths::{repo_root, workspace_bin};

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

    /// `kubectl get updateinsights -n <namespace> -l <selector> -o <output>`: the standard output,
    /// or an error (as [`TestEnv::kubectl_ok`]) when kubectl fails.
    pub async fn get_insights(
        &self,
        namespace: &str,
        selector: &str,
        output: &str,
    ) -> Result<String, Error> {
        self.kubectl_ok([
            "get",
            "updateinsights",
            "-n",
            namespace,
            "-l",
            selector,
            "-o",
            output,
        ])
        .await
    }

    /// The API server's own `/metrics` (Prometheus text), read with the admin client.
    pub async fn apiserver_metrics(
        &self,
    ) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
        let request = http::Request::get("/metrics").body(Vec::new())?;
        Ok(self.client.request_text(request).await?)
    }

    /// The `holderIdentity` of the controller's Lease (`update-status-controller`) in
    /// `namespace`; `None` when kubectl fails or no one holds it.
    pub async fn lease_holder(&self, namespace: &str) -> Option<String> {
        self.kubectl_ok([
            "get",
            "lease",
            "update-status-controller",
            "-n",
            namespace,
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ])
        .await
        .ok()
        .filter(|h| !h.is_empty())
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
        TestNamespace::create(&self.client, &self.cluster.kubeconfig, prefix).await
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
        let bin = workspace_bin("kubectl-update_status", "UPDATE_STATUS_CLI_BIN");
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

/// Serialises the tests of one process that change cluster-scoped state (snapshots:
/// ClusterVersion, ClusterOperators, Nodes, ...). Tests in one binary run in parallel.
pub async fn exclusive_cluster_state() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}
