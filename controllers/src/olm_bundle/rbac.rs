//! Sorting the RBAC of `config/openshift` the way OLM installs it: rules granted to a
//! ServiceAccount of the install namespace become the CSV's `permissions` (a Role bound in that
//! namespace) or `clusterPermissions` (a ClusterRole); the roles and bindings that carried them
//! leave the bundle, since OLM creates its own. Everything else (roles bound to other subjects,
//! bindings to a ClusterRole the cluster already has) stays a plain bundle object.
//!
//! OLM applies every namespaced object of a bundle in the install namespace, whatever its
//! `metadata.namespace` says: a Role in another namespace (the machine-config operator's, or
//! `default` for Events) cannot be shipped as is. Its rules go to `clusterPermissions` instead,
//! kept as narrow as they were (same verbs, same `resourceNames`), but granted in every
//! namespace; [`Sorted::widened`] names each, and `docs/olm.md` says what that means.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::error::OlmError;

/// The RBAC of one install, sorted.
#[derive(Debug, Default)]
pub struct Sorted {
    /// ServiceAccount → rules in the install namespace (`permissions`).
    pub permissions: BTreeMap<String, Vec<Value>>,
    /// ServiceAccount → cluster-wide rules (`clusterPermissions`).
    pub cluster_permissions: BTreeMap<String, Vec<Value>>,
    /// Indexes (into the manifests) of the objects folded into the two above.
    pub folded: BTreeSet<usize>,
    /// `Role <namespace>/<name>` granted cluster-wide because OLM cannot create it where it was.
    pub widened: Vec<String>,
}

fn kind(v: &Value) -> &str {
    v["kind"].as_str().unwrap_or_default()
}

fn name(v: &Value) -> &str {
    v["metadata"]["name"].as_str().unwrap_or_default()
}

fn namespace(v: &Value) -> &str {
    v["metadata"]["namespace"].as_str().unwrap_or_default()
}

