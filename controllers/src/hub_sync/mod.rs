//! Hub sync (optional: `--hub-kubeconfig` + `--cluster-name`): reports this cluster to a fleet
//! hub the way ACM addon agents do. The ControlPlaneUpdateStatus, the WorkerPoolUpdateStatus
//! objects and the health UpdateInsights (progress insights too with `--hub-include-progress`)
//! are copied into the namespace named after the cluster on the hub, and copies whose local
//! object is gone are deleted.
//!
//! - A copy is computed purely ([`desired_copies`]): same kind and `.status`; same name, except
//!   the ControlPlaneUpdateStatus, named after the cluster (`cluster` → `<cluster-name>`,
//!   design.md); our labels (`update.openshift.io/*`, `app.kubernetes.io/managed-by`) plus
//!   `open-cluster-management.io/cluster-name=<cluster-name>`. On an ACM hub the copies are
//!   owned by the namespace's `ManagedClusterAddOn` of our add-on ([`addon`]), so disabling the
//!   add-on for the cluster garbage-collects them; elsewhere they have no owner (the local
//!   owners do not exist on the hub).
//! - Writes go through hub [`Writer`](crate::runtime::writer::Writer)s (reconciler [`NAME`], field manager
//!   `update-status-controller/hub-sync`): server-side apply of what differs from reflectors of
//!   the hub namespace label-selected to this cluster's copies ([`hub_selector`]), so a steady
//!   state writes nothing, and only copies labelled for this cluster and by `hub-sync` are ever
//!   deleted.
//! - A pass runs when our objects change (the local watches wake it) or the hub's copies do,
//!   after [`DEBOUNCE`], and at least every [`RESYNC`].
//! - The hub failing (unreachable, slow, credentials rejected, forbidden, namespace or CRDs
//!   missing) never touches the local reconcilers: a warning when an outage starts (and when its
//!   reason changes), `update_status_hub_sync_up 0` and
//!   `update_status_hub_sync_errors_total{reason}`, then retries with exponential back-off from
//!   [`MIN_BACKOFF`] to [`MAX_BACKOFF`] (±10 % jitter: many clusters report to one hub). While
//!   failing, every attempt first probes the hub (one list call), since a pass with nothing to
//!   write proves nothing. The first attempt that succeeds converges the copies.
//! - Credentials are followed ([`credentials`]): when the kubeconfig's files change on disk (OCM's
//!   registration agent renews the add-on's certificate in its Secret, the kubelet swaps the
//!   mounted files) the session switches to them with a new client before the next pass: no
//!   failed call, no restart. A `401` makes the next attempt read the files again.
//! - The hub client speaks HTTP/2 ([`crate::runtime::client::build_http2`]): a session's three watches
//!   and its calls share one connection, through the kubeconfig's `proxy-url` or
//!   `HTTPS_PROXY`/`NO_PROXY` when set (one `CONNECT` tunnel then).
//! - Its writes go through the leader-election Lease gate, as the local writers' do: none is
//!   sent once the Lease is lost ([`SessionSettings::gate`]).
//! - A heartbeat ([`heartbeat`]): the hub copy of the ControlPlaneUpdateStatus carries the time of
//!   the last successful pass, refreshed once older than the heartbeat interval.
//! - Standalone on an ACM hub, the agent's health ([`agent_health`]): the `Degraded` condition of
//!   its ManagedClusterAddOn, written when it changes.
//!
//! It runs only in the replica that holds the leader-election Lease (`main.rs` starts it with
//! the reconcilers).
//!
//! In hosted mode (`--mode=hosted`), [`hosted`] runs one such session per HostedCluster, into
//! the hub namespace of its managed cluster, each copying only that hosted cluster's objects
//! ([`LocalObjects::scoped`]).
//!
//! Files: `copies` (what is copied, renamed and labelled), `addon` (the copies' owner on an ACM
//! hub), `credentials` (where the hub credentials come from, and their renewals), `errors`
//! (failure classes, their metric reasons and hints), `heartbeat` (the last-reported
//! annotation), `agent_health` (the `Degraded` condition), `session` (the hub client, its
//! watches and writers, the sync loop), `hosted` (the sessions of hosted mode, one per
//! HostedCluster).

pub mod addon;
pub mod agent_health;
mod copies;
pub mod credentials;
mod errors;
pub mod heartbeat;
pub mod hosted;
mod session;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::reflector::Store;
use update_status_api::crd::{ControlPlaneUpdateStatus, WorkerPoolUpdateStatus};

use crate::cache::insights::CachedInsight;

pub use copies::{HubCopies, copy_labels, desired_copies, hub_selector, hub_selector_for};
pub use credentials::Credentials;
pub use errors::HubError;
pub use session::{HubSync, backoff};

/// The local objects a hub session copies: our three kinds, every one of them (standalone
/// mode) or those of one hosted cluster (hosted mode: in the HostedCluster's namespace and
/// labelled `update.openshift.io/cluster=<its name>`).
#[derive(Clone)]
pub struct LocalObjects {
    /// Our ControlPlaneUpdateStatus objects.
    pub control_plane_statuses: Store<ControlPlaneUpdateStatus>,
    /// Our WorkerPoolUpdateStatus objects.
    pub worker_pool_statuses: Store<WorkerPoolUpdateStatus>,
    /// Our UpdateInsights (progress insights whole only when they are copied).
    pub insights: Store<CachedInsight>,
    /// `(namespace, name)` of the HostedCluster whose objects are copied; `None`: all.
    hosted_cluster: Option<(String, String)>,
}

impl LocalObjects {
    /// Every object of the three stores.
    pub fn all(
        control_plane_statuses: Store<ControlPlaneUpdateStatus>,
        worker_pool_statuses: Store<WorkerPoolUpdateStatus>,
        insights: Store<CachedInsight>,
    ) -> Self {
        LocalObjects {
            control_plane_statuses,
            worker_pool_statuses,
            insights,
            hosted_cluster: None,
        }
    }

    /// Only the objects of the HostedCluster `namespace/name`.
    pub fn scoped(&self, namespace: &str, name: &str) -> Self {
        LocalObjects {
            hosted_cluster: Some((namespace.to_string(), name.to_string())),
            ..self.clone()
        }
    }

    /// The objects of `store` in scope.
    fn select<K>(&self, store: &Store<K>) -> Vec<Arc<K>>
    where
        K: kube::runtime::reflector::Lookup<DynamicType = ()>
            + crate::runtime::existing::Cached
            + Clone
            + 'static,
    {
        match &self.hosted_cluster {
            None => store.state(),
            Some((ns, name)) => crate::cache::hosted::labelled(store, ns, name),
        }
    }
}

impl From<&crate::cache::watch::Caches> for LocalObjects {
    fn from(c: &crate::cache::watch::Caches) -> Self {
        LocalObjects::all(
            c.control_plane_statuses.clone(),
            c.worker_pool_statuses.clone(),
            c.insights.clone(),
        )
    }
}

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
