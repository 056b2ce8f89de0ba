//! Node and pool assessment (algorithms.md sections C and D.6–D.8, OC variant).
//!
//! Built for thousands of nodes and for a reconciler that must not recompute everything on each
//! node event. Three layers:
//!
//! 1. [`NodeContext`]: everything shared by all nodes, built once per change of the
//!    ClusterVersion, the MachineConfigPools or the MachineConfigs (target version, multi-arch
//!    flag, MachineConfig name → version map, compiled pools in membership order).
//! 2. [`assess_node`]: a pure per-node function (pool membership, C.2–C.8 facts, the node's
//!    progress insight and its D.6/D.7 health insights). Its result can be cached per node and
//!    recomputed only when that node (or the context) changes, or when
//!    [`node_requeue_after`] says time alone changes it.
//! 3. [`aggregate_pool`]: C.10 counts and assessment, D.8 and the pool conditions from the
//!    (cached) node assessments of one pool.
//!
//! [`assess_nodes`] composes the three for the whole cluster.
//!
//! Nothing here reads the clock: `now` is always passed in. Bad input (missing or malformed
//! annotations, unknown MachineConfigs, nodes without conditions, pools without selector or
//! configuration, no ClusterVersion) never panics.

use std::cmp::Ordering;
use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, HealthCounts, HealthInsight, Impact, ImpactLevel,
    ImpactType, InsightScope, InsightType, NodeCounts, NodePhase, ProgressInsight, Remediation,
    ResourceRef, ScopeType, UpdateInsightStatus, VersionPair, WorkerPoolUpdateStatusStatus,
};
use update_status_api::input::{
    ClusterVersion, MachineConfig, MachineConfigPool, NODE_CURRENT_CONFIG, NODE_CURRENT_IMAGE,
    NODE_DESIRED_CONFIG, NODE_DESIRED_DRAIN, NODE_DESIRED_IMAGE, NODE_LAST_APPLIED_DRAIN,
    NODE_REASON, NODE_STATE, Node, POOL_LAYERING_ENABLED, POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG,
    first_condition, selector_matches,
};

use super::ClusterInputs;

/// Name of the control-plane pool.
pub const MASTER_POOL: &str = "master";
/// Name of the default worker pool.
pub const WORKER_POOL: &str = "worker";

/// `source` of D.6 insights.
pub const SOURCE_NODE_UNAVAILABLE: &str = "NodeUnavailable";
/// `source` of D.7 insights.
pub const SOURCE_NODE_DEGRADED: &str = "NodeDegraded";
/// `source` of D.8 insights.
pub const SOURCE_POOL_PAUSED: &str = "PoolPaused";

/// Reference of D.6 and D.7.
pub const MCO_REFERENCE: &str = "https://docs.openshift.com/container-platform/latest/post_installation_configuration/machine-configuration-tasks.html#understanding-the-machine-config-operator";
/// Reference of D.8.
pub const PAUSED_POOL_REFERENCE: &str = "https://docs.openshift.com/container-platform/latest/support/troubleshooting/troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues";
/// Description of D.8.
pub const PAUSED_POOL_DESCRIPTION: &str = "Pool is paused, which stops all changes to the nodes in the pool, including updates. The nodes will not be updated until the pool is unpaused by the administrator.";

/// API group of MachineConfigPools.
const MCO_GROUP: &str = "machineconfiguration.openshift.io";

/// A `Not ready` node is not "seriously" unavailable before this long (C.4).
pub const NOT_READY_GRACE: SignedDuration = SignedDuration::from_secs(5 * 60);
/// A node with disk pressure or unavailable network is not "seriously" unavailable before this long (C.4).
pub const PRESSURE_GRACE: SignedDuration = SignedDuration::from_secs(60);

// Machine-config daemon states (`Working` and any other state read as updating, C.7).
const STATE_DONE: &str = "Done";
const STATE_REBOOTING: &str = "Rebooting";
const STATE_DEGRADED: &str = "Degraded";
const STATE_UNRECONCILABLE: &str = "Unreconcilable";

// C.4 reason texts.
const REASON_NOT_READY: &str = "Not ready";
const REASON_DISK_PRESSURE: &str = "Disk pressure";
const REASON_NETWORK_UNAVAILABLE: &str = "Network unavailable";
const REASON_UNSCHEDULABLE: &str = "Node is marked unschedulable";
const REASON_MCD_PROCESSING: &str = "Machine Config Daemon is processing the node";

// Schema limits (crd.rs).
const MAX_SUMMARY: usize = 256;
const MAX_DESCRIPTION: usize = 4096;
const MAX_PROGRESS_MESSAGE: usize = 4096;
const MAX_CONDITION_MESSAGE: usize = 32768;

// ------------------------------------------------------------------------------------------------
// Context
// ------------------------------------------------------------------------------------------------

/// A MachineConfigPool, compiled for node assessment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolContext {
    /// Pool name.
    pub name: String,
    /// The `master` pool.
    pub is_master: bool,
    /// Valid node selector; `None` (missing or invalid) selects no node (G.58).
    selector: Option<LabelSelector>,
    /// `spec.paused`.
    pub paused: bool,
    /// `spec.configuration.name` (empty when unset).
    pub configuration: String,
    /// Layered pool with a non-empty `newestImageEquivalentConfig` annotation: that image.
    pub layered_image: Option<String>,
    /// The MachineConfigPool as an insight resource.
    pub resource: ResourceRef,
}

impl PoolContext {
    /// Compiles a pool.
    pub fn new(pool: &MachineConfigPool) -> Self {
        let name = pool.name().to_string();
        let layered = pool
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(POOL_LAYERING_ENABLED));
        let layered_image = pool
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG))
            .filter(|img| layered && !img.is_empty())
            .cloned();
        PoolContext {
            is_master: name == MASTER_POOL,
            selector: pool
                .spec
                .node_selector
                .as_ref()
                .filter(|s| selector_is_valid(s))
                .cloned(),
            paused: pool.spec.paused,
            configuration: pool.spec.configuration.name.clone(),
            layered_image,
            resource: ResourceRef {
                group: MCO_GROUP.to_string(),
                kind: "MachineConfigPool".to_string(),
                name: name.clone(),
                namespace: None,
            },
            name,
        }
    }

    /// Does this pool's selector select the node? A pool without a valid selector selects nothing.
    pub fn selects(&self, node: &Node) -> bool {
        self.selector
            .as_ref()
            .is_some_and(|s| selector_matches(s, node.metadata.labels.as_ref()))
    }

    /// Scope of the insights about this pool's nodes: `ControlPlane` + `master` for the master
    /// pool, `WorkerPool` + the pool otherwise.
    pub fn node_scope(&self) -> InsightScope {
        InsightScope {
            type_: if self.is_master {
                ScopeType::ControlPlane
            } else {
                ScopeType::WorkerPool
            },
            pool: Some(self.name.clone()),
        }
    }
}

/// A selector the API server would accept as a label selector (what OC's conversion checks):
/// known operators, values for `In`/`NotIn`, none for `Exists`/`DoesNotExist`.
fn selector_is_valid(selector: &LabelSelector) -> bool {
    selector.match_expressions.as_deref().is_none_or(|exprs| {
        exprs.iter().all(|e| {
            let n = e.values.as_ref().map_or(0, Vec::len);
            !e.key.is_empty()
                && match e.operator.as_str() {
                    "In" | "NotIn" => n > 0,
                    "Exists" | "DoesNotExist" => n == 0,
                    _ => false,
                }
        })
    })
}

/// Everything node assessment shares across nodes. Build it once per change of the
/// ClusterVersion, the pools or the MachineConfigs; compare two contexts with `==` to know
/// whether cached [`NodeAssessment`]s are still valid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeContext {
    /// `history[0].version` (empty without ClusterVersion or history: then no node is updated
    /// or updating).
    pub target_version: String,
    /// Multi-arch migration in progress (C.3): `history[0].version == history[1].version`,
    /// different images, and ClusterVersion `Progressing=True`.
    pub multi_arch_migration: bool,
    /// Rendered MachineConfig name → OpenShift version (non-empty annotations only, A.5).
    mc_versions: HashMap<String, String>,
    /// Pools in display order: `master`, `worker`, then the others by name (unique names).
    pools: Vec<PoolContext>,
    /// Indices into `pools` in membership precedence (C.1): master, custom by name, worker.
    membership: Vec<usize>,
}

impl NodeContext {
    /// Builds the context.
    pub fn new(
        cluster_version: Option<&ClusterVersion>,
        pools: &[MachineConfigPool],
        machine_configs: &[MachineConfig],
    ) -> Self {
        let history = cluster_version.map_or(&[][..], |cv| &cv.status.history[..]);
        let target_version = history
            .first()
            .map(|h| h.version.clone())
            .unwrap_or_default();
        let multi_arch_migration = match (history.first(), history.get(1), cluster_version) {
            (Some(h0), Some(h1), Some(cv)) => {
                h0.version == h1.version
                    && h0.image != h1.image
                    && first_condition(&cv.status.conditions, "Progressing")
                        .is_some_and(|c| c.is_true())
            }
            _ => false,
        };
        let mc_versions = machine_configs
            .iter()
            .filter_map(|mc| {
                let name = mc.metadata.name.as_deref().filter(|n| !n.is_empty())?;
                Some((name.to_string(), mc.release_version()?.to_string()))
            })
            .collect();

        let mut compiled: Vec<PoolContext> = pools
            .iter()
            .filter(|p| !p.name().is_empty())
            .map(PoolContext::new)
            .collect();
        // Stable: among duplicate names the first listed comes first and is kept.
        compiled.sort_by(|a, b| display_rank(&a.name).cmp(&display_rank(&b.name)));
        compiled.dedup_by(|later, earlier| later.name == earlier.name);

        let mut membership: Vec<usize> = (0..compiled.len()).collect();
        membership.sort_by(|&a, &b| {
            membership_rank(&compiled[a].name).cmp(&membership_rank(&compiled[b].name))
        });

        NodeContext {
            target_version,
            multi_arch_migration,
            mc_versions,
            pools: compiled,
            membership,
        }
    }

    /// Builds the context from the cluster inputs.
    pub fn from_inputs(inputs: &ClusterInputs<'_>) -> Self {
        Self::new(inputs.cluster_version, inputs.pools, inputs.machine_configs)
    }

    /// Pools in display order (`master`, `worker`, then the others by name).
    pub fn pools(&self) -> &[PoolContext] {
        &self.pools
    }

    /// A pool by name.
    pub fn pool(&self, name: &str) -> Option<&PoolContext> {
        self.pools.iter().find(|p| p.name == name)
    }

    /// The pool a node belongs to (C.1): master first, then custom pools by name, then worker.
    pub fn pool_of(&self, node: &Node) -> Option<&PoolContext> {
        self.membership
            .iter()
            .filter_map(|&i| self.pools.get(i))
            .find(|p| p.selects(node))
    }

