//! Naming the composed statuses and insights, and carrying over what our objects already say:
//! the second step of the composition ([`super::composer`] is the first), which the
//! controller's passes and [`desired_cluster`] run and the offline path does not.
//!
//! Piece by piece, each the share of one reconciler, and whole ([`desired_cluster`], what the
//! fixture tests compare with what the reconcilers write):
//!
//! - [`control_plane_share`]: the ControlPlaneUpdateStatus `cluster`, the ClusterVersion and
//!   ClusterOperator progress insights and the control-plane health insights. It computes the
//!   master pool's node counts itself ([`super::master_pool`]), so the status is complete from
//!   its first write.
//! - [`node_insights`]: one node's progress and health insights, from its cached
//!   [`NodeAssessment`] (the worker-pools reconciler re-assesses only the nodes that changed).
//! - [`pools_share`]: the WorkerPoolUpdateStatus of each non-master pool and the pool-level
//!   insights (D.8), aggregated from the node assessments.
//! - [`alerts_share`]: the alert insights, only while an update is in progress.
//!
//! Carry-over ("what our objects already say"): a health insight keeps the earliest
//! `startedAt` it ever had ([`keep_started_at`]), and the control plane's estimate is kept
//! while it moves less than the tolerance ([`crate::control_plane::estimate_moved`]).

use std::collections::{BTreeMap, HashMap};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use update_status_api::crd::{
    ControlPlaneUpdateStatusStatus, ScopeType, UpdateInsightStatus, WorkerPoolUpdateStatusStatus,
    labels,
};
use update_status_api::input::{Alert, MachineConfigPool};

use super::composer::{self, NodeSink};
use super::existing::{Existing, ExistingInsights};
use super::objects::{Desired, DesiredCluster, Labels};
use super::since::{self, PriorConditions};
use crate::control_plane::ControlPlaneAssessment;
use crate::inputs::ClusterInputs;
use crate::insight::{self, UnreadableInput};
use crate::nodes::{NodeAssessment, NodeContext, NodeSource, PoolAssessment};
use crate::related::DrainEvidence;
use crate::{alerts, control_plane, naming};

/// The owner reference of an input object (its kind, name and uid); `None` without a name or
/// uid (e.g. objects read from a snapshot that has none).
pub fn owner_of<K: Resource<DynamicType = ()>>(obj: &K) -> Option<OwnerReference> {
    obj.owner_ref(&())
}

/// A health insight keeps the earliest `startedAt` it ever had: rules whose start is "first
/// observed" (now) do not move on every pass, and a restart does not reset them.
pub fn keep_started_at(desired: &mut [Desired<UpdateInsightStatus>], existing: &ExistingInsights) {
    for d in desired.iter_mut() {
        let Some(h) = d.status.health.as_mut() else {
            continue;
        };
        let Some(old) = existing.get(&d.name).and_then(|e| e.health.as_ref()) else {
            continue;
        };
        if let Some(old_start) = old.started_at
            && h.started_at.is_none_or(|new| new > old_start)
        {
            h.started_at = Some(old_start);
        }
    }
}

/// What the desired objects are built against: our insights as they are (`existing`, for the
/// carry-over) and the labels every object of ours carries (`base`).
#[derive(Clone, Copy)]
pub struct Naming<'a, 'e> {
    /// What our UpdateInsights already say.
    pub existing: &'a ExistingInsights<'e>,
    /// The base labels ([`super::base_labels`]).
    pub base: &'a Labels,
}

// ---------------------------------------------------------------------------------------------
// Control plane
// ---------------------------------------------------------------------------------------------

/// The control-plane reconciler's share.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControlPlaneShare {
    /// The ControlPlaneUpdateStatus `cluster` (`None` without a ClusterVersion).
    pub status: Option<Desired<ControlPlaneUpdateStatusStatus>>,
    /// ClusterVersion and ClusterOperator progress insights, then control-plane health insights.
    pub insights: Vec<Desired<UpdateInsightStatus>>,
    /// When time alone will change this share.
    pub requeue_after: Option<SignedDuration>,
}

