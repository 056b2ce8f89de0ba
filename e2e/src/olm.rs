//! An OLM install of the bundle (`bundle/`), as OLM would create it, without OLM (OLM itself
//! cannot be had here: the Go module proxy refuses operator-lifecycle-manager): what its
//! catalog operator's InstallPlan and its OLM operator create from the ClusterServiceVersion
//! in the install namespace (`pkg/controller/registry/resolver/rbac.go` and
//! `pkg/controller/install/deployment.go` in OLM's source, from their documented behaviour):
//!
//! - the ServiceAccount of each `permissions`/`clusterPermissions` entry and Deployment;
//! - per `permissions` entry a Role and a RoleBinding in the install namespace, per
//!   `clusterPermissions` entry a ClusterRole and a ClusterRoleBinding, named
//!   `<csv>-<serviceaccount>-<hash of the rules>` and labelled `olm.owner=<csv>`;
//! - each `install.spec.deployments` entry as a Deployment of the install namespace (its
//!   `label`s, the pod annotations `olm.operatorGroup`, `olm.targetNamespaces`, and the
//!   `OPERATOR_CONDITION_NAME` variable OLM adds to each container);
//! - every other manifest of the bundle, namespaced ones in the install namespace whatever
//!   their `metadata.namespace` says.

use std::path::Path;

use serde_json::{Value, json};

/// The label OLM puts on what it creates for a CSV.
pub const OWNER_LABEL: &str = "olm.owner";

/// What can go wrong reading the bundle.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OlmError(String);

/// The bundle's CSV and its other manifests.
pub struct BundleManifests {
    /// The ClusterServiceVersion.
    pub csv: Value,
    /// The other manifests (CRDs, Services, ...).
    pub others: Vec<Value>,
}

/// Reads `dir/manifests` (a registry+v1 bundle).
pub fn read_bundle(dir: &Path) -> Result<BundleManifests, OlmError> {
    let manifests = dir.join("manifests");
    let mut csv = None;
    let mut others = Vec::new();
    let entries = std::fs::read_dir(&manifests)
        .map_err(|e| OlmError(format!("{}: {e}", manifests.display())))?;
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| OlmError(format!("{}: {e}", path.display())))?;
        let v: Value = serde_saphyr::from_str(&text)
            .map_err(|e| OlmError(format!("{}: {e}", path.display())))?;
        if v["kind"] == "ClusterServiceVersion" {
            csv = Some(v);
        } else {
            others.push(v);
        }
    }
    let csv = csv.ok_or_else(|| {
        OlmError(format!(
            "no ClusterServiceVersion in {}",
            manifests.display()
        ))
    })?;
    Ok(BundleManifests { csv, others })
}

/// FNV-1a of `text`, 8 hex digits (OLM hashes the rules into the names it generates).
fn short_hash(text: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

fn owner_labels(csv: &str, ns: &str) -> Value {
    json!({OWNER_LABEL: csv, "olm.owner.kind": "ClusterServiceVersion", "olm.owner.namespace": ns, "olm.managed": "true"})
}

fn rbac(csv: &str, ns: &str, entry: &Value, cluster: bool) -> Vec<Value> {
    let sa = entry["serviceAccountName"].as_str().unwrap_or_default();
    let rules = entry["rules"].clone();
    let name = format!("{csv}-{sa}-{}", short_hash(&rules.to_string()));
    let (role_kind, binding_kind) = if cluster {
        ("ClusterRole", "ClusterRoleBinding")
    } else {
        ("Role", "RoleBinding")
    };
    let mut meta = json!({"name": name, "labels": owner_labels(csv, ns)});
    if !cluster {
        meta["namespace"] = json!(ns);
    }
    vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": role_kind, "metadata": meta, "rules": rules}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": binding_kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]}),
    ]
}

