//! Control-plane facts of every fixture in `testdata/oc-status`, checked against the
//! facts printed in `expected.output` and `expected.detailed-output` (parsed from those files,
//! nothing hard-coded per fixture).
//!
//! Durations are compared as numbers: the expected text is parsed back into nanoseconds and
//! compared with what the renderer derives from our objects.

mod common;

use std::path::Path;

use jiff::Timestamp;
use update_status_api::crd::{
    Assessment, ConditionStatus, ControlPlaneUpdateStatusStatus, InsightType, UpdateInsightStatus,
};
use update_status_assess::control_plane::{
    ControlPlaneAssessment, assess_control_plane, estimated_duration, estimated_time_to_complete,
    operator_health_display, target_version_display, update_duration,
};

const SECOND: i128 = 1_000_000_000;
const MINUTE: i128 = 60 * SECOND;
const HOUR: i128 = 60 * MINUTE;

/// Parses a shortDuration / Go duration text (`1h59m`, `1m29s`, `45s`, `now`, `-4m50s`).
fn parse_short(s: &str) -> i128 {
    let s = s.trim();
    if s == "now" {
        return 0;
    }
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let mut total = 0i128;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        assert!(digits > 0, "bad duration {s:?}");
        let n: i128 = rest[..digits].parse().expect("number");
        rest = &rest[digits..];
        let unit = match rest.chars().next() {
            Some('h') => HOUR,
            Some('m') => MINUTE,
            Some('s') => SECOND,
            other => panic!("bad unit {other:?} in {s:?}"),
        };
        rest = &rest[1..];
        total += n * unit;
    }
    if neg { -total } else { total }
}

fn ns(d: jiff::SignedDuration) -> i128 {
    d.as_nanos()
}

fn trunc(v: i128, m: i128) -> i128 {
    v - v % m
}

struct Case {
    name: String,
    now: Timestamp,
    output: String,
    detailed: String,
    cp: ControlPlaneAssessment,
}

fn load(dir: &Path) -> Case {
    let (snap, now) = common::load_case(dir);
    let cp = assess_control_plane(&common::inputs(&snap), None, now).expect("a ClusterVersion");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("expected output");
    Case {
        name: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        now,
        output: read("expected.output"),
        detailed: read("expected.detailed-output"),
        cp,
    }
}

/// Every fixture, read and assessed once for all tests.
fn cases() -> &'static [Case] {
    static CASES: std::sync::OnceLock<Vec<Case>> = std::sync::OnceLock::new();
    CASES.get_or_init(|| common::fixture_dirs().iter().map(|d| load(d)).collect())
}

/// Lines of a `= Title =` section up to the next blank line.
fn section<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

/// Lines after `= Title =` until the end of the text.
fn section_to_end<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    text.lines().skip_while(|l| *l != title).skip(1).collect()
}

fn field<'a>(lines: &[&'a str], label: &str) -> Option<&'a str> {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(label).map(str::trim_start))
}

fn updating_status(status: &ControlPlaneUpdateStatusStatus) -> ConditionStatus {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == "Updating")
        .map(|c| c.status)
        .expect("Updating condition")
}

fn health_insights(cp: &ControlPlaneAssessment) -> Vec<&UpdateInsightStatus> {
    cp.insights
        .iter()
        .filter(|i| i.type_ == InsightType::Health)
        .collect()
}

fn is_control_plane_message(m: &str) -> bool {
    m.starts_with("Cluster Version ")
        || m.starts_with("Cluster Operator ")
        || m.starts_with("Previous update to ")
}

/// Splits table rows into cells at the header's column starts (character offsets).
fn table_rows(lines: &[&str], headers: &[&str]) -> Vec<Vec<String>> {
    let header = lines.first().expect("table header");
    let starts: Vec<usize> = headers
        .iter()
        .map(|h| {
            let byte = header
                .find(h)
                .unwrap_or_else(|| panic!("{h} in {header:?}"));
            header[..byte].chars().count()
        })
        .collect();
    lines[1..]
        .iter()
        .map(|line| {
            let chars: Vec<char> = line.chars().collect();
            starts
                .iter()
                .enumerate()
                .map(|(i, &s)| {
                    let e = starts
                        .get(i + 1)
                        .copied()
                        .unwrap_or(chars.len())
                        .min(chars.len());
                    let s = s.min(chars.len());
                    chars[s..e]
                        .iter()
                        .collect::<String>()
                        .trim_end()
                        .to_string()
                })
                .collect()
        })
        .collect()
}

