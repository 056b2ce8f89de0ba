//! Health insights: a problem worth an administrator's attention, its impact (level, type) and
//! its remediation.

use jiff::Timestamp;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::limits;
use crate::crd::resource::ResourceRef;

fn is_zero(n: &u32) -> bool {
    *n == 0
}

label_enum! {
    /// Severity of a health insight.
    pub enum ImpactLevel {
        /// Cannot tell (e.g. the alert source is unreachable).
        #[default]
        Unknown,
        /// For information.
        Info,
        /// May need attention.
        Warning,
        /// Needs attention.
        Error,
        /// Needs attention now.
        Critical,
    }
}

impl ImpactLevel {
    /// Text as shown.
    pub fn as_str(self) -> &'static str {
        match self {
            ImpactLevel::Unknown => "Unknown",
            ImpactLevel::Info => "Info",
            ImpactLevel::Warning => "Warning",
            ImpactLevel::Error => "Error",
            ImpactLevel::Critical => "Critical",
        }
    }
    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            ImpactLevel::Unknown => "unknown",
            ImpactLevel::Info => "info",
            ImpactLevel::Warning => "warning",
            ImpactLevel::Error => "error",
            ImpactLevel::Critical => "critical",
        }
    }
    /// Every level, least severe first.
    pub const ALL: [ImpactLevel; 5] = [
        ImpactLevel::Unknown,
        ImpactLevel::Info,
        ImpactLevel::Warning,
        ImpactLevel::Error,
        ImpactLevel::Critical,
    ];

    /// The level whose label value ([`ImpactLevel::slug`]) is `slug`.
    pub fn from_slug(slug: &str) -> Option<ImpactLevel> {
        ImpactLevel::ALL.into_iter().find(|l| l.slug() == slug)
    }
}

/// A doubt about a health insight that `oc`'s text does not carry: ours only (the insight
/// objects, `-o json|yaml`), so that the text stays `oc`'s.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Hash)]
pub enum Caveat {
    /// The alert is named like one known to affect updates (`PodDisruptionBudgetAtLimit`,
    /// `PodDisruptionBudgetLimit`), and described so as `oc` does (it classifies by name), but
    /// its source cannot be told: Prometheus' `/api/v1/alerts` carries no mark a tenant's rule
    /// cannot set (user-workload monitoring can raise an alert of that name about its own
    /// namespace). Alerts about `openshift-*` and `kube-*` namespaces have no caveat.
    AlertSourceUnverified,
}

label_enum! {
    /// What a problem affects.
    pub enum ImpactType {
        /// No impact.
        #[default]
        None,
        /// Unknown impact.
        Unknown,
        /// The API may be unavailable.
        #[serde(rename = "API Availability")]
        ApiAvailability,
        /// Less capacity for workloads.
        #[serde(rename = "Cluster Capacity")]
        ClusterCapacity,
        /// Applications may be unavailable.
        #[serde(rename = "Application Availability")]
        ApplicationAvailability,
        /// Applications are down.
        #[serde(rename = "Application Outage")]
        ApplicationOutage,
        /// Data may be lost.
        #[serde(rename = "Data Loss")]
        DataLoss,
        /// The update goes slower.
        #[serde(rename = "Update Speed")]
        UpdateSpeed,
        /// The update does not proceed.
        #[serde(rename = "Update Stalled")]
        UpdateStalled,
    }
}

impl ImpactType {
    /// Text as shown.
    pub fn as_str(self) -> &'static str {
        match self {
            ImpactType::None => "None",
            ImpactType::Unknown => "Unknown",
            ImpactType::ApiAvailability => "API Availability",
            ImpactType::ClusterCapacity => "Cluster Capacity",
            ImpactType::ApplicationAvailability => "Application Availability",
            ImpactType::ApplicationOutage => "Application Outage",
            ImpactType::DataLoss => "Data Loss",
            ImpactType::UpdateSpeed => "Update Speed",
            ImpactType::UpdateStalled => "Update Stalled",
        }
    }
    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            ImpactType::None => "none",
            ImpactType::Unknown => "unknown",
            ImpactType::ApiAvailability => "api-availability",
            ImpactType::ClusterCapacity => "cluster-capacity",
            ImpactType::ApplicationAvailability => "application-availability",
            ImpactType::ApplicationOutage => "application-outage",
            ImpactType::DataLoss => "data-loss",
            ImpactType::UpdateSpeed => "update-speed",
            ImpactType::UpdateStalled => "update-stalled",
        }
    }
}

/// Impact of a problem.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
pub struct Impact {
    /// Severity.
    pub level: ImpactLevel,
    /// What it affects.
    #[serde(rename = "type")]
    pub type_: ImpactType,
    /// One line.
    #[schemars(length(min = 1, max = limits::SUMMARY))]
    pub summary: String,
    /// Details.
    #[serde(default)]
    #[schemars(length(max = limits::DESCRIPTION))]
    pub description: String,
}

/// What to do about a problem.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
pub struct Remediation {
    /// A runbook or documentation URL.
    #[schemars(length(min = 1, max = limits::REFERENCE))]
    pub reference: String,
}

/// A problem worth an administrator's attention.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct HealthInsight {
    /// When the problem began, when known. Kept across controller restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// Impact.
    pub impact: Impact,
    /// Remediation.
    pub remediation: Remediation,
    /// Other resources involved, each read from an input (the pods and PodDisruptionBudgets
    /// blocking a node's drain, the node's pool and target MachineConfig, the objects an
    /// alert's labels name): at most [`limits::RELATED_SHOWN`], most telling first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = limits::RELATED))]
    pub related: Vec<ResourceRef>,
    /// How many more related resources there are than `related` lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub related_omitted: u32,
    /// The rule that produced it (`ClusterOperatorDegraded`, `NodeDegraded`, `Alert`, ...).
    #[schemars(length(min = 1, max = limits::SOURCE))]
    pub source: String,
    /// A doubt about this insight that its text (`oc`'s) does not say, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caveat: Option<Caveat>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impact_types_serialize_as_oc_prints_them() {
        assert_eq!(
            serde_json::to_value(ImpactType::ApiAvailability).expect("json"),
            "API Availability"
        );
    }

    #[test]
    fn a_level_reads_back_from_its_label_value() {
        for l in ImpactLevel::ALL {
            assert_eq!(ImpactLevel::from_slug(l.slug()), Some(l));
        }
        assert_eq!(ImpactLevel::from_slug("Error"), None);
        assert_eq!(ImpactLevel::from_slug(""), None);
    }
}