/// Sorts the RBAC of `manifests` for an install into `install_ns`.
pub fn sort(manifests: &[Value], install_ns: &str) -> Result<Sorted, OlmError> {
    let mut sorted = Sorted::default();
    let ours: BTreeSet<&str> = manifests
        .iter()
        .filter(|m| kind(m) == "ServiceAccount" && namespace(m) == install_ns)
        .map(name)
        .collect();
    // How many bindings of other subjects (or none of ours) use each role: those roles stay.
    let mut role_used_elsewhere: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut grants: Vec<(usize, String, (String, String, String))> = Vec::new();
    for (i, b) in manifests.iter().enumerate() {
        let k = kind(b);
        if k != "RoleBinding" && k != "ClusterRoleBinding" {
            continue;
        }
        let role_kind = b["roleRef"]["kind"].as_str().unwrap_or_default();
        let role_ns = if role_kind == "Role" {
            namespace(b)
        } else {
            ""
        };
        let role_key = (
            role_kind.to_string(),
            role_ns.to_string(),
            b["roleRef"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
        let subjects: Vec<&Value> = b["subjects"].as_array().into_iter().flatten().collect();
        let mine: Vec<&str> = subjects
            .iter()
            .filter(|s| {
                s["kind"] == "ServiceAccount"
                    && s["namespace"].as_str() == Some(install_ns)
                    && s["name"].as_str().is_some_and(|n| ours.contains(n))
            })
            .filter_map(|s| s["name"].as_str())
            .collect();
        if mine.is_empty() {
            role_used_elsewhere.insert(role_key);
            continue;
        }
        if mine.len() != subjects.len() || mine.len() != 1 {
            return Err(OlmError::Unplaceable(format!(
                "{k} {}/{} binds our ServiceAccount together with other subjects: OLM grants a ServiceAccount its own roles; split the binding",
                namespace(b),
                name(b)
            )));
        }
        grants.push((i, mine[0].to_string(), role_key));
    }
    for (binding, sa, role_key) in grants {
        let b = &manifests[binding];
        let found = manifests.iter().enumerate().find(|(_, r)| {
            kind(r) == role_key.0
                && name(r) == role_key.2
                && (role_key.0 == "ClusterRole" || namespace(r) == role_key.1)
        });
        let Some((role_index, role)) = found else {
            // A role the cluster has (cluster-monitoring-view): the binding ships as it is.
            continue;
        };
        let rules: Vec<Value> = role["rules"].as_array().cloned().unwrap_or_default();
        let cluster_wide = kind(b) == "ClusterRoleBinding" || namespace(b) != install_ns;
        if kind(b) == "RoleBinding" && namespace(b) != install_ns {
            sorted
                .widened
                .push(format!("Role {}/{}", namespace(b), role_key.2));
        }
        let target = if cluster_wide {
            &mut sorted.cluster_permissions
        } else {
            &mut sorted.permissions
        };
        target.entry(sa).or_default().extend(rules);
        sorted.folded.insert(binding);
        if !role_used_elsewhere.contains(&role_key) {
            sorted.folded.insert(role_index);
        }
    }
    Ok(sorted)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn role(kind: &str, ns: &str, name: &str, verb: &str) -> Value {
        json!({"kind": kind, "metadata": {"name": name, "namespace": ns},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": [verb]}]})
    }

    fn binding(kind: &str, ns: &str, role_kind: &str, role: &str, sa: (&str, &str)) -> Value {
        json!({"kind": kind, "metadata": {"name": role, "namespace": ns},
            "roleRef": {"kind": role_kind, "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa.0, "namespace": sa.1}]})
    }

    #[test]
    fn roles_of_our_service_account_become_permissions_and_others_stay() -> Result<(), OlmError> {
        let ns = "openshift-update-status";
        let m = vec![
            json!({"kind": "ServiceAccount", "metadata": {"name": "ctl", "namespace": ns}}),
            role("ClusterRole", "", "ctl", "list"),
            binding("ClusterRoleBinding", "", "ClusterRole", "ctl", ("ctl", ns)),
            role("Role", ns, "ctl-ns", "create"),
            binding("RoleBinding", ns, "Role", "ctl-ns", ("ctl", ns)),
            role("Role", "default", "ctl-events", "patch"),
            binding("RoleBinding", "default", "Role", "ctl-events", ("ctl", ns)),
            // Bound to another subject: stays.
            role("ClusterRole", "", "reader", "get"),
            binding(
                "RoleBinding",
                ns,
                "ClusterRole",
                "reader",
                ("prometheus-k8s", "openshift-monitoring"),
            ),
            // A ClusterRole the cluster has: the binding stays.
            binding(
                "ClusterRoleBinding",
                "",
                "ClusterRole",
                "cluster-monitoring-view",
                ("ctl", ns),
            ),
        ];
        let s = sort(&m, ns)?;
        let verbs = |rules: &[Value]| -> Vec<String> {
            rules
                .iter()
                .map(|r| r["verbs"][0].as_str().unwrap_or_default().to_string())
                .collect()
        };
        assert_eq!(verbs(&s.permissions["ctl"]), ["create"]);
        assert_eq!(verbs(&s.cluster_permissions["ctl"]), ["list", "patch"]);
        assert_eq!(s.folded, [1, 2, 3, 4, 5, 6].into());
        assert_eq!(s.widened, ["Role default/ctl-events"]);
        Ok(())
    }

    #[test]
    fn a_binding_shared_with_other_subjects_is_refused() {
        let ns = "ns";
        let mut b = binding("ClusterRoleBinding", "", "ClusterRole", "r", ("ctl", ns));
        b["subjects"]
            .as_array_mut()
            .into_iter()
            .for_each(|s| s.push(json!({"kind": "User", "name": "alice"})));
        let m = vec![
            json!({"kind": "ServiceAccount", "metadata": {"name": "ctl", "namespace": ns}}),
            role("ClusterRole", "", "r", "get"),
            b,
        ];
        let e = sort(&m, ns)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("ClusterRoleBinding /r binds our ServiceAccount together"),
            "{e}"
        );
    }
}
