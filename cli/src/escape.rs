//! Safe terminal output: every string that comes from the cluster (or from a snapshot file) is
//! escaped before the text output or an error message prints it, so that an object cannot
//! drive the admin's terminal (retitle it, hide or rewrite lines, plant links) nor forge lines
//! that look like ours. `-o json` / `-o yaml` keep the exact values ([`json`] only writes what
//! serde_json leaves raw as `\uXXXX` escapes of the same value).
//!
//! The visible forms follow `kubectl` (cli-runtime's `printers.EscapeTerminal`, used by
//! `kubectl describe`, `kubectl events` and `-o custom-columns`, turns ESC into `^[` and CR into
//! `\r`) and extend it:
//!
//! | character | printed as |
//! |---|---|
//! | ESC (starts CSI and OSC sequences) | `^[` |
//! | CR, TAB, LF | `\r`, `\t`, `\n` (LF is kept where oc prints multi-line text, see below) |
//! | other C0 controls U+0000–U+001F (BEL `^G`, BS `^H`...) | caret notation `^@`…`^_` |
//! | DEL U+007F | `^?` |
//! | C1 controls U+0080–U+009F (8-bit CSI U+009B, OSC U+009D...) | `\u009b` |
//! | bidi overrides and isolates U+202A–U+202E, U+2066–U+2069 | `\u202e` |
//!
//! A line feed is kept only in the two fields oc prints over several lines in its own,
//! recognisable layout: a ClusterOperator's `Updating` message (continuation lines under the
//! MESSAGE column) and a health insight's description (continuation lines indented and starting
//! with `, `). Everywhere else it becomes `\n`, so a message cannot start a line of its own.

use std::borrow::Cow;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::fleet::{AddOnState, FleetRow, PoolSummary};
use crate::render::View;

/// Whether a line feed is printed as is or escaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Newlines {
    /// Printed as is (multi-line text oc lays out itself, error messages).
    Keep,
    /// Printed as `\n`.
    Escape,
}

