//! Conditions (`Updating`, `Healthy`, `Available`, `Degraded`) of the status objects and of
//! progress insights.

use jiff::Timestamp;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::limits;

/// `True`, `False` or `Unknown`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema, Default, Hash)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// It does not.
    False,
    /// Cannot tell.
    #[default]
    Unknown,
}

/// A condition (`Updating`, `Healthy`, `Available`, `Degraded`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default, Hash)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type.
    #[serde(rename = "type")]
    #[schemars(length(min = 1, max = 64))]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: ConditionStatus,
    /// CamelCase reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = limits::CONDITION_REASON))]
    pub reason: String,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = limits::CONDITION_MESSAGE))]
    pub message: String,
    /// When the condition last changed: the input's transition time when the condition is
    /// copied from one; else when update-status first observed its current status (kept
    /// across restarts, changed only when the status changes). Objects written by the CLI's
    /// offline mode say their evaluation instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Timestamp>,
}
