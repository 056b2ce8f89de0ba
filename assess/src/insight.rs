//! Insight construction shared by every rule: the one way to build a health insight (D.0's
//! completeness filter and the schema cuts included) and the one health tally.

use jiff::Timestamp;
use update_status_api::crd::{
    HealthCounts, HealthInsight, Impact, ImpactLevel, ImpactType, InsightScope, InsightType,
    Remediation, ResourceRef, ScopeType, UpdateInsightStatus, limits,
};

use crate::format::{cut_noting, ellipsize};

/// `source` of the insight about an input object that cannot be read.
pub const SOURCE_UNREADABLE_INPUT: &str = "unreadable-input";
/// Reference of that insight.
pub const UNREADABLE_INPUT_REFERENCE: &str =
    "https://github.com/openshift/update-status/blob/main/docs/runbooks/UnreadableInput.md";

/// An input object the controller watches but cannot decode (a field of an unexpected type):
/// it is skipped, and shown as a health insight instead of stopping the watch.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnreadableInput {
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind (`MachineConfigPool`).
    pub kind: String,
    /// Object name.
    pub name: String,
    /// Where it is and who owns it (boxed: decoding results stay small).
    pub place: Box<InputPlace>,
    /// What is wrong (the decoder's message: the field and the type expected).
    pub problem: String,
}

/// Where an unreadable input is, and its owners.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct InputPlace {
    /// Namespace of a namespaced object (`None`: cluster-scoped).
    pub namespace: Option<String>,
    /// Its uid, when known (hosted mode owns the insight of an unreadable HostedCluster by it).
    pub uid: Option<String>,
    /// Its owner references as (kind, name) (hosted mode finds an unreadable NodePool's
    /// HostedCluster through them).
    pub owners: Vec<(String, String)>,
}

impl UnreadableInput {
    /// `namespace/name`, or `name` for a cluster-scoped object.
    pub fn key(&self) -> String {
        match self.place.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => format!("{ns}/{}", self.name),
            _ => self.name.clone(),
        }
    }
}

/// The health insight of an input that cannot be read: "MachineConfigPool infra cannot be
/// read: ...". Control-plane inputs (ClusterVersion, ClusterOperator, HostedCluster) are in the
/// control plane's scope; pools (MachineConfigPool, NodePool) and nodes in the worker pools' (a
/// pool names itself as its pool).
pub fn unreadable_input_insight(
    u: &UnreadableInput,
    since: Option<Timestamp>,
) -> Option<UpdateInsightStatus> {
    let scope = match u.kind.as_str() {
        "ClusterVersion" | "ClusterOperator" | "HostedCluster" => InsightScope {
            type_: ScopeType::ControlPlane,
            pool: None,
        },
        "MachineConfigPool" | "NodePool" => InsightScope {
            type_: ScopeType::WorkerPool,
            pool: Some(ellipsize(&u.name, limits::POOL)),
        },
        _ => InsightScope {
            type_: ScopeType::WorkerPool,
            pool: None,
        },
    };
    let problem = u.problem.split_whitespace().collect::<Vec<_>>().join(" ");
    let namespace = u.place.namespace.clone().filter(|n| !n.is_empty());
    let in_namespace = namespace
        .as_deref()
        .map_or(String::new(), |n| format!(" -n {n}"));
    HealthDraft {
        resource: ResourceRef {
            group: u.group.clone(),
            kind: u.kind.clone(),
            name: ellipsize(&u.name, limits::RESOURCE_NAME),
            namespace,
        },
        scope,
        source: SOURCE_UNREADABLE_INPUT,
        started_at: since,
        level: ImpactLevel::Warning,
        type_: ImpactType::Unknown,
        summary: format!("{} {} cannot be read: {problem}", u.kind, u.name),
        description: format!(
            "update-status cannot decode the {kind} {name} ({problem}), so it leaves it out: \
             the update status shown may be incomplete for what depends on it. Every other \
             object is still read. Check the object (`oc get {lower} {name}{in_namespace} -o \
             yaml`) for a field of an unexpected type, and whoever wrote it.",
            kind = u.kind,
            name = u.name,
            lower = u.kind.to_ascii_lowercase(),
        ),
        reference: UNREADABLE_INPUT_REFERENCE,
    }
    .build()
}

/// What a health rule found, before D.0's completeness filter.
#[derive(Clone, Debug)]
pub struct HealthDraft<'a> {
    /// What the insight is about.
    pub resource: ResourceRef,
    /// Where it applies.
    pub scope: InsightScope,
    /// Rule that produced it (`source`).
    pub source: &'a str,
    /// Since when it holds, when known.
    pub started_at: Option<Timestamp>,
    /// Impact level.
    pub level: ImpactLevel,
    /// Impact type.
    pub type_: ImpactType,
    /// One-line summary.
    pub summary: String,
    /// Description.
    pub description: String,
    /// Runbook or documentation URL.
    pub reference: &'a str,
}

impl HealthDraft<'_> {
    /// D.0: no insight without summary, description or reference; long texts are cut to the
    /// schema's limits (ending in `...`).
    pub fn build(self) -> Option<UpdateInsightStatus> {
        if self.summary.is_empty() || self.description.is_empty() || self.reference.is_empty() {
            return None;
        }
        Some(UpdateInsightStatus {
            type_: InsightType::Health,
            resource: self.resource,
            scope: self.scope,
            progress: None,
            health: Some(HealthInsight {
                started_at: self.started_at,
                impact: Impact {
                    level: self.level,
                    type_: self.type_,
                    summary: ellipsize(&self.summary, limits::SUMMARY),
                    description: cut_noting(&self.description, limits::DESCRIPTION),
                },
                remediation: Remediation {
                    reference: ellipsize(self.reference, limits::REFERENCE),
                },
                related: Vec::new(),
                related_omitted: 0,
                caveat: None,
                source: self.source.to_string(),
            }),
        })
    }
}

/// Sets a health insight's `related` (at most [`limits::RELATED_SHOWN`], duplicates and the
/// insight's own resource dropped; the rest counted in `relatedOmitted`).
pub fn set_related(status: &mut UpdateInsightStatus, refs: impl IntoIterator<Item = ResourceRef>) {
    let own = status.resource.clone();
    if let Some(h) = status.health.as_mut() {
        let (related, omitted) = crate::related::bounded(refs.into_iter().filter(|r| *r != own));
        h.related = related;
        h.related_omitted = omitted;
    }
}

/// Counts one health insight of `level` in `counts`.
pub fn count(counts: &mut HealthCounts, level: ImpactLevel) {
    match level {
        ImpactLevel::Critical => counts.critical += 1,
        ImpactLevel::Error => counts.error += 1,
        ImpactLevel::Warning => counts.warning += 1,
        ImpactLevel::Info => counts.info += 1,
        ImpactLevel::Unknown => counts.unknown += 1,
    }
}

/// The health insights among `insights`, counted by level.
pub fn tally<'a>(insights: impl IntoIterator<Item = &'a UpdateInsightStatus>) -> HealthCounts {
    let mut c = HealthCounts::default();
    for h in insights.into_iter().filter_map(|i| i.health.as_ref()) {
        count(&mut c, h.impact.level);
    }
    c
}
