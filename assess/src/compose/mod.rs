//! The composition of the rules into **the complete desired objects**: `(inputs, what our
//! objects already say, now)` → names, labels, owner references, status, carried-over times.
//! Two steps, in two files:
//!
//! 1. [`composer`]: the one place the rules are combined (nodes, then pools, then the control
//!    plane, then the alerts), into statuses and insights. The offline path stops here.
//! 2. [`desired`]: naming and labelling them, their owners, and the carry-over of what our
//!    objects already say (a health insight's first `startedAt`, the control plane's estimate
//!    while it moves less than the tolerance), piece by piece as the reconcilers run them
//!    ([`control_plane_share`], [`pools_share`], [`node_insights`], [`alerts_share`]) and whole
//!    ([`desired_cluster`]: what the fixture tests compare with the reconcilers' objects).
//!    [`since`] sets the conditions' transition times, carried over the same way.
//!
//! Beside the two steps: the objects they produce ([`Desired`], [`DesiredCluster`]: `objects.rs`)
//! and what our objects already say, which the carry-over reads ([`Existing`],
//! [`ExistingInsights`], [`since::PriorConditions`]: `existing.rs`).

pub mod composer;
pub mod desired;
mod existing;
mod objects;
pub mod since;

pub use composer::{Composed, NodeSink, compose, master_pool};
pub use desired::*;
pub use existing::{Existing, ExistingInsights};
pub use objects::{Desired, DesiredCluster, Labels, base_labels};
