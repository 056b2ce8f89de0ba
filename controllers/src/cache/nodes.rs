//! Nodes as the controller's watch cache holds them: [`CompactNode`].
//!
//! A Node trimmed to what the assessment reads ([`trim_node`]) still cost about 3 KB in kube's
//! store: its `ObjectMeta` (about 330 bytes inline), two label and annotation B-trees (a
//! B-tree node holds 11 entries whatever the count, about 540 bytes each) and their strings.
//! Yet across a cluster the label keys, most label values (role, zone, arch, os) and the
//! machine-config annotations (rendered config names, `Done`, the drain requests) are the same
//! few strings. A [`CompactNode`] keeps the name, uid and resourceVersion, its labels and
//! annotations as sorted slices of shared strings ([`intern`]), `unschedulable` and the
//! trimmed conditions: under 1 KB per node. The incremental core reads it through
//! [`NodeSource`]: names, resourceVersions and uids on every pass, labels for pool membership,
//! and the whole [`Node`], built by [`CompactNode::to_node`], only for a node it assesses
//! again.
//!
//! kube's store holds any type implementing its
//! [`Lookup`](kube::runtime::reflector::Lookup) trait, so this is an event mapping
//! in front of kube's reflector. The interner is ours: no interning crate is among our
//! dependencies, and this one is a few lines over a `HashSet<Arc<str>>` that frees the strings
//! no node uses any more.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex};

use jiff::Timestamp;
use kube::api::ObjectMeta;
use update_status_api::input::{Condition, Node, NodeSpec, NodeStatus};

use crate::runtime::existing::Cached;
use update_status_assess::nodes::NodeSource;

use update_status_assess::nodes::trim_node;

/// A Node reduced to what the assessment reads, with shared strings (see the module
/// documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct CompactNode {
    name: Box<str>,
    uid: Option<Box<str>>,
    resource_version: Option<Box<str>>,
    /// Sorted by key.
    labels: Box<[(Arc<str>, Arc<str>)]>,
    /// Sorted by key.
    annotations: Box<[(Arc<str>, Arc<str>)]>,
    unschedulable: bool,
    conditions: Box<[CompactCondition]>,
}

/// A node condition as [`trim_node`] leaves it.
#[derive(Clone, Debug, PartialEq)]
struct CompactCondition {
    type_: Arc<str>,
    status: Arc<str>,
    reason: Box<str>,
    message: Box<str>,
    last_transition_time: Option<Timestamp>,
}

impl CompactNode {
    /// `node` trimmed ([`trim_node`]) and compacted.
    pub fn new(mut node: Node) -> Self {
        trim_node(&mut node);
        let meta = node.metadata;
        CompactNode {
            name: meta.name.unwrap_or_default().into_boxed_str(),
            uid: meta.uid.map(String::into_boxed_str),
            resource_version: meta.resource_version.map(String::into_boxed_str),
            labels: interned(meta.labels),
            annotations: interned(meta.annotations),
            unschedulable: node.spec.unschedulable,
            conditions: node
                .status
                .conditions
                .into_iter()
                .map(|c| CompactCondition {
                    type_: intern(&c.type_),
                    status: intern(&c.status),
                    reason: c.reason.into_boxed_str(),
                    message: c.message.into_boxed_str(),
                    last_transition_time: c.last_transition_time,
                })
                .collect(),
        }
    }

    /// A fingerprint of what the estimates read of this node (`reconcilers/estimates.rs`): its
    /// name, labels and machine-config annotations, `unschedulable` and `Ready`. The strings
    /// are hashed by address: interned, an equal string is the same one while a node holds
    /// it (a string freed and interned again only costs a pass). A kubelet heartbeat leaves
    /// it as it was.
    pub fn timing_key(&self) -> u64 {
        use std::hash::{BuildHasher, Hash, Hasher};
        let mut h = foldhash::fast::FixedState::default().build_hasher();
        self.name.hash(&mut h);
        for (k, v) in self.labels.iter().chain(self.annotations.iter()) {
            std::ptr::hash(Arc::as_ptr(k), &mut h);
            std::ptr::hash(Arc::as_ptr(v), &mut h);
        }
        self.unschedulable.hash(&mut h);
        update_status_assess::estimates::TimedNode::ready(self).hash(&mut h);
        h.finish()
    }

