//! update-status controllers: the process that watches the inputs, calls the pure core
//! (the `update-status-assess` crate) for the desired objects, and
//! writes what differs. In layers, each importing only the ones below it (an `xtask` test
//! checks it; docs/architecture.md draws it):
//!
//! - [`app`]: the start-up of both modes (`--mode=standalone|hosted`), one skeleton; what
//!   `main.rs` calls.
//! - [`hub_sync`]: copies our objects to a fleet hub (`--hub-kubeconfig`).
//! - [`reconcilers`]: the reconcilers, one per object set they own: standalone's (control
//!   plane, worker pools, alerts, events, claims, estimates, the hub's quota) and hosted
//!   mode's (`reconcilers::hosted`).
//! - [`cache`]: the watches and what their caches hold, standalone's and hosted mode's (with
//!   the hosted clusters' guest view, `cache::guest`); wakes whom the start-up routes.
//! - [`runtime`]: the reconcile loop, the change-only writer, supervisor, leader election,
//!   health, API client, clock.
//! - [`endpoints`]: the HTTP endpoints: `/metrics` (HTTPS, its authorization and connection
//!   slots) and the probes.
//! - [`metrics`]: the Prometheus metrics, one family per concern, and their registry.
//!
//! Beside the layers, generators that import nothing of the crate: [`acm_manifests`] (the ACM
//! add-on's manifests, `crdgen`), [`dashboards`] (the console's and ACM Grafana's dashboards,
//! `crdgen`) and [`olm_bundle`] (the OLM bundle and its catalog, `bundlegen`); and
//! [`console_assets`], which serves the console plugin's built assets over HTTPS
//! (`update-status-console-plugin`), with the certificate handling of `/metrics`.
pub mod acm_manifests;
pub mod app;
pub mod cache;
pub mod console_assets;
pub mod dashboards;
pub mod endpoints;
pub mod hub_sync;
pub mod metrics;
pub mod olm_bundle;
pub mod reconcilers;
pub mod runtime;
