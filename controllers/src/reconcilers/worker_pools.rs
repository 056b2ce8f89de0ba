//! The worker-pools reconciler: MachineConfigPools + MachineConfigs + Nodes (+ the
//! ClusterVersion's target) → one WorkerPoolUpdateStatus per non-master pool, one progress
//! insight per node, and node/pool health insights. It only reads its caches, brings the core's
//! worker-pools share up to date ([`update_status_assess::incremental::WorkerPools`]: the per-node
//! cache, built from the same pieces as [`update_status_assess::compose::desired_cluster`]), and
//! writes what differs.
//!
//! Built for thousands of nodes (see `docs/benchmarks.md`):
//! - a node event re-assesses that node only, and pools are re-aggregated only when something
//!   they read changed (see [`update_status_assess::incremental`]);
//! - the writer is not even asked to compare when neither the desired objects nor our objects
//!   in the watch cache changed since a pass that found nothing to write;
//! - a WorkerPoolUpdateStatus whose change is only in its counts (node counts, completion,
//!   condition messages) is written at most once per [`POOL_STATUS_MIN_INTERVAL`]: a rollout
//!   that moves a node every few hundred milliseconds costs one pool write per interval, not
//!   one per node change (the latest counts are always written, at most that much later).
//!   Changes of assessment, pause, target version, health counts or condition status are
//!   written at once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::reconcilers::context::Context;
use crate::runtime::existing::Cached;
use jiff::Timestamp;
use update_status_api::crd::{
    Assessment, InsightType, UpdateInsight, WorkerPoolUpdateStatus, WorkerPoolUpdateStatusStatus,
    labels,
};
use update_status_api::input::{ClusterVersion, MachineConfig, MachineConfigPool};

use crate::cache::drain::DrainLookups;
use crate::cache::insights::CachedInsight;
use crate::cache::insights::ProgressConditions;
use crate::cache::nodes::CompactNode;
use crate::cache::watch::{Caches, cloned};
use crate::metrics::Metrics;
use crate::runtime::runner::{Reconcile, Requeue, Scope};
use crate::runtime::writer::{Desired, PENDING_TTL, WriteError, Writer};
use update_status_assess::compose;
use update_status_assess::incremental::{PoolInputs, Update, WorkerPools};
use update_status_assess::related::{DrainEvidence, drain_blockers};

/// Name of this reconciler (label value and field-manager suffix).
pub const NAME: &str = "worker-pools";

/// Shortest time between two writes of a WorkerPoolUpdateStatus that differ only in counts.
pub const POOL_STATUS_MIN_INTERVAL: Duration = Duration::from_secs(1);

/// The reconciler's state.
pub struct WorkerPoolsReconciler {
    caches: Caches,
    statuses: Writer<WorkerPoolUpdateStatus>,
    insights: Writer<UpdateInsight>,
    metrics: Arc<Metrics>,
    cluster_id: Option<String>,
    /// The core's worker-pools share, kept between passes (per-node cache).
    share: WorkerPools,
    /// Fingerprint of our objects in the watch caches when a pass last found nothing to write
    /// (and nothing deferred or pending): while it holds and nothing is dirty, a pass stops
    /// before comparing.
    in_sync: Option<u64>,
    /// Last status handed to the writer per pool, and when (the count-only throttle).
    pool_writes: HashMap<String, (WorkerPoolUpdateStatusStatus, Instant)>,
    /// The pods and PodDisruptionBudgets of the nodes whose drain fails.
    drain: DrainLookups,
}

/// A pool status change that only moves counts (node counts, completion, condition
/// messages): everything an alert or a label selector keys on is the same.
fn counts_only(a: &WorkerPoolUpdateStatusStatus, b: &WorkerPoolUpdateStatusStatus) -> bool {
    a.resource == b.resource
        && a.assessment == b.assessment
        && a.paused == b.paused
        && a.target_version == b.target_version
        && a.health_insights == b.health_insights
        && a.conditions.len() == b.conditions.len()
        && a.conditions
            .iter()
            .zip(&b.conditions)
            .all(|(x, y)| x.type_ == y.type_ && x.status == y.status)
}

