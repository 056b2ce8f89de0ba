//! Reading a captured cluster: a folder in the `testdata/oc-status` layout, or a
//! must-gather's cluster-scoped resources. Used by the CLI's offline mode and the fixture tests.
//!
//! Files may be YAML or JSON whatever their extension, hold a single object, a `kind: List`,
//! a typed list (`ClusterOperatorList`) or several YAML documents, possibly starting with `---`.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::input::{
    AlertsResponse, ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool, Node,
};

/// What can go wrong reading a snapshot. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is neither valid YAML nor JSON.
    #[error("{path} is not valid YAML or JSON: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// An object in the file does not have the expected shape.
    #[error("{path}: object #{index} ({kind} {name}) is not a valid {expected}: {source}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// Position of the object in the file (after flattening lists), from 0.
        index: usize,
        /// Its `kind`.
        kind: String,
        /// Its `metadata.name`.
        name: String,
        /// The Rust type expected.
        expected: &'static str,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// A required file is missing.
    #[error("{path} is missing: a snapshot needs {what}")]
    Missing {
        /// The file.
        path: PathBuf,
        /// What it should hold.
        what: &'static str,
    },
    /// The `now` file is not an RFC 3339 timestamp.
    #[error("{path}: {value:?} is not an RFC 3339 timestamp")]
    BadNow {
        /// The file.
        path: PathBuf,
        /// Its content.
        value: String,
    },
}

/// A captured cluster's inputs.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// The ClusterVersion (`None` when the file holds none).
    pub cluster_version: Option<ClusterVersion>,
    /// All ClusterOperators, in file order.
    pub cluster_operators: Vec<ClusterOperator>,
    /// All MachineConfigPools, in file order.
    pub machine_config_pools: Vec<MachineConfigPool>,
    /// MachineConfigs (metadata only).
    pub machine_configs: Vec<MachineConfig>,
    /// All Nodes, in file order.
    pub nodes: Vec<Node>,
    /// Prometheus alerts at capture time, if captured.
    pub alerts: Option<AlertsResponse>,
    /// The machine-config-operator container image from the captured Deployment, if captured.
    pub mco_image: Option<String>,
    /// The instant the expected outputs were computed at (the `now` file), if present.
    pub now: Option<Timestamp>,
}

impl Snapshot {
    /// Reads a snapshot folder. `clusterversion.yaml` is required; every other input file is
    /// optional (a missing one reads as empty).
    ///
    /// A must-gather is read too: when `dir` has no `clusterversion.yaml` but holds (itself, or
    /// up to two levels below) a `cluster-scoped-resources` folder, the objects are read from
    /// its `config.openshift.io/{clusterversions,clusteroperators}`,
    /// `machineconfiguration.openshift.io/{machineconfigpools,machineconfigs}` and
    /// `core/nodes` folders (one file per object, or lists).
    pub fn from_dir(dir: &Path) -> Result<Self, SnapshotError> {
        let cv_path = dir.join("clusterversion.yaml");
        if !cv_path.exists()
            && let Some(root) = find_must_gather(dir)
        {
            return Self::from_must_gather(&root);
        }
        if !cv_path.exists() {
            return Err(SnapshotError::Missing {
                path: cv_path,
                what: "the ClusterVersion",
            });
        }
        let optional = |name: &str| {
            let p = dir.join(name);
            p.exists().then_some(p)
        };
        let mut snap = Snapshot {
            cluster_version: read_objects::<ClusterVersion>(&cv_path)?.into_iter().next(),
            ..Default::default()
        };
        if let Some(p) = optional("clusteroperators.yaml") {
            snap.cluster_operators = read_objects(&p)?;
        }
        if let Some(p) = optional("machineconfigpools.yaml") {
            snap.machine_config_pools = read_objects(&p)?;
        }
        if let Some(p) = optional("machineconfigs.yaml") {
            snap.machine_configs = read_objects(&p)?;
        }
        if let Some(p) = optional("nodes.yaml") {
            snap.nodes = read_objects(&p)?;
        }
        if let Some(p) = optional("alerts.json") {
            snap.alerts = read_objects::<AlertsResponse>(&p)?.into_iter().next();
        }
        if let Some(p) = optional("mco-deployment.yaml") {
            snap.mco_image = read_values(&p)?.first().and_then(mco_container_image);
        }
        if let Some(p) = optional("now") {
            let raw = std::fs::read_to_string(&p).map_err(|source| SnapshotError::Read {
                path: p.clone(),
                source,
            })?;
            let value = raw.trim().to_string();
            snap.now = Some(
                value
                    .parse::<Timestamp>()
                    .map_err(|_| SnapshotError::BadNow { path: p, value })?,
            );
        }
        Ok(snap)
    }

