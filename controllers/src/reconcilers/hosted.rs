//! Hosted mode (`--mode=hosted`, HyperShift management clusters): watches HostedClusters,
//! NodePools and the cluster-api Machines, MachineSets and MachineDeployments, and, for each
//! HostedCluster, writes what [`update_status_assess::hosted::desired_hosted`] wants into the
//! HostedCluster's namespace: the ControlPlaneUpdateStatus named after it, one
//! WorkerPoolUpdateStatus per NodePool and the UpdateInsights, all labelled
//! `update.openshift.io/cluster=<HostedCluster>`.
//!
//! One reconciler runs the shared loop ([`crate::runtime::runner`]) over every HostedCluster in a pass
//! (see `docs/design-decisions.md`, "Hosted mode: one pass over every HostedCluster"). Each
//! HostedCluster has its own writers, whose stale-object deletion only sees the objects
//! labelled with that cluster; a HostedCluster whose writes fail does not stop the others.
//! Objects of a deleted HostedCluster or NodePool are removed by the garbage collector (they
//! are owned by it).
//!
//! With `--hosted-kubeconfig-access` ([`crate::cache::guest`]), each hosted cluster's
//! ClusterOperators and Nodes are read through its admin kubeconfig and passed as the guest
//! inputs; one that cannot be read is assessed without them (`HostedClusterUnreachable`).
//! Input objects that cannot be decoded (a HostedCluster, NodePool or cluster-api object with a
//! field of an unexpected type) become "unreadable input" health insights of the HostedCluster
//! they concern ([`update_status_assess::hosted::unreadable`]); an unreadable HostedCluster gets
//! that insight only.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::reflector::Store;
use tokio::sync::Notify;
use update_status_api::crd::{
    Assessment, ConditionStatus, ControlPlaneUpdateStatus, InsightType, UpdateInsight,
    WorkerPoolUpdateStatus, labels,
};
use update_status_api::hosted::{
    HostedCluster, Machine, MachineDeployment, MachineSet, NodePool, control_plane_namespace,
};

use crate::cache::guest::{GuestView, Guests};
use crate::cache::hosted::HostedCaches;
use crate::cache::insights::{CachedInsight, ProgressConditions};
use crate::metrics::Metrics;
use crate::reconcilers::context::Context;
use crate::runtime::existing::Cached;
use crate::runtime::runner::{RETRY, Reconcile, Requeue};
use crate::runtime::writer::{WriteError, Writer};
use update_status_assess::compose::{DesiredCluster, Existing, ExistingInsights};
use update_status_assess::control_plane::CONDITION_UPDATING;
use update_status_assess::hosted::{
    DesiredHosted, GuestInputs, HostedInputs, desired_hosted, unreadable,
};
use update_status_assess::insight::UnreadableInput;

/// Name of this reconciler (label value and field-manager suffix).
pub const NAME: &str = "hosted";

/// The writers of one HostedCluster (in its namespace).
struct ClusterWriters {
    statuses: Writer<ControlPlaneUpdateStatus>,
    pools: Writer<WorkerPoolUpdateStatus>,
    insights: Writer<UpdateInsight>,
}

impl ClusterWriters {
    /// Makes the cluster's objects `desired`, `ours` being those in the cache; returns the
    /// writes made. Every sync writes all it can: a refused object blocks no other one.
    async fn sync(&mut self, desired: &DesiredCluster, ours: &Ours) -> Result<u32, WriteError> {
        let a = self
            .statuses
            .sync(desired.control_plane.iter(), &ours.cps)
            .await;
        let b = self.pools.sync(&desired.worker_pools, &ours.pools).await;
        let c = self.insights.sync(&desired.insights, &ours.insights).await;
        let (a, b, c) = (a?, b?, c?);
        Ok(a.writes() + b.writes() + c.writes())
    }

    fn retry_in(&self) -> Requeue {
        [
            self.statuses.retry_in(),
            self.pools.retry_in(),
            self.insights.retry_in(),
        ]
        .into_iter()
        .collect()
    }
}

