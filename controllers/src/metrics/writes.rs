//! The writes to the cluster's own API server: `update_status_api_writes_total{kind,verb}` and
//! `update_status_write_errors_total{kind,reason}` (the writer, `crate::runtime::writer`, and
//! the reconcilers that write without it). The hub's writes are [`super::hub`]'s.

use prometheus::core::Collector;
use prometheus::{IntCounterVec, Opts};

use super::family::{Family, total};

/// The writes to the API server.
pub struct WriteMetrics {
    writes: IntCounterVec,
    errors: IntCounterVec,
}

impl WriteMetrics {
    pub(super) fn new() -> Result<Self, prometheus::Error> {
        Ok(WriteMetrics {
            writes: IntCounterVec::new(
                Opts::new(
                    "update_status_api_writes_total",
                    "Writes to the API server by kind and verb.",
                ),
                &["kind", "verb"],
            )?,
            errors: IntCounterVec::new(
                Opts::new(
                    "update_status_write_errors_total",
                    "Writes the API server refused or failed, by kind and reason (invalid, conflict, forbidden, unauthorized, not-found, throttled, server, api, connect, other).",
                ),
                &["kind", "reason"],
            )?,
        })
    }

    /// Counts a write.
    pub fn write(&self, kind: &str, verb: &str) {
        self.writes.with_label_values(&[kind, verb]).inc();
    }

    /// Counts a failed write (`reason`: see `crate::runtime::writer::error_reason`).
    pub fn error(&self, kind: &str, reason: &str) {
        self.errors.with_label_values(&[kind, reason]).inc();
    }

    /// Failed writes so far of `kind` for `reason`.
    pub fn errors(&self, kind: &str, reason: &str) -> u64 {
        self.errors.with_label_values(&[kind, reason]).get()
    }

    /// Total writes so far (all kinds and verbs).
    pub fn total(&self) -> u64 {
        total(&self.writes)
    }
}

impl Family for WriteMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![Box::new(self.writes.clone()), Box::new(self.errors.clone())]
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::registry::Metrics;

    #[test]
    fn writes_are_counted_and_rendered() {
        let m = Metrics::new().expect("metrics");
        m.writes.write("UpdateInsight", "apply");
        m.writes.write("UpdateInsight", "apply-status");
        assert_eq!(m.writes.total(), 2);
        let text = m.render();
        assert!(
            text.contains(r#"update_status_api_writes_total{kind="UpdateInsight",verb="apply"} 1"#),
            "{text}"
        );
    }
}
