//! The hub session: one hub client with reflectors of our copies ([`super::watches`]) and hub
//! writers, and one pass of the sync within [`PASS_TIMEOUT`] ([`attempt`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Api;
use kube::api::ListParams;
use kube::runtime::reflector::Store;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use update_status_api::acm::ManagedClusterAddOn;
use update_status_api::crd::{
    Condition, ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus,
};
use update_status_assess::redact::redact_urls_in;

use super::addon::{addon, owner_of};
use super::config::{NAME, PASS_TIMEOUT, RESYNC};
use super::copies::HubCopies;
use super::errors::HubError;
use super::heartbeat;
use super::watches::{WatchContext, spawn_watch};
use crate::runtime::writer::{SyncStats, WriteError, Writer};

/// One hub client with its reflectors and writers; dropping it stops the reflectors.
pub(super) struct Session {
    /// Refuses every write once the leader-election Lease is lost ([`SessionSettings::gate`]).
    pub(super) client: kube::Client,
    /// Of the credentials the client was made from.
    pub(super) fingerprint: [u8; 32],
    /// The hub namespace's ManagedClusterAddOn of our add-on, owner of the copies (`None`: none,
    /// not an ACM hub, or not readable), and when it was read.
    pub(super) addon: Option<(Option<Arc<ManagedClusterAddOn>>, Instant)>,
    pub(super) namespace: String,
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

impl Session {
    /// A session on `client`, whose writes `gate` stops once the Lease is lost (the local
    /// writers' gate: issue #38 item 10).
    ///
    /// One call (`GET /version`) opens the connection before the three watches start: started
    /// together on a new client, each would open a connection of its own (hyper learns that the
    /// server speaks HTTP/2 from the first TLS handshake), two of them closed again at once: two
    /// wasted TLS handshakes on the hub, and two wasted tunnels through a proxy. Its failure is
    /// the watches' to report.
    pub(super) async fn start(
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

    /// The condition `type_` of the ControlPlaneUpdateStatus copy `name` as the hub holds it.
    pub(super) fn hub_condition(&self, name: &str, type_: &str) -> Option<Condition> {
        self.hub_control_planes
            .state()
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(name))?
            .status
            .as_ref()?
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
            .cloned()
    }

    /// Every hub reflector has listed once (before that, an empty cache would read as "no
    /// copies yet" and cost a write per object).
    pub(super) fn listed(&self) -> bool {
        self.listed.iter().all(|l| l.load(Ordering::SeqCst))
    }

    pub(super) fn has_pending(&self) -> bool {
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
    pub(super) fn last_reported(&self, name: &str) -> Option<jiff::Timestamp> {
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

/// One pass within [`PASS_TIMEOUT`], probing the hub first if asked: the copies, owned by the
/// hub namespace's ManagedClusterAddOn when there is one, written; `None` when `shutdown`
/// changed meanwhile.
pub(super) async fn attempt(
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
    use std::sync::{Mutex, PoisonError};

    use tokio::sync::Notify;

    use super::*;
    use crate::hub_sync::copies::{desired_copies, hub_selector_for};
    use crate::metrics::Metrics;

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
}
