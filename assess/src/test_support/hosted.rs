//! Builders of the hosted-mode inputs (HostedCluster, NodePool, Machine, MachineSet,
//! MachineDeployment), through their JSON form as the API sends them.

use serde_json::{Value, json};
use update_status_api::hosted::{
    CURRENT_CONFIG_VERSION_ANNOTATION, HostedCluster, Machine, MachineDeployment, MachineSet,
    NODE_POOL_ANNOTATION, NODE_POOL_LABEL, NodePool, RELEASE_VERSION_ANNOTATION,
    TARGET_CONFIG_VERSION_ANNOTATION, control_plane_namespace,
};
use update_status_api::input::{MCO_PREFIX, Node};

use super::from_json;

/// Namespace of the HostedClusters the builders make.
pub const NS: &str = "clusters";
/// Name of the HostedCluster the builders make.
pub const HC: &str = "demo";

/// The release image of a version (`quay.io/openshift-release-dev/ocp-release:<v>-x86_64`).
pub fn image(version: &str) -> String {
    format!("quay.io/openshift-release-dev/ocp-release:{version}-x86_64")
}

/// The control-plane namespace of [`HC`].
pub fn cp_ns() -> String {
    control_plane_namespace(NS, HC)
}

/// HostedCluster `status.version` history entries `(state, version, started, completed)`,
/// newest first, each with the image of its version.
pub fn hc_history(entries: &[(&str, &str, &str, Option<&str>)]) -> Vec<Value> {
    entries
        .iter()
        .map(|(state, version, started, completed)| {
            let mut h = json!({"state": state, "version": version, "image": image(version), "startedTime": started, "verified": true});
            if let Some(c) = completed {
                h["completionTime"] = json!(c);
            }
            h
        })
        .collect()
}

/// The HostedCluster [`HC`] in [`NS`] (uid `hc-uid`) asking for `spec_version`'s image, with
/// `status.version` (`desired` = `desired`, the history, `availableUpdates` as versions) and
/// `conditions`; `control_plane_version`: `status.controlPlaneVersion` history, when given.
pub fn hosted_cluster(
    (spec_version, desired): (&str, &str),
    history: Vec<Value>,
    available: &[&str],
    conditions: Vec<Value>,
    control_plane_version: Option<Vec<Value>>,
) -> HostedCluster {
    let available: Vec<Value> = available
        .iter()
        .map(|v| json!({"version": v, "image": image(v)}))
        .collect();
    let mut status = json!({
        "version": {"desired": {"version": desired, "image": image(desired)}, "history": history, "availableUpdates": available},
        "conditions": conditions,
    });
    if let Some(h) = control_plane_version {
        status["controlPlaneVersion"] = json!({"desired": {"version": desired}, "history": h});
    }
    from_json(json!({
        "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
        "metadata": {"name": HC, "namespace": NS, "uid": "hc-uid"},
        "spec": {"release": {"image": image(spec_version)}},
        "status": status,
    }))
}

/// A NodePool of [`HC`] (`upgrade_type`: `Replace` or `InPlace`) asking for `spec_version`,
/// at `status.version` = `version`, with `replicas` and `conditions`.
pub fn node_pool(
    name: &str,
    upgrade_type: &str,
    replicas: i32,
    (spec_version, version): (&str, &str),
    conditions: Vec<Value>,
) -> NodePool {
    from_json(json!({
        "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
        "metadata": {"name": name, "namespace": NS, "uid": format!("{name}-uid")},
        "spec": {"clusterName": HC, "replicas": replicas, "release": {"image": image(spec_version)},
                 "management": {"upgradeType": upgrade_type}},
        "status": {"version": version, "replicas": replicas, "conditions": conditions},
    }))
}