    /// OpenShift version of a rendered MachineConfig, when known.
    pub fn machine_config_version(&self, name: &str) -> Option<&str> {
        self.mc_versions
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

fn display_rank(name: &str) -> (u8, &str) {
    match name {
        MASTER_POOL => (0, ""),
        WORKER_POOL => (1, ""),
        other => (2, other),
    }
}

fn membership_rank(name: &str) -> (u8, &str) {
    match name {
        MASTER_POOL => (0, ""),
        WORKER_POOL => (2, ""),
        other => (1, other),
    }
}

// ------------------------------------------------------------------------------------------------
// Availability (C.4)
// ------------------------------------------------------------------------------------------------

/// Why a node is not available (one entry of C.4's "bad conditions").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadCondition {
    /// `Ready` ≠ True (message, LTT).
    NotReady(String, Option<Timestamp>),
    /// `DiskPressure` ≠ False.
    DiskPressure(String, Option<Timestamp>),
    /// `NetworkUnavailable` ≠ False.
    NetworkUnavailable(String, Option<Timestamp>),
    /// `spec.unschedulable`.
    Unschedulable,
    /// The machine-config daemon has not finished with the node.
    McdProcessing,
    /// Layered pool: the node's desired image is not the pool's image (makes the node
    /// *available*, see [`Availability::is_unavailable`]).
    UnexpectedImage(String),
}

impl BadCondition {
    /// Raw reason (node table MESSAGE).
    pub fn reason(&self) -> String {
        match self {
            BadCondition::NotReady(..) => REASON_NOT_READY.to_string(),
            BadCondition::DiskPressure(..) => REASON_DISK_PRESSURE.to_string(),
            BadCondition::NetworkUnavailable(..) => REASON_NETWORK_UNAVAILABLE.to_string(),
            BadCondition::Unschedulable => REASON_UNSCHEDULABLE.to_string(),
            BadCondition::McdProcessing => REASON_MCD_PROCESSING.to_string(),
            BadCondition::UnexpectedImage(img) => format!(
                "Node has an unexpected annotation {POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG}={img}"
            ),
        }
    }

    /// Insight summary text.
    pub fn message(&self, node: &str) -> String {
        match self {
            BadCondition::NotReady(..) => format!("Node {node} is not ready"),
            BadCondition::DiskPressure(..) => format!("Node {node} has disk pressure"),
            BadCondition::NetworkUnavailable(..) => format!("Node {node} has unavailable network"),
            other => other.reason(),
        }
    }

    /// Insight description text.
    pub fn description(&self) -> String {
        match self {
            BadCondition::NotReady(msg, _) => format!(
                "Node has a Ready!=True condition with Reason {} and message {}",
                go_quote(REASON_NOT_READY),
                go_quote(msg)
            ),
            BadCondition::DiskPressure(msg, _) => format!(
                "Node has a DiskPressure!=False condition with Reason {} and message {}",
                go_quote(REASON_DISK_PRESSURE),
                go_quote(msg)
            ),
            BadCondition::NetworkUnavailable(msg, _) => format!(
                "Node has a NetworkUnavailable!=False condition with Reason {} and message {}",
                go_quote(REASON_NETWORK_UNAVAILABLE),
                go_quote(msg)
            ),
            other => other.reason(),
        }
    }

    /// LTT of the underlying condition.
    pub fn since(&self) -> Option<Timestamp> {
        match self {
            BadCondition::NotReady(_, t)
            | BadCondition::DiskPressure(_, t)
            | BadCondition::NetworkUnavailable(_, t) => *t,
            _ => None,
        }
    }

    /// How long after its LTT a time-bound condition stays ignorable (not serious); `None` for
    /// the others (always serious, or ignorable forever, see [`BadCondition::ignorable_forever`]).
    fn grace(&self) -> Option<SignedDuration> {
        match self {
            BadCondition::NotReady(..) => Some(NOT_READY_GRACE),
            BadCondition::DiskPressure(..) | BadCondition::NetworkUnavailable(..) => {
                Some(PRESSURE_GRACE)
            }
            _ => None,
        }
    }

    /// Unschedulable and MCD processing never make a node seriously unavailable.
    fn ignorable_forever(&self) -> bool {
        matches!(
            self,
            BadCondition::Unschedulable | BadCondition::McdProcessing
        )
    }

    /// Is this condition ignorable at `now` (C.4 seriouslyUnavailable)?
    pub fn is_ignorable(&self, now: Timestamp) -> bool {
        if self.ignorable_forever() {
            return true;
        }
        match (self.grace(), self.since()) {
            // An unknown transition time counts as old (Go's zero time).
            (Some(grace), Some(ltt)) => now.duration_since(ltt) < grace,
            _ => false,
        }
    }
}

/// C.4 availability of a node in a pool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Availability {
    /// Bad conditions in C.4 order.
    pub bad: Vec<BadCondition>,
    /// `nodeUnavailable ∧ desiredImageMatchesPool`.
    pub is_unavailable: bool,
}

impl Availability {
    /// Computes C.4.
    pub fn of(node: &Node, pool: &PoolContext) -> Self {
        let mut bad = Vec::new();
        for c in &node.status.conditions {
            let entry = match c.type_.as_str() {
                "Ready" if c.status != "True" => {
                    BadCondition::NotReady(c.message.clone(), c.last_transition_time)
                }
                "DiskPressure" if c.status != "False" => {
                    BadCondition::DiskPressure(c.message.clone(), c.last_transition_time)
                }
                "NetworkUnavailable" if c.status != "False" => {
                    BadCondition::NetworkUnavailable(c.message.clone(), c.last_transition_time)
                }
                _ => continue,
            };
            bad.push(entry);
        }
        if node.spec.unschedulable {
            bad.push(BadCondition::Unschedulable);
        }
        // Steps 3–6: bad conditions → unavailable; else "done" or a terminal MCD state →
        // available; else the MCD is still processing the node.
        let mcd_terminal = matches!(
            node.annotation(NODE_STATE),
            Some(STATE_DEGRADED | STATE_UNRECONCILABLE)
        );
        let node_unavailable = if !bad.is_empty() {
            true
        } else if node_is_done(node) || mcd_terminal {
            false
        } else {
            bad.push(BadCondition::McdProcessing);
            true
        };
        let is_unavailable = node_unavailable && desired_image_matches_pool(node, pool, &mut bad);
        Availability {
            bad,
            is_unavailable,
        }
    }

    /// Raw reasons joined with ` | ` (the node table MESSAGE of an unavailable node).
    pub fn reason(&self) -> String {
        join(self.bad.iter().map(BadCondition::reason))
    }

    /// Insight summary (OC variant, with the node name).
    pub fn message(&self, node: &str) -> String {
        join(self.bad.iter().map(|b| b.message(node)))
    }

    /// Insight description.
    pub fn description(&self) -> String {
        join(self.bad.iter().map(BadCondition::description))
    }

    /// Earliest known LTT among the bad conditions.
    pub fn since(&self) -> Option<Timestamp> {
        self.bad.iter().filter_map(BadCondition::since).min()
    }

    /// Some bad condition is not ignorable at `now`.
    pub fn seriously_unavailable(&self, now: Timestamp) -> bool {
        self.bad.iter().any(|b| !b.is_ignorable(now))
    }

    /// When not seriously unavailable at `now`: the instant time alone makes it so, if ever.
    pub fn serious_at(&self, now: Timestamp) -> Option<Timestamp> {
        if self.seriously_unavailable(now) {
            return None;
        }
        self.bad
            .iter()
            .filter_map(|b| b.since()?.checked_add(b.grace()?).ok())
            .filter(|t| *t > now)
            .min()
    }
}

fn join(parts: impl Iterator<Item = String>) -> String {
    parts.collect::<Vec<_>>().join(" | ")
}

/// C.4 step 4: the MCD is done with the node.
fn node_is_done(node: &Node) -> bool {
    let current = node.annotation(NODE_CURRENT_CONFIG).unwrap_or_default();
    let desired = node.annotation(NODE_DESIRED_CONFIG).unwrap_or_default();
    let config_done = !current.is_empty() && current == desired;
    let image_done = match (
        node.annotation(NODE_CURRENT_IMAGE),
        node.annotation(NODE_DESIRED_IMAGE),
    ) {
        (None, None) => true,
        (Some(c), Some(d)) => !c.is_empty() && c == d,
        _ => false,
    };
    config_done && image_done && node.annotation(NODE_STATE) == Some(STATE_DONE)
}

/// C.4 `desiredImageMatchesPool` (may add the unexpected-image reason).
fn desired_image_matches_pool(
    node: &Node,
    pool: &PoolContext,
    bad: &mut Vec<BadCondition>,
) -> bool {
    let desired = node.annotation(NODE_DESIRED_IMAGE).unwrap_or_default();
    match &pool.layered_image {
        Some(image) => {
            if desired == image {
                true
            } else {
                bad.push(BadCondition::UnexpectedImage(image.clone()));
                false
            }
        }
        None => desired.is_empty(),
    }
}

