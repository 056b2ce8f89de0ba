//! The dashboards, generated (`make manifests`, `crdgen`) from the panels below:
//!
//! - **"Cluster update"** for the OpenShift console (Observe → Dashboards): a ConfigMap in
//!   `openshift-config-managed` labelled `console.openshift.io/dashboard: "true"`, holding a
//!   Grafana dashboard in the row layout OpenShift's own dashboards use. The console renders
//!   only some Grafana panel types ([`CONSOLE_PANEL_TYPES`]): the generator refuses others.
//!   Written to `config/dashboards/console-dashboard.yaml` (part of `config/openshift`).
//! - **"update-status fleet"** for ACM Observability's Grafana: a ConfigMap in
//!   `open-cluster-management-observability` labelled `grafana-custom-dashboard: "true"` (ACM's
//!   convention for custom dashboards), with a `cluster` variable over ACM's `cluster` label.
//!   Written to `config/acm/observability/grafana-dashboard.yaml`.
//!
//! Every query reads only metrics the controller exports (`update_status_*`, docs/metrics.md,
//! "Metrics out"); the e2e tests evaluate each on a real Prometheus scraping the real controller during
//! a simulated update (`service_account` for the console's, `fleet_alerts` for the fleet's, on
//! the hub Prometheus) and compare the values with the objects. [`metric_names`] is how the
//! ACM add-on's per-cluster allowlist knows what the fleet needs collected.
//!
//! Imports nothing of the crate (like [`crate::acm_manifests`]).

use std::collections::BTreeSet;

use serde_json::{Value, json};

/// Grafana panel types the OpenShift console's dashboards render (openshift/console,
/// `frontend/public/components/monitoring/dashboards/`: `graph`, `singlestat` and `gauge` as a
/// single value, `table`, `grafana-piechart-panel` as a bar chart, and `row`); any other type is
/// shown as "unsupported panel".
pub const CONSOLE_PANEL_TYPES: [&str; 6] = [
    "graph",
    "singlestat",
    "gauge",
    "table",
    "grafana-piechart-panel",
    "row",
];

/// The console dashboard's ConfigMap.
pub const CONSOLE_DASHBOARD_NAME: &str = "update-status-cluster-update";
/// Where the console reads dashboards from.
pub const CONSOLE_DASHBOARD_NAMESPACE: &str = "openshift-config-managed";
/// The fleet dashboard's ConfigMap.
pub const FLEET_DASHBOARD_NAME: &str = "update-status-fleet";
/// Where ACM Observability's Grafana reads custom dashboards from.
pub const FLEET_DASHBOARD_NAMESPACE: &str = "open-cluster-management-observability";
/// ACM's hub backup label (`acm_manifests::BACKUP_LABEL`, which this layer may not import; the
/// test `acm_lifecycle.rs` checks the fleet dashboard carries the label it names).
const ACM_BACKUP_LABEL: &str = "cluster.open-cluster-management.io/backup";
/// ACM's value meaning "all clusters" for the `cluster` variable (`allValue`), what the tests
/// substitute for `$cluster`.
pub const ALL_CLUSTERS: &str = ".*";

/// How a panel shows its queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One number (the console's `singlestat`, Grafana's `stat`).
    Single,
    /// Series over time (the console's `graph`, Grafana's `timeseries`).
    Graph,
    /// One row per series of an instant query, its labels as columns (`table`).
    Table,
}

/// One panel.
#[derive(Clone, Debug)]
pub struct Panel {
    /// Its title.
    pub title: &'static str,
    /// How it is drawn.
    pub kind: Kind,
    /// PromQL, with its legend (`{{label}}`).
    pub queries: Vec<(&'static str, &'static str)>,
    /// Grafana unit: `percentunit`, `s`, `short`, `none`.
    pub unit: &'static str,
    /// A table's label columns (`Table` only), in order.
    pub columns: Vec<&'static str>,
    /// Width in twelfths of the row.
    pub span: u8,
}

