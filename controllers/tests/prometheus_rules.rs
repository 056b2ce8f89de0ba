//! The shipped alerting rules (`config/prometheus/`) against the code and the OpenShift alert
//! style guide. promtool checks their syntax and behaviour (`make prometheus-rules`); this test
//! runs everywhere `cargo test` does and checks what promtool cannot:
//!
//! - the PrometheusRule embeds exactly the groups of the plain rule file;
//! - every metric an expression uses is one the controller exports;
//! - names, severities, annotations, namespace labels and runbooks follow the style guide,
//!   and every runbook exists in `docs/runbooks/`;
//! - every alert is exercised by `rules.test.yaml`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use update_status_controllers::metrics::Metrics;

const RUNBOOK_BASE: &str =
    "https://github.com/openshift/runbooks/blob/master/alerts/update-status/";

fn repo() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn yaml(rel: &str) -> Value {
    let path = repo().join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn rules(v: &Value) -> Vec<&Value> {
    v["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["rules"].as_array().into_iter().flatten())
        .collect()
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

#[test]
fn prometheus_rule_embeds_the_plain_rule_file() {
    let plain = yaml("config/prometheus/rules.yaml");
    let pr = yaml("config/prometheus/prometheus-rule.yaml");
    assert_eq!(pr["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(pr["kind"], "PrometheusRule");
    assert_eq!(pr["metadata"]["namespace"], "openshift-update-status");
    assert_eq!(
        pr["spec"], plain,
        "config/prometheus/prometheus-rule.yaml differs from rules.yaml: run hack/prometheus-rule.sh"
    );
}

#[test]
fn expressions_use_exported_metrics_only() {
    let metrics = Metrics::new().expect("metrics");
    let exported: BTreeSet<&str> = metrics.names().iter().map(String::as_str).collect();
    let plain = yaml("config/prometheus/rules.yaml");
    let mut used = BTreeSet::new();
    for r in rules(&plain) {
        let expr = s(r, "expr");
        let mut rest = expr;
        while let Some(i) = rest.find("update_status_") {
            let name: String = rest[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest = &rest[i + name.len()..];
            assert!(
                exported.contains(name.as_str()),
                "{}: {name} is not exported by the controller ({exported:?})",
                s(r, "alert")
            );
            used.insert(name);
        }
        assert!(
            expr.contains(r#"job="update-status-controller""#),
            "{}: select the controller's scrape job",
            s(r, "alert")
        );
    }
    for m in [
        "update_status_control_plane_assessment",
        "update_status_health_insight_info",
        "update_status_worker_pool_nodes",
        "update_status_worker_pool_completion_ratio",
        "update_status_prometheus_up",
        "update_status_reconcile_errors_total",
    ] {
        assert!(used.contains(m), "no alert on {m}");
    }
}

#[test]
fn alerts_follow_the_openshift_style_guide_and_have_runbooks() {
    let plain = yaml("config/prometheus/rules.yaml");
    let tests = std::fs::read_to_string(repo().join("config/prometheus/rules.test.yaml"))
        .expect("rules.test.yaml");
    let all = rules(&plain);
    assert!(all.len() >= 8, "{} alerts", all.len());
    let mut names = BTreeSet::new();
    for r in all {
        let name = s(r, "alert");
        assert!(names.insert(name), "duplicate alert {name}");
        assert!(
            name.starts_with("UpdateStatus") && name.chars().all(|c| c.is_ascii_alphanumeric()),
            "{name}: CamelCase, prefixed UpdateStatus"
        );
        let labels = &r["labels"];
        let severity = s(labels, "severity");
        assert!(
            ["critical", "warning", "info"].contains(&severity),
            "{name}: severity {severity:?}"
        );
        let expr = s(r, "expr");
        assert!(
            labels["namespace"].is_string() || expr.contains("by (namespace"),
            "{name}: a namespace label (static, or kept by the aggregation)"
        );
        let ann = &r["annotations"];
        for key in ["summary", "description"] {
            assert!(!s(ann, key).trim().is_empty(), "{name}: no {key}");
        }
        assert!(
            s(ann, "summary").len() <= 120,
            "{name}: the summary is a subject line"
        );
        let runbook = s(ann, "runbook_url");
        if severity == "critical" {
            assert!(
                !runbook.is_empty(),
                "{name}: critical alerts need a runbook_url"
            );
        }
        if !runbook.is_empty() {
            assert_eq!(runbook, format!("{RUNBOOK_BASE}{name}.md"), "{name}");
            let doc = repo().join(format!("docs/runbooks/{name}.md"));
            let text = std::fs::read_to_string(&doc)
                .unwrap_or_else(|e| panic!("{name}: runbook {}: {e}", doc.display()));
            assert!(text.starts_with(&format!("# {name}\n")), "{name}: title");
            for section in ["## Meaning", "## Impact", "## Diagnosis", "## Mitigation"] {
                assert!(text.contains(section), "{name}: runbook lacks {section}");
            }
        }
        assert!(
            tests.contains(&format!("alertname: {name}\n")),
            "{name} is not tested in rules.test.yaml"
        );
        assert!(s(r, "for").ends_with('m'), "{name}: a `for` in minutes");
    }
}
