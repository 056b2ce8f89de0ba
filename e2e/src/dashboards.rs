//! The shipped dashboards, evaluated and drawn: their panels read from the generated ConfigMaps
//! (`config/dashboards/console-dashboard.yaml`, `config/acm/observability/grafana-dashboard.yaml`:
//! what ships, not the generator's structs), every query evaluated by a real Prometheus
//! ([`evaluate`]), and a picture of the panels drawn from those results ([`render`], then
//! [`screenshot`] in headless Chromium).
//!
//! The picture is not the console's nor Grafana's renderer (neither runs here): it is a plain
//! HTML page of our own, one card per panel with the panel's title, the value of a single-value
//! panel in its unit, a graph's series as SVG lines over the test's window with their legends,
//! and a table's rows with its columns; it shows what each query returned, nothing more.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::browser::{self, Chromium, Open};
use crate::prometheus::{Prometheus, PrometheusError};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// The ConfigMap or its dashboard cannot be read.
    #[error("{0}")]
    Shipped(String),
    /// Prometheus refused or failed a query.
    #[error("evaluating {expr:?}: {source}")]
    Query {
        /// The query.
        expr: String,
        /// The error.
        #[source]
        source: PrometheusError,
    },
    /// The browser.
    #[error("drawing the dashboard: {0}")]
    Browser(String),
}

/// How a panel shows its queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One value (`singlestat`, `gauge`, `stat`).
    Single,
    /// Series over time (`graph`, `timeseries`).
    Graph,
    /// Rows of label values (`table`).
    Table,
}

/// One panel as shipped.
#[derive(Clone, Debug)]
pub struct Panel {
    /// Its title.
    pub title: String,
    /// How it is drawn.
    pub kind: Kind,
    /// Its unit (`percentunit`, `s`, `short`, `none`).
    pub unit: String,
    /// Its queries and their legends.
    pub queries: Vec<(String, String)>,
    /// A table's label columns.
    pub columns: Vec<String>,
}

