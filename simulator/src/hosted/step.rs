//! The hosted update, one step at a time (see the module documentation of [`super`]).

use jiff::{SignedDuration, Timestamp};

use super::super::state::NodeStep;
use super::super::state::{HistoryEntry, release_image};
use super::super::update::{SimulatedUpdate, StepReport};
use super::cluster::{config_hash, invalid_image, payload_loaded};
use super::state::{
    HostedRef, HostedSimulation, HostedStage, IN_PLACE, Lifecycle, MachinePhase, Part, REPLACE,
    capi_set,
};

/// What one step of the hosted simulation did.
pub type HostedStepReport = StepReport<HostedStage>;

/// The progress message's total (manifests of a release, as the CVO counts them).
const MANIFESTS: u32 = 850;

/// `Progressing`'s message while an update is requested and not yet accepted.
pub const REQUESTED_MESSAGE: &str = "HostedCluster is deploying, upgrading, or reconfiguring";

impl SimulatedUpdate for HostedSimulation {
    type Stage = HostedStage;

    fn clock(&self) -> (Timestamp, SignedDuration) {
        (self.config.start, self.config.step)
    }
    fn steps(&self) -> u64 {
        self.step_count
    }
    fn now(&self) -> Timestamp {
        HostedSimulation::now(self)
    }
    fn stage(&self) -> HostedStage {
        self.stage
    }
    fn is_completed(&self) -> bool {
        HostedSimulation::is_completed(self)
    }
    fn summary(&self) -> String {
        HostedSimulation::summary(self)
    }
    fn pending(&self) -> usize {
        self.dirty.len() + self.lifecycle.len()
    }
    fn discard_pending(&mut self) {
        self.take_dirty();
    }
    fn enter_step(&mut self, count: u64, now: i64) {
        self.step_count = count;
        self.now = now;
    }

    fn advance(&mut self) {
        self.tick_faults();
        match self.stage {
            HostedStage::Idle | HostedStage::Requested => self.request(),
            HostedStage::ControlPlane => self.advance_control_plane(),
            HostedStage::ControlPlaneDone => self.start_node_pools(),
            HostedStage::NodePools => {
                self.advance_replace();
                self.advance_in_place();
                self.refresh_pool_status();
                self.finish_pools();
            }
            HostedStage::Completed => {}
        }
    }
}

impl HostedSimulation {
    /// Moves the update one step forward. A completed simulation does not change any more.
    pub fn step(&mut self) -> HostedStepReport {
        SimulatedUpdate::step(self)
    }

    /// Steps until the update completes or `max_steps` steps were taken; returns the steps
    /// taken.
    pub fn run_to_completion(&mut self, max_steps: u64) -> u64 {
        SimulatedUpdate::run_to_completion(self, max_steps)
    }

    /// One line about where the update is.
    pub fn summary(&self) -> String {
        let (from, to) = (&self.config.from_version, &self.config.to_version);
        let hc = &self.config.name;
        let mut s = match self.stage {
            HostedStage::Idle => format!("{hc} idle at {from}"),
            HostedStage::Requested => {
                let p = self.hc.conditions.iter().find(|c| c.type_ == "Progressing");
                match p {
                    Some(p) if p.status == "False" => {
                        format!(
                            "{hc}: update to {to} requested, refused (Progressing=False, {})",
                            p.reason
                        )
                    }
                    _ => format!("{hc}: update to {to} requested, not accepted yet"),
                }
            }
            HostedStage::ControlPlane => format!(
                "{hc}: control plane updating to {to} ({}/{})",
                self.hc.cp_progress, self.config.control_plane_steps
            ),
            HostedStage::ControlPlaneDone => {
                format!("{hc}: control plane at {to}, NodePools at {from}")
            }
            HostedStage::NodePools | HostedStage::Completed => {
                let pools: Vec<String> = self
                    .pool_progress()
                    .into_iter()
                    .map(|(name, done, total, all)| {
                        format!("{name} {done}/{total} ({all} machines)")
                    })
                    .collect();
                format!(
                    "{hc}: {}NodePools {}",
                    if self.stage == HostedStage::Completed {
                        "completed; "
                    } else {
                        ""
                    },
                    pools.join(", ")
                )
            }
        };
        let f = self.fault_status();
        let mut active = Vec::new();
        if let Some(i) = f.invalid_image {
            active.push(format!("invalid release image {i}"));
        }
        if f.blocked_update {
            active.push("minor update blocked by ClusterVersionUpgradeable=False".to_string());
        }
        if let Some(m) = f.blocked_drain {
            active.push(format!("Machine {m} cannot be drained"));
        }
        if !active.is_empty() {
            s.push_str(&format!("; faults: {}", active.join(", ")));
        }
        s
    }

