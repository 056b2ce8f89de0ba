//! The hub session: a client with reflectors of our copies and hub writers, and the sync loop
//! that runs passes, backs off while the hub fails and starts a new session when the
//! credentials are rejected.

use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use update_status_assess::redact::redact_urls_in;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::ListParams;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use update_status_api::acm::ManagedClusterAddOn;
use update_status_api::crd::{ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus};

use super::addon::{addon, owner_of};
use super::agent_health::{self, AgentHealth};
use super::credentials::{Credentials, Material};
use super::errors::{hint, watch_reason};
use super::heartbeat;
use super::{
    DEBOUNCE, HubConfig, HubCopies, HubError, LocalObjects, MAX_BACKOFF, MIN_BACKOFF, NAME,
    PASS_TIMEOUT, RESYNC, SessionSettings, desired_copies, hub_selector_for, validate_cluster_name,
};
use crate::cache::watch::slim;
use crate::metrics::Metrics;
use crate::runtime::writer::{PENDING_TTL, SyncStats, WriteError, Writer};

/// Wait before attempt `failures + 1`: [`MIN_BACKOFF`] doubled per consecutive failure up to
/// [`MAX_BACKOFF`], times `1 + jitter` (`jitter` in [-0.1, 0.1]), never above the cap.
pub fn backoff(failures: u32, jitter: f64) -> Duration {
    crate::runtime::clock::backoff(MIN_BACKOFF, MAX_BACKOFF, failures, jitter)
}

/// What the hub watches tell the sync loop (shared by successive sessions).
#[derive(Default)]
struct Signals {
    /// A hub watch (re)listed: the hub answers, worth an attempt even while backing off.
    listed: Notify,
    /// A hub watch failed since the loop last looked: the next attempt counts as failed if the
    /// watches have not listed, and probes the hub if they have.
    unhealthy: AtomicBool,
    /// A hub call was answered `401`: read the credentials again before the next attempt.
    reload: AtomicBool,
    /// New credentials were published: switch to them before the next attempt.
    rotated: AtomicBool,
    /// Per watched kind: the reason of the outage reported (a warning per outage and per
    /// change of reason, across sessions).
    reported: Mutex<[Option<&'static str>; 3]>,
}

impl Signals {
    /// Records the reason a watch fails; `true` if it was not reported yet.
    fn report(&self, slot: usize, reason: &'static str) -> bool {
        let mut r = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        let new = r.get(slot).is_some_and(|old| *old != Some(reason));
        if let Some(old) = r.get_mut(slot) {
            *old = Some(reason);
        }
        new
    }

    /// A watch fails because the namespace or the CRDs do not exist on the hub.
    fn not_found(&self) -> bool {
        let r = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        r.contains(&Some("not-found"))
    }

