//! The compatibility rule between our CRDs and older agents (issue #47 item 4, docs/acm.md "Add-on
//! upgrades"): within `v1alpha1` a CRD only gains optional fields. Against the previous release's
//! CRDs (`testdata/previous-release/crd`, see testdata/PROVENANCE.md), every served version must
//! still be served, every field must still exist with the same type, and no field may become
//! required (an older agent does not write it: the hub would reject its copies). Removing or
//! renaming a field needs a new version and a conversion; then refresh the vendored copy.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn list(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// What `current` breaks of `previous` (both OpenAPI v3 schemas), at `path`.
fn breaks(path: &str, previous: &Value, current: &Value, out: &mut Vec<String>) {
    let ty = |v: &Value| v.get("type").cloned();
    if ty(previous) != ty(current) {
        out.push(format!(
            "{path}: type {:?} became {:?}",
            ty(previous),
            ty(current)
        ));
    }
    let required = list(previous, "required");
    for r in list(current, "required") {
        if !required.contains(&r) {
            out.push(format!("{path}.{r}: became required"));
        }
    }
    if let Some(props) = previous.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            match current.get("properties").and_then(|c| c.get(name)) {
                Some(c) => breaks(&format!("{path}.{name}"), p, c, out),
                None => out.push(format!("{path}.{name}: removed")),
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let (Some(p), Some(c)) = (previous.get(key), current.get(key))
            && p.is_object()
        {
            breaks(&format!("{path}[{key}]"), p, c, out);
        }
    }
}

/// What the CRD `current` breaks of `previous`, by served version.
fn crd_breaks(previous: &Value, current: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let versions = |crd: &Value| {
        crd.pointer("/spec/versions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let current_versions = versions(current);
    for p in versions(previous) {
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let Some(c) = current_versions
            .iter()
            .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
        else {
            out.push(format!("version {name}: removed"));
            continue;
        };
        if c.get("served") != Some(&Value::Bool(true)) {
            out.push(format!("version {name}: no longer served"));
        }
        let schema = |v: &Value| v.pointer("/schema/openAPIV3Schema").cloned();
        match (schema(&p), schema(c)) {
            (Some(ps), Some(cs)) => breaks(name, &ps, &cs, &mut out),
            _ => out.push(format!("version {name}: no schema")),
        }
    }
    out
}

#[test]
fn the_crds_keep_every_field_of_the_previous_release() {
    let previous_dir = root().join("testdata/previous-release/crd");
    let mut checked = 0;
    let mut all = Vec::new();
    for entry in std::fs::read_dir(&previous_dir).expect("testdata/previous-release/crd") {
        let path = entry.expect("entry").path();
        let file = path.file_name().expect("a file name");
        let current = root().join("config/crd").join(file);
        let found = crd_breaks(&read(&path), &read(&current));
        all.extend(
            found
                .into_iter()
                .map(|b| format!("{}: {b}", file.to_string_lossy())),
        );
        checked += 1;
    }
    assert_eq!(checked, 3, "the previous release's three CRDs");
    assert!(
        all.is_empty(),
        "the CRDs break older agents:\n{}",
        all.join("\n")
    );
}

#[test]
fn the_check_sees_a_removed_field_a_new_required_one_and_a_changed_type() {
    let previous =
        read(&root().join(
            "testdata/previous-release/crd/workerpoolupdatestatuses.update.openshift.io.yaml",
        ));
    let mut current = previous.clone();
    let status = current
        .pointer_mut("/spec/versions/0/schema/openAPIV3Schema/properties/status")
        .expect("status schema");
    status["properties"]
        .as_object_mut()
        .expect("properties")
        .remove("paused");
    status["properties"]["targetVersion"]["type"] = Value::from("integer");
    status["required"]
        .as_array_mut()
        .expect("required")
        .push(Value::from("conditions"));
    let mut found = crd_breaks(&previous, &current);
    found.sort();
    assert_eq!(
        found,
        [
            "v1alpha1.status.conditions: became required",
            "v1alpha1.status.paused: removed",
            "v1alpha1.status.targetVersion: type Some(String(\"string\")) became Some(String(\"integer\"))",
        ]
    );
    assert!(crd_breaks(&previous, &previous).is_empty());
}