/// Go `%q` of a string: double-quoted with Go escapes (control and non-space whitespace
/// characters escaped; other characters kept).
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || (c.is_whitespace() && c != ' ') || c == '\u{feff}' => {
                let n = c as u32;
                if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The machine-config operator's first-error readiness check (`checkNodeReady`, G.44): the
/// first of `Ready≠True`, `DiskPressure≠False`, `NetworkUnavailable≠False` in condition order,
/// then `Unschedulable`. Not used by the assessment (C.4 collects every reason); kept for parity.
pub fn check_node_ready(node: &Node) -> Result<(), String> {
    let name = node.name();
    for c in &node.status.conditions {
        match c.type_.as_str() {
            "Ready" if c.status != "True" => {
                return Err(format!("node {name} is reporting NotReady={}", c.status));
            }
            "DiskPressure" if c.status != "False" => {
                return Err(format!("node {name} is reporting OutOfDisk={}", c.status));
            }
            "NetworkUnavailable" if c.status != "False" => {
                return Err(format!(
                    "node {name} is reporting NetworkUnavailable={}",
                    c.status
                ));
            }
            _ => {}
        }
    }
    if node.spec.unschedulable {
        return Err(format!("node {name} is reporting Unschedulable"));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// Per-node facts (C.2–C.8)
// ------------------------------------------------------------------------------------------------

/// The per-node facts of C.2–C.8, before building insights.
#[derive(Clone, Debug, PartialEq)]
struct NodeFacts<'a> {
    pool: &'a PoolContext,
    current_version: &'a str,
    is_updated: bool,
    is_updating: bool,
    is_degraded: bool,
    is_draining: bool,
    availability: Availability,
    phase: NodePhase,
    assessment: Assessment,
    estimate: &'static str,
    degraded_reason: &'a str,
}

fn node_facts<'a>(ctx: &'a NodeContext, node: &'a Node) -> Option<NodeFacts<'a>> {
    if node.name().is_empty() {
        return None;
    }
    let pool = ctx.pool_of(node)?;
    let current_config = node.annotation(NODE_CURRENT_CONFIG);
    let desired_config = node.annotation(NODE_DESIRED_CONFIG);
    let current_version = current_config.and_then(|c| ctx.machine_config_version(c));
    let desired_version = desired_config.and_then(|c| ctx.machine_config_version(c));
    let latest = ctx.target_version.as_str();

    // C.3 (OC variant).
    let has_desired = desired_config.is_some();
    let matched = current_config.unwrap_or_default() == desired_config.unwrap_or_default();
    let desired_is_pool_target = desired_config.unwrap_or_default() == pool.configuration;
    let is_updated = !latest.is_empty()
        && current_version == Some(latest)
        && (!ctx.multi_arch_migration || !has_desired || (matched && desired_is_pool_target));
    let is_updating = !latest.is_empty()
        && !is_updated
        && current_version.is_some()
        && desired_version == Some(latest)
        && !matched
        && desired_is_pool_target;

    let state = node.annotation(NODE_STATE).unwrap_or_default();
    let availability = Availability::of(node, pool);
    // C.5
    let is_degraded = !desired_config.unwrap_or_default().is_empty()
        && matches!(state, STATE_DEGRADED | STATE_UNRECONCILABLE);
    // C.6
    let is_draining = is_draining(node, is_updating);

    // C.7
    let phase = if is_updating && is_draining {
        NodePhase::Draining
    } else if is_updating {
        match state {
            STATE_REBOOTING => NodePhase::Rebooting,
            STATE_DONE => NodePhase::Updated,
            // `Working`, empty/absent, and anything else (Degraded, Unreconcilable).
            _ => NodePhase::Updating,
        }
    } else if is_updated {
        NodePhase::Updated
    } else if pool.paused {
        NodePhase::Paused
    } else {
        NodePhase::Pending
    };

    // C.8
    let (mut assessment, mut estimate) = match phase {
        NodePhase::Paused => (Assessment::Excluded, "-"),
        NodePhase::Pending => (Assessment::Outdated, "?"),
        NodePhase::Draining => (Assessment::Progressing, "+10m"),
        NodePhase::Updating | NodePhase::Rebooting => (Assessment::Progressing, "+5m"),
        NodePhase::Updated => (Assessment::Completed, "-"),
    };
    let stalled_estimate = if is_updated { "-" } else { "?" };
    if availability.is_unavailable && !is_updating {
        assessment = Assessment::Unavailable;
        estimate = stalled_estimate;
    }
    if is_degraded {
        assessment = Assessment::Degraded;
        estimate = stalled_estimate;
    }

    Some(NodeFacts {
        pool,
        current_version: current_version.unwrap_or_default(),
        is_updated,
        is_updating,
        is_degraded,
        is_draining,
        availability,
        phase,
        assessment,
        estimate,
        degraded_reason: node.annotation(NODE_REASON).unwrap_or_default(),
    })
}

/// C.6.
fn is_draining(node: &Node, is_updating: bool) -> bool {
    let desired = node.annotation(NODE_DESIRED_DRAIN).unwrap_or_default();
    let applied = node.annotation(NODE_LAST_APPLIED_DRAIN).unwrap_or_default();
    if desired.is_empty() || applied.is_empty() {
        return false;
    }
    if desired != applied && desired.split('-').next() == Some("drain") {
        return true;
    }
    is_updating && node.annotation(NODE_STATE) == Some(STATE_DONE)
}

// ------------------------------------------------------------------------------------------------
// Per-node assessment
// ------------------------------------------------------------------------------------------------

/// Everything about one node: facts, its progress insight and its health insights. Pure
/// function of (context, node, now): cache it per node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeAssessment {
    /// Node name.
    pub name: String,
    /// Its pool.
    pub pool: String,
    /// The pool is `master`.
    pub is_master: bool,
    /// C.8 assessment.
    pub assessment: Assessment,
    /// C.7 phase.
    pub phase: NodePhase,
    /// Version of the current rendered config (empty when unknown).
    pub current_version: String,
    /// C.3.
    pub is_updated: bool,
    /// C.3.
    pub is_updating: bool,
    /// C.4.
    pub is_unavailable: bool,
    /// C.5.
    pub is_degraded: bool,
    /// C.6.
    pub is_draining: bool,
    /// C.4 at `now`.
    pub seriously_unavailable: bool,
    /// When time alone would change this assessment (a D.6 insight would appear).
    pub changes_at: Option<Timestamp>,
    /// The node's progress insight.
    pub progress: UpdateInsightStatus,
    /// Its health insights (D.6 then D.7), already filtered for completeness.
    pub health: Vec<UpdateInsightStatus>,
}

impl NodeAssessment {
    /// Time until this assessment changes by time alone, if it does.
    pub fn requeue_after(&self, now: Timestamp) -> Option<SignedDuration> {
        self.changes_at
            .map(|t| t.duration_since(now))
            .filter(|d| d.is_positive())
    }
}

/// Assesses one node: `None` for a node in no pool (or without a name).
pub fn assess_node(ctx: &NodeContext, node: &Node, now: Timestamp) -> Option<NodeAssessment> {
    let f = node_facts(ctx, node)?;
    let name = node.name();
    let scope = f.pool.node_scope();
    let resource = ResourceRef {
        group: String::new(),
        kind: "Node".to_string(),
        name: name.to_string(),
        namespace: None,
    };
    let unavailable_since = f.availability.since();
    let d6 = f.availability.is_unavailable && !f.is_updating;
    let seriously_unavailable = f.availability.seriously_unavailable(now);
    let changes_at = if d6 {
        f.availability.serious_at(now)
    } else {
        None
    };

    let message = match f.assessment {
        Assessment::Degraded => f.degraded_reason.to_string(),
        Assessment::Unavailable => f.availability.reason(),
        _ => String::new(),
    };

    let mut conditions = Vec::with_capacity(3);
    conditions.push(Condition {
        type_: "Updating".into(),
        status: if f.is_updating {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        },
        reason: f.phase.as_str().into(),
        message: String::new(),
        last_transition_time: None,
    });
    conditions.push(if f.availability.is_unavailable {
        Condition {
            type_: "Available".into(),
            status: ConditionStatus::False,
            reason: "Unavailable".into(),
            message: cut(f.availability.reason(), MAX_CONDITION_MESSAGE),
            last_transition_time: unavailable_since,
        }
    } else {
        Condition {
            type_: "Available".into(),
            status: ConditionStatus::True,
            reason: "AsExpected".into(),
            ..Default::default()
        }
    });
    conditions.push(if f.is_degraded {
        Condition {
            type_: "Degraded".into(),
            status: ConditionStatus::True,
            reason: "Degraded".into(),
            message: cut(f.degraded_reason.to_string(), MAX_CONDITION_MESSAGE),
            last_transition_time: None,
        }
    } else {
        Condition {
            type_: "Degraded".into(),
            status: ConditionStatus::False,
            reason: "AsExpected".into(),
            ..Default::default()
        }
    });

    let progress = UpdateInsightStatus {
        type_: InsightType::Progress,
        resource: resource.clone(),
        scope: scope.clone(),
        progress: Some(ProgressInsight {
            assessment: f.assessment,
            phase: Some(f.phase),
            version: Some(VersionPair {
                current: f.current_version.to_string(),
                target: ctx.target_version.clone(),
            }),
            estimate: f.estimate.to_string(),
            message: cut(message, MAX_PROGRESS_MESSAGE),
            since: None,
            conditions,
        }),
        health: None,
    };

    let mut health = Vec::new();
    // D.6
    if d6 && seriously_unavailable {
        let description = if f.is_degraded {
            f.degraded_reason.to_string()
        } else {
            f.availability.description()
        };
        health.extend(health_insight(
            &resource,
            &scope,
            SOURCE_NODE_UNAVAILABLE,
            unavailable_since,
            ImpactLevel::Warning,
            ImpactType::UpdateSpeed,
            f.availability.message(name),
            description,
            MCO_REFERENCE,
        ));
    }
    // D.7
    if f.is_degraded {
        health.extend(health_insight(
            &resource,
            &scope,
            SOURCE_NODE_DEGRADED,
            None,
            ImpactLevel::Error,
            ImpactType::UpdateStalled,
            format!("Node {name} is degraded"),
            f.degraded_reason.to_string(),
            MCO_REFERENCE,
        ));
    }

    Some(NodeAssessment {
        name: name.to_string(),
        pool: f.pool.name.clone(),
        is_master: f.pool.is_master,
        assessment: f.assessment,
        phase: f.phase,
        current_version: f.current_version.to_string(),
        is_updated: f.is_updated,
        is_updating: f.is_updating,
        is_unavailable: f.availability.is_unavailable,
        is_degraded: f.is_degraded,
        is_draining: f.is_draining,
        seriously_unavailable,
        changes_at,
        progress,
        health,
    })
}

/// When time alone will change this node's assessment (a not-yet-serious `Not ready` older than
/// 5 min, or disk pressure / unavailable network older than 1 min, makes a D.6 insight appear):
/// the delay from `now`. `None` when time alone changes nothing.
pub fn node_requeue_after(
    ctx: &NodeContext,
    node: &Node,
    now: Timestamp,
) -> Option<SignedDuration> {
    let f = node_facts(ctx, node)?;
    if !f.availability.is_unavailable || f.is_updating {
        return None;
    }
    f.availability
        .serious_at(now)
        .map(|t| t.duration_since(now))
        .filter(|d| d.is_positive())
}

/// Builds a health insight, or nothing when it is incomplete (D.0). Cuts long texts to the schema.
#[allow(clippy::too_many_arguments)]
fn health_insight(
    resource: &ResourceRef,
    scope: &InsightScope,
    source: &str,
    started_at: Option<Timestamp>,
    level: ImpactLevel,
    type_: ImpactType,
    summary: String,
    description: String,
    reference: &str,
) -> Option<UpdateInsightStatus> {
    if summary.is_empty() || description.is_empty() || reference.is_empty() {
        return None;
    }
    Some(UpdateInsightStatus {
        type_: InsightType::Health,
        resource: resource.clone(),
        scope: scope.clone(),
        progress: None,
        health: Some(HealthInsight {
            started_at,
            impact: Impact {
                level,
                type_,
                summary: cut(summary, MAX_SUMMARY),
                description: cut(description, MAX_DESCRIPTION),
            },
            remediation: Remediation {
                reference: reference.to_string(),
            },
            related: Vec::new(),
            source: source.to_string(),
        }),
    })
}

/// Cuts `s` to at most `max` characters, ending in `...` when cut.
fn cut(s: String, max: usize) -> String {
    if s.chars().count() <= max {
        return s;
    }
    let mut out: String = s.chars().take(max.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

// ------------------------------------------------------------------------------------------------
// Ordering (C.9)
// ------------------------------------------------------------------------------------------------

/// C.9 rank of a node assessment (Degraded 0 < Unavailable 1 < Progressing 2 < Excluded 3 <
/// Outdated 4 < Completed 5; anything else last).
pub fn node_assessment_rank(a: Assessment) -> u8 {
    match a {
        Assessment::Degraded => 0,
        Assessment::Unavailable => 1,
        Assessment::Progressing => 2,
        Assessment::Excluded => 3,
        Assessment::Outdated => 4,
        Assessment::Completed => 5,
        _ => 6,
    }
}

/// C.9 rank of a phase (Draining 0 < Updating 1 < Rebooting 2 < Paused 3 < Pending 4 < Updated 5;
/// none last).
pub fn node_phase_rank(p: Option<NodePhase>) -> u8 {
    match p {
        Some(NodePhase::Draining) => 0,
        Some(NodePhase::Updating) => 1,
        Some(NodePhase::Rebooting) => 2,
        Some(NodePhase::Paused) => 3,
        Some(NodePhase::Pending) => 4,
        Some(NodePhase::Updated) => 5,
        None => 6,
    }
}

/// C.9 sort key of a node progress insight: (assessment rank, phase rank, node name).
pub fn node_sort_key(insight: &UpdateInsightStatus) -> (u8, u8, &str) {
    let (a, p) = insight.progress.as_ref().map_or((6, 6), |p| {
        (node_assessment_rank(p.assessment), node_phase_rank(p.phase))
    });
    (a, p, insight.resource.name.as_str())
}

/// C.9 comparator of node progress insights (use with `sort_by`).
pub fn compare_node_insights(a: &UpdateInsightStatus, b: &UpdateInsightStatus) -> Ordering {
    node_sort_key(a).cmp(&node_sort_key(b))
}

// ------------------------------------------------------------------------------------------------
// Pools (C.10, D.8)
// ------------------------------------------------------------------------------------------------

/// Assessment of every pool and its nodes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodesAssessment {
    /// One per MachineConfigPool, in pool order (`master`, `worker`, then the others by name).
    pub pools: Vec<PoolAssessment>,
}

impl NodesAssessment {
    /// The master pool's assessment, which feeds the control plane's node summary.
    pub fn control_plane_pool(&self) -> Option<&PoolAssessment> {
        self.pools.iter().find(|p| p.is_master)
    }

    /// A pool's assessment by name.
    pub fn pool(&self, name: &str) -> Option<&PoolAssessment> {
        self.pools.iter().find(|p| p.name == name)
    }
}

/// Assessment of one pool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolAssessment {
    /// Pool name.
    pub name: String,
    /// `master`: its nodes are the control plane's.
    pub is_master: bool,
    /// Status content (for the master pool, its counts feed ControlPlaneUpdateStatus).
    pub status: WorkerPoolUpdateStatusStatus,
    /// Node progress insights (C.9 order), then node health insights (by node name, D.6 before
    /// D.7), then the pool's D.8 insight.
    pub insights: Vec<UpdateInsightStatus>,
}

/// C.10 counts of a pool's nodes.
pub fn pool_counts<'a>(nodes: impl IntoIterator<Item = &'a NodeAssessment>) -> NodeCounts {
    let mut c = NodeCounts::default();
    for n in nodes {
        c.total += 1;
        if !n.is_unavailable {
            c.available += 1;
        }
        if n.is_degraded {
            c.degraded += 1;
        }
        match n.phase {
            NodePhase::Paused => {
                c.excluded += 1;
                c.outdated += 1;
            }
            NodePhase::Pending => {
                c.pending += 1;
                c.outdated += 1;
            }
            NodePhase::Draining | NodePhase::Updating | NodePhase::Rebooting => {
                if n.phase == NodePhase::Draining {
                    c.draining += 1;
                }
                c.outdated += 1;
                if !n.is_degraded {
                    c.progressing += 1;
                }
            }
            NodePhase::Updated => {}
        }
    }
    c.updated = c.total - c.outdated;
    c
}

