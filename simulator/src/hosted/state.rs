//! The state of the simulated hosted cluster: the HostedCluster, its two NodePools, the
//! MachineDeployment, the MachineSet and the Machines as the simulation keeps them, which
//! parts changed, and the read-only views of where the update is.

use std::collections::BTreeSet;
use std::fmt;

use jiff::Timestamp;
use update_status_api::hosted::control_plane_namespace;

use super::super::faults::Fault;
use super::super::state::{Cond, HistoryEntry, Rng, hex32};
use super::config::HostedSimConfig;

/// An object of the simulated hosted cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostedRef {
    /// The HostedCluster.
    HostedCluster,
    /// A NodePool: 0 the Replace pool, 1 the InPlace pool.
    NodePool(usize),
    /// The Replace pool's MachineDeployment.
    MachineDeployment,
    /// The InPlace pool's MachineSet.
    MachineSet,
    /// A Machine (index among every Machine ever created).
    Machine(usize),
}

/// The Replace NodePool's index.
pub const REPLACE: usize = 0;
/// The InPlace NodePool's index.
pub const IN_PLACE: usize = 1;

/// Which part of an object: metadata and spec, or status (its own subresource).
pub use super::super::state::Part;

/// Where the hosted update is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostedStage {
    /// Not started: everything runs the old version.
    Idle,
    /// `spec.release.image` changed; not accepted yet (HostedCluster `Progressing=True`), or
    /// refused (`Progressing=False`, reason `Blocked`) while a fault holds.
    Requested,
    /// The hosted control plane updates (`status.version.history[0]` Partial).
    ControlPlane,
    /// The control plane is updated; the NodePools still run the old version.
    ControlPlaneDone,
    /// The NodePools roll their Machines.
    NodePools,
    /// Everything is at the new version.
    Completed,
}

impl fmt::Display for HostedStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HostedStage::Idle => "idle",
            HostedStage::Requested => "requested",
            HostedStage::ControlPlane => "control plane",
            HostedStage::ControlPlaneDone => "cp done",
            HostedStage::NodePools => "node pools",
            HostedStage::Completed => "completed",
        })
    }
}

/// Where a Machine is in its life (cluster-api phases).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MachinePhase {
    /// Created, its infrastructure provisioning: no Node yet.
    Provisioning,
    /// Its Node joined (`status.nodeRef`); `NodeHealthy` says whether it is ready.
    Running,
    /// Being deleted (`deletionTimestamp` set, finalizer held): draining, then gone.
    Deleting,
}

/// Where an InPlace Machine's node is in its in-place update (the machine-config daemon
/// annotations the HyperShift in-place upgrader and its drainer write on the hosted Node).
pub use super::super::state::NodeStep;

/// A cluster-api (v1beta1) condition: `lastTransitionTime` changes with any change, as
/// cluster-api's `conditions.Set` does.
pub(super) fn capi_set(c: &mut Cond, status: &'static str, reason: &str, message: &str, at: i64) {
    if c.status != status || c.reason != reason || c.message != message {
        c.ltt = at;
    }
    c.status = status;
    c.reason = reason.to_string();
    c.message = message.to_string();
}

#[derive(Clone, Debug)]
pub(super) struct SimMachine {
    pub(super) name: String,
    pub(super) pool: usize,
    /// `spec.version`: the version the Machine was created for.
    pub(super) version: String,
    /// Annotation `hypershift.openshift.io/release-version` (InPlace: rewritten when the node
    /// finishes its in-place update).
    pub(super) release_version: String,
    pub(super) created: i64,
    pub(super) phase: MachinePhase,
    pub(super) node_healthy: Cond,
    pub(super) draining: Option<Cond>,
    pub(super) deleting_since: Option<i64>,
    /// Deleted and its finalizer released: no longer exists.
    pub(super) gone: bool,
    /// Steps left in the current phase (or in-place step).
    pub(super) left: u32,
    // In-place (hosted Node) state.
    pub(super) step: NodeStep,
    pub(super) current_config: String,
    pub(super) desired_config: String,
    pub(super) state: &'static str,
    pub(super) desired_drain: String,
    pub(super) last_applied_drain: String,
    pub(super) unschedulable: bool,
}

