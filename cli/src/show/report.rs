//! The machine-readable output (`-o json|yaml`): a stable document, described in
//! `cli/README.md`. Field contents are exactly the `.status` of our objects.
//!
//! Both formats keep the exact values and print nothing a terminal acts on: C0 and C1
//! controls and the characters that print nothing or move text ([`raw_unsafe`]) are written as
//! escapes of the same value (JSON `\u202e`, and `\udb40\udc01` for U+E0001; YAML in a
//! double-quoted scalar, `\u202E`, `\U000E0001`), since `kubectl update-status -o yaml` is read
//! on a terminal as often as piped (issues #29, #48).

use jiff::Timestamp;
use serde::Serialize;
use update_status_api::crd::{
    ControlPlaneUpdateStatusStatus, UpdateInsightStatus, WorkerPoolUpdateStatusStatus,
};

use crate::show::render::{sorted_health, sorted_progress};
use crate::show::view::View;

/// `apiVersion` of the reports.
pub const API_VERSION: &str = "update.openshift.io/v1alpha1";

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// What `oc adm upgrade status` prints.
    Text,
    /// JSON (pretty-printed).
    Json,
    /// YAML.
    Yaml,
    /// One self-contained HTML page (the web view at this instant; see `cli/README.md`).
    Html,
}

/// What can go wrong serialising a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// JSON serialisation failed.
    #[error("cannot serialise the report as JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// YAML serialisation failed.
    #[error("cannot serialise the report as YAML: {0}")]
    Yaml(#[from] serde_saphyr::SerializeError),
}

/// One cluster's update status (`kind: UpdateStatusReport`).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatusReport<'a> {
    /// Always [`API_VERSION`].
    pub api_version: &'static str,
    /// Always `UpdateStatusReport`.
    pub kind: &'static str,
    /// The instant the report was evaluated at.
    pub now: Timestamp,
    /// The ControlPlaneUpdateStatus `.status`, `null` when there is none.
    pub control_plane: Option<&'a ControlPlaneUpdateStatusStatus>,
    /// The worker pools: `master`, `worker`, then the others by name.
    pub worker_pools: Vec<WorkerPoolEntry<'a>>,
    /// Progress insights (ClusterVersion, ClusterOperators by name, nodes by pool and name),
    /// then health insights in the order the text output lists them.
    pub insights: Vec<&'a UpdateInsightStatus>,
}

/// A worker pool of a report.
#[derive(Serialize, Debug)]
pub struct WorkerPoolEntry<'a> {
    /// The pool's name.
    pub name: &'a str,
    /// The WorkerPoolUpdateStatus `.status`.
    pub status: &'a WorkerPoolUpdateStatusStatus,
}

impl<'a> UpdateStatusReport<'a> {
    /// The report of `view` at `now`.
    pub fn new(view: &'a View, now: Timestamp) -> Self {
        let pools: Vec<&(String, WorkerPoolUpdateStatusStatus)> =
            view.worker_pools.iter().collect();
        let mut insights = sorted_progress(view);
        insights.extend(sorted_health(view));
        UpdateStatusReport {
            api_version: API_VERSION,
            kind: "UpdateStatusReport",
            now,
            control_plane: view.control_plane.as_ref(),
            worker_pools: pools
                .into_iter()
                .map(|(name, status)| WorkerPoolEntry { name, status })
                .collect(),
            insights,
        }
    }
}

/// Serialises `value` in `format` (`Text` and `Html` are not serialisations: they yield JSON), with the
/// characters of [`raw_unsafe`] escaped (see the module documentation).
pub fn serialise<T: Serialize>(value: &T, format: Format) -> Result<String, ReportError> {
    match format {
        Format::Yaml => yaml(value),
        Format::Json | Format::Text | Format::Html => {
            let mut s = serde_json::to_string_pretty(value)?;
            s.push('\n');
            Ok(escape_raw(s, json_escape))
        }
    }
}

/// Characters a terminal acts on that the JSON and YAML serializers leave raw: DEL, the C1
/// controls (8-bit CSI U+009B, OSC U+009D...) and the characters that print nothing or move
/// text ([`crate::show::invisible::invisible`]: bidi overrides, isolates and marks, zero-width
/// characters, variation selectors, tag characters, U+2028/U+2029...). (serde_json escapes the C0 controls, ESC included; serde-saphyr
/// escapes every control character but leaves the others, which YAML counts as printable.)
pub fn raw_unsafe(c: char) -> bool {
    matches!(c, '\u{7f}'..='\u{9f}') || crate::show::invisible::invisible(c)
}