/// C.10 assessment from counts (`Empty` for a pool with no nodes).
pub fn pool_assessment(c: &NodeCounts) -> Assessment {
    if c.total == 0 {
        Assessment::Empty
    } else if c.updated == c.total {
        Assessment::Completed
    } else if c.pending == c.total {
        Assessment::Pending
    } else if c.degraded > 0 {
        Assessment::Degraded
    } else if c.excluded > 0 {
        Assessment::Excluded
    } else {
        Assessment::Progressing
    }
}

/// `round_half_even(updated / total × 100)`, 0 for an empty pool.
pub fn completion_percent(updated: u32, total: u32) -> u32 {
    if total == 0 {
        return 0;
    }
    // Same float computation as `oc` (`%.0f` rounds the binary value half to even).
    let pct = f64::from(updated) / f64::from(total) * 100.0;
    pct.round_ties_even().clamp(0.0, 100.0) as u32
}

/// Aggregates a pool from its nodes' assessments (nodes of other pools are ignored): C.10
/// counts and assessment, D.8, health counts and conditions.
pub fn aggregate_pool<'a>(
    ctx: &NodeContext,
    pool: &PoolContext,
    nodes: impl IntoIterator<Item = &'a NodeAssessment>,
) -> PoolAssessment {
    let mut members: Vec<&NodeAssessment> =
        nodes.into_iter().filter(|n| n.pool == pool.name).collect();
    let counts = pool_counts(members.iter().copied());
    let assessment = pool_assessment(&counts);

    let mut insights = Vec::with_capacity(members.len() + 1);
    members.sort_by(|a, b| compare_node_insights(&a.progress, &b.progress));
    insights.extend(members.iter().map(|n| n.progress.clone()));
    members.sort_by(|a, b| a.name.cmp(&b.name));
    insights.extend(members.iter().flat_map(|n| n.health.iter().cloned()));
    // D.8
    if pool.paused && counts.excluded > 0 {
        insights.extend(health_insight(
            &pool.resource,
            &InsightScope {
                type_: ScopeType::WorkerPool,
                pool: Some(pool.name.clone()),
            },
            SOURCE_POOL_PAUSED,
            None,
            ImpactLevel::Warning,
            ImpactType::UpdateStalled,
            format!(
                "Outdated nodes in a paused pool '{}' will not be updated",
                pool.name
            ),
            PAUSED_POOL_DESCRIPTION.to_string(),
            PAUSED_POOL_REFERENCE,
        ));
    }

    let mut health = HealthCounts::default();
    for h in insights.iter().filter_map(|i| i.health.as_ref()) {
        match h.impact.level {
            ImpactLevel::Critical => health.critical += 1,
            ImpactLevel::Error => health.error += 1,
            ImpactLevel::Warning => health.warning += 1,
            ImpactLevel::Info => health.info += 1,
            ImpactLevel::Unknown => health.unknown += 1,
        }
    }

    let moving = members
        .iter()
        .filter(|n| {
            matches!(
                n.phase,
                NodePhase::Draining | NodePhase::Updating | NodePhase::Rebooting
            )
        })
        .count();
    let serious = health.critical + health.error;
    let conditions = vec![
        if moving > 0 {
            Condition {
                type_: "Updating".into(),
                status: ConditionStatus::True,
                reason: "NodesUpdating".into(),
                message: format!(
                    "{moving} of {} nodes are draining, updating or rebooting",
                    counts.total
                ),
                last_transition_time: None,
            }
        } else {
            Condition {
                type_: "Updating".into(),
                status: ConditionStatus::False,
                reason: "NoNodesUpdating".into(),
                message: "No node is draining, updating or rebooting".into(),
                last_transition_time: None,
            }
        },
        if serious > 0 {
            Condition {
                type_: "Healthy".into(),
                status: ConditionStatus::False,
                reason: "ErrorInsights".into(),
                message: format!("{serious} health insights of level Error or Critical"),
                last_transition_time: None,
            }
        } else {
            Condition {
                type_: "Healthy".into(),
                status: ConditionStatus::True,
                reason: "AsExpected".into(),
                message: String::new(),
                last_transition_time: None,
            }
        },
    ];

    PoolAssessment {
        name: pool.name.clone(),
        is_master: pool.is_master,
        status: WorkerPoolUpdateStatusStatus {
            resource: pool.resource.clone(),
            assessment,
            paused: pool.paused,
            completion_percent: completion_percent(counts.updated, counts.total),
            target_version: ctx.target_version.clone(),
            nodes: counts,
            health_insights: health,
            conditions,
        },
        insights,
    }
}

