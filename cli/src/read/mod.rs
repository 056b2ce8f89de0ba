//! Reading one cluster's update-status objects into a [`crate::show::view::View`]:
//!
//! - [`offline`]: from a snapshot, with the controller's pure logic;
//! - [`online`]: from the API (the client, the lists and their errors);
//! - [`selective`]: from the API by label, only what the text view prints;
//! - [`hosted`]: a hosted cluster's objects, from the management cluster.

pub mod hosted;
pub mod offline;
pub mod online;
pub mod selective;