/// What a test Machine is.
#[derive(Clone, Copy, Debug, Default)]
pub struct MachineState<'a> {
    /// `hypershift.openshift.io/release-version` (none: only `spec.version`).
    pub release_version: Option<&'a str>,
    /// `spec.version`.
    pub spec_version: &'a str,
    /// `NodeHealthy=True`.
    pub healthy: bool,
    /// Being deleted since this instant.
    pub deleting_since: Option<&'a str>,
    /// `DrainingSucceeded` `(status, reason, ltt)`.
    pub draining: Option<(&'a str, &'a str, &'a str)>,
    /// `status.nodeRef.name`.
    pub node: Option<&'a str>,
}

/// A Machine of NodePool `pool` in the control-plane namespace of [`HC`].
pub fn machine(name: &str, pool: &str, s: MachineState<'_>) -> Machine {
    let mut annotations = serde_json::Map::new();
    annotations.insert(NODE_POOL_ANNOTATION.into(), json!(format!("{NS}/{pool}")));
    if let Some(v) = s.release_version {
        annotations.insert(RELEASE_VERSION_ANNOTATION.into(), json!(v));
    }
    let mut conditions = vec![
        json!({"type": "NodeHealthy", "status": if s.healthy {"True"} else {"False"}, "lastTransitionTime": "2026-01-01T09:00:00Z"}),
    ];
    if let Some((status, reason, ltt)) = s.draining {
        conditions.push(json!({"type": "DrainingSucceeded", "status": status, "reason": reason, "message": format!("{reason} message"), "lastTransitionTime": ltt}));
    }
    let mut m = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
        "metadata": {"name": name, "namespace": cp_ns(), "annotations": annotations,
                     "creationTimestamp": "2026-01-01T08:00:00Z"},
        "spec": {"version": s.spec_version},
        "status": {"phase": "Running", "conditions": conditions},
    });
    if let Some(n) = s.node {
        m["status"]["nodeRef"] = json!({"name": n});
    }
    if let Some(t) = s.deleting_since {
        m["metadata"]["deletionTimestamp"] = json!(t);
        m["status"]["phase"] = json!("Deleting");
    }
    from_json(m)
}

/// The MachineDeployment of a Replace NodePool, its template at `version`.
pub fn machine_deployment(pool: &str, version: &str, replicas: i32) -> MachineDeployment {
    from_json(json!({
        "metadata": {"name": pool, "namespace": cp_ns()},
        "spec": {"replicas": replicas, "template": {"spec": {"version": version}}},
    }))
}

/// The MachineSet of an InPlace NodePool, its template at `version`, with the config-version
/// hashes `target` and `current` and extra annotations.
pub fn machine_set(
    pool: &str,
    version: &str,
    replicas: i32,
    (target, current): (&str, &str),
    extra: &[(&str, &str)],
) -> MachineSet {
    let mut annotations = serde_json::Map::new();
    annotations.insert(TARGET_CONFIG_VERSION_ANNOTATION.into(), json!(target));
    annotations.insert(CURRENT_CONFIG_VERSION_ANNOTATION.into(), json!(current));
    for (k, v) in extra {
        annotations.insert((*k).into(), json!(v));
    }
    from_json(json!({
        "metadata": {"name": pool, "namespace": cp_ns(), "annotations": annotations},
        "spec": {"replicas": replicas, "template": {"spec": {"version": version}}},
    }))
}

/// A hosted Node of NodePool `pool`, Ready, with the machine-config annotations `mco` (keys
/// without the `machineconfiguration.openshift.io/` prefix).
pub fn hosted_node(name: &str, pool: &str, mco: &[(&str, &str)]) -> Node {
    let annotations: serde_json::Map<String, Value> = mco
        .iter()
        .map(|(k, v)| (format!("{MCO_PREFIX}{k}"), json!(v)))
        .collect();
    from_json(json!({
        "metadata": {"name": name, "labels": {NODE_POOL_LABEL: pool}, "annotations": annotations},
        "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T08:00:00Z"}]},
    }))
}
