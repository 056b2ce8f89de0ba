//! The general path from a file to objects: its text parsed as YAML or JSON documents
//! ([`parse_documents`]), lists flattened into JSON values ([`read_values`]), then decoded as
//! objects of one kind ([`read_objects`]); and [`read_typed`], which tries the fast path
//! (`fast.rs`) first and falls back on this one.

use std::collections::BTreeMap;
use std::path::Path;

use kube::Resource;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::error::SnapshotError;
use crate::file::{self, read_text};
use crate::wire::Input;
use crate::{excerpt, fast};

/// Parses a file into JSON values, flattening lists (`List`, `*List`, anything with `items`).
/// The file must be a regular file of at most [`MAX_FILE_BYTES`](crate::file::MAX_FILE_BYTES).
pub fn read_values(path: &Path) -> Result<Vec<serde_json::Value>, SnapshotError> {
    values_of(path, &read_text(path)?)
}

/// [`read_values`] on the text of `path`.
pub(crate) fn values_of(path: &Path, text: &str) -> Result<Vec<Value>, SnapshotError> {
    let docs = parse_documents(text).map_err(|message| SnapshotError::Syntax {
        path: path.to_path_buf(),
        message,
    })?;
    let mut out = Vec::new();
    for doc in docs {
        flatten(doc, &mut out);
    }
    Ok(out)
}

/// The YAML parser's limits for a text of `len` bytes: serde-saphyr's defaults (sized for
/// configuration files: 250,000 nodes, 1,000,000 events, 1,024 documents) raised in
/// proportion to the text, which cannot hold more nodes than bytes nor more events than twice
/// its bytes. Aliases and anchors keep the default limits, so a small file cannot expand into
/// a huge tree (no "billion laughs"): memory stays proportional to the file.
pub(crate) fn yaml_options(len: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = budget.max_nodes.max(len);
    budget.max_events = budget.max_events.max(len.saturating_mul(2));
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(len);
    budget.max_documents = budget.max_documents.max(len / 4);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    // No rendered snippet (the lines around the error, 64 columns each side): an error quotes
    // at most a short excerpt of the file ([`syntax_message`]).
    options.with_snippet = false;
    options
}

/// A YAML parser's error as the message of [`SnapshotError::Syntax`]: its text (quotes cut,
/// [`excerpt::message`]) and, where it has a location, a short escaped excerpt of the line
/// around it.
fn syntax_message(text: &str, err: &serde_saphyr::Error) -> String {
    let mut msg = excerpt::message(&err.to_string());
    if let Some(loc) = err.location() {
        let line = usize::try_from(loc.line()).unwrap_or(usize::MAX);
        let column = usize::try_from(loc.column()).unwrap_or(0);
        if let Some(l) = line.checked_sub(1).and_then(|i| text.lines().nth(i)) {
            let from = column.saturating_sub(1 + excerpt::EXCERPT_CHARS / 2);
            let near: String = l.chars().skip(from).collect();
            msg.push_str(&format!(" (near {})", excerpt::quoted(&near)));
        }
    }
    msg
}

/// Parses YAML or JSON text into its documents (empty and `null` documents skipped).
///
/// YAML is parsed with `serde-saphyr`, which also reads JSON; `serde_json` is tried as a
/// fallback for JSON text saphyr rejects (so that the better of the two errors is kept).
pub fn parse_documents(text: &str) -> Result<Vec<Value>, String> {
    match serde_saphyr::from_multiple_with_options::<Value>(text, yaml_options(text.len())) {
        Ok(docs) => Ok(docs.into_iter().filter(|d| !d.is_null()).collect()),
        Err(yaml_err) => {
            let yaml_msg = syntax_message(text, &yaml_err);
            let trimmed = text.trim_start();
            if trimmed.starts_with('{') || trimmed.starts_with('[') {
                serde_json::Deserializer::from_str(trimmed)
                    .into_iter::<Value>()
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|json_err| {
                        format!(
                            "as JSON: {}; as YAML: {yaml_msg}",
                            excerpt::message(&json_err.to_string())
                        )
                    })
            } else {
                Err(yaml_msg)
            }
        }
    }
}

