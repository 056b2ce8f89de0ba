//! What both simulations share: the [`SimulatedUpdate`] trait, which writes once the frame of a
//! step on the simulated clock (step `k` at `start + k × step`), its [`StepReport`], running
//! to completion, and a dry run. The standalone [`Simulation`](crate::Simulation) and the
//! hosted [`HostedSimulation`](crate::hosted::HostedSimulation) implement it: each says what
//! its stages do in one step.

use std::fmt;

use jiff::{SignedDuration, Timestamp};

use crate::state::Stage;

/// What one step did (`S`: the simulation's stage, [`Stage`] or
/// [`HostedStage`](crate::hosted::HostedStage)).
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport<S = Stage> {
    /// Step number (1 for the first step).
    pub step: u64,
    /// Simulated instant of the step.
    pub at: Timestamp,
    /// Stage after the step.
    pub stage: S,
    /// Object parts changed, plus (hosted) lifecycle calls: each is one write of the playback.
    pub changes: usize,
    /// One line for humans.
    pub summary: String,
}

/// A simulated update, pure and deterministic: the standalone or the hosted simulation.
pub trait SimulatedUpdate {
    /// Where the update is.
    type Stage: Copy + PartialEq + fmt::Display;

    /// The simulated instant of step 0 and the simulated time of one step.
    fn clock(&self) -> (Timestamp, SignedDuration);
    /// Steps taken so far.
    fn steps(&self) -> u64;
    /// Current simulated instant.
    fn now(&self) -> Timestamp;
    /// Current stage.
    fn stage(&self) -> Self::Stage;
    /// The update is over (a stalled update never is); a completed simulation does not change.
    fn is_completed(&self) -> bool;
    /// One line about where the update is.
    fn summary(&self) -> String;
    /// Changes not yet written: object parts (and, hosted, lifecycle calls).
    fn pending(&self) -> usize;
    /// Forgets the pending changes (a dry run writes nothing).
    fn discard_pending(&mut self);
    /// Enters step `count`, at simulated second `now`.
    fn enter_step(&mut self, count: u64, now: i64);
    /// What the current stage does in one step.
    fn advance(&mut self);

    /// The simulated second of step `k`: `start + k × step`, whole seconds.
    fn at_step(&self, k: u64) -> i64 {
        let (start, step) = self.clock();
        let offset = i128::from(k).saturating_mul(step.as_millis()) / 1000;
        start
            .as_second()
            .saturating_add(i64::try_from(offset).unwrap_or(i64::MAX / 2))
    }

    /// Moves the update one step forward. A completed simulation does not change any more.
    fn step(&mut self) -> StepReport<Self::Stage> {
        let before = self.pending();
        if !self.is_completed() {
            let count = self.steps() + 1;
            self.enter_step(count, self.at_step(count));
            self.advance();
        }
        StepReport {
            step: self.steps(),
            at: self.now(),
            stage: self.stage(),
            changes: self.pending().saturating_sub(before),
            summary: self.summary(),
        }
    }

    /// Steps until the update completes or `max_steps` steps were taken; returns the steps
    /// taken.
    fn run_to_completion(&mut self, max_steps: u64) -> u64 {
        let mut n = 0;
        while !self.is_completed() && n < max_steps {
            self.step();
            n += 1;
        }
        n
    }

    /// Steps without writing anything until the update completes or `max_steps` steps were
    /// taken, `report`ing each step.
    fn dry_run(&mut self, max_steps: u64, mut report: impl FnMut(&StepReport<Self::Stage>))
    where
        Self: Sized,
    {
        let mut steps = 0;
        while !self.is_completed() && steps < max_steps {
            let r = self.step();
            self.discard_pending();
            steps += 1;
            report(&r);
        }
    }
}