/// The hosted-mode reconciler.
pub struct HostedReconciler {
    client: kube::Client,
    caches: HostedCaches,
    metrics: Arc<Metrics>,
    /// By HostedCluster (namespace, name).
    writers: HashMap<(String, String), ClusterWriters>,
    /// `--hosted-kubeconfig-access`: the hosted clusters read from inside.
    guests: Option<Guests>,
}

/// HostedClusters reconciled at once in a pass (each of their writers runs its own writes
/// [`crate::runtime::writer::WRITE_CONCURRENCY`] at a time): a pass over hundreds of hosted clusters is
/// bound by request latency, not by the API server, when they go one after another.
pub const CLUSTER_CONCURRENCY: usize = 8;

/// Our objects of one hosted cluster.
#[derive(Default)]
struct Ours {
    cps: Vec<Arc<ControlPlaneUpdateStatus>>,
    pools: Vec<Arc<WorkerPoolUpdateStatus>>,
    insights: Vec<Arc<CachedInsight>>,
    /// Those of `insights` cached whole (what the core reads: health insights).
    whole_insights: Vec<Arc<UpdateInsight>>,
}

/// The caches of one pass, grouped once: our objects by hosted cluster, the inputs by
/// namespace (a pass over N hosted clusters would otherwise scan every cache N times).
#[derive(Default)]
struct PassIndex {
    ours: HashMap<(String, String), Ours>,
    node_pools: HashMap<String, Vec<Arc<NodePool>>>,
    machines: HashMap<String, Vec<Arc<Machine>>>,
    machine_sets: HashMap<String, Vec<Arc<MachineSet>>>,
    machine_deployments: HashMap<String, Vec<Arc<MachineDeployment>>>,
}

/// `(namespace, update.openshift.io/cluster)` of one of our objects.
fn cluster_key<K: Cached>(o: &K) -> Option<(String, String)> {
    Some((
        o.cached_namespace()?.to_string(),
        o.cached_label(labels::CLUSTER)?.to_string(),
    ))
}

/// The objects of `store` by namespace, each list by name: the cache's own objects, shared.
/// A cluster's are copied ([`owned_in_ns`]) only while it is assessed (the assessment reads
/// slices): copying every cluster's for the whole pass was most of the 22 MB that heaptrack
/// found avoidable in the pass's 83 MB peak heap at 1,000 hosted clusters (docs/benchmarks.md).
fn by_namespace<K: kube::Resource<DynamicType = ()> + Clone>(
    store: &Store<K>,
) -> HashMap<String, Vec<Arc<K>>> {
    let mut out: HashMap<String, Vec<Arc<K>>> = HashMap::new();
    for o in store.state() {
        let ns = o.meta().namespace.clone().unwrap_or_default();
        out.entry(ns).or_default().push(o);
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| a.meta().name.cmp(&b.meta().name));
    }
    out
}

impl PassIndex {
    fn new(c: &HostedCaches) -> Self {
        let mut ours: HashMap<(String, String), Ours> = HashMap::new();
        for o in c.control_plane_statuses.state() {
            if let Some(k) = cluster_key(&*o) {
                ours.entry(k).or_default().cps.push(o);
            }
        }
        for o in c.worker_pool_statuses.state() {
            if let Some(k) = cluster_key(&*o) {
                ours.entry(k).or_default().pools.push(o);
            }
        }
        for o in c.insights.state() {
            if let Some(k) = cluster_key(&*o) {
                let ours = ours.entry(k).or_default();
                ours.whole_insights.extend(o.whole().cloned());
                ours.insights.push(o);
            }
        }
        PassIndex {
            ours,
            node_pools: by_namespace(&c.node_pools),
            machines: by_namespace(&c.machines),
            machine_sets: by_namespace(&c.machine_sets),
            machine_deployments: by_namespace(&c.machine_deployments),
        }
    }

