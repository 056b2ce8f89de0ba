//! The health insights as metrics: counts by impact level, impact type and scope
//! (`update_status_health_insights`) and one info series per health insight, the most severe
//! first (`update_status_health_insight_info`, at most [`MAX_INFO_SERIES`]).
//!
//! They are exported from one place only: the insight cache, read at scrape time
//! ([`InsightMetrics::set_source`], attached by the controller). Every health insight in the
//! namespace counts, whichever reconciler wrote it (control-plane, worker-pools — master-pool
//! node insights included — and alerts), so the series always match the objects. Hosted mode:
//! per HostedCluster (a leading `hosted_cluster` label), zero counts left out.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use prometheus::core::Collector;
use prometheus::{IntGaugeVec, Opts};
use update_status_api::crd::{
    ImpactLevel, InsightType, ScopeType, UpdateInsight, UpdateInsightStatus,
};

use super::family::{Family, PerCluster};

/// At most this many `update_status_health_insight_info` series (the most severe first): a
/// mass outage (every node unavailable) must not blow up the series count.
pub const MAX_INFO_SERIES: usize = 256;

/// Scopes of `update_status_health_insights` (each always exported, zeros included).
pub const SCOPES: [ScopeType; 3] = [
    ScopeType::ControlPlane,
    ScopeType::WorkerPool,
    ScopeType::Cluster,
];

/// Where the health series come from at scrape time: our UpdateInsight objects.
pub type InsightSource = Box<dyn Fn() -> Vec<Arc<UpdateInsight>> + Send + Sync>;

/// The health insights' series.
pub struct InsightMetrics {
    counts: IntGaugeVec,
    info: IntGaugeVec,
    per_cluster: PerCluster,
    source: OnceLock<InsightSource>,
}

impl InsightMetrics {
    pub(super) fn new(per_cluster: PerCluster) -> Result<Self, prometheus::Error> {
        Ok(InsightMetrics {
            counts: IntGaugeVec::new(
                Opts::new(
                    "update_status_health_insights",
                    "Health insights by impact level, impact type and scope.",
                ),
                &per_cluster.labels(&["impact_level", "impact_type", "scope"]),
            )?,
            info: IntGaugeVec::new(
                Opts::new(
                    "update_status_health_insight_info",
                    "One series (value 1) per health insight: its object name, resource, impact level and type (at most 256, the most severe first).",
                ),
                &per_cluster.labels(&[
                    "insight",
                    "resource_kind",
                    "resource_name",
                    "impact_level",
                    "impact_type",
                ]),
            )?,
            per_cluster,
            source: OnceLock::new(),
        })
    }

    /// Computes the health series from `source` (our UpdateInsight objects) at every scrape.
    /// Without a source no health series are exported. Set once; later calls are ignored.
    pub fn set_source(&self, source: InsightSource) {
        let _ = self.source.set(source);
    }

    /// Replaces every health series with those of the source's objects now (nothing without a
    /// source). Called at every scrape, before the registry is gathered.
    pub(super) fn publish(&self) {
        let Some(source) = self.source.get() else {
            return;
        };
        let objects = source();
        let named: Vec<(String, Option<String>, &UpdateInsightStatus)> = objects
            .iter()
            .filter(|o| o.metadata.deletion_timestamp.is_none())
            .filter_map(|o| {
                let hc = self.per_cluster.0.then(|| hosted_cluster_of(&o.metadata));
                Some((o.metadata.name.clone()?, hc, o.status.as_ref()?))
            })
            .collect();
        self.publish_health(
            named
                .iter()
                .map(|(n, hc, s)| (n.as_str(), hc.as_deref(), *s)),
        );
    }