/// The control-plane share from the inputs (ClusterVersion, ClusterOperators in
/// [`crate::order::compare_operators`] order, and the pools and MachineConfigs of the master
/// pool), the nodes (passed apart: a watch cache holds them behind `Arc`s; `inputs.nodes` is
/// not read), our ControlPlaneUpdateStatus and insights, at `now`. This is the control-plane
/// reconciler's whole pure part.
pub fn control_plane_share<N: NodeSource>(
    inputs: &ClusterInputs<'_>,
    nodes: impl IntoIterator<Item = N>,
    existing_cp: Option<&ControlPlaneUpdateStatusStatus>,
    naming: Naming<'_, '_>,
    now: Timestamp,
) -> ControlPlaneShare {
    let ctx = NodeContext::from_inputs(inputs);
    let (master, master_changes_at) = composer::master_pool(&ctx, nodes, now);
    let assessment = composer::control_plane(inputs, master.as_ref(), now);
    let mut share = ControlPlaneShare {
        requeue_after: composer::requeue_after(inputs, master_changes_at, now),
        ..name_control_plane(inputs, assessment, existing_cp, naming, now)
    };
    if let Some(cp) = share.status.as_mut() {
        let prior: &[_] = existing_cp.map_or(&[], |c| &c.conditions);
        since::carry(&mut cp.status.conditions, &cp.name, prior, now);
    }
    since::carry_insights(&mut share.insights, naming.existing, now);
    share
}

/// [`control_plane_share`] with the master pool already assessed (how hosted mode composes
/// it), without the conditions' transition times (the caller carries them over once it has
/// named everything: [`since::carry_cluster`]).
pub fn control_plane_share_with(
    inputs: &ClusterInputs<'_>,
    master: Option<&PoolAssessment>,
    existing_cp: Option<&ControlPlaneUpdateStatusStatus>,
    naming: Naming<'_, '_>,
    now: Timestamp,
) -> ControlPlaneShare {
    let assessment = composer::control_plane(inputs, master, now);
    ControlPlaneShare {
        requeue_after: composer::requeue_after(inputs, None, now),
        ..name_control_plane(inputs, assessment, existing_cp, naming, now)
    }
}

/// The control plane's assessment named: the ControlPlaneUpdateStatus `cluster` (its estimate
/// kept while it moves less than the tolerance) and its insights, owned by the ClusterVersion
/// or their ClusterOperator, each health insight keeping its first `startedAt`. No
/// `requeue_after`.
pub fn name_control_plane(
    inputs: &ClusterInputs<'_>,
    assessment: Option<ControlPlaneAssessment>,
    existing_cp: Option<&ControlPlaneUpdateStatusStatus>,
    naming: Naming<'_, '_>,
    now: Timestamp,
) -> ControlPlaneShare {
    let Naming { existing, base } = naming;
    let Some(assessment) = assessment else {
        return ControlPlaneShare::default();
    };
    let ControlPlaneAssessment {
        mut status,
        insights: mut assessed,
    } = assessment;
    if let Some(old) = existing_cp
        && !control_plane::estimate_moved(
            old.estimated_completed_at,
            status.estimated_completed_at,
            now,
        )
    {
        status.estimated_completed_at = old.estimated_completed_at;
    }
    // The ClusterVersion insight says the estimate the status keeps.
    for i in &mut assessed {
        if i.resource.kind == "ClusterVersion"
            && let Some(p) = i.progress.as_mut()
        {
            p.estimated_completed_at = status.estimated_completed_at;
        }
    }
    let cv_owner = inputs.cluster_version.and_then(owner_of);
    let co_owners: HashMap<&str, OwnerReference> = inputs
        .cluster_operators
        .iter()
        .filter_map(|c| Some((c.metadata.name.as_deref()?, owner_of(c)?)))
        .collect();
    let mut insights: Vec<Desired<UpdateInsightStatus>> = assessed
        .into_iter()
        .map(|s| {
            let owner = match s.resource.kind.as_str() {
                "ClusterOperator" => co_owners.get(s.resource.name.as_str()).cloned(),
                _ => cv_owner.clone(),
            };
            Desired::insight(s, "", base, owner)
        })
        .collect();
    keep_started_at(&mut insights, existing);
    let mut cp_labels = base.clone();
    cp_labels.insert(labels::SCOPE.into(), ScopeType::ControlPlane.slug().into());
    cp_labels.insert(labels::ASSESSMENT.into(), status.assessment.slug().into());
    ControlPlaneShare {
        status: Some(Desired {
            name: naming::CONTROL_PLANE_STATUS_NAME.to_string(),
            labels: cp_labels,
            owner: cv_owner,
            status,
        }),
        insights,
        requeue_after: None,
    }
}

