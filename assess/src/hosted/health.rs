//! The hosted-only health rules (hosted.md §8 table), built with the standalone
//! [`HealthDraft`] (same completeness filter, same cuts). A CVO failure is the standalone D.2
//! (`ClusterVersionFailing`) on the adapted ClusterVersion, not repeated here; a paused NodePool
//! with outdated nodes is the standalone D.8 (`PoolPaused`); a degraded in-place node is the
//! standalone D.7 (`NodeDegraded`).

use jiff::{SignedDuration, Timestamp};
use update_status_api::crd::{
    ImpactLevel, ImpactType, InsightScope, ResourceRef, ScopeType, UpdateInsightStatus,
};
use update_status_api::hosted::{CAPI_GROUP, HostedCluster, Machine, NodePool};
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

/// What a rule finds about its subject: all of a draft but the subject and the start.
struct Finding {
    source: &'static str,
    level: ImpactLevel,
    type_: ImpactType,
    summary: String,
    description: String,
    reference: &'static str,
}

impl Finding {
    /// What a rule finds from the condition `c`: `says(c)` described.
    fn of_condition(
        c: &InputCondition,
        source: &'static str,
        (level, type_): (ImpactLevel, ImpactType),
        summary: String,
        reference: &'static str,
    ) -> Finding {
        Finding {
            source,
            level,
            type_,
            summary,
            description: says(c),
            reference,
        }
    }
}

impl Subject {
    /// A draft of `finding` about this subject, started when `c` (if any) last changed.
    fn draft(&self, c: Option<&InputCondition>, finding: Finding) -> HealthDraft<'static> {
        HealthDraft {
            resource: self.resource.clone(),
            scope: self.scope.clone(),
            source: finding.source,
            started_at: c.and_then(|c| c.last_transition_time),
            level: finding.level,
            type_: finding.type_,
            summary: finding.summary,
            description: finding.description,
            reference: finding.reference,
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
    let rules = ClusterRules {
        hc,
        name: hc.name(),
        subject: Subject {
            resource: objects::hosted_cluster_ref(hc),
            scope: cp_scope(),
        },
        facts: &cp.versions,
        now,
    };
    [
        rules.update_blocked(),
        rules.invalid_release_image(),
        rules.release_not_accepted(),
        rules.unavailable(),
        rules.degraded(),
        rules.paused(),
        rules.unreachable(inputs.guest_unreachable),
    ]
    .into_iter()
    .flatten()
    .filter_map(HealthDraft::build)
    .collect()
}

/// The HostedCluster's rules, each a draft or none.
struct ClusterRules<'a> {
    hc: &'a HostedCluster,
    name: &'a str,
    subject: Subject,
    facts: &'a HostedControlPlaneFacts,
    now: Timestamp,
}

