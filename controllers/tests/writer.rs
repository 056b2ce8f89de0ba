//! [`Writer::sync`] against a scripted API server (a `tower_test` mock service under a real
//! `kube::Client`): the exact HTTP calls each situation costs.
//!
//! - a new object: two server-side applies, the metadata then the status subresource;
//! - an unchanged object (or one just written that the cache does not show yet): none;
//! - a status apply answered `404` for an object the cache believed existed: the object is
//!   created again at once (metadata, then status);
//! - an object of ours no longer desired: one delete; another reconciler's: left alone;
//! - a hub writer ([`Writer::for_hub`]) starts no call once one failed (and deletes nothing),
//!   where a local writer goes on with the other objects;
//! - a refused object (a `422`) blocks no other one, is counted in
//!   `update_status_write_errors_total` and retried alone after its back-off (at least the
//!   server's `Retry-After` for a `429`), unless its content changed;
//! - a `429` halves the write concurrency until a sync goes through without one;
//! - a slow write holds up no other object (no batch waits for its slowest write).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::{Request, Response};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::client::Body;
use serde_json::{Value, json};
use tower_test::mock;
use update_status_api::crd::{ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus, labels};
use update_status_controllers::metrics::Metrics;
use update_status_controllers::runtime::writer::{
    Desired, SyncStats, WRITE_CONCURRENCY, WriteError, Writer,
};

/// No object in the cache.
const NONE: &[Arc<ControlPlaneUpdateStatus>] = &[];

const NAMESPACE: &str = "openshift-update-status";
const RECONCILER: &str = "control-plane";
const COLLECTION: &str = "/apis/update.openshift.io/v1alpha1/namespaces/openshift-update-status/controlplaneupdatestatuses";

/// One HTTP call the writer made.
#[derive(Clone, Debug)]
struct Call {
    method: String,
    path: String,
    query: String,
    content_type: String,
    body: Value,
}

impl Call {
    /// `METHOD path`, what most assertions compare.
    fn line(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
    fn is_status(&self) -> bool {
        self.path.ends_with("/status")
    }
}

/// What the scripted API server answers to a call: a status code and a JSON body.
type Script = Box<dyn FnMut(&Call) -> (u16, Value) + Send>;

/// The scripted API server: records every call, answers with the script.
struct ApiServer {
    calls: Arc<Mutex<Vec<Call>>>,
}

impl ApiServer {
    /// A client whose calls `script` answers.
    fn start(script: Script) -> (kube::Client, ApiServer) {
        Self::start_holding(script, None)
    }

    /// As [`ApiServer::start`], but the answers to calls whose path contains `hold.0` are sent
    /// only once the semaphore `hold.1` is closed (a slow object).
    fn start_holding(
        mut script: Script,
        hold: Option<(&'static str, Arc<tokio::sync::Semaphore>)>,
    ) -> (kube::Client, ApiServer) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let recorded = calls.clone();
        tokio::spawn(async move {
            let mut handle = std::pin::pin!(handle);
            while let Some((request, send)) = handle.next_request().await {
                let (parts, body) = request.into_parts();
                let bytes = body.collect_bytes().await.expect("a request body");
                let call = Call {
                    method: parts.method.to_string(),
                    path: parts.uri.path().to_string(),
                    query: parts.uri.query().unwrap_or_default().to_string(),
                    content_type: parts
                        .headers
                        .get(http::header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string(),
                    body: if bytes.is_empty() {
                        Value::Null
                    } else {
                        serde_json::from_slice(&bytes).expect("a JSON request body")
                    },
                };
                let (code, reply) = script(&call);
                let held = hold
                    .as_ref()
                    .filter(|(path, _)| call.path.contains(path))
                    .map(|(_, release)| release.clone());
                recorded
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(call);
                let response = Response::builder()
                    .status(code)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Body::from(serde_json::to_vec(&reply).expect("a reply")))
                    .expect("a response");
                match held {
                    Some(release) => {
                        tokio::spawn(async move {
                            let _closed = release.acquire().await;
                            send.send_response(response);
                        });
                    }
                    None => send.send_response(response),
                }
            }
        });
        (kube::Client::new(service, NAMESPACE), ApiServer { calls })
    }

