//! The cluster-claims reconciler: publishes how the cluster's update goes as Open Cluster
//! Management `ClusterClaim`s (`state.update.openshift.io`, `target.update.openshift.io`,
//! `workers-complete.update.openshift.io`), which the klusterlet's registration agent copies
//! into the cluster's ManagedCluster on the hub, for ACM's upgrade tools and Placements
//! (docs/acm.md). What they say is [`update_status_assess::claims`] (pure); this file reads our status
//! objects, and writes the claims that differ.
//!
//! - Only where the ClusterClaim kind is served (a cluster managed by OCM/ACM: the klusterlet
//!   installs its CRD): elsewhere one info line, then a look again every [`RECHECK`] (one list of
//!   at most three objects on the cluster's own API server), never an error.
//! - Written only on change: the claims on the server are known from a watch of our claims
//!   (label `update.openshift.io/reconciler=cluster-claims`; nothing is written before its first
//!   list), which also wakes the reconciler, so a claim deleted or edited by someone else is
//!   restored at once. What it wrote counts as on the server until the watch says otherwise.
//! - Claims are cluster-scoped: the reconciler runs only while the controller leads, like every
//!   writer. Hosted mode runs none (hosted clusters are imported by ACM with their own klusterlet;
//!   docs/acm.md).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use serde_json::json;
use tokio::sync::Notify;
use update_status_api::acm::ClusterClaim;
use update_status_api::crd::labels;

use crate::cache::watch::Caches;
use crate::metrics::Metrics;
use crate::reconcilers::context::Context;
use crate::runtime::runner::{Reconcile, Requeue};
use crate::runtime::writer::{Direct, WriteError, field_manager};
use update_status_assess::claims::{CLAIM_NAMES, Claim, cluster_claims};

/// Name of this reconciler (label value, field-manager suffix, metrics label).
pub const NAME: &str = "cluster-claims";
/// Kind label of the write metrics.
const KIND: &str = "ClusterClaim";
/// How often to look again for the ClusterClaim kind where it is not served.
pub const RECHECK: Duration = Duration::from_secs(300);
/// How long a pass waits for the watch of the claims to list before it gives up (the watch
/// wakes the reconciler when it has listed).
const SYNC_WAIT: Duration = Duration::from_secs(10);

/// Our claims as the server has them (name → value), kept by the watch and by our writes.
#[derive(Default)]
struct ServerView {
    claims: BTreeMap<String, String>,
    /// The claims of the list in progress (between `Init` and `InitDone`).
    listing: BTreeMap<String, String>,
    /// The last watch error said (said once until the watch works again).
    error: Option<String>,
}

type View = Arc<Mutex<ServerView>>;

fn lock(view: &View) -> std::sync::MutexGuard<'_, ServerView> {
    // Plain maps: consistent whatever panicked while holding the lock.
    view.lock().unwrap_or_else(|e| e.into_inner())
}

/// The watch of our claims, stopped when dropped.
struct Watching {
    view: View,
    /// True once the watch has listed: the view is the server's (writes wait for it, so that
    /// the list cannot replace what they wrote with an older state and make them write again).
    synced: tokio::sync::watch::Receiver<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The reconciler's state.
pub struct ClaimsReconciler {
    api: Api<ClusterClaim>,
    caches: Caches,
    metrics: Arc<Metrics>,
    /// Woken by the watch of our claims.
    wake: Arc<Notify>,
    /// `Some` while the kind is served and watched.
    watching: Option<Watching>,
    /// The kind was found not served (said once).
    absent_said: bool,
}

fn selector() -> String {
    format!("{}={NAME}", labels::RECONCILER)
}

impl ClaimsReconciler {
    /// Creates the reconciler; `wake` is its own wake-up (the watch of the claims notifies it).
    /// (ClusterClaims are cluster-scoped: the context's namespace is not used.)
    pub fn new(ctx: Context, wake: Arc<Notify>) -> Self {
        ClaimsReconciler {
            api: Api::all(ctx.client),
            caches: ctx.caches,
            metrics: ctx.metrics,
            wake,
            watching: None,
            absent_said: false,
        }
    }

    /// Lists (one object at most) to know whether the kind is served; starts the watch of our
    /// claims if it is. `Ok(false)`: not served (said once).
    async fn start_watching(&mut self) -> Result<bool, kube::Error> {
        match self
            .api
            .list(&ListParams::default().labels(&selector()).limit(1))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {
                if !self.absent_said {
                    tracing::info!(
                        reconciler = NAME,
                        "ClusterClaim (cluster.open-cluster-management.io/v1alpha1) is not served on this cluster (not managed by Open Cluster Management/ACM): no cluster claims; looked for again every {RECHECK:?}"
                    );
                    self.absent_said = true;
                }
                return Ok(false);
            }
            Err(e) => return Err(e),
        };
        if std::mem::take(&mut self.absent_said) {
            tracing::info!(
                reconciler = NAME,
                "ClusterClaim is served now: publishing cluster claims"
            );
        }
        let view: View = Arc::default();
        let (synced_tx, synced) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(watch(
            self.api.clone(),
            view.clone(),
            self.wake.clone(),
            synced_tx,
        ));
        self.watching = Some(Watching { view, synced, task });
        Ok(true)
    }