/// Order-independent fingerprint of this reconciler's objects (name and resourceVersion).
fn fingerprint<K: Cached>(objs: &[Arc<K>]) -> u64 {
    let mut sum = 0u64;
    let mut count = 0u64;
    for o in objs {
        if o.cached_label(labels::RECONCILER) != Some(NAME) {
            continue;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        o.cached_name().hash(&mut h);
        o.cached_resource_version().hash(&mut h);
        sum = sum.wrapping_add(h.finish());
        count += 1;
    }
    sum ^ count.rotate_left(32)
}

/// Fingerprint of what the failed drains' insights point at (their blockers from the
/// evidence): a change of it is a change to write even when no input of ours changed.
fn blockers_fingerprint(share: &WorkerPools, evidence: &DrainEvidence) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for a in share.node_assessments().filter(|a| a.drain.is_some()) {
        a.name.hash(&mut h);
        if let Some(f) = &a.drain {
            drain_blockers(&a.name, f, evidence).hash(&mut h);
        }
    }
    h.finish()
}

impl WorkerPoolsReconciler {
    /// Creates the reconciler.
    pub fn new(ctx: Context) -> Self {
        WorkerPoolsReconciler {
            statuses: ctx.writer(NAME),
            insights: ctx.writer(NAME),
            drain: DrainLookups::new(ctx.client),
            caches: ctx.caches,
            metrics: ctx.metrics,
            cluster_id: ctx.cluster_id,
            share: WorkerPools::default(),
            in_sync: None,
            pool_writes: HashMap::new(),
        }
    }

    /// Publishes the pool metrics of the last aggregation.
    fn publish_metrics(&self) {
        // Node progress insights by pool and assessment.
        let mut by_pool: HashMap<&str, BTreeMap<Assessment, u32>> = HashMap::new();
        for n in self.share.node_assessments() {
            let i = &n.progress;
            if let Some(p) = i
                .progress
                .as_ref()
                .filter(|_| i.type_ == InsightType::Progress)
            {
                *by_pool
                    .entry(n.pool.as_str())
                    .or_default()
                    .entry(p.assessment)
                    .or_default() += 1;
            }
        }
        let mut metrics_pools = Vec::new();
        for pool in self.share.pools().iter().filter(|p| !p.is_master) {
            let by = by_pool.remove(pool.name.as_str()).unwrap_or_default();
            metrics_pools.push((pool.name.as_str(), &pool.status, by));
        }
        self.metrics.update.set_pools(metrics_pools);
    }
}

impl Reconcile for WorkerPoolsReconciler {
    const NAME: &'static str = NAME;
    fn scope(&self) -> Scope {
        Scope::of(self.statuses.namespace(), self.cluster_id.as_deref())
    }
    /// One pass (see the module documentation): read → assess → drains → throttle → write.
    async fn reconcile(
        &mut self,
        now: Timestamp,
    ) -> Result<Requeue, crate::runtime::writer::WriteError> {
        let t0 = Instant::now();
        let read = self.read();
        let update = self.assess(&read, now);
        let evidence = self.drains(&read).await;
        let next_change = update
            .next_change
            .and_then(|t| Duration::try_from(t.duration_since(now)).ok())
            .map(|d| d + Duration::from_millis(500));
        let mut requeue = Requeue::from(next_change).min(self.drain.next_refresh().into());
        let t_assess = t0.elapsed();
        if update.aggregated {
            self.publish_metrics();
            self.in_sync = None;
        }
        let timings = Timings {
            t0,
            assess: t_assess,
            aggregate: t0.elapsed(),
        };
        let (statuses, deferred) = self.throttle(&read.statuses);
        requeue = requeue.min(deferred);
        let print = fingerprint(&read.insights)
            ^ fingerprint(&read.statuses).rotate_left(17)
            ^ blockers_fingerprint(&self.share, &evidence).rotate_left(34);
        if deferred == Requeue::Never && self.in_sync == Some(print) {
            tracing::debug!(
                reconciler = NAME,
                assess_ms = t_assess.as_secs_f64() * 1e3,
                total_ms = t0.elapsed().as_secs_f64() * 1e3,
                "pass: nothing changed"
            );
            return Ok(requeue);
        }
        let pass = Pass {
            statuses,
            evidence,
            deferred,
            print,
            aggregated: update.aggregated,
            timings,
        };
        let next = self.write(&read, pass).await?;
        Ok(requeue.min(next))
    }
}

/// What one pass reads of the caches (snapshots).
struct Read {
    cv: Option<ClusterVersion>,
    pools: Vec<MachineConfigPool>,
    mcs: Vec<MachineConfig>,
    nodes: Vec<Arc<CompactNode>>,
    /// Our insights in the watch cache.
    insights: Vec<Arc<CachedInsight>>,
    /// Our pool statuses in the watch cache.
    statuses: Vec<Arc<WorkerPoolUpdateStatus>>,
    /// Those of our insights cached whole (the health insights).
    whole_insights: Vec<Arc<UpdateInsight>>,
}