/// SINCE of the "Updating Cluster Operators" table: `shortDuration(now − LTT)` without
/// truncating first, so a sub-second difference hits oc's quirk (`368.975µs` is cut at the dot
/// and re-read as `368s`). Returns the value the printed text stands for.
fn operator_since(raw: i128) -> i128 {
    if raw.abs() >= SECOND || raw == 0 {
        return trunc(raw, SECOND);
    }
    let (scale, frac) = if raw.abs() >= 1_000_000 {
        (1_000_000, raw % 1_000_000)
    } else {
        (1_000, raw % 1_000)
    };
    assert!(frac != 0 && raw.abs() >= 1_000, "no fixture prints {raw}ns");
    operator_since((raw / scale) * SECOND)
}

/// What the renderer prints as SINCE for a health insight.
fn since_of(i: &UpdateInsightStatus, now: Timestamp) -> Option<i128> {
    let h = i.health.as_ref()?;
    h.started_at
        .map(|t| trunc(now.as_nanosecond() - t.as_nanosecond(), SECOND))
}

fn expected_since(text: &str) -> Option<i128> {
    if text.trim() == "-" {
        None
    } else {
        Some(parse_short(text))
    }
}

#[test]
fn control_plane_block_matches_every_fixture() {
    let mut checked_updating = 0;
    let mut checked_completed = 0;
    let mut checked_idle = 0;
    for case in cases() {
        let name = &case.name;
        let st = &case.cp.status;
        if case.output.contains("The cluster is not updating.") {
            assert_ne!(updating_status(st), ConditionStatus::True, "{name}");
            assert!(
                case.detailed.contains("The cluster is not updating."),
                "{name}"
            );
            checked_idle += 1;
            continue;
        }
        for text in [&case.output, &case.detailed] {
            let lines = section(text, "= Control Plane =");
            assert!(!lines.is_empty(), "{name}: no control plane block");
            if let Some(rest) = lines[0].strip_prefix("Update to ") {
                // Completed control plane.
                let (target, rest) = rest
                    .split_once(" successfully completed at ")
                    .expect("completed line");
                let (at, dur) = rest.split_once(" (duration: ").expect("duration");
                let dur = dur.strip_suffix(')').expect(")");
                assert_eq!(st.assessment, Assessment::Completed, "{name}");
                assert_eq!(st.versions.target, target, "{name}");
                let completed = st.completed_at.expect("completedAt");
                assert_eq!(
                    completed.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                    at,
                    "{name}"
                );
                assert_eq!(st.estimated_completed_at, None, "{name}");
                let ours = update_duration(st, case.now).map(ns);
                assert_eq!(ours, Some(parse_short(dur)), "{name}: duration");
                checked_completed += 1;
                continue;
            }
            let assessment = field(&lines, "Assessment:").expect("Assessment line");
            assert_eq!(st.assessment.as_str(), assessment, "{name}");
            let target = field(&lines, "Target Version:").expect("Target Version line");
            assert_eq!(target_version_display(&st.versions), target, "{name}");
            let names: Vec<&str> = field(&lines, "Updating:")
                .map(|u| u.split(", ").collect())
                .unwrap_or_default();
            assert_eq!(st.operators.updating_names, names, "{name}: Updating");
            assert_eq!(st.operators.updating as usize, names.len(), "{name}");

            // Completion: 97% (32 operators updated, 1 updating, 0 waiting)
            let completion = field(&lines, "Completion:").expect("Completion line");
            let (pct, rest) = completion.split_once("% (").expect("percent");
            let parts: Vec<u32> = rest
                .trim_end_matches(')')
                .split(", ")
                .map(|p| {
                    p.split(' ')
                        .next()
                        .and_then(|n| n.parse().ok())
                        .expect("count")
                })
                .collect();
            assert_eq!(
                st.completion_percent,
                pct.parse::<u32>().expect("pct"),
                "{name}"
            );
            assert_eq!(
                parts,
                vec![
                    st.operators.updated,
                    st.operators.updating,
                    st.operators.waiting
                ],
                "{name}: Completion counts"
            );

            // Duration: 1h59m (Est. Time Remaining: N/A; estimate duration was 1h24m)
            let duration = field(&lines, "Duration:").expect("Duration line");
            let (dur, suffix) = match duration.split_once(" (Est. Time Remaining: ") {
                Some((d, s)) => (d, Some(s.strip_suffix(')').expect(")"))),
                None => (duration, None),
            };
            assert_eq!(
                update_duration(st, case.now).map(ns),
                Some(parse_short(dur)),
                "{name}: duration"
            );
            let est = estimated_time_to_complete(st, case.now)
                .map(ns)
                .unwrap_or(0);
            match suffix {
                None => assert_eq!(est, 0, "{name}: no estimate expected"),
                Some("N/A for Multi-Architecture Migration") => {
                    assert!(st.versions.multi_arch_migration && est != 0, "{name}")
                }
                Some(s) if s.starts_with("N/A; estimate duration was ") => {
                    assert!(est < -10 * MINUTE, "{name}: est {est}");
                    let want = parse_short(&s["N/A; estimate duration was ".len()..]);
                    assert_eq!(estimated_duration(st).map(ns), Some(want), "{name}");
                }
                Some("<10m") => {
                    assert!(
                        est != 0 && (-10 * MINUTE..10 * MINUTE).contains(&est),
                        "{name}"
                    )
                }
                Some(s) => {
                    assert!(est >= 10 * MINUTE, "{name}: est {est}");
                    assert_eq!(est, parse_short(s), "{name}: estimate");
                }
            }

            let health = field(&lines, "Operator Health:").expect("Operator Health line");
            assert_eq!(operator_health_display(&st.operators), health, "{name}");
            let healthy: u32 = health
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .expect("healthy count");
            assert_eq!(st.operators.healthy, healthy, "{name}");
            checked_updating += 1;
        }
    }
    assert!(checked_idle >= 2 && checked_completed >= 2 && checked_updating >= 10);
}

