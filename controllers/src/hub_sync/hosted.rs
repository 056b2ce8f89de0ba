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
//!   name), is refused for that HostedCluster only: a warning, and its
//!   `update_status_hub_sync_up{hosted_cluster}` is 0; the first of the two (by namespace and
//!   name) keeps the name.
//! - **Sessions follow the HostedClusters:** a new HostedCluster starts one; a HostedCluster
//!   deleted (or being deleted) retires its session, which deletes its copies on the hub and
//!   ends (its metric series go with it); a changed managed-cluster name retires the old
//!   session (its copies go) and starts one under the new name.
//! - **Only the concerned session wakes:** the manager is woken by the hosted watches, groups
//!   our objects by hosted cluster once, and wakes a session only when the names or
//!   resourceVersions of its objects changed (with hundreds of hosted clusters, one changing
//!   does not make every session recompute its copies).
//! - The sessions share one hub client (a session whose credentials are rejected reads the
//!   kubeconfig again for itself), the metrics and the shutdown signal. Each has its own hub
//!   watches, in its own namespace, so the hub Role of `config/hub/` (namespaced) is enough.

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kube::ResourceExt;
use kube::runtime::reflector::Store;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use update_status_api::crd::labels;
use update_status_api::hosted::HostedCluster;

use super::validate_cluster_name;
use super::{HubConfig, HubError, HubSync, LocalObjects, RESYNC, load_client};
use crate::metrics::Metrics;
use crate::runtime::existing::Cached;

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
pub fn hub_names(
    hosted_clusters: &[Arc<HostedCluster>],
) -> BTreeMap<HostedKey, Result<String, String>> {
    let mut live: Vec<(HostedKey, String)> = hosted_clusters
        .iter()
        .filter(|hc| hc.metadata.deletion_timestamp.is_none())
        .filter_map(|hc| {
            let key = (hc.metadata.namespace.clone()?, hc.metadata.name.clone()?);
            let name = hc
                .annotations()
                .get(MANAGED_CLUSTER_NAME_ANNOTATION)
                .filter(|n| !n.is_empty())
                .cloned()
                .unwrap_or_else(|| key.1.clone());
            Some((key, name))
        })
        .collect();
    live.sort();
    let mut taken: HashMap<String, HostedKey> = HashMap::new();
    let mut out = BTreeMap::new();
    for (key, name) in live {
        let result = if let Err(e) = validate_cluster_name(&name) {
            Err(e.to_string())
        } else if let Some(first) = taken.get(&name) {
            Err(format!(
                "managed cluster name {name:?} is already the hub name of HostedCluster {}/{}; set the annotation {MANAGED_CLUSTER_NAME_ANNOTATION} on one of them",
                first.0, first.1
            ))
        } else {
            taken.insert(name.clone(), key.clone());
            Ok(name)
        };
        out.insert(key, result);
    }
    out
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
    kubeconfig: PathBuf,
    include_progress: bool,
    client: kube::Client,
    hosted_clusters: Store<HostedCluster>,
    local: LocalObjects,
    wake: Arc<Notify>,
    metrics: Arc<Metrics>,
}

/// The manager's state: sessions by HostedCluster, retiring ones, refusals reported.
#[derive(Default)]
struct Sessions {
    active: BTreeMap<HostedKey, Running>,
    retiring: Vec<(HostedKey, Running)>,
    refused: BTreeMap<HostedKey, String>,
}

fn label((ns, name): &HostedKey) -> String {
    format!("{ns}/{name}")
}

impl HostedHubSync {
    /// Reads the hub kubeconfig (no call to the hub): an unreadable one is a configuration
    /// error, reported before anything starts. `wake` is notified by the HostedCluster watch
    /// and the watches of our objects.
    pub async fn new(
        kubeconfig: PathBuf,
        include_progress: bool,
        hosted_clusters: Store<HostedCluster>,
        local: LocalObjects,
        wake: Arc<Notify>,
        metrics: Arc<Metrics>,
    ) -> Result<Self, HubError> {
        let client = load_client(&kubeconfig).await?;
        Ok(HostedHubSync {
            kubeconfig,
            include_progress,
            client,
            hosted_clusters,
            local,
            wake,
            metrics,
        })
    }

