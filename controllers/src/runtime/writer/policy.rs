//! What a writer does with a failed call and where it counts its writes ([`WritePolicy`]),
//! given by whoever builds the writer; the local one ([`Local`]).

use std::time::Duration;

use crate::metrics::Metrics;

use super::outcome::WriteError;

/// What a failed call means for the rest of the pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failed {
    /// The object's own problem: it is backed off, the other objects are written, and the pass
    /// fails with the first such error.
    Own,
    /// Any other call would fail too: no new call starts, nothing is deleted, the pass fails
    /// with it; no back-off (the caller paces its passes).
    Shared,
    /// Refused for this object alone: it is backed off, the others are written, and the pass
    /// fails with [`WriteError::Refused`].
    Refused,
    /// No new object fits: no other creation in this pass (the next passes create one at a
    /// time until the first refusal), updates and deletions go on; no back-off; the pass fails
    /// with [`WriteError::Refused`].
    NoRoom,
}

impl Failed {
    /// Whether the object is left alone until its back-off ends (or its content changes).
    pub fn backs_off(self) -> bool {
        matches!(self, Failed::Own | Failed::Refused)
    }
}

/// A failed call, for the policy to say (log, metric).
pub struct Reported<'a> {
    /// `write` or `delete`.
    pub what: &'a str,
    /// The error, with the object's name.
    pub error: &'a WriteError,
    /// The `reason` label of the call ([`super::error_reason`]).
    pub reason: &'static str,
    /// What the policy made of it.
    pub failed: Failed,
    /// The object's consecutive failures and its back-off, when it is backed off.
    pub backoff: Option<(u32, Duration)>,
}

/// Where a writer counts its writes and what a failed call means for its pass.
pub trait WritePolicy: Send + Sync + 'static {
    /// Counts one write of `kind` (`verb`: `apply`, `apply-status`, `delete`).
    fn count(&self, metrics: &Metrics, kind: &str, verb: &str);
    /// What the failed call `e` means for the pass.
    fn failed(&self, e: &kube::Error) -> Failed;
    /// Says a failed call of `kind` (logs it, counts it).
    fn report(&self, metrics: &Metrics, kind: &str, failure: &Reported<'_>);
}

/// The cluster's own API server: writes counted in `update_status_api_writes_total`; every
/// failed call is the object's own ([`Failed::Own`]), counted in
/// `update_status_write_errors_total{kind, reason}` and warned about with the object's name.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

impl WritePolicy for Local {
    fn count(&self, metrics: &Metrics, kind: &str, verb: &str) {
        metrics.writes.write(kind, verb);
    }

    fn failed(&self, _e: &kube::Error) -> Failed {
        Failed::Own
    }

    fn report(&self, metrics: &Metrics, kind: &str, failure: &Reported<'_>) {
        let Reported {
            what,
            error,
            reason,
            backoff,
            ..
        } = failure;
        metrics.writes.error(kind, reason);
        let (count, wait) = backoff.unwrap_or_default();
        let object = match error {
            WriteError::Api { name, .. } => name.as_str(),
            _ => "",
        };
        tracing::warn!(
            object = %object,
            reason,
            failures = count,
            retry_in_s = wait.as_secs_f64(),
            error = %error,
            "{what} failed; other objects are written, this one is retried after a back-off"
        );
    }
}
