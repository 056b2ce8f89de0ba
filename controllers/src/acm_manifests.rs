//! The Open Cluster Management add-on, generated (`make manifests`, `crdgen`): from the agent's
//! manifests (`kubectl kustomize config/openshift`: what `make deploy OVERLAY=openshift` applies,
//! the CRDs, namespace, ServiceAccount, RBAC, Deployment and Service of `config/default` plus the
//! monitoring objects of `config/prometheus`) and the hub Role of the hub sync
//! (`config/hub/role.yaml`), it makes `config/acm/addon.yaml`:
//!
//! - the `AddOnTemplate` `update-status-<version>`: the agent's manifests as they are, except the
//!   Deployment, which reports to the hub with the credentials OCM gives it
//!   (`--hub-kubeconfig={{HUB_KUBECONFIG}}`, `--cluster-name={{CLUSTER_NAME}}`) and whose image
//!   is the variable `{{UPDATE_STATUS_IMAGE}}` (set by the admin in the AddOnDeploymentConfig;
//!   OCM renders an unset variable as nothing); plus the ConfigMap `update-status-proxy-ca` in
//!   the agent's namespace ([`proxy_ca_config_map`]); `registration: KubeClient` with
//!   `hubPermissions: CurrentCluster` bound to the ClusterRole below, in the cluster's own hub
//!   namespace only; and a condition rule that makes the agent's Deployment count as available
//!   only once it is rolled out and its replicas are available ([`rollout_health_rule`]), so that
//!   a rollout (the Placement install's `Progressive` strategy) waits for a healthy agent, not
//!   only for applied manifests;
//! - the `ClusterRole` `open-cluster-management:update-status:agent`: the rules of
//!   `config/hub/role.yaml`, exactly what the hub sync does;
//! - the `ClusterManagementAddOn` `update-status`: manual enablement (a ManagedClusterAddOn per
//!   cluster; `config/acm-placement` switches to a Placement), the template and the deployment
//!   config as defaults.
//!
//! One source for the agent's manifests: a change to `config/default` or `config/prometheus`
//! that is not regenerated here fails `make manifests-check` (CI).
//!
//! **Monitoring ships with the agent** (issue #37): the template carries the ServiceMonitor, the
//! Role and RoleBindings that let the cluster's Prometheus (`openshift-monitoring/prometheus-k8s`)
//! discover and scrape the agent, and the cluster's PrometheusRule, so that ACM observability
//! collects the metrics the fleet rules (`config/acm/observability`) read. Generating refuses
//! agent manifests without them ([`check_monitoring`]): a template rendered from `config/default`
//! alone would leave every fleet alert silent. On a managed cluster without the Prometheus
//! Operator's CRDs (not OpenShift), OCM's work agent applies every other manifest and reports
//! these two as not applied (docs/acm.md, "Fleet alerts").

use serde_json::{Value, json};

/// The add-on's name (the ClusterManagementAddOn, the ManagedClusterAddOns).
pub const ADDON_NAME: &str = update_status_api::acm::ADDON_NAME;
/// The hub ClusterRole bound (in each cluster's namespace) to the add-on's hub identity.
pub const HUB_CLUSTER_ROLE: &str = update_status_api::acm::HUB_AGENT_CLUSTER_ROLE;
/// Namespace of the AddOnDeploymentConfig (config/acm/deployment-config.yaml).
pub const CONFIG_NAMESPACE: &str = "open-cluster-management-update-status";
/// Name of the AddOnDeploymentConfig.
pub const CONFIG_NAME: &str = "update-status";
/// The template variable of the agent's image (a customized variable of the deployment config).
pub const IMAGE_VARIABLE: &str = "UPDATE_STATUS_IMAGE";
/// The template variable whose value is `{{` (set in the AddOnDeploymentConfig,
/// `config/acm/deployment-config.yaml`). OCM renders the template's manifests with fasttemplate's
/// `ExecuteString`: every `{{...}}` is a variable, and an unknown one becomes nothing, so the Go
/// templates of the PrometheusRule's annotations (`{{ $labels.namespace }}`) would reach the
/// cluster empty. Each `{{` of the agent's manifests is written `{{UPDATE_STATUS_OPEN_BRACES}}`
/// instead, which OCM renders back to `{{`.
pub const OPEN_BRACES_VARIABLE: &str = "UPDATE_STATUS_OPEN_BRACES";
/// The overlay of `config/` whose rendering is the agent's manifests (`config/default` plus
/// `config/prometheus`).
pub const AGENT_OVERLAY: &str = "openshift";
/// The Deployment of the agent in config/default.
const DEPLOYMENT: &str = "update-status-controller";
/// The image of `config/` (`make deploy` sets the real one; the add-on, its variable).
const PLACEHOLDER_IMAGE: &str = "update-status-controller";
/// Its namespace in config/default.
const AGENT_NAMESPACE: &str = "openshift-update-status";
/// Namespace of the cluster's Prometheus on OpenShift.
pub const MONITORING_NAMESPACE: &str = "openshift-monitoring";
/// The cluster Prometheus' ServiceAccount, which discovers and scrapes the agent.
pub const PROMETHEUS_SERVICE_ACCOUNT: &str = "prometheus-k8s";
/// The ConfigMap OCM's add-on manager mounts into the agent's pod (`<addon>-proxy-ca` at
/// `/managed/proxy-ca`, `CA_BUNDLE_FILE_PATH`) when the AddOnDeploymentConfig has a
/// `proxyConfig.caBundle` (`pkg/addon/templateagent/decorator.go` in OCM).
pub const PROXY_CA_CONFIG_MAP: &str = "update-status-proxy-ca";
/// The label by which OpenShift's cluster network operator injects the cluster's trusted CA
/// bundle (the system CAs and the cluster proxy's `trustedCA`) as `ca-bundle.crt`.
pub const INJECT_TRUSTED_CA_LABEL: &str = "config.openshift.io/inject-trusted-cabundle";

