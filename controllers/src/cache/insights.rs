//! What the watch caches hold of our own UpdateInsights: whole, or projected
//! ([`CachedInsight`]), read through the one view every reader of a cache uses
//! ([`Cached`](crate::runtime::existing::Cached)).
//!
//! A 5,000-node cluster has 5,000 node progress insights. Cached whole, each cost about 2.4 KB
//! (the CRD struct, the metadata with its label B-tree, the owner reference), 12 MB in all,
//! though the only reader of a progress insight's content is the writer deciding "changed or
//! not". So a progress insight is cached as a [`ProgressEntry`]: its name, namespace and
//! resourceVersion, the two labels the readers select on (`update.openshift.io/reconciler` and
//! `update.openshift.io/cluster`) and 64-bit fingerprints of its labels, owner and status:
//! about 300 bytes. Health insights are cached whole ([`CachedInsight::Whole`]): there are few,
//! and the core (`startedAt` carry-over), the metrics, the alerts reconciler and the hub copies
//! read their content. With `--hub-include-progress` the hub sync copies progress insights, so
//! they are cached whole too.
//!
//! kube's reflector [`Store`](kube::runtime::reflector::Store) holds any type implementing its
//! [`Lookup`](kube::runtime::reflector::Lookup) trait, so the projection is an event mapping in
//! front of kube's own reflector, not a reflector of our own.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use update_status_api::crd::{
    Condition, ConditionStatus, NodeTimeline, UpdateInsight, UpdateInsightStatus, labels,
};
use update_status_assess::compose::since::PriorConditions;

use super::fingerprint::{hash_of, unordered};
use crate::runtime::existing::{Cached, OurObject, our_label};

/// One of our UpdateInsights as the watch cache holds it.
#[derive(Clone, Debug)]
pub enum CachedInsight {
    /// The object itself (managed fields dropped): health insights, and progress insights
    /// when they are kept whole.
    Whole(Arc<UpdateInsight>),
    /// A progress insight reduced to what decides whether it must be written.
    Progress(ProgressEntry),
}

/// A progress insight reduced to what the writer compares and what readers select on.
#[derive(Clone, Debug)]
pub struct ProgressEntry {
    name: Box<str>,
    namespace: Option<Box<str>>,
    resource_version: Option<Box<str>>,
    /// Label `update.openshift.io/reconciler`.
    reconciler: Option<Box<str>>,
    /// Label `update.openshift.io/cluster` (hosted mode).
    cluster: Option<Box<str>>,
    /// [`labels_fingerprint`] of our labels.
    labels: u64,
    /// [`owner_fingerprint`] of the first owner reference.
    owner: u64,
    /// [`status_fingerprint`] of the status.
    status: u64,
    /// Its conditions' types, statuses and transition times: what the core carries over
    /// ([`update_status_assess::compose::since`]).
    conditions: Box<[Mark]>,
    /// A node's timeline (boxed: absent from most entries between updates): the core carries
    /// it over, and the estimates resume from it after a restart.
    timeline: Option<Box<NodeTimeline>>,
    deleting: bool,
}

/// A condition of a projected progress insight: its type (one of [`CONDITION_TYPES`]), status
/// and transition time (whole seconds; `i64::MIN`: none). 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mark {
    type_: u8,
    status: ConditionStatus,
    since: i64,
}

/// The condition types our progress insights carry (others are not kept: we write none).
const CONDITION_TYPES: [&str; 4] = ["Updating", "Available", "Degraded", "Healthy"];

impl Mark {
    fn of(c: &Condition) -> Option<Mark> {
        let type_ = CONDITION_TYPES.iter().position(|t| *t == c.type_)?;
        Some(Mark {
            type_: u8::try_from(type_).ok()?,
            status: c.status,
            since: c.last_transition_time.map_or(i64::MIN, |t| t.as_second()),
        })
    }
}