    /// Reads a must-gather's `cluster-scoped-resources` folder.
    fn from_must_gather(root: &Path) -> Result<Self, SnapshotError> {
        let cv_dir = root.join("config.openshift.io/clusterversions");
        let cluster_version = read_folder::<ClusterVersion>(&cv_dir)?.into_iter().next();
        if cluster_version.is_none() {
            return Err(SnapshotError::Missing {
                path: cv_dir,
                what: "the ClusterVersion",
            });
        }
        let mut cluster_operators: Vec<ClusterOperator> =
            read_folder(&root.join("config.openshift.io/clusteroperators"))?;
        cluster_operators.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(Snapshot {
            cluster_version,
            cluster_operators,
            machine_config_pools: read_folder(
                &root.join("machineconfiguration.openshift.io/machineconfigpools"),
            )?,
            machine_configs: read_folder(
                &root.join("machineconfiguration.openshift.io/machineconfigs"),
            )?,
            nodes: read_folder(&root.join("core/nodes"))?,
            ..Default::default()
        })
    }

    /// The snapshot's rule for "now" when none is given: the latest `lastTransitionTime` over
    /// all ClusterVersion conditions and all ClusterOperator conditions, plus 368,975 ns
    /// (what `oc adm upgrade status` does in its mock mode).
    pub fn derived_now(&self) -> Option<Timestamp> {
        let cv = self
            .cluster_version
            .iter()
            .flat_map(|cv| cv.status.conditions.iter());
        let co = self
            .cluster_operators
            .iter()
            .flat_map(|co| co.status.conditions.iter());
        cv.chain(co)
            .filter_map(|c| c.last_transition_time)
            .max()
            .and_then(|t| {
                t.checked_add(jiff::SignedDuration::from_nanos(368_975))
                    .ok()
            })
    }
}

/// The `cluster-scoped-resources` folder of a must-gather at `dir` or up to two levels below.
fn find_must_gather(dir: &Path) -> Option<PathBuf> {
    let mut level = vec![dir.to_path_buf()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for d in &level {
            let candidate = d.join("cluster-scoped-resources");
            if candidate.is_dir() {
                return Some(candidate);
            }
            if let Ok(entries) = std::fs::read_dir(d) {
                let mut subdirs: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect();
                subdirs.sort();
                next.extend(subdirs);
            }
        }
        level = next;
    }
    None
}

/// Reads every `*.yaml`/`*.json` file of a folder (missing folder: nothing), in name order.
fn read_folder<T: DeserializeOwned>(dir: &Path) -> Result<Vec<T>, SnapshotError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        out.extend(read_objects::<T>(&f)?);
    }
    Ok(out)
}

/// The image of the `machine-config-operator` container of a Deployment object.
fn mco_container_image(deploy: &serde_json::Value) -> Option<String> {
    deploy
        .pointer("/spec/template/spec/containers")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(|n| n.as_str()) == Some("machine-config-operator"))?
        .get("image")?
        .as_str()
        .map(str::to_string)
}

