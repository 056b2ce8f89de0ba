//! How long each part of an update takes, when the default (every operator, drain and reboot
//! 1–2 steps) is not enough: [`Durations`] sets each operator's and each node's steps, the
//! nodes' instance types and the earlier updates in the ClusterVersion history (a field of
//! [`SimConfig`](crate::SimConfig); `drifting.rs` makes series of them).

use jiff::Timestamp;

/// An earlier update, as the ClusterVersion history records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PastUpdate {
    /// Version updated to.
    pub version: String,
    /// `startedTime`.
    pub started: Timestamp,
    /// `completionTime`.
    pub completed: Timestamp,
}

/// Durations of one simulated update, in steps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Durations {
    /// Steps each operator takes, by operator index (`machine-config`, the last, completes
    /// with the master pool: its entry is not read). Missing entries: 1.
    pub operator_steps: Vec<u32>,
    /// Steps each node spends draining, applying its configuration and rebooting, by node
    /// index (master pool first). Missing entries: 1 each.
    pub node_steps: Vec<[u32; 3]>,
    /// `node.kubernetes.io/instance-type` of each node, by index (none when missing or empty).
    pub instance_types: Vec<String>,
    /// Earlier updates, newest first: they replace the default entry of `from_version` in the
    /// history (the installation stays the oldest). The first should be `from_version`'s.
    pub history: Vec<PastUpdate>,
}

impl Durations {
    pub(super) fn operator(&self, i: usize) -> u32 {
        self.operator_steps.get(i).copied().unwrap_or(1).max(1)
    }
    /// Steps of node `i` in phase `k` (0 drain, 1 apply, 2 reboot).
    pub(super) fn node(&self, i: usize, k: usize) -> u32 {
        self.node_steps
            .get(i)
            .and_then(|s| s.get(k))
            .copied()
            .unwrap_or(1)
            .max(1)
    }
    pub(super) fn instance_type(&self, i: usize) -> Option<&str> {
        self.instance_types
            .get(i)
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }
}
