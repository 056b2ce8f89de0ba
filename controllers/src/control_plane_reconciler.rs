//! The control-plane reconciler: ClusterVersion + ClusterOperators (+ the master pool's node
//! counts from the worker-pools reconciler) → the ControlPlaneUpdateStatus `cluster`, progress
//! insights for the ClusterVersion and each platform ClusterOperator, and the control-plane
//! health insights. It only watches, calls [`crate::assess::control_plane`], and writes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kube::ResourceExt;
use tokio::sync::watch;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus, ScopeType, UpdateInsight,
    UpdateInsightStatus, labels,
};
use update_status_api::input::{ClusterOperator, ClusterVersion};

use crate::assess::ClusterInputs;
use crate::assess::control_plane::{self, ControlPlaneAssessment};
use crate::assess::naming;
use crate::assess::nodes::PoolAssessment;
use crate::metrics::Metrics;
use crate::runner::Reconcile;
use crate::watch::Caches;
use crate::writer::{Desired, Writer, owner_ref};

/// Name of this reconciler (label value and field-manager suffix).
pub const NAME: &str = "control-plane";

/// The reconciler's state.
pub struct ControlPlaneReconciler {
    caches: Caches,
    master_pool: watch::Receiver<Option<PoolAssessment>>,
    statuses: Writer<ControlPlaneUpdateStatus>,
    insights: Writer<UpdateInsight>,
    metrics: Arc<Metrics>,
    cluster_id: Option<String>,
}

/// Keeps what must survive recomputation: the first-seen `startedAt` of health insights and an
/// estimate that moved less than the tolerance.
pub fn carry_over(
    desired_cp: &mut ControlPlaneUpdateStatusStatus,
    existing_cp: Option<&ControlPlaneUpdateStatusStatus>,
    desired_insights: &mut [(String, UpdateInsightStatus)],
    existing_insights: &HashMap<String, &UpdateInsightStatus>,
    now: Timestamp,
) {
    if let Some(old) = existing_cp
        && !control_plane::estimate_moved(
            old.estimated_completed_at,
            desired_cp.estimated_completed_at,
            now,
        )
    {
        desired_cp.estimated_completed_at = old.estimated_completed_at;
    }
    keep_started_at(desired_insights, existing_insights);
}

/// A health insight keeps the earliest `startedAt` it ever had: rules whose start is "first
/// observed" (now) do not move on every pass, and a restart does not reset them.
pub fn keep_started_at(
    desired: &mut [(String, UpdateInsightStatus)],
    existing: &HashMap<String, &UpdateInsightStatus>,
) {
    for (name, status) in desired.iter_mut() {
        let (Some(h), Some(old)) = (
            status.health.as_mut(),
            existing.get(name).and_then(|e| e.health.as_ref()),
        ) else {
            continue;
        };
        if let Some(old_start) = old.started_at
            && h.started_at.is_none_or(|new| new > old_start)
        {
            h.started_at = Some(old_start);
        }
    }
}

impl ControlPlaneReconciler {
    /// Creates the reconciler.
    pub fn new(
        client: kube::Client,
        namespace: &str,
        caches: Caches,
        master_pool: watch::Receiver<Option<PoolAssessment>>,
        metrics: Arc<Metrics>,
        cluster_id: Option<String>,
    ) -> Self {
        ControlPlaneReconciler {
            statuses: Writer::new(client.clone(), namespace, NAME, metrics.clone()),
            insights: Writer::new(client, namespace, NAME, metrics.clone()),
            caches,
            master_pool,
            metrics,
            cluster_id,
        }
    }

