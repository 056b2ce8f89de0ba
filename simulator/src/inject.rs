//! Injecting the faults into a [`Simulation`]: resolving their targets from the
//! configuration, what they change at each step, and when they clear.

use super::config::FaultSpec;
use super::error::SimError;
use super::faults::{ActiveFaults, Fault, FaultStatus};
use super::state::Simulation;
use super::state::{NodeStep, ObjectRef, OpPhase, Part};

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
