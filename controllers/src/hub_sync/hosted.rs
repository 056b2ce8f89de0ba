//! The hub sync of hosted mode (`--mode=hosted` with `--hub-kubeconfig`): one [`HubSync`]
//! session per HostedCluster, each reporting that hosted cluster as a managed cluster of the
//! hub, exactly as a standalone cluster's controller would: its ControlPlaneUpdateStatus (named
//! after the managed cluster), its WorkerPoolUpdateStatus objects (one per NodePool) and its
//! health insights (progress insights too with `--hub-include-progress`) are copied into the
//! hub namespace named after the managed cluster, labelled
//! `open-cluster-management.io/cluster-name=<managed cluster>`, so `kubectl update-status
//! --fleet` and the hub's label queries list hosted clusters next to standalone ones.
//!
//! - **The managed cluster's name** is the HostedCluster's annotation
//!   `cluster.open-cluster-management.io/managedcluster-name` (what the multicluster engine's
//!   hypershift addon uses to import a hosted cluster under another name), else the
//!   HostedCluster's name. Who gets a name several HostedClusters claim is
//!   [`super::hosted_names`]'s rule: **its holder keeps it** (the session reporting under it, or
//!   after a restart the HostedCluster whose copies are on the hub under it), and a newcomer is
//!   refused whatever it claims by; only a name nobody holds goes to an annotated claim, and a
//!   tie to none. A refused HostedCluster gets a warning, `update_status_hub_sync_up` 0,
//!   `update_status_hub_name_refused` 1 (alert `UpdateStatusHubNameRefused`) and a Warning
//!   Event `HubNameRefused`; a name that is not a DNS-1123 label is refused the same way.
//! - **No session deletes another's copies:** the copies of a hosted cluster carry the label
//!   `update.openshift.io/hosted-cluster=<namespace>.<name>` of their HostedCluster, and its
//!   session sees, changes and deletes only copies with that label. An annotation claiming a name
//!   therefore never removes the copies of the HostedCluster holding it, even after a restart.
//! - **Identities:** `--hub-kubeconfig` is one identity for every hosted cluster; with
//!   `--hub-addon-secrets` each hosted cluster writes with an add-on identity of its own, from a
//!   Secret `update-status-hub-kubeconfig` in the format OCM's registration agent writes (key
//!   `cluster-name` naming the managed cluster), in the namespace `--hub-addon-secret-namespace`
//!   gives; renewals followed (docs/acm.md: who provisions them).
//! - **Sessions follow the HostedClusters:** a new HostedCluster starts one; a HostedCluster
//!   deleted (or being deleted) retires its session, which deletes its copies on the hub and
//!   ends (its metric series go with it); a changed managed-cluster name retires the old
//!   session (its copies go) and starts one under the new name.
//! - **Only the concerned session wakes:** the manager is woken by the hosted watches, groups
//!   our objects by hosted cluster once, and wakes a session only when the names or
//!   resourceVersions of its objects changed (with hundreds of hosted clusters, one changing
//!   does not make every session recompute its copies).
//! - Each session has its own hub client (HTTP/2: one connection) and hub watches, in its own
//!   namespace, so the hub Role of `config/hub/` (namespaced) is enough; they share the metrics
//!   and the shutdown signal.

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use kube::Resource;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::Store;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use update_status_api::crd::labels;
use update_status_api::hosted::HostedCluster;
use update_status_assess::redact::redact_urls_in;

use super::config::{RESYNC, SessionSettings};
use super::credentials::{Credentials, Material, from_secret_data};
use super::errors::HubError;
use super::hosted_names::{Holders, HubNames, label, needs_lookup, recorded_holder};
pub use super::hosted_names::{
    HostedKey, MANAGED_CLUSTER_NAME_ANNOTATION, hosted_cluster_label, hub_names,
};
use super::local::LocalObjects;
use super::sync_loop::HubSync;
use crate::metrics::Metrics;
use crate::runtime::existing::Cached;

