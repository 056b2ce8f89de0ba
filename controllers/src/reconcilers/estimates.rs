//! The estimates reconciler (issue #40): learns how long this cluster's updates take and
//! estimates the remaining time of the update in progress, in the one `UpdateHistory` object
//! `cluster` of the namespace (`.status`: the learned updates, the update being followed, the
//! estimates) and in `update_status_estimated_seconds_remaining`.
//!
//! It reads the same caches as the other reconcilers (ClusterVersion, ClusterOperators,
//! MachineConfigPools, MachineConfigs, Nodes, the MCO Deployment) and calls the pure
//! [`update_status_assess::estimates`]. Its own object is not watched: it is read once when this
//! replica starts leading (a restart or a leader change resumes from what the previous leader
//! wrote) and again after a failed write; between, this replica is its only writer, and each
//! pass continues from what the last one learned (in memory). It is written only when that
//! changed, and at once only for what a crash must not lose
//! ([`update_status_assess::estimates::must_write_now`]: an update learned, started or
//! replaced, a node finished, a pool done, a pause, the control plane done, the method). The
//! rest waits at most [`COALESCE`] for the next write: the times of the nodes in flight (their
//! progress insights hold them, and a restart resumes them from there), the operators' (the
//! ClusterOperators give them again) and estimates that moved by more than
//! `max(1 min, 10 %)`.
//!
//! Without the `UpdateHistory` CRD (an older installation) it says so once and does nothing
//! else; the other reconcilers are not affected.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kube::api::{Api, PatchParams};
use kube::runtime::reflector::ObjectRef;
use serde_json::json;
use update_status_api::crd::labels;
use update_status_api::history::{
    EstimateMethod, UPDATE_HISTORY_NAME, UpdateEstimates, UpdateHistory, UpdateHistoryStatus,
};

use crate::cache::readings::ClusterReadings;
use crate::cache::watch::Caches;
use crate::metrics::Metrics;
use crate::metrics::estimates::ScopeSeconds;
use crate::reconcilers::context::Context;
use crate::runtime::runner::{Reconcile, Requeue, Scope};
use crate::runtime::writer::{Direct, WriteError, field_manager};
use update_status_assess::estimates::{
    Resume, estimate, estimates_moved, must_write_now, observe_resuming,
};
use update_status_assess::naming;

/// Name of this reconciler (label value and field-manager suffix).
pub const NAME: &str = "estimates";
const KIND: &str = "UpdateHistory";
/// The longest a change that a restart gets back anyway waits for a write.
pub const COALESCE: Duration = Duration::from_secs(30);
/// While an update is estimated, how often the estimates are made again when nothing they
/// read changed (time alone moves them; at most one pass a second otherwise).
pub const REEVALUATE: Duration = Duration::from_secs(60);

/// The time from `from` to `to` (zero when `to` is earlier).
fn elapsed(from: Timestamp, to: Timestamp) -> Duration {
    Duration::try_from(to.duration_since(from)).unwrap_or_default()
}

/// The reconciler's state.
pub struct EstimatesReconciler {
    caches: Caches,
    api: Api<UpdateHistory>,
    namespace: String,
    metrics: Arc<Metrics>,
    cluster_id: Option<String>,
    /// What the last pass learned (`None`: the object is to be read).
    learned: Option<UpdateHistoryStatus>,
    /// What the object holds.
    written: UpdateHistoryStatus,
    /// When this replica last wrote it (`None`: not since it read it).
    written_at: Option<Timestamp>,
    /// What the last whole pass read (the nodes' [`crate::cache::nodes::CompactNode::timing_key`]s and
    /// [`ClusterReadings::key`]), and when it ran.
    read: Option<((u64, u64), Timestamp)>,
    /// The object exists.
    exists: bool,
    /// The CRD is missing (said once).
    no_crd: bool,
}

impl EstimatesReconciler {
    /// Creates the reconciler.
    pub fn new(ctx: Context) -> Self {
        EstimatesReconciler {
            api: Api::namespaced(ctx.client, &ctx.namespace),
            namespace: ctx.namespace,
            caches: ctx.caches,
            metrics: ctx.metrics,
            cluster_id: ctx.cluster_id,
            learned: None,
            written: UpdateHistoryStatus::default(),
            written_at: None,
            read: None,
            exists: false,
            no_crd: false,
        }
    }

