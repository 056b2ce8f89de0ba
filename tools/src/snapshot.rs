//! Loading a captured cluster (a folder in the `testdata/oc-status/<case>/` layout)
//! into a kube-apiserver, so the controller sees it as a live cluster.
//!
//! Every `*.yaml`, `*.yml` and `*.json` file of the folder is read, except the expected
//! outputs (`expected.*`), `now` and `alerts.json` (a Prometheus API answer, not a
//! Kubernetes object). A file may hold YAML or JSON whatever its extension: a single
//! object, a `kind: List`, a typed list (`ClusterOperatorList`) or several YAML documents,
//! possibly starting with `---`.
//!
//! Each object is server-side applied (field manager [`FIELD_MANAGER`], forced) without
//! its server-owned metadata; then its `.status` is applied through the `status`
//! subresource when the resource has one (Nodes included), because the main endpoint of
//! such resources ignores `.status`. Namespaced objects go to their namespace (`default`
//! when none is given), which is created when missing. A folder without
//! `mco-deployment.yaml` gets a stand-in MCO Deployment ([`mco_deployment_stand_in`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{self, ApiCapabilities, ApiResource, Scope};
use kube::{Client, ResourceExt};
use serde_json::{Map, Value, json};
use update_status_snapshot::read_values;
pub use update_status_snapshot::{SnapshotError, flatten, parse_documents};

/// The field manager of every write made by the loader.
pub const FIELD_MANAGER: &str = "update-status-snapshot-loader";

/// Files of a snapshot folder that are not Kubernetes objects.
const SKIPPED_FILES: &[&str] = &["now", "alerts.json"];

