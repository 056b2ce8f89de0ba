//! NodePool → WorkerPoolUpdateStatus (hosted.md §8).

use jiff::{SignedDuration, Timestamp};
use update_status_api::crd::{UpdateInsightStatus, WorkerPoolUpdateStatusStatus};

use super::HostedInputs;
use super::control_plane::HostedControlPlaneFacts;
use crate::compose::{Desired, Labels};

/// The NodePools' share.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePoolsShare {
    /// One WorkerPoolUpdateStatus per NodePool.
    pub statuses: Vec<Desired<WorkerPoolUpdateStatusStatus>>,
    /// Their progress and health insights.
    pub insights: Vec<Desired<UpdateInsightStatus>>,
    /// When time alone changes this share.
    pub requeue_after: Option<SignedDuration>,
}

/// The NodePools' share (first version: empty).
pub(super) fn node_pools_share(
    _inputs: &HostedInputs<'_>,
    _cp: &HostedControlPlaneFacts,
    _base: &Labels,
    _now: Timestamp,
) -> NodePoolsShare {
    NodePoolsShare::default()
}
