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
//!   HostedCluster's name ([`hub_names`]). A name that is not a DNS-1123 label, or that two
//!   HostedClusters would share (HostedClusters in different namespaces may have the same
//!   name, and an annotation can claim any name), is refused for the HostedClusters that do
//!   not get it: a warning, and their `update_status_hub_sync_up{hosted_cluster}` is 0. The
//!   annotated claim (the mapping ACM imported the hosted cluster under) always wins over a
//!   HostedCluster named so, running session or not; between equal claims the one whose
//!   session holds the name keeps it, and with none holding it (after a restart) the tie is
//!   refused for all of them: a tenant's HostedCluster never takes another's hub identity (nor,
//!   with `--hub-addon-secrets`, its credentials).
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
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::runtime::reflector::Store;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use update_status_api::crd::labels;
use update_status_api::hosted::HostedCluster;

use super::config::{RESYNC, SessionSettings, validate_cluster_name};
use super::credentials::{Credentials, Material, from_secret_data};
use super::errors::HubError;
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

/// The HostedCluster annotation naming its managed cluster on the hub (multicluster engine,
/// hypershift addon); absent: the HostedCluster's name.
pub const MANAGED_CLUSTER_NAME_ANNOTATION: &str =
    "cluster.open-cluster-management.io/managedcluster-name";

/// Collects a burst of watch events into one look at the sessions.
const MANAGER_DEBOUNCE: Duration = Duration::from_millis(200);

/// A HostedCluster: `(namespace, name)`.
pub type HostedKey = (String, String);

/// The hub name (managed cluster name) of every live HostedCluster, or why it has none (pure).
/// HostedClusters being deleted are left out (their sessions retire).
///
/// A name claimed by several HostedClusters goes, in this order:
/// 1. to the one claiming it by the annotation [`MANAGED_CLUSTER_NAME_ANNOTATION`] (the
///    mapping ACM imported the hosted cluster under) rather than by its own name: an
///    un-annotated HostedCluster never takes the name of an imported one, whether or not a
///    session holds it (so not after a restart either);
/// 2. among equal claims (both annotated, or both by their names), to the one holding it now
///    (`holders`: the names of the running sessions), which keeps it;
/// 3. otherwise to none: a tie is refused for every claimant and reported, since nothing tells
///    which of them the hub's managed cluster is (its hub identity and, with
///    `--hub-addon-secrets`, its credentials would go to a guess).
pub fn hub_names(
    hosted_clusters: &[Arc<HostedCluster>],
    holders: &BTreeMap<String, HostedKey>,
) -> BTreeMap<HostedKey, Result<String, String>> {
    struct Claim {
        key: HostedKey,
        /// Claimed by the annotation (the imported mapping), not by its own name.
        annotated: bool,
    }
    let mut out = BTreeMap::new();
    let mut by_name: BTreeMap<String, Vec<Claim>> = BTreeMap::new();
    for hc in hosted_clusters
        .iter()
        .filter(|hc| hc.metadata.deletion_timestamp.is_none())
    {
        let (Some(ns), Some(own)) = (hc.metadata.namespace.clone(), hc.metadata.name.clone())
        else {
            continue;
        };
        let annotation = hc
            .annotations()
            .get(MANAGED_CLUSTER_NAME_ANNOTATION)
            .filter(|n| !n.is_empty());
        let name = annotation.cloned().unwrap_or_else(|| own.clone());
        let key = (ns, own);
        if let Err(e) = validate_cluster_name(&name) {
            out.insert(key, Err(e.to_string()));
            continue;
        }
        by_name.entry(name).or_default().push(Claim {
            key,
            annotated: annotation.is_some(),
        });
    }
    for (name, claims) in by_name {
        let annotated = claims.iter().any(|c| c.annotated);
        let top: Vec<&HostedKey> = claims
            .iter()
            .filter(|c| c.annotated == annotated)
            .map(|c| &c.key)
            .collect();
        let winner: Option<HostedKey> = match top.as_slice() {
            [only] => Some((*only).clone()),
            _ => top
                .iter()
                .find(|k| holders.get(&name) == Some(**k))
                .map(|k| (*k).clone()),
        };
        let claimants = || {
            let mut names: Vec<String> = top.iter().map(|k| label(k)).collect();
            names.sort();
            names.join(", ")
        };
        let tie = || {
            let how = if annotated {
                format!("by the annotation {MANAGED_CLUSTER_NAME_ANNOTATION}")
            } else {
                "by their own names".to_string()
            };
            format!(
                "managed cluster name {name:?} is claimed by HostedClusters {} ({how}) and none holds it: none of them is reported under it until only one claims it; set the annotation {MANAGED_CLUSTER_NAME_ANNOTATION} on each to its own managed cluster's name",
                claimants()
            )
        };
        for Claim {
            key,
            annotated: mine,
        } in &claims
        {
            let result = match &winner {
                Some(w) if w == key => Ok(name.clone()),
                Some(w) if annotated && !mine => Err(format!(
                    "managed cluster name {name:?} is held by HostedCluster {}, imported under it (annotation {MANAGED_CLUSTER_NAME_ANNOTATION}), which wins over a HostedCluster's own name; set the annotation on this one to its own managed cluster's name",
                    label(w)
                )),
                Some(w) => Err(format!(
                    "managed cluster name {name:?} is held by HostedCluster {}, which keeps it; set the annotation {MANAGED_CLUSTER_NAME_ANNOTATION} on this one to its own managed cluster's name",
                    label(w)
                )),
                None if annotated && !mine => Err(format!(
                    "managed cluster name {name:?} is claimed by HostedClusters {} through the annotation {MANAGED_CLUSTER_NAME_ANNOTATION}, which wins over a HostedCluster's own name; set the annotation on this one to its own managed cluster's name",
                    claimants()
                )),
                None => Err(tie()),
            };
            out.insert(key.clone(), result);
        }
    }
    out
}

