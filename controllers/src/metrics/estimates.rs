//! The estimates that learn (issue #40) as metrics: `update_status_estimated_seconds_remaining`
//! by `scope` (`control_plane`, `update`, `pool`) and `bound` (`p10`, `p50`, `p90`), with the
//! pool's name in `pool` (empty for the other scopes), and which method made them
//! (`update_status_estimate_method{method}`, 1 for the one in use). Set by the `estimates`
//! reconciler; no series while nothing updates.

use prometheus::core::Collector;
use prometheus::{GaugeVec, IntGaugeVec, Opts};

use super::family::Family;

/// The estimate metrics.
pub struct EstimateMetrics {
    remaining: GaugeVec,
    method: IntGaugeVec,
}

/// One scope's estimate: `(scope, pool, [p10, p50, p90] seconds)`.
pub type ScopeSeconds<'a> = (&'a str, &'a str, [f64; 3]);

impl EstimateMetrics {
    pub(super) fn new() -> Result<Self, prometheus::Error> {
        Ok(EstimateMetrics {
            remaining: GaugeVec::new(
                Opts::new(
                    "update_status_estimated_seconds_remaining",
                    "Estimated seconds until the update completes, by scope (control_plane, update, pool) and bound (p10, p50, p90), as of the estimate's computation (UpdateHistory .status.estimates).",
                ),
                &["scope", "pool", "bound"],
            )?,
            method: IntGaugeVec::new(
                Opts::new(
                    "update_status_estimate_method",
                    "1 for the method of the current estimates: Learned (from this cluster's earlier updates) or OcBaseline (no observed update yet: oc's method).",
                ),
                &["method"],
            )?,
        })
    }

    /// Replaces every series: `method` and its scopes (none: nothing updates).
    pub fn set(&self, method: Option<&str>, scopes: &[ScopeSeconds<'_>]) {
        self.remaining.reset();
        self.method.reset();
        if let Some(m) = method {
            self.method.with_label_values(&[m]).set(1);
        }
        for (scope, pool, bounds) in scopes {
            for (bound, v) in ["p10", "p50", "p90"].iter().zip(bounds) {
                self.remaining
                    .with_label_values(&[scope, pool, bound])
                    .set(*v);
            }
        }
    }
}

impl Family for EstimateMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.remaining.clone()),
            Box::new(self.method.clone()),
        ]
    }
}
