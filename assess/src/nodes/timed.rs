//! [`TimedNode`]: what the estimates read of a node.

use super::source::NodeSource;

/// What the estimates read of a node (the controller's cache holds compact nodes): its labels
/// (pool, role, instance type), the machine-config daemon's annotations, `unschedulable` and
/// `Ready`.
pub trait TimedNode: NodeSource {
    /// The value of an annotation.
    fn annotation(&self, key: &str) -> Option<&str>;
    /// `spec.unschedulable`.
    fn unschedulable(&self) -> bool;
    /// The last `Ready` condition is `True`.
    fn ready(&self) -> bool;
}

impl TimedNode for update_status_api::input::Node {
    fn annotation(&self, key: &str) -> Option<&str> {
        update_status_api::input::Node::annotation(self, key)
    }
    fn unschedulable(&self) -> bool {
        self.spec.unschedulable
    }
    fn ready(&self) -> bool {
        self.status
            .conditions
            .iter()
            .rev()
            .find(|c| c.type_ == "Ready")
            .is_some_and(|c| c.status == "True")
    }
}

impl<T: TimedNode> TimedNode for std::sync::Arc<T> {
    fn annotation(&self, key: &str) -> Option<&str> {
        (**self).annotation(key)
    }
    fn unschedulable(&self) -> bool {
        (**self).unschedulable()
    }
    fn ready(&self) -> bool {
        (**self).ready()
    }
}

impl<T: TimedNode> TimedNode for &T {
    fn annotation(&self, key: &str) -> Option<&str> {
        (**self).annotation(key)
    }
    fn unschedulable(&self) -> bool {
        (**self).unschedulable()
    }
    fn ready(&self) -> bool {
        (**self).ready()
    }
}
