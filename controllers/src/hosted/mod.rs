//! Hosted mode (`--mode=hosted`, docs/hosted.md): on a HyperShift management cluster, one
//! reconciler ([`reconciler`]) reports on every HostedCluster from its own watches (HostedClusters,
//! NodePools, cluster-api Machines, MachineSets and MachineDeployments), and, with
//! `--hosted-kubeconfig-access`, from each hosted cluster's own ClusterOperators and Nodes
//! ([`guest`]).
//!
//! May import: [`crate::cache`], [`crate::runtime`], [`crate::metrics`].
pub mod guest;
pub mod reconciler;
