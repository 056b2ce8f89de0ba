//! The update's story as Kubernetes Events (`events.k8s.io/v1`): what changed between two
//! readings of our objects, never what merely moved. Pure: the controller's events task reads
//! its caches, calls [`transitions`] with the previous reading, and publishes what comes out.
//!
//! - a health insight appearing ([`REASON_INSIGHT_APPEARED`]), changing level
//!   ([`REASON_INSIGHT_LEVEL_CHANGED`]) or resolving ([`REASON_INSIGHT_RESOLVED`]): one Event
//!   regarding the input object it is about ([`regarding`]), its summary as the note;
//! - an update starting ([`REASON_UPDATE_STARTED`]) and completing
//!   ([`REASON_UPDATE_COMPLETED`]), regarding the ClusterVersion (the HostedCluster in hosted
//!   mode);
//! - nothing for progress insights, counts, estimates or any change of a health insight other
//!   than its level.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use update_status_api::crd::{ControlPlaneUpdateStatusStatus, ImpactLevel, ResourceRef};

/// A health insight appeared.
pub const REASON_INSIGHT_APPEARED: &str = "InsightAppeared";
/// A health insight's impact level changed.
pub const REASON_INSIGHT_LEVEL_CHANGED: &str = "InsightLevelChanged";
/// A health insight is gone: the problem is over.
pub const REASON_INSIGHT_RESOLVED: &str = "InsightResolved";
/// An update started (or was retargeted to another version).
pub const REASON_UPDATE_STARTED: &str = "UpdateStarted";
/// An update completed.
pub const REASON_UPDATE_COMPLETED: &str = "UpdateCompleted";
/// Every reason, for documentation and tests.
pub const REASONS: [&str; 5] = [
    REASON_UPDATE_STARTED,
    REASON_INSIGHT_APPEARED,
    REASON_INSIGHT_LEVEL_CHANGED,
    REASON_INSIGHT_RESOLVED,
    REASON_UPDATE_COMPLETED,
];
/// The Events' `action` (what update-status did: it assessed the update).
pub const ACTION: &str = "Assess";

/// The kinds of input objects an Event may be regarding (those the insights are about and
/// owned by).
const INPUT_KINDS: [(&str, &str, &str); 6] = [
    ("", "v1", "Node"),
    ("config.openshift.io", "v1", "ClusterOperator"),
    ("config.openshift.io", "v1", "ClusterVersion"),
    (
        "machineconfiguration.openshift.io",
        "v1",
        "MachineConfigPool",
    ),
    ("hypershift.openshift.io", "v1beta1", "HostedCluster"),
    ("hypershift.openshift.io", "v1beta1", "NodePool"),
];

/// An object an Event is about (or related to).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Regarding {
    /// `apiVersion`.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Namespace (`None`: cluster-scoped; the Event then goes to `default`).
    pub namespace: Option<String>,
    /// Its uid, when known.
    pub uid: Option<String>,
}

impl Regarding {
    /// An owner reference of an input kind, in `namespace` (owners share their dependent's).
    fn of_owner(o: &OwnerReference, namespace: Option<&str>) -> Option<Regarding> {
        INPUT_KINDS.iter().any(|(_, _, k)| *k == o.kind).then(|| {
            let namespaced = matches!(o.kind.as_str(), "HostedCluster" | "NodePool");
            Regarding {
                api_version: o.api_version.clone(),
                kind: o.kind.clone(),
                name: o.name.clone(),
                namespace: namespace.filter(|_| namespaced).map(str::to_string),
                uid: Some(o.uid.clone()).filter(|u| !u.is_empty()),
            }
        })
    }

    /// A resource of an input kind.
    fn of_input(r: &ResourceRef) -> Option<Regarding> {
        let (_, version, _) = INPUT_KINDS
            .iter()
            .find(|(g, _, k)| *g == r.group && *k == r.kind)?;
        Some(Self::of_ref(r, version))
    }

    /// Any resource (a related one: its version as the group's usual one).
    fn of_ref(r: &ResourceRef, version: &str) -> Regarding {
        Regarding {
            api_version: if r.group.is_empty() {
                version.to_string()
            } else {
                format!("{}/{version}", r.group)
            },
            kind: r.kind.clone(),
            name: r.name.clone(),
            namespace: r.namespace.clone(),
            uid: None,
        }
    }
}

