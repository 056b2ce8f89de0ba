//! HostedCluster → ControlPlaneUpdateStatus: the standalone control-plane assessment
//! ([`crate::compose::control_plane_share_with`]) run on a ClusterVersion adapted from the
//! HostedCluster ([`adapted_cluster_version`]), then the hosted differences (hosted.md §8):
//! "requested, not accepted" (Pending), "blocked" (Stalled), no operator detail without guest
//! access, the management-side flag, names, owners and resources.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, ControlPlaneUpdateStatusStatus, ControlPlaneVersions,
    ResourceRef, UpdateInsightStatus, labels, limits,
};
use update_status_api::hosted::HostedCluster;
use update_status_api::input::{
    ClusterVersion, ClusterVersionStatus, Condition as InputCondition, Release,
};

use super::inputs::HostedInputs;
use super::objects;
use crate::compose::{self, Desired, Existing, ExistingInsights, Labels};
use crate::control_plane::CONFIG_GROUP;
use crate::format::ellipsize;
use crate::inputs::ClusterInputs;
use crate::naming;

/// Condition on the ControlPlaneUpdateStatus (only with `status.controlPlaneVersion`): the
/// management-side components reached the target while `status.version` is still Partial.
pub const CONDITION_MANAGEMENT_SIDE_UPDATED: &str = "ManagementSideUpdated";
/// Condition on the ControlPlaneUpdateStatus: an update was requested (`spec.release.image`)
/// and the hosted CVO has not accepted it yet (HostedCluster `Progressing`).
pub const CONDITION_UPDATE_REQUESTED: &str = "UpdateRequested";

/// HostedCluster condition → ClusterVersion condition, copied as is.
const COPIED: [(&str, &str); 5] = [
    ("ClusterVersionProgressing", "Progressing"),
    ("ClusterVersionAvailable", "Available"),
    ("ClusterVersionReleaseAccepted", "ReleaseAccepted"),
    ("ClusterVersionUpgradeable", "Upgradeable"),
    ("ClusterVersionRetrievedUpdates", "RetrievedUpdates"),
];

/// The hosted ClusterVersion as the HostedCluster relays it: `status.version` (a verbatim copy
/// of the hosted ClusterVersion status) with the `ClusterVersion*` conditions renamed back, and
/// `ClusterVersionSucceeding` inverted into `Failing` (a `ClusterVersionFailing`, as the
/// HostedControlPlane carries it, is taken as is). Named after the HostedCluster, so the
/// standalone messages name it.
pub fn adapted_cluster_version(hc: &HostedCluster) -> ClusterVersion {
    let status = hc.status.as_ref();
    let version = status.and_then(|s| s.version.as_ref());
    let source = status.map_or(&[][..], |s| &s.conditions[..]);
    let mut conditions: Vec<InputCondition> = Vec::new();
    for (from, to) in COPIED {
        if let Some(c) = source.iter().find(|c| c.type_ == from) {
            conditions.push(InputCondition {
                type_: to.to_string(),
                ..c.clone()
            });
        }
    }
    if let Some(c) = source.iter().find(|c| c.type_ == "ClusterVersionFailing") {
        conditions.push(InputCondition {
            type_: "Failing".to_string(),
            ..c.clone()
        });
    } else if let Some(c) = source
        .iter()
        .find(|c| c.type_ == "ClusterVersionSucceeding")
    {
        let status = match c.status.as_str() {
            "True" => "False",
            "False" => "True",
            _ => "Unknown",
        };
        conditions.push(InputCondition {
            type_: "Failing".to_string(),
            status: status.to_string(),
            ..c.clone()
        });
    }
    ClusterVersion {
        metadata: ObjectMeta {
            name: Some(hc.name().to_string()).filter(|n| !n.is_empty()),
            ..Default::default()
        },
        status: ClusterVersionStatus {
            desired: version.map(|v| v.desired.clone()).unwrap_or_default(),
            history: version.map(|v| v.history.clone()).unwrap_or_default(),
            conditions,
        },
    }
}

/// The version of a release image, from what the HostedCluster knows (`status.version`'s
/// desired release, history, available and conditional updates); `None` when not found.
pub fn version_of_image<'a>(hc: &'a HostedCluster, image: &str) -> Option<&'a str> {
    if image.is_empty() {
        return None;
    }
    let v = hc.status.as_ref()?.version.as_ref()?;
    let releases = std::iter::once(&v.desired)
        .chain(v.available_updates.iter())
        .chain(v.conditional_updates.iter().map(|c| &c.release));
    let from_history = v
        .history
        .iter()
        .filter(|h| h.image == image && !h.version.is_empty())
        .map(|h| h.version.as_str());
    releases
        .filter(|r: &&Release| r.image == image && !r.version.is_empty())
        .map(|r| r.version.as_str())
        .chain(from_history)
        .next()
}

