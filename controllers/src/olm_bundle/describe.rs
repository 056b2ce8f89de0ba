//! What the ClusterServiceVersion says about update-status for OperatorHub and the console:
//! the owned kinds with their descriptors, the examples, the annotations. Pure data.

use serde_json::{Value, json};

/// The package (OperatorHub name, catalog package, CSV name prefix).
pub const PACKAGE: &str = "update-status";
/// The channel every bundle is in, and the default one.
pub const CHANNEL: &str = "stable";
/// The console plugin the CSV offers to enable (`console.openshift.io/plugins`): the name of
/// the ConsolePlugin the console plugin's manifests create.
pub const CONSOLE_PLUGIN: &str = "update-status-console-plugin";
/// The lowest Kubernetes the bundle installs on (OpenShift 4.16).
pub const MIN_KUBE_VERSION: &str = "1.29.0";
/// The OpenShift versions of the bundle (`com.redhat.openshift.versions`).
pub const OPENSHIFT_VERSIONS: &str = "v4.16";

fn status(path: &str, name: &str, description: &str, x: &[&str]) -> Value {
    json!({"path": path, "displayName": name, "description": description, "x-descriptors": x})
}

const TEXT: &str = "urn:alm:descriptor:text";
const CONDITIONS: &str = "urn:alm:descriptor:io.kubernetes.conditions";
const TIMESTAMP: &str = "urn:alm:descriptor:timestamp";

/// One owned kind, as OperatorHub shows it.
struct OwnedKind {
    kind: &'static str,
    plural: &'static str,
    display: &'static str,
    description: &'static str,
    /// Its status descriptors.
    statuses: Vec<Value>,
}

/// The owned kinds.
fn kinds() -> Vec<OwnedKind> {
    vec![
        control_plane_status(),
        worker_pool_status(),
        update_insight(),
        update_history(),
    ]
}

/// The ControlPlaneUpdateStatus.
fn control_plane_status() -> OwnedKind {
    OwnedKind {
        kind: "ControlPlaneUpdateStatus",
        plural: "controlplaneupdatestatuses",
        display: "Control Plane Update Status",
        description: "The control plane's update, one per cluster (`cluster`): assessment, versions, completion, started and estimated times, operator and node counts.",
        statuses: vec![
            status(
                "assessment",
                "Assessment",
                "Progressing, Progressing - Slow, Stalled, Completed or Unknown.",
                &[TEXT],
            ),
            status(
                "completionPercent",
                "Completion",
                "Updated operators in percent.",
                &[TEXT],
            ),
            status(
                "versions.target",
                "Target version",
                "The version the cluster updates to.",
                &[TEXT],
            ),
            status(
                "startedAt",
                "Started",
                "When the update started.",
                &[TIMESTAMP],
            ),
            status(
                "estimatedCompletedAt",
                "Estimated completion",
                "Recomputed when the inputs change.",
                &[TIMESTAMP],
            ),
            status(
                "conditions",
                "Conditions",
                "Updating and Healthy.",
                &[CONDITIONS],
            ),
        ],
    }
}

/// The WorkerPoolUpdateStatus.
fn worker_pool_status() -> OwnedKind {
    OwnedKind {
        kind: "WorkerPoolUpdateStatus",
        plural: "workerpoolupdatestatuses",
        display: "Worker Pool Update Status",
        description: "The update of one worker pool (a MachineConfigPool): assessment, completion, node counts, paused.",
        statuses: vec![
            status(
                "assessment",
                "Assessment",
                "Completed, Pending, Degraded, Excluded, Progressing or Empty.",
                &[TEXT],
            ),
            status(
                "completionPercent",
                "Completion",
                "Updated nodes in percent.",
                &[TEXT],
            ),
            status("nodes.total", "Nodes", "Nodes of the pool.", &[TEXT]),
            status(
                "nodes.updated",
                "Updated nodes",
                "Nodes at the target.",
                &[TEXT],
            ),
            status(
                "paused",
                "Paused",
                "The pool is paused.",
                &["urn:alm:descriptor:com.tectonic.ui:booleanSwitch"],
            ),
            status(
                "conditions",
                "Conditions",
                "Updating and Healthy.",
                &[CONDITIONS],
            ),
        ],
    }
}

