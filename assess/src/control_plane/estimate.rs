//! B.5–B.7: the baseline, the timewise curve and the completion estimate.

use jiff::{SignedDuration, Timestamp};
use update_status_api::crd::{Assessment, ControlPlaneUpdateStatusStatus};
use update_status_api::input::UpdateHistory;

use super::constants::REQUEUE_HORIZON;
use super::nanos::{go_seconds, ns, saturating_signed, signed, sub};
use crate::format::{HOUR, MINUTE, SECOND, round as go_round, truncate as go_truncate};

/// B.6: fraction of the update's time elapsed when a fraction `x` of the operators is updated.
pub fn timewise_complete(x: f64) -> f64 {
    let x2 = x * x;
    let x3 = x * x2;
    let x4 = x2 * x2;
    if x < 0.25 {
        -0.03078788 + 2.62886 * x - 3.823954 * x2
    } else if x < 0.9 {
        0.1851215 + 1.64994 * x - 4.676898 * x2 + 5.451824 * x3 - 2.125286 * x4
    } else {
        25053.32 - 107394.3 * x + 172527.2 * x2 - 123107.0 * x3 + 32921.81 * x4
    }
}

/// B.5: duration of the last completed update between the current one and the installation;
/// 1 h when there is none (or its times are unknown).
pub fn baseline_duration(history: &[UpdateHistory]) -> SignedDuration {
    saturating_signed(baseline_ns(history))
}

pub(super) fn baseline_ns(history: &[UpdateHistory]) -> i128 {
    if history.len() < 3 {
        return HOUR;
    }
    let middle = &history[1..history.len() - 1];
    match middle.iter().find(|h| h.is_completed()) {
        Some(h) => match (h.started_time, h.completion_time) {
            (Some(s), Some(c)) => sub(ns(c), ns(s)),
            _ => HOUR,
        },
        None => HOUR,
    }
}

/// B.7: estimated time to completion (nanoseconds) from the baseline, the time from the start
/// to the last observed operator progress, the time updating so far, and the fraction `x` of
/// updated operators. Whole seconds; rounded to the minute when above 10 minutes.
pub(super) fn estimate_ns(
    baseline: i128,
    to_last_observed_progress: i128,
    updating_for: i128,
    x: f64,
) -> i128 {
    if x >= 1.0 {
        return 0;
    }
    let c = timewise_complete(x);
    let total = if x > 0.0 && c > 0.0 && to_last_observed_progress > 5 * MINUTE {
        go_seconds(to_last_observed_progress) / c
    } else {
        go_seconds(baseline)
    };
    let remaining = total - go_seconds(updating_for);
    let factor = if remaining < 0.0 { 1.0 / 1.2 } else { 1.2 };
    // Go: time.Duration(remaining*factor) * time.Second (float → int64 truncates toward zero).
    let secs = (remaining * factor) as i64;
    let est = i128::from(secs) * SECOND;
    if est > 10 * MINUTE {
        go_round(est, MINUTE)
    } else {
        go_round(est, SECOND)
    }
}

/// B.7 with `SignedDuration`s.
#[cfg(test)]
pub(super) fn estimate_completion(
    baseline: SignedDuration,
    to_last_observed_progress: SignedDuration,
    updating_for: SignedDuration,
    x: f64,
) -> SignedDuration {
    saturating_signed(estimate_ns(
        baseline.as_nanos(),
        to_last_observed_progress.as_nanos(),
        updating_for.as_nanos(),
        x,
    ))
}

/// B.4 step 6: the update duration as shown, from the time updating (Go-rounded to 1 min above
/// 10 min, else to 1 s).
pub fn rounded_update_duration(updating_for: SignedDuration) -> SignedDuration {
    saturating_signed(round_update_duration(updating_for.as_nanos()))
}

/// [`rounded_update_duration`] in nanoseconds (B.4's display rounding, also the CLI's).
pub fn round_update_duration(updating_for: i128) -> i128 {
    if updating_for > 10 * MINUTE {
        go_round(updating_for, MINUTE)
    } else {
        go_round(updating_for, SECOND)
    }
}

