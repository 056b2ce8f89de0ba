//! What can go wrong in the harness.

use std::path::PathBuf;
use std::time::Duration;

use kube::config::KubeconfigError;

use crate::settings::REUSE_ENV;

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
    /// A [`wait_for`](crate::wait::wait_for) condition did not hold in time.
    #[error("timed out after {timeout:?} waiting for {what}")]
    Timeout {
        /// What was waited for.
        what: String,
        /// The timeout.
        timeout: Duration,
    },
}
