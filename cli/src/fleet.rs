//! `--fleet`: on a hub, one row per cluster namespace holding a ControlPlaneUpdateStatus; on a
//! management cluster in hosted mode, one row per HostedCluster.
//!
//! On an ACM hub (the `ManagedClusterAddOn` resource exists) it also knows the fleet: every
//! cluster with the `update-status` add-on enabled has a row, one whose agent has not reported
//! says so, and each row tells whether the add-on is `Available` (or `Degraded`, as the agent
//! says of itself) and how long ago its agent last reported (`Stale` past `--stale-after`).
//! `--selector` and `--clusterset` keep the clusters whose `ManagedCluster` matches.
//!
//! A row's name is its hub namespace (what the hub authorizes the cluster's agent to write),
//! never a name the agent writes itself: a hosted cluster's row is `<namespace>/<name>`, and a
//! label or name claiming another cluster adds a warning (`join.rs`). The lists are read in
//! pages and joined in linear time; a user who may not list them in all namespaces gets the
//! namespaces of the clusters they may see, one by one (`read.rs`).
//!
//! - `model.rs`: a row, the filter, what the read found;
//! - `age.rs`: the last report's age and freshness;
//! - `join.rs`: the rows from the objects;
//! - `assemble.rs`: the rows with the add-ons, selected, checked and sorted;
//! - `escape.rs`: the rows made safe for a terminal;
//! - `read.rs`: reading the hub;
//! - `rollout.rs`: the add-on's version and rollout on each cluster.

mod age;
mod agent_health;
mod assemble;
mod escape;
mod join;
mod model;
mod read;
mod rollout;

use std::fmt::Write as _;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;
use update_status_api::crd::{HealthCounts, ImpactLevel};

use crate::show::report::API_VERSION;
use crate::show::tabwriter::format_table;

pub use age::{DEFAULT_STALE_AFTER, Freshness, Judge, human};
pub use assemble::{assemble, sort, sort_key, with_addons};
pub use escape::escaped;
pub use join::{Tally, check_claims, rows};
pub use model::{
    AddOnCondition, AddOnState, Fleet, FleetFilter, FleetRow, PoolSummary, addons_forbidden,
    unreadable_warning,
};
pub use read::{discover, fetch};
pub use rollout::{DesiredApplied, Rollout, version as template_version};

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
    /// `--stale-after`, in seconds: a report older than this is `Stale`.
    pub stale_after_seconds: i64,
    /// One entry per cluster, worst first.
    pub clusters: Vec<FleetRow>,
    /// Namespaces whose objects could not be read (RBAC).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable_namespaces: Vec<String>,
    /// Every warning, as printed on standard error in text.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl FleetReport {
    /// The report of `fleet` at `now`.
    pub fn new(fleet: Fleet, now: Timestamp, stale_after: SignedDuration) -> Self {
        let warnings = fleet.all_warnings();
        FleetReport {
            api_version: API_VERSION,
            kind: "UpdateStatusFleetReport",
            now,
            stale_after_seconds: stale_after.as_secs(),
            clusters: fleet.rows,
            unreadable_namespaces: fleet.unreadable,
            warnings,
        }
    }
}

