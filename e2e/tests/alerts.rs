//! Alerts in, metrics out, against a real Prometheus (`prometheus` on loopback, see
//! `update_status_e2e::prometheus`) and the real controller binary on a loaded snapshot.
//!
//! 1. Alerts in: Prometheus (HTTPS, its own CA) fires test alerts; the controller
//!    (`--prometheus-url`, 1 s interval) turns them into health insights; an alert that stops
//!    firing loses its insight; Prometheus killed → the alert insights stay and one Unknown
//!    `AlertsUnavailable` insight appears; Prometheus back → it goes.
//! 2. Metrics out: Prometheus scrapes the controller's `/metrics` with the shipped rules
//!    (`config/prometheus/rules.yaml`, every `for` shortened to 0s so the test does not wait
//!    15 minutes: the expressions are the shipped ones) and the shipped alerts fire on a
//!    degraded snapshot; the controller killed → UpdateStatusControllerDown fires.
//!
//! The controller runs on the wall clock: alerts' `activeAt` is now, and the snapshots'
//! updates started in 2023/2024, so the alerts "started firing during the update".
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use update_status_e2e::controller::Controller;
use update_status_e2e::prometheus::{Prometheus, PrometheusOptions, free_port};
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case, poll_until, wait_for};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);

async fn get_json(
    env: &TestEnv,
    args: &[&str],
) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["-o", "json"]);
    Ok(serde_json::from_str(&env.kubectl_ok(a).await?)?)
}

/// Insights of a namespace selected by labels.
async fn insights(env: &TestEnv, ns: &str, selector: &str) -> Option<Vec<Value>> {
    let l = get_json(env, &["get", "updateinsights", "-n", ns, "-l", selector])
        .await
        .ok()?;
    l["items"].as_array().cloned()
}

