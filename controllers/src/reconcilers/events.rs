//! The events task: the update's story as Kubernetes Events (`events.k8s.io/v1`), so that
//! `kubectl events --for node/worker-3` shows what happened to that node during the update.
//!
//! It writes none of our objects and is off the reconcilers' path: woken by the watches of
//! our UpdateInsights and ControlPlaneUpdateStatus objects (100 ms debounce), it reads those
//! caches, compares with its previous reading ([`update_status_assess::events::transitions`]:
//! a health insight appearing, changing level or resolving; an update starting or
//! completing) and publishes each transition once through kube-runtime's
//! [`Recorder`](kube::runtime::events::Recorder), which turns a repeat of the same reason
//! about the same object within 6 minutes into an Event series (one Event patched, its count
//! raised) instead of a new Event.
//!
//! Bounded: one Event per transition, never one for a progress-only change; at most
//! [`BURST`] at once and [`PER_SECOND`] a second after that (a token bucket): the rest are
//! dropped, counted (`update_status_events_dropped_total`) and logged. What our objects say
//! when the task starts (once we lead and the caches have listed) is the baseline: a restart
//! or a new leader tells nothing again.
//!
//! RBAC: `create` and `patch` of `events.k8s.io` events where they go: `default` for the
//! cluster-scoped objects of a standalone cluster (`config/rbac/events.yaml`), the
//! HostedClusters' namespaces in hosted mode (`config/rbac/hosted/role.yaml`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::Store;
use update_status_api::crd::{ControlPlaneUpdateStatus, labels};
use update_status_assess::events::{
    self, ACTION, Reading, Regarding, SeenInsight, SeenUpdate, Story,
};

use crate::cache::insights::CachedInsight;
use crate::metrics::Metrics;
use crate::reconcilers::context::Context;
use crate::runtime::runner::{Reconcile, Requeue};
use crate::runtime::writer::WriteError;

/// Name of this task (metrics label, health heartbeat).
pub const NAME: &str = "events";
/// The Events' reporting controller.
pub const REPORTING_CONTROLLER: &str = "update-status-controller";
/// Events published at once before the rate limit applies.
pub const BURST: f64 = 30.0;
/// Events a second after the burst.
pub const PER_SECOND: f64 = 1.0;

/// A token bucket.
#[derive(Debug)]
struct RateLimit {
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    fn new() -> Self {
        RateLimit {
            tokens: BURST,
            at: Instant::now(),
        }
    }

    fn take(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.at).as_secs_f64() * PER_SECOND;
        self.tokens = (self.tokens + refill).min(BURST);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// What the events task reads: the caches of our insights and control-plane statuses.
#[derive(Clone)]
pub struct Watched {
    /// Our UpdateInsights.
    pub insights: Store<CachedInsight>,
    /// Our ControlPlaneUpdateStatus objects.
    pub statuses: Store<ControlPlaneUpdateStatus>,
}

/// The events task's state.
pub struct EventsReconciler {
    insights: Store<CachedInsight>,
    statuses: Store<ControlPlaneUpdateStatus>,
    recorder: Recorder,
    metrics: Arc<Metrics>,
    /// The previous reading (`None` until the baseline is read).
    last: Option<Reading>,
    limit: RateLimit,
}

impl EventsReconciler {
    /// Publishes as `instance` (the leader identity), reading our insights and control-plane
    /// statuses from their caches (`ctx.caches`; Events go to the namespace of the object they
    /// regard: the context's namespace is not used).
    pub fn new(ctx: Context<Watched>, instance: String) -> Self {
        let mut r = EventsReconciler {
            recorder: Recorder::new(
                ctx.client,
                Reporter {
                    controller: REPORTING_CONTROLLER.into(),
                    instance: Some(instance),
                },
            ),
            insights: ctx.caches.insights,
            statuses: ctx.caches.statuses,
            metrics: ctx.metrics,
            last: None,
            limit: RateLimit::new(),
        };
        // The baseline: what our objects say when we start writing (the caches have listed)
        // is not told again, after a restart or by a new leader.
        r.last = Some(r.reading());
        r
    }

