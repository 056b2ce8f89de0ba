//! Writes desired objects: server-side apply of what changed, deletion of what is no longer
//! produced, nothing at all when nothing changed.
//!
//! Each reconciler owns its objects: they carry the label `update.openshift.io/reconciler=<name>`
//! and are applied with the field manager `update-status-controller/<name>`. Metadata (labels,
//! owner references) and `.status` are separate API calls (the status subresource), so a new
//! object costs two writes and a changed one one or two.
//!
//! What a failed call means for the pass, and where writes are counted, is the writer's
//! [`WritePolicy`], given by whoever builds it: the writer knows no hub. [`Local`], the
//! default: every call is the object's own business ([`Failed::Own`]). A policy may also say
//! that a failure would be shared by every other call ([`Failed::Shared`]: no new call, no
//! deletion, the pass fails with it), that the object alone was refused ([`Failed::Refused`]:
//! backed off, the others written) or that no new object fits ([`Failed::NoRoom`]: no other
//! creation in that pass, the next passes create one object at a time until the first
//! refusal); a pass with refusals and no other failure fails with [`WriteError::Refused`].
//! The fleet hub's policy is [`crate::runtime::hub_writes`].
//!
//! A local writer writes every object it can: a call refused for one object (a `422`, a
//! `409`, a `429` the client gave up on...) is counted in `update_status_write_errors_total{kind,
//! reason}`, logged as a warning with the object's name and the API server's message, and that
//! object alone is retried after a capped exponential back-off ([`RETRY_FIRST`] doubling to
//! [`RETRY_CAP`], at least the server's `Retry-After`; reset by a success). Until then a pass
//! leaves it alone unless its content changed (a changed input is tried at once);
//! [`Writer::retry_in`] tells the reconciler when to come back. Before that, the controller's
//! clients retry `429`/`503`/`504` answers a bounded number of times, honouring `Retry-After`
//! ([`crate::runtime::client`]).
//!
//! The comparison is against the watch cache of our own objects. Right after a write the cache
//! may lag, so the writer remembers what it wrote ("pending") until the cache shows that
//! resourceVersion or [`PENDING_TTL`] passes; this keeps a burst of events from writing the
//! same content twice. An object deleted behind our back is written again at the next pass once
//! the cache showed our write; if not yet, a status write answered `404` recreates it at once.
//!
//! Files: this one (the [`Writer`], its sync and its state), `writer/policy.rs` (the
//! [`WritePolicy`] and the [`Local`] one), `writer/compare.rs` (our kinds,
//! [`StatusObject`], and how an existing object is compared with the desired one),
//! `writer/apply.rs` (one object's API calls), `writer/direct.rs` (one write of an object that
//! is not ours to sync, [`Direct`], counted as the writer counts its own), `writer/pending.rs` (what is remembered of a
//! write until the cache shows it), `writer/retry.rs` (an object's back-off after a failure),
//! `writer/outcome.rs` (what a sync reports: [`SyncStats`], [`WriteError`], [`error_reason`]).

mod apply;
mod compare;
mod direct;
mod outcome;
mod pending;
mod policy;
mod retry;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::Api;
use kube::api::{DeleteParams, PatchParams};
use tokio::sync::Semaphore;
use update_status_api::crd::labels;

use crate::metrics::Metrics;
use crate::runtime::existing::{Cached, OurObject};
pub use crate::runtime::refusal::{QUOTA_REQUIRED_POLICY, Refusal, refusal};
use apply::{Job, execute};
pub use compare::{StatusObject, field_manager, written_labels};
pub use direct::Direct;
pub use outcome::{SyncStats, WriteError, error_reason};
use pending::{Pending, json_fingerprint, meta_fingerprint};
pub use policy::{Failed, Local, Reported, WritePolicy};
use retry::{Failure, retry_wait};
pub use retry::{RETRY_CAP, RETRY_FIRST};

/// The objects written: what [`update_status_assess::compose`] produces, complete.
pub use update_status_assess::compose::Desired;

/// How long a write we made is trusted over a watch cache that does not show it yet.
pub const PENDING_TTL: Duration = Duration::from_secs(30);

