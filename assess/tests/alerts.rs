//! Alert insights (D.9) from a captured `/api/v1/alerts` answer, alone and through the whole
//! assessment of a snapshot (what the CLI's offline mode runs when a snapshot has
//! `alerts.json`).
//!
//! `tests/data/alerts-4.16.0-ec2-pdb.json` is shaped like what OpenShift's Thanos Querier
//! answers (labels, annotations, `activeAt` with nanoseconds, `value`), for the moment of the
//! `4.16.0-ec2-control-plane-updated-pdb-prohibits-draining` snapshot (update started
//! 2024-02-27T12:12:27Z): alerts from before the update, allow-listed PDB alerts, a pending
//! and an info alert, a `message`-only alert, duplicated `KubePodNotReady`.

mod common;

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use update_status_api::crd::{ImpactLevel, ScopeType, UpdateInsightStatus};
use update_status_api::input::AlertsResponse;
use update_status_assess::alerts::{assess_alert_insights, assess_alerts};
use update_status_assess::{ClusterInputs, McoImage, assess_cluster};
use update_status_snapshot::Snapshot;
use update_status_testdata::oc_status_dir as fixtures_dir;

const CASE: &str = "4.16.0-ec2-control-plane-updated-pdb-prohibits-draining";

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/alerts-4.16.0-ec2-pdb.json")
}

fn captured() -> AlertsResponse {
    let text = std::fs::read_to_string(data()).expect("alerts file");
    serde_json::from_str(&text).expect("alerts JSON")
}

fn ts(s: &str) -> Timestamp {
    s.parse().expect("timestamp")
}

type Row = (String, Option<String>, ImpactLevel, String, String, String);

fn rows(insights: &[UpdateInsightStatus]) -> Vec<Row> {
    insights
        .iter()
        .filter_map(|i| {
            let h = i.health.as_ref()?;
            Some((
                i.resource.name.clone(),
                i.resource.namespace.clone(),
                h.impact.level,
                h.impact.summary.clone(),
                h.impact.description.clone(),
                h.remediation.reference.clone(),
            ))
        })
        .collect()
}

fn expected() -> Vec<Row> {
    let r = |name: &str, ns: &str, level, summary: &str, desc: &str, reference: &str| {
        (
            name.to_string(),
            Some(ns.to_string()),
            level,
            summary.to_string(),
            desc.to_string(),
            reference.to_string(),
        )
    };
    vec![
        r(
            "PodDisruptionBudgetAtLimit",
            "ci",
            ImpactLevel::Warning,
            "Alert is firing: The pod disruption budget is preventing further disruption to pods.",
            "Alert known to affect updates has been firing since before the update started. The alert description is: The pod disruption budget is at the minimum disruptions allowed level. The number of current healthy pods is equal to the desired healthy pods.",
            "https://github.com/openshift/runbooks/blob/master/alerts/cluster-kube-controller-manager-operator/PodDisruptionBudgetAtLimit.md",
        ),
        r(
            "PodDisruptionBudgetLimit",
            "ci-op-7x2k9f4c",
            ImpactLevel::Critical,
            "Alert is firing: The pod disruption budget registers insufficient amount of pods.",
            "Alert known to affect updates started firing during the update. The alert description is: The pod disruption budget is below the minimum disruptions allowed level and is not satisfied. The number of current healthy pods is less than the desired healthy pods.",
            "https://github.com/openshift/runbooks/blob/master/alerts/cluster-kube-controller-manager-operator/PodDisruptionBudgetLimit.md",
        ),
        r(
            "MCCDrainError",
            "openshift-machine-config-operator",
            ImpactLevel::Warning,
            "Alert is firing: MCCDrainError",
            "Alert started firing during the update. The alert description is: Drain failed on build0-gstfj-ci-tests-worker-b-4h7pn , updates may be blocked. For more details check MachineConfigController pod logs: oc logs -f -n openshift-machine-config-operator machine-config-controller-xxxxx -c machine-config-controller",
            "<alert does not have a runbook_url annotation>",
        ),
        r(
            "KubePodNotReady",
            "ci",
            ImpactLevel::Warning,
            "Alert is firing: Pod has been in a non-ready state for more than 15 minutes.",
            "Alert started firing during the update. The alert description is: Pod ci/deck-7b9c6d5f4-2kq8x has been in a non-ready state for longer than 15 minutes.",
            "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/KubePodNotReady.md",
        ),
        r(
            "KubePodNotReady",
            "ci",
            ImpactLevel::Warning,
            "Alert is firing: Pod has been in a non-ready state for more than 15 minutes.",
            "Alert started firing during the update. The alert description is: Pod ci/hook-5d8f7c9b6-x7wqz has been in a non-ready state for longer than 15 minutes.",
            "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/KubePodNotReady.md",
        ),
        r(
            "ClusterOperatorDegraded",
            "openshift-cluster-version",
            ImpactLevel::Warning,
            "Alert is firing: Cluster operator has been degraded for 30 minutes.",
            "Alert started firing during the update. The alert description is: The version operator is degraded because ClusterOperatorDegraded, and the components it manages may have reduced quality of service.  Cluster upgrades may not complete. For more information refer to 'oc adm upgrade' or https://console-openshift-console.apps.build0.ci.example.com/settings/cluster/.",
            "https://github.com/openshift/runbooks/blob/master/alerts/cluster-version-operator/ClusterOperatorDegraded.md",
        ),
        r(
            "etcdHighFsyncDurations",
            "openshift-etcd",
            ImpactLevel::Critical,
            "Alert is firing: etcd cluster 99th percentile fsync durations are too high.",
            "Alert started firing during the update. The alert description is: etcd cluster \"etcd\": 99th percentile fsync durations are 1.146s on etcd instance 10.0.0.5:9979. | etcd is slow to write to disk; the API server may be slow or unavailable.",
            "https://github.com/openshift/runbooks/blob/master/alerts/cluster-etcd-operator/etcdHighFsyncDurations.md",
        ),
    ]
}