fn panel(
    title: &'static str,
    kind: Kind,
    queries: &[(&'static str, &'static str)],
    unit: &'static str,
    span: u8,
) -> Panel {
    Panel {
        title,
        kind,
        queries: queries.to_vec(),
        unit,
        columns: Vec::new(),
        span,
    }
}

fn table(title: &'static str, query: &'static str, columns: &[&'static str], span: u8) -> Panel {
    Panel {
        title,
        kind: Kind::Table,
        queries: vec![(query, "")],
        unit: "none",
        columns: columns.to_vec(),
        span,
    }
}

/// The console dashboard's rows: (title, panels). `max` folds the series of several scraped
/// replicas (only one leads, all export the same cache).
pub fn console_rows() -> Vec<(&'static str, Vec<Panel>)> {
    vec![
        ("Update", update_row()),
        ("Progress", progress_row()),
        ("Health", health_row()),
        ("Estimates", estimates_row()),
    ]
}

/// The "Update" row: whether an update runs, how far the control plane is, the time left.
fn update_row() -> Vec<Panel> {
    vec![
        panel(
            "Updating",
            Kind::Single,
            &[("max(update_status_update_in_progress)", "")],
            "none",
            2,
        ),
        panel(
            "Control plane completion",
            Kind::Single,
            &[("max(update_status_control_plane_completion_ratio)", "")],
            "percentunit",
            3,
        ),
        panel(
            "Estimated time remaining (p50)",
            Kind::Single,
            &[(
                r#"max(update_status_estimated_seconds_remaining{scope="update",bound="p50"})"#,
                "",
            )],
            "s",
            3,
        ),
        table(
            "Control plane assessment",
            "max by (assessment) (update_status_control_plane_assessment) == 1",
            &["assessment"],
            4,
        ),
    ]
}

/// The "Progress" row: completion over time, the pools' nodes by assessment.
fn progress_row() -> Vec<Panel> {
    vec![
        panel(
            "Completion",
            Kind::Graph,
            &[
                (
                    "max(update_status_control_plane_completion_ratio)",
                    "control plane",
                ),
                (
                    "max by (pool) (update_status_worker_pool_completion_ratio)",
                    "pool {{pool}}",
                ),
            ],
            "percentunit",
            6,
        ),
        panel(
            "Worker pool nodes by assessment",
            Kind::Graph,
            &[(
                "max by (pool, assessment) (update_status_worker_pool_nodes) > 0",
                "{{pool}} {{assessment}}",
            )],
            "short",
            6,
        ),
    ]
}

/// The "Health" row: the health insights.
fn health_row() -> Vec<Panel> {
    vec![
        panel(
            "Health insights by impact level",
            Kind::Graph,
            &[(
                "sum by (impact_level) (max by (impact_level, impact_type, scope) (update_status_health_insights))",
                "{{impact_level}}",
            )],
            "short",
            4,
        ),
        table(
            "Health insights",
            "max by (insight, resource_kind, resource_name, impact_level, impact_type) (update_status_health_insight_info)",
            &[
                "impact_level",
                "impact_type",
                "resource_kind",
                "resource_name",
                "insight",
            ],
            8,
        ),
    ]
}

/// The "Estimates" row: the time remaining of the update.
fn estimates_row() -> Vec<Panel> {
    vec![panel(
        "Estimated time remaining of the update",
        Kind::Graph,
        &[(
            r#"max by (bound) (update_status_estimated_seconds_remaining{scope="update"})"#,
            "{{bound}}",
        )],
        "s",
        12,
    )]
}

/// The fleet dashboard's panels, in order (one row each): `$cluster` is the dashboard's
/// variable, ACM's `cluster` label.
pub fn fleet_panels() -> Vec<Panel> {
    let mut panels = fleet_counts();
    panels.extend(fleet_graphs());
    panels.push(
    table(
        "Health insights of the fleet",
        r#"max by (cluster, insight, resource_kind, resource_name, impact_level, impact_type) (update_status_health_insight_info{cluster=~"$cluster"})"#,
        &[
            "cluster",
            "impact_level",
            "impact_type",
            "resource_kind",
            "resource_name",
            "insight",
        ],
        12,
    )
    );
    panels
}

/// The fleet dashboard's single numbers: clusters updating, their worst health insights, the
/// agents failing to report.
fn fleet_counts() -> Vec<Panel> {
    vec![
        panel(
            "Clusters updating",
            Kind::Single,
            &[(
                r#"count(max by (cluster) (update_status_update_in_progress{cluster=~"$cluster"}) == 1) or vector(0)"#,
                "",
            )],
            "none",
            4,
        ),
        panel(
            "Error and Critical health insights",
            Kind::Single,
            &[(
                r#"sum(max by (cluster, impact_type, scope, impact_level) (update_status_health_insights{cluster=~"$cluster",impact_level=~"Error|Critical"})) or vector(0)"#,
                "",
            )],
            "none",
            4,
        ),
        panel(
            "Agents failing to report",
            Kind::Single,
            &[(
                r#"count(max by (cluster) (update_status_hub_sync_up{cluster=~"$cluster"}) == 0) or vector(0)"#,
                "",
            )],
            "none",
            4,
        ),
    ]
}

/// The fleet dashboard's series by cluster: completion, nodes in trouble, health insights.
fn fleet_graphs() -> Vec<Panel> {
    vec![
        panel(
            "Control plane completion by cluster",
            Kind::Graph,
            &[(
                r#"max by (cluster) (update_status_control_plane_completion_ratio{cluster=~"$cluster"})"#,
                "{{cluster}}",
            )],
            "percentunit",
            6,
        ),
        panel(
            "Worker pool completion by cluster",
            Kind::Graph,
            &[(
                r#"max by (cluster, pool) (update_status_worker_pool_completion_ratio{cluster=~"$cluster"})"#,
                "{{cluster}} {{pool}}",
            )],
            "percentunit",
            6,
        ),
        panel(
            "Degraded or unavailable nodes by cluster",
            Kind::Graph,
            &[(
                r#"sum by (cluster) (max by (cluster, pool, assessment) (update_status_worker_pool_nodes{cluster=~"$cluster",assessment=~"Degraded|Unavailable"}))"#,
                "{{cluster}}",
            )],
            "short",
            6,
        ),
        panel(
            "Error and Critical health insights by cluster",
            Kind::Graph,
            &[(
                r#"sum by (cluster) (max by (cluster, impact_type, scope, impact_level) (update_status_health_insights{cluster=~"$cluster",impact_level=~"Error|Critical"}))"#,
                "{{cluster}}",
            )],
            "short",
            6,
        ),
    ]
}

/// The `update_status_*` metric names `expr` reads.
pub fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(at) = expr[i..].find("update_status_") {
        let start = i + at;
        let word_start = start == 0 || !is_ident(bytes[start - 1]);
        let end = expr[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(expr.len(), |n| start + n);
        if word_start {
            names.insert(expr[start..end].to_string());
        }
        i = end;
    }
    names
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b':'
}

/// Every query of the console dashboard.
pub fn console_queries() -> Vec<&'static str> {
    console_rows()
        .iter()
        .flat_map(|(_, panels)| panels.iter())
        .flat_map(|p| p.queries.iter().map(|q| q.0))
        .collect()
}