/// What one object's writes did: what was written, or what was refused (boxed: a status is
/// hundreds of bytes inline, and a cold start keeps thousands of outcomes until its stream
/// ends, nearly all of them successes).
type Outcome<S> = Result<Pending, Box<Refused<S>>>;

/// A write the API server refused: what [`Writer::record_failure`] needs.
struct Refused<S> {
    verb: &'static str,
    error: kube::Error,
    labels: BTreeMap<String, String>,
    status: S,
}

/// One sync's account, from its jobs to its verdict.
#[derive(Default)]
struct Tally {
    stats: SyncStats,
    /// The first failed call that is not a refusal of one object.
    first_error: Option<WriteError>,
    /// A failure every other call would share ([`Failed::Shared`], or any failed deletion of a
    /// writer that is not [`Failed::Own`]'s): no new call, no deletion.
    stopped: bool,
    /// Objects refused alone ([`Failed::Refused`], [`Failed::NoRoom`]) or not tried for want
    /// of room, and the first refusal.
    refused: u32,
    first_refusal: Option<WriteError>,
}

/// What the calls of one stream of jobs share while they run.
struct Gate {
    /// A call failed for every other ([`Failed::Shared`]): no new call starts.
    failed: AtomicBool,
    /// No room for a new object ([`Failed::NoRoom`]): no other creation in this pass.
    no_room: AtomicBool,
    /// Creations not tried for want of room.
    skipped: AtomicU32,
    /// The last pass found no room: creations go one at a time until the first refusal.
    creations: Option<Semaphore>,
    /// The jobs' time writing, summed: over the stream's time, their mean number in flight.
    busy_ns: AtomicU64,
}

/// What a stream of jobs did, applied to the writer's state once it is done.
struct Streamed<S> {
    outcomes: Vec<(String, Outcome<S>)>,
    /// The names desired in this pass.
    wanted: HashSet<String>,
    /// A call was throttled (`429`): the next sync writes fewer at once.
    throttled: bool,
    /// A creation found no room ([`Failed::NoRoom`]).
    no_room: bool,
}

/// Writes one kind for one reconciler in one namespace.
pub struct Writer<K: StatusObject> {
    api: Api<K>,
    namespace: String,
    reconciler: &'static str,
    manager: String,
    pending: HashMap<String, Pending>,
    deleted: HashMap<String, Instant>,
    /// Objects whose last write failed and are backed off, by name.
    failures: HashMap<String, Failure<K::Status>>,
    metrics: Arc<Metrics>,
    /// Where writes are counted and what a failed call means ([`Local`] unless the builder
    /// says otherwise, [`Writer::with_policy`]).
    policy: Box<dyn WritePolicy>,
    /// Writes run at once: [`WRITE_CONCURRENCY`], halved after a sync the API server
    /// throttled (a `429` the client's bounded retries gave up on, see [`crate::runtime::client`]),
    /// doubled back after a sync that wrote without (down to one, up to
    /// [`WRITE_CONCURRENCY`]).
    concurrency: usize,
    /// The last pass found no room for a new object ([`Failed::NoRoom`]): the next one creates
    /// one object at a time until the first refusal (updates and deletes are not held up).
    no_room: bool,
}

impl<K: StatusObject> Writer<K> {
    /// The namespace it writes to.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
}

impl<K: StatusObject> Writer<K> {
    /// A writer for `reconciler`'s objects of kind `K` in `namespace`, with the [`Local`]
    /// policy.
    pub fn new(
        client: kube::Client,
        namespace: &str,
        reconciler: &'static str,
        metrics: Arc<Metrics>,
    ) -> Self {
        Writer {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            reconciler,
            manager: field_manager(reconciler),
            pending: HashMap::new(),
            deleted: HashMap::new(),
            failures: HashMap::new(),
            metrics,
            policy: Box::new(Local),
            concurrency: WRITE_CONCURRENCY,
            no_room: false,
        }
    }

    /// The same writer with another policy: where it counts its writes and what a failed call
    /// means for the pass (e.g. [`crate::runtime::hub_writes::HubWrites`]).
    pub fn with_policy(self, policy: impl WritePolicy) -> Self {
        Writer {
            policy: Box::new(policy),
            ..self
        }
    }

