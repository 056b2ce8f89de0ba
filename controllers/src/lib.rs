//! update-status controllers: the pure assessment logic ([`assess`]) and the reconcilers that
//! watch OpenShift inputs and write its results.
pub mod assess;
