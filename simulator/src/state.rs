//! The state of the simulated cluster: its objects as the simulation keeps them, which parts
//! changed, and the read-only views of where the update is.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::config::SimConfig;
use super::faults::ActiveFaults;

/// Label prefix of node roles.
pub(super) const ROLE_PREFIX: &str = "node-role.kubernetes.io/";

/// SplitMix64: small, fast, and the same everywhere.
#[derive(Clone, Debug)]
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub(super) fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next_u64() % (u64::from(hi.saturating_sub(lo)) + 1)) as u32
    }
    pub(super) fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// FNV-1a, for deterministic names and image digests.
pub(super) fn fnv(seed: u64, s: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325_u64 ^ seed;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

pub(super) fn hex32(s: &str) -> String {
    format!("{:016x}{:016x}", fnv(1, s), fnv(2, s))
}

/// The machine-config operator image of a release (the MCO Deployment's container image, and
/// `machine-config`'s `operator-image` version once it runs that release).
pub(super) fn mco_image(version: &str) -> String {
    format!(
        "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:{}{}",
        hex32(&format!("{version}/machine-config-operator")),
        hex32(&format!("{version}/machine-config-operator/image"))
    )
}

pub(super) fn release_image(version: &str) -> String {
    format!(
        "quay.io/openshift-release-dev/ocp-release@sha256:{}{}",
        hex32(version),
        hex32(&format!("{version}/image"))
    )
}

/// A condition; `ltt` changes only when `status` does.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Cond {
    pub(super) type_: &'static str,
    pub(super) status: &'static str,
    pub(super) reason: String,
    pub(super) message: String,
    pub(super) ltt: i64,
}

impl Cond {
    pub(super) fn new(
        type_: &'static str,
        status: &'static str,
        reason: &str,
        message: &str,
        at: i64,
    ) -> Self {
        Cond {
            type_,
            status,
            reason: reason.to_string(),
            message: message.to_string(),
            ltt: at,
        }
    }
    /// Sets the condition; true when anything changed.
    pub(super) fn set(
        &mut self,
        status: &'static str,
        reason: &str,
        message: &str,
        at: i64,
    ) -> bool {
        if self.status == status && self.reason == reason && self.message == message {
            return false;
        }
        if self.status != status {
            self.ltt = at;
        }
        self.status = status;
        self.reason = reason.to_string();
        self.message = message.to_string();
        true
    }
    pub(super) fn json(&self) -> Value {
        json!({
            "type": self.type_,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": ts(self.ltt),
        })
    }
}

pub(super) fn ts(secs: i64) -> String {
    Timestamp::from_second(secs)
        .unwrap_or(Timestamp::UNIX_EPOCH)
        .to_string()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum OpPhase {
    Waiting,
    Updating { left: u32 },
    Done,
}

#[derive(Clone, Debug)]
pub(super) struct Operator {
    pub(super) name: String,
    pub(super) version: String,
    pub(super) available: Cond,
    pub(super) degraded: Cond,
    pub(super) progressing: Cond,
    pub(super) upgradeable: Cond,
    pub(super) phase: OpPhase,
}

/// Reason and message of a platform operator with nothing to report.
pub(super) const ALL_IS_WELL: (&str, &str) = ("AsExpected", "All is well");

impl Operator {
    /// The operator reports `version`: done, `Progressing=False` with `reason` and `message`.
    pub(super) fn finish(&mut self, version: &str, (reason, message): (&str, &str), at: i64) {
        self.phase = OpPhase::Done;
        self.version = version.to_string();
        self.progressing.set("False", reason, message, at);
    }
}

#[derive(Clone, Debug)]
pub(super) struct Pool {
    pub(super) name: String,
    pub(super) role: String,
    pub(super) is_master: bool,
    pub(super) max_unavailable: u32,
    pub(super) old_config: String,
    pub(super) new_config: String,
    pub(super) config: String,
    pub(super) paused: bool,
    /// Node indices, in pick order.
    pub(super) pick_order: Vec<usize>,
    pub(super) updating: bool,
}

/// Where a simulated node is in its update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeStep {
    /// On the old configuration, not picked yet.
    Pending,
    /// Picked: new desired configuration, daemon `Working`, drain requested, cordoned.
    Draining,
    /// Drained: the daemon applies the new configuration.
    Updating,
    /// Daemon `Rebooting`; the node is not ready while it reboots.
    Rebooting,
    /// On the new configuration, daemon `Done`; uncordon requested.
    Done,
    /// Uncordoned: finished.
    Updated,
}

impl NodeStep {
    /// The next step.
    pub fn next(self) -> NodeStep {
        match self {
            NodeStep::Pending => NodeStep::Draining,
            NodeStep::Draining => NodeStep::Updating,
            NodeStep::Updating => NodeStep::Rebooting,
            NodeStep::Rebooting => NodeStep::Done,
            NodeStep::Done | NodeStep::Updated => NodeStep::Updated,
        }
    }
    /// Between picked and uncordoned: counts against `maxUnavailable`.
    pub fn in_flight(self) -> bool {
        !matches!(self, NodeStep::Pending | NodeStep::Updated)
    }
}