/// Every query of the fleet dashboard.
pub fn fleet_queries() -> Vec<&'static str> {
    fleet_panels()
        .iter()
        .flat_map(|p| p.queries.iter().map(|q| q.0))
        .collect()
}

fn targets(p: &Panel, datasource: Option<&Value>) -> Vec<Value> {
    p.queries
        .iter()
        .zip('A'..='Z')
        .map(|((expr, legend), ref_id)| {
            let mut t = json!({
                "expr": expr,
                "legendFormat": legend,
                "refId": ref_id.to_string(),
            });
            if p.kind == Kind::Table {
                t["instant"] = json!(true);
                t["format"] = json!("table");
            }
            if let Some(ds) = datasource {
                t["datasource"] = ds.clone();
            }
            t
        })
        .collect()
}

/// A table's column styles as the console reads them (`styles`: one per label, `Time` and
/// `Value` hidden).
fn table_styles(columns: &[&str]) -> Vec<Value> {
    let mut styles: Vec<Value> = columns
        .iter()
        .map(|c| json!({"alias": title_case(c), "pattern": c, "type": "string"}))
        .collect();
    for hidden in ["Time", "Value"] {
        styles.push(json!({"alias": hidden, "pattern": hidden, "type": "hidden"}));
    }
    styles
}