/// The health insights of the input objects that cannot be read (see
/// [`insight::unreadable_input_insight`]), first seen at `now` and then keeping their
/// `startedAt`; the control-plane reconciler writes them with its share.
pub fn unreadable_inputs_share(
    unreadable: &[UnreadableInput],
    existing: &ExistingInsights,
    base: &Labels,
    now: Timestamp,
) -> Vec<Desired<UpdateInsightStatus>> {
    let mut insights: Vec<_> = unreadable
        .iter()
        .filter_map(|u| insight::unreadable_input_insight(u, Some(now)))
        .map(|s| Desired::insight(s, "", base, None))
        .collect();
    keep_started_at(&mut insights, existing);
    insights
}

// ---------------------------------------------------------------------------------------------
// Nodes and pools
// ---------------------------------------------------------------------------------------------

/// One node's desired insights (its progress insight, then its health insights, a failed
/// drain's blockers in their `related`: [`crate::nodes::with_drain_blockers`]), owned by the
/// node (`owner`: [`owner_of`] the node). The progress insight's conditions are as the
/// assessment has them (their transition times are carried over where it is made).
pub fn node_insights(
    assessment: &NodeAssessment,
    owner: Option<OwnerReference>,
    existing: &ExistingInsights,
    base: &Labels,
    evidence: &DrainEvidence,
) -> Vec<Desired<UpdateInsightStatus>> {
    let mut out: Vec<Desired<UpdateInsightStatus>> = std::iter::once(assessment.progress.clone())
        .chain(crate::nodes::with_drain_blockers(assessment, evidence))
        .map(|s| Desired::insight(s, "", base, owner.clone()))
        .collect();
    keep_started_at(&mut out, existing);
    out
}

/// Owner references of the pools, by pool name.
pub fn pool_owners(pools: &[MachineConfigPool]) -> BTreeMap<String, OwnerReference> {
    pools
        .iter()
        .filter_map(|p| Some((p.metadata.name.clone()?, owner_of(p)?)))
        .collect()
}

/// The pools' share of the worker-pools reconciler.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolsShare {
    /// Every pool's assessment, in pool order (the master pool included), as
    /// [`nodes::aggregate_pool_status`] gives it: its `insights` are the pool's own (D.8),
    /// not copies of its nodes' (the node insights are built per node).
    pub pools: Vec<PoolAssessment>,
    /// One WorkerPoolUpdateStatus per non-master pool, in pool order.
    pub statuses: Vec<Desired<WorkerPoolUpdateStatusStatus>>,
    /// The pool-level insights (D.8), owned by their pool.
    pub insights: Vec<Desired<UpdateInsightStatus>>,
}

/// Aggregates every pool of `ctx` from the node assessments (`assessed`: each node's, in any
/// order) into the desired pool statuses and pool-level insights.
pub fn pools_share(
    ctx: &NodeContext,
    assessed: &[&NodeAssessment],
    owners: &BTreeMap<String, OwnerReference>,
    existing: &ExistingInsights,
    base: &Labels,
) -> PoolsShare {
    name_pools(composer::pools(ctx, assessed), owners, existing, base)
}