    /// The Node again: what [`trim_node`] left of it (empty label and annotation maps as
    /// none).
    pub fn to_node(&self) -> Node {
        let map = |kv: &[(Arc<str>, Arc<str>)]| -> Option<BTreeMap<String, String>> {
            (!kv.is_empty()).then(|| {
                kv.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
        };
        Node {
            metadata: ObjectMeta {
                name: (!self.name.is_empty()).then(|| self.name.to_string()),
                uid: self.uid.as_deref().map(str::to_string),
                resource_version: self.resource_version.as_deref().map(str::to_string),
                labels: map(&self.labels),
                annotations: map(&self.annotations),
                ..ObjectMeta::default()
            },
            spec: NodeSpec {
                unschedulable: self.unschedulable,
            },
            status: NodeStatus {
                conditions: self
                    .conditions
                    .iter()
                    .map(|c| Condition {
                        type_: c.type_.to_string(),
                        status: c.status.to_string(),
                        reason: c.reason.to_string(),
                        message: c.message.to_string(),
                        last_transition_time: c.last_transition_time,
                    })
                    .collect(),
            },
        }
    }
}

/// `map` as a slice of interned pairs, sorted by key (a `BTreeMap` iterates in key order).
fn interned(map: Option<BTreeMap<String, String>>) -> Box<[(Arc<str>, Arc<str>)]> {
    map.into_iter()
        .flatten()
        .map(|(k, v)| (intern(&k), intern(&v)))
        .collect()
}

/// The value of `key` in a slice sorted by key.
fn lookup<'a>(kv: &'a [(Arc<str>, Arc<str>)], key: &str) -> Option<&'a str> {
    kv.binary_search_by(|(k, _)| (**k).cmp(key))
        .ok()
        .map(|i| &*kv[i].1)
}

/// The strings shared by the cached nodes.
struct Interner {
    strings: HashSet<Arc<str>>,
    /// Size at which the strings no node holds any more are dropped.
    prune_at: usize,
}

/// Fewest strings kept before the interner first prunes.
const MIN_PRUNE: usize = 4096;

static INTERNER: LazyLock<Mutex<Interner>> = LazyLock::new(|| {
    Mutex::new(Interner {
        strings: HashSet::new(),
        prune_at: MIN_PRUNE,
    })
});

/// The shared copy of `s`. Strings no node uses any more are dropped once the set has doubled
/// since it was last pruned, so it stays within twice what the nodes use.
pub fn intern(s: &str) -> Arc<str> {
    // A plain set: consistent whatever panicked while holding the lock.
    let mut i = INTERNER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(a) = i.strings.get(s) {
        return a.clone();
    }
    if i.strings.len() >= i.prune_at {
        i.strings.retain(|a| Arc::strong_count(a) > 1);
        i.strings.shrink_to_fit();
        i.prune_at = (2 * i.strings.len()).max(MIN_PRUNE);
    }
    let a: Arc<str> = Arc::from(s);
    i.strings.insert(a.clone());
    a
}

impl NodeSource for CompactNode {
    fn name(&self) -> &str {
        &self.name
    }
    fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }
    fn uid(&self) -> Option<&str> {
        self.uid.as_deref()
    }
    fn label(&self, key: &str) -> Option<&str> {
        lookup(&self.labels, key)
    }
    fn node(&self) -> Cow<'_, Node> {
        Cow::Owned(self.to_node())
    }
}

/// What the estimates read (`reconcilers/estimates.rs`), without building the Node.
impl update_status_assess::estimates::TimedNode for CompactNode {
    fn annotation(&self, key: &str) -> Option<&str> {
        lookup(&self.annotations, key)
    }
    fn unschedulable(&self) -> bool {
        self.unschedulable
    }
    fn ready(&self) -> bool {
        self.conditions
            .iter()
            .rev()
            .find(|c| &*c.type_ == "Ready")
            .is_some_and(|c| &*c.status == "True")
    }
}

