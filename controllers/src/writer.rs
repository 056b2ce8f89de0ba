//! Writes desired objects: server-side apply of what changed, deletion of what is no longer
//! produced, nothing at all when nothing changed.
//!
//! Each reconciler owns its objects: they carry the label `update.openshift.io/reconciler=<name>`
//! and are applied with the field manager `update-status-controller/<name>`. Metadata (labels,
//! owner references) and `.status` are separate API calls (the status subresource), so a new
//! object costs two writes and a changed one one or two.
//!
//! The comparison is against the watch cache of our own objects. Right after a write the cache
//! may lag, so the writer remembers what it wrote ("pending") until the cache shows that
//! resourceVersion or [`PENDING_TTL`] passes; this keeps a burst of events from writing the
//! same content twice, and an object deleted behind our back is rewritten after the TTL.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// How long a write we made is trusted over a watch cache that does not show it yet.
pub const PENDING_TTL: Duration = Duration::from_secs(30);

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

/// An object as a reconciler wants it.
#[derive(Clone, Debug, PartialEq)]
pub struct Desired<S> {
    /// Object name.
    pub name: String,
    /// Our labels (the writer adds the reconciler and managed-by labels).
    pub labels: BTreeMap<String, String>,
    /// The single owner (design.md), when known.
    pub owner: Option<OwnerReference>,
    /// Status content.
    pub status: S,
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

#[derive(Clone, Debug)]
struct Pending<S> {
    resource_version: Option<String>,
    labels: BTreeMap<String, String>,
    owner: Option<OwnerReference>,
    status: Option<S>,
    at: Instant,
}

/// Writes one kind for one reconciler in one namespace.
pub struct Writer<K: StatusObject> {
    api: Api<K>,
    namespace: String,
    reconciler: &'static str,
    manager: String,
    pending: HashMap<String, Pending<K::Status>>,
    deleted: HashMap<String, Instant>,
    metrics: Arc<Metrics>,
}

/// Is this label ours (so its absence in the desired set means "remove")?
fn our_label(key: &str) -> bool {
    key.starts_with("update.openshift.io/") || key == labels::MANAGED_BY
}

fn our_labels(all: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    all.iter()
        .filter(|(k, _)| our_label(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
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
            manager: format!("update-status-controller/{reconciler}"),
            pending: HashMap::new(),
            deleted: HashMap::new(),
            metrics,
        }
    }

    /// Label selector of this reconciler's objects.
    pub fn selector(reconciler: &str) -> String {
        format!("{}={reconciler}", labels::RECONCILER)
    }

    fn full_labels(&self, desired: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut l = desired.clone();
        l.insert(labels::RECONCILER.to_string(), self.reconciler.to_string());
        l.insert(
            labels::MANAGED_BY.to_string(),
            labels::MANAGED_BY_VALUE.to_string(),
        );
        l
    }

    /// Makes the objects of this reconciler exactly `desired`: applies what differs from
    /// `existing` (the watch cache), deletes the reconciler's objects not in `desired`.
    pub async fn sync(
        &mut self,
        desired: &[Desired<K::Status>],
        existing: &[Arc<K>],
    ) -> Result<SyncStats, WriteError> {
        let now = Instant::now();
        self.pending
            .retain(|_, p| now.duration_since(p.at) < PENDING_TTL);
        self.deleted
            .retain(|_, at| now.duration_since(*at) < PENDING_TTL);
        let existing: HashMap<String, &Arc<K>> = existing
            .iter()
            .filter(|o| {
                o.labels().get(labels::RECONCILER).map(String::as_str) == Some(self.reconciler)
            })
            .map(|o| (o.name_any(), o))
            .collect();
        let mut stats = SyncStats::default();
        let mut first_error = None;
        let mut wanted = HashSet::with_capacity(desired.len());
        for d in desired {
            wanted.insert(d.name.as_str());
            if let Err(e) = self
                .sync_one(d, existing.get(&d.name).copied(), &mut stats)
                .await
            {
                tracing::warn!(error = %e, "write failed");
                first_error.get_or_insert(e);
            }
        }
        for (name, obj) in &existing {
            if wanted.contains(name.as_str())
                || self.deleted.contains_key(name)
                || obj.meta().deletion_timestamp.is_some()
            {
                continue;
            }
            match self.api.delete(name, &DeleteParams::background()).await {
                Ok(_) => {
                    stats.deletes += 1;
                    self.metrics.write(K::kind(&()).as_ref(), "delete");
                    self.deleted.insert(name.clone(), now);
                    self.pending.remove(name);
                }
                Err(kube::Error::Api(s)) if s.is_not_found() => {}
                Err(e) => {
                    let e = self.error("delete", name, e);
                    tracing::warn!(error = %e, "delete failed");
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(stats),
        }
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

    async fn sync_one(
        &mut self,
        d: &Desired<K::Status>,
        existing: Option<&Arc<K>>,
        stats: &mut SyncStats,
    ) -> Result<(), WriteError> {
        let want_labels = self.full_labels(&d.labels);
        // What the object looks like, as far as we know: the cache, unless we wrote more
        // recently than the cache shows.
        let pending = self
            .pending
            .get(&d.name)
            .filter(|p| existing.is_none_or(|o| o.meta().resource_version != p.resource_version));
        let (have_labels, have_owner, have_status, exists) = match (pending, existing) {
            (Some(p), _) => (p.labels.clone(), p.owner.clone(), p.status.clone(), true),
            (None, Some(o)) => (
                our_labels(o.labels()),
                o.meta()
                    .owner_references
                    .as_ref()
                    .and_then(|r| r.first().cloned()),
                o.status_ref().cloned(),
                true,
            ),
            (None, None) => (BTreeMap::new(), None, None, false),
        };
        let meta_ok = exists
            && have_labels == want_labels
            && same_owner(have_owner.as_ref(), d.owner.as_ref());
        let status_ok = have_status.as_ref() == Some(&d.status);
        if meta_ok && status_ok {
            stats.unchanged += 1;
            return Ok(());
        }
        let params = PatchParams::apply(&self.manager).force();
        let kind = K::kind(&()).to_string();
        let api_version = K::api_version(&()).to_string();
        let mut rv = None;
        if !meta_ok {
            let body = serde_json::json!({
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {
                    "name": d.name,
                    "labels": want_labels,
                    "ownerReferences": d.owner.iter().collect::<Vec<_>>(),
                },
                "spec": {},
            });
            let obj = self
                .api
                .patch(&d.name, &params, &Patch::Apply(&body))
                .await
                .map_err(|e| self.error("apply", &d.name, e))?;
            stats.meta_writes += 1;
            self.metrics.write(&kind, "apply");
            rv = obj.meta().resource_version.clone();
            self.deleted.remove(&d.name);
        }
        if !status_ok || !exists {
            let status =
                serde_json::to_value(&d.status).map_err(|source| WriteError::Serialize {
                    name: d.name.clone(),
                    source,
                })?;
            let body = serde_json::json!({
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": d.name},
                "status": status,
            });
            let obj = self
                .api
                .patch_status(&d.name, &params, &Patch::Apply(&body))
                .await
                .map_err(|e| self.error("apply-status", &d.name, e))?;
            stats.status_writes += 1;
            self.metrics.write(&kind, "apply-status");
            rv = obj.meta().resource_version.clone();
        }
        self.pending.insert(
            d.name.clone(),
            Pending {
                resource_version: rv,
                labels: want_labels,
                owner: d.owner.clone(),
                status: Some(d.status.clone()),
                at: Instant::now(),
            },
        );
        Ok(())
    }
}

/// An owner reference to an input object (never a controller reference, never blocking owner
/// deletion: we must not hold up the deletion of a Node or a pool).
pub fn owner_ref<K: Resource<DynamicType = ()>>(obj: &K) -> Option<OwnerReference> {
    let meta = obj.meta();
    Some(OwnerReference {
        api_version: K::api_version(&()).to_string(),
        kind: K::kind(&()).to_string(),
        name: meta.name.clone()?,
        uid: meta.uid.clone()?,
        controller: None,
        block_owner_deletion: None,
    })
}
