//! `--fleet`: on a hub, one row per cluster namespace holding a ControlPlaneUpdateStatus; on a
//! management cluster in hosted mode, one row per HostedCluster.
//!
//! On an ACM hub (the `ManagedClusterAddOn` resource exists) it also knows the fleet: every
//! cluster with the `update-status` add-on enabled has a row, one whose agent has not reported
//! says so, and each row tells whether the add-on is `Available`. `--selector` and
//! `--clusterset` keep the clusters whose `ManagedCluster` matches. A row's name is its hub
//! namespace (what the hub authorizes the cluster's agent to write), never a label the agent
//! writes itself: a copy labelled with another cluster's name is shown under its namespace,
//! with a warning.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use jiff::Timestamp;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use serde::Serialize;
use update_status_api::acm::{
    ADDON_NAME, CONDITION_AVAILABLE, ManagedCluster, ManagedClusterAddOn, clusterset_selector,
};
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
    /// The cluster's name: its hub namespace (for a hosted cluster on a management cluster:
    /// the HostedCluster's name).
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
    /// `false`: the add-on is enabled for the cluster but its agent has not reported yet (no
    /// ControlPlaneUpdateStatus in its namespace); the other fields are then empty.
    pub reported: bool,
    /// On an ACM hub: the state of the cluster's `update-status` ManagedClusterAddOn (absent:
    /// not an ACM hub, or the cluster reports without the add-on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on: Option<AddOnState>,
}

/// The `Available` condition of a cluster's ManagedClusterAddOn.
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct AddOnState {
    /// `True`, `False` or `Unknown` (`Unknown` too when the condition is missing).
    pub available: String,
    /// The condition's reason.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The condition's message.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl AddOnState {
    fn of(mca: &ManagedClusterAddOn) -> Self {
        match mca.condition(CONDITION_AVAILABLE) {
            Some(c) => AddOnState {
                available: match c.status.as_str() {
                    "True" | "False" => c.status.clone(),
                    _ => "Unknown".to_owned(),
                },
                reason: c.reason.clone(),
                message: c.message.clone(),
            },
            None => AddOnState {
                available: "Unknown".to_owned(),
                reason: String::new(),
                message: "the add-on has no Available condition yet".to_owned(),
            },
        }
    }

    /// The ADD-ON column.
    fn text(&self) -> String {
        match (self.available.as_str(), self.reason.is_empty()) {
            ("True", _) => "Available".to_owned(),
            ("False", true) => "Unavailable".to_owned(),
            ("False", false) => format!("Unavailable ({})", self.reason),
            (_, true) => "Unknown".to_owned(),
            (_, false) => format!("Unknown ({})", self.reason),
        }
    }
}

/// Which clusters `--fleet` shows on an ACM hub.
#[derive(Clone, Debug, Default)]
pub struct FleetFilter {
    /// `--selector`: a label selector on ManagedClusters.
    pub selector: Option<String>,
    /// `--clusterset`: the ManagedClusterSet the clusters belong to.
    pub clusterset: Option<String>,
}

impl FleetFilter {
    /// The ManagedCluster label selector, `None` when every cluster is shown.
    pub(crate) fn managed_cluster_selector(&self) -> Option<String> {
        let parts: Vec<String> = self
            .selector
            .iter()
            .filter(|s| !s.trim().is_empty())
            .cloned()
            .chain(self.clusterset.iter().map(|s| clusterset_selector(s)))
            .collect();
        (!parts.is_empty()).then(|| parts.join(","))
    }
}