    fn touch_hc(&mut self, main: bool) {
        if main {
            self.touch(HostedRef::HostedCluster, Part::Main);
        }
        self.touch(HostedRef::HostedCluster, Part::Status);
    }

    /// The update is requested (`spec.release.image`); the HyperShift operator refuses it
    /// while a fault holds (`Progressing=False`, reason `Blocked`), says it is requested
    /// (`Progressing=True`), and the next step the hosted CVO accepts it.
    fn request(&mut self) {
        let now = self.now;
        let to = self.config.to_version.clone();
        self.stage = HostedStage::Requested;
        let good = release_image(&to);
        if let Some(f) = self.faults.invalid_image.as_mut()
            && (f.trigger() || f.active())
        {
            let bad = invalid_image(&to);
            let message = format!(
                "failed to lookup release image: failed to obtain release image metadata for {bad}: manifest unknown: manifest unknown"
            );
            self.hc.spec_image = bad;
            self.hc.set(
                "ValidReleaseImage",
                ("False", "InvalidImage", &message),
                now,
            );
            self.hc.set(
                "Progressing",
                (
                    "False",
                    "Blocked",
                    &format!("ValidReleaseImage condition is false: {message}"),
                ),
                now,
            );
            self.touch_hc(true);
            return;
        }
        if self.hc.spec_image != good {
            // Requested (or the invalid image fixed).
            self.hc.spec_image = good;
            self.hc.set(
                "ValidReleaseImage",
                ("True", "AsExpected", "Release image is valid"),
                now,
            );
            self.touch_hc(true);
        }
        if let Some(f) = self.faults.blocked_update.as_mut()
            && (f.trigger() || f.active())
        {
            let gate = self
                .hc
                .conditions
                .iter()
                .find(|c| c.type_ == "ClusterVersionUpgradeable")
                .map(|c| c.message.clone())
                .unwrap_or_default();
            if self.hc.set(
                "Progressing",
                (
                    "False",
                    "Blocked",
                    &format!("ClusterVersionUpgradeable condition is false: {gate}"),
                ),
                now,
            ) {
                self.touch_hc(false);
            }
            return;
        }
        let requested = self
            .hc
            .conditions
            .iter()
            .any(|c| c.type_ == "Progressing" && c.status == "True");
        if requested {
            self.accept();
        } else {
            self.hc.set(
                "Progressing",
                ("True", "Progressing", REQUESTED_MESSAGE),
                now,
            );
            self.touch_hc(false);
        }
    }

    /// The hosted CVO accepts the release: `status.version` gets a Partial entry,
    /// `ClusterVersionProgressing=True`; `Progressing` goes False (spec = desired).
    fn accept(&mut self) {
        let now = self.now;
        let to = self.config.to_version.clone();
        let hc = &mut self.hc;
        hc.desired_version = to.clone();
        hc.desired_image = release_image(&to);
        hc.history
            .insert(0, HistoryEntry::new("Partial", &to, now, None));
        hc.cp_desired_version = to.clone();
        hc.cp_history
            .insert(0, HistoryEntry::new("Partial", &to, now, None));
        hc.available_updates.clear();
        hc.cp_progress = 0;
        hc.set(
            "Progressing",
            (
                "False",
                "AsExpected",
                "HostedCluster is at expected version",
            ),
            now,
        );
        hc.set(
            "ClusterVersionProgressing",
            (
                "True",
                "FromClusterVersion",
                &format!("Working towards {to}: 0 of {MANIFESTS} done (0% complete)"),
            ),
            now,
        );
        hc.set(
            "ClusterVersionReleaseAccepted",
            ("True", "PayloadLoaded", &payload_loaded(&to)),
            now,
        );
        self.stage = HostedStage::ControlPlane;
        self.touch_hc(false);
    }

