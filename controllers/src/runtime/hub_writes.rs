//! The fleet hub's [`WritePolicy`] ([`HubWrites`]) and its writers ([`Writer::for_hub`], used
//! by [`crate::hub_sync`]): writes are counted apart (`update_status_hub_writes_total`) and a
//! pass stops at the first failed call, since an unreachable hub, a missing namespace or missing
//! permissions would fail every other call too. Except a call the hub refuses for that object
//! alone ([`refusal`]: its ResourceQuota is full, an admission policy or the schema rejects
//! it): the other objects are still written and the stale copies deleted (freeing the quota),
//! an object refused for itself is retried after a back-off, and once the quota is full no
//! other creation is tried in that pass (the next passes create one object at a time until the
//! first refusal); the pass then fails with [`WriteError::Refused`], which the hub sync
//! reports. The writer logs the hub's failures at debug level only: the hub sync warns once for
//! the pass (thousands of copies may be refused).

use std::sync::Arc;

use crate::metrics::Metrics;
use crate::runtime::refusal::{Refusal, refusal};
use crate::runtime::writer::{Failed, Reported, StatusObject, WriteError, WritePolicy, Writer};

/// How a hub writer counts and treats its failures (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct HubWrites;

impl WritePolicy for HubWrites {
    fn count(&self, metrics: &Metrics, kind: &str, verb: &str) {
        metrics.hub.write(kind, verb);
    }

    fn failed(&self, e: &kube::Error) -> Failed {
        match refusal(e) {
            Some(Refusal::Object) => Failed::Refused,
            Some(Refusal::QuotaFull) => Failed::NoRoom,
            None => Failed::Shared,
        }
    }

    fn report(&self, _metrics: &Metrics, _kind: &str, failure: &Reported<'_>) {
        let Reported {
            what,
            error: e,
            reason,
            backoff,
            ..
        } = failure;
        // A hub writer backs off only an object refused for itself: its content is the problem
        // (retried at once when it changes). A full quota is paced by the hub sync's back-off
        // and tried again as soon as a pass runs (space may have been freed meanwhile).
        let (Some((count, wait)), WriteError::Api { name, .. }) = (backoff, e) else {
            tracing::debug!(error = %e, "hub {what} failed");
            return;
        };
        tracing::debug!(object = %name, reason, failures = count, retry_in_s = wait.as_secs_f64(), error = %e, "hub {what} refused; retried after a back-off");
    }
}

impl<K: StatusObject> Writer<K> {
    /// A writer for `reconciler`'s copies of kind `K` in `namespace` on a fleet hub (`client`
    /// talks to the hub), with the [`HubWrites`] policy: the caller reports its failures.
    pub fn for_hub(
        client: kube::Client,
        namespace: &str,
        reconciler: &'static str,
        metrics: Arc<Metrics>,
    ) -> Self {
        Writer::new(client, namespace, reconciler, metrics).with_policy(HubWrites)
    }
}
