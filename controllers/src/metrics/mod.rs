//! Prometheus metrics: the update's state for alerting (bounded cardinality: no per-node
//! series) and the controller's internals.
//!
//! Health insights are exported from one place only: the insight cache, read at scrape time
//! ([`Metrics::set_insight_source`], attached by the controller). Every health insight in the
//! namespace counts, whichever reconciler wrote it (control-plane, worker-pools — master-pool
//! node insights included — and alerts), so the series always match the objects.
//!
//! [`server`] serves them (`/metrics`, HTTPS for authorized scrapers) and the probes.
//!
//! May import: nothing of this crate (the bottom layer).

pub mod estimates;
pub mod server;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use prometheus::{
    Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};
use update_status_api::crd::{
    Assessment, ControlPlaneUpdateStatusStatus, ImpactLevel, InsightType, ScopeType, UpdateInsight,
    UpdateInsightStatus, WorkerPoolUpdateStatusStatus,
};

/// Control-plane assessments exported as a state set (`Pending`: a hosted cluster's update is
/// requested but not started).
pub const CONTROL_PLANE_ASSESSMENTS: [Assessment; 6] = [
    Assessment::Pending,
    Assessment::Progressing,
    Assessment::ProgressingSlow,
    Assessment::Stalled,
    Assessment::Completed,
    Assessment::Unknown,
];

/// Node assessments exported per pool.
pub const NODE_ASSESSMENTS: [Assessment; 6] = [
    Assessment::Completed,
    Assessment::Progressing,
    Assessment::Outdated,
    Assessment::Degraded,
    Assessment::Unavailable,
    Assessment::Excluded,
];

/// At most this many `update_status_health_insight_info` series (the most severe first): a
/// mass outage (every node unavailable) must not blow up the series count.
pub const MAX_INFO_SERIES: usize = 256;

/// Scopes of `update_status_health_insights` (each always exported, zeros included).
pub const SCOPES: [ScopeType; 3] = [
    ScopeType::ControlPlane,
    ScopeType::WorkerPool,
    ScopeType::Cluster,
];

/// Where the health series come from at scrape time: our UpdateInsight objects.
pub type InsightSource = Box<dyn Fn() -> Vec<Arc<UpdateInsight>> + Send + Sync>;

/// All metrics of the controller.
pub struct Metrics {
    /// The estimates that learn (`estimates.rs`).
    pub estimates: estimates::EstimateMetrics,
    registry: Registry,
    reconciles: IntCounterVec,
    reconcile_errors: IntCounterVec,
    reconcile_duration: HistogramVec,
    api_writes: IntCounterVec,
    write_errors: IntCounterVec,
    update_in_progress: IntGaugeVec,
    cp_completion: GaugeVec,
    cp_assessment: IntGaugeVec,
    pool_completion: GaugeVec,
    pool_nodes: IntGaugeVec,
    health_insights: IntGaugeVec,
    health_insight_info: IntGaugeVec,
    prometheus_up: IntGaugeVec,
    prometheus_polls: IntCounterVec,
    prometheus_failures: IntCounterVec,
    prometheus_last_success: GaugeVec,
    hub_writes: IntCounterVec,
    hub_up: IntGaugeVec,
    hub_errors: IntCounterVec,
    hub_last_success: GaugeVec,
    hub_credential_reloads: IntCounterVec,
    metrics_auth_reviews: IntCounterVec,
    metrics_auth_refused: IntCounterVec,
    events: IntCounterVec,
    event_errors: IntCounterVec,
    events_dropped: IntCounterVec,
    /// Hosted mode: the hub, control-plane, pool and health series carry a `hosted_cluster`
    /// label (`<namespace>/<name>`: one hub session and one update per HostedCluster);
    /// standalone: no label (one cluster).
    hub_per_cluster: bool,
    /// Hosted mode: the pools whose series are set, per HostedCluster (to replace or forget
    /// them: a vector's series cannot be removed by one label).
    hosted_pools: Mutex<BTreeMap<String, Vec<String>>>,
    names: Vec<String>,
    insight_source: OnceLock<InsightSource>,
    render_lock: Mutex<()>,
    /// What the polls of Prometheus said lately (the agent's health on its ManagedClusterAddOn).
    prometheus_state: tokio::sync::watch::Sender<PrometheusPolls>,
}

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

