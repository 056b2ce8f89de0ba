//! The polls of Prometheus' alerts (the alerts reconciler, `--prometheus-url`):
//! `update_status_prometheus_up`, `..._polls_total`, `..._poll_failures_total{reason}` and
//! `..._last_success_timestamp_seconds`, and their recent history followed by the agent's
//! health on its ManagedClusterAddOn ([`PrometheusPolls`]).

use prometheus::core::Collector;
use prometheus::{GaugeVec, IntCounterVec, IntGaugeVec, Opts};

use super::family::Family;

/// The recent polls of Prometheus: consecutive failures, since when, and the last failure's
/// reason (`update_status_prometheus_poll_failures_total`'s label).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PrometheusPolls {
    /// A poll was made.
    pub polled: bool,
    /// Consecutive failed polls (0: the last one succeeded).
    pub failures: u32,
    /// Unix seconds of the first failure of the current run of failures.
    pub failing_since: Option<i64>,
    /// The reason of the last failure.
    pub last_reason: Option<&'static str>,
}

/// The polls of Prometheus' alerts.
pub struct AlertPollMetrics {
    up: IntGaugeVec,
    polls: IntCounterVec,
    failures: IntCounterVec,
    last_success: GaugeVec,
    /// What the polls of Prometheus said lately (the agent's health on its ManagedClusterAddOn).
    state: tokio::sync::watch::Sender<PrometheusPolls>,
}

impl AlertPollMetrics {
    pub(super) fn new() -> Result<Self, prometheus::Error> {
        Ok(AlertPollMetrics {
            up: IntGaugeVec::new(
                Opts::new(
                    "update_status_prometheus_up",
                    "1 if the last poll of Prometheus' alerts succeeded, 0 if it failed (absent when no --prometheus-url is set).",
                ),
                &[],
            )?,
            polls: IntCounterVec::new(
                Opts::new(
                    "update_status_prometheus_polls_total",
                    "Polls of Prometheus' /api/v1/alerts.",
                ),
                &[],
            )?,
            failures: IntCounterVec::new(
                Opts::new(
                    "update_status_prometheus_poll_failures_total",
                    "Failed polls of Prometheus' /api/v1/alerts by reason (config, token, tls, connect, timeout, http, decode).",
                ),
                &["reason"],
            )?,
            last_success: GaugeVec::new(
                Opts::new(
                    "update_status_prometheus_last_success_timestamp_seconds",
                    "When alerts were last read from Prometheus (Unix seconds).",
                ),
                &[],
            )?,
            state: tokio::sync::watch::Sender::new(PrometheusPolls::default()),
        })
    }

    /// Records a poll of Prometheus: `Ok(unix seconds)` or `Err(reason)`.
    pub fn polled(&self, result: Result<f64, &'static str>) {
        self.polls.with_label_values(&[] as &[&str]).inc();
        match result {
            Ok(at) => {
                self.up.with_label_values(&[] as &[&str]).set(1);
                self.last_success.with_label_values(&[] as &[&str]).set(at);
            }
            Err(reason) => {
                self.up.with_label_values(&[] as &[&str]).set(0);
                self.failures.with_label_values(&[reason]).inc();
            }
        }
        let now = jiff::Timestamp::now().as_second();
        // Watchers are woken only when what they read changes (not at every successful poll).
        self.state.send_if_modified(|s| {
            let old = *s;
            match result {
                Ok(_) => {
                    *s = PrometheusPolls {
                        polled: true,
                        ..PrometheusPolls::default()
                    }
                }
                Err(reason) => {
                    s.polled = true;
                    s.failures = s.failures.saturating_add(1);
                    s.failing_since.get_or_insert(now);
                    s.last_reason = Some(reason);
                }
            }
            *s != old
        });
    }

    /// The recent polls of Prometheus, followed (see [`PrometheusPolls`]).
    pub fn follow(&self) -> tokio::sync::watch::Receiver<PrometheusPolls> {
        self.state.subscribe()
    }
}

impl Family for AlertPollMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.up.clone()),
            Box::new(self.polls.clone()),
            Box::new(self.failures.clone()),
            Box::new(self.last_success.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::registry::Metrics;

    #[test]
    fn prometheus_poll_metrics() {
        let m = Metrics::new().expect("metrics");
        assert!(
            !m.render().contains("update_status_prometheus_up"),
            "absent until polled"
        );
        m.alert_polls.polled(Err("connect"));
        let text = m.render();
        assert!(text.contains("update_status_prometheus_up 0"), "{text}");
        assert!(
            text.contains(r#"update_status_prometheus_poll_failures_total{reason="connect"} 1"#)
        );
        m.alert_polls.polled(Ok(1_700_000_000.0));
        let text = m.render();
        assert!(text.contains("update_status_prometheus_up 1"), "{text}");
        assert!(
            text.contains("update_status_prometheus_polls_total 2"),
            "{text}"
        );
        assert!(
            text.contains("update_status_prometheus_last_success_timestamp_seconds 1700000000"),
            "{text}"
        );
    }
}