/// The namespace of ACM Observability's add-on on a managed cluster, where its metrics collector
/// reads the cluster's own custom allowlist.
pub const OBSERVABILITY_ADDON_NAMESPACE: &str = "open-cluster-management-addon-observability";
/// The ConfigMap ACM's metrics collector merges into the allowlist (`metrics_list.yaml`).
pub const CUSTOM_ALLOWLIST: &str = "observability-metrics-custom-allowlist";
/// OCM leaves a manifest with this annotation in place when the add-on goes
/// (`addon.open-cluster-management.io/deletion-orphan`, the add-on API): the add-on manager turns
/// each annotated manifest into an orphaning rule of the ManifestWork's `deleteOption`
/// (`SelectivelyOrphan`; `addon-framework/pkg/addonmanager/controllers/agentdeploy/utils.go`,
/// `BuildDeployWorks`, `getDeletionOrphaningRule`), the work agent then applies that manifest
/// without its AppliedManifestWork as owner (and removes that owner from an existing object:
/// `pkg/work/spoke/controllers/manifestcontroller/manifestwork_reconciler.go`,
/// `helper.OwnedByTheWork`), and deletes only what the AppliedManifestWork owns when the work
/// goes (`pkg/work/helper/helpers.go`, `DeleteAppliedResources`) or is evicted (the garbage
/// collector, through the same owner).
pub const DELETION_ORPHAN: &str = "addon.open-cluster-management.io/deletion-orphan";
/// The label by which ACM's hub backup (the cluster-backup operator) backs up an object it does
/// not back up by kind: every hub object of `config/acm` carries it (docs/acm.md, "Hub backup
/// and restore"). Its value is free, but `cluster-activation` (restored only when the managed
/// clusters are activated): ours is empty, restored with the hub's other resources, before the
/// managed clusters and their ManagedClusterAddOns.
pub const BACKUP_LABEL: &str = "cluster.open-cluster-management.io/backup";

/// The labels of the hub objects the add-on generates: ours, and [`BACKUP_LABEL`].
fn hub_labels() -> Value {
    json!({"app.kubernetes.io/name": "update-status-controller", BACKUP_LABEL: ""})
}

/// Marks, with [`DELETION_ORPHAN`], what must outlive the add-on on a cluster: our
/// CustomResourceDefinitions and the agent's namespace `namespace`.
///
/// Why: the work agent deletes what it applied when the add-on goes (disabled, the cluster
/// leaving the Placement, the add-on's ManifestWork evicted after a hub restore that missed it).
/// On an ACM hub, which manages itself as `local-cluster`, the CRDs it would delete are the
/// hub's own (`config/acm` applied them, and the work agent adopted them): with them every
/// cluster's hub copies, `--fleet` and the grid would go. On any cluster, the namespace holds the
/// `UpdateHistory` (what the agent learned of the cluster's updates, which no restart gives
/// back); deleting the namespace or the CRDs would delete it. Everything else (the Deployment,
/// RBAC, Service, monitoring objects) still goes with the add-on.
fn mark_orphans(manifests: &mut [Value], namespace: &str) {
    for m in manifests {
        let keep = m["kind"] == "CustomResourceDefinition"
            || (m["kind"] == "Namespace" && m["metadata"]["name"] == namespace);
        if !keep {
            continue;
        }
        if let Some(meta) = m["metadata"].as_object_mut() {
            let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
            if let Some(a) = annotations.as_object_mut() {
                a.insert(DELETION_ORPHAN.to_string(), json!(""));
            }
        }
    }
}

/// The per-cluster metrics allowlist the agent carries (issue #49): the ConfigMap
/// `observability-metrics-custom-allowlist` in `open-cluster-management-addon-observability` on
/// the managed cluster, naming `names` (the metrics the fleet rules and the fleet dashboard
/// read), which ACM's metrics collector there merges into what it sends to the hub; nobody
/// merges our names into the hub's allowlist by hand. The namespace is delivered too (a
/// cluster without observability yet would otherwise fail the whole ManifestWork's `Applied`),
/// orphaned when the add-on goes: it is observability's, which may have created it first.
pub fn metrics_allowlist(names: &std::collections::BTreeSet<String>) -> Vec<Value> {
    let list: Vec<&String> = names.iter().collect();
    let text = serde_saphyr::to_string(&json!({"names": list})).unwrap_or_default();
    vec![
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": OBSERVABILITY_ADDON_NAMESPACE,
                "annotations": {DELETION_ORPHAN: ""},
            },
        }),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": CUSTOM_ALLOWLIST,
                "namespace": OBSERVABILITY_ADDON_NAMESPACE,
                "labels": {"app.kubernetes.io/name": "update-status-controller"},
            },
            "data": {"metrics_list.yaml": text},
        }),
    ]
}

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

