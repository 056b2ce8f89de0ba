//! The hosted cluster before its update: a HostedCluster at `from` (history `installed` →
//! `from`), a Replace NodePool and an InPlace NodePool with their Machines, all at `from`.

use super::super::error::SimError;
use super::super::faults::Fault;
use super::super::state::NodeStep;
use super::super::state::{Cond, HistoryEntry, Rng, fnv, hex32, release_image};
use super::config::HostedSimConfig;
use super::state::{
    HostedActiveFaults, HostedSimulation, HostedStage, IN_PLACE, MachinePhase, REPLACE,
    SimHostedCluster, SimMachine, SimPool,
};

/// Seconds in a day.
const DAY: i64 = 86_400;

/// The InPlace pool's config-version hash at `version` (HyperShift hashes the pool's
/// configuration and release; these are not MachineConfig names).
pub(super) fn config_hash(pool: &str, version: &str) -> String {
    hex32(&format!("{pool}/{version}/config"))[..8].to_string()
}

/// The pull spec of a release image that does not exist (the invalid-image fault).
pub(super) fn invalid_image(version: &str) -> String {
    format!("quay.io/openshift-release-dev/ocp-release:{version}-x86-64")
}

/// The hosted cluster's conditions as HyperShift reports them on a healthy, settled cluster.
fn settled_conditions(c: &HostedSimConfig, at: i64, upgradeable: bool) -> Vec<Cond> {
    let mut out = healthy_conditions(&c.from_version, at);
    if !upgradeable
        && let Some(u) = out
            .iter_mut()
            .find(|c| c.type_ == "ClusterVersionUpgradeable")
    {
        u.set("False", "AdminAckRequired", &admin_ack(&c.to_version), at);
    }
    out
}

/// Every condition of a healthy hosted cluster at version `v`, in a fixed order.
fn healthy_conditions(v: &str, at: i64) -> Vec<Cond> {
    let (progressing, available) = (
        format!("Cluster version is {v}"),
        format!("Done applying {v}"),
    );
    let payload = payload_loaded(v);
    [
        (
            "Available",
            "True",
            "AsExpected",
            "The hosted control plane is available",
        ),
        (
            "Progressing",
            "False",
            "AsExpected",
            "HostedCluster is at expected version",
        ),
        (
            "Degraded",
            "False",
            "AsExpected",
            "The hosted cluster is not degraded",
        ),
        ("ClusterVersionSucceeding", "True", "FromClusterVersion", ""),
        (
            "ClusterVersionProgressing",
            "False",
            "FromClusterVersion",
            progressing.as_str(),
        ),
        (
            "ClusterVersionAvailable",
            "True",
            "FromClusterVersion",
            available.as_str(),
        ),
        (
            "ClusterVersionReleaseAccepted",
            "True",
            "PayloadLoaded",
            payload.as_str(),
        ),
        (
            "ClusterVersionUpgradeable",
            "True",
            "FromClusterVersion",
            "",
        ),
        (
            "ValidReleaseImage",
            "True",
            "AsExpected",
            "Release image is valid",
        ),
        (
            "ReconciliationActive",
            "True",
            "AsExpected",
            "Reconciliation active on resource",
        ),
        (
            "KubeAPIServerAvailable",
            "True",
            "AsExpected",
            "Kube APIServer deployment is available",
        ),
        ("EtcdAvailable", "True", "QuorumAvailable", ""),
    ]
    .into_iter()
    .map(|(t, s, r, m)| Cond::new(t, s, r, m, at))
    .collect()
}

/// `ClusterVersionReleaseAccepted`'s message for `version`.
pub(super) fn payload_loaded(version: &str) -> String {
    format!(
        "Payload loaded version=\"{version}\" image=\"{}\" architecture=\"amd64\"",
        release_image(version)
    )
}

/// The admin-ack gate's message (the blocked-update fault).
pub(super) fn admin_ack(to: &str) -> String {
    let minor = to.split('.').take(2).collect::<Vec<_>>().join(".");
    format!(
        "Kubernetes 1.31 and therefore OpenShift {minor} remove several APIs which require admin consideration. Please see the knowledge article https://access.redhat.com/articles/7031404 for details and instructions."
    )
}

fn pool_conditions(at: i64) -> Vec<Cond> {
    [
        ("Ready", "True", "AsExpected", ""),
        ("AllMachinesReady", "True", "AsExpected", "All is well"),
        ("AllNodesHealthy", "True", "AsExpected", "All is well"),
        (
            "ValidReleaseImage",
            "True",
            "AsExpected",
            "Using release image",
        ),
        ("ReachedIgnitionEndpoint", "True", "AsExpected", ""),
        (
            "SupportedVersionSkew",
            "True",
            "AsExpected",
            "Release image version is valid",
        ),
        ("UpdatingConfig", "False", "AsExpected", ""),
        (
            "ReconciliationActive",
            "True",
            "AsExpected",
            "Reconciliation active on resource",
        ),
    ]
    .into_iter()
    .map(|(t, s, r, m)| Cond::new(t, s, r, m, at))
    .collect()
}

