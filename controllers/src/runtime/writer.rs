//! Writes desired objects: server-side apply of what changed, deletion of what is no longer
//! produced, nothing at all when nothing changed.
//!
//! Each reconciler owns its objects: they carry the label `update.openshift.io/reconciler=<name>`
//! and are applied with the field manager `update-status-controller/<name>`. Metadata (labels,
//! owner references) and `.status` are separate API calls (the status subresource), so a new
//! object costs two writes and a changed one one or two.
//!
//! A writer for a fleet hub ([`Writer::for_hub`], used by [`crate::hub_sync`]) counts its writes
//! apart (`update_status_hub_writes_total`) and stops a pass at the first failed call: an
//! unreachable hub, a missing namespace or missing permissions would fail every other call too.
//! Except a call the hub refuses for that object alone ([`refusal`]: its ResourceQuota is full,
//! an admission policy or the schema rejects it): the other objects are still written and the
//! stale copies deleted (freeing the quota), an object refused for itself is retried after a
//! back-off, and once the quota is full no other creation is tried in that pass (the next passes
//! create one object at a time until the first refusal); the pass then fails with
//! [`WriteError::Refused`], which the hub sync reports.
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
//! Files: this one (the [`Writer`], its sync and its state), `writer/compare.rs` (our kinds,
//! [`StatusObject`], and how an existing object is compared with the desired one),
//! `writer/apply.rs` (one object's API calls), `writer/pending.rs` (what is remembered of a
//! write until the cache shows it), `writer/retry.rs` (an object's back-off after a failure),
//! `writer/outcome.rs` (what a sync reports: [`SyncStats`], [`WriteError`], [`error_reason`]).

mod apply;
mod compare;
mod outcome;
mod pending;
mod retry;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::Api;
use kube::api::{DeleteParams, PatchParams};
use update_status_api::crd::labels;

use crate::metrics::Metrics;
use crate::runtime::existing::{Cached, Existing};
pub use crate::runtime::refusal::{QUOTA_REQUIRED_POLICY, Refusal, refusal};
use apply::{Job, execute};
pub use compare::{StatusObject, field_manager, written_labels};
pub use outcome::{SyncStats, WriteError, error_reason};
use pending::{Pending, json_fingerprint, meta_fingerprint};
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

/// Which API server a writer writes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// The cluster's own: writes counted in `update_status_api_writes_total`; a failed call
    /// does not stop the others (one object's problem is not another's).
    Local,
    /// A fleet hub: writes counted in `update_status_hub_writes_total`; the first failed call
    /// stops the pass (the cause is almost always shared: unreachable, forbidden, no
    /// namespace), and the caller reports it.
    Hub,
}

/// Writes one kind for one reconciler in one namespace.
pub struct Writer<K: StatusObject> {
    api: Api<K>,
    namespace: String,
    reconciler: &'static str,
    manager: String,
    pending: HashMap<String, Pending>,
    deleted: HashMap<String, Instant>,
    /// Objects whose last write failed (local writers; hub writers: objects refused), by name.
    failures: HashMap<String, Failure<K::Status>>,
    metrics: Arc<Metrics>,
    target: Target,
    /// Writes run at once: [`WRITE_CONCURRENCY`], halved after a sync the API server
    /// throttled (a `429` the client's bounded retries gave up on, see [`crate::runtime::client`]),
    /// doubled back after a sync that wrote without (down to one, up to
    /// [`WRITE_CONCURRENCY`]).
    concurrency: usize,
    /// A hub writer's last pass found the namespace's quota full: the next one creates one
    /// object at a time until the first refusal (updates and deletes are not held up).
    quota_was_full: bool,
}

impl<K: StatusObject> Writer<K> {
    /// The namespace it writes to.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
}