#[derive(Clone, Debug)]
pub(super) struct SimNode {
    pub(super) name: String,
    pub(super) pool: usize,
    pub(super) labels: BTreeMap<String, String>,
    pub(super) current_config: String,
    pub(super) desired_config: String,
    pub(super) state: &'static str,
    pub(super) reason: String,
    pub(super) desired_drain: String,
    pub(super) last_applied_drain: String,
    pub(super) unschedulable: bool,
    pub(super) ready: Cond,
    pub(super) heartbeat: i64,
    pub(super) since: i64,
    pub(super) step: NodeStep,
    pub(super) left: u32,
}

/// Reason and message of a node's `Ready=True` condition, as the kubelet posts it.
pub(super) const KUBELET_READY: (&str, &str) = ("KubeletReady", "kubelet is posting ready status");

impl SimNode {
    /// The kubelet posts `Ready=True` at `at`; true when the condition changed.
    pub(super) fn post_ready(&mut self, at: i64) -> bool {
        self.heartbeat = at;
        let (reason, message) = KUBELET_READY;
        self.ready.set("True", reason, message, at)
    }
    /// The kubelet posts `Ready=False` at `at` (the not-ready-node fault).
    pub(super) fn post_not_ready(&mut self, at: i64) {
        self.heartbeat = at;
        self.ready.set(
            "False",
            "KubeletNotReady",
            "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: No CNI configuration file in /etc/kubernetes/cni/net.d/. Has your network provider started?",
            at,
        );
    }
}

#[derive(Clone, Debug)]
pub(super) struct Mc {
    pub(super) name: String,
    pub(super) role: String,
    pub(super) version: Option<String>,
    pub(super) created: i64,
}

impl Mc {
    /// A MachineConfig of pool `role`; `version`: the release that rendered it, if rendered.
    pub(super) fn new(name: String, role: &str, version: Option<&str>, created: i64) -> Self {
        Mc {
            name,
            role: role.to_string(),
            version: version.map(str::to_string),
            created,
        }
    }
}

/// Name of the rendered MachineConfig of `pool` at `version`.
pub(super) fn rendered_config(pool: &str, version: &str) -> String {
    format!("rendered-{pool}-{}", hex32(&format!("{pool}/{version}")))
}

#[derive(Clone, Debug)]
pub(super) struct HistoryEntry {
    pub(super) state: &'static str,
    pub(super) started: i64,
    pub(super) completed: Option<i64>,
    pub(super) version: String,
    pub(super) image: String,
}

impl HistoryEntry {
    /// An update to `version` (its release image) started at `started`.
    pub(super) fn new(
        state: &'static str,
        version: &str,
        started: i64,
        completed: Option<i64>,
    ) -> Self {
        HistoryEntry {
            state,
            started,
            completed,
            version: version.to_string(),
            image: release_image(version),
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Cv {
    pub(super) cluster_id: String,
    pub(super) desired_version: String,
    pub(super) desired_image: String,
    pub(super) desired_update: bool,
    pub(super) history: Vec<HistoryEntry>,
    pub(super) available: Cond,
    pub(super) failing: Cond,
    pub(super) progressing: Cond,
    pub(super) retrieved: Cond,
}

impl Cv {
    /// `spec.desiredUpdate` (and `status.desired`): `version` and its release image.
    pub(super) fn desire(&mut self, version: &str) {
        self.desired_version = version.to_string();
        self.desired_image = release_image(version);
    }
    /// The cluster runs `version`, nothing in progress: `Available=True`, `Progressing=False`.
    pub(super) fn settle(&mut self, version: &str, at: i64) {
        self.progressing
            .set("False", "", &format!("Cluster version is {version}"), at);
        self.available
            .set("True", "", &format!("Done applying {version}"), at);
    }
}

/// An object of the simulated cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectRef {
    /// A MachineConfig (index).
    MachineConfig(usize),
    /// A MachineConfigPool (index).
    Pool(usize),
    /// The ClusterVersion `version`.
    ClusterVersion,
    /// A ClusterOperator (index).
    Operator(usize),
    /// A Node (index).
    Node(usize),
    /// The Deployment `openshift-machine-config-operator/machine-config-operator` (4.18+: its
    /// image is what `machine-config`'s `operator-image` version must equal).
    McoDeployment,
}

impl ObjectRef {
    /// Kinds are written in this order: what a later kind refers to exists first.
    pub fn rank(self) -> u8 {
        match self {
            ObjectRef::MachineConfig(_) => 0,
            ObjectRef::Pool(_) => 1,
            ObjectRef::ClusterVersion => 2,
            ObjectRef::Operator(_) => 3,
            ObjectRef::Node(_) => 4,
            ObjectRef::McoDeployment => 5,
        }
    }
    pub(super) fn has_status(self) -> bool {
        !matches!(self, ObjectRef::MachineConfig(_) | ObjectRef::McoDeployment)
    }
}

/// Which part of an object: metadata and spec, or status (its own subresource).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// Metadata and spec (the main endpoint).
    Main,
    /// `.status` (the status subresource).
    Status,
}

/// Where the update is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Not started: the cluster runs the old version.
    Idle,
    /// Operators updating, before `machine-config`.
    ControlPlane,
    /// `machine-config` started: pools roll their nodes.
    Nodes,
    /// Everything is at the new version.
    Completed,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Idle => "idle",
            Stage::ControlPlane => "control plane",
            Stage::Nodes => "nodes",
            Stage::Completed => "completed",
        })
    }
}

