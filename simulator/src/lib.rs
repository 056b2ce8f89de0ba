//! A synthetic OpenShift cluster that updates from one version to another, in accelerated time.
//!
//! This crate is the pure part: no I/O but writing a snapshot folder, no clock, no client. The
//! tools crate's `playback` module (`update-status-tools`) writes a simulation to a real API
//! server (server-side apply of what each step changed, status through the status subresource)
//! and reads it back; its `simulate-update` and `simulate-hosted-update` binaries drive it, with
//! the playback flags of [`playback::PlaybackArgs`].
//!
//! - [`Simulation`]: a pure, deterministic state machine (no I/O, no clock). It holds a
//!   ClusterVersion, platform ClusterOperators, MachineConfigPools, rendered MachineConfigs and
//!   Nodes, and (a 4.18+ cluster) the machine-config operator's Deployment, whose image
//!   `machine-config`'s `operator-image` version reports. [`Simulation::step`] moves the
//!   update one step forward: the ClusterVersion gets a `Partial` history entry and
//!   `Progressing=True`; operators update one by one (`Progressing=True`, then their
//!   `operator` version bumped), `machine-config` last; when `machine-config` starts, its
//!   Deployment gets the new image, new rendered MachineConfigs appear and every pool's
//!   `spec.configuration.name` switches to its new one; then each pool rolls its nodes
//!   through the machine-config daemon annotations (Draining → Updating → Rebooting → Done →
//!   uncordoned), never more than `maxUnavailable` at a time; `machine-config` reports the new
//!   version once the master pool is done, and the ClusterVersion completes (history
//!   `Completed`, `Progressing=False`) once every pool is. Injected faults (a degraded operator,
//!   a drain blocked by a PodDisruptionBudget, a NotReady node, a paused pool, an operator
//!   that never finishes) hold for a number of steps. Every step remembers which objects (and
//!   which part: metadata/spec or status) it changed.
//! - [`hosted`]: the same for a HyperShift hosted cluster ([`hosted::HostedSimulation`]).
//!
//! Simulated time: step `k` happens at `start + k × step`, whole seconds. With a `step` equal
//! to the wall-clock interval between steps and `start` = now, the timestamps follow the wall
//! clock (what a controller on the wall clock expects). With a longer `step` and a `start` in
//! the past, a run replays an update of hours in seconds, for a controller evaluating at a
//! fixed instant (`--assess-at`) after the end.
//!
//! Files: `config` (what to simulate, fault specifications), `state` (the simulated objects),
//! `cluster` (the cluster before the update), `step` (the update, step by step), `faults`
//! (injected faults), `render` (objects as the API holds them), `inputs` (as the controller
//! reads them), `snapshot` (a snapshot folder), `error` (what can go wrong), `update` (the
//! [`SimulatedUpdate`] trait both simulators implement: the frame of a step, its report, a
//! dry run), `playback` (the flags and start instant of a played update, shared by both
//! simulators).

mod cluster;
mod config;
pub mod drifting;
pub mod durations;
mod error;
mod faults;
pub mod hosted;
mod inject;
mod inputs;
pub mod playback;
mod render;
mod snapshot;
mod state;
mod step;
#[cfg(test)]
mod tests;
mod update;

pub use cluster::{MACHINE_CONFIG, OPERATORS};
pub use config::{DEFAULT_FAULT_STEPS, FaultSpec, Faults, SimConfig, parse_duration};
pub use drifting::{DriftingCluster, Platform};
pub use durations::{Durations, PastUpdate};
pub use error::SimError;
pub use faults::FaultStatus;
pub use inputs::SimInputs;
pub use state::{NodeStep, ObjectRef, Part, Simulation, Stage};
pub use update::{SimulatedUpdate, StepReport};