    /// Records a failed call of verdict `failed`: backs the object off when the verdict says
    /// so, and lets the policy say it (log, metric).
    fn record_failure(
        &mut self,
        e: &WriteError,
        failed: Failed,
        what: &str,
        content: Option<(BTreeMap<String, String>, K::Status)>,
    ) {
        let WriteError::Api { name, source, .. } = e else {
            tracing::warn!(error = %e, "{what} failed");
            return;
        };
        let kind = K::kind(&());
        let mut report = Reported {
            what,
            error: e,
            reason: error_reason(source),
            failed,
            backoff: None,
        };
        if failed.backs_off() {
            let count = self
                .failures
                .get(name)
                .map_or(1, |f| f.count.saturating_add(1));
            let wait = retry_wait(count, source);
            self.failures.insert(
                name.clone(),
                Failure {
                    count,
                    retry_at: Instant::now() + wait,
                    content,
                },
            );
            report.backoff = Some((count, wait));
        }
        self.policy.report(&self.metrics, kind.as_ref(), &report);
    }

    /// Whether a failed object's back-off still runs at `now` for the same content (a pass
    /// leaves it alone); `desired`: the object's desired content (`None`: a deletion).
    fn backing_off(&self, name: &str, desired: Option<&Desired<K::Status>>, now: Instant) -> bool {
        self.failures.get(name).is_some_and(|f| {
            f.retry_at > now
                && match (&f.content, desired) {
                    (Some((labels, status)), Some(d)) => {
                        status == &d.status && labels == &self.full_labels(&d.labels)
                    }
                    (None, None) => true,
                    _ => false,
                }
        })
    }

    /// When the earliest object whose write failed may be tried again (`None`: none failed).
    /// A reconciler wakes up then at the latest.
    pub fn retry_in(&self) -> Option<Duration> {
        let now = Instant::now();
        self.failures
            .values()
            .map(|f| f.retry_at.saturating_duration_since(now))
            .min()
    }

    /// Objects whose last write failed.
    pub fn failing(&self) -> usize {
        self.failures.len()
    }

    /// Label selector of this reconciler's objects.
    pub fn selector(reconciler: &str) -> String {
        format!("{}={reconciler}", labels::RECONCILER)
    }

    fn full_labels(&self, desired: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        written_labels(desired, self.reconciler)
    }

