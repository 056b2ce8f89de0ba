//! The controller's objects in a namespace, read back from the API, and what the pure logic
//! (`update_status_assess::compose::desired_cluster`) says they should be: for tests that run
//! the controller on a simulated update and compare.

use std::collections::BTreeMap;

use jiff::Timestamp;
use kube::Client;
use kube::api::{Api, ListParams};
use update_status_api::crd::{
    ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus, UpdateInsight, UpdateInsightStatus,
    WorkerPoolUpdateStatus, WorkerPoolUpdateStatusStatus,
};
use update_status_assess::compose::{self, Existing};
use update_status_assess::control_plane::estimate_moved;
use update_status_assess::naming;

use update_status_simulator::SimInputs;

/// What the controller wrote into a namespace (statuses by object name).
#[derive(Debug, Default, PartialEq)]
pub struct Outputs {
    /// The ControlPlaneUpdateStatus's status.
    pub control_plane: Option<ControlPlaneUpdateStatusStatus>,
    /// WorkerPoolUpdateStatus statuses by name.
    pub pools: BTreeMap<String, WorkerPoolUpdateStatusStatus>,
    /// UpdateInsight statuses by name.
    pub insights: BTreeMap<String, UpdateInsightStatus>,
}

pub async fn read_outputs(client: &Client, ns: &str) -> Result<Outputs, kube::Error> {
    let cps: Api<ControlPlaneUpdateStatus> = Api::namespaced(client.clone(), ns);
    let wps: Api<WorkerPoolUpdateStatus> = Api::namespaced(client.clone(), ns);
    let ins: Api<UpdateInsight> = Api::namespaced(client.clone(), ns);
    let lp = ListParams::default();
    Ok(Outputs {
        control_plane: cps
            .list(&lp)
            .await?
            .items
            .into_iter()
            .find(|o| o.metadata.name.as_deref() == Some(naming::CONTROL_PLANE_STATUS_NAME))
            .and_then(|o| o.status),
        pools: wps
            .list(&lp)
            .await?
            .items
            .into_iter()
            .filter_map(|o| Some((o.metadata.name?, o.status?)))
            .collect(),
        insights: ins
            .list(&lp)
            .await?
            .items
            .into_iter()
            .filter_map(|o| Some((o.metadata.name?, o.status?)))
            .collect(),
    })
}

/// What the pure logic says the namespace should hold (the core's desired objects: names
/// included).
pub fn expected_outputs(inputs: &SimInputs, now: Timestamp) -> Outputs {
    let d = compose::desired_cluster(
        &inputs.as_cluster_inputs(),
        &Existing::default(),
        &compose::Labels::new(),
        now,
    );
    Outputs {
        control_plane: d.control_plane.map(|d| d.status),
        pools: d
            .worker_pools
            .into_iter()
            .map(|d| (d.name, d.status))
            .collect(),
        insights: d.insights.into_iter().map(|d| (d.name, d.status)).collect(),
    }
}

/// A status without its conditions' `lastTransitionTime`s and its nodes' `timeline`s: the
/// controller keeps those from its first observation (carried over from its own objects,
/// across restarts), which the pure logic given no existing objects cannot know; their rules
/// are tested in the core (`assess/src/compose/since.rs`, `assess/src/nodes/stage.rs`) and in
/// `one_composition`, with the existing objects.
fn timeless<T: serde::Serialize>(status: &T) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("lastTransitionTime");
                m.remove("timeline");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(status).unwrap_or_default();
    strip(&mut v);
    v
}

/// Differences between the controller's objects and the expected ones (empty: they match),
/// conditions' transition times aside ([`timeless`]).
/// The estimated completion may lag within the controller's tolerance (it is not rewritten
/// for small moves).
pub fn differences(want: &Outputs, got: &Outputs, now: Timestamp) -> Vec<String> {
    let mut d = Vec::new();
    match (&want.control_plane, &got.control_plane) {
        (Some(w), Some(g)) => {
            let mut g2 = g.clone();
            if !estimate_moved(g.estimated_completed_at, w.estimated_completed_at, now) {
                g2.estimated_completed_at = w.estimated_completed_at;
            }
            if timeless(w) != timeless(&g2) {
                d.push(format!(
                    "ControlPlaneUpdateStatus:\n  want {w:?}\n  got  {g:?}"
                ));
            }
        }
        (w, g) if w != g => d.push(format!(
            "ControlPlaneUpdateStatus: want {:?}, got {:?}",
            w.is_some(),
            g.is_some()
        )),
        _ => {}
    }
    for (name, w) in &want.pools {
        match got.pools.get(name) {
            Some(g) if timeless(g) == timeless(w) => {}
            Some(g) => d.push(format!(
                "WorkerPoolUpdateStatus {name}:\n  want {w:?}\n  got  {g:?}"
            )),
            None => d.push(format!("WorkerPoolUpdateStatus {name} missing")),
        }
    }
    for name in got.pools.keys().filter(|n| !want.pools.contains_key(*n)) {
        d.push(format!("WorkerPoolUpdateStatus {name} not expected"));
    }
    for (name, w) in &want.insights {
        match got.insights.get(name) {
            Some(g) if timeless(g) == timeless(w) => {}
            Some(g) => d.push(format!("UpdateInsight {name}:\n  want {w:?}\n  got  {g:?}")),
            None => d.push(format!("UpdateInsight {name} missing")),
        }
    }
    for name in got
        .insights
        .keys()
        .filter(|n| !want.insights.contains_key(*n))
    {
        d.push(format!("UpdateInsight {name} not expected"));
    }
    d
}
