//! The update's state for alerting (bounded cardinality: no per-node series): whether the
//! cluster is updating (`update_status_update_in_progress`), the control plane's completion and
//! assessment (`update_status_control_plane_completion_ratio`, `..._assessment{assessment}` as
//! a state set), each worker pool's completion and nodes per assessment
//! (`update_status_worker_pool_completion_ratio{pool}`, `..._nodes{pool,assessment}`). Set by
//! the control-plane and worker-pools reconcilers (standalone) and by the hosted reconciler,
//! per HostedCluster (a leading `hosted_cluster` label).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use prometheus::core::Collector;
use prometheus::{GaugeVec, IntGaugeVec, Opts};
use update_status_api::crd::{
    Assessment, ControlPlaneUpdateStatusStatus, WorkerPoolUpdateStatusStatus,
};

use super::family::{Family, PerCluster};

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

/// A pool's series: its name, status and number of nodes per assessment.
pub type PoolState<'a> = (
    &'a str,
    &'a WorkerPoolUpdateStatusStatus,
    BTreeMap<Assessment, u32>,
);

/// The update's state.
pub struct UpdateMetrics {
    in_progress: IntGaugeVec,
    cp_completion: GaugeVec,
    cp_assessment: IntGaugeVec,
    pool_completion: GaugeVec,
    pool_nodes: IntGaugeVec,
    per_cluster: PerCluster,
    /// Hosted mode: the pools whose series are set, per HostedCluster (to replace or forget
    /// them: a vector's series cannot be removed by one label).
    hosted_pools: Mutex<BTreeMap<String, Vec<String>>>,
}

impl UpdateMetrics {
    pub(super) fn new(per_cluster: PerCluster) -> Result<Self, prometheus::Error> {
        let hosted = |rest: &[&'static str]| per_cluster.labels(rest);
        Ok(UpdateMetrics {
            in_progress: IntGaugeVec::new(
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
            per_cluster,
            hosted_pools: Mutex::new(BTreeMap::new()),
        })
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

    fn set_control_plane_of(
        &self,
        hc: Option<&str>,
        cp: Option<&ControlPlaneUpdateStatusStatus>,
        updating: bool,
    ) {
        self.in_progress
            .with_label_values(&self.per_cluster.values(hc, &[]))
            .set(i64::from(updating));
        let Some(cp) = cp else {
            for a in CONTROL_PLANE_ASSESSMENTS {
                let _ = self
                    .cp_assessment
                    .remove_label_values(&self.per_cluster.values(hc, &[a.as_str()]));
            }
            return;
        };
        let ratio = if cp.operators.total == 0 {
            1.0
        } else {
            f64::from(cp.operators.updated) / f64::from(cp.operators.total)
        };
        self.cp_completion
            .with_label_values(&self.per_cluster.values(hc, &[]))
            .set(ratio);
        for a in CONTROL_PLANE_ASSESSMENTS {
            self.cp_assessment
                .with_label_values(&self.per_cluster.values(hc, &[a.as_str()]))
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
    pub fn retain_hosted(&self, live: &BTreeSet<String>) {
        if !self.per_cluster.0 {
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
            let _ = self.in_progress.remove_label_values(&[hc.as_str()]);
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
            .with_label_values(&self.per_cluster.values(hc, &[name]))
            .set(ratio);
        for a in NODE_ASSESSMENTS {
            let count = by_assessment.get(&a).copied().unwrap_or(0);
            self.pool_nodes
                .with_label_values(&self.per_cluster.values(hc, &[name, a.as_str()]))
                .set(i64::from(count));
        }
    }
}

impl Family for UpdateMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.in_progress.clone()),
            Box::new(self.cp_completion.clone()),
            Box::new(self.cp_assessment.clone()),
            Box::new(self.pool_completion.clone()),
            Box::new(self.pool_nodes.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::Metrics;

    #[test]
    fn control_plane_state_set_has_exactly_one_active_state() {
        let m = Metrics::new().expect("metrics");
        let cp = ControlPlaneUpdateStatusStatus {
            assessment: Assessment::Stalled,
            ..Default::default()
        };
        m.update.set_control_plane(Some(&cp), true);
        let text = m.render();
        assert!(text.contains(r#"update_status_control_plane_assessment{assessment="Stalled"} 1"#));
        assert!(
            text.contains(r#"update_status_control_plane_assessment{assessment="Completed"} 0"#)
        );
        assert!(text.contains("update_status_update_in_progress 1"));
    }

    #[test]
    fn hosted_update_series_are_per_hosted_cluster_and_go_with_it() {
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
        m.update
            .set_hosted_control_plane("clusters/a", Some(&cp(Assessment::Stalled)), true);
        m.update
            .set_hosted_pools("clusters/a", [("workers", &pool, by.clone())]);
        m.update
            .set_hosted_control_plane("clusters/b", Some(&cp(Assessment::Completed)), false);
        m.update
            .set_hosted_pools("clusters/b", [("other", &pool, by)]);
        let text = m.render();
        for want in [
            r#"update_status_control_plane_assessment{assessment="Stalled",hosted_cluster="clusters/a"} 1"#,
            r#"update_status_control_plane_assessment{assessment="Completed",hosted_cluster="clusters/b"} 1"#,
            r#"update_status_update_in_progress{hosted_cluster="clusters/a"} 1"#,
            r#"update_status_update_in_progress{hosted_cluster="clusters/b"} 0"#,
            r#"update_status_worker_pool_completion_ratio{hosted_cluster="clusters/a",pool="workers"} 0.25"#,
            r#"update_status_worker_pool_nodes{assessment="Degraded",hosted_cluster="clusters/a",pool="workers"} 1"#,
        ] {
            assert!(text.contains(want), "{want} not in\n{text}");
        }
        // A new pass replaces a cluster's pools; a HostedCluster gone takes its series along.
        m.update.set_hosted_pools("clusters/b", []);
        m.update.retain_hosted(&["clusters/b".to_string()].into());
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
}
