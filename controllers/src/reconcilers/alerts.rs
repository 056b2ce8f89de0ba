//! The alerts reconciler: firing Prometheus alerts → health insights (algorithms.md D.9).
//!
//! Prometheus has no watch, so this reconciler polls `/api/v1/alerts` every `interval` (with
//! ±10 % jitter, so that replicas and restarts do not synchronise), backing off exponentially
//! up to `max_backoff` while Prometheus fails. Between polls it is also woken when the
//! ControlPlaneUpdateStatus or a WorkerPoolUpdateStatus changes (the update's start, or whether
//! an update is in progress), and re-evaluates the last answer without polling.
//!
//! - Alert insights exist only while the cluster updates (B.1's gate, see
//!   [`update_status_assess::alerts::update_in_progress`]); they are owned by the ControlPlaneUpdateStatus `cluster`
//!   (same namespace), so they go with it.
//! - An alert that stops firing loses its insight at the next successful poll.
//! - A failed poll changes nothing: the insights of the last successful answer stay (one
//!   failure must not flap them away), a warning is logged, `update_status_prometheus_up` is 0
//!   and the failure is counted. After [`UNAVAILABLE_AFTER_FAILURES`] consecutive failures
//!   (about 1.5–2 minutes with the default 30 s interval) a single `Unknown`-level insight
//!   (source `AlertsUnavailable`) says so; it goes at the next successful poll.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use kube::ResourceExt;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, UpdateInsight, UpdateInsightStatus, WorkerPoolUpdateStatus, labels,
};
use update_status_api::input::Alert;

use crate::cache::prometheus::{PrometheusClient, PrometheusError};
use crate::cache::watch::Caches;
use crate::metrics::Metrics;
use crate::reconcilers::context::Context;
use crate::runtime::runner::{Reconcile, Requeue, Scope};
use crate::runtime::writer::{Desired, WriteError, Writer};
use update_status_assess::compose::{self, AlertsPoll, ExistingInsights, Labels};
use update_status_assess::naming;

/// Name of this reconciler (label value and field-manager suffix).
pub const NAME: &str = "alerts";
/// Default poll interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);
/// Longest wait between polls while Prometheus fails.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// Consecutive failed polls before the `AlertsUnavailable` insight appears.
pub const UNAVAILABLE_AFTER_FAILURES: u32 = 3;

/// How often to poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollSettings {
    /// Interval between successful polls.
    pub interval: Duration,
    /// Cap of the exponential back-off after failures.
    pub max_backoff: Duration,
}

impl Default for PollSettings {
    fn default() -> Self {
        PollSettings {
            interval: DEFAULT_INTERVAL,
            max_backoff: MAX_BACKOFF,
        }
    }
}

/// What the polls so far tell (pure bookkeeping).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PollState {
    /// The last successful answer (`None`: no success since the process started).
    pub alerts: Option<Vec<Alert>>,
    /// Consecutive failed polls.
    pub failures: u32,
    /// First failure of the current outage.
    pub failing_since: Option<Timestamp>,
    /// The last failure.
    pub last_error: Option<String>,
    /// Prometheus answers, but not a list of alerts: the decoding error and since when.
    pub malformed: Option<(String, Timestamp)>,
}

impl PollState {
    /// Records a successful poll.
    pub fn succeeded(&mut self, alerts: Vec<Alert>) {
        self.alerts = Some(alerts);
        self.failures = 0;
        self.failing_since = None;
        self.last_error = None;
        self.malformed = None;
    }

    /// Records an answer that is not a list of alerts, at `now`: like `oc`, the alerts are
    /// ignored (none shown, none kept from before) and an Info insight says so.
    pub fn malformed(&mut self, error: String, now: Timestamp) {
        let since = self.malformed.as_ref().map_or(now, |m| m.1);
        self.succeeded(Vec::new());
        self.malformed = Some((error, since));
    }

    /// Records a failed poll at `now`; the last successful answer is kept.
    pub fn failed(&mut self, error: String, now: Timestamp) {
        self.failures = self.failures.saturating_add(1);
        self.failing_since.get_or_insert(now);
        self.last_error = Some(error);
    }

