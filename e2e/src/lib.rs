//! End-to-end test harness for update-status.
//!
//! Tests run against a real control plane: etcd, kube-apiserver and kube-controller-manager
//! (garbage collector, namespace and service-account controllers only) on loopback, as
//! started by `hack/local-cluster.sh`. See `e2e/README.md`.
//!
//! - With `UPDATE_STATUS_E2E_REUSE=1`, the cluster named by `KUBECONFIG` is used (this is
//!   what `make e2e` does: it starts one cluster for all test binaries).
//! - Otherwise the first [`TestEnv::new`] of a test process runs `hack/local-cluster.sh up`
//!   with its own `CLUSTER_DIR` under the temp dir; every test of the binary shares it, and
//!   a watchdog runs `hack/local-cluster.sh down` once the test process has exited
//!   (`UPDATE_STATUS_E2E_KEEP=1` keeps it, and the test namespaces, for debugging).
//!
//! A [`kube::Client`] is bound to the tokio runtime it was created on, and every
//! `#[tokio::test]` has its own runtime, so each [`TestEnv`] builds its own client; only
//! the cluster is shared.
//!
//! The harness itself, re-exported here (`update_status_e2e::TestEnv`): [`TestEnv`] (the shared
//! control plane as one test sees it), [`TestNamespace`], [`poll_until`] and [`wait_for`],
//! [`client_for`], [`repo_root`] and the fixtures, the settings variables, [`Error`].

pub mod acm_hosted;
pub mod acm_recipes;
pub mod addon_agent;
pub mod browser;
pub mod cdp;
pub mod certs;
mod cluster;
pub mod console_host;
pub mod controller;
pub mod dashboard_expect;
pub mod dashboards;
mod error;
pub mod hosted_objects;
pub mod hub_copies;
pub mod hub_limits;
pub mod hub_restore;
pub mod kubeconfig;
pub mod monitoring;
pub mod must_gather;
mod namespace;
pub mod ocm;
pub mod olm;
pub mod outputs;
mod paths;
pub mod prometheus;
pub mod proxy;
pub mod scenario;
mod settings;
mod test_env;
mod wait;
pub mod web;

pub use cluster::{client_for, run_local_cluster};
pub use error::Error;
pub use namespace::{FIELD_MANAGER, NAMESPACE_LABEL, TestNamespace};
pub use paths::{fixtures_dir, oc_status_case, repo_root};
pub use settings::{FIXTURES_ENV, KEEP_ENV, REUSE_ENV, quiet_period};
pub use test_env::{TestEnv, exclusive_cluster_state};
/// Writing a simulation to an API server: the tools crate's, re-exported for the tests.
pub use update_status_tools::playback;
/// Loading a snapshot folder into an API server: the tools crate's, re-exported for the tests.
pub use update_status_tools::snapshot;
pub use wait::{CONDITIONS_UNSET, kubectl_wait_retrying, poll_until, wait_for};