    /// Records that a watch works; `true` if it was failing.
    fn recovered(&self, slot: usize) -> bool {
        let mut r = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        r.get_mut(slot).and_then(Option::take).is_some()
    }
}

/// One hub client with its reflectors and writers; dropping it stops the reflectors.
struct Session {
    /// Refuses every write once the leader-election Lease is lost ([`SessionSettings::gate`]).
    client: kube::Client,
    /// Of the credentials the client was made from.
    fingerprint: [u8; 32],
    /// The hub namespace's ManagedClusterAddOn of our add-on, owner of the copies (`None`: none,
    /// not an ACM hub, or not readable), and when it was read.
    addon: Option<(Option<Arc<ManagedClusterAddOn>>, Instant)>,
    namespace: String,
    control_planes: Writer<ControlPlaneUpdateStatus>,
    worker_pools: Writer<WorkerPoolUpdateStatus>,
    insights: Writer<UpdateInsight>,
    hub_control_planes: Store<ControlPlaneUpdateStatus>,
    hub_worker_pools: Store<WorkerPoolUpdateStatus>,
    hub_insights: Store<UpdateInsight>,
    listed: Vec<Arc<AtomicBool>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// The reflectors' context.
#[derive(Clone)]
struct WatchContext {
    selector: String,
    namespace: String,
    wake: Arc<Notify>,
    signals: Arc<Signals>,
    metrics: Arc<Metrics>,
    /// The `hosted_cluster` label of the hub metrics (`""` in standalone mode).
    metrics_label: String,
    /// The session is retired: its failures no longer count in the metrics (a new session of
    /// the same hosted cluster may report under the same label).
    retired: Arc<AtomicBool>,
}

impl Session {
    /// A session on `client`, whose writes `gate` stops once the Lease is lost (the local
    /// writers' gate: issue #38 item 10).
    ///
    /// One call (`GET /version`) opens the connection before the three watches start: started
    /// together on a new client, each would open a connection of its own (hyper learns that the
    /// server speaks HTTP/2 from the first TLS handshake), two of them closed again at once: two
    /// wasted TLS handshakes on the hub, and two wasted tunnels through a proxy. Its failure is
    /// the watches' to report.
    async fn start(
        client: kube::Client,
        fingerprint: [u8; 32],
        ctx: &WatchContext,
        gate: &crate::runtime::leader::LeaseGate,
    ) -> Self {
        let client = gate.guard(&client);
        if let Err(e) = client.apiserver_version().await {
            tracing::debug!(namespace = %ctx.namespace, error = %redact_urls_in(&e.to_string()), "hub not answering yet; the watches retry");
        }
        let ns = ctx.namespace.as_str();
        let mut listed = Vec::new();
        let mut tasks = Vec::new();
        let (hub_control_planes, l, t) = spawn_watch(
            Api::namespaced(client.clone(), ns),
            ctx,
            0,
            "ControlPlaneUpdateStatus",
        );
        listed.push(l);
        tasks.push(t);
        let (hub_worker_pools, l, t) = spawn_watch(
            Api::namespaced(client.clone(), ns),
            ctx,
            1,
            "WorkerPoolUpdateStatus",
        );
        listed.push(l);
        tasks.push(t);
        let (hub_insights, l, t) =
            spawn_watch(Api::namespaced(client.clone(), ns), ctx, 2, "UpdateInsight");
        listed.push(l);
        tasks.push(t);
        let metrics = ctx.metrics.clone();
        Session {
            control_planes: Writer::for_hub(client.clone(), ns, NAME, metrics.clone()),
            worker_pools: Writer::for_hub(client.clone(), ns, NAME, metrics.clone()),
            insights: Writer::for_hub(client.clone(), ns, NAME, metrics),
            client,
            fingerprint,
            addon: None,
            namespace: ns.to_string(),
            hub_control_planes,
            hub_worker_pools,
            hub_insights,
            listed,
            tasks,
        }
    }

    /// Every hub reflector has listed once (before that, an empty cache would read as "no
    /// copies yet" and cost a write per object).
    fn listed(&self) -> bool {
        self.listed.iter().all(|l| l.load(Ordering::SeqCst))
    }

    fn has_pending(&self) -> bool {
        self.control_planes.has_pending()
            || self.worker_pools.has_pending()
            || self.insights.has_pending()
    }

    /// One cheap call that tells whether the hub answers and lets us read our namespace.
    async fn probe(&self, selector: &str) -> Result<(), HubError> {
        let api: Api<ControlPlaneUpdateStatus> =
            Api::namespaced(self.client.clone(), &self.namespace);
        api.list_metadata(&ListParams::default().labels(selector).limit(1))
            .await
            .map(drop)
            .map_err(|e| HubError::Api {
                verb: "list controlplaneupdatestatuses",
                namespace: self.namespace.clone(),
                source: Box::new(e),
            })
    }

    /// The owner of the copies: the ManagedClusterAddOn of our add-on in the hub namespace,
    /// read once per session and again after [`RESYNC`] (a re-enabled add-on is a new object,
    /// with a new uid).
    async fn owner(&mut self) -> Result<Option<OwnerReference>, HubError> {
        if let Some((mca, at)) = &self.addon
            && at.elapsed() < RESYNC
        {
            return Ok(mca.as_deref().and_then(owner_of));
        }
        let mca = addon(&self.client, &self.namespace).await?.map(Arc::new);
        self.addon = Some((mca.clone(), Instant::now()));
        Ok(mca.as_deref().and_then(owner_of))
    }

