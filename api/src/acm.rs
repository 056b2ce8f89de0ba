//! Read-side views of the Open Cluster Management (ACM) hub objects update-status reads: the
//! `ManagedClusterAddOn` of our add-on in each cluster's hub namespace (the owner of the hub
//! copies, and whether the add-on is enabled and available) and the `ManagedCluster` (its labels,
//! for `kubectl update-status --fleet --selector/--clusterset`). Only the fields we read; unknown
//! fields are ignored and every field is optional or defaulted, so a newer or partial object still
//! deserializes. Made with `kube::CustomResource` (schema disabled: the CRDs are OCM's own).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::input::{Condition, nullable};

/// API group of ManagedClusterAddOn and ClusterManagementAddOn.
pub const ADDON_GROUP: &str = "addon.open-cluster-management.io";
/// API group of ManagedCluster and ManagedClusterSet.
pub const CLUSTER_GROUP: &str = "cluster.open-cluster-management.io";
/// The name of our add-on: the ClusterManagementAddOn, and the ManagedClusterAddOn in each
/// enabled cluster's hub namespace.
pub const ADDON_NAME: &str = "update-status";
/// ManagedCluster label naming its ManagedClusterSet.
pub const CLUSTERSET_LABEL: &str = "cluster.open-cluster-management.io/clusterset";
/// ManagedClusterAddOn condition: the add-on's agent is healthy (for a template add-on: its
/// Deployments report available replicas).
pub const CONDITION_AVAILABLE: &str = "Available";
/// ManagedClusterAddOn condition (OCM's `ManagedClusterAddOnConditionDegraded`): the agent runs
/// but cannot do all of its job. update-status' agent sets it itself: `True` with a reason
/// ([`DEGRADED_REASONS`]) while it cannot read Prometheus or its inputs, `False` (reason
/// `AsExpected`) otherwise.
pub const CONDITION_DEGRADED: &str = "Degraded";
/// The reasons of our `Degraded` condition, worst first: a watch of an input failing now, inputs
/// that cannot be decoded, Prometheus unreadable; `AsExpected` when none.
pub const DEGRADED_REASONS: [&str; 4] = [
    "InputWatchFailing",
    "InputsUnreadable",
    "PrometheusUnreachable",
    "AsExpected",
];
/// Annotation of the hub copy of a cluster's ControlPlaneUpdateStatus: the RFC 3339 UTC time
/// (whole seconds, e.g. `2026-12-05T17:00:00Z`) of the agent's last successful pass, refreshed
/// when older than the agent's heartbeat interval (`--hub-heartbeat-interval`, default 5 min).
/// While the agent runs and reaches the hub it is never older than the interval plus one pass:
/// an older one means the agent stopped or cannot reach the hub. Absent: an agent from before the
/// heartbeat.
pub const LAST_REPORTED_ANNOTATION: &str = "update.openshift.io/last-reported";
/// Condition of the hub copy of a cluster's ControlPlaneUpdateStatus: the agent's own health
/// (issue #48 item 2), `True` with a reason ([`DEGRADED_REASONS`]) while it cannot read
/// Prometheus or its inputs, `False` (reason `AsExpected`) otherwise. Written by the agent into
/// the copy it owns (not onto its ManagedClusterAddOn, whose status the agent may not patch: that
/// grant reached fields OCM trusts). Absent on the cluster's own ControlPlaneUpdateStatus.
pub const CONDITION_AGENT_DEGRADED: &str = "AgentDegraded";
/// The add-on that delivers hosted mode (`config/hosted`) to the clusters hosting HyperShift
/// control planes (a second template add-on, `config/acm/hosted`): its agent reports every
/// hosted cluster of its hosting cluster, into the hosted cluster's hub namespace.
pub const HOSTED_ADDON_NAME: &str = "update-status-hosted";
/// The hub ClusterRole of the add-ons' agents (the hub sync's rules, `config/hub/role.yaml`),
/// bound in a cluster's hub namespace: by OCM to the `update-status` agent of that cluster, by the
/// hub controller to the `update-status-hosted` agent of a hosted cluster's hosting cluster.
pub const HUB_AGENT_CLUSTER_ROLE: &str = "open-cluster-management:update-status:agent";
/// ManagedCluster annotation of a cluster imported in hosted mode (ACM's import controller, and
/// the multicluster engine's hypershift add-on for a hosted cluster): value `Hosted`.
pub const KLUSTERLET_DEPLOY_MODE_ANNOTATION: &str =
    "import.open-cluster-management.io/klusterlet-deploy-mode";
