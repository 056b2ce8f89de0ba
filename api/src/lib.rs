//! API of update-status: the three CRD kinds it writes, the OpenShift inputs it reads, and
//! reading captured snapshots of those inputs.
pub mod acm;
pub mod crd;
pub mod hosted;
pub mod input;
pub mod snapshot;