/// The pools' assessments named: one WorkerPoolUpdateStatus per non-master pool and the
/// pool-level insights, owned by their pool (`owners`: by pool name), each health insight
/// keeping its first `startedAt`.
pub fn name_pools(
    pools: Vec<PoolAssessment>,
    owners: &BTreeMap<String, OwnerReference>,
    existing: &ExistingInsights,
    base: &Labels,
) -> PoolsShare {
    let mut statuses = Vec::new();
    let mut insights = Vec::new();
    insights.extend(composer::pool_insights(&pools).map(|s| {
        let owner = match s.resource.kind.as_str() {
            "MachineConfigPool" => owners.get(&s.resource.name).cloned(),
            _ => None,
        };
        Desired::insight(s.clone(), "", base, owner)
    }));
    for pool in &pools {
        if pool.is_master {
            continue;
        }
        let mut l = base.clone();
        l.insert(labels::SCOPE.into(), ScopeType::WorkerPool.slug().into());
        l.insert(labels::POOL.into(), naming::label_value(&pool.name));
        l.insert(
            labels::ASSESSMENT.into(),
            pool.status.assessment.slug().into(),
        );
        statuses.push(Desired {
            name: naming::pool_status_name(&pool.name),
            labels: l,
            owner: owners.get(&pool.name).cloned(),
            status: pool.status.clone(),
        });
    }
    keep_started_at(&mut insights, existing);
    PoolsShare {
        pools,
        statuses,
        insights,
    }
}

// ---------------------------------------------------------------------------------------------
// Alerts
// ---------------------------------------------------------------------------------------------

/// What the alerts reconciler knows of Prometheus.
#[derive(Clone, Copy, Debug, Default)]
pub struct AlertsPoll<'a> {
    /// The firing alerts of the last successful poll (`None`: no poll succeeded yet, so our
    /// alert insights stay as they are).
    pub firing: Option<&'a [Alert]>,
    /// Reading alerts fails: the URL polled, the last error and the first failure's instant.
    pub unavailable: Option<(&'a str, &'a str, Timestamp)>,
    /// Prometheus answers something that is not a list of alerts (the alerts are ignored): the
    /// URL polled, the decoding error and the first such answer's instant.
    pub malformed: Option<(&'a str, &'a str, Timestamp)>,
}

/// The alert insights (D.9) while an update is in progress (B.1's gate, see
/// [`alerts::update_in_progress`]), owned by the ControlPlaneUpdateStatus `cluster`
/// (`control_plane`: its status and owner reference; `None`: none yet → nothing).
pub fn alerts_share<'a>(
    control_plane: Option<(&ControlPlaneUpdateStatusStatus, Option<OwnerReference>)>,
    worker_pools: impl IntoIterator<Item = &'a WorkerPoolUpdateStatusStatus>,
    poll: AlertsPoll<'_>,
    naming: Naming<'_, '_>,
    now: Timestamp,
) -> Vec<Desired<UpdateInsightStatus>> {
    let Naming { existing, base } = naming;
    let Some((cp, owner)) = control_plane else {
        return Vec::new();
    };
    let Some(firing) = composer::alerts(cp, worker_pools, poll.firing, now) else {
        return Vec::new();
    };
    let mut out: Vec<Desired<UpdateInsightStatus>> = Vec::new();
    match poll.firing {
        Some(_) => out.extend(name_alerts(firing, owner.clone(), base)),
        None => {
            let mut kept: Vec<(&str, &UpdateInsightStatus)> = existing
                .iter()
                .filter(|(_, s)| {
                    s.health
                        .as_ref()
                        .is_some_and(|h| h.source == alerts::SOURCE_ALERT)
                })
                .collect();
            kept.sort_by(|a, b| a.0.cmp(b.0));
            out.extend(kept.into_iter().map(|(name, s)| {
                let mut d = Desired::insight(s.clone(), "", base, owner.clone());
                d.name = name.to_string();
                d
            }));
        }
    }
    if let Some((url, error, since)) = poll.unavailable {
        let s = alerts::alerts_unavailable_insight(url, error, since);
        out.push(Desired::insight(s, "", base, owner.clone()));
    }
    if let Some((url, error, since)) = poll.malformed {
        let s = alerts::alerts_malformed_insight(url, error, since);
        out.push(Desired::insight(s, "", base, owner.clone()));
    }
    keep_started_at(&mut out, existing);
    out
}