#[test]
fn updating_cluster_operators_table_matches() {
    let mut rows_checked = 0;
    for case in cases() {
        let lines = section(&case.detailed, "Updating Cluster Operators");
        if lines.is_empty() {
            assert!(
                case.cp.status.operators.updating_names.is_empty()
                    || case.cp.status.assessment == Assessment::Completed
                    || case.output.contains("The cluster is not updating."),
                "{}: updating operators but no table",
                case.name
            );
            continue;
        }
        let rows = table_rows(&lines, &["NAME", "SINCE", "REASON", "MESSAGE"]);
        let mut names = Vec::new();
        let mut i = 0;
        while i < rows.len() {
            let row = &rows[i];
            let name = row[0].as_str();
            names.push(name.to_string());
            let insight = case
                .cp
                .insights
                .iter()
                .find(|x| {
                    x.type_ == InsightType::Progress
                        && x.resource.kind == "ClusterOperator"
                        && x.resource.name == name
                })
                .unwrap_or_else(|| panic!("{}: no progress insight for {name}", case.name));
            let p = insight.progress.as_ref().expect("progress");
            assert_eq!(p.assessment, Assessment::Updating, "{}", case.name);
            let cond = p
                .conditions
                .iter()
                .find(|c| c.type_ == "Updating")
                .expect("Updating condition");
            assert_eq!(cond.status, ConditionStatus::True);
            let ltt = cond.last_transition_time.expect("LTT");
            assert_eq!(
                operator_since(case.now.as_nanosecond() - ltt.as_nanosecond()),
                parse_short(&row[1]),
                "{}: SINCE of {name}",
                case.name
            );
            let reason = if cond.reason.is_empty() {
                "-".to_string()
            } else if cond.reason.chars().count() > 20 {
                cond.reason.chars().take(17).collect::<String>() + "..."
            } else {
                cond.reason.clone()
            };
            assert_eq!(reason, row[2], "{}: REASON of {name}", case.name);
            let mut msg_lines = cond.message.lines();
            assert_eq!(msg_lines.next().unwrap_or(""), row[3], "{}", case.name);
            i += 1;
            // Continuation rows carry the further message lines.
            for extra in msg_lines {
                let cont = rows.get(i).expect("continuation row");
                assert!(cont[0].is_empty() && cont[1].is_empty() && cont[2].is_empty());
                assert_eq!(cont[3], extra, "{}", case.name);
                i += 1;
            }
        }
        assert_eq!(
            names, case.cp.status.operators.updating_names,
            "{}",
            case.name
        );
        rows_checked += names.len();
    }
    assert!(rows_checked >= 5, "{rows_checked}");
}

#[test]
fn control_plane_health_insights_match_the_health_table() {
    let mut compared = 0;
    for case in cases() {
        if case.output.contains("The cluster is not updating.") {
            continue;
        }
        let lines = section(&case.output, "= Update Health =");
        let rows = table_rows(&lines, &["SINCE", "LEVEL", "IMPACT", "MESSAGE"]);
        let mut expected: Vec<(Option<i128>, String, String, String)> = rows
            .into_iter()
            .filter(|r| is_control_plane_message(&r[3]))
            .map(|r| {
                (
                    expected_since(&r[0]),
                    r[1].clone(),
                    r[2].clone(),
                    r[3].clone(),
                )
            })
            .collect();
        let mut ours: Vec<(Option<i128>, String, String, String)> = health_insights(&case.cp)
            .into_iter()
            .map(|i| {
                let h = i.health.as_ref().expect("health");
                (
                    since_of(i, case.now),
                    h.impact.level.as_str().to_string(),
                    h.impact.type_.as_str().to_string(),
                    h.impact.summary.clone(),
                )
            })
            .collect();
        expected.sort();
        ours.sort();
        assert_eq!(ours, expected, "{}", case.name);
        // The counts and the Healthy condition follow the insights.
        let st = &case.cp.status;
        let errors = ours
            .iter()
            .filter(|o| o.1 == "Error" || o.1 == "Critical")
            .count();
        assert_eq!(
            (st.health_insights.error + st.health_insights.critical) as usize,
            errors
        );
        assert_eq!(
            (st.health_insights.warning) as usize,
            ours.iter().filter(|o| o.1 == "Warning").count()
        );
        let healthy = st
            .conditions
            .iter()
            .find(|c| c.type_ == "Healthy")
            .expect("Healthy");
        assert_eq!(
            healthy.status == ConditionStatus::False,
            errors > 0,
            "{}",
            case.name
        );
        compared += ours.len();
    }
    assert!(compared >= 8, "{compared}");
}

