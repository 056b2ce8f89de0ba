//! Leader election on a `coordination.k8s.io/v1` Lease, so that only one replica writes.
//!
//! client-go's protocol and timings ([`LEASE_DURATION`] 15 s, [`RENEW_DEADLINE`] 10 s,
//! [`RETRY_PERIOD`] 2 s):
//! - Every write carries the resourceVersion it read, so two candidates cannot both win (the
//!   loser gets a conflict).
//! - **Expiry is judged by the candidate's own clock**: a follower notes the local (monotonic)
//!   instant at which it last saw the Lease record change (holder, renewTime or
//!   resourceVersion) and takes the Lease once `leaseDurationSeconds` have passed since then
//!   without a change. The holder's `renewTime` is never compared with our clock, so clock skew
//!   between nodes cannot shorten a lease.
//! - **The leader renews with a deadline**: each renewal attempt is cut off at
//!   `last successful renewal (as sent) + RENEW_DEADLINE`; if none succeeded by then, it steps
//!   down ([`Leadership::lost`]): the caller stops its writers, then exits. Since a follower's
//!   view of the last renewal is no earlier than when the leader sent it, the leader stops
//!   writing at least `LEASE_DURATION - RENEW_DEADLINE` (5 s) before any follower may take over.
//! - **The deadline is a timer**, not a check after a failed attempt: the renewal loop wakes
//!   at `last renewal + RENEW_DEADLINE` whatever its attempts are doing, and steps down then.
//! - **Writes stop at the step-down, whatever else happens** ([`LeaseGate`]): the writers'
//!   client refuses every mutating call from the moment the Lease is lost (checked as each
//!   request is sent, so a writer still inside a pass, in a shutdown grace or retrying a
//!   throttled call sends nothing more), and the supervisor aborts the writers at once (during
//!   a shutdown's grace too).
//! - **Release on shutdown** ([`Leadership::release`], like client-go's `ReleaseOnCancel`): the
//!   holder clears `holderIdentity` and sets `leaseDurationSeconds: 1`, so a follower takes
//!   over at its next try (within [`RETRY_PERIOD`]) instead of a full lease later.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::PostParams;
use tokio::sync::{oneshot, watch};
// Tokio's clock (the same monotonic clock, pausable in tests).
use tokio::time::Instant;

/// How long a lease is valid without renewal (as seen by the followers' clocks).
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// A leader that has not renewed for this long steps down (shorter than the lease).
pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// How often the leader renews and a follower retries.
pub const RETRY_PERIOD: Duration = Duration::from_secs(2);
/// Bound on releasing the lease at shutdown (a release that hangs must not hold up the exit).
pub const RELEASE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the writers get to finish their pass at shutdown (SIGTERM) before they are
/// aborted; a lost Lease aborts them at once, grace or not.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);
/// Least time between the leader's step-down and the earliest take-over by a follower.
pub const STOP_MARGIN: Duration = Duration::from_secs(5);

// Followers see a renewal no earlier than the leader sent it, and the leader steps down (its
// writes gated off) RENEW_DEADLINE after sending its last successful one: STOP_MARGIN is left
// for the step-down to take effect. Room for several attempts before the deadline.
const _: () = assert!(RENEW_DEADLINE.as_secs() + STOP_MARGIN.as_secs() <= LEASE_DURATION.as_secs());
const _: () = assert!(RETRY_PERIOD.as_secs() * 4 <= RENEW_DEADLINE.as_secs());
// Even were the gate and the abort not there, a shutdown grace starting right before the
// deadline would end 2 s before any follower could take over (issue #29: it used to end at the
// very instant, 10 + 5 = 15 s).
const _: () =
    assert!(RENEW_DEADLINE.as_secs() + SHUTDOWN_GRACE.as_secs() + 2 <= LEASE_DURATION.as_secs());

/// Whether the writers may still write: open while we hold the Lease, closed for good the
/// moment it is lost (see [`LeaseGate::guard`]).
#[derive(Clone, Debug)]
pub struct LeaseGate(Arc<AtomicBool>);

