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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus, UpdateInsight, UpdateInsightStatus,
    WorkerPoolUpdateStatus, WorkerPoolUpdateStatusStatus, labels,
};

use crate::metrics::Metrics;
use crate::runtime::existing::{Cached, Existing, our_label};
pub use crate::runtime::refusal::{QUOTA_REQUIRED_POLICY, Refusal, refusal};

/// The objects written: what [`update_status_assess::compose`] produces, complete.
pub use update_status_assess::compose::Desired;

/// How long a write we made is trusted over a watch cache that does not show it yet.
pub const PENDING_TTL: Duration = Duration::from_secs(30);

/// Wait before retrying an object whose write failed once.
pub const RETRY_FIRST: Duration = Duration::from_secs(1);
/// Longest wait before retrying an object whose writes keep failing.
pub const RETRY_CAP: Duration = Duration::from_secs(300);

/// The `reason` label of `update_status_write_errors_total` for a failed call: from the HTTP
/// status (`invalid` 422, `conflict` 409, `forbidden` 403, `unauthorized` 401, `not-found` 404,
/// `throttled` 429, `server` 5xx, `api` other codes), `connect` when the API server was not
/// reached, `other` otherwise.
pub fn error_reason(e: &kube::Error) -> &'static str {
    match e {
        kube::Error::Api(s) => match s.code {
            401 => "unauthorized",
            403 => "forbidden",
            404 => "not-found",
            409 => "conflict",
            422 => "invalid",
            429 => "throttled",
            500..=599 => "server",
            _ => "api",
        },
        kube::Error::HyperError(_) | kube::Error::Service(_) => "connect",
        _ => "other",
    }
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

/// Consecutive failures of one object's writes, when it may be tried again, and the content
/// that failed (new content is tried at once: the input changed, e.g. after an outage).
#[derive(Clone, Debug)]
struct Failure<S> {
    count: u32,
    retry_at: Instant,
    /// The labels and status refused (`None`: a deletion).
    content: Option<(BTreeMap<String, String>, S)>,
}

/// Errors while writing.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The API server refused or failed a call.
    #[error("{verb} {kind} {namespace}/{name}: {source}")]
    Api {
        /// `apply`, `apply-status`, `delete`.
        verb: &'static str,
        /// Kind written.
        kind: String,
        /// Namespace.
        namespace: String,
        /// Object name.
        name: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A hub refused some objects (each alone: [`refusal`]); the others were written.
    #[error(
        "{refused} {kind} object(s) refused in namespace {namespace} (the others are written); the first: {first}"
    )]
    Refused {
        /// Kind written.
        kind: String,
        /// Namespace.
        namespace: String,
        /// Objects refused or, once the quota was full, not tried.
        refused: u32,
        /// What the sync did besides.
        stats: SyncStats,
        /// The first refusal.
        first: Box<WriteError>,
    },
    /// A desired object could not be serialized (a bug).
    #[error("serializing {name}: {source}")]
    Serialize {
        /// Object name.
        name: String,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
}

/// One of our kinds: metadata plus a `.status` we own entirely.
pub trait StatusObject:
    Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
    + Clone
    + Debug
    + DeserializeOwned
    + Serialize
    + Send
    + Sync
    + 'static
{
    /// Type of `.status`.
    type Status: PartialEq + Serialize + Clone + Debug + Send + Sync;
    /// The object's status, if any.
    fn status_ref(&self) -> Option<&Self::Status>;
}

impl StatusObject for UpdateInsight {
    type Status = UpdateInsightStatus;
    fn status_ref(&self) -> Option<&UpdateInsightStatus> {
        self.status.as_ref()
    }
}

impl<K: StatusObject> Existing<K::Status> for K {
    fn labels_are(&self, desired: &BTreeMap<String, String>, reconciler: &str) -> bool {
        labels_match(self.labels(), desired, reconciler)
    }
    fn owner_is(&self, owner: Option<&OwnerReference>) -> bool {
        same_owner(
            self.meta()
                .owner_references
                .as_ref()
                .and_then(|r| r.first()),
            owner,
        )
    }
    fn status_is(&self, desired: &K::Status) -> bool {
        self.status_ref() == Some(desired)
    }
}

impl StatusObject for ControlPlaneUpdateStatus {
    type Status = ControlPlaneUpdateStatusStatus;
    fn status_ref(&self) -> Option<&ControlPlaneUpdateStatusStatus> {
        self.status.as_ref()
    }
}

impl StatusObject for WorkerPoolUpdateStatus {
    type Status = WorkerPoolUpdateStatusStatus;
    fn status_ref(&self) -> Option<&WorkerPoolUpdateStatusStatus> {
        self.status.as_ref()
    }
}

