//! The hosted-only health rules (hosted.md §8 table), built with the standalone
//! [`HealthDraft`] (same completeness filter, same cuts). A CVO failure is the standalone D.2
//! (`ClusterVersionFailing`) on the adapted ClusterVersion, not repeated here; a paused NodePool
//! with outdated nodes is the standalone D.8 (`PoolPaused`); a degraded in-place node is the
//! standalone D.7 (`NodeDegraded`).

use jiff::{SignedDuration, Timestamp};
use update_status_api::crd::{
    ImpactLevel, ImpactType, InsightScope, ResourceRef, ScopeType, UpdateInsightStatus,
};
use update_status_api::hosted::{CAPI_GROUP, Machine, NodePool};
use update_status_api::input::Condition as InputCondition;

use super::control_plane::{HostedControlPlaneFacts, HostedControlPlaneShare};
use super::facts::{NodePoolFacts, REASON_IN_PLACE_FAILED};
use super::inputs::HostedInputs;
use super::objects;
use crate::insight::HealthDraft;

/// HyperShift documentation of HostedCluster updates.
pub const REFERENCE_HOSTED_UPDATES: &str = "https://hypershift-docs.netlify.app/how-to/upgrades/";
/// HyperShift documentation of NodePool rollouts.
pub const REFERENCE_NODE_POOL_ROLLOUTS: &str =
    "https://hypershift-docs.netlify.app/reference/nodepool-rollouts/";
/// HyperShift documentation of the supported version skew.
pub const REFERENCE_VERSION_SKEW: &str =
    "https://hypershift-docs.netlify.app/reference/versioning-support/";

/// `source`: the update is refused (`Progressing=False`, reason `Blocked`).
pub const SOURCE_UPDATE_BLOCKED: &str = "HostedClusterUpdateBlocked";
/// `source`: `ValidReleaseImage=False` on the HostedCluster.
pub const SOURCE_INVALID_RELEASE_IMAGE: &str = "HostedClusterInvalidReleaseImage";
/// `source`: `ClusterVersionReleaseAccepted=False`.
pub const SOURCE_RELEASE_NOT_ACCEPTED: &str = "ReleaseNotAccepted";
/// `source`: `Available`, `KubeAPIServerAvailable` or `EtcdAvailable` False.
pub const SOURCE_UNAVAILABLE: &str = "HostedClusterUnavailable";
/// `source`: `Degraded=True` for 10 minutes.
pub const SOURCE_DEGRADED: &str = "HostedClusterDegraded";
/// `source`: `ReconciliationActive=False` while an update is wanted.
pub const SOURCE_PAUSED: &str = "HostedClusterPaused";
/// `source`: the hosted cluster's API could not be read.
pub const SOURCE_UNREACHABLE: &str = "HostedClusterUnreachable";
/// `source`: an in-place NodePool update failed.
pub const SOURCE_IN_PLACE_FAILED: &str = "NodePoolInPlaceUpdateFailed";
/// `source`: `UpdatingVersion=True` with no node progress for 30 minutes.
pub const SOURCE_UPDATE_STUCK: &str = "NodePoolUpdateStuck";
/// `source`: `ValidReleaseImage=False` on a NodePool.
pub const SOURCE_NP_INVALID_RELEASE_IMAGE: &str = "NodePoolInvalidReleaseImage";
/// `source`: `SupportedVersionSkew=False`.
pub const SOURCE_UNSUPPORTED_SKEW: &str = "NodePoolUnsupportedSkew";
/// `source`: new machines cannot come up.
pub const SOURCE_MACHINES_NOT_READY: &str = "NodePoolMachinesNotReady";
/// `source`: nodes of the pool are not healthy.
pub const SOURCE_NODES_UNHEALTHY: &str = "NodePoolNodesUnhealthy";
/// `source`: a Machine being replaced cannot be drained.
pub const SOURCE_DRAIN_FAILED: &str = "NodeDrainFailed";
/// `source`: the control plane is updated and the pool runs an older version.
pub const SOURCE_BEHIND: &str = "NodePoolBehindControlPlane";

/// `Degraded` must hold this long before it is reported (ignore short blips during a rollout).
pub const DEGRADED_GRACE: SignedDuration = SignedDuration::from_mins(10);
/// A drain taking longer than this is reported (e.g. a PodDisruptionBudget).
pub const DRAIN_GRACE: SignedDuration = SignedDuration::from_mins(10);
/// No node progress for this long while `UpdatingVersion=True` is reported.
pub const STUCK_AFTER: SignedDuration = SignedDuration::from_mins(30);

fn cp_scope() -> InsightScope {
    InsightScope {
        type_: ScopeType::ControlPlane,
        pool: None,
    }
}