/// The alert insights named (from their alert's label set), owned by `owner` (the
/// ControlPlaneUpdateStatus `cluster`).
pub fn name_alerts(
    firing: Vec<alerts::AlertInsight>,
    owner: Option<OwnerReference>,
    base: &Labels,
) -> impl Iterator<Item = Desired<UpdateInsightStatus>> {
    firing
        .into_iter()
        .map(move |a| Desired::insight(a.status, &a.identity, base, owner.clone()))
}

// ---------------------------------------------------------------------------------------------
// The whole cluster
// ---------------------------------------------------------------------------------------------

/// Every object for the whole cluster: [`super::compose`] (the alert insights from
/// `inputs.alerts`, when read), each node's insights named as the node is assessed, then the
/// pools, the control plane and the alerts named, with the carry-over of `existing`.
pub fn desired_cluster(
    inputs: &ClusterInputs<'_>,
    existing: &Existing<'_>,
    base: &Labels,
    now: Timestamp,
) -> DesiredCluster {
    // Every insight goes into this one vector, sized once (node insights are most of them, one
    // per node and a few health ones): growing it, then copying it behind the control plane's,
    // held two or three copies at a time at thousands of nodes.
    let mut sink = NamedNodes {
        insights: Vec::with_capacity(inputs.nodes.len() + inputs.nodes.len() / 8 + 64),
        assessed: Vec::with_capacity(inputs.nodes.len()),
        existing: &existing.insights,
        base,
        evidence: DrainEvidence::of_inputs(inputs),
        now,
    };
    let composed = composer::compose(inputs, inputs.nodes, &mut sink, now);
    let mut insights = sink.insights;
    let pools = name_pools(
        composed.pools,
        &pool_owners(inputs.pools),
        &existing.insights,
        base,
    );
    let cp = name_control_plane(
        inputs,
        composed.control_plane,
        existing.control_plane.and_then(|c| c.status.as_ref()),
        Naming {
            existing: &existing.insights,
            base,
        },
        now,
    );
    // The control plane's first, then the nodes', the pools' and the alerts'.
    insights.splice(0..0, cp.insights);
    insights.extend(pools.insights);
    let mut alerts: Vec<_> = name_alerts(
        composed.alerts,
        existing.control_plane.and_then(owner_of),
        base,
    )
    .collect();
    keep_started_at(&mut alerts, &existing.insights);
    insights.extend(alerts);
    let mut desired = DesiredCluster {
        control_plane: cp.status,
        worker_pools: pools.statuses,
        insights,
    };
    since::carry_cluster(&mut desired, existing, now);
    desired
}

/// [`desired_cluster`]'s node sink: each node's insights named as it is assessed.
struct NamedNodes<'e, 'a> {
    insights: Vec<Desired<UpdateInsightStatus>>,
    assessed: Vec<NodeAssessment>,
    existing: &'e ExistingInsights<'a>,
    base: &'e Labels,
    evidence: DrainEvidence,
    now: Timestamp,
}

impl NodeSink for NamedNodes<'_, '_> {
    fn take(&mut self, node: &update_status_api::input::Node, mut assessment: NodeAssessment) {
        let name = naming::insight_name(&assessment.progress, "");
        let prior = self.existing.timeline(&name);
        crate::nodes::carry_timeline(&mut assessment, prior.as_ref(), self.now);
        self.insights.extend(node_insights(
            &assessment,
            owner_of(node),
            self.existing,
            self.base,
            &self.evidence,
        ));
        self.assessed.push(assessment);
    }

