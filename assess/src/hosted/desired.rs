//! Every object update-status wants for one hosted cluster ([`desired_hosted`]): the control
//! plane's, the NodePools' and the HostedCluster's own health insights composed, with the
//! carry-over of what our objects already say.

use jiff::{SignedDuration, Timestamp};

use super::inputs::HostedInputs;
use super::{caps, control_plane, health, node_pools, objects};
use crate::compose::{DesiredCluster, Existing};

/// Every object update-status wants for one hosted cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DesiredHosted {
    /// The objects, all to be written into the HostedCluster's namespace: the
    /// ControlPlaneUpdateStatus named after the HostedCluster (owned by it), one
    /// WorkerPoolUpdateStatus per NodePool (named after it, owned by it) and the
    /// UpdateInsights (names embed the cluster name).
    pub cluster: DesiredCluster,
    /// When time alone will change the result: the soonest such instant minus now.
    pub requeue_after: Option<SignedDuration>,
}

/// Every object update-status wants for one hosted cluster, all to be written into the
/// HostedCluster's namespace: the ControlPlaneUpdateStatus named after the HostedCluster and owned
/// by it, one WorkerPoolUpdateStatus per NodePool (named after it, owned by it), and the
/// UpdateInsights (names unique per hosted cluster: they embed the cluster name; owners are the
/// HostedCluster, a NodePool, or never a hosted Node). Every object's labels include
/// `update.openshift.io/cluster=<name>` plus the standalone labels.
pub fn desired_hosted(
    inputs: &HostedInputs<'_>,
    existing: &Existing<'_>,
    now: Timestamp,
) -> DesiredHosted {
    // At most so many of the hosted cluster's own objects (issue #29: a tenant cannot exhaust
    // the controller), and one insight saying so past a cap.
    let (capped, over) = caps::capped(inputs);
    let inputs = &capped;
    let base = objects::hosted_labels(inputs.hosted_cluster);
    let cp = control_plane::control_plane_share(inputs, existing, &base, now);
    let pools = node_pools::node_pools_share(inputs, &cp.versions, &base, now);
    let mut hc_health = health::hosted_cluster_insights(inputs, &cp, now);
    hc_health.extend(caps::over_cap_insights(inputs, &over, now));

    let mut cp = cp;
    if let Some(status) = cp.status.as_mut() {
        count_hosted_health(&mut status.status, &hc_health);
    }
    let mut out = DesiredHosted {
        requeue_after: min_requeue(cp.requeue_after, pools.requeue_after),
        ..Default::default()
    };
    out.cluster.insights = cp.insights;
    let hc_owner = crate::compose::owner_of(inputs.hosted_cluster);
    out.cluster.insights.extend(
        hc_health
            .into_iter()
            .map(|s| objects::insight(s, inputs.hosted_cluster, &base, hc_owner.clone())),
    );
    out.cluster.insights.extend(pools.insights);
    out.cluster.worker_pools = pools.statuses;
    out.cluster.control_plane = cp.status;
    crate::compose::keep_started_at(&mut out.cluster.insights, &existing.insights);
    crate::compose::since::carry_cluster(&mut out.cluster, existing, now);
    out.requeue_after = min_requeue(out.requeue_after, health::requeue_after(inputs, now));
    out
}

/// The HostedCluster's own health insights counted into the ControlPlaneUpdateStatus: its
/// `healthInsights`, and its `Healthy` condition (False, as standalone, once one is at level
/// Error or Critical; since the earliest such start when all are known).
fn count_hosted_health(
    status: &mut update_status_api::crd::ControlPlaneUpdateStatusStatus,
    hc_health: &[update_status_api::crd::UpdateInsightStatus],
) {
    use update_status_api::crd::{ConditionStatus, ImpactLevel};
    for h in hc_health.iter().filter_map(|i| i.health.as_ref()) {
        crate::insight::count(&mut status.health_insights, h.impact.level);
    }
    let bad: Vec<_> = hc_health
        .iter()
        .filter_map(|i| i.health.as_ref())
        .filter(|h| h.impact.level >= ImpactLevel::Error)
        .collect();
    if bad.is_empty() {
        return;
    }
    let serious = status.health_insights.error + status.health_insights.critical;
    let Some(c) = status
        .conditions
        .iter_mut()
        .find(|c| c.type_ == crate::control_plane::CONDITION_HEALTHY)
    else {
        return;
    };
    let hosted_since = if bad.iter().all(|h| h.started_at.is_some()) {
        bad.iter().filter_map(|h| h.started_at).min()
    } else {
        None
    };
    c.last_transition_time = match (c.status, c.last_transition_time, hosted_since) {
        (ConditionStatus::False, Some(a), Some(b)) => Some(a.min(b)),
        (ConditionStatus::False, _, _) => None,
        (_, _, since) => since,
    };
    c.status = ConditionStatus::False;
    c.reason = "ErrorHealthInsights".to_string();
    c.message = format!("{serious} control-plane health insight(s) at level Error or Critical");
}

/// The sooner of two delays.
fn min_requeue(a: Option<SignedDuration>, b: Option<SignedDuration>) -> Option<SignedDuration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