    fn advance_control_plane(&mut self) {
        let now = self.now;
        let to = self.config.to_version.clone();
        let total = self.config.control_plane_steps;
        let hc = &mut self.hc;
        hc.cp_progress += 1;
        let k = hc.cp_progress;
        if k + 1 == total
            && let Some(h) = hc.cp_history.first_mut()
        {
            // The management-side components are done; the hosted operators are not.
            h.state = "Completed";
            h.completed = Some(now);
        }
        if k >= total {
            if let Some(h) = hc.history.first_mut() {
                h.state = "Completed";
                h.completed = Some(now);
            }
            if let Some(h) = hc.cp_history.first_mut()
                && h.completed.is_none()
            {
                h.state = "Completed";
                h.completed = Some(now);
            }
            hc.set(
                "ClusterVersionProgressing",
                (
                    "False",
                    "FromClusterVersion",
                    &format!("Cluster version is {to}"),
                ),
                now,
            );
            hc.set(
                "ClusterVersionAvailable",
                ("True", "FromClusterVersion", &format!("Done applying {to}")),
                now,
            );
            self.stage = HostedStage::ControlPlaneDone;
        } else {
            let done = k * MANIFESTS / total;
            hc.set(
                "ClusterVersionProgressing",
                (
                    "True",
                    "FromClusterVersion",
                    &format!(
                        "Working towards {to}: {done} of {MANIFESTS} done ({}% complete)",
                        done * 100 / MANIFESTS
                    ),
                ),
                now,
            );
        }
        self.touch_hc(false);
    }

    /// The administrator sets both NodePools' `spec.release.image`; the NodePool controller
    /// writes the new template version (and, InPlace, the target config version) and sets
    /// `UpdatingVersion=True`.
    fn start_node_pools(&mut self) {
        let now = self.now;
        let to = self.config.to_version.clone();
        for p in [REPLACE, IN_PLACE] {
            let pool = &mut self.pools[p];
            pool.spec_image = release_image(&to);
            pool.template_version = to.clone();
            pool.rolling = true;
            if pool.in_place {
                pool.target_hash = config_hash(&pool.name, &to);
            }
            pool.updating_version.set(
                "True",
                "AsExpected",
                &format!("Updating version in progress. Target version: {to}"),
                now,
            );
            self.touch(HostedRef::NodePool(p), Part::Main);
            self.touch(HostedRef::NodePool(p), Part::Status);
        }
        self.touch(HostedRef::MachineDeployment, Part::Main);
        self.touch(HostedRef::MachineSet, Part::Main);
        self.stage = HostedStage::NodePools;
    }

    /// The Replace pool (cluster-api MachineDeployment, RollingUpdate): machines provision and
    /// become healthy, old ones drain and go; a new Machine is created while the pool has
    /// fewer than `replicas + maxSurge` Machines (deleting ones count); an old one is deleted
    /// while at least `replicas − maxUnavailable` healthy Machines would remain.
    fn advance_replace(&mut self) {
        if !self.pools[REPLACE].rolling {
            return;
        }
        let drain_blocked = self
            .faults
            .blocked_drain
            .as_ref()
            .and_then(|f| f.active_target());
        for i in 0..self.machines.len() {
            if drain_blocked != Some(i) {
                self.advance_replace_machine(i);
            }
        }
        let to = self.config.to_version.clone();
        self.scale_up_replace(&to);
        self.scale_down_replace(&to);
    }

    /// One step of Replace Machine `i`, unless it is healthy and not deleting, or still
    /// waiting: it provisions, becomes healthy, or (deleting) drains, then goes.
    fn advance_replace_machine(&mut self, i: usize) {
        let now = self.now;
        let m = &mut self.machines[i];
        if m.pool != REPLACE || !m.exists() {
            return;
        }
        if m.phase != MachinePhase::Deleting && m.healthy() {
            return;
        }
        if m.left > 1 {
            m.left -= 1;
            return;
        }
        match m.phase {
            MachinePhase::Provisioning => {
                m.phase = MachinePhase::Running;
                capi_set(
                    &mut m.node_healthy,
                    "False",
                    "NodeProvisioning",
                    "Waiting for the Node to become ready",
                    now,
                );
                m.left = 1;
                self.touch(HostedRef::Machine(i), Part::Status);
            }
            MachinePhase::Running => {
                capi_set(&mut m.node_healthy, "True", "", "", now);
                self.touch(HostedRef::Machine(i), Part::Status);
            }
            MachinePhase::Deleting => {
                let drained = m.draining.as_ref().is_some_and(|d| d.status == "True");
                if drained {
                    m.gone = true;
                    self.lifecycle.push(Lifecycle::Release(i));
                } else {
                    if let Some(d) = m.draining.as_mut() {
                        capi_set(d, "True", "", "", now);
                    }
                    m.left = 1;
                    self.touch(HostedRef::Machine(i), Part::Status);
                }
            }
        }
    }

    /// The existing Machines of the Replace pool.
    fn replace_machines(&self) -> Vec<usize> {
        (0..self.machines.len())
            .filter(|&i| self.machines[i].pool == REPLACE && self.machines[i].exists())
            .collect()
    }