/// B.4: the control plane's update duration as `oc` shows it: from `startedAt` to `completedAt`
/// (or `now` while not completed), rounded. `None` when the start is unknown.
pub fn update_duration(
    status: &ControlPlaneUpdateStatusStatus,
    now: Timestamp,
) -> Option<SignedDuration> {
    let started = status.started_at?;
    let end = status.completed_at.unwrap_or(now);
    signed(round_update_duration(sub(ns(end), ns(started))))
}

/// `EstTimeToComplete` of the renderer: `estimatedCompletedAt − now` (`None` when unset).
pub fn estimated_time_to_complete(
    status: &ControlPlaneUpdateStatusStatus,
    now: Timestamp,
) -> Option<SignedDuration> {
    signed(sub(ns(status.estimated_completed_at?), ns(now)))
}

/// `EstDuration` of the renderer (B.7 step 7): `estimatedCompletedAt − startedAt` truncated to
/// whole minutes (`None` when either is unset).
pub fn estimated_duration(status: &ControlPlaneUpdateStatusStatus) -> Option<SignedDuration> {
    let total = sub(ns(status.estimated_completed_at?), ns(status.started_at?));
    signed(go_truncate(total, MINUTE))
}

/// Assessment of a not-completed control plane from its estimate (B.3).
pub(super) fn assessment_from_estimate(est: i128) -> Assessment {
    if est < -10 * MINUTE {
        Assessment::Stalled
    } else if est < 0 {
        Assessment::ProgressingSlow
    } else {
        Assessment::Progressing
    }
}

/// Everything B.4–B.7 need, so the estimate can be evaluated at any instant.
#[derive(Clone, Copy, Debug)]
pub(super) struct EstimateModel {
    /// `history[0].startedTime` (None: no timing).
    pub(super) started: Option<i128>,
    /// `history[0].completionTime` when `history[0]` is Completed.
    pub(super) completion: Option<i128>,
    /// mcoStartedUpdating or the latest Progressing LTT (B.2, B.4 step 2), before step 3.
    pub(super) last_observed_progress: Option<i128>,
    pub(super) baseline: i128,
    pub(super) x: f64,
    pub(super) completed: bool,
}

impl EstimateModel {
    /// `(updating_for, to_last_observed_progress)` at `now` (B.4).
    pub(super) fn timing_at(&self, now: i128) -> (i128, i128) {
        let Some(started) = self.started else {
            return (0, 0);
        };
        let last = self
            .last_observed_progress
            .filter(|&l| l > started)
            .unwrap_or(now);
        let to_last = sub(last, started);
        let end = self.completion.unwrap_or(now);
        (sub(end, started), to_last)
    }

    /// Estimated time to completion at `now` (0 when completed).
    pub(super) fn estimate_at(&self, now: i128) -> i128 {
        if self.completed {
            return 0;
        }
        let (updating_for, to_last) = self.timing_at(now);
        estimate_ns(self.baseline, to_last, updating_for, self.x)
    }

    pub(super) fn assessment_at(&self, now: i128) -> Assessment {
        if self.completed {
            Assessment::Completed
        } else {
            assessment_from_estimate(self.estimate_at(now))
        }
    }

    /// First instant after `now` at which the assessment differs from the one at `now`, within
    /// the horizon. The estimate is monotone on each segment between the structural breakpoint
    /// (to-last-observed-progress crossing 5 min while it tracks `now`), so the first change
    /// inside a segment is found by bisection.
    pub(super) fn next_assessment_change(&self, now: i128) -> Option<i128> {
        let started = self.started?;
        if self.completed {
            return None;
        }
        let horizon = now + REQUEUE_HORIZON;
        let tracks_now = self.last_observed_progress.is_none_or(|l| l <= started);
        let mut segments = Vec::with_capacity(2);
        let breakpoint = started + 5 * MINUTE;
        if tracks_now && breakpoint >= now && breakpoint < horizon {
            segments.push((now, breakpoint));
            segments.push((breakpoint + 1, horizon));
        } else {
            segments.push((now, horizon));
        }
        let current = self.assessment_at(now);
        for (start, end) in segments {
            if start > now && self.assessment_at(start) != current {
                return Some(start);
            }
            if self.assessment_at(end) == self.assessment_at(start) {
                continue;
            }
            // Invariant: assessment(lo) == assessment(start), assessment(hi) differs.
            let base = self.assessment_at(start);
            let (mut lo, mut hi) = (start, end);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if self.assessment_at(mid) == base {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return Some(hi);
        }
        None
    }
}
