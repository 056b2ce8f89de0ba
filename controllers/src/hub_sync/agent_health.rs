//! The agent's own health (standalone mode): the condition [`CONDITION_AGENT_DEGRADED`] of the
//! hub copy of its ControlPlaneUpdateStatus, `True` while the agent cannot do all of its job,
//! with the reason and what to check; `False` (reason `AsExpected`) otherwise. OCM's `Available`
//! on the ManagedClusterAddOn only says that the agent's Deployment is ready.
//!
//! What makes it degraded, worst first:
//! - `InputWatchFailing`: the watch of an input (Nodes, ClusterOperators, ...) fails now, or has
//!   not listed within its bound: what is reported may be stale;
//! - `InputsUnreadable`: inputs that cannot be decoded are left out (their `unreadable-input`
//!   health insights name them);
//! - `PrometheusUnreachable`: [`DEGRADED_AFTER_FAILURES`] polls of Prometheus in a row failed
//!   (alerts are not shown, as the `AlertsUnavailable` insight says).
//!
//! Where it is written (issue #48 item 2): on the copy the agent already owns and writes, as one
//! more condition of its `.status` ([`set_on`]), so the copy's own change-only apply carries it
//! (nothing is written while it does not change; its transition time is kept from the hub's
//! copy). Until then it was the `Degraded` condition of the agent's ManagedClusterAddOn, which
//! took a `patch managedclusteraddons/status` grant: RBAC cannot narrow that verb to one
//! condition, and with it a stolen agent certificate could rewrite
//! `status.registrations[].kubeClient.subject` (the add-on manager then binds the add-on's hub
//! ClusterRole to identities of the attacker's choosing), `status.namespace` or `Available`.
//! The grant is gone from the hub ClusterRole.
//!
//! A failing hub cannot be reported through the hub: that is what the heartbeat
//! ([`super::heartbeat`]) and `update_status_hub_sync_up` are for.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::watch;
use update_status_api::acm::CONDITION_AGENT_DEGRADED;
use update_status_api::crd::{
    Condition as CopyCondition, ConditionStatus, ControlPlaneUpdateStatusStatus, labels,
};

use super::local::LocalObjects;
use crate::metrics::PrometheusPolls;
use crate::runtime::existing::Cached;
use crate::runtime::health::Health;

/// Consecutive failed polls of Prometheus before the agent reports itself degraded (the
/// alerts reconciler's `AlertsUnavailable` insight appears after as many).
pub const DEGRADED_AFTER_FAILURES: u32 = 3;
/// A watch whose last error is this recent fails now (a failing watch retries every 5 s at
/// most).
pub const WATCH_FAILING_WINDOW: Duration = Duration::from_secs(30);
/// The `source` label value of the insights of inputs that cannot be decoded.
const UNREADABLE_SOURCE: &str = "unreadable-input";
/// Inputs named in the message at most.
const NAMED: usize = 5;

/// What the condition says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// `True`: degraded.
    pub degraded: bool,
    /// One of [`update_status_api::acm::DEGRADED_REASONS`].
    pub reason: &'static str,
    /// For a human: what fails and what to check.
    pub message: String,
}

impl Verdict {
    /// The condition's `status`.
    pub fn status(&self) -> &'static str {
        if self.degraded { "True" } else { "False" }
    }
}