    /// The calls so far.
    fn calls(&self) -> Vec<Call> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// `METHOD path` of the calls so far.
    fn lines(&self) -> Vec<String> {
        self.calls().iter().map(Call::line).collect()
    }
}

/// What an API server answers to a server-side apply: the object with a new
/// resourceVersion (the status subresource returns the whole object too).
fn applied(call: &Call, resource_version: u32) -> Value {
    let mut object = call.body.clone();
    object["metadata"]["namespace"] = json!(NAMESPACE);
    object["metadata"]["resourceVersion"] = json!(resource_version.to_string());
    if object.get("spec").is_none() {
        object["spec"] = json!({});
    }
    object
}

/// A `Status` failure answer.
fn failure(code: u16, reason: &str) -> (u16, Value) {
    (
        code,
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "reason": reason,
            "message": format!("scripted {reason}"),
            "code": code,
        }),
    )
}

/// What an API server answers to a delete.
fn deleted() -> (u16, Value) {
    (
        200,
        json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}),
    )
}

/// Answers every apply with success (a new resourceVersion each time), every delete too.
fn accept_all() -> Script {
    let mut version = 100;
    Box::new(move |call| {
        version += 1;
        match call.method.as_str() {
            "PATCH" => (200, applied(call, version)),
            _ => deleted(),
        }
    })
}

