//! The local control plane the tests share (started by `hack/local-cluster.sh` on first use, or
//! the one of `KUBECONFIG` with `UPDATE_STATUS_E2E_REUSE=1`), and clients for a kubeconfig.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::error::Error;
use crate::paths::repo_root;
use crate::settings::{KEEP_ENV, REUSE_ENV, env_flag};

/// A control plane the tests talk to.
#[derive(Debug)]
pub(crate) struct Cluster {
    /// Its admin kubeconfig.
    pub(crate) kubeconfig: PathBuf,
    /// `CLUSTER_DIR` when the harness started the cluster itself.
    pub(crate) dir: Option<PathBuf>,
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

/// The control plane of this process, started or found on first use.
pub(crate) fn shared_cluster() -> Result<&'static Cluster, Error> {
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
