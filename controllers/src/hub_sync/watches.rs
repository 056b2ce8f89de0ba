//! The hub session's watches: a reflector of our copies per kind in the hub namespace
//! ([`spawn_watch`]), and what they tell the sync loop ([`Signals`]: listed, failing,
//! credentials rejected; a warning per outage and per change of reason).

use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use update_status_assess::redact::redact_urls_in;

use super::errors::{hint, watch_reason};
use crate::cache::watch::slim;
use crate::metrics::Metrics;

/// What the hub watches tell the sync loop (shared by successive sessions).
#[derive(Default)]
pub(super) struct Signals {
    /// A hub watch (re)listed: the hub answers, worth an attempt even while backing off.
    pub(super) listed: Notify,
    /// A hub watch failed since the loop last looked: the next attempt counts as failed if the
    /// watches have not listed, and probes the hub if they have.
    pub(super) unhealthy: AtomicBool,
    /// A hub call was answered `401`: read the credentials again before the next attempt.
    pub(super) reload: AtomicBool,
    /// New credentials were published: switch to them before the next attempt.
    pub(super) rotated: AtomicBool,
    /// Per watched kind: the reason of the outage reported (a warning per outage and per
    /// change of reason, across sessions).
    reported: Mutex<[Option<&'static str>; 3]>,
}

impl Signals {
    /// Records the reason a watch fails; `true` if it was not reported yet.
    pub(super) fn report(&self, slot: usize, reason: &'static str) -> bool {
        let mut r = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        let new = r.get(slot).is_some_and(|old| *old != Some(reason));
        if let Some(old) = r.get_mut(slot) {
            *old = Some(reason);
        }
        new
    }

    /// A watch fails because the namespace or the CRDs do not exist on the hub.
    pub(super) fn not_found(&self) -> bool {
        let r = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        r.contains(&Some("not-found"))
    }

    /// Records that a watch works; `true` if it was failing.
    pub(super) fn recovered(&self, slot: usize) -> bool {
        let mut r = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        r.get_mut(slot).and_then(Option::take).is_some()
    }
}

/// The reflectors' context.
#[derive(Clone)]
pub(super) struct WatchContext {
    pub(super) selector: String,
    pub(super) namespace: String,
    pub(super) wake: Arc<Notify>,
    pub(super) signals: Arc<Signals>,
    pub(super) metrics: Arc<Metrics>,
    /// The `hosted_cluster` label of the hub metrics (`""` in standalone mode).
    pub(super) metrics_label: String,
    /// The session is retired: its failures no longer count in the metrics (a new session of
    /// the same hosted cluster may report under the same label).
    pub(super) retired: Arc<AtomicBool>,
}

/// A reflector of our copies of kind `K` in the hub namespace: wakes the sync on every event,
/// says when it has listed, reports its errors (a warning per outage, a metric per error).
/// `slot` is the kind's index in [`Signals::reported`].
pub(super) fn spawn_watch<K>(
    api: Api<K>,
    ctx: &WatchContext,
    slot: usize,
    kind: &'static str,
) -> (Store<K>, Arc<AtomicBool>, JoinHandle<()>)
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store();
    let listed = Arc::new(AtomicBool::new(false));
    let stream = watcher(api, watcher::Config::default().labels(&ctx.selector))
        .default_backoff()
        .modify(slim::<K>)
        .reflect(writer);
    let ctx = ctx.clone();
    let done = listed.clone();
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(ev) = stream.next().await {
            match ev {
                // Yielded before every (re)list attempt: proves nothing yet.
                Ok(watcher::Event::Init) => {}
                Ok(ev) => {
                    if ctx.signals.recovered(slot) {
                        tracing::info!(kind, namespace = %ctx.namespace, "hub watch recovered");
                    }
                    if matches!(ev, watcher::Event::InitDone) {
                        done.store(true, Ordering::SeqCst);
                        ctx.signals.listed.notify_one();
                    }
                    ctx.wake.notify_one();
                }
                Err(e) => {
                    let Some(reason) = watch_reason(&e) else {
                        continue;
                    };
                    if !ctx.retired.load(Ordering::SeqCst) {
                        ctx.metrics.hub.sync_failed(&ctx.metrics_label, reason);
                    }
                    ctx.signals.unhealthy.store(true, Ordering::SeqCst);
                    if reason == "unauthorized" {
                        ctx.signals.reload.store(true, Ordering::SeqCst);
                    }
                    if ctx.signals.report(slot, reason) {
                        tracing::warn!(
                            kind,
                            namespace = %ctx.namespace,
                            reason,
                            error = %redact_urls_in(&e.to_string()),
                            hint = %hint(reason, &ctx.namespace),
                            "hub watch failing; retrying with back-off"
                        );
                    }
                    ctx.wake.notify_one();
                }
            }
        }
    });
    (reader, listed, task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_watch_outages_are_reported_once_per_reason() {
        let s = Signals::default();
        assert!(s.report(0, "unauthorized"));
        assert!(!s.report(0, "unauthorized"), "once per outage");
        assert!(s.report(1, "unauthorized"), "per kind");
        assert!(s.report(0, "forbidden"), "again when the reason changes");
        assert!(s.recovered(0));
        assert!(!s.recovered(0));
        assert!(s.report(0, "forbidden"), "a new outage");
        assert!(!s.report(7, "connect") && !s.recovered(7), "no such kind");
        assert!(!s.not_found());
        assert!(s.report(2, "not-found"));
        assert!(
            s.not_found(),
            "a retired session without a hub namespace has nothing to delete"
        );
    }
}
