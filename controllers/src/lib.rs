//! update-status controllers: the pure assessment logic ([`assess`]) and the reconcilers that
//! watch OpenShift inputs and write its results ([`control_plane_reconciler`],
//! [`worker_pools_reconciler`], and [`alerts_reconciler`] which polls Prometheus through
//! [`prometheus`]), with the shared watch caches ([`watch`]), the change-only
//! writer ([`writer`]) and the Prometheus metrics ([`metrics`]); and the optional
//! [`hub_sync`], which copies our objects to a fleet hub. The binary runs them under
//! [`supervisor`] and [`leader`] election, and answers its probes from [`health`].
pub mod alerts_reconciler;
pub mod assess;
pub mod clock;
pub mod control_plane_reconciler;
pub mod health;
pub mod hub_sync;
pub mod leader;
pub mod metrics;
pub mod prometheus;
pub mod runner;
pub mod supervisor;
pub mod watch;
pub mod worker_pools_reconciler;
pub mod writer;
