//! The Open Cluster Management add-on, generated (`make manifests`, `crdgen`): from the agent's
//! manifests (`kubectl kustomize config/default`: the CRDs, namespace, ServiceAccount, RBAC,
//! Deployment and Service a standalone install applies) and the hub Role of the hub sync
//! (`config/hub/role.yaml`), it makes `config/acm/addon.yaml`:
//!
//! - the `AddOnTemplate` `update-status-<version>`: the agent's manifests as they are, except the
//!   Deployment, which reports to the hub with the credentials OCM gives it
//!   (`--hub-kubeconfig={{HUB_KUBECONFIG}}`, `--cluster-name={{CLUSTER_NAME}}`) and whose image
//!   is the variable `{{UPDATE_STATUS_IMAGE}}` (set by the admin in the AddOnDeploymentConfig;
//!   OCM renders an unset variable as nothing); plus the ConfigMap `update-status-proxy-ca` in
//!   the agent's namespace ([`proxy_ca_config_map`]); `registration: KubeClient` with
//!   `hubPermissions: CurrentCluster` bound to the ClusterRole below, in the cluster's own hub
//!   namespace only;
//! - the `ClusterRole` `open-cluster-management:update-status:agent`: the rules of
//!   `config/hub/role.yaml`, exactly what the hub sync does;
//! - the `ClusterManagementAddOn` `update-status`: manual enablement (a ManagedClusterAddOn per
//!   cluster; `config/acm/placement` switches to a Placement), the template and the deployment
//!   config as defaults.
//!
//! One source for the agent's manifests: a change to `config/default` that is not regenerated
//! here fails `make manifests-check` (CI).

use serde_json::{Value, json};

/// The add-on's name (the ClusterManagementAddOn, the ManagedClusterAddOns).
pub const ADDON_NAME: &str = update_status_api::acm::ADDON_NAME;
/// The hub ClusterRole bound (in each cluster's namespace) to the add-on's hub identity.
pub const HUB_CLUSTER_ROLE: &str = "open-cluster-management:update-status:agent";
/// Namespace of the AddOnDeploymentConfig (config/acm/deployment-config.yaml).
pub const CONFIG_NAMESPACE: &str = "open-cluster-management-update-status";
/// Name of the AddOnDeploymentConfig.
pub const CONFIG_NAME: &str = "update-status";
/// The template variable of the agent's image (a customized variable of the deployment config).
pub const IMAGE_VARIABLE: &str = "UPDATE_STATUS_IMAGE";
/// The Deployment of the agent in config/default.
const DEPLOYMENT: &str = "update-status-controller";
/// The ConfigMap OCM's add-on manager mounts into the agent's pod (`<addon>-proxy-ca` at
/// `/managed/proxy-ca`, `CA_BUNDLE_FILE_PATH`) when the AddOnDeploymentConfig has a
/// `proxyConfig.caBundle` (`pkg/addon/templateagent/decorator.go` in OCM).
pub const PROXY_CA_CONFIG_MAP: &str = "update-status-proxy-ca";
/// The label by which OpenShift's cluster network operator injects the cluster's trusted CA
/// bundle (the system CAs and the cluster proxy's `trustedCA`) as `ca-bundle.crt`.
pub const INJECT_TRUSTED_CA_LABEL: &str = "config.openshift.io/inject-trusted-cabundle";

/// What can go wrong generating the add-on.
#[derive(Debug, thiserror::Error)]
pub enum AcmError {
    /// An input is not the YAML expected.
    #[error("{what} is not valid YAML: {message}")]
    Yaml {
        /// Which input.
        what: &'static str,
        /// The parser's message.
        message: String,
    },
    /// An input lacks what the generator needs.
    #[error("{0}")]
    Missing(String),
}

/// The AddOnTemplate's name for `version` (a new name per version: OCM rolls the agents of
/// clusters to a new template, and the old one can stay until every cluster has moved).
pub fn template_name(version: &str) -> String {
    format!("{ADDON_NAME}-{version}")
}

