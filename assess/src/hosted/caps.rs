//! What one hosted cluster's inside may cost the controller that serves every hosted cluster
//! (`--hosted-kubeconfig-access`): the tenant owns its ClusterOperators and Nodes, and can make
//! as many, as large, as it likes. So:
//!
//! - **bytes**: [`trim_operator`] keeps of a ClusterOperator only what the assessment reads, each
//!   text cut ([`MAX_TEXT`]), whatever the tenant put in it (Nodes: [`crate::nodes::trim_node`]);
//! - **count**: at most [`MAX_GUEST_CLUSTER_OPERATORS`] ClusterOperators and
//!   [`MAX_GUEST_NODES`] Nodes of one hosted cluster are assessed (the caches keep no more
//!   either); past a cap the hosted cluster gets one health insight saying how many it reports
//!   and how many are shown ([`over_cap_insights`]). Other hosted clusters are not affected.
//!
//! Whether a ClusterOperator is a platform operator comes from its annotations, which the tenant
//! writes (a real hosted cluster's are written by its cluster version operator, but the tenant's
//! admin can add more): it cannot be decided from anything the tenant cannot forge, so what a
//! forged one can cost is bounded instead — one trimmed object (at most ~12,000 characters)
//! within the cap, at most one insight of its own.

use jiff::Timestamp;
use update_status_api::crd::{
    ImpactLevel, ImpactType, InsightScope, ScopeType, UpdateInsightStatus,
};
use update_status_api::input::{ClusterOperator, PLATFORM_OPERATOR_ANNOTATION_PREFIXES};

pub use super::inputs::Reported;
use super::inputs::{GuestInputs, HostedInputs};
use crate::format::ellipsize;
use crate::insight::HealthDraft;

/// ClusterOperators of one hosted cluster assessed at most (an OpenShift release has about 35).
pub const MAX_GUEST_CLUSTER_OPERATORS: usize = 200;
/// Nodes of one hosted cluster assessed at most.
pub const MAX_GUEST_NODES: usize = 5_000;
/// Characters kept of each text of a trimmed ClusterOperator (condition reasons and messages,
/// versions, annotation keys).
pub const MAX_TEXT: usize = 1_024;
/// `source` of the insight of a hosted cluster over a cap.
pub const SOURCE_OVER_CAP: &str = "HostedClusterOverCap";
/// The conditions of a ClusterOperator the assessment reads.
const READ_CONDITIONS: [&str; 3] = ["Available", "Degraded", "Progressing"];
/// The operand versions it reads.
const READ_VERSIONS: [&str; 2] = ["operator", "operator-image"];
/// Entries kept of each read version name (real operators have one).
const VERSIONS_PER_NAME: usize = 2;

/// Drops from a ClusterOperator what the assessment never reads, and cuts what it reads:
/// annotations but the platform-operator ones (keys kept, values emptied: only their presence
/// counts; at most one per prefix), labels, owner references, managed fields; conditions but
/// the last `Available`, `Degraded` and `Progressing`; versions but `operator` and
/// `operator-image` (two of each at most); every kept text cut to [`MAX_TEXT`] characters.
/// What is left holds at most about 12,000 characters of text, whatever the object was.
pub fn trim_operator(co: &mut ClusterOperator) {
    let meta = &mut co.metadata;
    if let Some(a) = meta.annotations.take() {
        let kept: std::collections::BTreeMap<String, String> =
            PLATFORM_OPERATOR_ANNOTATION_PREFIXES
                .iter()
                .filter_map(|p| a.keys().find(|k| k.starts_with(p)))
                .map(|k| (ellipsize(k, MAX_TEXT), String::new()))
                .collect();
        meta.annotations = (!kept.is_empty()).then_some(kept);
    }
    meta.labels = None;
    meta.owner_references = None;
    meta.managed_fields = None;
    meta.finalizers = None;
    meta.generate_name = None;
    meta.name = meta.name.as_deref().map(|n| ellipsize(n, MAX_TEXT));
    let conditions = std::mem::take(&mut co.status.conditions);
    for type_ in READ_CONDITIONS {
        if let Some(mut c) = conditions.iter().rev().find(|c| c.type_ == type_).cloned() {
            c.reason = ellipsize(&c.reason, MAX_TEXT);
            c.message = ellipsize(&c.message, MAX_TEXT);
            c.status = ellipsize(&c.status, 16);
            co.status.conditions.push(c);
        }
    }
    let versions = std::mem::take(&mut co.status.versions);
    for name in READ_VERSIONS {
        co.status.versions.extend(
            versions
                .iter()
                .filter(|v| v.name == name)
                .take(VERSIONS_PER_NAME)
                .map(|v| update_status_api::input::OperandVersion {
                    name: v.name.clone(),
                    version: ellipsize(&v.version, MAX_TEXT),
                }),
        );
    }
}

