//! The Control Plane section (E.3; oc's `controlplane.go`): the assessment, completion,
//! duration and estimate, and the "Updating Cluster Operators" table.

use std::fmt::Write as _;

use jiff::Timestamp;
use update_status_api::crd::{ControlPlaneUpdateStatusStatus, InsightType};
use update_status_assess::control_plane::{
    operator_health_display, round_update_duration, target_version_display,
};
use update_status_assess::format::{MINUTE, ellipsize, short_duration, truncate};

use super::common::{Details, condition, elapsed};
use crate::show::tabwriter::format_table;
use crate::show::view::View;

/// E.3's estimate text, or `None` when there is no estimate (`EstTimeToComplete == 0`).
pub fn estimate_text(cp: &ControlPlaneUpdateStatusStatus, now: Timestamp) -> Option<String> {
    let at = cp.estimated_completed_at?;
    let est = round_update_duration(elapsed(at, now));
    if est == 0 {
        return None;
    }
    Some(if cp.versions.multi_arch_migration {
        "N/A for Multi-Architecture Migration".to_owned()
    } else if est < -10 * MINUTE {
        let started = cp.started_at.unwrap_or(now);
        let est_duration = truncate(elapsed(at, started), MINUTE);
        format!(
            "N/A; estimate duration was {}",
            short_duration(est_duration)
        )
    } else if est < 10 * MINUTE {
        "<10m".to_owned()
    } else {
        short_duration(est)
    })
}

/// E.3.
pub(super) fn control_plane_block(
    out: &mut String,
    cp: &ControlPlaneUpdateStatusStatus,
    view: &View,
    now: Timestamp,
    details: Details,
) {
    out.push_str("= Control Plane =\n");
    let ops = &cp.operators;
    if ops.updated == ops.total {
        completed_line(out, cp, now);
        return;
    }
    let (_, duration) = update_timing(cp, now);
    let _ = writeln!(out, "Assessment:      {}", cp.assessment.as_str());
    let _ = writeln!(
        out,
        "Target Version:  {}",
        target_version_display(&cp.versions)
    );
    if !ops.updating_names.is_empty() {
        let _ = writeln!(out, "Updating:        {}", ops.updating_names.join(", "));
    }
    let _ = writeln!(
        out,
        "Completion:      {}% ({} operators updated, {} updating, {} waiting)",
        cp.completion_percent, ops.updated, ops.updating, ops.waiting
    );
    let _ = write!(out, "Duration:        {}", short_duration(duration));
    if let Some(est) = estimate_text(cp, now) {
        let _ = write!(out, " (Est. Time Remaining: {est})");
    }
    out.push('\n');
    let _ = writeln!(out, "Operator Health: {}", operator_health_display(ops));

    updating_operators(out, cp, view, now, details);
}

/// E.3's "Updating Cluster Operators" table (`--details=operators`).
pub(super) fn updating_operators(
    out: &mut String,
    cp: &ControlPlaneUpdateStatusStatus,
    view: &View,
    now: Timestamp,
    details: Details,
) {
    let ops = &cp.operators;
    if details.operators() && !ops.updating_names.is_empty() {
        out.push_str("\nUpdating Cluster Operators\n");
        let mut table = String::from("NAME\tSINCE\tREASON\tMESSAGE\n");
        for name in &ops.updating_names {
            let updating = view
                .insights
                .iter()
                .find(|i| {
                    i.type_ == InsightType::Progress
                        && i.resource.kind == "ClusterOperator"
                        && &i.resource.name == name
                })
                .and_then(|i| i.progress.as_ref())
                .and_then(|p| condition(&p.conditions, "Updating"));
            let since = updating
                .and_then(|c| c.last_transition_time)
                .map_or_else(|| "-".to_owned(), |t| short_duration(elapsed(now, t)));
            let reason = match updating.map(|c| c.reason.as_str()) {
                Some(r) if !r.is_empty() => ellipsize(r, 20),
                _ => "-".to_owned(),
            };
            let message = updating.map(|c| c.message.as_str()).unwrap_or_default();
            let mut lines = message.split('\n');
            let first = lines.next().unwrap_or_default();
            let _ = writeln!(table, "{name}\t{since}\t{reason}\t{first}");
            for line in lines {
                let _ = writeln!(table, "\t\t\t{line}");
            }
        }
        out.push_str(&format_table(&table));
    }
}

/// When the control plane's update ended (`now` while it runs) and how long it took, rounded
/// as oc rounds it.
pub fn update_timing(cp: &ControlPlaneUpdateStatusStatus, now: Timestamp) -> (Timestamp, i128) {
    let end = cp.completed_at.unwrap_or(now);
    let duration = cp
        .started_at
        .map(|s| round_update_duration(elapsed(end, s)))
        .unwrap_or(0);
    (end, duration)
}

/// E.3's single line of a completed control-plane update.
pub(super) fn completed_line(
    out: &mut String,
    cp: &ControlPlaneUpdateStatusStatus,
    now: Timestamp,
) {
    let (end, duration) = update_timing(cp, now);
    let _ = writeln!(
        out,
        "Update to {} successfully completed at {} (duration: {})",
        cp.versions.target,
        rfc3339_seconds(end),
        short_duration(duration)
    );
}

/// Go's `time.RFC3339` of a UTC time: seconds precision, fraction truncated, `Z`.
fn rfc3339_seconds(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}
