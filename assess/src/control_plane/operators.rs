//! B.2: how each platform ClusterOperator stands, and their tally.

use update_status_api::crd::{Assessment, OperatorCounts, limits};
use update_status_api::input::{ClusterOperator, Condition as InputCondition};

use super::constants::{MACHINE_CONFIG, OPERATOR_IMAGE};
use super::nanos::ns;

/// How one platform operator stands (B.2).
#[derive(Clone, Debug)]
pub(super) struct OperatorFacts<'a> {
    pub(super) co: &'a ClusterOperator,
    pub(super) updated: bool,
    pub(super) progressing: Option<&'a InputCondition>,
    pub(super) assessment: Assessment,
}

/// B.2 "updated": some `operator` version equals the desired version; for `machine-config` also
/// every `operator-image` equals the MCO image (multi-arch migrations keep the version).
pub fn is_updated(co: &ClusterOperator, desired: &str, mco_image: &str) -> bool {
    let versions = &co.status.versions;
    if co.name() == MACHINE_CONFIG
        && versions
            .iter()
            .any(|v| v.name == OPERATOR_IMAGE && v.version != mco_image)
    {
        return false;
    }
    versions
        .iter()
        .any(|v| v.name == "operator" && v.version == desired)
}

pub(super) fn classify<'a>(
    co: &'a ClusterOperator,
    desired: &str,
    mco_image: &str,
) -> OperatorFacts<'a> {
    let updated = is_updated(co, desired, mco_image);
    let progressing = co.condition("Progressing");
    let assessment = if updated {
        Assessment::Updated
    } else {
        match progressing {
            Some(p) if p.is_true() => Assessment::Updating,
            Some(p) if p.is_false() => Assessment::Waiting,
            _ => Assessment::Unknown,
        }
    };
    OperatorFacts {
        co,
        updated,
        progressing,
        assessment,
    }
}

/// B.2 counts and the progress signals.
#[derive(Clone, Debug, Default)]
pub(super) struct OperatorSummary {
    pub(super) counts: OperatorCounts,
    pub(super) last_observed_progress: Option<i128>,
    pub(super) mco_started_updating: Option<i128>,
}

pub(super) fn summarize(operators: &[OperatorFacts<'_>]) -> OperatorSummary {
    let mut s = OperatorSummary::default();
    let c = &mut s.counts;
    for op in operators {
        c.total += 1;
        if op.updated {
            c.updated += 1;
        }
        if let Some(p) = op.progressing {
            if let Some(ltt) = p.last_transition_time.map(ns) {
                s.last_observed_progress =
                    Some(s.last_observed_progress.map_or(ltt, |l| l.max(ltt)));
            }
            if !op.updated && p.is_true() {
                c.updating += 1;
                if c.updating_names.len() < limits::UPDATING_NAMES {
                    c.updating_names.push(op.co.name().to_string());
                }
                if op.co.name() == "machine-config"
                    && let Some(ltt) = p.last_transition_time
                {
                    s.mco_started_updating = Some(ns(ltt));
                }
            } else if !op.updated && p.is_false() {
                c.waiting += 1;
            }
        }
        let available = op.co.condition("Available").is_some_and(|a| a.is_true());
        if !available {
            c.unavailable += 1;
        } else if op.co.condition("Degraded").is_some_and(|d| d.is_true()) {
            c.degraded += 1;
        }
    }
    c.healthy = c.total - c.unavailable - c.degraded;
    s
}

/// The "Operator Health" line of `oc adm upgrade status` (B.2 `StatusSummary`).
pub fn operator_health_display(counts: &OperatorCounts) -> String {
    let mut out = format!("{} Healthy", counts.healthy);
    if counts.unavailable > 0 {
        out.push_str(&format!(", {} Unavailable", counts.unavailable));
    }
    if counts.degraded > 0 {
        out.push_str(&format!(", {} Available but degraded", counts.degraded));
    }
    out
}
