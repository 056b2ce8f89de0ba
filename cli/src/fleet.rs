//! `--fleet`: on a hub, one row per cluster namespace holding a ControlPlaneUpdateStatus; on a
//! management cluster in hosted mode, one row per HostedCluster.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use jiff::Timestamp;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use serde::Serialize;
use update_status_api::crd::{
    Assessment, ControlPlaneUpdateStatus, HealthCounts, ImpactLevel, InsightType, UpdateInsight,
    WorkerPoolUpdateStatus, labels,
};

use crate::online::{OnlineError, health_selector, list};
use crate::report::API_VERSION;
use crate::tabwriter::format_table;

/// One cluster of the fleet.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FleetRow {
    /// The cluster's name: the `open-cluster-management.io/cluster-name` label, else the
    /// namespace.
    pub cluster: String,
    /// The namespace the objects live in.
    pub namespace: String,
    /// Version updated from (empty for an installation).
    pub from: String,
    /// Version updated to.
    pub to: String,
    /// Control-plane assessment.
    pub assessment: Assessment,
    /// Control-plane completion in percent.
    pub completion_percent: u32,
    /// Worker nodes in all pools.
    pub worker_nodes: u32,
    /// Updated worker nodes in all pools.
    pub worker_nodes_updated: u32,
    /// Pools that are neither `Completed` nor `Empty`, by name.
    pub worker_pools_not_completed: Vec<PoolSummary>,
    /// Health insights of the cluster by level.
    pub health: HealthCounts,
}

/// A pool of a [`FleetRow`].
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct PoolSummary {
    /// The pool's name.
    pub name: String,
    /// Its assessment.
    pub assessment: Assessment,
}

/// The `--fleet -o json|yaml` document.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct FleetReport {
    /// Always `update.openshift.io/v1alpha1`.
    pub api_version: &'static str,
    /// Always `UpdateStatusFleetReport`.
    pub kind: &'static str,
    /// When the report was made.
    pub now: Timestamp,
    /// One entry per cluster, worst first.
    pub clusters: Vec<FleetRow>,
}

impl FleetReport {
    /// The report of `clusters` at `now`.
    pub fn new(clusters: Vec<FleetRow>, now: Timestamp) -> Self {
        FleetReport {
            api_version: API_VERSION,
            kind: "UpdateStatusFleetReport",
            now,
            clusters,
        }
    }
}

/// Reads every cluster's objects on the hub.
pub async fn fetch(client: &Client) -> Result<Vec<FleetRow>, OnlineError> {
    // Only what the rows print: the statuses and the health insights, read at once.
    let all = ListParams::default();
    let health = ListParams::default().labels(&health_selector());
    let cps = Api::<ControlPlaneUpdateStatus>::all(client.clone());
    let pools = Api::<WorkerPoolUpdateStatus>::all(client.clone());
    let insights = Api::<UpdateInsight>::all(client.clone());
    let (cps, pools, health) = tokio::try_join!(
        list(&cps, &all, None),
        list(&pools, &all, None),
        list(&insights, &health, None),
    )?;
    Ok(rows(&cps.items, &pools.items, &health.items))
}

fn worst_level(h: &HealthCounts) -> u8 {
    if h.critical > 0 {
        4
    } else if h.error > 0 {
        3
    } else if h.warning > 0 {
        2
    } else if h.info > 0 || h.unknown > 0 {
        1
    } else {
        0
    }
}

fn assessment_badness(a: Assessment) -> u8 {
    match a {
        Assessment::Stalled => 4,
        Assessment::ProgressingSlow => 3,
        Assessment::Unknown => 2,
        Assessment::Completed => 0,
        _ => 1,
    }
}

