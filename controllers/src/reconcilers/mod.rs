//! The reconcilers, one per set of objects it owns: each reads the caches, calls its
//! step of the pure composition (`update_status_assess::compose`) and writes what differs.
//! [`control_plane`] (the ControlPlaneUpdateStatus and the control plane's insights, and the
//! unreadable inputs' insights), [`worker_pools`] (the WorkerPoolUpdateStatus objects, the
//! node and pool insights, incrementally), [`alerts`] (Prometheus' firing alerts as health
//! insights, polled through [`crate::cache::prometheus`]); [`claims`] (the Open Cluster Management
//! ClusterClaims that feed ACM's upgrade tools, from our status objects); [`estimates`] (the
//! UpdateHistory: update durations learned by watching, and the remaining-time estimates made
//! from them); and [`events`], which writes none of our objects: it tells the update's story as
//! Kubernetes Events from the changes of ours. On a fleet hub (`--mode=hub`), [`hub_quota`]
//! keeps the ResourceQuota of every cluster namespace with the add-on, and [`hub_hosted`] the
//! quota and RoleBinding of every hosted cluster whose hosting cluster reports it. In hosted mode
//! (`--mode=hosted`), [`hosted`] writes every HostedCluster's objects in one pass.
//!
//!
//! Every reconciler is built from one [`context::Context`] (like kube-rs `Controller`'s
//! context): the client, the namespace written, the caches, the metrics and the cluster's
//! identity, made once by the start-up ([`crate::app`]); a reconciler's `new` takes it and what
//! is its own alone.
//!
//! May import: [`crate::cache`], [`crate::runtime`], [`crate::metrics`].
pub mod alerts;
pub mod backoffs;
pub mod claims;
pub mod context;
pub mod control_plane;
pub mod estimates;
pub mod events;
pub mod hosted;
pub mod hub_hosted;
pub mod hub_quota;
pub mod worker_pools;