impl<K: StatusObject> Writer<K> {
    /// A writer for `reconciler`'s objects of kind `K` in `namespace`.
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
            target: Target::Local,
            concurrency: WRITE_CONCURRENCY,
            quota_was_full: false,
        }
    }

    /// A writer for `reconciler`'s copies of kind `K` in `namespace` on a fleet hub (`client`
    /// talks to the hub): writes are counted as hub writes, and a pass stops at the first
    /// failed call, which the caller reports (the writer logs it at debug level only).
    pub fn for_hub(
        client: kube::Client,
        namespace: &str,
        reconciler: &'static str,
        metrics: Arc<Metrics>,
    ) -> Self {
        Writer {
            target: Target::Hub,
            ..Writer::new(client, namespace, reconciler, metrics)
        }
    }

    /// Counts one write.
    fn count(&self, kind: &str, verb: &str) {
        match self.target {
            Target::Local => self.metrics.writes.write(kind, verb),
            Target::Hub => self.metrics.hub.write(kind, verb),
        }
    }

    /// Records a failed call: a local writer counts it, warns with the object's name and the
    /// API server's message, and backs that object off; a hub writer's caller reports failures
    /// itself.
    fn record_failure(
        &mut self,
        e: &WriteError,
        what: &str,
        content: Option<(BTreeMap<String, String>, K::Status)>,
    ) {
        let WriteError::Api { name, source, .. } = e else {
            tracing::warn!(error = %e, "{what} failed");
            return;
        };
        let hub = self.target == Target::Hub;
        // A hub writer backs off only an object refused for itself: its content is the problem
        // (retried at once when it changes). A full quota is paced by the hub sync's back-off
        // and tried again as soon as a pass runs (space may have been freed meanwhile).
        if hub && refusal(source) != Some(Refusal::Object) {
            tracing::debug!(error = %e, "hub {what} failed");
            return;
        }
        let reason = error_reason(source);
        if !hub {
            self.metrics.writes.error(K::kind(&()).as_ref(), reason);
        }
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
        if hub {
            // The hub sync warns once for the pass (thousands of copies may be refused).
            tracing::debug!(object = %name, reason, failures = count, retry_in_s = wait.as_secs_f64(), error = %e, "hub {what} refused; retried after a back-off");
            return;
        }
        tracing::warn!(
            object = %name,
            reason,
            failures = count,
            retry_in_s = wait.as_secs_f64(),
            error = %e,
            "{what} failed; other objects are written, this one is retried after a back-off"
        );
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
        E: Existing<K::Status>,
    {
        let now = Instant::now();
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
        let mut stats = SyncStats::default();
        let mut first_error = None;
        // Hub writers: the objects the hub refused alone, and the first such refusal.
        let mut refused = 0u32;
        let mut first_refusal = None;
        let mut wanted = HashSet::new();
        let api = self.api.clone();
        let params = PatchParams::apply(&self.manager).force();
        // A hub writer starts no new call once one has failed (see [`Target::Hub`]); the jobs
        // skipped are planned again at the next pass.
        let stop_on_error = self.target == Target::Hub;
        let failed = AtomicBool::new(false);
        let failed = &failed;
        // The namespace's quota is full: a hub writer tries no other creation in this pass.
        let quota_full = AtomicBool::new(false);
        let quota_full = &quota_full;
        let skipped = std::sync::atomic::AtomicU32::new(0);
        let skipped = &skipped;
        let creations = tokio::sync::Semaphore::new(if stop_on_error && self.quota_was_full {
            1
        } else {
            tokio::sync::Semaphore::MAX_PERMITS
        });
        let creations = &creations;
        // The jobs' time writing, summed: over the stream's time, their mean number in flight
        // (logged at debug level: a stream the API server paces keeps `concurrency` in flight,
        // one that is not fed fast enough keeps fewer).
        let busy_ns = AtomicU64::new(0);
        let busy_ns = &busy_ns;
        let stream_start = Instant::now();
        let kind = K::kind(&()).to_string();
        // One stream of jobs, planned as the writes take them (a job holds copies of its
        // object's labels and status: only the jobs in flight exist at once) and written
        // `concurrency` at a time with no barrier between groups (batches waited for their
        // slowest write: at a cold start that idled the API server at every batch's end).
        // What the writes did is applied to the writer's state once the stream is done.
        let concurrency = self.concurrency;
        let mut unchanged = 0u32;
        let mut throttled = false;
        let mut outcomes: Vec<(String, Outcome<K::Status>)> = Vec::new();
        {
            let this = &*self;
            let wanted = &mut wanted;
            let unchanged = &mut unchanged;
            let jobs = desired.into_iter().filter_map(|d| {
                let d = std::borrow::Borrow::borrow(&d);
                wanted.insert(d.name.clone());
                if this.backing_off(&d.name, Some(d), now) {
                    return None;
                }
                let job = this.plan(d, existing.get(d.name.as_str()).copied());
                if job.is_none() {
                    *unchanged += 1;
                }
                job
            });
            let mut results = futures::stream::iter(jobs)
                .map(|job| {
                    let api = api.clone();
                    let params = params.clone();
                    async move {
                        if stop_on_error && failed.load(Ordering::Relaxed) {
                            return (job, None);
                        }
                        // While the quota is full, creations go one at a time: the first refused
                        // ends them for this pass.
                        let _permit = match stop_on_error && job.create {
                            true => creations.acquire().await.ok(),
                            false => None,
                        };
                        if stop_on_error && job.create && quota_full.load(Ordering::Relaxed) {
                            skipped.fetch_add(1, Ordering::Relaxed);
                            return (job, None);
                        }
                        let t = Instant::now();
                        let r = execute(&api, &params, &job).await;
                        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
                        busy_ns.fetch_add(ns, Ordering::Relaxed);
                        if let Err((_, e)) = &r {
                            match refusal(e) {
                                Some(Refusal::QuotaFull) => {
                                    quota_full.store(true, Ordering::Relaxed)
                                }
                                Some(Refusal::Object) => {}
                                None => failed.store(true, Ordering::Relaxed),
                            }
                        }
                        (job, Some(r))
                    }
                })
                .buffer_unordered(concurrency);
            while let Some((job, result)) = results.next().await {
                let Some(result) = result else { continue };
                match result {
                    Ok(written) => {
                        if written.meta {
                            stats.meta_writes += 1;
                            this.count(&kind, "apply");
                        }
                        if job.status_body {
                            stats.status_writes += 1;
                            this.count(&kind, "apply-status");
                        }
                        let pending = Pending {
                            resource_version: written.resource_version,
                            meta: meta_fingerprint(&job.labels, job.owner.as_ref()),
                            status: json_fingerprint(&job.status),
                            at: Instant::now(),
                            meta_written: written.meta,
                        };
                        outcomes.push((job.name, Ok(pending)));
                    }
                    Err((verb, e)) => {
                        // A failed status write after a metadata write: the metadata write counts.
                        if verb == "apply-status" && job.meta {
                            stats.meta_writes += 1;
                            this.count(&kind, "apply");
                        }
                        throttled |= matches!(&e, kube::Error::Api(s) if s.code == 429);
                        let refused = Refused {
                            verb,
                            error: e,
                            labels: job.labels,
                            status: job.status,
                        };
                        outcomes.push((job.name, Err(Box::new(refused))));
                    }
                }
            }
        }
        stats.unchanged += unchanged;
        if !outcomes.is_empty() {
            let wall = stream_start.elapsed().as_secs_f64();
            let busy = busy_ns.load(Ordering::Relaxed) as f64 / 1e9;
            tracing::debug!(
                kind = %kind,
                reconciler = self.reconciler,
                objects = outcomes.len(),
                concurrency,
                wall_ms = wall * 1e3,
                mean_in_flight = busy / wall.max(1e-9),
                mean_object_ms = busy * 1e3 / outcomes.len() as f64,
                "objects written"
            );
            self.adapt_concurrency(throttled);
        }
        for (name, outcome) in outcomes {
            match outcome {
                Ok(pending) => {
                    self.failures.remove(&name);
                    if pending.meta_written {
                        self.deleted.remove(&name);
                    }
                    self.pending.insert(name, pending);
                }
                Err(r) => {
                    let alone = stop_on_error && refusal(&r.error).is_some();
                    let e = self.error(r.verb, &name, r.error);
                    self.record_failure(&e, "write", Some((r.labels, r.status)));
                    if alone {
                        refused += 1;
                        first_refusal.get_or_insert(e);
                    } else {
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        refused += skipped.load(Ordering::Relaxed);
        self.quota_was_full = quota_full.load(Ordering::Relaxed);
        // Failures of objects neither wanted nor there any more are over.
        self.failures
            .retain(|n, _| wanted.contains(n.as_str()) || existing.contains_key(n.as_str()));
        for (name, obj) in &existing {
            if stop_on_error && first_error.is_some() {
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
                    stats.deletes += 1;
                    self.count(K::kind(&()).as_ref(), "delete");
                    self.deleted.insert(name.to_string(), now);
                    self.pending.remove(*name);
                }
                Err(kube::Error::Api(s)) if s.is_not_found() => {
                    self.failures.remove(*name);
                }
                Err(e) => {
                    let e = self.error("delete", name, e);
                    self.record_failure(&e, "delete", None);
                    first_error.get_or_insert(e);
                }
            }
        }
        match (first_error, first_refusal) {
            (Some(e), _) => Err(e),
            (None, Some(first)) => Err(WriteError::Refused {
                kind: K::kind(&()).to_string(),
                namespace: self.namespace.clone(),
                refused,
                stats,
                first: Box::new(first),
            }),
            (None, None) => Ok(stats),
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
    fn plan<E: Existing<K::Status>>(
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