#[test]
fn captured_alerts_become_the_expected_insights() {
    let resp = captured();
    assert_eq!(resp.status, "success");
    assert_eq!(resp.data.alerts.len(), 11);
    let start = ts("2024-02-27T12:12:27Z");
    let now = ts("2024-02-27T16:16:13.000368975Z");
    let insights = assess_alerts(&resp.data.alerts, Some(start), now);
    assert_eq!(rows(&insights), expected());
    for i in &insights {
        assert_eq!(i.scope.type_, ScopeType::Cluster);
        assert_eq!(i.resource.kind, "Alert");
        assert_eq!(i.resource.group, "config.openshift.io");
        let h = i.health.as_ref().expect("health");
        assert_eq!(h.source, "Alert");
        assert_eq!(h.impact.type_.as_str(), "Unknown");
        assert!(h.started_at.is_some());
    }
    // startedAt is activeAt, to the nanosecond.
    assert_eq!(
        insights[1].health.as_ref().and_then(|h| h.started_at),
        Some(ts("2024-02-27T15:12:14.551238914Z"))
    );
    // Object names: distinct for the duplicated alert, stable across reads.
    let named = assess_alert_insights(&resp.data.alerts, Some(start), now);
    let names: Vec<String> = named.iter().map(|a| a.name()).collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    let again: Vec<String> = assess_alert_insights(&captured().data.alerts, Some(start), now)
        .iter()
        .map(|a| a.name())
        .collect();
    assert_eq!(names, again);

    // Once the update started before every alert, nothing is "from before the update".
    let early = assess_alerts(&resp.data.alerts, Some(ts("2024-01-01T00:00:00Z")), now);
    assert_eq!(
        early.len(),
        8,
        "Watchdog (severity none), info, pending are still dropped"
    );
}

/// A snapshot folder with `alerts.json`: the whole assessment (offline mode) shows the alert
/// insights, with the update start taken from the snapshot's ClusterVersion.
#[test]
fn a_snapshot_with_alerts_json_gets_alert_insights() {
    let src = fixtures_dir().join(CASE);
    let dir = std::env::temp_dir().join(format!(
        "update-status-alerts-snapshot-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for entry in std::fs::read_dir(&src).expect("fixture") {
        let p = entry.expect("entry").path();
        if let Some(name) = p.file_name() {
            std::fs::copy(&p, dir.join(name)).expect("copy");
        }
    }
    std::fs::copy(data(), dir.join("alerts.json")).expect("copy alerts");
    let snap = Snapshot::from_dir(&dir).expect("snapshot");
    let _ = std::fs::remove_dir_all(&dir);
    let now = snap.now.expect("now");
    let alerts = snap.alerts.as_ref().map(|a| a.data.alerts.as_slice());
    assert_eq!(alerts.map(<[_]>::len), Some(11));
    let inputs = ClusterInputs {
        alerts,
        ..common::inputs(&snap)
    };
    let out = assess_cluster(&inputs, now);
    let alert_insights: Vec<UpdateInsightStatus> = out
        .insights
        .iter()
        .filter(|i| i.scope.type_ == ScopeType::Cluster)
        .cloned()
        .collect();
    assert_eq!(rows(&alert_insights), expected());

    // Without alerts, the rest is unchanged.
    let without = assess_cluster(
        &ClusterInputs {
            alerts: None,
            ..inputs
        },
        now,
    );
    assert_eq!(without.insights.len() + 7, out.insights.len());
    assert_eq!(without.control_plane, out.control_plane);

    // A cluster that is not updating shows no alert insight.
    let (idle, idle_now) = common::load_case(&fixtures_dir().join("not-upgrading"));
    let idle_out = assess_cluster(
        &ClusterInputs {
            mco_image: McoImage::NotRead,
            alerts,
            ..common::inputs(&idle)
        },
        idle_now,
    );
    assert!(
        idle_out
            .insights
            .iter()
            .all(|i| i.scope.type_ != ScopeType::Cluster)
    );
}
