//! What the hub sync is configured with: the flags' values ([`HubConfig`], checked by
//! [`validate_cluster_name`]), what every session shares ([`SessionSettings`]), and its fixed
//! names and timings.

use std::path::PathBuf;
use std::time::Duration;

use super::errors::HubError;
use super::heartbeat;

/// Reconciler name of the hub copies (label `update.openshift.io/reconciler`, field manager
/// `update-status-controller/hub-sync`).
pub const NAME: &str = "hub-sync";
/// Collects a burst of local changes (a rolling update) into one pass.
pub const DEBOUNCE: Duration = Duration::from_secs(1);
/// Longest time between passes when nothing wakes the sync (restores copies changed or
/// deleted on the hub behind our back when no watch event said so).
pub const RESYNC: Duration = crate::runtime::runner::MAX_REQUEUE;
/// First wait after a failed attempt.
pub const MIN_BACKOFF: Duration = Duration::from_secs(1);
/// Longest wait between attempts while the hub fails: also the longest time the copies lag
/// behind once the hub is back.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Bound on one pass (a hub that accepts connections but never answers).
pub const PASS_TIMEOUT: Duration = Duration::from_secs(120);
/// Connect timeout of the hub client.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What every hub session of the process shares beyond its credentials.
#[derive(Clone, Debug)]
pub struct SessionSettings {
    /// Hub writes go through it: none is sent once the leader-election Lease is lost (open
    /// without leader election).
    pub gate: crate::runtime::leader::LeaseGate,
    /// `--hub-heartbeat-interval`: the hub copy of the control plane is stamped once its stamp is
    /// older than this.
    pub heartbeat: Duration,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            gate: crate::runtime::leader::LeaseGate::open(),
            heartbeat: heartbeat::DEFAULT_INTERVAL,
        }
    }
}

/// What the hub sync needs to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubConfig {
    /// Kubeconfig of the hub (`--hub-kubeconfig`), read at start and followed: a change of its
    /// files (renewed certificate) switches the session to them.
    pub kubeconfig: PathBuf,
    /// The managed cluster's name on the hub (`--cluster-name`): the namespace of the copies,
    /// the name of the ControlPlaneUpdateStatus copy and the value of the
    /// `open-cluster-management.io/cluster-name` label.
    pub cluster_name: String,
    /// Copy progress insights too (`--hub-include-progress`).
    pub include_progress: bool,
}

/// Checks `--cluster-name`: a DNS-1123 label (it names a namespace and is a label value).
pub fn validate_cluster_name(name: &str) -> Result<(), HubError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.len() > 63 {
        "it is longer than 63 characters"
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        "it has characters other than lower-case letters, digits and '-'"
    } else if name.starts_with('-') || name.ends_with('-') {
        "it starts or ends with '-'"
    } else {
        return Ok(());
    };
    Err(HubError::InvalidClusterName {
        name: name.to_string(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_cluster_names_are_dns_labels() {
        for ok in ["a", "prod-east-1", "0abc", &"a".repeat(63)] {
            assert!(validate_cluster_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Prod", "prod_east", "-a", "a-", "a.b", &"a".repeat(64)] {
            let e = validate_cluster_name(bad).expect_err(bad);
            assert!(e.to_string().contains("DNS-1123 label"), "{e}");
            assert_eq!(e.reason(), "config");
        }
    }
}