    /// The outage to report (last error, since when), once past the grace period.
    pub fn unavailable(&self) -> Option<(&str, Timestamp)> {
        if self.failures < UNAVAILABLE_AFTER_FAILURES {
            return None;
        }
        Some((self.last_error.as_deref()?, self.failing_since?))
    }

    /// Wait before the next poll: the interval, doubled per consecutive failure up to
    /// `max_backoff`, times `1 + jitter` (`jitter` in [-0.1, 0.1]).
    pub fn next_delay(&self, settings: PollSettings, jitter: f64) -> Duration {
        let cap = settings.max_backoff.max(settings.interval);
        crate::runtime::clock::backoff(settings.interval, cap, self.failures, jitter)
    }
}

/// What the alerts' insights are made of.
///
/// - `control_plane`: the ControlPlaneUpdateStatus `cluster` (`None`: none yet → nothing); it
///   owns the alert insights;
/// - `existing`: our UpdateInsight cache (alert insights are kept as they are while no poll
///   succeeded since the start, and `startedAt` of the unavailable insight survives restarts);
/// - `prometheus`: the URL polled (for the unavailable insight).
pub struct AlertsInputs<'a, P> {
    /// The ControlPlaneUpdateStatus `cluster`.
    pub control_plane: Option<&'a ControlPlaneUpdateStatus>,
    /// The WorkerPoolUpdateStatus objects.
    pub worker_pools: P,
    /// What the polls of Prometheus found.
    pub poll: &'a PollState,
    /// Our UpdateInsights.
    pub existing: &'a [Arc<UpdateInsight>],
    /// The URL polled.
    pub prometheus: &'a str,
}

/// The insights this reconciler wants, complete, in a stable order: the core's
/// [`compose::alerts_share`] (the update-in-progress gate included) fed from the caches
/// (`inputs`).
pub fn desired_insights<'a>(
    inputs: AlertsInputs<'a, impl IntoIterator<Item = &'a WorkerPoolUpdateStatus>>,
    base: &Labels,
    now: Timestamp,
) -> Vec<Desired<UpdateInsightStatus>> {
    let AlertsInputs {
        control_plane,
        worker_pools,
        poll,
        existing,
        prometheus,
    } = inputs;
    let ours: Vec<Arc<UpdateInsight>> = existing.iter().filter(|o| is_ours(o)).cloned().collect();
    compose::alerts_share(
        control_plane.and_then(|c| Some((c.status.as_ref()?, compose::owner_of(c)))),
        worker_pools.into_iter().filter_map(|p| p.status.as_ref()),
        AlertsPoll {
            firing: poll.alerts.as_deref(),
            unavailable: poll
                .unavailable()
                .map(|(error, since)| (prometheus, error, since)),
            malformed: poll
                .malformed
                .as_ref()
                .map(|(error, since)| (prometheus, error.as_str(), *since)),
        },
        compose::Naming {
            existing: &ExistingInsights::new(&ours),
            base,
        },
        now,
    )
}

fn is_ours(o: &UpdateInsight) -> bool {
    o.labels().get(labels::RECONCILER).map(String::as_str) == Some(NAME)
}

/// The reconciler's state.
pub struct AlertsReconciler {
    caches: Caches,
    insights: Writer<UpdateInsight>,
    metrics: Arc<Metrics>,
    prometheus: PrometheusClient,
    url: String,
    settings: PollSettings,
    cluster_id: Option<String>,
    poll: PollState,
    next_poll: Option<Instant>,
}

impl AlertsReconciler {
    /// Creates the reconciler, polling `prometheus` as `settings` say.
    pub fn new(ctx: Context, prometheus: PrometheusClient, settings: PollSettings) -> Self {
        AlertsReconciler {
            insights: ctx.writer(NAME),
            caches: ctx.caches,
            metrics: ctx.metrics,
            url: prometheus.base_url().to_string(),
            prometheus,
            settings,
            cluster_id: ctx.cluster_id,
            poll: PollState::default(),
            next_poll: None,
        }
    }

