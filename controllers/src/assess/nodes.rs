//! Node and pool assessment (algorithms.md sections C and D.6–D.8). Being written.

use jiff::Timestamp;
use update_status_api::crd::{UpdateInsightStatus, WorkerPoolUpdateStatusStatus};

use super::ClusterInputs;

/// Assessment of every pool and its nodes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodesAssessment {
    /// One per MachineConfigPool, in pool order (the master pool included).
    pub pools: Vec<PoolAssessment>,
}

impl NodesAssessment {
    /// The master pool's assessment, which feeds the control plane's node summary.
    pub fn control_plane_pool(&self) -> Option<&PoolAssessment> {
        self.pools.iter().find(|p| p.is_master)
    }
}

/// Assessment of one pool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolAssessment {
    /// Pool name.
    pub name: String,
    /// `master`: its nodes are the control plane's.
    pub is_master: bool,
    /// Status content (for the master pool, its counts feed ControlPlaneUpdateStatus).
    pub status: WorkerPoolUpdateStatusStatus,
    /// Node progress insights, then node and pool health insights.
    pub insights: Vec<UpdateInsightStatus>,
}

/// Assesses every pool and node.
pub fn assess_nodes(_inputs: &ClusterInputs<'_>, _now: Timestamp) -> NodesAssessment {
    NodesAssessment::default()
}