    /// One pass (see [`Reconcile::reconcile`]).
    async fn reconcile_at(
        &mut self,
        now: Timestamp,
    ) -> Result<Option<Duration>, crate::writer::WriteError> {
        let cv: Option<ClusterVersion> = self.caches.cluster_version();
        // The cache has no order; the API lists by name, and so does `oc`.
        let mut cos: Vec<ClusterOperator> = self
            .caches
            .cluster_operators
            .state()
            .iter()
            .map(|c| (**c).clone())
            .collect();
        cos.sort_by(|a, b| a.name().cmp(b.name()));
        let master = self.master_pool.borrow_and_update().clone();
        let inputs = ClusterInputs {
            cluster_version: cv.as_ref(),
            cluster_operators: &cos,
            ..Default::default()
        };
        let assessment = control_plane::assess_control_plane(&inputs, master.as_ref(), now);
        let requeue = control_plane::requeue_after(&inputs, now)
            .and_then(|d| Duration::try_from(d).ok())
            .map(|d| d + Duration::from_millis(100));

        let existing_cp_objs = self.caches.control_plane_statuses.state();
        let existing_insight_objs = self.caches.insights.state();
        let existing_insights: HashMap<String, &UpdateInsightStatus> = existing_insight_objs
            .iter()
            .filter_map(|o| o.status.as_ref().map(|s| (o.name_any(), s)))
            .collect();

        let (cp_desired, insight_desired) = match assessment {
            None => (Vec::new(), Vec::new()),
            Some(ControlPlaneAssessment {
                mut status,
                insights,
            }) => {
                let mut named: Vec<(String, UpdateInsightStatus)> = insights
                    .into_iter()
                    .map(|s| (naming::insight_name(&s, ""), s))
                    .collect();
                let existing_cp = existing_cp_objs
                    .iter()
                    .find(|o| o.name_any() == naming::CONTROL_PLANE_STATUS_NAME)
                    .and_then(|o| o.status.as_ref());
                carry_over(
                    &mut status,
                    existing_cp,
                    &mut named,
                    &existing_insights,
                    now,
                );
                self.metrics.set_control_plane(
                    Some(&status),
                    status.conditions.iter().any(|c| {
                        c.type_ == "Updating"
                            && c.status == update_status_api::crd::ConditionStatus::True
                    }),
                );
                let cv_owner = cv.as_ref().and_then(owner_ref);
                let mut cp_labels = self.base_labels();
                cp_labels.insert(labels::SCOPE.into(), ScopeType::ControlPlane.slug().into());
                cp_labels.insert(labels::ASSESSMENT.into(), status.assessment.slug().into());
                let cp = vec![Desired {
                    name: naming::CONTROL_PLANE_STATUS_NAME.to_string(),
                    labels: cp_labels,
                    owner: cv_owner,
                    status,
                }];
                let owners: HashMap<String, _> = cos
                    .iter()
                    .filter_map(|c| owner_ref(c).map(|o| (c.name().to_string(), o)))
                    .collect();
                let base = self.base_labels();
                let ins = named
                    .into_iter()
                    .map(|(name, status)| {
                        let owner = match status.resource.kind.as_str() {
                            "ClusterOperator" => owners.get(&status.resource.name).cloned(),
                            _ => cv.as_ref().and_then(owner_ref),
                        };
                        Desired::insight(name, status, &base, owner)
                    })
                    .collect();
                (cp, ins)
            }
        };
        let a = self.statuses.sync(&cp_desired, &existing_cp_objs).await?;
        let b = self
            .insights
            .sync(&insight_desired, &existing_insight_objs)
            .await?;
        if a.writes() + b.writes() > 0 {
            tracing::info!(
                reconciler = NAME,
                writes = a.writes() + b.writes(),
                insights = insight_desired.len(),
                "control plane updated"
            );
        }
        Ok(requeue)
    }

    fn base_labels(&self) -> std::collections::BTreeMap<String, String> {
        naming::cluster_labels(self.cluster_id.as_deref())
    }
}

impl Reconcile for ControlPlaneReconciler {
    const NAME: &'static str = NAME;
    fn reconcile(
        &mut self,
        now: Timestamp,
    ) -> impl std::future::Future<Output = Result<Option<Duration>, crate::writer::WriteError>> + Send
    {
        self.reconcile_at(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{
        HealthInsight, Impact, InsightScope, InsightType, Remediation, ResourceRef,
    };

    fn health(started_at: Option<&str>) -> UpdateInsightStatus {
        UpdateInsightStatus {
            type_: InsightType::Health,
            resource: ResourceRef {
                kind: "ClusterVersion".into(),
                name: "version".into(),
                ..Default::default()
            },
            scope: InsightScope::default(),
            progress: None,
            health: Some(HealthInsight {
                started_at: started_at.map(|s| s.parse().expect("timestamp")),
                impact: Impact {
                    summary: "s".into(),
                    ..Default::default()
                },
                remediation: Remediation {
                    reference: "r".into(),
                },
                related: vec![],
                source: "ClusterVersionNoFailing".into(),
            }),
        }
    }

    fn started(s: &UpdateInsightStatus) -> Option<String> {
        s.health
            .as_ref()
            .and_then(|h| h.started_at)
            .map(|t| t.to_string())
    }

    #[test]
    fn a_health_insight_keeps_its_first_started_at_across_passes_and_restarts() {
        let stored = health(Some("2023-11-03T15:00:00Z"));
        let existing: HashMap<String, &UpdateInsightStatus> = [("a".to_string(), &stored)].into();
        // A rule whose start is "now" recomputes a later instant: the stored one wins.
        let mut desired = vec![("a".to_string(), health(Some("2023-11-03T17:00:00Z")))];
        keep_started_at(&mut desired, &existing);
        assert_eq!(
            started(&desired[0].1).as_deref(),
            Some("2023-11-03T15:00:00Z")
        );
        // An earlier start (a condition's transition time) replaces it.
        let mut desired = vec![("a".to_string(), health(Some("2023-11-03T14:00:00Z")))];
        keep_started_at(&mut desired, &existing);
        assert_eq!(
            started(&desired[0].1).as_deref(),
            Some("2023-11-03T14:00:00Z")
        );
        // An unknown start keeps the known one; another insight is left alone.
        let mut desired = vec![
            ("a".to_string(), health(None)),
            ("b".to_string(), health(Some("2023-11-03T17:00:00Z"))),
        ];
        keep_started_at(&mut desired, &existing);
        assert_eq!(
            started(&desired[0].1).as_deref(),
            Some("2023-11-03T15:00:00Z")
        );
        assert_eq!(
            started(&desired[1].1).as_deref(),
            Some("2023-11-03T17:00:00Z")
        );
    }
}
