//! The update, one step at a time (see the module documentation of [`super`]).

use jiff::{SignedDuration, Timestamp};

use super::cluster::MACHINE_CONFIG;
use super::faults::holds;
use super::state::Simulation;
use super::state::{ALL_IS_WELL, HistoryEntry, Mc, NodeStep, ObjectRef, OpPhase, Part, Stage};
use super::update::{SimulatedUpdate, StepReport};

impl SimulatedUpdate for Simulation {
    type Stage = Stage;

    fn clock(&self) -> (Timestamp, SignedDuration) {
        (self.config.start, self.config.step)
    }
    fn steps(&self) -> u64 {
        self.step_count
    }
    fn now(&self) -> Timestamp {
        Simulation::now(self)
    }
    fn stage(&self) -> Stage {
        self.stage
    }
    fn is_completed(&self) -> bool {
        Simulation::is_completed(self)
    }
    fn summary(&self) -> String {
        Simulation::summary(self)
    }
    fn pending(&self) -> usize {
        self.dirty.len()
    }
    fn discard_pending(&mut self) {
        self.take_dirty();
    }
    fn enter_step(&mut self, count: u64, now: i64) {
        self.step_count = count;
        self.now = now;
    }

    fn advance(&mut self) {
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
}

impl Simulation {
    /// Moves the update one step forward (see the module documentation). A completed
    /// simulation does not change any more.
    pub fn step(&mut self) -> StepReport {
        SimulatedUpdate::step(self)
    }

    /// Steps until the update completes or `max_steps` steps were taken; returns the steps
    /// taken.
    pub fn run_to_completion(&mut self, max_steps: u64) -> u64 {
        SimulatedUpdate::run_to_completion(self, max_steps)
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

    fn advance_operators(&mut self) {
        let now = self.now;
        let to = self.config.to_version.clone();
        let Some(i) = (self.current_op < self.operators.len()).then_some(self.current_op) else {
            return;
        };
        let is_mco = i == self.operators.len() - 1;
        match self.operators[i].phase.clone() {
            OpPhase::Waiting => {
                let left = match &self.config.durations {
                    Some(d) => d.operator(i),
                    None => self.rng.range(1, 2),
                };
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
                    // The cluster-version operator rolls out the new MCO Deployment first.
                    self.mco_deployment_version = to.clone();
                    self.touch(ObjectRef::McoDeployment, Part::Main);
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

    /// Whether an object's status is written before its metadata and spec when both changed.
    /// A rebooted node's kubelet posts `Ready` before its daemon writes `Done` and the new
    /// current configuration; written the other way round, a reader would see an updated node
    /// that is not ready (an unavailable-node insight that no cluster shows) for a moment.
    /// Everything else (a node going down included: the daemon writes `Rebooting`, then the
    /// kubelet stops) is written metadata first.
    pub fn status_first(&self, r: ObjectRef) -> bool {
        matches!(r, ObjectRef::Node(i) if self.node_ready(i))
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
        let left = match (&self.config.durations, step) {
            (Some(d), NodeStep::Draining) => d.node(i, 0),
            (Some(d), NodeStep::Updating) => d.node(i, 1),
            (Some(d), NodeStep::Rebooting) => d.node(i, 2),
            (None, NodeStep::Draining | NodeStep::Rebooting) => self.rng.range(1, 2),
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

    pub(super) fn pool_done(&self, p: usize) -> bool {
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
}