/// The value of the label `update.openshift.io/hosted-cluster` of a hosted cluster's copies.
pub fn hosted_cluster_label((ns, name): &HostedKey) -> String {
    update_status_assess::naming::label_value(&format!("{ns}.{name}"))
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
    },
}

/// The watch of the add-on Secrets of `--hub-addon-secrets`: every Secret named
/// [`ADDON_SECRET_NAME`], in every namespace, and no other (a field selector on the name, which
/// RBAC can restrict with `resourceNames`: config/rbac/hosted/hub-addon-secrets). Wakes `wake`
/// on every change (a renewed certificate). Returns the credentials source and the watch's task.
pub fn watch_addon_secrets(
    client: &kube::Client,
    namespace: String,
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
/// that cluster in [`ADDON_SECRET_CLUSTER_KEY`] (a Secret for another cluster is not used).
pub fn addon_material(
    secrets: &[Arc<Secret>],
    pattern: &str,
    cluster: &str,
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
    Some(from_secret_data(&data, &origin))
}

/// The manager's state: sessions by HostedCluster, retiring ones, refusals reported, and the
/// add-on Secrets' problems reported (by hub name).
#[derive(Default)]
struct Sessions {
    active: BTreeMap<HostedKey, Running>,
    retiring: Vec<(HostedKey, Running)>,
    refused: BTreeMap<HostedKey, String>,
    secret_problems: BTreeMap<String, String>,
}

fn label((ns, name): &HostedKey) -> String {
    format!("{ns}/{name}")
}

impl HostedHubSync {
    /// The hub sync of hosted mode with `credentials`. `wake` is notified by the HostedCluster
    /// watch, the watches of our objects and, with add-on Secrets, their watch.
    pub fn new(
        credentials: HostedCredentials,
        include_progress: bool,
        hosted_clusters: Store<HostedCluster>,
        local: LocalObjects,
        wake: Arc<Notify>,
        metrics: Arc<Metrics>,
    ) -> Self {
        HostedHubSync {
            credentials,
            include_progress,
            hosted_clusters,
            local,
            wake,
            metrics,
            settings: SessionSettings::default(),
        }
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
            self.reconcile(&mut sessions, &ended, &shutdown);
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = ended.notified() => {}
                _ = tokio::time::sleep(RESYNC) => {}
                _ = shutdown.changed() => return,
            }
            tokio::select! {
                _ = tokio::time::sleep(MANAGER_DEBOUNCE) => {}
                _ = shutdown.changed() => return,
            }
        }
    }

    /// Starts, retires and wakes the sessions to match the HostedClusters and our objects.
    fn reconcile(&self, s: &mut Sessions, ended: &Arc<Notify>, shutdown: &watch::Receiver<bool>) {
        // Sessions that ended (retired and done): their series go, unless the hosted cluster
        // reports under a new name (same label) or its new name is refused.
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
        // A session that ended while active (retired and revived in the same instant): started
        // again below.
        active.retain(|_, r| !r.task.is_finished());
        let holders: BTreeMap<String, HostedKey> = s
            .active
            .iter()
            .map(|(k, r)| (r.hub_name.clone(), k.clone()))
            .collect();
        let wanted = hub_names(&self.hosted_clusters.state(), &holders);
        // Retire what is gone or renamed.
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
        // Refusals that ended: a HostedCluster gone takes its series along (one now accepted
        // gets a session, which reports).
        s.refused.retain(|k, _| {
            let keep = wanted.get(k).is_some_and(Result::is_err);
            if !keep && !wanted.contains_key(k) {
                self.metrics.hub.forget(&label(k));
            }
            keep
        });
        for (key, result) in wanted {
            match result {
                Err(why) => {
                    if s.refused.get(&key) != Some(&why) {
                        tracing::warn!(hosted_cluster = %label(&key), reason = %why, "hosted cluster not reported to the hub");
                        self.metrics.hub.sync_failed(&label(&key), "config");
                        s.refused.insert(key, why);
                    }
                }
                Ok(name) if !s.active.contains_key(&key) => {
                    // A session still deleting copies under this name: revive it if it is this
                    // HostedCluster's, else wait for it to end (it would delete the new copies).
                    if let Some(i) = s.retiring.iter().position(|(_, r)| r.hub_name == name) {
                        if s.retiring[i].0 != key {
                            continue;
                        }
                        let (_, r) = s.retiring.swap_remove(i);
                        if !r.task.is_finished() {
                            r.retired.store(false, Ordering::SeqCst);
                            r.wake.notify_one();
                            s.active.insert(key, r);
                            continue;
                        }
                    }
                    let r = self.start(&key, name, ended, shutdown);
                    s.active.insert(key, r);
                }
                Ok(_) => {}
            }
        }
        self.publish_credentials(s);
        // Wake the sessions whose objects changed.
        let fps = fingerprints(&self.local);
        for (key, r) in &mut s.active {
            let fp = fps.get(key).copied();
            if r.seen != fp {
                r.seen = fp;
                r.wake.notify_one();
            }
        }
    }

    /// With add-on Secrets: gives each session its managed cluster's credentials when they
    /// change; a missing or unusable Secret is reported once (per problem) and the session keeps
    /// what it has (or waits).
    fn publish_credentials(&self, s: &mut Sessions) {
        let HostedCredentials::AddonSecrets {
            secrets,
            listed,
            namespace,
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
            match addon_material(&secrets, namespace, &r.hub_name) {
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
                namespace, secrets, ..
            } => {
                let (ns, name) = addon_secret_ref(namespace, &hub_name);
                let (tx, c) = Credentials::channel(&format!("Secret {ns}/{name}"));
                // What there is now, before the session starts (it would report "none yet").
                if let Some(Ok(m)) = addon_material(&secrets.state(), namespace, &hub_name) {
                    tx.send_replace(Some(Arc::new(m)));
                }
                (c, Some(tx))
            }
        };
        let sync = HubSync::with_credentials(
            hub_name.clone(),
            self.include_progress,
            creds,
            self.local.scoped(&key.0, &key.1),
            wake.clone(),
            self.metrics.clone(),
        )
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

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::hosted::HostedClusterSpec;

    fn hc(ns: &str, name: &str, annotation: Option<&str>) -> Arc<HostedCluster> {
        let mut o = HostedCluster::new(name, HostedClusterSpec::default());
        o.metadata.namespace = Some(ns.into());
        if let Some(a) = annotation {
            o.metadata.annotations = Some(
                [(MANAGED_CLUSTER_NAME_ANNOTATION.to_string(), a.to_string())]
                    .into_iter()
                    .collect(),
            );
        }
        Arc::new(o)
    }

    fn key(ns: &str, name: &str) -> HostedKey {
        (ns.into(), name.into())
    }

    #[test]
    fn hub_names_follow_the_acm_annotation_then_the_name() {
        let names = hub_names(
            &[
                hc("clusters", "prod", None),
                hc("clusters", "dev", Some("dev-east")),
                hc("clusters", "empty", Some("")),
            ],
            &BTreeMap::new(),
        );
        assert_eq!(names[&key("clusters", "prod")], Ok("prod".into()));
        assert_eq!(names[&key("clusters", "dev")], Ok("dev-east".into()));
        assert_eq!(names[&key("clusters", "empty")], Ok("empty".into()));
    }

    #[test]
    fn a_bad_or_shared_hub_name_is_refused_for_that_hosted_cluster_only() {
        let hcs = [
            hc("team-b", "prod", None),
            hc("team-a", "prod", None),
            hc("clusters", "x", Some("Not_A_Label")),
            hc("clusters", "y", None),
        ];
        let names = hub_names(&hcs, &BTreeMap::new());
        // The same name in two namespaces, neither holding it: a tie, refused for both.
        for k in [key("team-a", "prod"), key("team-b", "prod")] {
            let tie = names[&k].as_ref().expect_err("a tie");
            assert!(
                tie.contains("claimed by HostedClusters team-a/prod, team-b/prod")
                    && tie.contains("none holds it")
                    && tie.contains(MANAGED_CLUSTER_NAME_ANNOTATION),
                "{tie}"
            );
        }
        let bad = names[&key("clusters", "x")].as_ref().expect_err("bad");
        assert!(
            bad.contains("Not_A_Label") && bad.contains("DNS-1123"),
            "{bad}"
        );
        assert_eq!(
            names[&key("clusters", "y")],
            Ok("y".into()),
            "the others are unaffected"
        );
        // The one holding it (a running session) keeps it against an equal claim.
        let holders: BTreeMap<String, HostedKey> = [("prod".to_string(), key("team-b", "prod"))]
            .into_iter()
            .collect();
        let names = hub_names(&hcs, &holders);
        assert_eq!(names[&key("team-b", "prod")], Ok("prod".into()));
        let refused = names[&key("team-a", "prod")].as_ref().expect_err("held");
        assert!(
            refused.contains("held by HostedCluster team-b/prod, which keeps it"),
            "{refused}"
        );
    }

    #[test]
    fn hosted_clusters_being_deleted_have_no_hub_name() {
        let mut gone = (*hc("clusters", "old", None)).clone();
        gone.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        let names = hub_names(
            &[Arc::new(gone), hc("clusters", "new", None)],
            &BTreeMap::new(),
        );
        assert_eq!(names.len(), 1);
        assert!(names.contains_key(&key("clusters", "new")));
    }

    fn created(mut hc: Arc<HostedCluster>, at: &str) -> Arc<HostedCluster> {
        let t: jiff::Timestamp = at.parse().expect("time");
        Arc::make_mut(&mut hc).metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(t));
        hc
    }

    /// Issue #38: a tenant's HostedCluster `tenant/prod-east` (no annotation) against the
    /// cluster ACM imported as `prod-east` (the annotation on `clusters/hc-1`). The imported
    /// mapping wins with or without a running session, and even against the session of the
    /// tenant's HostedCluster (it would write the victim's copies, with the victim's hub
    /// credentials under `--hub-addon-secrets`).
    #[test]
    fn the_imported_mapping_always_wins_over_a_hosted_cluster_named_so() {
        let hcs = [
            created(hc("tenant", "prod-east", None), "2025-01-01T00:00:00Z"),
            created(
                hc("clusters", "hc-1", Some("prod-east")),
                "2026-01-01T00:00:00Z",
            ),
        ];
        let victim = key("clusters", "hc-1");
        let tenant = key("tenant", "prod-east");
        for holders in [
            BTreeMap::new(),
            [("prod-east".to_string(), victim.clone())].into(),
            [("prod-east".to_string(), tenant.clone())].into(),
        ] {
            let names = hub_names(&hcs, &holders);
            assert_eq!(names[&victim], Ok("prod-east".into()), "{holders:?}");
            let refused = names[&tenant].as_ref().expect_err("refused");
            assert!(
                refused.contains("held by HostedCluster clusters/hc-1, imported under it")
                    && refused.contains(MANAGED_CLUSTER_NAME_ANNOTATION),
                "{refused}"
            );
        }
        // The annotation naming the HostedCluster's own name is an imported mapping too.
        let names = hub_names(
            &[
                hc("tenant", "prod-east", None),
                hc("clusters", "prod-east", Some("prod-east")),
            ],
            &BTreeMap::new(),
        );
        assert_eq!(names[&key("clusters", "prod-east")], Ok("prod-east".into()));
        assert!(names[&key("tenant", "prod-east")].is_err());
    }

    #[test]
    fn two_annotations_claiming_one_name_are_a_tie_unless_one_holds_it() {
        // team-z/old claims "prod" first (a session holds it); a newer annotation on team-a/new
        // claims it too: team-a/new sorts first by name but does not get it.
        let hcs = [
            created(hc("team-z", "old", Some("prod")), "2026-01-01T00:00:00Z"),
            created(hc("team-a", "new", Some("prod")), "2026-06-01T00:00:00Z"),
            hc("clusters", "prod", None),
        ];
        let holders: BTreeMap<String, HostedKey> = [("prod".to_string(), key("team-z", "old"))]
            .into_iter()
            .collect();
        let names = hub_names(&hcs, &holders);
        assert_eq!(names[&key("team-z", "old")], Ok("prod".into()));
        assert!(names[&key("team-a", "new")].is_err());
        assert!(names[&key("clusters", "prod")].is_err());
        // After a restart nothing tells them apart (age is no proof of identity): refused for
        // both and reported, and the HostedCluster named so does not get it either.
        let names = hub_names(&hcs, &BTreeMap::new());
        for k in [key("team-z", "old"), key("team-a", "new")] {
            let tie = names[&k].as_ref().expect_err("a tie");
            assert!(
                tie.contains("claimed by HostedClusters team-a/new, team-z/old (by the annotation"),
                "{tie}"
            );
        }
        let named = names[&key("clusters", "prod")]
            .as_ref()
            .expect_err("refused");
        assert!(
            named.contains(
                "claimed by HostedClusters team-a/new, team-z/old through the annotation"
            ),
            "{named}"
        );
    }

    fn secret(ns: &str, cluster: &str, cert: &str) -> Arc<Secret> {
        let kubeconfig = "apiVersion: v1\nkind: Config\ncurrent-context: hub\nclusters:\n- name: hub\n  cluster: {server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}\ncontexts:\n- name: hub\n  context: {cluster: hub, user: agent}\nusers:\n- name: agent\n  user: {client-certificate: tls.crt, client-key: tls.key}\n";
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

    #[test]
    fn each_hosted_cluster_gets_the_addon_credentials_of_its_own_managed_cluster() {
        let pattern = DEFAULT_ADDON_SECRET_NAMESPACE;
        let secrets = [
            secret("klusterlet-prod", "prod", "CERT-P"),
            secret("klusterlet-dev", "dev", "CERT-D"),
            // A Secret naming another cluster than its namespace says is not used.
            secret("klusterlet-stage", "prod", "CERT-X"),
        ];
        let prod = addon_material(&secrets, pattern, "prod")
            .expect("found")
            .expect("valid");
        let dev = addon_material(&secrets, pattern, "dev")
            .expect("found")
            .expect("valid");
        assert_ne!(prod.fingerprint, dev.fingerprint);
        let stage = addon_material(&secrets, pattern, "stage").expect("found");
        let e = stage.expect_err("names another cluster");
        assert!(
            e.to_string()
                .contains("does not name managed cluster stage"),
            "{e}"
        );
        assert!(addon_material(&secrets, pattern, "absent").is_none());
        assert_eq!(
            addon_secret_ref("hub-creds-{cluster}", "prod"),
            ("hub-creds-prod".to_string(), ADDON_SECRET_NAME.to_string())
        );
    }

    #[test]
    fn the_hosted_cluster_label_is_a_valid_label_value() {
        assert_eq!(
            hosted_cluster_label(&key("clusters", "prod")),
            "clusters.prod"
        );
        let long = hosted_cluster_label(&key(&"n".repeat(60), &"h".repeat(60)));
        assert!(long.len() <= 63, "{long}");
    }
}