/// `config/acm/addon.yaml` from the agent's manifests (`kubectl kustomize config/default`), the
/// hub Role (`config/hub/role.yaml`) and the version.
pub fn addon_yaml(agent: &str, hub_role: &str, version: &str) -> Result<String, AcmError> {
    let yaml = |what, text: &str| {
        serde_saphyr::from_multiple::<Value>(text).map_err(|e| AcmError::Yaml {
            what,
            message: e.to_string(),
        })
    };
    let mut manifests: Vec<Value> = yaml("the agent's manifests", agent)?
        .into_iter()
        .filter(|v| !v.is_null())
        .collect();
    let mut namespace = None;
    for m in &mut manifests {
        if m["kind"] == "Deployment" && m["metadata"]["name"] == DEPLOYMENT {
            agent_deployment(m)?;
            namespace = m["metadata"]["namespace"].as_str().map(str::to_string);
        }
    }
    let Some(namespace) = namespace else {
        return Err(AcmError::Missing(format!(
            "the agent's manifests have no Deployment {DEPLOYMENT} with a namespace"
        )));
    };
    manifests.push(proxy_ca_config_map(&namespace));
    let role = yaml("the hub Role", hub_role)?
        .into_iter()
        .find(|v| v["kind"] == "Role")
        .ok_or_else(|| AcmError::Missing("config/hub/role.yaml has no Role".into()))?;
    let rules = role["rules"].clone();
    if !rules.is_array() {
        return Err(AcmError::Missing("the hub Role has no rules".into()));
    }
    let cluster_role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": HUB_CLUSTER_ROLE,
            "labels": {"app.kubernetes.io/name": "update-status-controller"},
        },
        "rules": rules,
    });
    let template = json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "AddOnTemplate",
        "metadata": {
            "name": template_name(version),
            "labels": {"app.kubernetes.io/name": "update-status-controller"},
        },
        "spec": {
            "addonName": ADDON_NAME,
            "agentSpec": {"workload": {"manifests": manifests}},
            "registration": [{
                "type": "KubeClient",
                "kubeClient": {"hubPermissions": [{
                    "type": "CurrentCluster",
                    "currentCluster": {"clusterRoleName": HUB_CLUSTER_ROLE},
                }]},
            }],
        },
    });
    let cma = json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ClusterManagementAddOn",
        "metadata": {
            "name": ADDON_NAME,
            "annotations": {"addon.open-cluster-management.io/lifecycle": "addon-manager"},
            "labels": {"app.kubernetes.io/name": "update-status-controller"},
        },
        "spec": {
            "addOnMeta": {
                "displayName": "update-status",
                "description": "Reports how each cluster's OpenShift update goes (UpdateInsight, ControlPlaneUpdateStatus, WorkerPoolUpdateStatus) and copies it to the hub, into the cluster's namespace.",
            },
            "supportedConfigs": [
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addontemplates",
                    "defaultConfig": {"name": template_name(version)},
                },
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addondeploymentconfigs",
                    "defaultConfig": {"name": CONFIG_NAME, "namespace": CONFIG_NAMESPACE},
                },
            ],
            "installStrategy": {"type": "Manual"},
        },
    });
    let mut out = String::from(
        "# Generated by `make manifests` (controllers/src/acm_manifests.rs) from config/default and\n\
         # config/hub/role.yaml. Do not edit: change those and regenerate (`make manifests-check`\n\
         # fails on drift). The update-status add-on of Open Cluster Management (ACM): see\n\
         # docs/acm.md.\n",
    );
    for doc in [&cma, &cluster_role, &template] {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(doc).map_err(|e| AcmError::Yaml {
            what: "the generated add-on",
            message: e.to_string(),
        })?);
    }
    Ok(out)
}

/// The ConfigMap [`PROXY_CA_CONFIG_MAP`] in the agent's namespace, labelled for OpenShift's
/// trusted-CA injection.
///
/// With an AddOnDeploymentConfig `proxyConfig.caBundle`, OCM's add-on manager mounts a ConfigMap
/// of this name into the agent's pod, from the pod's namespace, but creates its own copy (the
/// bundle) in the install namespace of the deployment config, which is
/// `open-cluster-management-agent-addon` when `agentInstallNamespace` is `""` (ours: the agent
/// must stay in `openshift-update-status`, with RBAC in other namespaces). Without a ConfigMap of
/// that name in `openshift-update-status` the pod could never start. This one is there, and
/// OpenShift fills it with the cluster's trusted CA bundle, which holds the proxy's CA on a
/// cluster behind a proxy (the Proxy `cluster`'s `trustedCA`); the work agent's updates keep
/// the injected `ca-bundle.crt` (library-go's `ApplyConfigMap`). The agent trusts it for an
/// `https://` proxy (`CA_BUNDLE_FILE_PATH`, runtime/proxy.rs). Unused without a proxy CA.
pub fn proxy_ca_config_map(namespace: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": PROXY_CA_CONFIG_MAP,
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": "update-status-controller",
                INJECT_TRUSTED_CA_LABEL: "true",
            },
        },
    })
}

