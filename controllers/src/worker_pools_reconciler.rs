//! The worker-pools reconciler: MachineConfigPools + MachineConfigs + Nodes (+ the
//! ClusterVersion's target) → one WorkerPoolUpdateStatus per non-master pool, one progress
//! insight per node, and node/pool health insights. It hands the master pool's assessment to
//! the control-plane reconciler. It only watches, calls [`crate::assess::nodes`], and writes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kube::ResourceExt;
use tokio::sync::watch;
use update_status_api::crd::{
    Assessment, InsightType, ScopeType, UpdateInsight, UpdateInsightStatus, WorkerPoolUpdateStatus,
    labels,
};
use update_status_api::input::{ClusterVersion, MachineConfig, MachineConfigPool};

use crate::assess::naming;
use crate::assess::nodes::{self, NodeAssessment, NodeContext, PoolAssessment};
use crate::control_plane_reconciler::keep_started_at;
use crate::metrics::Metrics;
use crate::runner::Reconcile;
use crate::watch::Caches;
use crate::writer::{Desired, Writer, owner_ref};

/// Name of this reconciler (label value and field-manager suffix).
pub const NAME: &str = "worker-pools";

/// The reconciler's state.
pub struct WorkerPoolsReconciler {
    caches: Caches,
    master_pool: watch::Sender<Option<PoolAssessment>>,
    statuses: Writer<WorkerPoolUpdateStatus>,
    insights: Writer<UpdateInsight>,
    metrics: Arc<Metrics>,
    cluster_id: Option<String>,
    context: Option<NodeContext>,
    node_cache: HashMap<String, CachedNode>,
}

/// A node's assessment, valid while its resourceVersion and the context are unchanged and its
/// time threshold (if any) has not passed.
struct CachedNode {
    resource_version: Option<String>,
    assessment: Option<NodeAssessment>,
}

impl WorkerPoolsReconciler {
    /// Creates the reconciler; `master_pool` publishes the master pool's assessment.
    pub fn new(
        client: kube::Client,
        namespace: &str,
        caches: Caches,
        master_pool: watch::Sender<Option<PoolAssessment>>,
        metrics: Arc<Metrics>,
        cluster_id: Option<String>,
    ) -> Self {
        WorkerPoolsReconciler {
            statuses: Writer::new(client.clone(), namespace, NAME, metrics.clone()),
            insights: Writer::new(client, namespace, NAME, metrics.clone()),
            caches,
            master_pool,
            metrics,
            cluster_id,
            context: None,
            node_cache: HashMap::new(),
        }
    }

