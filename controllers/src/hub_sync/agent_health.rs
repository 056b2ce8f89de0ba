//! The agent's own health on its ManagedClusterAddOn (standalone mode on an ACM hub): the
//! condition [`CONDITION_DEGRADED`], `True` while the agent cannot do all of its job, with the
//! reason and what to check; `False` (reason `AsExpected`) otherwise. OCM's `Available` only
//! says that the agent's Deployment is ready.
//!
//! What makes it degraded, worst first:
//! - `InputWatchFailing`: the watch of an input (Nodes, ClusterOperators, ...) fails now, or has
//!   not listed within its bound: what is reported may be stale;
//! - `InputsUnreadable`: inputs that cannot be decoded are left out (their `unreadable-input`
//!   health insights name them);
//! - `PrometheusUnreachable`: [`DEGRADED_AFTER_FAILURES`] polls of Prometheus in a row failed
//!   (alerts are not shown, as the `AlertsUnavailable` insight says).
//!
//! Written by the hub session after a pass that succeeded, only when it changes (or when the
//! ManagedClusterAddOn, read every few minutes, shows something else): a server-side apply of
//! the status subresource by field manager `update-status-controller/agent-health`. The
//! conditions are a list-map keyed by `type`, so the apply owns our one entry; OCM's add-on
//! manager writes its own conditions with merge patches of the whole list, made from a
//! resourceVersion-checked read, which keep ours. The hub ClusterRole allows `patch` on
//! `managedclusteraddons/status` of the object `update-status` only.
//!
//! A failing hub cannot be reported through the hub: that is what the heartbeat
//! ([`super::heartbeat`]) and `update_status_hub_sync_up` are for.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use kube::Api;
use kube::api::{Patch, PatchParams};
use tokio::sync::watch;
use update_status_api::acm::{ADDON_NAME, CONDITION_DEGRADED, ManagedClusterAddOn};
use update_status_api::crd::labels;
use update_status_api::input::Condition;

use super::errors::HubError;
use super::local::LocalObjects;
use crate::metrics::{Metrics, PrometheusPolls};
use crate::runtime::existing::Cached;
use crate::runtime::health::Health;
use update_status_assess::redact::redact_urls_in;

/// Consecutive failed polls of Prometheus before the agent reports itself degraded (the
/// alerts reconciler's `AlertsUnavailable` insight appears after as many).
pub const DEGRADED_AFTER_FAILURES: u32 = 3;
/// A watch whose last error is this recent fails now (a failing watch retries every 5 s at
/// most).
pub const WATCH_FAILING_WINDOW: Duration = Duration::from_secs(30);
/// Field manager of the condition's applies.
pub const FIELD_MANAGER: &str = "update-status-controller/agent-health";
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

    /// Whether `c` says the same.
    pub fn matches(&self, c: &Condition) -> bool {
        c.status == self.status() && c.reason == self.reason && c.message == self.message
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

/// Applies `v` as the `Degraded` condition of the ManagedClusterAddOn of `namespace`, whose
/// current condition is `previous` (its transition time is kept when the status is the same).
pub async fn report(
    client: &kube::Client,
    namespace: &str,
    v: &Verdict,
    previous: Option<&Condition>,
) -> Result<(), HubError> {
    let since = previous
        .filter(|c| c.status == v.status())
        .and_then(|c| c.last_transition_time)
        .unwrap_or_else(Timestamp::now);
    let api: Api<ManagedClusterAddOn> = Api::namespaced(client.clone(), namespace);
    let body = serde_json::json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": ADDON_NAME, "namespace": namespace},
        "status": {"conditions": [{
            "type": CONDITION_DEGRADED,
            "status": v.status(),
            "reason": v.reason,
            "message": v.message,
            "lastTransitionTime": super::heartbeat::format(since),
        }]},
    });
    api.patch_status(
        ADDON_NAME,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
    .map(drop)
    .map_err(|e| HubError::Api {
        verb: "patch managedclusteraddons/status (Degraded)",
        namespace: namespace.to_string(),
        source: Box::new(e),
    })
}

/// The condition as last written, so that it is written only on change.
#[derive(Default)]
pub struct Reported {
    /// The verdict written, and when.
    written: Option<(Verdict, Instant)>,
    /// The reason of the last failed write (warned about once per reason).
    failure: Option<&'static str>,
}

impl Reported {
    /// Writes `verdict` unless the ManagedClusterAddOn (`mca`, as read at the instant given)
    /// shows it already, or it was written and the object was not read since: once per change,
    /// again only if the object, read after our write, lost it. A failure is warned about (once
    /// per reason) and retried at the next call; it does not fail the hub pass.
    pub async fn report_if_changed(
        &mut self,
        client: &kube::Client,
        namespace: &str,
        (mca, read_at): (&ManagedClusterAddOn, Instant),
        verdict: Verdict,
        metrics: &Metrics,
    ) {
        let current = mca.condition(CONDITION_DEGRADED);
        let shown = current.is_some_and(|c| verdict.matches(c));
        let need = !shown
            && match &self.written {
                None => true,
                Some((v, at)) => *v != verdict || read_at > *at,
            };
        if !need {
            if shown && self.written.as_ref().is_none_or(|(v, _)| *v != verdict) {
                self.written = Some((verdict, read_at));
            }
            return;
        }
        match report(client, namespace, &verdict, current).await {
            Ok(()) => {
                metrics.hub.write("ManagedClusterAddOn", "apply-status");
                tracing::info!(
                    namespace,
                    degraded = verdict.degraded,
                    reason = verdict.reason,
                    message = %verdict.message,
                    "agent health reported on the ManagedClusterAddOn"
                );
                self.written = Some((verdict, Instant::now()));
                self.failure = None;
            }
            Err(e) => {
                let reason = e.reason();
                if self.failure != Some(reason) {
                    tracing::warn!(
                        namespace,
                        reason,
                        error = %redact_urls_in(&e.to_string()),
                        "cannot report the agent's health on the ManagedClusterAddOn (the hub ClusterRole needs patch on managedclusteraddons/status); retrying at the next pass"
                    );
                    self.failure = Some(reason);
                }
            }
        }
    }
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
    fn a_condition_matches_on_status_reason_and_message() {
        let v = verdict(&[], &[], None);
        let mut c = Condition {
            type_: CONDITION_DEGRADED.into(),
            status: "False".into(),
            reason: "AsExpected".into(),
            message: v.message.clone(),
            last_transition_time: None,
        };
        assert!(v.matches(&c));
        c.message = "else".into();
        assert!(!v.matches(&c));
    }
}