/// Metadata fields owned by the server, dropped before applying.
const SERVER_OWNED_METADATA: &[&str] = &[
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "managedFields",
    "generation",
    "selfLink",
    "ownerReferences",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// The cluster-scoped kinds a snapshot holds, removed by [`clear`].
const SNAPSHOT_KINDS: &[(&str, &str, &str)] = &[
    ("config.openshift.io", "v1", "ClusterVersion"),
    ("config.openshift.io", "v1", "ClusterOperator"),
    (
        "machineconfiguration.openshift.io",
        "v1",
        "MachineConfigPool",
    ),
    ("machineconfiguration.openshift.io", "v1", "MachineConfig"),
    ("", "v1", "Node"),
];

/// What can go wrong loading a snapshot. Every variant names the file or folder, and the
/// object when there is one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The folder could not be listed.
    #[error("cannot list {dir}: {source}")]
    ListDir {
        /// The folder.
        dir: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be read (or is not UTF-8), or is neither valid YAML nor valid JSON
    /// (the text names the file).
    #[error(transparent)]
    File(#[from] SnapshotError),
    /// An object of a file is not a usable Kubernetes object.
    #[error("{path}: object #{index} ({object}): {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Position of the object in the file after flattening lists, from 0.
        index: usize,
        /// `kind/name` as far as known.
        object: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The apiserver does not serve the object's kind.
    #[error(
        "{path}: {object}: the apiserver does not serve {api_version} {kind} (is its CRD installed?): {}", describe(.source)
    )]
    Discovery {
        /// The file.
        path: PathBuf,
        /// `kind/name`.
        object: String,
        /// The object's apiVersion.
        api_version: String,
        /// The object's kind.
        kind: String,
        /// The discovery error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A request to the apiserver failed.
    #[error("{path}: {object}: {action} failed: {}", describe(.source))]
    Api {
        /// The file.
        path: PathBuf,
        /// `kind/name` (with the namespace for namespaced objects).
        object: String,
        /// What was being done.
        action: &'static str,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
    /// Some files or objects failed; the others were loaded.
    #[error("{} problem(s) loading {dir} ({loaded} objects loaded):\n  {}", .errors.len(), list(.errors))]
    Incomplete {
        /// The folder.
        dir: PathBuf,
        /// How many objects were loaded.
        loaded: usize,
        /// One error per failed file or object.
        errors: Vec<Error>,
    },
    /// Clearing the snapshot kinds from the cluster failed.
    #[error("clearing {kind} objects failed: {}", describe(.source))]
    Clear {
        /// The kind being cleared.
        kind: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
}

/// A short rendering of a client error: the apiserver's message and reason for API errors.
fn describe(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => {
            let reason = if status.reason.is_empty() {
                String::new()
            } else {
                format!(" ({}, {})", status.reason, status.code)
            };
            format!("{}{reason}", status.message)
        }
        other => other.to_string(),
    }
}

fn list(errors: &[Error]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// One object read from a snapshot file.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotObject {
    /// The file it comes from.
    pub path: PathBuf,
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`, if any.
    pub namespace: Option<String>,
    /// The whole object as read (server-owned metadata included).
    pub value: Value,
}

impl fmt::Display for SnapshotObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// The input files of a snapshot folder, sorted by name.
pub fn snapshot_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::ListDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::ListDir {
            dir: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let input = [".yaml", ".yml", ".json"]
            .iter()
            .any(|ext| name.ends_with(ext))
            && !name.starts_with("expected.")
            && !SKIPPED_FILES.contains(&name);
        if input && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Reads every object of a file, with its identity checked. Fails on the first bad object.
pub fn read_file(path: &Path) -> Result<Vec<SnapshotObject>, Error> {
    read_values(path)?
        .into_iter()
        .enumerate()
        .map(|(index, value)| identify(path, index, value))
        .collect()
}

fn identify(path: &Path, index: usize, value: Value) -> Result<SnapshotObject, Error> {
    let str_at = |p: &str| value.pointer(p).and_then(Value::as_str).map(str::to_string);
    let kind = str_at("/kind");
    let name = str_at("/metadata/name");
    let invalid = |problem: &str| Error::Invalid {
        path: path.to_path_buf(),
        index,
        object: format!(
            "{}/{}",
            kind.as_deref().unwrap_or("?"),
            name.as_deref().unwrap_or("?")
        ),
        problem: problem.to_string(),
    };
    if !value.is_object() {
        return Err(invalid("not a mapping"));
    }
    let api_version = str_at("/apiVersion")
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("no apiVersion"))?;
    let kind = kind
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("no kind"))?;
    let name = name
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("no metadata.name"))?;
    let namespace = str_at("/metadata/namespace").filter(|s| !s.is_empty());
    Ok(SnapshotObject {
        path: path.to_path_buf(),
        api_version,
        kind,
        name,
        namespace,
        value,
    })
}

/// Reads every object of a snapshot folder. Fails on the first bad file.
pub fn read_dir(dir: &Path) -> Result<Vec<SnapshotObject>, Error> {
    let mut objects = Vec::new();
    for file in snapshot_files(dir)? {
        objects.extend(read_file(&file)?);
    }
    Ok(objects)
}

/// Order of application: namespaces first, nodes and pools before what refers to them.
fn kind_rank(kind: &str) -> u8 {
    match kind {
        "Namespace" => 0,
        "Node" => 1,
        "MachineConfig" => 2,
        "MachineConfigPool" => 3,
        "ClusterOperator" => 4,
        "ClusterVersion" => 5,
        _ => 6,
    }
}

/// The object to apply to the main endpoint: server-owned metadata dropped, and `.status`
/// split off when it goes through the status subresource.
fn prepare(value: &Value, has_status_subresource: bool) -> (Value, Option<Value>) {
    let mut body = value.clone();
    let mut status = None;
    if let Value::Object(obj) = &mut body {
        if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
            for field in SERVER_OWNED_METADATA {
                meta.remove(*field);
            }
        }
        if has_status_subresource {
            status = obj.remove("status").filter(|s| !s.is_null());
        }
    }
    (body, status)
}

struct Loader {
    client: Client,
    discovered: HashMap<(String, String), (ApiResource, ApiCapabilities)>,
    namespaces: BTreeSet<String>,
    params: PatchParams,
}

impl Loader {
    fn new(client: Client) -> Self {
        Loader {
            client,
            discovered: HashMap::new(),
            namespaces: BTreeSet::new(),
            params: PatchParams::apply(FIELD_MANAGER).force(),
        }
    }

    async fn resource(
        &mut self,
        obj: &SnapshotObject,
    ) -> Result<(ApiResource, ApiCapabilities), Error> {
        let key = (obj.api_version.clone(), obj.kind.clone());
        if let Some(found) = self.discovered.get(&key) {
            return Ok(found.clone());
        }
        let (group, version) = match obj.api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", obj.api_version.as_str()),
        };
        let gvk = GroupVersionKind::gvk(group, version, &obj.kind);
        let found = discovery::pinned_kind(&self.client, &gvk)
            .await
            .map_err(|source| Error::Discovery {
                path: obj.path.clone(),
                object: obj.to_string(),
                api_version: obj.api_version.clone(),
                kind: obj.kind.clone(),
                source: Box::new(source),
            })?;
        self.discovered.insert(key, found.clone());
        Ok(found)
    }

    async fn ensure_namespace(&mut self, obj: &SnapshotObject, ns: &str) -> Result<(), Error> {
        if self.namespaces.contains(ns) {
            return Ok(());
        }
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(self.client.clone());
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        api.patch(ns, &self.params, &Patch::Apply(&body))
            .await
            .map_err(|source| Error::Api {
                path: obj.path.clone(),
                object: obj.to_string(),
                action: "creating its namespace",
                source: Box::new(source),
            })?;
        self.namespaces.insert(ns.to_string());
        Ok(())
    }

    async fn load(&mut self, obj: &SnapshotObject) -> Result<(), Error> {
        let (ar, caps) = self.resource(obj).await?;
        let api: Api<DynamicObject> = match caps.scope {
            Scope::Cluster => Api::all_with(self.client.clone(), &ar),
            Scope::Namespaced => {
                let ns = obj.namespace.as_deref().unwrap_or("default").to_string();
                self.ensure_namespace(obj, &ns).await?;
                Api::namespaced_with(self.client.clone(), &ns, &ar)
            }
        };
        let has_status = caps
            .subresources
            .iter()
            .any(|(sub, _)| sub.plural == "status");
        let (mut body, status) = prepare(&obj.value, has_status);
        if caps.scope == Scope::Namespaced
            && let Some(Value::Object(meta)) = body.get_mut("metadata")
        {
            meta.insert(
                "namespace".into(),
                json!(obj.namespace.as_deref().unwrap_or("default")),
            );
        }
        let api_err = |action: &'static str| {
            move |source| Error::Api {
                path: obj.path.clone(),
                object: obj.to_string(),
                action,
                source: Box::new(source),
            }
        };
        api.patch(&obj.name, &self.params, &Patch::Apply(&body))
            .await
            .map_err(api_err("server-side apply"))?;
        if let Some(status) = status {
            let mut meta = Map::new();
            if let Some(m) = body.get("metadata") {
                for key in ["name", "namespace"] {
                    if let Some(v) = m.get(key) {
                        meta.insert(key.into(), v.clone());
                    }
                }
            }
            let patch = json!({
                "apiVersion": obj.api_version,
                "kind": obj.kind,
                "metadata": meta,
                "status": status,
            });
            api.patch_status(&obj.name, &self.params, &Patch::Apply(&patch))
                .await
                .map_err(api_err("applying its status"))?;
        }
        Ok(())
    }
}

/// Loads every object of a snapshot folder into the cluster behind `client`, returning how
/// many were loaded.
///
/// Bad files and failed objects do not stop the others from loading; they are all reported
/// in one [`Error::Incomplete`] at the end.
pub async fn load_dir(client: &Client, dir: &Path) -> Result<usize, Error> {
    let mut errors = Vec::new();
    let mut objects = Vec::new();
    for file in snapshot_files(dir)? {
        match read_values(&file) {
            Ok(values) => {
                for (index, value) in values.into_iter().enumerate() {
                    match identify(&file, index, value) {
                        Ok(obj) => objects.push(obj),
                        Err(e) => errors.push(e),
                    }
                }
            }
            Err(e) => errors.push(e.into()),
        }
    }
    objects.sort_by_key(|o| kind_rank(&o.kind)); // stable: file order within a kind
    let mut loader = Loader::new(client.clone());
    let mut loaded = 0;
    for obj in &objects {
        match loader.load(obj).await {
            Ok(()) => loaded += 1,
            Err(e) => errors.push(e),
        }
    }
    // Not counted: it is not in the folder.
    if !dir.join("mco-deployment.yaml").exists() {
        let stand_in = identify(dir, 0, mco_deployment_stand_in())?;
        if let Err(e) = loader.load(&stand_in).await {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(Error::Incomplete {
            dir: dir.to_path_buf(),
            loaded,
            errors,
        })
    }
}

/// Image of the MCO Deployment the loader writes for a snapshot without
/// `mco-deployment.yaml`: no `operator-image` version ever equals it.
pub const MCO_IMAGE_NOT_CAPTURED: &str = "mco-image-not-captured.invalid/machine-config-operator";

/// The MCO Deployment standing in for one a snapshot did not capture. oc (and our offline mode)
/// compare `machine-config`'s `operator-image` with `""` then: never equal for a real image.
/// A live cluster always has the Deployment (oc's live mode fails without it), so the loaded
/// cluster gets one whose image equals no `operator-image` either: the same facts, and the
/// controller assesses it as the offline mode does (without it the controller would rightly
/// add its "image unknown" Info insight, which the offline expectations do not have).
pub fn mco_deployment_stand_in() -> Value {
    use update_status_api::input::{MCO_DEPLOYMENT, MCO_NAMESPACE};
    let labels = json!({"k8s-app": MCO_DEPLOYMENT});
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": MCO_DEPLOYMENT, "namespace": MCO_NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": MCO_DEPLOYMENT, "image": MCO_IMAGE_NOT_CAPTURED}]},
            },
        },
    })
}

/// Deletes every ClusterVersion, ClusterOperator, MachineConfigPool, MachineConfig and Node,
/// so that a following [`load_dir`] leaves exactly one snapshot in the cluster. Kinds the
/// apiserver does not serve are skipped. Returns how many objects were deleted.
pub async fn clear(client: &Client) -> Result<usize, Error> {
    let mut deleted = 0;
    for (group, version, kind) in SNAPSHOT_KINDS {
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let Ok((ar, _)) = discovery::pinned_kind(client, &gvk).await else {
            continue;
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        let clear_err = |source| Error::Clear {
            kind: kind.to_string(),
            source: Box::new(source),
        };
        let names: Vec<String> = api
            .list_metadata(&ListParams::default())
            .await
            .map_err(clear_err)?
            .items
            .iter()
            .map(|o| o.name_any())
            .collect();
        for name in names {
            match api.delete(&name, &DeleteParams::background()).await {
                Ok(_) => deleted += 1,
                Err(kube::Error::Api(s)) if s.is_not_found() => {}
                Err(source) => return Err(clear_err(source)),
            }
        }
    }
    Ok(deleted)
}

/// Number of objects per kind, for reports.
pub fn count_by_kind(objects: &[SnapshotObject]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for o in objects {
        *counts.entry(o.kind.clone()).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(text: &str) -> Vec<Value> {
        let mut out = Vec::new();
        parse_documents(text)
            .expect("parses")
            .into_iter()
            .for_each(|d| flatten(d, &mut out));
        out
    }

    fn names(values: &[Value]) -> Vec<&str> {
        values
            .iter()
            .filter_map(|v| v.pointer("/metadata/name").and_then(Value::as_str))
            .collect()
    }

    #[test]
    fn saphyr_reads_kubectl_json() {
        let json = r#"{
    "apiVersion": "v1",
    "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "labels": {"x": "1"}},
         "status": {"capacity": {"cpu": "4"}, "allocatable": {"pods": 250}, "flag": true, "none": null}}
    ],
    "kind": "List",
    "metadata": {"resourceVersion": ""}
}"#;
        let docs = serde_saphyr::from_multiple::<Value>(json).expect("saphyr parses JSON");
        assert_eq!(docs.len(), 1);
        let out = flat(json);
        assert_eq!(names(&out), ["a"]);
        assert_eq!(
            out[0].pointer("/status/allocatable/pods"),
            Some(&json!(250))
        );
        assert_eq!(out[0].pointer("/status/capacity/cpu"), Some(&json!("4")));
        assert_eq!(out[0].pointer("/status/flag"), Some(&json!(true)));
        assert_eq!(out[0].pointer("/status/none"), Some(&Value::Null));
    }

    #[test]
    fn accepts_lists_typed_lists_and_multi_document_yaml() {
        let yaml = "---\napiVersion: config.openshift.io/v1\nkind: ClusterOperatorList\nitems:\n- metadata: {name: a}\n---\napiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata: {name: c}\n---\n";
        let out = flat(yaml);
        assert_eq!(names(&out), ["a", "c"]);
        // typed-list items inherit apiVersion and kind
        assert_eq!(out[0].get("kind"), Some(&json!("ClusterOperator")));
        assert_eq!(
            out[0].get("apiVersion"),
            Some(&json!("config.openshift.io/v1"))
        );

        let untyped = "apiVersion: v1\nitems:\n  - apiVersion: v1\n    kind: Node\n    metadata:\n      name: n1\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
        assert_eq!(names(&flat(untyped)), ["n1"]);
        let json_array = r#"[{"apiVersion":"v1","kind":"Node","metadata":{"name":"x"}}]"#;
        assert_eq!(names(&flat(json_array)), ["x"]);
    }

    #[test]
    fn prepare_strips_server_metadata_and_splits_status() {
        let v = json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n", "uid": "u", "resourceVersion": "1", "generation": 2,
                         "creationTimestamp": "2023-01-01T00:00:00Z", "managedFields": [],
                         "ownerReferences": [], "selfLink": "/x", "labels": {"a": "b"}},
            "spec": {}, "status": {"conditions": []}
        });
        let (body, status) = prepare(&v, true);
        assert_eq!(
            body,
            json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {}})
        );
        assert_eq!(status, Some(json!({"conditions": []})));
        let (body, status) = prepare(&v, false);
        assert!(body.get("status").is_some());
        assert_eq!(status, None);
    }

    #[test]
    fn every_fixture_reads() {
        let root = update_status_testdata::oc_status_dir();
        let Ok(entries) = std::fs::read_dir(&root) else {
            panic!("fixtures not found at {}", root.display());
        };
        let mut seen = 0;
        for entry in entries.flatten() {
            if !entry.path().is_dir() {
                continue;
            }
            let objects = read_dir(&entry.path()).unwrap_or_else(|e| panic!("{e}"));
            let counts = count_by_kind(&objects);
            for kind in [
                "ClusterVersion",
                "ClusterOperator",
                "MachineConfigPool",
                "Node",
            ] {
                assert!(
                    counts.get(kind).is_some_and(|n| *n > 0),
                    "{kind} in {entry:?}"
                );
            }
            assert_eq!(counts.get("ClusterVersion"), Some(&1), "{entry:?}");
            seen += 1;
        }
        assert!(seen >= 8, "expected the 8 fixtures, saw {seen}");
    }

    #[test]
    fn bad_input_is_reported_with_file_and_object() {
        let dir = std::env::temp_dir().join(format!("us-e2e-snapshot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let bad = dir.join("clusterversion.yaml");
        std::fs::write(&bad, "kind: ClusterVersion\nmetadata: [unclosed\n").expect("write");
        let err = read_file(&bad).expect_err("bad yaml");
        assert!(
            matches!(err, Error::File(SnapshotError::Syntax { .. })),
            "{err}"
        );
        assert!(err.to_string().contains("clusterversion.yaml"), "{err}");

        std::fs::write(
            &bad,
            "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n",
        )
        .expect("write");
        let err = read_file(&bad).expect_err("no apiVersion");
        let msg = err.to_string();
        assert!(
            msg.contains("clusterversion.yaml: object #0 (Node/n1): no apiVersion"),
            "{msg}"
        );

        std::fs::write(&bad, [0xff_u8, 0xfe, 0x00]).expect("write");
        let err = read_file(&bad).expect_err("not utf-8");
        assert!(err.to_string().contains("cannot read"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn skips_expected_outputs_now_and_alerts() {
        let dir = std::env::temp_dir().join(format!("us-e2e-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in [
            "now",
            "expected.output",
            "alerts.json",
            "nodes.yaml",
            "a.json",
            "b.yml",
            "notes.txt",
        ] {
            std::fs::write(dir.join(f), "").expect("write");
        }
        let files: Vec<_> = snapshot_files(&dir)
            .expect("list")
            .iter()
            .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
            .collect();
        assert_eq!(files, ["a.json", "b.yml", "nodes.yaml"]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