impl SimMachine {
    /// The hosted Node's name (platform Agent: the Machine's name).
    pub(super) fn node_name(&self) -> &str {
        &self.name
    }
    pub(super) fn healthy(&self) -> bool {
        self.node_healthy.status == "True"
    }
    pub(super) fn exists(&self) -> bool {
        !self.gone
    }
    pub(super) fn deleting(&self) -> bool {
        self.deleting_since.is_some()
    }
}

#[derive(Clone, Debug)]
pub(super) struct SimPool {
    pub(super) name: String,
    pub(super) in_place: bool,
    pub(super) replicas: u32,
    /// `spec.release.image`.
    pub(super) spec_image: String,
    /// `status.version`.
    pub(super) version: String,
    /// The MachineDeployment / MachineSet template's `spec.version`.
    pub(super) template_version: String,
    /// InPlace: the MachineSet's target and current config-version hashes.
    pub(super) target_hash: String,
    pub(super) current_hash: String,
    pub(super) updating_version: Cond,
    pub(super) conditions: Vec<Cond>,
    pub(super) rolling: bool,
    /// `(replicas, updated, ready)` of its Machines, as last written to the statuses.
    pub(super) counts: (u32, u32, u32),
}

/// The HostedCluster's status as the simulation keeps it.
#[derive(Clone, Debug)]
pub(super) struct SimHostedCluster {
    pub(super) spec_image: String,
    pub(super) desired_version: String,
    pub(super) desired_image: String,
    pub(super) history: Vec<HistoryEntry>,
    pub(super) cp_desired_version: String,
    pub(super) cp_history: Vec<HistoryEntry>,
    /// `status.version.availableUpdates`: `(version, image)`.
    pub(super) available_updates: Vec<(String, String)>,
    /// Every condition, in a fixed order.
    pub(super) conditions: Vec<Cond>,
    /// Control-plane steps done since the update was accepted.
    pub(super) cp_progress: u32,
}

