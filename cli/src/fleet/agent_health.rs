//! The agent's own health as the fleet shows it: the condition `AgentDegraded` the agent keeps
//! on the hub copy of its ControlPlaneUpdateStatus (issue #48 item 2: on the copy it owns, not
//! on its ManagedClusterAddOn, whose status it may no longer patch). It fills the `Degraded`
//! part of the `ADD-ON` column and `addOn.degraded` in JSON.

use update_status_api::acm::CONDITION_AGENT_DEGRADED;
use update_status_api::crd::{ConditionStatus, ControlPlaneUpdateStatus};

use super::model::AddOnCondition;

/// The agent's health on the control plane's copy `cp`, when it reports one.
pub fn on_copy(cp: &ControlPlaneUpdateStatus) -> Option<AddOnCondition> {
    let c = cp
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == CONDITION_AGENT_DEGRADED)?;
    let status = match c.status {
        ConditionStatus::True => "True",
        ConditionStatus::False => "False",
        ConditionStatus::Unknown => "Unknown",
    };
    Some(AddOnCondition {
        status: status.to_owned(),
        reason: c.reason.clone(),
        message: c.message.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{
        Condition, ControlPlaneUpdateStatusSpec, ControlPlaneUpdateStatusStatus,
    };

    #[test]
    fn the_agents_health_is_read_from_its_copy() {
        let mut cp = ControlPlaneUpdateStatus::new("c1", ControlPlaneUpdateStatusSpec {});
        assert_eq!(on_copy(&cp), None, "no status");
        cp.status = Some(ControlPlaneUpdateStatusStatus {
            conditions: vec![
                Condition {
                    type_: "Healthy".into(),
                    status: ConditionStatus::True,
                    ..Default::default()
                },
                Condition {
                    type_: CONDITION_AGENT_DEGRADED.into(),
                    status: ConditionStatus::True,
                    reason: "PrometheusUnreachable".into(),
                    message: "cannot read alerts".into(),
                    last_transition_time: None,
                },
            ],
            ..Default::default()
        });
        assert_eq!(
            on_copy(&cp),
            Some(AddOnCondition {
                status: "True".into(),
                reason: "PrometheusUnreachable".into(),
                message: "cannot read alerts".into(),
            })
        );
    }
}