fn pool_scope(np: &NodePool) -> InsightScope {
    InsightScope {
        type_: ScopeType::WorkerPool,
        pool: Some(np.name().to_string()),
    }
}

/// What an insight is about: its resource and scope.
struct Subject {
    resource: ResourceRef,
    scope: InsightScope,
}

impl Subject {
    /// A draft about this subject, started when `c` (if any) last changed.
    #[allow(clippy::too_many_arguments)]
    fn draft(
        &self,
        source: &'static str,
        c: Option<&InputCondition>,
        level: ImpactLevel,
        type_: ImpactType,
        summary: String,
        description: String,
        reference: &'static str,
    ) -> HealthDraft<'static> {
        HealthDraft {
            resource: self.resource.clone(),
            scope: self.scope.clone(),
            source,
            started_at: c.and_then(|c| c.last_transition_time),
            level,
            type_,
            summary,
            description,
            reference,
        }
    }
}

/// `<reason>: <message>` of a condition (either part may be empty).
fn says(c: &InputCondition) -> String {
    match (c.reason.is_empty(), c.message.is_empty()) {
        (false, false) => format!("{}: {}", c.reason, c.message),
        (false, true) => c.reason.clone(),
        (true, false) => c.message.clone(),
        (true, true) => "<no message>".to_string(),
    }
}

/// The HostedCluster's own health insights (update blocked, invalid release image, release not
/// accepted, unavailable, degraded for 10 min, paused while an update is wanted, unreachable).
pub(super) fn hosted_cluster_insights(
    inputs: &HostedInputs<'_>,
    cp: &HostedControlPlaneShare,
    now: Timestamp,
) -> Vec<UpdateInsightStatus> {
    let hc = inputs.hosted_cluster;
    let name = hc.name();
    let resource = objects::hosted_cluster_ref(hc);
    let subject = Subject {
        resource: resource.clone(),
        scope: cp_scope(),
    };
    let mut out: Vec<HealthDraft> = Vec::new();
    let f: &HostedControlPlaneFacts = &cp.versions;
    if let Some(b) = &f.blocked {
        out.push(subject.draft(
            SOURCE_UPDATE_BLOCKED,
            Some(b),
            ImpactLevel::Error,
            ImpactType::UpdateStalled,
            format!("The update of HostedCluster {name} is blocked"),
            says(b),
            REFERENCE_HOSTED_UPDATES,
        ));
    }
    if let Some(c) = hc.condition("ValidReleaseImage").filter(|c| c.is_false()) {
        out.push(subject.draft(
            SOURCE_INVALID_RELEASE_IMAGE,
            Some(c),
            ImpactLevel::Error,
            ImpactType::UpdateStalled,
            format!("HostedCluster {name} has an invalid release image"),
            format!("spec.release.image {}: {}", hc.spec.release.image, says(c)),
            REFERENCE_HOSTED_UPDATES,
        ));
    }
    if let Some(c) = hc
        .condition("ClusterVersionReleaseAccepted")
        .filter(|c| c.is_false())
    {
        out.push(subject.draft(
            SOURCE_RELEASE_NOT_ACCEPTED,
            Some(c),
            ImpactLevel::Error,
            ImpactType::UpdateStalled,
            format!("The hosted cluster version operator of {name} did not accept the release"),
            says(c),
            REFERENCE_HOSTED_UPDATES,
        ));
    }
    for type_ in ["Available", "KubeAPIServerAvailable", "EtcdAvailable"] {
        if let Some(c) = hc.condition(type_).filter(|c| c.is_false()) {
            out.push(subject.draft(
                SOURCE_UNAVAILABLE,
                Some(c),
                ImpactLevel::Critical,
                ImpactType::ApiAvailability,
                format!("HostedCluster {name} is not available ({type_}=False)"),
                says(c),
                REFERENCE_HOSTED_UPDATES,
            ));
            break;
        }
    }
    if let Some(c) = hc.condition("Degraded").filter(|c| c.is_true())
        && c.last_transition_time
            .is_none_or(|t| now.duration_since(t) >= DEGRADED_GRACE)
    {
        out.push(subject.draft(
            SOURCE_DEGRADED,
            Some(c),
            ImpactLevel::Warning,
            ImpactType::ApiAvailability,
            format!("HostedCluster {name} is degraded"),
            says(c),
            REFERENCE_HOSTED_UPDATES,
        ));
    }
    let update_wanted = f.requested.is_some() || f.blocked.is_some() || !f.completed;
    if let Some(c) = hc
        .condition("ReconciliationActive")
        .filter(|c| c.is_false() && update_wanted)
    {
        out.push(subject.draft(
            SOURCE_PAUSED,
            Some(c),
            ImpactLevel::Warning,
            ImpactType::UpdateStalled,
            format!("HostedCluster {name} is paused: its update does not proceed"),
            says(c),
            REFERENCE_HOSTED_UPDATES,
        ));
    }
    if let Some(why) = inputs.guest_unreachable {
        out.push(HealthDraft {
            started_at: Some(now),
            ..subject.draft(
                SOURCE_UNREACHABLE,
                None,
                ImpactLevel::Warning,
                ImpactType::Unknown,
                format!("The API of hosted cluster {name} cannot be read: operator and node details are unknown"),
                if why.is_empty() { "<no message>".to_string() } else { why.to_string() },
                REFERENCE_HOSTED_UPDATES,
            )
        });
    }
    out.into_iter().filter_map(HealthDraft::build).collect()
}