/// Errors building the registry (a programming error: duplicate or invalid metric).
#[derive(Debug, thiserror::Error)]
#[error("registering metrics: {0}")]
pub struct MetricsError(#[from] prometheus::Error);

impl Metrics {
    /// Creates and registers every metric (standalone mode).
    pub fn new() -> Result<Self, MetricsError> {
        Self::build(false)
    }

    /// Creates and registers every metric for hosted mode: the hub sync series
    /// (`update_status_hub_sync_up`, `..._errors_total`, `..._last_success_timestamp_seconds`)
    /// carry a `hosted_cluster` label (`<namespace>/<name>` of the HostedCluster), since there
    /// is one hub session per HostedCluster.
    pub fn new_hosted() -> Result<Self, MetricsError> {
        Self::build(true)
    }

    fn build(hub_per_cluster: bool) -> Result<Self, MetricsError> {
        let hub_labels: &[&str] = if hub_per_cluster {
            &["hosted_cluster"]
        } else {
            &[]
        };
        let hub_error_labels: &[&str] = if hub_per_cluster {
            &["hosted_cluster", "reason"]
        } else {
            &["reason"]
        };
        // Hosted mode: the update series are per HostedCluster too (a leading label).
        let hosted = |rest: &[&'static str]| -> Vec<&'static str> {
            hub_per_cluster
                .then_some("hosted_cluster")
                .into_iter()
                .chain(rest.iter().copied())
                .collect()
        };
        let registry = Registry::new();
        let mut m = Metrics {
            estimates: estimates::EstimateMetrics::new()?,
            reconciles: IntCounterVec::new(
                Opts::new(
                    "update_status_reconciles_total",
                    "Reconcile passes by reconciler.",
                ),
                &["reconciler"],
            )?,
            reconcile_errors: IntCounterVec::new(
                Opts::new(
                    "update_status_reconcile_errors_total",
                    "Reconcile passes that failed, by reconciler.",
                ),
                &["reconciler"],
            )?,
            reconcile_duration: HistogramVec::new(
                HistogramOpts::new(
                    "update_status_reconcile_duration_seconds",
                    "Duration of reconcile passes (assessment and writes).",
                )
                .buckets(vec![
                    0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                ]),
                &["reconciler"],
            )?,
            api_writes: IntCounterVec::new(
                Opts::new(
                    "update_status_api_writes_total",
                    "Writes to the API server by kind and verb.",
                ),
                &["kind", "verb"],
            )?,
            update_in_progress: IntGaugeVec::new(
                Opts::new(
                    "update_status_update_in_progress",
                    "1 while the cluster is updating (ClusterVersion Progressing=True or a worker pool outdated).",
                ),
                &hosted(&[]),
            )?,
            cp_completion: GaugeVec::new(
                Opts::new(
                    "update_status_control_plane_completion_ratio",
                    "Fraction of platform operators at the target version.",
                ),
                &hosted(&[]),
            )?,
            cp_assessment: IntGaugeVec::new(
                Opts::new(
                    "update_status_control_plane_assessment",
                    "Control-plane assessment as a state set (1 for the current one).",
                ),
                &hosted(&["assessment"]),
            )?,
            pool_completion: GaugeVec::new(
                Opts::new(
                    "update_status_worker_pool_completion_ratio",
                    "Fraction of a worker pool's nodes at the target version.",
                ),
                &hosted(&["pool"]),
            )?,
            pool_nodes: IntGaugeVec::new(
                Opts::new(
                    "update_status_worker_pool_nodes",
                    "Nodes of a worker pool by assessment.",
                ),
                &hosted(&["pool", "assessment"]),
            )?,
            health_insights: IntGaugeVec::new(
                Opts::new(
                    "update_status_health_insights",
                    "Health insights by impact level, impact type and scope.",
                ),
                &hosted(&["impact_level", "impact_type", "scope"]),
            )?,
            health_insight_info: IntGaugeVec::new(
                Opts::new(
                    "update_status_health_insight_info",
                    "One series (value 1) per health insight: its object name, resource, impact level and type (at most 256, the most severe first).",
                ),
                &hosted(&[
                    "insight",
                    "resource_kind",
                    "resource_name",
                    "impact_level",
                    "impact_type",
                ]),
            )?,
            prometheus_up: IntGaugeVec::new(
                Opts::new(
                    "update_status_prometheus_up",
                    "1 if the last poll of Prometheus' alerts succeeded, 0 if it failed (absent when no --prometheus-url is set).",
                ),
                &[],
            )?,
            prometheus_polls: IntCounterVec::new(
                Opts::new(
                    "update_status_prometheus_polls_total",
                    "Polls of Prometheus' /api/v1/alerts.",
                ),
                &[],
            )?,
            prometheus_failures: IntCounterVec::new(
                Opts::new(
                    "update_status_prometheus_poll_failures_total",
                    "Failed polls of Prometheus' /api/v1/alerts by reason (config, token, tls, connect, timeout, http, decode).",
                ),
                &["reason"],
            )?,
            prometheus_last_success: GaugeVec::new(
                Opts::new(
                    "update_status_prometheus_last_success_timestamp_seconds",
                    "When alerts were last read from Prometheus (Unix seconds).",
                ),
                &[],
            )?,
            write_errors: IntCounterVec::new(
                Opts::new(
                    "update_status_write_errors_total",
                    "Writes the API server refused or failed, by kind and reason (invalid, conflict, forbidden, unauthorized, not-found, throttled, server, api, connect, other).",
                ),
                &["kind", "reason"],
            )?,
            hub_writes: IntCounterVec::new(
                Opts::new(
                    "update_status_hub_writes_total",
                    "Writes to the fleet hub (--hub-kubeconfig) by kind and verb.",
                ),
                &["kind", "verb"],
            )?,
            hub_up: IntGaugeVec::new(
                Opts::new(
                    "update_status_hub_sync_up",
                    "1 if the last hub sync pass succeeded, 0 after a failed pass or hub watch (absent without --hub-kubeconfig).",
                ),
                hub_labels,
            )?,
            hub_errors: IntCounterVec::new(
                Opts::new(
                    "update_status_hub_sync_errors_total",
                    "Failed hub sync passes and hub watch errors by reason (connect, timeout, unauthorized, forbidden, not-found, api, config, other).",
                ),
                hub_error_labels,
            )?,
            hub_last_success: GaugeVec::new(
                Opts::new(
                    "update_status_hub_sync_last_success_timestamp_seconds",
                    "When a hub sync pass last succeeded (Unix seconds).",
                ),
                hub_labels,
            )?,
            hub_credential_reloads: IntCounterVec::new(
                Opts::new(
                    "update_status_hub_credential_reloads_total",
                    "Times a hub session switched to new credentials (a renewed certificate or a rewritten kubeconfig).",
                ),
                hub_labels,
            )?,
            metrics_auth_reviews: IntCounterVec::new(
                Opts::new(
                    "update_status_metrics_auth_reviews_total",
                    "TokenReviews sent to the API server to authorize /metrics scrapes, by result (allowed, forbidden, unauthenticated, error).",
                ),
                &["result"],
            )?,
            metrics_auth_refused: IntCounterVec::new(
                Opts::new(
                    "update_status_metrics_auth_refused_total",
                    "/metrics requests and connections refused before any review, by reason (malformed: not a token's shape; throttled: the review budget was spent; connections: too many open connections; source: too many open connections from one address).",
                ),
                &["reason"],
            )?,
            events: IntCounterVec::new(
                Opts::new(
                    "update_status_events_total",
                    "Kubernetes Events published (created, or a series patched) by reason.",
                ),
                &["reason"],
            )?,
            event_errors: IntCounterVec::new(
                Opts::new(
                    "update_status_event_errors_total",
                    "Kubernetes Events the API server refused or that failed.",
                ),
                &[],
            )?,
            events_dropped: IntCounterVec::new(
                Opts::new(
                    "update_status_events_dropped_total",
                    "Kubernetes Events not published: over the rate limit.",
                ),
                &[],
            )?,
            hub_per_cluster,
            hosted_pools: Mutex::new(BTreeMap::new()),
            registry,
            names: Vec::new(),
            insight_source: OnceLock::new(),
            render_lock: Mutex::new(()),
            prometheus_state: tokio::sync::watch::Sender::new(PrometheusPolls::default()),
        };
        for c in [
            Box::new(m.reconciles.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(m.reconcile_errors.clone()),
            Box::new(m.reconcile_duration.clone()),
            Box::new(m.api_writes.clone()),
            Box::new(m.update_in_progress.clone()),
            Box::new(m.cp_completion.clone()),
            Box::new(m.cp_assessment.clone()),
            Box::new(m.pool_completion.clone()),
            Box::new(m.pool_nodes.clone()),
            Box::new(m.health_insights.clone()),
            Box::new(m.health_insight_info.clone()),
            Box::new(m.prometheus_up.clone()),
            Box::new(m.prometheus_polls.clone()),
            Box::new(m.prometheus_failures.clone()),
            Box::new(m.prometheus_last_success.clone()),
            Box::new(m.write_errors.clone()),
            Box::new(m.hub_writes.clone()),
            Box::new(m.hub_up.clone()),
            Box::new(m.hub_errors.clone()),
            Box::new(m.hub_last_success.clone()),
            Box::new(m.hub_credential_reloads.clone()),
            Box::new(m.metrics_auth_reviews.clone()),
            Box::new(m.metrics_auth_refused.clone()),
            Box::new(m.events.clone()),
            Box::new(m.event_errors.clone()),
            Box::new(m.events_dropped.clone()),
        ]
        .into_iter()
        .chain(m.estimates.collectors())
        {
            m.names.extend(c.desc().iter().map(|d| d.fq_name.clone()));
            m.registry.register(c)?;
        }
        Ok(m)
    }

    /// Names of every metric this process can export.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Computes the health series from `source` (our UpdateInsight objects) at every scrape.
    /// Without a source no health series are exported. Set once; later calls are ignored.
    pub fn set_insight_source(&self, source: InsightSource) {
        let _ = self.insight_source.set(source);
    }

    /// Records a poll of Prometheus: `Ok(unix seconds)` or `Err(reason)`.
    pub fn prometheus_polled(&self, result: Result<f64, &'static str>) {
        self.prometheus_polls
            .with_label_values(&[] as &[&str])
            .inc();
        match result {
            Ok(at) => {
                self.prometheus_up.with_label_values(&[] as &[&str]).set(1);
                self.prometheus_last_success
                    .with_label_values(&[] as &[&str])
                    .set(at);
            }
            Err(reason) => {
                self.prometheus_up.with_label_values(&[] as &[&str]).set(0);
                self.prometheus_failures.with_label_values(&[reason]).inc();
            }
        }
        let now = jiff::Timestamp::now().as_second();
        // Watchers are woken only when what they read changes (not at every successful poll).
        self.prometheus_state.send_if_modified(|s| {
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
    pub fn prometheus_polls(&self) -> tokio::sync::watch::Receiver<PrometheusPolls> {
        self.prometheus_state.subscribe()
    }

    /// Counts a TokenReview made for `/metrics` (`result`: allowed, forbidden,
    /// unauthenticated, error).
    pub fn metrics_auth_reviewed(&self, result: &str) {
        self.metrics_auth_reviews.with_label_values(&[result]).inc();
    }

    /// TokenReviews made for `/metrics` so far.
    pub fn metrics_auth_reviews(&self) -> u64 {
        self.sum_counter("update_status_metrics_auth_reviews_total")
    }

    /// Counts a `/metrics` request or connection refused before any review (`reason`:
    /// malformed, throttled, connections).
    pub fn metrics_auth_refused(&self, reason: &str) {
        self.metrics_auth_refused.with_label_values(&[reason]).inc();
    }

    /// Requests or connections refused so far for `reason`.
    pub fn metrics_auth_refusals(&self, reason: &str) -> u64 {
        self.metrics_auth_refused.with_label_values(&[reason]).get()
    }

    /// Counts a write.
    pub fn write(&self, kind: &str, verb: &str) {
        self.api_writes.with_label_values(&[kind, verb]).inc();
    }

    /// Counts a failed write (`reason`: see [`crate::runtime::writer::error_reason`]).
    pub fn write_error(&self, kind: &str, reason: &str) {
        self.write_errors.with_label_values(&[kind, reason]).inc();
    }

    /// Failed writes so far of `kind` for `reason`.
    pub fn write_errors(&self, kind: &str, reason: &str) -> u64 {
        self.write_errors.with_label_values(&[kind, reason]).get()
    }

    /// Counts a published Event (`ok`) or a failed one.
    pub fn event(&self, reason: &str, ok: bool) {
        if ok {
            self.events.with_label_values(&[reason]).inc();
        } else {
            self.event_errors.with_label_values(&[] as &[&str]).inc();
        }
    }

    /// Counts Events dropped by the rate limit.
    pub fn events_dropped(&self, n: u64) {
        self.events_dropped
            .with_label_values(&[] as &[&str])
            .inc_by(n);
    }

    /// Events published so far (all reasons).
    pub fn total_events(&self) -> u64 {
        self.sum_counter("update_status_events_total")
    }

    /// Counts a write to the fleet hub.
    pub fn hub_write(&self, kind: &str, verb: &str) {
        self.hub_writes.with_label_values(&[kind, verb]).inc();
    }

    /// Total writes to the fleet hub so far (all kinds and verbs).
    pub fn total_hub_writes(&self) -> u64 {
        self.sum_counter("update_status_hub_writes_total")
    }

    /// Records a successful hub sync pass at `at` (Unix seconds) of the session of
    /// `hosted_cluster` (`""` in standalone mode).
    pub fn hub_sync_succeeded(&self, hosted_cluster: &str, at: f64) {
        let one = [hosted_cluster];
        let l: &[&str] = if self.hub_per_cluster { &one } else { &[] };
        self.hub_up.with_label_values(l).set(1);
        self.hub_last_success.with_label_values(l).set(at);
    }

    /// Counts a switch of the hub session of `hosted_cluster` (`""` in standalone mode) to new
    /// credentials.
    pub fn hub_credentials_reloaded(&self, hosted_cluster: &str) {
        let one = [hosted_cluster];
        let l: &[&str] = if self.hub_per_cluster { &one } else { &[] };
        self.hub_credential_reloads.with_label_values(l).inc();
    }

    /// Records a failed hub sync pass or hub watch error of the session of `hosted_cluster`
    /// (`""` in standalone mode).
    pub fn hub_sync_failed(&self, hosted_cluster: &str, reason: &str) {
        if self.hub_per_cluster {
            self.hub_up.with_label_values(&[hosted_cluster]).set(0);
            self.hub_errors
                .with_label_values(&[hosted_cluster, reason])
                .inc();
        } else {
            self.hub_up.with_label_values(&[] as &[&str]).set(0);
            self.hub_errors.with_label_values(&[reason]).inc();
        }
    }

    /// Removes the hub series of a hosted cluster whose session ended (its HostedCluster is
    /// gone and its copies are deleted). No-op in standalone mode.
    pub fn hub_sync_forget(&self, hosted_cluster: &str) {
        if !self.hub_per_cluster {
            return;
        }
        let _ = self.hub_up.remove_label_values(&[hosted_cluster]);
        let _ = self.hub_last_success.remove_label_values(&[hosted_cluster]);
        // The error counters stay (counters are not reset; a new session keeps counting).
    }

    /// Sum of a counter's series.
    fn sum_counter(&self, name: &str) -> u64 {
        self.registry
            .gather()
            .iter()
            .filter(|f| f.name() == name)
            .flat_map(|f| {
                f.get_metric()
                    .iter()
                    .map(|m| m.get_counter().get_value() as u64)
            })
            .sum()
    }

    /// Total writes so far (all kinds and verbs).
    pub fn total_writes(&self) -> u64 {
        self.sum_counter("update_status_api_writes_total")
    }

    /// Records a reconcile pass.
    pub fn reconciled(&self, reconciler: &str, seconds: f64, ok: bool) {
        self.reconciles.with_label_values(&[reconciler]).inc();
        self.reconcile_duration
            .with_label_values(&[reconciler])
            .observe(seconds);
        if !ok {
            self.reconcile_errors.with_label_values(&[reconciler]).inc();
        }
    }

    /// Publishes the control plane's state (standalone mode).
    pub fn set_control_plane(&self, cp: Option<&ControlPlaneUpdateStatusStatus>, updating: bool) {
        self.set_control_plane_of(None, cp, updating);
    }

    /// Publishes one HostedCluster's control-plane state (hosted mode; `hosted_cluster` is
    /// `<namespace>/<name>`).
    pub fn set_hosted_control_plane(
        &self,
        hosted_cluster: &str,
        cp: Option<&ControlPlaneUpdateStatusStatus>,
        updating: bool,
    ) {
        self.set_control_plane_of(Some(hosted_cluster), cp, updating);
    }

    /// The label values of a series: the hosted cluster's first in hosted mode.
    fn labelled<'a>(&self, hosted_cluster: Option<&'a str>, rest: &[&'a str]) -> Vec<&'a str> {
        self.hub_per_cluster
            .then(|| hosted_cluster.unwrap_or_default())
            .into_iter()
            .chain(rest.iter().copied())
            .collect()
    }

    fn set_control_plane_of(
        &self,
        hc: Option<&str>,
        cp: Option<&ControlPlaneUpdateStatusStatus>,
        updating: bool,
    ) {
        self.update_in_progress
            .with_label_values(&self.labelled(hc, &[]))
            .set(i64::from(updating));
        let Some(cp) = cp else {
            for a in CONTROL_PLANE_ASSESSMENTS {
                let _ = self
                    .cp_assessment
                    .remove_label_values(&self.labelled(hc, &[a.as_str()]));
            }
            return;
        };
        let ratio = if cp.operators.total == 0 {
            1.0
        } else {
            f64::from(cp.operators.updated) / f64::from(cp.operators.total)
        };
        self.cp_completion
            .with_label_values(&self.labelled(hc, &[]))
            .set(ratio);
        for a in CONTROL_PLANE_ASSESSMENTS {
            self.cp_assessment
                .with_label_values(&self.labelled(hc, &[a.as_str()]))
                .set(i64::from(a == cp.assessment));
        }
    }

    /// Publishes the worker pools' state (replaces all pool series; standalone mode):
    /// completion and the number of nodes per node assessment.
    pub fn set_pools<'a>(&self, pools: impl IntoIterator<Item = PoolState<'a>>) {
        self.pool_completion.reset();
        self.pool_nodes.reset();
        for p in pools {
            self.set_pool(None, p);
        }
    }

    /// Publishes one HostedCluster's NodePools (replaces that cluster's pool series).
    pub fn set_hosted_pools<'a>(
        &self,
        hosted_cluster: &str,
        pools: impl IntoIterator<Item = PoolState<'a>>,
    ) {
        let mut known = self
            .hosted_pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.remove_pools(
            hosted_cluster,
            known.remove(hosted_cluster).unwrap_or_default(),
        );
        let mut names = Vec::new();
        for p in pools {
            names.push(p.0.to_string());
            self.set_pool(Some(hosted_cluster), p);
        }
        known.insert(hosted_cluster.to_string(), names);
    }

    /// Removes every update series of the HostedClusters not in `live` (`<namespace>/<name>`):
    /// they are gone. No-op in standalone mode.
    pub fn retain_hosted(&self, live: &std::collections::BTreeSet<String>) {
        if !self.hub_per_cluster {
            return;
        }
        let mut known = self
            .hosted_pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let gone: Vec<String> = known
            .keys()
            .filter(|k| !live.contains(*k))
            .cloned()
            .collect();
        for hc in gone {
            self.remove_pools(&hc, known.remove(&hc).unwrap_or_default());
            let _ = self.update_in_progress.remove_label_values(&[hc.as_str()]);
            let _ = self.cp_completion.remove_label_values(&[hc.as_str()]);
            for a in CONTROL_PLANE_ASSESSMENTS {
                let _ = self
                    .cp_assessment
                    .remove_label_values(&[hc.as_str(), a.as_str()]);
            }
        }
    }

    fn remove_pools(&self, hc: &str, pools: Vec<String>) {
        for pool in pools {
            let _ = self
                .pool_completion
                .remove_label_values(&[hc, pool.as_str()]);
            for a in NODE_ASSESSMENTS {
                let _ = self
                    .pool_nodes
                    .remove_label_values(&[hc, pool.as_str(), a.as_str()]);
            }
        }
    }

    fn set_pool(&self, hc: Option<&str>, (name, p, by_assessment): PoolState<'_>) {
        let ratio = if p.nodes.total == 0 {
            1.0
        } else {
            f64::from(p.nodes.updated) / f64::from(p.nodes.total)
        };
        self.pool_completion
            .with_label_values(&self.labelled(hc, &[name]))
            .set(ratio);
        for a in NODE_ASSESSMENTS {
            let count = by_assessment.get(&a).copied().unwrap_or(0);
            self.pool_nodes
                .with_label_values(&self.labelled(hc, &[name, a.as_str()]))
                .set(i64::from(count));
        }
    }

    fn set_health_counts<'a>(
        &self,
        hc: Option<&str>,
        scope: &str,
        insights: impl IntoIterator<Item = &'a UpdateInsightStatus>,
    ) {
        let mut counts: BTreeMap<(ImpactLevel, &str), i64> = Default::default();
        for i in insights {
            if let Some(h) = &i.health {
                *counts
                    .entry((h.impact.level, h.impact.type_.as_str()))
                    .or_default() += 1;
            }
        }
        for level in [
            ImpactLevel::Unknown,
            ImpactLevel::Info,
            ImpactLevel::Warning,
            ImpactLevel::Error,
            ImpactLevel::Critical,
        ] {
            for t in IMPACT_TYPES {
                let v = counts.get(&(level, t)).copied().unwrap_or(0);
                // Hosted mode: zeros left out (135 series per HostedCluster otherwise).
                if hc.is_some() && v == 0 {
                    continue;
                }
                self.health_insights
                    .with_label_values(&self.labelled(hc, &[level.as_str(), t, scope]))
                    .set(v);
            }
        }
    }

    /// Replaces every health series with those of `insights` (name, hosted cluster, content):
    /// counts per scope (standalone: all three scopes, zeros included; hosted: per
    /// HostedCluster, non-zero counts only) and one info series per health insight.
    fn publish_health<'a>(
        &self,
        insights: impl IntoIterator<Item = (&'a str, Option<&'a str>, &'a UpdateInsightStatus)>,
    ) {
        let mut health: Vec<(&str, Option<&str>, &UpdateInsightStatus)> = insights
            .into_iter()
            .filter(|(_, _, s)| s.type_ == InsightType::Health && s.health.is_some())
            .collect();
        let clusters: std::collections::BTreeSet<Option<&str>> = if self.hub_per_cluster {
            self.health_insights.reset();
            health.iter().map(|(_, hc, _)| *hc).collect()
        } else {
            [None].into()
        };
        for hc in clusters {
            for scope in SCOPES {
                self.set_health_counts(
                    hc,
                    scope.slug(),
                    health
                        .iter()
                        .filter(|(_, h, s)| *h == hc && s.scope.type_ == scope)
                        .map(|(_, _, s)| *s),
                );
            }
        }
        let level = |s: &UpdateInsightStatus| s.health.as_ref().map(|h| h.impact.level);
        health.sort_by(|a, b| level(b.2).cmp(&level(a.2)).then(a.0.cmp(b.0)));
        self.health_insight_info.reset();
        for (name, hc, s) in health.into_iter().take(MAX_INFO_SERIES) {
            let Some(h) = &s.health else { continue };
            self.health_insight_info
                .with_label_values(&self.labelled(
                    hc,
                    &[
                        name,
                        s.resource.kind.as_str(),
                        s.resource.name.as_str(),
                        h.impact.level.as_str(),
                        h.impact.type_.as_str(),
                    ],
                ))
                .set(1);
        }
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let _guard = self
            .render_lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(source) = self.insight_source.get() {
            let objects = source();
            let named: Vec<(String, Option<String>, &UpdateInsightStatus)> = objects
                .iter()
                .filter(|o| o.metadata.deletion_timestamp.is_none())
                .filter_map(|o| {
                    let hc = self.hub_per_cluster.then(|| hosted_cluster_of(&o.metadata));
                    Some((o.metadata.name.clone()?, hc, o.status.as_ref()?))
                })
                .collect();
            self.publish_health(
                named
                    .iter()
                    .map(|(n, hc, s)| (n.as_str(), hc.as_deref(), *s)),
            );
        }
        let mut buf = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut buf) {
            tracing::warn!(error = %e, "encoding metrics");
        }
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// A pool's series: its name, status and number of nodes per assessment.
pub type PoolState<'a> = (
    &'a str,
    &'a WorkerPoolUpdateStatusStatus,
    BTreeMap<Assessment, u32>,
);

/// Hosted mode: the HostedCluster an object of ours is about, `<namespace>/<name>` (its
/// namespace and its `update.openshift.io/cluster` label, the HostedCluster's name).
fn hosted_cluster_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    let name = meta
        .labels
        .as_ref()
        .and_then(|l| l.get(update_status_api::crd::labels::CLUSTER))
        .map(String::as_str)
        .unwrap_or_default();
    format!("{}/{name}", meta.namespace.as_deref().unwrap_or_default())
}

const IMPACT_TYPES: [&str; 9] = [
    "None",
    "Unknown",
    "API Availability",
    "Cluster Capacity",
    "Application Availability",
    "Application Outage",
    "Data Loss",
    "Update Speed",
    "Update Stalled",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_counted_and_rendered() {
        let m = Metrics::new().expect("metrics");
        m.write("UpdateInsight", "apply");
        m.write("UpdateInsight", "apply-status");
        assert_eq!(m.total_writes(), 2);
        let text = m.render();
        assert!(
            text.contains(r#"update_status_api_writes_total{kind="UpdateInsight",verb="apply"} 1"#),
            "{text}"
        );
    }

    #[test]
    fn hub_writes_and_sync_state_are_apart_from_local_writes() {
        let m = Metrics::new().expect("metrics");
        assert!(
            !m.render().contains("update_status_hub_sync_up"),
            "absent without a hub"
        );
        m.write("UpdateInsight", "apply");
        m.hub_write("UpdateInsight", "apply");
        m.hub_write("UpdateInsight", "delete");
        assert_eq!(m.total_writes(), 1);
        assert_eq!(m.total_hub_writes(), 2);
        m.hub_sync_failed("", "forbidden");
        let text = m.render();
        assert!(text.contains("update_status_hub_sync_up 0"), "{text}");
        assert!(
            text.contains(r#"update_status_hub_sync_errors_total{reason="forbidden"} 1"#),
            "{text}"
        );
        m.hub_sync_succeeded("", 1_700_000_000.0);
        let text = m.render();
        assert!(text.contains("update_status_hub_sync_up 1"), "{text}");
        assert!(
            text.contains("update_status_hub_sync_last_success_timestamp_seconds 1700000000"),
            "{text}"
        );
        assert!(
            text.contains(
                r#"update_status_hub_writes_total{kind="UpdateInsight",verb="delete"} 1"#
            ),
            "{text}"
        );
    }

    #[test]
    fn hosted_hub_series_are_per_hosted_cluster_and_forgotten_with_it() {
        let m = Metrics::new_hosted().expect("metrics");
        m.hub_sync_succeeded("clusters/a", 1_700_000_000.0);
        m.hub_sync_failed("clusters/b", "connect");
        let text = m.render();
        assert!(
            text.contains(r#"update_status_hub_sync_up{hosted_cluster="clusters/a"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"update_status_hub_sync_up{hosted_cluster="clusters/b"} 0"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"update_status_hub_sync_errors_total{hosted_cluster="clusters/b",reason="connect"} 1"#
            ),
            "{text}"
        );
        m.hub_sync_forget("clusters/a");
        let text = m.render();
        assert!(
            !text.contains(r#"hosted_cluster="clusters/a""#),
            "gone with its session: {text}"
        );
        assert!(text.contains(r#"hosted_cluster="clusters/b""#), "{text}");
    }

    #[test]
    fn control_plane_state_set_has_exactly_one_active_state() {
        let m = Metrics::new().expect("metrics");
        let cp = ControlPlaneUpdateStatusStatus {
            assessment: Assessment::Stalled,
            ..Default::default()
        };
        m.set_control_plane(Some(&cp), true);
        let text = m.render();
        assert!(text.contains(r#"update_status_control_plane_assessment{assessment="Stalled"} 1"#));
        assert!(
            text.contains(r#"update_status_control_plane_assessment{assessment="Completed"} 0"#)
        );
        assert!(text.contains("update_status_update_in_progress 1"));
    }

    #[test]
    fn hosted_update_and_health_series_are_per_hosted_cluster_and_go_with_it() {
        let m = Metrics::new_hosted().expect("metrics");
        let cp = |a| ControlPlaneUpdateStatusStatus {
            assessment: a,
            ..Default::default()
        };
        let mut pool = WorkerPoolUpdateStatusStatus::default();
        pool.nodes.total = 4;
        pool.nodes.updated = 1;
        let by: BTreeMap<Assessment, u32> =
            [(Assessment::Degraded, 1), (Assessment::Completed, 1)].into();
        m.set_hosted_control_plane("clusters/a", Some(&cp(Assessment::Stalled)), true);
        m.set_hosted_pools("clusters/a", [("workers", &pool, by.clone())]);
        m.set_hosted_control_plane("clusters/b", Some(&cp(Assessment::Completed)), false);
        m.set_hosted_pools("clusters/b", [("other", &pool, by)]);
        // Health: the insights' namespace and cluster label name their HostedCluster.
        let mut degraded = (*insight(
            "np-a",
            ScopeType::WorkerPool,
            "NodePool",
            ImpactLevel::Error,
        ))
        .clone();
        degraded.metadata.namespace = Some("clusters".into());
        degraded.metadata.labels = Some(
            [(
                update_status_api::crd::labels::CLUSTER.to_string(),
                "a".to_string(),
            )]
            .into(),
        );
        let objects = vec![Arc::new(degraded)];
        m.set_insight_source(Box::new(move || objects.clone()));
        let text = m.render();
        for want in [
            r#"update_status_control_plane_assessment{assessment="Stalled",hosted_cluster="clusters/a"} 1"#,
            r#"update_status_control_plane_assessment{assessment="Completed",hosted_cluster="clusters/b"} 1"#,
            r#"update_status_update_in_progress{hosted_cluster="clusters/a"} 1"#,
            r#"update_status_update_in_progress{hosted_cluster="clusters/b"} 0"#,
            r#"update_status_worker_pool_completion_ratio{hosted_cluster="clusters/a",pool="workers"} 0.25"#,
            r#"update_status_worker_pool_nodes{assessment="Degraded",hosted_cluster="clusters/a",pool="workers"} 1"#,
            r#"update_status_health_insights{hosted_cluster="clusters/a",impact_level="Error",impact_type="Update Stalled",scope="worker-pool"} 1"#,
            r#"update_status_health_insight_info{hosted_cluster="clusters/a",impact_level="Error",impact_type="Update Stalled",insight="np-a",resource_kind="NodePool",resource_name="np-a-resource"} 1"#,
        ] {
            assert!(text.contains(want), "{want} not in\n{text}");
        }
        // Hosted: zero counts are left out.
        assert!(
            !text.contains(
                r#"impact_level="Critical",impact_type="Update Stalled",scope="worker-pool"} 0"#
            ),
            "{text}"
        );
        // A new pass replaces a cluster's pools; a HostedCluster gone takes its series along.
        m.set_hosted_pools("clusters/b", []);
        m.retain_hosted(&["clusters/b".to_string()].into());
        let text = m.render();
        assert!(
            !text.contains(r#"hosted_cluster="clusters/a",pool"#),
            "{text}"
        );
        assert!(!text.contains(r#"update_status_control_plane_assessment{assessment="Stalled",hosted_cluster="clusters/a"}"#), "{text}");
        assert!(
            !text.contains(r#"update_status_update_in_progress{hosted_cluster="clusters/a"}"#),
            "{text}"
        );
        assert!(!text.contains(r#"pool="other""#), "{text}");
        assert!(
            text.contains(r#"update_status_update_in_progress{hosted_cluster="clusters/b"} 0"#),
            "{text}"
        );
    }

    fn insight(name: &str, scope: ScopeType, kind: &str, level: ImpactLevel) -> Arc<UpdateInsight> {
        use update_status_api::crd::*;
        let mut o = UpdateInsight::new(name, UpdateInsightSpec {});
        o.status = Some(UpdateInsightStatus {
            type_: InsightType::Health,
            resource: ResourceRef {
                kind: kind.into(),
                name: format!("{name}-resource"),
                ..Default::default()
            },
            scope: InsightScope {
                type_: scope,
                pool: None,
            },
            progress: None,
            health: Some(HealthInsight {
                impact: Impact {
                    level,
                    type_: ImpactType::UpdateStalled,
                    summary: "s".into(),
                    description: "d".into(),
                },
                ..Default::default()
            }),
        });
        Arc::new(o)
    }

    fn progress(name: &str) -> Arc<UpdateInsight> {
        use update_status_api::crd::*;
        let mut o = UpdateInsight::new(name, UpdateInsightSpec {});
        o.status = Some(UpdateInsightStatus {
            type_: InsightType::Progress,
            resource: ResourceRef {
                kind: "Node".into(),
                name: name.into(),
                ..Default::default()
            },
            progress: Some(Default::default()),
            ..Default::default()
        });
        Arc::new(o)
    }

    fn series<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
        text.lines().filter(|l| l.starts_with(prefix)).collect()
    }

    #[test]
    fn health_series_come_from_the_insight_cache_for_all_scopes() {
        let m = Metrics::new().expect("metrics");
        let objects = Arc::new(Mutex::new(vec![
            insight(
                "cp",
                ScopeType::ControlPlane,
                "ClusterOperator",
                ImpactLevel::Error,
            ),
            // A master-pool node insight (written by the worker-pools reconciler).
            insight(
                "master-node",
                ScopeType::ControlPlane,
                "Node",
                ImpactLevel::Warning,
            ),
            insight("wp", ScopeType::WorkerPool, "Node", ImpactLevel::Error),
            insight("alert", ScopeType::Cluster, "Alert", ImpactLevel::Critical),
            progress("node-a"),
        ]));
        let src = objects.clone();
        m.set_insight_source(Box::new(move || {
            src.lock().map(|v| v.clone()).unwrap_or_default()
        }));
        let text = m.render();
        let count = |level: &str, scope: &str| {
            format!(
                r#"update_status_health_insights{{impact_level="{level}",impact_type="Update Stalled",scope="{scope}"}}"#
            )
        };
        for (level, scope, n) in [
            ("Error", "control-plane", 1),
            ("Warning", "control-plane", 1),
            ("Error", "worker-pool", 1),
            ("Info", "worker-pool", 0),
            ("Critical", "cluster", 1),
            ("Critical", "control-plane", 0),
        ] {
            assert!(
                text.contains(&format!("{} {n}\n", count(level, scope))),
                "{level} {scope} {n}: {text}"
            );
        }
        // 3 scopes × 5 levels × 9 types, zeros included: sums are meaningful.
        assert_eq!(series(&text, "update_status_health_insights{").len(), 135);
        let info = series(&text, "update_status_health_insight_info{");
        assert_eq!(
            info.len(),
            4,
            "one per health insight, none per progress: {info:?}"
        );
        assert_eq!(
            info.iter()
                .filter(|l| l.contains(r#"insight="alert""#))
                .copied()
                .collect::<Vec<_>>(),
            [
                r#"update_status_health_insight_info{impact_level="Critical",impact_type="Update Stalled",insight="alert",resource_kind="Alert",resource_name="alert-resource"} 1"#
            ]
        );

        // A resolved insight disappears at the next scrape.
        if let Ok(mut v) = objects.lock() {
            v.retain(|o| o.metadata.name.as_deref() != Some("alert"));
        }
        let text = m.render();
        assert!(!text.contains(r#"insight="alert""#), "{text}");
        assert!(text.contains(&format!("{} 0\n", count("Critical", "cluster"))));
    }

    #[test]
    fn info_series_are_capped_most_severe_first() {
        let m = Metrics::new().expect("metrics");
        let mut objects: Vec<Arc<UpdateInsight>> = (0..300)
            .map(|i| {
                insight(
                    &format!("n{i:03}"),
                    ScopeType::WorkerPool,
                    "Node",
                    ImpactLevel::Warning,
                )
            })
            .collect();
        objects.push(insight(
            "z-critical",
            ScopeType::Cluster,
            "Alert",
            ImpactLevel::Critical,
        ));
        m.set_insight_source(Box::new(move || objects.clone()));
        let text = m.render();
        let info = series(&text, "update_status_health_insight_info{");
        assert_eq!(info.len(), MAX_INFO_SERIES);
        assert!(info.iter().any(|l| l.contains("z-critical")));
        assert!(text.contains(r#"update_status_health_insights{impact_level="Warning",impact_type="Update Stalled",scope="worker-pool"} 300"#));
    }

    #[test]
    fn no_health_series_without_a_source() {
        let m = Metrics::new().expect("metrics");
        let text = m.render();
        assert!(
            series(&text, "update_status_health_insights{").is_empty(),
            "{text}"
        );
        assert!(
            series(&text, "update_status_health_insight_info{").is_empty(),
            "{text}"
        );
    }

    #[test]
    fn prometheus_poll_metrics() {
        let m = Metrics::new().expect("metrics");
        assert!(
            !m.render().contains("update_status_prometheus_up"),
            "absent until polled"
        );
        m.prometheus_polled(Err("connect"));
        let text = m.render();
        assert!(text.contains("update_status_prometheus_up 0"), "{text}");
        assert!(
            text.contains(r#"update_status_prometheus_poll_failures_total{reason="connect"} 1"#)
        );
        m.prometheus_polled(Ok(1_700_000_000.0));
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
        assert!(
            m.names()
                .iter()
                .any(|n| n == "update_status_health_insight_info")
        );
    }
}
