//! Injected faults: which object they hit and for how many steps (applied to a
//! [`Simulation`](crate::Simulation) by `inject.rs`).

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
