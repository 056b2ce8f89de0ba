//! What can go wrong simulating: [`SimError`].

use std::path::PathBuf;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The configuration cannot be simulated.
    #[error("invalid simulation: {0}")]
    Config(String),
    /// A fault specification does not parse.
    #[error("invalid fault {0:?}: expected TARGET[:STEPS] (TARGET `auto` picks one)")]
    FaultSyntax(String),
    /// A file could not be written.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A rendered object does not read back as its input type (a bug).
    #[error("{what} does not read back: {source}")]
    Json {
        /// The object.
        what: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
}
