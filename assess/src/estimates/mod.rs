//! Estimates that learn (issue #40): the durations of this cluster's updates, learned by
//! watching them ([`observe`]), and the remaining time of the update in progress made from
//! them ([`estimate`]), with oc's method as the fallback of a cluster with no observed update
//! ([`oc`]). Pure: the reader passes the inputs, the learned state and `now`.
//!
//! The learned state is an [`UpdateHistoryStatus`] (the `UpdateHistory` kind): the controller
//! keeps it in one object per cluster, the bench in memory.

pub mod factors;
pub mod observe;
pub mod oc;
pub mod predict;
pub mod stats;

use jiff::{SignedDuration, Timestamp};
use update_status_api::history::{
    CurrentUpdate, Estimate, EstimateMethod, PoolEstimate, UpdateEstimates, UpdateHistoryStatus,
};

use crate::inputs::ClusterInputs;
pub use crate::nodes::{NodeStage, TimedNode, node_stage};
pub use observe::{Resume, observe, observe_resuming, seed_from_history};
pub use oc::{OcEstimates, oc_estimates};
pub use predict::{Learned, Remaining, learned};

/// Interval of oc's method as the fallback: from half to twice its estimate (oc gives none;
/// its error on the replay is of that order).
pub const FALLBACK_LOW: f64 = 0.5;
/// See [`FALLBACK_LOW`].
pub const FALLBACK_HIGH: f64 = 2.0;

/// Message of the learned method.
pub const MESSAGE_LEARNED: &str = "learned from this cluster's earlier updates";
/// Message of the fallback.
pub const MESSAGE_FALLBACK: &str = "no update of this cluster observed yet: oc's method (its completion curve with the last update's duration from the ClusterVersion history, 10 minutes per node wave), interval ×0.5–×2";

/// The estimates at `now`: learned when this cluster has an observed update and the update in
/// progress is followed, else oc's method. `None` when nothing updates.
pub fn estimate<N: TimedNode>(
    status: &UpdateHistoryStatus,
    inputs: &ClusterInputs<'_>,
    nodes: &[N],
    now: Timestamp,
) -> Option<UpdateEstimates> {
    if let Some(l) = learned(status, inputs, nodes, now) {
        return Some(UpdateEstimates {
            method: EstimateMethod::Learned,
            message: MESSAGE_LEARNED.to_string(),
            computed_at: now,
            control_plane: Some(to_estimate(l.control_plane, now)),
            pools: l
                .pools
                .into_iter()
                .map(|(name, r)| PoolEstimate {
                    name,
                    estimate: to_estimate(r, now),
                })
                .collect(),
            update: Some(to_estimate(l.update, now)),
        });
    }
    let updating = status.current.is_some()
        || inputs.cluster_version.is_some_and(|cv| {
            cv.status
                .history
                .first()
                .is_some_and(|h| h.is_partial() && cv.status.history.len() >= 2)
        });
    if !updating {
        return None;
    }
    let oc = oc_estimates(inputs, nodes, now);
    let fallback = |s: f64| {
        let mid = s.max(0.0);
        Remaining {
            low: mid * FALLBACK_LOW,
            mid,
            high: mid * FALLBACK_HIGH,
            paused: false,
        }
    };
    Some(UpdateEstimates {
        method: EstimateMethod::OcBaseline,
        message: MESSAGE_FALLBACK.to_string(),
        computed_at: now,
        control_plane: oc.control_plane.map(|s| to_estimate(fallback(s), now)),
        pools: oc
            .pools
            .into_iter()
            .map(|(name, s)| PoolEstimate {
                name,
                estimate: to_estimate(fallback(s), now),
            })
            .collect(),
        update: oc.update.map(|s| to_estimate(fallback(s), now)),
    })
}

fn at(now: Timestamp, secs: u32) -> Timestamp {
    now.checked_add(SignedDuration::from_secs(i64::from(secs)))
        .unwrap_or(now)
}

fn secs(s: f64) -> u32 {
    if s.is_finite() {
        s.round().clamp(0.0, f64::from(u32::MAX)) as u32
    } else {
        u32::MAX
    }
}

/// A [`Remaining`] as the object holds it.
pub fn to_estimate(r: Remaining, now: Timestamp) -> Estimate {
    let (low, mid, high) = (secs(r.low), secs(r.mid), secs(r.high));
    Estimate {
        remaining_seconds: mid,
        earliest_remaining_seconds: low.min(mid),
        latest_remaining_seconds: high.max(mid),
        estimated_completion_time: at(now, mid),
        earliest_completion_time: at(now, low.min(mid)),
        latest_completion_time: at(now, high.max(mid)),
        paused: r.paused,
    }
}