/// What one health insight says, as the Events compare it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenInsight {
    /// Its level.
    pub level: ImpactLevel,
    /// Its summary (the Event's note).
    pub summary: String,
    /// The object the Events about it are regarding ([`regarding`]).
    pub regarding: Regarding,
    /// What it points at first (its first `related` resource): the Events' `related`.
    pub related: Option<Regarding>,
}

/// The object an insight's Events are regarding: its owner when that is an input (a Node, a
/// ClusterOperator, the ClusterVersion, a pool; in hosted mode the HostedCluster or the
/// NodePool, also for a hosted node), else its resource when that is an input object, else
/// `update` (the ClusterVersion or HostedCluster the update is of: for an alert, Prometheus
/// or another object's insight). `None` when nothing fits.
pub fn regarding(
    resource: &ResourceRef,
    owner: Option<&OwnerReference>,
    namespace: Option<&str>,
    update: Option<&Regarding>,
) -> Option<Regarding> {
    owner
        .and_then(|o| Regarding::of_owner(o, namespace))
        .or_else(|| Regarding::of_input(resource))
        .or_else(|| update.cloned())
}

/// An insight's first related resource as an Event's `related`.
pub fn first_related(related: &[ResourceRef]) -> Option<Regarding> {
    related.first().map(|r| {
        let version = match r.group.as_str() {
            "apps" | "policy" | "batch" | "" => "v1",
            g => INPUT_KINDS
                .iter()
                .find(|(group, _, _)| *group == g)
                .map_or("v1", |(_, v, _)| v),
        };
        Regarding::of_ref(r, version)
    })
}

/// What the control plane says of the update, as the Events compare it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenUpdate {
    /// The version updated to.
    pub target: String,
    /// The version updated from.
    pub previous: String,
    /// When it started.
    pub started_at: Option<jiff::Timestamp>,
    /// When it completed (`None`: in progress).
    pub completed_at: Option<jiff::Timestamp>,
    /// The ClusterVersion (HostedCluster) it is of.
    pub regarding: Regarding,
}

impl SeenUpdate {
    /// From a ControlPlaneUpdateStatus and the object it is of.
    pub fn of(status: &ControlPlaneUpdateStatusStatus, regarding: Regarding) -> Self {
        SeenUpdate {
            target: status.versions.target.clone(),
            previous: status.versions.previous.clone(),
            started_at: status.started_at,
            completed_at: status.completed_at,
            regarding,
        }
    }
}

/// One reading of our objects: the health insights and the updates, by object key
/// (`namespace/name`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// Health insights.
    pub insights: BTreeMap<String, SeenInsight>,
    /// Control-plane statuses (one per cluster; several in hosted mode).
    pub updates: BTreeMap<String, SeenUpdate>,
}

/// An Event to publish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Story {
    /// One of [`REASONS`].
    pub reason: &'static str,
    /// `Warning` (an insight at level Warning or above appearing or changing level) or
    /// `Normal` (anything else: Info and Unknown insights, a problem resolving, the update).
    pub warning: bool,
    /// What it is about.
    pub regarding: Regarding,
    /// A secondary object (what the insight points at first).
    pub related: Option<Regarding>,
    /// The note: the insight's summary, or what the update did.
    pub note: String,
}

/// A release image pull spec (`quay.io/...:4.18.3`, `...@sha256:...`) rather than a version.
fn is_pull_spec(target: &str) -> bool {
    target.contains('/') || target.contains('@')
}

/// The Events between two readings, in the order they tell the story: updates starting, then
/// insights resolving, changing level and appearing (each by object key), then updates
/// completing.
pub fn transitions(before: &Reading, after: &Reading) -> Vec<Story> {
    let (started, completed) = update_stories(before, after);
    let insights = insight_stories(before, after);
    started
        .into_iter()
        .chain(insights.resolved)
        .chain(insights.changed)
        .chain(insights.appeared)
        .chain(completed)
        .collect()
}