/// Builds the rows (one per namespace holding a ControlPlaneUpdateStatus), worst first: by the most severe health insight, then the control-plane
/// assessment (Stalled, Progressing - Slow, Unknown, Progressing, Completed), then pools in
/// trouble (Degraded before Excluded), then lowest completion, then cluster name.
pub fn rows(
    cps: &[ControlPlaneUpdateStatus],
    pools: &[WorkerPoolUpdateStatus],
    health: &[UpdateInsight],
) -> Vec<FleetRow> {
    let mut out: Vec<FleetRow> = Vec::new();
    // One row per namespace, from its ControlPlaneUpdateStatus named after the namespace (the
    // hub copy, named after the cluster: design.md), else `cluster` (a standalone cluster's),
    // else the first by name.
    let mut cps: Vec<&ControlPlaneUpdateStatus> = cps.iter().collect();
    cps.sort_by_cached_key(|c| {
        let namespace = c.namespace().unwrap_or_default();
        let name = c.name_any();
        (
            namespace.clone(),
            name != namespace,
            name != "cluster",
            name,
        )
    });
    let mut standalone_namespaces: Vec<String> = Vec::new();
    for cp in cps {
        let Some(status) = cp.status.as_ref() else {
            continue;
        };
        let namespace = cp.namespace().unwrap_or_default();
        let hosted = hosted_cluster(cp);
        if hosted.is_none() {
            if standalone_namespaces.contains(&namespace) {
                continue;
            }
            standalone_namespaces.push(namespace.clone());
        }
        // Objects of this row: those of its namespace (for a hosted cluster: labelled with it).
        let mine = |o: &dyn ResourceLike| {
            o.ns() == Some(namespace.as_str())
                && hosted.is_none_or(|h| o.cluster_label() == Some(h))
        };
        let cluster = match hosted {
            Some(h) => h.to_string(),
            None => cp
                .labels()
                .get(labels::ACM_CLUSTER_NAME)
                .cloned()
                .unwrap_or_else(|| namespace.clone()),
        };
        let mut row = FleetRow {
            cluster,
            namespace: namespace.clone(),
            from: status.versions.previous.clone(),
            to: status.versions.target.clone(),
            assessment: status.assessment,
            completion_percent: status.completion_percent,
            worker_nodes: 0,
            worker_nodes_updated: 0,
            worker_pools_not_completed: Vec::new(),
            health: HealthCounts::default(),
        };
        let mut not_completed = BTreeMap::new();
        for pool in pools.iter().filter(|p| mine(*p)) {
            let Some(p) = pool.status.as_ref() else {
                continue;
            };
            row.worker_nodes += p.nodes.total;
            row.worker_nodes_updated += p.nodes.updated;
            if !matches!(p.assessment, Assessment::Completed | Assessment::Empty) {
                let name = if p.resource.name.is_empty() {
                    pool.name_any()
                } else {
                    p.resource.name.clone()
                };
                not_completed.insert(name, p.assessment);
            }
        }
        row.worker_pools_not_completed = not_completed
            .into_iter()
            .map(|(name, assessment)| PoolSummary { name, assessment })
            .collect();
        for i in health.iter().filter(|i| mine(*i)) {
            let Some(h) = i.status.as_ref().filter(|s| s.type_ == InsightType::Health) else {
                continue;
            };
            let Some(h) = h.health.as_ref() else { continue };
            let c = &mut row.health;
            update_status_assess::insight::count(c, h.impact.level);
        }
        out.push(row);
    }
    out.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
    out
}

/// The HostedCluster a ControlPlaneUpdateStatus is about, in hosted mode: it is named after
/// the HostedCluster and labelled `update.openshift.io/cluster=<that name>` (a standalone one
/// is named `cluster`, a hub copy after its namespace).
fn hosted_cluster(cp: &ControlPlaneUpdateStatus) -> Option<&str> {
    let name = cp.metadata.name.as_deref()?;
    let label = cp.labels().get(labels::CLUSTER)?;
    (label == name && name != "cluster" && cp.metadata.namespace.as_deref() != Some(name))
        .then_some(name)
}

/// The namespace and cluster label of an object of ours.
trait ResourceLike {
    fn ns(&self) -> Option<&str>;
    fn cluster_label(&self) -> Option<&str>;
}

impl<K: ResourceExt> ResourceLike for K {
    fn ns(&self) -> Option<&str> {
        self.meta().namespace.as_deref()
    }
    fn cluster_label(&self) -> Option<&str> {
        self.labels().get(labels::CLUSTER).map(String::as_str)
    }
}

