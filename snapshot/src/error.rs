//! What can go wrong reading a snapshot ([`SnapshotError`]: the read stops) and what is odd in
//! one without stopping it ([`SnapshotWarning`]).

use std::path::PathBuf;

/// What can go wrong reading a snapshot. Every variant names the file, and its text holds the
/// whole cause (there is no separate `source()` chain, so that printing a chain cannot repeat it).
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The path leads out of the folder read (through a symbolic link): it is not read.
    #[error(
        "cannot read {path}: a symbolic link leads it to {target}, outside the folder read (links are followed only within it)"
    )]
    OutsideFolder {
        /// The file or folder.
        path: PathBuf,
        /// Where it leads.
        target: PathBuf,
    },
    /// A file that holds one short value (the `now` file) is far longer.
    #[error("cannot read {path}: it is {len} bytes long, more than the {limit} a timestamp takes")]
    TooLong {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// The most read.
        limit: u64,
    },
    /// The file is a symbolic link to nothing.
    #[error("cannot read {path}: it is a dangling symbolic link (to {target})")]
    DanglingLink {
        /// The file.
        path: PathBuf,
        /// Where the link points.
        target: PathBuf,
    },
    /// The file is not a regular file (a FIFO, a device, a directory...).
    #[error("cannot read {path}: it is {what}, not a regular file")]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead (`a FIFO`, `a character device`...).
        what: &'static str,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("cannot read {path}: it is larger than the {limit_mib} MiB limit")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit in MiB.
        limit_mib: u64,
    },
    /// The file is not UTF-8 text.
    #[error("cannot read {path}: it is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// The file is neither valid YAML nor JSON.
    #[error("{path} is not valid YAML or JSON: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// The file holds objects of another kind than the one it is read for.
    #[error("{path} should hold {expected} objects, but holds {found}")]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// The kind expected.
        expected: String,
        /// The kinds found with their counts (`2 ClusterOperator, 1 Node`).
        found: String,
    },
    /// An object in the file does not have the expected shape.
    #[error("{path}: object #{index} ({kind} {name}) is not a valid {expected}: {error}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// Position of the object in the file (after flattening lists), from 0.
        index: usize,
        /// Its `kind` (cut: [`excerpt::bare`]).
        kind: String,
        /// Its `metadata.name` (cut: [`excerpt::bare`]).
        name: String,
        /// The Rust type expected.
        expected: &'static str,
        /// The decoding error, its quotes of the file cut ([`excerpt::message`]).
        error: String,
    },
    /// A required file is missing.
    #[error("{path} is missing: a snapshot needs {what}")]
    Missing {
        /// The file.
        path: PathBuf,
        /// What it should hold.
        what: &'static str,
    },
    /// The `now` file is not an RFC 3339 timestamp.
    #[error("{path}: {value} is not an RFC 3339 timestamp")]
    BadNow {
        /// The file.
        path: PathBuf,
        /// Its content, as a short escaped excerpt ([`excerpt::quoted`]).
        value: String,
    },
}

/// Something odd in a snapshot that does not stop it from being read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotWarning {
    /// A second object with the kind and name of one already read: it is ignored, the first
    /// one is kept (captures often hold the same object twice, e.g. a list and a per-object file).
    #[error("{path}: duplicate {kind} {name:?} ignored (the first one, from {first}, is kept)")]
    Duplicate {
        /// Its kind.
        kind: String,
        /// Its name.
        name: String,
        /// The file of the ignored copy.
        path: PathBuf,
        /// The file of the kept copy.
        first: PathBuf,
    },
    /// `alerts.json` holds no valid alerts response (bad syntax, or e.g. `data.alerts` not a
    /// list): the alerts are ignored and everything else is assessed, as `oc` does. The text
    /// starts like oc's note.
    #[error("Ignoring alerts in 'Update Health'. Error unmarshaling alerts: {error}")]
    Alerts {
        /// What was wrong (names the file).
        error: String,
    },
}