/// Flattens lists (`kind: List`, typed `FooList`, any object with `items` and no kind, or a
/// top-level array). Items of a typed list that lack `apiVersion`/`kind` (as the API
/// returns them) inherit them from the list.
pub fn flatten(doc: Value, out: &mut Vec<Value>) {
    match doc {
        Value::Array(items) => items.into_iter().for_each(|d| flatten(d, out)),
        Value::Object(mut map) if is_list(&map) => {
            let item_kind = map
                .get("kind")
                .and_then(Value::as_str)
                .and_then(|k| k.strip_suffix("List"))
                .filter(|k| !k.is_empty())
                .map(str::to_string);
            let api_version = map.get("apiVersion").cloned();
            if let Some(Value::Array(items)) = map.remove("items") {
                for mut item in items {
                    if let (Some(kind), Value::Object(obj)) = (&item_kind, &mut item) {
                        obj.entry("kind").or_insert_with(|| json!(kind));
                        if let Some(av) = &api_version {
                            obj.entry("apiVersion").or_insert_with(|| av.clone());
                        }
                    }
                    flatten(item, out);
                }
            }
        }
        Value::Null => {}
        other => out.push(other),
    }
}

fn is_list(map: &Map<String, Value>) -> bool {
    map.get("items")
        .is_some_and(|i| i.is_array() || i.is_null())
        && map
            .get("kind")
            .and_then(Value::as_str)
            .is_none_or(|k| k.ends_with("List"))
}

/// Reads a file of objects of one kind. Objects without a `kind` are taken as that kind; any
/// other kind is an error naming the kinds found.
pub fn read_objects<T>(path: &Path) -> Result<Vec<T>, SnapshotError>
where
    T: DeserializeOwned + Resource<DynamicType = ()>,
{
    objects_of(path, read_values(path)?)
}

/// Files of at least this size are parsed as they are read when they are JSON
/// ([`read_typed`]).
pub(crate) const STREAM_MIN_BYTES: u64 = 1024 * 1024;

/// Reads a file of objects of one kind like [`read_objects`], through the fast path (the
/// parser of the file's syntax straight into the fields read, see `fast.rs`) when it can, else
/// through the general path on the same text.
pub fn read_typed<T: Input>(path: &Path) -> Result<Vec<T>, SnapshotError> {
    // A large JSON file is parsed as it is read: its text is not held next to its objects (at
    // 5,000 Nodes, 11 MiB of text next to 16 MiB of Nodes was the CLI's peak). Anything that
    // way does not read is read again below, which gives the objects or the error.
    if let Ok((file, len)) = file::open(path)
        && len >= STREAM_MIN_BYTES
        && let Some(objects) = fast::read_json::<T, _>(file)
    {
        return Ok(objects);
    }
    let text = read_text(path)?;
    match fast::read::<T>(&text) {
        Some(objects) => Ok(objects),
        None => objects_of(path, values_of(path, &text)?),
    }
}

/// [`read_objects`] on the values of `path`.
pub(crate) fn objects_of<T>(path: &Path, values: Vec<Value>) -> Result<Vec<T>, SnapshotError>
where
    T: DeserializeOwned + Resource<DynamicType = ()>,
{
    let expected = T::kind(&());
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    for v in &values {
        let kind = match v.get("kind") {
            None | Some(Value::Null) => continue,
            Some(Value::String(k)) => k.clone(),
            Some(other) => other.to_string(),
        };
        *found.entry(kind).or_default() += 1;
    }
    if found.keys().any(|k| *k != expected) {
        let found: Vec<String> = found
            .iter()
            .map(|(k, n)| format!("{n} {}", excerpt::bare(k)))
            .collect();
        return Err(SnapshotError::WrongKind {
            path: path.to_path_buf(),
            expected: expected.into_owned(),
            found: found.join(", "),
        });
    }
    values
        .into_iter()
        .enumerate()
        .map(|(index, v)| decode(path, index, v))
        .collect()
}

/// Decodes object `index` of `path`.
pub(crate) fn decode<T: DeserializeOwned>(
    path: &Path,
    index: usize,
    v: Value,
) -> Result<T, SnapshotError> {
    let text = |pointer: &str| {
        v.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    let (kind, name) = (text("/kind"), text("/metadata/name"));
    serde_json::from_value(v).map_err(|error| SnapshotError::Shape {
        path: path.to_path_buf(),
        index,
        kind: excerpt::bare(&kind),
        name: excerpt::bare(&name),
        expected: std::any::type_name::<T>(),
        error: excerpt::message(&error.to_string()),
    })
}