    /// Runs until `shutdown` changes. Never fails.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        tracing::info!(
            kubeconfig = %self.kubeconfig.display(),
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
        } = s;
        retiring.retain(|(key, r)| {
            let done = r.task.is_finished();
            // A refused name keeps its series at 0 (the alert's input).
            if done && !active.contains_key(key) && !refused.contains_key(key) {
                self.metrics.hub_sync_forget(&label(key));
            }
            !done
        });
        // A session that ended while active (retired and revived in the same instant): started
        // again below.
        active.retain(|_, r| !r.task.is_finished());
        let wanted = hub_names(&self.hosted_clusters.state());
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
                self.metrics.hub_sync_forget(&label(k));
            }
            keep
        });
        for (key, result) in wanted {
            match result {
                Err(why) => {
                    if s.refused.get(&key) != Some(&why) {
                        tracing::warn!(hosted_cluster = %label(&key), reason = %why, "hosted cluster not reported to the hub");
                        self.metrics.hub_sync_failed(&label(&key), "config");
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

    fn start(
        &self,
        key: &HostedKey,
        hub_name: String,
        ended: &Arc<Notify>,
        shutdown: &watch::Receiver<bool>,
    ) -> Running {
        let wake = Arc::new(Notify::new());
        let retired = Arc::new(AtomicBool::new(false));
        let sync = HubSync::with_client(
            HubConfig {
                kubeconfig: self.kubeconfig.clone(),
                cluster_name: hub_name.clone(),
                include_progress: self.include_progress,
            },
            self.client.clone(),
            self.local.scoped(&key.0, &key.1),
            wake.clone(),
            self.metrics.clone(),
        )
        .for_hosted_cluster(label(key), retired.clone());
        tracing::info!(hosted_cluster = %label(key), hub_namespace = %hub_name, "hub session started");
        let (ended, shutdown) = (ended.clone(), shutdown.clone());
        let task = tokio::spawn(async move {
            sync.run(shutdown).await;
            ended.notify_one();
        });
        wake.notify_one();
        Running {
            hub_name,
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
        let names = hub_names(&[
            hc("clusters", "prod", None),
            hc("clusters", "dev", Some("dev-east")),
            hc("clusters", "empty", Some("")),
        ]);
        assert_eq!(names[&key("clusters", "prod")], Ok("prod".into()));
        assert_eq!(names[&key("clusters", "dev")], Ok("dev-east".into()));
        assert_eq!(names[&key("clusters", "empty")], Ok("empty".into()));
    }

    #[test]
    fn a_bad_or_shared_hub_name_is_refused_for_that_hosted_cluster_only() {
        let names = hub_names(&[
            hc("team-b", "prod", None),
            hc("team-a", "prod", None),
            hc("clusters", "x", Some("Not_A_Label")),
            hc("clusters", "y", None),
        ]);
        assert_eq!(
            names[&key("team-a", "prod")],
            Ok("prod".into()),
            "first by namespace keeps it"
        );
        let shared = names[&key("team-b", "prod")].as_ref().expect_err("shared");
        assert!(
            shared.contains("team-a/prod") && shared.contains(MANAGED_CLUSTER_NAME_ANNOTATION),
            "{shared}"
        );
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
    }

    #[test]
    fn hosted_clusters_being_deleted_have_no_hub_name() {
        let mut gone = (*hc("clusters", "old", None)).clone();
        gone.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        let names = hub_names(&[Arc::new(gone), hc("clusters", "new", None)]);
        assert_eq!(names.len(), 1);
        assert!(names.contains_key(&key("clusters", "new")));
    }
}