    fn ours(&self, ns: &str, name: &str) -> &Ours {
        static NONE: std::sync::OnceLock<Ours> = std::sync::OnceLock::new();
        self.ours
            .get(&(ns.to_string(), name.to_string()))
            .unwrap_or_else(|| NONE.get_or_init(Ours::default))
    }
}

/// A copy of the inputs of `map` in `ns` (none: empty).
fn owned_in_ns<K: Clone>(map: &HashMap<String, Vec<Arc<K>>>, ns: &str) -> Vec<K> {
    map.get(ns)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|o| (**o).clone())
        .collect()
}

/// What a pass does for one HostedCluster.
enum Work<'a> {
    /// A HostedCluster read from the cache.
    Cluster(&'a HostedCluster),
    /// A HostedCluster that cannot be decoded.
    Unreadable(&'a UnreadableInput),
}

impl HostedReconciler {
    /// Creates the reconciler (each HostedCluster's objects are written into its own
    /// namespace: the context's is not used).
    pub fn new(ctx: Context<HostedCaches>) -> Self {
        HostedReconciler {
            client: ctx.client,
            caches: ctx.caches,
            metrics: ctx.metrics,
            writers: HashMap::new(),
            guests: None,
        }
    }

    /// Reads each hosted cluster's ClusterOperators and Nodes through its admin kubeconfig
    /// (`--hosted-kubeconfig-access`); `wake`: this reconciler's (the guests' events wake it).
    pub fn with_guest_access(mut self, wake: Arc<Notify>) -> Self {
        self.guests = Some(Guests::new(self.client.clone(), wake));
        self
    }

    /// New writers for a HostedCluster of namespace `ns`.
    fn new_writers(&self, ns: &str) -> ClusterWriters {
        let (client, metrics) = (&self.client, &self.metrics);
        ClusterWriters {
            statuses: Writer::new(client.clone(), ns, NAME, metrics.clone()),
            pools: Writer::new(client.clone(), ns, NAME, metrics.clone()),
            insights: Writer::new(client.clone(), ns, NAME, metrics.clone()),
        }
    }

    /// One HostedCluster: its desired objects written with its writers `w`; when time alone
    /// changes them next.
    #[tracing::instrument(
        name = "hosted_cluster",
        skip_all,
        fields(cluster = %format_args!("{}/{}", hc.namespace(), hc.name()))
    )]
    async fn reconcile_cluster(
        &self,
        hc: &HostedCluster,
        pass: &Pass<'_>,
        w: &mut ClusterWriters,
    ) -> Result<Requeue, WriteError> {
        let (ns, name) = (hc.namespace(), hc.name());
        let view = self.guests.as_ref().map(|g| g.view(hc));
        let guest = match guest_side(view.as_ref()) {
            Ok(guest) => guest,
            // Connecting: its objects stay as they are until the hosted cluster answers.
            Err(wait) => return Ok(Requeue::After(wait + Duration::from_millis(100))),
        };
        let recheck = guest.recheck;
        let ours = pass.index.ours(ns, name);
        let (desired, node_pools) = desired_of(hc, pass, ours, guest);
        publish_metrics(&self.metrics, &format!("{ns}/{name}"), &desired.cluster);
        let writes = w.sync(&desired.cluster, ours).await?;
        if writes > 0 {
            tracing::info!(
                reconciler = NAME,
                hosted_cluster = %format!("{ns}/{name}"),
                writes,
                node_pools,
                insights = desired.cluster.insights.len(),
                "hosted cluster updated"
            );
        }
        let requeue = desired
            .requeue_after
            .and_then(|d| Duration::try_from(d).ok())
            .map(|d| d + Duration::from_millis(100));
        let recheck = recheck.map(|d| d + Duration::from_millis(100));
        Ok(Requeue::from(requeue).min(recheck.into()).min(w.retry_in()))
    }

    /// A HostedCluster that cannot be read (`u`): only the insights of its unreadable inputs
    /// (its own among them); its status objects go (nothing about its update is known).
    async fn reconcile_unreadable(
        &self,
        u: &UnreadableInput,
        pass: &Pass<'_>,
        w: &mut ClusterWriters,
    ) -> Result<Requeue, WriteError> {
        let (ns, name) = (u.place.namespace.as_deref().unwrap_or_default(), &u.name);
        let ours = pass.index.ours(ns, name);
        let desired = unreadable::desired_unreadable(
            u,
            pass.unreadable_inputs,
            &ExistingInsights::new(&ours.whole_insights),
            pass.now,
        );
        publish_metrics(&self.metrics, &format!("{ns}/{name}"), &desired.cluster);
        if w.sync(&desired.cluster, ours).await? > 0 {
            tracing::info!(
                reconciler = NAME,
                hosted_cluster = %format!("{ns}/{name}"),
                "hosted cluster cannot be read: only its unreadable-input insight is written"
            );
        }
        Ok(w.retry_in())
    }
}