/// The fleet table at `now`: an ADD-ON column when a row has an add-on state (an ACM hub), a
/// LAST REPORT column when a row has an add-on state or a heartbeat.
pub fn render(rows: &[FleetRow], now: Timestamp) -> String {
    if rows.is_empty() {
        return "No ControlPlaneUpdateStatus found in any namespace.\n".to_owned();
    }
    let add_on = rows.iter().any(|r| r.add_on.is_some());
    let last_report = add_on || rows.iter().any(|r| r.last_reported.is_some());
    let mut table = String::from("CLUSTER\tFROM\tTO\tASSESSMENT\tCOMPLETION\tWORKERS\tHEALTH");
    if last_report {
        table.push_str("\tLAST REPORT");
    }
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
        if last_report {
            let _ = write!(table, "\t{}", r.last_report_text(now));
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
    use update_status_api::acm::{
        ADDON_NAME, CONDITION_AGENT_DEGRADED, CONDITION_AVAILABLE, ManagedClusterAddOn,
    };
    use update_status_api::crd::{Assessment, ControlPlaneUpdateStatus};
    use update_status_api::crd::{
        ControlPlaneUpdateStatusSpec, ControlPlaneUpdateStatusStatus, ControlPlaneVersions,
        HealthInsight, Impact, InsightType, UpdateInsight, UpdateInsightSpec, UpdateInsightStatus,
        WorkerPoolUpdateStatus, WorkerPoolUpdateStatusSpec, WorkerPoolUpdateStatusStatus, labels,
    };

    fn now() -> Timestamp {
        "2026-12-05T12:00:00Z".parse().expect("now")
    }

    fn judge() -> Judge {
        FleetFilter::default().judge(now())
    }

    /// The rows of these objects, as `--fleet` makes them (no add-ons, no filter).
    fn rows_of(
        cps: &[ControlPlaneUpdateStatus],
        pools: &[WorkerPoolUpdateStatus],
        health: &[UpdateInsight],
    ) -> Vec<FleetRow> {
        let mut tally = Tally::default();
        pools.iter().for_each(|p| tally.add_pool(p));
        health.iter().for_each(|i| tally.add_insight(i));
        assemble(cps, &tally, None, None, &judge())
    }

    fn warnings(rows: &[FleetRow]) -> Vec<String> {
        rows.iter().flat_map(|r| r.warnings.clone()).collect()
    }

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
        let rows = rows_of(&[stale, other, copy], &[], &[]);
        assert!(warnings(&rows).is_empty(), "{rows:?}");
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
        let rows = rows_of(
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
        assert_eq!(got, [("clusters/beta", 1), ("clusters/alpha", 0)]);
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
        let rows = rows_of(&cps, &[pool], &health);
        let order: Vec<&str> = rows.iter().map(|r| r.cluster.as_str()).collect();
        assert_eq!(order, ["charlie", "alpha", "bravo", "delta"]);
        let expected = "\
CLUSTER   FROM     TO       ASSESSMENT    COMPLETION   WORKERS                           HEALTH
charlie   4.16.0   4.16.1   Progressing   40%          -                                 1 Error, 1 Warning
alpha     4.16.0   4.16.1   Completed     100%         22/59 updated (worker Degraded)   1 Warning
bravo     4.16.0   4.16.1   Stalled       97%          -                                 -
delta     4.16.0   4.16.1   Progressing   10%          -                                 -
";
        assert_eq!(render(&rows, now()), expected);
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
                    ..Default::default()
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
        let rows = rows_of(&[spoof], &[], &[]);
        assert_eq!(rows[0].cluster, "team-a");
        let warnings = warnings(&rows);
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
        let mut tally = Tally::default();
        tally.add_insight(&insight("nowhere", ImpactLevel::Info));
        let rows = assemble(
            &[reported, hand_wired],
            &tally,
            Some(&addons),
            None,
            &judge(),
        );
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
CLUSTER    FROM     TO       ASSESSMENT     COMPLETION   WORKERS   HEALTH   LAST REPORT   ADD-ON
cluster2   -        -        Not reported   -            -         -        -             Unknown (WorkNotApplied)
cluster1   4.16.0   4.16.1   Progressing    40%          -         -        <unknown>     Available
legacy     4.16.0   4.16.1   Completed      100%         -         -        <unknown>     -
";
        assert_eq!(render(&rows, now()), expected);
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
        assert_eq!(AddOnState::of(&mca("c", None), None).text(), "Unknown");
        assert_eq!(
            AddOnState::of(&mca("c", Some(("False", "ProbeUnavailable"))), None).text(),
            "Unavailable (ProbeUnavailable)"
        );
        assert_eq!(
            AddOnState::of(&mca("c", Some(("Bogus", ""))), None).available,
            "Unknown"
        );
    }

    #[test]
    fn fleet_filters_select_managed_clusters_by_label_and_cluster_set() {
        assert_eq!(FleetFilter::default().managed_cluster_selector(), None);
        let f = FleetFilter {
            selector: Some("environment=prod".into()),
            clusterset: Some("east".into()),
            ..FleetFilter::default()
        };
        assert_eq!(
            f.managed_cluster_selector().as_deref(),
            Some("environment=prod,cluster.open-cluster-management.io/clusterset=east")
        );
        let set_only = FleetFilter {
            selector: Some(" ".into()),
            clusterset: Some("east".into()),
            ..FleetFilter::default()
        };
        assert_eq!(
            set_only.managed_cluster_selector().as_deref(),
            Some("cluster.open-cluster-management.io/clusterset=east")
        );
    }

    fn labelled(
        mut o: ControlPlaneUpdateStatus,
        pairs: &[(&str, &str)],
    ) -> ControlPlaneUpdateStatus {
        o.metadata.labels = Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        o
    }

    #[test]
    fn a_hosted_name_claiming_another_cluster_is_shown_under_its_own_namespace_with_a_warning() {
        let mut victim = cp("prod-east", Assessment::Completed, 100);
        victim.metadata.name = Some("prod-east".into());
        let victim = labelled(victim, &[(labels::ACM_CLUSTER_NAME, "prod-east")]);
        // team-a's agent writes, in its own namespace, a status named and labelled as a
        // HostedCluster `prod-east`, with its health insight.
        let mut spoof = cp("team-a", Assessment::Stalled, 10);
        spoof.metadata.name = Some("prod-east".into());
        let spoof = labelled(
            spoof,
            &[
                (labels::CLUSTER, "prod-east"),
                (labels::ACM_CLUSTER_NAME, "team-a"),
            ],
        );
        let mut bad = insight("team-a", ImpactLevel::Critical);
        bad.metadata.labels = Some(
            [(labels::CLUSTER.to_owned(), "prod-east".to_owned())]
                .into_iter()
                .collect(),
        );
        let rows = rows_of(&[victim, spoof], &[], &[bad]);
        let got: Vec<(&str, &str, Option<&str>, u32)> = rows
            .iter()
            .map(|r| {
                (
                    r.cluster.as_str(),
                    r.namespace.as_str(),
                    r.hosted_cluster.as_deref(),
                    r.health.critical,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("team-a/prod-east", "team-a", Some("prod-east"), 1),
                ("prod-east", "prod-east", None, 0),
            ],
            "the claim is shown under its namespace, its insight with it"
        );
        assert!(rows[1].warnings.is_empty(), "{:?}", rows[1].warnings);
        assert_eq!(rows[0].warnings.len(), 1, "{:?}", rows[0].warnings);
        let w = &rows[0].warnings[0];
        assert!(
            w.contains("namespace team-a") && w.contains("prod-east") && w.contains("claim"),
            "{w}"
        );
        let text = render(&rows, now());
        assert!(
            text.lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("team-a/prod-east ")),
            "{text}"
        );
        let json = serde_json::to_value(&rows[0]).expect("json");
        assert_eq!(json["cluster"], "team-a/prod-east");
        assert_eq!(json["hostedCluster"], "prod-east");
        assert_eq!(json["warnings"][0], *w);
    }

    #[test]
    fn a_namespaces_row_leaves_its_hosted_clusters_objects_to_their_rows() {
        let hosted = labelled(
            {
                let mut o = cp("shared", Assessment::Progressing, 50);
                o.metadata.name = Some("demo".into());
                o
            },
            &[(labels::CLUSTER, "demo")],
        );
        let own = labelled(
            cp("shared", Assessment::Completed, 100),
            &[(labels::CLUSTER, "cluster-id")],
        );
        let with = |mut i: UpdateInsight, c: &str| {
            i.metadata.labels = Some(
                [(labels::CLUSTER.to_owned(), c.to_owned())]
                    .into_iter()
                    .collect(),
            );
            i
        };
        let health = [
            with(insight("shared", ImpactLevel::Error), "demo"),
            with(insight("shared", ImpactLevel::Warning), "cluster-id"),
            insight("shared", ImpactLevel::Info),
        ];
        let rows = rows_of(&[hosted, own], &[], &health);
        let got: Vec<(&str, u32, u32, u32)> = rows
            .iter()
            .map(|r| {
                (
                    r.cluster.as_str(),
                    r.health.error,
                    r.health.warning,
                    r.health.info,
                )
            })
            .collect();
        assert_eq!(got, [("shared/demo", 1, 0, 0), ("shared", 0, 1, 1)]);
    }

    #[test]
    fn the_join_visits_each_object_a_bounded_number_of_times() {
        // 500 clusters of 1 status, 1 pool and 10 health insights: a join that scans every
        // pool and insight for each status visits them 500 times each.
        let (clusters, per) = (500, 10);
        let mut cps = Vec::new();
        let mut pools = Vec::new();
        let mut health = Vec::new();
        for c in 0..clusters {
            let ns = format!("cluster-{c}");
            let mut o = cp(&ns, Assessment::Progressing, 50);
            o.metadata.name = Some(ns.clone());
            cps.push(o);
            let mut pool = WorkerPoolUpdateStatus::new("worker", WorkerPoolUpdateStatusSpec {});
            pool.metadata.namespace = Some(ns.clone());
            pool.status = Some(WorkerPoolUpdateStatusStatus::default());
            pools.push(pool);
            for _ in 0..per {
                health.push(insight(&ns, ImpactLevel::Warning));
            }
        }
        let objects = cps.len() + pools.len() + health.len();
        join::VISITS.with(|v| v.set(0));
        let rows = rows_of(&cps, &pools, &health);
        let visits = join::VISITS.with(std::cell::Cell::get);
        assert_eq!(rows.len(), clusters);
        assert!(rows.iter().all(|r| r.health.warning == per));
        assert!(
            visits <= 2 * objects,
            "{visits} visits of {objects} objects: the join is not linear"
        );
    }

    fn heartbeat(mut o: ControlPlaneUpdateStatus, at: &str) -> ControlPlaneUpdateStatus {
        o.metadata.annotations = Some(
            [(
                update_status_api::acm::LAST_REPORTED_ANNOTATION.to_owned(),
                at.to_owned(),
            )]
            .into_iter()
            .collect(),
        );
        o
    }

    #[test]
    fn last_reports_show_their_age_and_stale_ones_come_first() {
        let named = |ns: &str, pct| {
            let mut o = cp(ns, Assessment::Progressing, pct);
            o.metadata.name = Some(ns.into());
            o
        };
        let mut fresh = heartbeat(named("fresh", 10), "2026-12-05T11:57:30Z");
        if let Some(st) = fresh.status.as_mut() {
            st.conditions.push(update_status_api::crd::Condition {
                type_: CONDITION_AGENT_DEGRADED.into(),
                status: update_status_api::crd::ConditionStatus::True,
                reason: "PrometheusUnreachable".into(),
                message: "cannot reach Prometheus".into(),
                last_transition_time: None,
            });
        }
        let cps = [
            fresh,
            heartbeat(named("stale", 90), "2026-12-05T10:58:00Z"),
            named("older-agent", 20),
        ];
        // A `Degraded` condition on the ManagedClusterAddOn is not the agent's (issue #48 item
        // 2: it may not patch that status): not shown.
        let mut degraded = mca("fresh", Some(("True", "ProbeAvailable")));
        let mut forged = mca("stale", Some(("True", "ProbeAvailable")));
        for a in [&mut degraded, &mut forged] {
            if let Some(s) = a.status.as_mut() {
                s.conditions.push(update_status_api::input::Condition {
                    type_: "Degraded".into(),
                    status: "True".into(),
                    reason: "Forged".into(),
                    message: String::new(),
                    last_transition_time: None,
                });
            }
        }
        let addons = [
            degraded,
            forged,
            mca("older-agent", Some(("False", "ProbeUnavailable"))),
        ];
        let rows = assemble(&cps, &Tally::default(), Some(&addons), None, &judge());
        let expected = "\
CLUSTER       FROM     TO       ASSESSMENT    COMPLETION   WORKERS   HEALTH   LAST REPORT   ADD-ON
stale         4.16.0   4.16.1   Progressing   90%          -         -        Stale (62m)   Available
fresh         4.16.0   4.16.1   Progressing   10%          -         -        2m30s         Degraded (PrometheusUnreachable)
older-agent   4.16.0   4.16.1   Progressing   20%          -         -        <unknown>     Unavailable (ProbeUnavailable)
";
        assert_eq!(render(&rows, now()), expected);
        let json = serde_json::to_value(&rows).expect("json");
        assert_eq!(json[0]["freshness"], "Stale");
        assert_eq!(json[0]["lastReported"], "2026-12-05T10:58:00Z");
        assert_eq!(json[1]["freshness"], "Fresh");
        assert_eq!(
            json[1]["addOn"]["degraded"]["reason"],
            "PrometheusUnreachable"
        );
        assert_eq!(json[2]["freshness"], "Unknown", "no heartbeat: not stale");
        assert!(json[2].get("lastReported").is_none());
        // A shorter threshold makes the fresh one stale too.
        let strict = FleetFilter {
            stale_after: SignedDuration::from_mins(2),
            ..FleetFilter::default()
        };
        let rows = assemble(&cps, &Tally::default(), None, None, &strict.judge(now()));
        let stale: Vec<&str> = rows
            .iter()
            .filter(|r| r.freshness == Some(Freshness::Stale))
            .map(|r| r.cluster.as_str())
            .collect();
        assert_eq!(stale, ["fresh", "stale"]);
    }

    /// Issue #48 item 9: a heartbeat stamped in the future (a skewed or forged clock) would keep
    /// its row fresh until that time; past the skew allowance it is unknown, with a warning in
    /// the text and the JSON the grid reads, and it comes first like a stale one.
    #[test]
    fn a_heartbeat_from_the_future_is_unknown_with_a_warning_and_comes_first() {
        let named = |ns: &str, pct| {
            let mut o = cp(ns, Assessment::Progressing, pct);
            o.metadata.name = Some(ns.into());
            o
        };
        let cps = [
            heartbeat(named("ok", 10), "2026-12-05T11:59:00Z"),
            heartbeat(named("skewed", 50), "2026-12-05T12:04:00Z"),
            heartbeat(named("future", 90), "2027-12-05T12:00:00Z"),
        ];
        let rows = assemble(&cps, &Tally::default(), None, None, &judge());
        let expected = "\
CLUSTER   FROM     TO       ASSESSMENT    COMPLETION   WORKERS   HEALTH   LAST REPORT
future    4.16.0   4.16.1   Progressing   90%          -         -        <invalid>
ok        4.16.0   4.16.1   Progressing   10%          -         -        60s
skewed    4.16.0   4.16.1   Progressing   50%          -         -        0s
";
        assert_eq!(render(&rows, now()), expected);
        let json = serde_json::to_value(&rows).expect("json");
        assert_eq!(json[0]["freshness"], "Unknown");
        assert_eq!(json[0]["lastReported"], "2027-12-05T12:00:00Z");
        assert_eq!(json[2]["freshness"], "Fresh", "within the skew allowance");
        let w = warnings(&rows);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("future/future") && w[0].contains("365d in the future"),
            "{w:?}"
        );
    }

    /// A ManagedClusterAddOn as OCM's add-on manager writes it: `Available`, the template
    /// `desired` and `applied` (`None`: not in the reference), and `Progressing` (status, reason).
    fn mca_rolling(
        template: (Option<&str>, Option<&str>),
        config: Option<(&str, &str)>,
        progressing: Option<(&str, &str)>,
    ) -> ManagedClusterAddOn {
        let hash = |name: &str, h: &str| serde_json::json!({"name": name, "specHash": h});
        let mut t = serde_json::json!({
            "group": "addon.open-cluster-management.io", "resource": "addontemplates",
            "name": template.0.unwrap_or("update-status-0.1.0"), "lastObservedGeneration": 1,
        });
        if let Some(d) = template.0 {
            t["desiredConfig"] = hash(d, &format!("h-{d}"));
        }
        if let Some(a) = template.1 {
            t["lastAppliedConfig"] = hash(a, &format!("h-{a}"));
        }
        let mut refs = vec![t];
        if let Some((desired, applied)) = config {
            refs.push(serde_json::json!({
                "group": "addon.open-cluster-management.io",
                "resource": "addondeploymentconfigs", "name": "update-status",
                "namespace": "open-cluster-management-update-status",
                "desiredConfig": {"name": "update-status", "namespace": "open-cluster-management-update-status", "specHash": desired},
                "lastAppliedConfig": {"name": "update-status", "namespace": "open-cluster-management-update-status", "specHash": applied},
            }));
        }
        let mut conditions = vec![serde_json::json!({
            "type": "Available", "status": "True", "reason": "ProbeAvailable", "message": "ok",
        })];
        if let Some((status, reason)) = progressing {
            conditions.push(serde_json::json!({
                "type": "Progressing", "status": status, "reason": reason, "message": "m",
            }));
        }
        serde_json::from_value(serde_json::json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1",
            "kind": "ManagedClusterAddOn",
            "metadata": {"name": ADDON_NAME, "namespace": "c"},
            "spec": {},
            "status": {"conditions": conditions, "configReferences": refs},
        }))
        .expect("a ManagedClusterAddOn")
    }

    /// Issue #47 item 4: the ADD-ON column says nothing more of an add-on rolled out, and tells
    /// an upgrade, a first install, a failed or waiting rollout and a template not rolled out.
    #[test]
    fn the_addon_column_shows_its_version_only_while_it_is_not_rolled_out() {
        let v1 = Some("update-status-0.1.0");
        let v2 = Some("update-status-0.2.0");
        let text = |t, c, p| AddOnState::of(&mca_rolling(t, c, p), None).text();
        let done = Some(("False", "Completed"));
        let cases = [
            (text((v1, v1), Some(("a", "a")), done), "Available"),
            (text((v1, v1), None, None), "Available"),
            (
                text((v2, v1), None, Some(("True", "Progressing"))),
                "Available, Upgrading (0.1.0 -> 0.2.0)",
            ),
            (
                text((v2, None), None, Some(("True", "Progressing"))),
                "Available, Installing (0.2.0)",
            ),
            (
                text((v1, v1), Some(("b", "a")), Some(("True", "Progressing"))),
                "Available, Upgrading (deployment config)",
            ),
            (
                text((v1, v1), None, Some(("True", "Progressing"))),
                "Available, Progressing",
            ),
            (
                text((v2, v1), None, Some(("False", "Failed"))),
                "Available, Rollout failed (0.1.0 -> 0.2.0)",
            ),
            (
                text((v2, v1), None, Some(("False", "WaitingForCanary"))),
                "Available, Waiting for canary (0.1.0 -> 0.2.0)",
            ),
            (
                text((v2, v1), None, done),
                "Available, template 0.1.0 (0.2.0 desired)",
            ),
            (
                text((v2, v1), None, None),
                "Available, template 0.1.0 (0.2.0 desired)",
            ),
            (
                text((v1, v1), Some(("b", "a")), None),
                "Available, deployment config not applied",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
        let degraded = AddOnCondition {
            status: "True".into(),
            reason: "InputsUnreadable".into(),
            message: String::new(),
        };
        assert_eq!(
            AddOnState::of(
                &mca_rolling((v2, v1), None, Some(("True", "Progressing"))),
                Some(degraded)
            )
            .text(),
            "Degraded (InputsUnreadable), Upgrading (0.1.0 -> 0.2.0)"
        );
        assert_eq!(template_version("update-status-hosted-0.3.0"), "0.3.0");
        assert_eq!(template_version("someone-elses"), "someone-elses");
        assert_eq!(template_version("update-status-"), "update-status-");
    }

    /// Issue #47 item 4: `-o json` (and the grid) carry the desired and applied template and
    /// deployment config and the rollout's state; without config references, nothing.
    #[test]
    fn the_addon_json_has_the_desired_and_applied_configs_and_the_rollout() {
        let rolling = mca_rolling(
            (Some("update-status-0.2.0"), Some("update-status-0.1.0")),
            Some(("d2", "d1")),
            Some(("True", "Progressing")),
        );
        let rows = assemble(&[], &Tally::default(), Some(&[rolling]), None, &judge());
        let json = serde_json::to_value(&rows[0]).expect("json");
        let a = &json["addOn"];
        assert_eq!(a["template"]["desired"]["name"], "update-status-0.2.0");
        assert_eq!(
            a["template"]["desired"]["specHash"],
            "h-update-status-0.2.0"
        );
        assert_eq!(a["template"]["applied"]["name"], "update-status-0.1.0");
        assert_eq!(a["deploymentConfig"]["desired"]["specHash"], "d2");
        assert_eq!(
            a["deploymentConfig"]["applied"]["namespace"],
            "open-cluster-management-update-status"
        );
        assert_eq!(a["rollout"]["reason"], "Progressing");
        assert_eq!(a["rollout"]["status"], "True");
        assert_eq!(a["available"], "True");
        let plain = serde_json::to_value(AddOnState::of(
            &mca("c", Some(("True", "ProbeAvailable"))),
            None,
        ))
        .expect("json");
        for absent in ["template", "deploymentConfig", "rollout"] {
            assert!(plain.get(absent).is_none(), "{absent}: {plain}");
        }
    }

    /// A ClusterManagementAddOn whose install progressions want the template `template` and
    /// the deployment config of spec hash `config`, one entry per progression.
    fn cma(progressions: &[(&str, &str)]) -> update_status_api::acm::ClusterManagementAddOn {
        let ns = "open-cluster-management-update-status";
        let p: Vec<_> = progressions
            .iter()
            .map(|(template, config)| {
                serde_json::json!({"name": "p", "configReferences": [
                    {"group": "addon.open-cluster-management.io", "resource": "addontemplates",
                     "desiredConfig": {"name": template, "specHash": format!("h-{template}")}},
                    {"group": "addon.open-cluster-management.io",
                     "resource": "addondeploymentconfigs",
                     "desiredConfig": {"name": "update-status", "namespace": ns, "specHash": config}},
                ]})
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "apiVersion": "addon.open-cluster-management.io/v1alpha1",
            "kind": "ClusterManagementAddOn",
            "metadata": {"name": ADDON_NAME},
            "spec": {"installStrategy": {"type": "Placements"}},
            "status": {"installProgressions": p},
        }))
        .expect("a ClusterManagementAddOn")
    }

    /// Issue #47 item 4, seen on the real OCM (acm_rollout): a cluster the rollout passed over
    /// (offline) keeps its old configuration as desired and applied, `Completed`; only the
    /// ClusterManagementAddOn names the new one. The row says it is pending.
    #[test]
    fn a_cluster_the_rollout_has_not_reached_is_pending() {
        let v1 = Some("update-status-0.1.0");
        let done = Some(("False", "Completed"));
        let row = |mca: ManagedClusterAddOn, cma| {
            let mut rows = assemble(&[], &Tally::default(), Some(&[mca]), None, &judge());
            assemble::mark_pending(&mut rows, &cma);
            rows.remove(0)
        };
        let text = |r: &FleetRow| r.add_on.as_ref().map(AddOnState::text).unwrap_or_default();
        let both = row(
            mca_rolling((v1, v1), Some(("a", "a")), done),
            cma(&[("update-status-0.2.0", "b"), ("update-status-0.2.0", "b")]),
        );
        assert_eq!(text(&both), "Available, Pending (0.1.0 -> 0.2.0)");
        let json = serde_json::to_value(&both).expect("json");
        let a = &json["addOn"];
        assert_eq!(a["template"]["fleetDesired"]["name"], "update-status-0.2.0");
        assert_eq!(a["deploymentConfig"]["fleetDesired"]["specHash"], "b");
        assert_eq!(a["deploymentConfig"]["applied"]["specHash"], "a");
        let config = row(
            mca_rolling((v1, v1), Some(("a", "a")), done),
            cma(&[("update-status-0.1.0", "b")]),
        );
        assert_eq!(text(&config), "Available, Pending (deployment config)");
        let json = serde_json::to_value(&config).expect("json");
        assert!(json["addOn"]["template"].get("fleetDesired").is_none());
        let current = row(
            mca_rolling((v1, v1), Some(("a", "a")), done),
            cma(&[("update-status-0.1.0", "a")]),
        );
        assert_eq!(text(&current), "Available");
        // Placements wanting different configurations: which one is this cluster's is unknown.
        let split = row(
            mca_rolling((v1, v1), Some(("a", "a")), done),
            cma(&[("update-status-0.1.0", "b"), ("update-status-0.1.0", "c")]),
        );
        assert_eq!(text(&split), "Available");
        // A rollout under way on the cluster says so, as before.
        let upgrading = row(
            mca_rolling((v1, v1), Some(("b", "a")), Some(("True", "Progressing"))),
            cma(&[("update-status-0.1.0", "b")]),
        );
        assert_eq!(text(&upgrading), "Available, Upgrading (deployment config)");
        // A cluster configuring its deployment for itself is not behind the fleet's.
        let mut own = mca_rolling((v1, v1), Some(("a", "a")), done);
        own.spec.configs = vec![update_status_api::acm::AddOnConfig {
            group: "addon.open-cluster-management.io".into(),
            resource: "addondeploymentconfigs".into(),
        }];
        assert_eq!(
            text(&row(own, cma(&[("update-status-0.1.0", "b")]))),
            "Available"
        );
    }

    #[test]
    fn an_addon_both_unavailable_and_degraded_says_both() {
        let a = mca("c", Some(("False", "ProbeUnavailable")));
        let degraded = AddOnCondition {
            status: "True".into(),
            reason: "InputsUnreadable".into(),
            message: String::new(),
        };
        assert_eq!(
            AddOnState::of(&a, Some(degraded)).text(),
            "Unavailable (ProbeUnavailable), Degraded (InputsUnreadable)"
        );
    }
}
