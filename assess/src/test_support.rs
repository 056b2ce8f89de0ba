//! Builders of the input kinds, for unit tests, fixture tests and benches (cargo feature
//! `test-support`). They build through the objects' JSON form, as the API would send them,
//! and panic on a builder bug (never on user input: test code only).

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use update_status_api::input::{
    ClusterOperator, ClusterVersion, MCO_PREFIX, MachineConfig, MachineConfigPool, Node,
};

/// Annotation that makes a ClusterOperator a platform operator.
pub const PLATFORM_ANNOTATION: &str = "include.release.openshift.io/self-managed-high-availability";

/// Parses a synthetic object (panics when the builder's JSON does not parse).
pub fn from_json<T: DeserializeOwned>(v: Value) -> T {
    match serde_json::from_value(v) {
        Ok(t) => t,
        Err(e) => panic!("synthetic input does not parse: {e}"),
    }
}

/// A condition with every field given (`at`: `lastTransitionTime`, RFC 3339).
pub fn condition(type_: &str, status: &str, reason: &str, message: &str, at: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": at})
}

/// A condition with reason `<type>Reason` and message `<type> message`, changed at `ltt`
/// (none: unknown).
pub fn cond(type_: &str, status: &str, ltt: Option<Timestamp>) -> Value {
    let mut c = json!({"type": type_, "status": status, "reason": format!("{type_}Reason"), "message": format!("{type_} message")});
    if let Some(t) = ltt {
        c["lastTransitionTime"] = json!(t.to_string());
    }
    c
}

/// A platform ClusterOperator at operator `version` with `conditions`.
pub fn co(name: &str, version: &str, conditions: Vec<Value>) -> ClusterOperator {
    from_json(json!({
        "metadata": {"name": name, "annotations": {PLATFORM_ANNOTATION: "true"}},
        "status": {"versions": [{"name": "operator", "version": version}], "conditions": conditions}
    }))
}

/// ClusterVersion history entries `(state, version, started, completed)`, newest first (image
/// `img-<index>`).
pub fn history(entries: &[(&str, &str, Option<Timestamp>, Option<Timestamp>)]) -> Vec<Value> {
    entries
        .iter()
        .enumerate()
        .map(|(i, (state, version, started, completed))| {
            let mut h = json!({"state": state, "version": version, "image": format!("img-{i}")});
            if let Some(s) = started {
                h["startedTime"] = json!(s.to_string());
            }
            if let Some(c) = completed {
                h["completionTime"] = json!(c.to_string());
            }
            h
        })
        .collect()
}

/// The ClusterVersion `version` desiring `desired`, with `history` and `conditions`.
pub fn cv(desired: &str, history: Vec<Value>, conditions: Vec<Value>) -> ClusterVersion {
    from_json(json!({
        "metadata": {"name": "version"},
        "status": {"desired": {"version": desired}, "history": history, "conditions": conditions}
    }))
}

/// A rendered MachineConfig, annotated with its OpenShift `version` when given.
pub fn mc(name: &str, version: Option<&str>) -> MachineConfig {
    let mut annotations = serde_json::Map::new();
    if let Some(v) = version {
        annotations.insert(
            format!("{MCO_PREFIX}release-image-version"),
            Value::String(v.to_string()),
        );
    }
    from_json(json!({"metadata": {"name": name, "annotations": annotations}}))
}

/// A selector matching the label `label` (any value... the empty one).
pub fn label_selector(label: &str) -> Value {
    json!({"matchLabels": {label: ""}})
}

/// A MachineConfigPool rendering `config`, selecting nodes by `selector`.
pub fn pool(name: &str, config: &str, selector: Value, paused: bool) -> MachineConfigPool {
    from_json(json!({
        "metadata": {"name": name},
        "spec": {"nodeSelector": selector, "paused": paused, "configuration": {"name": config}}
    }))
}

/// A Node with the labels `labels` (empty values), the machine-config annotations `mco`
/// (keys without the `machineconfiguration.openshift.io/` prefix) and `conditions`.
pub fn node(name: &str, labels: &[&str], mco: &[(&str, &str)], conditions: Vec<Value>) -> Node {
    let labels: serde_json::Map<String, Value> =
        labels.iter().map(|l| (l.to_string(), json!(""))).collect();
    let annotations: serde_json::Map<String, Value> = mco
        .iter()
        .map(|(k, v)| (format!("{MCO_PREFIX}{k}"), json!(v)))
        .collect();
    from_json(json!({
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "status": {"conditions": conditions}
    }))
}

pub mod hosted;
