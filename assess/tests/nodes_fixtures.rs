//! Node and pool assessment against every fixture of `testdata/oc-status`: the facts the
//! node tables, the worker pool table and the node/pool health insights of
//! `expected.detailed-output` show must come out of `assess_nodes`.

mod common;

use std::path::{Path, PathBuf};

use common::{fixture_dirs, inputs};
use jiff::Timestamp;
use update_status_api::crd::{Assessment, ImpactLevel, InsightType, UpdateInsightStatus};
use update_status_assess::nodes::{
    NodeContext, NodesAssessment, PoolAssessment, assess_node, assess_nodes, compare_node_insights,
    node_requeue_after,
};
use update_status_snapshot::Snapshot;

// ------------------------------------------------------------------------------------------------
// Parsing expected.detailed-output
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
struct NodeRow {
    name: String,
    assessment: String,
    phase: String,
    version: String,
    est: String,
    message: String,
}

#[derive(Debug, Clone, PartialEq)]
struct PoolRow {
    name: String,
    assessment: String,
    completion: String,
    status: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct HealthBlock {
    message: String,
    since: String,
    level: String,
    impact: String,
    reference: String,
    resources: Vec<String>,
    description: String,
}

#[derive(Debug, Default)]
struct Expected {
    not_updating: bool,
    /// (pool name, rows); the control plane table is under `master`.
    node_tables: Vec<(String, Vec<NodeRow>)>,
    cp_all_updated: Option<String>,
    pool_rows: Vec<PoolRow>,
    /// Table form: (since, level, impact, message).
    health_table: Vec<(String, String, String, String)>,
    health_detailed: Vec<HealthBlock>,
}

/// Splits a tabwriter row on runs of two or more spaces into at most `max` fields; the last
/// field is the raw rest of the line (possibly empty when the row ends with padding).
fn split_wide(line: &str, max: usize) -> Vec<String> {
    let mut fields = Vec::new();
    let mut rest = line;
    while fields.len() + 1 < max {
        match rest.find("  ") {
            Some(i) => {
                fields.push(rest[..i].to_string());
                rest = rest[i..].trim_start_matches(' ');
            }
            None => break,
        }
    }
    fields.push(rest.to_string());
    fields
}

fn cell(line: &str, from: usize, to: Option<usize>) -> String {
    let end = to.unwrap_or(line.len()).min(line.len());
    line.get(from.min(end)..end)
        .unwrap_or("")
        .trim()
        .to_string()
}

fn parse_expected(text: &str) -> Expected {
    let lines: Vec<&str> = text.lines().collect();
    let mut e = Expected {
        not_updating: text.trim() == "The cluster is not updating.",
        ..Default::default()
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let table_pool = if line == "Control Plane Nodes" {
            Some("master".to_string())
        } else {
            line.strip_prefix("Worker Pool Nodes: ").map(str::to_string)
        };
        if let Some(pool) = table_pool {
            assert!(lines[i + 1].starts_with("NAME "), "header after {line}");
            i += 2;
            let mut rows: Vec<NodeRow> = Vec::new();
            while i < lines.len() && !lines[i].is_empty() {
                let f = split_wide(lines[i], 6);
                if f.len() >= 5 {
                    rows.push(NodeRow {
                        name: f[0].clone(),
                        assessment: f[1].clone(),
                        phase: f[2].clone(),
                        version: f[3].clone(),
                        est: f[4].trim_end().to_string(),
                        message: f.get(5).cloned().unwrap_or_default(),
                    });
                } else if let Some(last) = rows.last_mut() {
                    // Raw continuation line of a multi-line message.
                    last.message.push('\n');
                    last.message.push_str(lines[i]);
                }
                i += 1;
            }
            e.node_tables.push((pool, rows));
            continue;
        }
        if let Some(v) = line.strip_prefix("All control plane nodes successfully updated to ") {
            e.cp_all_updated = Some(v.to_string());
        }
        if line.starts_with("WORKER POOL") {
            let a = line.find("ASSESSMENT").expect("ASSESSMENT column");
            let c = line.find("COMPLETION").expect("COMPLETION column");
            let s = line.find("STATUS").expect("STATUS column");
            i += 1;
            while i < lines.len() && !lines[i].is_empty() {
                let l = lines[i];
                e.pool_rows.push(PoolRow {
                    name: cell(l, 0, Some(a)),
                    assessment: cell(l, a, Some(c)),
                    completion: cell(l, c, Some(s)),
                    status: cell(l, s, None),
                });
                i += 1;
            }
            continue;
        }
        if line == "= Update Health =" {
            i += 1;
            if lines.get(i).is_some_and(|l| l.starts_with("SINCE")) {
                i += 1;
                while i < lines.len() && !lines[i].is_empty() {
                    let f = split_wide(lines[i], 4);
                    assert_eq!(f.len(), 4, "health row {:?}", lines[i]);
                    e.health_table
                        .push((f[0].clone(), f[1].clone(), f[2].clone(), f[3].clone()));
                    i += 1;
                }
            } else {
                let mut cur: Option<HealthBlock> = None;
                let mut in_resources = false;
                let mut in_description = false;
                while i < lines.len() {
                    let l = lines[i];
                    if let Some(m) = l.strip_prefix("Message: ") {
                        e.health_detailed.extend(cur.take());
                        cur = Some(HealthBlock {
                            message: m.to_string(),
                            ..Default::default()
                        });
                        in_resources = false;
                        in_description = false;
                    } else if let Some(b) = cur.as_mut() {
                        if let Some(d) = l.strip_prefix("  Description: ") {
                            b.description = d.to_string();
                            in_description = true;
                            in_resources = false;
                        } else if in_description && l.starts_with(&format!("{}, ", " ".repeat(15)))
                        {
                            b.description.push('\n');
                            b.description.push_str(&l[17..]);
                        } else if l == "  Resources:" {
                            in_resources = true;
                        } else if in_resources && l.starts_with("    ") {
                            b.resources.push(l.trim().to_string());
                        } else if let Some(rest) = l.strip_prefix("  ")
                            && let Some((label, value)) = rest.split_once(':')
                        {
                            let value = value.trim().to_string();
                            match label {
                                "Since" => b.since = value,
                                "Level" => b.level = value,
                                "Impact" => b.impact = value,
                                "Reference" => b.reference = value,
                                _ => {}
                            }
                        }
                    }
                    i += 1;
                }
                e.health_detailed.extend(cur.take());
            }
            continue;
        }
        i += 1;
    }
    e
}

// ------------------------------------------------------------------------------------------------
// Rendering our facts the way the expected output shows them
// ------------------------------------------------------------------------------------------------

fn node_rows(pool: &PoolAssessment) -> Vec<NodeRow> {
    let mut progress: Vec<&UpdateInsightStatus> = pool
        .insights
        .iter()
        .filter(|i| i.type_ == InsightType::Progress)
        .collect();
    progress.sort_by(|a, b| compare_node_insights(a, b));
    progress
        .into_iter()
        .map(|i| {
            let p = i.progress.as_ref().expect("progress");
            let name = i.resource.name.clone();
            let version = p
                .version
                .as_ref()
                .map(|v| v.current.clone())
                .unwrap_or_default();
            let message = if name.len() >= 8 {
                p.message.replace(&name, "<node>")
            } else {
                p.message.clone()
            };
            NodeRow {
                assessment: p.assessment.as_str().to_string(),
                phase: p
                    .phase
                    .map(|ph| ph.as_str().to_string())
                    .unwrap_or_default(),
                version: if version.is_empty() {
                    "?".into()
                } else {
                    version
                },
                est: p.estimate.clone(),
                message,
                name,
            }
        })
        .collect()
}

fn pool_row(pool: &PoolAssessment) -> PoolRow {
    let s = &pool.status;
    let n = &s.nodes;
    if s.assessment == Assessment::Empty {
        return PoolRow {
            name: pool.name.clone(),
            assessment: "Empty".into(),
            completion: String::new(),
            status: format!("{} Total", n.total),
        };
    }
    let mut status = format!(
        "{} Available, {} Progressing, {} Draining",
        n.available, n.progressing, n.draining
    );
    if n.excluded > 0 {
        status.push_str(&format!(", {} Excluded", n.excluded));
    }
    if n.degraded > 0 {
        status.push_str(&format!(", {} Degraded", n.degraded));
    }
    PoolRow {
        name: pool.name.clone(),
        assessment: s.assessment.as_str().to_string(),
        completion: format!("{}% ({}/{})", s.completion_percent, n.updated, n.total),
        status,
    }
}

/// Node and pool health insights in the contract's display order (level desc, startedAt desc
/// with unset last, then the group order, which is the order `assess_nodes` emits them in).
fn node_health(nodes: &NodesAssessment) -> Vec<&UpdateInsightStatus> {
    let mut all: Vec<&UpdateInsightStatus> = nodes
        .pools
        .iter()
        .flat_map(|p| p.insights.iter())
        .filter(|i| i.type_ == InsightType::Health)
        .collect();
    all.sort_by(|a, b| {
        let (ha, hb) = (a.health.as_ref(), b.health.as_ref());
        let la = ha.map(|h| h.impact.level).unwrap_or(ImpactLevel::Unknown);
        let lb = hb.map(|h| h.impact.level).unwrap_or(ImpactLevel::Unknown);
        let sa = ha.and_then(|h| h.started_at);
        let sb = hb.and_then(|h| h.started_at);
        lb.cmp(&la).then_with(|| sb.cmp(&sa))
    });
    all
}

/// Seconds of a `shortDuration` text (`1h2m3s`, `10m`, `now`).
fn parse_short_duration(s: &str) -> i64 {
    if s == "now" {
        return 0;
    }
    let mut total = 0i64;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
        } else {
            let n: i64 = num.parse().expect("number in duration");
            num.clear();
            total += n * match c {
                'h' => 3600,
                'm' => 60,
                's' => 1,
                other => panic!("unit {other} in {s}"),
            };
        }
    }
    total
}

