//! The add-on's own version as the fleet shows it (issue #47 item 4): which AddOnTemplate (its
//! name carries the version, `update-status-0.1.0`) and AddOnDeploymentConfig OCM's add-on
//! manager wants on the cluster and which it last rolled out (the ManagedClusterAddOn's
//! `status.configReferences`), and its `Progressing` condition (the rollout's state). They fill
//! `addOn.template`, `addOn.deploymentConfig` and `addOn.rollout` in JSON, and the `ADD-ON`
//! column only while something is not rolled out: an up-to-date add-on reads as before.
//!
//! A cluster the rollout passed over (offline while it went by, or not yet its turn) keeps its
//! old configuration as both desired and applied, its last rollout `Completed`: only the
//! ClusterManagementAddOn's install progressions name the configuration the fleet is moving
//! to. [`Rollout::mark_pending`] compares them (`fleetDesired` in JSON, `Pending (...)` in the
//! column).

use serde::Serialize;
use update_status_api::acm::{
    ADDON_GROUP, ADDON_NAME, CONDITION_PROGRESSING, ClusterManagementAddOn, ConfigSpecHash,
    DEPLOYMENT_CONFIG_RESOURCE, HOSTED_ADDON_NAME, ManagedClusterAddOn, TEMPLATE_RESOURCE,
};