/// What a sync did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Metadata applies (creations included).
    pub meta_writes: u32,
    /// Status applies.
    pub status_writes: u32,
    /// Deletions.
    pub deletes: u32,
    /// Objects left as they were.
    pub unchanged: u32,
}

impl SyncStats {
    /// Total API writes.
    pub fn writes(&self) -> u32 {
        self.meta_writes + self.status_writes + self.deletes
    }
}

/// A write the watch cache may not show yet: its resourceVersion and fingerprints of what was
/// written (not copies: a first pass writes thousands of objects, all pending at once).
#[derive(Clone, Debug)]
struct Pending {
    resource_version: Option<String>,
    /// [`meta_fingerprint`] of the labels and owner written.
    meta: u64,
    /// [`json_fingerprint`] of the status written.
    status: u64,
    at: Instant,
    /// The metadata was applied (a creation included).
    meta_written: bool,
}

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

/// Feeds what is written to a hasher.
struct HashWriter(std::hash::DefaultHasher);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        std::hash::Hasher::write(&mut self.0, buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A 64-bit fingerprint of a value's JSON (equal values, equal JSON: our types serialize
/// deterministically, maps are B-trees). Allocates nothing.
fn json_fingerprint<T: Serialize>(value: &T) -> u64 {
    let mut w = HashWriter(std::hash::DefaultHasher::new());
    // Our status types always serialize; were one to fail, the partial fingerprint would only
    // make the object look changed (one extra write).
    let _ = serde_json::to_writer(&mut w, value);
    std::hash::Hasher::finish(&w.0)
}

/// Fingerprint of an object's labels (as written: with the reconciler's) and owner.
fn meta_fingerprint(labels: &BTreeMap<String, String>, owner: Option<&OwnerReference>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    labels.hash(&mut h);
    owner.map(|o| (&o.uid, &o.kind, &o.name)).hash(&mut h);
    h.finish()
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

/// The field manager of `reconciler`'s applies.
pub fn field_manager(reconciler: &str) -> String {
    format!("update-status-controller/{reconciler}")
}

/// The labels `reconciler`'s writer applies for `desired`: those plus the reconciler's and
/// managed-by labels.
pub fn written_labels(
    desired: &BTreeMap<String, String>,
    reconciler: &str,
) -> BTreeMap<String, String> {
    let mut l = desired.clone();
    l.insert(labels::RECONCILER.to_string(), reconciler.to_string());
    l.insert(
        labels::MANAGED_BY.to_string(),
        labels::MANAGED_BY_VALUE.to_string(),
    );
    l
}

/// Do an object's labels `have` equal `desired` plus the reconciler's and managed-by labels,
/// as far as our labels go (labels set by others are left alone)? Allocates nothing.
fn labels_match(
    have: &BTreeMap<String, String>,
    desired: &BTreeMap<String, String>,
    reconciler: &str,
) -> bool {
    let fixed = |k: &str| k == labels::RECONCILER || k == labels::MANAGED_BY;
    let want = |k: &str| -> Option<&str> {
        if k == labels::RECONCILER {
            Some(reconciler)
        } else if k == labels::MANAGED_BY {
            Some(labels::MANAGED_BY_VALUE)
        } else {
            desired.get(k).map(String::as_str)
        }
    };
    // Every wanted label is there with its value...
    let present = [labels::RECONCILER, labels::MANAGED_BY]
        .into_iter()
        .chain(desired.keys().map(String::as_str).filter(|k| !fixed(k)))
        .all(|k| have.get(k).map(String::as_str) == want(k));
    // ...and no label of ours is there that we do not want.
    present
        && have
            .keys()
            .filter(|k| our_label(k))
            .all(|k| want(k).is_some())
}

fn same_owner(a: Option<&OwnerReference>, b: Option<&OwnerReference>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.uid == b.uid && a.kind == b.kind && a.name == b.name,
        _ => false,
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
        let wait = crate::runtime::clock::backoff(
            RETRY_FIRST,
            RETRY_CAP,
            count,
            crate::runtime::clock::jitter(),
        )
        .max(retry_after(source).unwrap_or_default().min(RETRY_CAP));
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
/// The writes one object needs.
struct Job<S> {
    name: String,
    /// The object does not exist yet (as far as we know).
    create: bool,
    /// Apply the metadata: the labels or the owner changed (or a creation).
    meta: bool,
    /// Apply the status: it changed (or a creation).
    status_body: bool,
    labels: BTreeMap<String, String>,
    owner: Option<OwnerReference>,
    status: S,
}

/// Body of a metadata apply (serialized straight from the desired object: the bodies of a
/// large sync never all exist at once).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct MetaBody<'a> {
    api_version: &'a str,
    kind: &'a str,
    metadata: MetaPart<'a>,
    spec: Empty,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct MetaPart<'a> {
    name: &'a str,
    labels: &'a BTreeMap<String, String>,
    owner_references: Vec<&'a OwnerReference>,
}

#[derive(Serialize, Debug)]
struct Empty {}

/// Body of a status apply.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct StatusBody<'a, S> {
    api_version: &'a str,
    kind: &'a str,
    metadata: NamePart<'a>,
    status: &'a S,
}

#[derive(Serialize, Debug)]
struct NamePart<'a> {
    name: &'a str,
}