    async fn poll_prometheus(&mut self, now: Timestamp) {
        match self.prometheus.alerts().await {
            Ok(firing) => {
                if self.poll.failures > 0 {
                    tracing::info!(
                        reconciler = NAME,
                        url = %self.prometheus.alerts_url(),
                        failures = self.poll.failures,
                        "reading alerts from Prometheus works again"
                    );
                }
                tracing::debug!(
                    reconciler = NAME,
                    alerts = firing.len(),
                    "polled Prometheus"
                );
                self.metrics
                    .alert_polls
                    .polled(Ok(Timestamp::now().as_millisecond() as f64 / 1000.0));
                self.poll.succeeded(firing);
            }
            Err(e @ PrometheusError::Decode { .. }) => {
                self.metrics.alert_polls.polled(Err(e.reason()));
                tracing::warn!(
                    reconciler = NAME,
                    error = %e,
                    "Prometheus answered something that is not a list of alerts; ignoring alerts (as oc does) until it does"
                );
                self.poll.malformed(e.to_string(), now);
            }
            Err(e) => {
                self.metrics.alert_polls.polled(Err(e.reason()));
                self.poll.failed(e.to_string(), now);
                let retry = self.poll.next_delay(self.settings, 0.0);
                tracing::warn!(
                    reconciler = NAME,
                    error = %e,
                    failures = self.poll.failures,
                    "cannot read alerts from Prometheus; keeping the alert insights of the last successful poll, retrying in about {retry:?}"
                );
            }
        }
        self.next_poll = Some(
            Instant::now()
                + self
                    .poll
                    .next_delay(self.settings, crate::runtime::clock::jitter()),
        );
    }
}