/// Parses a file into JSON values, flattening lists (`List`, `*List`, anything with `items`).
pub fn read_values(path: &Path) -> Result<Vec<serde_json::Value>, SnapshotError> {
    let text = std::fs::read_to_string(path).map_err(|source| SnapshotError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let docs = parse_documents(&text).map_err(|message| SnapshotError::Syntax {
        path: path.to_path_buf(),
        message,
    })?;
    let mut out = Vec::new();
    for doc in docs {
        flatten(doc, &mut out);
    }
    Ok(out)
}

/// Parses YAML or JSON text into its documents (empty and `null` documents skipped).
///
/// YAML is parsed with `serde-saphyr`, which also reads JSON; `serde_json` is tried as a
/// fallback for JSON text saphyr rejects (so that the better of the two errors is kept).
pub fn parse_documents(text: &str) -> Result<Vec<Value>, String> {
    match serde_saphyr::from_multiple::<Value>(text) {
        Ok(docs) => Ok(docs.into_iter().filter(|d| !d.is_null()).collect()),
        Err(yaml_err) => {
            let trimmed = text.trim_start();
            if trimmed.starts_with('{') || trimmed.starts_with('[') {
                serde_json::Deserializer::from_str(trimmed)
                    .into_iter::<Value>()
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|json_err| format!("as JSON: {json_err}; as YAML: {yaml_err}"))
            } else {
                Err(yaml_err.to_string())
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

/// Reads a file of objects of one type.
pub fn read_objects<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, SnapshotError> {
    read_values(path)?
        .into_iter()
        .enumerate()
        .map(|(index, v)| {
            let kind = v
                .get("kind")
                .and_then(|k| k.as_str())
                .unwrap_or("?")
                .to_string();
            let name = v
                .pointer("/metadata/name")
                .and_then(|k| k.as_str())
                .unwrap_or("?")
                .to_string();
            serde_json::from_value(v).map_err(|source| SnapshotError::Shape {
                path: path.to_path_buf(),
                index,
                kind,
                name,
                expected: std::any::type_name::<T>(),
                source,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixtures() -> PathBuf {
        update_status_testdata::oc_status_dir()
    }

    #[test]
    fn every_fixture_reads_and_its_now_matches_the_derived_rule() {
        let mut seen = 0;
        for entry in std::fs::read_dir(fixtures()).expect("fixtures dir") {
            let dir = entry.expect("entry").path();
            if !dir.is_dir() {
                continue;
            }
            let snap = Snapshot::from_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
            assert!(snap.cluster_version.is_some(), "{}", dir.display());
            assert!(!snap.cluster_operators.is_empty(), "{}", dir.display());
            assert!(!snap.nodes.is_empty(), "{}", dir.display());
            assert!(!snap.machine_config_pools.is_empty(), "{}", dir.display());
            assert_eq!(snap.now, snap.derived_now(), "{}", dir.display());
            seen += 1;
        }
        assert!(seen >= 8, "expected the 8 fixtures, saw {seen}");
    }

    #[test]
    fn accepts_json_lists_typed_lists_and_multi_document_yaml() {
        let json = r#"{"apiVersion":"v1","kind":"List","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}"#;
        let docs = parse_documents(json).expect("json");
        let mut out = Vec::new();
        docs.into_iter().for_each(|d| flatten(d, &mut out));
        assert_eq!(out.len(), 2);

        let yaml = "---\nkind: ClusterOperatorList\nitems:\n- metadata: {name: a}\n---\nkind: ClusterOperator\nmetadata: {name: c}\n";
        let mut out = Vec::new();
        parse_documents(yaml)
            .expect("yaml")
            .into_iter()
            .for_each(|d| flatten(d, &mut out));
        let names: Vec<_> = out
            .iter()
            .filter_map(|v| v.pointer("/metadata/name").and_then(|n| n.as_str()))
            .collect();
        assert_eq!(names, ["a", "c"]);
    }

    #[test]
    fn reads_a_must_gather_layout() {
        let src = fixtures().join("4.14.1-degraded");
        let expected = Snapshot::from_dir(&src).expect("fixture");
        let root = std::env::temp_dir().join(format!("us-mg-{}", std::process::id()));
        let csr = root.join("quay-io-release-sha256-abc/cluster-scoped-resources");
        let write_each = |values: Vec<serde_json::Value>, sub: &str| {
            let d = csr.join(sub);
            std::fs::create_dir_all(&d).expect("mkdir");
            for v in values {
                let name = v
                    .pointer("/metadata/name")
                    .and_then(|n| n.as_str())
                    .unwrap_or("x")
                    .to_string();
                std::fs::write(
                    d.join(format!("{name}.yaml")),
                    serde_json::to_string(&v).expect("json"),
                )
                .expect("write");
            }
        };
        write_each(
            read_values(&src.join("clusterversion.yaml")).expect("cv"),
            "config.openshift.io/clusterversions",
        );
        write_each(
            read_values(&src.join("clusteroperators.yaml")).expect("co"),
            "config.openshift.io/clusteroperators",
        );
        write_each(
            read_values(&src.join("machineconfigpools.yaml")).expect("mcp"),
            "machineconfiguration.openshift.io/machineconfigpools",
        );
        write_each(
            read_values(&src.join("machineconfigs.yaml")).expect("mc"),
            "machineconfiguration.openshift.io/machineconfigs",
        );
        write_each(
            read_values(&src.join("nodes.yaml")).expect("nodes"),
            "core/nodes",
        );
        let snap = Snapshot::from_dir(&root).expect("must-gather");
        std::fs::remove_dir_all(&root).ok();
        assert_eq!(snap.cluster_version, expected.cluster_version);
        assert_eq!(
            snap.cluster_operators.len(),
            expected.cluster_operators.len()
        );
        assert_eq!(snap.nodes.len(), expected.nodes.len());
        assert_eq!(
            snap.machine_config_pools.len(),
            expected.machine_config_pools.len()
        );
        assert_eq!(snap.machine_configs.len(), expected.machine_configs.len());
        assert_eq!(snap.derived_now(), expected.now);
    }

    #[test]
    fn errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("us-snap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let err = Snapshot::from_dir(&dir).expect_err("missing cv");
        assert!(
            err.to_string().contains("clusterversion.yaml is missing"),
            "{err}"
        );
        std::fs::write(
            dir.join("clusterversion.yaml"),
            "kind: ClusterVersion\nmetadata: [unclosed\n",
        )
        .expect("write");
        let err = Snapshot::from_dir(&dir).expect_err("bad yaml");
        assert!(
            err.to_string()
                .contains("clusterversion.yaml is not valid YAML or JSON"),
            "{err}"
        );
        std::fs::write(
            dir.join("clusterversion.yaml"),
            "kind: ClusterVersion\nmetadata:\n  name: version\nstatus:\n  history: 7\n",
        )
        .expect("write");
        let err = Snapshot::from_dir(&dir).expect_err("bad shape");
        assert!(err.to_string().contains("ClusterVersion version"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