    /// One pass (see [`Reconcile::reconcile`]).
    ///
    /// Nodes are assessed one by one and cached by resourceVersion: a node event re-assesses
    /// that node only (all nodes when the ClusterVersion target, the pools or the
    /// MachineConfigs change, or when a node's time threshold passes). The writer then writes
    /// only the objects whose content changed.
    async fn reconcile_at(
        &mut self,
        now: Timestamp,
    ) -> Result<Option<Duration>, crate::writer::WriteError> {
        let cvs = self.caches.cluster_versions.state();
        let cv: Option<ClusterVersion> = cvs
            .iter()
            .find(|c| c.name_any() == "version")
            .or_else(|| cvs.first())
            .map(|c| (**c).clone());
        let pools: Vec<MachineConfigPool> = self
            .caches
            .pools
            .state()
            .iter()
            .map(|p| (**p).clone())
            .collect();
        let mcs: Vec<MachineConfig> = self
            .caches
            .machine_configs
            .state()
            .iter()
            .map(|p| (**p).clone())
            .collect();
        let ctx = NodeContext::new(cv.as_ref(), &pools, &mcs);
        if self.context.as_ref() != Some(&ctx) {
            self.node_cache.clear();
            self.context = Some(ctx.clone());
        }

        let node_objs = self.caches.nodes.state();
        let mut seen = HashSet::with_capacity(node_objs.len());
        let mut next_change: Option<Timestamp> = None;
        for node in &node_objs {
            let name = node.name_any();
            let rv = node.resource_version();
            let fresh = self.node_cache.get(&name).is_some_and(|c| {
                c.resource_version == rv
                    && c.assessment
                        .as_ref()
                        .and_then(|a| a.changes_at)
                        .is_none_or(|t| t > now)
            });
            if !fresh {
                let assessment = nodes::assess_node(&ctx, node, now);
                self.node_cache.insert(
                    name.clone(),
                    CachedNode {
                        resource_version: rv,
                        assessment,
                    },
                );
            }
            if let Some(t) = self
                .node_cache
                .get(&name)
                .and_then(|c| c.assessment.as_ref())
                .and_then(|a| a.changes_at)
            {
                next_change = Some(next_change.map_or(t, |n: Timestamp| n.min(t)));
            }
            seen.insert(name);
        }
        self.node_cache.retain(|name, _| seen.contains(name));
        let requeue = next_change
            .and_then(|t| Duration::try_from(t.duration_since(now)).ok())
            .map(|d| d + Duration::from_millis(500));

        let assessed: Vec<&NodeAssessment> = self
            .node_cache
            .values()
            .filter_map(|c| c.assessment.as_ref())
            .collect();
        let pool_assessments: Vec<PoolAssessment> = ctx
            .pools()
            .iter()
            .map(|p| nodes::aggregate_pool(&ctx, p, assessed.iter().copied()))
            .collect();

        let master = pool_assessments
            .iter()
            .find(|p| p.is_master)
            .map(|p| PoolAssessment {
                insights: Vec::new(),
                ..p.clone()
            });
        self.master_pool.send_if_modified(|old| {
            if *old != master {
                *old = master;
                true
            } else {
                false
            }
        });

        let existing_insight_objs = self.caches.insights.state();
        let existing_insights: HashMap<String, &UpdateInsightStatus> = existing_insight_objs
            .iter()
            .filter_map(|o| o.status.as_ref().map(|s| (o.name_any(), s)))
            .collect();
        let node_owners: HashMap<&str, _> = node_objs
            .iter()
            .filter_map(|n| owner_ref(n.as_ref()).map(|o| (n.name(), o)))
            .collect();
        let pool_owners: HashMap<&str, _> = pools
            .iter()
            .filter_map(|p| owner_ref(p).map(|o| (p.name(), o)))
            .collect();

        let mut status_desired = Vec::new();
        let mut named = Vec::new();
        let mut metrics_pools = Vec::new();
        for pool in &pool_assessments {
            for s in &pool.insights {
                named.push((naming::insight_name(s, ""), s.clone()));
            }
            if pool.is_master {
                continue;
            }
            let mut l = self.base_labels();
            l.insert(labels::SCOPE.into(), ScopeType::WorkerPool.slug().into());
            l.insert(labels::POOL.into(), naming::label_value(&pool.name));
            l.insert(
                labels::ASSESSMENT.into(),
                pool.status.assessment.slug().into(),
            );
            status_desired.push(Desired {
                name: naming::pool_status_name(&pool.name),
                labels: l,
                owner: pool_owners.get(pool.name.as_str()).cloned(),
                status: pool.status.clone(),
            });
            let mut by: BTreeMap<Assessment, u32> = BTreeMap::new();
            for i in &pool.insights {
                if let Some(p) = i
                    .progress
                    .as_ref()
                    .filter(|_| i.type_ == InsightType::Progress)
                {
                    *by.entry(p.assessment).or_default() += 1;
                }
            }
            metrics_pools.push((pool.name.as_str(), &pool.status, by));
        }
        self.metrics.set_pools(metrics_pools);
        self.metrics.set_health(
            ScopeType::WorkerPool.slug(),
            named
                .iter()
                .map(|(_, s)| s)
                .filter(|s| s.scope.type_ == ScopeType::WorkerPool),
        );
        keep_started_at(&mut named, &existing_insights);
        let insight_desired: Vec<Desired<UpdateInsightStatus>> = named
            .into_iter()
            .map(|(name, status)| {
                let owner = match status.resource.kind.as_str() {
                    "Node" => node_owners.get(status.resource.name.as_str()).cloned(),
                    "MachineConfigPool" => pool_owners.get(status.resource.name.as_str()).cloned(),
                    _ => None,
                };
                let mut l = naming::insight_labels(&status);
                l.extend(self.base_labels());
                Desired {
                    name,
                    labels: l,
                    owner,
                    status,
                }
            })
            .collect();
        let existing_status_objs = self.caches.worker_pool_statuses.state();
        let a = self
            .statuses
            .sync(&status_desired, &existing_status_objs)
            .await?;
        let b = self
            .insights
            .sync(&insight_desired, &existing_insight_objs)
            .await?;
        if a.writes() + b.writes() > 0 {
            tracing::info!(
                reconciler = NAME,
                writes = a.writes() + b.writes(),
                insights = insight_desired.len(),
                "worker pools updated"
            );
        }
        Ok(requeue)
    }

    fn base_labels(&self) -> BTreeMap<String, String> {
        let mut l = BTreeMap::new();
        if let Some(id) = &self.cluster_id {
            l.insert(labels::CLUSTER.to_string(), naming::label_value(id));
        }
        l
    }
}

impl Reconcile for WorkerPoolsReconciler {
    const NAME: &'static str = NAME;
    fn reconcile(
        &mut self,
        now: Timestamp,
    ) -> impl std::future::Future<Output = Result<Option<Duration>, crate::writer::WriteError>> + Send
    {
        self.reconcile_at(now)
    }
}
