//! The API server's raw write rate for the controller's objects (issue #16, goal 3): the same
//! UpdateInsights the controller writes at its cold start (names, labels, owners, statuses,
//! field manager), created and status-updated as fast as the API server takes them, on the
//! same control plane, in a namespace the controller does not watch. Each object costs the same
//! two writes as the controller's (server-side apply of the metadata, then of the status
//! subresource).
//!
//! Measured after a warm-up run (not counted), three times: into a namespace nobody watches
//! before the controller's cold start and into another one after it (the goal's raw rate is
//! their mean), and into a third while a watcher decodes every event there, as the
//! controller's own cache of its objects does (what that watch costs the API server and the
//! CPUs it shares).

use std::time::Instant;

use futures::StreamExt;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use update_status_api::crd::{UpdateInsight, UpdateInsightStatus};
use update_status_assess::compose::Desired;
use update_status_controllers::runtime::writer;

/// Where the raw writes go (not the controller's namespace).
pub const RAW_NAMESPACE: &str = "bench-raw-writes";
/// Where the warm-up raw writes go (not counted).
pub const RAW_WARMUP_NAMESPACE: &str = "bench-raw-writes-warmup";
/// Where the raw writes after the cold start go.
pub const RAW_AFTER_NAMESPACE: &str = "bench-raw-writes-after";
/// Where the raw writes with a watch go.
pub const RAW_WATCHED_NAMESPACE: &str = "bench-raw-writes-watched";

/// Points the owner references of `objects` at the live Nodes (their uids as the API server
/// gave them); an owner that is not a live Node is dropped (the garbage collector would delete
/// its dependent).
pub async fn own_by_live_nodes(
    client: &Client,
    objects: &mut [Desired<UpdateInsightStatus>],
) -> anyhow::Result<()> {
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
    let uids: std::collections::HashMap<String, String> = nodes
        .list_metadata(&Default::default())
        .await?
        .items
        .into_iter()
        .filter_map(|m| Some((m.metadata.name?, m.metadata.uid?)))
        .collect();
    for d in objects {
        d.owner = d.owner.take().and_then(|mut o| {
            (o.kind == "Node").then_some(())?;
            o.uid = uids.get(&o.name)?.clone();
            Some(o)
        });
    }
    Ok(())
}

/// What one raw run measured.
#[derive(Clone, Copy, Debug, Default)]
pub struct RawRun {
    /// Writes made.
    pub writes: u64,
    /// Seconds they took.
    pub secs: f64,
    /// Mean round trip of one object's two writes, at the writer (ms).
    pub object_ms: f64,
    /// Mean time of one apply inside the API server (ms, [`server_apply_time`]).
    pub apply_ms: f64,
}

impl RawRun {
    /// Writes per second.
    pub fn rate(&self) -> f64 {
        self.writes as f64 / self.secs.max(1e-9)
    }
}

/// Writes `objects` (metadata with their owner references, then status) into `namespace`,
/// `concurrency` objects at a time, with a watcher decoding every UpdateInsight event of that
/// namespace meanwhile if `watched`.
pub async fn raw_write_rate(
    client: &Client,
    objects: &[Desired<UpdateInsightStatus>],
    concurrency: usize,
    namespace: &str,
    watched: bool,
) -> anyhow::Result<RawRun> {
    let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    ns.patch(
        namespace,
        &PatchParams::apply("bench"),
        &Patch::Apply(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        ),
    )
    .await?;
    let api: Api<UpdateInsight> = Api::namespaced(client.clone(), namespace);
    let watch = if watched {
        let stream = kube::runtime::watcher(api.clone(), Default::default());
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            let mut ready = Some(ready_tx);
            let mut events = 0u64;
            while let Some(event) = stream.next().await {
                if let Ok(kube::runtime::watcher::Event::InitDone) = event
                    && let Some(tx) = ready.take()
                {
                    let _ = tx.send(());
                }
                events += 1;
            }
            events
        });
        ready_rx.await?;
        Some(task)
    } else {
        None
    };
    // The field manager and the labels of the controller's writer (the objects are then as
    // large as the controller's, their managed fields included).
    let reconciler = update_status_controllers::reconcilers::worker_pools::NAME;
    let params = PatchParams::apply(&writer::field_manager(reconciler)).force();
    let busy_ns = std::sync::atomic::AtomicU64::new(0);
    let busy_ns = &busy_ns;
    let server_before = server_apply_time(client).await?;
    let t = Instant::now();
    let results: Vec<anyhow::Result<()>> = futures::stream::iter(objects)
        .map(|d| {
            let (api, params) = (api.clone(), params.clone());
            async move {
                let started = Instant::now();
                let labels = writer::written_labels(&d.labels, reconciler);
                let meta = json!({
                    "apiVersion": "update.openshift.io/v1alpha1",
                    "kind": "UpdateInsight",
                    "metadata": {"name": d.name, "labels": labels, "ownerReferences": d.owner.iter().collect::<Vec<_>>()},
                    "spec": {},
                });
                api.patch(&d.name, &params, &Patch::Apply(&meta)).await?;
                let status = json!({
                    "apiVersion": "update.openshift.io/v1alpha1",
                    "kind": "UpdateInsight",
                    "metadata": {"name": d.name},
                    "status": d.status,
                });
                api.patch_status(&d.name, &params, &Patch::Apply(&status))
                    .await?;
                let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                busy_ns.fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            }
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let secs = t.elapsed().as_secs_f64();
    let busy = busy_ns.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9;
    let apply_ms = server_apply_ms(server_before, server_apply_time(client).await?);
    if let Some(task) = watch {
        task.abort();
    }
    for r in results {
        r?;
    }
    Ok(RawRun {
        writes: 2 * objects.len() as u64,
        secs,
        object_ms: busy * 1e3 / objects.len().max(1) as f64,
        apply_ms,
    })
}

/// The API server's own time on UpdateInsight applies so far (`apiserver_request_duration_seconds`
/// of verb `APPLY`, both the object and its status): (seconds, requests). The difference over a
/// phase tells how long each write took inside the API server, against the writer's round trip.
pub async fn server_apply_time(client: &Client) -> anyhow::Result<(f64, f64)> {
    let text = client
        .request_text(http::Request::get("/metrics").body(Vec::new())?)
        .await?;
    let (mut secs, mut count) = (0.0, 0.0);
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("apiserver_request_duration_seconds_") else {
            continue;
        };
        if !(rest.contains("resource=\"updateinsights\"") && rest.contains("verb=\"APPLY\"")) {
            continue;
        }
        let value = || {
            line.rsplit(' ')
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        if rest.starts_with("sum{") {
            secs += value();
        } else if rest.starts_with("count{") {
            count += value();
        }
    }
    Ok((secs, count))
}

/// The mean time of the applies between two readings of [`server_apply_time`] (ms).
pub fn server_apply_ms(before: (f64, f64), after: (f64, f64)) -> f64 {
    (after.0 - before.0) * 1e3 / (after.1 - before.1).max(1.0)
}