/// What the update of the control plane is, as hosted mode sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostedControlPlaneFacts {
    /// The standalone versions from `status.version.history`.
    pub versions: ControlPlaneVersions,
    /// An update was requested and not accepted yet (`Progressing=True`, reason `Progressing`):
    /// the version (or image) requested.
    pub requested: Option<String>,
    /// The update is refused (`Progressing=False`, reason `Blocked`, spec image ≠ desired):
    /// the HostedCluster's message.
    pub blocked: Option<InputCondition>,
    /// `status.version.history[0]` is Completed (and nothing newer is requested).
    pub completed: bool,
    /// `status.version.history[0]` is Completed.
    pub history_completed: bool,
}

/// The control plane's share of one hosted cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostedControlPlaneShare {
    /// The ControlPlaneUpdateStatus named after the HostedCluster.
    pub status: Option<Desired<ControlPlaneUpdateStatusStatus>>,
    /// Its progress and health insights (standalone rules on the adapted inputs).
    pub insights: Vec<Desired<UpdateInsightStatus>>,
    /// When time alone changes this share.
    pub requeue_after: Option<SignedDuration>,
    /// The facts the NodePools and the hosted health rules also read.
    pub versions: HostedControlPlaneFacts,
}

/// Facts of the HostedCluster's update (hosted.md §8).
pub fn facts(hc: &HostedCluster) -> HostedControlPlaneFacts {
    let version = hc.status.as_ref().and_then(|s| s.version.as_ref());
    let history = version.map_or(&[][..], |v| &v.history[..]);
    let versions = crate::control_plane::versions_from_history(history);
    let spec_image = hc.spec.release.image.as_str();
    let desired_image = version.map_or("", |v| v.desired.image.as_str());
    let differs = !spec_image.is_empty() && spec_image != desired_image;
    let progressing = hc.condition("Progressing");
    let requested = progressing
        .filter(|p| p.is_true() && p.reason == "Progressing" && differs)
        .map(|_| {
            version_of_image(hc, spec_image)
                .unwrap_or(spec_image)
                .to_string()
        });
    let blocked = progressing
        .filter(|p| p.is_false() && p.reason == "Blocked" && differs)
        .cloned();
    let history_completed = history.first().is_some_and(|h| h.is_completed());
    let completed = history_completed && requested.is_none() && blocked.is_none();
    HostedControlPlaneFacts {
        versions,
        requested,
        blocked,
        completed,
        history_completed,
    }
}

/// The control plane's share: the standalone share on the adapted inputs, then the hosted
/// differences.
pub(super) fn control_plane_share(
    inputs: &HostedInputs<'_>,
    existing: &Existing<'_>,
    base: &Labels,
    now: Timestamp,
) -> HostedControlPlaneShare {
    let hc = inputs.hosted_cluster;
    let cv = adapted_cluster_version(hc);
    let operators = inputs.guest.map_or(&[][..], |g| g.cluster_operators);
    let adapted = ClusterInputs {
        cluster_version: Some(&cv),
        cluster_operators: operators,
        ..Default::default()
    };
    let share = compose::control_plane_share_with(
        &adapted,
        None,
        existing.control_plane.and_then(|c| c.status.as_ref()),
        compose::Naming {
            existing: &ExistingInsights::default(),
            base,
        },
        now,
    );
    let f = facts(hc);
    let owner = compose::owner_of(hc);
    let hc_ref = objects::hosted_cluster_ref(hc);
    let operators_known = inputs.guest.is_some();

    let insights = share
        .insights
        .into_iter()
        .map(|d| {
            let mut s = d.status;
            retarget(&mut s, &hc_ref);
            if !operators_known {
                adjust_progress(&mut s, &f);
            }
            objects::insight(s, hc, base, owner.clone())
        })
        .collect();

    let status = share.status.map(|d| {
        let mut s = d.status;
        if !operators_known {
            without_operators(&mut s, &f);
        }
        hosted_assessment(&mut s, &f, hc);
        if let Some(c) = management_side_condition(hc) {
            s.conditions.push(c);
        }
        let mut l = d.labels;
        l.insert(labels::ASSESSMENT.into(), s.assessment.slug().into());
        Desired {
            name: naming::pool_status_name(hc.name()),
            labels: l,
            owner: owner.clone(),
            status: s,
        }
    });

    HostedControlPlaneShare {
        status,
        insights,
        requeue_after: share.requeue_after,
        versions: f,
    }
}

/// The adapted ClusterVersion's resource becomes the HostedCluster (in insights and their
/// related resources).
fn retarget(s: &mut UpdateInsightStatus, hc_ref: &ResourceRef) {
    let fix = |r: &mut ResourceRef| {
        if r.kind == "ClusterVersion" && r.group == CONFIG_GROUP {
            *r = hc_ref.clone();
        }
    };
    fix(&mut s.resource);
    if let Some(h) = s.health.as_mut() {
        h.related.iter_mut().for_each(fix);
    }
}

