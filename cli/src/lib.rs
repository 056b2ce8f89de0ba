//! The `kubectl update-status` plugin as a library: `main.rs` parses the command line
//! ([`args`]) and calls [`dispatch::run`]. Every path reads a [`view::View`] (or a fleet's rows)
//! and prints or serves it; see `cli/README.md` and `docs/architecture.md` for the file map.

pub mod args;
pub mod dispatch;
pub mod escape;
pub mod exit;
pub mod fleet;
pub mod gosort;
pub mod hosted;
pub mod invisible;
pub mod offline;
pub mod online;
pub mod render;
pub mod report;
pub mod selective;
pub mod tabwriter;
pub mod view;
pub mod web;