/// Whether new estimates are worth a write over the stored ones: the method, the set of
/// scopes or a pause changed, or a completion time moved by more than
/// `max(1 min, 10 % of the remaining time)` (the rule of `estimatedCompletedAt`,
/// [`crate::control_plane::estimate_moved`]). Else the stored ones stay, `computedAt`
/// included: they still say the same instants. An instant already due that is due now again
/// (nothing left by the estimate, e.g. a control plane later than oc's curve) has not moved:
/// the stored one still says since when it is overdue, rather than following the clock.
pub fn estimates_moved(
    old: Option<&UpdateEstimates>,
    new: Option<&UpdateEstimates>,
    now: Timestamp,
) -> bool {
    let (old, new) = match (old, new) {
        (None, None) => return false,
        (Some(o), Some(n)) => (o, n),
        _ => return true,
    };
    if old.method != new.method || old.pools.len() != new.pools.len() {
        return true;
    }
    let moved = |o: Option<&Estimate>, n: Option<&Estimate>| match (o, n) {
        (None, None) => false,
        (Some(o), Some(n)) => {
            o.paused != n.paused
                || [
                    (o.estimated_completion_time, n.estimated_completion_time),
                    (o.latest_completion_time, n.latest_completion_time),
                ]
                .into_iter()
                .any(|(a, b)| {
                    let still_due = a <= now && b <= now;
                    !still_due && crate::control_plane::estimate_moved(Some(a), Some(b), now)
                })
        }
        _ => true,
    };
    moved(old.control_plane.as_ref(), new.control_plane.as_ref())
        || moved(old.update.as_ref(), new.update.as_ref())
        || old
            .pools
            .iter()
            .zip(&new.pools)
            .any(|(o, n)| o.name != n.name || moved(Some(&o.estimate), Some(&n.estimate)))
}

/// Whether `now` (what was learned since) holds something a crash must not lose over
/// `written` (what the object holds): an update learned, started or replaced, a node finished
/// (its phases folded into its group), a pool done, a pause begun or ended, the control plane
/// done, or the estimates' method changed or estimates appearing or going. What may wait for
/// a later write is what a restart gets back anyway: the times of the nodes in flight (their
/// progress insights hold them: [`observe_resuming`]), the operators' completion times (their
/// `Progressing` transition times) and estimates that moved (computed again).
pub fn must_write_now(written: &UpdateHistoryStatus, now: &UpdateHistoryStatus) -> bool {
    let current = |a: &CurrentUpdate, b: &CurrentUpdate| {
        a.from == b.from
            && a.to == b.to
            && a.started_at == b.started_at
            && a.control_plane_completed_at == b.control_plane_completed_at
            && a.node_groups == b.node_groups
            && a.finished == b.finished
            && a.pools == b.pools
            && a.paused == b.paused
    };
    let same_current = match (&written.current, &now.current) {
        (None, None) => true,
        (Some(a), Some(b)) => current(a, b),
        _ => false,
    };
    let method = |s: &UpdateHistoryStatus| s.estimates.as_ref().map(|e| e.method);
    !(same_current
        && written.updates == now.updates
        && written.learned_updates == now.learned_updates
        && written.node_factors == now.node_factors
        && method(written) == method(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).expect("valid")
    }

    fn estimates(remaining: u32, now: Timestamp) -> UpdateEstimates {
        let r = Remaining {
            low: f64::from(remaining) / 2.0,
            mid: f64::from(remaining),
            high: f64::from(remaining) * 2.0,
            paused: false,
        };
        UpdateEstimates {
            method: EstimateMethod::OcBaseline,
            message: String::new(),
            computed_at: now,
            control_plane: Some(to_estimate(r, now)),
            pools: Vec::new(),
            update: Some(to_estimate(r, now)),
        }
    }

    #[test]
    fn only_what_a_restart_cannot_get_back_is_written_at_once() {
        use update_status_api::history::{FinishedNode, OperatorTiming, TrackedNode};
        let written = UpdateHistoryStatus {
            current: Some(CurrentUpdate {
                to: "4.18.3".into(),
                started_at: at(0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let with = |f: &dyn Fn(&mut CurrentUpdate)| {
            let mut s = written.clone();
            if let Some(c) = s.current.as_mut() {
                f(c);
            }
            s
        };
        // Nodes in flight, operators and moved estimates wait.
        let waits = with(&|c| {
            c.nodes.push(TrackedNode {
                name: "n".into(),
                drain_at: Some(at(5)),
                ..Default::default()
            });
            c.operators.push(OperatorTiming {
                name: "etcd".into(),
                completed_after_seconds: 5,
            });
        });
        assert!(!must_write_now(&written, &waits));
        let mut moved = written.clone();
        moved.estimates = Some(estimates(300, at(0)));
        let mut moved_again = moved.clone();
        moved_again.estimates = Some(estimates(900, at(0)));
        assert!(!must_write_now(&moved, &moved_again));
        // A node finished, the control plane done, an update learned or ended, a method: now.
        let finished = with(&|c| {
            c.finished.push(FinishedNode {
                name: "n".into(),
                ..Default::default()
            })
        });
        assert!(must_write_now(&written, &finished));
        assert!(must_write_now(
            &written,
            &with(&|c| c.control_plane_completed_at = Some(at(9)))
        ));
        assert!(must_write_now(&written, &UpdateHistoryStatus::default()));
        assert!(must_write_now(&written, &moved), "estimates appear");
    }

    #[test]
    fn an_overdue_estimate_does_not_follow_the_clock() {
        // `stored`, against the estimates made `t` s later with `remaining` s left.
        let moved = |stored: &UpdateEstimates, remaining: u32, t: i64| {
            estimates_moved(Some(stored), Some(&estimates(remaining, at(t))), at(t))
        };
        let stored = estimates(0, at(0));
        // Ten minutes later, still nothing left by the estimate: not moved.
        assert!(!moved(&stored, 0, 600));
        // Something left again: moved.
        assert!(moved(&stored, 900, 600));
        // A constant remaining time slides with the clock, beyond the tolerance: moved.
        let ahead = estimates(300, at(0));
        assert!(!moved(&ahead, 300, 50));
        assert!(moved(&ahead, 300, 90));
    }
}