/// oc's `Resources:` line: the insight's resource (`related` is ours, not oc's: the renderer
/// lists it apart, with `--related`).
fn resources_line(i: &UpdateInsightStatus) -> Vec<String> {
    let mut by_kind: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for r in std::iter::once(&i.resource) {
        let mut kind = format!("{}s", r.kind.to_ascii_lowercase());
        if !r.group.is_empty() {
            kind = format!("{kind}.{}", r.group);
        }
        let name = match &r.namespace {
            Some(ns) => format!("{ns}/{}", r.name),
            None => r.name.clone(),
        };
        by_kind.entry(kind).or_default().push(name);
    }
    by_kind
        .into_iter()
        .map(|(k, mut names)| {
            names.sort();
            format!("{k}: {}", names.join(", "))
        })
        .collect()
}

fn is_node_or_pool_resource(line: &str) -> bool {
    line.starts_with("nodes: ")
        || line.starts_with("machineconfigpools.machineconfiguration.openshift.io: ")
}

// ------------------------------------------------------------------------------------------------
// The tests
// ------------------------------------------------------------------------------------------------

struct Loaded {
    dir: PathBuf,
    snap: Snapshot,
    now: Timestamp,
}

fn load(dir: &Path) -> Loaded {
    let (snap, now) = common::load_case(dir);
    Loaded {
        dir: dir.to_path_buf(),
        snap,
        now,
    }
}

