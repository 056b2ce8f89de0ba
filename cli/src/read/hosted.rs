//! `--hosted-cluster <name>`: one HostedCluster of a management cluster.
//!
//! Offline (`--from-dir`): a folder of HostedCluster/NodePool/Machine/MachineSet/
//! MachineDeployment objects or a management-cluster must-gather
//! ([`HostedSnapshot`]), assessed with the controller's pure logic
//! ([`desired_hosted`]). Online: the objects the controller wrote in the HostedCluster's
//! namespace (`-n`): the ControlPlaneUpdateStatus named after it, and the
//! WorkerPoolUpdateStatuses and UpdateInsights labelled `update.openshift.io/cluster=<name>`.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use kube::api::{Api, ListParams};
use kube::{Client, Resource};
use update_status_api::crd::{ControlPlaneUpdateStatus, WorkerPoolUpdateStatus, labels};
use update_status_api::hosted::control_plane_namespace;
use update_status_assess::ClusterAssessment;
use update_status_assess::compose::Existing;
use update_status_assess::hosted::{GuestInputs, HostedInputs, desired_hosted};
use update_status_snapshot::SnapshotError;
use update_status_snapshot::hosted::HostedSnapshot;

use crate::read::online::{self, OnlineError};
use crate::read::selective;
use crate::show::escape::{self, Newlines};
use crate::show::view::View;

/// What can go wrong in hosted mode.
#[derive(Debug, thiserror::Error)]
pub enum HostedError {
    /// The snapshot could not be read.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// Reading the API failed.
    #[error(transparent)]
    Online(Box<OnlineError>),
    /// No HostedCluster of that name.
    #[error("{dir}: no HostedCluster {name}{namespace} (found: {found})")]
    NotFound {
        /// The snapshot folder.
        dir: PathBuf,
        /// The name asked for.
        name: String,
        /// ` in namespace <ns>` when one was given.
        namespace: String,
        /// The HostedClusters found (`<ns>/<name>`), or `none`.
        found: String,
    },
    /// No instant to assess at.
    #[error(
        "{dir}: cannot tell the instant to evaluate the snapshot at (no `now` file and no HostedCluster or NodePool condition with a lastTransitionTime); pass --now <RFC3339>"
    )]
    NoNow {
        /// The snapshot folder.
        dir: PathBuf,
    },
}

impl From<OnlineError> for HostedError {
    fn from(e: OnlineError) -> Self {
        HostedError::Online(Box::new(e))
    }
}

/// Reads the snapshot in `dir` and assesses the HostedCluster `name` (in `namespace`, when
/// given) at `now` (else the `now` file, else the latest condition transition).
pub fn load(
    dir: &Path,
    name: &str,
    namespace: Option<&str>,
    now: Option<Timestamp>,
) -> Result<(View, Timestamp), HostedError> {
    let snap = HostedSnapshot::from_dir(dir)?;
    for warning in &snap.warnings {
        let text = warning.to_string();
        eprintln!("warning: {}", escape::text(&text, Newlines::Escape));
    }
    let hc = snap
        .hosted_clusters
        .iter()
        .find(|h| h.name() == name && namespace.is_none_or(|ns| h.namespace() == ns))
        .ok_or_else(|| HostedError::NotFound {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            namespace: namespace
                .map(|ns| format!(" in namespace {ns}"))
                .unwrap_or_default(),
            found: found(&snap),
        })?;
    let now = now
        .or_else(|| snap.derived_now())
        .ok_or_else(|| HostedError::NoNow {
            dir: dir.to_path_buf(),
        })?;
    let cp_ns = control_plane_namespace(hc.namespace(), hc.name());
    let machines = in_namespace(&snap.machines, &cp_ns);
    let sets = in_namespace(&snap.machine_sets, &cp_ns);
    let deployments = in_namespace(&snap.machine_deployments, &cp_ns);
    let guest = snap.guest(name).map(|g| GuestInputs {
        cluster_operators: &g.cluster_operators,
        nodes: &g.nodes,
        reported: Default::default(),
    });
    let inputs = HostedInputs {
        hosted_cluster: hc,
        node_pools: &snap.node_pools,
        machines: &machines,
        machine_sets: &sets,
        machine_deployments: &deployments,
        guest,
        guest_unreachable: None,
    };
    let assessment =
        ClusterAssessment::from(desired_hosted(&inputs, &Existing::default(), now).cluster);
    let view = View {
        control_plane: assessment.control_plane,
        worker_pools: assessment.worker_pools,
        insights: assessment.insights,
        printed_nodes_only: false,
    };
    Ok((view, now))
}

/// The objects in namespace `ns` (or without a namespace).
fn in_namespace<K: Resource + Clone>(objs: &[K], ns: &str) -> Vec<K> {
    objs.iter()
        .filter(|o| o.meta().namespace.as_deref().is_none_or(|n| n == ns))
        .cloned()
        .collect()
}

fn found(snap: &HostedSnapshot) -> String {
    let names: Vec<String> = snap
        .hosted_clusters
        .iter()
        .map(|h| format!("{}/{}", h.namespace(), h.name()))
        .collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// Reads what the controller wrote for the HostedCluster `name` in `namespace`.
pub async fn fetch(client: &Client, namespace: &str, name: &str) -> Result<View, HostedError> {
    let ns = Some(namespace);
    let selector = format!("{}={name}", labels::CLUSTER);
    let params = ListParams::default().labels(&selector);
    let cps = Api::<ControlPlaneUpdateStatus>::namespaced(client.clone(), namespace);
    let pools = Api::<WorkerPoolUpdateStatus>::namespaced(client.clone(), namespace);
    let (cps, pools, insights) = tokio::try_join!(
        online::list(&cps, &params, ns),
        online::list(&pools, &params, ns),
        selective::all_insights(client, namespace, Some(&selector)),
    )?;
    let control_plane = cps
        .items
        .into_iter()
        .find(|c| c.metadata.name.as_deref() == Some(name))
        .and_then(|c| c.status)
        .ok_or_else(|| OnlineError::NoControlPlane {
            namespace: namespace.to_owned(),
        })?;
    let mut worker_pools: Vec<(String, _)> = pools
        .items
        .into_iter()
        .filter_map(|p| {
            let status = p.status?;
            Some((status.resource.name.clone(), status))
        })
        .collect();
    worker_pools.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(View {
        control_plane: Some(control_plane),
        worker_pools,
        insights,
        printed_nodes_only: false,
    })
}