/// What every HostedCluster of a pass reads: the caches grouped once, the unreadable inputs,
/// the pass's instant.
struct Pass<'a> {
    index: &'a PassIndex,
    unreadable_inputs: &'a [UnreadableInput],
    now: Timestamp,
}

/// What a HostedCluster's assessment reads of the hosted cluster itself (its guest view).
struct GuestSide<'v> {
    guest: Option<GuestInputs<'v>>,
    unreachable: Option<&'v str>,
    /// When to look again (a failing guest watch's grace ends then).
    recheck: Option<Duration>,
    unreadable: &'v [UnreadableInput],
}

/// The guest side of a HostedCluster from its guest view (`None`: no guest access);
/// `Err(wait)`: still connecting, look again within `wait`.
fn guest_side(view: Option<&GuestView>) -> Result<GuestSide<'_>, Duration> {
    Ok(match view {
        None => GuestSide {
            guest: None,
            unreachable: None,
            recheck: None,
            unreadable: &[],
        },
        Some(GuestView::Waiting(d)) => return Err(*d),
        Some(GuestView::Ready {
            cluster_operators,
            nodes,
            recheck,
            unreadable,
            reported,
        }) => GuestSide {
            guest: Some(GuestInputs {
                cluster_operators,
                nodes,
                reported: *reported,
            }),
            unreachable: None,
            recheck: *recheck,
            unreadable: &unreadable[..],
        },
        Some(GuestView::Unreachable(why)) => GuestSide {
            guest: None,
            unreachable: Some(why.as_str()),
            recheck: None,
            unreadable: &[],
        },
    })
}

/// What `hc` wants written (`ours`: its objects in the caches), with the insights of its
/// unreadable inputs and its guest's; and how many NodePools it has.
fn desired_of(
    hc: &HostedCluster,
    pass: &Pass<'_>,
    ours: &Ours,
    guest: GuestSide<'_>,
) -> (DesiredHosted, usize) {
    let (ns, name, index, now) = (hc.namespace(), hc.name(), pass.index, pass.now);
    let node_pools: Vec<NodePool> = index
        .node_pools
        .get(ns)
        .into_iter()
        .flatten()
        .filter(|np| np.spec.cluster_name == name)
        .map(|np| (**np).clone())
        .collect();
    let cp_ns = control_plane_namespace(ns, name);
    let machines = owned_in_ns(&index.machines, &cp_ns);
    let machine_sets = owned_in_ns(&index.machine_sets, &cp_ns);
    let machine_deployments = owned_in_ns(&index.machine_deployments, &cp_ns);
    let inputs = HostedInputs {
        hosted_cluster: hc,
        node_pools: &node_pools,
        machines: &machines,
        machine_sets: &machine_sets,
        machine_deployments: &machine_deployments,
        guest: guest.guest,
        guest_unreachable: guest.unreachable,
    };
    let projected = ProgressConditions::new(&ours.insights);
    let existing = Existing {
        control_plane: ours
            .cps
            .iter()
            .find(|o| o.name_any() == name)
            .map(|o| o.as_ref()),
        worker_pools: &ours.pools,
        insights: ExistingInsights::new(&ours.whole_insights).with_progress(&projected),
    };
    let mut desired = desired_hosted(&inputs, &existing, now);
    let insights = &mut desired.cluster.insights;
    insights.extend(unreadable::unreadable_insights(
        hc,
        pass.unreadable_inputs,
        &existing.insights,
        now,
    ));
    insights.extend(unreadable::guest_unreadable_insights(
        hc,
        guest.unreadable,
        &existing.insights,
        now,
    ));
    (desired, node_pools.len())
}

