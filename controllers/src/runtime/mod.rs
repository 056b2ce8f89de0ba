//! The runtime: what runs the reconcilers and keeps the process honest, knowing nothing of
//! what they assess. [`runner`] (the loop every reconciler runs, the [`runner::Reconcile`]
//! trait), [`requeue`] (when a pass wants the next, merged one way), [`writer`] (change-only server-side apply of the desired objects; [`existing`]: what
//! it reads of an object in a cache; [`refusal`]: what a hub refuses for one object alone; [`hub_writes`]: the hub writers' policy), [`supervisor`] (named long-running tasks), [`leader`]
//! (leader election on a Lease), [`health`] (`/healthz`, `/readyz`), [`client`] (the API
//! client with bounded retries), [`proxy`] (HTTP(S) proxies of our own HTTP clients), [`clock`]
//! (the wall clock or a fixed instant; back-off).
//!
//! May import: [`crate::metrics`]. Imported by every layer above.
pub mod client;
pub mod clock;
pub mod existing;
pub mod health;
pub mod hub_writes;
pub mod leader;
/// HTTP(S) proxies of our own HTTP clients (the `update-status-proxy` crate, shared with the CLI).
pub use update_status_proxy as proxy;
pub mod refusal;
pub mod requeue;
pub mod runner;
pub mod supervisor;
pub mod writer;
