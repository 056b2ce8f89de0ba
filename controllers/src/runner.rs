//! The loop every reconciler runs: wait for a change (or for the moment time alone changes an
//! answer), debounce, reconcile, record metrics, back off on errors. Watch-driven: no polling.
//! Each loop reports to [`crate::health::Health`] when it has work and when a pass ends, so a
//! pass that never returns makes the process unhealthy.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use tokio::sync::{Notify, watch};

use crate::clock::Clock;
use crate::health::Heartbeat;
use crate::metrics::Metrics;
use crate::writer::WriteError;

/// Longest wait before re-evaluating when only time passes (thresholds are computed exactly;
/// this bounds the effect of a clock jump).
pub const MAX_REQUEUE: Duration = Duration::from_secs(300);
/// Collects a burst of events (a relist, many objects changing at once) into one pass.
pub const DEBOUNCE: Duration = Duration::from_millis(100);
/// Wait after a failed pass.
pub const RETRY: Duration = Duration::from_secs(10);

/// A reconciler: one pass over its inputs.
pub trait Reconcile: Send + 'static {
    /// Name (label value, field-manager suffix, metrics label).
    const NAME: &'static str;
    /// One pass at `now`; returns when time alone will next change the answer.
    fn reconcile(
        &mut self,
        now: Timestamp,
    ) -> impl Future<Output = Result<Option<Duration>, WriteError>> + Send;
}

/// Runs `r` until `shutdown` changes.
pub async fn run<R: Reconcile>(
    mut r: R,
    clock: Clock,
    metrics: Arc<Metrics>,
    wake: Arc<Notify>,
    mut shutdown: watch::Receiver<bool>,
    heartbeat: Heartbeat,
) {
    let mut next: Option<Duration> = None;
    loop {
        let sleep = next.unwrap_or(MAX_REQUEUE).min(MAX_REQUEUE);
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(sleep) => {}
            _ = shutdown.changed() => return,
        }
        heartbeat.busy();
        tokio::time::sleep(DEBOUNCE).await;
        let started = Instant::now();
        let result = r.reconcile(clock.now()).await;
        metrics.reconciled(R::NAME, started.elapsed().as_secs_f64(), result.is_ok());
        heartbeat.idle();
        next = match result {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(reconciler = R::NAME, error = %e, "reconcile failed; retrying in {RETRY:?}");
                Some(RETRY)
            }
        };
    }
}