/// The label of the console plugin's objects (config/console-plugin).
const CONSOLE_PLUGIN_NAME: &str = "update-status-console-plugin";

/// Whether `m` is one of the console plugin's objects (config/console-plugin), which the add-on
/// leaves out: a ConsolePlugin needs the console's CRD, absent where OpenShift's Console
/// capability is disabled (and on other Kubernetes), and one manifest the work agent cannot apply
/// keeps the ManifestWork from `Applied`, which stalls the add-on's rollout at that cluster. The
/// plugin is installed with the operator (OLM, `make deploy OVERLAY=openshift`), where the console
/// runs.
fn is_console_plugin(m: &Value) -> bool {
    m["kind"] == "ConsolePlugin"
        || m["metadata"]["labels"]["app.kubernetes.io/name"] == CONSOLE_PLUGIN_NAME
}

/// The YAML documents of `text` (`what` names it in the error).
fn parse_docs(what: &'static str, text: &str) -> Result<Vec<Value>, AcmError> {
    serde_saphyr::from_multiple::<Value>(text).map_err(|e| AcmError::Yaml {
        what,
        message: e.to_string(),
    })
}

/// `header`, then each of `docs` as a YAML document (`what` names them in the error).
fn render_docs(header: &str, what: &'static str, docs: &[&Value]) -> Result<String, AcmError> {
    let mut out = String::from(header);
    for doc in docs {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(doc).map_err(|e| AcmError::Yaml {
            what,
            message: e.to_string(),
        })?);
    }
    Ok(out)
}

/// `config/acm/addon.yaml` from the agent's manifests (`kubectl kustomize config/default`), the
/// hub Role (`config/hub/role.yaml`) and the version.
pub fn addon_yaml(agent: &str, hub_role: &str, version: &str) -> Result<String, AcmError> {
    let manifests = agent_manifests(agent)?;
    let cluster_role = hub_cluster_role(hub_role)?;
    let template = addon_template(version, manifests);
    let cma = cluster_management_addon(version);
    render_docs(
        "# Generated by `make manifests` (controllers/src/acm_manifests.rs) from config/openshift\n\
         # (config/default and config/prometheus) and config/hub/role.yaml. Do not edit: change those\n\
         # and regenerate (`make manifests-check` fails on drift). The update-status add-on of Open\n\
         # Cluster Management (ACM): see docs/acm.md.\n",
        "the generated add-on",
        &[&cma, &cluster_role, &template],
    )
}

/// The template's manifests: the agent's, its Deployment reporting with OCM's credentials, every
/// Deployment's image the variable, the console plugin left out, the orphans marked, plus the
/// proxy CA's ConfigMap.
fn agent_manifests(agent: &str) -> Result<Vec<Value>, AcmError> {
    let mut manifests: Vec<Value> = parse_docs("the agent's manifests", agent)?
        .into_iter()
        .filter(|v| !v.is_null() && !is_console_plugin(v))
        .collect();
    for m in &mut manifests {
        escape_braces(m);
    }
    let mut namespace = None;
    for m in &mut manifests {
        if m["kind"] == "Deployment" && m["metadata"]["name"] == DEPLOYMENT {
            agent_deployment(m)?;
            namespace = m["metadata"]["namespace"].as_str().map(str::to_string);
        } else if m["kind"] == "Deployment" {
            // Another Deployment of the project's image (the console plugin's server,
            // config/console-plugin): the agent's image too.
            let containers = m["spec"]["template"]["spec"]["containers"].as_array_mut();
            for c in containers.into_iter().flatten() {
                if c["image"] == PLACEHOLDER_IMAGE {
                    c["image"] = json!(format!("{{{{{IMAGE_VARIABLE}}}}}"));
                }
            }
        }
    }
    let Some(namespace) = namespace else {
        return Err(AcmError::Missing(format!(
            "the agent's manifests have no Deployment {DEPLOYMENT} with a namespace"
        )));
    };
    check_monitoring(&manifests)?;
    mark_orphans(&mut manifests, &namespace);
    manifests.push(proxy_ca_config_map(&namespace));
    Ok(manifests)
}

/// The hub ClusterRole [`HUB_CLUSTER_ROLE`]: the rules of the hub Role (`config/hub/role.yaml`).
fn hub_cluster_role(hub_role: &str) -> Result<Value, AcmError> {
    let role = parse_docs("the hub Role", hub_role)?
        .into_iter()
        .find(|v| v["kind"] == "Role")
        .ok_or_else(|| AcmError::Missing("config/hub/role.yaml has no Role".into()))?;
    let rules = role["rules"].clone();
    if !rules.is_array() {
        return Err(AcmError::Missing("the hub Role has no rules".into()));
    }
    Ok(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": HUB_CLUSTER_ROLE,
            "labels": hub_labels(),
        },
        "rules": rules,
    }))
}