    /// When the hub copy of the control plane, `name`, was last stamped, as the hub shows it.
    fn last_reported(&self, name: &str) -> Option<jiff::Timestamp> {
        self.hub_control_planes
            .state()
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(name))?
            .metadata
            .annotations
            .as_ref()?
            .get(heartbeat::LAST_REPORTED_ANNOTATION)
            .and_then(|v| heartbeat::parse(v))
    }

    /// Makes the hub copies match `copies`; stops at the first kind that fails, unless the hub
    /// only refused some of its objects (a full quota, an admission policy): then the other
    /// kinds are synced too and the first refusal is returned.
    async fn sync(&mut self, copies: &HubCopies) -> Result<SyncStats, HubError> {
        let mut refused = None;
        let a = self
            .control_planes
            .sync(&copies.control_planes, &self.hub_control_planes.state())
            .await;
        let a = refused_only(a, &mut refused)?;
        let b = self
            .worker_pools
            .sync(&copies.worker_pools, &self.hub_worker_pools.state())
            .await;
        let b = refused_only(b, &mut refused)?;
        let c = self
            .insights
            .sync(&copies.insights, &self.hub_insights.state())
            .await;
        let c = refused_only(c, &mut refused)?;
        match refused {
            Some(e) => Err(e.into()),
            None => Ok(SyncStats {
                meta_writes: a.meta_writes + b.meta_writes + c.meta_writes,
                status_writes: a.status_writes + b.status_writes + c.status_writes,
                deletes: a.deletes + b.deletes + c.deletes,
                unchanged: a.unchanged + b.unchanged + c.unchanged,
            }),
        }
    }
}

/// A kind's sync result, where refusals of single objects ([`WriteError::Refused`]) do not stop
/// the pass: the first is kept in `refused` and what the sync did is returned.
fn refused_only(
    r: Result<SyncStats, WriteError>,
    refused: &mut Option<WriteError>,
) -> Result<SyncStats, HubError> {
    match r {
        Err(WriteError::Refused {
            kind,
            namespace,
            refused: n,
            stats,
            first,
        }) => {
            refused.get_or_insert(WriteError::Refused {
                kind,
                namespace,
                refused: n,
                stats,
                first,
            });
            Ok(stats)
        }
        other => other.map_err(HubError::from),
    }
}

/// A reflector of our copies of kind `K` in the hub namespace: wakes the sync on every event,
/// says when it has listed, reports its errors (a warning per outage, a metric per error).
/// `slot` is the kind's index in [`Signals::reported`].
fn spawn_watch<K>(
    api: Api<K>,
    ctx: &WatchContext,
    slot: usize,
    kind: &'static str,
) -> (Store<K>, Arc<AtomicBool>, JoinHandle<()>)
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store();
    let listed = Arc::new(AtomicBool::new(false));
    let stream = watcher(api, watcher::Config::default().labels(&ctx.selector))
        .default_backoff()
        .modify(slim::<K>)
        .reflect(writer);
    let ctx = ctx.clone();
    let done = listed.clone();
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(ev) = stream.next().await {
            match ev {
                // Yielded before every (re)list attempt: proves nothing yet.
                Ok(watcher::Event::Init) => {}
                Ok(ev) => {
                    if ctx.signals.recovered(slot) {
                        tracing::info!(kind, namespace = %ctx.namespace, "hub watch recovered");
                    }
                    if matches!(ev, watcher::Event::InitDone) {
                        done.store(true, Ordering::SeqCst);
                        ctx.signals.listed.notify_one();
                    }
                    ctx.wake.notify_one();
                }
                Err(e) => {
                    let Some(reason) = watch_reason(&e) else {
                        continue;
                    };
                    if !ctx.retired.load(Ordering::SeqCst) {
                        ctx.metrics.hub.sync_failed(&ctx.metrics_label, reason);
                    }
                    ctx.signals.unhealthy.store(true, Ordering::SeqCst);
                    if reason == "unauthorized" {
                        ctx.signals.reload.store(true, Ordering::SeqCst);
                    }
                    if ctx.signals.report(slot, reason) {
                        tracing::warn!(
                            kind,
                            namespace = %ctx.namespace,
                            reason,
                            error = %redact_urls_in(&e.to_string()),
                            hint = %hint(reason, &ctx.namespace),
                            "hub watch failing; retrying with back-off"
                        );
                    }
                    ctx.wake.notify_one();
                }
            }
        }
    });
    (reader, listed, task)
}

