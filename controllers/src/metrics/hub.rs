//! The hub sync's metrics (`crate::hub_sync`): its writes to the fleet hub
//! (`update_status_hub_writes_total{kind,verb}`), whether its passes succeed
//! (`update_status_hub_sync_up`, `..._errors_total{reason}`,
//! `..._last_success_timestamp_seconds`) and its credential switches
//! (`update_status_hub_credential_reloads_total`). In hosted mode all but the writes carry a
//! `hosted_cluster` label (`<namespace>/<name>` of the HostedCluster): one hub session per
//! HostedCluster.

use prometheus::core::Collector;
use prometheus::{GaugeVec, IntCounterVec, IntGaugeVec, Opts};

use super::family::{Family, PerCluster, total};

/// The hub sync's metrics.
pub struct HubMetrics {
    writes: IntCounterVec,
    up: IntGaugeVec,
    errors: IntCounterVec,
    last_success: GaugeVec,
    credential_reloads: IntCounterVec,
    name_refused: IntGaugeVec,
    per_cluster: PerCluster,
}

impl HubMetrics {
    pub(super) fn new(per_cluster: PerCluster) -> Result<Self, prometheus::Error> {
        let labels = per_cluster.labels(&[]);
        Ok(HubMetrics {
            writes: IntCounterVec::new(
                Opts::new(
                    "update_status_hub_writes_total",
                    "Writes to the fleet hub (--hub-kubeconfig) by kind and verb.",
                ),
                &["kind", "verb"],
            )?,
            up: IntGaugeVec::new(
                Opts::new(
                    "update_status_hub_sync_up",
                    "1 if the last hub sync pass succeeded, 0 after a failed pass or hub watch (absent without --hub-kubeconfig).",
                ),
                &labels,
            )?,
            errors: IntCounterVec::new(
                Opts::new(
                    "update_status_hub_sync_errors_total",
                    "Failed hub sync passes and hub watch errors by reason (connect, timeout, unauthorized, forbidden, not-found, api, config, other).",
                ),
                &per_cluster.labels(&["reason"]),
            )?,
            last_success: GaugeVec::new(
                Opts::new(
                    "update_status_hub_sync_last_success_timestamp_seconds",
                    "When a hub sync pass last succeeded (Unix seconds).",
                ),
                &labels,
            )?,
            credential_reloads: IntCounterVec::new(
                Opts::new(
                    "update_status_hub_credential_reloads_total",
                    "Times a hub session switched to new credentials (a renewed certificate or a rewritten kubeconfig).",
                ),
                &labels,
            )?,
            name_refused: IntGaugeVec::new(
                Opts::new(
                    "update_status_hub_name_refused",
                    "Hosted mode: 1 while a HostedCluster is refused its managed-cluster name (another holds or claims it, or it is not a valid name); absent otherwise.",
                ),
                &labels,
            )?,
            per_cluster,
        })
    }

    /// Hosted mode: `hosted_cluster` is refused its managed-cluster name (`true`), or no longer
    /// (`false`: the series goes). No-op in standalone mode.
    pub fn name_refused(&self, hosted_cluster: &str, refused: bool) {
        if !self.per_cluster.0 {
            return;
        }
        if refused {
            self.name_refused
                .with_label_values(&[hosted_cluster])
                .set(1);
        } else {
            let _ = self.name_refused.remove_label_values(&[hosted_cluster]);
        }
    }

    /// Counts a write to the fleet hub.
    pub fn write(&self, kind: &str, verb: &str) {
        self.writes.with_label_values(&[kind, verb]).inc();
    }

    /// Total writes to the fleet hub so far (all kinds and verbs).
    pub fn total_writes(&self) -> u64 {
        total(&self.writes)
    }

    /// Records a successful hub sync pass at `at` (Unix seconds) of the session of
    /// `hosted_cluster` (`""` in standalone mode).
    pub fn sync_succeeded(&self, hosted_cluster: &str, at: f64) {
        let l = self.per_cluster.values(Some(hosted_cluster), &[]);
        self.up.with_label_values(&l).set(1);
        self.last_success.with_label_values(&l).set(at);
    }

    /// Counts a switch of the hub session of `hosted_cluster` (`""` in standalone mode) to new
    /// credentials.
    pub fn credentials_reloaded(&self, hosted_cluster: &str) {
        self.credential_reloads
            .with_label_values(&self.per_cluster.values(Some(hosted_cluster), &[]))
            .inc();
    }

    /// Records a failed hub sync pass or hub watch error of the session of `hosted_cluster`
    /// (`""` in standalone mode).
    pub fn sync_failed(&self, hosted_cluster: &str, reason: &str) {
        let hc = Some(hosted_cluster);
        self.up
            .with_label_values(&self.per_cluster.values(hc, &[]))
            .set(0);
        self.errors
            .with_label_values(&self.per_cluster.values(hc, &[reason]))
            .inc();
    }

    /// Removes the hub series of a hosted cluster whose session ended (its HostedCluster is
    /// gone and its copies are deleted). No-op in standalone mode.
    pub fn forget(&self, hosted_cluster: &str) {
        if !self.per_cluster.0 {
            return;
        }
        let _ = self.up.remove_label_values(&[hosted_cluster]);
        let _ = self.last_success.remove_label_values(&[hosted_cluster]);
        let _ = self.name_refused.remove_label_values(&[hosted_cluster]);
        // The error counters stay (counters are not reset; a new session keeps counting).
    }
}

impl Family for HubMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.writes.clone()),
            Box::new(self.up.clone()),
            Box::new(self.errors.clone()),
            Box::new(self.last_success.clone()),
            Box::new(self.credential_reloads.clone()),
            Box::new(self.name_refused.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::registry::Metrics;

    #[test]
    fn hub_writes_and_sync_state_are_apart_from_local_writes() {
        let m = Metrics::new().expect("metrics");
        assert!(
            !m.render().contains("update_status_hub_sync_up"),
            "absent without a hub"
        );
        m.writes.write("UpdateInsight", "apply");
        m.hub.write("UpdateInsight", "apply");
        m.hub.write("UpdateInsight", "delete");
        assert_eq!(m.writes.total(), 1);
        assert_eq!(m.hub.total_writes(), 2);
        m.hub.sync_failed("", "forbidden");
        let text = m.render();
        assert!(text.contains("update_status_hub_sync_up 0"), "{text}");
        assert!(
            text.contains(r#"update_status_hub_sync_errors_total{reason="forbidden"} 1"#),
            "{text}"
        );
        m.hub.sync_succeeded("", 1_700_000_000.0);
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
        m.hub.sync_succeeded("clusters/a", 1_700_000_000.0);
        m.hub.sync_failed("clusters/b", "connect");
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
        m.hub.forget("clusters/a");
        let text = m.render();
        assert!(
            !text.contains(r#"hosted_cluster="clusters/a""#),
            "gone with its session: {text}"
        );
        assert!(text.contains(r#"hosted_cluster="clusters/b""#), "{text}");
    }
}