impl ClusterRules<'_> {
    /// A draft about the HostedCluster from its condition `c`: `says(c)` described.
    fn on_condition(
        &self,
        c: &InputCondition,
        source: &'static str,
        (level, type_): (ImpactLevel, ImpactType),
        summary: String,
    ) -> HealthDraft<'static> {
        let finding =
            Finding::of_condition(c, source, (level, type_), summary, REFERENCE_HOSTED_UPDATES);
        self.subject.draft(Some(c), finding)
    }

    fn update_blocked(&self) -> Option<HealthDraft<'static>> {
        let b = self.facts.blocked.as_ref()?;
        Some(self.on_condition(
            b,
            SOURCE_UPDATE_BLOCKED,
            (ImpactLevel::Error, ImpactType::UpdateStalled),
            format!("The update of HostedCluster {} is blocked", self.name),
        ))
    }

    fn invalid_release_image(&self) -> Option<HealthDraft<'static>> {
        let c = self
            .hc
            .condition("ValidReleaseImage")
            .filter(|c| c.is_false())?;
        Some(HealthDraft {
            description: format!(
                "spec.release.image {}: {}",
                self.hc.spec.release.image,
                says(c)
            ),
            ..self.on_condition(
                c,
                SOURCE_INVALID_RELEASE_IMAGE,
                (ImpactLevel::Error, ImpactType::UpdateStalled),
                format!("HostedCluster {} has an invalid release image", self.name),
            )
        })
    }

    fn release_not_accepted(&self) -> Option<HealthDraft<'static>> {
        let c = self
            .hc
            .condition("ClusterVersionReleaseAccepted")
            .filter(|c| c.is_false())?;
        Some(self.on_condition(
            c,
            SOURCE_RELEASE_NOT_ACCEPTED,
            (ImpactLevel::Error, ImpactType::UpdateStalled),
            format!(
                "The hosted cluster version operator of {} did not accept the release",
                self.name
            ),
        ))
    }

    /// The first of `Available`, `KubeAPIServerAvailable`, `EtcdAvailable` that is False.
    fn unavailable(&self) -> Option<HealthDraft<'static>> {
        ["Available", "KubeAPIServerAvailable", "EtcdAvailable"]
            .into_iter()
            .find_map(|type_| {
                let c = self.hc.condition(type_).filter(|c| c.is_false())?;
                Some(self.on_condition(
                    c,
                    SOURCE_UNAVAILABLE,
                    (ImpactLevel::Critical, ImpactType::ApiAvailability),
                    format!(
                        "HostedCluster {} is not available ({type_}=False)",
                        self.name
                    ),
                ))
            })
    }

    /// `Degraded=True` for [`DEGRADED_GRACE`] at least.
    fn degraded(&self) -> Option<HealthDraft<'static>> {
        let c = self.hc.condition("Degraded").filter(|c| c.is_true())?;
        c.last_transition_time
            .is_none_or(|t| self.now.duration_since(t) >= DEGRADED_GRACE)
            .then(|| {
                self.on_condition(
                    c,
                    SOURCE_DEGRADED,
                    (ImpactLevel::Warning, ImpactType::ApiAvailability),
                    format!("HostedCluster {} is degraded", self.name),
                )
            })
    }

    /// `ReconciliationActive=False` while an update is wanted.
    fn paused(&self) -> Option<HealthDraft<'static>> {
        let f = self.facts;
        let update_wanted = f.requested.is_some() || f.blocked.is_some() || !f.completed;
        let c = self
            .hc
            .condition("ReconciliationActive")
            .filter(|c| c.is_false() && update_wanted)?;
        Some(self.on_condition(
            c,
            SOURCE_PAUSED,
            (ImpactLevel::Warning, ImpactType::UpdateStalled),
            format!(
                "HostedCluster {} is paused: its update does not proceed",
                self.name
            ),
        ))
    }

    /// The hosted cluster's API cannot be read (`why`), first seen now.
    fn unreachable(&self, why: Option<&str>) -> Option<HealthDraft<'static>> {
        let why = why?;
        Some(HealthDraft {
            started_at: Some(self.now),
            ..self.subject.draft(
                None,
                Finding {
                    source: SOURCE_UNREACHABLE,
                    level: ImpactLevel::Warning,
                    type_: ImpactType::Unknown,
                    summary: format!(
                        "The API of hosted cluster {} cannot be read: operator and node details are unknown",
                        self.name
                    ),
                    description: if why.is_empty() {
                        "<no message>".to_string()
                    } else {
                        why.to_string()
                    },
                    reference: REFERENCE_HOSTED_UPDATES,
                },
            )
        })
    }
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

/// What the NodePool rules read of one NodePool.
pub(super) struct NodePoolView<'a> {
    /// The NodePool.
    pub np: &'a NodePool,
    /// Its MachineSet's in-place upgrade failure message, if any.
    pub ms_degraded: Option<&'a str>,
    /// Its facts.
    pub facts: &'a NodePoolFacts,
    /// Its Machines.
    pub machines: &'a [&'a Machine],
}

/// A NodePool's own health insights, and when time alone changes them.
pub(super) fn node_pool_insights(
    pool: &NodePoolView<'_>,
    cp: &HostedControlPlaneFacts,
    now: Timestamp,
) -> (Vec<UpdateInsightStatus>, Option<Timestamp>) {
    let np = pool.np;
    let rules = PoolRules {
        pool,
        name: np.name(),
        subject: Subject {
            resource: objects::node_pool_ref(np),
            scope: pool_scope(np),
        },
        now,
        next: std::cell::Cell::new(None),
    };
    let mut out: Vec<HealthDraft> = Vec::new();
    out.extend(rules.in_place_failed());
    out.extend(rules.update_stuck());
    out.extend(rules.invalid_release_image());
    out.extend(rules.unsupported_skew());
    out.extend(rules.machines_not_ready());
    out.extend(rules.nodes_unhealthy());
    out.extend(rules.drains_failed());
    out.extend(rules.behind(cp));
    (
        out.into_iter().filter_map(HealthDraft::build).collect(),
        rules.next.get(),
    )
}