    /// What our objects say now.
    fn reading(&self) -> Reading {
        reading(&self.insights.state(), &self.statuses.state())
    }

    async fn pass(&mut self) {
        let now = self.reading();
        let Some(before) = self.last.replace(now.clone()) else {
            return;
        };
        let stories = events::transitions(&before, &now);
        let mut dropped = 0u64;
        for s in stories {
            if !self.limit.take() {
                dropped += 1;
                continue;
            }
            self.publish(&s).await;
        }
        if dropped > 0 {
            self.metrics.events.dropped(dropped);
            tracing::warn!(
                dropped,
                "Events over the rate limit ({BURST} at once, then {PER_SECOND}/s) not published"
            );
        }
    }

    async fn publish(&self, s: &Story) {
        let event = Event {
            type_: if s.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: s.reason.to_string(),
            note: Some(note(&s.note)),
            action: ACTION.to_string(),
            secondary: s.related.as_ref().map(object_reference),
        };
        let regarding = object_reference(&s.regarding);
        match self.recorder.publish(&event, &regarding).await {
            Ok(()) => {
                self.metrics.events.event(s.reason, true);
                tracing::debug!(reason = s.reason, kind = %s.regarding.kind, name = %s.regarding.name, "event published");
            }
            Err(e) => {
                self.metrics.events.event(s.reason, false);
                tracing::warn!(reason = s.reason, kind = %s.regarding.kind, name = %s.regarding.name, error = %e, "cannot publish an Event (RBAC: create and patch events.k8s.io events)");
            }
        }
    }
}

/// The note of an Event: at most 1 kB (the API's limit), cut with `...`.
fn note(text: &str) -> String {
    const MAX: usize = 1024;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX - 3;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

fn object_reference(r: &Regarding) -> ObjectReference {
    ObjectReference {
        api_version: Some(r.api_version.clone()),
        kind: Some(r.kind.clone()),
        name: Some(r.name.clone()),
        namespace: r.namespace.clone(),
        uid: r.uid.clone(),
        ..Default::default()
    }
}

/// `namespace/name`.
fn key(namespace: Option<&str>, name: Option<&str>) -> String {
    format!(
        "{}/{}",
        namespace.unwrap_or_default(),
        name.unwrap_or_default()
    )
}

/// A reading of our objects: every health insight (cached whole) and every control-plane
/// status, with what their Events are regarding.
pub fn reading(
    insights: &[Arc<CachedInsight>],
    statuses: &[Arc<ControlPlaneUpdateStatus>],
) -> Reading {
    let mut out = Reading::default();
    // The update each cluster's insights fall back to: its ControlPlaneUpdateStatus's owner
    // (the ClusterVersion; the HostedCluster), by namespace and cluster label.
    let mut updates: BTreeMap<(String, Option<String>), Regarding> = BTreeMap::new();
    for cp in statuses
        .iter()
        .filter(|o| o.metadata.deletion_timestamp.is_none())
    {
        let meta = &cp.metadata;
        let ns = meta.namespace.as_deref();
        let Some(regarding) = events::regarding(
            &Default::default(),
            meta.owner_references.as_ref().and_then(|o| o.first()),
            ns,
            None,
        ) else {
            continue;
        };
        let cluster = meta
            .labels
            .as_ref()
            .and_then(|l| l.get(labels::CLUSTER))
            .cloned();
        updates.insert(
            (ns.unwrap_or_default().to_string(), cluster),
            regarding.clone(),
        );
        if let Some(status) = &cp.status {
            out.updates.insert(
                key(ns, meta.name.as_deref()),
                SeenUpdate::of(status, regarding),
            );
        }
    }
    for o in insights.iter().filter_map(|c| c.whole()) {
        let meta = &o.metadata;
        let (Some(status), None) = (&o.status, &meta.deletion_timestamp) else {
            continue;
        };
        let Some(h) = &status.health else { continue };
        let ns = meta.namespace.as_deref();
        let cluster = meta
            .labels
            .as_ref()
            .and_then(|l| l.get(labels::CLUSTER))
            .cloned();
        let update = updates.get(&(ns.unwrap_or_default().to_string(), cluster));
        let Some(regarding) = events::regarding(
            &status.resource,
            meta.owner_references.as_ref().and_then(|o| o.first()),
            ns,
            update,
        ) else {
            continue;
        };
        out.insights.insert(
            key(ns, meta.name.as_deref()),
            SeenInsight {
                level: h.impact.level,
                summary: h.impact.summary.clone(),
                regarding,
                related: events::first_related(&h.related),
            },
        );
    }
    out
}

impl Reconcile for EventsReconciler {
    const NAME: &'static str = NAME;
    async fn reconcile(&mut self, _now: Timestamp) -> Result<Requeue, WriteError> {
        self.pass().await;
        Ok(Requeue::Never)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use std::time::Duration;
    use update_status_api::crd::{
        ControlPlaneUpdateStatusStatus, HealthInsight, Impact, ImpactLevel, InsightType,
        ResourceRef, UpdateInsight, UpdateInsightStatus,
    };

    fn owner(api: &str, kind: &str, name: &str) -> OwnerReference {
        OwnerReference {
            api_version: api.into(),
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            ..Default::default()
        }
    }

    fn health(name: &str, kind: &str, owner_ref: OwnerReference) -> Arc<CachedInsight> {
        let mut o = UpdateInsight::new(name, Default::default());
        o.metadata.namespace = Some("openshift-update-status".into());
        o.metadata.owner_references = Some(vec![owner_ref]);
        o.status = Some(UpdateInsightStatus {
            type_: InsightType::Health,
            resource: ResourceRef {
                kind: kind.into(),
                name: "worker-3".into(),
                ..Default::default()
            },
            health: Some(HealthInsight {
                impact: Impact {
                    level: ImpactLevel::Error,
                    summary: format!("{name} summary"),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        });
        Arc::new(CachedInsight::new(o, false))
    }

    #[test]
    fn a_reading_regards_inputs_and_falls_back_to_the_cluster_version() {
        let mut cp = ControlPlaneUpdateStatus::new("cluster", Default::default());
        cp.metadata.namespace = Some("openshift-update-status".into());
        cp.metadata.owner_references = Some(vec![owner(
            "config.openshift.io/v1",
            "ClusterVersion",
            "version",
        )]);
        cp.status = Some(ControlPlaneUpdateStatusStatus::default());
        let insights = [
            health("node-degraded", "Node", owner("v1", "Node", "worker-3")),
            health(
                "alert",
                "Alert",
                owner(
                    "update.openshift.io/v1alpha1",
                    "ControlPlaneUpdateStatus",
                    "cluster",
                ),
            ),
        ];
        let r = reading(&insights, &[Arc::new(cp)]);
        let node = &r.insights["openshift-update-status/node-degraded"];
        assert_eq!(
            (node.regarding.kind.as_str(), node.regarding.name.as_str()),
            ("Node", "worker-3")
        );
        assert_eq!(node.regarding.uid.as_deref(), Some("uid-worker-3"));
        let alert = &r.insights["openshift-update-status/alert"];
        assert_eq!(alert.regarding.kind, "ClusterVersion");
        assert_eq!(r.updates.len(), 1);
    }

    #[test]
    fn the_rate_limit_lets_a_burst_through_then_one_a_second() {
        let mut l = RateLimit::new();
        let burst = (0..100).filter(|_| l.take()).count();
        assert_eq!(burst, BURST as usize);
        l.at =
            l.at.checked_sub(Duration::from_secs(3))
                .expect("an instant");
        assert_eq!((0..10).filter(|_| l.take()).count(), 3);
    }

    #[test]
    fn notes_are_cut_to_the_api_limit() {
        assert_eq!(note("short"), "short");
        let long = "é".repeat(1000);
        let cut = note(&long);
        assert!(cut.len() <= 1024 && cut.ends_with("..."), "{}", cut.len());
    }
}