/// The agent's health (pure): `failing`, the input watches failing now with their errors;
/// `unreadable`, the inputs left out (`Kind name`); `prometheus`, the URL polled (redacted) and
/// what the polls said, when alerts are read.
pub fn verdict(
    failing: &[(&str, String)],
    unreadable: &[String],
    prometheus: Option<(&str, &PrometheusPolls)>,
) -> Verdict {
    let mut problems: Vec<(&'static str, String)> = Vec::new();
    if !failing.is_empty() {
        let each: Vec<String> = failing
            .iter()
            .map(|(kind, e)| format!("the watch of {kind} fails: {e}"))
            .collect();
        problems.push((
            "InputWatchFailing",
            format!(
                "{}; what is reported may be stale (check the agent's RBAC and the API server)",
                each.join("; ")
            ),
        ));
    }
    if !unreadable.is_empty() {
        let mut named = unreadable[..unreadable.len().min(NAMED)].join(", ");
        if unreadable.len() > NAMED {
            named.push_str(&format!(" and {} more", unreadable.len() - NAMED));
        }
        problems.push((
            "InputsUnreadable",
            format!(
                "{} input(s) cannot be read and are left out: {named} (see their unreadable-input health insights)",
                unreadable.len()
            ),
        ));
    }
    if let Some((url, polls)) = prometheus
        && polls.failures >= DEGRADED_AFTER_FAILURES
    {
        let since = polls
            .failing_since
            .and_then(|s| Timestamp::from_second(s).ok())
            .map(|t| format!(" since {}", super::heartbeat::format(t)))
            .unwrap_or_default();
        problems.push((
            "PrometheusUnreachable",
            format!(
                "cannot read alerts from Prometheus at {url}: {} polls in a row failed{since} (last: {}); firing alerts are not shown (check that Prometheus is up and reachable, the token and the CA)",
                polls.failures,
                polls.last_reason.unwrap_or("unknown")
            ),
        ));
    }
    match problems.first() {
        None => Verdict {
            degraded: false,
            reason: "AsExpected",
            message: "update-status reads its inputs and, when configured, Prometheus".into(),
        },
        Some((reason, _)) => Verdict {
            degraded: true,
            reason,
            message: problems
                .iter()
                .map(|(_, m)| m.as_str())
                .collect::<Vec<_>>()
                .join(". "),
        },
    }
}

/// Where the agent's health is read from (standalone mode).
#[derive(Clone)]
pub struct AgentHealth {
    health: Arc<Health>,
    /// The Prometheus URL (redacted) and its polls, when alerts are read.
    prometheus: Option<(String, watch::Receiver<PrometheusPolls>)>,
}

impl AgentHealth {
    /// The health of the process (`health`: the watch caches) and of the Prometheus polls
    /// (`prometheus`: its URL, redacted, and [`crate::metrics::alert_polls::AlertPollMetrics::follow`]).
    pub fn new(
        health: Arc<Health>,
        prometheus: Option<(String, watch::Receiver<PrometheusPolls>)>,
    ) -> Self {
        AgentHealth { health, prometheus }
    }

    /// The verdict now, reading the unreadable-input insights of `local`.
    pub fn verdict(&self, local: &LocalObjects) -> Verdict {
        let failing = self.health.failing_caches(WATCH_FAILING_WINDOW);
        let mut unreadable: Vec<String> = local
            .select(&local.insights)
            .iter()
            .filter(|i| i.cached_label(labels::SOURCE) == Some(UNREADABLE_SOURCE))
            .filter_map(|i| {
                let r = &i.whole()?.status.as_ref()?.resource;
                Some(format!("{} {}", r.kind, r.name))
            })
            .collect();
        unreadable.sort();
        let polls = self.prometheus.as_ref().map(|(u, rx)| (u, *rx.borrow()));
        verdict(
            &failing,
            &unreadable,
            polls.as_ref().map(|(u, p)| (u.as_str(), p)),
        )
    }

    /// Resolves when the Prometheus polls say something new (never without Prometheus).
    pub async fn changed(&mut self) {
        match &mut self.prometheus {
            Some((_, rx)) => {
                if rx.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
            None => std::future::pending::<()>().await,
        }
    }
}

/// The condition saying `v`, whose transition time is `previous`'s (the condition on the hub's
/// copy) when its status is the same, else `now`.
pub fn condition(v: &Verdict, previous: Option<&CopyCondition>, now: Timestamp) -> CopyCondition {
    let status = if v.degraded {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    };
    let since = previous
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time)
        .unwrap_or(now);
    CopyCondition {
        type_: CONDITION_AGENT_DEGRADED.into(),
        status,
        reason: v.reason.into(),
        message: v.message.clone(),
        last_transition_time: Some(since),
    }
}

/// Puts `condition` among the conditions of the ControlPlaneUpdateStatus copy `copy` (replacing
/// one of its type).
pub fn set_on(copy: &mut ControlPlaneUpdateStatusStatus, condition: CopyCondition) {
    copy.conditions.retain(|c| c.type_ != condition.type_);
    copy.conditions.push(condition);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn healthy_is_not_degraded() {
        let v = verdict(&[], &[], None);
        assert!(!v.degraded);
        assert_eq!((v.status(), v.reason), ("False", "AsExpected"));
        let ok = PrometheusPolls {
            polled: true,
            failures: DEGRADED_AFTER_FAILURES - 1,
            failing_since: Some(1_700_000_000),
            last_reason: Some("connect"),
        };
        assert!(
            !verdict(&[], &[], Some(("https://p:9091", &ok))).degraded,
            "a failure or two is not an outage"
        );
    }

    #[test]
    fn the_worst_problem_gives_the_reason_and_every_problem_is_told() {
        let down = PrometheusPolls {
            polled: true,
            failures: 4,
            failing_since: Some(1_764_954_000),
            last_reason: Some("connect"),
        };
        let v = verdict(&[], &[], Some(("https://thanos:9091", &down)));
        assert!(v.degraded);
        assert_eq!((v.status(), v.reason), ("True", "PrometheusUnreachable"));
        assert!(
            v.message.contains("https://thanos:9091")
                && v.message.contains("4 polls")
                && v.message.contains("connect"),
            "{}",
            v.message
        );
        let unreadable: Vec<String> = (0..7).map(|i| format!("Node n{i}")).collect();
        let v = verdict(
            &[("Node", "nodes is forbidden".into())],
            &unreadable,
            Some(("https://thanos:9091", &down)),
        );
        assert_eq!(v.reason, "InputWatchFailing");
        assert!(
            v.message
                .contains("the watch of Node fails: nodes is forbidden")
        );
        assert!(v.message.contains("7 input(s)") && v.message.contains("and 2 more"));
        assert!(v.message.contains("Prometheus"), "{}", v.message);
        assert_eq!(
            verdict(&[], &unreadable[..1], None).reason,
            "InputsUnreadable"
        );
        for r in [
            "InputWatchFailing",
            "InputsUnreadable",
            "PrometheusUnreachable",
            "AsExpected",
        ] {
            assert!(update_status_api::acm::DEGRADED_REASONS.contains(&r));
        }
    }

    #[test]
    fn the_condition_keeps_its_transition_time_while_its_status_holds() {
        let t0: Timestamp = "2026-12-01T00:00:00Z".parse().expect("time");
        let t1: Timestamp = "2026-12-01T01:00:00Z".parse().expect("time");
        let healthy = verdict(&[], &[], None);
        let first = condition(&healthy, None, t0);
        assert_eq!(
            (first.type_.as_str(), first.status, first.reason.as_str()),
            ("AgentDegraded", ConditionStatus::False, "AsExpected")
        );
        assert_eq!(first.last_transition_time, Some(t0));
        assert_eq!(
            condition(&healthy, Some(&first), t1),
            first,
            "unchanged: the same condition, so the copy is not written again"
        );
        let down = PrometheusPolls {
            polled: true,
            failures: 3,
            failing_since: None,
            last_reason: Some("connect"),
        };
        let degraded = condition(
            &verdict(&[], &[], Some(("https://p", &down))),
            Some(&first),
            t1,
        );
        assert_eq!(degraded.status, ConditionStatus::True);
        assert_eq!(degraded.last_transition_time, Some(t1));
        let mut copy = ControlPlaneUpdateStatusStatus::default();
        set_on(&mut copy, first);
        set_on(&mut copy, degraded.clone());
        assert_eq!(copy.conditions, [degraded], "one condition of the type");
    }
}