    /// Makes the objects of this reconciler exactly `desired`: applies what differs from
    /// `existing` (the watch cache), deletes the reconciler's objects not in `desired`.
    ///
    /// `desired` may hold the objects or build them as it is iterated (owned items): they are
    /// read one at a time, and only the jobs of one batch are kept.
    ///
    /// The comparison allocates nothing for an unchanged object (a pass over thousands of
    /// unchanged objects stays cheap); the writes run [`WRITE_CONCURRENCY`] at a time (fewer
    /// while the API server throttles, see [`Writer::concurrency`]), each object's status
    /// after its metadata.
    ///
    /// Four steps: what is there ([`Writer::ours`]), the jobs planned and written as a stream
    /// ([`Writer::write_jobs`], then [`Writer::settle`]), the deletions
    /// ([`Writer::delete_stale`]), the verdict ([`Writer::verdict`]).
    #[tracing::instrument(
        name = "write",
        skip_all,
        fields(kind = %K::kind(&()), namespace = %self.namespace, reconciler = self.reconciler)
    )]
    pub async fn sync<I, E>(
        &mut self,
        desired: I,
        existing: &[Arc<E>],
    ) -> Result<SyncStats, WriteError>
    where
        I: IntoIterator,
        I::Item: std::borrow::Borrow<Desired<K::Status>>,
        E: OurObject<K::Status>,
    {
        let now = Instant::now();
        let existing = self.ours(existing, now);
        let mut tally = Tally::default();
        let written = self.write_jobs(desired, &existing, now, &mut tally).await;
        let wanted = self.settle(written, &mut tally);
        // Failures of objects neither wanted nor there any more are over.
        self.failures
            .retain(|n, _| wanted.contains(n.as_str()) || existing.contains_key(n.as_str()));
        self.delete_stale(&existing, &wanted, now, &mut tally).await;
        self.verdict(tally)
    }

    /// This reconciler's objects in `existing`, by name, after forgetting the pending writes
    /// and deletions past their TTL and those the cache shows.
    fn ours<'e, E: OurObject<K::Status>>(
        &mut self,
        existing: &'e [Arc<E>],
        now: Instant,
    ) -> HashMap<&'e str, &'e E> {
        self.pending
            .retain(|_, p| now.duration_since(p.at) < PENDING_TTL);
        self.deleted
            .retain(|_, at| now.duration_since(*at) < PENDING_TTL);
        let existing: HashMap<&str, &E> = existing
            .iter()
            .filter(|o| o.cached_label(labels::RECONCILER) == Some(self.reconciler))
            .map(|o| (o.cached_name(), &**o))
            .collect();
        self.forget_confirmed(&existing);
        existing
    }

    /// Plans the jobs as the writes take them (a job holds copies of its object's labels and
    /// status: only the jobs in flight exist at once) and writes them `concurrency` at a time
    /// with no barrier between groups (batches waited for their slowest write: at a cold start
    /// that idled the API server at every batch's end). Counts the writes in `tally`.
    async fn write_jobs<I, E>(
        &self,
        desired: I,
        existing: &HashMap<&str, &E>,
        now: Instant,
        tally: &mut Tally,
    ) -> Streamed<K::Status>
    where
        I: IntoIterator,
        I::Item: std::borrow::Borrow<Desired<K::Status>>,
        E: OurObject<K::Status>,
    {
        let gate = Gate {
            failed: AtomicBool::new(false),
            no_room: AtomicBool::new(false),
            skipped: AtomicU32::new(0),
            creations: self.no_room.then(|| Semaphore::new(1)),
            busy_ns: AtomicU64::new(0),
        };
        let (gate, policy) = (&gate, &*self.policy);
        let params = PatchParams::apply(&self.manager).force();
        let stream_start = Instant::now();
        let mut wanted = HashSet::new();
        let mut unchanged = 0u32;
        let mut written = Vec::new();
        let mut throttled = false;
        {
            let (wanted, unchanged) = (&mut wanted, &mut unchanged);
            let jobs = desired.into_iter().filter_map(|d| {
                let d = std::borrow::Borrow::borrow(&d);
                wanted.insert(d.name.clone());
                if self.backing_off(&d.name, Some(d), now) {
                    return None;
                }
                let job = self.plan(d, existing.get(d.name.as_str()).copied());
                if job.is_none() {
                    *unchanged += 1;
                }
                job
            });
            let mut results = futures::stream::iter(jobs)
                .map(|job| run_job(&self.api, params.clone(), job, gate, policy))
                .buffer_unordered(self.concurrency);
            while let Some((job, result)) = results.next().await {
                let Some(result) = result else { continue };
                throttled |= matches!(&result, Err((_, kube::Error::Api(s))) if s.code == 429);
                written.push(self.count_job(job, result, &mut tally.stats));
            }
        }
        tally.stats.unchanged += unchanged;
        tally.refused += gate.skipped.load(Ordering::Relaxed);
        if !written.is_empty() {
            let wall = stream_start.elapsed().as_secs_f64();
            let busy = gate.busy_ns.load(Ordering::Relaxed) as f64 / 1e9;
            tracing::debug!(
                kind = %K::kind(&()),
                reconciler = self.reconciler,
                objects = written.len(),
                concurrency = self.concurrency,
                wall_ms = wall * 1e3,
                mean_in_flight = busy / wall.max(1e-9),
                mean_object_ms = busy * 1e3 / written.len() as f64,
                "objects written"
            );
        }
        Streamed {
            outcomes: written,
            wanted,
            throttled,
            no_room: gate.no_room.load(Ordering::Relaxed),
        }
    }

    /// Counts what one job's calls wrote in `stats` and the metrics; what it did or what
    /// refused it.
    fn count_job(
        &self,
        job: Job<K::Status>,
        result: Result<apply::Written, (&'static str, kube::Error)>,
        stats: &mut SyncStats,
    ) -> (String, Outcome<K::Status>) {
        let kind = K::kind(&());
        match result {
            Ok(written) => {
                if written.meta {
                    stats.meta_writes += 1;
                    self.policy.count(&self.metrics, kind.as_ref(), "apply");
                }
                if job.status_body {
                    stats.status_writes += 1;
                    self.policy
                        .count(&self.metrics, kind.as_ref(), "apply-status");
                }
                let pending = Pending {
                    resource_version: written.resource_version,
                    meta: meta_fingerprint(&job.labels, job.owner.as_ref()),
                    status: json_fingerprint(&job.status),
                    at: Instant::now(),
                    meta_written: written.meta,
                };
                (job.name, Ok(pending))
            }
            Err((verb, e)) => {
                // A failed status write after a metadata write: the metadata write counts.
                if verb == "apply-status" && job.meta {
                    stats.meta_writes += 1;
                    self.policy.count(&self.metrics, kind.as_ref(), "apply");
                }
                let refused = Refused {
                    verb,
                    error: e,
                    labels: job.labels,
                    status: job.status,
                };
                (job.name, Err(Box::new(refused)))
            }
        }
    }

    /// Applies what the jobs did to the writer's state (pending writes, back-offs, the
    /// concurrency, the room for creations) and to `tally`; the names desired.
    fn settle(&mut self, written: Streamed<K::Status>, tally: &mut Tally) -> HashSet<String> {
        if !written.outcomes.is_empty() {
            self.adapt_concurrency(written.throttled);
        }
        self.no_room = written.no_room;
        for (name, outcome) in written.outcomes {
            match outcome {
                Ok(pending) => {
                    self.failures.remove(&name);
                    if pending.meta_written {
                        self.deleted.remove(&name);
                    }
                    self.pending.insert(name, pending);
                }
                Err(r) => {
                    let failed = self.policy.failed(&r.error);
                    let e = self.error(r.verb, &name, r.error);
                    self.record_failure(&e, failed, "write", Some((r.labels, r.status)));
                    match failed {
                        Failed::Refused | Failed::NoRoom => {
                            tally.refused += 1;
                            tally.first_refusal.get_or_insert(e);
                        }
                        Failed::Shared => {
                            tally.stopped = true;
                            tally.first_error.get_or_insert(e);
                        }
                        Failed::Own => {
                            tally.first_error.get_or_insert(e);
                        }
                    }
                }
            }
        }
        written.wanted
    }

    /// Deletes this reconciler's objects no longer wanted (unless deleted lately, backed off or
    /// being deleted), until a failure stops the pass.
    async fn delete_stale<E: OurObject<K::Status>>(
        &mut self,
        existing: &HashMap<&str, &E>,
        wanted: &HashSet<String>,
        now: Instant,
        tally: &mut Tally,
    ) {
        for (name, obj) in existing {
            if tally.stopped {
                break;
            }
            if wanted.contains(*name)
                || self.deleted.contains_key(*name)
                || self.backing_off(name, None, now)
                || obj.cached_deleting()
            {
                continue;
            }
            match self.api.delete(name, &DeleteParams::background()).await {
                Ok(_) => {
                    self.failures.remove(*name);
                    tally.stats.deletes += 1;
                    self.policy
                        .count(&self.metrics, K::kind(&()).as_ref(), "delete");
                    self.deleted.insert(name.to_string(), now);
                    self.pending.remove(*name);
                }
                Err(kube::Error::Api(s)) if s.is_not_found() => {
                    self.failures.remove(*name);
                }
                Err(e) => {
                    let failed = self.policy.failed(&e);
                    let e = self.error("delete", name, e);
                    self.record_failure(&e, failed, "delete", None);
                    tally.stopped |= failed != Failed::Own;
                    tally.first_error.get_or_insert(e);
                }
            }
        }
    }

    /// The pass's result: its first error, else its refusals, else what it did.
    fn verdict(&self, tally: Tally) -> Result<SyncStats, WriteError> {
        match (tally.first_error, tally.first_refusal) {
            (Some(e), _) => Err(e),
            (None, Some(first)) => Err(WriteError::Refused {
                kind: K::kind(&()).to_string(),
                namespace: self.namespace.clone(),
                refused: tally.refused,
                stats: tally.stats,
                first: Box::new(first),
            }),
            (None, None) => Ok(tally.stats),
        }
    }

    /// Halves the concurrency after a sync with a throttled call, doubles it back after one
    /// without (see [`Writer::concurrency`]).
    fn adapt_concurrency(&mut self, throttled: bool) {
        let before = self.concurrency;
        self.concurrency = if throttled {
            (before / 2).max(1)
        } else {
            (before * 2).min(WRITE_CONCURRENCY)
        };
        if self.concurrency != before {
            tracing::info!(
                kind = %K::kind(&()),
                reconciler = self.reconciler,
                from = before,
                to = self.concurrency,
                "write concurrency changed (the API server throttled us or stopped doing so)"
            );
        }
    }

    /// Writes run at once by the next sync.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// Forgets the writes the cache shows: from then on the cache is the truth (were the object
    /// deleted later, a pending entry would otherwise still claim it exists until the TTL).
    fn forget_confirmed<E: Cached>(&mut self, existing: &HashMap<&str, &E>) {
        self.pending.retain(|name, p| {
            existing
                .get(name.as_str())
                .is_none_or(|o| o.cached_resource_version() != p.resource_version.as_deref())
        });
    }

    /// Whether writes made in the last [`PENDING_TTL`] may not show in the watch cache yet
    /// (a reconciler should not conclude "all in sync" from the cache alone meanwhile).
    pub fn has_pending(&self) -> bool {
        let now = Instant::now();
        self.pending
            .values()
            .any(|p| now.duration_since(p.at) < PENDING_TTL)
    }

    fn error(&self, verb: &'static str, name: &str, e: kube::Error) -> WriteError {
        WriteError::Api {
            verb,
            kind: K::kind(&()).to_string(),
            namespace: self.namespace.clone(),
            name: name.to_string(),
            source: Box::new(e),
        }
    }

    /// What to write for one desired object (`None`: nothing).
    fn plan<E: OurObject<K::Status>>(
        &self,
        d: &Desired<K::Status>,
        existing: Option<&E>,
    ) -> Option<Job<K::Status>> {
        // What the object looks like, as far as we know: the cache, unless we wrote more
        // recently than the cache shows.
        let pending = self.pending.get(&d.name).filter(|p| {
            existing.is_none_or(|o| o.cached_resource_version() != p.resource_version.as_deref())
        });
        let (meta_ok, status_ok, exists) = match (pending, existing) {
            (Some(p), _) => (
                p.meta == meta_fingerprint(&self.full_labels(&d.labels), d.owner.as_ref()),
                p.status == json_fingerprint(&d.status),
                true,
            ),
            (None, Some(o)) => (
                o.labels_are(&d.labels, self.reconciler) && o.owner_is(d.owner.as_ref()),
                o.status_is(&d.status),
                true,
            ),
            (None, None) => (false, false, false),
        };
        if meta_ok && status_ok {
            return None;
        }
        let want_labels = self.full_labels(&d.labels);
        Some(Job {
            name: d.name.clone(),
            create: !exists,
            meta: !meta_ok,
            status_body: !status_ok || !exists,
            labels: want_labels,
            owner: d.owner.clone(),
            status: d.status.clone(),
        })
    }
}