/// Invariants that hold for every snapshot, updating or not.
fn check_sanity(l: &Loaded, result: &NodesAssessment) {
    let name = l.dir.display();
    let ctx = NodeContext::from_inputs(&inputs(&l.snap));
    let assigned = l
        .snap
        .nodes
        .iter()
        .filter(|n| assess_node(&ctx, n, l.now).is_some())
        .count() as u32;
    let total: u32 = result.pools.iter().map(|p| p.status.nodes.total).sum();
    assert_eq!(total, assigned, "{name}: every assigned node counted once");
    assert!(result.control_plane_pool().is_some(), "{name}: master pool");
    let target = l
        .snap
        .cluster_version
        .as_ref()
        .and_then(|cv| cv.status.history.first())
        .map(|h| h.version.clone())
        .unwrap_or_default();
    for p in &result.pools {
        let n = &p.status.nodes;
        assert_eq!(n.updated + n.outdated, n.total, "{name}/{}", p.name);
        assert!(n.available <= n.total, "{name}/{}", p.name);
        assert!(n.progressing <= n.outdated, "{name}/{}", p.name);
        assert!(
            n.pending + n.excluded + n.draining <= n.outdated,
            "{name}/{}",
            p.name
        );
        assert_eq!(p.status.target_version, target, "{name}/{}", p.name);
        assert_eq!(p.status.resource.kind, "MachineConfigPool");
        assert_eq!(p.status.resource.name, p.name);
        let progress = p
            .insights
            .iter()
            .filter(|i| i.type_ == InsightType::Progress)
            .count() as u32;
        assert_eq!(
            progress, n.total,
            "{name}/{}: one progress insight per node",
            p.name
        );
        let health = p.insights.len() as u32 - progress;
        let h = &p.status.health_insights;
        assert_eq!(
            h.critical + h.error + h.warning + h.info + h.unknown,
            health,
            "{name}/{}",
            p.name
        );
        for i in &p.insights {
            assert_eq!(i.scope.pool.as_deref(), Some(p.name.as_str()));
            if let Some(h) = &i.health {
                assert!(!h.impact.summary.is_empty() && !h.impact.description.is_empty());
                assert!(!h.remediation.reference.is_empty());
            }
        }
        // Requeue hints never point to the past.
        for node in &l.snap.nodes {
            if let Some(d) = node_requeue_after(&ctx, node, l.now) {
                assert!(d.is_positive(), "{name}: requeue {d:?}");
            }
        }
    }
}