fn title_case(label: &str) -> String {
    let words: Vec<String> = label
        .split('_')
        .enumerate()
        .map(|(i, w)| {
            let mut c = w.chars();
            match (i, c.next()) {
                (0, Some(f)) => f.to_uppercase().chain(c).collect(),
                _ => w.to_string(),
            }
        })
        .collect();
    words.join(" ")
}

/// The console panel of `p` (row layout).
fn console_panel(p: &Panel, id: usize) -> Value {
    let mut v = json!({
        "id": id,
        "title": p.title,
        "span": p.span,
        "datasource": "$datasource",
        "targets": targets(p, None),
    });
    match p.kind {
        Kind::Single => {
            v["type"] = json!("singlestat");
            v["format"] = json!(p.unit);
            v["valueName"] = json!("current");
            v["decimals"] = json!(if p.unit == "percentunit" { 1 } else { 0 });
        }
        Kind::Graph => {
            v["type"] = json!("graph");
            v["lines"] = json!(true);
            v["fill"] = json!(1);
            v["legend"] = json!({"show": true, "values": false});
            v["yaxes"] = json!([{"format": p.unit, "min": 0, "show": true}, {"format": "short", "show": false}]);
        }
        Kind::Table => {
            v["type"] = json!("table");
            v["transform"] = json!("table");
            v["styles"] = json!(table_styles(&p.columns));
        }
    }
    v
}

/// The console's "Cluster update" dashboard (Grafana JSON, row layout).
pub fn console_dashboard() -> Value {
    let mut id = 0;
    let rows: Vec<Value> = console_rows()
        .iter()
        .map(|(title, panels)| {
            let panels: Vec<Value> = panels
                .iter()
                .map(|p| {
                    id += 1;
                    console_panel(p, id)
                })
                .collect();
            json!({"title": title, "showTitle": true, "collapse": false, "height": "250px", "panels": panels})
        })
        .collect();
    json!({
        "title": "Cluster update",
        "uid": CONSOLE_DASHBOARD_NAME,
        "tags": ["update-status"],
        "editable": false,
        "refresh": "30s",
        "time": {"from": "now-3h", "to": "now"},
        "timezone": "UTC",
        "schemaVersion": 16,
        "templating": {"list": [{
            "name": "datasource",
            "type": "datasource",
            "query": "prometheus",
            "hide": 0,
            "current": {"text": "default", "value": "default"},
        }]},
        "rows": rows,
    })
}

fn grafana_panel(p: &Panel, id: usize, (x, y): (u8, u32)) -> Value {
    let ds = json!({"type": "prometheus", "uid": "${datasource}"});
    let height = match p.kind {
        Kind::Single => 4,
        Kind::Graph => 8,
        Kind::Table => 10,
    };
    let mut v = json!({
        "id": id,
        "title": p.title,
        "datasource": ds.clone(),
        "gridPos": {"h": height, "w": u32::from(p.span) * 2, "x": u32::from(x) * 2, "y": y},
        "targets": targets(p, Some(&ds)),
        "fieldConfig": {"defaults": {"unit": p.unit}, "overrides": []},
    });
    match p.kind {
        Kind::Single => {
            v["type"] = json!("stat");
            v["options"] = json!({"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": false}, "colorMode": "value", "graphMode": "none"});
        }
        Kind::Graph => {
            v["type"] = json!("timeseries");
            v["options"] = json!({"legend": {"displayMode": "list", "placement": "bottom", "showLegend": true}});
            v["fieldConfig"]["defaults"]["min"] = json!(0);
        }
        Kind::Table => {
            v["type"] = json!("table");
            let mut exclude = serde_json::Map::new();
            for hidden in ["Time", "Value"] {
                exclude.insert(hidden.to_string(), json!(true));
            }
            let order: serde_json::Map<String, Value> = p
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.to_string(), json!(i)))
                .collect();
            let names: serde_json::Map<String, Value> = p
                .columns
                .iter()
                .map(|c| (c.to_string(), json!(title_case(c))))
                .collect();
            v["transformations"] = json!([{"id": "organize", "options": {
                "excludeByName": exclude, "indexByName": order, "renameByName": names}}]);
        }
    }
    v
}