impl CachedInsight {
    /// `o` as cached: whole if it is not a progress insight or if `keep_progress`.
    pub fn new(o: UpdateInsight, keep_progress: bool) -> Self {
        let Some(status) = o
            .status
            .as_ref()
            .filter(|s| is_progress(s) && !keep_progress)
        else {
            return CachedInsight::Whole(Arc::new(o));
        };
        let meta = &o.metadata;
        let label = |k: &str| -> Option<Box<str>> {
            meta.labels.as_ref()?.get(k).map(|v| v.as_str().into())
        };
        CachedInsight::Progress(ProgressEntry {
            name: meta.name.as_deref().unwrap_or_default().into(),
            namespace: meta.namespace.as_deref().map(Into::into),
            resource_version: meta.resource_version.as_deref().map(Into::into),
            reconciler: label(labels::RECONCILER),
            cluster: label(labels::CLUSTER),
            labels: labels_fingerprint(
                meta.labels
                    .iter()
                    .flatten()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            ),
            owner: owner_fingerprint(meta.owner_references.as_ref().and_then(|r| r.first())),
            status: status_fingerprint(status),
            conditions: status
                .progress
                .iter()
                .flat_map(|p| &p.conditions)
                .filter_map(Mark::of)
                .collect(),
            timeline: status
                .progress
                .as_ref()
                .and_then(|p| p.timeline)
                .map(Box::new),
            deleting: meta.deletion_timestamp.is_some(),
        })
    }

    /// A node progress insight's timeline.
    pub fn timeline(&self) -> Option<NodeTimeline> {
        match self {
            CachedInsight::Whole(o) => o.status.as_ref()?.progress.as_ref()?.timeline,
            CachedInsight::Progress(p) => p.timeline.as_deref().copied(),
        }
    }

    /// The object, when it is cached whole.
    pub fn whole(&self) -> Option<&Arc<UpdateInsight>> {
        match self {
            CachedInsight::Whole(o) => Some(o),
            CachedInsight::Progress(_) => None,
        }
    }
}

/// The writer's comparisons: a whole insight as any object, a projected one by its
/// fingerprints.
impl OurObject<UpdateInsightStatus> for CachedInsight {
    fn labels_are(&self, desired: &BTreeMap<String, String>, reconciler: &str) -> bool {
        match self {
            CachedInsight::Whole(o) => o.labels_are(desired, reconciler),
            CachedInsight::Progress(p) => {
                p.labels == desired_labels_fingerprint(desired, reconciler)
            }
        }
    }
    fn owner_is(&self, owner: Option<&OwnerReference>) -> bool {
        match self {
            CachedInsight::Whole(o) => o.owner_is(owner),
            CachedInsight::Progress(p) => p.owner == owner_fingerprint(owner),
        }
    }
    fn status_is(&self, desired: &UpdateInsightStatus) -> bool {
        match self {
            CachedInsight::Whole(o) => o.status_is(desired),
            CachedInsight::Progress(p) => {
                is_progress(desired) && p.status == status_fingerprint(desired)
            }
        }
    }
}

/// What the projected progress insights of a cache say of their conditions, by object name
/// (indexed on the first look-up): the core's carry-over of transition times reads it
/// (those cached whole are read whole, through [`wholes`]).
pub struct ProgressConditions<'a> {
    objs: &'a [Arc<CachedInsight>],
    by_name: std::sync::OnceLock<std::collections::HashMap<&'a str, &'a ProgressEntry>>,
}

impl<'a> ProgressConditions<'a> {
    /// Over a cache's state.
    pub fn new(objs: &'a [Arc<CachedInsight>]) -> Self {
        ProgressConditions {
            objs,
            by_name: std::sync::OnceLock::new(),
        }
    }
}

impl<'a> ProgressConditions<'a> {
    fn entry(&self, name: &str) -> Option<&'a ProgressEntry> {
        let index = self.by_name.get_or_init(|| {
            self.objs
                .iter()
                .filter_map(|o| match o.as_ref() {
                    CachedInsight::Progress(p) => Some((&*p.name, p)),
                    CachedInsight::Whole(_) => None,
                })
                .collect()
        });
        index.get(name).copied()
    }
}