#[test]
fn every_fixture_matches_its_expected_node_and_pool_facts() {
    let mut checked_tables = 0;
    let mut checked_updating = 0;
    for dir in fixture_dirs() {
        let l = load(&dir);
        let name = dir.display().to_string();
        let result = assess_nodes(&inputs(&l.snap), l.now);
        check_sanity(&l, &result);

        let text = std::fs::read_to_string(dir.join("expected.detailed-output"))
            .expect("expected.detailed-output");
        let e = parse_expected(&text);
        if e.not_updating {
            continue;
        }
        checked_updating += 1;

        // Node tables: every row, in order.
        let master = result.control_plane_pool().expect("master pool");
        for (pool_name, rows) in &e.node_tables {
            let pool = result
                .pool(pool_name)
                .unwrap_or_else(|| panic!("{name}: no pool {pool_name}"));
            let ours = node_rows(pool);
            assert_eq!(
                ours.len(),
                rows.len(),
                "{name}/{pool_name}: node count\nours: {ours:#?}"
            );
            for (o, x) in ours.iter().zip(rows) {
                assert_eq!(o, x, "{name}/{pool_name}: row");
            }
            checked_tables += 1;
        }
        // Every non-empty pool has a table, except a completed master pool.
        for p in &result.pools {
            let has_table = e.node_tables.iter().any(|(n, _)| n == &p.name);
            let expect_table =
                p.status.nodes.total > 0 && !(p.is_master && e.cp_all_updated.is_some());
            assert_eq!(has_table, expect_table, "{name}/{}: node table", p.name);
        }
        match &e.cp_all_updated {
            Some(v) => {
                assert_eq!(master.status.completion_percent, 100, "{name}");
                assert_eq!(master.status.nodes.updated, master.status.nodes.total);
                assert_eq!(master.status.assessment, Assessment::Completed, "{name}");
                let first = node_rows(master).into_iter().next().expect("a master node");
                assert_eq!(
                    &first.version, v,
                    "{name}: version of the first sorted node"
                );
            }
            None => assert_ne!(master.status.nodes.updated, master.status.nodes.total),
        }

        // Worker pool table: every non-master pool, in order; the section is printed only
        // when some worker pool has nodes (E.2).
        let workers: Vec<&PoolAssessment> = result.pools.iter().filter(|p| !p.is_master).collect();
        let ours: Vec<PoolRow> = if workers.iter().any(|p| p.status.nodes.total > 0) {
            workers.into_iter().map(pool_row).collect()
        } else {
            Vec::new()
        };
        assert_eq!(ours, e.pool_rows, "{name}: worker pool table");

        // Node and pool health insights.
        let ours = node_health(&result);
        if e.health_detailed.is_empty() {
            let expected: Vec<_> = e
                .health_table
                .iter()
                .filter(|(_, _, _, m)| {
                    m.starts_with("Node ") || m.starts_with("Outdated nodes in a paused pool")
                })
                .collect();
            assert_eq!(ours.len(), expected.len(), "{name}: {ours:#?}");
            for (o, (since, level, impact, msg)) in ours.iter().zip(expected) {
                let h = o.health.as_ref().expect("health");
                assert_eq!(&h.impact.summary, msg, "{name}");
                assert_eq!(h.impact.level.as_str(), level, "{name}");
                assert_eq!(h.impact.type_.as_str(), impact, "{name}");
                check_since(&name, h.started_at, since, l.now);
            }
        } else {
            let expected: Vec<&HealthBlock> = e
                .health_detailed
                .iter()
                .filter(|b| b.resources.iter().any(|r| is_node_or_pool_resource(r)))
                .collect();
            assert_eq!(
                ours.len(),
                expected.len(),
                "{name}: node/pool health insights\nours: {ours:#?}\nexpected: {expected:#?}"
            );
            for (o, x) in ours.iter().zip(expected) {
                let h = o.health.as_ref().expect("health");
                assert_eq!(h.impact.summary, x.message, "{name}");
                assert_eq!(h.impact.level.as_str(), x.level, "{name}: {}", x.message);
                assert_eq!(h.impact.type_.as_str(), x.impact, "{name}: {}", x.message);
                assert_eq!(
                    h.remediation.reference, x.reference,
                    "{name}: {}",
                    x.message
                );
                assert_eq!(h.impact.description, x.description, "{name}: {}", x.message);
                assert_eq!(resources_line(o), x.resources, "{name}: {}", x.message);
                check_since(&name, h.started_at, &x.since, l.now);
            }
        }
    }
    assert!(
        checked_updating >= 6,
        "updating fixtures checked: {checked_updating}"
    );
    assert!(
        checked_tables >= 10,
        "node tables checked: {checked_tables}"
    );
}