/// `(resource name, namespace, level)` of alert insights, sorted.
fn summary(items: &[Value]) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = items
        .iter()
        .map(|i| {
            let st = &i["status"];
            (
                st["resource"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                st["resource"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                st["health"]["impact"]["level"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn s(items: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

/// Test alerts: every one fires at once (`vector(1)`), except the pending one.
fn test_rules(with_warning: bool) -> String {
    let mut rules = vec![
        json!({"alert": "E2ECritical", "expr": "vector(1)",
            "labels": {"severity": "critical", "namespace": "openshift-e2e"},
            "annotations": {"summary": "Something critical broke", "description": "It broke during the update.",
                "runbook_url": "https://example.com/runbooks/E2ECritical.md"}}),
        json!({"alert": "E2EInfo", "expr": "vector(1)",
            "labels": {"severity": "info", "namespace": "openshift-e2e"},
            "annotations": {"summary": "Only for information"}}),
        json!({"alert": "E2EPending", "expr": "vector(1)", "for": "1h",
            "labels": {"severity": "critical", "namespace": "openshift-e2e"},
            "annotations": {"summary": "Not firing yet"}}),
        json!({"alert": "PodDisruptionBudgetAtLimit", "expr": "vector(1)",
            "labels": {"severity": "warning", "namespace": "openshift-e2e-pdb", "poddisruptionbudget": "app"},
            "annotations": {"summary": "The pod disruption budget is preventing further disruption to pods.",
                "description": "The pod disruption budget is at the minimum disruptions allowed level."}}),
        // A tenant's rule of the same name, labelled as the platform's: described as oc does
        // (by name, issue #48), with our caveat (its source cannot be told).
        json!({"alert": "PodDisruptionBudgetAtLimit", "expr": "vector(1)",
            "labels": {"severity": "warning", "namespace": "tenant-shop", "poddisruptionbudget": "web",
                "prometheus": "openshift-monitoring/k8s", "openshift_io_alert_source": "platform"},
            "annotations": {"description": "Defined by a tenant."}}),
        // Same name, two label sets: two insights.
        json!({"alert": "E2EDuplicated",
            "expr": r#"label_replace(vector(1), "pod", "a", "", "") or label_replace(vector(1), "pod", "b", "", "")"#,
            "labels": {"severity": "warning", "namespace": "openshift-e2e"},
            "annotations": {"summary": "Pod {{ $labels.pod }} is unhappy"}}),
    ];
    if with_warning {
        rules.push(json!({"alert": "E2EWarning", "expr": "vector(1)",
            "labels": {"severity": "warning", "namespace": "openshift-e2e"},
            "annotations": {"message": "Only a message."}}));
    }
    json!({"groups": [{"name": "e2e", "rules": rules}]}).to_string()
}

fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[tokio::test]
async fn firing_alerts_become_health_insights_and_outages_are_reported() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("alerts-in").await?;
    let n = ns.name();
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;

    let mut prom = Prometheus::start(PrometheusOptions {
        rules: test_rules(true),
        tls: true,
        ..Default::default()
    })?;
    prom.wait_ready(TIMEOUT).await?;
    let token = prom.dir().join("token");
    std::fs::write(&token, "e2e-token\n")?;
    let ca = prom.ca_file().ok_or("no CA file")?;
    let url = prom.url();
    let controller = Controller::start(
        &env,
        n,
        &[
            "--prometheus-url",
            &url,
            "--prometheus-ca-file",
            path(&ca)?,
            "--prometheus-token-file",
            path(&token)?,
            "--prometheus-interval",
            "1s",
            "--prometheus-timeout",
            "5s",
        ],
    )?;
    let hint_text = format!(
        "(controller log: {}, prometheus logs in {})",
        controller.log.display(),
        prom.dir().display()
    );
    let hint = || hint_text.clone();

    // 1. The firing alerts, as health insights (info and pending ones are not shown).
    let alerts_selector = "update.openshift.io/source=alert";
    let want = s(&[
        ("E2ECritical", "openshift-e2e", "Critical"),
        ("E2EDuplicated", "openshift-e2e", "Warning"),
        ("E2EDuplicated", "openshift-e2e", "Warning"),
        ("E2EWarning", "openshift-e2e", "Warning"),
        ("PodDisruptionBudgetAtLimit", "openshift-e2e-pdb", "Warning"),
        ("PodDisruptionBudgetAtLimit", "tenant-shop", "Warning"),
    ]);
    let items = poll_until(TIMEOUT, "6 alert insights", || async {
        let items = insights(&env, n, alerts_selector).await?;
        (summary(&items) == want).then_some(items)
    })
    .await
    .map_err(|e| format!("{e} {}", hint()))?;
    let by_name = |name: &str| {
        items
            .iter()
            .find(|i| i["status"]["resource"]["name"] == name)
            .cloned()
            .unwrap_or_default()
    };
    let in_namespace = |name: &str, ns: &str| {
        items
            .iter()
            .find(|i| {
                i["status"]["resource"]["name"] == name
                    && i["status"]["resource"]["namespace"] == ns
            })
            .cloned()
            .unwrap_or_default()
    };
    let critical = by_name("E2ECritical");
    let st = &critical["status"];
    assert_eq!(st["type"], "Health", "{critical}");
    assert_eq!(st["scope"], json!({"type": "Cluster"}), "{critical}");
    assert_eq!(
        st["resource"],
        json!({"group": "config.openshift.io", "kind": "Alert", "name": "E2ECritical", "namespace": "openshift-e2e"})
    );
    let h = &st["health"];
    assert_eq!(h["source"], "Alert");
    assert_eq!(h["impact"]["type"], "Unknown");
    assert_eq!(
        h["impact"]["summary"],
        "Alert is firing: Something critical broke"
    );
    assert_eq!(
        h["impact"]["description"],
        "Alert started firing during the update. The alert description is: It broke during the update."
    );
    assert_eq!(
        h["remediation"]["reference"],
        "https://example.com/runbooks/E2ECritical.md"
    );
    let started: jiff::Timestamp = h["startedAt"].as_str().ok_or("no startedAt")?.parse()?;
    let age = jiff::Timestamp::now().duration_since(started);
    assert!(
        age < jiff::SignedDuration::from_secs(300) && age > jiff::SignedDuration::ZERO,
        "startedAt is the alert's activeAt: {started}"
    );
    let owner = &critical["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "ControlPlaneUpdateStatus", "{critical}");
    assert_eq!(owner["name"], "cluster", "{critical}");
    let labels = &critical["metadata"]["labels"];
    assert_eq!(labels["update.openshift.io/reconciler"], "alerts");
    assert_eq!(labels["update.openshift.io/scope"], "cluster");
    assert_eq!(labels["update.openshift.io/impact-level"], "critical");
    let warning = by_name("E2EWarning");
    assert_eq!(
        warning["status"]["health"]["remediation"]["reference"],
        "<alert does not have a runbook_url annotation>"
    );
    assert_eq!(
        warning["status"]["health"]["impact"]["description"],
        "Alert started firing during the update. The alert description is: Only a message."
    );
    assert_eq!(
        in_namespace("PodDisruptionBudgetAtLimit", "openshift-e2e-pdb")["status"]["health"]["impact"]
            ["description"],
        "Alert known to affect updates started firing during the update. The alert description is: The pod disruption budget is at the minimum disruptions allowed level."
    );
    let tenant = &in_namespace("PodDisruptionBudgetAtLimit", "tenant-shop")["status"]["health"];
    assert_eq!(
        tenant["impact"]["description"],
        "Alert known to affect updates started firing during the update. The alert description is: Defined by a tenant.",
        "oc classifies by name"
    );
    assert_eq!(tenant["caveat"], "AlertSourceUnverified");
    assert!(
        in_namespace("PodDisruptionBudgetAtLimit", "openshift-e2e-pdb")["status"]["health"]
            .get("caveat")
            .is_none()
    );
    // Selectable like any health insight.
    let critical_items = insights(
        &env,
        n,
        "update.openshift.io/insight-type=health,update.openshift.io/impact-level in (critical),update.openshift.io/resource-kind=Alert",
    )
    .await
    .ok_or("kubectl failed")?;
    assert_eq!(critical_items.len(), 1);
    // ... and exported as metrics (scope cluster, one info series per insight).
    let text = controller.metrics()?;
    assert_eq!(
        metric(&text, "update_status_prometheus_up"),
        Some(1.0),
        "{text}"
    );
    wait_for(TIMEOUT, "alert insights in the metrics", || async {
        controller.metrics().is_ok_and(|t| {
            metric(&t, r#"update_status_health_insights{impact_level="Warning",impact_type="Unknown",scope="cluster"}"#) == Some(5.0)
                && t.contains(r#"insight_info{impact_level="Critical",impact_type="Unknown",insight=""#)
        })
    })
    .await?;

    // Steady state: polls that read the same alerts rewrite nothing (same resourceVersions;
    // the other reconcilers may still be converging, so total writes are not compared).
    let versions = |items: Vec<Value>| -> Vec<String> {
        let mut v: Vec<String> = items
            .iter()
            .filter_map(|i| {
                i["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_string)
            })
            .collect();
        v.sort();
        v
    };
    let polls = |t: &str| metric(t, "update_status_prometheus_polls_total").unwrap_or(0.0);
    let before = versions(insights(&env, n, alerts_selector).await.unwrap_or_default());
    let polls_before = polls(&controller.metrics()?);
    wait_for(TIMEOUT, "3 more polls", || async {
        controller
            .metrics()
            .is_ok_and(|t| polls(&t) >= polls_before + 3.0)
    })
    .await?;
    let after = versions(insights(&env, n, alerts_selector).await.unwrap_or_default());
    assert_eq!(
        after,
        before,
        "alert insights rewritten while the alerts did not change {}",
        hint()
    );

    // 2. An alert stops firing: its insight goes, the others stay.
    prom.set_rules(&test_rules(false)).await?;
    let want_after = s(&[
        ("E2ECritical", "openshift-e2e", "Critical"),
        ("E2EDuplicated", "openshift-e2e", "Warning"),
        ("E2EDuplicated", "openshift-e2e", "Warning"),
        ("PodDisruptionBudgetAtLimit", "openshift-e2e-pdb", "Warning"),
        ("PodDisruptionBudgetAtLimit", "tenant-shop", "Warning"),
    ]);
    wait_for(TIMEOUT, "the resolved alert's insight to go", || async {
        insights(&env, n, alerts_selector)
            .await
            .is_some_and(|items| summary(&items) == want_after)
    })
    .await
    .map_err(|e| format!("{e} {}", hint()))?;
    let kept: Vec<String> = insights(&env, n, alerts_selector)
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|i| i["metadata"]["uid"].as_str().map(str::to_string))
        .collect();

    // 3. Prometheus goes away: after the grace period (3 failed polls) one Unknown insight
    //    says so; the alert insights stay, untouched.
    prom.kill();
    let unavailable = poll_until(TIMEOUT, "the AlertsUnavailable insight", || async {
        let items = insights(&env, n, "update.openshift.io/source=alerts-unavailable").await?;
        (items.len() == 1).then(|| items[0].clone())
    })
    .await
    .map_err(|e| format!("{e} {}", hint()))?;
    let h = &unavailable["status"]["health"];
    assert_eq!(h["impact"]["level"], "Unknown", "{unavailable}");
    assert_eq!(h["impact"]["type"], "Unknown");
    assert_eq!(h["source"], "AlertsUnavailable");
    let summary_text = h["impact"]["summary"].as_str().unwrap_or_default();
    assert!(
        summary_text.starts_with("Cannot read alerts from Prometheus: "),
        "{summary_text}"
    );
    assert!(
        h["remediation"]["reference"]
            .as_str()
            .is_some_and(|r| r.ends_with("/UpdateStatusPrometheusUnreachable.md"))
    );
    assert_eq!(
        unavailable["metadata"]["labels"]["update.openshift.io/impact-level"],
        "unknown"
    );
    let still: Vec<String> = insights(&env, n, alerts_selector)
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|i| i["metadata"]["uid"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        still, kept,
        "the alert insights are kept while Prometheus is away"
    );
    let text = controller.metrics()?;
    assert_eq!(
        metric(&text, "update_status_prometheus_up"),
        Some(0.0),
        "{text}"
    );
    assert!(
        metric(
            &text,
            r#"update_status_prometheus_poll_failures_total{reason="connect"}"#
        )
        .is_some_and(|v| v >= 3.0),
        "{text}"
    );
    let log = std::fs::read_to_string(&controller.log)?;
    assert!(
        log.contains("cannot read alerts from Prometheus"),
        "a warning in the log {}",
        hint()
    );

    // 4. Prometheus is back: the Unknown insight goes.
    prom.restart()?;
    prom.wait_ready(TIMEOUT).await?;
    wait_for(TIMEOUT, "the AlertsUnavailable insight to go", || async {
        insights(&env, n, "update.openshift.io/source=alerts-unavailable")
            .await
            .is_some_and(|items| items.is_empty())
    })
    .await
    .map_err(|e| format!("{e} {}", hint()))?;
    wait_for(TIMEOUT, "the alerts to be read again", || async {
        insights(&env, n, alerts_selector)
            .await
            .is_some_and(|items| summary(&items) == want_after)
    })
    .await?;
    assert_eq!(
        metric(&controller.metrics()?, "update_status_prometheus_up"),
        Some(1.0)
    );
    Ok(())
}

fn path(p: &Path) -> Result<&str, String> {
    p.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

/// The shipped rule file with every `for` set to 0s: same expressions, labels and annotations,
/// no 15-minute waits.
fn shipped_rules_without_for() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let path = update_status_e2e::repo_root().join("config/prometheus/rules.yaml");
    let mut rules: Value = serde_saphyr::from_str(&std::fs::read_to_string(&path)?)?;
    for group in rules["groups"].as_array_mut().into_iter().flatten() {
        for rule in group["rules"].as_array_mut().into_iter().flatten() {
            if rule.get("for").is_some() {
                rule["for"] = json!("0s");
            }
        }
    }
    Ok(rules.to_string())
}

/// `name{labels}` of the firing alerts.
async fn firing(prom: &Prometheus) -> Vec<Value> {
    prom.alerts()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|a| a["state"] == "firing")
        .collect()
}

fn has(alerts: &[Value], name: &str, labels: &[(&str, &str)]) -> bool {
    alerts.iter().any(|a| {
        a["labels"]["alertname"] == name
            && labels
                .iter()
                .all(|(k, v)| a["labels"][*k].as_str() == Some(*v))
    })
}

#[tokio::test]
async fn shipped_alerts_fire_on_the_controller_metrics() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("metrics-out").await?;
    env.replace_snapshot(&oc_status_case(
        "4.16.0-ec2-control-plane-updated-pdb-prohibits-draining",
    ))
    .await?;

    // Prometheus scrapes the controller's port (the job name the shipped rules select on);
    // the controller reads alerts from this Prometheus.
    let metrics_port = free_port()?;
    let mut prom = Prometheus::start(PrometheusOptions {
        rules: shipped_rules_without_for()?,
        scrape: vec![(
            "update-status-controller".to_string(),
            format!("127.0.0.1:{metrics_port}"),
        )],
        ..Default::default()
    })?;
    prom.wait_ready(TIMEOUT).await?;
    let url = prom.url();
    let controller = Controller::start_on(
        &env,
        ns.name(),
        metrics_port,
        &["--prometheus-url", &url, "--prometheus-interval", "1s"],
    )?;
    let hint = || {
        format!(
            "(controller log: {}, prometheus log: {})",
            controller.log.display(),
            prom.log.display()
        )
    };

    // The degraded pool and its degraded nodes' Error insights fire the shipped alerts.
    let alerts = poll_until(TIMEOUT, "the shipped alerts to fire", || async {
        let alerts = firing(&prom).await;
        (has(
            &alerts,
            "UpdateStatusWorkerPoolDegraded",
            &[("pool", "worker"), ("severity", "warning")],
        ) && has(
            &alerts,
            "UpdateStatusErrorHealthInsight",
            &[
                ("resource_kind", "Node"),
                ("resource_name", "build0-gstfj-ci-prowjobs-worker-b-9lztv"),
                ("impact_type", "Update Stalled"),
            ],
        ) && has(
            &alerts,
            "UpdateStatusWorkerPoolNotProgressing",
            &[("pool", "worker")],
        ))
        .then_some(alerts)
    })
    .await
    .map_err(|e| format!("{e} {}", hint()))?;
    let degraded = alerts
        .iter()
        .find(|a| a["labels"]["alertname"] == "UpdateStatusWorkerPoolDegraded")
        .ok_or("no UpdateStatusWorkerPoolDegraded")?;
    assert_eq!(
        degraded["annotations"]["summary"],
        "Nodes of worker pool worker are degraded."
    );
    assert!(
        degraded["annotations"]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("7 nodes of worker pool worker have been degraded")),
        "{degraded}"
    );
    assert_eq!(
        degraded["annotations"]["runbook_url"],
        "https://github.com/openshift/runbooks/blob/master/alerts/update-status/UpdateStatusWorkerPoolDegraded.md"
    );
    let errors: Vec<&Value> = alerts
        .iter()
        .filter(|a| {
            a["labels"]["alertname"] == "UpdateStatusErrorHealthInsight"
                && a["labels"]["resource_kind"] == "Node"
        })
        .collect();
    assert_eq!(errors.len(), 7, "one per degraded node: {errors:?}");

    // The controller is scraped and reads alerts: its own alerts settle to not firing.
    wait_for(
        TIMEOUT,
        "UpdateStatusControllerDown and UpdateStatusPrometheusUnreachable not firing",
        || async {
            let alerts = firing(&prom).await;
            !has(&alerts, "UpdateStatusControllerDown", &[])
                && !has(&alerts, "UpdateStatusPrometheusUnreachable", &[])
                && has(&alerts, "UpdateStatusWorkerPoolDegraded", &[])
        },
    )
    .await
    .map_err(|e| format!("{e} {}", hint()))?;
    let all = firing(&prom).await;
    for quiet in [
        "UpdateStatusUpdateStalled",
        "UpdateStatusCriticalHealthInsight",
        "UpdateStatusReconcileFailing",
    ] {
        assert!(!has(&all, quiet, &[]), "{quiet} fires: {all:?}");
    }

    // The controller goes away: UpdateStatusControllerDown fires.
    drop(controller);
    wait_for(TIMEOUT, "UpdateStatusControllerDown to fire", || async {
        has(
            &firing(&prom).await,
            "UpdateStatusControllerDown",
            &[
                ("severity", "warning"),
                ("namespace", "openshift-update-status"),
            ],
        )
    })
    .await?;
    Ok(())
}
