//! update-status controllers: the reconcilers that watch OpenShift inputs, call the pure core
//! ([`assess`], the `update-status-assess` crate, re-exported) for their share of the desired
//! objects, and write what differs ([`control_plane_reconciler`],
//! [`worker_pools_reconciler`], and [`alerts_reconciler`] which polls Prometheus through
//! [`prometheus`]), with the shared watch caches ([`watch`]), the change-only
//! writer ([`writer`]), the Prometheus metrics ([`metrics`]) and the endpoints serving them
//! ([`metrics_server`]); and the optional [`hub_sync`], which copies our objects to a fleet hub.
//! The binary runs them under [`supervisor`] and [`leader`] election, and answers its probes
//! from [`health`].
pub mod acm_manifests;
pub mod alerts_reconciler;
pub mod cached;
pub use update_status_assess as assess;
pub mod client;
pub mod clock;
pub mod control_plane_reconciler;
pub mod health;
pub mod hosted_guest;
pub mod hosted_reconciler;
pub mod hub_sync;
pub mod leader;
pub mod metrics;
pub mod metrics_server;
pub mod node_cache;
pub mod prometheus;
pub mod runner;
pub mod supervisor;
pub mod watch;
pub mod worker_pools_reconciler;
pub mod writer;