    fn set_health_counts<'a>(
        &self,
        hc: Option<&str>,
        scope: &str,
        insights: impl IntoIterator<Item = &'a UpdateInsightStatus>,
    ) {
        let mut counts: BTreeMap<(ImpactLevel, &str), i64> = Default::default();
        for i in insights {
            if let Some(h) = &i.health {
                *counts
                    .entry((h.impact.level, h.impact.type_.as_str()))
                    .or_default() += 1;
            }
        }
        for level in [
            ImpactLevel::Unknown,
            ImpactLevel::Info,
            ImpactLevel::Warning,
            ImpactLevel::Error,
            ImpactLevel::Critical,
        ] {
            for t in IMPACT_TYPES {
                let v = counts.get(&(level, t)).copied().unwrap_or(0);
                // Hosted mode: zeros left out (135 series per HostedCluster otherwise).
                if hc.is_some() && v == 0 {
                    continue;
                }
                self.counts
                    .with_label_values(&self.per_cluster.values(hc, &[level.as_str(), t, scope]))
                    .set(v);
            }
        }
    }

    /// Replaces every health series with those of `insights` (name, hosted cluster, content):
    /// counts per scope (standalone: all three scopes, zeros included; hosted: per
    /// HostedCluster, non-zero counts only) and one info series per health insight.
    fn publish_health<'a>(
        &self,
        insights: impl IntoIterator<Item = (&'a str, Option<&'a str>, &'a UpdateInsightStatus)>,
    ) {
        let mut health: Vec<(&str, Option<&str>, &UpdateInsightStatus)> = insights
            .into_iter()
            .filter(|(_, _, s)| s.type_ == InsightType::Health && s.health.is_some())
            .collect();
        let clusters: BTreeSet<Option<&str>> = if self.per_cluster.0 {
            self.counts.reset();
            health.iter().map(|(_, hc, _)| *hc).collect()
        } else {
            [None].into()
        };
        for hc in clusters {
            for scope in SCOPES {
                self.set_health_counts(
                    hc,
                    scope.slug(),
                    health
                        .iter()
                        .filter(|(_, h, s)| *h == hc && s.scope.type_ == scope)
                        .map(|(_, _, s)| *s),
                );
            }
        }
        let level = |s: &UpdateInsightStatus| s.health.as_ref().map(|h| h.impact.level);
        health.sort_by(|a, b| level(b.2).cmp(&level(a.2)).then(a.0.cmp(b.0)));
        self.info.reset();
        for (name, hc, s) in health.into_iter().take(MAX_INFO_SERIES) {
            let Some(h) = &s.health else { continue };
            self.info
                .with_label_values(&self.per_cluster.values(
                    hc,
                    &[
                        name,
                        s.resource.kind.as_str(),
                        s.resource.name.as_str(),
                        h.impact.level.as_str(),
                        h.impact.type_.as_str(),
                    ],
                ))
                .set(1);
        }
    }
}

/// Hosted mode: the HostedCluster an object of ours is about, `<namespace>/<name>` (its
/// namespace and its `update.openshift.io/cluster` label, the HostedCluster's name).
fn hosted_cluster_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    let name = meta
        .labels
        .as_ref()
        .and_then(|l| l.get(update_status_api::crd::labels::CLUSTER))
        .map(String::as_str)
        .unwrap_or_default();
    format!("{}/{name}", meta.namespace.as_deref().unwrap_or_default())
}

/// The impact types counted (each always exported in standalone mode, zeros included).
const IMPACT_TYPES: [&str; 9] = [
    "None",
    "Unknown",
    "API Availability",
    "Cluster Capacity",
    "Application Availability",
    "Application Outage",
    "Data Loss",
    "Update Speed",
    "Update Stalled",
];