/// ManagedCluster annotation of a cluster imported in hosted mode: the managed cluster whose
/// klusterlet runs it, for a HyperShift hosted cluster its hosting (management) cluster.
pub const HOSTING_CLUSTER_ANNOTATION: &str =
    "import.open-cluster-management.io/hosting-cluster-name";
/// The API group of ACM's cluster view (`managedclusters` there: the ManagedClusters the
/// requesting user may see; served by ACM, not by OCM alone).
pub const CLUSTERVIEW_GROUP: &str = "clusterview.open-cluster-management.io";

read_kind! {
    /// `addon.open-cluster-management.io/v1alpha1` ManagedClusterAddOn spec (nothing we read).
    ManagedClusterAddOnSpec,
    kube(
        group = "addon.open-cluster-management.io", version = "v1alpha1",
        kind = "ManagedClusterAddOn", plural = "managedclusteraddons", namespaced,
        status = "ManagedClusterAddOnStatus"
    ) {
        /// Namespace the agent is installed in on the managed cluster.
        #[serde(
            default,
            deserialize_with = "nullable",
            skip_serializing_if = "String::is_empty"
        )]
        pub install_namespace: String,
        /// Configurations of this cluster's own, overriding the ClusterManagementAddOn's (OCM's
        /// `AddOnConfig`). Lenient: an entry that cannot be read is dropped.
        #[serde(
            default,
            deserialize_with = "lenient_entries",
            skip_serializing_if = "Vec::is_empty"
        )]
        pub configs: Vec<AddOnConfig>,
    }
}

/// A configuration a ManagedClusterAddOn names for itself (OCM's `AddOnConfig`: group,
/// resource, namespace and name; only the group and resource are read).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AddOnConfig {
    /// API group of the configuration.
    #[serde(default, deserialize_with = "nullable")]
    pub group: String,
    /// Its resource ([`TEMPLATE_RESOURCE`], [`DEPLOYMENT_CONFIG_RESOURCE`], ...).
    #[serde(default, deserialize_with = "nullable")]
    pub resource: String,
}

read_kind! {
    /// `addon.open-cluster-management.io/v1alpha1` ClusterManagementAddOn spec (nothing we read).
    ClusterManagementAddOnSpec,
    kube(
        group = "addon.open-cluster-management.io", version = "v1alpha1",
        kind = "ClusterManagementAddOn", plural = "clustermanagementaddons",
        status = "ClusterManagementAddOnStatus"
    ) {}
}

/// ClusterManagementAddOn status: the rollout of each placement of its install strategy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterManagementAddOnStatus {
    /// One per placement of the install strategy (OCM's `InstallProgression`). Lenient.
    #[serde(
        default,
        deserialize_with = "lenient_entries",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub install_progressions: Vec<InstallProgression>,
}

/// The rollout of the add-on on one placement's clusters: the configurations it rolls out.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct InstallProgression {
    /// The configurations wanted on the placement's clusters (`desiredConfig`) and the ones last
    /// rolled out to all of them. Lenient.
    #[serde(
        default,
        deserialize_with = "lenient_entries",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub config_references: Vec<ConfigReference>,
}