/// The simulated cluster and its update (see the module documentation).
#[derive(Clone, Debug)]
pub struct Simulation {
    pub(super) config: SimConfig,
    pub(super) step_count: u64,
    pub(super) now: i64,
    pub(super) stage: Stage,
    pub(super) cv: Cv,
    pub(super) operators: Vec<Operator>,
    pub(super) current_op: usize,
    pub(super) pools: Vec<Pool>,
    pub(super) mcs: Vec<Mc>,
    pub(super) nodes: Vec<SimNode>,
    /// The release whose machine-config operator image the MCO Deployment runs.
    pub(super) mco_deployment_version: String,
    pub(super) rng: Rng,
    pub(super) faults: ActiveFaults,
    pub(super) dirty: BTreeSet<(ObjectRef, Part)>,
}

impl Simulation {
    pub(super) fn all_parts(&self) -> BTreeSet<(ObjectRef, Part)> {
        let mut all = BTreeSet::new();
        let mut add = |r: ObjectRef| {
            all.insert((r, Part::Main));
            if r.has_status() {
                all.insert((r, Part::Status));
            }
        };
        (0..self.mcs.len()).for_each(|i| add(ObjectRef::MachineConfig(i)));
        (0..self.pools.len()).for_each(|i| add(ObjectRef::Pool(i)));
        add(ObjectRef::ClusterVersion);
        (0..self.operators.len()).for_each(|i| add(ObjectRef::Operator(i)));
        (0..self.nodes.len()).for_each(|i| add(ObjectRef::Node(i)));
        add(ObjectRef::McoDeployment);
        all
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
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
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The update is over (a stalled update never is).
    pub fn is_completed(&self) -> bool {
        self.stage == Stage::Completed
    }

    /// Names of the nodes, in creation order.
    pub fn node_names(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().map(|n| n.name.as_str())
    }

    /// The ClusterVersion history entry `i` (newest first): when it started and, once
    /// completed, when it completed.
    pub fn history_entry(&self, i: usize) -> Option<(Timestamp, Timestamp)> {
        let h = self.cv.history.get(i)?;
        let at = |s: i64| Timestamp::from_second(s).ok();
        Some((at(h.started)?, at(h.completed?)?))
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// A node's update step, by index.
    pub fn node_step(&self, index: usize) -> Option<NodeStep> {
        self.nodes.get(index).map(|n| n.step)
    }

    /// A node's name, by index.
    pub fn node_name(&self, index: usize) -> Option<&str> {
        self.nodes.get(index).map(|n| n.name.as_str())
    }

    /// A node's pool name, by index.
    pub fn node_pool(&self, index: usize) -> Option<&str> {
        self.nodes
            .get(index)
            .and_then(|n| self.pools.get(n.pool))
            .map(|p| p.name.as_str())
    }

    /// `(pool, updated nodes, total nodes, in flight, paused)` per pool.
    pub fn pool_progress(&self) -> Vec<(String, usize, usize, usize, bool)> {
        self.pools
            .iter()
            .map(|p| {
                let nodes = p.pick_order.iter().filter_map(|&i| self.nodes.get(i));
                let (mut done, mut flight) = (0, 0);
                for n in nodes {
                    if n.step == NodeStep::Updated {
                        done += 1;
                    } else if n.step.in_flight() {
                        flight += 1;
                    }
                }
                (p.name.clone(), done, p.pick_order.len(), flight, p.paused)
            })
            .collect()
    }

    /// Operators at the new version, and the total.
    pub fn operator_progress(&self) -> (usize, usize) {
        let done = self
            .operators
            .iter()
            .filter(|o| o.phase == OpPhase::Done)
            .count();
        (done, self.operators.len())
    }

    /// The operators updating now.
    pub fn updating_operators(&self) -> Vec<&str> {
        self.operators
            .iter()
            .filter(|o| matches!(o.phase, OpPhase::Updating { .. }))
            .map(|o| o.name.as_str())
            .collect()
    }

    /// Object parts changed since the last [`Simulation::take_dirty`] (initially: all).
    pub fn dirty(&self) -> &BTreeSet<(ObjectRef, Part)> {
        &self.dirty
    }

    /// Takes the changed object parts (and forgets them).
    pub fn take_dirty(&mut self) -> BTreeSet<(ObjectRef, Part)> {
        std::mem::take(&mut self.dirty)
    }

    /// Marks every object part as changed (e.g. to write everything again).
    pub fn mark_all_dirty(&mut self) {
        self.dirty = self.all_parts();
    }

    pub(super) fn touch(&mut self, r: ObjectRef, part: Part) {
        self.dirty.insert((r, part));
    }
}