/// The panels of the dashboard held by the ConfigMap file `path`.
pub fn shipped_panels(path: &Path) -> Result<Vec<Panel>, DashboardError> {
    let bad = |m: String| DashboardError::Shipped(format!("{}: {m}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let cm: Value = serde_saphyr::from_str(&text).map_err(|e| bad(e.to_string()))?;
    config_map_panels(&cm).map_err(|e| bad(e.to_string()))
}

/// The panels of the dashboard a ConfigMap holds (the console's row layout, or Grafana's
/// `panels`).
pub fn config_map_panels(cm: &Value) -> Result<Vec<Panel>, DashboardError> {
    let name = cm["metadata"]["name"].as_str().unwrap_or_default();
    let bad = |m: String| DashboardError::Shipped(format!("ConfigMap {name}: {m}"));
    let json = cm["data"]
        .as_object()
        .and_then(|d| d.values().next())
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no dashboard in its data".into()))?;
    let dashboard: Value = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
    let raw: Vec<Value> = match dashboard["rows"].as_array() {
        Some(rows) => rows
            .iter()
            .flat_map(|r| r["panels"].as_array().cloned().unwrap_or_default())
            .collect(),
        None => dashboard["panels"].as_array().cloned().unwrap_or_default(),
    };
    raw.iter()
        .filter(|p| p["type"] != "row")
        .map(|p| panel(p).ok_or_else(|| bad(format!("panel {p} is not one this test draws"))))
        .collect()
}

fn panel(p: &Value) -> Option<Panel> {
    let kind = match p["type"].as_str()? {
        "singlestat" | "gauge" | "stat" => Kind::Single,
        "graph" | "timeseries" => Kind::Graph,
        "table" => Kind::Table,
        _ => return None,
    };
    let unit = p["format"]
        .as_str()
        .or_else(|| p["yaxes"][0]["format"].as_str())
        .or_else(|| p["fieldConfig"]["defaults"]["unit"].as_str())
        .unwrap_or("none")
        .to_string();
    let queries = p["targets"]
        .as_array()?
        .iter()
        .map(|t| {
            (
                t["expr"].as_str().unwrap_or_default().to_string(),
                t["legendFormat"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let mut columns: Vec<String> = p["styles"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["type"] == "string")
        .filter_map(|s| s["pattern"].as_str().map(str::to_string))
        .collect();
    if let Some(order) = p["transformations"][0]["options"]["indexByName"].as_object() {
        let mut by: Vec<(u64, String)> = order
            .iter()
            .map(|(k, v)| (v.as_u64().unwrap_or(0), k.clone()))
            .collect();
        by.sort();
        columns = by.into_iter().map(|(_, k)| k).collect();
    }
    Some(Panel {
        title: p["title"].as_str()?.to_string(),
        kind,
        unit,
        queries,
        columns,
    })
}

/// One query of a panel, evaluated.
#[derive(Clone, Debug)]
pub struct Evaluated {
    /// The query as shipped.
    pub expr: String,
    /// The query sent (variables substituted).
    pub sent: String,
    /// Its legend.
    pub legend: String,
    /// The instant vector now.
    pub instant: Vec<Value>,
    /// The range over the window (graphs only).
    pub range: Vec<Value>,
}

/// `expr` with each `(variable, value)` substituted (`$cluster` → `.*`).
pub fn substitute(expr: &str, vars: &[(&str, &str)]) -> String {
    vars.iter()
        .fold(expr.to_string(), |e, (k, v)| e.replace(k, v))
}

/// Every query of `panels`, evaluated by `prom` now (and over `window`, for graphs).
pub async fn evaluate(
    prom: &Prometheus,
    panels: &[Panel],
    vars: &[(&str, &str)],
    window: (f64, f64, f64),
) -> Result<Vec<(Panel, Vec<Evaluated>)>, DashboardError> {
    let mut out = Vec::new();
    for p in panels {
        let mut results = Vec::new();
        for (expr, legend) in &p.queries {
            let sent = substitute(expr, vars);
            let err = |source| DashboardError::Query {
                expr: sent.clone(),
                source,
            };
            let instant = prom.query(&sent).await.map_err(err)?;
            let range = if p.kind == Kind::Graph {
                prom.query_range(&sent, window)
                    .await
                    .map_err(|source| DashboardError::Query {
                        expr: sent.clone(),
                        source,
                    })?
            } else {
                Vec::new()
            };
            results.push(Evaluated {
                expr: expr.clone(),
                sent,
                legend: legend.clone(),
                instant,
                range,
            });
        }
        out.push((p.clone(), results));
    }
    Ok(out)
}

/// The value of a one-series instant result (`None`: no series, or several).
pub fn single_value(result: &[Value]) -> Option<f64> {
    match result {
        [one] => one["value"][1].as_str()?.parse().ok(),
        _ => None,
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn format(value: f64, unit: &str) -> String {
    match unit {
        "percentunit" => format!("{:.1}%", value * 100.0),
        "s" => {
            let s = value.max(0.0).round() as u64;
            match (s / 3600, (s % 3600) / 60, s % 60) {
                (0, 0, s) => format!("{s}s"),
                (0, m, s) => format!("{m}m {s}s"),
                (h, m, _) => format!("{h}h {m}m"),
            }
        }
        _ if value.fract() == 0.0 => format!("{value:.0}"),
        _ => format!("{value:.2}"),
    }
}

fn legend(template: &str, metric: &Value) -> String {
    let mut text = template.to_string();
    if let Some(labels) = metric.as_object() {
        for (k, v) in labels {
            text = text.replace(&format!("{{{{{k}}}}}"), v.as_str().unwrap_or_default());
        }
    }
    if text.is_empty() {
        metric.to_string()
    } else {
        text
    }
}

const COLORS: [&str; 8] = [
    "#0066cc", "#3e8635", "#f0ab00", "#c9190b", "#6753ac", "#009596", "#ec7a08", "#8a8d90",
];

fn draw_graph(results: &[Evaluated], unit: &str, (start, end): (f64, f64)) -> String {
    let series: Vec<(String, Vec<(f64, f64)>)> = results
        .iter()
        .flat_map(|r| {
            r.range.iter().map(|s| {
                let points = s["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| Some((p[0].as_f64()?, p[1].as_str()?.parse::<f64>().ok()?)))
                    .collect();
                (legend(&r.legend, &s["metric"]), points)
            })
        })
        .collect();
    let max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, v)| *v))
        .fold(1.0, f64::max);
    let (w, h) = (540.0, 150.0);
    let x = |t: f64| (t - start) / (end - start).max(1.0) * w;
    let y = |v: f64| h - v / max * h;
    let mut svg = format!(
        r##"<svg width="{w}" height="{}" viewBox="-40 -5 {} {}"><line x1="0" y1="{h}" x2="{w}" y2="{h}" stroke="#8a8d90"/><text x="-6" y="5" text-anchor="end">{}</text><text x="-6" y="{h}" text-anchor="end">0</text>"##,
        h + 10.0,
        w + 45.0,
        h + 10.0,
        escape(&format(max, unit))
    );
    let mut legends = String::new();
    for (i, (name, points)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let path: Vec<String> = points
            .iter()
            .map(|(t, v)| format!("{:.1},{:.1}", x(*t), y(*v)))
            .collect();
        svg.push_str(&format!(
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        ));
        let last = points
            .last()
            .map(|(_, v)| format(*v, unit))
            .unwrap_or_default();
        legends.push_str(&format!(
            r#"<li><span class="sw" style="background:{color}"></span>{} <b>{}</b></li>"#,
            escape(name),
            escape(&last)
        ));
    }
    svg.push_str("</svg>");
    if series.is_empty() {
        return r#"<p class="empty">No datapoints</p>"#.into();
    }
    format!(r#"{svg}<ul class="legend">{legends}</ul>"#)
}

fn draw_table(results: &[Evaluated], columns: &[String]) -> String {
    let mut rows: Vec<Vec<String>> = results
        .iter()
        .flat_map(|r| r.instant.iter())
        .map(|s| {
            columns
                .iter()
                .map(|c| s["metric"][c].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .collect();
    rows.sort();
    if rows.is_empty() {
        return r#"<p class="empty">No datapoints</p>"#.into();
    }
    let head: String = columns
        .iter()
        .map(|c| format!("<th>{}</th>", escape(c)))
        .collect();
    let body: String = rows
        .iter()
        .take(12)
        .map(|r| {
            let cells: String = r
                .iter()
                .map(|c| format!("<td>{}</td>", escape(c)))
                .collect();
            format!("<tr>{cells}</tr>")
        })
        .collect();
    let more = rows.len().saturating_sub(12);
    let note = if more > 0 {
        format!(r#"<p class="empty">and {more} more</p>"#)
    } else {
        String::new()
    };
    format!("<table><tr>{head}</tr>{body}</table>{note}")
}

/// The page: one card per panel, drawn from the evaluated results.
pub fn render(
    title: &str,
    subtitle: &str,
    panels: &[(Panel, Vec<Evaluated>)],
    window: (f64, f64),
) -> String {
    let mut cards = String::new();
    for (p, results) in panels {
        let body = match p.kind {
            Kind::Single => {
                let v = results.first().and_then(|r| single_value(&r.instant));
                let text = v.map_or_else(|| "No datapoints".to_string(), |v| format(v, &p.unit));
                format!(r#"<div class="big">{}</div>"#, escape(&text))
            }
            Kind::Graph => draw_graph(results, &p.unit, window),
            Kind::Table => draw_table(results, &p.columns),
        };
        let wide = if p.kind == Kind::Single { "" } else { " wide" };
        cards.push_str(&format!(
            r#"<section class="card{wide}"><h2>{}</h2>{body}</section>"#,
            escape(&p.title)
        ));
    }
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>{t}</title><style>
body {{ font: 13px "Red Hat Text", "Liberation Sans", Arial, sans-serif; margin: 0; background: #f0f0f0; color: #151515; }}
header {{ background: #151515; color: #fff; padding: 10px 16px; }} header h1 {{ font-size: 18px; margin: 0; }}
header p {{ margin: 2px 0 0; color: #c7c7c7; font-size: 12px; }}
main {{ display: flex; flex-wrap: wrap; gap: 10px; padding: 10px; }}
.card {{ background: #fff; border: 1px solid #d2d2d2; padding: 8px 12px; min-width: 200px; flex: 1 1 200px; }}
.card.wide {{ flex: 1 1 560px; }}
h2 {{ font-size: 13px; margin: 0 0 6px; font-weight: 600; }}
.big {{ font-size: 32px; color: #0066cc; padding: 6px 0; }}
.empty {{ color: #6a6e73; }} svg text {{ font-size: 10px; fill: #6a6e73; }}
.legend {{ list-style: none; padding: 0; margin: 4px 0 0; display: flex; flex-wrap: wrap; gap: 4px 14px; }}
.sw {{ display: inline-block; width: 10px; height: 10px; margin-right: 4px; }}
table {{ border-collapse: collapse; width: 100%; }} th, td {{ text-align: left; padding: 3px 6px; border-bottom: 1px solid #e0e0e0; font-size: 12px; }}
</style></head><body><header><h1>{t}</h1><p>{s}</p></header><main>{cards}</main>
<script>performance.mark('update-status:interactive');</script></body></html>"#,
        t = escape(title),
        s = escape(subtitle),
    )
}

/// Draws `html` in headless Chromium (viewport `width` × `height`) and writes the PNG to `out`.
pub async fn screenshot(
    html: &str,
    out: &Path,
    (width, height): (i64, i64),
) -> Result<(), DashboardError> {
    let err = |e: String| DashboardError::Browser(e);
    let dir = std::env::temp_dir().join(format!("update-status-dashboard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| err(e.to_string()))?;
    let file: PathBuf = dir.join(
        out.file_name()
            .map(|n| format!("{}.html", n.to_string_lossy()))
            .unwrap_or_else(|| "dashboard.html".into()),
    );
    std::fs::write(&file, html).map_err(|e| err(e.to_string()))?;
    let browser = Chromium::shared()
        .map_err(|e| err(e.to_string()))?
        .connect()
        .await
        .map_err(|e| err(e.to_string()))?;
    let page = browser::open(
        &browser,
        &format!("file://{}", file.display()),
        &Open {
            width,
            height,
            bypass_csp: false,
        },
    )
    .await
    .map_err(|e| err(e.to_string()))?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let png = browser::screenshot(&page)
        .await
        .map_err(|e| err(e.to_string()))?;
    let _ = page.close().await;
    std::fs::write(out, png).map_err(|e| err(format!("writing {}: {e}", out.display())))?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_in_their_unit() {
        assert_eq!(format(0.5, "percentunit"), "50.0%");
        assert_eq!(format(3725.0, "s"), "1h 2m");
        assert_eq!(format(65.0, "s"), "1m 5s");
        assert_eq!(format(3.0, "short"), "3");
        assert_eq!(
            legend(
                "{{pool}} {{assessment}}",
                &serde_json::json!({"pool": "worker", "assessment": "Degraded"})
            ),
            "worker Degraded"
        );
        assert_eq!(
            substitute(r#"x{cluster=~"$cluster"}"#, &[("$cluster", ".*")]),
            r#"x{cluster=~".*"}"#
        );
    }
}
