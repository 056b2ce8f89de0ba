//! Types of update-status: the three CRD kinds it writes ([`crd`]), the OpenShift inputs it
//! reads ([`input`]), the HyperShift and cluster-api inputs of hosted mode ([`hosted`]) and the
//! Open Cluster Management kinds of a fleet hub ([`acm`]).
//! Types only: reading captured clusters is the `update-status-snapshot` crate's job.
pub mod acm;
pub mod crd;
pub mod history;
pub mod hosted;
pub mod input;
