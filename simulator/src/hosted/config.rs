//! What to simulate: the hosted cluster, its two NodePools, versions, simulated time and the
//! faults to inject.

use jiff::{SignedDuration, Timestamp};

use super::super::config::FaultSpec;
use super::super::error::SimError;

/// Faults to inject into a hosted update. Each is `TARGET[:STEPS]` as in the standalone
/// simulator; the target is always chosen by the simulation (`auto`), STEPS is how long the
/// fault holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostedFaults {
    /// When the update is requested, `spec.release.image` names an image that does not exist:
    /// `ValidReleaseImage=False` (reason `InvalidImage`) and `Progressing=False` (reason
    /// `Blocked`) for STEPS steps; then the administrator fixes the image.
    pub invalid_image: Option<FaultSpec>,
    /// A minor update refused by `ClusterVersionUpgradeable=False` (an admin-ack gate, set
    /// from the start): `Progressing=False`, reason `Blocked`, for STEPS steps once the update
    /// is requested (after an invalid image is fixed); then the administrator acknowledges and
    /// the gate opens. Needs a minor update (`from` and `to` differ in `x.y`).
    pub blocked_update: Option<FaultSpec>,
    /// The first old Machine of the Replace NodePool to be deleted cannot be drained for STEPS
    /// steps: it stays deleting with `DrainingSucceeded=False`, reason `DrainingFailed`
    /// (severity Warning, the eviction error as message), as cluster-api sets it.
    pub blocked_drain: Option<FaultSpec>,
}

/// What to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct HostedSimConfig {
    /// Namespace of the HostedCluster and its NodePools (the control plane's is
    /// `<namespace>-<name>`).
    pub namespace: String,
    /// HostedCluster name.
    pub name: String,
    /// Machines of the Replace NodePool (`<name>-workers`).
    pub replace_replicas: u32,
    /// `replace.rollingUpdate.maxSurge` of the Replace NodePool.
    pub max_surge: u32,
    /// `replace.rollingUpdate.maxUnavailable` of the Replace NodePool.
    pub max_unavailable: u32,
    /// Machines of the InPlace NodePool (`<name>-inplace`).
    pub in_place_replicas: u32,
    /// `inPlace.maxUnavailable` of the InPlace NodePool (at least 1, as HyperShift forces).
    pub in_place_max_unavailable: u32,
    /// Steps the hosted control plane takes to update once accepted (at least 2).
    pub control_plane_steps: u32,
    /// Version the cluster was installed at (oldest history entry).
    pub installed_version: String,
    /// Version it runs before the update.
    pub from_version: String,
    /// Version it updates to.
    pub to_version: String,
    /// Seed of the step durations and names.
    pub seed: u64,
    /// Simulated instant of step 0.
    pub start: Timestamp,
    /// Simulated time per step.
    pub step: SignedDuration,
    /// Injected faults.
    pub faults: HostedFaults,
}

impl Default for HostedSimConfig {
    fn default() -> Self {
        HostedSimConfig {
            namespace: "clusters".into(),
            name: "demo".into(),
            replace_replicas: 3,
            max_surge: 1,
            max_unavailable: 0,
            in_place_replicas: 3,
            in_place_max_unavailable: 1,
            control_plane_steps: 6,
            installed_version: "4.17.5".into(),
            from_version: "4.17.12".into(),
            to_version: "4.18.3".into(),
            seed: 1,
            start: Timestamp::from_second(1_767_225_600).unwrap_or(Timestamp::UNIX_EPOCH), // 2026-01-01
            step: SignedDuration::from_secs(60),
            faults: HostedFaults::default(),
        }
    }
}

/// `x.y` of a version.
pub(super) fn minor(v: &str) -> Option<(u64, u64)> {
    let mut it = v.split(['.', '-', '+']);
    let x = it.next()?.parse().ok()?;
    let y = it.next()?.parse().ok()?;
    Some((x, y))
}

impl HostedSimConfig {
    /// Refuses what cannot be simulated, naming the problem.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::Config(m));
        if self.name.is_empty() || self.namespace.is_empty() {
            return bad("the HostedCluster needs a name and a namespace".into());
        }
        let dns = |s: &str| {
            s.len() <= 53
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
                && s.starts_with(|c: char| c.is_ascii_alphanumeric())
                && s.ends_with(|c: char| c.is_ascii_alphanumeric())
        };
        if !dns(&self.name) || !dns(&self.namespace) {
            return bad(format!(
                "{}/{}: the namespace and name must be lowercase DNS labels of at most 53 characters",
                self.namespace, self.name
            ));
        }
        if self.replace_replicas == 0 || self.in_place_replicas == 0 {
            return bad("each NodePool needs at least one Machine".into());
        }
        if self.max_surge == 0 && self.max_unavailable == 0 {
            return bad("the Replace NodePool needs maxSurge or maxUnavailable above 0".into());
        }
        if self.control_plane_steps < 2 {
            return bad("the control plane needs at least 2 steps".into());
        }
        if self.from_version == self.to_version {
            return bad(format!("already at {}", self.to_version));
        }
        if self.step <= SignedDuration::ZERO {
            return bad("the simulated time per step must be positive".into());
        }
        if self.faults.blocked_update.is_some()
            && minor(&self.from_version) == minor(&self.to_version)
        {
            return bad(format!(
                "blocked update: {} -> {} is not a minor update (Upgradeable=False only gates minor updates)",
                self.from_version, self.to_version
            ));
        }
        for (what, f) in [
            ("invalid image", &self.faults.invalid_image),
            ("blocked update", &self.faults.blocked_update),
            ("blocked drain", &self.faults.blocked_drain),
        ] {
            if let Some(FaultSpec {
                target: Some(t), ..
            }) = f
            {
                return bad(format!(
                    "{what}: the target is chosen by the simulation (use auto[:STEPS]), not {t:?}"
                ));
            }
        }
        Ok(())
    }
}