/// `s` with every control character, escape sequence introducer and bidi override made
/// visible (see the module documentation); borrowed when there is nothing to escape.
pub fn text(s: &str, newlines: Newlines) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_escape(c, newlines)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !needs_escape(c, newlines) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7f}' => out.push_str("^?"),
            c if u32::from(c) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            c => out.push_str(&format!("\\u{:04x}", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char, newlines: Newlines) -> bool {
    match c {
        '\n' => newlines == Newlines::Escape,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// JSON text with the C1 controls and bidi overrides that serde_json leaves raw written as
/// `\uXXXX` escapes: the same JSON value (such characters only occur inside strings, where the
/// escape means the character), but nothing a terminal acts on. serde_json already escapes C0
/// controls (ESC is `\u001b`).
pub fn json(text: String) -> String {
    let raw = |c: char| matches!(c, '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(raw) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// A JSON path in an object (object keys only, array indexes skipped).
type Path<'a> = [&'a str];

/// Fields whose line feeds are kept (oc lays them out over several lines).
fn multi_line(path: &Path<'_>) -> bool {
    matches!(
        path,
        ["progress", "conditions", "message"] | ["health", "impact", "description"]
    )
}

/// Escapes every string of `v` in place; returns whether anything changed.
fn escape_value<'a>(v: &'a mut Value, path: &mut Vec<&'a str>) -> bool {
    match v {
        Value::String(s) => {
            let newlines = if multi_line(path) {
                Newlines::Keep
            } else {
                Newlines::Escape
            };
            match text(s, newlines) {
                Cow::Borrowed(_) => false,
                Cow::Owned(escaped) => {
                    *s = escaped;
                    true
                }
            }
        }
        Value::Array(items) => {
            // Every item is escaped: no short-circuit.
            let mut changed = false;
            for item in items.iter_mut() {
                changed |= escape_value(item, path);
            }
            changed
        }
        Value::Object(map) => {
            let mut changed = false;
            for (key, item) in map.iter_mut() {
                path.push(key.as_str());
                changed |= escape_value(item, path);
                path.pop();
            }
            changed
        }
        _ => false,
    }
}

/// Escapes the strings of `object` in place. Objects with nothing to escape are left as they
/// are (not re-decoded).
fn escape_in_place<T: Serialize + DeserializeOwned>(
    object: &mut T,
) -> Result<(), serde_json::Error> {
    let mut value = serde_json::to_value(&*object)?;
    if escape_value(&mut value, &mut Vec::new()) {
        *object = serde_json::from_value(value)?;
    }
    Ok(())
}

/// The view with every string escaped for the text output, in place: a large capture's
/// thousands of insights are not copied.
pub fn view(mut v: View) -> Result<View, serde_json::Error> {
    if let Some(cp) = v.control_plane.as_mut() {
        escape_in_place(cp)?;
    }
    for (name, pool) in &mut v.worker_pools {
        if let Cow::Owned(escaped) = text(name, Newlines::Escape) {
            *name = escaped;
        }
        escape_in_place(pool)?;
    }
    for insight in &mut v.insights {
        escape_in_place(insight)?;
    }
    Ok(v)
}

/// The fleet rows with every string escaped for the text output.
pub fn fleet(rows: &[FleetRow]) -> Vec<FleetRow> {
    let esc = |s: &str| text(s, Newlines::Escape).into_owned();
    rows.iter()
        .map(|r| FleetRow {
            cluster: esc(&r.cluster),
            namespace: esc(&r.namespace),
            from: esc(&r.from),
            to: esc(&r.to),
            worker_pools_not_completed: r
                .worker_pools_not_completed
                .iter()
                .map(|p| PoolSummary {
                    name: esc(&p.name),
                    assessment: p.assessment,
                })
                .collect(),
            add_on: r.add_on.as_ref().map(|a| AddOnState {
                available: esc(&a.available),
                reason: esc(&a.reason),
                message: esc(&a.message),
            }),
            ..r.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{
        Condition, HealthInsight, Impact, InsightType, ProgressInsight, UpdateInsightStatus,
    };

    #[test]
    fn controls_become_visible_like_kubectl() {
        let nasty = "a\x1b]0;owned\x07b\x1b[2Kc\rd\te\u{7f}f\u{9b}31mg\u{202e}h\0i";
        assert_eq!(
            text(nasty, Newlines::Escape),
            "a^[]0;owned^Gb^[[2Kc\\rd\\te^?f\\u009b31mg\\u202eh^@i"
        );
        assert_eq!(text("x\ny", Newlines::Escape), "x\\ny");
        assert_eq!(text("x\ny", Newlines::Keep), "x\ny");
        let clean = "Cluster operator etcd is degraded — ünïcode, émoji 🚀";
        assert!(matches!(text(clean, Newlines::Escape), Cow::Borrowed(_)));
    }

    #[test]
    fn the_view_keeps_line_feeds_only_where_oc_lays_them_out() {
        let insight = UpdateInsightStatus {
            type_: InsightType::Progress,
            progress: Some(ProgressInsight {
                message: "one\ntwo\x1b[8m".into(),
                conditions: vec![Condition {
                    message: "first\nsecond\x07".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            health: Some(HealthInsight {
                impact: Impact {
                    summary: "s\nforged".into(),
                    description: "d1\nd2\u{9d}".into(),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        let v = view(View {
            insights: vec![insight],
            worker_pools: vec![("w\x1b".into(), Default::default())],
            ..Default::default()
        })
        .expect("escape");
        let i = &v.insights[0];
        let p = i.progress.as_ref().expect("progress");
        assert_eq!(p.message, "one\\ntwo^[[8m");
        assert_eq!(p.conditions[0].message, "first\nsecond^G");
        let h = i.health.as_ref().expect("health");
        assert_eq!(h.impact.summary, "s\\nforged");
        assert_eq!(h.impact.description, "d1\nd2\\u009d");
        assert_eq!(v.worker_pools[0].0, "w^[");
    }

    #[test]
    fn json_keeps_its_value_and_escapes_what_serde_json_leaves_raw() {
        let value = serde_json::json!({"m": "a\u{9b}31m\u{202e}b\x1b\u{7f}é"});
        let text = json(serde_json::to_string(&value).expect("json"));
        assert!(
            !text.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{text}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).expect("still JSON");
        assert_eq!(back, value);
    }

    #[test]
    fn fleet_rows_are_escaped() {
        let row = FleetRow {
            cluster: "c\x1b]0;x\x07".into(),
            namespace: "ns".into(),
            from: "4.1\n".into(),
            to: "4.2".into(),
            assessment: update_status_api::crd::Assessment::Progressing,
            completion_percent: 5,
            worker_nodes: 1,
            worker_nodes_updated: 0,
            worker_pools_not_completed: vec![PoolSummary {
                name: "p\u{9b}".into(),
                assessment: update_status_api::crd::Assessment::Degraded,
            }],
            health: Default::default(),
            reported: true,
            add_on: Some(AddOnState {
                available: "False".into(),
                reason: "R\x1b[2J".into(),
                message: "m\r".into(),
            }),
        };
        let out = fleet(std::slice::from_ref(&row));
        assert_eq!(out[0].cluster, "c^[]0;x^G");
        let a = out[0].add_on.as_ref().expect("add-on");
        assert_eq!((a.reason.as_str(), a.message.as_str()), ("R^[[2J", "m\\r"));
        assert_eq!(out[0].from, "4.1\\n");
        assert_eq!(out[0].worker_pools_not_completed[0].name, "p\\u009b");
        assert_eq!(out[0].to, row.to);
        let table = crate::fleet::render(&out);
        assert!(
            !table.chars().any(|c| c.is_control() && c != '\n'),
            "{table}"
        );
    }

    #[test]
    fn a_clean_view_is_unchanged() {
        let view_in = View {
            insights: vec![UpdateInsightStatus {
                resource: update_status_api::crd::ResourceRef {
                    name: "etcd".into(),
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(view(view_in.clone()).expect("escape"), view_in);
    }
}