/// The hub sync task (see the module documentation).
pub struct HubSync {
    /// The managed cluster's name: the hub namespace of the copies.
    cluster_name: String,
    include_progress: bool,
    creds: Credentials,
    local: LocalObjects,
    wake: Arc<Notify>,
    metrics: Arc<Metrics>,
    /// The `hosted_cluster` label of the hub metrics (`""` in standalone mode).
    metrics_label: String,
    /// Set when the hosted cluster is gone: copy nothing (its copies are deleted), and end
    /// after the first pass that succeeds.
    retired: Arc<AtomicBool>,
    /// Hosted mode: the value of `update.openshift.io/hosted-cluster` of this session's copies
    /// (the only ones it sees and deletes).
    source: Option<String>,
    /// The Lease gate of the hub writes and the heartbeat interval.
    settings: SessionSettings,
    /// Standalone mode on an ACM hub: the agent's health, reported on its ManagedClusterAddOn.
    health: Option<AgentHealth>,
}

/// What a session keeps between passes beyond its hub client.
#[derive(Default)]
struct Reported {
    /// The last heartbeat written (the hub's copy may not show it yet).
    stamped: Option<jiff::Timestamp>,
    /// The last pass had a control plane's copy to stamp (else no heartbeat is due).
    stampable: bool,
    /// The agent's health condition as last written.
    health: agent_health::Reported,
}

impl HubSync {
    /// Checks the configuration and reads the hub kubeconfig (no call to the hub): a wrong
    /// name or an unreadable kubeconfig is a configuration error, reported before anything
    /// starts. The kubeconfig is followed from then on (see [`Credentials::from_file`]). `wake`
    /// is notified when our local objects change ([`crate::app::standalone::Wakers`]).
    pub async fn new(
        config: HubConfig,
        local: LocalObjects,
        wake: Arc<Notify>,
        metrics: Arc<Metrics>,
    ) -> Result<Self, HubError> {
        validate_cluster_name(&config.cluster_name)?;
        let creds = Credentials::from_file(&config.kubeconfig)?;
        Ok(Self::with_credentials(
            config.cluster_name,
            config.include_progress,
            creds,
            local,
            wake,
            metrics,
        ))
    }

    /// A session reporting as managed cluster `cluster_name` (a valid name:
    /// [`validate_cluster_name`]) with `creds` (hosted mode: a kubeconfig file shared by every
    /// session, or each hosted cluster's add-on Secret).
    pub fn with_credentials(
        cluster_name: String,
        include_progress: bool,
        creds: Credentials,
        local: LocalObjects,
        wake: Arc<Notify>,
        metrics: Arc<Metrics>,
    ) -> Self {
        HubSync {
            cluster_name,
            include_progress,
            creds,
            local,
            wake,
            metrics,
            metrics_label: String::new(),
            retired: Arc::default(),
            source: None,
            settings: SessionSettings::default(),
            health: None,
        }
    }

