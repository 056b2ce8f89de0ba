//! Control-plane assessment (algorithms.md sections B and D.1–D.5). Being written.

use jiff::Timestamp;
use update_status_api::crd::{ControlPlaneUpdateStatusStatus, UpdateInsightStatus};

use super::ClusterInputs;
use super::nodes::PoolAssessment;

/// Assessment of the control plane.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControlPlaneAssessment {
    /// ControlPlaneUpdateStatus content.
    pub status: ControlPlaneUpdateStatusStatus,
    /// ClusterVersion and ClusterOperator progress insights, then control-plane health insights.
    pub insights: Vec<UpdateInsightStatus>,
}

/// Assesses the control plane; `None` without a ClusterVersion.
pub fn assess_control_plane(
    inputs: &ClusterInputs<'_>,
    _master_pool: Option<&PoolAssessment>,
    _now: Timestamp,
) -> Option<ControlPlaneAssessment> {
    inputs
        .cluster_version
        .map(|_| ControlPlaneAssessment::default())
}
