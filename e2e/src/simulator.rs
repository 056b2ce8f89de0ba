//! A synthetic OpenShift cluster that updates from one version to another, in accelerated time.
//!
//! Two layers:
//!
//! - [`Simulation`]: a pure, deterministic state machine (no I/O, no clock). It holds a
//!   ClusterVersion, platform ClusterOperators, MachineConfigPools, rendered MachineConfigs and
//!   Nodes, and [`Simulation::step`] moves the update one step forward: the ClusterVersion
//!   gets a `Partial` history entry and `Progressing=True`; operators update one by one
//!   (`Progressing=True`, then their `operator` version bumped), `machine-config` last; when
//!   `machine-config` starts, new rendered MachineConfigs appear and every pool's
//!   `spec.configuration.name` switches to its new one; then each pool rolls its nodes
//!   through the machine-config daemon annotations (Draining → Updating → Rebooting → Done →
//!   uncordoned), never more than `maxUnavailable` at a time; `machine-config` reports the new
//!   version once the master pool is done, and the ClusterVersion completes (history
//!   `Completed`, `Progressing=False`) once every pool is. Injected faults (a degraded operator,
//!   a drain blocked by a PodDisruptionBudget, a NotReady node, a paused pool, an operator
//!   that never finishes) hold for a number of steps. Every step remembers which objects (and
//!   which part: metadata/spec or status) it changed.
//! - [`Simulator`]: applies a [`Simulation`] to a real API server with server-side apply
//!   (status through the status subresource), writing only what a step changed.
//!
//! Simulated time: step `k` happens at `start + k × step`, whole seconds. With a `step` equal
//! to the wall-clock interval between steps and `start` = now, the timestamps follow the wall
//! clock (what a controller on the wall clock expects). With a longer `step` and a `start` in
//! the past, a run replays an update of hours in seconds, for a controller evaluating at a
//! fixed instant (`--assess-at`) after the end.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use futures::{StreamExt, TryStreamExt};
use jiff::{SignedDuration, Timestamp};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use update_status_api::input::{
    ClusterOperator, ClusterVersion, MC_RELEASE_IMAGE_VERSION, MachineConfig, MachineConfigPool,
    NODE_CURRENT_CONFIG, NODE_DESIRED_CONFIG, NODE_DESIRED_DRAIN, NODE_LAST_APPLIED_DRAIN,
    NODE_REASON, NODE_STATE, Node,
};
use update_status_controllers::assess::ClusterInputs;

/// Field manager of the simulator's writes.
pub const FIELD_MANAGER: &str = "update-status-simulator";

/// Platform operators in the order the cluster-version operator updates them (roughly its
/// run levels); `machine-config` always comes last and is not in this list.
pub const OPERATORS: [&str; 33] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "config-operator",
    "openshift-apiserver",
    "openshift-controller-manager",
    "kube-storage-version-migrator",
    "cloud-credential",
    "cloud-controller-manager",
    "cluster-autoscaler",
    "machine-api",
    "machine-approver",
    "control-plane-machine-set",
    "authentication",
    "network",
    "dns",
    "service-ca",
    "ingress",
    "image-registry",
    "storage",
    "csi-snapshot-controller",
    "node-tuning",
    "baremetal",
    "console",
    "insights",
    "monitoring",
    "marketplace",
    "openshift-samples",
    "operator-lifecycle-manager",
    "operator-lifecycle-manager-catalog",
    "operator-lifecycle-manager-packageserver",
    "olm",
];
/// The operator that rolls the nodes.
pub const MACHINE_CONFIG: &str = "machine-config";
/// Names of custom pools, in order (then `pool-<n>`).
const CUSTOM_POOLS: [&str; 5] = ["infra", "gpu", "edge", "storage", "batch"];
const ROLE_PREFIX: &str = "node-role.kubernetes.io/";

/// The five cluster-scoped kinds the simulator lists, applies and deletes.
trait ClusterObject:
    Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
    + Clone
    + fmt::Debug
    + DeserializeOwned
{
}

impl ClusterObject for ClusterVersion {}
impl ClusterObject for ClusterOperator {}
impl ClusterObject for MachineConfigPool {}
impl ClusterObject for MachineConfig {}
impl ClusterObject for Node {}

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The configuration cannot be simulated.
    #[error("invalid simulation: {0}")]
    Config(String),
    /// A fault specification does not parse.
    #[error("invalid fault {0:?}: expected TARGET[:STEPS] (TARGET `auto` picks one)")]
    FaultSyntax(String),
    /// An API call failed.
    #[error("{action}: {source}")]
    Api {
        /// What was being done.
        action: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A file could not be written.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A rendered object does not read back as its input type (a bug).
    #[error("{what} does not read back: {source}")]
    Json {
        /// The object.
        what: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
}

// ------------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------------

/// A fault: what it hits (`None`: let the simulation pick) and for how many steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultSpec {
    /// Operator, node or pool name; `None` picks one.
    pub target: Option<String>,
    /// Steps the fault lasts (ignored by the stalled operator, which never recovers).
    pub steps: u32,
}

/// Default duration of a fault, in steps.
pub const DEFAULT_FAULT_STEPS: u32 = 6;

impl FaultSpec {
    /// A fault on an automatically chosen target.
    pub fn auto(steps: u32) -> Self {
        FaultSpec {
            target: None,
            steps,
        }
    }
    /// A fault on a named target.
    pub fn on(target: &str, steps: u32) -> Self {
        FaultSpec {
            target: Some(target.to_string()),
            steps,
        }
    }
}

impl FromStr for FaultSpec {
    type Err = SimError;
    /// `auto`, `NAME`, `auto:STEPS`, `NAME:STEPS` or `:STEPS`.
    fn from_str(s: &str) -> Result<Self, SimError> {
        let (target, steps) = match s.rsplit_once(':') {
            Some((t, n)) => (
                t,
                n.parse::<u32>()
                    .map_err(|_| SimError::FaultSyntax(s.to_string()))?,
            ),
            None => (s, DEFAULT_FAULT_STEPS),
        };
        let target = match target.trim() {
            "" | "auto" => None,
            t if t.contains(char::is_whitespace) => {
                return Err(SimError::FaultSyntax(s.to_string()));
            }
            t => Some(t.to_string()),
        };
        Ok(FaultSpec { target, steps })
    }
}

/// Faults to inject.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// An operator is `Degraded=True` while it updates, for `steps` steps (it does not finish
    /// before it recovers).
    pub degraded_operator: Option<FaultSpec>,
    /// A node's drain is blocked by a PodDisruptionBudget for `steps` steps: the daemon state
    /// is `Degraded` with a `failed to drain node: ... PodDisruptionBudget ...` reason.
    pub blocked_drain: Option<FaultSpec>,
    /// A node is `Ready=False` for `steps` steps from the moment the pools start rolling (it
    /// counts against its pool's `maxUnavailable`, and is not picked while not ready).
    pub not_ready_node: Option<FaultSpec>,
    /// A pool is `spec.paused` for `steps` steps from the moment the pools start rolling.
    pub paused_pool: Option<FaultSpec>,
    /// An operator starts updating and never finishes: the update never completes.
    pub stalled_operator: Option<FaultSpec>,
}

/// What to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Platform ClusterOperators, `machine-config` included (at least 1).
    pub operators: usize,
    /// MachineConfigPools: `master`, `worker`, then custom pools (at least 1).
    pub pools: usize,
    /// Nodes of the master pool.
    pub masters: usize,
    /// Nodes of each other pool.
    pub nodes_per_pool: usize,
    /// `maxUnavailable` of the non-master pools (the master pool uses 1).
    pub max_unavailable: u32,
    /// Version the cluster was installed at (oldest history entry).
    pub installed_version: String,
    /// Version the cluster runs before the update.
    pub from_version: String,
    /// Version it updates to.
    pub to_version: String,
    /// Seed of the step durations and of the order nodes are picked in.
    pub seed: u64,
    /// Simulated instant of step 0.
    pub start: Timestamp,
    /// Simulated time per step.
    pub step: SignedDuration,
    /// Injected faults.
    pub faults: Faults,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            operators: 12,
            pools: 2,
            masters: 3,
            nodes_per_pool: 7,
            max_unavailable: 2,
            installed_version: "4.17.5".into(),
            from_version: "4.17.12".into(),
            to_version: "4.18.3".into(),
            seed: 1,
            start: Timestamp::from_second(1_767_225_600).unwrap_or(Timestamp::UNIX_EPOCH), // 2026-01-01
            step: SignedDuration::from_secs(60),
            faults: Faults::default(),
        }
    }
}

impl SimConfig {
    /// Total number of nodes.
    pub fn total_nodes(&self) -> usize {
        self.masters + self.nodes_per_pool * self.pools.saturating_sub(1)
    }
}

// ------------------------------------------------------------------------------------------------
// State
// ------------------------------------------------------------------------------------------------

