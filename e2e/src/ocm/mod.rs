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
//! OCM kinds are handled as [`DynamicObject`](kube::api::DynamicObject)s (see [`kinds`]); there
//! is no OCM Rust crate.
//!
//! One file per concern, all re-exported here (`update_status_e2e::ocm::OcmEnv`):
//! [`env`](mod@env) (the environment), [`scenario`], [`names`], [`kinds`], [`conditions`],
//! [`clusters`] (managed clusters, placements), [`addons`], [`kubelet`] (the kubelet
//! stand-ins), [`rotation`], [`error`].

pub mod addons;
pub mod clusters;
pub mod conditions;
pub mod env;
pub mod error;
pub mod kinds;
pub mod kubelet;
pub mod names;
pub mod rotation;
pub mod scenario;

pub use addons::{
    addons_api, disable_addon, enable_addon, wait_addon_condition, wait_addon_namespace,
};
pub use clusters::{
    OPENSHIFT_NAMESPACES, claims_of, cluster_claims, create_openshift_namespaces,
    placement_decisions, wait_cluster_joined,
};
pub use conditions::{condition, condition_status, wait_gone, wait_secret};
pub use env::{ENV_DIR_ENV, OcmEnv, OcmOptions, kubectl};
pub use error::OcmError;
pub use kubelet::{SecretVolume, set_deployment_available};
pub use names::{
    ADDON_NAME_LABEL, CLUSTER_NAME_LABEL, FIELD_MANAGER, HUB_KUBECONFIG_MOUNT, addon_groups,
    hub_kubeconfig_secret, template_addon_user,
};
pub use rotation::{Rotation, force_rotation};
pub use scenario::{ScenarioError, run_scenario};