/// `text` with every [`raw_unsafe`] character replaced by `escaped(c)`.
fn escape_raw(text: String, escaped: impl Fn(char) -> String) -> String {
    if !text.chars().any(raw_unsafe) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw_unsafe(c) {
            out.push_str(&escaped(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// YAML of `value` where every string holding a [`raw_unsafe`] character is a double-quoted
/// scalar (serde-saphyr escapes the controls there), whose remaining raw characters (the bidi
/// ones) are then written `\uXXXX`: the same value, nothing raw.
fn yaml<T: Serialize>(value: &T) -> Result<String, ReportError> {
    let value = serde_json::to_value(value)?;
    let text = serde_saphyr::to_string(&QuotedUnsafe(&value))?;
    Ok(escape_raw(text, yaml_escape))
}

/// `c` as a JSON string escape: `\u202e`, and beyond U+FFFF its UTF-16 surrogate pair
/// (`\udb40\udc01` for U+E0001), as JSON has no longer escape.
fn json_escape(c: char) -> String {
    let mut units = [0u16; 2];
    c.encode_utf16(&mut units)
        .iter()
        .map(|u| format!("\\u{u:04x}"))
        .collect()
}

/// `c` as a YAML double-quoted escape: `\u202E`, and beyond U+FFFF `\U000E0001`.
fn yaml_escape(c: char) -> String {
    match u32::from(c) {
        n @ 0..=0xffff => format!("\\u{n:04X}"),
        n => format!("\\U{n:08X}"),
    }
}

/// A JSON value serialised with its strings that hold [`raw_unsafe`] characters double-quoted.
struct QuotedUnsafe<'a>(&'a serde_json::Value);

impl Serialize for QuotedUnsafe<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        use serde_json::Value;
        match self.0 {
            Value::String(s) if s.chars().any(raw_unsafe) => {
                serde_saphyr::DoubleQuoted(s.as_str()).serialize(serializer)
            }
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&QuotedUnsafe(item))?;
                }
                seq.end()
            }
            Value::Object(fields) => {
                let mut map = serializer.serialize_map(Some(fields.len()))?;
                for (key, item) in fields {
                    let key = Value::String(key.clone());
                    map.serialize_entry(&QuotedUnsafe(&key), &QuotedUnsafe(item))?;
                }
                map.end()
            }
            other => other.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{InsightType, ResourceRef};

    #[test]
    fn report_shape() {
        let view = View {
            control_plane: None,
            worker_pools: vec![
                ("infra".into(), WorkerPoolUpdateStatusStatus::default()),
                ("worker".into(), WorkerPoolUpdateStatusStatus::default()),
            ],
            insights: vec![UpdateInsightStatus {
                type_: InsightType::Progress,
                resource: ResourceRef {
                    kind: "Node".into(),
                    name: "n1".into(),
                    ..Default::default()
                },
                ..Default::default()
            }],
            printed_nodes_only: false,
        };
        let now: Timestamp = "2024-01-01T00:00:00Z".parse().expect("ts");
        let report = UpdateStatusReport::new(&view, now);
        let json: serde_json::Value =
            serde_json::from_str(&serialise(&report, Format::Json).expect("json")).expect("parse");
        assert_eq!(json["apiVersion"], "update.openshift.io/v1alpha1");
        assert_eq!(json["kind"], "UpdateStatusReport");
        assert_eq!(json["now"], "2024-01-01T00:00:00Z");
        assert!(json["controlPlane"].is_null());
        // The view's (list) order: oc sorts nothing.
        assert_eq!(json["workerPools"][0]["name"], "infra");
        assert_eq!(json["workerPools"][1]["name"], "worker");
        assert_eq!(json["insights"][0]["resource"]["name"], "n1");
        let yaml = serialise(&report, Format::Yaml).expect("yaml");
        assert!(yaml.contains("kind: UpdateStatusReport"), "{yaml}");
    }

    /// Issue #29: `-o yaml` kept the bidi controls raw where `-o json` escaped them. Both
    /// now print none of them (nor any C0 or C1 control) and keep the exact value.
    #[test]
    fn json_and_yaml_print_no_control_or_bidi_character_and_keep_the_value() {
        let nasty: String = [
            "plain ",
            "\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}",
            "\u{2066}\u{2067}\u{2068}\u{2069}",
            " marks \u{200e}\u{200f}\u{61c} zero-width \u{200b}\u{200d}\u{feff} seps \u{2028}\u{2029}",
            " esc \u{1b}[31m c1 \u{9b}31m \u{9d}8;;x\u{9c} del \u{7f} lf \n tab \t quote ' \" \\ end",
        ]
        .concat();
        let view = View {
            control_plane: None,
            worker_pools: vec![(nasty.clone(), WorkerPoolUpdateStatusStatus::default())],
            insights: vec![UpdateInsightStatus {
                type_: InsightType::Progress,
                resource: ResourceRef {
                    kind: "Node".into(),
                    name: nasty.clone(),
                    ..Default::default()
                },
                ..Default::default()
            }],
            printed_nodes_only: false,
        };
        let now: Timestamp = "2024-01-01T00:00:00Z".parse().expect("ts");
        let report = UpdateStatusReport::new(&view, now);
        let want = serde_json::to_value(&report).expect("value");
        let terminal = |c: char| (c.is_control() && c != '\n') || raw_unsafe(c);

        let json = serialise(&report, Format::Json).expect("json");
        assert!(!json.chars().any(terminal), "{json:?}");
        assert!(
            json.contains("\\u202e") && json.contains("\\u2028"),
            "{json}"
        );
        let back: serde_json::Value = serde_json::from_str(&json).expect("parse JSON");
        assert_eq!(back, want);

        let yaml = serialise(&report, Format::Yaml).expect("yaml");
        assert!(!yaml.chars().any(terminal), "{yaml:?}");
        assert!(
            yaml.contains("\\u202E") && yaml.contains("\\uFEFF"),
            "{yaml}"
        );
        let back: serde_json::Value = serde_saphyr::from_str(&yaml).expect("parse YAML");
        assert_eq!(back, want, "{yaml}");
        // Strings with nothing to escape keep their usual YAML style.
        assert!(yaml.contains("kind: UpdateStatusReport"), "{yaml}");
    }

    /// Issue #48: the tag characters, variation selectors, Hangul fillers, the soft hyphen,
    /// U+034F and U+17B4/U+17B5 were written raw. Beyond U+FFFF the escapes are JSON's
    /// surrogate pair (`\udb40\udc01`) and YAML's `\U000E0001`: the same value read back.
    #[test]
    fn json_and_yaml_escape_the_default_ignorable_characters_and_keep_the_value() {
        let nasty = "tag\u{e0001}\u{e0067}\u{e007f} vs\u{fe0f}\u{e0100} \u{115f}\u{1160}\u{3164}\u{ffa0} soft\u{ad} \u{34f}\u{17b4}\u{17b5} 🚀";
        let view = View {
            control_plane: None,
            worker_pools: vec![(nasty.into(), WorkerPoolUpdateStatusStatus::default())],
            insights: Vec::new(),
            printed_nodes_only: false,
        };
        let now: Timestamp = "2024-01-01T00:00:00Z".parse().expect("ts");
        let report = UpdateStatusReport::new(&view, now);
        let want = serde_json::to_value(&report).expect("value");
        let hidden = |c: char| crate::show::invisible::invisible(c);

        let json = serialise(&report, Format::Json).expect("json");
        assert!(!json.chars().any(hidden), "{json:?}");
        for escape in [
            "\\udb40\\udc01",
            "\\ufe0f",
            "\\udb40\\udd00",
            "\\u3164",
            "\\u00ad",
        ] {
            assert!(json.contains(escape), "{escape} in {json}");
        }
        let back: serde_json::Value = serde_json::from_str(&json).expect("parse JSON");
        assert_eq!(back, want);

        let yaml = serialise(&report, Format::Yaml).expect("yaml");
        assert!(!yaml.chars().any(hidden), "{yaml:?}");
        for escape in [
            "\\U000E0001",
            "\\uFE0F",
            "\\U000E0100",
            "\\u3164",
            "\\u00AD",
        ] {
            assert!(yaml.contains(escape), "{escape} in {yaml}");
        }
        let back: serde_json::Value = serde_saphyr::from_str(&yaml).expect("parse YAML");
        assert_eq!(back, want, "{yaml}");
    }
}