/// Without the hosted ClusterOperators the operator counts are unknown (all zero) and the
/// standalone rule "every operator updated" cannot decide completion: `status.version`'s
/// history does (Completed or not), with no percentage and no estimate.
fn without_operators(s: &mut ControlPlaneUpdateStatusStatus, f: &HostedControlPlaneFacts) {
    if s.assessment == Assessment::Unknown {
        return;
    }
    if f.history_completed {
        s.assessment = Assessment::Completed;
        s.completion_percent = 100;
    } else {
        s.assessment = Assessment::Progressing;
        s.completion_percent = 0;
        s.completed_at = None;
    }
    s.estimated_completed_at = None;
}

/// [`without_operators`] for the ClusterVersion (HostedCluster) progress insight.
fn adjust_progress(s: &mut UpdateInsightStatus, f: &HostedControlPlaneFacts) {
    if s.resource.kind != "HostedCluster" {
        return;
    }
    if let Some(p) = s.progress.as_mut()
        && p.assessment != Assessment::Unknown
    {
        p.assessment = if f.history_completed {
            Assessment::Completed
        } else {
            Assessment::Progressing
        };
        p.estimated_completed_at = None;
    }
}

/// hosted.md §8: requested and not yet accepted → `Pending` toward the requested version;
/// refused (`Blocked`) → `Stalled`.
fn hosted_assessment(
    s: &mut ControlPlaneUpdateStatusStatus,
    f: &HostedControlPlaneFacts,
    hc: &HostedCluster,
) {
    let progressing = hc.condition("Progressing");
    if let Some(requested) = &f.requested {
        if s.assessment == Assessment::Completed {
            s.assessment = Assessment::Pending;
            s.versions.previous = s.versions.target.clone();
            s.versions.previous_partial = false;
            s.versions.target = ellipsize(requested, limits::VERSION);
            s.versions.installation = false;
            s.completion_percent = 0;
            s.completed_at = None;
            s.started_at = progressing.and_then(|p| p.last_transition_time);
        }
        s.conditions
            .push(copied(CONDITION_UPDATE_REQUESTED, progressing));
    } else if let Some(blocked) = &f.blocked {
        s.assessment = Assessment::Stalled;
        let requested = version_of_image(hc, &hc.spec.release.image)
            .unwrap_or(&hc.spec.release.image)
            .to_string();
        if s.versions.target != requested {
            s.versions.previous = s.versions.target.clone();
            s.versions.target = ellipsize(&requested, limits::VERSION);
            s.completed_at = None;
            s.completion_percent = 0;
        }
        let mut c = copied(CONDITION_UPDATE_REQUESTED, Some(blocked));
        c.status = ConditionStatus::False;
        s.conditions.push(c);
    }
}

/// A HostedCluster condition copied under another type.
fn copied(type_: &str, c: Option<&InputCondition>) -> Condition {
    let Some(c) = c else {
        return Condition {
            type_: type_.to_string(),
            status: ConditionStatus::Unknown,
            ..Default::default()
        };
    };
    Condition {
        type_: type_.to_string(),
        status: match c.status.as_str() {
            "True" => ConditionStatus::True,
            "False" => ConditionStatus::False,
            _ => ConditionStatus::Unknown,
        },
        reason: ellipsize(
            if c.reason.is_empty() {
                "Unknown"
            } else {
                &c.reason
            },
            limits::CONDITION_REASON,
        ),
        message: ellipsize(&c.message, limits::CONDITION_MESSAGE),
        last_transition_time: c.last_transition_time,
    }
}

/// With `status.controlPlaneVersion` (HyperShift since 2026-03): `ManagementSideUpdated=True`
/// when its newest entry is Completed for the version `status.version` goes to, so a control
/// plane still Partial is "waiting for data-plane operators or worker capacity".
fn management_side_condition(hc: &HostedCluster) -> Option<Condition> {
    let status = hc.status.as_ref()?;
    let cpv = status.control_plane_version.as_ref()?;
    let newest = cpv.history.first();
    let target = status
        .version
        .as_ref()
        .and_then(|v| v.history.first())
        .map(|h| h.version.as_str())
        .unwrap_or_default();
    let done =
        newest.is_some_and(|h| h.is_completed() && (target.is_empty() || h.version == target));
    Some(Condition {
        type_: CONDITION_MANAGEMENT_SIDE_UPDATED.to_string(),
        status: if done {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        },
        reason: if done {
            "ControlPlaneComponentsUpdated"
        } else {
            "ControlPlaneComponentsUpdating"
        }
        .to_string(),
        message: ellipsize(
            &match newest {
                Some(h) => format!(
                    "status.controlPlaneVersion: {} {}",
                    if h.version.is_empty() {
                        "unknown"
                    } else {
                        &h.version
                    },
                    h.state
                ),
                None => "status.controlPlaneVersion has no history".to_string(),
            },
            limits::CONDITION_MESSAGE,
        ),
        last_transition_time: newest.and_then(|h| h.completion_time.or(h.started_time)),
    })
}