impl Default for LeaseGate {
    fn default() -> Self {
        LeaseGate(Arc::new(AtomicBool::new(true)))
    }
}

/// A mutating call refused because the Lease is lost.
#[derive(Debug, thiserror::Error)]
#[error("not sent: the leader-election Lease is lost (this replica no longer writes)")]
pub struct LeaseLost;

impl LeaseGate {
    /// An open gate (no leader election: always open).
    pub fn open() -> Self {
        Self::default()
    }

    /// Whether writes may be sent.
    pub fn is_open(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Closes the gate for good.
    pub fn close(&self) {
        self.0.store(false, Ordering::SeqCst);
    }

    /// `client`, except that every mutating request (anything but `GET` and `HEAD`) fails with
    /// [`LeaseLost`] without being sent once the gate is closed. Reads (watches, lists) go on.
    pub fn guard(&self, client: &kube::Client) -> kube::Client {
        let gate = self.clone();
        let inner = client.clone();
        let service = tower::service_fn(move |req: hyper::Request<kube::client::Body>| {
            let gate = gate.clone();
            let inner = inner.clone();
            async move {
                let reads = matches!(*req.method(), hyper::Method::GET | hyper::Method::HEAD);
                if !reads && !gate.is_open() {
                    return Err(tower::BoxError::from(LeaseLost));
                }
                inner.send(req).await.map_err(tower::BoxError::from)
            }
        });
        kube::Client::new(service, client.default_namespace().to_string())
    }
}

/// What to do with the lease as read.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Nobody holds it (released, or expired by our clock): take it.
    Acquire,
    /// We hold it: renew it.
    Renew,
    /// Someone else holds a lease that has not expired by our clock.
    Wait {
        /// The holder.
        holder: String,
        /// Time left, by our clock, before we may take it.
        remaining: Duration,
    },
}

/// The parts of a Lease whose change shows that its holder is alive.
#[derive(Clone, Debug, PartialEq)]
struct Record {
    holder: Option<String>,
    renew_time: Option<Timestamp>,
    resource_version: Option<String>,
}

impl Record {
    fn of(lease: Option<&Lease>) -> Option<Record> {
        let lease = lease?;
        let spec = lease.spec.as_ref();
        Some(Record {
            holder: spec.and_then(|s| s.holder_identity.clone()),
            renew_time: spec.and_then(|s| s.renew_time.as_ref()).map(|t| t.0),
            resource_version: lease.metadata.resource_version.clone(),
        })
    }
}

/// What a candidate has seen of the Lease, timed by its own monotonic clock.
#[derive(Debug, Default)]
pub struct Observed {
    last: Option<(Option<Record>, Instant)>,
}

impl Observed {
    /// Records the lease as read at `now`; returns the instant (by our clock) at which we first
    /// saw it as it is now.
    pub fn observe(&mut self, lease: Option<&Lease>, now: Instant) -> Instant {
        let record = Record::of(lease);
        match &self.last {
            Some((seen, at)) if *seen == record => *at,
            _ => {
                self.last = Some((record, now));
                now
            }
        }
    }
}

/// Decides from the lease spec (pure): `unchanged_since` is when we first saw the record as it
/// is, `now` is our clock.
pub fn decide(
    spec: Option<&LeaseSpec>,
    me: &str,
    unchanged_since: Instant,
    now: Instant,
) -> Decision {
    let Some(spec) = spec else {
        return Decision::Acquire;
    };
    match spec.holder_identity.as_deref() {
        None | Some("") => Decision::Acquire,
        Some(holder) if holder == me => Decision::Renew,
        Some(holder) => {
            let seconds = u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0);
            let expiry = unchanged_since + Duration::from_secs(seconds);
            if now < expiry {
                Decision::Wait {
                    holder: holder.to_string(),
                    remaining: expiry - now,
                }
            } else {
                Decision::Acquire
            }
        }
    }
}

