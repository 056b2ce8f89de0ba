//! Renders update-status objects exactly like `oc adm upgrade status` (algorithms.md section E),
//! from the objects alone plus `now` (docs/assessment-contract.md says where each fact lives).
//!
//! The input is a [`View`]: the ControlPlaneUpdateStatus status, the WorkerPoolUpdateStatus
//! statuses and every UpdateInsight status of one cluster. Online they come from the API, offline
//! from the same pure logic the controller runs; the renderer cannot tell the difference.

pub mod hosted;
mod standalone;

#[cfg(test)]
pub use standalone::render;
pub use standalone::{
    Details, InvalidDetails, RelatedNeedsHealth, RenderError, check, estimate_text, health_since,
    is_updating, render_with, sorted_health, sorted_progress, update_timing,
};