fn sort_key(r: &FleetRow) -> (Reverse<u8>, Reverse<u8>, Reverse<u8>, u32, &str) {
    let pools = r
        .worker_pools_not_completed
        .iter()
        .map(|p| match p.assessment {
            Assessment::Degraded => 2,
            Assessment::Excluded => 1,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    (
        Reverse(worst_level(&r.health)),
        Reverse(assessment_badness(r.assessment)),
        Reverse(pools),
        r.completion_percent,
        r.cluster.as_str(),
    )
}

/// The fleet table.
pub fn render(rows: &[FleetRow]) -> String {
    if rows.is_empty() {
        return "No ControlPlaneUpdateStatus found in any namespace.\n".to_owned();
    }
    let mut table = String::from("CLUSTER\tFROM\tTO\tASSESSMENT\tCOMPLETION\tWORKERS\tHEALTH\n");
    for r in rows {
        let from = if r.from.is_empty() { "-" } else { &r.from };
        let mut workers = if r.worker_nodes == 0 {
            "-".to_owned()
        } else {
            format!("{}/{} updated", r.worker_nodes_updated, r.worker_nodes)
        };
        if !r.worker_pools_not_completed.is_empty() {
            let pools: Vec<String> = r
                .worker_pools_not_completed
                .iter()
                .map(|p| format!("{} {}", p.name, p.assessment.as_str()))
                .collect();
            let _ = write!(workers, " ({})", pools.join(", "));
        }
        let _ = writeln!(
            table,
            "{}\t{from}\t{}\t{}\t{}%\t{workers}\t{}",
            r.cluster,
            r.to,
            r.assessment.as_str(),
            r.completion_percent,
            health_text(&r.health)
        );
    }
    format_table(&table)
}

/// `2 Error, 1 Warning`; `-` without insights.
fn health_text(h: &HealthCounts) -> String {
    let parts: Vec<String> = [
        (h.critical, ImpactLevel::Critical),
        (h.error, ImpactLevel::Error),
        (h.warning, ImpactLevel::Warning),
        (h.info, ImpactLevel::Info),
        (h.unknown, ImpactLevel::Unknown),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, l)| format!("{n} {}", l.as_str()))
    .collect();
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{
        ControlPlaneUpdateStatusSpec, ControlPlaneUpdateStatusStatus, ControlPlaneVersions,
        HealthInsight, Impact, UpdateInsightSpec, UpdateInsightStatus, WorkerPoolUpdateStatusSpec,
        WorkerPoolUpdateStatusStatus,
    };

    fn cp(ns: &str, assessment: Assessment, pct: u32) -> ControlPlaneUpdateStatus {
        let mut o = ControlPlaneUpdateStatus::new("cluster", ControlPlaneUpdateStatusSpec {});
        o.metadata.namespace = Some(ns.into());
        o.status = Some(ControlPlaneUpdateStatusStatus {
            assessment,
            completion_percent: pct,
            versions: ControlPlaneVersions {
                target: "4.16.1".into(),
                previous: "4.16.0".into(),
                ..Default::default()
            },
            ..Default::default()
        });
        o
    }

    fn insight(ns: &str, level: ImpactLevel) -> UpdateInsight {
        let mut o = UpdateInsight::new("x", UpdateInsightSpec {});
        o.metadata.namespace = Some(ns.into());
        o.status = Some(UpdateInsightStatus {
            type_: InsightType::Health,
            health: Some(HealthInsight {
                impact: Impact {
                    level,
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        });
        o
    }

    #[test]
    fn a_hub_namespace_row_comes_from_the_status_named_after_the_cluster() {
        let mut stale = cp("prod-east", Assessment::Stalled, 10);
        stale.metadata.name = Some("cluster".into());
        let mut copy = cp("prod-east", Assessment::Progressing, 60);
        copy.metadata.name = Some("prod-east".into());
        copy.metadata.labels = Some(
            [(
                labels::ACM_CLUSTER_NAME.to_string(),
                "prod-east".to_string(),
            )]
            .into_iter()
            .collect(),
        );
        let mut other = cp("prod-east", Assessment::Unknown, 0);
        other.metadata.name = Some("aaa".into());
        let rows = rows(&[stale, other, copy], &[], &[]);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0].cluster, "prod-east");
        assert_eq!(rows[0].assessment, Assessment::Progressing);
        assert_eq!(rows[0].completion_percent, 60);
    }

    #[test]
    fn a_management_cluster_has_one_row_per_hosted_cluster() {
        let hosted = |name: &str, assessment, pct| {
            let mut o = cp("clusters", assessment, pct);
            o.metadata.name = Some(name.into());
            o.metadata.labels = Some(
                [(labels::CLUSTER.to_string(), name.to_string())]
                    .into_iter()
                    .collect(),
            );
            o
        };
        let mut bad = insight("clusters", ImpactLevel::Error);
        bad.metadata.labels = Some(
            [(labels::CLUSTER.to_string(), "beta".to_string())]
                .into_iter()
                .collect(),
        );
        let rows = rows(
            &[
                hosted("alpha", Assessment::Completed, 100),
                hosted("beta", Assessment::Progressing, 50),
            ],
            &[],
            &[bad],
        );
        let got: Vec<(&str, u32)> = rows
            .iter()
            .map(|r| (r.cluster.as_str(), r.health.error))
            .collect();
        assert_eq!(got, [("beta", 1), ("alpha", 0)]);
    }

    #[test]
    fn rows_are_sorted_worst_first_and_rendered() {
        let cps = vec![
            cp("alpha", Assessment::Completed, 100),
            cp("bravo", Assessment::Stalled, 97),
            cp("charlie", Assessment::Progressing, 40),
            cp("delta", Assessment::Progressing, 10),
        ];
        let mut pool = WorkerPoolUpdateStatus::new("worker", WorkerPoolUpdateStatusSpec {});
        pool.metadata.namespace = Some("alpha".into());
        let mut status = WorkerPoolUpdateStatusStatus {
            assessment: Assessment::Degraded,
            ..Default::default()
        };
        status.resource.name = "worker".into();
        status.nodes.total = 59;
        status.nodes.updated = 22;
        pool.status = Some(status);
        let health = vec![
            insight("charlie", ImpactLevel::Error),
            insight("charlie", ImpactLevel::Warning),
            insight("alpha", ImpactLevel::Warning),
        ];
        let rows = rows(&cps, &[pool], &health);
        let order: Vec<&str> = rows.iter().map(|r| r.cluster.as_str()).collect();
        assert_eq!(order, ["charlie", "alpha", "bravo", "delta"]);
        let expected = "\
CLUSTER   FROM     TO       ASSESSMENT    COMPLETION   WORKERS                           HEALTH
charlie   4.16.0   4.16.1   Progressing   40%          -                                 1 Error, 1 Warning
alpha     4.16.0   4.16.1   Completed     100%         22/59 updated (worker Degraded)   1 Warning
bravo     4.16.0   4.16.1   Stalled       97%          -                                 -
delta     4.16.0   4.16.1   Progressing   10%          -                                 -
";
        assert_eq!(render(&rows), expected);
    }
}
