//! The `kubectl update-status` plugin as a library: `main.rs` parses the command line
//! ([`args`]) and calls [`dispatch::run`]. Every path reads a [`show::view::View`] ([`read`]), or
//! a fleet's rows ([`fleet`]), and prints it ([`show`]) or serves it ([`web`]); see
//! `cli/README.md` and `docs/architecture.md` for the file map.

pub mod args;
pub mod dispatch;
pub mod exit;
pub mod fleet;
pub mod read;
pub mod show;
pub mod web;