    /// Applies the claims that differ from the server's, deletes ours no longer desired.
    async fn write(&mut self, desired: &[Claim]) -> Result<(), WriteError> {
        let Some(watching) = self.watching.as_ref() else {
            return Ok(());
        };
        let view = watching.view.clone();
        let mut synced = watching.synced.clone();
        // The watch lists within a round trip; its errors are said by the watch itself.
        if tokio::time::timeout(SYNC_WAIT, synced.wait_for(|s| *s))
            .await
            .is_err()
        {
            return Ok(());
        }
        let have = lock(&view).claims.clone();
        let mut first_error = None;
        let mut writes = self
            .apply_claims(desired, &have, &view, &mut first_error)
            .await;
        writes += self
            .delete_stale(desired, &have, &view, &mut first_error)
            .await;
        if writes > 0 {
            let said: Vec<String> = desired
                .iter()
                .map(|c| format!("{}={}", c.name, c.value))
                .collect();
            tracing::info!(reconciler = NAME, writes, claims = %said.join(" "), "cluster claims updated");
        }
        first_error.map_or(Ok(()), Err)
    }

    /// A direct write of the claim `name` (cluster-scoped), counted as ClusterClaim writes.
    fn direct<'a>(&'a self, name: &'a str) -> Direct<'a> {
        Direct {
            kind: KIND,
            namespace: "",
            name,
            metrics: &self.metrics,
        }
    }

    /// Applies the claims of `desired` that differ from `have` (the server's); the writes made.
    async fn apply_claims(
        &self,
        desired: &[Claim],
        have: &BTreeMap<String, String>,
        view: &View,
        first_error: &mut Option<WriteError>,
    ) -> u32 {
        let params = PatchParams::apply(&field_manager(NAME)).force();
        let mut writes = 0;
        for claim in desired {
            if have.get(claim.name) == Some(&claim.value) {
                continue;
            }
            let obj = json!({
                "apiVersion": "cluster.open-cluster-management.io/v1alpha1",
                "kind": KIND,
                "metadata": {
                    "name": claim.name,
                    "labels": {
                        labels::RECONCILER: NAME,
                        labels::MANAGED_BY: labels::MANAGED_BY_VALUE,
                    },
                },
                "spec": {"value": claim.value},
            });
            let direct = self.direct(claim.name);
            match direct.apply(&self.api, &params, &obj).await {
                Ok(()) => {
                    writes += 1;
                    lock(view)
                        .claims
                        .insert(claim.name.to_string(), claim.value.clone());
                }
                Err(e) => {
                    direct.count_failure(&e);
                    first_error.get_or_insert(e);
                }
            }
        }
        writes
    }

    /// Deletes ours of `have` no longer desired; the deletions made.
    async fn delete_stale(
        &self,
        desired: &[Claim],
        have: &BTreeMap<String, String>,
        view: &View,
        first_error: &mut Option<WriteError>,
    ) -> u32 {
        let mut writes = 0;
        for name in stale(have.keys().map(String::as_str), desired) {
            let direct = self.direct(name);
            match direct.delete(&self.api, &DeleteParams::default()).await {
                Ok(deleted) => {
                    writes += u32::from(deleted);
                    lock(view).claims.remove(name);
                }
                Err(e) => {
                    direct.count_failure(&e);
                    first_error.get_or_insert(e);
                }
            }
        }
        writes
    }
}

/// The claims of `have` (the server's, by our label) to delete: ours no longer desired. A claim
/// of another name carrying our label (someone else's, labelled by mistake or on purpose) is
/// not ours to delete, and RBAC would refuse it: it is left alone, not tried every pass.
fn stale<'a>(have: impl Iterator<Item = &'a str>, desired: &[Claim]) -> Vec<&'a str> {
    have.filter(|n| CLAIM_NAMES.contains(n))
        .filter(|n| !desired.iter().any(|c| c.name == *n))
        .collect()
}