/// Runs a job's writes; returns the last resourceVersion, or the verb that failed.
async fn execute<K: StatusObject, S: Serialize + Debug>(
    api: &Api<K>,
    params: &PatchParams,
    job: &Job<S>,
) -> Result<Written, (&'static str, kube::Error)> {
    let mut written = Written::default();
    if job.meta {
        written.resource_version = apply_meta(api, params, job).await?;
        written.meta = true;
    }
    if job.status_body {
        let status = apply_status(api, params, job).await;
        written.resource_version = match status {
            // Deleted behind our back since we last saw it (e.g. while the API server was away
            // and our cache did not show it yet): create it again now, not after a retry.
            Err(kube::Error::Api(s)) if s.is_not_found() && !written.meta => {
                apply_meta(api, params, job).await?;
                written.meta = true;
                apply_status(api, params, job).await
            }
            other => other,
        }
        .map_err(|e| ("apply-status", e))?;
    }
    Ok(written)
}

/// What [`execute`] wrote.
#[derive(Default)]
struct Written {
    /// The object's resourceVersion after the last write.
    resource_version: Option<String>,
    /// Whether its metadata was applied (a creation included).
    meta: bool,
}

async fn apply_meta<K: StatusObject, S: Serialize + Debug>(
    api: &Api<K>,
    params: &PatchParams,
    job: &Job<S>,
) -> Result<Option<String>, (&'static str, kube::Error)> {
    let kind = K::kind(&());
    let api_version = K::api_version(&());
    let body = MetaBody {
        api_version: &api_version,
        kind: &kind,
        metadata: MetaPart {
            name: &job.name,
            labels: &job.labels,
            owner_references: job.owner.iter().collect(),
        },
        spec: Empty {},
    };
    let obj = api
        .patch(&job.name, params, &Patch::Apply(&body))
        .await
        .map_err(|e| ("apply", e))?;
    Ok(obj.meta().resource_version.clone())
}

async fn apply_status<K: StatusObject, S: Serialize + Debug>(
    api: &Api<K>,
    params: &PatchParams,
    job: &Job<S>,
) -> Result<Option<String>, kube::Error> {
    let kind = K::kind(&());
    let api_version = K::api_version(&());
    let body = StatusBody {
        api_version: &api_version,
        kind: &kind,
        metadata: NamePart { name: &job.name },
        status: &job.status,
    };
    let obj = api
        .patch_status(&job.name, params, &Patch::Apply(&body))
        .await?;
    Ok(obj.meta().resource_version.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
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

    #[test]
    fn labels_match_ours_and_ignore_the_others() {
        let desired = map(&[
            (labels::INSIGHT_TYPE, "progress"),
            (labels::ASSESSMENT, "outdated"),
            (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
        ]);
        let mut have = map(&[
            (labels::INSIGHT_TYPE, "progress"),
            (labels::ASSESSMENT, "outdated"),
            (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
            (labels::RECONCILER, "worker-pools"),
            ("team", "someone else's"),
        ]);
        assert!(labels_match(&have, &desired, "worker-pools"));
        // Another reconciler's object.
        assert!(!labels_match(&have, &desired, "control-plane"));
        // A changed value.
        have.insert(labels::ASSESSMENT.into(), "progressing".into());
        assert!(!labels_match(&have, &desired, "worker-pools"));
        have.insert(labels::ASSESSMENT.into(), "outdated".into());
        // A label of ours we no longer want.
        have.insert(labels::SOURCE.into(), "node-degraded".into());
        assert!(!labels_match(&have, &desired, "worker-pools"));
        have.remove(labels::SOURCE);
        // A missing one.
        have.remove(labels::INSIGHT_TYPE);
        assert!(!labels_match(&have, &desired, "worker-pools"));
        // The same decision as comparing the full label sets.
        let full = |d: &BTreeMap<String, String>, r: &str| {
            let mut l = d.clone();
            l.insert(labels::RECONCILER.into(), r.into());
            l.insert(labels::MANAGED_BY.into(), labels::MANAGED_BY_VALUE.into());
            l
        };
        let ours = |h: &BTreeMap<String, String>| -> BTreeMap<String, String> {
            h.iter()
                .filter(|(k, _)| our_label(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let have = full(&desired, "worker-pools");
        assert_eq!(
            labels_match(&have, &desired, "worker-pools"),
            ours(&have) == full(&desired, "worker-pools")
        );
    }
}