/// When time alone changes the HostedCluster's insights: `Degraded` reaching 10 minutes.
pub(super) fn requeue_after(inputs: &HostedInputs<'_>, now: Timestamp) -> Option<SignedDuration> {
    let ltt = inputs
        .hosted_cluster
        .condition("Degraded")
        .filter(|c| c.is_true())?
        .last_transition_time?;
    Some((ltt + DEGRADED_GRACE).duration_since(now)).filter(|d| d.is_positive())
}

/// A NodePool's own health insights, and when time alone changes them.
pub(super) fn node_pool_insights(
    np: &NodePool,
    ms_degraded: Option<&str>,
    f: &NodePoolFacts,
    machines: &[&Machine],
    cp: &HostedControlPlaneFacts,
    now: Timestamp,
) -> (Vec<UpdateInsightStatus>, Option<Timestamp>) {
    let name = np.name();
    let resource = objects::node_pool_ref(np);
    let mut next: Option<Timestamp> = None;
    let mut soon = |t: Timestamp| {
        if t > now {
            next = Some(next.map_or(t, |n: Timestamp| n.min(t)));
        }
    };
    let subject = Subject {
        resource: resource.clone(),
        scope: pool_scope(np),
    };
    let mut out: Vec<HealthDraft> = Vec::new();

    let failed = ["UpdatingVersion", "UpdatingConfig"]
        .into_iter()
        .filter_map(|t| np.condition(t))
        .find(|c| c.is_false() && c.reason == REASON_IN_PLACE_FAILED);
    if let Some(c) = failed {
        let mut description = says(c);
        if let Some(ms_msg) = ms_degraded.filter(|m| !m.is_empty() && !description.contains(m)) {
            description = format!("{description} ({ms_msg})");
        }
        out.push(subject.draft(
            SOURCE_IN_PLACE_FAILED,
            Some(c),
            ImpactLevel::Error,
            ImpactType::UpdateStalled,
            format!("The in-place update of NodePool {name} failed"),
            description,
            REFERENCE_NODE_POOL_ROLLOUTS,
        ));
    }
    if let Some(c) = np.condition("UpdatingVersion").filter(|c| c.is_true()) {
        // Node phase changes: a new Machine created or healthy, an old one deleted or drained.
        let new_machines = machines
            .iter()
            .filter(|m| !f.target.is_empty() && m.version() == Some(f.target.as_str()))
            .flat_map(|m| {
                [
                    m.condition("NodeHealthy")
                        .filter(|h| h.is_true())
                        .and_then(|h| h.last_transition_time),
                    m.metadata.creation_timestamp.as_ref().map(|t| t.0),
                ]
            });
        let replaced = machines.iter().flat_map(|m| {
            [
                m.metadata.deletion_timestamp.as_ref().map(|t| t.0),
                m.condition("DrainingSucceeded")
                    .and_then(|d| d.last_transition_time),
            ]
        });
        let last_progress = new_machines
            .chain(replaced)
            .flatten()
            .chain(c.last_transition_time)
            .max();
        if let Some(last) = last_progress {
            if now.duration_since(last) >= STUCK_AFTER {
                out.push(HealthDraft {
                    started_at: Some(last + STUCK_AFTER),
                    ..subject.draft(
                        SOURCE_UPDATE_STUCK,
                        Some(c),
                        ImpactLevel::Warning,
                        ImpactType::UpdateStalled,
                        format!("NodePool {name} has made no update progress for 30 minutes"),
                        format!("UpdatingVersion=True since {}, no node reached the target version {} since {last}: {}", c.last_transition_time.map_or("an unknown time".to_string(), |t| t.to_string()), f.target, says(c)),
                        REFERENCE_NODE_POOL_ROLLOUTS,
                    )
                });
            } else {
                soon(last + STUCK_AFTER);
            }
        }
    }
    if let Some(c) = np.condition("ValidReleaseImage").filter(|c| c.is_false()) {
        out.push(subject.draft(
            SOURCE_NP_INVALID_RELEASE_IMAGE,
            Some(c),
            ImpactLevel::Error,
            ImpactType::UpdateStalled,
            format!("NodePool {name} has an invalid release image"),
            format!("spec.release.image {}: {}", np.spec.release.image, says(c)),
            REFERENCE_NODE_POOL_ROLLOUTS,
        ));
    }
    if let Some(c) = np
        .condition("SupportedVersionSkew")
        .filter(|c| c.is_false())
    {
        out.push(subject.draft(
            SOURCE_UNSUPPORTED_SKEW,
            Some(c),
            ImpactLevel::Warning,
            ImpactType::None,
            format!("NodePool {name} runs an unsupported version skew with its control plane"),
            says(c),
            REFERENCE_VERSION_SKEW,
        ));
    }
    if let Some(c) = ["AllMachinesReady", "ReachedIgnitionEndpoint"]
        .into_iter()
        .filter_map(|t| np.condition(t))
        .find(|c| c.is_false())
    {
        let (level, type_) = if f.updating {
            (ImpactLevel::Error, ImpactType::UpdateStalled)
        } else {
            (ImpactLevel::Warning, ImpactType::ClusterCapacity)
        };
        out.push(subject.draft(
            SOURCE_MACHINES_NOT_READY,
            Some(c),
            level,
            type_,
            format!(
                "Machines of NodePool {name} are not ready ({}=False)",
                c.type_
            ),
            says(c),
            REFERENCE_NODE_POOL_ROLLOUTS,
        ));
    }
    let unhealthy = np
        .condition("AllNodesHealthy")
        .filter(|c| c.is_false())
        .or_else(|| {
            np.condition("Ready")
                .filter(|c| c.is_false() && c.reason == "TooManyUnhealthy")
        });
    if let Some(c) = unhealthy {
        out.push(subject.draft(
            SOURCE_NODES_UNHEALTHY,
            Some(c),
            ImpactLevel::Warning,
            ImpactType::ClusterCapacity,
            format!("Nodes of NodePool {name} are not healthy"),
            says(c),
            REFERENCE_NODE_POOL_ROLLOUTS,
        ));
    }
    for m in machines.iter().filter(|m| m.is_deleting()) {
        let drain = m.condition("DrainingSucceeded");
        if drain.is_some_and(|d| d.is_true()) {
            continue;
        }
        let since = drain.and_then(|d| d.last_transition_time).or(m
            .metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| t.0));
        let failed = drain.is_some_and(|d| d.is_false() && d.reason == "DrainingFailed");
        let long = since.is_some_and(|s| now.duration_since(s) >= DRAIN_GRACE);
        if !failed && !long {
            if let Some(s) = since {
                soon(s + DRAIN_GRACE);
            }
            continue;
        }
        let node = m.node_name().unwrap_or(m.name());
        out.push(HealthDraft {
            resource: ResourceRef {
                group: CAPI_GROUP.to_string(),
                kind: "Machine".to_string(),
                name: m.name().to_string(),
                namespace: m.metadata.namespace.clone(),
            },
            started_at: since,
            ..subject.draft(
                SOURCE_DRAIN_FAILED,
                None,
                ImpactLevel::Warning,
                ImpactType::UpdateStalled,
                format!("Node {node} of NodePool {name} cannot be drained"),
                drain.map_or_else(
                    || "The Machine is being deleted and its node has been draining for more than 10 minutes (a PodDisruptionBudget may block the eviction)".to_string(),
                    says,
                ),
                REFERENCE_NODE_POOL_ROLLOUTS,
            )
        });
    }
    if cp.completed
        && !f.updating
        && !f.current.is_empty()
        && older(&f.current, &cp.versions.target)
    {
        out.push(subject.draft(
            SOURCE_BEHIND,
            None,
            ImpactLevel::Info,
            ImpactType::None,
            format!(
                "NodePool {name} runs {} while the control plane runs {}",
                f.current, cp.versions.target
            ),
            "NodePool updates are explicit in hosted control planes: set the NodePool's spec.release.image to update its nodes.".to_string(),
            REFERENCE_NODE_POOL_ROLLOUTS,
        ));
    }
    (
        out.into_iter().filter_map(HealthDraft::build).collect(),
        next,
    )
}

/// `a` is an older version than `b` (numeric dot-separated components; a pre-release or build
/// suffix is ignored; unparsable versions are never older).
pub fn older(a: &str, b: &str) -> bool {
    fn parts(v: &str) -> Option<Vec<u64>> {
        let core = v.split(['-', '+']).next()?;
        core.split('.').map(|p| p.parse().ok()).collect()
    }
    match (parts(a), parts(b)) {
        (Some(a), Some(b)) => a < b,
        _ => false,
    }
}