/// A condition of a cluster's ManagedClusterAddOn (or the agent's own, from its copy).
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct AddOnCondition {
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// The condition's reason.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The condition's message.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A configuration of the add-on: the one wanted and the one last rolled out.
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct DesiredApplied {
    /// The configuration the add-on manager wants on the cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired: Option<ConfigSpecHash>,
    /// The one it last rolled out (absent before the first rollout completed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<ConfigSpecHash>,
    /// The one the ClusterManagementAddOn rolls out to the fleet, when it is neither the
    /// cluster's desired one nor its applied one: the rollout has not reached the cluster yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet_desired: Option<ConfigSpecHash>,
}

impl DesiredApplied {
    /// The configuration reference of `resource` on `mca`; `None` when it has none (an older
    /// add-on manager, a status not written yet).
    pub(super) fn of(mca: &ManagedClusterAddOn, resource: &str) -> Option<Self> {
        let r = mca.config_reference(resource)?;
        let found = DesiredApplied {
            desired: r.desired_config.clone(),
            applied: r.last_applied_config.clone(),
            fleet_desired: None,
        };
        (found.desired.is_some() || found.applied.is_some()).then_some(found)
    }

    /// The desired configuration when it is not the one rolled out.
    fn pending(&self) -> Option<&ConfigSpecHash> {
        self.desired
            .as_ref()
            .filter(|d| self.applied.as_ref() != Some(*d))
    }
}

/// The add-on's configurations and rollout on one cluster (flattened into `addOn`).
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Rollout {
    /// The AddOnTemplate: its name carries the add-on's version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<DesiredApplied>,
    /// The AddOnDeploymentConfig.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment_config: Option<DesiredApplied>,
    /// The `Progressing` condition: its reason is the rollout's state (`Progressing`,
    /// `Completed`, `Failed`, `WaitingForCanary`, `ConfigurationUnsupported`).
    #[serde(rename = "rollout", skip_serializing_if = "Option::is_none")]
    pub progressing: Option<AddOnCondition>,
    /// The resources the ManagedClusterAddOn configures for itself (`spec.configs`): the
    /// fleet's configuration is not meant for it.
    #[serde(skip)]
    pub own_configs: Vec<String>,
}

impl Rollout {
    /// What `mca`'s status says of its configurations and rollout.
    pub(super) fn of(mca: &ManagedClusterAddOn) -> Self {
        Rollout {
            template: DesiredApplied::of(mca, TEMPLATE_RESOURCE),
            deployment_config: DesiredApplied::of(mca, DEPLOYMENT_CONFIG_RESOURCE),
            progressing: mca
                .condition(CONDITION_PROGRESSING)
                .map(|c| AddOnCondition {
                    status: c.status.clone(),
                    reason: c.reason.clone(),
                    message: c.message.clone(),
                }),
            own_configs: mca
                .spec
                .configs
                .iter()
                .filter(|c| c.group == ADDON_GROUP)
                .map(|c| c.resource.clone())
                .collect(),
        }
    }

    /// Notes in `fleet_desired` the configurations `cma` rolls out to the fleet that this
    /// cluster has neither as desired nor as applied (and does not configure for itself).
    pub(super) fn mark_pending(&mut self, cma: &ClusterManagementAddOn) {
        for (resource, slot) in [
            (TEMPLATE_RESOURCE, &mut self.template),
            (DEPLOYMENT_CONFIG_RESOURCE, &mut self.deployment_config),
        ] {
            if self.own_configs.iter().any(|r| r == resource) {
                continue;
            }
            let Some(wanted) = cma.wanted(resource) else {
                continue;
            };
            let config = slot.get_or_insert_with(DesiredApplied::default);
            let known = [&config.desired, &config.applied];
            if known.iter().all(|c| c.as_ref() != Some(wanted)) {
                config.fleet_desired = Some(wanted.clone());
            }
        }
    }

    /// The rollout's part of the ADD-ON column, `None` when the add-on is rolled out:
    /// `Upgrading (0.1.0 -> 0.2.0)`, `Installing (0.2.0)`, `Upgrading (deployment config)`,
    /// `Rollout failed (...)`, `Waiting for canary (...)`, `Configuration unsupported`, and
    /// without a rollout under way `template 0.1.0 (0.2.0 desired)`.
    pub(super) fn text(&self) -> Option<String> {
        let change = self.change();
        let with = |what: &str| match &change {
            Some(c) => format!("{what} ({c})"),
            None => what.to_owned(),
        };
        let p = self.progressing.as_ref();
        match p.map(|p| (p.status.as_str(), p.reason.as_str())) {
            Some((_, "Progressing")) if change.is_none() => Some("Progressing".to_owned()),
            Some((_, "Progressing")) if self.installing() => Some(with("Installing")),
            Some((_, "Progressing")) => Some(with("Upgrading")),
            Some((_, "Failed")) => Some(with("Rollout failed")),
            Some((_, "WaitingForCanary")) => Some(with("Waiting for canary")),
            Some((_, "ConfigurationUnsupported")) => Some("Configuration unsupported".to_owned()),
            Some(("True", reason)) => Some(with(&format!("Progressing {reason}"))),
            _ => self.not_rolled_out().or_else(|| self.pending()),
        }
    }

    /// A configuration the fleet rolls out that has not reached the cluster:
    /// `Pending (0.1.0 -> 0.2.0)`, `Pending (deployment config)`.
    fn pending(&self) -> Option<String> {
        if let Some(t) = &self.template
            && let Some(wanted) = &t.fleet_desired
        {
            let to = version(&wanted.name);
            return Some(match &t.applied {
                Some(a) if a.name != wanted.name => {
                    format!("Pending ({} -> {to})", version(&a.name))
                }
                _ => format!("Pending ({to})"),
            });
        }
        self.deployment_config
            .as_ref()
            .and_then(|c| c.fleet_desired.as_ref())
            .map(|_| "Pending (deployment config)".to_owned())
    }

    /// The first rollout of the template: nothing applied yet.
    fn installing(&self) -> bool {
        self.template
            .as_ref()
            .is_some_and(|t| t.desired.is_some() && t.applied.is_none())
    }

    /// What a rollout changes: `0.1.0 -> 0.2.0`, `0.2.0` (nothing applied yet), `0.2.0
    /// changed` (the same template, another spec), `deployment config`.
    fn change(&self) -> Option<String> {
        if let Some(t) = &self.template
            && let Some(desired) = t.pending()
        {
            let to = version(&desired.name);
            return Some(match &t.applied {
                None => to.to_owned(),
                Some(a) if a.name == desired.name => format!("{to} changed"),
                Some(a) => format!("{} -> {to}", version(&a.name)),
            });
        }
        self.deployment_config
            .as_ref()
            .and_then(DesiredApplied::pending)
            .map(|_| "deployment config".to_owned())
    }

    /// A configuration not rolled out while no rollout is under way.
    fn not_rolled_out(&self) -> Option<String> {
        if let Some(t) = &self.template
            && let Some(desired) = t.pending()
        {
            let to = version(&desired.name);
            return Some(match &t.applied {
                None => format!("template {to} not applied"),
                Some(a) if a.name == desired.name => format!("template {to} changed, not applied"),
                Some(a) => format!("template {} ({to} desired)", version(&a.name)),
            });
        }
        self.deployment_config
            .as_ref()
            .and_then(DesiredApplied::pending)
            .map(|_| "deployment config not applied".to_owned())
    }
}

/// The version in an AddOnTemplate's name (`update-status-0.1.0` → `0.1.0`); the whole name
/// when it is not one of ours.
pub fn version(template: &str) -> &str {
    [HOSTED_ADDON_NAME, ADDON_NAME]
        .iter()
        .find_map(|prefix| template.strip_prefix(prefix)?.strip_prefix('-'))
        .filter(|v| !v.is_empty())
        .unwrap_or(template)
}
