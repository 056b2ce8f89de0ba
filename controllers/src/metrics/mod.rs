//! Prometheus metrics: the update's state for alerting (bounded cardinality: no per-node
//! series) and the controller's internals, one family per concern, all registered into one
//! registry ([`Metrics`], `registry.rs`).
//!
//! Files: `family` (what the families share: the `Family` trait, hosted mode's
//! `hosted_cluster` label), `reconciles` (reconcile passes), `writes` (writes to the API
//! server), `update` (control plane and worker pools), `insights` (the health insights, read
//! from the insight cache at scrape time), `estimates` (the estimates that learn),
//! `alert_polls` (the polls of Prometheus' alerts), `hub` (the hub sync), `scrape_auth` (the
//! authorization of `/metrics` scrapes), `events` (the Kubernetes Events published),
//! `registry` (the families together, rendered). `crate::endpoints` serves them (`/metrics`,
//! HTTPS for authorized scrapers) and the probes.
//!
//! May import: nothing of this crate (the bottom layer).

pub mod alert_polls;
pub mod estimates;
pub mod events;
pub mod family;
pub mod hub;
pub mod insights;
pub mod reconciles;
pub mod registry;
pub mod scrape_auth;
pub mod update;
pub mod writes;

pub use alert_polls::PrometheusPolls;
pub use insights::{InsightSource, MAX_INFO_SERIES, SCOPES};
pub use registry::{Metrics, MetricsError};
pub use update::{CONTROL_PLANE_ASSESSMENTS, NODE_ASSESSMENTS, PoolState};
