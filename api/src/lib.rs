//! Types of update-status: the three CRD kinds it writes ([`crd`]), the OpenShift inputs it
//! reads ([`input`]), the HyperShift and cluster-api inputs of hosted mode ([`hosted`]) and the
//! Open Cluster Management kinds of a fleet hub ([`acm`]).
//! Types only: reading captured clusters is the `update-status-snapshot` crate's job.
/// A read-side view of another project's kind (schema disabled: its CRD is not ours): `$spec`
/// with `$fields` (camelCase in JSON), made a [`kube::CustomResource`] with the `#[kube(...)]`
/// arguments `$kube` (group, version, kind, plural, scope, status).
macro_rules! read_kind {
    ($(#[$meta:meta])* $spec:ident, kube($($kube:tt)*) { $($fields:tt)* }) => {
        #[derive(
            ::kube::CustomResource,
            ::serde::Serialize,
            ::serde::Deserialize,
            Clone,
            Debug,
            Default,
            PartialEq,
        )]
        #[kube($($kube)*, schema = "disabled", derive = "Default", derive = "PartialEq")]
        #[serde(rename_all = "camelCase")]
        $(#[$meta])*
        pub struct $spec {
            $($fields)*
        }
    };
}

pub mod acm;
pub mod crd;
pub mod history;
pub mod hosted;
pub mod input;