    fn api_error(&self, verb: &'static str, e: kube::Error) -> WriteError {
        WriteError::Api {
            verb,
            kind: KIND.to_string(),
            namespace: self.namespace.clone(),
            name: UPDATE_HISTORY_NAME.to_string(),
            source: Box::new(e),
        }
    }

    /// Reads the object (once per leadership, and after a failed write).
    async fn load(&mut self) -> Result<Option<UpdateHistoryStatus>, WriteError> {
        match self.api.get_opt(UPDATE_HISTORY_NAME).await {
            Ok(Some(obj)) => {
                self.exists = true;
                let status = obj.status.unwrap_or_default();
                tracing::info!(
                    reconciler = NAME,
                    learned = status.updates.len(),
                    following = status.current.is_some(),
                    "learned update durations read"
                );
                Ok(Some(status))
            }
            Ok(None) => {
                self.exists = false;
                Ok(Some(UpdateHistoryStatus::default()))
            }
            // The kind itself is unknown: no CRD.
            Err(kube::Error::Api(s)) if s.code == 404 => {
                if !self.no_crd {
                    tracing::warn!(
                        reconciler = NAME,
                        "the UpdateHistory CRD is not installed: no learned estimates (apply config/crd)"
                    );
                    self.no_crd = true;
                }
                Ok(None)
            }
            Err(e) => Err(self.api_error("get", e)),
        }
    }

    /// Applies the object's metadata (creating it) and its status.
    async fn write(
        &mut self,
        status: &UpdateHistoryStatus,
        create: bool,
    ) -> Result<(), WriteError> {
        let params = PatchParams::apply(&field_manager(NAME)).force();
        let direct = Direct {
            kind: KIND,
            namespace: &self.namespace,
            name: UPDATE_HISTORY_NAME,
            metrics: &self.metrics,
        };
        if create {
            let mut l: BTreeMap<String, String> =
                naming::cluster_labels(self.cluster_id.as_deref());
            l.insert(labels::RECONCILER.to_string(), NAME.to_string());
            l.insert(
                labels::MANAGED_BY.to_string(),
                labels::MANAGED_BY_VALUE.to_string(),
            );
            let obj = json!({
                "apiVersion": "update.openshift.io/v1alpha1",
                "kind": KIND,
                "metadata": {"name": UPDATE_HISTORY_NAME, "labels": l},
                "spec": {},
            });
            direct
                .apply(&self.api, &params, &obj)
                .await
                .inspect_err(|e| direct.count_failure(e))?;
        }
        let obj = json!({
            "apiVersion": "update.openshift.io/v1alpha1",
            "kind": KIND,
            "metadata": {"name": UPDATE_HISTORY_NAME},
            "status": status,
        });
        direct
            .apply_status(&self.api, &params, &obj)
            .await
            .inspect_err(|e| direct.count_failure(e))?;
        Ok(())
    }

    /// The metrics of the current estimates at `now` (none while nothing updates).
    fn export(&self, est: Option<&UpdateEstimates>, now: Timestamp) {
        let Some(est) = est else {
            self.metrics.estimates.set(None, &[]);
            return;
        };
        // From the instants, at `now`: the stored seconds were counted when they were computed.
        let left =
            |t: Timestamp| (t.as_millisecond() - now.as_millisecond()).max(0) as f64 / 1000.0;
        let bounds = |e: &update_status_api::history::Estimate| {
            [
                left(e.earliest_completion_time),
                left(e.estimated_completion_time),
                left(e.latest_completion_time),
            ]
        };
        let mut scopes: Vec<ScopeSeconds<'_>> = Vec::new();
        if let Some(e) = &est.control_plane {
            scopes.push(("control_plane", "", bounds(e)));
        }
        if let Some(e) = &est.update {
            scopes.push(("update", "", bounds(e)));
        }
        for p in &est.pools {
            scopes.push(("pool", &p.name, bounds(&p.estimate)));
        }
        let method = match est.method {
            EstimateMethod::Learned => "Learned",
            EstimateMethod::OcBaseline => "OcBaseline",
        };
        self.metrics.estimates.set(Some(method), &scopes);
    }
}