fn deployment(csv: &str, ns: &str, entry: &Value) -> Value {
    let mut spec = entry["spec"].clone();
    let template = &mut spec["template"];
    let annotations = &mut template["metadata"]["annotations"];
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations["olm.operatorGroup"] = json!("update-status");
    annotations["olm.operatorNamespace"] = json!(ns);
    annotations["olm.targetNamespaces"] = json!(ns);
    for c in template["spec"]["containers"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        let env = &mut c["env"];
        if !env.is_array() {
            *env = json!([]);
        }
        if let Some(env) = env.as_array_mut() {
            env.push(json!({"name": "OPERATOR_CONDITION_NAME", "value": csv}));
        }
    }
    let mut labels = entry["label"].clone();
    if let (Some(l), Some(o)) = (labels.as_object_mut(), owner_labels(csv, ns).as_object()) {
        l.extend(o.clone());
    }
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": entry["name"], "namespace": ns, "labels": labels},
        "spec": spec})
}

/// The objects OLM creates installing `bundle` into `ns` (OwnNamespace), in apply order (CRDs
/// and ServiceAccounts first, Deployments last).
pub fn install_objects(bundle: &BundleManifests, ns: &str) -> Vec<Value> {
    let csv_name = bundle.csv["metadata"]["name"].as_str().unwrap_or_default();
    let install = &bundle.csv["spec"]["install"]["spec"];
    let mut out: Vec<Value> = bundle
        .others
        .iter()
        .filter(|m| m["kind"] == "CustomResourceDefinition")
        .cloned()
        .collect();
    let mut accounts: Vec<String> = Vec::new();
    let entries = |key: &str| install[key].as_array().cloned().unwrap_or_default();
    for e in entries("permissions")
        .iter()
        .chain(entries("clusterPermissions").iter())
    {
        accounts.extend(e["serviceAccountName"].as_str().map(str::to_string));
    }
    for d in entries("deployments") {
        accounts.extend(
            d["spec"]["template"]["spec"]["serviceAccountName"]
                .as_str()
                .map(str::to_string),
        );
    }
    accounts.sort();
    accounts.dedup();
    for sa in accounts {
        out.push(json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": sa, "namespace": ns, "labels": owner_labels(csv_name, ns)}}));
    }
    for e in entries("permissions") {
        out.extend(rbac(csv_name, ns, &e, false));
    }
    for e in entries("clusterPermissions") {
        out.extend(rbac(csv_name, ns, &e, true));
    }
    for m in bundle
        .others
        .iter()
        .filter(|m| m["kind"] != "CustomResourceDefinition")
    {
        let mut m = m.clone();
        if m["metadata"]["namespace"].is_string() || is_namespaced(&m) {
            m["metadata"]["namespace"] = json!(ns);
        }
        out.push(m);
    }
    for d in entries("deployments") {
        out.push(deployment(csv_name, ns, &d));
    }
    out
}

/// Namespaced kinds of a bundle (the cluster-scoped ones: ClusterRole, ClusterRoleBinding,
/// PriorityClass, ConsolePlugin, the Console* kinds).
fn is_namespaced(m: &Value) -> bool {
    let kind = m["kind"].as_str().unwrap_or_default();
    !(kind.starts_with("Cluster") || kind.starts_with("Console") || kind == "PriorityClass")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rbac_names_are_stable_and_owned() {
        let entry = json!({"serviceAccountName": "ctl", "rules": [{"verbs": ["get"]}]});
        let a = rbac("x.v1", "ns", &entry, false);
        let b = rbac("x.v1", "ns", &entry, false);
        assert_eq!(a, b);
        assert_eq!(a[0]["kind"], "Role");
        assert_eq!(a[1]["subjects"][0]["namespace"], "ns");
        assert_eq!(a[0]["metadata"]["labels"][OWNER_LABEL], "x.v1");
        assert!(
            a[0]["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("x.v1-ctl-"))
        );
        let c = rbac("x.v1", "ns", &entry, true);
        assert!(c[0]["metadata"].get("namespace").is_none());
    }
}
