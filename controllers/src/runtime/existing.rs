//! What the writer and every other reader of a watch cache read of an existing object of ours,
//! whether the cache holds it whole or projected ([`Cached`]), and how the writer compares it
//! with the desired object ([`OurObject`]). The cache layer's projections
//! (`crate::cache::insights`) implement both.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use update_status_api::crd::labels;

/// What readers of a watch cache read of a cached object, whether it is cached whole or
/// projected: its name, namespace, resourceVersion, some labels, whether it is being deleted.
pub trait Cached {
    /// The object's name (empty if unset).
    fn cached_name(&self) -> &str;
    /// The object's namespace.
    fn cached_namespace(&self) -> Option<&str>;
    /// The object's resourceVersion.
    fn cached_resource_version(&self) -> Option<&str>;
    /// The value of label `key`. A projected object keeps only the labels its readers select
    /// on (see `crate::cache::insights::ProgressEntry`).
    fn cached_label(&self, key: &str) -> Option<&str>;
    /// Whether the object has a deletion timestamp.
    fn cached_deleting(&self) -> bool;
}

impl<K: Resource> Cached for K {
    fn cached_name(&self) -> &str {
        self.meta().name.as_deref().unwrap_or_default()
    }
    fn cached_namespace(&self) -> Option<&str> {
        self.meta().namespace.as_deref()
    }
    fn cached_resource_version(&self) -> Option<&str> {
        self.meta().resource_version.as_deref()
    }
    fn cached_label(&self, key: &str) -> Option<&str> {
        self.meta()
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .map(String::as_str)
    }
    fn cached_deleting(&self) -> bool {
        self.meta().deletion_timestamp.is_some()
    }
}

/// What [`Writer::sync`](super::writer::Writer::sync) reads of one of our objects in a watch cache: the object itself
/// (any [`StatusObject`](super::writer::StatusObject)), or a projection of it ([`crate::cache::insights::CachedInsight`]).
pub trait OurObject<S>: Cached {
    /// Whether its labels are, as far as our labels go, `desired` plus the reconciler's and
    /// managed-by labels. Allocates nothing.
    fn labels_are(&self, desired: &BTreeMap<String, String>, reconciler: &str) -> bool;
    /// Whether its (first) owner reference is `owner`.
    fn owner_is(&self, owner: Option<&OwnerReference>) -> bool;
    /// Whether its status is `desired`. Allocates nothing.
    fn status_is(&self, desired: &S) -> bool;
}

/// Is this label ours (so its absence in the desired set means "remove")?
pub fn our_label(key: &str) -> bool {
    key.starts_with("update.openshift.io/") || key == labels::MANAGED_BY
}