    /// Scales up the new MachineSet: a Machine at `to` while the pool has fewer than
    /// `replicas + maxSurge` Machines and fewer than `replicas` new ones.
    fn scale_up_replace(&mut self, to: &str) {
        let replicas = self.pools[REPLACE].replicas as usize;
        let surge = self.config.max_surge as usize;
        loop {
            let all = self.replace_machines();
            let new = all
                .iter()
                .filter(|&&i| self.machines[i].version == to && !self.machines[i].deleting())
                .count();
            if all.len() >= replicas + surge || new >= replicas {
                break;
            }
            let m = self.new_machine(REPLACE, to, self.now);
            self.machines.push(m);
            let i = self.machines.len() - 1;
            self.touch(HostedRef::Machine(i), Part::Main);
            self.touch(HostedRef::Machine(i), Part::Status);
        }
    }

    /// Scales down the old MachineSet, oldest first, while at least `replicas −
    /// maxUnavailable` healthy Machines would remain.
    fn scale_down_replace(&mut self, to: &str) {
        let replicas = self.pools[REPLACE].replicas as usize;
        let min_available = replicas.saturating_sub(self.config.max_unavailable as usize);
        loop {
            let all = self.replace_machines();
            let available = all
                .iter()
                .filter(|&&i| self.machines[i].healthy() && !self.machines[i].deleting())
                .count();
            let Some(&old) = all
                .iter()
                .find(|&&i| self.machines[i].version != to && !self.machines[i].deleting())
            else {
                break;
            };
            let lose = usize::from(self.machines[old].healthy());
            if available.saturating_sub(lose) < min_available {
                break;
            }
            self.delete_machine(old);
        }
    }

    /// Deletes a Replace Machine: `deletionTimestamp` set (its finalizer holds it), cluster-api
    /// drains its node (`DrainingSucceeded=False`, reason `Draining`), unless the
    /// blocked-drain fault strikes it: reason `DrainingFailed`, severity Warning, the eviction
    /// error as message.
    fn delete_machine(&mut self, i: usize) {
        let now = self.now;
        let blocked = self.faults.blocked_drain.as_mut().is_some_and(|f| {
            if f.state == super::super::faults::FaultState::Armed {
                f.target = i;
            }
            f.target == i && f.trigger()
        });
        let left = self.rng.range(1, 2);
        let m = &mut self.machines[i];
        m.phase = MachinePhase::Deleting;
        m.deleting_since = Some(now);
        m.left = left;
        let mut d = super::super::state::Cond::new("DrainingSucceeded", "False", "", "", now);
        if blocked {
            capi_set(&mut d, "False", DRAINING_FAILED, &drain_error(), now);
        } else {
            capi_set(&mut d, "False", "Draining", DRAINING_MESSAGE, now);
        }
        m.draining = Some(d);
        self.lifecycle.push(Lifecycle::Delete(i));
        self.touch(HostedRef::Machine(i), Part::Status);
    }

    /// The InPlace pool (HyperShift's in-place upgrader): at most `maxUnavailable` nodes at a
    /// time get the target config and go Draining → Updating → Rebooting (the Machine's
    /// `NodeHealthy=False`) → Done (the Machine's `release-version` annotation is the new
    /// version) → uncordoned.
    fn advance_in_place(&mut self) {
        if !self.pools[IN_PLACE].rolling {
            return;
        }
        let order: Vec<usize> = (0..self.machines.len())
            .filter(|&i| self.machines[i].pool == IN_PLACE && self.machines[i].exists())
            .collect();
        for &i in &order {
            if self.machines[i].step.in_flight() {
                let m = &mut self.machines[i];
                if m.left > 1 {
                    m.left -= 1;
                } else {
                    let next = m.step.next();
                    self.enter(i, next);
                }
            }
        }
        let in_flight = order
            .iter()
            .filter(|&&i| self.machines[i].step.in_flight())
            .count();
        let mut room =
            (self.config.in_place_max_unavailable.max(1) as usize).saturating_sub(in_flight);
        for &i in &order {
            if room == 0 {
                break;
            }
            if self.machines[i].step == NodeStep::Pending {
                self.enter(i, NodeStep::Draining);
                room -= 1;
            }
        }
    }

