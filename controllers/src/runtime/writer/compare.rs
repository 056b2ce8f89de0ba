//! Our kinds as the writer sees them ([`StatusObject`]: metadata plus a `.status` we own
//! entirely) and how an existing object is compared with the desired one: our labels only (the
//! reconciler's and managed-by labels added, [`written_labels`]), the owner, the status.

use std::collections::BTreeMap;
use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus, UpdateInsight, UpdateInsightStatus,
    WorkerPoolUpdateStatus, WorkerPoolUpdateStatusStatus, labels,
};

use crate::runtime::existing::{OurObject, our_label};

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

impl<K: StatusObject> OurObject<K::Status> for K {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::writer::tests::map;

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