/// Errors of the election loop.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// The API refused a call other than a conflict.
    #[error("lease {namespace}/{name}: {source}")]
    Api {
        /// Lease namespace.
        namespace: String,
        /// Lease name.
        name: String,
        /// The error.
        #[source]
        source: Box<kube::Error>,
    },
}

/// Outcome of one attempt to acquire or renew.
#[derive(Debug, PartialEq)]
enum Attempt {
    /// We hold the lease.
    Held,
    /// Someone else holds a valid lease.
    Other(String),
    /// Someone else wrote the lease between our read and our write.
    Conflict,
}

/// A candidate for the lease `namespace/name` under identity `me`.
pub struct Elector {
    api: Api<Lease>,
    namespace: String,
    name: String,
    me: String,
    observed: Observed,
}

impl Elector {
    /// A candidate.
    pub fn new(client: kube::Client, namespace: &str, name: &str, me: &str) -> Self {
        Elector {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            name: name.to_string(),
            me: me.to_string(),
            observed: Observed::default(),
        }
    }

    fn err(&self, e: kube::Error) -> LeaderError {
        LeaderError::Api {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            source: Box::new(e),
        }
    }

    fn lease(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// One attempt to acquire or renew.
    async fn try_once(&mut self) -> Result<Attempt, LeaderError> {
        let existing = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| self.err(e))?;
        let now = Instant::now();
        let since = self.observed.observe(existing.as_ref(), now);
        let spec = existing.as_ref().and_then(|l| l.spec.as_ref());
        let decision = decide(spec, &self.me, since, now);
        let acquire = match decision {
            Decision::Wait { holder, .. } => return Ok(Attempt::Other(holder)),
            Decision::Acquire => true,
            Decision::Renew => false,
        };
        let stamp = Some(MicroTime(Timestamp::now()));
        let transitions = spec.and_then(|s| s.lease_transitions).unwrap_or(0);
        let new_spec = LeaseSpec {
            holder_identity: Some(self.me.clone()),
            lease_duration_seconds: Some(LEASE_DURATION.as_secs() as i32),
            acquire_time: if acquire {
                stamp.clone()
            } else {
                spec.and_then(|s| s.acquire_time.clone())
            },
            renew_time: stamp,
            lease_transitions: Some(if acquire && existing.is_some() {
                transitions + 1
            } else {
                transitions
            }),
            ..Default::default()
        };
        let result = match existing {
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..Default::default()
                    },
                    spec: Some(new_spec),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            Some(mut lease) => {
                lease.spec = Some(new_spec);
                // Carries the resourceVersion read: a concurrent writer makes this a conflict.
                self.api
                    .replace(&self.name, &PostParams::default(), &lease)
                    .await
            }
        };
        match result {
            Ok(_) => Ok(Attempt::Held),
            Err(kube::Error::Api(s)) if s.is_conflict() || s.is_already_exists() => {
                Ok(Attempt::Conflict)
            }
            Err(e) => Err(self.err(e)),
        }
    }

    /// Blocks until we hold the lease, then keeps renewing it in the background.
    pub async fn acquire(mut self) -> Leadership {
        let mut waiting_for: Option<String> = None;
        let renewed = loop {
            let sent = Instant::now();
            match tokio::time::timeout(RENEW_DEADLINE, self.try_once()).await {
                Ok(Ok(Attempt::Held)) => break sent,
                Ok(Ok(Attempt::Other(holder))) => {
                    if waiting_for.as_deref() != Some(holder.as_str()) {
                        tracing::info!(lease = %self.lease(), %holder, "leader election: the lease is held; waiting");
                        waiting_for = Some(holder);
                    }
                }
                Ok(Ok(Attempt::Conflict)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "leader election: cannot read or write the lease; retrying")
                }
                Err(_) => {
                    tracing::warn!(lease = %self.lease(), "leader election: no answer within {RENEW_DEADLINE:?}; retrying")
                }
            }
            tokio::time::sleep(RETRY_PERIOD).await;
        };
        tracing::info!(lease = %self.lease(), identity = %self.me, "became leader");
        let (held_tx, held) = watch::channel(true);
        let (stop, stop_rx) = oneshot::channel();
        let gate = LeaseGate::open();
        let task = tokio::spawn(self.keep(renewed, held_tx, gate.clone(), stop_rx));
        Leadership {
            held,
            gate,
            stop: Some(stop),
            task,
        }
    }

    /// Renews every [`RETRY_PERIOD`] until told to stop (then releases) or until renewal fails
    /// for [`RENEW_DEADLINE`] or someone else holds the lease: then `gate` closes and `held`
    /// turns false, at the deadline itself (a timer), whatever an attempt is doing.
    async fn keep(
        mut self,
        mut renewed: Instant,
        held: watch::Sender<bool>,
        gate: LeaseGate,
        mut stop: oneshot::Receiver<()>,
    ) {
        let step_down = |held: &watch::Sender<bool>| {
            gate.close();
            let _ = held.send(false);
        };
        loop {
            let deadline = renewed + RENEW_DEADLINE;
            tokio::select! {
                _ = tokio::time::sleep_until(deadline.min(Instant::now() + RETRY_PERIOD)) => {}
                _ = &mut stop => return self.release().await,
            }
            if Instant::now() >= deadline {
                break;
            }
            let sent = Instant::now();
            let attempt = tokio::select! {
                r = tokio::time::timeout_at(deadline, self.try_once()) => r,
                _ = &mut stop => return self.release().await,
            };
            match attempt {
                Ok(Ok(Attempt::Held)) => {
                    renewed = sent;
                    continue;
                }
                Ok(Ok(Attempt::Other(holder))) => {
                    step_down(&held);
                    tracing::error!(lease = %self.lease(), identity = %self.me, %holder, "leader election: another replica holds the lease; stepping down");
                    return;
                }
                Ok(Ok(Attempt::Conflict)) => {
                    tracing::warn!(lease = %self.lease(), "leader election: renewal conflicted; retrying")
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "leader election: renewal failed"),
                Err(_) => {
                    tracing::warn!(lease = %self.lease(), "leader election: renewal did not answer in time")
                }
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        step_down(&held);
        tracing::error!(
            lease = %self.lease(),
            identity = %self.me,
            "leader election: not renewed within {RENEW_DEADLINE:?} (the lease lasts {LEASE_DURATION:?}); stepping down"
        );
    }

    /// Gives the lease up if we still hold it (bounded by [`RELEASE_TIMEOUT`]).
    async fn release(&mut self) {
        let release = async {
            let Some(mut lease) = self.api.get_opt(&self.name).await? else {
                return Ok(false);
            };
            let spec = lease.spec.get_or_insert_with(Default::default);
            if spec.holder_identity.as_deref() != Some(self.me.as_str()) {
                return Ok(false);
            }
            let now = Some(MicroTime(Timestamp::now()));
            spec.holder_identity = None;
            spec.lease_duration_seconds = Some(1);
            spec.acquire_time = now.clone();
            spec.renew_time = now;
            self.api
                .replace(&self.name, &PostParams::default(), &lease)
                .await?;
            Ok::<_, kube::Error>(true)
        };
        match tokio::time::timeout(RELEASE_TIMEOUT, release).await {
            Ok(Ok(true)) => {
                tracing::info!(lease = %self.lease(), "leader election: lease released")
            }
            Ok(Ok(false)) => {}
            Ok(Err(e)) => {
                tracing::warn!(error = %self.err(e), "leader election: cannot release the lease; a follower takes over when it expires")
            }
            Err(_) => {
                tracing::warn!(lease = %self.lease(), "leader election: releasing the lease timed out; a follower takes over when it expires")
            }
        }
    }
}

/// The lease, held: renewed in the background until lost or released.
pub struct Leadership {
    held: watch::Receiver<bool>,
    gate: LeaseGate,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Leadership {
    /// A Leadership held until the returned sender sends `false` (tests of the supervision).
    #[cfg(test)]
    pub(crate) fn held_until() -> (Self, watch::Sender<bool>) {
        let (tx, held) = watch::channel(true);
        let (stop, _) = oneshot::channel();
        let leadership = Leadership {
            held,
            gate: LeaseGate::open(),
            stop: Some(stop),
            task: tokio::spawn(async {}),
        };
        (leadership, tx)
    }

    /// The gate of the writers: closes the moment the Lease is lost.
    pub fn gate(&self) -> LeaseGate {
        self.gate.clone()
    }

    /// Resolves once the lease is no longer ours: not renewed within [`RENEW_DEADLINE`], taken
    /// by another replica, or the renewal task ended. The caller must stop writing at once.
    pub async fn lost(&mut self) {
        let _ = self.held.wait_for(|held| !*held).await;
    }

    /// Stops renewing and releases the lease; call once the writers have stopped. The gate
    /// closes first: nothing is written once the release is under way.
    pub async fn release(mut self) {
        self.gate.close();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(holder: &str, renewed: &str, rv: &str) -> Lease {
        Lease {
            metadata: ObjectMeta {
                resource_version: Some(rv.into()),
                ..Default::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                lease_duration_seconds: Some(15),
                renew_time: Some(MicroTime(renewed.parse().expect("timestamp"))),
                ..Default::default()
            }),
        }
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn decisions() {
        let t0 = Instant::now();
        let l = lease("b", "2026-01-01T00:00:00Z", "1");
        let spec = l.spec.as_ref();
        assert_eq!(decide(None, "a", t0, t0), Decision::Acquire);
        assert_eq!(decide(spec, "b", t0, t0 + S(60)), Decision::Renew);
        assert_eq!(
            decide(spec, "a", t0, t0 + S(5)),
            Decision::Wait {
                holder: "b".into(),
                remaining: S(10)
            },
            "a lease of someone else is respected for its duration after we saw it change"
        );
        assert_eq!(decide(spec, "a", t0, t0 + S(15)), Decision::Acquire);
        let released = LeaseSpec {
            holder_identity: None,
            lease_duration_seconds: Some(1),
            ..Default::default()
        };
        assert_eq!(
            decide(Some(&released), "a", t0, t0),
            Decision::Acquire,
            "a released lease is taken at once"
        );
    }

    #[test]
    fn expiry_counts_from_the_last_change_we_saw_not_the_holders_clock() {
        let mut seen = Observed::default();
        let t0 = Instant::now();
        // The holder's clock is an hour behind: its renewTime looks long expired.
        let stale_clock = lease("b", "2020-01-01T00:00:00Z", "1");
        let since = seen.observe(Some(&stale_clock), t0);
        assert_eq!(since, t0);
        assert!(matches!(
            decide(stale_clock.spec.as_ref(), "a", since, t0),
            Decision::Wait { .. }
        ));
        // Unchanged for 14 s: still valid. Then renewed (new resourceVersion): counts again.
        assert_eq!(seen.observe(Some(&stale_clock), t0 + S(14)), t0);
        let renewed = lease("b", "2020-01-01T00:00:02Z", "2");
        assert_eq!(seen.observe(Some(&renewed), t0 + S(14)), t0 + S(14));
        assert!(matches!(
            decide(renewed.spec.as_ref(), "a", t0 + S(14), t0 + S(28)),
            Decision::Wait { .. }
        ));
        // Unchanged for a whole lease duration by our clock: the holder is gone.
        let since = seen.observe(Some(&renewed), t0 + S(29));
        assert_eq!(
            decide(renewed.spec.as_ref(), "a", since, t0 + S(29)),
            Decision::Acquire
        );
        // The holder's clock far ahead does not make a dead holder's lease last longer either.
        let mut seen = Observed::default();
        let future = lease("b", "2099-01-01T00:00:00Z", "7");
        let since = seen.observe(Some(&future), t0);
        assert_eq!(
            decide(future.spec.as_ref(), "a", since, t0 + S(15)),
            Decision::Acquire
        );
    }

    /// A scripted API server (a `tower_test` mock under a real client): `answer(n, method)`
    /// gives the status, body and delay of the n-th request (0-based); every request is
    /// recorded as `METHOD path`.
    fn api(
        answer: impl Fn(usize, &str) -> (u16, serde_json::Value, Duration) + Send + 'static,
    ) -> (kube::Client, Arc<std::sync::Mutex<Vec<String>>>) {
        use hyper::{Request, Response};
        use kube::client::Body;
        let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let calls = Arc::new(std::sync::Mutex::new(Vec::new()));
        let recorded = calls.clone();
        tokio::spawn(async move {
            let mut handle = std::pin::pin!(handle);
            let mut n = 0;
            while let Some((request, send)) = handle.next_request().await {
                let method = request.method().to_string();
                recorded
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(format!("{method} {}", request.uri().path()));
                let (code, body, delay) = answer(n, &method);
                n += 1;
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    let response = Response::builder()
                        .status(code)
                        .header("content-type", "application/json")
                        .body(Body::from(serde_json::to_vec(&body).unwrap_or_default()))
                        .expect("a response");
                    send.send_response(response);
                });
            }
        });
        (kube::Client::new(service, "ns"), calls)
    }

    fn lease_json(holder: &str) -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l", "namespace": "ns", "resourceVersion": "1"},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15}
        })
    }

    /// Issue #29: the step-down is a timer at the deadline. Renewals that fail after 1.25 s
    /// each used to leave the deadline to a check after the next attempt, up to a retry period
    /// late (11.75 s here); the gate closes with it.
    #[tokio::test(start_paused = true)]
    async fn the_leader_steps_down_at_the_deadline_and_closes_the_gate() {
        let (client, _) = api(|n, method| match (n, method) {
            (0, "GET") => (
                404,
                serde_json::json!({"kind": "Status", "code": 404, "reason": "NotFound"}),
                Duration::ZERO,
            ),
            (1, _) => (201, lease_json("me"), Duration::ZERO),
            _ => (
                500,
                serde_json::json!({"kind": "Status", "code": 500, "message": "etcd is gone"}),
                Duration::from_millis(1250),
            ),
        });
        let started = Instant::now();
        let mut leadership = Elector::new(client, "ns", "l", "me").acquire().await;
        let gate = leadership.gate();
        assert!(gate.is_open());
        leadership.lost().await;
        let after = started.elapsed();
        assert!(!gate.is_open(), "the gate closed with the step-down");
        assert!(
            after >= RENEW_DEADLINE && after <= RENEW_DEADLINE + Duration::from_millis(50),
            "stepped down {after:?} after the last renewal (deadline {RENEW_DEADLINE:?})"
        );
    }

    /// Once the gate is closed, the guarded client sends no mutating call (it fails at once);
    /// reads still go through.
    #[tokio::test]
    async fn a_closed_gate_lets_no_write_through() {
        use kube::api::{Patch, PatchParams};
        let (client, calls) = api(|_, _| (200, lease_json("me"), Duration::ZERO));
        let gate = LeaseGate::open();
        let leases: Api<Lease> = Api::namespaced(gate.guard(&client), "ns");
        let patch = Patch::Apply(
            serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}),
        );
        leases
            .patch("l", &PatchParams::apply("t"), &patch)
            .await
            .expect("open: sent");
        gate.close();
        let err = leases
            .patch("l", &PatchParams::apply("t"), &patch)
            .await
            .expect_err("closed: refused");
        assert!(err.to_string().contains("Lease is lost"), "{err}");
        assert!(leases.delete("l", &Default::default()).await.is_err());
        leases.get("l").await.expect("reads go on");
        let calls = calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        assert_eq!(
            calls,
            [
                "PATCH /apis/coordination.k8s.io/v1/namespaces/ns/leases/l",
                "GET /apis/coordination.k8s.io/v1/namespaces/ns/leases/l"
            ]
        );
    }
}
