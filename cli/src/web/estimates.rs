//! The page's estimates block: the remaining time of the control plane, each pool and the whole
//! update with its interval (p10–p90), as the controller's `estimates` reconciler wrote them in
//! the `UpdateHistory` `cluster` (issue #40), counted from the page's instant. Says which
//! method made them: learned from this cluster's updates, or oc's method when nothing was
//! learned yet (what the object states). The oc-identical text view does not show them.

use jiff::Timestamp;
use serde::Serialize;
use update_status_api::history::{Estimate, EstimateMethod, UpdateEstimates};
use update_status_assess::format::{SECOND, round, short_duration};

/// The estimates block.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Estimates {
    /// `learned` or `oc's method`: what the page labels the block with.
    pub method: &'static str,
    /// The object's `message` (why this method).
    pub message: String,
    /// When the controller computed them.
    pub computed_at: Timestamp,
    /// The control plane (every platform operator at the target).
    pub control_plane: Option<Remaining>,
    /// Each pool with nodes to update.
    pub pools: Vec<PoolRemaining>,
    /// The whole update.
    pub update: Option<Remaining>,
}

/// One scope's remaining time at the page's instant.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Remaining {
    /// Median (p50), as the text view writes durations (`1h5m`, `45s`, `now` once due).
    pub remaining: String,
    /// Low end (p10).
    pub earliest: String,
    /// High end (p90).
    pub latest: String,
    /// When, at the median.
    pub at: Timestamp,
    /// A paused pool: the estimate assumes it resumes now.
    pub paused: bool,
}

/// A pool's remaining time.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PoolRemaining {
    /// MachineConfigPool.
    pub name: String,
    /// Its remaining time.
    #[serde(flatten)]
    pub remaining: Remaining,
}

/// What the page shows of the label of each method.
pub fn method_label(m: EstimateMethod) -> &'static str {
    match m {
        EstimateMethod::Learned => "learned",
        EstimateMethod::OcBaseline => "oc's method",
    }
}

fn until(t: Timestamp, now: Timestamp) -> String {
    let ns = (t.as_nanosecond() - now.as_nanosecond()).max(0);
    short_duration(round(ns, SECOND))
}

fn remaining(e: &Estimate, now: Timestamp) -> Remaining {
    Remaining {
        remaining: until(e.estimated_completion_time, now),
        earliest: until(e.earliest_completion_time, now),
        latest: until(e.latest_completion_time, now),
        at: e.estimated_completion_time,
        paused: e.paused,
    }
}

/// The block of `est` at `now` (`None` when the object holds no estimates: nothing updates,
/// or no UpdateHistory is readable).
pub fn estimates(est: Option<&UpdateEstimates>, now: Timestamp) -> Option<Estimates> {
    let est = est?;
    Some(Estimates {
        method: method_label(est.method),
        message: est.message.clone(),
        computed_at: est.computed_at,
        control_plane: est.control_plane.as_ref().map(|e| remaining(e, now)),
        pools: est
            .pools
            .iter()
            .map(|p| PoolRemaining {
                name: p.name.clone(),
                remaining: remaining(&p.estimate, now),
            })
            .collect(),
        update: est.update.as_ref().map(|e| remaining(e, now)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::history::PoolEstimate;

    fn at(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    fn est(mid: &str, low: &str, high: &str) -> Estimate {
        Estimate {
            estimated_completion_time: at(mid),
            earliest_completion_time: at(low),
            latest_completion_time: at(high),
            ..Default::default()
        }
    }

    #[test]
    fn remaining_times_count_from_the_page_instant() {
        let computed = at("2026-01-01T10:00:00Z");
        let object = UpdateEstimates {
            method: EstimateMethod::Learned,
            message: "learned from this cluster's earlier updates".into(),
            computed_at: computed,
            control_plane: Some(est(
                "2026-01-01T10:20:00Z",
                "2026-01-01T10:15:00Z",
                "2026-01-01T10:40:00Z",
            )),
            pools: vec![PoolEstimate {
                name: "worker".into(),
                estimate: Estimate {
                    paused: true,
                    ..est(
                        "2026-01-01T11:05:00Z",
                        "2026-01-01T10:50:00Z",
                        "2026-01-01T12:30:00Z",
                    )
                },
            }],
            update: Some(est(
                "2026-01-01T11:05:00Z",
                "2026-01-01T10:50:00Z",
                "2026-01-01T12:30:00Z",
            )),
        };
        // Five minutes after the controller computed them.
        let page = estimates(Some(&object), at("2026-01-01T10:05:00Z")).expect("estimates");
        assert_eq!(page.method, "learned");
        let cp = page.control_plane.expect("control plane");
        assert_eq!(
            (
                cp.remaining.as_str(),
                cp.earliest.as_str(),
                cp.latest.as_str()
            ),
            ("15m", "10m", "35m")
        );
        let w = &page.pools[0];
        assert_eq!((w.name.as_str(), w.remaining.paused), ("worker", true));
        assert_eq!(w.remaining.remaining, "1h");
        assert_eq!(page.update.expect("update").latest, "2h25m");
        // Past the estimate: due, never negative.
        let late = estimates(Some(&object), at("2026-01-01T13:00:00Z")).expect("estimates");
        assert_eq!(late.update.expect("update").remaining, "now");
    }

    #[test]
    fn the_fallback_says_oc_method_and_nothing_says_nothing() {
        let object = UpdateEstimates {
            method: EstimateMethod::OcBaseline,
            message: "no update of this cluster observed yet".into(),
            computed_at: at("2026-01-01T10:00:00Z"),
            ..Default::default()
        };
        let page = estimates(Some(&object), at("2026-01-01T10:00:00Z")).expect("estimates");
        assert_eq!(page.method, "oc's method");
        assert_eq!(page.message, "no update of this cluster observed yet");
        assert!(page.control_plane.is_none() && page.pools.is_empty());
        assert_eq!(estimates(None, at("2026-01-01T10:00:00Z")), None);
    }
}
