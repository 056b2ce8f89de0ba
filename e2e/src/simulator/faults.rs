//! Injected faults: which object they hit, when they start and clear, and what they change.

use super::state::{NodeStep, ObjectRef, OpPhase, Part};
use super::{FaultSpec, SimError, Simulation};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum FaultState {
    /// Not triggered yet.
    Armed,
    /// Active for this many more steps.
    Active(u32),
    /// Over.
    Cleared,
}

#[derive(Clone, Debug)]
pub(super) struct Fault {
    pub(super) target: usize,
    pub(super) steps: u32,
    pub(super) state: FaultState,
}

impl Fault {
    pub(super) fn new(target: usize, steps: u32) -> Self {
        Fault {
            target,
            steps,
            state: FaultState::Armed,
        }
    }
    pub(super) fn active(&self) -> bool {
        matches!(self.state, FaultState::Active(_))
    }
    /// Active on `target`.
    pub(super) fn holds(&self, target: usize) -> bool {
        self.target == target && self.active()
    }
    /// The target, while active.
    pub(super) fn active_target(&self) -> Option<usize> {
        self.active().then_some(self.target)
    }
    /// Starts an armed fault that lasts at least one step; true when it started.
    pub(super) fn trigger(&mut self) -> bool {
        let start = self.state == FaultState::Armed && self.steps > 0;
        if start {
            self.state = FaultState::Active(self.steps);
        }
        start
    }
    /// Counts one step of an active fault down; returns its target on the step it clears.
    pub(super) fn tick(&mut self) -> Option<usize> {
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
pub(super) fn holds(fault: &Option<Fault>, target: usize) -> bool {
    fault.as_ref().is_some_and(|f| f.holds(target))
}

#[derive(Clone, Debug, Default)]
pub(super) struct ActiveFaults {
    pub(super) degraded_operator: Option<Fault>,
    pub(super) stalled_operator: Option<usize>,
    pub(super) blocked_drain: Option<Fault>,
    pub(super) not_ready_node: Option<Fault>,
    pub(super) paused_pool: Option<Fault>,
}

impl ActiveFaults {
    /// Operator `i` cannot finish: it is the stalled operator, or degraded right now.
    pub(super) fn holds_operator(&self, i: usize) -> bool {
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

impl Simulation {
    pub(super) fn resolve_faults(&self) -> Result<ActiveFaults, SimError> {
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

    pub(super) fn tick_faults(&mut self) {
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
}