impl ClusterManagementAddOn {
    /// The configuration of `resource` (group [`ADDON_GROUP`]) the add-on manager rolls out
    /// to the fleet: the desired one of every install progression naming one, when they agree
    /// (`None` when none names one, or placements want different ones: which applies to a
    /// cluster would take its placement decisions).
    pub fn wanted(&self, resource: &str) -> Option<&ConfigSpecHash> {
        let status = self.status.as_ref()?;
        let mut desired = status.install_progressions.iter().filter_map(|p| {
            p.config_references
                .iter()
                .find(|c| c.resource == resource && c.group == ADDON_GROUP)?
                .desired_config
                .as_ref()
        });
        let first = desired.next()?;
        desired.all(|d| d == first).then_some(first)
    }
}

/// ManagedClusterAddOn status: the conditions, and the configurations the add-on manager
/// wants applied and last applied (the add-on's version: [`TEMPLATE_RESOURCE`]).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ManagedClusterAddOnStatus {
    /// `Available`, `Progressing`, `RegistrationApplied`, `ManifestApplied`, ...
    #[serde(default, deserialize_with = "nullable")]
    pub conditions: Vec<Condition>,
    /// One per configuration of the add-on (its AddOnTemplate, its AddOnDeploymentConfig), set
    /// by OCM's add-on manager. Lenient: an entry that cannot be read is dropped, not the
    /// object.
    #[serde(
        default,
        deserialize_with = "lenient_entries",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub config_references: Vec<ConfigReference>,
}

/// A configuration of a ManagedClusterAddOn (OCM's `ConfigReference`): which one the add-on
/// manager wants (`desiredConfig`) and which one it last rolled out to the cluster
/// (`lastAppliedConfig`, set to the desired one when the rollout completes).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReference {
    /// API group of the configuration (`addon.open-cluster-management.io`).
    #[serde(default, deserialize_with = "nullable")]
    pub group: String,
    /// Its resource: [`TEMPLATE_RESOURCE`], [`DEPLOYMENT_CONFIG_RESOURCE`], ...
    #[serde(default, deserialize_with = "nullable")]
    pub resource: String,
    /// The configuration wanted, absent before the add-on manager chose one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_config: Option<ConfigSpecHash>,
    /// The configuration last rolled out, absent before the first rollout completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_config: Option<ConfigSpecHash>,
}

/// A configuration object and the hash of its spec (OCM's `ConfigSpecHash`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSpecHash {
    /// The object's name (for an AddOnTemplate, e.g. `update-status-0.1.0`: the version).
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// Its namespace (empty for a cluster-scoped AddOnTemplate).
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    pub namespace: String,
    /// The hash of its spec.
    #[serde(default, deserialize_with = "nullable")]
    pub spec_hash: String,
}

/// Reads a list leniently: missing, `null` or not a list → empty; entries that do not read as
/// `T` are dropped.
fn lenient_entries<'de, D, T>(de: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    Ok(match Option::<serde_json::Value>::deserialize(de)? {
        Some(serde_json::Value::Array(entries)) => entries
            .into_iter()
            .filter_map(|e| serde_json::from_value(e).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// ManagedClusterAddOn condition: the add-on manager is rolling a configuration out (status
/// `True`, reason [`PROGRESSING_REASONS`]`[0]`), or its last rollout ended (`False`: `Completed`,
/// `Failed`, ...).
pub const CONDITION_PROGRESSING: &str = "Progressing";
/// The reasons of the `Progressing` condition (OCM's `ProgressingReason*`): rolling out,
/// rolled out, failed to roll out, waiting for the canary clusters of the rollout strategy,
/// a configuration the add-on does not support.
pub const PROGRESSING_REASONS: [&str; 5] = [
    "Progressing",
    "Completed",
    "Failed",
    "WaitingForCanary",
    "ConfigurationUnsupported",
];
/// The resource of an add-on's AddOnTemplate configuration: its name carries the version
/// (`update-status-0.1.0`).
pub const TEMPLATE_RESOURCE: &str = "addontemplates";
/// The resource of an add-on's AddOnDeploymentConfig configuration.
pub const DEPLOYMENT_CONFIG_RESOURCE: &str = "addondeploymentconfigs";

impl ManagedClusterAddOn {
    /// The configuration reference of `resource` (group [`ADDON_GROUP`]), if present.
    pub fn config_reference(&self, resource: &str) -> Option<&ConfigReference> {
        self.status
            .as_ref()?
            .config_references
            .iter()
            .find(|c| c.resource == resource && c.group == ADDON_GROUP)
    }

    /// The condition of type `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()?
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
    }
}