/// When a pass's phases ended (for its debug log).
struct Timings {
    t0: Instant,
    assess: Duration,
    aggregate: Duration,
}

/// What a pass hands its write phase.
struct Pass {
    /// The pool statuses to write, count-only changes held back.
    statuses: Vec<Desired<WorkerPoolUpdateStatusStatus>>,
    /// What the failed drains' insights point at.
    evidence: DrainEvidence,
    /// When the pool statuses held back are due.
    deferred: Requeue,
    /// Fingerprint of our cached objects and the drains' blockers.
    print: u64,
    /// The pools were re-aggregated.
    aggregated: bool,
    timings: Timings,
}

impl WorkerPoolsReconciler {
    /// Reads the caches.
    fn read(&self) -> Read {
        let insights = self.caches.insights.state();
        Read {
            cv: self.caches.cluster_version(),
            pools: cloned(&self.caches.pools.state()),
            mcs: cloned(&self.caches.machine_configs.state()),
            nodes: self.caches.nodes.state(),
            whole_insights: crate::cache::insights::wholes(&insights),
            insights,
            statuses: self.caches.worker_pool_statuses.state(),
        }
    }

    /// Brings the core's share up to date with what was read.
    fn assess(&mut self, read: &Read, now: Timestamp) -> Update {
        // What the core reads of our insights: those cached whole (the health insights), and
        // the conditions of the projected ones (the transition times carried over).
        let projected = ProgressConditions::new(&read.insights);
        let existing = compose::Existing {
            control_plane: None,
            worker_pools: &read.statuses,
            insights: compose::ExistingInsights::new(&read.whole_insights)
                .with_progress(&projected),
        };
        self.share.update(
            PoolInputs {
                cluster_version: read.cv.as_ref(),
                pools: &read.pools,
                machine_configs: &read.mcs,
                nodes: &read.nodes,
            },
            &existing,
            &compose::base_labels(self.cluster_id.as_deref()),
            now,
        )
    }

    /// Failed drains whose message names no PodDisruptionBudget: their pods and budgets,
    /// looked up (bounded, only for those nodes); the firing PodDisruptionBudget alerts from
    /// the alerts reconciler's insights.
    async fn drains(&mut self, read: &Read) -> DrainEvidence {
        let lookups: Vec<(String, Vec<(String, String)>)> = self
            .share
            .drain_lookups()
            .map(|(node, named)| (node.to_string(), named.to_vec()))
            .collect();
        self.drain
            .refresh(lookups.iter().map(|(n, p)| (n.as_str(), p.as_slice())))
            .await;
        self.drain
            .evidence(update_status_assess::alerts::pdb_alerts_of_insights(
                read.whole_insights.iter().filter_map(|o| o.status.as_ref()),
            ))
    }

    /// The pool statuses to write, with count-only changes throttled; when the first one held
    /// back is due.
    fn throttle(
        &mut self,
        cached: &[Arc<WorkerPoolUpdateStatus>],
    ) -> (Vec<Desired<WorkerPoolUpdateStatusStatus>>, Requeue) {
        let mut statuses = self.share.statuses().to_vec();
        let mut deferred = Requeue::Never;
        let wanted: HashSet<&str> = statuses.iter().map(|d| d.name.as_str()).collect();
        self.pool_writes
            .retain(|name, _| wanted.contains(name.as_str()));
        for d in &mut statuses {
            let cached = cached
                .iter()
                .find(|o| o.metadata.name.as_deref() == Some(d.name.as_str()))
                .and_then(|o| o.status.as_ref());
            let last = self.pool_writes.get(&d.name);
            if last.map(|(s, _)| s).or(cached) == Some(&d.status) {
                continue;
            }
            match last {
                Some((s, at))
                    if at.elapsed() < POOL_STATUS_MIN_INTERVAL && counts_only(s, &d.status) =>
                {
                    let wait = POOL_STATUS_MIN_INTERVAL.saturating_sub(at.elapsed());
                    deferred = deferred.min(Requeue::After(wait + Duration::from_millis(10)));
                    d.status = s.clone();
                }
                _ => {
                    self.pool_writes
                        .insert(d.name.clone(), (d.status.clone(), Instant::now()));
                }
            }
        }
        (statuses, deferred)
    }