/// Assesses every pool and node.
pub fn assess_nodes(inputs: &ClusterInputs<'_>, now: Timestamp) -> NodesAssessment {
    let ctx = NodeContext::from_inputs(inputs);
    let assessed: Vec<NodeAssessment> = inputs
        .nodes
        .iter()
        .filter_map(|n| assess_node(&ctx, n, now))
        .collect();
    let index: HashMap<&str, usize> = ctx
        .pools
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    let mut by_pool: Vec<Vec<&NodeAssessment>> = vec![Vec::new(); ctx.pools.len()];
    for n in &assessed {
        if let Some(&i) = index.get(n.pool.as_str())
            && let Some(group) = by_pool.get_mut(i)
        {
            group.push(n);
        }
    }
    NodesAssessment {
        pools: ctx
            .pools
            .iter()
            .zip(by_pool)
            .map(|(pool, members)| aggregate_pool(&ctx, pool, members))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};
    use update_status_api::input::MCO_PREFIX;

    use super::*;

    const OLD: &str = "rendered-worker-old";
    const NEW: &str = "rendered-worker-new";
    const M_OLD: &str = "rendered-master-old";
    const M_NEW: &str = "rendered-master-new";
    const WORKER_LABEL: &str = "node-role.kubernetes.io/worker";
    const MASTER_LABEL: &str = "node-role.kubernetes.io/master";

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    fn now() -> Timestamp {
        ts("2024-01-01T12:00:00Z")
    }

    fn ago(secs: i64) -> String {
        now()
            .checked_sub(SignedDuration::from_secs(secs))
            .expect("in range")
            .to_string()
    }

    fn cv_with(history: Value, progressing: &str) -> ClusterVersion {
        serde_json::from_value(json!({
            "metadata": {"name": "version"},
            "status": {
                "history": history,
                "conditions": [{"type": "Progressing", "status": progressing}]
            }
        }))
        .expect("cv")
    }

    fn cv() -> ClusterVersion {
        cv_with(
            json!([
                {"state": "Partial", "version": "4.2", "image": "img-b"},
                {"state": "Completed", "version": "4.1", "image": "img-a"}
            ]),
            "True",
        )
    }

    fn mc(name: &str, version: Option<&str>) -> MachineConfig {
        let mut annotations = serde_json::Map::new();
        if let Some(v) = version {
            annotations.insert(
                format!("{MCO_PREFIX}release-image-version"),
                Value::String(v.to_string()),
            );
        }
        serde_json::from_value(json!({"metadata": {"name": name, "annotations": annotations}}))
            .expect("mc")
    }

    fn mcs() -> Vec<MachineConfig> {
        vec![
            mc(OLD, Some("4.1")),
            mc(NEW, Some("4.2")),
            mc(M_OLD, Some("4.1")),
            mc(M_NEW, Some("4.2")),
            mc("rendered-worker-unannotated", None),
        ]
    }

    fn pool_json(name: &str, config: &str, selector: Value, paused: bool) -> MachineConfigPool {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"nodeSelector": selector, "paused": paused, "configuration": {"name": config}}
        }))
        .expect("pool")
    }

    fn label_selector(label: &str) -> Value {
        json!({"matchLabels": {label: ""}})
    }

    fn pools(worker_paused: bool) -> Vec<MachineConfigPool> {
        vec![
            pool_json("worker", NEW, label_selector(WORKER_LABEL), worker_paused),
            pool_json("master", M_NEW, label_selector(MASTER_LABEL), false),
        ]
    }

    fn ctx() -> NodeContext {
        NodeContext::new(Some(&cv()), &pools(false), &mcs())
    }

    /// A worker node with MCO annotations (`key` without the prefix), Ready=True.
    fn node(name: &str, ann: &[(&str, &str)]) -> Node {
        let annotations: BTreeMap<String, String> = ann
            .iter()
            .map(|(k, v)| (format!("{MCO_PREFIX}{k}"), v.to_string()))
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {WORKER_LABEL: ""}, "annotations": annotations},
            "status": {"conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2023-01-01T00:00:00Z"},
                {"type": "DiskPressure", "status": "False"},
                {"type": "NetworkUnavailable", "status": "False"}
            ]}
        }))
        .expect("node")
    }

    fn conditions(mut n: Node, conds: Value) -> Node {
        n.status.conditions = serde_json::from_value(conds).expect("conditions");
        n
    }

    fn cordoned(mut n: Node) -> Node {
        n.spec.unschedulable = true;
        n
    }

    fn in_master(mut n: Node) -> Node {
        n.metadata.labels = Some([(MASTER_LABEL.to_string(), String::new())].into());
        n
    }

    fn without(mut n: Node, keys: &[&str]) -> Node {
        if let Some(a) = n.metadata.annotations.as_mut() {
            for k in keys {
                a.remove(&format!("{MCO_PREFIX}{k}"));
            }
        }
        n
    }

    fn pending(name: &str) -> Node {
        node(
            name,
            &[
                ("currentConfig", OLD),
                ("desiredConfig", OLD),
                ("state", "Done"),
                ("desiredDrain", "uncordon-rendered-worker-old"),
                ("lastAppliedDrain", "uncordon-rendered-worker-old"),
            ],
        )
    }

    fn draining(name: &str) -> Node {
        cordoned(node(
            name,
            &[
                ("currentConfig", OLD),
                ("desiredConfig", NEW),
                ("state", "Working"),
                ("desiredDrain", "drain-rendered-worker-new"),
                ("lastAppliedDrain", "uncordon-rendered-worker-old"),
            ],
        ))
    }

    fn updating(name: &str, state: &str) -> Node {
        cordoned(node(
            name,
            &[
                ("currentConfig", OLD),
                ("desiredConfig", NEW),
                ("state", state),
                ("desiredDrain", "drain-rendered-worker-new"),
                ("lastAppliedDrain", "drain-rendered-worker-new"),
            ],
        ))
    }

    fn updated(name: &str) -> Node {
        node(
            name,
            &[
                ("currentConfig", NEW),
                ("desiredConfig", NEW),
                ("state", "Done"),
                ("desiredDrain", "uncordon-rendered-worker-new"),
                ("lastAppliedDrain", "uncordon-rendered-worker-new"),
            ],
        )
    }

    fn assess(n: &Node) -> NodeAssessment {
        assess_with(&ctx(), n)
    }

    fn assess_with(ctx: &NodeContext, n: &Node) -> NodeAssessment {
        let a = assess_node(ctx, n, now()).expect("node in a pool");
        check_invariants(&a);
        a
    }

    /// Contract invariants of every node assessment.
    fn check_invariants(a: &NodeAssessment) {
        let p = a.progress.progress.as_ref().expect("progress");
        let updating = &p.conditions[0];
        assert_eq!(updating.type_, "Updating");
        assert_eq!(updating.reason, a.phase.as_str());
        assert_eq!(
            a.is_updated,
            updating.status == ConditionStatus::False && a.phase == NodePhase::Updated,
            "isUpdated ⇔ Updating=False ∧ phase Updated"
        );
        assert_eq!(p.conditions[1].type_, "Available");
        assert_eq!(
            p.conditions[1].status == ConditionStatus::False,
            a.is_unavailable
        );
        assert_eq!(p.conditions[2].type_, "Degraded");
        assert_eq!(
            p.conditions[2].status == ConditionStatus::True,
            a.is_degraded
        );
        assert_eq!(a.progress.type_, InsightType::Progress);
        assert_eq!(a.progress.resource.kind, "Node");
        assert_eq!(a.progress.resource.group, "");
        for h in &a.health {
            assert_eq!(h.resource, a.progress.resource);
            assert_eq!(h.scope, a.progress.scope);
        }
    }

    /// (assessment, phase, version, estimate, message).
    fn row(a: &NodeAssessment) -> (Assessment, NodePhase, String, String, String) {
        let p = a.progress.progress.as_ref().expect("progress");
        (
            p.assessment,
            p.phase.expect("phase"),
            p.version.as_ref().expect("version").current.clone(),
            p.estimate.clone(),
            p.message.clone(),
        )
    }

    fn r(
        a: Assessment,
        p: NodePhase,
        v: &str,
        est: &str,
        msg: &str,
    ) -> (Assessment, NodePhase, String, String, String) {
        (a, p, v.into(), est.into(), msg.into())
    }

    fn sources(a: &NodeAssessment) -> Vec<&str> {
        a.health
            .iter()
            .filter_map(|h| h.health.as_ref().map(|h| h.source.as_str()))
            .collect()
    }

    // ---- G.23–G.35: single nodes -----------------------------------------------------------

    #[test]
    fn g23_pending_node() {
        let a = assess(&pending("a"));
        assert_eq!(
            row(&a),
            r(Assessment::Outdated, NodePhase::Pending, "4.1", "?", "")
        );
        assert!(a.health.is_empty());
        assert!(!a.is_updating && !a.is_updated && !a.is_unavailable);
    }

    #[test]
    fn g24_draining_node() {
        let a = assess(&draining("a"));
        assert_eq!(
            row(&a),
            r(
                Assessment::Progressing,
                NodePhase::Draining,
                "4.1",
                "+10m",
                ""
            )
        );
        assert!(a.is_unavailable, "cordoned");
        assert!(a.health.is_empty());
    }

    #[test]
    fn g25_drain_applied_but_mcd_still_done_while_updating_is_draining() {
        let a = assess(&updating("a", "Done"));
        assert_eq!(a.phase, NodePhase::Draining);
        assert_eq!(a.assessment, Assessment::Progressing);
        assert_eq!(row(&a).3, "+10m");
    }

    #[test]
    fn g26_updating_and_rebooting() {
        assert_eq!(
            row(&assess(&updating("a", "Working"))),
            r(
                Assessment::Progressing,
                NodePhase::Updating,
                "4.1",
                "+5m",
                ""
            )
        );
        assert_eq!(
            row(&assess(&updating("a", "Rebooting"))),
            r(
                Assessment::Progressing,
                NodePhase::Rebooting,
                "4.1",
                "+5m",
                ""
            )
        );
        // Any other state while updating reads as Updating (C.7).
        assert_eq!(assess(&updating("a", "Weird")).phase, NodePhase::Updating);
        assert_eq!(
            assess(&without(updating("a", "x"), &["state"])).phase,
            NodePhase::Updating
        );
    }

    #[test]
    fn g27_updated_node() {
        let a = assess(&updated("a"));
        assert_eq!(
            row(&a),
            r(Assessment::Completed, NodePhase::Updated, "4.2", "-", "")
        );
        assert!(a.is_updated && !a.is_updating && a.health.is_empty());
    }

    #[test]
    fn g28_degraded_while_draining() {
        let mut n = draining("a");
        n.metadata
            .annotations
            .as_mut()
            .expect("annotations")
            .extend([
                (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
                (
                    format!("{MCO_PREFIX}reason"),
                    "PDB prohibits draining".to_string(),
                ),
            ]);
        let a = assess(&n);
        assert_eq!(
            row(&a),
            r(
                Assessment::Degraded,
                NodePhase::Draining,
                "4.1",
                "?",
                "PDB prohibits draining"
            )
        );
        assert_eq!(sources(&a), [SOURCE_NODE_DEGRADED]);
        let h = a.health[0].health.as_ref().expect("health");
        assert_eq!(h.impact.level, ImpactLevel::Error);
        assert_eq!(h.impact.type_, ImpactType::UpdateStalled);
        assert_eq!(h.impact.summary, "Node a is degraded");
        assert_eq!(h.impact.description, "PDB prohibits draining");
        assert_eq!(h.remediation.reference, MCO_REFERENCE);
        assert_eq!(h.started_at, None);
    }

    #[test]
    fn g29_updated_node_missing_desired_config() {
        let a = assess(&without(updated("a"), &["desiredConfig"]));
        assert_eq!(
            row(&a),
            r(
                Assessment::Unavailable,
                NodePhase::Updated,
                "4.2",
                "-",
                REASON_MCD_PROCESSING
            )
        );
        assert!(a.health.is_empty());
    }

    #[test]
    fn g30_missing_current_config() {
        let a = assess(&without(updated("a"), &["currentConfig"]));
        assert_eq!(
            row(&a),
            r(
                Assessment::Unavailable,
                NodePhase::Pending,
                "",
                "?",
                REASON_MCD_PROCESSING
            )
        );
    }

    #[test]
    fn g31_draining_without_drain_annotations_is_updating() {
        for key in ["desiredDrain", "lastAppliedDrain"] {
            let a = assess(&without(draining("a"), &[key]));
            assert_eq!(
                row(&a),
                r(
                    Assessment::Progressing,
                    NodePhase::Updating,
                    "4.1",
                    "+5m",
                    ""
                ),
                "{key}"
            );
        }
        // An uncordon request differing from the applied one is not a drain.
        let mut n = draining("a");
        n.metadata
            .annotations
            .as_mut()
            .expect("annotations")
            .insert(
                format!("{MCO_PREFIX}desiredDrain"),
                "uncordon-rendered-worker-new".into(),
            );
        assert_eq!(assess(&n).phase, NodePhase::Updating);
    }

    #[test]
    fn g32_missing_state() {
        let a = assess(&without(pending("a"), &["state"]));
        assert_eq!(
            row(&a),
            r(
                Assessment::Unavailable,
                NodePhase::Pending,
                "4.1",
                "?",
                REASON_MCD_PROCESSING
            )
        );
        let a = assess(&without(draining("a"), &["state"]));
        assert_eq!(a.phase, NodePhase::Draining);
        assert_eq!(a.assessment, Assessment::Progressing);
        let a = assess(&without(updated("a"), &["state"]));
        assert_eq!(
            row(&a),
            r(
                Assessment::Unavailable,
                NodePhase::Updated,
                "4.2",
                "-",
                REASON_MCD_PROCESSING
            )
        );
    }

    #[test]
    fn g33_updating_node_missing_two_annotations() {
        for keys in [
            ["desiredConfig", "state"],
            ["currentConfig", "state"],
            ["currentConfig", "desiredConfig"],
        ] {
            let a = assess(&without(updating("a", "Working"), &keys));
            let version = if keys.contains(&"currentConfig") {
                ""
            } else {
                "4.1"
            };
            assert_eq!(
                row(&a),
                r(
                    Assessment::Unavailable,
                    NodePhase::Pending,
                    version,
                    "?",
                    REASON_UNSCHEDULABLE
                ),
                "{keys:?}"
            );
            assert!(a.health.is_empty(), "unschedulable alone is not serious");
        }
    }

    #[test]
    fn g34_node_without_mcd_annotations() {
        let a = assess(&node("a", &[]));
        assert_eq!(
            row(&a),
            r(
                Assessment::Unavailable,
                NodePhase::Pending,
                "",
                "?",
                REASON_MCD_PROCESSING
            )
        );
        assert!(a.health.is_empty());
    }

    #[test]
    fn g35_updated_but_unschedulable() {
        let a = assess(&cordoned(updated("a")));
        assert_eq!(
            row(&a),
            r(
                Assessment::Unavailable,
                NodePhase::Updated,
                "4.2",
                "-",
                REASON_UNSCHEDULABLE
            )
        );
        assert!(a.health.is_empty());
    }

    // ---- G.36–G.40: ordering and pools -----------------------------------------------------

    #[test]
    fn g36_sort_order() {
        let mut degraded = pending("d");
        degraded
            .metadata
            .annotations
            .as_mut()
            .expect("ann")
            .extend([
                (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
                (format!("{MCO_PREFIX}reason"), "boom".to_string()),
            ]);
        let nodes = [
            updated("a-completed"),
            pending("b-outdated"),
            updating("c-updating", "Working"),
            draining("z-draining"),
            updating("b-rebooting", "Rebooting"),
            without(pending("y-unavailable"), &["state"]),
            cordoned(updated("x-unavailable-updated")),
            degraded,
        ];
        let mut insights: Vec<UpdateInsightStatus> =
            nodes.iter().map(|n| assess(n).progress).collect();
        insights.sort_by(compare_node_insights);
        let names: Vec<&str> = insights.iter().map(|i| i.resource.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "d",
                "y-unavailable",
                "x-unavailable-updated",
                "z-draining",
                "c-updating",
                "b-rebooting",
                "b-outdated",
                "a-completed"
            ]
        );
        assert!(node_sort_key(&insights[0]) < node_sort_key(&insights[1]));
    }

    #[test]
    fn g37_unavailable_insight_scope_and_start() {
        let since = ago(600);
        let not_ready = json!([{"type": "Ready", "status": "False", "message": "kubelet down", "lastTransitionTime": since}]);
        let worker = assess(&conditions(pending("worker-1"), not_ready.clone()));
        let master_node = in_master(node(
            "master-1",
            &[
                ("currentConfig", M_OLD),
                ("desiredConfig", M_OLD),
                ("state", "Done"),
            ],
        ));
        let master = assess(&conditions(master_node, not_ready));
        for (a, scope, pool) in [
            (&worker, ScopeType::WorkerPool, "worker"),
            (&master, ScopeType::ControlPlane, "master"),
        ] {
            assert_eq!(a.assessment, Assessment::Unavailable);
            assert_eq!(a.progress.scope.type_, scope);
            assert_eq!(a.progress.scope.pool.as_deref(), Some(pool));
            assert_eq!(sources(a), [SOURCE_NODE_UNAVAILABLE]);
            let h = a.health[0].health.as_ref().expect("health");
            assert_eq!(h.started_at, Some(ts(&since)));
            assert_eq!(h.impact.level, ImpactLevel::Warning);
            assert_eq!(h.impact.type_, ImpactType::UpdateSpeed);
            assert_eq!(h.impact.summary, format!("Node {} is not ready", a.name));
            assert_eq!(
                h.impact.description,
                r#"Node has a Ready!=True condition with Reason "Not ready" and message "kubelet down""#
            );
            assert_eq!(h.remediation.reference, MCO_REFERENCE);
            assert!(h.related.is_empty());
            assert_eq!(a.health[0].scope.type_, scope);
        }
        assert!(master.is_master && !worker.is_master);
    }

    fn pool_of(nodes: &[Node], ctx: &NodeContext, name: &str) -> PoolAssessment {
        let assessed: Vec<NodeAssessment> = nodes
            .iter()
            .filter_map(|n| assess_node(ctx, n, now()))
            .collect();
        aggregate_pool(ctx, ctx.pool(name).expect("pool"), &assessed)
    }

    #[test]
    fn g38_updating_unavailable_plus_completed() {
        let p = pool_of(&[updating("a", "Working"), updated("b")], &ctx(), "worker");
        assert_eq!(p.status.assessment, Assessment::Progressing);
        assert_eq!(p.status.completion_percent, 50);
        let n = &p.status.nodes;
        assert_eq!(
            (n.total, n.updated, n.available, n.progressing, n.outdated),
            (2, 1, 1, 1, 1)
        );
        assert_eq!(p.status.conditions[0].type_, "Updating");
        assert_eq!(p.status.conditions[0].status, ConditionStatus::True);
        assert_eq!(p.status.conditions[1].type_, "Healthy");
        assert_eq!(p.status.conditions[1].status, ConditionStatus::True);
    }

    #[test]
    fn g39_one_degraded_draining_node() {
        let mut n = draining("a");
        n.metadata.annotations.as_mut().expect("ann").extend([
            (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
            (format!("{MCO_PREFIX}reason"), "PDB".to_string()),
        ]);
        let p = pool_of(&[n], &ctx(), "worker");
        assert_eq!(p.status.assessment, Assessment::Degraded);
        let c = &p.status.nodes;
        assert_eq!(
            (
                c.draining,
                c.outdated,
                c.progressing,
                c.available,
                c.degraded
            ),
            (1, 1, 0, 0, 1)
        );
        assert_eq!(p.status.health_insights.error, 1);
        assert_eq!(p.status.conditions[1].status, ConditionStatus::False);
        assert_eq!(p.status.conditions[1].reason, "ErrorInsights");
    }

    #[test]
    fn g40_completed_paused_and_pending_pools() {
        let p = pool_of(&[updated("a"), updated("b")], &ctx(), "worker");
        assert_eq!(p.status.assessment, Assessment::Completed);
        assert_eq!(p.status.completion_percent, 100);
        assert_eq!(p.status.conditions[0].status, ConditionStatus::False);

        let paused_ctx = NodeContext::new(Some(&cv()), &pools(true), &mcs());
        let p = pool_of(&[pending("a")], &paused_ctx, "worker");
        let a = assess_with(&paused_ctx, &pending("a"));
        assert_eq!(
            row(&a),
            r(Assessment::Excluded, NodePhase::Paused, "4.1", "-", "")
        );
        assert_eq!(p.status.assessment, Assessment::Excluded);
        assert!(p.status.paused);
        assert_eq!((p.status.nodes.excluded, p.status.nodes.outdated), (1, 1));
        let d8: Vec<_> = p.insights.iter().filter(|i| i.health.is_some()).collect();
        assert_eq!(d8.len(), 1);
        let i = d8[0];
        assert_eq!(i.scope.type_, ScopeType::WorkerPool);
        assert_eq!(i.scope.pool.as_deref(), Some("worker"));
        assert_eq!(i.resource.kind, "MachineConfigPool");
        assert_eq!(i.resource.group, "machineconfiguration.openshift.io");
        let h = i.health.as_ref().expect("health");
        assert_eq!(h.source, SOURCE_POOL_PAUSED);
        assert_eq!(h.impact.level, ImpactLevel::Warning);
        assert_eq!(h.impact.type_, ImpactType::UpdateStalled);
        assert_eq!(
            h.impact.summary,
            "Outdated nodes in a paused pool 'worker' will not be updated"
        );
        assert_eq!(h.impact.description, PAUSED_POOL_DESCRIPTION);
        assert_eq!(h.remediation.reference, PAUSED_POOL_REFERENCE);
        assert_eq!(h.started_at, None);
        assert_eq!(p.status.health_insights.warning, 1);
        // Last in the pool's insights.
        assert!(p.insights.last().is_some_and(|l| l.health.is_some()));

        // A paused pool whose nodes are all updated has no D.8.
        let p = pool_of(&[updated("a")], &paused_ctx, "worker");
        assert!(p.insights.iter().all(|i| i.health.is_none()));

        let p = pool_of(&[pending("a"), pending("b")], &ctx(), "worker");
        assert_eq!(p.status.assessment, Assessment::Pending);
        assert_eq!(p.status.nodes.pending, 2);
        assert!(p.insights.iter().all(|i| i.health.is_none()));
    }

    // ---- G.41–G.44: availability details ----------------------------------------------------

    #[test]
    fn g41_unavailable_since_is_the_earliest_known_ltt() {
        let n = conditions(
            pending("a"),
            json!([
                {"type": "Ready", "status": "False", "lastTransitionTime": ago(100)},
                {"type": "DiskPressure", "status": "True", "lastTransitionTime": ago(300)},
                {"type": "NetworkUnavailable", "status": "True"}
            ]),
        );
        let pool = PoolContext::new(&pools(false)[0]);
        let av = Availability::of(&n, &pool);
        assert_eq!(av.since(), Some(ts(&ago(300))));
        let av = Availability::of(&cordoned(updated("a")), &pool);
        assert_eq!(av.since(), None);
        let a = assess(&cordoned(updated("a")));
        let p = a.progress.progress.as_ref().expect("progress");
        assert_eq!(p.conditions[1].last_transition_time, None);
    }

    #[test]
    fn g42_texts_are_joined() {
        let n = cordoned(conditions(
            pending("node-name"),
            json!([
                {"type": "Ready", "status": "Unknown", "message": "kubelet stopped posting"},
                {"type": "MemoryPressure", "status": "True"},
                {"type": "DiskPressure", "status": "True", "message": "disk pressure"},
                {"type": "NetworkUnavailable", "status": "Unknown", "message": "no \"route\""}
            ]),
        ));
        let pool = PoolContext::new(&pools(false)[0]);
        let av = Availability::of(&n, &pool);
        assert!(av.is_unavailable);
        assert_eq!(
            av.reason(),
            "Not ready | Disk pressure | Network unavailable | Node is marked unschedulable"
        );
        assert_eq!(
            av.message("node-name"),
            "Node node-name is not ready | Node node-name has disk pressure | Node node-name has unavailable network | Node is marked unschedulable"
        );
        assert_eq!(
            av.description(),
            r#"Node has a Ready!=True condition with Reason "Not ready" and message "kubelet stopped posting" | Node has a DiskPressure!=False condition with Reason "Disk pressure" and message "disk pressure" | Node has a NetworkUnavailable!=False condition with Reason "Network unavailable" and message "no \"route\"" | Node is marked unschedulable"#
        );
        // The node table shows the raw reasons; the Available condition carries them too.
        let a = assess(&n);
        assert_eq!(row(&a).4, av.reason());
        let p = a.progress.progress.as_ref().expect("progress");
        assert_eq!(p.conditions[1].reason, "Unavailable");
        assert_eq!(p.conditions[1].message, av.reason());
    }

    #[test]
    fn g43_seriously_unavailable() {
        let av = |bad: Vec<BadCondition>| Availability {
            bad,
            is_unavailable: true,
        };
        let t = |secs| Some(ts(&ago(secs)));
        let disk = |secs| BadCondition::DiskPressure(String::new(), t(secs));
        let net = |secs| BadCondition::NetworkUnavailable(String::new(), t(secs));
        let ready = |secs| BadCondition::NotReady(String::new(), t(secs));
        let cases = [
            (vec![BadCondition::UnexpectedImage("x".into())], true),
            (vec![disk(120)], true),
            (vec![disk(30)], false),
            (vec![disk(30), net(120)], true),
            (vec![net(59)], false),
            (vec![net(60)], true),
            (vec![ready(240)], false),
            (vec![ready(299)], false),
            (vec![ready(300)], true),
            (vec![ready(360)], true),
            (vec![BadCondition::NotReady(String::new(), None)], true),
            (vec![BadCondition::Unschedulable], false),
            (vec![BadCondition::McdProcessing], false),
            (vec![BadCondition::Unschedulable, ready(10)], false),
            (vec![], false),
        ];
        for (bad, serious) in cases {
            assert_eq!(
                av(bad.clone()).seriously_unavailable(now()),
                serious,
                "{bad:?}"
            );
        }
        // When it flips by time alone.
        assert_eq!(av(vec![disk(30)]).serious_at(now()), t(-30));
        assert_eq!(av(vec![ready(180), disk(50)]).serious_at(now()), t(-10));
        assert_eq!(av(vec![ready(400)]).serious_at(now()), None);
        assert_eq!(
            av(vec![BadCondition::Unschedulable]).serious_at(now()),
            None
        );
    }

    #[test]
    fn g44_check_node_ready() {
        let n = |conds: Value, unschedulable: bool| {
            let mut n: Node = serde_json::from_value(json!({
                "metadata": {"name": "n"},
                "status": {"conditions": conds}
            }))
            .expect("node");
            n.spec.unschedulable = unschedulable;
            n
        };
        assert_eq!(check_node_ready(&Node::default()), Ok(()));
        assert_eq!(check_node_ready(&n(json!([]), false)), Ok(()));
        assert_eq!(
            check_node_ready(&n(json!([]), true)),
            Err("node n is reporting Unschedulable".into())
        );
        assert_eq!(
            check_node_ready(&n(
                json!([{"type": "DiskPressure", "status": "True"}]),
                false
            )),
            Err("node n is reporting OutOfDisk=True".into())
        );
        assert_eq!(
            check_node_ready(&n(json!([{"type": "Ready", "status": "False"}]), true)),
            Err("node n is reporting NotReady=False".into())
        );
        assert_eq!(
            check_node_ready(&n(
                json!([
                    {"type": "NetworkUnavailable", "status": "True"},
                    {"type": "Ready", "status": "False"}
                ]),
                false
            )),
            Err("node n is reporting NetworkUnavailable=True".into())
        );
    }

    // ---- USC G.56–G.58 that apply ------------------------------------------------------------

    #[test]
    fn g56_available_condition() {
        let a = assess(&node("a", &[]));
        let c = &a.progress.progress.as_ref().expect("progress").conditions[1];
        assert_eq!(c.status, ConditionStatus::False);
        assert_eq!(c.reason, "Unavailable");
        assert_eq!(c.message, REASON_MCD_PROCESSING);
        assert_eq!(c.last_transition_time, None);

        let since = ago(180);
        let n = conditions(
            pending("a"),
            json!([{"type": "Ready", "status": "False", "lastTransitionTime": since}]),
        );
        let a = assess(&n);
        let c = &a.progress.progress.as_ref().expect("progress").conditions[1];
        assert_eq!(c.status, ConditionStatus::False);
        assert_eq!(c.message, "Not ready");
        assert_eq!(c.last_transition_time, Some(ts(&since)));
        assert!(a.health.is_empty(), "3 min is below the 5 min threshold");
        assert!(!a.seriously_unavailable);
        // Time alone makes it serious in 2 minutes.
        assert_eq!(
            node_requeue_after(&ctx(), &n, now()),
            Some(SignedDuration::from_secs(120))
        );
        assert_eq!(a.requeue_after(now()), Some(SignedDuration::from_secs(120)));
        let later = now()
            .checked_add(SignedDuration::from_secs(120))
            .expect("in range");
        let a = assess_node(&ctx(), &n, later).expect("in pool");
        assert_eq!(sources(&a), [SOURCE_NODE_UNAVAILABLE]);
        assert_eq!(node_requeue_after(&ctx(), &n, later), None);

        // Healthy node: Available=True/AsExpected.
        let a = assess(&updated("a"));
        let c = &a.progress.progress.as_ref().expect("progress").conditions[1];
        assert_eq!(
            (c.status, c.reason.as_str()),
            (ConditionStatus::True, "AsExpected")
        );
        assert_eq!(node_requeue_after(&ctx(), &updated("a"), now()), None);
    }

    #[test]
    fn g57_degraded_node_not_updating() {
        let mut n = pending("a");
        n.metadata.annotations.as_mut().expect("ann").extend([
            (format!("{MCO_PREFIX}state"), "Unreconcilable".to_string()),
            (format!("{MCO_PREFIX}reason"), "bad config".to_string()),
        ]);
        let a = assess(&n);
        assert_eq!(
            row(&a),
            r(
                Assessment::Degraded,
                NodePhase::Pending,
                "4.1",
                "?",
                "bad config"
            )
        );
        let p = a.progress.progress.as_ref().expect("progress");
        assert_eq!(
            (p.conditions[0].status, p.conditions[0].reason.as_str()),
            (ConditionStatus::False, "Pending")
        );
        assert_eq!(p.conditions[2].status, ConditionStatus::True);
        assert_eq!(p.conditions[2].reason, "Degraded");
        assert_eq!(p.conditions[2].message, "bad config");
        assert_eq!(sources(&a), [SOURCE_NODE_DEGRADED]);
        // Degraded state makes the MCD "terminal": the node is available.
        assert!(!a.is_unavailable);

        // Degraded without a reason: the D.7 insight is incomplete and dropped (D.0).
        let n = without(n, &["reason"]);
        let a = assess(&n);
        assert!(a.is_degraded && a.health.is_empty());
        // Degraded state without desiredConfig is not degraded (C.5).
        let a = assess(&without(n, &["desiredConfig"]));
        assert!(!a.is_degraded);
    }

    #[test]
    fn g58_membership_and_invalid_selectors() {
        let mut lonely = pending("a");
        lonely.metadata.labels = None;
        assert!(assess_node(&ctx(), &lonely, now()).is_none());
        assert!(node_requeue_after(&ctx(), &lonely, now()).is_none());

        let mut both = pending("b");
        both.metadata.labels = Some(
            [
                (WORKER_LABEL.to_string(), String::new()),
                ("infra".to_string(), String::new()),
                ("gpu".to_string(), String::new()),
            ]
            .into(),
        );
        let mut ps = pools(false);
        ps.push(pool_json("infra", NEW, label_selector("infra"), false));
        ps.push(pool_json("gpu", NEW, label_selector("gpu"), false));
        let c = NodeContext::new(Some(&cv()), &ps, &mcs());
        assert_eq!(assess_with(&c, &both).pool, "gpu", "custom pools by name");
        let names: Vec<&str> = c.pools().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["master", "worker", "gpu", "infra"]);

        // Master wins over everything.
        let mut m = both.clone();
        m.metadata
            .labels
            .as_mut()
            .expect("labels")
            .insert(MASTER_LABEL.into(), String::new());
        let a = assess_with(&c, &m);
        assert_eq!(a.pool, "master");
        assert_eq!(a.progress.scope.type_, ScopeType::ControlPlane);

        // Invalid or missing selectors select nothing.
        let mut ps = pools(false);
        ps.push(pool_json(
            "gpu",
            NEW,
            json!({"matchExpressions": [{"key": "gpu", "operator": "In", "values": []}]}),
            false,
        ));
        ps.push(pool_json(
            "infra",
            NEW,
            json!({"matchExpressions": [{"key": "infra", "operator": "Exists", "values": ["x"]}]}),
            false,
        ));
        let mut no_selector = pool_json("zzz", NEW, Value::Null, false);
        no_selector.spec.node_selector = None;
        ps.push(no_selector);
        let c = NodeContext::new(Some(&cv()), &ps, &mcs());
        assert_eq!(assess_with(&c, &both).pool, "worker");
        let mut only_custom = both.clone();
        only_custom.metadata.labels = Some([("gpu".to_string(), String::new())].into());
        assert!(assess_node(&c, &only_custom, now()).is_none());
        // A valid matchExpressions selector works.
        let mut ps = pools(false);
        ps.push(pool_json(
            "gpu",
            NEW,
            json!({"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}),
            false,
        ));
        let c = NodeContext::new(Some(&cv()), &ps, &mcs());
        assert_eq!(assess_with(&c, &only_custom).pool, "gpu");
    }

    // ---- Further edge cases ------------------------------------------------------------------

    #[test]
    fn no_cluster_version_means_nothing_is_updated_or_updating() {
        let c = NodeContext::new(None, &pools(false), &mcs());
        assert_eq!(c.target_version, "");
        for n in [updated("a"), updating("b", "Working"), draining("c")] {
            let a = assess_with(&c, &n);
            assert!(!a.is_updated && !a.is_updating, "{}", a.name);
            assert_eq!(
                a.progress
                    .progress
                    .as_ref()
                    .expect("p")
                    .version
                    .as_ref()
                    .expect("v")
                    .target,
                ""
            );
        }
        // Empty history too.
        let c = NodeContext::new(Some(&cv_with(json!([]), "True")), &pools(false), &mcs());
        assert!(!assess_with(&c, &updated("a")).is_updated);
    }

    #[test]
    fn unknown_machine_configs_and_malformed_annotations() {
        let n = node(
            "a",
            &[
                ("currentConfig", "rendered-worker-unannotated"),
                ("desiredConfig", "does-not-exist"),
                ("state", ""),
                ("desiredDrain", "drain"),
                ("lastAppliedDrain", ""),
            ],
        );
        let a = assess(&n);
        assert_eq!(a.current_version, "");
        assert_eq!(a.phase, NodePhase::Pending);
        assert_eq!(a.assessment, Assessment::Unavailable);
        // Node without conditions or annotations at all, and without a name.
        let bare: Node = serde_json::from_value(json!({
            "metadata": {"name": "bare", "labels": {WORKER_LABEL: ""}}
        }))
        .expect("node");
        assert_eq!(assess(&bare).assessment, Assessment::Unavailable);
        let mut unnamed = bare.clone();
        unnamed.metadata.name = None;
        assert!(assess_node(&ctx(), &unnamed, now()).is_none());
        // Pool without configuration: nothing is "the pool target" unless desired is absent too.
        let mut ps = pools(false);
        ps[0].spec.configuration.name = String::new();
        let c = NodeContext::new(Some(&cv()), &ps, &mcs());
        assert!(!assess_with(&c, &updating("u", "Working")).is_updating);
        // Unnamed pools and duplicated pools do not break anything.
        let mut ps = pools(false);
        ps.push(pool_json("", NEW, json!({}), false));
        ps.push(pool_json("worker", OLD, label_selector("nothing"), true));
        let c = NodeContext::new(Some(&cv()), &ps, &mcs());
        assert_eq!(c.pools().len(), 2);
        assert_eq!(
            c.pool("worker").map(|p| p.configuration.as_str()),
            Some(NEW)
        );
    }

    #[test]
    fn multi_arch_migration() {
        let history = json!([
            {"state": "Partial", "version": "4.2", "image": "img-multi"},
            {"state": "Completed", "version": "4.2", "image": "img-amd64"}
        ]);
        let c = NodeContext::new(
            Some(&cv_with(history.clone(), "True")),
            &pools(false),
            &mcs(),
        );
        assert!(c.multi_arch_migration);
        // Same version, new config: not updated until current == desired == pool target.
        let mut ms = mcs();
        ms.push(mc("rendered-worker-multi", Some("4.2")));
        let mut ps = pools(false);
        ps[0].spec.configuration.name = "rendered-worker-multi".into();
        let c = NodeContext::new(Some(&cv_with(history.clone(), "True")), &ps, &ms);
        let n = node(
            "a",
            &[
                ("currentConfig", NEW),
                ("desiredConfig", "rendered-worker-multi"),
                ("state", "Working"),
            ],
        );
        let a = assess_with(&c, &n);
        assert!(!a.is_updated && a.is_updating);
        assert_eq!(a.phase, NodePhase::Updating);
        let done = node(
            "b",
            &[
                ("currentConfig", "rendered-worker-multi"),
                ("desiredConfig", "rendered-worker-multi"),
                ("state", "Done"),
            ],
        );
        assert!(assess_with(&c, &done).is_updated);
        // Without desiredConfig the version alone decides.
        assert!(assess_with(&c, &without(n.clone(), &["desiredConfig"])).is_updated);
        // Not progressing: no migration, the version alone decides.
        let c = NodeContext::new(Some(&cv_with(history, "False")), &ps, &ms);
        assert!(!c.multi_arch_migration);
        assert!(assess_with(&c, &n).is_updated);
    }

    #[test]
    fn layered_pools() {
        let layered = |image: &str| {
            let mut p = pools(false);
            p[0].metadata.labels =
                Some([(POOL_LAYERING_ENABLED.to_string(), String::new())].into());
            p[0].metadata.annotations = Some(
                [(
                    POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG.to_string(),
                    image.to_string(),
                )]
                .into(),
            );
            NodeContext::new(Some(&cv()), &p, &mcs())
        };
        let processing = |image: Option<&str>| {
            let mut ann = vec![("currentConfig", OLD), ("desiredConfig", OLD)];
            if let Some(i) = image {
                ann.push(("desiredImage", i));
            }
            node("a", &ann)
        };
        // Layered pool with an image: the node's desired image must be it.
        let c = layered("img-1");
        let a = assess_with(&c, &processing(Some("img-1")));
        assert!(a.is_unavailable);
        let a = assess_with(&c, &processing(Some("img-2")));
        assert!(
            !a.is_unavailable,
            "unexpected image makes the node available"
        );
        let pool = c.pool("worker").expect("pool");
        let av = Availability::of(&processing(Some("img-2")), pool);
        assert_eq!(
            av.bad.last().map(BadCondition::reason).as_deref(),
            Some(
                "Node has an unexpected annotation machineconfiguration.openshift.io/newestImageEquivalentConfig=img-1"
            )
        );
        // Layered label with an empty image, or no label: desired image must be absent or empty.
        for c in [layered(""), ctx()] {
            assert!(assess_with(&c, &processing(None)).is_unavailable);
            assert!(assess_with(&c, &processing(Some(""))).is_unavailable);
            assert!(!assess_with(&c, &processing(Some("img-1"))).is_unavailable);
        }
        // Image "done" needs both image annotations equal and non-empty.
        let mut done = updated("d");
        done.metadata.annotations.as_mut().expect("ann").extend([
            (format!("{MCO_PREFIX}currentImage"), "img-1".to_string()),
            (format!("{MCO_PREFIX}desiredImage"), "img-1".to_string()),
        ]);
        assert!(!assess_with(&layered("img-1"), &done).is_unavailable);
        let half = without(done, &["currentImage"]);
        assert!(assess_with(&layered("img-1"), &half).is_unavailable);
    }

    #[test]
    fn unavailable_and_degraded_node_gets_both_insights() {
        let mut n = conditions(
            pending("node-xyz"),
            json!([{"type": "Ready", "status": "False", "lastTransitionTime": ago(3600)}]),
        );
        n.metadata.annotations.as_mut().expect("ann").extend([
            (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
            (format!("{MCO_PREFIX}reason"), "disk full".to_string()),
        ]);
        let a = assess(&n);
        assert_eq!(a.assessment, Assessment::Degraded);
        assert_eq!(row(&a).4, "disk full");
        assert_eq!(sources(&a), [SOURCE_NODE_UNAVAILABLE, SOURCE_NODE_DEGRADED]);
        let d6 = a.health[0].health.as_ref().expect("health");
        assert_eq!(d6.impact.summary, "Node node-xyz is not ready");
        assert_eq!(d6.impact.description, "disk full");
        assert_eq!(d6.started_at, Some(ts(&ago(3600))));
    }

    #[test]
    fn updating_unavailable_node_has_no_unavailable_insight() {
        let n = conditions(
            updating("a", "Rebooting"),
            json!([{"type": "Ready", "status": "False", "lastTransitionTime": ago(3600)}]),
        );
        let a = assess(&n);
        assert!(a.is_unavailable && a.is_updating && a.seriously_unavailable);
        assert_eq!(a.assessment, Assessment::Progressing);
        assert!(a.health.is_empty());
        assert_eq!(node_requeue_after(&ctx(), &n, now()), None);
    }

    #[test]
    fn long_texts_are_cut_to_the_schema() {
        let long_name = "n".repeat(253);
        let mut n = pending(&long_name);
        n.metadata.annotations.as_mut().expect("ann").extend([
            (format!("{MCO_PREFIX}state"), "Degraded".to_string()),
            (format!("{MCO_PREFIX}reason"), "é".repeat(5000)),
        ]);
        let a = assess(&n);
        let h = a.health[0].health.as_ref().expect("health");
        assert_eq!(h.impact.summary.chars().count(), 256);
        assert!(h.impact.summary.ends_with("..."));
        assert_eq!(h.impact.description.chars().count(), 4096);
        assert!(h.impact.description.ends_with("..."));
        let p = a.progress.progress.as_ref().expect("progress");
        assert_eq!(p.message.chars().count(), 4096);
        assert_eq!(p.conditions[2].message.chars().count(), 5000);
        assert_eq!(cut("abc".into(), 3), "abc");
        assert_eq!(cut("abcd".into(), 3), "...");
    }

    #[test]
    fn empty_pool_and_counts() {
        let mut ps = pools(false);
        ps.push(pool_json("zbeast", NEW, label_selector("zbeast"), false));
        let c = NodeContext::new(Some(&cv()), &ps, &mcs());
        let p = pool_of(&[updated("a")], &c, "zbeast");
        assert_eq!(p.status.assessment, Assessment::Empty);
        assert_eq!(p.status.completion_percent, 0);
        assert_eq!(p.status.nodes, NodeCounts::default());
        assert_eq!(p.status.target_version, "4.2");
        assert_eq!(p.status.resource.name, "zbeast");
        assert!(p.insights.is_empty());
        assert_eq!(
            p.status
                .conditions
                .iter()
                .map(|c| (c.type_.as_str(), c.status))
                .collect::<Vec<_>>(),
            [
                ("Updating", ConditionStatus::False),
                ("Healthy", ConditionStatus::True)
            ]
        );
    }

    #[test]
    fn completion_rounds_half_to_even() {
        assert_eq!(completion_percent(0, 0), 0);
        assert_eq!(completion_percent(1, 8), 12);
        assert_eq!(completion_percent(3, 8), 38);
        assert_eq!(completion_percent(22, 59), 37);
        assert_eq!(completion_percent(1, 2), 50);
        assert_eq!(completion_percent(3, 3), 100);
        assert_eq!(completion_percent(5, 3), 100);
    }

    #[test]
    fn go_quoting() {
        assert_eq!(go_quote("plain"), "\"plain\"");
        assert_eq!(
            go_quote("a\"b\\c\n\t\u{1}\u{7f}é\u{a0}"),
            "\"a\\\"b\\\\c\\n\\t\\x01\\x7fé\\u00a0\""
        );
    }

    #[test]
    fn assess_nodes_groups_pools_in_display_order() {
        let cvo = cv();
        let mut ps = pools(true);
        ps.push(pool_json("infra", NEW, label_selector("infra"), false));
        let ms = mcs();
        let mut infra = pending("infra-1");
        infra.metadata.labels = Some(
            [
                (WORKER_LABEL.to_string(), String::new()),
                ("infra".to_string(), String::new()),
            ]
            .into(),
        );
        let mut lonely = pending("lonely");
        lonely.metadata.labels = None;
        let nodes = vec![
            pending("w-2"),
            infra,
            lonely,
            in_master(node(
                "m-1",
                &[
                    ("currentConfig", M_NEW),
                    ("desiredConfig", M_NEW),
                    ("state", "Done"),
                ],
            )),
            updated("w-1"),
        ];
        let inputs = ClusterInputs {
            cluster_version: Some(&cvo),
            pools: &ps,
            machine_configs: &ms,
            nodes: &nodes,
            ..Default::default()
        };
        let out = assess_nodes(&inputs, now());
        let names: Vec<&str> = out.pools.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["master", "worker", "infra"]);
        let master = out.control_plane_pool().expect("master");
        assert_eq!(master.status.assessment, Assessment::Completed);
        assert_eq!(master.status.nodes.total, 1);
        let worker = out.pool("worker").expect("worker");
        assert_eq!(worker.status.nodes.total, 2);
        assert_eq!(worker.status.assessment, Assessment::Excluded);
        // Progress (C.9 order), then health (D.8 last).
        let kinds: Vec<(&str, &str)> = worker
            .insights
            .iter()
            .map(|i| (i.resource.kind.as_str(), i.resource.name.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("Node", "w-2"),
                ("Node", "w-1"),
                ("MachineConfigPool", "worker")
            ]
        );
        assert_eq!(out.pool("infra").expect("infra").status.nodes.total, 1);
    }
}