read_kind! {
    /// `cluster.open-cluster-management.io/v1` ManagedCluster spec (nothing we read: its labels are
    /// what `--selector` and `--clusterset` match).
    ManagedClusterSpec,
    kube(
        group = "cluster.open-cluster-management.io", version = "v1", kind = "ManagedCluster",
        plural = "managedclusters"
    ) {
        /// Whether the hub accepts the cluster's agent.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub hub_accepts_client: bool,
    }
}

read_kind! {
    /// `cluster.open-cluster-management.io/v1alpha1` ClusterClaim (cluster-scoped, on a managed
    /// cluster): a fact about the cluster that the klusterlet's registration agent copies into its
    /// ManagedCluster's `status.clusterClaims` on the hub (at most 20 custom claims by default, the
    /// first by name), where a Placement's `claimSelector` can select on it. Written by the agent
    /// (`update-status-controller`'s claims reconciler): see [`CLAIM_STATE`] and the others.
    ClusterClaimSpec,
    kube(
        group = "cluster.open-cluster-management.io", version = "v1alpha1",
        kind = "ClusterClaim", plural = "clusterclaims"
    ) {
        /// The claim's value (at most 1024 characters, OCM's CRD).
        #[serde(default, deserialize_with = "nullable")]
        pub value: String,
    }
}

/// Claim: the state of the cluster's update as a whole (control plane and worker pools):
/// `Completed`, `Progressing`, `Paused`, `Stalled`, `Degraded` or `Unknown`.
pub const CLAIM_STATE: &str = "state.update.openshift.io";
/// Claim: the version the cluster updates (or updated last) to.
pub const CLAIM_TARGET: &str = "target.update.openshift.io";
/// Claim: `true` once every worker pool is updated to the target (a paused pool is not),
/// `false` otherwise.
pub const CLAIM_WORKERS_COMPLETE: &str = "workers-complete.update.openshift.io";

/// The label selector of the ManagedClusters in cluster set `set`.
pub fn clusterset_selector(set: &str) -> String {
    format!("{CLUSTERSET_LABEL}={set}")
}