/// Name of the Secret OCM's registration agent writes an add-on's hub credentials into
/// (`<add-on>-hub-kubeconfig`).
pub const ADDON_SECRET_NAME: &str = "update-status-hub-kubeconfig";
/// Key of that Secret naming the managed cluster.
pub const ADDON_SECRET_CLUSTER_KEY: &str = "cluster-name";
/// Default of `--hub-addon-secret-namespace`: `{cluster}` is the managed cluster's name.
pub const DEFAULT_ADDON_SECRET_NAMESPACE: &str = "klusterlet-{cluster}";

/// Collects a burst of watch events into one look at the sessions.
const MANAGER_DEBOUNCE: Duration = Duration::from_millis(200);
/// A contested name whose holder could not be read on the hub is read again after this.
const LOOKUP_RETRY: Duration = Duration::from_secs(5);
/// How long reading who holds a name may take.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(15);
/// The reporting controller of the `HubNameRefused` Events.
const EVENTS_CONTROLLER: &str = "update-status-controller";

/// The note of an Event: at most 1 kB (the API's limit), cut with `...`.
fn note(text: &str) -> String {
    const MAX: usize = 1024;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX - 3;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// A fingerprint per hosted cluster of our objects (names and resourceVersions), computed in
/// one pass over the stores; independent of the stores' order.
fn fingerprints(local: &LocalObjects) -> HashMap<HostedKey, u64> {
    let mut fp: HashMap<HostedKey, u64> = HashMap::new();
    let mut add = |o: &dyn Cached, kind: u8| {
        let (Some(ns), Some(cluster)) = (o.cached_namespace(), o.cached_label(labels::CLUSTER))
        else {
            return;
        };
        let mut h = DefaultHasher::new();
        (kind, o.cached_name(), o.cached_resource_version()).hash(&mut h);
        let e = fp.entry((ns.to_string(), cluster.to_string())).or_default();
        *e = e.wrapping_add(h.finish());
    };
    for o in local.control_plane_statuses.state() {
        add(&*o, 0);
    }
    for o in local.worker_pool_statuses.state() {
        add(&*o, 1);
    }
    for o in local.insights.state() {
        add(&*o, 2);
    }
    fp
}

/// A running session.
struct Running {
    hub_name: String,
    /// Publishes this session's credentials (`--hub-addon-secrets`).
    publish: Option<watch::Sender<Option<Arc<Material>>>>,
    wake: Arc<Notify>,
    retired: Arc<AtomicBool>,
    task: JoinHandle<()>,
    /// Of its objects when it was last woken.
    seen: Option<u64>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The hub sync of hosted mode (see the module documentation).
pub struct HostedHubSync {
    credentials: HostedCredentials,
    include_progress: bool,
    hosted_clusters: Store<HostedCluster>,
    local: LocalObjects,
    wake: Arc<Notify>,
    metrics: Arc<Metrics>,
    /// Of every session: the Lease gate of their writes, the heartbeat interval.
    settings: SessionSettings,
    /// Publishes an Event on a HostedCluster refused a name (management cluster's client).
    events: Option<Recorder>,
}

/// Where the hosted clusters' hub credentials come from.
#[derive(Clone)]
pub enum HostedCredentials {
    /// `--hub-kubeconfig`: one identity for every hosted cluster.
    Shared(Credentials),
    /// `--hub-addon-secrets`: each hosted cluster's own add-on identity, from the Secret
    /// [`ADDON_SECRET_NAME`] in the namespace `namespace` gives for its managed cluster
    /// (`{cluster}` replaced by its name), whose key [`ADDON_SECRET_CLUSTER_KEY`] names it.
    AddonSecrets {
        /// The Secrets named [`ADDON_SECRET_NAME`] (watched by name, in every namespace).
        secrets: Store<Secret>,
        /// Set once their watch has listed (before, a missing Secret proves nothing).
        listed: Arc<AtomicBool>,
        /// The namespace pattern, e.g. [`DEFAULT_ADDON_SECRET_NAMESPACE`].
        namespace: String,
        /// The hub every Secret must name (`--hub-kubeconfig`'s cluster): the sessions talk to
        /// its server with its CA, never to a server a Secret names (issue #48 item 14).
        hub: Arc<kube::config::Cluster>,
    },
}

/// The watch of the add-on Secrets of `--hub-addon-secrets`: every Secret named
/// [`ADDON_SECRET_NAME`], in every namespace, and no other (a field selector on the name, which
/// RBAC can restrict with `resourceNames`: config/rbac/hosted/hub-addon-secrets). Wakes `wake`
/// on every change (a renewed certificate). Returns the credentials source and the watch's task.
pub fn watch_addon_secrets(
    client: &kube::Client,
    namespace: String,
    hub: Arc<kube::config::Cluster>,
    wake: Arc<Notify>,
) -> (
    HostedCredentials,
    impl std::future::Future<Output = ()> + Send + 'static,
) {
    use futures::StreamExt as _;
    use kube::runtime::{WatchStreamExt as _, watcher};
    let api: kube::Api<Secret> = kube::Api::all(client.clone());
    let (reader, writer) = kube::runtime::reflector::store();
    let listed = Arc::new(AtomicBool::new(false));
    let config = watcher::Config::default().fields(&format!("metadata.name={ADDON_SECRET_NAME}"));
    let stream = watcher(api, config).default_backoff().reflect(writer);
    let done = listed.clone();
    let task = async move {
        let mut stream = std::pin::pin!(stream);
        let mut failing: Option<String> = None;
        while let Some(ev) = stream.next().await {
            match ev {
                Ok(watcher::Event::Init) => {}
                Ok(ev) => {
                    if failing.take().is_some() {
                        tracing::info!("watch of the hub add-on Secrets recovered");
                    }
                    if matches!(ev, watcher::Event::InitDone) {
                        done.store(true, Ordering::SeqCst);
                    }
                    wake.notify_one();
                }
                Err(e) => {
                    let text = e.to_string();
                    if failing.as_deref() != Some(text.as_str()) {
                        tracing::warn!(error = %text, secret = ADDON_SECRET_NAME, "cannot watch the hub add-on Secrets (RBAC: config/rbac/hosted/hub-addon-secrets); retrying");
                        failing = Some(text);
                    }
                }
            }
        }
    };
    (
        HostedCredentials::AddonSecrets {
            secrets: reader,
            listed,
            namespace,
            hub,
        },
        task,
    )
}

impl HostedCredentials {
    /// For messages.
    fn describe(&self) -> String {
        match self {
            HostedCredentials::Shared(c) => c.origin().to_string(),
            HostedCredentials::AddonSecrets { namespace, .. } => {
                format!("add-on Secrets {namespace}/{ADDON_SECRET_NAME}")
            }
        }
    }
}

/// `namespace/name` of the add-on Secret of managed cluster `cluster` for the pattern `ns`.
pub fn addon_secret_ref(ns: &str, cluster: &str) -> (String, String) {
    (
        ns.replace("{cluster}", cluster),
        ADDON_SECRET_NAME.to_string(),
    )
}

/// The credentials of managed cluster `cluster` in `secrets` (pure): its Secret, if it names
/// that cluster in [`ADDON_SECRET_CLUSTER_KEY`] (a Secret for another cluster is not used) and
/// the server of `hub`, whose CA and proxy the credentials then use (a Secret naming another
/// server is not used: whoever created the namespace first, a tenant say, could otherwise
/// receive the cluster's status).
pub fn addon_material(
    secrets: &[Arc<Secret>],
    pattern: &str,
    cluster: &str,
    hub: &kube::config::Cluster,
) -> Option<Result<Material, HubError>> {
    let (ns, name) = addon_secret_ref(pattern, cluster);
    let secret = secrets.iter().find(|s| {
        s.metadata.namespace.as_deref() == Some(ns.as_str())
            && s.metadata.name.as_deref() == Some(name.as_str())
    })?;
    let data: BTreeMap<String, Vec<u8>> = secret
        .data
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.0.clone()))
        .collect();
    let origin = format!("{ns}/{name}");
    if data.get(ADDON_SECRET_CLUSTER_KEY).map(Vec::as_slice) != Some(cluster.as_bytes()) {
        return Some(Err(HubError::Credentials {
            origin,
            problem: format!(
                "its key {ADDON_SECRET_CLUSTER_KEY} does not name managed cluster {cluster}"
            ),
        }));
    }
    Some(from_secret_data(&data, &origin).and_then(|m| {
        m.pinned_to(hub).map_err(|problem| HubError::Credentials {
            origin: origin.clone(),
            problem,
        })
    }))
}

