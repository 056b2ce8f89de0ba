//! What each dashboard panel must show, from the objects the controller wrote: the
//! ControlPlaneUpdateStatus (`Updating` condition, operator counts, assessment), the
//! WorkerPoolUpdateStatus objects (node counts), the node progress insights (assessment by
//! pool) and the health insights (names, levels). [`mismatches`] compares them with what a
//! real Prometheus returned for each panel's queries ([`crate::dashboards::evaluate`]): every
//! panel of the shipped dashboard needs an expectation here, so a new panel is checked too.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::dashboards::{Evaluated, Panel};

/// The objects of one cluster (`kubectl get controlplaneupdatestatuses,workerpoolupdatestatuses,
/// updateinsights -o json`'s items).
#[derive(Clone, Debug, Default)]
pub struct ClusterObjects {
    /// The ControlPlaneUpdateStatus' status.
    pub control_plane: Value,
    /// Each WorkerPoolUpdateStatus' status, by name.
    pub pools: BTreeMap<String, Value>,
    /// Node progress insights' (pool, assessment).
    pub nodes: Vec<(String, String)>,
    /// Health insights' (object name, impact level).
    pub health: Vec<(String, String)>,
}

impl ClusterObjects {
    /// Sorts `items` (a list of our objects).
    pub fn from_items(items: &[Value]) -> ClusterObjects {
        let mut o = ClusterObjects::default();
        for i in items {
            let status = &i["status"];
            let name = i["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            match i["kind"].as_str().unwrap_or_default() {
                "ControlPlaneUpdateStatus" => o.control_plane = status.clone(),
                "WorkerPoolUpdateStatus" => {
                    o.pools.insert(name, status.clone());
                }
                "UpdateInsight" if status["type"] == "Health" => {
                    let level = status["health"]["impact"]["level"]
                        .as_str()
                        .unwrap_or_default();
                    o.health.push((name, level.to_string()));
                }
                "UpdateInsight" if status["resource"]["kind"] == "Node" => {
                    let pool = i["metadata"]["labels"]["update.openshift.io/pool"]
                        .as_str()
                        .unwrap_or_default();
                    let a = status["progress"]["assessment"]
                        .as_str()
                        .unwrap_or_default();
                    o.nodes.push((pool.to_string(), a.to_string()));
                }
                _ => {}
            }
        }
        o
    }

    /// `Updating=True` on the control plane.
    pub fn updating(&self) -> bool {
        self.control_plane["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Updating" && c["status"] == "True")
    }

    /// Updated operators / all (1 when none).
    pub fn control_plane_ratio(&self) -> f64 {
        ratio(&self.control_plane["operators"])
    }

    fn pool_ratios(&self) -> impl Iterator<Item = (&String, f64)> {
        self.pools.iter().map(|(n, s)| (n, ratio(&s["nodes"])))
    }

    fn error_insights(&self) -> usize {
        self.health
            .iter()
            .filter(|(_, l)| l == "Error" || l == "Critical")
            .count()
    }

    fn degraded_nodes(&self) -> usize {
        self.nodes
            .iter()
            .filter(|(p, a)| p != "master" && (a == "Degraded" || a == "Unavailable"))
            .count()
    }
}

fn ratio(counts: &Value) -> f64 {
    let (done, all) = (
        counts["updated"].as_f64().unwrap_or(0.0),
        counts["total"].as_f64().unwrap_or(0.0),
    );
    if all == 0.0 { 1.0 } else { done / all }
}