/// The AddOnTemplate `update-status-<version>` of `manifests`, its hub identity bound to
/// [`HUB_CLUSTER_ROLE`] in the cluster's own namespace.
fn addon_template(version: &str, manifests: Vec<Value>) -> Value {
    json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "AddOnTemplate",
        "metadata": {
            "name": template_name(version),
            "labels": hub_labels(),
        },
        "spec": {
            "addonName": ADDON_NAME,
            "agentSpec": {
                "workload": {"manifests": manifests},
                "manifestConfigs": [rollout_health_rule()],
            },
            "registration": [{
                "type": "KubeClient",
                "kubeClient": {"hubPermissions": [{
                    "type": "CurrentCluster",
                    "currentCluster": {"clusterRoleName": HUB_CLUSTER_ROLE},
                }]},
            }],
        },
    })
}

/// The ClusterManagementAddOn `update-status`: manual enablement, the template and the
/// deployment config as defaults.
fn cluster_management_addon(version: &str) -> Value {
    json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ClusterManagementAddOn",
        "metadata": {
            "name": ADDON_NAME,
            "annotations": {"addon.open-cluster-management.io/lifecycle": "addon-manager"},
            "labels": hub_labels(),
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
    })
}

/// Writes every `{{` of the strings of `v` as `{{UPDATE_STATUS_OPEN_BRACES}}`, which OCM's
/// rendering turns back into `{{` (see [`OPEN_BRACES_VARIABLE`]).
fn escape_braces(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("{{") => {
            *s = s.replace("{{", &format!("{{{{{OPEN_BRACES_VARIABLE}}}}}"));
        }
        Value::Array(items) => items.iter_mut().for_each(escape_braces),
        Value::Object(map) => map.values_mut().for_each(escape_braces),
        _ => {}
    }
}

