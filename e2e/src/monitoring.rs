//! What the cluster's Prometheus and ACM observability make of the monitoring objects the add-on
//! delivers, for the fleet alerting test (`tests/fleet_alerts.rs`): pure translations, with no
//! Prometheus Operator and no ACM running.
//!
//! - [`service_monitor_jobs`]: a ServiceMonitor as the Prometheus Operator turns it into scrape
//!   jobs (one per endpoint, named `serviceMonitor/<namespace>/<name>/<index>`): the Services of
//!   the namespaces of its `namespaceSelector` ([`service_monitor_namespaces`]) kept by its label
//!   selector and port name; `job` set to the Service's name; the endpoint's scheme, path,
//!   bearer-token file and TLS configuration. A field this translation does not know is an error,
//!   never ignored: what is scraped is what the ServiceMonitor says.
//! - [`service_targets`]: what Prometheus' Kubernetes service discovery (role `service`) makes of
//!   Services, as a file-SD target file with the same `__meta_kubernetes_*` labels. Debian's
//!   `prometheus` is built without Kubernetes service discovery: the test lists the Services with
//!   the scraper's own ServiceAccount token (as the discovery would: the delivered Role is what
//!   allows it) and hands them to Prometheus this way; the relabelings stay Prometheus' own.
//! - [`federation_job`]: ACM's metrics collector on a managed cluster, which reads the allowlisted
//!   series from the cluster's Prometheus (`/federate`, one `match[]` per name) and sends them to
//!   the hub with the `cluster` and `clusterID` labels; here a hub Prometheus federates them.
//! - [`allowlist_names`]: the names of a ConfigMap `observability-metrics-custom-allowlist` (the
//!   one the add-on delivers to each managed cluster, `config/acm/addon.yaml`).
//! - [`shorten_for`]: a rule file with every `for:` set to a short duration (a test cannot wait
//!   6 hours); [`promtool_check_rules`] checks the result as `make prometheus-rules` does.
//! - [`prometheus_rule_file`]: the rule file of a PrometheusRule (its `spec`), as the Prometheus
//!   Operator gives it to Prometheus.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// A monitoring object that cannot be translated, or a tool that failed.
#[derive(Debug, thiserror::Error)]
pub enum MonitoringError {
    /// The object lacks something, or has what this translation does not support.
    #[error("{what}: {problem}")]
    Object {
        /// Which object (kind, namespace/name).
        what: String,
        /// The problem.
        problem: String,
    },
    /// `promtool` could not be run, or refused the file.
    #[error("promtool check rules {file}: {message}")]
    Promtool {
        /// The file checked.
        file: PathBuf,
        /// Its output, or why it could not run.
        message: String,
    },
}

/// The endpoint fields [`service_monitor_jobs`] understands.
const ENDPOINT_FIELDS: &[&str] = &[
    "port",
    "scheme",
    "path",
    "interval",
    "scrapeTimeout",
    "bearerTokenFile",
    "tlsConfig",
    "honorLabels",
];
/// The TLS fields it understands.
const TLS_FIELDS: &[&str] = &["caFile", "serverName", "insecureSkipVerify"];
/// The spec fields it understands.
const SPEC_FIELDS: &[&str] = &["selector", "namespaceSelector", "endpoints"];

