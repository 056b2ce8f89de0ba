//! The three kinds update-status writes (group `update.openshift.io`, version `v1alpha1`,
//! all namespaced, all in the kubectl category `updatestatus`). See `docs/assessment-contract.md` and
//! `shared/reference/design.md`.
//!
//! Everything lives in `.status` (the status subresource); the objects have no spec. An object
//! changes only when its meaning changes: there are no heartbeat fields.
//!
//! One file per concern, all re-exported here (`update_status_api::crd::Condition`):
//! [`insight`] (UpdateInsight), [`status`] (ControlPlaneUpdateStatus, WorkerPoolUpdateStatus),
//! [`health`] (the content of health insights), [`assessment`] (assessments, node phases),
//! [`condition`], [`resource`], and the [`labels`] and schema [`limits`] they share.

/// A fieldless enum used as a label value (assessments, phases, scopes, impacts): copied,
/// compared, ordered and hashed, with its JSON schema; the variant marked `#[default]` is the
/// default.
macro_rules! label_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($body:tt)* }) => {
        #[derive(
            ::serde::Serialize,
            ::serde::Deserialize,
            Clone,
            Copy,
            Debug,
            PartialEq,
            Eq,
            ::schemars::JsonSchema,
            Default,
            Hash,
            PartialOrd,
            Ord,
        )]
        $(#[$meta])*
        pub enum $name { $($body)* }
    };
}

pub mod assessment;
pub mod condition;
pub mod health;
pub mod insight;
pub mod labels;
pub mod limits;
pub mod resource;
pub mod status;

pub use assessment::{Assessment, NodePhase};
pub use condition::{Condition, ConditionStatus};
pub use health::{Caveat, HealthInsight, Impact, ImpactLevel, ImpactType, Remediation};
pub use insight::{
    InsightScope, InsightType, NodeTimeline, ProgressInsight, ScopeType, UpdateInsight,
    UpdateInsightSpec, UpdateInsightStatus, VersionPair,
};
pub use resource::ResourceRef;
pub use status::{
    ControlPlaneUpdateStatus, ControlPlaneUpdateStatusSpec, ControlPlaneUpdateStatusStatus,
    ControlPlaneVersions, HealthCounts, NodeCounts, OperatorCounts, WorkerPoolUpdateStatus,
    WorkerPoolUpdateStatusSpec, WorkerPoolUpdateStatusStatus,
};

/// API group of the three kinds.
pub const GROUP: &str = "update.openshift.io";
/// API version of the three kinds.
pub const VERSION: &str = "v1alpha1";
/// kubectl category shared by the three kinds.
pub const CATEGORY: &str = "updatestatus";

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;

    #[test]
    fn crds_have_category_shortnames_status_and_cel() {
        for (crd, short) in [
            (UpdateInsight::crd(), "uins"),
            (ControlPlaneUpdateStatus::crd(), "cpus"),
            (WorkerPoolUpdateStatus::crd(), "wpus"),
        ] {
            assert_eq!(crd.spec.group, GROUP);
            assert_eq!(crd.spec.scope, "Namespaced");
            assert_eq!(
                crd.spec.names.categories.as_deref(),
                Some(&[CATEGORY.to_string()][..])
            );
            assert_eq!(
                crd.spec.names.short_names.as_deref(),
                Some(&[short.to_string()][..])
            );
            let v = &crd.spec.versions[0];
            assert_eq!(v.name, VERSION);
            assert!(
                v.subresources
                    .as_ref()
                    .and_then(|s| s.status.as_ref())
                    .is_some()
            );
            assert!(
                v.additional_printer_columns
                    .as_ref()
                    .is_some_and(|c| c.len() >= 5)
            );
            let text = serde_json::to_string(&crd).expect("json");
            assert!(
                text.contains("x-kubernetes-validations"),
                "{short} has no CEL rule"
            );
        }
    }
}
