//! Timing node changes by the controller's node progress insights: the insight a simulated node
//! should get, its name, a watch recording when each insight changed, and waiting for one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::StreamExt;
use jiff::Timestamp;
use kube::Client;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use update_status_api::crd::{Assessment, NodePhase, UpdateInsight, labels};
use update_status_assess::naming;
use update_status_assess::nodes::{self as node_assess, NodeContext};
use update_status_simulator::Simulation;

use super::controller::NAMESPACE;

/// Expected node insight (assessment, phase) of one node of the simulation.
pub fn expected_node(
    sim: &Simulation,
    ctx: &NodeContext,
    index: usize,
) -> anyhow::Result<(Assessment, Option<NodePhase>)> {
    let node = sim.node_input(index)?;
    let a =
        node_assess::assess_node(ctx, &node, Timestamp::now()).context("the node is in no pool")?;
    let p = a.progress.progress.context("no progress")?;
    Ok((p.assessment, p.phase))
}

/// Each node insight's last (assessment, phase) and when it arrived, by insight name.
pub type Seen = Arc<Mutex<HashMap<String, (Assessment, Option<NodePhase>, Instant)>>>;

/// Watches the node progress insights; records the last content and when it arrived. The
/// flag turns true once the initial list is complete (before that, events of the list may
/// still be in flight and would distort the first latencies).
pub fn watch_node_insights(client: &Client) -> (Seen, Arc<std::sync::atomic::AtomicBool>) {
    let seen: Seen = Arc::default();
    let listed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let api: Api<UpdateInsight> = Api::namespaced(client.clone(), NAMESPACE);
    let cfg = watcher::Config::default().labels(&format!("{}=Node", labels::RESOURCE_KIND));
    let (s, done) = (seen.clone(), listed.clone());
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(watcher(api, cfg).default_backoff());
        while let Some(ev) = stream.next().await {
            let obj = match ev {
                Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => o,
                Ok(watcher::Event::InitDone) => {
                    done.store(true, std::sync::atomic::Ordering::SeqCst);
                    continue;
                }
                _ => continue,
            };
            let at = Instant::now();
            let (Some(name), Some(p)) = (
                obj.metadata.name.clone(),
                obj.status.as_ref().and_then(|s| s.progress.as_ref()),
            ) else {
                continue;
            };
            if let Ok(mut m) = s.lock() {
                m.insert(name, (p.assessment, p.phase, at));
            }
        }
    });
    (seen, listed)
}

/// Waits until insight `name` shows `want`; returns when that event arrived.
pub async fn wait_seen(
    seen: &Seen,
    name: &str,
    want: (Assessment, Option<NodePhase>),
    timeout: Duration,
) -> anyhow::Result<Instant> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(at) = seen
            .lock()
            .ok()
            .and_then(|m| m.get(name).filter(|v| (v.0, v.1) == want).map(|v| v.2))
        {
            return Ok(at);
        }
        if Instant::now() > deadline {
            bail!("insight {name} never showed {want:?} within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The name of the progress insight of node `index` of the simulation.
pub fn node_insight_name(sim: &Simulation, index: usize) -> String {
    naming::insight_name(
        &update_status_api::crd::UpdateInsightStatus {
            type_: update_status_api::crd::InsightType::Progress,
            resource: update_status_api::crd::ResourceRef {
                kind: "Node".into(),
                name: sim.node_name(index).unwrap_or_default().to_string(),
                ..Default::default()
            },
            ..Default::default()
        },
        "",
    )
}
