//! C.4: why a node is not available.

use jiff::{SignedDuration, Timestamp};
use update_status_api::input::{
    NODE_CURRENT_CONFIG, NODE_CURRENT_IMAGE, NODE_DESIRED_CONFIG, NODE_DESIRED_IMAGE, NODE_STATE,
    Node, POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG,
};

use super::constants::{
    NOT_READY_GRACE, PRESSURE_GRACE, REASON_DISK_PRESSURE, REASON_MCD_PROCESSING,
    REASON_NETWORK_UNAVAILABLE, REASON_NOT_READY, REASON_UNSCHEDULABLE, STATE_DEGRADED, STATE_DONE,
    STATE_UNRECONCILABLE,
};
use super::context::PoolContext;
use crate::format::go_quote;

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
    pub(super) fn grace(&self) -> Option<SignedDuration> {
        match self {
            BadCondition::NotReady(..) => Some(NOT_READY_GRACE),
            BadCondition::DiskPressure(..) | BadCondition::NetworkUnavailable(..) => {
                Some(PRESSURE_GRACE)
            }
            _ => None,
        }
    }

    /// Unschedulable and MCD processing never make a node seriously unavailable.
    pub(super) fn ignorable_forever(&self) -> bool {
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

pub(super) fn join(parts: impl Iterator<Item = String>) -> String {
    parts.collect::<Vec<_>>().join(" | ")
}

/// C.4 step 4: the MCD is done with the node.
pub(super) fn node_is_done(node: &Node) -> bool {
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
pub(super) fn desired_image_matches_pool(
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