/// The HostedCluster at `from`, settled at `settled` (the update not yet requested).
fn settled_hosted_cluster(config: &HostedSimConfig, settled: i64) -> SimHostedCluster {
    let start = config.start.as_second();
    let from = config.from_version.clone();
    let to = config.to_version.clone();
    SimHostedCluster {
        spec_image: release_image(&from),
        desired_version: from.clone(),
        desired_image: release_image(&from),
        history: vec![
            HistoryEntry::new("Completed", &from, settled - DAY / 24, Some(settled)),
            HistoryEntry::new(
                "Completed",
                &config.installed_version,
                start - 90 * DAY,
                Some(start - 90 * DAY + DAY / 24),
            ),
        ],
        cp_desired_version: from.clone(),
        cp_history: vec![HistoryEntry::new(
            "Completed",
            &from,
            settled - DAY / 24,
            Some(settled - DAY / 48),
        )],
        available_updates: vec![(to.clone(), release_image(&to))],
        conditions: settled_conditions(
            config,
            settled,
            config
                .faults
                .blocked_update
                .as_ref()
                .is_none_or(|f| f.steps == 0),
        ),
        cp_progress: 0,
    }
}

/// The Replace and the InPlace NodePool at `from`, settled at `settled`.
fn settled_pools(config: &HostedSimConfig, settled: i64) -> Vec<SimPool> {
    let from = &config.from_version;
    [
        (
            format!("{}-workers", config.name),
            false,
            config.replace_replicas,
        ),
        (
            format!("{}-inplace", config.name),
            true,
            config.in_place_replicas,
        ),
    ]
    .into_iter()
    .map(|(name, in_place, replicas)| SimPool {
        target_hash: config_hash(&name, from),
        current_hash: config_hash(&name, from),
        name,
        in_place,
        replicas,
        spec_image: release_image(from),
        version: from.clone(),
        template_version: from.clone(),
        updating_version: Cond::new("UpdatingVersion", "False", "AsExpected", "", settled),
        conditions: pool_conditions(settled),
        rolling: false,
        counts: (replicas, replicas, replicas),
    })
    .collect()
}

/// The configured faults, armed.
fn armed_faults(config: &HostedSimConfig) -> HostedActiveFaults {
    let faults = &config.faults;
    HostedActiveFaults {
        invalid_image: faults
            .invalid_image
            .as_ref()
            .map(|f| Fault::new(0, f.steps)),
        blocked_update: faults
            .blocked_update
            .as_ref()
            .map(|f| Fault::new(0, f.steps)),
        blocked_drain: faults
            .blocked_drain
            .as_ref()
            .map(|f| Fault::new(usize::MAX, f.steps)),
    }
}

impl HostedSimulation {
    /// A hosted cluster at `config.from_version`, ready to update; every object is to be
    /// written.
    pub fn new(config: HostedSimConfig) -> Result<Self, SimError> {
        config.validate()?;
        let start = config.start.as_second();
        let settled = start - 20 * DAY;
        let infra_id = format!(
            "{}-{}",
            config.name,
            &hex32(&format!("{}/{}", config.namespace, config.name))[..5]
        );
        let mut sim = HostedSimulation {
            rng: Rng(fnv(config.seed, &config.name)),
            infra_id,
            step_count: 0,
            now: start,
            stage: HostedStage::Idle,
            hc: settled_hosted_cluster(&config, settled),
            pools: settled_pools(&config, settled),
            machines: Vec::new(),
            faults: armed_faults(&config),
            dirty: Default::default(),
            lifecycle: Vec::new(),
            config,
        };
        sim.settled_machines(settled);
        sim.mark_all_dirty();
        Ok(sim)
    }

    /// Each pool's Machines at `from`, running and healthy since a day before `settled`.
    fn settled_machines(&mut self, settled: i64) {
        let from = self.config.from_version.clone();
        for pool in [REPLACE, IN_PLACE] {
            for _ in 0..self.pools[pool].replicas {
                let m = self.new_machine(pool, &from, settled - DAY);
                self.machines.push(m);
            }
            let hash = self.pools[pool].current_hash.clone();
            for m in self.machines.iter_mut().filter(|m| m.pool == pool) {
                m.phase = MachinePhase::Running;
                m.node_healthy.set("True", "", "", settled - DAY);
                m.current_config = hash.clone();
                m.desired_config = hash.clone();
                m.state = "Done";
                m.desired_drain = format!("uncordon-{hash}");
                m.last_applied_drain = format!("uncordon-{hash}");
            }
        }
    }

    /// A new Machine of `pool` at `version`, provisioning, created at `at`.
    pub(super) fn new_machine(&mut self, pool: usize, version: &str, at: i64) -> SimMachine {
        let left = self.rng.range(1, 2);
        SimMachine {
            name: self.machine_name(pool, version),
            pool,
            version: version.to_string(),
            release_version: version.to_string(),
            created: at,
            phase: MachinePhase::Provisioning,
            node_healthy: Cond::new(
                "NodeHealthy",
                "False",
                "WaitingForNodeRef",
                "Waiting for the Node to join",
                at,
            ),
            draining: None,
            deleting_since: None,
            gone: false,
            left,
            step: NodeStep::Pending,
            current_config: String::new(),
            desired_config: String::new(),
            state: "",
            desired_drain: String::new(),
            last_applied_drain: String::new(),
            unschedulable: false,
        }
    }
}