/// What a panel must show.
#[derive(Clone, Debug)]
pub enum Expect {
    /// One series of this value.
    Single(f64),
    /// Series by legend: each returned series has its legend's value (0 when not listed), and
    /// each listed non-zero one is returned.
    Series(BTreeMap<String, f64>),
    /// A table: exactly these rows of these columns.
    Rows(Vec<&'static str>, BTreeSet<Vec<String>>),
    /// At least one series (an estimate: its value is the estimator's).
    Present,
    /// Anything, no series included (an estimate once nothing updates).
    Any,
}

fn series<K: Into<String>>(items: impl IntoIterator<Item = (K, f64)>) -> Expect {
    Expect::Series(items.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

fn count_by<'a>(keys: impl Iterator<Item = &'a str>) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for k in keys {
        *m.entry(k.to_string()).or_insert(0.0) += 1.0;
    }
    m
}

/// The console dashboard's panels for one cluster's objects.
pub fn console(o: &ClusterObjects) -> BTreeMap<&'static str, Expect> {
    let estimate = if o.updating() {
        Expect::Present
    } else {
        Expect::Any
    };
    let mut completion = vec![("control plane".to_string(), o.control_plane_ratio())];
    completion.extend(o.pool_ratios().map(|(n, r)| (format!("pool {n}"), r)));
    let nodes = count_by(
        o.nodes
            .iter()
            .filter(|(p, _)| p != "master")
            .map(|(p, a)| format!("{p} {a}"))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
    );
    BTreeMap::from([
        (
            "Updating",
            Expect::Single(if o.updating() { 1.0 } else { 0.0 }),
        ),
        (
            "Control plane completion",
            Expect::Single(o.control_plane_ratio()),
        ),
        ("Estimated time remaining (p50)", estimate.clone()),
        (
            "Control plane assessment",
            Expect::Rows(
                vec!["assessment"],
                [vec![
                    o.control_plane["assessment"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                ]]
                .into(),
            ),
        ),
        ("Completion", series(completion)),
        ("Worker pool nodes by assessment", Expect::Series(nodes)),
        (
            "Health insights by impact level",
            Expect::Series(count_by(o.health.iter().map(|(_, l)| l.as_str()))),
        ),
        (
            "Health insights",
            Expect::Rows(
                vec!["insight"],
                o.health.iter().map(|(n, _)| vec![n.clone()]).collect(),
            ),
        ),
        ("Estimated time remaining of the update", estimate),
    ])
}

/// The fleet dashboard's panels for the clusters' objects (by cluster name), all clusters
/// selected.
pub fn fleet(clusters: &BTreeMap<String, ClusterObjects>) -> BTreeMap<&'static str, Expect> {
    let sum = |f: &dyn Fn(&ClusterObjects) -> f64| clusters.values().map(f).sum::<f64>();
    let per = |f: &dyn Fn(&ClusterObjects) -> f64| {
        series(clusters.iter().map(|(c, o)| (c.clone(), f(o))))
    };
    let pools = series(
        clusters
            .iter()
            .flat_map(|(c, o)| o.pool_ratios().map(move |(p, r)| (format!("{c} {p}"), r))),
    );
    let rows = clusters
        .iter()
        .flat_map(|(c, o)| {
            o.health
                .iter()
                .map(move |(n, _)| vec![c.clone(), n.clone()])
        })
        .collect();
    BTreeMap::from([
        (
            "Clusters updating",
            Expect::Single(sum(&|o| f64::from(u8::from(o.updating())))),
        ),
        (
            "Error and Critical health insights",
            Expect::Single(sum(&|o| o.error_insights() as f64)),
        ),
        ("Agents failing to report", Expect::Single(0.0)),
        (
            "Control plane completion by cluster",
            per(&|o| o.control_plane_ratio()),
        ),
        ("Worker pool completion by cluster", pools),
        (
            "Degraded or unavailable nodes by cluster",
            per(&|o| o.degraded_nodes() as f64),
        ),
        (
            "Error and Critical health insights by cluster",
            per(&|o| o.error_insights() as f64),
        ),
        (
            "Health insights of the fleet",
            Expect::Rows(vec!["cluster", "insight"], rows),
        ),
    ])
}

fn value(s: &Value) -> Option<f64> {
    s["value"][1].as_str()?.parse().ok()
}