/// The updates' Events between two readings: those starting, and those completing.
fn update_stories(before: &Reading, after: &Reading) -> (Vec<Story>, Vec<Story>) {
    let mut started = Vec::new();
    let mut completed = Vec::new();
    for (key, now) in &after.updates {
        let Some(was) = before.updates.get(key) else {
            continue;
        };
        let in_progress = now.completed_at.is_none();
        // One Event per update: it starts when the previous one is over, or when it is
        // retargeted to another version. A target known only as a release image pull spec
        // resolving to its version (a hosted update while the image is being checked), or a
        // start time moving (a hosted update requested, then actually started), is the same
        // update.
        let retargeted = was.target != now.target && !is_pull_spec(&was.target);
        let new_update = was.completed_at.is_some() || retargeted;
        if in_progress && new_update {
            started.push(update_started(now));
        }
        if was.completed_at.is_none()
            && let Some(done) = now.completed_at
        {
            completed.push(update_completed(now, done));
        }
    }
    (started, completed)
}

/// The Event of an update starting.
fn update_started(now: &SeenUpdate) -> Story {
    Story {
        reason: REASON_UPDATE_STARTED,
        warning: false,
        regarding: now.regarding.clone(),
        related: None,
        note: if now.previous.is_empty() {
            format!("Installation of {} started", now.target)
        } else {
            format!("Update from {} to {} started", now.previous, now.target)
        },
    }
}

/// The Event of an update completing at `done`.
fn update_completed(now: &SeenUpdate, done: jiff::Timestamp) -> Story {
    let took = now
        .started_at
        .map(|s| {
            let d = crate::format::round(done.duration_since(s).as_nanos(), crate::format::SECOND);
            format!(" (duration: {})", crate::format::short_duration(d))
        })
        .unwrap_or_default();
    Story {
        reason: REASON_UPDATE_COMPLETED,
        warning: false,
        regarding: now.regarding.clone(),
        related: None,
        note: format!("Update to {} completed{took}", now.target),
    }
}

/// The insights' Events between two readings, by kind.
struct InsightStories {
    resolved: Vec<Story>,
    changed: Vec<Story>,
    appeared: Vec<Story>,
}

