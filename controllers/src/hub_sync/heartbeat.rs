//! The heartbeat: the hub copy of the cluster's ControlPlaneUpdateStatus carries the annotation
//! [`LAST_REPORTED_ANNOTATION`], the time of the agent's last successful pass, refreshed once it
//! is older than the heartbeat interval (`--hub-heartbeat-interval`, [`DEFAULT_INTERVAL`]).
//!
//! A pass that copies nothing new writes nothing else, so while the agent runs and reaches the
//! hub the annotation is never older than the interval plus one pass, and a steady cluster costs
//! the hub one write per interval: `kubectl update-status --fleet` tells a cluster whose agent
//! stopped (or lost the hub) from one whose update simply does not move.
//!
//! The annotation is written with a merge patch (field manager
//! `update-status-controller/hub-heartbeat`), not a server-side apply: a patch of a copy deleted
//! meanwhile fails (`404`) instead of creating an object without our labels, and the hub sync's
//! own applies (which own the labels, the owner and the status) never remove it.

use std::time::Duration;

use jiff::Timestamp;
use kube::Api;
use kube::api::{Patch, PatchParams};
use update_status_api::crd::ControlPlaneUpdateStatus;

pub use update_status_api::acm::LAST_REPORTED_ANNOTATION;

use super::errors::HubError;

/// Default `--hub-heartbeat-interval`.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(300);
/// Shortest interval accepted (tests use seconds; at 3,500 clusters 1 s is 3,500 writes/s).
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);
/// Longest interval accepted: past it a stopped agent goes unnoticed for more than an hour.
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);
/// Field manager of the heartbeat patches.
pub const FIELD_MANAGER: &str = "update-status-controller/hub-heartbeat";

/// The annotation's value for `at`: RFC 3339, UTC, whole seconds (`2026-12-05T17:00:00Z`).
pub fn format(at: Timestamp) -> String {
    let secs = at.as_second();
    Timestamp::from_second(secs)
        .unwrap_or(at)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The time an annotation's value says, if it is one.
pub fn parse(value: &str) -> Option<Timestamp> {
    value.trim().parse().ok()
}

/// How long until the heartbeat stamped at `last` (`None`: never) is due at `now`; zero: due.
/// A stamp in the future (a clock stepped back) counts as due: it would hide a stopped agent.
pub fn due_in(last: Option<Timestamp>, interval: Duration, now: Timestamp) -> Duration {
    let Some(last) = last else {
        return Duration::ZERO;
    };
    if last > now {
        return Duration::ZERO;
    }
    let age = Duration::try_from(now.duration_since(last)).unwrap_or(Duration::MAX);
    interval.saturating_sub(age)
}

/// Checks `--hub-heartbeat-interval` against [`MIN_INTERVAL`] and [`MAX_INTERVAL`].
pub fn check_interval(d: Duration) -> Result<Duration, String> {
    if d < MIN_INTERVAL || d > MAX_INTERVAL {
        return Err(format!(
            "the heartbeat interval must be between {MIN_INTERVAL:?} and {MAX_INTERVAL:?}"
        ));
    }
    Ok(d)
}

/// Stamps the copy `name` in `namespace` with `at`.
pub async fn stamp(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    at: Timestamp,
) -> Result<(), HubError> {
    let api: Api<ControlPlaneUpdateStatus> = Api::namespaced(client.clone(), namespace);
    let patch = serde_json::json!({
        "metadata": {"annotations": {LAST_REPORTED_ANNOTATION: format(at)}}
    });
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    api.patch(name, &params, &Patch::Merge(&patch))
        .await
        .map(drop)
        .map_err(|e| HubError::Api {
            verb: "patch controlplaneupdatestatuses (heartbeat)",
            namespace: namespace.to_string(),
            source: Box::new(e),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    #[test]
    fn the_annotation_is_rfc3339_utc_in_whole_seconds() {
        let at = ts("2026-12-05T17:00:09.987654321Z");
        assert_eq!(format(at), "2026-12-05T17:00:09Z");
        assert_eq!(parse(&format(at)), Some(ts("2026-12-05T17:00:09Z")));
        assert_eq!(parse("yesterday"), None);
        assert_eq!(
            parse("2026-12-05T18:00:09+01:00"),
            Some(ts("2026-12-05T17:00:09Z")),
            "another writer's offset is read too"
        );
    }

    #[test]
    fn the_heartbeat_is_due_once_older_than_the_interval() {
        let now = ts("2026-12-05T17:00:00Z");
        let min5 = Duration::from_secs(300);
        assert_eq!(due_in(None, min5, now), Duration::ZERO, "never stamped");
        assert_eq!(
            due_in(Some(ts("2026-12-05T16:58:00Z")), min5, now),
            Duration::from_secs(180)
        );
        assert_eq!(
            due_in(Some(ts("2026-12-05T16:55:00Z")), min5, now),
            Duration::ZERO
        );
        assert_eq!(
            due_in(Some(ts("2026-12-05T10:00:00Z")), min5, now),
            Duration::ZERO
        );
        assert_eq!(
            due_in(Some(ts("2026-12-05T18:00:00Z")), min5, now),
            Duration::ZERO,
            "a stamp from the future is replaced"
        );
    }

    #[test]
    fn the_interval_is_bounded() {
        assert!(check_interval(Duration::from_secs(300)).is_ok());
        assert!(check_interval(Duration::from_secs(1)).is_ok());
        assert!(check_interval(Duration::from_millis(500)).is_err());
        assert!(check_interval(Duration::from_secs(7200)).is_err());
    }
}