impl PriorConditions for ProgressConditions<'_> {
    fn timeline(&self, name: &str) -> Option<NodeTimeline> {
        self.entry(name)?.timeline.as_deref().copied()
    }
    fn condition(&self, name: &str, type_: &str) -> Option<(ConditionStatus, Option<Timestamp>)> {
        let entry = self.entry(name)?;
        let wanted = CONDITION_TYPES.iter().position(|t| *t == type_)?;
        entry
            .conditions
            .iter()
            .find(|m| usize::from(m.type_) == wanted)
            .map(|m| {
                let since = (m.since != i64::MIN)
                    .then(|| Timestamp::from_second(m.since).ok())
                    .flatten();
                (m.status, since)
            })
    }
}

/// The insights of `objs` cached whole (health insights; progress insights too when kept
/// whole): what the core, the metrics, the alerts reconciler and the hub copies read.
pub fn wholes(objs: &[Arc<CachedInsight>]) -> Vec<Arc<UpdateInsight>> {
    objs.iter().filter_map(|o| o.whole().cloned()).collect()
}

/// A progress insight (and nothing else: a status with both parts is compared whole).
fn is_progress(s: &UpdateInsightStatus) -> bool {
    s.progress.is_some() && s.health.is_none()
}

/// An order-independent fingerprint of the labels of ours among `labels` (the labels
/// [`crate::runtime::writer`] adds and removes; others' labels are left alone, so not compared).
pub fn labels_fingerprint<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> u64 {
    unordered(labels.into_iter().filter(|(k, _)| our_label(k)))
}

/// [`labels_fingerprint`] of the labels the writer writes for `desired` (with the reconciler's
/// and managed-by labels). Allocates nothing.
fn desired_labels_fingerprint(desired: &BTreeMap<String, String>, reconciler: &str) -> u64 {
    let fixed = [
        (labels::RECONCILER, reconciler),
        (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
    ];
    labels_fingerprint(
        desired
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .filter(|(k, _)| *k != labels::RECONCILER && *k != labels::MANAGED_BY)
            .chain(fixed),
    )
}

/// Fingerprint of an owner reference as the writer compares it (uid, kind, name).
fn owner_fingerprint(owner: Option<&OwnerReference>) -> u64 {
    hash_of(&owner.map(|o| (&o.uid, &o.kind, &o.name)))
}

/// Fingerprint of a progress insight's status.
fn status_fingerprint(s: &UpdateInsightStatus) -> u64 {
    hash_of(&(&s.type_, &s.resource, &s.scope, &s.progress))
}

impl Cached for CachedInsight {
    fn cached_name(&self) -> &str {
        match self {
            CachedInsight::Whole(o) => o.cached_name(),
            CachedInsight::Progress(p) => &p.name,
        }
    }
    fn cached_namespace(&self) -> Option<&str> {
        match self {
            CachedInsight::Whole(o) => o.cached_namespace(),
            CachedInsight::Progress(p) => p.namespace.as_deref(),
        }
    }
    fn cached_resource_version(&self) -> Option<&str> {
        match self {
            CachedInsight::Whole(o) => o.cached_resource_version(),
            CachedInsight::Progress(p) => p.resource_version.as_deref(),
        }
    }
    fn cached_label(&self, key: &str) -> Option<&str> {
        match self {
            CachedInsight::Whole(o) => o.cached_label(key),
            CachedInsight::Progress(p) if key == labels::RECONCILER => p.reconciler.as_deref(),
            CachedInsight::Progress(p) if key == labels::CLUSTER => p.cluster.as_deref(),
            CachedInsight::Progress(_) => None,
        }
    }
    fn cached_deleting(&self) -> bool {
        match self {
            CachedInsight::Whole(o) => o.cached_deleting(),
            CachedInsight::Progress(p) => p.deleting,
        }
    }
}

/// Implements kube's [`Lookup`] for `$projection`, a projection of objects of kind `$kind`
/// that implements [`Cached`]: the store's key is the name and namespace; the resourceVersion
/// and uid, which kube copies into every key when a type offers them, are not given (nothing
/// reads them from a key).
macro_rules! lookup_as {
    ($projection:ty, $kind:ty) => {
        impl kube::runtime::reflector::Lookup for $projection {
            type DynamicType = ();

            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                <$kind as kube::Resource>::kind(&())
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                <$kind as kube::Resource>::group(&())
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                <$kind as kube::Resource>::version(&())
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                <$kind as kube::Resource>::plural(&())
            }
            fn name(&self) -> Option<std::borrow::Cow<'_, str>> {
                Some(std::borrow::Cow::Borrowed(
                    $crate::runtime::existing::Cached::cached_name(self),
                ))
            }
            fn namespace(&self) -> Option<std::borrow::Cow<'_, str>> {
                $crate::runtime::existing::Cached::cached_namespace(self)
                    .map(std::borrow::Cow::Borrowed)
            }
            fn resource_version(&self) -> Option<std::borrow::Cow<'_, str>> {
                None
            }
            fn uid(&self) -> Option<std::borrow::Cow<'_, str>> {
                None
            }
        }
    };
}
pub(crate) use lookup_as;

