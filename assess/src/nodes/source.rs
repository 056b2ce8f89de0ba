//! [`NodeSource`]: a Node as a cache holds it. The incremental core compares a node's name,
//! resourceVersion and uid on every pass, reads its labels to tell its pool, and needs the
//! whole [`Node`] only when it assesses it again; a cache may hold a compact form and build
//! the Node then (the controller does: `controllers/src/cache/nodes.rs`).

use std::borrow::Cow;
use std::sync::Arc;

use update_status_api::input::Node;

/// A node as a cache holds it (see the module documentation).
pub trait NodeSource {
    /// Its name (empty if unset).
    fn name(&self) -> &str;
    /// Its resourceVersion.
    fn resource_version(&self) -> Option<&str>;
    /// Its uid.
    fn uid(&self) -> Option<&str>;
    /// The value of its label `key`.
    fn label(&self, key: &str) -> Option<&str>;
    /// The Node itself (built, for a compact form).
    fn node(&self) -> Cow<'_, Node>;
}

impl NodeSource for Node {
    fn name(&self) -> &str {
        Node::name(self)
    }
    fn resource_version(&self) -> Option<&str> {
        self.metadata.resource_version.as_deref()
    }
    fn uid(&self) -> Option<&str> {
        self.metadata.uid.as_deref()
    }
    fn label(&self, key: &str) -> Option<&str> {
        self.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .map(String::as_str)
    }
    fn node(&self) -> Cow<'_, Node> {
        Cow::Borrowed(self)
    }
}

/// A pointer to a [`NodeSource`] is one (a cache hands out `Arc`s, iterators references).
macro_rules! node_source_through {
    ($($pointer:ty),*) => {$(
        impl<T: NodeSource> NodeSource for $pointer {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn resource_version(&self) -> Option<&str> {
                (**self).resource_version()
            }
            fn uid(&self) -> Option<&str> {
                (**self).uid()
            }
            fn label(&self, key: &str) -> Option<&str> {
                (**self).label(key)
            }
            fn node(&self) -> Cow<'_, Node> {
                (**self).node()
            }
        }
    )*};
}

node_source_through!(Arc<T>, &T);
