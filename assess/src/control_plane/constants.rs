//! The control-plane rules' words and thresholds: the API group, condition types and reasons,
//! insight sources, runbook and documentation links, and the D.3/D.4 age thresholds.

use crate::format::{HOUR, MINUTE};

/// API group of ClusterVersion and ClusterOperator.
pub const CONFIG_GROUP: &str = "config.openshift.io";

/// Runbook of D.1, D.2 and D.4.
pub const REFERENCE_CO_DEGRADED: &str = "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDegraded.md";
/// Runbook of D.3.
pub const REFERENCE_CO_DOWN: &str = "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDown.md";
/// Documentation of D.5.
pub const REFERENCE_HISTORY: &str = "https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/gathering-data-cluster-update.html#gathering-clusterversion-history-cli_troubleshooting_updates";

/// `source` of D.1.
pub const SOURCE_CV_NO_FAILING: &str = "ClusterVersionNoFailing";
/// `source` of D.2.
pub const SOURCE_CV_FAILING: &str = "ClusterVersionFailing";
/// `source` of D.3.
pub const SOURCE_CO_UNAVAILABLE: &str = "ClusterOperatorUnavailable";
/// `source` of D.4.
pub const SOURCE_CO_DEGRADED: &str = "ClusterOperatorDegraded";
/// `source` of D.5.
pub const SOURCE_PREVIOUS_PARTIAL: &str = "PreviousUpdatePartial";
/// `source` of the insight saying the machine-config operator's Deployment is not visible
/// (controller only, see [`McoImage::Absent`](crate::McoImage::Absent)).
pub const SOURCE_MCO_DEPLOYMENT_ABSENT: &str = "MachineConfigOperatorDeploymentAbsent";
/// Documentation of the machine-config operator.
pub const REFERENCE_MCO: &str = "https://docs.openshift.com/container-platform/latest/post_installation_configuration/machine-configuration-tasks.html#understanding-the-machine-config-operator";
/// The ClusterOperator whose `operator-image` version is compared with the MCO image (B.2).
pub const MACHINE_CONFIG: &str = "machine-config";
/// The ClusterOperator version compared with the MCO image (B.2).
pub const OPERATOR_IMAGE: &str = "operator-image";

/// Condition type `Updating`.
pub const CONDITION_UPDATING: &str = "Updating";
/// Condition type `Healthy`.
pub const CONDITION_HEALTHY: &str = "Healthy";
/// Reason of `Updating` when the ClusterVersion has no `Progressing` condition.
pub const REASON_NO_PROGRESSING: &str = "NoProgressingCondition";

/// D.3/D.4: an operator condition gives an insight once it is older than this (strictly).
pub(super) const CO_INSIGHT_THRESHOLD: i128 = 5 * MINUTE;
/// D.3: an unavailable operator is an Error once older than this (strictly).
pub(super) const CO_UNAVAILABLE_ERROR: i128 = 20 * MINUTE;
/// D.4: a degraded operator is an Error once older than this (strictly).
pub(super) const CO_DEGRADED_ERROR: i128 = 40 * MINUTE;

/// How far `requeue_after` looks ahead for a change of the estimate's assessment.
pub(super) const REQUEUE_HORIZON: i128 = 30 * 24 * HOUR;
