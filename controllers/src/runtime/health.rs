//! What `/healthz` and `/readyz` answer, from the state of the process rather than a constant.
//!
//! - **Live** (`/healthz`): no long-running task has ended, and no reconcile loop has been inside
//!   one pass (woken, with work pending) for longer than the stuck bound. A loop waiting for
//!   work is healthy however long it waits; a pass stuck on a call that never returns, or a loop
//!   that stopped, is not (restarting the process is the remedy, which the kubelet applies).
//! - **Ready** (`/readyz`): live, and every watch cache has listed once.
//!
//! A failing API server is not a liveness failure: passes then fail fast and are retried, and a
//! restart would not help. The probe servers call [`Health::live`] and [`Health::ready`], each
//! returning whether the check passes and a short reason for a human.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Default bound on one reconcile pass before the loop counts as stuck. A cold pass over
/// 5,000 nodes takes under 30 s; a pass waiting on an API call that never answers takes forever.
pub const DEFAULT_STUCK_AFTER: Duration = Duration::from_secs(180);

/// The process's health, shared by the reconcile loops, the supervisor and the probe servers.
pub struct Health {
    stuck_after: Duration,
    state: Mutex<State>,
    /// Notified each time a reconcile loop ends a pass.
    pass_ended: tokio::sync::Notify,
}

/// How long a watch cache may take to list before `/readyz` names it as stuck.
pub const CACHE_SYNC_BOUND: Duration = Duration::from_secs(60);

#[derive(Default)]
struct State {
    synced: bool,
    /// Each watch cache's listing, by kind.
    caches: BTreeMap<&'static str, Cache>,
    /// Why the process is no longer live (a task ended), if it is not.
    stopped: Option<String>,
    loops: BTreeMap<&'static str, Loop>,
}

struct Cache {
    started: Instant,
    synced: bool,
    last_error: Option<String>,
    /// When the watch last reported an error.
    error_at: Option<Instant>,
}

#[derive(Clone, Copy, Default)]
struct Loop {
    /// Since when the loop has had work it has not finished (woken, or inside a pass).
    busy_since: Option<Instant>,
    /// The loop ended a pass (successful or not).
    passed: bool,
}

