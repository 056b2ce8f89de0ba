//! The one registry: every family of metrics ([`Metrics`]'s fields, one per concern) registered
//! into it once at start-up, and the text exposition `/metrics` serves ([`Metrics::render`]).

use std::sync::Mutex;

use prometheus::{Encoder, Registry, TextEncoder};

use super::alert_polls::AlertPollMetrics;
use super::estimates::EstimateMetrics;
use super::events::EventMetrics;
use super::family::{Family, PerCluster};
use super::hub::HubMetrics;
use super::insights::InsightMetrics;
use super::reconciles::ReconcileMetrics;
use super::scrape_auth::ScrapeAuthMetrics;
use super::update::UpdateMetrics;
use super::writes::WriteMetrics;

/// All metrics of the controller, one family per concern.
pub struct Metrics {
    /// The reconcile passes (the runner).
    pub reconciles: ReconcileMetrics,
    /// The writes to the cluster's API server.
    pub writes: WriteMetrics,
    /// The update's state: control plane and worker pools.
    pub update: UpdateMetrics,
    /// The health insights, read from the insight cache at every scrape.
    pub insights: InsightMetrics,
    /// The estimates that learn.
    pub estimates: EstimateMetrics,
    /// The polls of Prometheus' alerts.
    pub alert_polls: AlertPollMetrics,
    /// The hub sync: its writes, passes and credentials.
    pub hub: HubMetrics,
    /// The authorization of `/metrics` scrapes.
    pub scrape_auth: ScrapeAuthMetrics,
    /// The Kubernetes Events published.
    pub events: EventMetrics,
    registry: Registry,
    names: Vec<String>,
    render_lock: Mutex<()>,
}

/// Errors building the registry (a programming error: duplicate or invalid metric).
#[derive(Debug, thiserror::Error)]
#[error("registering metrics: {0}")]
pub struct MetricsError(#[from] prometheus::Error);

impl Metrics {
    /// Creates and registers every metric (standalone mode).
    pub fn new() -> Result<Self, MetricsError> {
        Self::build(PerCluster(false))
    }

    /// Creates and registers every metric for hosted mode: the hub sync series
    /// (`update_status_hub_sync_up`, `..._errors_total`, `..._last_success_timestamp_seconds`),
    /// the update's and the health series carry a `hosted_cluster` label (`<namespace>/<name>`
    /// of the HostedCluster), since there is one hub session and one update per HostedCluster.
    pub fn new_hosted() -> Result<Self, MetricsError> {
        Self::build(PerCluster(true))
    }

    fn build(per_cluster: PerCluster) -> Result<Self, MetricsError> {
        let mut m = Metrics {
            reconciles: ReconcileMetrics::new()?,
            writes: WriteMetrics::new()?,
            update: UpdateMetrics::new(per_cluster)?,
            insights: InsightMetrics::new(per_cluster)?,
            estimates: EstimateMetrics::new()?,
            alert_polls: AlertPollMetrics::new()?,
            hub: HubMetrics::new(per_cluster)?,
            scrape_auth: ScrapeAuthMetrics::new()?,
            events: EventMetrics::new()?,
            registry: Registry::new(),
            names: Vec::new(),
            render_lock: Mutex::new(()),
        };
        let families: [&dyn Family; 9] = [
            &m.reconciles,
            &m.writes,
            &m.update,
            &m.insights,
            &m.estimates,
            &m.alert_polls,
            &m.hub,
            &m.scrape_auth,
            &m.events,
        ];
        let collectors: Vec<_> = families.iter().flat_map(|f| f.collectors()).collect();
        for c in collectors {
            m.names.extend(c.desc().iter().map(|d| d.fq_name.clone()));
            m.registry.register(c)?;
        }
        Ok(m)
    }

    /// Names of every metric this process can export.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The text exposition of every metric (the health series computed now).
    pub fn render(&self) -> String {
        let _guard = self
            .render_lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.insights.publish();
        let mut buf = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut buf) {
            tracing::warn!(error = %e, "encoding metrics");
        }
        String::from_utf8_lossy(&buf).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_registered() {
        let m = Metrics::new().expect("metrics");
        for name in [
            "update_status_reconciles_total",
            "update_status_api_writes_total",
            "update_status_update_in_progress",
            "update_status_health_insight_info",
            "update_status_estimated_seconds_remaining",
            "update_status_prometheus_up",
            "update_status_hub_sync_up",
            "update_status_metrics_auth_reviews_total",
            "update_status_events_total",
        ] {
            assert!(m.names().iter().any(|n| n == name), "{name}");
        }
    }
}