fn legend(template: &str, metric: &Value) -> String {
    let mut text = template.to_string();
    if let Some(labels) = metric.as_object() {
        for (k, v) in labels {
            text = text.replace(&format!("{{{{{k}}}}}"), v.as_str().unwrap_or_default());
        }
    }
    text
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// What differs between `want` and the evaluated panels (empty: they agree). A panel without
/// an expectation, or a query that returned nothing where something was expected, is a
/// difference.
pub fn mismatches(
    evaluated: &[(Panel, Vec<Evaluated>)],
    want: &BTreeMap<&'static str, Expect>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (panel, results) in evaluated {
        let Some(expect) = want.get(panel.title.as_str()) else {
            out.push(format!(
                "panel {:?} has no expectation in the test",
                panel.title
            ));
            continue;
        };
        let got: Vec<(String, &Value)> = results
            .iter()
            .flat_map(|r| {
                r.instant
                    .iter()
                    .map(|s| (legend(&r.legend, &s["metric"]), s))
            })
            .collect();
        let problem = match expect {
            Expect::Single(v) => match got.as_slice() {
                [(_, s)] if value(s).is_some_and(|g| close(g, *v)) => None,
                _ => Some(format!("want one series of {v}")),
            },
            Expect::Series(map) => {
                let wrong = got.iter().any(|(l, s)| {
                    !value(s).is_some_and(|g| close(g, map.get(l).copied().unwrap_or(0.0)))
                });
                let missing = map
                    .iter()
                    .any(|(l, v)| *v != 0.0 && !got.iter().any(|(g, _)| g == l));
                (wrong || missing).then(|| format!("want {map:?}"))
            }
            Expect::Rows(columns, rows) => {
                let have: BTreeSet<Vec<String>> = got
                    .iter()
                    .map(|(_, s)| {
                        columns
                            .iter()
                            .map(|c| s["metric"][*c].as_str().unwrap_or_default().to_string())
                            .collect()
                    })
                    .collect();
                (&have != rows).then(|| format!("want rows {rows:?}, got {have:?}"))
            }
            Expect::Present => got.is_empty().then(|| "want a series".to_string()),
            Expect::Any => None,
        };
        if let Some(p) = problem {
            let shown: Vec<String> = got
                .iter()
                .map(|(l, s)| format!("{l}={}", s["value"][1].as_str().unwrap_or("?")))
                .collect();
            out.push(format!(
                "panel {:?} ({}): {p}; got {shown:?}",
                panel.title,
                results
                    .iter()
                    .map(|r| r.sent.as_str())
                    .collect::<Vec<_>>()
                    .join(" ; ")
            ));
        }
    }
    for title in want.keys() {
        if !evaluated.iter().any(|(p, _)| p.title == *title) {
            out.push(format!("no panel {title:?} in the shipped dashboard"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dashboards::Kind;

    fn evaluated(title: &str, legend: &str, series: Vec<Value>) -> (Panel, Vec<Evaluated>) {
        (
            Panel {
                title: title.into(),
                kind: Kind::Graph,
                unit: "short".into(),
                queries: vec![("q".into(), legend.into())],
                columns: vec![],
            },
            vec![Evaluated {
                expr: "q".into(),
                sent: "q".into(),
                legend: legend.into(),
                instant: series,
                range: vec![],
            }],
        )
    }

    #[test]
    fn series_agree_with_zero_defaults_and_fail_on_a_wrong_value() {
        let want = BTreeMap::from([("P", series([("Error", 2.0)]))]);
        let ok = [evaluated(
            "P",
            "{{impact_level}}",
            vec![
                json!({"metric": {"impact_level": "Error"}, "value": [0, "2"]}),
                json!({"metric": {"impact_level": "Info"}, "value": [0, "0"]}),
            ],
        )];
        assert!(
            mismatches(&ok, &want).is_empty(),
            "{:?}",
            mismatches(&ok, &want)
        );
        let wrong = [evaluated(
            "P",
            "{{impact_level}}",
            vec![json!({"metric": {"impact_level": "Error"}, "value": [0, "1"]})],
        )];
        assert_eq!(mismatches(&wrong, &want).len(), 1);
        let unknown = [evaluated("Q", "", vec![])];
        assert_eq!(
            mismatches(&unknown, &want).len(),
            2,
            "no expectation, and P missing"
        );
    }
}