    /// Moves in-place node `i` to `step`.
    fn enter(&mut self, i: usize, step: NodeStep) {
        let now = self.now;
        let to = self.config.to_version.clone();
        let target = self.pools[IN_PLACE].target_hash.clone();
        let left = match step {
            NodeStep::Draining | NodeStep::Rebooting => self.rng.range(1, 2),
            _ => 1,
        };
        let m = &mut self.machines[i];
        m.step = step;
        m.left = left;
        match step {
            NodeStep::Pending => {}
            NodeStep::Draining => {
                m.desired_config = target.clone();
                m.state = "Working";
                m.desired_drain = format!("drain-{target}");
                m.unschedulable = true;
            }
            NodeStep::Updating => m.last_applied_drain = format!("drain-{target}"),
            NodeStep::Rebooting => {
                m.state = "Rebooting";
                capi_set(
                    &mut m.node_healthy,
                    "False",
                    "NodeConditionsFailed",
                    "Node condition Ready is Unknown",
                    now,
                );
                self.touch(HostedRef::Machine(i), Part::Status);
            }
            NodeStep::Done => {
                m.current_config = target.clone();
                m.state = "Done";
                m.desired_drain = format!("uncordon-{target}");
                m.release_version = to;
                capi_set(&mut m.node_healthy, "True", "", "", now);
                self.touch(HostedRef::Machine(i), Part::Main);
                self.touch(HostedRef::Machine(i), Part::Status);
            }
            NodeStep::Updated => {
                m.last_applied_drain = format!("uncordon-{target}");
                m.unschedulable = false;
            }
        }
    }

    /// The NodePools', MachineDeployment's and MachineSet's status counts follow the
    /// Machines.
    fn refresh_pool_status(&mut self) {
        for p in [REPLACE, IN_PLACE] {
            let counts = self.counts(p);
            if self.pools[p].counts != counts {
                self.pools[p].counts = counts;
                self.touch(HostedRef::NodePool(p), Part::Status);
                self.touch(
                    if p == REPLACE {
                        HostedRef::MachineDeployment
                    } else {
                        HostedRef::MachineSet
                    },
                    Part::Status,
                );
            }
        }
    }

    /// A pool finishes when its Machines are all new and healthy: `status.version` is the
    /// target, `UpdatingVersion=False`; InPlace, the MachineSet's current config is the target.
    fn finish_pools(&mut self) {
        let now = self.now;
        let to = self.config.to_version.clone();
        for p in [REPLACE, IN_PLACE] {
            if !self.pools[p].rolling {
                continue;
            }
            let in_place = self.pools[p].in_place;
            let mine: Vec<&super::state::SimMachine> = self
                .machines
                .iter()
                .filter(|m| m.pool == p && m.exists())
                .collect();
            let done = mine.len() == self.pools[p].replicas as usize
                && mine.iter().all(|m| {
                    m.healthy()
                        && !m.deleting()
                        && if in_place {
                            m.step == NodeStep::Updated
                        } else {
                            m.version == to
                        }
                });
            if !done {
                continue;
            }
            let pool = &mut self.pools[p];
            pool.rolling = false;
            pool.version = to.clone();
            pool.current_hash = pool.target_hash.clone();
            pool.updating_version.set("False", "AsExpected", "", now);
            self.touch(HostedRef::NodePool(p), Part::Status);
            if in_place {
                self.touch(HostedRef::MachineSet, Part::Main);
            }
        }
        if self.pools.iter().all(|p| !p.rolling) {
            self.stage = HostedStage::Completed;
        }
    }

    /// `(replicas, updated, ready)` of pool `p`'s Machines.
    pub(super) fn counts(&self, p: usize) -> (u32, u32, u32) {
        let to = &self.config.to_version;
        let in_place = self.pools[p].in_place;
        let (mut all, mut updated, mut ready) = (0, 0, 0);
        for m in self.machines.iter().filter(|m| m.pool == p && m.exists()) {
            all += 1;
            let v = if in_place {
                &m.release_version
            } else {
                &m.version
            };
            if v == to {
                updated += 1;
            }
            if m.healthy() && !m.deleting() {
                ready += 1;
            }
        }
        (all, updated, ready)
    }
}

/// cluster-api's `DrainingSucceeded` reason while a node drains.
pub const DRAINING: &str = "Draining";
/// cluster-api's `DrainingSucceeded` reason when a drain fails.
pub const DRAINING_FAILED: &str = "DrainingFailed";
/// cluster-api's `DrainingSucceeded` message while a node drains.
pub const DRAINING_MESSAGE: &str = "Draining the node before deletion";

/// The eviction error cluster-api reports when a PodDisruptionBudget blocks the drain.
pub(super) fn drain_error() -> String {
    "error when evicting pods/\"checkout-7f9c6d5b4-qx2lp\" -n \"shop\": Cannot evict pod as it would violate the pod's disruption budget. The disruption budget checkout-pdb needs 2 healthy pods and has 2 currently".to_string()
}
