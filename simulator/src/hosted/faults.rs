//! Injected faults of the hosted update: when they clear, and what holds now. They strike in
//! [`super::step`]: the invalid image and the blocked update when the update is requested, the
//! blocked drain when the first old Replace Machine is deleted.

use super::super::faults::Fault;
use super::cluster::invalid_image;
use super::state::{HostedFaultStatus, HostedRef, HostedSimulation, Part, capi_set};
use super::step::{DRAINING, DRAINING_MESSAGE};

impl HostedSimulation {
    /// Counts active faults down; a fault whose time is up clears: the administrator fixes
    /// the image, acknowledges the admin gate (`ClusterVersionUpgradeable=True`), or the
    /// PodDisruptionBudget lets the eviction through (draining resumes).
    pub(super) fn tick_faults(&mut self) {
        let now = self.now;
        // The image is fixed in `request` (spec.release.image ≠ the good image).
        if let Some(f) = self.faults.invalid_image.as_mut() {
            f.tick();
        }
        if self
            .faults
            .blocked_update
            .as_mut()
            .and_then(Fault::tick)
            .is_some()
        {
            self.hc.set(
                "ClusterVersionUpgradeable",
                ("True", "FromClusterVersion", ""),
                now,
            );
            self.touch(HostedRef::HostedCluster, Part::Status);
        }
        if let Some(i) = self.faults.blocked_drain.as_mut().and_then(Fault::tick)
            && let Some(m) = self.machines.get_mut(i)
        {
            if let Some(d) = m.draining.as_mut() {
                capi_set(d, "False", DRAINING, DRAINING_MESSAGE, now);
            }
            m.left = 1;
            self.touch(HostedRef::Machine(i), Part::Status);
        }
    }

    /// Which faults hold now.
    pub fn fault_status(&self) -> HostedFaultStatus {
        let active = |f: &Option<Fault>| f.as_ref().is_some_and(Fault::active);
        HostedFaultStatus {
            invalid_image: active(&self.faults.invalid_image)
                .then(|| invalid_image(&self.config.to_version)),
            blocked_update: active(&self.faults.blocked_update),
            blocked_drain: self
                .faults
                .blocked_drain
                .as_ref()
                .and_then(Fault::active_target)
                .and_then(|i| self.machines.get(i))
                .map(|m| m.name.clone()),
        }
    }

    /// The Machine the blocked-drain fault struck, once it did.
    pub fn blocked_drain_target(&self) -> Option<&str> {
        self.faults
            .blocked_drain
            .as_ref()
            .and_then(|f| self.machines.get(f.target))
            .map(|m| m.name.as_str())
    }
}