impl Reconcile for AlertsReconciler {
    const NAME: &'static str = NAME;
    fn scope(&self) -> Scope {
        Scope::of(self.insights.namespace(), self.cluster_id.as_deref())
    }
    /// One pass: polls when due, then writes.
    async fn reconcile(&mut self, now: Timestamp) -> Result<Requeue, WriteError> {
        if self.next_poll.is_none_or(|t| Instant::now() >= t) {
            self.poll_prometheus(now).await;
        }
        let cps = self.caches.control_plane_statuses.state();
        let cp = cps
            .iter()
            .find(|c| c.name_any() == naming::CONTROL_PLANE_STATUS_NAME);
        let pools = self.caches.worker_pool_statuses.state();
        let existing = self.caches.insights.state();
        let desired = desired_insights(
            AlertsInputs {
                control_plane: cp.map(|c| c.as_ref()),
                worker_pools: pools.iter().map(|p| p.as_ref()),
                poll: &self.poll,
                existing: &crate::cache::insights::wholes(&existing),
                prometheus: &self.url,
            },
            &compose::base_labels(self.cluster_id.as_deref()),
            now,
        );
        let stats = self.insights.sync(&desired, &existing).await?;
        if stats.writes() > 0 {
            tracing::info!(
                reconciler = NAME,
                writes = stats.writes(),
                insights = desired.len(),
                "alert insights updated"
            );
        }
        let next_poll = self.next_poll.map_or(Duration::ZERO, |t| {
            t.saturating_duration_since(Instant::now())
        });
        // Or when a refused object's back-off ends, if sooner.
        Ok(Requeue::After(next_poll).min(self.insights.retry_in().into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{
        Condition, ConditionStatus, ControlPlaneUpdateStatusSpec, ControlPlaneUpdateStatusStatus,
        ImpactLevel, UpdateInsightSpec,
    };

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    const START: &str = "2024-01-01T12:00:00Z";
    const NOW: &str = "2024-01-01T13:00:00Z";

    fn cp(updating: bool) -> ControlPlaneUpdateStatus {
        let mut o = ControlPlaneUpdateStatus::new("cluster", ControlPlaneUpdateStatusSpec {});
        o.status = Some(ControlPlaneUpdateStatusStatus {
            started_at: Some(ts(START)),
            conditions: vec![Condition {
                type_: "Updating".into(),
                status: if updating {
                    ConditionStatus::True
                } else {
                    ConditionStatus::False
                },
                ..Default::default()
            }],
            ..Default::default()
        });
        o
    }

    fn firing(name: &str, severity: &str, active_at: &str) -> Alert {
        Alert {
            labels: [
                ("alertname".to_string(), name.to_string()),
                ("severity".to_string(), severity.to_string()),
            ]
            .into(),
            state: "firing".into(),
            active_at: Some(ts(active_at)),
            ..Default::default()
        }
    }

    fn object(name: &str, status: UpdateInsightStatus) -> Arc<UpdateInsight> {
        let mut o = UpdateInsight::new(name, UpdateInsightSpec {});
        o.metadata.labels = Some([(labels::RECONCILER.to_string(), NAME.to_string())].into());
        o.status = Some(status);
        Arc::new(o)
    }

    fn pairs(d: Vec<Desired<UpdateInsightStatus>>) -> Vec<(String, UpdateInsightStatus)> {
        d.into_iter().map(|d| (d.name, d.status)).collect()
    }

    /// The insights desired at `NOW`, without base labels, of a cluster without worker pools.
    fn desired_now<'a>(
        control_plane: Option<&'a ControlPlaneUpdateStatus>,
        poll: &'a PollState,
        existing: &'a [Arc<UpdateInsight>],
        prometheus: &'a str,
    ) -> Vec<(String, UpdateInsightStatus)> {
        let inputs = AlertsInputs {
            control_plane,
            worker_pools: [],
            poll,
            existing,
            prometheus,
        };
        pairs(desired_insights(inputs, &Labels::new(), ts(NOW)))
    }

    fn sources(d: &[(String, UpdateInsightStatus)]) -> Vec<(&str, &str, ImpactLevel)> {
        d.iter()
            .map(|(_, s)| {
                let h = s.health.as_ref().expect("health");
                (s.resource.name.as_str(), h.source.as_str(), h.impact.level)
            })
            .collect()
    }

    #[test]
    fn backoff_with_jitter_is_capped() {
        let settings = PollSettings::default();
        let mut p = PollState::default();
        assert_eq!(p.next_delay(settings, 0.0), Duration::from_secs(30));
        assert_eq!(p.next_delay(settings, 0.1), Duration::from_secs(33));
        assert_eq!(p.next_delay(settings, -0.5), Duration::from_secs(27));
        let mut delays = Vec::new();
        for _ in 0..7 {
            p.failed("x".into(), ts(NOW));
            delays.push(p.next_delay(settings, 0.0).as_secs());
        }
        assert_eq!(delays, [30, 60, 120, 240, 300, 300, 300]);
        assert_eq!(p.next_delay(settings, 0.1), Duration::from_secs(300));
        p.succeeded(vec![]);
        assert_eq!(p.next_delay(settings, 0.0), Duration::from_secs(30));
        // An interval above the cap is not shortened by failures.
        let slow = PollSettings {
            interval: Duration::from_secs(600),
            max_backoff: MAX_BACKOFF,
        };
        p.failed("x".into(), ts(NOW));
        assert_eq!(p.next_delay(slow, 0.0), Duration::from_secs(600));
    }

    #[test]
    fn a_malformed_answer_drops_alerts_and_says_so_at_info_level() {
        let cp = cp(true);
        let url = "https://thanos:9091";
        let mut p = PollState::default();
        p.succeeded(vec![firing("A", "critical", "2024-01-01T12:30:00Z")]);
        let body = br#"{"status":"success","data":{"alerts":"not-a-list"}}"#;
        let err = crate::cache::prometheus::parse_alerts(url, http::StatusCode::OK, body)
            .expect_err("data.alerts is not a list");
        assert!(matches!(err, PrometheusError::Decode { .. }), "{err}");
        p.malformed(err.to_string(), ts(NOW));
        p.malformed(err.to_string(), ts("2024-01-01T13:05:00Z"));
        let d = desired_now(Some(&cp), &p, &[], url);
        assert_eq!(
            sources(&d),
            [("thanos:9091", "AlertsMalformed", ImpactLevel::Info)],
            "no stale alert, one Info insight"
        );
        let h = d[0].1.health.as_ref().expect("health");
        assert!(
            h.impact
                .summary
                .starts_with("Ignoring alerts in 'Update Health'. Error unmarshaling alerts: "),
            "{}",
            h.impact.summary
        );
        assert_eq!(h.started_at, Some(ts(NOW)), "since the first such answer");
        p.succeeded(vec![]);
        assert!(p.malformed.is_none(), "a good answer clears it");
    }

    #[test]
    fn a_failed_poll_keeps_alerts_and_reports_after_the_grace_period() {
        let cp = cp(true);
        let url = "https://thanos:9091";
        let mut p = PollState::default();
        p.succeeded(vec![
            firing("A", "critical", "2024-01-01T12:30:00Z"),
            firing("Early", "critical", "2024-01-01T11:00:00Z"),
        ]);
        let ok = desired_now(Some(&cp), &p, &[], url);
        assert_eq!(sources(&ok), [("A", "Alert", ImpactLevel::Critical)]);

        for i in 1..UNAVAILABLE_AFTER_FAILURES {
            p.failed(format!("refused {i}"), ts(NOW));
            let d = desired_now(Some(&cp), &p, &[], url);
            assert_eq!(d, ok, "within the grace period nothing changes");
        }
        p.failed("refused again".into(), ts("2024-01-01T13:01:00Z"));
        let d = desired_now(Some(&cp), &p, &[], url);
        assert_eq!(
            sources(&d),
            [
                ("A", "Alert", ImpactLevel::Critical),
                ("thanos:9091", "AlertsUnavailable", ImpactLevel::Unknown)
            ]
        );
        let h = d[1].1.health.as_ref().expect("health");
        assert_eq!(h.started_at, Some(ts(NOW)), "since the first failure");
        assert_eq!(
            h.impact.summary,
            "Cannot read alerts from Prometheus: refused again"
        );

        // The outage started earlier in a previous process: that start is kept.
        let mut old = d[1].1.clone();
        if let Some(h) = old.health.as_mut() {
            h.started_at = Some(ts(START));
        }
        let existing = vec![object(&d[1].0, old)];
        let d2 = desired_now(Some(&cp), &p, &existing, url);
        assert_eq!(
            d2[1].1.health.as_ref().and_then(|h| h.started_at),
            Some(ts(START))
        );

        // Prometheus answers again: the unavailable insight goes, the answer counts.
        p.succeeded(vec![]);
        assert!(desired_now(Some(&cp), &p, &[], url).is_empty());
    }

    #[test]
    fn before_the_first_successful_poll_existing_alert_insights_are_kept() {
        let cp = cp(true);
        let mut p = PollState::default();
        p.succeeded(vec![firing("A", "warning", "2024-01-01T12:30:00Z")]);
        let (name, status) = desired_now(Some(&cp), &p, &[], "http://p")
            .into_iter()
            .next()
            .expect("one");
        let existing = vec![object(&name, status.clone())];
        // A new process whose first poll fails.
        let mut fresh = PollState::default();
        fresh.failed("refused".into(), ts(NOW));
        let d = desired_now(Some(&cp), &fresh, &existing, "http://p");
        assert_eq!(d, [(name, status)]);
    }

    #[test]
    fn nothing_without_an_update_or_a_control_plane_status() {
        let mut p = PollState::default();
        p.succeeded(vec![firing("A", "critical", "2024-01-01T12:30:00Z")]);
        for _ in 0..UNAVAILABLE_AFTER_FAILURES {
            p.failed("refused".into(), ts(NOW));
        }
        assert!(desired_now(None, &p, &[], "http://p").is_empty());
        let idle = cp(false);
        assert!(desired_now(Some(&idle), &p, &[], "http://p").is_empty());
        // Workers still updating after the control plane completed: shown.
        let mut pool = WorkerPoolUpdateStatus::new("worker", Default::default());
        pool.status = Some(update_status_api::crd::WorkerPoolUpdateStatusStatus {
            completion_percent: 50,
            nodes: update_status_api::crd::NodeCounts {
                total: 2,
                ..Default::default()
            },
            ..Default::default()
        });
        assert_eq!(
            pairs(desired_insights(
                AlertsInputs {
                    control_plane: Some(&idle),
                    worker_pools: [&pool],
                    poll: &p,
                    existing: &[],
                    prometheus: "http://p"
                },
                &Labels::new(),
                ts(NOW)
            ))
            .len(),
            2
        );
    }

    #[test]
    fn identical_label_sets_are_one_object() {
        let cp = cp(true);
        let mut p = PollState::default();
        let a = firing("A", "warning", "2024-01-01T12:30:00Z");
        let mut b = a.clone();
        b.labels.insert("pod".into(), "b".into());
        p.succeeded(vec![a.clone(), a, b]);
        let d = desired_now(Some(&cp), &p, &[], "http://p");
        assert_eq!(d.len(), 2);
        assert_ne!(d[0].0, d[1].0);
    }
}