/// What `--fleet` read: the rows and what the reader should know about them.
#[derive(Debug, Default)]
pub struct Fleet {
    /// One row per cluster, worst first.
    pub rows: Vec<FleetRow>,
    /// Warnings for stderr (spoofed labels, add-on state unreadable).
    pub warnings: Vec<String>,
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

/// Reads every cluster's objects on the hub, and on an ACM hub the add-on of every cluster
/// (and, with a filter, the ManagedClusters it selects).
pub async fn fetch(client: &Client, filter: &FleetFilter) -> Result<Fleet, OnlineError> {
    // Only what the rows print: the statuses and the health insights, read at once, and the
    // add-ons of ACM (their Available condition; enabled clusters that did not report).
    let all = ListParams::default();
    let health = ListParams::default().labels(&health_selector());
    let cps = Api::<ControlPlaneUpdateStatus>::all(client.clone());
    let pools = Api::<WorkerPoolUpdateStatus>::all(client.clone());
    let insights = Api::<UpdateInsight>::all(client.clone());
    let addons = Api::<ManagedClusterAddOn>::all(client.clone());
    let addon_params = ListParams::default().fields(&format!("metadata.name={ADDON_NAME}"));
    let selected = async {
        match filter.managed_cluster_selector() {
            None => Ok(None),
            Some(selector) => {
                let api = Api::<ManagedCluster>::all(client.clone());
                let params = ListParams::default().labels(&selector);
                match list(&api, &params, None).await {
                    Ok(l) => Ok(Some(
                        l.items
                            .iter()
                            .map(ResourceExt::name_any)
                            .collect::<BTreeSet<_>>(),
                    )),
                    Err(OnlineError::NotInstalled { resource }) => {
                        Err(OnlineError::NotAHub { resource })
                    }
                    Err(e) => Err(e),
                }
            }
        }
    };
    let (cps, pools, health, addons, selected) = tokio::join!(
        list(&cps, &all, None),
        list(&pools, &all, None),
        list(&insights, &health, None),
        list(&addons, &addon_params, None),
        selected,
    );
    let (cps, pools, health, selected) = (cps?, pools?, health?, selected?);
    let mut warnings = Vec::new();
    let addons = match addons {
        Ok(l) => Some(l.items),
        // Not an ACM hub: the rows of the copies found, as on any hub.
        Err(OnlineError::NotInstalled { .. }) => None,
        Err(OnlineError::Forbidden { .. }) => {
            warnings.push(addons_forbidden());
            None
        }
        Err(e) => return Err(e),
    };
    let mut rows = rows(&cps.items, &pools.items, &health.items, &mut warnings);
    if let Some(addons) = &addons {
        rows = with_addons(rows, addons);
    }
    if let Some(selected) = &selected {
        rows.retain(|r| selected.contains(&r.namespace));
    }
    rows.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
    Ok(Fleet { rows, warnings })
}

/// The warning when the hub's ManagedClusterAddOns cannot be listed (RBAC): the list and the
/// web view say the same.
pub fn addons_forbidden() -> String {
    format!(
        "cannot list managedclusteraddons.{} in all namespaces (RBAC): clusters with the add-on enabled that did not report are not shown, nor the add-on's state",
        update_status_api::acm::ADDON_GROUP
    )
}

/// Adds the add-on state to the rows of clusters with the add-on, and a "not reported" row for
/// each cluster with the add-on and no row (its namespace is the cluster's name).
pub fn with_addons(mut rows: Vec<FleetRow>, addons: &[ManagedClusterAddOn]) -> Vec<FleetRow> {
    let by_namespace: BTreeMap<String, &ManagedClusterAddOn> = addons
        .iter()
        .filter(|a| a.metadata.name.as_deref() == Some(ADDON_NAME))
        .filter(|a| a.metadata.deletion_timestamp.is_none())
        .filter_map(|a| Some((a.metadata.namespace.clone()?, a)))
        .collect();
    let mut seen = BTreeSet::new();
    for row in &mut rows {
        if let Some(a) = by_namespace.get(&row.namespace) {
            row.add_on = Some(AddOnState::of(a));
            seen.insert(row.namespace.clone());
        }
    }
    for (namespace, a) in by_namespace {
        if seen.contains(&namespace) {
            continue;
        }
        rows.push(FleetRow {
            cluster: namespace.clone(),
            namespace,
            from: String::new(),
            to: String::new(),
            assessment: Assessment::Unknown,
            completion_percent: 0,
            worker_nodes: 0,
            worker_nodes_updated: 0,
            worker_pools_not_completed: Vec::new(),
            health: HealthCounts::default(),
            reported: false,
            add_on: Some(AddOnState::of(a)),
        });
    }
    rows
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

fn assessment_badness(r: &FleetRow) -> u8 {
    if !r.reported {
        // Nothing known: an enabled add-on whose agent does not report needs a look.
        return 5;
    }
    match r.assessment {
        Assessment::Stalled => 4,
        Assessment::ProgressingSlow => 3,
        Assessment::Unknown => 2,
        Assessment::Completed => 0,
        _ => 1,
    }
}

/// Builds the rows (one per namespace holding a ControlPlaneUpdateStatus), worst first: by the
/// most severe health insight, then the control-plane assessment (not reported, Stalled,
/// Progressing - Slow, Unknown, Progressing, Completed), then pools in trouble (Degraded before
/// Excluded), then lowest completion, then cluster name. A hub copy labelled with another
/// cluster's name than its namespace adds a warning.
pub fn rows(
    cps: &[ControlPlaneUpdateStatus],
    pools: &[WorkerPoolUpdateStatus],
    health: &[UpdateInsight],
    warnings: &mut Vec<String>,
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
        // The namespace is what the hub authorizes a cluster's agent to write; the label is
        // written by the agent itself, so it only raises a warning when it disagrees.
        let cluster = match hosted {
            Some(h) => h.to_string(),
            None => {
                if let Some(claimed) = cp
                    .labels()
                    .get(labels::ACM_CLUSTER_NAME)
                    .filter(|l| **l != namespace)
                {
                    warnings.push(format!(
                        "namespace {namespace} holds a ControlPlaneUpdateStatus labelled {}={claimed}: shown as cluster {namespace}, the namespace the hub lets its writer use",
                        labels::ACM_CLUSTER_NAME
                    ));
                }
                namespace.clone()
            }
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
            reported: true,
            add_on: None,
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

pub(crate) fn sort_key(r: &FleetRow) -> (Reverse<u8>, Reverse<u8>, Reverse<u8>, u32, &str) {
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
        Reverse(assessment_badness(r)),
        Reverse(pools),
        r.completion_percent,
        r.cluster.as_str(),
    )
}

/// The fleet table (with an ADD-ON column when a row has an add-on state: an ACM hub).
pub fn render(rows: &[FleetRow]) -> String {
    if rows.is_empty() {
        return "No ControlPlaneUpdateStatus found in any namespace.\n".to_owned();
    }
    let add_on = rows.iter().any(|r| r.add_on.is_some());
    let mut table = String::from("CLUSTER\tFROM\tTO\tASSESSMENT\tCOMPLETION\tWORKERS\tHEALTH");
    table.push_str(if add_on { "\tADD-ON\n" } else { "\n" });
    for r in rows {
        if r.reported {
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
            let _ = write!(
                table,
                "{}\t{from}\t{}\t{}\t{}%\t{workers}\t{}",
                r.cluster,
                r.to,
                r.assessment.as_str(),
                r.completion_percent,
                health_text(&r.health)
            );
        } else {
            let _ = write!(table, "{}\t-\t-\tNot reported\t-\t-\t-", r.cluster);
        }
        if add_on {
            let state = r
                .add_on
                .as_ref()
                .map_or_else(|| "-".to_owned(), AddOnState::text);
            let _ = write!(table, "\t{state}");
        }
        table.push('\n');
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
        let mut warnings = Vec::new();
        let rows = rows(&[stale, other, copy], &[], &[], &mut warnings);
        assert!(warnings.is_empty(), "{warnings:?}");
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
            &mut Vec::new(),
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
        let rows = rows(&cps, &[pool], &health, &mut Vec::new());
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

    fn mca(ns: &str, available: Option<(&str, &str)>) -> ManagedClusterAddOn {
        let mut a = ManagedClusterAddOn::new(ADDON_NAME, Default::default());
        a.metadata.namespace = Some(ns.into());
        a.status =
            available.map(
                |(status, reason)| update_status_api::acm::ManagedClusterAddOnStatus {
                    conditions: vec![update_status_api::input::Condition {
                        type_: CONDITION_AVAILABLE.into(),
                        status: status.into(),
                        reason: reason.into(),
                        message: "m".into(),
                        last_transition_time: None,
                    }],
                },
            );
        a
    }

    #[test]
    fn a_row_is_named_after_its_hub_namespace_not_the_label_its_agent_writes() {
        let mut spoof = cp("team-a", Assessment::Completed, 100);
        spoof.metadata.name = Some("team-a".into());
        spoof.metadata.labels = Some(
            [(
                labels::ACM_CLUSTER_NAME.to_string(),
                "prod-east".to_string(),
            )]
            .into_iter()
            .collect(),
        );
        let mut warnings = Vec::new();
        let rows = rows(&[spoof], &[], &[], &mut warnings);
        assert_eq!(rows[0].cluster, "team-a");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("team-a") && warnings[0].contains("prod-east"),
            "{warnings:?}"
        );
    }

    #[test]
    fn an_acm_hub_lists_every_cluster_with_the_addon_and_says_which_did_not_report() {
        let mut reported = cp("cluster1", Assessment::Progressing, 40);
        reported.metadata.name = Some("cluster1".into());
        let mut hand_wired = cp("legacy", Assessment::Completed, 100);
        hand_wired.metadata.name = Some("legacy".into());
        let mut other = mca("cluster3", None);
        other.metadata.name = Some("another-addon".into());
        let addons = [
            mca("cluster1", Some(("True", "ProbeAvailable"))),
            mca("cluster2", Some(("Unknown", "WorkNotApplied"))),
            other,
        ];
        let mut rows = with_addons(
            rows(&[reported, hand_wired], &[], &[], &mut Vec::new()),
            &addons,
        );
        rows.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
        let got: Vec<(&str, bool, Option<&str>)> = rows
            .iter()
            .map(|r| {
                (
                    r.cluster.as_str(),
                    r.reported,
                    r.add_on.as_ref().map(|a| a.available.as_str()),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("cluster2", false, Some("Unknown")),
                ("cluster1", true, Some("True")),
                ("legacy", true, None),
            ],
            "only our add-on counts; a cluster that did not report comes first"
        );
        let expected = "\
CLUSTER    FROM     TO       ASSESSMENT     COMPLETION   WORKERS   HEALTH   ADD-ON
cluster2   -        -        Not reported   -            -         -        Unknown (WorkNotApplied)
cluster1   4.16.0   4.16.1   Progressing    40%          -         -        Available
legacy     4.16.0   4.16.1   Completed      100%         -         -        -
";
        assert_eq!(render(&rows), expected);
        let json = serde_json::to_value(&rows[0]).expect("json");
        assert_eq!(json["reported"], false);
        assert_eq!(json["addOn"]["available"], "Unknown");
        assert_eq!(json["addOn"]["reason"], "WorkNotApplied");
        assert!(
            serde_json::to_value(&rows[2])
                .expect("json")
                .get("addOn")
                .is_none(),
            "no add-on state without an add-on"
        );
    }

    #[test]
    fn an_addon_without_conditions_reads_unknown_and_unavailable_shows_its_reason() {
        assert_eq!(AddOnState::of(&mca("c", None)).text(), "Unknown");
        assert_eq!(
            AddOnState::of(&mca("c", Some(("False", "ProbeUnavailable")))).text(),
            "Unavailable (ProbeUnavailable)"
        );
        assert_eq!(
            AddOnState::of(&mca("c", Some(("Bogus", "")))).available,
            "Unknown"
        );
    }

    #[test]
    fn fleet_filters_select_managed_clusters_by_label_and_cluster_set() {
        assert_eq!(FleetFilter::default().managed_cluster_selector(), None);
        let f = FleetFilter {
            selector: Some("environment=prod".into()),
            clusterset: Some("east".into()),
        };
        assert_eq!(
            f.managed_cluster_selector().as_deref(),
            Some("environment=prod,cluster.open-cluster-management.io/clusterset=east")
        );
        let set_only = FleetFilter {
            selector: Some(" ".into()),
            clusterset: Some("east".into()),
        };
        assert_eq!(
            set_only.managed_cluster_selector().as_deref(),
            Some("cluster.open-cluster-management.io/clusterset=east")
        );
    }
}
