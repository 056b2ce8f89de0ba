//! Where a node is in its update as far as timing goes ([`NodeStage`]), and when it was first
//! observed in each stage: the rule ([`stamp`]) that both the node's progress insight
//! ([`NodeTimeline`], carried from what our object already says) and the learned estimates'
//! nodes in flight ([`update_status_api::history::TrackedNode`]) follow, so that after a
//! restart the estimates resume a node's times from its insight.

use jiff::Timestamp;
use update_status_api::crd::NodeTimeline;
use update_status_api::input::{
    NODE_CURRENT_CONFIG, NODE_DESIRED_CONFIG, NODE_DESIRED_DRAIN, NODE_LAST_APPLIED_DRAIN,
    NODE_STATE,
};

use super::context::NodeContext;
use super::timed::TimedNode;

/// Where a node is in the update, as far as timing goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeStage {
    /// Not started (or not going to the target: nothing to time).
    Pending,
    /// Draining (C.6).
    Drain,
    /// Applying the new configuration and rebooting.
    Reboot,
    /// On the new configuration, not yet uncordoned and ready.
    Ready,
    /// Updated, uncordoned and ready.
    Finished,
}

/// A node's stage towards `target` (the ClusterVersion's `history[0].version`).
pub fn node_stage(ctx: &NodeContext, node: &impl TimedNode, target: &str) -> NodeStage {
    if target.is_empty() {
        return NodeStage::Pending;
    }
    let current = node.annotation(NODE_CURRENT_CONFIG).unwrap_or_default();
    let desired = node.annotation(NODE_DESIRED_CONFIG).unwrap_or_default();
    let version = |c: &str| ctx.machine_config_version(c).unwrap_or_default();
    if !current.is_empty()
        && version(current) == target
        && (desired.is_empty() || current == desired)
    {
        return if node.ready() && !node.unschedulable() {
            NodeStage::Finished
        } else {
            NodeStage::Ready
        };
    }
    if desired.is_empty() || current == desired || version(desired) != target {
        return NodeStage::Pending;
    }
    let want = node.annotation(NODE_DESIRED_DRAIN).unwrap_or_default();
    let applied = node.annotation(NODE_LAST_APPLIED_DRAIN).unwrap_or_default();
    if want.starts_with("drain") && want != applied {
        NodeStage::Drain
    } else {
        NodeStage::Reboot
    }
}

/// The machine-config daemon says the node is `Degraded` or `Unreconcilable`.
pub fn in_incident(node: &impl TimedNode) -> bool {
    matches!(
        node.annotation(NODE_STATE),
        Some("Degraded" | "Unreconcilable")
    )
}

/// The stage times of one node: first observed draining, rebooting (the drain ended) and on
/// the target configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamps {
    /// First observed draining.
    pub drain: Option<Timestamp>,
    /// First observed applying the configuration or rebooting.
    pub reboot: Option<Timestamp>,
    /// First observed on the target configuration.
    pub ready: Option<Timestamp>,
}

impl Stamps {
    /// The latest stage stamped (`Pending`: none).
    pub fn stage(&self) -> NodeStage {
        if self.ready.is_some() {
            NodeStage::Ready
        } else if self.reboot.is_some() {
            NodeStage::Reboot
        } else if self.drain.is_some() {
            NodeStage::Drain
        } else {
            NodeStage::Pending
        }
    }

    /// Observed in `stage` at `now`: the first observation of a stage stamps it, unless a later
    /// stage is stamped already; a node seen draining, then on the target configuration
    /// without having been seen rebooting, is stamped rebooting then too (its drain took until
    /// then, as far as anyone knows). A node first observed on the target configuration is not
    /// stamped at all: when it got there was not observed (a node joining the cluster, a node
    /// not ready outside an update, a controller started after its reboot), so there is no
    /// reboot to learn (it would be a reboot of no time) nor a return to time from "first
    /// seen", and whether a controller happened to see it before it turned ready must not make
    /// its insight differ (issue #46).
    pub fn stamp(&mut self, stage: NodeStage, now: Timestamp) {
        match stage {
            NodeStage::Drain if self.reboot.is_none() && self.ready.is_none() => {
                self.drain.get_or_insert(now);
            }
            NodeStage::Reboot if self.ready.is_none() => {
                self.reboot.get_or_insert(now);
            }
            NodeStage::Ready if self.drain.is_some() || self.reboot.is_some() => {
                if self.drain.is_some() {
                    self.reboot.get_or_insert(now);
                }
                self.ready.get_or_insert(now);
            }
            _ => {}
        }
    }
}