/// The monitoring objects the agent's manifests must carry for fleet alerting: a ServiceMonitor
/// (or PodMonitor), a PrometheusRule, and the RBAC of the cluster's Prometheus
/// (`openshift-monitoring/prometheus-k8s`): a RoleBinding to a Role (discovering the agent's
/// Service and endpoints) and one to a ClusterRole (`get services/metrics`, what the agent's
/// `/metrics` checks with a SubjectAccessReview).
pub fn check_monitoring(manifests: &[Value]) -> Result<(), AcmError> {
    let has_kind = |kinds: &[&str]| {
        manifests
            .iter()
            .any(|m| m["kind"].as_str().is_some_and(|k| kinds.contains(&k)))
    };
    let binds_prometheus = |role_kind: &str| {
        manifests.iter().any(|m| {
            m["kind"] == "RoleBinding"
                && m["roleRef"]["kind"] == role_kind
                && m["subjects"].as_array().is_some_and(|subjects| {
                    subjects.iter().any(|s| {
                        s["kind"] == "ServiceAccount"
                            && s["name"] == PROMETHEUS_SERVICE_ACCOUNT
                            && s["namespace"] == MONITORING_NAMESPACE
                    })
                })
        })
    };
    let mut missing = Vec::new();
    if !has_kind(&["ServiceMonitor", "PodMonitor"]) {
        missing.push("a ServiceMonitor or PodMonitor".to_string());
    }
    if !has_kind(&["PrometheusRule"]) {
        missing.push("a PrometheusRule".to_string());
    }
    for (role_kind, what) in [("Role", "discover"), ("ClusterRole", "scrape")] {
        if !binds_prometheus(role_kind) {
            missing.push(format!(
                "a RoleBinding of a {role_kind} to {MONITORING_NAMESPACE}/{PROMETHEUS_SERVICE_ACCOUNT} (to {what} the agent)"
            ));
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(AcmError::Missing(format!(
            "the agent's manifests lack their monitoring objects ({}): render config/{AGENT_OVERLAY} \
             (config/default and config/prometheus), or no fleet alert can fire",
            missing.join(", ")
        )))
    }
}

/// The ManifestWork option that makes the agent's Deployment `Available` (in the ManifestWork's
/// status) only once it is rolled out with all its replicas available, as `kubectl rollout
/// status` tells it.
///
/// Why: OCM's add-on rollout (`Progressive`, `ProgressivePerGroup` of a Placement install)
/// moves to the next cluster once the previous one `Succeeded`, and a cluster succeeds when its
/// ManifestWork is `Applied` and `Available` (`pkg/addon/controllers/addonprogressing`
/// `workIsReady`); without a rule a manifest is `Available` as soon as it exists
/// (`pkg/work/spoke/objectreader`), so a new image that crash-loops would reach every cluster.
/// The work agent sets the condition a rule names on the manifest
/// (`pkg/work/spoke/controllers/statuscontroller`), and aggregates `Available` over the
/// manifests (`pkg/work/spoke/conditions`).
///
/// The name is a wildcard (`update-status-controller*`, matched by the work agent's
/// `wildcardMatch`) on purpose: for the exact Deployment the add-on manager already has an
/// option (its health prober's feedback rules) and, merging a template's option into it, keeps
/// the feedback rules and update strategy but drops condition rules
/// (`addon-framework/pkg/addonmanager/controllers/agentdeploy/utils.go`).
pub fn rollout_health_rule() -> Value {
    rollout_health_rule_in(AGENT_NAMESPACE)
}

/// [`rollout_health_rule`] for the agent Deployment of `namespace`.
fn rollout_health_rule_in(namespace: &str) -> Value {
    json!({
        "resourceIdentifier": {
            "group": "apps",
            "resource": "deployments",
            "namespace": namespace,
            "name": format!("{DEPLOYMENT}*"),
        },
        "conditionRules": [{
            "condition": "Available",
            "type": "CEL",
            "celExpressions": [
                "has(object.status) && has(object.status.observedGeneration) && object.status.observedGeneration >= object.metadata.generation",
                "has(object.status.updatedReplicas) && object.status.updatedReplicas == object.spec.replicas",
                "has(object.status.replicas) && object.status.replicas == object.status.updatedReplicas",
                "has(object.status.availableReplicas) && object.status.availableReplicas == object.status.updatedReplicas",
            ],
            "messageExpression": "result ? 'the agent is rolled out and available' : 'the agent is not rolled out and available yet'",
        }],
    })
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
    proxy_ca_config_map_named(PROXY_CA_CONFIG_MAP, namespace)
}

/// [`proxy_ca_config_map`] of the add-on whose ConfigMap is `name` (`<add-on>-proxy-ca`).
fn proxy_ca_config_map_named(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
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

// The hosted add-on (issue #47 item 7): hosted mode delivered to the hosting clusters.

/// The hosted add-on's name (a second ClusterManagementAddOn).
pub const HOSTED_ADDON_NAME: &str = update_status_api::acm::HOSTED_ADDON_NAME;
/// The overlay whose rendering is the hosted agent's manifests: `config/hosted` in the namespace
/// `openshift-update-status-hosted` (beside a standalone agent of the same cluster).
pub const HOSTED_AGENT_OVERLAY: &str = "acm/hosted/agent";
/// The Placement of the hosting clusters (`config/acm/hosted/placement.yaml`).
pub const HOSTED_PLACEMENT: &str = "update-status-hosted";

/// `config/acm/hosted/addon.yaml` from the hosted agent's manifests (`kubectl kustomize
/// config/acm/hosted/agent`) and the version: the ClusterManagementAddOn `update-status-hosted`
/// (installed by the Placement of the hosting clusters, [`HOSTED_PLACEMENT`]; the same
/// deployment config, so the same image, as `update-status`) and the AddOnTemplate
/// `update-status-hosted-<version>`: the manifests as they are but the Deployment (image from
/// the variable, `--hub-kubeconfig={{HUB_KUBECONFIG}}`; no `--cluster-name`: each hosted cluster
/// is reported under its own), the proxy CA's ConfigMap, the rollout's condition rule, and a
/// hub identity (`registration: KubeClient`) with no permission of OCM's making: the hub
/// controller (`--mode=hub`) binds it in the namespace of each hosted cluster of its hosting
/// cluster, and nowhere else.
pub fn hosted_addon_yaml(agent: &str, version: &str) -> Result<String, AcmError> {
    let (manifests, namespace) = hosted_agent_manifests(agent)?;
    let template = json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "AddOnTemplate",
        "metadata": {"name": format!("{HOSTED_ADDON_NAME}-{version}"), "labels": hub_labels()},
        "spec": {
            "addonName": HOSTED_ADDON_NAME,
            "agentSpec": {
                "workload": {"manifests": manifests},
                "manifestConfigs": [rollout_health_rule_in(&namespace)],
            },
            "registration": [{"type": "KubeClient", "kubeClient": {}}],
        },
    });
    let cma = hosted_cluster_management_addon(version);
    render_docs(
        "# Generated by `make manifests` (controllers/src/acm_manifests.rs) from config/hosted (through\n\
         # config/acm/hosted/agent). Do not edit: change those and regenerate (`make manifests-check`\n\
         # fails on drift). The update-status-hosted add-on of Open Cluster Management (ACM), on the\n\
         # clusters hosting HyperShift control planes: see docs/acm.md.\n",
        "the generated hosted add-on",
        &[&cma, &template],
    )
}

/// The hosted template's manifests (the Deployment reporting with OCM's credentials, the orphans
/// marked, plus the proxy CA's ConfigMap) and the hosted agent's namespace.
fn hosted_agent_manifests(agent: &str) -> Result<(Vec<Value>, String), AcmError> {
    let mut manifests: Vec<Value> = parse_docs("the hosted agent's manifests", agent)?
        .into_iter()
        .filter(|v| !v.is_null())
        .collect();
    for m in &mut manifests {
        escape_braces(m);
    }
    let mut namespace = None;
    for m in &mut manifests {
        if m["kind"] == "Deployment" && m["metadata"]["name"] == DEPLOYMENT {
            hosted_agent_deployment(m)?;
            namespace = m["metadata"]["namespace"].as_str().map(str::to_string);
        }
    }
    let Some(namespace) = namespace else {
        return Err(AcmError::Missing(format!(
            "the hosted agent's manifests have no Deployment {DEPLOYMENT} with a namespace"
        )));
    };
    check_monitoring(&manifests)?;
    mark_orphans(&mut manifests, &namespace);
    manifests.push(proxy_ca_config_map_named(
        &format!("{HOSTED_ADDON_NAME}-proxy-ca"),
        &namespace,
    ));
    Ok((manifests, namespace))
}