type MakeWriter =
    fn(kube::Client, &str, &'static str, Arc<Metrics>) -> Writer<ControlPlaneUpdateStatus>;

/// A writer made by `make` for `reconciler`, whose calls `script` answers; the server and the
/// metrics it counts in.
fn writer_with(
    make: MakeWriter,
    reconciler: &'static str,
    script: Script,
) -> (Writer<ControlPlaneUpdateStatus>, ApiServer, Arc<Metrics>) {
    let (client, server) = ApiServer::start(script);
    let metrics = Arc::new(Metrics::new().expect("metrics"));
    let w = make(client, NAMESPACE, reconciler, metrics.clone());
    (w, server, metrics)
}

/// A local writer of the control-plane reconciler, whose calls `script` answers.
fn writer(script: Script) -> (Writer<ControlPlaneUpdateStatus>, ApiServer, Arc<Metrics>) {
    writer_with(Writer::new, RECONCILER, script)
}

/// Expected [`SyncStats`]: metadata applies, status applies, deletes, unchanged objects.
fn counts(meta_writes: u32, status_writes: u32, deletes: u32, unchanged: u32) -> SyncStats {
    SyncStats {
        meta_writes,
        status_writes,
        deletes,
        unchanged,
    }
}

fn owner() -> OwnerReference {
    OwnerReference {
        api_version: "config.openshift.io/v1".into(),
        kind: "ClusterVersion".into(),
        name: "version".into(),
        uid: "6f1c2b9e-0d5a-4c1e-9a43-1f0e8d2c7b10".into(),
        ..Default::default()
    }
}

fn desired(name: &str, completion: u32) -> Desired<ControlPlaneUpdateStatusStatus> {
    Desired {
        name: name.to_string(),
        labels: BTreeMap::from([(labels::SCOPE.to_string(), "control-plane".to_string())]),
        owner: Some(owner()),
        status: ControlPlaneUpdateStatusStatus {
            completion_percent: completion,
            ..Default::default()
        },
    }
}

/// `d` as the watch cache shows it once written by `reconciler`.
fn cached(
    d: &Desired<ControlPlaneUpdateStatusStatus>,
    reconciler: &str,
) -> Arc<ControlPlaneUpdateStatus> {
    let mut o = ControlPlaneUpdateStatus::new(&d.name, Default::default());
    o.metadata.namespace = Some(NAMESPACE.into());
    o.metadata.resource_version = Some("42".into());
    let mut l = d.labels.clone();
    l.insert(labels::RECONCILER.into(), reconciler.into());
    l.insert(labels::MANAGED_BY.into(), labels::MANAGED_BY_VALUE.into());
    l.insert("team".into(), "someone else's label".into());
    o.metadata.labels = Some(l);
    o.metadata.owner_references = d.owner.clone().map(|o| vec![o]);
    o.status = Some(d.status.clone());
    Arc::new(o)
}

fn object_path(name: &str) -> String {
    format!("{COLLECTION}/{name}")
}

fn patch(name: &str) -> String {
    format!("PATCH {}", object_path(name))
}

fn patch_status(name: &str) -> String {
    format!("PATCH {}/status", object_path(name))
}

#[tokio::test]
async fn a_new_object_costs_a_metadata_apply_then_a_status_apply() {
    let (mut w, server, metrics) = writer(accept_all());
    let d = desired("cluster", 40);

    let stats = w.sync([&d], NONE).await.expect("sync");

    assert_eq!(stats, counts(1, 1, 0, 0));
    assert_eq!(server.lines(), [patch("cluster"), patch_status("cluster")]);
    let calls = server.calls();
    for c in &calls {
        assert_eq!(c.content_type, "application/apply-patch+yaml", "{c:?}");
        assert!(
            c.query
                .contains("fieldManager=update-status-controller%2Fcontrol-plane"),
            "{c:?}"
        );
        assert!(c.query.contains("force=true"), "{c:?}");
    }
    // The metadata apply: our labels plus the reconciler's and managed-by, the owner, no status.
    let meta = &calls[0].body;
    assert_eq!(meta["kind"], "ControlPlaneUpdateStatus");
    assert_eq!(meta["metadata"]["name"], "cluster");
    assert_eq!(
        meta["metadata"]["labels"],
        json!({
            labels::SCOPE: "control-plane",
            labels::RECONCILER: RECONCILER,
            labels::MANAGED_BY: labels::MANAGED_BY_VALUE,
        })
    );
    assert_eq!(
        meta["metadata"]["ownerReferences"],
        json!([serde_json::to_value(owner()).expect("owner")])
    );
    assert!(meta.get("status").is_none(), "{meta}");
    // The status apply: the name and the status only.
    let status = &calls[1].body;
    assert_eq!(status["metadata"], json!({"name": "cluster"}));
    assert_eq!(
        status["status"],
        serde_json::to_value(&d.status).expect("status")
    );
    assert_eq!(metrics.writes.total(), 2);
}

#[tokio::test]
async fn an_unchanged_object_costs_no_call() {
    let (mut w, server, metrics) = writer(accept_all());
    let d = desired("cluster", 40);

    let stats = w.sync([&d], &[cached(&d, RECONCILER)]).await.expect("sync");

    assert_eq!(stats, counts(0, 0, 0, 1));
    assert!(server.lines().is_empty(), "{:?}", server.lines());
    assert_eq!(metrics.writes.total(), 0);
}

#[tokio::test]
async fn a_write_the_cache_does_not_show_yet_is_not_made_twice() {
    let (mut w, server, metrics) = writer(accept_all());
    let d = desired("cluster", 40);

    w.sync([&d], NONE).await.expect("first sync");
    assert_eq!(server.calls().len(), 2);
    // The watch cache still shows nothing: the writer trusts what it wrote.
    let stats = w.sync([&d], NONE).await.expect("second sync");

    assert_eq!(stats.writes(), 0);
    assert_eq!(stats.unchanged, 1);
    assert_eq!(server.calls().len(), 2, "{:?}", server.lines());
    assert!(w.has_pending());
    assert_eq!(metrics.writes.total(), 2);
}

#[tokio::test]
async fn a_changed_status_costs_one_status_apply_and_changed_labels_one_metadata_apply() {
    let (mut w, server, metrics) = writer(accept_all());
    let old = desired("cluster", 40);

    let stats = w
        .sync([&desired("cluster", 60)], &[cached(&old, RECONCILER)])
        .await
        .expect("sync");
    assert_eq!(stats, counts(0, 1, 0, 0));
    assert_eq!(server.lines(), [patch_status("cluster")]);
    assert_eq!(metrics.writes.total(), 1);

    let (mut w, server, metrics) = writer(accept_all());
    let mut relabelled = old.clone();
    relabelled
        .labels
        .insert(labels::ASSESSMENT.into(), "progressing".into());
    let stats = w
        .sync([&relabelled], &[cached(&old, RECONCILER)])
        .await
        .expect("sync");
    assert_eq!(stats, counts(1, 0, 0, 0));
    assert_eq!(server.lines(), [patch("cluster")]);
    assert_eq!(metrics.writes.total(), 1);
}

#[tokio::test]
async fn a_404_on_an_object_the_cache_believed_existed_recreates_it() {
    let mut status_calls = 0;
    let mut ok = accept_all();
    let (mut w, server, metrics) = writer(Box::new(move |call| {
        if call.is_status() {
            status_calls += 1;
            if status_calls == 1 {
                return failure(404, "NotFound");
            }
        }
        ok(call)
    }));
    // The cache shows an older status: only the status needs writing, but the object is gone.
    let old = desired("cluster", 40);
    let d = desired("cluster", 60);

    let stats = w
        .sync([&d], &[cached(&old, RECONCILER)])
        .await
        .expect("sync");

    assert_eq!(
        server.lines(),
        [
            patch_status("cluster"),
            patch("cluster"),
            patch_status("cluster")
        ]
    );
    assert_eq!(stats, counts(1, 1, 0, 0));
    let calls = server.calls();
    assert_eq!(
        calls[1].body["metadata"]["labels"][labels::RECONCILER],
        RECONCILER
    );
    assert_eq!(calls[2].body["status"]["completionPercent"], 60);
    assert_eq!(metrics.writes.total(), 2);
}

#[tokio::test]
async fn an_object_no_longer_desired_is_deleted_and_others_objects_are_left_alone() {
    let (mut w, server, metrics) = writer(accept_all());
    let kept = desired("cluster", 40);
    let existing = [
        cached(&kept, RECONCILER),
        cached(&desired("stale", 10), RECONCILER),
        cached(&desired("not-ours", 10), "worker-pools"),
    ];

    let stats = w.sync([&kept], &existing).await.expect("sync");

    assert_eq!(server.lines(), [format!("DELETE {}", object_path("stale"))]);
    assert_eq!(stats, counts(0, 0, 1, 1));
    // Deleted once: not again while the cache still shows it.
    let stats = w.sync([&kept], &existing).await.expect("sync");
    assert_eq!(stats, counts(0, 0, 0, 1));
    assert_eq!(server.calls().len(), 1);
    assert_eq!(metrics.writes.total(), 1);
}

#[tokio::test]
async fn a_slow_write_holds_up_no_other_object() {
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let (client, server) = ApiServer::start_holding(accept_all(), Some(("/slow", release.clone())));
    let metrics = Arc::new(Metrics::new().expect("metrics"));
    let mut w: Writer<ControlPlaneUpdateStatus> =
        Writer::new(client, NAMESPACE, RECONCILER, metrics);
    // The slow object first, then many more than a pass writes at once (and than the 256 a
    // batch held when the writer still waited for each batch's slowest write).
    let others = 300;
    let wanted: Vec<_> = std::iter::once(desired("slow", 1))
        .chain((0..others).map(|i| desired(&format!("c{i}"), 1)))
        .collect();
    let sync = tokio::spawn(async move {
        let result = w.sync(&wanted, NONE).await;
        (w, result)
    });
    // Every other object is written in full while the slow one's first call waits.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while server.calls().len() < 1 + 2 * others {
        assert!(
            std::time::Instant::now() < deadline,
            "only {} of {} calls made while one write was slow",
            server.calls().len(),
            1 + 2 * others
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!sync.is_finished(), "the slow write is still waiting");
    release.close();
    let (_w, result) = sync.await.expect("the sync task");
    assert_eq!(result.expect("sync"), counts(301, 301, 0, 0));
    assert_eq!(server.calls().len(), 2 + 2 * others);
}

/// `count` new objects and one stale copy to delete, every apply answered `403`: the calls a
/// writer makes.
async fn sync_against_a_forbidding_server(
    make: MakeWriter,
    count: usize,
) -> (Result<SyncStats, WriteError>, Vec<Call>, Arc<Metrics>) {
    let script: Script = Box::new(|call| match call.method.as_str() {
        "PATCH" => failure(403, "Forbidden"),
        _ => deleted(),
    });
    let (mut w, server, metrics) = writer_with(make, "hub-sync", script);
    let wanted: Vec<_> = (0..count).map(|i| desired(&format!("c{i}"), 1)).collect();
    let stale = cached(&desired("stale", 1), "hub-sync");
    let result = w.sync(&wanted, &[stale]).await;
    (result, server.calls(), metrics)
}

#[tokio::test]
async fn a_hub_writer_starts_no_call_once_one_failed() {
    let count = WRITE_CONCURRENCY + 1;
    let (result, calls, metrics) = sync_against_a_forbidding_server(Writer::for_hub, count).await;

    // The first WRITE_CONCURRENCY applies were already under way when the first failed; the
    // last object, the status applies and the deletion are not attempted.
    let lines: Vec<String> = calls.iter().map(Call::line).collect();
    assert_eq!(lines.len(), WRITE_CONCURRENCY, "{lines:?}");
    assert!(
        calls.iter().all(|c| c.method == "PATCH" && !c.is_status()),
        "{lines:?}"
    );
    match result {
        Err(WriteError::Api {
            verb, name, source, ..
        }) => {
            assert_eq!(verb, "apply");
            assert!(name.starts_with('c'), "{name}");
            assert!(
                matches!(*source, kube::Error::Api(ref s) if s.code == 403),
                "{source}"
            );
        }
        other => panic!("expected the 403, got {other:?}"),
    }
    assert_eq!(metrics.hub.total_writes(), 0);
}

#[tokio::test]
async fn a_local_writer_goes_on_after_a_failed_call() {
    let count = WRITE_CONCURRENCY + 1;
    let (result, calls, metrics) = sync_against_a_forbidding_server(Writer::new, count).await;

    let lines: Vec<String> = calls.iter().map(Call::line).collect();
    // Every object's apply is tried, and the stale object is deleted.
    let mut expected: Vec<String> = (0..count).map(|i| patch(&format!("c{i}"))).collect();
    expected.push(format!("DELETE {}", object_path("stale")));
    let mut sorted = lines.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
    assert!(
        matches!(result, Err(WriteError::Api { verb: "apply", .. })),
        "{result:?}"
    );
    assert_eq!(metrics.writes.total(), 1, "the deletion");
}

/// Answers every apply of the object `bad` with `answer`, everything else with success.
fn refuse_one(answer: Arc<Mutex<Option<(u16, Value)>>>) -> Script {
    let mut accept = accept_all();
    Box::new(move |call| {
        let refused = answer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match refused {
            Some(a) if call.method == "PATCH" && call.path.contains("/bad") => a,
            _ => accept(call),
        }
    })
}

#[tokio::test]
async fn a_refused_object_blocks_no_other_and_is_retried_after_its_back_off() {
    let answer = Arc::new(Mutex::new(Some(failure(422, "Invalid"))));
    let (mut w, server, metrics) = writer(refuse_one(answer.clone()));
    let wanted = [desired("a", 1), desired("bad", 1), desired("c", 1)];

    // The 422 fails the pass, but both other objects are written in full.
    let result = w.sync(&wanted, NONE).await;
    assert!(
        matches!(&result, Err(WriteError::Api { name, .. }) if name == "bad"),
        "{result:?}"
    );
    let mut lines = server.lines();
    lines.sort();
    let mut expected = vec![
        patch("a"),
        patch_status("a"),
        patch("bad"),
        patch("c"),
        patch_status("c"),
    ];
    expected.sort();
    assert_eq!(lines, expected);
    assert_eq!(
        metrics.writes.errors("ControlPlaneUpdateStatus", "invalid"),
        1
    );
    assert_eq!(w.failing(), 1);
    let wait = w.retry_in().expect("a back-off");
    assert!(
        wait > Duration::from_millis(800) && wait <= Duration::from_millis(1100),
        "{wait:?}"
    );

    // Within its back-off the refused object is left alone (the others are in the cache).
    let cache = [
        cached(&wanted[0], RECONCILER),
        cached(&wanted[2], RECONCILER),
    ];
    let stats = w.sync(&wanted, &cache).await.expect("nothing to write");
    assert_eq!(stats, counts(0, 0, 0, 2));
    assert_eq!(server.calls().len(), 5);

    // After it, retried alone; refused again: the back-off doubles.
    tokio::time::sleep(wait + Duration::from_millis(50)).await;
    assert!(w.sync(&wanted, &cache).await.is_err());
    assert_eq!(server.lines()[5..], [patch("bad")]);
    assert_eq!(
        metrics.writes.errors("ControlPlaneUpdateStatus", "invalid"),
        2
    );
    let wait = w.retry_in().expect("a back-off");
    assert!(wait > Duration::from_millis(1700), "{wait:?}");

    // Accepted once its back-off passed: written, and the back-off is over.
    *answer.lock().unwrap_or_else(PoisonError::into_inner) = None;
    tokio::time::sleep(wait + Duration::from_millis(50)).await;
    let stats = w.sync(&wanted, &cache).await.expect("accepted");
    assert_eq!(stats, counts(1, 1, 0, 2));
    assert_eq!(w.failing(), 0);
    assert_eq!(w.retry_in(), None);
    assert_eq!(
        metrics.writes.errors("ControlPlaneUpdateStatus", "invalid"),
        2
    );
}

#[tokio::test]
async fn a_throttled_object_waits_at_least_the_servers_retry_after() {
    let (code, mut body) = failure(429, "TooManyRequests");
    body["details"] = json!({"retryAfterSeconds": 7});
    let answer = Arc::new(Mutex::new(Some((code, body))));
    let (mut w, _server, metrics) = writer(refuse_one(answer));
    assert!(w.sync(&[desired("bad", 1)], NONE).await.is_err());
    assert_eq!(
        metrics
            .writes
            .errors("ControlPlaneUpdateStatus", "throttled"),
        1
    );
    let wait = w.retry_in().expect("a back-off");
    assert!(wait > Duration::from_secs(6), "{wait:?}");
}

#[tokio::test]
async fn a_throttling_server_halves_the_write_concurrency_until_it_stops() {
    let answer = Arc::new(Mutex::new(Some(failure(429, "TooManyRequests"))));
    let (mut w, _server, _metrics) = writer(refuse_one(answer.clone()));
    assert_eq!(w.concurrency(), WRITE_CONCURRENCY);
    // Each pass with a throttled call halves it (new content: tried at once each time).
    assert!(w.sync(&[desired("bad", 1)], NONE).await.is_err());
    assert_eq!(w.concurrency(), WRITE_CONCURRENCY / 2);
    assert!(w.sync(&[desired("bad", 2)], NONE).await.is_err());
    assert_eq!(w.concurrency(), WRITE_CONCURRENCY / 4);
    // A batch without a throttled call (a 422 too) doubles it back.
    *answer.lock().unwrap_or_else(PoisonError::into_inner) = Some(failure(422, "Invalid"));
    assert!(w.sync(&[desired("bad", 3)], NONE).await.is_err());
    assert_eq!(w.concurrency(), WRITE_CONCURRENCY / 2);
    *answer.lock().unwrap_or_else(PoisonError::into_inner) = None;
    w.sync(&[desired("bad", 4)], NONE).await.expect("accepted");
    assert_eq!(w.concurrency(), WRITE_CONCURRENCY);
    w.sync(&[desired("bad", 5)], NONE).await.expect("accepted");
    assert_eq!(w.concurrency(), WRITE_CONCURRENCY, "never above the bound");
}

#[tokio::test]
async fn new_content_for_a_refused_object_is_tried_at_once() {
    let answer = Arc::new(Mutex::new(Some(failure(422, "Invalid"))));
    let (mut w, server, metrics) = writer(refuse_one(answer.clone()));
    assert!(w.sync(&[desired("bad", 1)], NONE).await.is_err());
    // The same content waits for its back-off; a changed input is written without waiting.
    w.sync(&[desired("bad", 1)], NONE)
        .await
        .expect("backing off");
    assert_eq!(server.calls().len(), 1);
    *answer.lock().unwrap_or_else(PoisonError::into_inner) = None;
    let stats = w.sync(&[desired("bad", 2)], NONE).await.expect("accepted");
    assert_eq!(stats, counts(1, 1, 0, 0));
    assert_eq!(w.failing(), 0);
    assert_eq!(
        metrics.writes.errors("ControlPlaneUpdateStatus", "invalid"),
        1
    );
}