/// One job's calls, unless the pass stopped or, for a creation, there is no room; tells `gate`
/// what a failure means for the other calls.
async fn run_job<K: StatusObject>(
    api: &Api<K>,
    params: PatchParams,
    job: Job<K::Status>,
    gate: &Gate,
    policy: &dyn WritePolicy,
) -> JobResult<K::Status> {
    if gate.failed.load(Ordering::Relaxed) {
        return (job, None);
    }
    // While there is no room, creations go one at a time: the first refused ends them for this
    // pass.
    let _permit = match (&gate.creations, job.create) {
        (Some(creations), true) => creations.acquire().await.ok(),
        _ => None,
    };
    if job.create && gate.no_room.load(Ordering::Relaxed) {
        gate.skipped.fetch_add(1, Ordering::Relaxed);
        return (job, None);
    }
    let t = Instant::now();
    let r = execute(api, &params, &job).await;
    let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
    gate.busy_ns.fetch_add(ns, Ordering::Relaxed);
    if let Err((_, e)) = &r {
        match policy.failed(e) {
            Failed::NoRoom => gate.no_room.store(true, Ordering::Relaxed),
            Failed::Shared => gate.failed.store(true, Ordering::Relaxed),
            Failed::Own | Failed::Refused => {}
        }
    }
    (job, Some(r))
}