fn object_name(o: &Value) -> String {
    format!(
        "{} {}/{}",
        o["kind"].as_str().unwrap_or("object"),
        o["metadata"]["namespace"].as_str().unwrap_or_default(),
        o["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// A Kubernetes label name as Prometheus' service discovery spells it in a meta label.
fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn unknown_fields(o: &Value, known: &[&str]) -> Vec<String> {
    o.as_object()
        .map(|m| {
            m.keys()
                .filter(|k| !known.contains(&k.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The namespaces whose Services `service_monitor` selects from (its `namespaceSelector`'s
/// `matchNames`, or its own namespace).
pub fn service_monitor_namespaces(service_monitor: &Value) -> Result<Vec<String>, MonitoringError> {
    let what = object_name(service_monitor);
    let err = |problem: &str| MonitoringError::Object {
        what: what.clone(),
        problem: problem.to_string(),
    };
    match &service_monitor["spec"]["namespaceSelector"] {
        Value::Null => Ok(vec![
            service_monitor["metadata"]["namespace"]
                .as_str()
                .ok_or_else(|| err("no namespace"))?
                .to_string(),
        ]),
        sel => {
            if sel["any"] == true {
                return Err(err("namespaceSelector.any is not supported"));
            }
            sel["matchNames"]
                .as_array()
                .ok_or_else(|| err("namespaceSelector without matchNames"))?
                .iter()
                .map(|n| {
                    n.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| err("a matchNames entry is not a string"))
                })
                .collect()
        }
    }
}

/// The scrape jobs of `service_monitor` (one per endpoint), as the Prometheus Operator generates
/// them, reading the discovered Services from the file-SD file `targets` ([`service_targets`]),
/// with these substitutions a test needs:
/// - `pod_file` maps each file the ServiceMonitor names (paths in the Prometheus pod: its
///   ServiceAccount token, the service CA bundle) to a file of the test; a path it does not map
///   is an error;
/// - `address` (`host:port`) replaces the discovered Service address (a cluster DNS name the
///   test machine cannot resolve; the Service's port must still be the one the endpoint names);
/// - `interval` replaces the endpoint's scrape interval (which must be set).
pub fn service_monitor_jobs(
    service_monitor: &Value,
    targets: &Path,
    pod_file: &dyn Fn(&str) -> Option<PathBuf>,
    address: &str,
    interval: &str,
) -> Result<Vec<Value>, MonitoringError> {
    let what = object_name(service_monitor);
    let err = |problem: String| MonitoringError::Object {
        what: what.clone(),
        problem,
    };
    let spec = &service_monitor["spec"];
    let unknown = unknown_fields(spec, SPEC_FIELDS);
    if !unknown.is_empty() {
        return Err(err(format!("unsupported spec fields {unknown:?}")));
    }
    let own_namespace = service_monitor["metadata"]["namespace"]
        .as_str()
        .ok_or_else(|| err("no namespace".into()))?;
    service_monitor_namespaces(service_monitor)?;
    if spec["selector"]["matchExpressions"].is_array() {
        return Err(err("selector.matchExpressions is not supported".into()));
    }
    let match_labels = spec["selector"]["matchLabels"]
        .as_object()
        .filter(|m| !m.is_empty())
        .ok_or_else(|| err("no selector.matchLabels".into()))?;
    let file = |field: &str, path: &Value| -> Result<PathBuf, MonitoringError> {
        let path = path
            .as_str()
            .ok_or_else(|| err(format!("{field} is not a string")))?;
        pod_file(path).ok_or_else(|| err(format!("{field} {path}: no such file in this test")))
    };
    let endpoints = spec["endpoints"]
        .as_array()
        .filter(|e| !e.is_empty())
        .ok_or_else(|| err("no endpoints".into()))?;
    let mut jobs = Vec::new();
    for (i, ep) in endpoints.iter().enumerate() {
        let unknown = unknown_fields(ep, ENDPOINT_FIELDS);
        if !unknown.is_empty() {
            return Err(err(format!("endpoint {i}: unsupported fields {unknown:?}")));
        }
        let port = ep["port"]
            .as_str()
            .ok_or_else(|| err(format!("endpoint {i}: no port name")))?;
        if ep["interval"].as_str().is_none() {
            return Err(err(format!("endpoint {i}: no interval")));
        }
        let mut job = json!({
            "job_name": format!("serviceMonitor/{own_namespace}/{}/{i}",
                service_monitor["metadata"]["name"].as_str().unwrap_or_default()),
            "honor_labels": ep["honorLabels"].as_bool().unwrap_or(false),
            "scrape_interval": interval,
            "scrape_timeout": interval,
            "metrics_path": ep["path"].as_str().unwrap_or("/metrics"),
            "scheme": ep["scheme"].as_str().unwrap_or("http"),
            "file_sd_configs": [{"files": [targets]}],
        });
        if !ep["bearerTokenFile"].is_null() {
            job["authorization"] =
                json!({"credentials_file": file("bearerTokenFile", &ep["bearerTokenFile"])?});
        }
        let tls = &ep["tlsConfig"];
        if !tls.is_null() {
            let unknown = unknown_fields(tls, TLS_FIELDS);
            if !unknown.is_empty() {
                return Err(err(format!(
                    "endpoint {i}: unsupported tlsConfig fields {unknown:?}"
                )));
            }
            let mut t = json!({});
            if !tls["caFile"].is_null() {
                t["ca_file"] = json!(file("tlsConfig.caFile", &tls["caFile"])?);
            }
            if let Some(name) = tls["serverName"].as_str() {
                t["server_name"] = json!(name);
            }
            if let Some(skip) = tls["insecureSkipVerify"].as_bool() {
                t["insecure_skip_verify"] = json!(skip);
            }
            job["tls_config"] = t;
        }
        let mut relabel = Vec::new();
        for (label, value) in match_labels {
            let value = value
                .as_str()
                .ok_or_else(|| err(format!("selector label {label} is not a string")))?;
            let l = sanitize(label);
            relabel.push(json!({
                "action": "keep",
                "source_labels": [
                    format!("__meta_kubernetes_service_label_{l}"),
                    format!("__meta_kubernetes_service_labelpresent_{l}"),
                ],
                "regex": format!("({});true", regex_escape(value)),
            }));
        }
        relabel.push(json!({
            "action": "keep",
            "source_labels": ["__meta_kubernetes_service_port_name"],
            "regex": regex_escape(port),
        }));
        for (target, source) in [
            ("namespace", "__meta_kubernetes_namespace"),
            ("service", "__meta_kubernetes_service_name"),
            ("job", "__meta_kubernetes_service_name"),
        ] {
            relabel.push(json!({
                "action": "replace",
                "source_labels": [source],
                "target_label": target,
            }));
        }
        relabel.push(json!({
            "action": "replace",
            "target_label": "endpoint",
            "replacement": port,
        }));
        // The Service's address is a cluster DNS name; the agent listens on `address` here.
        relabel.push(json!({
            "action": "replace",
            "target_label": "__address__",
            "replacement": address,
        }));
        job["relabel_configs"] = Value::Array(relabel);
        jobs.push(job);
    }
    Ok(jobs)
}

/// Prometheus' Kubernetes service discovery, role `service`, on `services` (Service objects):
/// one target per Service port, `<service>.<namespace>.svc:<port>`, with its meta labels, as a
/// file-SD target file (JSON).
pub fn service_targets(services: &[Value]) -> Value {
    let mut groups = Vec::new();
    for svc in services {
        let (ns, name) = (
            svc["metadata"]["namespace"].as_str().unwrap_or_default(),
            svc["metadata"]["name"].as_str().unwrap_or_default(),
        );
        let mut common = serde_json::Map::new();
        common.insert("__meta_kubernetes_namespace".into(), json!(ns));
        common.insert("__meta_kubernetes_service_name".into(), json!(name));
        for (kind, field) in [("label", "labels"), ("annotation", "annotations")] {
            for (k, v) in svc["metadata"][field].as_object().into_iter().flatten() {
                let k = sanitize(k);
                common.insert(
                    format!("__meta_kubernetes_service_{kind}_{k}"),
                    json!(v.as_str().unwrap_or_default()),
                );
                common.insert(
                    format!("__meta_kubernetes_service_{kind}present_{k}"),
                    json!("true"),
                );
            }
        }
        for port in svc["spec"]["ports"].as_array().into_iter().flatten() {
            let number = port["port"].as_i64().unwrap_or_default();
            let mut labels = common.clone();
            labels.insert(
                "__meta_kubernetes_service_port_name".into(),
                json!(port["name"].as_str().unwrap_or_default()),
            );
            labels.insert(
                "__meta_kubernetes_service_port_number".into(),
                json!(number.to_string()),
            );
            labels.insert(
                "__meta_kubernetes_service_port_protocol".into(),
                json!(port["protocol"].as_str().unwrap_or("TCP")),
            );
            groups.push(json!({
                "targets": [format!("{name}.{ns}.svc:{number}")],
                "labels": labels,
            }));
        }
    }
    Value::Array(groups)
}

/// `s` with the characters special to Prometheus' (RE2) regular expressions escaped.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A scrape job of the hub Prometheus federating `cluster`'s allowlisted series from its
/// Prometheus at `target` (`host:port`), labelled as ACM's metrics collector labels them.
pub fn federation_job(
    cluster: &str,
    cluster_id: &str,
    target: &str,
    names: &[String],
    interval: &str,
) -> Value {
    let matches: Vec<String> = names
        .iter()
        .map(|n| format!("{{__name__=\"{n}\"}}"))
        .collect();
    json!({
        "job_name": format!("acm-metrics-collector/{cluster}"),
        "honor_labels": true,
        "metrics_path": "/federate",
        "params": {"match[]": matches},
        "scrape_interval": interval,
        "scrape_timeout": interval,
        "static_configs": [{
            "targets": [target],
            "labels": {"cluster": cluster, "clusterID": cluster_id},
        }],
    })
}

/// The metric names of an `observability-metrics-custom-allowlist` ConfigMap (YAML).
pub fn allowlist_names(config_map: &str) -> Result<Vec<String>, MonitoringError> {
    let err = |problem: String| MonitoringError::Object {
        what: "ConfigMap observability-metrics-custom-allowlist".into(),
        problem,
    };
    let cm: Value = serde_saphyr::from_str(config_map).map_err(|e| err(e.to_string()))?;
    let list = cm["data"]["metrics_list.yaml"]
        .as_str()
        .ok_or_else(|| err("no data.metrics_list.yaml".into()))?;
    let list: Value =
        serde_saphyr::from_str(list).map_err(|e| err(format!("metrics_list.yaml: {e}")))?;
    let names: Vec<String> = list["names"]
        .as_array()
        .ok_or_else(|| err("metrics_list.yaml has no names".into()))?
        .iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    if names.is_empty() {
        return Err(err("metrics_list.yaml names no metric".into()));
    }
    Ok(names)
}

/// The rule file `rules` (YAML) with every rule's `for:` set to `duration`, as JSON (which is
/// YAML: promtool and Prometheus read it), and how many rules had one.
pub fn shorten_for(rules: &str, duration: &str) -> Result<(String, usize), MonitoringError> {
    let err = |problem: String| MonitoringError::Object {
        what: "rule file".into(),
        problem,
    };
    let mut file: Value = serde_saphyr::from_str(rules).map_err(|e| err(e.to_string()))?;
    let groups = file["groups"]
        .as_array_mut()
        .ok_or_else(|| err("no groups".into()))?;
    let mut changed = 0;
    for group in groups {
        for rule in group["rules"].as_array_mut().into_iter().flatten() {
            if let Some(r) = rule.as_object_mut()
                && r.contains_key("for")
            {
                r.insert("for".into(), json!(duration));
                changed += 1;
            }
        }
    }
    let text = serde_json::to_string_pretty(&file).map_err(|e| err(e.to_string()))?;
    Ok((text, changed))
}

/// The rule file of a PrometheusRule object: its `spec` (the groups), as JSON.
pub fn prometheus_rule_file(rule: &Value) -> Result<String, MonitoringError> {
    let groups = &rule["spec"]["groups"];
    if groups.as_array().is_none_or(|g| g.is_empty()) {
        return Err(MonitoringError::Object {
            what: object_name(rule),
            problem: "no spec.groups".into(),
        });
    }
    Ok(json!({"groups": groups}).to_string())
}

/// `promtool check rules <file>`: `Ok` with its output when it accepts the file.
pub fn promtool_check_rules(file: &Path) -> Result<String, MonitoringError> {
    let out = Command::new("promtool")
        .args(["check", "rules"])
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| MonitoringError::Promtool {
            file: file.to_path_buf(),
            message: format!("cannot run promtool (Debian's `prometheus` package): {e}"),
        })?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(MonitoringError::Promtool {
            file: file.to_path_buf(),
            message: text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVICE_MONITOR: &str = include_str!("../../config/prometheus/service-monitor.yaml");
    const FLEET_RULES: &str = include_str!("../../config/acm/observability/fleet-rules.yaml");
    const ADDON: &str = include_str!("../../config/acm/addon.yaml");

    /// The allowlist the add-on's template delivers, as JSON (which is YAML).
    fn delivered_allowlist() -> String {
        serde_saphyr::from_multiple::<Value>(ADDON)
            .expect("yaml")
            .into_iter()
            .filter(|d| d["kind"] == "AddOnTemplate")
            .flat_map(|t| {
                t["spec"]["agentSpec"]["workload"]["manifests"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .find(|m| m["metadata"]["name"] == "observability-metrics-custom-allowlist")
            .expect("the template delivers the allowlist")
            .to_string()
    }
    const TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

    fn service_monitor() -> Value {
        serde_saphyr::from_multiple::<Value>(SERVICE_MONITOR)
            .expect("yaml")
            .into_iter()
            .find(|d| d["kind"] == "ServiceMonitor")
            .expect("a ServiceMonitor")
    }

    fn files(path: &str) -> Option<PathBuf> {
        match path {
            TOKEN => Some("/t/token".into()),
            p if p.ends_with("/service-ca.crt") => Some("/t/service-ca.crt".into()),
            _ => None,
        }
    }

    #[test]
    fn the_shipped_service_monitor_becomes_an_operator_like_job() {
        let jobs = service_monitor_jobs(
            &service_monitor(),
            Path::new("/t/targets.json"),
            &files,
            "127.0.0.1:9999",
            "1s",
        )
        .expect("translates");
        assert_eq!(jobs.len(), 1);
        let j = &jobs[0];
        assert_eq!(
            j["job_name"],
            "serviceMonitor/openshift-update-status/update-status-controller/0"
        );
        assert_eq!(j["scheme"], "https");
        assert_eq!(j["metrics_path"], "/metrics");
        assert_eq!(j["authorization"]["credentials_file"], "/t/token");
        assert_eq!(j["tls_config"]["ca_file"], "/t/service-ca.crt");
        assert_eq!(
            j["tls_config"]["server_name"],
            "update-status-controller.openshift-update-status.svc"
        );
        assert_eq!(j["file_sd_configs"][0]["files"], json!(["/t/targets.json"]));
        assert_eq!(
            service_monitor_namespaces(&service_monitor()).expect("namespaces"),
            ["openshift-update-status"]
        );
        let relabel = j["relabel_configs"].as_array().expect("relabelings");
        assert_eq!(
            relabel[0]["source_labels"][0],
            "__meta_kubernetes_service_label_app_kubernetes_io_name"
        );
        assert_eq!(relabel[0]["regex"], "(update-status-controller);true");
        assert_eq!(relabel[1]["regex"], "https");
        assert!(relabel.iter().any(|r| r["target_label"] == "job"
            && r["source_labels"][0] == "__meta_kubernetes_service_name"));
        assert_eq!(
            relabel.last().map(|r| r["replacement"].clone()),
            Some(json!("127.0.0.1:9999"))
        );
    }

    #[test]
    fn what_the_translation_does_not_know_is_an_error() {
        let mut sm = service_monitor();
        sm["spec"]["endpoints"][0]["metricRelabelings"] = json!([]);
        let e = service_monitor_jobs(&sm, Path::new("/t/targets.json"), &files, "a:1", "1s")
            .expect_err("field");
        assert!(e.to_string().contains("metricRelabelings"), "{e}");
        let mut sm = service_monitor();
        sm["spec"]["endpoints"][0]["tlsConfig"]["caFile"] = json!("/elsewhere/ca.crt");
        let e = service_monitor_jobs(&sm, Path::new("/t/targets.json"), &files, "a:1", "1s")
            .expect_err("file");
        assert!(e.to_string().contains("/elsewhere/ca.crt"), "{e}");
        let mut sm = service_monitor();
        sm["spec"]["selector"] = json!({});
        let e = service_monitor_jobs(&sm, Path::new("/t/targets.json"), &files, "a:1", "1s")
            .expect_err("sel");
        assert!(e.to_string().contains("matchLabels"), "{e}");
    }

    #[test]
    fn services_become_targets_with_the_kubernetes_meta_labels() {
        let svc = json!({
            "metadata": {"name": "s", "namespace": "n",
                "labels": {"app.kubernetes.io/name": "x"}},
            "spec": {"ports": [{"name": "https", "port": 8443, "protocol": "TCP"}]},
        });
        let t = service_targets(&[svc]);
        assert_eq!(t[0]["targets"], json!(["s.n.svc:8443"]));
        let l = &t[0]["labels"];
        assert_eq!(
            l["__meta_kubernetes_service_label_app_kubernetes_io_name"],
            "x"
        );
        assert_eq!(
            l["__meta_kubernetes_service_labelpresent_app_kubernetes_io_name"],
            "true"
        );
        assert_eq!(l["__meta_kubernetes_service_port_name"], "https");
        assert_eq!(l["__meta_kubernetes_service_port_number"], "8443");
        assert_eq!(l["__meta_kubernetes_namespace"], "n");
    }

    #[test]
    fn federation_asks_for_each_allowlisted_name_and_labels_the_cluster() {
        let names = allowlist_names(&delivered_allowlist()).expect("allowlist");
        assert!(
            names
                .iter()
                .any(|n| n == "update_status_update_in_progress")
        );
        let j = federation_job("c1", "id-1", "127.0.0.1:9090", &names, "1s");
        assert_eq!(j["metrics_path"], "/federate");
        assert_eq!(j["honor_labels"], true);
        assert_eq!(
            j["params"]["match[]"][0],
            format!("{{__name__=\"{}\"}}", names[0])
        );
        assert_eq!(
            j["params"]["match[]"].as_array().map(Vec::len),
            Some(names.len())
        );
        assert_eq!(
            j["static_configs"][0]["labels"],
            json!({"cluster": "c1", "clusterID": "id-1"})
        );
    }

    #[test]
    fn shortening_sets_every_for_and_keeps_the_rest() {
        let (text, n) = shorten_for(FLEET_RULES, "2s").expect("rewrites");
        assert_eq!(n, 3, "the three fleet alerts");
        let before: Value = serde_saphyr::from_str(FLEET_RULES).expect("yaml");
        let after: Value = serde_json::from_str(&text).expect("json");
        let rules = |v: &Value| {
            v["groups"][0]["rules"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        for (b, a) in rules(&before).iter().zip(rules(&after).iter()) {
            assert_eq!(a["for"], "2s");
            assert_eq!(a["expr"], b["expr"]);
            assert_eq!(a["annotations"], b["annotations"]);
        }
        assert!(shorten_for("groups: 3", "1s").is_err());
    }
}