impl Health {
    /// Health with reconcile passes bounded by `stuck_after`.
    pub fn new(stuck_after: Duration) -> Arc<Self> {
        Arc::new(Health {
            stuck_after,
            state: Mutex::new(State::default()),
            pass_ended: tokio::sync::Notify::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent whatever panicked while holding the lock (plain fields).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers the reconcile loop `name`; it reports through the returned heartbeat.
    pub fn heartbeat(self: &Arc<Self>, name: &'static str) -> Heartbeat {
        self.state().loops.insert(name, Loop::default());
        Heartbeat {
            health: self.clone(),
            name,
        }
    }

    /// Whether reconcile loops run and each has ended a first pass.
    fn first_passes_ended(&self) -> bool {
        let state = self.state();
        !state.loops.is_empty() && state.loops.values().all(|l| l.passed)
    }

    /// Returns once reconcile loops run and each has ended its first pass: at a cold start,
    /// the end of the first burst of writes.
    pub async fn first_passes(&self) {
        loop {
            // Registered before the check, so a pass ending in between is not missed.
            let ended = self.pass_ended.notified();
            if self.first_passes_ended() {
                return;
            }
            ended.await;
        }
    }

    /// Every watch cache has listed once.
    pub fn set_synced(&self) {
        self.state().synced = true;
    }

    /// The watch cache `kind` started listing.
    pub fn cache_started(&self, kind: &'static str) {
        self.state().caches.insert(
            kind,
            Cache {
                started: Instant::now(),
                synced: false,
                last_error: None,
                error_at: None,
            },
        );
    }

    /// The watch cache `kind` listed (the error is kept until the next one is reported).
    pub fn cache_synced(&self, kind: &'static str) {
        if let Some(c) = self.state().caches.get_mut(kind) {
            c.synced = true;
            c.last_error = None;
        }
    }

    /// The watch of `kind` failed with `error` (already free of secrets and bounded).
    pub fn cache_error(&self, kind: &'static str, error: String) {
        if let Some(c) = self.state().caches.get_mut(kind) {
            c.last_error = Some(error);
            c.error_at = Some(Instant::now());
        }
    }

    /// The watch caches that have not listed yet past [`CACHE_SYNC_BOUND`], or whose watch
    /// reported an error within the last `within` (a failing watch retries every few seconds),
    /// with their last error: inputs the controller cannot read now.
    pub fn failing_caches(&self, within: Duration) -> Vec<(&'static str, String)> {
        let now = Instant::now();
        self.state()
            .caches
            .iter()
            .filter(|(_, c)| {
                let stuck =
                    !c.synced && now.saturating_duration_since(c.started) > CACHE_SYNC_BOUND;
                let failing = c
                    .error_at
                    .is_some_and(|t| now.saturating_duration_since(t) <= within);
                stuck || (failing && c.last_error.is_some())
            })
            .map(|(k, c)| {
                let e = c
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "not listed yet".into());
                (*k, e)
            })
            .collect()
    }

    /// A long-running task ended (`reason` names it): the process is no longer live.
    pub fn set_stopped(&self, reason: String) {
        self.state().stopped.get_or_insert(reason);
    }

    /// Liveness: `(true, "ok")`, or `false` with the reason.
    pub fn live(&self) -> (bool, String) {
        self.live_at(Instant::now())
    }

    /// Readiness: live and caches synced.
    pub fn ready(&self) -> (bool, String) {
        let (live, reason) = self.live();
        if !live {
            return (false, reason);
        }
        let state = self.state();
        if !state.synced {
            return (false, not_synced(&state.caches, Instant::now()));
        }
        (true, "ok".into())
    }

    fn live_at(&self, now: Instant) -> (bool, String) {
        let state = self.state();
        if let Some(reason) = &state.stopped {
            return (false, reason.clone());
        }
        for (name, l) in &state.loops {
            if let Some(since) = l.busy_since {
                let busy = now.saturating_duration_since(since);
                if busy > self.stuck_after {
                    return (
                        false,
                        format!(
                            "reconciler {name} has been in one pass for {}s (bound {}s)",
                            busy.as_secs(),
                            self.stuck_after.as_secs()
                        ),
                    );
                }
            }
        }
        (true, "ok".into())
    }
}

/// Why the caches are not synced: the caches still listing, and those past
/// [`CACHE_SYNC_BOUND`] by name with their last error.
fn not_synced(caches: &BTreeMap<&'static str, Cache>, now: Instant) -> String {
    let mut listing = Vec::new();
    let mut stuck = Vec::new();
    for (kind, c) in caches.iter().filter(|(_, c)| !c.synced) {
        let age = now.saturating_duration_since(c.started);
        if age > CACHE_SYNC_BOUND {
            let error = c.last_error.as_deref().unwrap_or("no error reported");
            stuck.push(format!(
                "cache {kind} has not synced in {}s (bound {}s); last error: {error}",
                age.as_secs(),
                CACHE_SYNC_BOUND.as_secs()
            ));
        } else {
            listing.push(*kind);
        }
    }
    let mut reason = "caches not synced".to_string();
    if !stuck.is_empty() {
        reason.push_str(": ");
        reason.push_str(&stuck.join("; "));
    }
    if !listing.is_empty() {
        reason.push_str(&format!(" (listing: {})", listing.join(", ")));
    }
    reason
}

/// A reconcile loop's reports to [`Health`].
pub struct Heartbeat {
    health: Arc<Health>,
    name: &'static str,
}

impl Heartbeat {
    fn set(&self, busy_since: Option<Instant>) {
        if let Some(l) = self.health.state().loops.get_mut(self.name) {
            l.busy_since = busy_since;
        }
    }

    /// The loop was woken: it has work until [`Heartbeat::idle`].
    pub fn busy(&self) {
        self.set(Some(Instant::now()));
    }

    /// The loop finished a pass (successful or not) and waits for work.
    pub fn idle(&self) {
        if let Some(l) = self.health.state().loops.get_mut(self.name) {
            l.busy_since = None;
            l.passed = true;
        }
        self.health.pass_ended.notify_waiters();
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        // A loop that ends (returned, panicked or aborted) does no more work: it cannot be stuck.
        // Whether its end is fatal is the supervisor's business.
        self.health.state().loops.remove(self.name);
        // Nor does it hold up the end of the first passes.
        self.health.pass_ended.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_loop_is_live_a_pass_past_the_bound_is_not() {
        let health = Health::new(Duration::from_secs(60));
        let beat = health.heartbeat("control-plane");
        let t0 = Instant::now();
        assert!(
            health.live_at(t0 + Duration::from_secs(3600)).0,
            "waiting is healthy"
        );

        beat.busy();
        let (live, _) = health.live_at(Instant::now() + Duration::from_secs(59));
        assert!(live, "a pass within the bound is fine");
        let (live, reason) = health.live_at(Instant::now() + Duration::from_secs(61));
        assert!(!live);
        assert!(reason.contains("control-plane"), "{reason}");

        beat.idle();
        assert!(health.live_at(Instant::now() + Duration::from_secs(61)).0);
    }

    #[test]
    fn ready_needs_synced_caches_and_a_stopped_task_is_fatal() {
        let health = Health::new(DEFAULT_STUCK_AFTER);
        let (ready, reason) = health.ready();
        assert!(!ready);
        assert_eq!(reason, "caches not synced");
        health.set_synced();
        assert_eq!(health.ready(), (true, "ok".into()));

        health.set_stopped("task watch/Node ended".into());
        health.set_stopped("a later one".into());
        assert_eq!(health.live(), (false, "task watch/Node ended".into()));
        assert_eq!(health.ready(), (false, "task watch/Node ended".into()));
    }

    #[test]
    fn a_cache_past_the_bound_is_named_with_its_last_error() {
        let health = Health::new(DEFAULT_STUCK_AFTER);
        health.cache_started("Node");
        health.cache_started("MachineConfigPool");
        health.cache_error("MachineConfigPool", "the API server is failing".into());
        health.cache_synced("Node");
        let (ready, reason) = health.ready();
        assert!(!ready);
        assert_eq!(reason, "caches not synced (listing: MachineConfigPool)");
        let later = Instant::now() + CACHE_SYNC_BOUND + Duration::from_secs(15);
        let reason = not_synced(&health.state().caches, later);
        assert!(
            reason.starts_with("caches not synced: cache MachineConfigPool has not synced in 7"),
            "{reason}"
        );
        assert!(
            reason.ends_with("(bound 60s); last error: the API server is failing"),
            "{reason}"
        );
        assert!(!reason.contains("Node"), "{reason}");
    }

    #[test]
    fn failing_caches_are_those_with_a_recent_error_or_stuck_listing() {
        let h = Health::new(DEFAULT_STUCK_AFTER);
        h.cache_started("Node");
        h.cache_started("ClusterOperator");
        h.cache_synced("Node");
        h.cache_synced("ClusterOperator");
        assert!(h.failing_caches(Duration::from_secs(30)).is_empty());
        h.cache_error("Node", "nodes is forbidden".into());
        assert_eq!(
            h.failing_caches(Duration::from_secs(30)),
            [("Node", "nodes is forbidden".to_string())]
        );
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            h.failing_caches(Duration::from_millis(10)).is_empty(),
            "an error older than the window no longer counts"
        );
    }

    #[test]
    fn a_dropped_heartbeat_no_longer_counts() {
        let health = Health::new(Duration::from_secs(1));
        let beat = health.heartbeat("alerts");
        beat.busy();
        assert!(!health.live_at(Instant::now() + Duration::from_secs(5)).0);
        drop(beat);
        assert!(health.live_at(Instant::now() + Duration::from_secs(5)).0);
    }

    #[tokio::test]
    async fn first_passes_end_when_every_loop_ended_one() {
        let health = Health::new(DEFAULT_STUCK_AFTER);
        let quick = || tokio::time::timeout(Duration::from_millis(50), health.first_passes());
        assert!(quick().await.is_err(), "no loop yet: no pass ended");
        let a = health.heartbeat("control-plane");
        let b = health.heartbeat("worker-pools");
        a.busy();
        a.idle();
        assert!(quick().await.is_err(), "worker-pools has not ended a pass");
        let waiter = {
            let h = health.clone();
            tokio::spawn(async move { h.first_passes().await })
        };
        b.busy();
        b.idle();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken by the last first pass")
            .expect("task");
        b.busy();
        assert!(
            quick().await.is_ok(),
            "a later pass in progress changes nothing"
        );
        // A loop that ends before its first pass (returned, panicked) holds nothing up.
        let c = health.heartbeat("alerts");
        assert!(quick().await.is_err(), "alerts has not ended a pass");
        let waiter = {
            let h = health.clone();
            tokio::spawn(async move { h.first_passes().await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(c);
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken by the loop's end")
            .expect("task");
    }
}
