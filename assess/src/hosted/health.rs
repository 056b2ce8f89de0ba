//! The hosted-only health rules (hosted.md §8 table) about the HostedCluster.

use jiff::{SignedDuration, Timestamp};
use update_status_api::crd::UpdateInsightStatus;

use super::HostedInputs;
use super::control_plane::HostedControlPlaneShare;

/// The HostedCluster's health insights (first version: none yet).
pub(super) fn hosted_cluster_insights(
    _inputs: &HostedInputs<'_>,
    _cp: &HostedControlPlaneShare,
    _now: Timestamp,
) -> Vec<UpdateInsightStatus> {
    Vec::new()
}

/// When time alone changes one of these insights.
pub(super) fn requeue_after(_inputs: &HostedInputs<'_>, _now: Timestamp) -> Option<SignedDuration> {
    None
}