/// Labels of a ManagedCluster, for display.
pub fn labels_of(mc: &ManagedCluster) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    mc.metadata.labels.as_ref().unwrap_or(&EMPTY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_managed_cluster_addon_reads_its_available_condition() {
        let yaml = r#"
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: update-status, namespace: cluster1, uid: u1}
spec: {installNamespace: open-cluster-management-agent-addon}
status:
  conditions:
  - {type: ManifestApplied, status: "True", reason: AddonManifestApplied, message: ok}
  - {type: Available, status: "False", reason: ProbeUnavailable, message: "0/1 replicas"}
  somethingNew: 1
"#;
        let mca: ManagedClusterAddOn = serde_saphyr::from_str(yaml).expect("parses");
        let a = mca.condition(CONDITION_AVAILABLE).expect("available");
        assert_eq!(
            (a.status.as_str(), a.reason.as_str()),
            ("False", "ProbeUnavailable")
        );
        assert_eq!(
            mca.spec.install_namespace,
            "open-cluster-management-agent-addon"
        );
        let bare: ManagedClusterAddOn = serde_saphyr::from_str(
            "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: ManagedClusterAddOn\nmetadata: {name: x}\nspec: {}\nstatus: {conditions: null}\n",
        )
        .expect("nulls read as defaults");
        assert!(bare.condition(CONDITION_AVAILABLE).is_none());
    }

    /// Issue #47 item 4: the version rolled out, from the add-on manager's config references
    /// (a status as OCM's add-on manager writes it, `configReferences` of OCM's v1alpha1).
    #[test]
    fn a_managed_cluster_addon_reads_its_desired_and_applied_template() {
        let yaml = r#"
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: update-status, namespace: cluster1}
spec: {}
status:
  conditions:
  - {type: Progressing, status: "True", reason: Progressing, message: "progressing... work is not ready"}
  configReferences:
  - group: addon.open-cluster-management.io
    resource: addontemplates
    name: update-status-0.2.0
    lastObservedGeneration: 1
    desiredConfig: {name: update-status-0.2.0, specHash: h2}
    lastAppliedConfig: {name: update-status-0.1.0, specHash: h1}
  - group: addon.open-cluster-management.io
    resource: addondeploymentconfigs
    name: update-status
    namespace: open-cluster-management-update-status
    desiredConfig: {name: update-status, namespace: open-cluster-management-update-status, specHash: d1}
    lastAppliedConfig: null
"#;
        let mca: ManagedClusterAddOn = serde_saphyr::from_str(yaml).expect("parses");
        let t = mca.config_reference(TEMPLATE_RESOURCE).expect("template");
        assert_eq!(
            t.desired_config.as_ref().map(|c| c.name.as_str()),
            Some("update-status-0.2.0")
        );
        assert_eq!(
            t.last_applied_config.as_ref().map(|c| c.spec_hash.as_str()),
            Some("h1")
        );
        let d = mca
            .config_reference(DEPLOYMENT_CONFIG_RESOURCE)
            .expect("deployment config");
        assert_eq!(
            d.desired_config.as_ref().map(|c| c.namespace.as_str()),
            Some("open-cluster-management-update-status")
        );
        assert!(d.last_applied_config.is_none(), "null reads as absent");
    }

    #[test]
    fn malformed_config_references_are_dropped_not_the_addon() {
        let read = |refs: &str| -> ManagedClusterAddOn {
            serde_saphyr::from_str(&format!(
                "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: ManagedClusterAddOn\nmetadata: {{name: x}}\nspec: {{}}\nstatus:\n  conditions: [{{type: Available, status: \"True\"}}]\n  configReferences: {refs}\n"
            ))
            .expect("reads despite a malformed configReferences")
        };
        for refs in ["bogus", "null", "{a: 1}", "[1, [], {desiredConfig: 5}]"] {
            let mca = read(refs);
            assert!(mca.config_reference(TEMPLATE_RESOURCE).is_none(), "{refs}");
            assert!(mca.condition(CONDITION_AVAILABLE).is_some(), "{refs}");
        }
        let kept = read(
            "[7, {group: addon.open-cluster-management.io, resource: addontemplates, desiredConfig: {name: update-status-0.2.0}}]",
        );
        let t = kept
            .config_reference(TEMPLATE_RESOURCE)
            .expect("the readable entry");
        assert_eq!(
            t.desired_config
                .as_ref()
                .map(|c| (c.name.as_str(), c.spec_hash.as_str())),
            Some(("update-status-0.2.0", "")),
            "a missing spec hash is empty"
        );
    }

    #[test]
    fn clusterset_selector_names_the_label() {
        assert_eq!(
            clusterset_selector("prod"),
            "cluster.open-cluster-management.io/clusterset=prod"
        );
        let mc: ManagedCluster = serde_saphyr::from_str(
            "apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata: {name: c1, labels: {env: prod}}\nspec: {hubAcceptsClient: true}\n",
        )
        .expect("parses");
        assert_eq!(labels_of(&mc)["env"], "prod");
        assert!(mc.spec.hub_accepts_client);
    }
}