/// The UpdateInsight.
fn update_insight() -> OwnedKind {
    OwnedKind {
        kind: "UpdateInsight",
        plural: "updateinsights",
        display: "Update Insight",
        description: "The progress of the ClusterVersion, each ClusterOperator and each Node, and one health insight per problem (a degraded operator, a node that cannot drain, a firing alert), with its impact and remediation.",
        statuses: vec![
            status("type", "Type", "Progress or Health.", &[TEXT]),
            status(
                "resource.kind",
                "Resource kind",
                "What it is about.",
                &[TEXT],
            ),
            status("resource.name", "Resource", "Its name.", &[TEXT]),
            status(
                "health.impact.level",
                "Impact level",
                "Info, Warning, Error or Critical.",
                &[TEXT],
            ),
            status(
                "health.impact.summary",
                "Summary",
                "What is wrong.",
                &[TEXT],
            ),
            status(
                "health.remediation.reference",
                "Remediation",
                "Where to read what to do.",
                &["urn:alm:descriptor:org.w3:link"],
            ),
        ],
    }
}

/// The UpdateHistory.
fn update_history() -> OwnedKind {
    OwnedKind {
        kind: "UpdateHistory",
        plural: "updatehistories",
        display: "Update History",
        description: "How long this cluster's last updates took (per operator, per node phase, per pool), learned by watching them, and the remaining time of the update in progress estimated from them.",
        statuses: vec![
            status(
                "learnedUpdates",
                "Learned updates",
                "Updates observed and kept (at most 5).",
                &[TEXT],
            ),
            status(
                "estimates.method",
                "Estimate method",
                "Learned, or oc's baseline until one update was observed.",
                &[TEXT],
            ),
        ],
    }
}

/// `spec.customresourcedefinitions.owned` for the CRDs of `group`/`version`.
pub fn owned(group: &str, version: &str) -> Vec<Value> {
    kinds()
        .into_iter()
        .map(|k| {
            json!({
                "name": format!("{}.{group}", k.plural),
                "version": version,
                "kind": k.kind,
                "displayName": k.display,
                "description": k.description,
                "statusDescriptors": k.statuses,
            })
        })
        .collect()
}

/// The owned kinds' names (`<plural>.<group>`), for `internal-objects`.
pub fn owned_names(group: &str) -> Vec<String> {
    kinds()
        .iter()
        .map(|k| format!("{}.{group}", k.plural))
        .collect()
}

/// `alm-examples`: the objects as the controller names them (nobody creates them by hand: they
/// are `internal-objects` too, so the console offers no "Create").
pub fn examples(group: &str, version: &str, namespace: &str) -> Value {
    let api = format!("{group}/{version}");
    let names = [
        ("ControlPlaneUpdateStatus", "cluster"),
        ("WorkerPoolUpdateStatus", "worker"),
        ("UpdateInsight", "worker-3-degraded"),
        ("UpdateHistory", "cluster"),
    ];
    Value::Array(
        names
            .iter()
            .map(|(kind, name)| {
                json!({"apiVersion": api, "kind": kind,
                    "metadata": {"name": name, "namespace": namespace}})
            })
            .collect(),
    )
}

/// `spec.keywords`.
pub const KEYWORDS: [&str; 7] = [
    "update",
    "upgrade",
    "cluster version",
    "machine config",
    "health",
    "acm",
    "fleet",
];

/// The features OperatorHub filters on (`features.operators.openshift.io/*`): true only for
/// what is built and tested (proxy: the Prometheus client honours the proxy variables OLM sets,
/// docs/metrics.md; not yet: a disconnected install is not tested, FIPS needs a
/// validated crypto provider instead of `ring`).
pub fn features() -> Vec<(&'static str, &'static str)> {
    vec![
        ("features.operators.openshift.io/disconnected", "false"),
        ("features.operators.openshift.io/fips-compliant", "false"),
        ("features.operators.openshift.io/proxy-aware", "true"),
        ("features.operators.openshift.io/tls-profiles", "false"),
        ("features.operators.openshift.io/token-auth-aws", "false"),
        ("features.operators.openshift.io/token-auth-azure", "false"),
        ("features.operators.openshift.io/token-auth-gcp", "false"),
        ("features.operators.openshift.io/cnf", "false"),
        ("features.operators.openshift.io/cni", "false"),
        ("features.operators.openshift.io/csi", "false"),
    ]
}
