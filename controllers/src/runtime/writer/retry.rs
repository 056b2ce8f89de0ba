//! The back-off of one object whose write failed: [`RETRY_FIRST`] doubling to [`RETRY_CAP`],
//! at least the server's `Retry-After`, and what failed (new content is tried at once).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Wait before retrying an object whose write failed once.
pub const RETRY_FIRST: Duration = Duration::from_secs(1);
/// Longest wait before retrying an object whose writes keep failing.
pub const RETRY_CAP: Duration = Duration::from_secs(300);

/// Consecutive failures of one object's writes, when it may be tried again, and the content
/// that failed (new content is tried at once: the input changed, e.g. after an outage).
#[derive(Clone, Debug)]
pub(super) struct Failure<S> {
    pub(super) count: u32,
    pub(super) retry_at: Instant,
    /// The labels and status refused (`None`: a deletion).
    pub(super) content: Option<(BTreeMap<String, String>, S)>,
}

/// How long to leave an object alone after its `count`th consecutive failure, `e`: the capped
/// exponential back-off with jitter, at least the server's `Retry-After` (itself capped).
pub(super) fn retry_wait(count: u32, e: &kube::Error) -> Duration {
    crate::runtime::clock::backoff(
        RETRY_FIRST,
        RETRY_CAP,
        count,
        crate::runtime::clock::jitter(),
    )
    .max(retry_after(e).unwrap_or_default().min(RETRY_CAP))
}

/// The server's `Retry-After` of a failed call (`details.retryAfterSeconds`), if any.
fn retry_after(e: &kube::Error) -> Option<Duration> {
    match e {
        kube::Error::Api(s) => s
            .details
            .as_ref()
            .map(|d| Duration::from_secs(u64::from(d.retry_after_seconds)))
            .filter(|d| !d.is_zero()),
        _ => None,
    }
}