/// One NodePool's rules, each a draft or none; `next`: the earliest instant after `now` at
/// which time alone changes them.
struct PoolRules<'p, 'a> {
    pool: &'p NodePoolView<'a>,
    name: &'a str,
    subject: Subject,
    now: Timestamp,
    next: std::cell::Cell<Option<Timestamp>>,
}

impl PoolRules<'_, '_> {
    /// Time alone changes the insights at `t` (when later than now).
    fn soon(&self, t: Timestamp) {
        if t > self.now {
            self.next
                .set(Some(self.next.get().map_or(t, |n: Timestamp| n.min(t))));
        }
    }

    /// A draft about the NodePool from its condition `c`: `says(c)` described.
    fn on_condition(
        &self,
        c: &InputCondition,
        source: &'static str,
        (level, type_): (ImpactLevel, ImpactType),
        summary: String,
    ) -> HealthDraft<'static> {
        let finding = Finding::of_condition(
            c,
            source,
            (level, type_),
            summary,
            REFERENCE_NODE_POOL_ROLLOUTS,
        );
        self.subject.draft(Some(c), finding)
    }

    fn in_place_failed(&self) -> Option<HealthDraft<'static>> {
        let np = self.pool.np;
        let c = ["UpdatingVersion", "UpdatingConfig"]
            .into_iter()
            .filter_map(|t| np.condition(t))
            .find(|c| c.is_false() && c.reason == REASON_IN_PLACE_FAILED)?;
        let mut description = says(c);
        if let Some(ms_msg) = self
            .pool
            .ms_degraded
            .filter(|m| !m.is_empty() && !description.contains(m))
        {
            description = format!("{description} ({ms_msg})");
        }
        Some(HealthDraft {
            description,
            ..self.on_condition(
                c,
                SOURCE_IN_PLACE_FAILED,
                (ImpactLevel::Error, ImpactType::UpdateStalled),
                format!("The in-place update of NodePool {} failed", self.name),
            )
        })
    }

    /// The last node phase change of an update (`c`: `UpdatingVersion=True`): a new Machine
    /// created or healthy, an old one deleted or drained, or `c` itself.
    fn last_progress(&self, c: &InputCondition) -> Option<Timestamp> {
        let f = self.pool.facts;
        let machines = self.pool.machines;
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
        new_machines
            .chain(replaced)
            .flatten()
            .chain(c.last_transition_time)
            .max()
    }

    /// `UpdatingVersion=True` with no node progress for [`STUCK_AFTER`].
    fn update_stuck(&self) -> Option<HealthDraft<'static>> {
        let c = self
            .pool
            .np
            .condition("UpdatingVersion")
            .filter(|c| c.is_true())?;
        let last = self.last_progress(c)?;
        if self.now.duration_since(last) < STUCK_AFTER {
            self.soon(last + STUCK_AFTER);
            return None;
        }
        let f = self.pool.facts;
        Some(HealthDraft {
            started_at: Some(last + STUCK_AFTER),
            ..self.subject.draft(
                Some(c),
                Finding {
                    source: SOURCE_UPDATE_STUCK,
                    level: ImpactLevel::Warning,
                    type_: ImpactType::UpdateStalled,
                    summary: format!(
                        "NodePool {} has made no update progress for 30 minutes",
                        self.name
                    ),
                    description: format!("UpdatingVersion=True since {}, no node reached the target version {} since {last}: {}", c.last_transition_time.map_or("an unknown time".to_string(), |t| t.to_string()), f.target, says(c)),
                    reference: REFERENCE_NODE_POOL_ROLLOUTS,
                },
            )
        })
    }

    fn invalid_release_image(&self) -> Option<HealthDraft<'static>> {
        let np = self.pool.np;
        let c = np.condition("ValidReleaseImage").filter(|c| c.is_false())?;
        Some(HealthDraft {
            description: format!("spec.release.image {}: {}", np.spec.release.image, says(c)),
            ..self.on_condition(
                c,
                SOURCE_NP_INVALID_RELEASE_IMAGE,
                (ImpactLevel::Error, ImpactType::UpdateStalled),
                format!("NodePool {} has an invalid release image", self.name),
            )
        })
    }

    fn unsupported_skew(&self) -> Option<HealthDraft<'static>> {
        let c = self
            .pool
            .np
            .condition("SupportedVersionSkew")
            .filter(|c| c.is_false())?;
        Some(HealthDraft {
            reference: REFERENCE_VERSION_SKEW,
            ..self.on_condition(
                c,
                SOURCE_UNSUPPORTED_SKEW,
                (ImpactLevel::Warning, ImpactType::None),
                format!(
                    "NodePool {} runs an unsupported version skew with its control plane",
                    self.name
                ),
            )
        })
    }

    fn machines_not_ready(&self) -> Option<HealthDraft<'static>> {
        let c = ["AllMachinesReady", "ReachedIgnitionEndpoint"]
            .into_iter()
            .filter_map(|t| self.pool.np.condition(t))
            .find(|c| c.is_false())?;
        let impact = if self.pool.facts.updating {
            (ImpactLevel::Error, ImpactType::UpdateStalled)
        } else {
            (ImpactLevel::Warning, ImpactType::ClusterCapacity)
        };
        Some(self.on_condition(
            c,
            SOURCE_MACHINES_NOT_READY,
            impact,
            format!(
                "Machines of NodePool {} are not ready ({}=False)",
                self.name, c.type_
            ),
        ))
    }

    fn nodes_unhealthy(&self) -> Option<HealthDraft<'static>> {
        let np = self.pool.np;
        let c = np
            .condition("AllNodesHealthy")
            .filter(|c| c.is_false())
            .or_else(|| {
                np.condition("Ready")
                    .filter(|c| c.is_false() && c.reason == "TooManyUnhealthy")
            })?;
        Some(self.on_condition(
            c,
            SOURCE_NODES_UNHEALTHY,
            (ImpactLevel::Warning, ImpactType::ClusterCapacity),
            format!("Nodes of NodePool {} are not healthy", self.name),
        ))
    }

    /// The Machines being deleted whose drain failed or takes longer than [`DRAIN_GRACE`].
    fn drains_failed(&self) -> Vec<HealthDraft<'static>> {
        self.pool
            .machines
            .iter()
            .filter(|m| m.is_deleting())
            .filter_map(|m| self.drain_failed(m))
            .collect()
    }

    fn drain_failed(&self, m: &Machine) -> Option<HealthDraft<'static>> {
        let drain = m.condition("DrainingSucceeded");
        if drain.is_some_and(|d| d.is_true()) {
            return None;
        }
        let since = drain.and_then(|d| d.last_transition_time).or(m
            .metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| t.0));
        let failed = drain.is_some_and(|d| d.is_false() && d.reason == "DrainingFailed");
        let long = since.is_some_and(|s| self.now.duration_since(s) >= DRAIN_GRACE);
        if !failed && !long {
            if let Some(s) = since {
                self.soon(s + DRAIN_GRACE);
            }
            return None;
        }
        let node = m.node_name().unwrap_or(m.name());
        Some(HealthDraft {
            resource: ResourceRef {
                group: CAPI_GROUP.to_string(),
                kind: "Machine".to_string(),
                name: m.name().to_string(),
                namespace: m.metadata.namespace.clone(),
            },
            started_at: since,
            ..self.subject.draft(
                None,
                Finding {
                    source: SOURCE_DRAIN_FAILED,
                    level: ImpactLevel::Warning,
                    type_: ImpactType::UpdateStalled,
                    summary: format!("Node {node} of NodePool {} cannot be drained", self.name),
                    description: drain.map_or_else(
                        || "The Machine is being deleted and its node has been draining for more than 10 minutes (a PodDisruptionBudget may block the eviction)".to_string(),
                        says,
                    ),
                    reference: REFERENCE_NODE_POOL_ROLLOUTS,
                },
            )
        })
    }

    /// The control plane is updated and the pool runs an older version.
    fn behind(&self, cp: &HostedControlPlaneFacts) -> Option<HealthDraft<'static>> {
        let f = self.pool.facts;
        let behind = cp.completed
            && !f.updating
            && !f.current.is_empty()
            && older(&f.current, &cp.versions.target);
        behind.then(|| {
            self.subject.draft(
                None,
                Finding {
                    source: SOURCE_BEHIND,
                    level: ImpactLevel::Info,
                    type_: ImpactType::None,
                    summary: format!(
                        "NodePool {} runs {} while the control plane runs {}",
                        self.name, f.current, cp.versions.target
                    ),
                    description: "NodePool updates are explicit in hosted control planes: set the NodePool's spec.release.image to update its nodes.".to_string(),
                    reference: REFERENCE_NODE_POOL_ROLLOUTS,
                },
            )
        })
    }
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
