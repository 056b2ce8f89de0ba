//! The Kubernetes Events published (the events reconciler): `update_status_events_total{reason}`,
//! `update_status_event_errors_total` and `update_status_events_dropped_total` (over the rate
//! limit).

use prometheus::core::Collector;
use prometheus::{IntCounterVec, Opts};

use super::family::{Family, total};

/// The Events published.
pub struct EventMetrics {
    published: IntCounterVec,
    errors: IntCounterVec,
    dropped: IntCounterVec,
}

impl EventMetrics {
    pub(super) fn new() -> Result<Self, prometheus::Error> {
        Ok(EventMetrics {
            published: IntCounterVec::new(
                Opts::new(
                    "update_status_events_total",
                    "Kubernetes Events published (created, or a series patched) by reason.",
                ),
                &["reason"],
            )?,
            errors: IntCounterVec::new(
                Opts::new(
                    "update_status_event_errors_total",
                    "Kubernetes Events the API server refused or that failed.",
                ),
                &[],
            )?,
            dropped: IntCounterVec::new(
                Opts::new(
                    "update_status_events_dropped_total",
                    "Kubernetes Events not published: over the rate limit.",
                ),
                &[],
            )?,
        })
    }

    /// Counts a published Event (`ok`) or a failed one.
    pub fn event(&self, reason: &str, ok: bool) {
        if ok {
            self.published.with_label_values(&[reason]).inc();
        } else {
            self.errors.with_label_values(&[] as &[&str]).inc();
        }
    }

    /// Counts Events dropped by the rate limit.
    pub fn dropped(&self, n: u64) {
        self.dropped.with_label_values(&[] as &[&str]).inc_by(n);
    }

    /// Events published so far (all reasons).
    pub fn total(&self) -> u64 {
        total(&self.published)
    }
}

impl Family for EventMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.published.clone()),
            Box::new(self.errors.clone()),
            Box::new(self.dropped.clone()),
        ]
    }
}