/// A job and what its calls did (`None`: not tried).
type JobResult<S> = (
    Job<S>,
    Option<Result<apply::Written, (&'static str, kube::Error)>>,
);

/// Writes made concurrently by one [`Writer::sync`].
pub const WRITE_CONCURRENCY: usize = 32;
#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus};

    /// A label map (also read by `compare`'s tests).
    pub(super) fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn cp(rv: &str, completion: u32) -> Arc<ControlPlaneUpdateStatus> {
        let mut o = ControlPlaneUpdateStatus::new("cluster", Default::default());
        o.metadata.resource_version = Some(rv.into());
        o.metadata.labels = Some(map(&[
            (labels::RECONCILER, "control-plane"),
            (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
        ]));
        o.status = Some(ControlPlaneUpdateStatusStatus {
            completion_percent: completion,
            ..Default::default()
        });
        Arc::new(o)
    }

    #[tokio::test]
    async fn a_write_is_trusted_until_the_cache_shows_it_then_a_deletion_is_seen() {
        // plan() makes no call: the client only has to exist.
        let config = kube::Config::new("https://127.0.0.1:9".parse().expect("url"));
        let client = kube::Client::try_from(config).expect("client");
        let metrics = Arc::new(Metrics::new().expect("metrics"));
        let mut w: Writer<ControlPlaneUpdateStatus> =
            Writer::new(client, "ns", "control-plane", metrics);
        let desired = Desired {
            name: "cluster".to_string(),
            labels: BTreeMap::new(),
            owner: None,
            status: ControlPlaneUpdateStatusStatus {
                completion_percent: 50,
                ..Default::default()
            },
        };
        let written = cp("7", 50);
        w.pending.insert(
            "cluster".into(),
            Pending {
                resource_version: Some("7".into()),
                meta: meta_fingerprint(&w.full_labels(&BTreeMap::new()), None),
                status: json_fingerprint(&desired.status),
                at: Instant::now(),
                meta_written: true,
            },
        );
        // Just written, not in the cache yet: nothing to do.
        assert!(
            w.plan(&desired, None::<&ControlPlaneUpdateStatus>)
                .is_none()
        );
        // ...unless the content moved on since: only the status is written again.
        let mut moved = desired.clone();
        moved.status.completion_percent = 60;
        let job = w
            .plan(&moved, None::<&ControlPlaneUpdateStatus>)
            .expect("a status write");
        assert!(job.status_body && !job.meta);
        let mut relabelled = desired.clone();
        relabelled
            .labels
            .insert(labels::ASSESSMENT.into(), "progressing".into());
        let job = w
            .plan(&relabelled, None::<&ControlPlaneUpdateStatus>)
            .expect("a metadata write");
        assert!(job.meta && !job.status_body);
        // The cache is behind (an older version): our write still counts.
        assert!(w.plan(&desired, Some(&*cp("6", 10))).is_none());
        // The cache shows our write: forgotten.
        let cache: HashMap<&str, &ControlPlaneUpdateStatus> =
            HashMap::from([("cluster", &*written)]);
        w.forget_confirmed(&cache);
        assert!(w.pending.is_empty());
        // Deleted afterwards: created again (metadata and status).
        let job = w
            .plan(&desired, None::<&ControlPlaneUpdateStatus>)
            .expect("a creation");
        assert!(job.meta && job.status_body);
    }
}