impl From<&NodeTimeline> for Stamps {
    fn from(t: &NodeTimeline) -> Self {
        Stamps {
            drain: t.drain_started_at,
            reboot: t.reboot_started_at,
            ready: t.updated_at,
        }
    }
}

/// A node's timeline at `now`, in `stage` (`incident`: the daemon says `Degraded` or
/// `Unreconcilable`), from what its insight said before (`prior`): `None` while the update
/// has not reached it; the prior times kept and this stage stamped if not yet; started afresh
/// when the prior says a later stage than this one (the node's next update).
pub fn timeline(
    prior: Option<&NodeTimeline>,
    stage: NodeStage,
    incident: bool,
    now: Timestamp,
) -> Option<NodeTimeline> {
    if stage == NodeStage::Pending {
        return None;
    }
    let mut t = prior.copied().unwrap_or_default();
    let rank = |s: NodeStage| match s {
        NodeStage::Pending => 0,
        NodeStage::Drain => 1,
        NodeStage::Reboot => 2,
        NodeStage::Ready => 3,
        NodeStage::Finished => 4,
    };
    let mut s = Stamps::from(&t);
    if rank(s.stage()) > rank(stage) {
        s = Stamps::default();
        t.incident = false;
    }
    s.stamp(stage, now);
    if s == Stamps::default() {
        // On the target (finished or not yet ready) before ever observed updating: nothing
        // timed.
        return None;
    }
    Some(NodeTimeline {
        drain_started_at: s.drain,
        reboot_started_at: s.reboot,
        updated_at: s.ready,
        incident: t.incident || incident,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).expect("valid")
    }

    fn walk(stages: &[(NodeStage, bool)]) -> Vec<Option<NodeTimeline>> {
        let mut prior = None;
        let mut out = Vec::new();
        for (i, (stage, incident)) in stages.iter().enumerate() {
            prior = timeline(prior.as_ref(), *stage, *incident, at(i as i64 * 10));
            out.push(prior);
        }
        out
    }

    #[test]
    fn each_stage_is_stamped_when_first_observed_and_kept() {
        use NodeStage::*;
        let t = walk(&[
            (Pending, false),
            (Drain, false),
            (Drain, false),
            (Reboot, true),
            (Reboot, false),
            (Ready, false),
            (Finished, false),
        ]);
        assert_eq!(t[0], None);
        assert_eq!(t[2].and_then(|t| t.drain_started_at), Some(at(10)));
        let last = t[6].expect("finished keeps its times");
        assert_eq!(
            (
                last.drain_started_at,
                last.reboot_started_at,
                last.updated_at
            ),
            (Some(at(10)), Some(at(30)), Some(at(50)))
        );
        assert!(last.incident, "an incident seen once is kept");
    }

    #[test]
    fn a_stage_passed_unobserved_is_absent_and_the_next_update_starts_afresh() {
        use NodeStage::*;
        let t = walk(&[
            (Reboot, false),
            (Finished, false),
            (Drain, false),
            (Pending, false),
        ]);
        let first = t[1].expect("timed");
        assert_eq!(first.drain_started_at, None, "first observed rebooting");
        assert_eq!(first.reboot_started_at, Some(at(0)));
        let next = t[2].expect("next update");
        assert_eq!(
            (
                next.drain_started_at,
                next.reboot_started_at,
                next.updated_at
            ),
            (Some(at(20)), None, None)
        );
        assert_eq!(t[3], None);
        assert_eq!(
            walk(&[(Finished, false)])[0],
            None,
            "never observed updating"
        );
        assert_eq!(
            walk(&[(Ready, false), (Finished, false)]),
            [None, None],
            "first observed on the target, not yet ready (a node joining, a node not ready \
             outside an update): its update was not observed, nothing timed"
        );
        assert_eq!(
            walk(&[(Ready, true)])[0],
            None,
            "not even an incident without a stage"
        );
    }

    #[test]
    fn ready_without_reboot_observed_stamps_both() {
        let t = walk(&[(NodeStage::Drain, false), (NodeStage::Ready, false)]);
        let t = t[1].expect("timed");
        assert_eq!(t.reboot_started_at, Some(at(10)));
        assert_eq!(t.updated_at, Some(at(10)));
    }
}
