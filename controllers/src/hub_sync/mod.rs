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
//! - Standalone, the agent's health ([`agent_health`]): the condition `AgentDegraded` of its
//!   ControlPlaneUpdateStatus copy, part of that copy's change-only apply.
//!
//! It runs only in the replica that holds the leader-election Lease (`app/standalone.rs` starts
//! it with the reconcilers).
//!
//! In hosted mode (`--mode=hosted`), [`hosted`] runs one such session per HostedCluster, into
//! the hub namespace of its managed cluster, each copying only that hosted cluster's objects
//! ([`LocalObjects::scoped`]).
//!
//! Files: `copies` (what is copied, renamed and labelled), `addon` (the copies' owner on an ACM
//! hub), `credentials` (where the hub credentials come from, and their renewals), `errors`
//! (failure classes, their metric reasons and hints), `heartbeat` (the last-reported
//! annotation), `agent_health` (the `AgentDegraded` condition), `config` (the flags' values, the
//! names and timings), `local` (the local objects copied), `watches` (the reflectors of the
//! hub's copies and what they signal), `session` (the hub client with its watches and writers,
//! one pass), `sync_loop` (the hub sync task: passes, back-off, new credentials, heartbeat),
//! `hosted` (the sessions of hosted mode, one per HostedCluster), `hosted_names` (which
//! HostedCluster reports under which managed-cluster name, and who holds a name).

pub mod addon;
pub mod agent_health;
mod config;
mod copies;
pub mod credentials;
mod errors;
pub mod heartbeat;
pub mod hosted;
pub mod hosted_names;
mod local;
mod session;
mod sync_loop;
mod watches;

pub use config::{
    CONNECT_TIMEOUT, DEBOUNCE, HubConfig, MAX_BACKOFF, MIN_BACKOFF, NAME, PASS_TIMEOUT, RESYNC,
    SessionSettings, validate_cluster_name,
};
pub use copies::{HubCopies, copy_labels, desired_copies, hub_selector, hub_selector_for};
pub use credentials::Credentials;
pub use errors::HubError;
pub use local::LocalObjects;
pub use sync_loop::{HubSync, backoff};