/// The agent's Deployment: reports to the hub with OCM's credentials, image from the variable.
fn agent_deployment(d: &mut Value) -> Result<(), AcmError> {
    let containers = d["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .ok_or_else(|| AcmError::Missing(format!("Deployment {DEPLOYMENT} has no containers")))?;
    let c = containers
        .first_mut()
        .ok_or_else(|| AcmError::Missing(format!("Deployment {DEPLOYMENT} has no containers")))?;
    c["image"] = json!(format!("{{{{{IMAGE_VARIABLE}}}}}"));
    let args = c
        .as_object_mut()
        .ok_or_else(|| AcmError::Missing("a container is not an object".into()))?
        .entry("args")
        .or_insert_with(|| json!([]));
    let args = args
        .as_array_mut()
        .ok_or_else(|| AcmError::Missing("the container's args are not a list".into()))?;
    args.retain(|a| {
        !a.as_str()
            .is_some_and(|a| a.starts_with("--hub-kubeconfig") || a.starts_with("--cluster-name"))
    });
    args.push(json!("--hub-kubeconfig={{HUB_KUBECONFIG}}"));
    args.push(json!("--cluster-name={{CLUSTER_NAME}}"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const AGENT: &str = "\
apiVersion: v1
kind: Namespace
metadata:
  name: openshift-update-status
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: update-status-controller
  namespace: openshift-update-status
spec:
  template:
    spec:
      containers:
      - name: controller
        image: update-status-controller
        args: [--namespace=$(POD_NAMESPACE), --leader-elect]
";
    const ROLE: &str = "\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: update-status-hub-sync
rules:
- apiGroups: [update.openshift.io]
  resources: [updateinsights]
  verbs: [get, patch]
";

    fn docs(yaml: &str) -> Vec<Value> {
        serde_saphyr::from_multiple::<Value>(yaml)
            .expect("yaml")
            .into_iter()
            .filter(|v| !v.is_null())
            .collect()
    }

    #[test]
    fn the_template_is_the_agent_reporting_with_ocm_credentials() {
        let out = addon_yaml(AGENT, ROLE, "1.2.3").expect("generates");
        let d = docs(&out);
        let kinds: Vec<&str> = d.iter().filter_map(|v| v["kind"].as_str()).collect();
        assert_eq!(
            kinds,
            ["ClusterManagementAddOn", "ClusterRole", "AddOnTemplate"]
        );
        let t = &d[2];
        assert_eq!(t["metadata"]["name"], "update-status-1.2.3");
        let manifests = t["spec"]["agentSpec"]["workload"]["manifests"]
            .as_array()
            .expect("manifests");
        assert_eq!(
            manifests.len(),
            3,
            "every agent manifest, and the proxy CA's ConfigMap"
        );
        assert_eq!(manifests[0], docs(AGENT)[0], "as it is, but the Deployment");
        let cm = &manifests[2];
        assert_eq!(
            (
                &cm["kind"],
                &cm["metadata"]["name"],
                &cm["metadata"]["namespace"]
            ),
            (
                &json!("ConfigMap"),
                &json!("update-status-proxy-ca"),
                &json!("openshift-update-status")
            ),
            "where OCM's add-on manager mounts the proxy CA from: the pod's namespace"
        );
        assert_eq!(cm["metadata"]["labels"][INJECT_TRUSTED_CA_LABEL], "true");
        assert!(cm.get("data").is_none(), "OpenShift fills it");
        let c = &manifests[1]["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["image"], "{{UPDATE_STATUS_IMAGE}}");
        assert_eq!(
            c["args"],
            json!([
                "--namespace=$(POD_NAMESPACE)",
                "--leader-elect",
                "--hub-kubeconfig={{HUB_KUBECONFIG}}",
                "--cluster-name={{CLUSTER_NAME}}"
            ])
        );
        assert_eq!(
            t["spec"]["registration"][0]["kubeClient"]["hubPermissions"][0]["currentCluster"]["clusterRoleName"],
            HUB_CLUSTER_ROLE
        );
        // The hub role is the hub sync's, as a ClusterRole bound per cluster namespace.
        assert_eq!(d[1]["metadata"]["name"], HUB_CLUSTER_ROLE);
        assert_eq!(d[1]["rules"], docs(ROLE)[0]["rules"]);
        // The ClusterManagementAddOn: manual, with the template and the config as defaults.
        assert_eq!(d[0]["spec"]["installStrategy"]["type"], "Manual");
        assert_eq!(
            d[0]["spec"]["supportedConfigs"][0]["defaultConfig"]["name"],
            "update-status-1.2.3"
        );
        assert_eq!(
            addon_yaml(AGENT, ROLE, "1.2.3").expect("again"),
            out,
            "stable"
        );
    }

    #[test]
    fn generating_fails_clearly_on_unexpected_inputs() {
        let no_deployment = "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n";
        let e = addon_yaml(no_deployment, ROLE, "1").expect_err("no deployment");
        assert!(
            e.to_string()
                .contains("no Deployment update-status-controller"),
            "{e}"
        );
        let e = addon_yaml(AGENT, "kind: ConfigMap\n", "1").expect_err("no role");
        assert!(e.to_string().contains("no Role"), "{e}");
        let e = addon_yaml("a: [", ROLE, "1").expect_err("yaml");
        assert!(
            e.to_string()
                .contains("agent's manifests is not valid YAML"),
            "{e}"
        );
    }
}