/// The ClusterManagementAddOn `update-status-hosted`: installed by the Placement of the hosting
/// clusters, the template and the deployment config as defaults.
fn hosted_cluster_management_addon(version: &str) -> Value {
    json!({
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "ClusterManagementAddOn",
        "metadata": {
            "name": HOSTED_ADDON_NAME,
            "annotations": {"addon.open-cluster-management.io/lifecycle": "addon-manager"},
            "labels": hub_labels(),
        },
        "spec": {
            "addOnMeta": {
                "displayName": "update-status (hosted control planes)",
                "description": "On each cluster hosting HyperShift control planes: reports every hosted cluster's update (ControlPlaneUpdateStatus, WorkerPoolUpdateStatus per NodePool, UpdateInsight) to the hub, into the hosted cluster's namespace.",
            },
            "supportedConfigs": [
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addontemplates",
                    "defaultConfig": {"name": format!("{HOSTED_ADDON_NAME}-{version}")},
                },
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addondeploymentconfigs",
                    "defaultConfig": {"name": CONFIG_NAME, "namespace": CONFIG_NAMESPACE},
                },
            ],
            "installStrategy": {
                "type": "Placements",
                "placements": [{"name": HOSTED_PLACEMENT, "namespace": CONFIG_NAMESPACE}],
            },
        },
    })
}

