//! The control-plane reconciler: ClusterVersion + ClusterOperators (+ the master pool's nodes
//! and the machine-config operator's Deployment image) → the ControlPlaneUpdateStatus `cluster`, progress insights for the ClusterVersion and each
//! platform ClusterOperator, and the control-plane health insights. It only reads its caches,
//! calls [`update_status_assess::compose::control_plane_share`], and writes what differs.
//!
//! The master pool's node counts are computed from the node, pool and MachineConfig caches in
//! the same pass (the caches have all listed before the first pass), so the status is complete
//! from its first write.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kube::ResourceExt;
use update_status_api::crd::{ControlPlaneUpdateStatus, UpdateInsight};

use crate::cache::insights::ProgressConditions;
use crate::cache::readings::ClusterReadings;
use crate::cache::watch::Caches;
use crate::metrics::Metrics;
use crate::reconcilers::context::Context;
use crate::runtime::runner::{Reconcile, Requeue, Scope};
use crate::runtime::writer::Writer;
use update_status_assess::compose::{self, ExistingInsights};
use update_status_assess::{McoImage, control_plane, naming};

/// Name of this reconciler (label value and field-manager suffix).
pub const NAME: &str = "control-plane";

/// The reconciler's state.
pub struct ControlPlaneReconciler {
    caches: Caches,
    statuses: Writer<ControlPlaneUpdateStatus>,
    insights: Writer<UpdateInsight>,
    metrics: Arc<Metrics>,
    cluster_id: Option<String>,
    /// Why the MCO image was not known on the last pass (logged when it changes).
    mco_absent: Option<String>,
}

impl ControlPlaneReconciler {
    /// Creates the reconciler.
    pub fn new(ctx: Context) -> Self {
        ControlPlaneReconciler {
            statuses: ctx.writer(NAME),
            insights: ctx.writer(NAME),
            caches: ctx.caches,
            metrics: ctx.metrics,
            cluster_id: ctx.cluster_id,
            mco_absent: None,
        }
    }

    /// Says once (not every pass) that the MCO image is not known, and when it is again.
    fn log_mco_image(&mut self, mco: McoImage<'_>) {
        let absent = match mco {
            McoImage::Absent(why) => Some(why),
            McoImage::Observed(_) | McoImage::NotRead => None,
        };
        if absent == self.mco_absent.as_deref() {
            return;
        }
        match absent {
            Some(why) => tracing::warn!(
                reconciler = NAME,
                reason = %why,
                "machine-config operator image unknown: a machine-config operator-image version counts as not updated"
            ),
            None => tracing::info!(
                reconciler = NAME,
                "machine-config operator image known again"
            ),
        }
        self.mco_absent = absent.map(str::to_string);
    }
}

impl Reconcile for ControlPlaneReconciler {
    const NAME: &'static str = NAME;
    fn scope(&self) -> Scope {
        Scope::of(self.statuses.namespace(), self.cluster_id.as_deref())
    }
    /// One pass.
    async fn reconcile(
        &mut self,
        now: Timestamp,
    ) -> Result<Requeue, crate::runtime::writer::WriteError> {
        let readings = ClusterReadings::of(&self.caches);
        let nodes = self.caches.nodes.state();
        let inputs = readings.inputs();
        self.log_mco_image(inputs.mco_image);
        let existing_cp_objs = self.caches.control_plane_statuses.state();
        let existing_insight_objs = self.caches.insights.state();
        let existing_cp = existing_cp_objs
            .iter()
            .find(|o| o.name_any() == naming::CONTROL_PLANE_STATUS_NAME)
            .and_then(|o| o.status.as_ref());
        // What the core reads of our insights: those cached whole (the health insights).
        let whole_insights = crate::cache::insights::wholes(&existing_insight_objs);
        // ... and the conditions of those projected (the transition times carried over).
        let projected = ProgressConditions::new(&existing_insight_objs);
        let existing = ExistingInsights::new(&whole_insights).with_progress(&projected);
        let base = compose::base_labels(self.cluster_id.as_deref());
        let mut share = compose::control_plane_share(
            &inputs,
            nodes.iter().map(|n| n.as_ref()),
            existing_cp,
            compose::Naming {
                existing: &existing,
                base: &base,
            },
            now,
        );
        // The inputs the watches could not decode (of every kind) are shown with this share.
        share.insights.extend(compose::unreadable_inputs_share(
            &self.caches.unreadable.all(),
            &existing,
            &base,
            now,
        ));
        let requeue = share
            .requeue_after
            .and_then(|d| Duration::try_from(d).ok())
            .map(|d| d + Duration::from_millis(100));
        if let Some(cp) = &share.status {
            self.metrics.update.set_control_plane(
                Some(&cp.status),
                cp.status.conditions.iter().any(|c| {
                    c.type_ == control_plane::CONDITION_UPDATING
                        && c.status == update_status_api::crd::ConditionStatus::True
                }),
            );
        }
        // Both syncs write all they can: a refused object blocks no other one.
        let a = self
            .statuses
            .sync(share.status.iter(), &existing_cp_objs)
            .await;
        let b = self
            .insights
            .sync(&share.insights, &existing_insight_objs)
            .await;
        let (a, b) = (a?, b?);
        if a.writes() + b.writes() > 0 {
            tracing::info!(
                reconciler = NAME,
                writes = a.writes() + b.writes(),
                insights = share.insights.len(),
                "control plane updated"
            );
        }
        // Come back when a refused object's back-off ends, at the latest.
        Ok(
            [requeue, self.statuses.retry_in(), self.insights.retry_in()]
                .into_iter()
                .collect(),
        )
    }
}
