//! What the assessment of one hosted cluster reads, borrowed: the management cluster's objects
//! ([`HostedInputs`]) and, when read, the hosted cluster's own ([`GuestInputs`], with how many
//! of each it reports: [`Reported`]).

use update_status_api::hosted::{HostedCluster, Machine, MachineDeployment, MachineSet, NodePool};
use update_status_api::input::{ClusterOperator, Node};

/// Everything the assessment of one hosted cluster reads, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct HostedInputs<'a> {
    /// The HostedCluster.
    pub hosted_cluster: &'a HostedCluster,
    /// Its NodePools (`spec.clusterName` = the HostedCluster's name, same namespace; others are
    /// ignored).
    pub node_pools: &'a [NodePool],
    /// The Machines in `control_plane_namespace(ns, name)`.
    pub machines: &'a [Machine],
    /// The MachineSets there (InPlace pools).
    pub machine_sets: &'a [MachineSet],
    /// The MachineDeployments there (Replace pools).
    pub machine_deployments: &'a [MachineDeployment],
    /// From inside the hosted cluster (`--hosted-kubeconfig-access`), when read.
    pub guest: Option<GuestInputs<'a>>,
    /// Why the hosted cluster could not be read (already redacted), when access is on and it
    /// failed.
    pub guest_unreachable: Option<&'a str>,
}

/// Objects read inside the hosted cluster.
#[derive(Clone, Copy, Debug, Default)]
pub struct GuestInputs<'a> {
    /// Its ClusterOperators.
    pub cluster_operators: &'a [ClusterOperator],
    /// Its Nodes.
    pub nodes: &'a [Node],
    /// How many of each the hosted cluster reports when a cache kept fewer (its cap):
    /// [`super::caps::capped`] reports it over the cap.
    pub reported: Reported,
}

/// How many objects of each kind the hosted cluster reports, when more than it was given
/// (a cache that stopped keeping them at its cap); 0: as many as given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reported {
    /// ClusterOperators.
    pub cluster_operators: usize,
    /// Nodes.
    pub nodes: usize,
}