    /// Writes the insights, then the pool statuses; when to look again for the writer's sake
    /// (back-offs, writes the cache does not show yet).
    async fn write(&mut self, read: &Read, pass: Pass) -> Result<Requeue, WriteError> {
        let t_compare = pass.timings.t0.elapsed();
        // Insights first: a node's own insight is what an event most directly changes.
        // Each sync writes all it can: an object the API server refuses blocks no other one
        // (it is retried after its own back-off, see `writer`).
        let b = self
            .insights
            .sync(
                self.share.insights(&read.whole_insights, &pass.evidence),
                &read.insights,
            )
            .await;
        let a = self.statuses.sync(&pass.statuses, &read.statuses).await;
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                self.in_sync = None;
                return Err(e);
            }
        };
        let writes = a.writes() + b.writes();
        let Timings {
            t0,
            assess: t_assess,
            aggregate: t_aggregate,
        } = pass.timings;
        tracing::debug!(
            reconciler = NAME,
            aggregated = pass.aggregated,
            writes,
            assess_ms = t_assess.as_secs_f64() * 1e3,
            aggregate_ms = (t_aggregate - t_assess).as_secs_f64() * 1e3,
            prepare_ms = (t_compare - t_aggregate).as_secs_f64() * 1e3,
            sync_ms = (t0.elapsed() - t_compare).as_secs_f64() * 1e3,
            "pass"
        );
        let pending = self.statuses.has_pending() || self.insights.has_pending();
        let failing = self.statuses.failing() + self.insights.failing() > 0;
        self.in_sync = (writes == 0 && pass.deferred == Requeue::Never && !pending && !failing)
            .then_some(pass.print);
        let mut requeue: Requeue = [self.statuses.retry_in(), self.insights.retry_in()]
            .into_iter()
            .collect();
        if pending {
            // Check again once our recent writes no longer vouch for the cache.
            requeue = requeue.min(Requeue::After(PENDING_TTL + Duration::from_secs(1)));
        }
        if writes > 0 {
            tracing::info!(
                reconciler = NAME,
                writes,
                insights = b.unchanged + b.meta_writes.max(b.status_writes),
                "worker pools updated"
            );
        }
        Ok(requeue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{Condition, ConditionStatus, HealthCounts, NodeCounts};

    fn status(
        assessment: Assessment,
        updated: u32,
        updating: ConditionStatus,
    ) -> WorkerPoolUpdateStatusStatus {
        WorkerPoolUpdateStatusStatus {
            assessment,
            completion_percent: updated * 10,
            nodes: NodeCounts {
                total: 10,
                updated,
                ..Default::default()
            },
            conditions: vec![Condition {
                type_: "Updating".into(),
                status: updating,
                message: format!("{updated} of 10"),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn only_count_changes_are_throttled() {
        let a = status(Assessment::Progressing, 3, ConditionStatus::True);
        assert!(counts_only(
            &a,
            &status(Assessment::Progressing, 4, ConditionStatus::True)
        ));
        assert!(!counts_only(
            &a,
            &status(Assessment::Degraded, 4, ConditionStatus::True)
        ));
        assert!(!counts_only(
            &a,
            &status(Assessment::Progressing, 4, ConditionStatus::False)
        ));
        let mut b = a.clone();
        b.health_insights = HealthCounts {
            error: 1,
            ..Default::default()
        };
        assert!(!counts_only(&a, &b));
        let mut c = a.clone();
        c.target_version = "4.18.3".into();
        assert!(!counts_only(&a, &c));
    }

    #[test]
    fn fingerprints_ignore_order_and_other_reconcilers() {
        let obj = |name: &str, rv: &str, reconciler: &str| {
            let mut o = UpdateInsight::new(name, Default::default());
            o.metadata.resource_version = Some(rv.into());
            o.metadata.labels =
                Some([(labels::RECONCILER.to_string(), reconciler.to_string())].into());
            Arc::new(o)
        };
        let a = vec![obj("a", "1", NAME), obj("b", "2", NAME)];
        let b = vec![
            obj("b", "2", NAME),
            obj("a", "1", NAME),
            obj("c", "9", "control-plane"),
        ];
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let c = vec![obj("a", "1", NAME), obj("b", "3", NAME)];
        assert_ne!(fingerprint(&a), fingerprint(&c));
        assert_ne!(fingerprint(&a), fingerprint(&a[..1]));
    }
}