fn check_since(name: &str, started: Option<Timestamp>, since: &str, now: Timestamp) {
    match started {
        None => assert_eq!(since, "-", "{name}: since"),
        Some(t) => {
            assert_ne!(since, "-", "{name}: since");
            let secs = now.duration_since(t).as_secs();
            assert_eq!(secs, parse_short_duration(since), "{name}: since {since}");
        }
    }
}

#[test]
fn per_node_results_compose_into_assess_nodes() {
    // The cached-per-node path (context + assess_node + aggregate_pool) gives the same result.
    for dir in fixture_dirs() {
        let l = load(&dir);
        let inputs = inputs(&l.snap);
        let ctx = NodeContext::from_inputs(&inputs);
        let assessed: Vec<_> = l
            .snap
            .nodes
            .iter()
            .filter_map(|n| assess_node(&ctx, n, l.now))
            .collect();
        let pools: Vec<PoolAssessment> = ctx
            .pools()
            .iter()
            .map(|p| update_status_assess::nodes::aggregate_pool(&ctx, p, &assessed))
            .collect();
        assert_eq!(
            NodesAssessment { pools },
            assess_nodes(&inputs, l.now),
            "{}",
            dir.display()
        );
    }
}

#[test]
fn parser_self_check() {
    // The parser must see what the tests compare (guards against silently empty comparisons).
    let text = "Control Plane Nodes\nNAME   ASSESSMENT   PHASE     VERSION   EST   MESSAGE\nnode-a   Outdated   Pending   4.1   ?     \nnode-b   Degraded   Draining   4.1   ?     failed:  two  spaces\nsecond line\n\n= Worker Upgrade =\n\nWORKER POOL   ASSESSMENT   COMPLETION   STATUS\nworker        Pending      0% (0/3)     3 Available, 0 Progressing, 0 Draining\nzbeast        Empty                     0 Total\n";
    let e = parse_expected(text);
    assert_eq!(e.node_tables.len(), 1);
    let rows = &e.node_tables[0].1;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].message, "");
    assert_eq!(rows[0].est, "?");
    assert_eq!(rows[1].message, "failed:  two  spaces\nsecond line");
    assert_eq!(e.pool_rows.len(), 2);
    assert_eq!(e.pool_rows[1].completion, "");
    assert_eq!(e.pool_rows[1].status, "0 Total");
    assert_eq!(parse_short_duration("22m44s"), 22 * 60 + 44);
    assert_eq!(parse_short_duration("1h0m17s"), 3617);
    assert_eq!(parse_short_duration("now"), 0);
}