    /// The Lease gate of its writes and its heartbeat interval.
    pub fn with_settings(mut self, settings: SessionSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Reports the agent's health on the hub namespace's ManagedClusterAddOn (standalone mode).
    pub fn with_agent_health(mut self, health: AgentHealth) -> Self {
        self.health = Some(health);
        self
    }

    /// Hosted mode: the hub metrics of this session carry `hosted_cluster=<label>`, its copies
    /// `update.openshift.io/hosted-cluster=<source>` (it sees and deletes only those), and
    /// `retired` ends it (see [`HubSync::run`]).
    pub fn for_hosted_cluster(
        mut self,
        label: String,
        source: String,
        retired: Arc<AtomicBool>,
    ) -> Self {
        self.metrics_label = label;
        self.source = Some(source);
        self.retired = retired;
        self
    }

    fn desired(&self) -> HubCopies {
        if self.retired.load(Ordering::SeqCst) {
            return HubCopies::default();
        }
        let l = &self.local;
        let mut copies = desired_copies(
            &self.cluster_name,
            self.include_progress,
            &l.select(&l.control_plane_statuses),
            &l.select(&l.worker_pool_statuses),
            &crate::cache::insights::wholes(&l.select(&l.insights)),
        );
        if let Some(source) = &self.source {
            copies.set_source(source);
        }
        copies
    }

    /// Runs until `shutdown` changes, or, once retired, until a pass has deleted every copy.
    /// Never fails: hub errors are logged, counted and retried.
    #[tracing::instrument(name = "hub_sync", skip_all, fields(cluster = %self.cluster_name))]
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        let ns = self.cluster_name.clone();
        let selector = hub_selector_for(&ns, self.source.as_deref());
        let signals = Arc::new(Signals::default());
        let ctx = WatchContext {
            selector: selector.clone(),
            namespace: ns.clone(),
            wake: self.wake.clone(),
            signals: signals.clone(),
            metrics: self.metrics.clone(),
            metrics_label: self.metrics_label.clone(),
            retired: self.retired.clone(),
        };
        tracing::info!(
            namespace = %ns,
            credentials = %self.creds.origin(),
            include_progress = self.include_progress,
            heartbeat_interval = ?self.settings.heartbeat,
            agent_health = self.health.is_some(),
            "hub sync on: reporting to the hub"
        );
        let mut creds = self.creds.clone();
        let mut outage = Outage::default();
        let mut reported = Reported::default();
        let mut health = self.health.clone();
        let Some(mut session) = self
            .first_session(&mut creds, &ctx, &mut outage, &mut shutdown)
            .await
        else {
            return;
        };
        loop {
            let heartbeat_due = if reported.stampable {
                heartbeat::due_in(
                    reported.stamped.max(session.last_reported(&ns)),
                    self.settings.heartbeat,
                    jiff::Timestamp::now(),
                )
            } else {
                Duration::MAX
            };
            if !self
                .pause(
                    &session,
                    &signals,
                    &mut creds,
                    Pause {
                        failures: outage.failures,
                        heartbeat_due,
                        health: health.as_mut(),
                    },
                    &mut shutdown,
                )
                .await
            {
                return;
            }
            if signals.reload.swap(false, Ordering::SeqCst) {
                // A `401`: the files may have changed without the watch seeing it.
                creds.reread().await;
            }
            if signals.rotated.swap(false, Ordering::SeqCst)
                && let Some(m) = creds.current()
                && m.fingerprint != session.fingerprint
            {
                match m.client(creds.origin()).await {
                    Ok(client) => {
                        tracing::info!(namespace = %ns, credentials = %creds.origin(), "new hub credentials: switching to them (a new session; its watches list before the next pass)");
                        self.metrics.hub.credentials_reloaded(&self.metrics_label);
                        // The old reflectors stop with the old session.
                        session =
                            Session::start(client, m.fingerprint, &ctx, &self.settings.gate).await;
                    }
                    Err(e) => {
                        self.failed(&e, &mut outage);
                        continue;
                    }
                }
            }
            if self.retired.load(Ordering::SeqCst) && signals.not_found() {
                tracing::info!(namespace = %ns, "hosted cluster gone: its hub namespace or our CRDs do not exist there, so no copy is left; hub session ends");
                return;
            }
            if !session.listed() {
                // The reflectors report their own errors and their first list wakes us; while
                // they fail, back off (a reload, for one, waits for it).
                if signals.unhealthy.swap(false, Ordering::SeqCst) {
                    outage.failures = outage.failures.saturating_add(1);
                }
                continue;
            }
            let watch_failed = signals.unhealthy.swap(false, Ordering::SeqCst);
            let probe = outage.failures > 0 || watch_failed;
            let retired = self.retired.load(Ordering::SeqCst);
            let copies = self.desired();
            let Some(result) = attempt(&mut session, &selector, probe, copies, &mut shutdown).await
            else {
                return;
            };
            match result {
                Ok((stats, _)) if retired => {
                    tracing::info!(namespace = %ns, deletes = stats.deletes, "hosted cluster gone: its hub copies are deleted, hub session ends");
                    return;
                }
                Ok((stats, copies)) => {
                    match self.after_pass(&mut session, &copies, &mut reported).await {
                        Ok(()) => self.succeeded(&stats, &copies, &mut outage),
                        Err(e) => self.failed(&e, &mut outage),
                    }
                }
                Err(e) => {
                    self.failed(&e, &mut outage);
                    if e.reason() == "unauthorized" {
                        signals.reload.store(true, Ordering::SeqCst);
                    }
                }
            }
        }
    }

