//! What our objects already say, read for the carry-over: our UpdateInsights
//! ([`ExistingInsights`]), our ControlPlaneUpdateStatus and WorkerPoolUpdateStatus objects
//! ([`Existing`]), and their conditions ([`PriorConditions`], which [`super::since`] carries
//! the transition times from).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;
use update_status_api::crd::{
    Condition, ConditionStatus, ControlPlaneUpdateStatus, NodeTimeline, UpdateInsight,
    UpdateInsightStatus, WorkerPoolUpdateStatus,
};

/// What our objects already say of their conditions, where they are not read whole (the
/// controller caches progress insights as a projection: their conditions' type, status and
/// transition time only).
pub trait PriorConditions {
    /// Our object `name`'s condition `type_`: its status and transition time.
    fn condition(&self, name: &str, type_: &str) -> Option<(ConditionStatus, Option<Timestamp>)>;
    /// Our node progress insight `name`'s timeline (none kept by default).
    fn timeline(&self, _name: &str) -> Option<NodeTimeline> {
        None
    }
}

/// No object of ours yet (the offline path; a first write).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoPrior;

impl PriorConditions for NoPrior {
    fn condition(&self, _: &str, _: &str) -> Option<(ConditionStatus, Option<Timestamp>)> {
        None
    }
}

/// The conditions of one object of ours, as a prior for the same object.
impl PriorConditions for [Condition] {
    fn condition(&self, _: &str, type_: &str) -> Option<(ConditionStatus, Option<Timestamp>)> {
        self.iter()
            .find(|c| c.type_ == type_)
            .map(|c| (c.status, c.last_transition_time))
    }
}

/// Our WorkerPoolUpdateStatus objects, by name.
impl PriorConditions for [Arc<WorkerPoolUpdateStatus>] {
    fn condition(&self, name: &str, type_: &str) -> Option<(ConditionStatus, Option<Timestamp>)> {
        self.iter()
            .find(|o| o.metadata.name.as_deref() == Some(name))
            .and_then(|o| o.status.as_ref())
            .and_then(|s| s.conditions.condition(name, type_))
    }
}

/// Our UpdateInsights: a whole one's progress conditions, else the projection's.
impl PriorConditions for ExistingInsights<'_> {
    fn condition(&self, name: &str, type_: &str) -> Option<(ConditionStatus, Option<Timestamp>)> {
        match self.get(name) {
            Some(s) => s
                .progress
                .as_ref()
                .and_then(|p| p.conditions.condition(name, type_)),
            None => self.progress()?.condition(name, type_),
        }
    }
    fn timeline(&self, name: &str) -> Option<NodeTimeline> {
        match self.get(name) {
            Some(s) => s.progress.as_ref()?.timeline,
            None => self.progress()?.timeline(name),
        }
    }
}

/// What our UpdateInsights already say (the watch cache of our objects, or nothing): their
/// status by object name, indexed on the first look-up only (a pass whose desired insights
/// have no health insight never builds the index); and, for those not read whole (the
/// controller's projected progress insights), their conditions.
#[derive(Clone, Default)]
pub struct ExistingInsights<'a> {
    objs: &'a [Arc<UpdateInsight>],
    by_name: OnceCell<HashMap<&'a str, &'a UpdateInsightStatus>>,
    progress: Option<&'a (dyn PriorConditions + Sync)>,
}

impl std::fmt::Debug for ExistingInsights<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExistingInsights")
            .field("objs", &self.objs.len())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl<'a> ExistingInsights<'a> {
    /// Our UpdateInsights as they are.
    pub fn new(objs: &'a [Arc<UpdateInsight>]) -> Self {
        ExistingInsights {
            objs,
            by_name: OnceCell::new(),
            progress: None,
        }
    }

    /// With the conditions of the insights not in `objs` (the projected progress insights).
    pub fn with_progress(mut self, progress: &'a (dyn PriorConditions + Sync)) -> Self {
        self.progress = Some(progress);
        self
    }

    /// The conditions of the insights not read whole.
    pub fn progress(&self) -> Option<&'a (dyn PriorConditions + Sync)> {
        self.progress
    }

    /// The status of our UpdateInsight `name`.
    pub fn get(&self, name: &str) -> Option<&'a UpdateInsightStatus> {
        self.by_name
            .get_or_init(|| self.iter().collect())
            .get(name)
            .copied()
    }

    /// Every (name, status).
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a UpdateInsightStatus)> + 'a {
        self.objs
            .iter()
            .filter_map(|o| Some((o.metadata.name.as_deref()?, o.status.as_ref()?)))
    }
}

/// What our objects already say, for the carry-over.
#[derive(Clone, Debug, Default)]
pub struct Existing<'a> {
    /// Our ControlPlaneUpdateStatus `cluster` (its estimate, its conditions' times; its uid
    /// owns the alert insights).
    pub control_plane: Option<&'a ControlPlaneUpdateStatus>,
    /// Our WorkerPoolUpdateStatus objects (their conditions' times).
    pub worker_pools: &'a [Arc<WorkerPoolUpdateStatus>],
    /// Our UpdateInsights, by name.
    pub insights: ExistingInsights<'a>,
}
