//! The reconcile passes' metrics: `update_status_reconciles_total`,
//! `update_status_reconcile_errors_total` and `update_status_reconcile_duration_seconds`, by
//! `reconciler` (set by the runner, `crate::runtime::runner`).

use prometheus::core::Collector;
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts};

use super::family::Family;

/// The reconcile passes.
pub struct ReconcileMetrics {
    passes: IntCounterVec,
    errors: IntCounterVec,
    duration: HistogramVec,
}

impl ReconcileMetrics {
    pub(super) fn new() -> Result<Self, prometheus::Error> {
        Ok(ReconcileMetrics {
            passes: IntCounterVec::new(
                Opts::new(
                    "update_status_reconciles_total",
                    "Reconcile passes by reconciler.",
                ),
                &["reconciler"],
            )?,
            errors: IntCounterVec::new(
                Opts::new(
                    "update_status_reconcile_errors_total",
                    "Reconcile passes that failed, by reconciler.",
                ),
                &["reconciler"],
            )?,
            duration: HistogramVec::new(
                HistogramOpts::new(
                    "update_status_reconcile_duration_seconds",
                    "Duration of reconcile passes (assessment and writes).",
                )
                .buckets(vec![
                    0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                ]),
                &["reconciler"],
            )?,
        })
    }

    /// Records a reconcile pass.
    pub fn reconciled(&self, reconciler: &str, seconds: f64, ok: bool) {
        self.passes.with_label_values(&[reconciler]).inc();
        self.duration
            .with_label_values(&[reconciler])
            .observe(seconds);
        if !ok {
            self.errors.with_label_values(&[reconciler]).inc();
        }
    }
}

impl Family for ReconcileMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.passes.clone()),
            Box::new(self.errors.clone()),
            Box::new(self.duration.clone()),
        ]
    }
}
