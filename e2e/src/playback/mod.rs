//! Playing a simulated update ([`update_status_simulator`]) against a real API server: the
//! simulated objects written with server-side apply (status through the status subresource),
//! only what each step changed, read back, and cleared. The pure state machines live in the
//! simulator crate; this is the part that needs a client.
//!
//! - [`standalone`]: a [`Simulation`](update_status_simulator::Simulation) of an OpenShift
//!   cluster ([`Simulator`], [`read_inputs`], [`clear`]);
//! - [`hosted`]: a [`HostedSimulation`](update_status_simulator::hosted::HostedSimulation) on a
//!   management cluster ([`HostedSimulator`], [`read_hosted_inputs`], [`clear_hosted`]).

pub mod hosted;
pub mod standalone;

use std::fmt;

use kube::Resource;
use serde::de::DeserializeOwned;
use update_status_api::input::{
    ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool, Node,
};
use update_status_simulator::SimError;

pub use hosted::{HostedSimulator, clear_hosted, read_hosted_inputs};
pub use standalone::{DEFAULT_CONCURRENCY, Simulator, clear, read_inputs};

/// Field manager of the simulator's writes.
pub const FIELD_MANAGER: &str = "update-status-simulator";

/// What can go wrong playing a simulation against an API server.
#[derive(Debug, thiserror::Error)]
pub enum PlaybackError {
    /// The simulation itself failed (see [`SimError`]).
    #[error(transparent)]
    Sim(#[from] SimError),
    /// An API call failed.
    #[error("{action}: {source}")]
    Api {
        /// What was being done.
        action: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
}

/// The five cluster-scoped kinds the simulator lists, applies and deletes.
trait ClusterObject:
    Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
    + Clone
    + fmt::Debug
    + DeserializeOwned
{
}

impl ClusterObject for ClusterVersion {}
impl ClusterObject for ClusterOperator {}
impl ClusterObject for MachineConfigPool {}
impl ClusterObject for MachineConfig {}
impl ClusterObject for Node {}
