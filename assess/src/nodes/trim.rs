//! What the assessment reads of a Node, for caches that keep thousands of them: [`trim_node`]
//! drops the rest. `assess/tests/offline_statuses.rs` checks that trimmed nodes give the same
//! statuses as whole ones on every fixture and on random clusters.

use update_status_api::input::{MCO_PREFIX, Node};

/// The node conditions [`super::Availability::of`] reads, each with the status in which it
/// reads nothing more (its message and transition time are read only otherwise).
const READ_CONDITIONS: [(&str, &str); 3] = [
    ("Ready", "True"),
    ("DiskPressure", "False"),
    ("NetworkUnavailable", "False"),
];

/// Drops from a Node what the assessment never reads:
/// - annotations other than the machine-config daemon's (`machineconfiguration.openshift.io/...`),
///   owner references, managed fields, finalizers, timestamps;
/// - conditions other than `Ready`, `DiskPressure` and `NetworkUnavailable` (a real node also
///   has `MemoryPressure` and `PIDPressure`), the reasons of those kept, and the message and
///   transition time of those in their good state (`Ready=True`, the others `False`).
///
/// Kept: name, uid and resourceVersion (the per-node caches key on them), every label (any
/// label may be in a pool's node selector), the MCO annotations, `unschedulable`. Run it after
/// decoding, so a Node with a field of the wrong type is still reported unreadable.
pub fn trim_node(node: &mut Node) {
    let meta = &mut node.metadata;
    if let Some(a) = meta.annotations.as_mut() {
        a.retain(|k, _| k.starts_with(MCO_PREFIX));
    }
    meta.owner_references = None;
    meta.managed_fields = None;
    meta.finalizers = None;
    meta.creation_timestamp = None;
    meta.generate_name = None;
    meta.generation = None;
    let conditions = &mut node.status.conditions;
    conditions.retain(|c| READ_CONDITIONS.iter().any(|(t, _)| c.type_ == *t));
    for c in conditions.iter_mut() {
        c.reason = String::new();
        if READ_CONDITIONS.contains(&(c.type_.as_str(), c.status.as_str())) {
            c.message = String::new();
            c.last_transition_time = None;
        }
    }
    conditions.shrink_to_fit();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{condition, from_json};
    use serde_json::json;

    #[test]
    fn keeps_what_availability_reads() {
        let mut n: Node = from_json(json!({
            "metadata": {
                "name": "n1", "uid": "u1", "resourceVersion": "7",
                "labels": {"node-role.kubernetes.io/worker": "", "topology.kubernetes.io/zone": "a"},
                "annotations": {
                    "machineconfiguration.openshift.io/state": "Done",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "ownerReferences": [{"apiVersion": "v1", "kind": "Machine", "name": "m", "uid": "x"}],
            },
            "spec": {"unschedulable": true},
            "status": {"conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "fine", "2026-01-01T00:00:00Z"),
                condition("DiskPressure", "True", "KubeletHasDiskPressure", "disk full", "2026-01-01T00:01:00Z"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "fine", "2026-01-01T00:00:00Z"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", "2026-01-01T00:02:00Z"),
            ]},
        }));
        trim_node(&mut n);
        assert_eq!(n.metadata.name.as_deref(), Some("n1"));
        assert_eq!(n.metadata.uid.as_deref(), Some("u1"));
        assert_eq!(n.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(n.metadata.labels.as_ref().map(|l| l.len()), Some(2));
        assert_eq!(
            n.annotation("machineconfiguration.openshift.io/state"),
            Some("Done")
        );
        assert_eq!(n.metadata.annotations.as_ref().map(|a| a.len()), Some(1));
        assert!(n.metadata.owner_references.is_none());
        assert!(n.spec.unschedulable);
        let c = &n.status.conditions;
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].type_.as_str(), c[0].status.as_str()),
            ("DiskPressure", "True")
        );
        assert_eq!(
            c[0].message, "disk full",
            "a bad condition keeps its message"
        );
        assert!(c[0].last_transition_time.is_some() && c[0].reason.is_empty());
        assert_eq!(
            (c[1].type_.as_str(), c[1].status.as_str()),
            ("Ready", "True")
        );
        assert!(c[1].message.is_empty() && c[1].last_transition_time.is_none());
    }
}