/// The manager's state: sessions by HostedCluster, retiring ones, refusals reported, and the
/// add-on Secrets' problems reported (by hub name).
#[derive(Default)]
struct Sessions {
    active: BTreeMap<HostedKey, Running>,
    retiring: Vec<(HostedKey, Running)>,
    refused: BTreeMap<HostedKey, String>,
    secret_problems: BTreeMap<String, String>,
    /// Who the hub says holds each contested name nobody runs a session for.
    recorded: BTreeMap<String, Result<Option<String>, String>>,
    /// When names whose holder could not be read are read again.
    lookup_retry_at: Option<Instant>,
}

impl HostedHubSync {
    /// The hub sync of hosted mode with `credentials`. `wake` is notified by the HostedCluster
    /// watch, the watches of our objects and, with add-on Secrets, their watch. Progress
    /// insights are not copied unless [`HostedHubSync::with_progress`].
    pub fn new(
        credentials: HostedCredentials,
        hosted_clusters: Store<HostedCluster>,
        local: LocalObjects,
        wake: Arc<Notify>,
        metrics: Arc<Metrics>,
    ) -> Self {
        HostedHubSync {
            credentials,
            include_progress: false,
            hosted_clusters,
            local,
            wake,
            metrics,
            settings: SessionSettings::default(),
            events: None,
        }
    }

