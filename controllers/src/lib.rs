//! update-status controllers: the process that watches the inputs, calls the pure core
//! ([`assess`], the `update-status-assess` crate, re-exported) for the desired objects, and
//! writes what differs. In layers, each importing only the ones below it (an `xtask` test
//! checks it; docs/architecture.md draws it):
//!
//! - [`app`]: the start-up of both modes (`--mode=standalone|hosted`), one skeleton; what
//!   `main.rs` calls.
//! - [`hub_sync`]: copies our objects to a fleet hub (`--hub-kubeconfig`).
//! - [`reconcilers`]: the standalone reconcilers (control plane, worker pools, alerts).
//! - [`hosted`]: hosted mode's reconciler and the hosted clusters' guest view.
//! - [`cache`]: the watches and what their caches hold; wakes whom the start-up routes.
//! - [`runtime`]: the reconcile loop, the change-only writer, supervisor, leader election,
//!   health, API client, clock.
//! - [`metrics`]: the Prometheus metrics and the endpoints serving them (`/metrics`, probes).
//!
//! Beside the layers, [`acm_manifests`] generates the ACM add-on's manifests (`crdgen`); it
//! imports nothing of the crate.
pub mod acm_manifests;
pub mod app;
pub use update_status_assess as assess;
pub mod cache;
pub mod hosted;
pub mod hub_sync;
pub mod metrics;
pub mod reconcilers;
pub mod runtime;