impl Cached for CompactNode {
    fn cached_name(&self) -> &str {
        &self.name
    }
    fn cached_namespace(&self) -> Option<&str> {
        None
    }
    fn cached_resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }
    fn cached_label(&self, key: &str) -> Option<&str> {
        lookup(&self.labels, key)
    }
    fn cached_deleting(&self) -> bool {
        false
    }
}

crate::cache::insights::lookup_as!(CompactNode, Node);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn condition(
        type_: &str,
        status: &str,
        reason: &str,
        message: &str,
        at: &str,
    ) -> serde_json::Value {
        json!({"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": at})
    }

    fn node(i: usize, ready: &str) -> Node {
        serde_json::from_value(json!({
            "metadata": {
                "name": format!("ip-10-0-{i}"), "uid": format!("uid-{i}"), "resourceVersion": "7",
                "labels": {
                    "node-role.kubernetes.io/worker": "",
                    "kubernetes.io/hostname": format!("ip-10-0-{i}"),
                    "topology.kubernetes.io/zone": "us-east-2a",
                },
                "annotations": {
                    "machineconfiguration.openshift.io/currentConfig": "rendered-worker-1",
                    "machineconfiguration.openshift.io/state": "Done",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "managedFields": [{"manager": "kubelet"}],
            },
            "spec": {"unschedulable": i.is_multiple_of(2)},
            "status": {"conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "fine", "2026-01-01T00:00:00Z"),
                condition("Ready", ready, "KubeletNotReady", "PLEG is not healthy", "2026-01-01T00:02:00Z"),
            ]},
        }))
        .expect("a node")
    }

    #[test]
    fn a_compact_node_gives_back_the_trimmed_node() {
        for (i, ready) in [(1, "True"), (2, "False"), (3, "Unknown")] {
            let whole = node(i, ready);
            let mut trimmed = whole.clone();
            trim_node(&mut trimmed);
            let c = CompactNode::new(whole);
            assert_eq!(c.to_node(), trimmed);
            assert_eq!(*c.node(), trimmed);
            assert_eq!(NodeSource::name(&c), format!("ip-10-0-{i}"));
            assert_eq!(NodeSource::uid(&c), Some(format!("uid-{i}").as_str()));
            assert_eq!(NodeSource::resource_version(&c), Some("7"));
            assert_eq!(c.label("topology.kubernetes.io/zone"), Some("us-east-2a"));
            assert_eq!(c.label("node-role.kubernetes.io/worker"), Some(""));
            assert_eq!(c.label("node-role.kubernetes.io/master"), None);
            assert_eq!(
                c.cached_label("kubernetes.io/hostname"),
                Some(c.cached_name())
            );
        }
        // Nothing at all: no name, no maps, no conditions.
        let empty = CompactNode::new(Node::default());
        assert_eq!(empty.to_node(), Node::default());
        assert_eq!(empty.label("a"), None);
    }

    #[test]
    fn nodes_share_their_strings() {
        let (a, b) = (
            CompactNode::new(node(1, "True")),
            CompactNode::new(node(2, "True")),
        );
        let zone = |c: &CompactNode| {
            c.labels
                .iter()
                .find(|(k, _)| &**k == "topology.kubernetes.io/zone")
                .map(|(k, v)| (k.clone(), v.clone()))
        };
        let ((ka, va), (kb, vb)) = (zone(&a).expect("zone"), zone(&b).expect("zone"));
        assert!(Arc::ptr_eq(&ka, &kb) && Arc::ptr_eq(&va, &vb));
        assert!(Arc::ptr_eq(&a.conditions[0].type_, &b.conditions[0].type_));
    }

    #[test]
    fn the_interner_drops_strings_no_one_holds() {
        let kept = intern("kept-by-a-node");
        for i in 0..3 * MIN_PRUNE {
            drop(intern(&format!("transient-{i}")));
        }
        let i = INTERNER.lock().unwrap_or_else(|e| e.into_inner());
        assert!(i.strings.len() <= 2 * MIN_PRUNE, "{}", i.strings.len());
        assert!(i.strings.contains("kept-by-a-node"));
        drop(kept);
    }
}