#[test]
fn control_plane_health_insights_match_the_detailed_view() {
    let mut compared = 0;
    for case in cases() {
        let lines = section_to_end(&case.detailed, "= Update Health =");
        if lines.is_empty() || !lines[0].starts_with("Message: ") {
            continue;
        }
        let text = lines.join("\n");
        let mut seen = 0;
        for block in text.split("\n\n") {
            let mut block_lines = block.lines();
            let summary = block_lines
                .next()
                .and_then(|l| l.strip_prefix("Message: "))
                .expect("Message line");
            if !is_control_plane_message(summary) {
                continue;
            }
            let rest: Vec<&str> = block_lines.collect();
            let get = |label: &str| field(&rest, label).unwrap_or_else(|| panic!("{label}"));
            let desc_start = rest
                .iter()
                .position(|l| l.starts_with("  Description: "))
                .expect("Description");
            let mut description = rest[desc_start]["  Description: ".len()..].to_string();
            for cont in &rest[desc_start + 1..] {
                description.push('\n');
                description.push_str(
                    cont.strip_prefix("               , ")
                        .expect("continuation"),
                );
            }
            let resources: Vec<String> = rest
                .iter()
                .skip_while(|l| **l != "  Resources:")
                .skip(1)
                .take_while(|l| l.starts_with("    "))
                .map(|l| l.trim().to_string())
                .collect();
            let ours = health_insights(&case.cp)
                .into_iter()
                .find(|i| {
                    i.health
                        .as_ref()
                        .is_some_and(|h| h.impact.summary == summary)
                })
                .unwrap_or_else(|| panic!("{}: no insight {summary:?}", case.name));
            let h = ours.health.as_ref().expect("health");
            assert_eq!(
                since_of(ours, case.now),
                expected_since(get("  Since:")),
                "{}",
                case.name
            );
            assert_eq!(h.impact.level.as_str(), get("  Level:"));
            assert_eq!(h.impact.type_.as_str(), get("  Impact:"));
            assert_eq!(
                h.remediation.reference,
                get("  Reference:"),
                "{}",
                case.name
            );
            assert_eq!(
                h.impact.description, description,
                "{}: {summary}",
                case.name
            );
            let r = &ours.resource;
            let kind = format!("{}s.{}", r.kind.to_lowercase(), r.group);
            assert_eq!(
                resources,
                vec![format!("{kind}: {}", r.name)],
                "{}",
                case.name
            );
            assert!(h.related.is_empty());
            seen += 1;
        }
        assert_eq!(seen, health_insights(&case.cp).len(), "{}", case.name);
        compared += seen;
    }
    assert!(compared >= 8, "{compared}");
}

#[test]
fn progress_insights_cover_the_cluster_version_and_platform_operators() {
    for case in cases() {
        let st = &case.cp.status;
        let progress: Vec<_> = case
            .cp
            .insights
            .iter()
            .filter(|i| i.type_ == InsightType::Progress)
            .collect();
        let cv = progress[0];
        assert_eq!(cv.resource.kind, "ClusterVersion");
        assert_eq!(cv.resource.group, "config.openshift.io");
        let p = cv.progress.as_ref().expect("progress");
        assert_eq!(p.assessment, st.assessment);
        assert_eq!(p.message, target_version_display(&st.versions));
        assert_eq!(p.since, st.started_at);
        let operators = &progress[1..];
        assert_eq!(operators.len() as u32, st.operators.total, "{}", case.name);
        let count = |a: Assessment| {
            operators
                .iter()
                .filter(|o| o.progress.as_ref().is_some_and(|p| p.assessment == a))
                .count() as u32
        };
        assert_eq!(count(Assessment::Updated), st.operators.updated);
        assert_eq!(count(Assessment::Updating), st.operators.updating);
        assert_eq!(count(Assessment::Waiting), st.operators.waiting);
    }
}