    fn assessed(&self) -> Vec<&NodeAssessment> {
        self.assessed.iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use update_status_api::crd::{
        HealthInsight, Impact, InsightScope, InsightType, Remediation, ResourceRef, UpdateInsight,
        UpdateInsightSpec,
    };

    #[test]
    fn an_unreadable_input_becomes_one_health_insight_keeping_its_start() {
        let now: Timestamp = "2026-01-01T10:00:00Z".parse().expect("ts");
        let pool = UnreadableInput {
            group: "machineconfiguration.openshift.io".into(),
            kind: "MachineConfigPool".into(),
            name: "infra".into(),
            problem: "invalid type: string \"x\", expected a sequence at line 1".into(),
            ..Default::default()
        };
        let first = unreadable_inputs_share(
            std::slice::from_ref(&pool),
            &ExistingInsights::default(),
            &Labels::new(),
            now,
        );
        assert_eq!(first.len(), 1);
        let h = first[0].status.health.as_ref().expect("health");
        assert!(
            h.impact
                .summary
                .starts_with("MachineConfigPool infra cannot be read: invalid type"),
            "{}",
            h.impact.summary
        );
        assert_eq!(h.source, insight::SOURCE_UNREADABLE_INPUT);
        assert_eq!(first[0].status.scope.type_, ScopeType::WorkerPool);
        assert_eq!(first[0].status.scope.pool.as_deref(), Some("infra"));
        assert_eq!(
            first[0].labels.get(labels::SCOPE).map(String::as_str),
            Some(ScopeType::WorkerPool.slug())
        );

        // A later pass keeps the first `startedAt`.
        let mut obj = UpdateInsight::new(&first[0].name, UpdateInsightSpec::default());
        obj.status = Some(first[0].status.clone());
        let objs = [Arc::new(obj)];
        let later = unreadable_inputs_share(
            &[pool],
            &ExistingInsights::new(&objs),
            &Labels::new(),
            now + SignedDuration::from_mins(5),
        );
        assert_eq!(later, first);
    }

    fn health(started_at: Option<&str>) -> UpdateInsightStatus {
        UpdateInsightStatus {
            type_: InsightType::Health,
            resource: ResourceRef {
                kind: "ClusterVersion".into(),
                name: "version".into(),
                ..Default::default()
            },
            scope: InsightScope::default(),
            progress: None,
            health: Some(HealthInsight {
                started_at: started_at.map(|s| s.parse().expect("timestamp")),
                impact: Impact {
                    summary: "s".into(),
                    ..Default::default()
                },
                remediation: Remediation {
                    reference: "r".into(),
                },
                related: vec![],
                related_omitted: 0,
                caveat: None,
                source: "ClusterVersionNoFailing".into(),
            }),
        }
    }

    fn desired(name: &str, started_at: Option<&str>) -> Desired<UpdateInsightStatus> {
        Desired {
            name: name.into(),
            labels: Labels::new(),
            owner: None,
            status: health(started_at),
        }
    }

    fn started(d: &Desired<UpdateInsightStatus>) -> Option<String> {
        d.status
            .health
            .as_ref()
            .and_then(|h| h.started_at)
            .map(|t| t.to_string())
    }

    #[test]
    fn a_health_insight_keeps_its_first_started_at_across_passes_and_restarts() {
        let mut stored = UpdateInsight::new("a", UpdateInsightSpec {});
        stored.status = Some(health(Some("2023-11-03T15:00:00Z")));
        let objs = [Arc::new(stored)];
        let existing = ExistingInsights::new(&objs);
        // A rule whose start is "now" recomputes a later instant: the stored one wins.
        let mut d = vec![desired("a", Some("2023-11-03T17:00:00Z"))];
        keep_started_at(&mut d, &existing);
        assert_eq!(started(&d[0]).as_deref(), Some("2023-11-03T15:00:00Z"));
        // An earlier start (a condition's transition time) replaces it.
        let mut d = vec![desired("a", Some("2023-11-03T14:00:00Z"))];
        keep_started_at(&mut d, &existing);
        assert_eq!(started(&d[0]).as_deref(), Some("2023-11-03T14:00:00Z"));
        // An unknown start keeps the known one; another insight is left alone.
        let mut d = vec![
            desired("a", None),
            desired("b", Some("2023-11-03T17:00:00Z")),
        ];
        keep_started_at(&mut d, &existing);
        assert_eq!(started(&d[0]).as_deref(), Some("2023-11-03T15:00:00Z"));
        assert_eq!(started(&d[1]).as_deref(), Some("2023-11-03T17:00:00Z"));
    }
}