/// Publishes one HostedCluster's control-plane and NodePool series (`hosted_cluster`:
/// `<namespace>/<name>`) from its desired objects, as the standalone reconcilers do from theirs:
/// completion, the assessment state set, whether it is updating (its `Updating` condition), and
/// each pool's completion and nodes per assessment (its node progress insights).
fn publish_metrics(metrics: &Metrics, hosted_cluster: &str, desired: &DesiredCluster) {
    let cp = desired.control_plane.as_ref().map(|d| &d.status);
    let updating = cp.is_some_and(|cp| {
        cp.conditions
            .iter()
            .any(|c| c.type_ == CONDITION_UPDATING && c.status == ConditionStatus::True)
    });
    metrics
        .update
        .set_hosted_control_plane(hosted_cluster, cp, updating);
    let mut by_pool: HashMap<&str, BTreeMap<Assessment, u32>> = HashMap::new();
    for i in &desired.insights {
        let s = &i.status;
        if let (InsightType::Progress, Some(pool), Some(p)) =
            (s.type_, s.scope.pool.as_deref(), s.progress.as_ref())
            && matches!(s.resource.kind.as_str(), "Node" | "Machine")
        {
            *by_pool
                .entry(pool)
                .or_default()
                .entry(p.assessment)
                .or_default() += 1;
        }
    }
    metrics.update.set_hosted_pools(
        hosted_cluster,
        desired.worker_pools.iter().map(|d| {
            let by = by_pool.remove(d.name.as_str()).unwrap_or_default();
            (d.name.as_str(), &d.status, by)
        }),
    );
}

/// What one piece of a pass gives back: its cluster, whether it was an unreadable
/// HostedCluster's, its writers and its result.
type Done = (
    (String, String),
    bool,
    ClusterWriters,
    Result<Requeue, WriteError>,
);

/// One piece of a pass with its cluster's writers; gives them back with the result.
async fn run_work(
    this: &HostedReconciler,
    key: (String, String),
    item: Work<'_>,
    mut w: ClusterWriters,
    pass: &Pass<'_>,
) -> Done {
    let (r, unreadable) = match item {
        Work::Cluster(hc) => (this.reconcile_cluster(hc, pass, &mut w).await, false),
        Work::Unreadable(u) => (this.reconcile_unreadable(u, pass, &mut w).await, true),
    };
    (key, unreadable, w, r)
}

impl Reconcile for HostedReconciler {
    const NAME: &'static str = NAME;
    /// One pass over every HostedCluster, [`CLUSTER_CONCURRENCY`]
    /// at a time, each with its own writers.
    async fn reconcile(&mut self, now: Timestamp) -> Result<Requeue, WriteError> {
        let mut hcs = self.caches.hosted_clusters.state();
        hcs.sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
        let unreadable_inputs = self.caches.unreadable.all();
        let bad_clusters: Vec<&UnreadableInput> = unreadable_inputs
            .iter()
            .filter(|u| u.kind == "HostedCluster")
            .collect();
        // Writers of HostedClusters gone: their objects go with them (garbage collection).
        self.writers.retain(|(ns, name), _| {
            hcs.iter().any(|h| h.namespace() == ns && h.name() == name)
                || bad_clusters
                    .iter()
                    .any(|u| u.place.namespace.as_deref() == Some(ns.as_str()) && u.name == *name)
        });
        if let Some(g) = self.guests.as_mut() {
            g.sync(hcs.iter().map(|h| h.as_ref()));
        }
        let index = PassIndex::new(&self.caches);
        let pass = Pass {
            index: &index,
            unreadable_inputs: &unreadable_inputs,
            now,
        };
        let work = self.work(&hcs, bad_clusters);
        let done = run_all(&*self, work, &pass).await;
        self.settle(done)
    }
}