/// One kind over its cap: reported, shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverCap {
    /// `ClusterOperators` or `Nodes`.
    pub what: &'static str,
    /// How many the hosted cluster reports (at least).
    pub reported: usize,
    /// How many are assessed.
    pub shown: usize,
}

/// `inputs` with at most [`MAX_GUEST_CLUSTER_OPERATORS`] ClusterOperators and
/// [`MAX_GUEST_NODES`] Nodes (the first ones, in the order given), and what was over a cap.
pub fn capped<'a>(inputs: &HostedInputs<'a>) -> (HostedInputs<'a>, Vec<OverCap>) {
    let Some(g) = inputs.guest else {
        return (*inputs, Vec::new());
    };
    let mut over = Vec::new();
    let mut cut = |what, given: usize, reported: usize, max: usize| -> usize {
        let reported = reported.max(given);
        if reported > max {
            over.push(OverCap {
                what,
                reported,
                shown: given.min(max),
            });
        }
        given.min(max)
    };
    let ops = cut(
        "ClusterOperators",
        g.cluster_operators.len(),
        g.reported.cluster_operators,
        MAX_GUEST_CLUSTER_OPERATORS,
    );
    let nodes = cut("Nodes", g.nodes.len(), g.reported.nodes, MAX_GUEST_NODES);
    let guest = GuestInputs {
        cluster_operators: &g.cluster_operators[..ops],
        nodes: &g.nodes[..nodes],
        reported: g.reported,
    };
    (
        HostedInputs {
            guest: Some(guest),
            ..*inputs
        },
        over,
    )
}

/// One health insight per kind over its cap: "hosted cluster X reports N ClusterOperators,
/// more than M; showing the first M".
pub(super) fn over_cap_insights(
    inputs: &HostedInputs<'_>,
    over: &[OverCap],
    now: Timestamp,
) -> Vec<UpdateInsightStatus> {
    let hc = inputs.hosted_cluster;
    let (ns, name) = (hc.namespace(), hc.name());
    over.iter()
        .filter_map(|o| {
            let max = if o.what == "Nodes" {
                MAX_GUEST_NODES
            } else {
                MAX_GUEST_CLUSTER_OPERATORS
            };
            HealthDraft {
                resource: super::objects::hosted_cluster_ref(hc),
                scope: InsightScope {
                    type_: ScopeType::ControlPlane,
                    pool: None,
                },
                source: SOURCE_OVER_CAP,
                started_at: Some(now),
                level: ImpactLevel::Warning,
                type_: ImpactType::Unknown,
                summary: format!(
                    "hosted cluster {ns}/{name} reports {} {}, more than {max}; showing the first {}",
                    o.reported, o.what, o.shown
                ),
                description: format!(
                    "update-status assesses at most {max} {what} of one hosted cluster, so that no \
                     hosted cluster can exhaust the controller serving them all. Hosted cluster \
                     {ns}/{name} reports {} (objects made inside it, which its administrators \
                     can create); the others are left out of its operator counts, progress and \
                     health. Look at them with the hosted cluster's admin kubeconfig: kubectl get \
                     {kind}.",
                    o.reported,
                    what = o.what,
                    kind = if o.what == "Nodes" { "nodes" } else { "clusteroperators" },
                ),
                reference: super::health::REFERENCE_HOSTED_UPDATES,
            }
            .build()
        })
        .collect()
}