lookup_as!(CachedInsight, UpdateInsight);

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{
        Assessment, HealthInsight, InsightType, ProgressInsight, ResourceRef,
    };

    fn owner(uid: &str) -> OwnerReference {
        OwnerReference {
            api_version: "v1".into(),
            kind: "Node".into(),
            name: "n1".into(),
            uid: uid.into(),
            ..Default::default()
        }
    }

    fn progress(message: &str) -> UpdateInsightStatus {
        UpdateInsightStatus {
            type_: InsightType::Progress,
            resource: ResourceRef {
                kind: "Node".into(),
                name: "n1".into(),
                ..Default::default()
            },
            progress: Some(ProgressInsight {
                assessment: Assessment::Progressing,
                message: message.into(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// Our labels as the writer writes them for `desired`, plus one label set by someone else.
    fn written(desired: &BTreeMap<String, String>, reconciler: &str) -> BTreeMap<String, String> {
        let mut l = desired.clone();
        l.insert(labels::RECONCILER.into(), reconciler.into());
        l.insert(labels::MANAGED_BY.into(), labels::MANAGED_BY_VALUE.into());
        l.insert("someone.else/label".into(), "x".into());
        l
    }

    fn object(
        labels: BTreeMap<String, String>,
        owner: Option<OwnerReference>,
        status: UpdateInsightStatus,
    ) -> UpdateInsight {
        let mut o = UpdateInsight::new("n1-progress", Default::default());
        o.status = Some(status);
        o.metadata.namespace = Some("update-status".into());
        o.metadata.resource_version = Some("42".into());
        o.metadata.labels = Some(labels);
        o.metadata.owner_references = owner.map(|o| vec![o]);
        o
    }

    fn desired_labels() -> BTreeMap<String, String> {
        [
            (labels::INSIGHT_TYPE.to_string(), "progress".to_string()),
            (labels::POOL.to_string(), "worker".to_string()),
            (labels::CLUSTER.to_string(), "hc1".to_string()),
        ]
        .into()
    }

    #[test]
    fn a_progress_insight_is_cached_as_fingerprints_that_compare_like_the_object() {
        let (labels_, status) = (desired_labels(), progress("draining"));
        let o = object(
            written(&labels_, "worker-pools"),
            Some(owner("u1")),
            status.clone(),
        );
        let whole = CachedInsight::new(o.clone(), true);
        let slim = CachedInsight::new(o, false);
        assert!(whole.whole().is_some());
        assert!(slim.whole().is_none());
        for c in [&whole, &slim] {
            assert_eq!(c.cached_name(), "n1-progress");
            assert_eq!(c.cached_namespace(), Some("update-status"));
            assert_eq!(c.cached_resource_version(), Some("42"));
            assert_eq!(c.cached_label(labels::RECONCILER), Some("worker-pools"));
            assert_eq!(c.cached_label(labels::CLUSTER), Some("hc1"));
            assert!(!c.cached_deleting());

            assert!(c.labels_are(&labels_, "worker-pools"));
            assert!(!c.labels_are(&labels_, "control-plane"));
            let mut changed = labels_.clone();
            changed.insert(labels::POOL.into(), "infra".into());
            assert!(!c.labels_are(&changed, "worker-pools"));
            let mut fewer = labels_.clone();
            fewer.remove(labels::POOL);
            assert!(!c.labels_are(&fewer, "worker-pools"));

            assert!(c.owner_is(Some(&owner("u1"))));
            assert!(!c.owner_is(Some(&owner("u2"))));
            assert!(!c.owner_is(None));

            assert!(c.status_is(&status));
            assert!(!c.status_is(&progress("rebooting")));
            let mut health = status.clone();
            health.health = Some(HealthInsight::default());
            assert!(!c.status_is(&health));
        }
        assert_eq!(slim.cached_label(labels::POOL), None, "not kept");
    }

    #[test]
    fn health_insights_and_unowned_progress_insights_compare_too() {
        let health = UpdateInsightStatus {
            type_: InsightType::Health,
            health: Some(HealthInsight::default()),
            ..Default::default()
        };
        let o = object(
            written(&desired_labels(), "control-plane"),
            None,
            health.clone(),
        );
        let c = CachedInsight::new(o, false);
        assert!(c.whole().is_some(), "health insights are cached whole");
        assert!(c.status_is(&health) && c.owner_is(None));

        let mut o = object(BTreeMap::new(), None, progress("x"));
        o.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            jiff::Timestamp::UNIX_EPOCH,
        ));
        let c = CachedInsight::new(o, false);
        assert!(c.whole().is_none() && c.cached_deleting());
        assert!(c.owner_is(None) && !c.owner_is(Some(&owner("u1"))));
        assert!(
            !c.labels_are(&BTreeMap::new(), "worker-pools"),
            "no labels of ours"
        );
        assert_eq!(c.cached_label(labels::RECONCILER), None);
    }

    #[test]
    fn projected_progress_insights_keep_their_conditions_transition_times() {
        let mut status = progress("draining");
        if let Some(p) = status.progress.as_mut() {
            p.conditions = vec![
                Condition {
                    type_: "Updating".into(),
                    status: ConditionStatus::True,
                    last_transition_time: Some("2026-01-01T10:00:00Z".parse().expect("timestamp")),
                    ..Default::default()
                },
                Condition {
                    type_: "Degraded".into(),
                    status: ConditionStatus::False,
                    ..Default::default()
                },
                Condition {
                    type_: "SomethingElse".into(),
                    status: ConditionStatus::True,
                    ..Default::default()
                },
            ];
        }
        let objs = [Arc::new(CachedInsight::new(
            object(BTreeMap::new(), None, status),
            false,
        ))];
        let p = ProgressConditions::new(&objs);
        assert_eq!(
            p.condition("n1-progress", "Updating"),
            Some((
                ConditionStatus::True,
                Some("2026-01-01T10:00:00Z".parse().expect("timestamp"))
            ))
        );
        assert_eq!(
            p.condition("n1-progress", "Degraded"),
            Some((ConditionStatus::False, None))
        );
        assert_eq!(p.condition("n1-progress", "SomethingElse"), None);
        assert_eq!(p.condition("n1-progress", "Available"), None);
        assert_eq!(p.condition("other", "Updating"), None);
        assert_eq!(std::mem::size_of::<Mark>(), 16);
    }

    #[test]
    fn wholes_keeps_the_objects_cached_whole() {
        let health = UpdateInsightStatus {
            type_: InsightType::Health,
            health: Some(HealthInsight::default()),
            ..Default::default()
        };
        let objs: Vec<Arc<CachedInsight>> = [progress("a"), health]
            .into_iter()
            .map(|s| Arc::new(CachedInsight::new(object(BTreeMap::new(), None, s), false)))
            .collect();
        let w = wholes(&objs);
        assert_eq!(w.len(), 1);
        assert!(w[0].status.as_ref().is_some_and(|s| s.health.is_some()));
    }
}