    /// Copies progress insights too when `include_progress` (`--hub-include-progress`).
    pub fn with_progress(mut self, include_progress: bool) -> Self {
        self.include_progress = include_progress;
        self
    }

    /// Publishes a Warning Event `HubNameRefused` on each HostedCluster refused a name, through
    /// `client` (the management cluster) as `instance` (the leader identity).
    pub fn with_events(mut self, client: kube::Client, instance: String) -> Self {
        self.events = Some(Recorder::new(
            client,
            Reporter {
                controller: EVENTS_CONTROLLER.into(),
                instance: Some(instance),
            },
        ));
        self
    }

    /// The Lease gate and heartbeat interval of every session.
    pub fn with_settings(mut self, settings: SessionSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Runs until `shutdown` changes. Never fails.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        tracing::info!(
            credentials = %self.credentials.describe(),
            include_progress = self.include_progress,
            "hub sync on: reporting each hosted cluster to the hub"
        );
        let ended = Arc::new(Notify::new());
        let mut sessions = Sessions::default();
        loop {
            self.reconcile(&mut sessions, &ended, &shutdown).await;
            let resync = sessions
                .lookup_retry_at
                .map_or(RESYNC, |at| at.saturating_duration_since(Instant::now()));
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = ended.notified() => {}
                _ = tokio::time::sleep(resync) => {}
                _ = shutdown.changed() => return,
            }
            tokio::select! {
                _ = tokio::time::sleep(MANAGER_DEBOUNCE) => {}
                _ = shutdown.changed() => return,
            }
        }
    }

    /// Who holds the names: the running sessions, and for the contested names nobody runs a
    /// session for, what the hub says (read once per contest; again after [`LOOKUP_RETRY`] when
    /// it could not be read).
    async fn holders(&self, s: &mut Sessions, hosted_clusters: &[Arc<HostedCluster>]) -> Holders {
        let mut holders = Holders {
            running: s
                .active
                .iter()
                .map(|(k, r)| (r.hub_name.clone(), k.clone()))
                .collect(),
            recorded: std::mem::take(&mut s.recorded),
        };
        let contested = needs_lookup(hosted_clusters, &holders);
        holders.recorded.retain(|n, _| contested.contains(n));
        let retry_due = s.lookup_retry_at.is_none_or(|at| at <= Instant::now());
        s.lookup_retry_at = None;
        for name in contested {
            let read = match holders.recorded.get(&name) {
                None => true,
                Some(Err(_)) => retry_due,
                Some(Ok(_)) => false,
            };
            if read {
                let r = self.lookup(&name).await;
                match &r {
                    Ok(holder) => {
                        tracing::info!(hub_namespace = %name, holder = holder.as_deref().unwrap_or("(none)"), "contested managed cluster name: read who holds it on the hub")
                    }
                    Err(e) => {
                        tracing::warn!(hub_namespace = %name, error = %e, "contested managed cluster name: cannot read who holds it on the hub; retrying")
                    }
                }
                holders.recorded.insert(name, r);
            }
        }
        if holders.recorded.values().any(Result::is_err) {
            s.lookup_retry_at = Some(Instant::now() + LOOKUP_RETRY);
        }
        s.recorded = holders.recorded.clone();
        holders
    }

    /// What the hub says of `name` ([`recorded_holder`]), with the credentials that would write
    /// under it.
    async fn lookup(&self, name: &str) -> Result<Option<String>, String> {
        let (material, origin) = match &self.credentials {
            HostedCredentials::Shared(c) => {
                let mut c = c.clone();
                let m = c.current().ok_or("no hub credentials yet")?;
                (m, c.origin().to_string())
            }
            HostedCredentials::AddonSecrets {
                secrets,
                namespace,
                hub,
                ..
            } => {
                let (ns, secret) = addon_secret_ref(namespace, name);
                match addon_material(&secrets.state(), namespace, name, hub) {
                    Some(Ok(m)) => (Arc::new(m), format!("Secret {ns}/{secret}")),
                    Some(Err(e)) => return Err(e.to_string()),
                    None => return Err(format!("no Secret {ns}/{secret} yet")),
                }
            }
        };
        let client = material
            .client(&origin)
            .await
            .map_err(|e| redact_urls_in(&e.to_string()))?;
        match tokio::time::timeout(LOOKUP_TIMEOUT, recorded_holder(&client, name)).await {
            Ok(r) => r.map_err(|e| redact_urls_in(&e.to_string())),
            Err(_) => Err(format!("no answer within {LOOKUP_TIMEOUT:?}")),
        }
    }

    /// Reports a HostedCluster refused its name: a warning, its metrics, an Event on it.
    async fn refuse(&self, hc: Option<&HostedCluster>, key: &HostedKey, why: &str) {
        tracing::warn!(hosted_cluster = %label(key), reason = %why, "hosted cluster not reported to the hub");
        self.metrics.hub.sync_failed(&label(key), "config");
        self.metrics.hub.name_refused(&label(key), true);
        let (Some(recorder), Some(hc)) = (&self.events, hc) else {
            return;
        };
        let event = Event {
            type_: EventType::Warning,
            reason: "HubNameRefused".into(),
            note: Some(note(why)),
            action: "ReportToHub".into(),
            secondary: None,
        };
        if let Err(e) = recorder.publish(&event, &hc.object_ref(&())).await {
            tracing::warn!(hosted_cluster = %label(key), error = %e, "cannot publish an Event (RBAC: create and patch events.k8s.io events)");
        }
    }

    /// Starts, retires and wakes the sessions to match the HostedClusters and our objects.
    async fn reconcile(
        &self,
        s: &mut Sessions,
        ended: &Arc<Notify>,
        shutdown: &watch::Receiver<bool>,
    ) {
        self.sweep_ended(s);
        let hosted_clusters = self.hosted_clusters.state();
        let holders = self.holders(s, &hosted_clusters).await;
        let wanted = hub_names(&hosted_clusters, &holders);
        self.retire_unwanted(s, &wanted);
        self.end_refusals(s, &wanted);
        for (key, result) in wanted {
            match result {
                Err(why) => {
                    if s.refused.get(&key) != Some(&why) {
                        let hc = hosted_clusters.iter().find(|h| {
                            h.metadata.namespace.as_deref() == Some(key.0.as_str())
                                && h.metadata.name.as_deref() == Some(key.1.as_str())
                        });
                        self.refuse(hc.map(|h| &**h), &key, &why).await;
                        s.refused.insert(key, why);
                    }
                }
                Ok(name) if !s.active.contains_key(&key) => {
                    if !revive(s, &key, &name) {
                        let r = self.start(&key, name, ended, shutdown);
                        s.active.insert(key, r);
                    }
                }
                Ok(_) => {}
            }
        }
        self.publish_credentials(s);
        wake_changed(s, &fingerprints(&self.local));
    }

    /// Drops the sessions that ended: a retired one's series go, unless the hosted cluster
    /// reports under a new name (same label) or its new name is refused; one that ended while
    /// active (retired and revived in the same instant) is started again by the pass.
    fn sweep_ended(&self, s: &mut Sessions) {
        let Sessions {
            active,
            retiring,
            refused,
            ..
        } = s;
        retiring.retain(|(key, r)| {
            let done = r.task.is_finished();
            // A refused name keeps its series at 0 (the alert's input).
            if done && !active.contains_key(key) && !refused.contains_key(key) {
                self.metrics.hub.forget(&label(key));
            }
            !done
        });
        active.retain(|_, r| !r.task.is_finished());
    }

    /// Retires the sessions of HostedClusters gone or renamed: they delete their hub copies.
    fn retire_unwanted(&self, s: &mut Sessions, wanted: &HubNames) {
        let keys: Vec<HostedKey> = s.active.keys().cloned().collect();
        for key in keys {
            let keep = matches!(wanted.get(&key), Some(Ok(n)) if s.active.get(&key).is_some_and(|r| &r.hub_name == n));
            if !keep && let Some(r) = s.active.remove(&key) {
                tracing::info!(hosted_cluster = %label(&key), hub_namespace = %r.hub_name, "hosted cluster gone or renamed on the hub: deleting its hub copies");
                r.retired.store(true, Ordering::SeqCst);
                r.wake.notify_one();
                s.retiring.push((key, r));
            }
        }
    }

    /// Ends the refusals no longer made: a HostedCluster gone takes its series along (one now
    /// accepted gets a session, which reports).
    fn end_refusals(&self, s: &mut Sessions, wanted: &HubNames) {
        s.refused.retain(|k, _| {
            let keep = wanted.get(k).is_some_and(Result::is_err);
            if !keep {
                self.metrics.hub.name_refused(&label(k), false);
            }
            if !keep && !wanted.contains_key(k) {
                self.metrics.hub.forget(&label(k));
            }
            keep
        });
    }

    /// With add-on Secrets: gives each session its managed cluster's credentials when they
    /// change; a missing or unusable Secret is reported once (per problem) and the session keeps
    /// what it has (or waits).
    fn publish_credentials(&self, s: &mut Sessions) {
        let HostedCredentials::AddonSecrets {
            secrets,
            listed,
            namespace,
            hub,
        } = &self.credentials
        else {
            return;
        };
        if !listed.load(Ordering::SeqCst) {
            return;
        }
        let secrets = secrets.state();
        let mut problems = BTreeMap::new();
        for (key, r) in &s.active {
            let Some(tx) = &r.publish else { continue };
            match addon_material(&secrets, namespace, &r.hub_name, hub) {
                Some(Ok(m)) => {
                    let new = tx
                        .borrow()
                        .as_ref()
                        .is_none_or(|old| old.fingerprint != m.fingerprint);
                    if new {
                        tx.send_replace(Some(Arc::new(m)));
                    }
                }
                Some(Err(e)) => {
                    problems.insert(r.hub_name.clone(), (label(key), e.to_string()));
                }
                None => {
                    let (ns, name) = addon_secret_ref(namespace, &r.hub_name);
                    problems.insert(
                        r.hub_name.clone(),
                        (
                            label(key),
                            format!(
                                "no Secret {ns}/{name} yet: enable the update-status add-on for managed cluster {} in hosted mode (docs/acm.md)",
                                r.hub_name
                            ),
                        ),
                    );
                }
            }
        }
        for (hub_name, (hosted, problem)) in &problems {
            if s.secret_problems.get(hub_name) != Some(problem) {
                tracing::warn!(hosted_cluster = %hosted, hub_namespace = %hub_name, problem = %problem, "hosted cluster's hub credentials not usable; its session waits for them");
            }
        }
        s.secret_problems = problems.into_iter().map(|(k, (_, p))| (k, p)).collect();
    }

    fn start(
        &self,
        key: &HostedKey,
        hub_name: String,
        ended: &Arc<Notify>,
        shutdown: &watch::Receiver<bool>,
    ) -> Running {
        let wake = Arc::new(Notify::new());
        let retired = Arc::new(AtomicBool::new(false));
        let (creds, publish) = match &self.credentials {
            HostedCredentials::Shared(c) => (c.clone(), None),
            HostedCredentials::AddonSecrets {
                namespace,
                secrets,
                hub,
                ..
            } => {
                let (ns, name) = addon_secret_ref(namespace, &hub_name);
                let (tx, c) = Credentials::channel(&format!("Secret {ns}/{name}"));
                // What there is now, before the session starts (it would report "none yet").
                if let Some(Ok(m)) = addon_material(&secrets.state(), namespace, &hub_name, hub) {
                    tx.send_replace(Some(Arc::new(m)));
                }
                (c, Some(tx))
            }
        };
        let sync = HubSync::with_credentials(
            hub_name.clone(),
            creds,
            self.local.scoped(&key.0, &key.1),
            wake.clone(),
            self.metrics.clone(),
        )
        .with_progress(self.include_progress)
        .for_hosted_cluster(label(key), hosted_cluster_label(key), retired.clone())
        .with_settings(self.settings.clone());
        tracing::info!(hosted_cluster = %label(key), hub_namespace = %hub_name, "hub session started");
        let (ended, shutdown) = (ended.clone(), shutdown.clone());
        let task = tokio::spawn(async move {
            sync.run(shutdown).await;
            ended.notify_one();
        });
        wake.notify_one();
        Running {
            hub_name,
            publish,
            wake,
            retired,
            task,
            seen: None,
        }
    }
}

