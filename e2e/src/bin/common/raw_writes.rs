//! The API server's raw write rate for the controller's objects (issue #16, goal 3): the same
//! UpdateInsights the controller writes at its cold start (names, labels, statuses), created
//! and status-updated as fast as the API server takes them, on the same control plane, in a
//! namespace the controller does not watch. Each object costs the same two writes as the
//! controller's (server-side apply of the metadata, then of the status subresource).
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
use update_status_controllers::assess::compose::Desired;

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

/// Writes `objects` (metadata with their owner references, then status) into `namespace`,
/// `concurrency` objects at a time, with a watcher decoding every UpdateInsight event of that
/// namespace meanwhile if `watched`; the writes made and the seconds they took.
pub async fn raw_write_rate(
    client: &Client,
    objects: &[Desired<UpdateInsightStatus>],
    concurrency: usize,
    namespace: &str,
    watched: bool,
) -> anyhow::Result<(u64, f64)> {
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
    let params = PatchParams::apply("bench-raw").force();
    let t = Instant::now();
    let results: Vec<anyhow::Result<()>> = futures::stream::iter(objects)
        .map(|d| {
            let (api, params) = (api.clone(), params.clone());
            async move {
                let meta = json!({
                    "apiVersion": "update.openshift.io/v1alpha1",
                    "kind": "UpdateInsight",
                    "metadata": {"name": d.name, "labels": d.labels, "ownerReferences": d.owner.iter().collect::<Vec<_>>()},
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
                Ok(())
            }
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let secs = t.elapsed().as_secs_f64();
    if let Some(task) = watch {
        task.abort();
    }
    for r in results {
        r?;
    }
    Ok((2 * objects.len() as u64, secs))
}
