//! A synthetic hosted cluster (HyperShift) that updates from one version to another, on a
//! management cluster, in accelerated time: the hosted counterpart of [`super::Simulation`].
//!
//! Two layers, as the standalone simulator:
//!
//! - [`HostedSimulation`]: a pure, deterministic state machine (no I/O, no clock). It holds a
//!   HostedCluster (`status.version` history, `status.controlPlaneVersion`, the
//!   `ClusterVersion*` conditions) in namespace `N`, and two NodePools of it: a **Replace** pool
//!   (`<name>-workers`: a cluster-api MachineDeployment and its Machines in the control-plane
//!   namespace `N-<name>`) and an **InPlace** pool (`<name>-inplace`: a MachineSet with
//!   HyperShift's config-version annotations, and its Machines). [`HostedSimulation::step`]
//!   moves the update one step: idle → update requested (`spec.release.image` changed;
//!   `Progressing=True`, "requested, not yet accepted") → control plane updating (history
//!   `Partial`, `ClusterVersionProgressing=True`; the management side completes
//!   `controlPlaneVersion` one step before the end) → control plane done (the NodePools lag
//!   behind) → the administrator updates both NodePools (`UpdatingVersion=True`) and they roll:
//!   the Replace pool creates new Machines and deletes old ones within `maxSurge` and
//!   `maxUnavailable` (a deleted Machine drains, `DrainingSucceeded`, before it goes), the
//!   InPlace pool updates at most `maxUnavailable` nodes at a time (Draining → Updating →
//!   Rebooting → Done, then the Machine's `release-version` annotation is the new version) →
//!   done (`status.version` of each pool is the target).
//!   Injected faults (an invalid release image, a minor update blocked by
//!   `ClusterVersionUpgradeable=False`, a Machine that cannot be drained) hold for a number of
//!   steps. Every step remembers which objects (and which part: metadata/spec or status) it
//!   changed, and which Machines it deleted or released. [`HostedSimulation::inputs`] gives the
//!   objects as the controller reads them (and the hosted Nodes, the guest view), at every
//!   step.
//! - [`HostedSimulator`]: applies a [`HostedSimulation`] to a real API server with server-side
//!   apply (status through the status subresource); a replaced Machine is really deleted (its
//!   finalizer keeps it while it drains), then released.
//!
//! Simulated time is as in the standalone simulator: step `k` happens at `start + k × step`.
//!
//! Files: `config` (what to simulate, faults), `state` (the simulated objects), `cluster` (the
//! hosted cluster before the update), `step` (the update, step by step), `faults` (injected
//! faults), `render` (objects as the API holds them), `inputs` (as the controller reads them),
//! `apply` (writing to an API server).

mod cluster;
mod config;
mod faults;
mod inputs;
mod render;
mod state;
mod step;
#[cfg(test)]
mod tests;

pub use config::{HostedFaults, HostedSimConfig};
pub use inputs::HostedSimInputs;
pub use render::{CAPI_API, HYPERSHIFT_API, MACHINE_FINALIZER};
pub use state::{
    HostedFaultStatus, HostedRef, HostedSimulation, HostedStage, IN_PLACE, Lifecycle, MachinePhase,
    REPLACE,
};
pub use step::{DRAINING, DRAINING_FAILED, DRAINING_MESSAGE, HostedStepReport, REQUESTED_MESSAGE};