impl Reconcile for EstimatesReconciler {
    const NAME: &'static str = NAME;
    /// Estimates are about minutes, and every pass reads every node: a second collects the
    /// events of kubelet heartbeats (N/300 a second) into one pass instead of ten. A stage a
    /// node passes through within it is resumed from its insight's timeline, stamped by the
    /// worker-pools reconciler at the default debounce.
    const DEBOUNCE: Duration = Duration::from_secs(1);
    fn scope(&self) -> Scope {
        Scope::of(&self.namespace, self.cluster_id.as_deref())
    }
    /// One pass.
    async fn reconcile(&mut self, now: Timestamp) -> Result<Requeue, WriteError> {
        let (learned, just_read) = match self.learned.take() {
            Some(l) => (l, false),
            None => match self.load().await? {
                Some(s) => {
                    self.written = s.clone();
                    self.written_at = None;
                    (s, true)
                }
                None => return Ok(Requeue::Never),
            },
        };
        let nodes = self.caches.nodes.state();
        // Nothing read changed (kubelet heartbeats), nothing waits for a write and the last
        // whole pass is recent: the estimates stand (their metrics are counted at `now`).
        let key = (
            nodes
                .iter()
                .fold(0u64, |sum, n| sum.wrapping_add(n.timing_key())),
            ClusterReadings::key(&self.caches),
        );
        if let Some((read, at)) = self.read
            && read == key
            && !just_read
            && learned == self.written
            && let Some(left) = REEVALUATE.checked_sub(elapsed(at, now))
            && !left.is_zero()
        {
            self.export(learned.estimates.as_ref(), now);
            self.learned = Some(learned);
            return Ok(Requeue::After(left));
        }
        self.read = Some((key, now));
        let readings = ClusterReadings::of(&self.caches);
        let inputs = readings.inputs();
        let mut status = learned.clone();
        // A node in flight not followed yet resumes from its progress insight's times.
        let insights = &self.caches.insights;
        let namespace = self.namespace.as_str();
        let timeline = |node: &str| {
            let name = naming::progress_insight_name("Node", node);
            insights
                .get(&ObjectRef::new(&name).within(namespace))
                .and_then(|i| i.timeline())
        };
        let resume = Resume {
            timeline: &timeline,
            just_read,
        };
        observe_resuming(&mut status, &inputs, &nodes, &resume, now);
        let fresh = estimate(&status, &inputs, &nodes, now);
        if estimates_moved(learned.estimates.as_ref(), fresh.as_ref(), now) {
            status.estimates = fresh;
        }
        self.export(status.estimates.as_ref(), now);
        self.settle(status, now).await
    }
}

impl EstimatesReconciler {
    /// Writes the UpdateHistory `status` learned at `now` if it must be (created, changed and
    /// not coalesced); when to look again.
    async fn settle(
        &mut self,
        mut status: UpdateHistoryStatus,
        now: Timestamp,
    ) -> Result<Requeue, WriteError> {
        let create = !self.exists;
        if status == self.written && !create {
            let next = again_after(&status);
            self.learned = Some(status);
            return Ok(next);
        }
        let waited = self.written_at.map(|t| elapsed(t, now));
        if !create
            && !must_write_now(&self.written, &status)
            && let Some(waited) = waited.filter(|w| *w < COALESCE)
        {
            self.learned = Some(status);
            return Ok(Requeue::After(COALESCE - waited));
        }
        let (old, new) = (self.written.current.as_ref(), status.current.as_ref());
        tracing::debug!(
            reconciler = NAME,
            create,
            at_once = must_write_now(&self.written, &status),
            nodes = old.map(|c| &c.nodes) != new.map(|c| &c.nodes),
            operators = old.map(|c| &c.operators) != new.map(|c| &c.operators),
            estimates = self.written.estimates != status.estimates,
            "writing the UpdateHistory"
        );
        if let Some(c) = status.current.as_mut() {
            c.written_at = Some(now);
        }
        if let Err(e) = self.write(&status, create).await {
            // Read it again before the next write (another writer, a deleted object); what
            // was learned since the last write resumes from the insights and the inputs.
            self.learned = None;
            return Err(e);
        }
        if status.updates.len() != self.written.updates.len() {
            tracing::info!(
                reconciler = NAME,
                learned = status.updates.len(),
                "update learned"
            );
        }
        self.exists = true;
        self.written = status.clone();
        self.written_at = Some(now);
        let next = again_after(&status);
        self.learned = Some(status);
        Ok(next)
    }
}

/// Time alone moves the estimates: look again by then.
fn again_after(s: &UpdateHistoryStatus) -> Requeue {
    s.estimates.is_some().then_some(REEVALUATE).into()
}