/// ACM Observability's fleet dashboard (Grafana JSON, grid layout).
pub fn fleet_dashboard() -> Value {
    let (mut x, mut y, mut row_height) = (0u8, 0u32, 0u32);
    let panels: Vec<Value> = fleet_panels()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if x + p.span > 12 {
                (x, y, row_height) = (0, y + row_height, 0);
            }
            let v = grafana_panel(p, i + 1, (x, y));
            row_height = row_height.max(v["gridPos"]["h"].as_u64().unwrap_or(0) as u32);
            x += p.span;
            v
        })
        .collect();
    json!({
        "title": "update-status fleet",
        "uid": FLEET_DASHBOARD_NAME,
        "tags": ["update-status", "acm"],
        "editable": true,
        "refresh": "5m",
        "time": {"from": "now-24h", "to": "now"},
        "timezone": "utc",
        "schemaVersion": 39,
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus", "hide": 0},
            {"name": "cluster", "label": "Cluster", "type": "query",
             "datasource": {"type": "prometheus", "uid": "${datasource}"},
             "query": {"query": "label_values(update_status_update_in_progress, cluster)", "refId": "clusters"},
             "definition": "label_values(update_status_update_in_progress, cluster)",
             "refresh": 2, "multi": true, "includeAll": true, "allValue": ALL_CLUSTERS,
             "current": {"text": ["All"], "value": ["$__all"]}, "sort": 1},
        ]},
        "panels": panels,
    })
}

/// Where a dashboard's ConfigMap goes, how it is marked for its reader, and its file's header.
struct Placement {
    name: &'static str,
    namespace: &'static str,
    labels: Value,
    annotations: Value,
    header: &'static str,
}

/// A ConfigMap holding `dashboard` as `<name>.json`, YAML with a generated-file header.
fn config_map(at: Placement, dashboard: &Value) -> Result<String, serde_json::Error> {
    let Placement {
        name,
        namespace,
        labels,
        annotations,
        header,
    } = at;
    let mut data = serde_json::Map::new();
    data.insert(
        format!("{name}.json"),
        json!(serde_json::to_string_pretty(dashboard)?),
    );
    let cm = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": annotations},
        "data": data,
    });
    Ok(format!("{header}{}", yaml(&cm)))
}

fn yaml(v: &Value) -> String {
    serde_saphyr::to_string(v).unwrap_or_default()
}

/// Errors generating a dashboard.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// A panel type the console does not render.
    #[error(
        "panel {title:?} of the console dashboard is a {kind:?}, which the console does not render (it renders {CONSOLE_PANEL_TYPES:?})"
    )]
    UnsupportedPanel {
        /// The panel.
        title: String,
        /// Its type.
        kind: String,
    },
    /// A query reads no `update_status_*` metric.
    #[error("query {0:?} reads no update_status_* metric")]
    NoMetric(String),
    /// JSON serialization.
    #[error("serializing a dashboard: {0}")]
    Json(#[from] serde_json::Error),
}

/// Checks what the console can render, and that every query reads our metrics.
pub fn check_console(dashboard: &Value) -> Result<(), DashboardError> {
    for row in dashboard["rows"].as_array().into_iter().flatten() {
        for p in row["panels"].as_array().into_iter().flatten() {
            let kind = p["type"].as_str().unwrap_or_default();
            if !CONSOLE_PANEL_TYPES.contains(&kind) {
                return Err(DashboardError::UnsupportedPanel {
                    title: p["title"].as_str().unwrap_or_default().to_string(),
                    kind: kind.to_string(),
                });
            }
        }
    }
    for q in console_queries().into_iter().chain(fleet_queries()) {
        if metric_names(q).is_empty() {
            return Err(DashboardError::NoMetric(q.to_string()));
        }
    }
    Ok(())
}

