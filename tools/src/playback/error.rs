//! What every write of the playback shares: its field manager, and the error it fails with.

use update_status_simulator::SimError;

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