/// The hosted agent's Deployment: reports to the hub with OCM's credentials (each hosted cluster
/// under its own name), image from the variable.
fn hosted_agent_deployment(d: &mut Value) -> Result<(), AcmError> {
    let c = d["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .and_then(|c| c.first_mut())
        .ok_or_else(|| AcmError::Missing(format!("Deployment {DEPLOYMENT} has no containers")))?;
    c["image"] = json!(format!("{{{{{IMAGE_VARIABLE}}}}}"));
    let args = c["args"]
        .as_array_mut()
        .ok_or_else(|| AcmError::Missing("the hosted agent's container has no args".into()))?;
    if !args.iter().any(|a| a == "--mode=hosted") {
        return Err(AcmError::Missing(
            "the hosted agent's container does not run --mode=hosted".into(),
        ));
    }
    args.retain(|a| {
        !a.as_str()
            .is_some_and(|a| a.starts_with("--hub-kubeconfig"))
    });
    args.push(json!("--hub-kubeconfig={{HUB_KUBECONFIG}}"));
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
    /// The monitoring objects of config/prometheus, reduced to what the check reads.
    const MONITORING: &str = "\
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: update-status-controller, namespace: openshift-update-status}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: update-status, namespace: openshift-update-status}
spec:
  groups:
  - name: g
    rules:
    - alert: A
      expr: up == 0
      annotations:
        summary: 'pool {{ $labels.pool }}{{ with $labels.hosted_cluster }} of {{ . }}{{ end }}; {{{ odd }}}'
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: prometheus-k8s, namespace: openshift-update-status}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: prometheus-k8s}
subjects: [{kind: ServiceAccount, name: prometheus-k8s, namespace: openshift-monitoring}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: update-status-metrics-reader-prometheus-k8s, namespace: openshift-update-status}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: update-status-metrics-reader}
subjects: [{kind: ServiceAccount, name: prometheus-k8s, namespace: openshift-monitoring}]
";

    /// The agent's manifests with their monitoring objects.
    fn agent() -> String {
        format!("{AGENT}---\n{MONITORING}")
    }
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

    /// fasttemplate's `ExecuteString` with `{{`/`}}`, as OCM's add-on manager renders a
    /// template's manifest (its JSON): each `{{tag}}` becomes the variable's value, an unknown
    /// tag nothing; a `{{` without a `}}` after it stays, with the rest.
    fn render_like_ocm(text: &str, vars: &[(&str, &str)]) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find("}}") else {
                out.push_str(&rest[start..]);
                return out;
            };
            let tag = &after[..end];
            if let Some((_, value)) = vars.iter().find(|(k, _)| *k == tag) {
                out.push_str(value);
            }
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// A template manifest as OCM renders it with our deployment config's variables.
    fn rendered_by_ocm(manifest: &Value) -> Value {
        let vars = [
            (OPEN_BRACES_VARIABLE, "{{"),
            (IMAGE_VARIABLE, "registry/image:1"),
            ("CLUSTER_NAME", "cluster1"),
            ("HUB_KUBECONFIG", "/managed/hub-kubeconfig/kubeconfig"),
        ];
        serde_json::from_str(&render_like_ocm(&manifest.to_string(), &vars))
            .expect("OCM's rendering is JSON")
    }

    #[test]
    fn the_checked_in_template_renders_the_shipped_prometheus_rule_intact() {
        // The files a fleet admin applies: the generated template and our deployment config.
        let addon = docs(include_str!("../../config/acm/addon.yaml"));
        let config = docs(include_str!("../../config/acm/deployment-config.yaml"))
            .into_iter()
            .find(|d| d["kind"] == "AddOnDeploymentConfig")
            .expect("the AddOnDeploymentConfig");
        let variables: Vec<(String, String)> = config["spec"]["customizedVariables"]
            .as_array()
            .expect("customizedVariables")
            .iter()
            .map(|v| {
                (
                    v["name"].as_str().unwrap_or_default().to_string(),
                    v["value"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        assert!(
            variables
                .iter()
                .any(|(k, v)| k == OPEN_BRACES_VARIABLE && v == "{{"),
            "{variables:?}"
        );
        let vars: Vec<(&str, &str)> = variables
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let template = addon
            .iter()
            .find(|d| d["kind"] == "AddOnTemplate")
            .expect("the AddOnTemplate");
        let rule = template["spec"]["agentSpec"]["workload"]["manifests"]
            .as_array()
            .expect("manifests")
            .iter()
            .find(|m| m["kind"] == "PrometheusRule")
            .expect("the template carries the PrometheusRule");
        let rendered: Value =
            serde_json::from_str(&render_like_ocm(&rule.to_string(), &vars)).expect("JSON");
        let shipped = docs(include_str!("../../config/prometheus/prometheus-rule.yaml"));
        assert_eq!(
            rendered, shipped[0],
            "the cluster gets config/prometheus's rule"
        );
        // What OCM would deliver without the escape: alert texts with their templates gone.
        let unescaped = rule
            .to_string()
            .replace(&format!("{{{{{OPEN_BRACES_VARIABLE}}}}}"), "{{");
        let mangled: Value =
            serde_json::from_str(&render_like_ocm(&unescaped, &vars)).expect("JSON");
        assert_ne!(mangled, shipped[0]);
    }

    fn docs(yaml: &str) -> Vec<Value> {
        serde_saphyr::from_multiple::<Value>(yaml)
            .expect("yaml")
            .into_iter()
            .filter(|v| !v.is_null())
            .collect()
    }

    #[test]
    fn the_console_plugin_is_not_delivered_by_the_addon() {
        let plugin = "---\napiVersion: console.openshift.io/v1\nkind: ConsolePlugin\nmetadata: {name: update-status-console-plugin}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: update-status-console-plugin, namespace: openshift-update-status, labels: {app.kubernetes.io/name: update-status-console-plugin}}\n";
        let with_plugin = format!("{}{plugin}", agent());
        let out = addon_yaml(&with_plugin, ROLE, "1.2.3").expect("generates");
        assert_eq!(out, addon_yaml(&agent(), ROLE, "1.2.3").expect("generates"));
        assert!(!out.contains("console-plugin"), "{out}");
    }

    #[test]
    fn the_template_ends_with_the_proxy_ca_config_map() {
        let out = addon_yaml(&agent(), ROLE, "1.2.3").expect("generates");
        let d = docs(&out);
        let manifests = d[2]["spec"]["agentSpec"]["workload"]["manifests"]
            .as_array()
            .expect("manifests");
        let cm = &manifests[6];
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
    }

    #[test]
    fn the_template_is_the_agent_reporting_with_ocm_credentials() {
        let out = addon_yaml(&agent(), ROLE, "1.2.3").expect("generates");
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
            7,
            "every agent manifest, and the proxy CA's ConfigMap"
        );
        let mut namespace = docs(AGENT)[0].clone();
        namespace["metadata"]["annotations"] = json!({DELETION_ORPHAN: ""});
        assert_eq!(
            manifests[0], namespace,
            "as it is, marked to outlive the add-on (its UpdateHistory)"
        );
        // As OCM renders them (our deployment config's variables): the monitoring objects as
        // they are, the Go templates of the alert texts included.
        let rendered: Vec<Value> = manifests[2..6].iter().map(rendered_by_ocm).collect();
        assert_eq!(
            rendered,
            docs(MONITORING),
            "the monitoring objects, as they are"
        );
        assert!(
            !manifests[3].to_string().contains("{{ $labels"),
            "escaped in the template: {}",
            manifests[3]
        );
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
        // The rollout waits for a healthy agent: a rule on the Deployment, by a wildcard name
        // that matches it (and only agent Deployments of that namespace).
        let rule = &t["spec"]["agentSpec"]["manifestConfigs"][0];
        assert_eq!(
            rule["resourceIdentifier"]["name"],
            "update-status-controller*"
        );
        assert_eq!(
            rule["resourceIdentifier"]["namespace"],
            manifests[1]["metadata"]["namespace"]
        );
        assert_eq!(rule["conditionRules"][0]["condition"], "Available");
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
            addon_yaml(&agent(), ROLE, "1.2.3").expect("again"),
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
        let e = addon_yaml(&agent(), "kind: ConfigMap\n", "1").expect_err("no role");
        assert!(e.to_string().contains("no Role"), "{e}");
        let e = addon_yaml("a: [", ROLE, "1").expect_err("yaml");
        assert!(
            e.to_string()
                .contains("agent's manifests is not valid YAML"),
            "{e}"
        );
    }

    #[test]
    fn generating_refuses_an_agent_without_its_monitoring_objects() {
        // config/default alone: nothing would scrape the agent, no fleet alert could fire.
        let e = addon_yaml(AGENT, ROLE, "1").expect_err("no monitoring objects");
        let message = e.to_string();
        for what in [
            "a ServiceMonitor or PodMonitor",
            "a PrometheusRule",
            "a RoleBinding of a Role to openshift-monitoring/prometheus-k8s (to discover the agent)",
            "a RoleBinding of a ClusterRole to openshift-monitoring/prometheus-k8s (to scrape the agent)",
            "render config/openshift",
        ] {
            assert!(message.contains(what), "{what} in: {message}");
        }
        // Each object on its own is required: drop one at a time.
        let monitoring = docs(MONITORING);
        for skip in 0..monitoring.len() {
            let mut manifests = docs(AGENT);
            manifests.extend(
                monitoring
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != skip)
                    .map(|(_, m)| m.clone()),
            );
            assert!(
                check_monitoring(&manifests).is_err(),
                "without {}",
                monitoring[skip]["metadata"]["name"]
            );
        }
        // A PodMonitor serves as well as a ServiceMonitor; a binding to another account does not.
        let mut manifests = docs(AGENT);
        manifests.extend(monitoring.iter().cloned());
        manifests[2]["kind"] = json!("PodMonitor");
        check_monitoring(&manifests).expect("a PodMonitor");
        manifests[4]["subjects"][0]["namespace"] = json!("default");
        let e = check_monitoring(&manifests).expect_err("another account");
        assert!(e.to_string().contains("a Role to"), "{e}");
    }

    /// The hosted agent's manifests, reduced: the namespace, the Deployment in hosted mode, and
    /// the monitoring objects.
    fn hosted_agent() -> String {
        let agent = AGENT
            .replace("openshift-update-status", "openshift-update-status-hosted")
            .replace(
                "args: [--namespace=$(POD_NAMESPACE), --leader-elect]",
                "args: [--mode=hosted, --namespace=$(POD_NAMESPACE)]",
            );
        format!(
            "{agent}---\n{}",
            MONITORING.replace(
                "namespace: openshift-update-status}",
                "namespace: openshift-update-status-hosted}"
            )
        )
    }

    #[test]
    fn the_hosted_addon_is_hosted_mode_placed_on_the_hosting_clusters() {
        let out = hosted_addon_yaml(&hosted_agent(), "1.2.3").expect("generates");
        let d = docs(&out);
        let kinds: Vec<&str> = d.iter().filter_map(|v| v["kind"].as_str()).collect();
        assert_eq!(kinds, ["ClusterManagementAddOn", "AddOnTemplate"]);
        let (cma, t) = (&d[0], &d[1]);
        assert_eq!(cma["metadata"]["name"], "update-status-hosted");
        assert_eq!(
            cma["spec"]["installStrategy"],
            json!({"type": "Placements", "placements": [{"name": "update-status-hosted", "namespace": CONFIG_NAMESPACE}]})
        );
        assert_eq!(
            cma["spec"]["supportedConfigs"][1]["defaultConfig"],
            json!({"name": CONFIG_NAME, "namespace": CONFIG_NAMESPACE}),
            "the same image as the standalone agent"
        );
        assert_eq!(t["metadata"]["name"], "update-status-hosted-1.2.3");
        assert_eq!(t["spec"]["addonName"], "update-status-hosted");
        assert_eq!(
            t["spec"]["registration"],
            json!([{"type": "KubeClient", "kubeClient": {}}]),
            "no permission of OCM's making: the hub controller binds it where the hosted clusters are"
        );
        let manifests = t["spec"]["agentSpec"]["workload"]["manifests"]
            .as_array()
            .expect("manifests");
        let c = &manifests[1]["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["image"], "{{UPDATE_STATUS_IMAGE}}");
        assert_eq!(
            c["args"],
            json!([
                "--mode=hosted",
                "--namespace=$(POD_NAMESPACE)",
                "--hub-kubeconfig={{HUB_KUBECONFIG}}"
            ]),
            "no --cluster-name: each hosted cluster has its own"
        );
        let cm = manifests.last().expect("the proxy CA");
        assert_eq!(
            (&cm["metadata"]["name"], &cm["metadata"]["namespace"]),
            (
                &json!("update-status-hosted-proxy-ca"),
                &json!("openshift-update-status-hosted")
            )
        );
        assert_eq!(
            t["spec"]["agentSpec"]["manifestConfigs"][0]["resourceIdentifier"]["namespace"],
            "openshift-update-status-hosted"
        );
        let standalone = hosted_agent().replace("--mode=hosted, ", "");
        let e = hosted_addon_yaml(&standalone, "1").expect_err("not hosted mode");
        assert!(e.to_string().contains("does not run --mode=hosted"), "{e}");
        assert!(
            hosted_addon_yaml(AGENT, "1").is_err(),
            "no monitoring objects"
        );
    }

    #[test]
    fn the_checked_in_hosted_addon_is_hosted_mode_beside_the_standalone_agent() {
        let addon = docs(include_str!("../../config/acm/hosted/addon.yaml"));
        let manifests = addon[1]["spec"]["agentSpec"]["workload"]["manifests"]
            .as_array()
            .expect("manifests");
        for m in manifests {
            let ns = m["metadata"]["namespace"].as_str();
            assert!(
                ns.is_none()
                    || ns == Some("openshift-update-status-hosted")
                    || ns == Some("openshift-monitoring"),
                "{} {} in {ns:?}: not beside a standalone agent",
                m["kind"],
                m["metadata"]["name"]
            );
        }
        let text = serde_json::to_string(manifests).expect("json");
        assert!(
            text.contains("update-status-controller.openshift-update-status-hosted.svc"),
            "the ServiceMonitor's server name"
        );
    }
}