/// Keeps `view` equal to our claims on the server and wakes the reconciler at each change.
/// Errors are said once (until the watch works again); the watcher retries with back-off.
async fn watch(
    api: Api<ClusterClaim>,
    view: View,
    wake: Arc<Notify>,
    synced: tokio::sync::watch::Sender<bool>,
) {
    let config = watcher::Config::default().labels(&selector());
    let mut events = watcher(api, config).default_backoff().boxed();
    while let Some(event) = events.next().await {
        let mut v = lock(&view);
        match event {
            Ok(watcher::Event::Init) => v.listing.clear(),
            Ok(watcher::Event::InitApply(c)) => {
                let name = c.name_any();
                v.listing.insert(name, c.spec.value);
            }
            Ok(watcher::Event::InitDone) => {
                v.claims = std::mem::take(&mut v.listing);
                synced.send_replace(true);
                if v.error.take().is_some() {
                    tracing::info!(reconciler = NAME, "watching the cluster claims again");
                }
            }
            Ok(watcher::Event::Apply(c)) => {
                let name = c.name_any();
                v.claims.insert(name, c.spec.value);
            }
            Ok(watcher::Event::Delete(c)) => {
                v.claims.remove(&c.name_any());
            }
            Err(e) => {
                let message = e.to_string();
                if v.error.as_deref() != Some(message.as_str()) {
                    tracing::warn!(reconciler = NAME, error = %message, "watching the cluster claims failed; retrying");
                    v.error = Some(message);
                }
                continue;
            }
        }
        drop(v);
        wake.notify_one();
    }
}

impl Reconcile for ClaimsReconciler {
    const NAME: &'static str = NAME;
    /// One pass.
    async fn reconcile(&mut self, _now: Timestamp) -> Result<Requeue, WriteError> {
        if self.watching.is_none() {
            match self.start_watching().await {
                Ok(true) => {}
                Ok(false) => return Ok(Requeue::After(RECHECK)),
                Err(e) => {
                    return Err(WriteError::Api {
                        verb: "list",
                        kind: KIND.into(),
                        namespace: String::new(),
                        name: selector(),
                        source: Box::new(e),
                    });
                }
            }
        }
        let cps = self.caches.control_plane_statuses.state();
        let cp = cps
            .iter()
            .find(|o| o.name_any() == update_status_assess::naming::CONTROL_PLANE_STATUS_NAME)
            .and_then(|o| o.status.as_ref());
        let wps = self.caches.worker_pool_statuses.state();
        let pools: Vec<_> = wps.iter().filter_map(|o| o.status.as_ref()).collect();
        let desired = cluster_claims(cp, &pools);
        let result = self.write(&desired).await;
        if let Err(WriteError::Api { source, .. }) = &result
            && matches!(source.as_ref(), kube::Error::Api(s) if s.code == 404)
        {
            // The kind went away (the klusterlet was removed): back to looking for it.
            self.watching = None;
        }
        result.map(|()| Requeue::Never)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_assess::claims::cluster_claims;

    /// The RBAC of config/rbac lets the agent create, patch and delete exactly the claims it
    /// writes, and create no other (issue #48 item 3).
    #[test]
    fn the_shipped_rbac_names_every_claim_written() {
        let role = include_str!("../../../config/rbac/role.yaml");
        let named: Vec<&str> = role
            .lines()
            .filter(|l| l.trim_start().starts_with("resourceNames:") && l.contains(".update."))
            .flat_map(|l| l.split('"').skip(1).step_by(2))
            .collect();
        let rules: Vec<&str> = role.split("- apiGroups:").collect();
        let claims: Vec<&&str> = rules
            .iter()
            .filter(|r| r.contains("\"clusterclaims\""))
            .collect();
        for rule in &claims {
            let verbs = rule.lines().find(|l| l.contains("verbs:")).unwrap_or("");
            if verbs.contains("\"create\"")
                || verbs.contains("\"patch\"")
                || verbs.contains("\"delete\"")
            {
                assert!(
                    rule.contains("resourceNames:"),
                    "a write of ClusterClaims without resourceNames: {rule}"
                );
            }
        }
        assert_eq!(named, CLAIM_NAMES, "the claims written, and only those");
        let cp = update_status_api::crd::ControlPlaneUpdateStatusStatus {
            versions: update_status_api::crd::ControlPlaneVersions {
                target: "4.18.3".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let written: Vec<&str> = cluster_claims(Some(&cp), &[])
            .iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(named, written, "config/rbac/role.yaml resourceNames");
        assert_eq!(selector(), "update.openshift.io/reconciler=cluster-claims");
    }

    /// Issue #48 item 3: a foreign claim carrying our label is not deleted (RBAC refuses it:
    /// a failing DELETE every pass); ours no longer desired are.
    #[test]
    fn only_our_claims_are_deleted() {
        let desired = [Claim {
            name: update_status_api::acm::CLAIM_STATE,
            value: "Completed".into(),
        }];
        let have = [
            "region.open-cluster-management.io",
            "state.update.openshift.io",
            "target.update.openshift.io",
            "foreign.example.com",
        ];
        assert_eq!(
            stale(have.into_iter(), &desired),
            ["target.update.openshift.io"]
        );
    }
}
