//! Hosted control planes (HyperShift, `--mode=hosted`): input adapters from a HostedCluster,
//! its NodePools and their cluster-api Machines to the standalone rules, and the composition of
//! everything update-status writes for one hosted cluster (see `docs/hosted.md`).
//!
//! No parallel copy of the assessment: the control plane is the standalone
//! [`crate::control_plane`] assessment run on a ClusterVersion **adapted** from the
//! HostedCluster ([`control_plane::adapted_cluster_version`]); InPlace NodePools are the
//! standalone node rules run on a MachineConfigPool and MachineConfigs adapted from the
//! MachineSet's config-version annotations ([`node_pools`]); Replace NodePools count their
//! Machines into the standalone pool counts and assessment. Only the HyperShift-specific
//! health rules (hosted.md §8 table) are new ([`health`]).
//!
//! What is read: [`HostedInputs`] (`inputs.rs`); the composition: [`desired_hosted`]
//! (`desired.rs`).

pub mod caps;
pub mod control_plane;
mod desired;
pub mod facts;
pub mod health;
mod inputs;
pub mod node_pools;
mod objects;
pub mod unreadable;

pub use desired::{DesiredHosted, desired_hosted};
pub use inputs::{GuestInputs, HostedInputs};
pub use objects::{hosted_cluster_ref, node_pool_ref};

#[cfg(test)]
mod tests;