    /// The first session, once there are credentials that make a client (hosted mode: the
    /// add-on Secret may not exist yet); `None` when `shutdown` changed meanwhile.
    async fn first_session(
        &self,
        creds: &mut Credentials,
        ctx: &WatchContext,
        outage: &mut Outage,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Option<Session> {
        loop {
            let current: Option<Arc<Material>> = creds.current();
            let error = match current {
                Some(m) => match m.client(creds.origin()).await {
                    Ok(client) => {
                        return Some(
                            Session::start(client, m.fingerprint, ctx, &self.settings.gate).await,
                        );
                    }
                    Err(e) => e,
                },
                None => HubError::NoCredentials {
                    cluster: self.cluster_name.clone(),
                    hint: format!("waiting for {}", creds.origin()),
                },
            };
            self.failed(&error, outage);
            tokio::select! {
                _ = creds.changed() => {}
                _ = shutdown.changed() => return None,
            }
        }
    }

    /// Waits for a reason to attempt a pass (our objects or the hub's copies changed, a hub
    /// watch listed, the back-off or the resync period is over, the heartbeat is due, the
    /// agent's health changed), then [`DEBOUNCE`]; `false` when `shutdown` changed meanwhile.
    async fn pause(
        &self,
        session: &Session,
        signals: &Signals,
        creds: &mut Credentials,
        p: Pause<'_>,
        shutdown: &mut watch::Receiver<bool>,
    ) -> bool {
        let failures = p.failures;
        let wait = if failures > 0 {
            backoff(failures, crate::runtime::clock::jitter())
        } else if session.has_pending() {
            // Re-check once our writes are no longer trusted over the cache.
            (PENDING_TTL + Duration::from_secs(1)).min(p.heartbeat_due)
        } else {
            RESYNC.min(p.heartbeat_due)
        };
        let health = async {
            match p.health {
                Some(h) => h.changed().await,
                None => std::future::pending().await,
            }
        };
        let timer = tokio::select! {
            _ = self.wake.notified(), if failures == 0 => false,
            _ = health, if failures == 0 => false,
            _ = signals.listed.notified() => false,
            _ = creds.changed() => {
                signals.rotated.store(true, Ordering::SeqCst);
                false
            }
            _ = tokio::time::sleep(wait) => true,
            _ = shutdown.changed() => return false,
        };
        // A burst of changes is collected into one pass; a timer (back-off, resync, heartbeat)
        // is not a burst.
        if !timer {
            tokio::select! {
                _ = tokio::time::sleep(DEBOUNCE) => {}
                _ = shutdown.changed() => return false,
            }
        }
        true
    }

    /// After a pass that wrote the copies: the heartbeat when it is due (a failure fails the
    /// pass), then the agent's health on the ManagedClusterAddOn when it changed (a failure is
    /// warned about and retried at the next pass: the hub takes copies but not the condition,
    /// e.g. a hub ClusterRole from an older version without `managedclusteraddons/status`).
    async fn after_pass(
        &self,
        session: &mut Session,
        copies: &HubCopies,
        reported: &mut Reported,
    ) -> Result<(), HubError> {
        let now = jiff::Timestamp::now();
        reported.stampable = !copies.control_planes.is_empty();
        // Only a copy that exists after this pass is stamped (a patch never creates one).
        if let Some(cp) = copies.control_planes.first() {
            let last = reported.stamped.max(session.last_reported(&cp.name));
            if heartbeat::due_in(last, self.settings.heartbeat, now).is_zero() {
                heartbeat::stamp(&session.client, &session.namespace, &cp.name, now).await?;
                self.metrics
                    .hub
                    .write("ControlPlaneUpdateStatus", "heartbeat");
                reported.stamped = Some(now);
            }
        }
        let Some(health) = &self.health else {
            return Ok(());
        };
        let Some((Some(mca), read_at)) = session.addon.clone() else {
            return Ok(()); // not an ACM hub, or no add-on: nowhere to report
        };
        let verdict = health.verdict(&self.local);
        reported
            .health
            .report_if_changed(
                &session.client,
                &session.namespace,
                (&mca, read_at),
                verdict,
                &self.metrics,
            )
            .await;
        Ok(())
    }

    /// Records a pass that succeeded: the metric, the end of an outage, what was written.
    fn succeeded(&self, stats: &SyncStats, copies: &HubCopies, outage: &mut Outage) {
        let ns = &self.cluster_name;
        self.metrics.hub.sync_succeeded(
            &self.metrics_label,
            jiff::Timestamp::now().as_millisecond() as f64 / 1000.0,
        );
        if outage.failures > 0 {
            tracing::info!(namespace = %ns, failed_attempts = outage.failures, "hub sync recovered");
        }
        *outage = Outage::default();
        if stats.writes() > 0 {
            tracing::info!(
                namespace = %ns,
                writes = stats.writes(),
                deletes = stats.deletes,
                copies = copies.control_planes.len() + copies.worker_pools.len() + copies.insights.len(),
                "hub copies updated"
            );
        }
    }

    /// Counts a failed attempt; warns when an outage starts or its reason changes.
    fn failed(&self, e: &HubError, outage: &mut Outage) {
        outage.failures = outage.failures.saturating_add(1);
        let reason = e.reason();
        if !self.retired.load(Ordering::SeqCst) {
            self.metrics.hub.sync_failed(&self.metrics_label, reason);
        }
        let ns = &self.cluster_name;
        if outage.reported != Some(reason) {
            tracing::warn!(
                namespace = %ns,
                reason,
                error = %redact_urls_in(&e.to_string()),
                hint = %hint(reason, ns),
                "hub sync failed; retrying with back-off (local status objects are not affected)"
            );
            outage.reported = Some(reason);
        } else {
            tracing::debug!(namespace = %ns, reason, error = %redact_urls_in(&e.to_string()), failures = outage.failures, "hub sync still failing");
        }
    }
}

/// What a pause waits for besides the wake-ups.
struct Pause<'a> {
    /// Consecutive failed attempts (back-off).
    failures: u32,
    /// Time until the heartbeat is due.
    heartbeat_due: Duration,
    /// The agent's health, when reported: a change is a reason for a pass.
    health: Option<&'a mut AgentHealth>,
}

