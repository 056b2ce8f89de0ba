//! Renders update-status objects exactly like `oc adm upgrade status` (algorithms.md section E),
//! from the objects alone plus `now` (docs/assessment-contract.md says where each fact lives).
//!
//! The input is a [`View`](crate::show::view::View): the ControlPlaneUpdateStatus status, the
//! WorkerPoolUpdateStatus statuses and every UpdateInsight status of one cluster. Online they come
//! from the API, offline from the same pure logic the controller runs; the renderer cannot tell
//! the difference.
//!
//! The files follow oc's `pkg/cli/admin/upgrade/status`: `standalone.rs` is its `status.go`,
//! `control_plane.rs` its `controlplane.go`, `worker_pools.rs` its `workerpool.go`, `health.rs`
//! its `health.go`; `common.rs` holds `--details` and what the sections share, `order.rs` the
//! order of pools and progress insights. `hosted.rs` is ours (oc has no hosted mode).

mod common;
mod control_plane;
mod health;
pub mod hosted;
mod order;
mod standalone;
mod worker_pools;

pub use common::{Details, InvalidDetails, RelatedNeedsHealth};
pub use control_plane::{estimate_text, update_timing};
pub use health::{health_since, sorted_health};
pub use order::sorted_progress;
#[cfg(test)]
pub use standalone::render;
pub use standalone::{RenderError, check, is_updating, render_with};
