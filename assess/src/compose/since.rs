//! Transition times: every condition update-status writes has a `lastTransitionTime`.
//!
//! A condition copied from an input keeps the input's time. Every other one (a node's
//! `Updating`, a pool's `Healthy`, ...) says when update-status first observed its current
//! status: the time our object already holds for the same type and status, else `now` (the
//! observation). It changes only when the status changes, and a restart keeps it, as a
//! health insight keeps its first `startedAt`. The rules leave those times unset; this step,
//! run once per object with what our objects already say, sets them.

use jiff::Timestamp;
use update_status_api::crd::{Condition, UpdateInsightStatus};

use super::existing::{Existing, ExistingInsights};
pub use super::existing::{NoPrior, PriorConditions};
use super::objects::{Desired, DesiredCluster};

/// An observation instant as a transition time: whole seconds, like a Kubernetes condition's.
pub fn observed(now: Timestamp) -> Timestamp {
    Timestamp::from_second(now.as_second()).unwrap_or(now)
}

/// Sets the transition time of every condition of object `name` that has none: the one
/// `prior` holds for the same type while in the same status, else `now`.
pub fn carry<P: PriorConditions + ?Sized>(
    conditions: &mut [Condition],
    name: &str,
    prior: &P,
    now: Timestamp,
) {
    for c in conditions
        .iter_mut()
        .filter(|c| c.last_transition_time.is_none())
    {
        c.last_transition_time = match prior.condition(name, &c.type_) {
            Some((status, Some(t))) if status == c.status => Some(t),
            _ => Some(observed(now)),
        };
    }
}

/// [`carry`] for the progress insights among `desired` (health insights have no conditions).
pub fn carry_insights(
    desired: &mut [Desired<UpdateInsightStatus>],
    existing: &ExistingInsights<'_>,
    now: Timestamp,
) {
    for d in desired.iter_mut() {
        if let Some(p) = d.status.progress.as_mut() {
            carry(&mut p.conditions, &d.name, existing, now);
        }
    }
}

/// [`carry`] for every object of a cluster: the ControlPlaneUpdateStatus, the
/// WorkerPoolUpdateStatus objects and the progress insights.
pub fn carry_cluster(desired: &mut DesiredCluster, existing: &Existing<'_>, now: Timestamp) {
    if let Some(cp) = desired.control_plane.as_mut() {
        let prior: &[Condition] = existing
            .control_plane
            .and_then(|c| c.status.as_ref())
            .map_or(&[], |s| &s.conditions);
        carry(&mut cp.status.conditions, &cp.name, prior, now);
    }
    for p in &mut desired.worker_pools {
        carry(
            &mut p.status.conditions,
            &p.name,
            existing.worker_pools,
            now,
        );
    }
    carry_insights(&mut desired.insights, &existing.insights, now);
}

/// Every condition without a transition time gets `now` (no object of ours to carry from:
/// the offline path, which says what it observes at its instant).
pub fn fill_status(status: &mut UpdateInsightStatus, now: Timestamp) {
    if let Some(p) = status.progress.as_mut() {
        carry(&mut p.conditions, "", &NoPrior, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use update_status_api::crd::ConditionStatus;
    use update_status_api::crd::{InsightType, ProgressInsight, UpdateInsight, UpdateInsightSpec};

    fn cond(type_: &str, status: ConditionStatus, at: Option<&str>) -> Condition {
        Condition {
            type_: type_.into(),
            status,
            last_transition_time: at.map(|t| t.parse().expect("timestamp")),
            ..Default::default()
        }
    }

    fn at(c: &Condition) -> String {
        c.last_transition_time
            .map(|t| t.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_transition_time_is_kept_while_the_status_holds_and_moves_when_it_changes() {
        let now: Timestamp = "2026-01-01T10:00:00.123456789Z".parse().expect("now");
        let prior = [
            cond(
                "Updating",
                ConditionStatus::True,
                Some("2026-01-01T09:00:00Z"),
            ),
            cond(
                "Healthy",
                ConditionStatus::True,
                Some("2026-01-01T08:00:00Z"),
            ),
            cond("Degraded", ConditionStatus::False, None),
        ];
        let mut conditions = vec![
            // Same status: kept.
            cond("Updating", ConditionStatus::True, None),
            // Changed: observed now (whole seconds).
            cond("Healthy", ConditionStatus::False, None),
            // The input's own time wins.
            cond(
                "Available",
                ConditionStatus::True,
                Some("2025-12-31T00:00:00Z"),
            ),
            // Prior without a time, or no prior: now.
            cond("Degraded", ConditionStatus::False, None),
            cond("New", ConditionStatus::Unknown, None),
        ];
        carry(&mut conditions, "x", &prior[..], now);
        let times: Vec<String> = conditions.iter().map(at).collect();
        assert_eq!(
            times,
            [
                "2026-01-01T09:00:00Z",
                "2026-01-01T10:00:00Z",
                "2025-12-31T00:00:00Z",
                "2026-01-01T10:00:00Z",
                "2026-01-01T10:00:00Z"
            ]
        );
        // A second pass later changes nothing once the object holds the times.
        let again_prior = conditions.clone();
        let mut again: Vec<Condition> = conditions
            .iter()
            .map(|c| Condition {
                last_transition_time: None,
                ..c.clone()
            })
            .collect();
        again[2].last_transition_time = conditions[2].last_transition_time;
        carry(
            &mut again,
            "x",
            &again_prior[..],
            now + jiff::SignedDuration::from_hours(3),
        );
        assert_eq!(again, conditions);
    }

    #[test]
    fn progress_insights_carry_from_whole_objects_or_the_projection() {
        struct Projection;
        impl PriorConditions for Projection {
            fn condition(
                &self,
                name: &str,
                type_: &str,
            ) -> Option<(ConditionStatus, Option<Timestamp>)> {
                (name == "node-b" && type_ == "Updating").then(|| {
                    (
                        ConditionStatus::False,
                        Some("2026-01-01T07:00:00Z".parse().expect("ts")),
                    )
                })
            }
        }
        let status = |c: Condition| UpdateInsightStatus {
            type_: InsightType::Progress,
            progress: Some(ProgressInsight {
                conditions: vec![c],
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut whole = UpdateInsight::new("node-a", UpdateInsightSpec {});
        whole.status = Some(status(cond(
            "Updating",
            ConditionStatus::False,
            Some("2026-01-01T06:00:00Z"),
        )));
        let objs = [Arc::new(whole)];
        let projection = Projection;
        let existing = ExistingInsights::new(&objs).with_progress(&projection);
        let now: Timestamp = "2026-01-01T10:00:00Z".parse().expect("now");
        let mut desired: Vec<Desired<UpdateInsightStatus>> = ["node-a", "node-b", "node-c"]
            .into_iter()
            .map(|name| Desired {
                name: name.into(),
                labels: Default::default(),
                owner: None,
                status: status(cond("Updating", ConditionStatus::False, None)),
            })
            .collect();
        carry_insights(&mut desired, &existing, now);
        let times: Vec<String> = desired
            .iter()
            .filter_map(|d| d.status.progress.as_ref())
            .map(|p| at(&p.conditions[0]))
            .collect();
        assert_eq!(
            times,
            [
                "2026-01-01T06:00:00Z",
                "2026-01-01T07:00:00Z",
                "2026-01-01T10:00:00Z"
            ]
        );
    }
}