/// Consecutive failed attempts, and the reason last warned about (a warning per outage and per
/// change of reason).
#[derive(Debug, Default)]
struct Outage {
    failures: u32,
    reported: Option<&'static str>,
}

/// One pass within [`PASS_TIMEOUT`], probing the hub first if asked: the copies, owned by the
/// hub namespace's ManagedClusterAddOn when there is one, written; `None` when `shutdown`
/// changed meanwhile.
async fn attempt(
    session: &mut Session,
    selector: &str,
    probe: bool,
    mut copies: HubCopies,
    shutdown: &mut watch::Receiver<bool>,
) -> Option<Result<(SyncStats, HubCopies), HubError>> {
    let pass = async {
        if probe {
            session.probe(selector).await?;
        }
        copies.set_owner(session.owner().await?);
        let stats = session.sync(&copies).await?;
        Ok((stats, copies))
    };
    tokio::select! {
        r = tokio::time::timeout(PASS_TIMEOUT, pass) => Some(r.unwrap_or(Err(HubError::Timeout(PASS_TIMEOUT)))),
        _ = shutdown.changed() => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_backoff_doubles_up_to_the_cap_with_bounded_jitter() {
        assert_eq!(backoff(1, 0.0), MIN_BACKOFF);
        assert_eq!(backoff(2, 0.0), MIN_BACKOFF * 2);
        assert_eq!(backoff(4, 0.0), MIN_BACKOFF * 8);
        assert_eq!(backoff(30, 0.0), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX, 0.1), MAX_BACKOFF, "never above the cap");
        assert_eq!(backoff(1, -1.0), MIN_BACKOFF.mul_f64(0.9), "jitter clamped");
    }

    /// A hub that answers lists with nothing, holds watches open, accepts writes, and records
    /// every request as `METHOD path`.
    fn mock_hub() -> (kube::Client, Arc<Mutex<Vec<String>>>) {
        use hyper::{Request, Response};
        use kube::client::Body;
        let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let recorded = calls.clone();
        tokio::spawn(async move {
            let mut handle = std::pin::pin!(handle);
            let mut held = Vec::new();
            while let Some((request, send)) = handle.next_request().await {
                let method = request.method().to_string();
                let path = request.uri().path().to_string();
                let watch = request
                    .uri()
                    .query()
                    .is_some_and(|q| q.contains("watch=true"));
                recorded
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(format!("{method} {path}"));
                if watch {
                    held.push(send);
                    continue;
                }
                let body = if method == "GET" {
                    serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": "1"}, "items": []})
                } else {
                    serde_json::json!({
                        "apiVersion": "update.openshift.io/v1alpha1", "kind": "ControlPlaneUpdateStatus",
                        "metadata": {"name": "c1", "namespace": "c1", "resourceVersion": "2"}, "spec": {}
                    })
                };
                let response = Response::builder()
                    .status(200)
                    .header("content-type", "application/json")
                    .body(Body::from(serde_json::to_vec(&body).unwrap_or_default()))
                    .expect("a response");
                send.send_response(response);
            }
        });
        (kube::Client::new(service, "c1"), calls)
    }

    /// Issue #38 item 10: the hub session's writes go through the leader-election Lease gate,
    /// as the local writers' do: once the Lease is lost, no copy, heartbeat or condition is
    /// sent to the hub.
    #[tokio::test]
    async fn hub_writes_stop_when_the_lease_is_lost() {
        let (client, calls) = mock_hub();
        let gate = crate::runtime::leader::LeaseGate::open();
        let ctx = WatchContext {
            selector: hub_selector_for("c1", None),
            namespace: "c1".into(),
            wake: Arc::new(Notify::new()),
            signals: Arc::default(),
            metrics: Arc::new(Metrics::new().expect("metrics")),
            metrics_label: String::new(),
            retired: Arc::default(),
        };
        let mut session = Session::start(client, [0; 32], &ctx, &gate).await;
        let mut cp = ControlPlaneUpdateStatus::new("cluster", Default::default());
        cp.status = Some(Default::default());
        let copies = desired_copies("c1", false, &[Arc::new(cp)], &[], &[]);
        let writes = || {
            calls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .filter(|c| !c.starts_with("GET "))
                .count()
        };
        session.sync(&copies).await.expect("leading: written");
        let sent = writes();
        assert!(sent >= 1, "the mock sees the writes");
        gate.close();
        let mut again = copies.clone();
        again.control_planes[0]
            .labels
            .insert("changed".into(), "yes".into());
        let e = session.sync(&again).await.expect_err("the Lease is lost");
        assert!(e.to_string().contains("Lease is lost"), "{e}");
        let e = heartbeat::stamp(&session.client, "c1", "c1", jiff::Timestamp::now())
            .await
            .expect_err("no heartbeat either");
        assert!(e.to_string().contains("Lease is lost"), "{e}");
        assert_eq!(writes(), sent, "nothing more reached the hub");
        session
            .probe(&hub_selector_for("c1", None))
            .await
            .expect("reads go on");
    }

    #[test]
    fn hub_watch_outages_are_reported_once_per_reason() {
        let s = Signals::default();
        assert!(s.report(0, "unauthorized"));
        assert!(!s.report(0, "unauthorized"), "once per outage");
        assert!(s.report(1, "unauthorized"), "per kind");
        assert!(s.report(0, "forbidden"), "again when the reason changes");
        assert!(s.recovered(0));
        assert!(!s.recovered(0));
        assert!(s.report(0, "forbidden"), "a new outage");
        assert!(!s.report(7, "connect") && !s.recovered(7), "no such kind");
        assert!(!s.not_found());
        assert!(s.report(2, "not-found"));
        assert!(
            s.not_found(),
            "a retired session without a hub namespace has nothing to delete"
        );
    }
}
