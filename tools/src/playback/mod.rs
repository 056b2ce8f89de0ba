//! Playing a simulated update ([`update_status_simulator`]) against a real API server: the
//! simulated objects written with server-side apply (status through the status subresource),
//! only what each step changed, read back, and cleared. The pure state machines live in the
//! simulator crate; this is the part that needs a client.
//!
//! - [`standalone`]: a [`Simulation`](update_status_simulator::Simulation) of an OpenShift
//!   cluster ([`Simulator`], [`read_inputs`], [`clear`]);
//! - [`hosted`]: a [`HostedSimulation`](update_status_simulator::hosted::HostedSimulation) on a
//!   management cluster ([`HostedSimulator`], [`read_hosted_inputs`], [`clear_hosted`]).

mod error;
pub mod hosted;
pub mod standalone;

pub use error::{FIELD_MANAGER, PlaybackError};
pub use hosted::{HostedSimulator, clear_hosted, read_hosted_inputs};
pub use standalone::{DEFAULT_CONCURRENCY, Simulator, clear, read_inputs};
