//! The hub reconcilers' per-namespace back-off ([`Backoffs`], used by `hub_quota` and
//! `hub_hosted`): a namespace whose objects could not be written waits before the next try,
//! twice as long each time up to a cap, and its failure is told once per reason.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::runtime::clock;

/// A namespace whose objects could not be written: when to try again.
struct Failure {
    count: u32,
    retry_at: Instant,
    reason: &'static str,
}

/// The namespaces that wait, each with its failures.
pub struct Backoffs {
    failures: HashMap<String, Failure>,
    cap: Duration,
}

impl Backoffs {
    /// No namespace waits; a wait grows from 1 s to `cap`.
    pub fn new(cap: Duration) -> Self {
        Backoffs {
            failures: HashMap::new(),
            cap,
        }
    }

    /// Whether `namespace` waits at `now`.
    pub fn waiting(&self, namespace: &str, now: Instant) -> bool {
        self.failures
            .get(namespace)
            .is_some_and(|f| f.retry_at > now)
    }

    /// Forgets the failures of `namespace` (it was written); `true` when it had some.
    pub fn clear(&mut self, namespace: &str) -> bool {
        self.failures.remove(namespace).is_some()
    }

    /// Records a failure of `namespace` at `now` for `reason`: the wait before the next try, and
    /// whether the reason is new for it (to be told; the same reason again is not).
    pub fn failed(
        &mut self,
        namespace: &str,
        reason: &'static str,
        now: Instant,
    ) -> (Duration, bool) {
        let before = self.failures.get(namespace);
        let count = before.map_or(1, |f| f.count.saturating_add(1));
        let new_reason = before.is_none_or(|f| f.reason != reason);
        let wait = clock::backoff(Duration::from_secs(1), self.cap, count, clock::jitter());
        self.failures.insert(
            namespace.to_string(),
            Failure {
                count,
                retry_at: now + wait,
                reason,
            },
        );
        (wait, new_reason)
    }

    /// Keeps the namespaces `keep` names, forgetting the others.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.failures.retain(|ns, _| keep(ns));
    }

    /// How long until each waiting namespace's next try (the pass's requeues).
    pub fn waits(&self) -> impl Iterator<Item = Duration> + '_ {
        let now = Instant::now();
        self.failures
            .values()
            .map(move |f| f.retry_at.saturating_duration_since(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_waits_longer_each_time_and_its_reason_is_told_once() {
        let mut b = Backoffs::new(Duration::from_secs(300));
        let now = Instant::now();
        assert!(!b.waiting("ns", now));
        let (first, told) = b.failed("ns", "Forbidden", now);
        assert!(told, "a new failure is told");
        assert!(b.waiting("ns", now));
        assert!(!b.waiting("ns", now + first + Duration::from_millis(1)));
        let (second, told) = b.failed("ns", "Forbidden", now);
        assert!(!told, "the same reason again is not");
        assert!(second >= first, "{second:?} < {first:?}");
        let (_, told) = b.failed("ns", "Conflict", now);
        assert!(told, "another reason is");
        assert_eq!(b.waits().count(), 1);
        b.retain(|ns| ns != "ns");
        assert_eq!(b.waits().count(), 0);
        assert!(!b.clear("ns"));
    }
}