impl HostedReconciler {
    /// The pass's pieces of work, each with its cluster's writers (taken from `self.writers`:
    /// those left are of clusters not reconciled this pass, being deleted).
    fn work<'a>(
        &mut self,
        hcs: &'a [Arc<HostedCluster>],
        bad_clusters: Vec<&'a UnreadableInput>,
    ) -> Vec<((String, String), Work<'a>, ClusterWriters)> {
        let mut work = Vec::new();
        for u in bad_clusters {
            let key = (
                u.place.namespace.clone().unwrap_or_default(),
                u.name.clone(),
            );
            let w = self
                .writers
                .remove(&key)
                .unwrap_or_else(|| self.new_writers(&key.0));
            work.push((key, Work::Unreadable(u), w));
        }
        for hc in hcs
            .iter()
            .filter(|h| h.metadata.deletion_timestamp.is_none())
        {
            let key = (hc.namespace().to_string(), hc.name().to_string());
            let w = self
                .writers
                .remove(&key)
                .unwrap_or_else(|| self.new_writers(&key.0));
            work.push((key, Work::Cluster(hc), w));
        }
        work
    }

    /// Takes the writers back, drops the series of HostedClusters gone, and makes one result of
    /// the pieces' (a failed cluster is retried after [`RETRY`], the others go on).
    fn settle(&mut self, done: Vec<Done>) -> Result<Requeue, WriteError> {
        // The series of HostedClusters gone go with them.
        let live: std::collections::BTreeSet<String> = done
            .iter()
            .map(|(key, ..)| format!("{}/{}", key.0, key.1))
            .chain(self.writers.keys().map(|k| format!("{}/{}", k.0, k.1)))
            .collect();
        self.metrics.update.retain_hosted(&live);
        let mut next = Requeue::Never;
        let mut first_error = None;
        for (key, unreadable, w, r) in done {
            self.writers.insert(key.clone(), w);
            match r {
                Ok(n) => next = next.min(n),
                Err(e) => {
                    let hosted_cluster = format!("{}/{}", key.0, key.1);
                    if unreadable {
                        tracing::warn!(reconciler = NAME, %hosted_cluster, error = %e, "writing an unreadable hosted cluster's insight failed; the others go on");
                    } else {
                        tracing::warn!(reconciler = NAME, %hosted_cluster, error = %e, "writing a hosted cluster's objects failed; the others go on");
                    }
                    next = next.min(Requeue::After(RETRY));
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            // The loop counts the pass as failed and retries after RETRY.
            Some(e) => Err(e),
            None => Ok(next),
        }
    }
}

/// Runs `work`, [`CLUSTER_CONCURRENCY`] at once, each cluster's future made when its turn
/// comes: made first, the 1,000 futures of a 1,000-cluster pass took 7 MB of heap at once. (A
/// loop, not `stream::iter(..).map(..)`: that closure over `Work<'_>` makes the pass future not
/// `Send`.)
async fn run_all(
    this: &HostedReconciler,
    work: Vec<((String, String), Work<'_>, ClusterWriters)>,
    pass: &Pass<'_>,
) -> Vec<Done> {
    let mut work = work.into_iter();
    let mut running = futures::stream::FuturesUnordered::new();
    let mut done = Vec::with_capacity(work.len());
    loop {
        while running.len() < CLUSTER_CONCURRENCY {
            let Some((key, item, w)) = work.next() else {
                break;
            };
            running.push(run_work(this, key, item, w, pass));
        }
        let Some(r) = running.next().await else {
            break;
        };
        done.push(r);
    }
    done
}