impl Family for InsightMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![Box::new(self.counts.clone()), Box::new(self.info.clone())]
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::metrics::registry::Metrics;

    #[test]
    fn hosted_health_series_are_per_hosted_cluster() {
        let m = Metrics::new_hosted().expect("metrics");
        // The insights' namespace and cluster label name their HostedCluster.
        let mut degraded = (*insight(
            "np-a",
            ScopeType::WorkerPool,
            "NodePool",
            ImpactLevel::Error,
        ))
        .clone();
        degraded.metadata.namespace = Some("clusters".into());
        degraded.metadata.labels = Some(
            [(
                update_status_api::crd::labels::CLUSTER.to_string(),
                "a".to_string(),
            )]
            .into(),
        );
        let objects = vec![Arc::new(degraded)];
        m.insights.set_source(Box::new(move || objects.clone()));
        let text = m.render();
        for want in [
            r#"update_status_health_insights{hosted_cluster="clusters/a",impact_level="Error",impact_type="Update Stalled",scope="worker-pool"} 1"#,
            r#"update_status_health_insight_info{hosted_cluster="clusters/a",impact_level="Error",impact_type="Update Stalled",insight="np-a",resource_kind="NodePool",resource_name="np-a-resource"} 1"#,
        ] {
            assert!(text.contains(want), "{want} not in\n{text}");
        }
        // Hosted: zero counts are left out.
        assert!(
            !text.contains(
                r#"impact_level="Critical",impact_type="Update Stalled",scope="worker-pool"} 0"#
            ),
            "{text}"
        );
    }

    fn insight(name: &str, scope: ScopeType, kind: &str, level: ImpactLevel) -> Arc<UpdateInsight> {
        use update_status_api::crd::*;
        let mut o = UpdateInsight::new(name, UpdateInsightSpec {});
        o.status = Some(UpdateInsightStatus {
            type_: InsightType::Health,
            resource: ResourceRef {
                kind: kind.into(),
                name: format!("{name}-resource"),
                ..Default::default()
            },
            scope: InsightScope {
                type_: scope,
                pool: None,
            },
            progress: None,
            health: Some(HealthInsight {
                impact: Impact {
                    level,
                    type_: ImpactType::UpdateStalled,
                    summary: "s".into(),
                    description: "d".into(),
                },
                ..Default::default()
            }),
        });
        Arc::new(o)
    }

    fn progress(name: &str) -> Arc<UpdateInsight> {
        use update_status_api::crd::*;
        let mut o = UpdateInsight::new(name, UpdateInsightSpec {});
        o.status = Some(UpdateInsightStatus {
            type_: InsightType::Progress,
            resource: ResourceRef {
                kind: "Node".into(),
                name: name.into(),
                ..Default::default()
            },
            progress: Some(Default::default()),
            ..Default::default()
        });
        Arc::new(o)
    }

    fn series<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
        text.lines().filter(|l| l.starts_with(prefix)).collect()
    }

    #[test]
    fn health_series_come_from_the_insight_cache_for_all_scopes() {
        let m = Metrics::new().expect("metrics");
        let objects = Arc::new(Mutex::new(vec![
            insight(
                "cp",
                ScopeType::ControlPlane,
                "ClusterOperator",
                ImpactLevel::Error,
            ),
            // A master-pool node insight (written by the worker-pools reconciler).
            insight(
                "master-node",
                ScopeType::ControlPlane,
                "Node",
                ImpactLevel::Warning,
            ),
            insight("wp", ScopeType::WorkerPool, "Node", ImpactLevel::Error),
            insight("alert", ScopeType::Cluster, "Alert", ImpactLevel::Critical),
            progress("node-a"),
        ]));
        let src = objects.clone();
        m.insights.set_source(Box::new(move || {
            src.lock().map(|v| v.clone()).unwrap_or_default()
        }));
        let text = m.render();
        let count = |level: &str, scope: &str| {
            format!(
                r#"update_status_health_insights{{impact_level="{level}",impact_type="Update Stalled",scope="{scope}"}}"#
            )
        };
        for (level, scope, n) in [
            ("Error", "control-plane", 1),
            ("Warning", "control-plane", 1),
            ("Error", "worker-pool", 1),
            ("Info", "worker-pool", 0),
            ("Critical", "cluster", 1),
            ("Critical", "control-plane", 0),
        ] {
            assert!(
                text.contains(&format!("{} {n}\n", count(level, scope))),
                "{level} {scope} {n}: {text}"
            );
        }
        // 3 scopes × 5 levels × 9 types, zeros included: sums are meaningful.
        assert_eq!(series(&text, "update_status_health_insights{").len(), 135);
        let info = series(&text, "update_status_health_insight_info{");
        assert_eq!(
            info.len(),
            4,
            "one per health insight, none per progress: {info:?}"
        );
        assert_eq!(
            info.iter()
                .filter(|l| l.contains(r#"insight="alert""#))
                .copied()
                .collect::<Vec<_>>(),
            [
                r#"update_status_health_insight_info{impact_level="Critical",impact_type="Update Stalled",insight="alert",resource_kind="Alert",resource_name="alert-resource"} 1"#
            ]
        );

        // A resolved insight disappears at the next scrape.
        if let Ok(mut v) = objects.lock() {
            v.retain(|o| o.metadata.name.as_deref() != Some("alert"));
        }
        let text = m.render();
        assert!(!text.contains(r#"insight="alert""#), "{text}");
        assert!(text.contains(&format!("{} 0\n", count("Critical", "cluster"))));
    }

    #[test]
    fn info_series_are_capped_most_severe_first() {
        let m = Metrics::new().expect("metrics");
        let mut objects: Vec<Arc<UpdateInsight>> = (0..300)
            .map(|i| {
                insight(
                    &format!("n{i:03}"),
                    ScopeType::WorkerPool,
                    "Node",
                    ImpactLevel::Warning,
                )
            })
            .collect();
        objects.push(insight(
            "z-critical",
            ScopeType::Cluster,
            "Alert",
            ImpactLevel::Critical,
        ));
        m.insights.set_source(Box::new(move || objects.clone()));
        let text = m.render();
        let info = series(&text, "update_status_health_insight_info{");
        assert_eq!(info.len(), MAX_INFO_SERIES);
        assert!(info.iter().any(|l| l.contains("z-critical")));
        assert!(text.contains(r#"update_status_health_insights{impact_level="Warning",impact_type="Update Stalled",scope="worker-pool"} 300"#));
    }

    #[test]
    fn no_health_series_without_a_source() {
        let m = Metrics::new().expect("metrics");
        let text = m.render();
        assert!(
            series(&text, "update_status_health_insights{").is_empty(),
            "{text}"
        );
        assert!(
            series(&text, "update_status_health_insight_info{").is_empty(),
            "{text}"
        );
    }
}
