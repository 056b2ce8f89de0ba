//! Types of update-status: the three CRD kinds it writes ([`crd`]), the OpenShift inputs it
//! reads ([`input`]) and the HyperShift and cluster-api inputs of hosted mode ([`hosted`]).
//! Types only: reading captured clusters is the `update-status-snapshot` crate's job.
pub mod crd;
pub mod hosted;
pub mod input;