/// `config/dashboards/console-dashboard.yaml`.
pub fn console_config_map() -> Result<String, DashboardError> {
    let dashboard = console_dashboard();
    check_console(&dashboard)?;
    let at = Placement {
        name: CONSOLE_DASHBOARD_NAME,
        namespace: CONSOLE_DASHBOARD_NAMESPACE,
        labels: json!({"console.openshift.io/dashboard": "true", "app.kubernetes.io/name": "update-status-controller"}),
        annotations: json!({}),
        header: "# Generated by `make manifests` (controllers/src/dashboards.rs). Do not edit.\n# The OpenShift console's \"Cluster update\" dashboard (Observe -> Dashboards): the console reads\n# every ConfigMap of openshift-config-managed labelled console.openshift.io/dashboard.\n",
    };
    Ok(config_map(at, &dashboard)?)
}

/// `config/acm/observability/grafana-dashboard.yaml`.
pub fn fleet_config_map() -> Result<String, DashboardError> {
    let at = Placement {
        name: FLEET_DASHBOARD_NAME,
        namespace: FLEET_DASHBOARD_NAMESPACE,
        labels: json!({
            "grafana-custom-dashboard": "true",
            "app.kubernetes.io/name": "update-status-controller",
            ACM_BACKUP_LABEL: "",
        }),
        annotations: json!({"observability.open-cluster-management.io/dashboard-folder": "update-status"}),
        header: "# Generated by `make manifests` (controllers/src/dashboards.rs). Do not edit.\n# ACM Observability's Grafana loads every ConfigMap of open-cluster-management-observability\n# labelled grafana-custom-dashboard (into the folder the annotation names).\n",
    };
    Ok(config_map(at, &fleet_dashboard())?)
}

/// The metric names the fleet dashboard reads (for the per-cluster allowlist).
pub fn fleet_metric_names() -> BTreeSet<String> {
    fleet_queries().into_iter().flat_map(metric_names).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_are_the_whole_words() {
        let names = metric_names(
            r#"max by (pool) (update_status_worker_pool_nodes{a="update_status_x"}) / update_status_update_in_progress"#,
        );
        let want: BTreeSet<String> = [
            "update_status_update_in_progress",
            "update_status_worker_pool_nodes",
            "update_status_x",
        ]
        .map(String::from)
        .into();
        assert_eq!(names, want);
        assert!(metric_names("my_update_status_thing").is_empty());
    }

    #[test]
    fn the_console_dashboard_uses_only_panels_the_console_renders() -> Result<(), DashboardError> {
        let d = console_dashboard();
        check_console(&d)?;
        let mut bad = d.clone();
        bad["rows"][0]["panels"][0]["type"] = json!("stat");
        assert!(matches!(
            check_console(&bad),
            Err(DashboardError::UnsupportedPanel { .. })
        ));
        let text = console_config_map()?;
        assert!(
            text.contains("console.openshift.io/dashboard: 'true'")
                || text.contains("console.openshift.io/dashboard: \"true\""),
            "{text}"
        );
        Ok(())
    }

    #[test]
    fn the_fleet_dashboard_filters_every_query_by_its_cluster_variable() {
        for q in fleet_queries() {
            assert!(q.contains(r#"cluster=~"$cluster""#), "{q}");
        }
        let d = fleet_dashboard();
        let widths: Vec<u64> = d["panels"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                p["gridPos"]["x"].as_u64().unwrap_or(99) + p["gridPos"]["w"].as_u64().unwrap_or(99)
            })
            .collect();
        assert!(widths.iter().all(|w| *w <= 24), "{widths:?}");
        assert!(fleet_metric_names().contains("update_status_hub_sync_up"));
    }
}