/// The insights resolving, changing level and appearing between two readings (each by object
/// key).
fn insight_stories(before: &Reading, after: &Reading) -> InsightStories {
    let mut out = InsightStories {
        resolved: Vec::new(),
        changed: Vec::new(),
        appeared: Vec::new(),
    };
    for (key, was) in &before.insights {
        if !after.insights.contains_key(key) {
            out.resolved.push(Story {
                reason: REASON_INSIGHT_RESOLVED,
                warning: false,
                regarding: was.regarding.clone(),
                related: was.related.clone(),
                note: was.summary.clone(),
            });
        }
    }
    for (key, now) in &after.insights {
        let warning = now.level >= ImpactLevel::Warning;
        match before.insights.get(key) {
            None => out.appeared.push(Story {
                reason: REASON_INSIGHT_APPEARED,
                warning,
                regarding: now.regarding.clone(),
                related: now.related.clone(),
                note: now.summary.clone(),
            }),
            Some(was) if was.level != now.level => out.changed.push(Story {
                reason: REASON_INSIGHT_LEVEL_CHANGED,
                warning,
                regarding: now.regarding.clone(),
                related: now.related.clone(),
                note: format!(
                    "{} (level {} → {})",
                    now.summary,
                    was.level.as_str(),
                    now.level.as_str()
                ),
            }),
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Regarding {
        Regarding {
            api_version: "v1".into(),
            kind: "Node".into(),
            name: name.into(),
            namespace: None,
            uid: Some(format!("uid-{name}")),
        }
    }

    fn cv() -> Regarding {
        Regarding {
            api_version: "config.openshift.io/v1".into(),
            kind: "ClusterVersion".into(),
            name: "version".into(),
            namespace: None,
            uid: None,
        }
    }

    fn insight(level: ImpactLevel, summary: &str, on: &str) -> SeenInsight {
        SeenInsight {
            level,
            summary: summary.into(),
            regarding: node(on),
            related: None,
        }
    }

    fn update(target: &str, completed: Option<&str>) -> SeenUpdate {
        SeenUpdate {
            target: target.into(),
            previous: "4.17.12".into(),
            started_at: Some("2026-01-01T03:00:00Z".parse().expect("ts")),
            completed_at: completed.map(|c| c.parse().expect("ts")),
            regarding: cv(),
        }
    }

    fn reading(insights: &[(&str, SeenInsight)], updates: &[(&str, SeenUpdate)]) -> Reading {
        Reading {
            insights: insights
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            updates: updates
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    fn reasons(stories: &[Story]) -> Vec<&str> {
        stories.iter().map(|s| s.reason).collect()
    }

    #[test]
    fn appearing_changing_level_and_resolving_are_one_event_each() {
        let degraded = insight(ImpactLevel::Error, "Node worker-3 is degraded", "worker-3");
        let slow = insight(
            ImpactLevel::Warning,
            "Node worker-1 is not ready",
            "worker-1",
        );
        let before = reading(&[("ns/a", slow.clone())], &[]);
        let after = reading(&[("ns/a", slow.clone()), ("ns/b", degraded.clone())], &[]);
        let s = transitions(&before, &after);
        assert_eq!(reasons(&s), [REASON_INSIGHT_APPEARED]);
        assert_eq!(s[0].note, "Node worker-3 is degraded");
        assert_eq!(s[0].regarding, node("worker-3"));
        assert!(s[0].warning);
        // Nothing changed: nothing to say.
        assert!(transitions(&after, &after).is_empty());
        // A change of summary or of what it points at only: nothing either.
        let mut reworded = after.clone();
        if let Some(b) = reworded.insights.get_mut("ns/b") {
            b.summary = "other words".into();
            b.related = Some(node("x"));
        }
        assert!(transitions(&after, &reworded).is_empty());
        // Worse, then gone.
        let mut worse = after.clone();
        if let Some(a) = worse.insights.get_mut("ns/a") {
            a.level = ImpactLevel::Critical;
        }
        let s = transitions(&after, &worse);
        assert_eq!(reasons(&s), [REASON_INSIGHT_LEVEL_CHANGED]);
        assert_eq!(
            s[0].note,
            "Node worker-1 is not ready (level Warning → Critical)"
        );
        let s = transitions(&worse, &reading(&[], &[]));
        assert_eq!(
            reasons(&s),
            [REASON_INSIGHT_RESOLVED, REASON_INSIGHT_RESOLVED]
        );
        assert!(s.iter().all(|s| !s.warning));
        // An Info insight appearing is a Normal Event.
        let info = reading(&[("ns/c", insight(ImpactLevel::Info, "fyi", "n"))], &[]);
        assert!(!transitions(&reading(&[], &[]), &info)[0].warning);
    }

    #[test]
    fn an_update_starts_and_completes_on_the_cluster_version() {
        let done_before = reading(
            &[],
            &[(
                "ns/cluster",
                update("4.17.12", Some("2025-12-01T00:00:00Z")),
            )],
        );
        let running = reading(&[], &[("ns/cluster", update("4.18.3", None))]);
        let s = transitions(&done_before, &running);
        assert_eq!(reasons(&s), [REASON_UPDATE_STARTED]);
        assert_eq!(s[0].note, "Update from 4.17.12 to 4.18.3 started");
        assert_eq!(s[0].regarding, cv());
        assert!(transitions(&running, &running).is_empty());
        let done = reading(
            &[],
            &[("ns/cluster", update("4.18.3", Some("2026-01-01T04:05:30Z")))],
        );
        let s = transitions(&running, &done);
        assert_eq!(reasons(&s), [REASON_UPDATE_COMPLETED]);
        assert_eq!(s[0].note, "Update to 4.18.3 completed (duration: 1h5m30s)");
        // First reading of a status (a controller starting mid-update): no story to tell.
        assert!(transitions(&reading(&[], &[]), &running).is_empty());
    }

    #[test]
    fn a_hosted_update_requested_then_started_is_one_update() {
        let completed = update("4.17.12", Some("2025-12-01T00:00:00Z"));
        let mut by_image = update(
            "quay.io/openshift-release-dev/ocp-release:4.18.3-x86-64",
            None,
        );
        by_image.started_at = Some("2025-12-12T07:00:00Z".parse().expect("ts"));
        let mut resolved = by_image.clone();
        resolved.target = "4.18.3".into();
        let mut started = resolved.clone();
        started.started_at = Some("2026-01-01T08:05:00Z".parse().expect("ts"));
        let mut retargeted = started.clone();
        retargeted.target = "4.18.4".into();
        let readings = [completed, by_image, resolved, started, retargeted.clone()]
            .map(|u| reading(&[], &[("ns/demo", u)]));
        let told: Vec<Vec<&str>> = readings
            .windows(2)
            .map(|w| transitions(&w[0], &w[1]).iter().map(|s| s.reason).collect())
            .collect();
        assert_eq!(
            told,
            [
                vec![REASON_UPDATE_STARTED],
                vec![],
                vec![],
                vec![REASON_UPDATE_STARTED]
            ],
            "started, the image resolved to its version, actually started, retargeted"
        );
        let s = transitions(&readings[3], &readings[4]);
        assert_eq!(s[0].note, "Update from 4.17.12 to 4.18.4 started");
    }

    #[test]
    fn one_pass_tells_the_story_in_order() {
        let before = reading(
            &[("ns/old", insight(ImpactLevel::Warning, "old", "n1"))],
            &[(
                "ns/cluster",
                update("4.17.12", Some("2025-12-01T00:00:00Z")),
            )],
        );
        let after = reading(
            &[("ns/new", insight(ImpactLevel::Error, "new", "n2"))],
            &[("ns/cluster", update("4.18.3", None))],
        );
        assert_eq!(
            reasons(&transitions(&before, &after)),
            [
                REASON_UPDATE_STARTED,
                REASON_INSIGHT_RESOLVED,
                REASON_INSIGHT_APPEARED
            ]
        );
    }

    #[test]
    fn events_regard_the_input_object_the_insight_is_about() {
        let owner = |kind: &str, name: &str, api: &str| OwnerReference {
            api_version: api.into(),
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            ..Default::default()
        };
        let node_ref = ResourceRef {
            kind: "Node".into(),
            name: "worker-3".into(),
            ..Default::default()
        };
        // Owned by the node: the node, with its uid.
        let r = regarding(
            &node_ref,
            Some(&owner("Node", "worker-3", "v1")),
            Some("ns"),
            None,
        )
        .expect("regarding");
        assert_eq!(r, node("worker-3"));
        // Not owned (a snapshot without uids): the resource itself.
        let r = regarding(&node_ref, None, Some("ns"), None).expect("regarding");
        assert_eq!(
            (r.kind.as_str(), r.name.as_str(), r.uid),
            ("Node", "worker-3", None)
        );
        // An alert (owned by our ControlPlaneUpdateStatus): the update's ClusterVersion.
        let alert = ResourceRef {
            group: "config.openshift.io".into(),
            kind: "Alert".into(),
            name: "PodDisruptionBudgetAtLimit".into(),
            namespace: Some("shop".into()),
        };
        let ours = owner(
            "ControlPlaneUpdateStatus",
            "cluster",
            "update.openshift.io/v1alpha1",
        );
        assert_eq!(
            regarding(&alert, Some(&ours), Some("ns"), Some(&cv())),
            Some(cv())
        );
        assert_eq!(regarding(&alert, Some(&ours), Some("ns"), None), None);
        // Hosted: a hosted node's insight is owned by its NodePool, in the namespace.
        let np = owner("NodePool", "workers", "hypershift.openshift.io/v1beta1");
        let r = regarding(&node_ref, Some(&np), Some("clusters"), None).expect("regarding");
        assert_eq!(
            (r.kind.as_str(), r.namespace.as_deref()),
            ("NodePool", Some("clusters"))
        );
        // What it points at first, as `related`.
        let pdb = ResourceRef {
            group: "policy".into(),
            kind: "PodDisruptionBudget".into(),
            name: "checkout-pdb".into(),
            namespace: Some("shop".into()),
        };
        let rel = first_related(&[pdb]).expect("related");
        assert_eq!(rel.api_version, "policy/v1");
        assert_eq!(first_related(&[]), None);
    }
}