/// SplitMix64: small, fast, and the same everywhere.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next_u64() % (u64::from(hi.saturating_sub(lo)) + 1)) as u32
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// FNV-1a, for deterministic names and image digests.
fn fnv(seed: u64, s: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325_u64 ^ seed;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

fn hex32(s: &str) -> String {
    format!("{:016x}{:016x}", fnv(1, s), fnv(2, s))
}

fn release_image(version: &str) -> String {
    format!(
        "quay.io/openshift-release-dev/ocp-release@sha256:{}{}",
        hex32(version),
        hex32(&format!("{version}/image"))
    )
}

/// A condition; `ltt` changes only when `status` does.
#[derive(Clone, Debug, PartialEq)]
struct Cond {
    type_: &'static str,
    status: &'static str,
    reason: String,
    message: String,
    ltt: i64,
}

impl Cond {
    fn new(
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
    fn set(&mut self, status: &'static str, reason: &str, message: &str, at: i64) -> bool {
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
    fn json(&self) -> Value {
        json!({
            "type": self.type_,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": ts(self.ltt),
        })
    }
}

fn ts(secs: i64) -> String {
    Timestamp::from_second(secs)
        .unwrap_or(Timestamp::UNIX_EPOCH)
        .to_string()
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum OpPhase {
    Waiting,
    Updating { left: u32 },
    Done,
}

#[derive(Clone, Debug)]
struct Operator {
    name: String,
    version: String,
    available: Cond,
    degraded: Cond,
    progressing: Cond,
    upgradeable: Cond,
    phase: OpPhase,
}

/// Reason and message of a platform operator with nothing to report.
const ALL_IS_WELL: (&str, &str) = ("AsExpected", "All is well");

impl Operator {
    /// The operator reports `version`: done, `Progressing=False` with `reason` and `message`.
    fn finish(&mut self, version: &str, (reason, message): (&str, &str), at: i64) {
        self.phase = OpPhase::Done;
        self.version = version.to_string();
        self.progressing.set("False", reason, message, at);
    }
}

#[derive(Clone, Debug)]
struct Pool {
    name: String,
    role: String,
    is_master: bool,
    max_unavailable: u32,
    old_config: String,
    new_config: String,
    config: String,
    paused: bool,
    /// Node indices, in pick order.
    pick_order: Vec<usize>,
    updating: bool,
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
struct SimNode {
    name: String,
    pool: usize,
    labels: BTreeMap<String, String>,
    current_config: String,
    desired_config: String,
    state: &'static str,
    reason: String,
    desired_drain: String,
    last_applied_drain: String,
    unschedulable: bool,
    ready: Cond,
    heartbeat: i64,
    since: i64,
    step: NodeStep,
    left: u32,
}

/// Reason and message of a node's `Ready=True` condition, as the kubelet posts it.
const KUBELET_READY: (&str, &str) = ("KubeletReady", "kubelet is posting ready status");

impl SimNode {
    /// The kubelet posts `Ready=True` at `at`; true when the condition changed.
    fn post_ready(&mut self, at: i64) -> bool {
        self.heartbeat = at;
        let (reason, message) = KUBELET_READY;
        self.ready.set("True", reason, message, at)
    }
    /// The kubelet posts `Ready=False` at `at` (the not-ready-node fault).
    fn post_not_ready(&mut self, at: i64) {
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
struct Mc {
    name: String,
    role: String,
    version: Option<String>,
    created: i64,
}

impl Mc {
    /// A MachineConfig of pool `role`; `version`: the release that rendered it, if rendered.
    fn new(name: String, role: &str, version: Option<&str>, created: i64) -> Self {
        Mc {
            name,
            role: role.to_string(),
            version: version.map(str::to_string),
            created,
        }
    }
}

/// Name of the rendered MachineConfig of `pool` at `version`.
fn rendered_config(pool: &str, version: &str) -> String {
    format!("rendered-{pool}-{}", hex32(&format!("{pool}/{version}")))
}

#[derive(Clone, Debug)]
struct HistoryEntry {
    state: &'static str,
    started: i64,
    completed: Option<i64>,
    version: String,
    image: String,
}

impl HistoryEntry {
    /// An update to `version` (its release image) started at `started`.
    fn new(state: &'static str, version: &str, started: i64, completed: Option<i64>) -> Self {
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
struct Cv {
    cluster_id: String,
    desired_version: String,
    desired_image: String,
    desired_update: bool,
    history: Vec<HistoryEntry>,
    available: Cond,
    failing: Cond,
    progressing: Cond,
    retrieved: Cond,
}

impl Cv {
    /// `spec.desiredUpdate` (and `status.desired`): `version` and its release image.
    fn desire(&mut self, version: &str) {
        self.desired_version = version.to_string();
        self.desired_image = release_image(version);
    }
    /// The cluster runs `version`, nothing in progress: `Available=True`, `Progressing=False`.
    fn settle(&mut self, version: &str, at: i64) {
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
}

impl ObjectRef {
    /// Kinds are written in this order: what a later kind refers to exists first.
    fn rank(self) -> u8 {
        match self {
            ObjectRef::MachineConfig(_) => 0,
            ObjectRef::Pool(_) => 1,
            ObjectRef::ClusterVersion => 2,
            ObjectRef::Operator(_) => 3,
            ObjectRef::Node(_) => 4,
        }
    }
    fn has_status(self) -> bool {
        !matches!(self, ObjectRef::MachineConfig(_))
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

/// What one step did.
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport {
    /// Step number (1 for the first step).
    pub step: u64,
    /// Simulated instant of the step.
    pub at: Timestamp,
    /// Stage after the step.
    pub stage: Stage,
    /// Object parts changed (each is one write for [`Simulator`]).
    pub changes: usize,
    /// One line for humans.
    pub summary: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum FaultState {
    /// Not triggered yet.
    Armed,
    /// Active for this many more steps.
    Active(u32),
    /// Over.
    Cleared,
}

#[derive(Clone, Debug)]
struct Fault {
    target: usize,
    steps: u32,
    state: FaultState,
}

impl Fault {
    fn new(target: usize, steps: u32) -> Self {
        Fault {
            target,
            steps,
            state: FaultState::Armed,
        }
    }
    fn active(&self) -> bool {
        matches!(self.state, FaultState::Active(_))
    }
    /// Active on `target`.
    fn holds(&self, target: usize) -> bool {
        self.target == target && self.active()
    }
    /// The target, while active.
    fn active_target(&self) -> Option<usize> {
        self.active().then_some(self.target)
    }
    /// Starts an armed fault that lasts at least one step; true when it started.
    fn trigger(&mut self) -> bool {
        let start = self.state == FaultState::Armed && self.steps > 0;
        if start {
            self.state = FaultState::Active(self.steps);
        }
        start
    }
    /// Counts one step of an active fault down; returns its target on the step it clears.
    fn tick(&mut self) -> Option<usize> {
        match self.state {
            FaultState::Active(left) if left <= 1 => {
                self.state = FaultState::Cleared;
                Some(self.target)
            }
            FaultState::Active(left) => {
                self.state = FaultState::Active(left - 1);
                None
            }
            FaultState::Armed | FaultState::Cleared => None,
        }
    }
}

/// `fault` is configured and active on `target`.
fn holds(fault: &Option<Fault>, target: usize) -> bool {
    fault.as_ref().is_some_and(|f| f.holds(target))
}

#[derive(Clone, Debug, Default)]
struct ActiveFaults {
    degraded_operator: Option<Fault>,
    stalled_operator: Option<usize>,
    blocked_drain: Option<Fault>,
    not_ready_node: Option<Fault>,
    paused_pool: Option<Fault>,
}

impl ActiveFaults {
    /// Operator `i` cannot finish: it is the stalled operator, or degraded right now.
    fn holds_operator(&self, i: usize) -> bool {
        self.stalled_operator == Some(i) || holds(&self.degraded_operator, i)
    }
}

/// Which injected faults hold right now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultStatus {
    /// The degraded operator, while degraded.
    pub degraded_operator: Option<String>,
    /// The node whose drain is blocked, while blocked.
    pub blocked_drain: Option<String>,
    /// The NotReady node, while not ready.
    pub not_ready_node: Option<String>,
    /// The paused pool, while paused.
    pub paused_pool: Option<String>,
    /// The stalled operator, once it started.
    pub stalled_operator: Option<String>,
}

impl FaultStatus {
    /// No fault holds.
    pub fn is_clear(&self) -> bool {
        *self == FaultStatus::default()
    }
}

/// The simulated cluster and its update (see the module documentation).
#[derive(Clone, Debug)]
pub struct Simulation {
    config: SimConfig,
    step_count: u64,
    now: i64,
    stage: Stage,
    cv: Cv,
    operators: Vec<Operator>,
    current_op: usize,
    pools: Vec<Pool>,
    mcs: Vec<Mc>,
    nodes: Vec<SimNode>,
    rng: Rng,
    faults: ActiveFaults,
    dirty: BTreeSet<(ObjectRef, Part)>,
}

/// The inputs of the simulated cluster, as the controller reads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimInputs {
    /// The ClusterVersion.
    pub cluster_version: ClusterVersion,
    /// ClusterOperators, by name.
    pub cluster_operators: Vec<ClusterOperator>,
    /// MachineConfigPools.
    pub pools: Vec<MachineConfigPool>,
    /// MachineConfigs.
    pub machine_configs: Vec<MachineConfig>,
    /// Nodes.
    pub nodes: Vec<Node>,
}

impl SimInputs {
    /// Reads the inputs from an API server (every object of the five kinds).
    pub async fn read(client: &Client) -> Result<Self, SimError> {
        async fn list<K: ClusterObject>(client: &Client) -> Result<Vec<K>, SimError> {
            let api: Api<K> = Api::all(client.clone());
            api.list(&ListParams::default())
                .await
                .map(|l| l.items)
                .map_err(|source| SimError::Api {
                    action: format!("listing {}", K::kind(&())),
                    source: Box::new(source),
                })
        }
        let cvs: Vec<ClusterVersion> = list(client).await?;
        Ok(SimInputs {
            cluster_version: cvs
                .into_iter()
                .find(|c| c.metadata.name.as_deref() == Some("version"))
                .unwrap_or_default(),
            cluster_operators: list(client).await?,
            pools: list(client).await?,
            machine_configs: list(client).await?,
            nodes: list(client).await?,
        })
    }

    /// The same inputs with only the metadata the assessment reads (name, labels,
    /// annotations) and every list sorted by name: what to compare a simulation with what an
    /// API server holds.
    pub fn normalized(&self) -> SimInputs {
        fn meta(
            m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        ) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: m.name.clone(),
                labels: m.labels.clone().filter(|l| !l.is_empty()),
                annotations: m.annotations.clone().filter(|a| !a.is_empty()),
                ..Default::default()
            }
        }
        let mut out = self.clone();
        out.cluster_version.metadata = meta(&out.cluster_version.metadata);
        for o in &mut out.cluster_operators {
            o.metadata = meta(&o.metadata);
        }
        for o in &mut out.pools {
            o.metadata = meta(&o.metadata);
        }
        for o in &mut out.machine_configs {
            o.metadata = meta(&o.metadata);
        }
        for o in &mut out.nodes {
            o.metadata = meta(&o.metadata);
        }
        out.cluster_operators
            .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        out.pools
            .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        out.machine_configs
            .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        out.nodes
            .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        out
    }

    /// Borrowed view for [`update_status_controllers::assess`].
    pub fn as_cluster_inputs(&self) -> ClusterInputs<'_> {
        ClusterInputs {
            cluster_version: Some(&self.cluster_version),
            cluster_operators: &self.cluster_operators,
            pools: &self.pools,
            machine_configs: &self.machine_configs,
            nodes: &self.nodes,
            ..Default::default()
        }
    }
}

const DAY: i64 = 86_400;

impl Simulation {
    /// Builds the cluster at `from_version`, not updating; every object is dirty (to be
    /// created).
    pub fn new(config: SimConfig) -> Result<Self, SimError> {
        if config.operators == 0 {
            return Err(SimError::Config(
                "at least one operator (machine-config)".into(),
            ));
        }
        if config.pools == 0 {
            return Err(SimError::Config("at least one pool (master)".into()));
        }
        if config.step <= SignedDuration::ZERO {
            return Err(SimError::Config(
                "the simulated step must be positive".into(),
            ));
        }
        if config.from_version == config.to_version {
            return Err(SimError::Config("from and to versions are equal".into()));
        }
        let start = config.start.as_second();
        let mut rng = Rng(config.seed);
        let from = config.from_version.clone();
        let installed_at = start - 90 * DAY;
        let from_started = start - 40 * DAY;
        let from_completed = from_started + 70 * 60;

        let mut cv = Cv {
            cluster_id: format!(
                "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
                fnv(config.seed, "id") as u32,
                fnv(config.seed, "a") as u16,
                fnv(config.seed, "b") as u16 & 0xfff,
                fnv(config.seed, "c") as u16 & 0xfff,
                fnv(config.seed, "d") & 0xffff_ffff_ffff
            ),
            desired_version: String::new(),
            desired_image: String::new(),
            desired_update: false,
            history: vec![
                HistoryEntry::new("Completed", &from, from_started, Some(from_completed)),
                HistoryEntry::new(
                    "Completed",
                    &config.installed_version,
                    installed_at,
                    Some(installed_at + 45 * 60),
                ),
            ],
            // Messages: `settle` below.
            available: Cond::new("Available", "True", "", "", from_completed),
            failing: Cond::new("Failing", "False", "", "", from_completed),
            progressing: Cond::new("Progressing", "False", "", "", from_completed),
            retrieved: Cond::new("RetrievedUpdates", "True", "", "", installed_at),
        };
        cv.desire(&from);
        cv.settle(&from, from_completed);

        let mut names: Vec<String> = OPERATORS
            .iter()
            .take(config.operators - 1)
            .map(|s| s.to_string())
            .collect();
        for i in names.len()..config.operators - 1 {
            names.push(format!("operator-{:02}", i + 1));
        }
        names.push(MACHINE_CONFIG.to_string());
        let operators = names
            .into_iter()
            .map(|name| Operator {
                available: Cond::new(
                    "Available",
                    "True",
                    ALL_IS_WELL.0,
                    ALL_IS_WELL.1,
                    from_completed,
                ),
                degraded: Cond::new("Degraded", "False", "AsExpected", "", from_completed),
                progressing: Cond::new(
                    "Progressing",
                    "False",
                    ALL_IS_WELL.0,
                    ALL_IS_WELL.1,
                    from_completed,
                ),
                upgradeable: Cond::new("Upgradeable", "True", "AsExpected", "", from_completed),
                name,
                version: from.clone(),
                phase: OpPhase::Waiting,
            })
            .collect();

        let mut pools = Vec::new();
        let mut mcs = Vec::new();
        let mut nodes = Vec::new();
        for p in 0..config.pools {
            let name = match p {
                0 => "master".to_string(),
                1 => "worker".to_string(),
                n => CUSTOM_POOLS
                    .get(n - 2)
                    .map_or_else(|| format!("pool-{n}"), |s| s.to_string()),
            };
            let old_config = rendered_config(&name, &from);
            let new_config = rendered_config(&name, &config.to_version);
            for base in [format!("00-{name}"), format!("01-{name}-kubelet")] {
                mcs.push(Mc::new(base, &name, None, installed_at));
            }
            mcs.push(Mc::new(
                old_config.clone(),
                &name,
                Some(&from),
                from_started,
            ));
            let size = if p == 0 {
                config.masters
            } else {
                config.nodes_per_pool
            };
            let first = nodes.len();
            for i in 0..size {
                let g = first + i;
                let node_name = format!(
                    "ip-10-0-{}-{}.us-east-2.compute.internal",
                    16 + g / 250,
                    g % 250 + 2
                );
                let mut labels = BTreeMap::from([
                    ("kubernetes.io/arch".to_string(), "amd64".to_string()),
                    ("kubernetes.io/hostname".to_string(), node_name.clone()),
                    ("kubernetes.io/os".to_string(), "linux".to_string()),
                    (
                        "topology.kubernetes.io/zone".to_string(),
                        format!("us-east-2{}", ['a', 'b', 'c'][g % 3]),
                    ),
                ]);
                if p == 0 {
                    labels.insert(format!("{ROLE_PREFIX}master"), String::new());
                    labels.insert(format!("{ROLE_PREFIX}control-plane"), String::new());
                } else {
                    labels.insert(format!("{ROLE_PREFIX}worker"), String::new());
                    if p >= 2 {
                        labels.insert(format!("{ROLE_PREFIX}{name}"), String::new());
                    }
                }
                nodes.push(SimNode {
                    name: node_name,
                    pool: p,
                    labels,
                    current_config: old_config.clone(),
                    desired_config: old_config.clone(),
                    state: "Done",
                    reason: String::new(),
                    desired_drain: format!("uncordon-{old_config}"),
                    last_applied_drain: format!("uncordon-{old_config}"),
                    unschedulable: false,
                    ready: Cond::new(
                        "Ready",
                        "True",
                        KUBELET_READY.0,
                        KUBELET_READY.1,
                        from_completed,
                    ),
                    heartbeat: start,
                    since: installed_at,
                    step: NodeStep::Pending,
                    left: 0,
                });
            }
            let mut pick_order: Vec<usize> = (first..first + size).collect();
            rng.shuffle(&mut pick_order);
            pools.push(Pool {
                role: name.clone(),
                is_master: p == 0,
                max_unavailable: if p == 0 {
                    1
                } else {
                    config.max_unavailable.max(1)
                },
                config: old_config.clone(),
                old_config,
                new_config,
                paused: false,
                pick_order,
                updating: false,
                name,
            });
        }

        let mut sim = Simulation {
            step_count: 0,
            now: start,
            stage: Stage::Idle,
            cv,
            operators,
            current_op: 0,
            pools,
            mcs,
            nodes,
            rng,
            faults: ActiveFaults::default(),
            dirty: BTreeSet::new(),
            config,
        };
        sim.faults = sim.resolve_faults()?;
        sim.dirty = sim.all_parts();
        Ok(sim)
    }

    fn resolve_faults(&self) -> Result<ActiveFaults, SimError> {
        let f = &self.config.faults;
        let mut out = ActiveFaults::default();
        let mco = self.operators.len() - 1;
        let operator = |spec: &FaultSpec, what: &str| -> Result<usize, SimError> {
            match &spec.target {
                None if mco == 0 => Err(SimError::Config(format!(
                    "{what}: no operator besides machine-config (use more operators)"
                ))),
                None => Ok(mco / 2),
                Some(name) => self
                    .operators
                    .iter()
                    .position(|o| &o.name == name)
                    .ok_or_else(|| SimError::Config(format!("{what}: no operator {name}"))),
            }
        };
        // The default target pool of node faults: the first worker pool with nodes, else master.
        let node_pool = self
            .pools
            .iter()
            .position(|p| !p.is_master && !p.pick_order.is_empty())
            .unwrap_or(0);
        let node = |spec: &FaultSpec, what: &str, last: bool| -> Result<usize, SimError> {
            match &spec.target {
                None => {
                    let order = &self.pools[node_pool].pick_order;
                    let pick = if last { order.last() } else { order.first() };
                    pick.copied()
                        .ok_or_else(|| SimError::Config(format!("{what}: the cluster has no node")))
                }
                Some(name) => self
                    .nodes
                    .iter()
                    .position(|n| &n.name == name)
                    .ok_or_else(|| SimError::Config(format!("{what}: no node {name}"))),
            }
        };
        if let Some(spec) = &f.degraded_operator {
            out.degraded_operator =
                Some(Fault::new(operator(spec, "degraded operator")?, spec.steps));
        }
        if let Some(spec) = &f.stalled_operator {
            out.stalled_operator = Some(operator(spec, "stalled operator")?);
        }
        if let Some(spec) = &f.blocked_drain {
            out.blocked_drain = Some(Fault::new(node(spec, "blocked drain", false)?, spec.steps));
        }
        if let Some(spec) = &f.not_ready_node {
            out.not_ready_node = Some(Fault::new(node(spec, "not-ready node", true)?, spec.steps));
        }
        if let Some(spec) = &f.paused_pool {
            let pool = match &spec.target {
                None => self.pools.len() - 1,
                Some(name) => self
                    .pools
                    .iter()
                    .position(|p| &p.name == name)
                    .ok_or_else(|| SimError::Config(format!("paused pool: no pool {name}")))?,
            };
            out.paused_pool = Some(Fault::new(pool, spec.steps));
        }
        Ok(out)
    }

    fn all_parts(&self) -> BTreeSet<(ObjectRef, Part)> {
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

    /// Which faults hold now.
    pub fn fault_status(&self) -> FaultStatus {
        let f = &self.faults;
        let op_name = |i: usize| self.operators.get(i).map(|o| o.name.clone());
        let node_name = |i: usize| self.nodes.get(i).map(|n| n.name.clone());
        let active = |fault: &Option<Fault>| fault.as_ref().and_then(Fault::active_target);
        FaultStatus {
            degraded_operator: active(&f.degraded_operator).and_then(op_name),
            blocked_drain: active(&f.blocked_drain).and_then(node_name),
            not_ready_node: active(&f.not_ready_node).and_then(node_name),
            paused_pool: active(&f.paused_pool)
                .and_then(|i| self.pools.get(i).map(|p| p.name.clone())),
            stalled_operator: f
                .stalled_operator
                .filter(|&i| {
                    self.operators
                        .get(i)
                        .is_some_and(|o| o.phase != OpPhase::Waiting)
                })
                .and_then(op_name),
        }
    }

    /// The target of the blocked-drain fault, if one is configured.
    pub fn blocked_drain_target(&self) -> Option<&str> {
        self.faults
            .blocked_drain
            .as_ref()
            .and_then(|f| self.nodes.get(f.target))
            .map(|n| n.name.as_str())
    }

    /// Names of the nodes, in creation order.
    pub fn node_names(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().map(|n| n.name.as_str())
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

    fn touch(&mut self, r: ObjectRef, part: Part) {
        self.dirty.insert((r, part));
    }

    fn at_step(&self, step: u64) -> i64 {
        let ms = self.config.step.as_millis();
        let offset = i128::from(step).saturating_mul(ms) / 1000;
        self.config
            .start
            .as_second()
            .saturating_add(i64::try_from(offset).unwrap_or(i64::MAX / 2))
    }

    /// Moves the update one step forward (see the module documentation). A completed
    /// simulation does not change any more.
    pub fn step(&mut self) -> StepReport {
        let before = self.dirty.len();
        if self.stage != Stage::Completed {
            self.step_count += 1;
            self.now = self.at_step(self.step_count);
            match self.stage {
                Stage::Idle => self.start_update(),
                _ => {
                    // Pools start rolling the step after their configuration switched.
                    let rolling = self.stage == Stage::Nodes;
                    self.tick_faults();
                    self.advance_operators();
                    if rolling {
                        self.advance_pools();
                        self.finish_machine_config();
                        self.finish_update();
                    }
                }
            }
        }
        StepReport {
            step: self.step_count,
            at: self.now(),
            stage: self.stage,
            changes: self.dirty.len().saturating_sub(before),
            summary: self.summary(),
        }
    }

    /// Steps until the update completes or `max_steps` steps were taken; returns the steps
    /// taken.
    pub fn run_to_completion(&mut self, max_steps: u64) -> u64 {
        let mut n = 0;
        while !self.is_completed() && n < max_steps {
            self.step();
            n += 1;
        }
        n
    }

    /// One line about where the update is.
    pub fn summary(&self) -> String {
        let (done, total) = self.operator_progress();
        let mut s = match self.stage {
            Stage::Idle => format!("idle at {}", self.config.from_version),
            Stage::Completed => format!("update to {} completed", self.config.to_version),
            _ => {
                let updating = self.updating_operators();
                let mut s = format!("operators {done}/{total}");
                if !updating.is_empty() {
                    s.push_str(&format!(" ({} updating)", updating.join(", ")));
                }
                s
            }
        };
        if self.stage == Stage::Nodes {
            let pools: Vec<String> = self
                .pool_progress()
                .into_iter()
                .map(|(name, done, total, _, paused)| {
                    format!(
                        "{name} {done}/{total}{}",
                        if paused { " paused" } else { "" }
                    )
                })
                .collect();
            s.push_str(&format!("; nodes: {}", pools.join(", ")));
        }
        let faults = self.fault_status();
        let mut active = Vec::new();
        if let Some(o) = faults.degraded_operator {
            active.push(format!("{o} degraded"));
        }
        if let Some(o) = faults.stalled_operator {
            active.push(format!("{o} stalled"));
        }
        if let Some(n) = faults.blocked_drain {
            active.push(format!("drain of {n} blocked by a PodDisruptionBudget"));
        }
        if let Some(n) = faults.not_ready_node {
            active.push(format!("{n} not ready"));
        }
        if let Some(p) = faults.paused_pool {
            active.push(format!("pool {p} paused"));
        }
        if !active.is_empty() {
            s.push_str(&format!("; faults: {}", active.join(", ")));
        }
        s
    }

    fn start_update(&mut self) {
        let to = self.config.to_version.clone();
        let now = self.now;
        self.cv.desired_update = true;
        self.cv.desire(&to);
        self.cv
            .history
            .insert(0, HistoryEntry::new("Partial", &to, now, None));
        let total = self.operators.len();
        self.cv.progressing.set(
            "True",
            "",
            &format!("Working towards {to}: 0 of {total} done (0% complete)"),
            now,
        );
        self.touch(ObjectRef::ClusterVersion, Part::Main);
        self.touch(ObjectRef::ClusterVersion, Part::Status);
        self.stage = Stage::ControlPlane;
    }

    fn cv_progress_message(&mut self) {
        let (done, total) = self.operator_progress();
        let mut msg = format!(
            "Working towards {}: {done} of {total} done ({}% complete)",
            self.config.to_version,
            done * 100 / total.max(1)
        );
        if let Some(op) = self.operators.get(self.current_op)
            && (op.name == MACHINE_CONFIG || self.faults.holds_operator(self.current_op))
            && matches!(op.phase, OpPhase::Updating { .. })
        {
            msg.push_str(&format!(", waiting on {}", op.name));
        }
        let now = self.now;
        if self.cv.progressing.set("True", "", &msg, now) {
            self.touch(ObjectRef::ClusterVersion, Part::Status);
        }
    }

    fn tick_faults(&mut self) {
        let now = self.now;
        // Degraded operator: recovers when its time is up.
        if let Some(target) = self.faults.degraded_operator.as_mut().and_then(Fault::tick) {
            if let Some(op) = self.operators.get_mut(target) {
                op.degraded.set("False", "AsExpected", "", now);
            }
            self.touch(ObjectRef::Operator(target), Part::Status);
        }
        // Blocked drain: the PodDisruptionBudget lets the eviction through.
        if let Some(target) = self.faults.blocked_drain.as_mut().and_then(Fault::tick) {
            if let Some(n) = self.nodes.get_mut(target) {
                n.state = "Working";
                n.reason = String::new();
                // One more step draining, now that evictions go through.
                n.left = 2;
            }
            self.touch(ObjectRef::Node(target), Part::Main);
        }
        // NotReady node: the kubelet comes back.
        if let Some(target) = self.faults.not_ready_node.as_mut().and_then(Fault::tick) {
            if let Some(n) = self.nodes.get_mut(target)
                && n.step != NodeStep::Rebooting
            {
                n.post_ready(now);
            }
            self.touch(ObjectRef::Node(target), Part::Status);
        }
        // Paused pool: the administrator unpauses it.
        if let Some(target) = self.faults.paused_pool.as_mut().and_then(Fault::tick) {
            if let Some(p) = self.pools.get_mut(target) {
                p.paused = false;
            }
            self.touch(ObjectRef::Pool(target), Part::Main);
        }
    }

    fn advance_operators(&mut self) {
        let now = self.now;
        let to = self.config.to_version.clone();
        let Some(i) = (self.current_op < self.operators.len()).then_some(self.current_op) else {
            return;
        };
        let is_mco = i == self.operators.len() - 1;
        match self.operators[i].phase.clone() {
            OpPhase::Waiting => {
                let left = self.rng.range(1, 2);
                let op = &mut self.operators[i];
                op.phase = OpPhase::Updating { left };
                let message = if is_mco {
                    format!("Working towards {to}")
                } else {
                    format!("Upgrading {} to \"{to}\".", op.name)
                };
                let reason = if is_mco { "" } else { "Upgrading" };
                op.progressing.set("True", reason, &message, now);
                if let Some(f) = self.faults.degraded_operator.as_mut()
                    && f.target == i
                    && f.trigger()
                {
                    let name = op.name.clone();
                    op.degraded.set(
                        "True",
                        "RolloutFailing",
                        &format!(
                            "Deployment openshift-{name}/{name} has 1 unavailable replica: pod {name}-7d9f8b6c5-x2x9k is in CrashLoopBackOff"
                        ),
                        now,
                    );
                }
                self.touch(ObjectRef::Operator(i), Part::Status);
                if is_mco {
                    self.start_rollout();
                }
                self.cv_progress_message();
            }
            OpPhase::Updating { left } => {
                if is_mco || self.faults.holds_operator(i) {
                    // machine-config finishes with the master pool (finish_machine_config).
                    self.cv_progress_message();
                    return;
                }
                if left > 1 {
                    self.operators[i].phase = OpPhase::Updating { left: left - 1 };
                    return;
                }
                self.operators[i].finish(&to, ALL_IS_WELL, now);
                self.touch(ObjectRef::Operator(i), Part::Status);
                self.current_op += 1;
                // The cluster-version operator moves on at once.
                self.advance_operators();
                self.cv_progress_message();
            }
            OpPhase::Done => {}
        }
    }

    /// `machine-config` starts: new rendered configs, every pool targets its new one.
    fn start_rollout(&mut self) {
        let now = self.now;
        let to = self.config.to_version.clone();
        for p in 0..self.pools.len() {
            let (name, new_config) = {
                let pool = &mut self.pools[p];
                pool.config = pool.new_config.clone();
                pool.updating = true;
                (pool.name.clone(), pool.new_config.clone())
            };
            self.mcs.push(Mc::new(new_config, &name, Some(&to), now));
            self.touch(ObjectRef::MachineConfig(self.mcs.len() - 1), Part::Main);
            self.touch(ObjectRef::Pool(p), Part::Main);
            self.touch(ObjectRef::Pool(p), Part::Status);
        }
        if let Some(f) = self.faults.paused_pool.as_mut()
            && f.trigger()
        {
            let target = f.target;
            if let Some(p) = self.pools.get_mut(target) {
                p.paused = true;
            }
        }
        if let Some(f) = self.faults.not_ready_node.as_mut()
            && f.trigger()
        {
            let target = f.target;
            if let Some(n) = self.nodes.get_mut(target) {
                n.post_not_ready(now);
            }
            self.touch(ObjectRef::Node(target), Part::Status);
        }
        self.stage = Stage::Nodes;
    }

    fn node_ready(&self, i: usize) -> bool {
        self.nodes.get(i).is_some_and(|n| n.ready.status == "True")
    }

    fn advance_pools(&mut self) {
        for p in 0..self.pools.len() {
            if !self.pools[p].updating {
                continue;
            }
            let order = self.pools[p].pick_order.clone();
            // Nodes already on their way move on (also in a paused pool: the daemon finishes
            // what it started).
            for &i in &order {
                if self.nodes[i].step.in_flight() {
                    self.advance_node_in_rollout(i);
                }
            }
            if self.pools[p].paused {
                continue;
            }
            // Pick nodes while the pool's maxUnavailable allows.
            let unavailable = order
                .iter()
                .filter(|&&i| self.nodes[i].step.in_flight() || !self.node_ready(i))
                .count();
            let mut room = (self.pools[p].max_unavailable as usize).saturating_sub(unavailable);
            for &i in &order {
                if room == 0 {
                    break;
                }
                if self.nodes[i].step == NodeStep::Pending && self.node_ready(i) {
                    self.enter(i, NodeStep::Draining);
                    room -= 1;
                }
            }
            self.update_pool_status(p);
        }
    }

    fn advance_node_in_rollout(&mut self, i: usize) {
        if holds(&self.faults.blocked_drain, i) {
            return;
        }
        let n = &mut self.nodes[i];
        if n.left > 1 {
            n.left -= 1;
            return;
        }
        let next = n.step.next();
        self.enter(i, next);
    }

    /// Moves node `i` to `step`, writing what the machine-config daemon and controller write.
    fn enter(&mut self, i: usize, step: NodeStep) {
        let now = self.now;
        let pool = self.nodes[i].pool;
        let new = self.pools[pool].new_config.clone();
        let left = match step {
            NodeStep::Draining | NodeStep::Rebooting => self.rng.range(1, 2),
            _ => 1,
        };
        let blocked = step == NodeStep::Draining
            && self
                .faults
                .blocked_drain
                .as_mut()
                .is_some_and(|f| f.target == i && f.trigger());
        let not_ready_fault = holds(&self.faults.not_ready_node, i);
        let n = &mut self.nodes[i];
        n.step = step;
        n.left = left;
        let mut status = false;
        match step {
            NodeStep::Pending => {}
            NodeStep::Draining => {
                n.desired_config = new.clone();
                n.state = "Working";
                n.desired_drain = format!("drain-{new}");
                n.unschedulable = true;
                if blocked {
                    n.state = "Degraded";
                    n.reason = format!(
                        "failed to drain node: {} after 1 hour. Please see machine-config-controller logs for more information: error when evicting pods/\"checkout-7f9c6d5b4-qx2lp\" -n \"shop\": Cannot evict pod as it would violate the pod's disruption budget (PodDisruptionBudget shop/checkout-pdb: 0 disruptions allowed)",
                        n.name
                    );
                }
            }
            NodeStep::Updating => {
                n.last_applied_drain = format!("drain-{new}");
            }
            NodeStep::Rebooting => {
                n.state = "Rebooting";
                status = n.ready.set(
                    "Unknown",
                    "NodeStatusUnknown",
                    "Kubelet stopped posting node status.",
                    now,
                );
            }
            NodeStep::Done => {
                n.current_config = new.clone();
                n.state = "Done";
                n.desired_drain = format!("uncordon-{new}");
                if !not_ready_fault {
                    status = n.post_ready(now);
                }
            }
            NodeStep::Updated => {
                n.last_applied_drain = format!("uncordon-{new}");
                n.unschedulable = false;
            }
        }
        self.touch(ObjectRef::Node(i), Part::Main);
        if status {
            self.touch(ObjectRef::Node(i), Part::Status);
        }
    }

    fn update_pool_status(&mut self, p: usize) {
        let done = self.pools[p]
            .pick_order
            .iter()
            .all(|&i| self.nodes[i].step == NodeStep::Updated);
        if done && self.pools[p].updating {
            self.pools[p].updating = false;
            self.touch(ObjectRef::Pool(p), Part::Status);
        }
    }

    fn pool_done(&self, p: usize) -> bool {
        self.pools.get(p).is_some_and(|pool| {
            pool.config == pool.new_config
                && pool
                    .pick_order
                    .iter()
                    .all(|&i| self.nodes[i].step == NodeStep::Updated)
        })
    }

    /// `machine-config` reports the new version once the master pool is updated.
    fn finish_machine_config(&mut self) {
        let i = self.operators.len() - 1;
        if self.current_op != i
            || !matches!(self.operators[i].phase, OpPhase::Updating { .. })
            || self.faults.holds_operator(i)
            || !self.pool_done(0)
        {
            return;
        }
        let now = self.now;
        let to = self.config.to_version.clone();
        let message = format!("Cluster version is {to}");
        self.operators[i].finish(&to, ("", &message), now);
        self.touch(ObjectRef::Operator(i), Part::Status);
        self.current_op += 1;
        self.cv_progress_message();
    }

    /// The ClusterVersion completes once every operator and every unpaused pool is done; the
    /// simulation once every pool is.
    fn finish_update(&mut self) {
        let ops_done = self.operators.iter().all(|o| o.phase == OpPhase::Done);
        if !ops_done {
            return;
        }
        let done_or_paused =
            (0..self.pools.len()).all(|p| self.pool_done(p) || self.pools[p].paused);
        let all_done = (0..self.pools.len()).all(|p| self.pool_done(p));
        let now = self.now;
        let to = self.config.to_version.clone();
        if self.cv.progressing.status == "True" && done_or_paused {
            if let Some(h) = self.cv.history.first_mut() {
                h.state = "Completed";
                h.completed = Some(now);
            }
            self.cv.settle(&to, now);
            self.touch(ObjectRef::ClusterVersion, Part::Status);
        }
        if self.cv.progressing.status == "False" && all_done {
            self.stage = Stage::Completed;
        }
    }

    /// Moves node `index` one step forward now, ignoring its pool's `maxUnavailable` and the
    /// rollout order (for benchmarks: one semantic change of one node). Returns the new step,
    /// `None` when the node is unknown or already updated. The pools must have started
    /// rolling ([`Stage::Nodes`]), so that the node's new configuration exists.
    pub fn advance_node(&mut self, index: usize) -> Option<NodeStep> {
        let n = self.nodes.get(index)?;
        if n.step == NodeStep::Updated || self.stage != Stage::Nodes {
            return None;
        }
        let next = n.step.next();
        self.enter(index, next);
        if let Some(n) = self.nodes.get_mut(index) {
            n.left = 1;
        }
        Some(next)
    }

    /// The kubelet of node `index` posts its status at `at` (heartbeat): only
    /// `lastHeartbeatTime` changes, which means nothing for the update.
    pub fn heartbeat(&mut self, index: usize, at: Timestamp) {
        if let Some(n) = self.nodes.get_mut(index) {
            n.heartbeat = at.as_second();
            self.dirty.insert((ObjectRef::Node(index), Part::Status));
        }
    }

    // --------------------------------------------------------------------------------------
    // Rendering
    // --------------------------------------------------------------------------------------

    /// Name of an object.
    pub fn name_of(&self, r: ObjectRef) -> Option<&str> {
        match r {
            ObjectRef::MachineConfig(i) => self.mcs.get(i).map(|m| m.name.as_str()),
            ObjectRef::Pool(i) => self.pools.get(i).map(|p| p.name.as_str()),
            ObjectRef::ClusterVersion => Some("version"),
            ObjectRef::Operator(i) => self.operators.get(i).map(|o| o.name.as_str()),
            ObjectRef::Node(i) => self.nodes.get(i).map(|n| n.name.as_str()),
        }
    }

    /// The whole object (metadata, spec and status) as the API would hold it.
    pub fn object(&self, r: ObjectRef) -> Option<Value> {
        let mut main = self.render(r, Part::Main)?;
        if r.has_status()
            && let (Some(status), Value::Object(m)) = (self.render(r, Part::Status), &mut main)
            && let Some(s) = status.get("status")
        {
            m.insert("status".into(), s.clone());
        }
        Some(main)
    }

    /// The body to apply for one part: metadata and spec (`Main`), or just the status.
    pub fn render(&self, r: ObjectRef, part: Part) -> Option<Value> {
        let (api_version, kind) = match r {
            ObjectRef::MachineConfig(_) => {
                ("machineconfiguration.openshift.io/v1", "MachineConfig")
            }
            ObjectRef::Pool(_) => ("machineconfiguration.openshift.io/v1", "MachineConfigPool"),
            ObjectRef::ClusterVersion => ("config.openshift.io/v1", "ClusterVersion"),
            ObjectRef::Operator(_) => ("config.openshift.io/v1", "ClusterOperator"),
            ObjectRef::Node(_) => ("v1", "Node"),
        };
        let name = self.name_of(r)?;
        let body = match (r, part) {
            (ObjectRef::MachineConfig(i), Part::Main) => self.mc_main(i)?,
            (ObjectRef::Pool(i), Part::Main) => self.pool_main(i)?,
            (ObjectRef::Pool(i), Part::Status) => json!({"status": self.pool_status(i)?}),
            (ObjectRef::ClusterVersion, Part::Main) => self.cv_main(),
            (ObjectRef::ClusterVersion, Part::Status) => json!({"status": self.cv_status()}),
            (ObjectRef::Operator(i), Part::Main) => self.operator_main(i)?,
            (ObjectRef::Operator(i), Part::Status) => json!({"status": self.operator_status(i)?}),
            (ObjectRef::Node(i), Part::Main) => self.node_main(i)?,
            (ObjectRef::Node(i), Part::Status) => json!({"status": self.node_status(i)?}),
            (ObjectRef::MachineConfig(_), Part::Status) => return None,
        };
        let mut out = json!({"apiVersion": api_version, "kind": kind});
        if let (Value::Object(o), Value::Object(b)) = (&mut out, body) {
            o.extend(b);
            let meta = o.entry("metadata").or_insert_with(|| json!({}));
            if let Value::Object(m) = meta {
                m.insert("name".into(), json!(name));
            }
        }
        Some(out)
    }

    fn mc_main(&self, i: usize) -> Option<Value> {
        let mc = self.mcs.get(i)?;
        let mut annotations = serde_json::Map::new();
        annotations.insert(
            "machineconfiguration.openshift.io/generated-by-controller-version".into(),
            json!("a3bd8b7d6e4cbbd0c3f0ae66e0b7e3c2b94e0f12"),
        );
        if let Some(v) = &mc.version {
            annotations.insert(MC_RELEASE_IMAGE_VERSION.into(), json!(v));
        }
        Some(json!({
            "metadata": {
                "annotations": annotations,
                "labels": {"machineconfiguration.openshift.io/role": mc.role},
            },
            "spec": {
                "config": {"ignition": {"version": "3.4.0"}},
                "osImageURL": format!("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:{}", hex32(&format!("os/{}/{}", mc.name, mc.created))),
            },
        }))
    }

    fn pool_main(&self, i: usize) -> Option<Value> {
        let p = self.pools.get(i)?;
        Some(json!({
            "metadata": {
                "labels": {format!("pools.operator.machineconfiguration.openshift.io/{}", p.name): ""},
            },
            "spec": {
                "configuration": {
                    "name": p.config,
                    "source": [
                        {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig", "name": format!("00-{}", p.name)},
                        {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig", "name": format!("01-{}-kubelet", p.name)},
                    ],
                },
                "machineConfigSelector": {"matchLabels": {"machineconfiguration.openshift.io/role": p.role}},
                "nodeSelector": {"matchLabels": {format!("{ROLE_PREFIX}{}", p.role): ""}},
                "maxUnavailable": p.max_unavailable,
                "paused": p.paused,
            },
        }))
    }

    fn pool_status(&self, i: usize) -> Option<Value> {
        let p = self.pools.get(i)?;
        let nodes: Vec<&SimNode> = p
            .pick_order
            .iter()
            .filter_map(|&n| self.nodes.get(n))
            .collect();
        let total = nodes.len();
        let (updated, current) = if p.updating {
            (0, p.old_config.as_str())
        } else {
            (total, p.config.as_str())
        };
        let updating = if p.updating { "True" } else { "False" };
        let updated_c = if p.updating { "False" } else { "True" };
        let message = if p.updating {
            format!("All nodes are updating to {}", p.config)
        } else {
            format!("All nodes are updated with {}", p.config)
        };
        Some(json!({
            "configuration": {"name": current},
            "machineCount": total,
            "updatedMachineCount": updated,
            "readyMachineCount": updated,
            "unavailableMachineCount": 0,
            "degradedMachineCount": 0,
            "observedGeneration": 2,
            "conditions": [
                {"type": "Updated", "status": updated_c, "reason": "", "message": if p.updating { String::new() } else { message.clone() }},
                {"type": "Updating", "status": updating, "reason": "", "message": if p.updating { message } else { String::new() }},
                {"type": "Degraded", "status": "False", "reason": "", "message": ""},
            ],
        }))
    }

    fn cv_main(&self) -> Value {
        let to = &self.config.to_version;
        let channel = to.splitn(3, '.').take(2).collect::<Vec<_>>().join(".");
        let mut spec = json!({
            "clusterID": self.cv.cluster_id,
            "channel": format!("stable-{channel}"),
        });
        if self.cv.desired_update
            && let Value::Object(s) = &mut spec
        {
            s.insert(
                "desiredUpdate".into(),
                json!({"version": self.cv.desired_version, "image": self.cv.desired_image, "force": false}),
            );
        }
        json!({"spec": spec})
    }

    fn cv_status(&self) -> Value {
        let history: Vec<Value> = self
            .cv
            .history
            .iter()
            .map(|h| {
                json!({
                    "state": h.state,
                    "startedTime": ts(h.started),
                    "completionTime": h.completed.map(ts),
                    "version": h.version,
                    "image": h.image,
                    "verified": true,
                })
            })
            .collect();
        json!({
            "desired": {"version": self.cv.desired_version, "image": self.cv.desired_image},
            "history": history,
            "observedGeneration": if self.cv.desired_update { 2 } else { 1 },
            "versionHash": hex32(&self.cv.desired_version)[..11].to_string(),
            "conditions": [
                self.cv.retrieved.json(),
                self.cv.available.json(),
                self.cv.failing.json(),
                self.cv.progressing.json(),
            ],
        })
    }

    fn operator_main(&self, i: usize) -> Option<Value> {
        let _ = self.operators.get(i)?;
        Some(json!({
            "metadata": {"annotations": {
                "include.release.openshift.io/self-managed-high-availability": "true",
                "include.release.openshift.io/single-node-developer": "true",
            }},
            "spec": {},
        }))
    }

    fn operator_status(&self, i: usize) -> Option<Value> {
        let o = self.operators.get(i)?;
        Some(json!({
            "conditions": [o.available.json(), o.degraded.json(), o.progressing.json(), o.upgradeable.json()],
            "versions": [{"name": "operator", "version": o.version}],
            "relatedObjects": [{"group": "", "resource": "namespaces", "name": format!("openshift-{}", o.name)}],
        }))
    }

    fn node_main(&self, i: usize) -> Option<Value> {
        let n = self.nodes.get(i)?;
        let annotations = json!({
            NODE_CURRENT_CONFIG: n.current_config,
            NODE_DESIRED_CONFIG: n.desired_config,
            NODE_STATE: n.state,
            NODE_REASON: n.reason,
            NODE_DESIRED_DRAIN: n.desired_drain,
            NODE_LAST_APPLIED_DRAIN: n.last_applied_drain,
            "machineconfiguration.openshift.io/controlPlaneTopology": "HighlyAvailable",
            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        });
        Some(json!({
            "metadata": {"labels": n.labels, "annotations": annotations},
            "spec": {
                "providerID": format!("aws:///us-east-2a/i-{:017x}", fnv(3, &n.name) >> 4),
                "unschedulable": n.unschedulable,
            },
        }))
    }

    fn node_status(&self, i: usize) -> Option<Value> {
        let n = self.nodes.get(i)?;
        let hb = ts(n.heartbeat);
        let quiet = |type_: &str, reason: &str, message: &str| {
            json!({
                "type": type_, "status": "False", "reason": reason, "message": message,
                "lastHeartbeatTime": hb, "lastTransitionTime": ts(n.since),
            })
        };
        let mut ready = n.ready.json();
        if let Value::Object(r) = &mut ready {
            r.insert("lastHeartbeatTime".into(), json!(hb));
        }
        Some(json!({
            "conditions": [
                quiet("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                quiet("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                quiet("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                ready,
            ],
            "capacity": {"cpu": "8", "memory": "32386008Ki", "pods": "250", "ephemeral-storage": "125238252Ki"},
            "allocatable": {"cpu": "7500m", "memory": "31235032Ki", "pods": "250", "ephemeral-storage": "114345831439"},
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "cri-o://1.31.6",
                "kubeletVersion": "v1.31.6",
                "operatingSystem": "linux",
                "osImage": "Red Hat Enterprise Linux CoreOS",
            },
        }))
    }

    /// Every object in application order (MachineConfigs, pools, the ClusterVersion,
    /// operators, nodes).
    pub fn object_refs(&self) -> Vec<ObjectRef> {
        let mut v: Vec<ObjectRef> = (0..self.mcs.len()).map(ObjectRef::MachineConfig).collect();
        v.extend((0..self.pools.len()).map(ObjectRef::Pool));
        v.push(ObjectRef::ClusterVersion);
        v.extend((0..self.operators.len()).map(ObjectRef::Operator));
        v.extend((0..self.nodes.len()).map(ObjectRef::Node));
        v
    }

    /// The inputs as the controller reads them.
    pub fn inputs(&self) -> Result<SimInputs, SimError> {
        fn read<T: DeserializeOwned>(sim: &Simulation, r: ObjectRef) -> Result<T, SimError> {
            let v = sim.object(r).unwrap_or(Value::Null);
            serde_json::from_value(v).map_err(|source| SimError::Json {
                what: format!("{r:?}"),
                source,
            })
        }
        let mut inputs = SimInputs {
            cluster_version: read(self, ObjectRef::ClusterVersion)?,
            ..Default::default()
        };
        for r in self.object_refs() {
            match r {
                ObjectRef::MachineConfig(_) => inputs.machine_configs.push(read(self, r)?),
                ObjectRef::Pool(_) => inputs.pools.push(read(self, r)?),
                ObjectRef::Operator(_) => inputs.cluster_operators.push(read(self, r)?),
                ObjectRef::Node(_) => inputs.nodes.push(read(self, r)?),
                ObjectRef::ClusterVersion => {}
            }
        }
        inputs
            .cluster_operators
            .sort_by(|a, b| a.name().cmp(b.name()));
        Ok(inputs)
    }

    /// One node as the controller reads it.
    pub fn node_input(&self, index: usize) -> Result<Node, SimError> {
        let v = self.object(ObjectRef::Node(index)).unwrap_or(Value::Null);
        serde_json::from_value(v).map_err(|source| SimError::Json {
            what: format!("node #{index}"),
            source,
        })
    }

    /// Writes the cluster as a snapshot folder (the `testdata/oc-status` layout, JSON
    /// lists) that `kubectl update-status --from-dir` reads, with a `now` file holding the
    /// current simulated instant.
    pub fn write_snapshot(&self, dir: &Path) -> Result<(), SimError> {
        let io = |path: PathBuf| move |source| SimError::Io { path, source };
        std::fs::create_dir_all(dir).map_err(io(dir.to_path_buf()))?;
        let mut groups: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
        for r in self.object_refs() {
            let file = match r {
                ObjectRef::MachineConfig(_) => "machineconfigs.yaml",
                ObjectRef::Pool(_) => "machineconfigpools.yaml",
                ObjectRef::ClusterVersion => "clusterversion.yaml",
                ObjectRef::Operator(_) => "clusteroperators.yaml",
                ObjectRef::Node(_) => "nodes.yaml",
            };
            if let Some(v) = self.object(r) {
                groups.entry(file).or_default().push(v);
            }
        }
        for (file, items) in groups {
            let path = dir.join(file);
            let body = json!({"apiVersion": "v1", "kind": "List", "items": items});
            let text = serde_json::to_string(&body).map_err(|source| SimError::Json {
                what: file.to_string(),
                source,
            })?;
            std::fs::write(&path, text).map_err(io(path.clone()))?;
        }
        let path = dir.join("now");
        std::fs::write(&path, format!("{}\n", self.now())).map_err(io(path.clone()))?;
        Ok(())
    }
}

// ------------------------------------------------------------------------------------------------
// Applying to an API server
// ------------------------------------------------------------------------------------------------

/// Default number of concurrent requests.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// A [`Simulation`] bound to an API server: writes what each step changes.
pub struct Simulator {
    sim: Simulation,
    client: Client,
    concurrency: usize,
    writes: u64,
}

async fn apply<K: ClusterObject>(
    client: &Client,
    name: &str,
    part: Part,
    body: &Value,
) -> Result<(), SimError> {
    let api: Api<K> = Api::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let result = match part {
        Part::Main => api.patch(name, &params, &Patch::Apply(body)).await,
        Part::Status => api.patch_status(name, &params, &Patch::Apply(body)).await,
    };
    result.map(drop).map_err(|source| SimError::Api {
        action: format!(
            "applying {} {name}{}",
            K::kind(&()),
            if part == Part::Status { " status" } else { "" }
        ),
        source: Box::new(source),
    })
}

impl Simulator {
    /// Binds a simulation to a client.
    pub fn new(client: Client, sim: Simulation) -> Self {
        Simulator {
            sim,
            client,
            concurrency: DEFAULT_CONCURRENCY,
            writes: 0,
        }
    }

    /// Sets how many requests run at once.
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// The simulation.
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// The simulation, to change it (then [`Simulator::flush`]).
    pub fn simulation_mut(&mut self) -> &mut Simulation {
        &mut self.sim
    }

    /// Writes made so far.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Writes every object (creating the cluster).
    pub async fn install(&mut self) -> Result<usize, SimError> {
        self.sim.mark_all_dirty();
        self.flush().await
    }

    /// One step: [`Simulation::step`], then the changed objects are written.
    pub async fn step(&mut self) -> Result<StepReport, SimError> {
        let report = self.sim.step();
        self.flush().await?;
        Ok(report)
    }

    /// Writes the changed object parts: kind by kind (MachineConfigs, pools, ClusterVersion,
    /// operators, nodes), the objects of a kind concurrently, each object's status after its
    /// metadata and spec. Returns the number of writes.
    pub async fn flush(&mut self) -> Result<usize, SimError> {
        let dirty = self.sim.take_dirty();
        let mut by_rank: BTreeMap<u8, BTreeMap<ObjectRef, Vec<Part>>> = BTreeMap::new();
        for (r, part) in dirty {
            by_rank
                .entry(r.rank())
                .or_default()
                .entry(r)
                .or_default()
                .push(part);
        }
        let mut total = 0;
        for (_, objects) in by_rank {
            let mut jobs = Vec::with_capacity(objects.len());
            for (r, parts) in objects {
                let name = self.sim.name_of(r).unwrap_or_default().to_string();
                let bodies: Vec<(Part, Value)> = parts
                    .into_iter()
                    .filter_map(|p| self.sim.render(r, p).map(|b| (p, b)))
                    .collect();
                jobs.push((r, name, bodies));
            }
            let client = self.client.clone();
            let counts: Vec<usize> = futures::stream::iter(jobs)
                .map(|(r, name, bodies)| {
                    let client = client.clone();
                    async move {
                        for (part, body) in &bodies {
                            match r {
                                ObjectRef::MachineConfig(_) => {
                                    apply::<MachineConfig>(&client, &name, *part, body).await?
                                }
                                ObjectRef::Pool(_) => {
                                    apply::<MachineConfigPool>(&client, &name, *part, body).await?
                                }
                                ObjectRef::ClusterVersion => {
                                    apply::<ClusterVersion>(&client, &name, *part, body).await?
                                }
                                ObjectRef::Operator(_) => {
                                    apply::<ClusterOperator>(&client, &name, *part, body).await?
                                }
                                ObjectRef::Node(_) => {
                                    apply::<Node>(&client, &name, *part, body).await?
                                }
                            }
                        }
                        Ok::<usize, SimError>(bodies.len())
                    }
                })
                .buffer_unordered(self.concurrency)
                .try_collect()
                .await?;
            total += counts.iter().sum::<usize>();
        }
        self.writes += total as u64;
        Ok(total)
    }
}

/// Deletes every ClusterVersion, ClusterOperator, MachineConfigPool, MachineConfig and Node
/// (one collection delete per kind), and waits until they are gone.
pub async fn clear(client: &Client) -> Result<(), SimError> {
    async fn clear_kind<K: ClusterObject>(client: &Client) -> Result<(), SimError> {
        let api: Api<K> = Api::all(client.clone());
        let err = |source| SimError::Api {
            action: format!("deleting every {}", K::kind(&())),
            source: Box::new(source),
        };
        api.delete_collection(&DeleteParams::background(), &ListParams::default())
            .await
            .map_err(err)?;
        for _ in 0..600 {
            let left = api
                .list_metadata(&ListParams::default().limit(1))
                .await
                .map_err(err)?;
            if left.items.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        Ok(())
    }
    clear_kind::<Node>(client).await?;
    clear_kind::<ClusterOperator>(client).await?;
    clear_kind::<ClusterVersion>(client).await?;
    clear_kind::<MachineConfigPool>(client).await?;
    clear_kind::<MachineConfig>(client).await?;
    Ok(())
}

/// Parses a duration: `500ms`, `2s`, `1.5s`, `3m`, `1h`, or a number of seconds.
pub fn parse_duration(s: &str) -> Result<SignedDuration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (e.g. 500ms, 2s, 1m)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (ms, s, m, h)")),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("{s:?} is not a positive duration"));
    }
    SignedDuration::try_from_secs_f64(secs).map_err(|e| format!("{s:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{Assessment, NodePhase};
    use update_status_controllers::assess::{assess_cluster, nodes as node_assess};

    fn small() -> SimConfig {
        SimConfig {
            operators: 5,
            pools: 2,
            masters: 3,
            nodes_per_pool: 6,
            max_unavailable: 2,
            ..Default::default()
        }
    }

    /// The [`small`] cluster with `faults`.
    fn small_with(faults: Faults) -> Simulation {
        Simulation::new(SimConfig { faults, ..small() }).expect("sim")
    }

    fn annotation<'a>(n: &'a Node, key: &str) -> &'a str {
        n.annotation(key).unwrap_or_default()
    }

    #[test]
    fn fault_specs_parse() {
        assert_eq!(
            "auto".parse::<FaultSpec>().ok(),
            Some(FaultSpec::auto(DEFAULT_FAULT_STEPS))
        );
        assert_eq!("auto:3".parse::<FaultSpec>().ok(), Some(FaultSpec::auto(3)));
        assert_eq!(":4".parse::<FaultSpec>().ok(), Some(FaultSpec::auto(4)));
        assert_eq!(
            "console:9".parse::<FaultSpec>().ok(),
            Some(FaultSpec::on("console", 9))
        );
        assert_eq!(
            "console".parse::<FaultSpec>().ok(),
            Some(FaultSpec::on("console", DEFAULT_FAULT_STEPS))
        );
        assert!("console:x".parse::<FaultSpec>().is_err());
        assert!("a b:1".parse::<FaultSpec>().is_err());
    }

    #[test]
    fn durations_parse() {
        assert_eq!(
            parse_duration("500ms"),
            Ok(SignedDuration::from_millis(500))
        );
        assert_eq!(parse_duration("2s"), Ok(SignedDuration::from_secs(2)));
        assert_eq!(parse_duration("1.5"), Ok(SignedDuration::from_millis(1500)));
        assert_eq!(parse_duration("3m"), Ok(SignedDuration::from_secs(180)));
        assert_eq!(parse_duration("1h"), Ok(SignedDuration::from_secs(3600)));
        assert!(parse_duration("3 weeks").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn bad_configurations_are_refused() {
        for c in [
            SimConfig {
                operators: 0,
                ..small()
            },
            SimConfig {
                pools: 0,
                ..small()
            },
            SimConfig {
                to_version: "4.17.12".into(),
                ..small()
            },
            SimConfig {
                step: SignedDuration::ZERO,
                ..small()
            },
            SimConfig {
                operators: 1,
                faults: Faults {
                    degraded_operator: Some(FaultSpec::auto(2)),
                    ..Default::default()
                },
                ..small()
            },
            SimConfig {
                faults: Faults {
                    blocked_drain: Some(FaultSpec::on("nope", 2)),
                    ..Default::default()
                },
                ..small()
            },
        ] {
            assert!(Simulation::new(c.clone()).is_err(), "{c:?}");
        }
    }

    #[test]
    fn a_new_cluster_is_not_updating_and_everything_is_to_be_written() {
        let sim = Simulation::new(small()).expect("sim");
        assert_eq!(sim.stage(), Stage::Idle);
        // 3 MCs per pool, 2 pools, the CV, 5 operators, 9 nodes; all but MCs have a status.
        let objects = 6 + 2 + 1 + 5 + 9;
        assert_eq!(sim.dirty().len(), objects * 2 - 6);
        let inputs = sim.inputs().expect("inputs");
        assert_eq!(inputs.nodes.len(), 9);
        assert_eq!(inputs.cluster_operators.len(), 5);
        assert!(
            inputs
                .cluster_operators
                .iter()
                .all(|c| c.is_platform_operator())
        );
        let out = assess_cluster(&inputs.as_cluster_inputs(), sim.now());
        let cp = out.control_plane.expect("cp");
        assert_eq!(cp.assessment, Assessment::Completed);
        assert_eq!(cp.versions.target, "4.17.12");
        assert_eq!(out.worker_pools.len(), 1);
        assert_eq!(out.worker_pools[0].1.assessment, Assessment::Completed);
        assert!(
            out.insights.iter().all(|i| i.health.is_none()),
            "no health insight"
        );
    }

    /// Steps to completion, checking invariants at every step; returns the reports.
    fn run_checked(sim: &mut Simulation, max: u64) -> Vec<StepReport> {
        sim.take_dirty();
        let mut reports = Vec::new();
        let mut last_at = sim.now();
        while !sim.is_completed() && reports.len() < max as usize {
            let r = sim.step();
            assert!(r.at > last_at, "time moves forward");
            last_at = r.at;
            let dirty = sim.take_dirty();
            assert_eq!(dirty.len(), r.changes);
            // At most one operator updates at a time.
            assert!(
                sim.updating_operators().len() <= 1,
                "{:?}",
                sim.updating_operators()
            );
            // maxUnavailable holds in every pool.
            for (p, pool) in sim.pools.iter().enumerate() {
                let unavailable = pool
                    .pick_order
                    .iter()
                    .filter(|&&i| {
                        sim.nodes[i].step.in_flight() || sim.nodes[i].ready.status != "True"
                    })
                    .count();
                assert!(
                    unavailable as u32
                        <= pool.max_unavailable.max(1)
                            + u32::from(sim.faults.not_ready_node.is_some()),
                    "pool {p} over maxUnavailable at step {}",
                    r.step
                );
                // A node targets the new config only once its pool does.
                for &i in &pool.pick_order {
                    if sim.nodes[i].desired_config == pool.new_config {
                        assert_eq!(pool.config, pool.new_config);
                    }
                }
            }
            reports.push(r);
        }
        reports
    }

    #[test]
    fn an_update_runs_to_completion_operators_one_by_one_machine_config_last() {
        let mut sim = Simulation::new(small()).expect("sim");
        let reports = run_checked(&mut sim, 500);
        assert!(sim.is_completed(), "{:?}", reports.last());
        let stages: Vec<Stage> = reports.iter().map(|r| r.stage).collect();
        assert_eq!(stages.first(), Some(&Stage::ControlPlane));
        assert_eq!(stages.last(), Some(&Stage::Completed));
        let first_nodes = stages
            .iter()
            .position(|s| *s == Stage::Nodes)
            .expect("nodes stage");
        assert!(
            stages[..first_nodes]
                .iter()
                .all(|s| *s == Stage::ControlPlane)
        );
        let inputs = sim.inputs().expect("inputs");
        let cv = &inputs.cluster_version;
        assert_eq!(cv.status.history.len(), 3);
        assert_eq!(cv.status.history[0].state, "Completed");
        assert!(cv.status.history[0].completion_time.is_some());
        assert_eq!(cv.status.desired.version, "4.18.3");
        let progressing = cv
            .status
            .conditions
            .iter()
            .find(|c| c.type_ == "Progressing")
            .expect("progressing");
        assert_eq!(progressing.status, "False");
        assert!(
            inputs
                .cluster_operators
                .iter()
                .all(|c| c.version("operator") == Some("4.18.3"))
        );
        for n in &inputs.nodes {
            assert_eq!(
                annotation(n, NODE_CURRENT_CONFIG),
                annotation(n, NODE_DESIRED_CONFIG)
            );
            assert_eq!(annotation(n, NODE_STATE), "Done");
            assert!(annotation(n, NODE_LAST_APPLIED_DRAIN).starts_with("uncordon-"));
            assert!(!n.spec.unschedulable);
        }
        let out = assess_cluster(&inputs.as_cluster_inputs(), sim.now());
        let cp = out.control_plane.expect("cp");
        assert_eq!(cp.assessment, Assessment::Completed);
        assert_eq!(cp.completion_percent, 100);
        assert_eq!(out.worker_pools[0].1.assessment, Assessment::Completed);
        assert!(out.insights.iter().all(|i| i.health.is_none()));
        // Completed is a fixed point.
        let r = sim.step();
        assert_eq!(r.changes, 0);
        assert_eq!(r.stage, Stage::Completed);
    }

    #[test]
    fn the_same_seed_gives_the_same_run_and_another_seed_another() {
        let run = |seed| {
            let mut sim = Simulation::new(SimConfig { seed, ..small() }).expect("sim");
            let mut out = Vec::new();
            while !sim.is_completed() && out.len() < 500 {
                let r = sim.step();
                out.push((r.summary, sim.take_dirty()));
            }
            out
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn machine_config_waits_for_the_master_pool_and_the_cluster_version_for_every_pool() {
        let mut sim = Simulation::new(small()).expect("sim");
        sim.take_dirty();
        let mco = sim.operators.len() - 1;
        while !sim.is_completed() && sim.steps() < 500 {
            sim.step();
            let masters_done = sim.pool_done(0);
            if sim.operators[mco].phase == OpPhase::Done {
                assert!(masters_done, "machine-config done before the master pool");
            }
            if sim.cv.progressing.status == "False" && sim.stage != Stage::Idle {
                assert!(
                    sim.pool_done(1),
                    "ClusterVersion completed before the worker pool"
                );
            }
        }
        assert!(sim.is_completed());
    }

    #[test]
    fn a_node_walks_through_the_daemon_phases_as_the_logic_reads_them() {
        let mut sim = Simulation::new(small()).expect("sim");
        while sim.stage() != Stage::Nodes {
            sim.step();
        }
        // A worker node nobody picked yet.
        let i = (0..sim.node_count())
            .find(|&i| {
                sim.node_pool(i) == Some("worker") && sim.node_step(i) == Some(NodeStep::Pending)
            })
            .expect("a pending worker");
        let name = sim.node_name(i).expect("name").to_string();
        let assess = |sim: &Simulation| {
            let inputs = sim.inputs().expect("inputs");
            let ctx = node_assess::NodeContext::from_inputs(&inputs.as_cluster_inputs());
            let node = inputs
                .nodes
                .iter()
                .find(|n| n.name() == name)
                .expect("node");
            let a = node_assess::assess_node(&ctx, node, sim.now()).expect("assessed");
            (a.assessment, a.phase)
        };
        assert_eq!(assess(&sim), (Assessment::Outdated, NodePhase::Pending));
        let expected = [
            (
                NodeStep::Draining,
                Assessment::Progressing,
                NodePhase::Draining,
            ),
            (
                NodeStep::Updating,
                Assessment::Progressing,
                NodePhase::Updating,
            ),
            (
                NodeStep::Rebooting,
                Assessment::Progressing,
                NodePhase::Rebooting,
            ),
            // Updated but still cordoned.
            (NodeStep::Done, Assessment::Unavailable, NodePhase::Updated),
            (NodeStep::Updated, Assessment::Completed, NodePhase::Updated),
        ];
        for (step, assessment, phase) in expected {
            sim.take_dirty();
            assert_eq!(sim.advance_node(i), Some(step));
            assert!(sim.dirty().contains(&(ObjectRef::Node(i), Part::Main)));
            assert_eq!(assess(&sim), (assessment, phase), "after {step:?}");
        }
        assert_eq!(sim.advance_node(i), None);
    }

    #[test]
    fn a_blocked_drain_degrades_the_node_then_clears() {
        let mut sim = small_with(Faults {
            blocked_drain: Some(FaultSpec::auto(3)),
            ..Default::default()
        });
        let target = sim.blocked_drain_target().expect("target").to_string();
        let mut seen_steps = 0;
        let mut cleared_after = false;
        while !sim.is_completed() && sim.steps() < 500 {
            sim.step();
            let inputs = sim.inputs().expect("inputs");
            let node = inputs
                .nodes
                .iter()
                .find(|n| n.name() == target)
                .expect("node");
            let out = assess_cluster(&inputs.as_cluster_inputs(), sim.now());
            let degraded_insight = out.insights.iter().any(|i| {
                i.health
                    .as_ref()
                    .is_some_and(|h| h.source == node_assess::SOURCE_NODE_DEGRADED)
                    && i.resource.name == target
            });
            if sim.fault_status().blocked_drain.is_some() {
                seen_steps += 1;
                assert_eq!(annotation(node, NODE_STATE), "Degraded");
                assert!(annotation(node, NODE_REASON).starts_with("failed to drain node: "));
                assert!(annotation(node, NODE_REASON).contains("PodDisruptionBudget"));
                assert!(degraded_insight, "NodeDegraded insight while blocked");
                let pool = out
                    .worker_pools
                    .iter()
                    .find(|(n, _)| n == "worker")
                    .expect("pool");
                assert_eq!(pool.1.assessment, Assessment::Degraded);
            } else {
                assert!(!degraded_insight, "no NodeDegraded insight once cleared");
                if seen_steps > 0 {
                    cleared_after = true;
                    assert_eq!(annotation(node, NODE_REASON), "");
                }
            }
        }
        assert_eq!(seen_steps, 3);
        assert!(cleared_after);
        assert!(sim.is_completed());
    }

    #[test]
    fn a_degraded_operator_holds_the_update_until_it_recovers() {
        let mut sim = small_with(Faults {
            degraded_operator: Some(FaultSpec::on("kube-controller-manager", 4)),
            ..Default::default()
        });
        sim.take_dirty();
        let mut degraded_steps = 0;
        while !sim.is_completed() && sim.steps() < 500 {
            sim.step();
            if sim.fault_status().degraded_operator.is_some() {
                degraded_steps += 1;
                assert_eq!(sim.updating_operators(), ["kube-controller-manager"]);
                let inputs = sim.inputs().expect("inputs");
                let co = inputs
                    .cluster_operators
                    .iter()
                    .find(|c| c.name() == "kube-controller-manager")
                    .expect("co");
                assert_eq!(
                    co.condition("Degraded").map(|c| c.status.as_str()),
                    Some("True")
                );
                assert_ne!(co.version("operator"), Some("4.18.3"));
                // Far enough in the future, the pure logic reports it.
                let later = sim.now() + SignedDuration::from_secs(3600);
                let out = assess_cluster(&inputs.as_cluster_inputs(), later);
                assert!(out.insights.iter().any(|i| {
                    i.health
                        .as_ref()
                        .is_some_and(|h| h.source == "ClusterOperatorDegraded")
                        && i.resource.name == "kube-controller-manager"
                }));
            }
        }
        assert_eq!(degraded_steps, 4);
        assert!(sim.is_completed());
    }

    #[test]
    fn a_paused_pool_excludes_its_nodes_until_unpaused() {
        let mut sim = small_with(Faults {
            paused_pool: Some(FaultSpec::on("worker", 5)),
            ..Default::default()
        });
        let mut paused_steps = 0;
        while !sim.is_completed() && sim.steps() < 500 {
            sim.step();
            if sim.fault_status().paused_pool.is_some() {
                paused_steps += 1;
                let progress = sim.pool_progress();
                assert_eq!(progress[1].3, 0, "no worker node in flight while paused");
                let inputs = sim.inputs().expect("inputs");
                let out = assess_cluster(&inputs.as_cluster_inputs(), sim.now());
                assert_eq!(out.worker_pools[0].1.assessment, Assessment::Excluded);
                assert!(out.insights.iter().any(|i| {
                    i.health
                        .as_ref()
                        .is_some_and(|h| h.source == node_assess::SOURCE_POOL_PAUSED)
                }));
            }
        }
        assert_eq!(paused_steps, 5);
        assert!(sim.is_completed());
    }

    #[test]
    fn a_not_ready_node_is_unavailable_and_skipped_until_it_recovers() {
        let mut sim = small_with(Faults {
            not_ready_node: Some(FaultSpec::auto(6)),
            ..Default::default()
        });
        let mut steps = 0;
        while !sim.is_completed() && sim.steps() < 500 {
            sim.step();
            if let Some(name) = sim.fault_status().not_ready_node {
                steps += 1;
                let i = sim.node_names().position(|n| n == name).expect("node");
                assert_eq!(sim.node_step(i), Some(NodeStep::Pending));
                let inputs = sim.inputs().expect("inputs");
                let later = sim.now() + SignedDuration::from_secs(600);
                let out = assess_cluster(&inputs.as_cluster_inputs(), later);
                let progress = out
                    .insights
                    .iter()
                    .find(|s| s.resource.name == name && s.progress.is_some())
                    .expect("progress");
                assert_eq!(
                    progress.progress.as_ref().map(|p| p.assessment),
                    Some(Assessment::Unavailable)
                );
                assert!(out.insights.iter().any(|i| {
                    i.health
                        .as_ref()
                        .is_some_and(|h| h.source == node_assess::SOURCE_NODE_UNAVAILABLE)
                        && i.resource.name == name
                }));
            }
        }
        assert_eq!(steps, 6);
        assert!(sim.is_completed());
    }

    #[test]
    fn a_stalled_operator_never_completes() {
        let mut sim = small_with(Faults {
            stalled_operator: Some(FaultSpec::auto(0)),
            ..Default::default()
        });
        sim.run_to_completion(200);
        assert!(!sim.is_completed());
        assert_eq!(sim.stage(), Stage::ControlPlane);
        let stalled = sim.fault_status().stalled_operator.expect("stalled");
        assert_eq!(sim.updating_operators(), [stalled.as_str()]);
        let inputs = sim.inputs().expect("inputs");
        let cv = &inputs.cluster_version;
        let p = cv
            .status
            .conditions
            .iter()
            .find(|c| c.type_ == "Progressing")
            .expect("p");
        assert!(
            p.message.ends_with(&format!("waiting on {stalled}")),
            "{}",
            p.message
        );
        // Nothing moves any more but time.
        sim.take_dirty();
        assert_eq!(sim.step().changes, 0);
    }

    #[test]
    fn progressing_transition_times_change_only_with_the_status() {
        let mut sim = Simulation::new(small()).expect("sim");
        sim.step();
        let started = sim.cv.progressing.ltt;
        for _ in 0..4 {
            sim.step();
        }
        assert_eq!(sim.cv.progressing.ltt, started);
        assert_ne!(sim.cv.progressing.message, "");
        assert_eq!(sim.cv.history[0].started, started);
    }

    #[test]
    fn the_snapshot_reads_back_with_the_api_crate() {
        let mut sim = Simulation::new(small()).expect("sim");
        sim.run_to_completion(12);
        let dir = std::env::temp_dir().join(format!("us-sim-snap-{}", std::process::id()));
        sim.write_snapshot(&dir).expect("write");
        let snap = update_status_api::snapshot::Snapshot::from_dir(&dir).expect("read");
        std::fs::remove_dir_all(&dir).ok();
        let inputs = sim.inputs().expect("inputs");
        assert_eq!(snap.nodes, inputs.nodes);
        assert_eq!(snap.cluster_version.as_ref(), Some(&inputs.cluster_version));
        assert_eq!(snap.machine_config_pools, inputs.pools);
        assert_eq!(snap.now, Some(sim.now()));
    }

    #[test]
    fn sizes_and_names_scale() {
        let sim = Simulation::new(SimConfig {
            operators: 40,
            pools: 4,
            masters: 3,
            nodes_per_pool: 700,
            ..Default::default()
        })
        .expect("sim");
        assert_eq!(sim.node_count(), 2103);
        let names: BTreeSet<&str> = sim.node_names().collect();
        assert_eq!(names.len(), 2103, "unique node names");
        assert_eq!(sim.operators.len(), 40);
        assert_eq!(
            sim.operators.last().map(|o| o.name.as_str()),
            Some(MACHINE_CONFIG)
        );
        let pools: Vec<String> = sim.pool_progress().into_iter().map(|p| p.0).collect();
        assert_eq!(pools, ["master", "worker", "infra", "gpu"]);
        let inputs = sim.inputs().expect("inputs");
        let ctx = node_assess::NodeContext::from_inputs(&inputs.as_cluster_inputs());
        // Custom pools win over worker (C.1).
        let infra = inputs
            .nodes
            .iter()
            .find(|n| {
                n.metadata
                    .labels
                    .as_ref()
                    .is_some_and(|l| l.contains_key("node-role.kubernetes.io/infra"))
            })
            .expect("infra node");
        assert_eq!(ctx.pool_of(infra).map(|p| p.name.as_str()), Some("infra"));
    }
}