/// A session still deleting copies under `name`: revived (`true`) if it is `key`'s and still
/// running. One of another HostedCluster is waited for (`true`: it would delete the new
/// copies); `false`: start a new session.
fn revive(s: &mut Sessions, key: &HostedKey, name: &str) -> bool {
    let Some(i) = s.retiring.iter().position(|(_, r)| r.hub_name == name) else {
        return false;
    };
    if &s.retiring[i].0 != key {
        return true;
    }
    let (_, r) = s.retiring.swap_remove(i);
    if r.task.is_finished() {
        return false;
    }
    r.retired.store(false, Ordering::SeqCst);
    r.wake.notify_one();
    s.active.insert(key.clone(), r);
    true
}

/// Wakes the sessions whose objects changed (`fps`: each HostedCluster's fingerprint).
fn wake_changed(s: &mut Sessions, fps: &HashMap<HostedKey, u64>) {
    for (key, r) in &mut s.active {
        let fp = fps.get(key).copied();
        if r.seen != fp {
            r.seen = fp;
            r.wake.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(ns: &str, cluster: &str, cert: &str) -> Arc<Secret> {
        secret_for(ns, cluster, cert, "https://127.0.0.1:6443")
    }

    fn secret_for(ns: &str, cluster: &str, cert: &str, server: &str) -> Arc<Secret> {
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: hub\nclusters:\n- name: hub\n  cluster: {{server: '{server}', insecure-skip-tls-verify: true}}\ncontexts:\n- name: hub\n  context: {{cluster: hub, user: agent}}\nusers:\n- name: agent\n  user: {{client-certificate: tls.crt, client-key: tls.key}}\n"
        );
        let kubeconfig = kubeconfig.as_str();
        let data = [
            ("kubeconfig", kubeconfig),
            ("tls.crt", cert),
            ("tls.key", "KEY"),
            (ADDON_SECRET_CLUSTER_KEY, cluster),
        ]
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                k8s_openapi::ByteString(v.as_bytes().to_vec()),
            )
        })
        .collect();
        Arc::new(Secret {
            metadata: kube::api::ObjectMeta {
                name: Some(ADDON_SECRET_NAME.into()),
                namespace: Some(ns.into()),
                ..Default::default()
            },
            data: Some(data),
            ..Default::default()
        })
    }

    /// The hub of `--hub-kubeconfig`: its server and its CA.
    fn hub() -> kube::config::Cluster {
        kube::config::Cluster {
            server: Some("https://127.0.0.1:6443".into()),
            certificate_authority_data: Some("SFVCLUNB".into()),
            ..Default::default()
        }
    }

    #[test]
    fn each_hosted_cluster_gets_the_addon_credentials_of_its_own_managed_cluster() {
        let pattern = DEFAULT_ADDON_SECRET_NAMESPACE;
        let hub = &hub();
        let secrets = [
            secret("klusterlet-prod", "prod", "CERT-P"),
            secret("klusterlet-dev", "dev", "CERT-D"),
            // A Secret naming another cluster than its namespace says is not used.
            secret("klusterlet-stage", "prod", "CERT-X"),
        ];
        let prod = addon_material(&secrets, pattern, "prod", hub)
            .expect("found")
            .expect("valid");
        let dev = addon_material(&secrets, pattern, "dev", hub)
            .expect("found")
            .expect("valid");
        assert_ne!(prod.fingerprint, dev.fingerprint);
        let pinned = prod.cluster().expect("a cluster");
        assert_eq!(
            (
                pinned.certificate_authority_data.as_deref(),
                pinned.insecure_skip_tls_verify
            ),
            (Some("SFVCLUNB"), None),
            "the session talks to the hub with its CA, not with what the Secret trusts"
        );
        let stage = addon_material(&secrets, pattern, "stage", hub).expect("found");
        let e = stage.expect_err("names another cluster");
        assert!(
            e.to_string()
                .contains("does not name managed cluster stage"),
            "{e}"
        );
        assert!(addon_material(&secrets, pattern, "absent", hub).is_none());
        assert_eq!(
            addon_secret_ref("hub-creds-{cluster}", "prod"),
            ("hub-creds-prod".to_string(), ADDON_SECRET_NAME.to_string())
        );
    }

    /// Issue #48 item 14: a tenant who creates `klusterlet-prod` before OCM does, with a Secret
    /// naming `prod` and a server of its own, would receive prod's status. Such a Secret is
    /// refused; one naming the hub's server gets the hub's CA, whatever CA it says.
    #[test]
    fn a_secret_naming_another_server_than_the_hub_is_refused() {
        let pattern = DEFAULT_ADDON_SECRET_NAMESPACE;
        let evil = [secret_for(
            "klusterlet-prod",
            "prod",
            "CERT",
            "https://tenant.example:6443",
        )];
        let e = addon_material(&evil, pattern, "prod", &hub())
            .expect("found")
            .expect_err("another server");
        let text = e.to_string();
        assert!(
            text.contains("names the server \"https://tenant.example:6443\"")
                && text.contains("not the hub of --hub-kubeconfig"),
            "{text}"
        );
        let slash = [secret_for(
            "klusterlet-prod",
            "prod",
            "CERT",
            "https://127.0.0.1:6443/",
        )];
        assert!(
            addon_material(&slash, pattern, "prod", &hub())
                .expect("found")
                .is_ok(),
            "the same server with a trailing slash"
        );
    }
}
