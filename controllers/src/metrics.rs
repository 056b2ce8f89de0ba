//! Prometheus metrics: the update's state for alerting (bounded cardinality: no per-node
//! series) and the controller's internals.

use prometheus::{
    Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};
use update_status_api::crd::{
    Assessment, ControlPlaneUpdateStatusStatus, ImpactLevel, UpdateInsightStatus,
    WorkerPoolUpdateStatusStatus,
};

/// Control-plane assessments exported as a state set.
pub const CONTROL_PLANE_ASSESSMENTS: [Assessment; 5] = [
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

/// All metrics of the controller.
pub struct Metrics {
    registry: Registry,
    reconciles: IntCounterVec,
    reconcile_errors: IntCounterVec,
    reconcile_duration: HistogramVec,
    api_writes: IntCounterVec,
    update_in_progress: IntGaugeVec,
    cp_completion: GaugeVec,
    cp_assessment: IntGaugeVec,
    pool_completion: GaugeVec,
    pool_nodes: IntGaugeVec,
    health_insights: IntGaugeVec,
}

/// Errors building the registry (a programming error: duplicate or invalid metric).
#[derive(Debug, thiserror::Error)]
#[error("registering metrics: {0}")]
pub struct MetricsError(#[from] prometheus::Error);

impl Metrics {
    /// Creates and registers every metric.
    pub fn new() -> Result<Self, MetricsError> {
        let registry = Registry::new();
        let m = Metrics {
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
                &[],
            )?,
            cp_completion: GaugeVec::new(
                Opts::new(
                    "update_status_control_plane_completion_ratio",
                    "Fraction of platform operators at the target version.",
                ),
                &[],
            )?,
            cp_assessment: IntGaugeVec::new(
                Opts::new(
                    "update_status_control_plane_assessment",
                    "Control-plane assessment as a state set (1 for the current one).",
                ),
                &["assessment"],
            )?,
            pool_completion: GaugeVec::new(
                Opts::new(
                    "update_status_worker_pool_completion_ratio",
                    "Fraction of a worker pool's nodes at the target version.",
                ),
                &["pool"],
            )?,
            pool_nodes: IntGaugeVec::new(
                Opts::new(
                    "update_status_worker_pool_nodes",
                    "Nodes of a worker pool by assessment.",
                ),
                &["pool", "assessment"],
            )?,
            health_insights: IntGaugeVec::new(
                Opts::new(
                    "update_status_health_insights",
                    "Health insights by impact level, impact type and scope.",
                ),
                &["impact_level", "impact_type", "scope"],
            )?,
            registry,
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
        ] {
            m.registry.register(c)?;
        }
        Ok(m)
    }

    /// Counts a write.
    pub fn write(&self, kind: &str, verb: &str) {
        self.api_writes.with_label_values(&[kind, verb]).inc();
    }

    /// Total writes so far (all kinds and verbs).
    pub fn total_writes(&self) -> u64 {
        self.registry
            .gather()
            .iter()
            .filter(|f| f.name() == "update_status_api_writes_total")
            .flat_map(|f| {
                f.get_metric()
                    .iter()
                    .map(|m| m.get_counter().get_value() as u64)
            })
            .sum()
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

    /// Publishes the control plane's state.
    pub fn set_control_plane(&self, cp: Option<&ControlPlaneUpdateStatusStatus>, updating: bool) {
        self.update_in_progress
            .with_label_values(&[] as &[&str])
            .set(i64::from(updating));
        let Some(cp) = cp else {
            self.cp_assessment.reset();
            return;
        };
        let ratio = if cp.operators.total == 0 {
            1.0
        } else {
            f64::from(cp.operators.updated) / f64::from(cp.operators.total)
        };
        self.cp_completion
            .with_label_values(&[] as &[&str])
            .set(ratio);
        for a in CONTROL_PLANE_ASSESSMENTS {
            self.cp_assessment
                .with_label_values(&[a.as_str()])
                .set(i64::from(a == cp.assessment));
        }
    }

    /// Publishes the worker pools' state (replaces all pool series): completion and the
    /// number of nodes per node assessment.
    pub fn set_pools<'a>(
        &self,
        pools: impl IntoIterator<
            Item = (
                &'a str,
                &'a WorkerPoolUpdateStatusStatus,
                std::collections::BTreeMap<Assessment, u32>,
            ),
        >,
    ) {
        self.pool_completion.reset();
        self.pool_nodes.reset();
        for (name, p, by_assessment) in pools {
            let ratio = if p.nodes.total == 0 {
                1.0
            } else {
                f64::from(p.nodes.updated) / f64::from(p.nodes.total)
            };
            self.pool_completion.with_label_values(&[name]).set(ratio);
            for a in NODE_ASSESSMENTS {
                let count = by_assessment.get(&a).copied().unwrap_or(0);
                self.pool_nodes
                    .with_label_values(&[name, a.as_str()])
                    .set(i64::from(count));
            }
        }
    }

    /// Publishes health insight counts for one scope (replaces that scope's series).
    pub fn set_health<'a>(
        &self,
        scope: &str,
        insights: impl IntoIterator<Item = &'a UpdateInsightStatus>,
    ) {
        let mut counts: std::collections::BTreeMap<(ImpactLevel, &str), i64> = Default::default();
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
                self.health_insights
                    .with_label_values(&[level.as_str(), t, scope])
                    .set(v);
            }
        }
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut buf) {
            tracing::warn!(error = %e, "encoding metrics");
        }
        String::from_utf8_lossy(&buf).into_owned()
    }
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
}