impl SimHostedCluster {
    pub(super) fn cond(&mut self, type_: &str) -> Option<&mut Cond> {
        self.conditions.iter_mut().find(|c| c.type_ == type_)
    }
    /// Sets a `metav1.Condition` to `(status, reason, message)` (`lastTransitionTime` changes
    /// with the status); true when anything changed.
    pub(super) fn set(
        &mut self,
        type_: &str,
        (status, reason, message): (&'static str, &str, &str),
        at: i64,
    ) -> bool {
        self.cond(type_)
            .is_some_and(|c| c.set(status, reason, message, at))
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct HostedActiveFaults {
    pub(super) invalid_image: Option<Fault>,
    pub(super) blocked_update: Option<Fault>,
    pub(super) blocked_drain: Option<Fault>,
}

/// A lifecycle call besides applying: deleting a Machine (the API server sets its
/// `deletionTimestamp`, its finalizer keeps it), or releasing its finalizer (it is gone).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lifecycle {
    /// `DELETE` the Machine.
    Delete(usize),
    /// Remove the Machine's finalizer: the API server removes it.
    Release(usize),
}

/// The simulated hosted cluster and its update (see the module documentation).
#[derive(Clone, Debug)]
pub struct HostedSimulation {
    pub(super) config: HostedSimConfig,
    pub(super) infra_id: String,
    pub(super) step_count: u64,
    pub(super) now: i64,
    pub(super) stage: HostedStage,
    pub(super) hc: SimHostedCluster,
    pub(super) pools: Vec<SimPool>,
    pub(super) machines: Vec<SimMachine>,
    pub(super) rng: Rng,
    pub(super) faults: HostedActiveFaults,
    pub(super) dirty: BTreeSet<(HostedRef, Part)>,
    pub(super) lifecycle: Vec<Lifecycle>,
}

/// Which injected faults hold right now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostedFaultStatus {
    /// The invalid release image, while `spec.release.image` names it.
    pub invalid_image: Option<String>,
    /// The update is refused by `ClusterVersionUpgradeable=False`.
    pub blocked_update: bool,
    /// The Machine that cannot be drained, while it cannot.
    pub blocked_drain: Option<String>,
}

impl HostedFaultStatus {
    /// No fault holds.
    pub fn is_clear(&self) -> bool {
        *self == HostedFaultStatus::default()
    }
}

impl HostedSimulation {
    /// The configuration.
    pub fn config(&self) -> &HostedSimConfig {
        &self.config
    }
    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.step_count
    }
    /// Current simulated instant.
    pub fn now(&self) -> Timestamp {
        Timestamp::from_second(self.now).unwrap_or(Timestamp::UNIX_EPOCH)
    }
    /// Current stage.
    pub fn stage(&self) -> HostedStage {
        self.stage
    }
    /// The update is over.
    pub fn is_completed(&self) -> bool {
        self.stage == HostedStage::Completed
    }
    /// The HostedCluster's namespace.
    pub fn namespace(&self) -> &str {
        &self.config.namespace
    }
    /// The HostedCluster's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }
    /// The control-plane namespace (`<namespace>-<name>`), where the cluster-api objects are.
    pub fn control_plane_namespace(&self) -> String {
        control_plane_namespace(&self.config.namespace, &self.config.name)
    }
    /// The NodePools' names: the Replace pool, then the InPlace pool.
    pub fn node_pool_names(&self) -> Vec<&str> {
        self.pools.iter().map(|p| p.name.as_str()).collect()
    }
    /// The Machines that exist, by name.
    pub fn machine_names(&self) -> Vec<&str> {
        self.machines
            .iter()
            .filter(|m| m.exists())
            .map(|m| m.name.as_str())
            .collect()
    }
    /// `(pool, machines at the new version and healthy, desired machines, machines in the
    /// pool now)` per NodePool.
    pub fn pool_progress(&self) -> Vec<(String, usize, u32, usize)> {
        let to = &self.config.to_version;
        self.pools
            .iter()
            .enumerate()
            .map(|(p, pool)| {
                let mine = self.machines.iter().filter(|m| m.pool == p && m.exists());
                let (mut done, mut all) = (0, 0);
                for m in mine {
                    all += 1;
                    let v = if pool.in_place {
                        &m.release_version
                    } else {
                        &m.version
                    };
                    if v == to && m.healthy() && !m.deleting() {
                        done += 1;
                    }
                }
                (pool.name.clone(), done, pool.replicas, all)
            })
            .collect()
    }
    /// Object parts changed since the last [`HostedSimulation::take_dirty`] (initially: all).
    pub fn dirty(&self) -> &BTreeSet<(HostedRef, Part)> {
        &self.dirty
    }
    /// Takes the changed object parts and the lifecycle calls (and forgets them).
    pub fn take_dirty(&mut self) -> (BTreeSet<(HostedRef, Part)>, Vec<Lifecycle>) {
        (
            std::mem::take(&mut self.dirty),
            std::mem::take(&mut self.lifecycle),
        )
    }
    /// Marks every existing object part as changed (e.g. to write everything again).
    pub fn mark_all_dirty(&mut self) {
        let mut refs = vec![
            HostedRef::HostedCluster,
            HostedRef::NodePool(REPLACE),
            HostedRef::NodePool(IN_PLACE),
            HostedRef::MachineDeployment,
            HostedRef::MachineSet,
        ];
        refs.extend(
            (0..self.machines.len())
                .filter(|&i| self.machines[i].exists())
                .map(HostedRef::Machine),
        );
        for r in refs {
            self.dirty.insert((r, Part::Main));
            self.dirty.insert((r, Part::Status));
        }
    }
    pub(super) fn touch(&mut self, r: HostedRef, part: Part) {
        self.dirty.insert((r, part));
    }
    /// A Machine name as cluster-api makes them: `<pool>-<template hash>-<suffix>`.
    pub(super) fn machine_name(&mut self, pool: usize, version: &str) -> String {
        let p = &self.pools[pool].name;
        let hash = &hex32(&format!("{p}/{version}"))[..8];
        let suffix = &hex32(&format!("{}/{}", self.rng.next_u64(), self.machines.len()))[..5];
        format!("{p}-{hash}-{suffix}")
    }
    /// The object's name.
    pub fn name_of(&self, r: HostedRef) -> Option<&str> {
        match r {
            HostedRef::HostedCluster => Some(&self.config.name),
            HostedRef::NodePool(p) => self.pools.get(p).map(|p| p.name.as_str()),
            HostedRef::MachineDeployment => self.pools.get(REPLACE).map(|p| p.name.as_str()),
            HostedRef::MachineSet => self.pools.get(IN_PLACE).map(|p| p.name.as_str()),
            HostedRef::Machine(i) => self.machines.get(i).map(|m| m.name.as_str()),
        }
    }
}
