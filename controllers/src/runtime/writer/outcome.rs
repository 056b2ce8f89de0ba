//! What a sync reports: what it did ([`SyncStats`]) or why it failed ([`WriteError`]), and the
//! `reason` label of a failed call ([`error_reason`]).

/// What a sync did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Metadata applies (creations included).
    pub meta_writes: u32,
    /// Status applies.
    pub status_writes: u32,
    /// Deletions.
    pub deletes: u32,
    /// Objects left as they were.
    pub unchanged: u32,
}

impl SyncStats {
    /// Total API writes.
    pub fn writes(&self) -> u32 {
        self.meta_writes + self.status_writes + self.deletes
    }
}

/// Errors while writing.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The API server refused or failed a call.
    #[error("{verb} {kind} {namespace}/{name}: {source}")]
    Api {
        /// `apply`, `apply-status`, `delete`.
        verb: &'static str,
        /// Kind written.
        kind: String,
        /// Namespace.
        namespace: String,
        /// Object name.
        name: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A hub refused some objects (each alone: [`crate::runtime::refusal::refusal`]); the
    /// others were written.
    #[error(
        "{refused} {kind} object(s) refused in namespace {namespace} (the others are written); the first: {first}"
    )]
    Refused {
        /// Kind written.
        kind: String,
        /// Namespace.
        namespace: String,
        /// Objects refused or, once the quota was full, not tried.
        refused: u32,
        /// What the sync did besides.
        stats: SyncStats,
        /// The first refusal.
        first: Box<WriteError>,
    },
    /// A desired object could not be serialized (a bug).
    #[error("serializing {name}: {source}")]
    Serialize {
        /// Object name.
        name: String,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
}

/// The `reason` label of `update_status_write_errors_total` for a failed call: from the HTTP
/// status (`invalid` 422, `conflict` 409, `forbidden` 403, `unauthorized` 401, `not-found` 404,
/// `throttled` 429, `server` 5xx, `api` other codes), `connect` when the API server was not
/// reached, `other` otherwise.
pub fn error_reason(e: &kube::Error) -> &'static str {
    match e {
        kube::Error::Api(s) => match s.code {
            401 => "unauthorized",
            403 => "forbidden",
            404 => "not-found",
            409 => "conflict",
            422 => "invalid",
            429 => "throttled",
            500..=599 => "server",
            _ => "api",
        },
        kube::Error::HyperError(_) | kube::Error::Service(_) => "connect",
        _ => "other",
    }
}
