//! [`OcmError`]: what can go wrong with the OCM environment or its helpers.

use std::path::PathBuf;
use std::time::Duration;

use kube::config::KubeconfigError;

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

/// An API error of `action` as an [`OcmError`].
pub(crate) fn api_err(action: impl Into<String>) -> impl FnOnce(kube::Error) -> OcmError {
    let action = action.into();
    move |source| OcmError::Api { action, source }
}

/// An I/O error of `what` as an [`OcmError`].
pub(crate) fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> OcmError {
    let what = what.into();
    move |source| OcmError::Io { what, source }
}

/// A harness wait's error as an [`OcmError`].
pub(crate) fn timeout_err(e: crate::error::Error) -> OcmError {
    match e {
        crate::error::Error::Timeout { what, timeout } => OcmError::Timeout { what, timeout },
        other => OcmError::Unexpected(other.to_string()),
    }
}
