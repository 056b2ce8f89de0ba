//! Reading a captured cluster: a folder in the `testdata/oc-status` layout, or a
//! must-gather's cluster-scoped resources, into the input types of `update-status-api` and the
//! assessment's [`ClusterInputs`] ([`Snapshot::inputs`]); hosted captures in [`hosted`]. Used by
//! the CLI's offline mode and the fixture tests.
//!
//! Files may be YAML or JSON whatever their extension, hold a single object, a `kind: List`,
//! a typed list (`ClusterOperatorList`) or several YAML documents, possibly starting with `---`.
//!
//! The input files are read through a fast path first (`fast.rs`: `serde_json` for JSON, the
//! YAML crate's events for YAML, large lists parsed in parts on several threads, straight into
//! the fields the assessment reads); whatever it does not read exactly like the general path
//! ([`read_values`] then [`read_objects`]) is read again by the general path, so objects and
//! errors are the same.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use update_status_assess::ClusterInputs;

use update_status_api::input::{
    AlertsResponse, ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool,
    McoDeployment, NODE_REASON, Node, Pod, PodDisruptionBudget,
};

mod error;
mod events;
pub mod excerpt;
mod fast;
mod file;
pub mod hosted;
mod parse;
#[cfg(test)]
mod proptests;
mod split;
mod wire;

pub use error::{SnapshotError, SnapshotWarning};
pub use file::{MAX_FILE_BYTES, Root};
use file::{entry_exists, read_now};
use parse::decode;
pub use parse::{flatten, parse_documents, read_objects, read_typed, read_values};
pub use wire::Input;

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
    /// Pods on the nodes whose drain fails, if captured (`pods.yaml`; a must-gather's
    /// `namespaces/*/core/pods.yaml`): what a failed drain's insight points at. Pods on other
    /// nodes are not kept.
    pub pods: Vec<Pod>,
    /// PodDisruptionBudgets, if captured (`poddisruptionbudgets.yaml`; a must-gather's
    /// `namespaces/*/policy/poddisruptionbudgets.yaml`).
    pub pod_disruption_budgets: Vec<PodDisruptionBudget>,
    /// The instant the expected outputs were computed at (the `now` file), if present.
    pub now: Option<Timestamp>,
    /// What was odd but did not stop the reading (duplicates), in reading order.
    pub warnings: Vec<SnapshotWarning>,
}

impl Snapshot {
    /// The inputs this capture holds, as the assessment reads them (its alerts included, when
    /// captured): what the CLI's offline mode and the fixture tests assess.
    pub fn inputs(&self) -> ClusterInputs<'_> {
        ClusterInputs {
            cluster_version: self.cluster_version.as_ref(),
            cluster_operators: &self.cluster_operators,
            pools: &self.machine_config_pools,
            machine_configs: &self.machine_configs,
            nodes: &self.nodes,
            mco_image: self.mco_image.as_deref().into(),
            alerts: self.alerts.as_ref().map(|a| a.data.alerts.as_slice()),
            pods: &self.pods,
            pod_disruption_budgets: &self.pod_disruption_budgets,
        }
    }

    /// Keeps the pods on nodes whose drain fails (the only ones the assessment reads).
    fn keep_drain_pods(&mut self) {
        if self.pods.is_empty() {
            return;
        }
        let failing: std::collections::HashSet<&str> = self
            .nodes
            .iter()
            .filter(|n| {
                n.annotation(NODE_REASON)
                    .and_then(update_status_assess::related::parse_drain_failure)
                    .is_some()
            })
            .map(Node::name)
            .collect();
        self.pods
            .retain(|p| failing.contains(p.spec.node_name.as_str()));
    }
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
    ///
    /// Nothing outside `dir` is read: a file or folder that a symbolic link leads out of it is
    /// an error ([`SnapshotError::OutsideFolder`]), as the hosted reader skips it; an error
    /// quotes at most a short, escaped excerpt of a file ([`excerpt`]).
    pub fn from_dir(dir: &Path) -> Result<Self, SnapshotError> {
        let cv_path = dir.join("clusterversion.yaml");
        let root = match Root::new(dir) {
            Ok(root) => root,
            // No such folder: what it lacks first is its ClusterVersion.
            Err(SnapshotError::Read { error, .. })
                if error.kind() == std::io::ErrorKind::NotFound =>
            {
                return Err(SnapshotError::Missing {
                    path: cv_path,
                    what: "the ClusterVersion",
                });
            }
            Err(e) => return Err(e),
        };
        if !entry_exists(&cv_path)
            && let Some(mg) = find_must_gather(&root)
        {
            return Self::from_must_gather(&root, &mg);
        }
        if !entry_exists(&cv_path) {
            return Err(SnapshotError::Missing {
                path: cv_path,
                what: "the ClusterVersion",
            });
        }
        let optional = |name: &str| -> Result<Option<PathBuf>, SnapshotError> {
            let p = dir.join(name);
            if !entry_exists(&p) {
                return Ok(None);
            }
            root.check(&p)?;
            Ok(Some(p))
        };
        let files = |name: &str| -> Result<Vec<PathBuf>, SnapshotError> {
            Ok(optional(name)?.into_iter().collect())
        };
        let mut snap = Snapshot::default();
        let mut r = Reader::new(&root);
        snap.cluster_version = r.read(&[cv_path])?.into_iter().next();
        snap.cluster_operators = r.read(&files("clusteroperators.yaml")?)?;
        snap.machine_config_pools = r.read(&files("machineconfigpools.yaml")?)?;
        snap.machine_configs = r.read(&files("machineconfigs.yaml")?)?;
        snap.nodes = r.read(&files("nodes.yaml")?)?;
        snap.pods = r.read(&files("pods.yaml")?)?;
        snap.pod_disruption_budgets = r.read(&files("poddisruptionbudgets.yaml")?)?;
        snap.keep_drain_pods();
        snap.warnings = r.warnings;
        if let Some(p) = optional("alerts.json")? {
            snap.alerts = read_alerts(&p, &mut snap.warnings)?;
        }
        if let Some(p) = optional("mco-deployment.yaml")? {
            snap.mco_image = read_values(&p)?
                .into_iter()
                .next()
                .map(|v| decode::<McoDeployment>(&p, 0, v))
                .transpose()?
                .and_then(|d| d.operator_image().map(str::to_string));
        }
        if let Some(p) = optional("now")? {
            snap.now = Some(read_now(&p)?);
        }
        Ok(snap)
    }

    /// Reads a must-gather's `cluster-scoped-resources` folder `mg`, inside `root`.
    fn from_must_gather(root: &Root, mg: &Path) -> Result<Self, SnapshotError> {
        let cv_dir = mg.join("config.openshift.io/clusterversions");
        let mut r = Reader::new(root);
        let cluster_version = r
            .read::<ClusterVersion>(&folder_files(root, &cv_dir)?)?
            .into_iter()
            .next();
        if cluster_version.is_none() {
            return Err(SnapshotError::Missing {
                path: cv_dir,
                what: "the ClusterVersion",
            });
        }
        let read = |sub: &str| folder_files(root, &mg.join(sub));
        let co_files = read("config.openshift.io/clusteroperators")?;
        let mcp_files = read("machineconfiguration.openshift.io/machineconfigpools")?;
        let mc_files = read("machineconfiguration.openshift.io/machineconfigs")?;
        let node_files = read("core/nodes")?;
        let mut cluster_operators: Vec<ClusterOperator> = r.read(&co_files)?;
        cluster_operators.sort_by(|a, b| a.name().cmp(b.name()));
        // Namespaced objects: `namespaces/<ns>/<group>/<resource>.yaml`, beside
        // `cluster-scoped-resources`.
        let namespaced = |file: &str| -> Result<Vec<PathBuf>, SnapshotError> {
            let Some(parent) = mg.parent() else {
                return Ok(Vec::new());
            };
            let mut out = Vec::new();
            for ns in folder_dirs(root, &parent.join("namespaces"))? {
                let p = ns.join(file);
                if entry_exists(&p) {
                    out.push(p);
                }
            }
            Ok(out)
        };
        let mut snap = Snapshot {
            cluster_version,
            cluster_operators,
            machine_config_pools: r.read(&mcp_files)?,
            machine_configs: r.read(&mc_files)?,
            nodes: r.read(&node_files)?,
            pods: r.read(&namespaced("core/pods.yaml")?)?,
            pod_disruption_budgets: r.read(&namespaced("policy/poddisruptionbudgets.yaml")?)?,
            ..Default::default()
        };
        snap.keep_drain_pods();
        snap.warnings = r.warnings;
        Ok(snap)
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

/// The `cluster-scoped-resources` folder of a must-gather at the root or up to two levels
/// below; folders a link leads out of the root are not searched.
fn find_must_gather(root: &Root) -> Option<PathBuf> {
    let mut level = vec![root.given().to_path_buf()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for d in &level {
            let candidate = d.join("cluster-scoped-resources");
            if candidate.is_dir() && root.outside(&candidate).is_none() {
                return Some(candidate);
            }
            if let Ok(entries) = std::fs::read_dir(d) {
                let mut subdirs: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir() && root.outside(p).is_none())
                    .collect();
                subdirs.sort();
                next.extend(subdirs);
            }
        }
        level = next;
    }
    None
}

/// The `*.yaml`/`*.yml`/`*.json` entries of a folder in name order (a missing folder: none).
/// Entries are not filtered on their type: one that is not a regular file, or that leads out
/// of the root, fails when read.
fn folder_files(root: &Root, dir: &Path) -> Result<Vec<PathBuf>, SnapshotError> {
    folder_entries(root, dir, |p| {
        p.extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
    })
}

/// The sub-folders of a folder in name order (a missing folder: none).
fn folder_dirs(root: &Root, dir: &Path) -> Result<Vec<PathBuf>, SnapshotError> {
    folder_entries(root, dir, |p| p.is_dir())
}

/// The entries of a folder that `keep` keeps, in name order (a missing folder: none; one a
/// link leads out of the root: an error, not listed).
fn folder_entries(
    root: &Root,
    dir: &Path,
    keep: impl Fn(&Path) -> bool,
) -> Result<Vec<PathBuf>, SnapshotError> {
    root.check(dir)?;
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => {
            return Err(SnapshotError::Read {
                path: dir.to_path_buf(),
                error,
            });
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| keep(p))
        .collect();
    paths.sort();
    Ok(paths)
}

/// Reads objects of one kind from files inside the root, keeping the first of duplicates (same
/// kind, namespace and name) and recording a warning for each other copy.
struct Reader<'r> {
    root: &'r Root,
    /// Where each `(kind, name)` was first read.
    seen: HashMap<(String, String), PathBuf>,
    warnings: Vec<SnapshotWarning>,
}

impl<'r> Reader<'r> {
    fn new(root: &'r Root) -> Self {
        Reader {
            root,
            seen: HashMap::new(),
            warnings: Vec::new(),
        }
    }

    fn read<T: Input>(&mut self, files: &[PathBuf]) -> Result<Vec<T>, SnapshotError> {
        let kind = T::kind(&()).into_owned();
        let mut out = Vec::new();
        for path in files {
            self.root.check(path)?;
            let mut objects = read_typed::<T>(path)?;
            // In place (thousands of Nodes are not moved into a second vector).
            objects.retain(|object| {
                let meta = object.meta();
                let name = match meta.namespace.as_deref() {
                    Some(ns) if !ns.is_empty() => {
                        format!("{ns}/{}", meta.name.as_deref().unwrap_or_default())
                    }
                    _ => meta.name.clone().unwrap_or_default(),
                };
                match self.seen.entry((kind.clone(), name)) {
                    std::collections::hash_map::Entry::Occupied(first) => {
                        self.warnings.push(SnapshotWarning::Duplicate {
                            kind: kind.clone(),
                            name: first.key().1.clone(),
                            path: path.clone(),
                            first: first.get().clone(),
                        });
                        false
                    }
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert(path.clone());
                        true
                    }
                }
            });
            if out.is_empty() {
                out = objects;
            } else {
                out.append(&mut objects);
            }
        }
        Ok(out)
    }
}

/// The image of the `machine-config-operator` container of a Deployment object.
/// Reads `alerts.json`. A file that cannot be read is an error; one that holds no valid alerts
/// response (syntax, shape) is ignored with a [`SnapshotWarning::Alerts`], as `oc` does.
fn read_alerts(
    path: &Path,
    warnings: &mut Vec<SnapshotWarning>,
) -> Result<Option<AlertsResponse>, SnapshotError> {
    let decoded = read_values(path).and_then(|values| {
        values
            .into_iter()
            .next()
            .map(|v| decode::<AlertsResponse>(path, 0, v))
            .transpose()
    });
    match decoded {
        Ok(alerts) => Ok(alerts),
        Err(error @ (SnapshotError::Syntax { .. } | SnapshotError::Shape { .. })) => {
            warnings.push(SnapshotWarning::Alerts {
                error: error.to_string(),
            });
            Ok(None)
        }
        Err(other) => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

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
        for (file, sub) in [
            ("clusterversion.yaml", "config.openshift.io/clusterversions"),
            (
                "clusteroperators.yaml",
                "config.openshift.io/clusteroperators",
            ),
            (
                "machineconfigpools.yaml",
                "machineconfiguration.openshift.io/machineconfigpools",
            ),
            (
                "machineconfigs.yaml",
                "machineconfiguration.openshift.io/machineconfigs",
            ),
            ("nodes.yaml", "core/nodes"),
        ] {
            write_each(read_values(&src.join(file)).expect(file), sub);
        }
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

    /// A token someone's kubeconfig holds: no error may print it.
    const TOKEN: &str = "sha256~c2VjcmV0LXRva2VuLW9mLXRoZS1hbmFseXN0LXNoYWxsLW5vdC1wcmludA";

    fn kubeconfig() -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'https://api.example:6443'}}\nusers:\n- name: u\n  user: {{token: {TOKEN}}}\n"
        )
    }

    /// A copy of the `not-upgrading` case in `<tmp>/<name>-<pid>/snapshot` beside a `home`
    /// holding a kubeconfig with [`TOKEN`]: (base, snapshot, home, case).
    fn snapshot_beside_a_kubeconfig(name: &str) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (dir, home) = (base.join("snapshot"), base.join("home"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::create_dir_all(home.join("nodes")).expect("mkdir");
        let case = update_status_testdata::oc_status_case("not-upgrading");
        for entry in std::fs::read_dir(&case).expect("case") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy");
        }
        std::fs::write(home.join("config"), kubeconfig()).expect("write");
        (base, dir, home, case)
    }

    /// The text of `e`, which must not hold the token.
    fn no_token(e: &SnapshotError) -> String {
        let text = e.to_string();
        assert!(!text.contains(&TOKEN[10..]), "{text}");
        text
    }

    /// `at` in `dir`, a symbolic link to `target`.
    fn link(dir: &Path, target: &Path, at: &str) {
        let p = dir.join(at);
        let _ = std::fs::remove_file(&p);
        std::os::unix::fs::symlink(target, &p).expect("symlink");
    }

    /// Issue #38: in a must-gather, `now -> ~/.kube/config` put the analyst's credentials into
    /// the error text (the reader followed the link and printed the file whole). Links out of
    /// the folder are refused, whatever they name (a file, a folder, the must-gather itself);
    /// links inside it are followed.
    #[test]
    fn nothing_outside_the_folder_is_read() {
        let (base, dir, home, case) = snapshot_beside_a_kubeconfig("us-snap-links");
        // `now` leading to a file out of the folder.
        link(&dir, &home.join("config"), "now");
        let err = Snapshot::from_dir(&dir).expect_err("refused");
        let text = no_token(&err);
        assert!(matches!(err, SnapshotError::OutsideFolder { .. }), "{text}");
        assert!(
            text.contains("now: a symbolic link leads it to")
                && text.contains("outside the folder read"),
            "{text}"
        );
        // Through a relative link and a folder link too.
        link(&dir, Path::new("../home/config"), "now");
        assert!(matches!(
            Snapshot::from_dir(&dir),
            Err(SnapshotError::OutsideFolder { .. })
        ));
        link(&dir, &home, "up");
        link(&dir, Path::new("up/config"), "now");
        assert!(matches!(
            Snapshot::from_dir(&dir),
            Err(SnapshotError::OutsideFolder { .. })
        ));
        std::fs::remove_file(dir.join("now")).expect("rm");

        // An input file leading out of the folder; one leading inside it is read.
        std::fs::copy(case.join("now"), dir.join("now")).expect("copy");
        std::fs::rename(dir.join("nodes.yaml"), dir.join("real-nodes.yaml")).expect("mv");
        link(&dir, &home.join("config"), "nodes.yaml");
        let text = no_token(&Snapshot::from_dir(&dir).expect_err("refused"));
        assert!(
            text.contains("nodes.yaml: a symbolic link leads it to"),
            "{text}"
        );
        link(&dir, Path::new("real-nodes.yaml"), "nodes.yaml");
        Snapshot::from_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
        std::fs::remove_dir_all(&base).ok();
    }

    /// Issue #38 too: an error quotes a short excerpt of a file, never all of it.
    #[test]
    fn errors_quote_only_an_excerpt() {
        let (base, dir, _, case) = snapshot_beside_a_kubeconfig("us-snap-excerpts");
        // A `now` file inside the folder that holds a kubeconfig: a short excerpt only.
        std::fs::remove_file(dir.join("now")).expect("rm");
        std::fs::write(dir.join("now"), kubeconfig()).expect("write");
        let err = Snapshot::from_dir(&dir).expect_err("not a timestamp");
        let text = no_token(&err);
        assert!(
            text.contains("now: \"apiVersion: v1\\nkind: Config\\nclusters:")
                && text.contains("characters) is not an RFC 3339 timestamp"),
            "{text}"
        );
        // A long one is not even read.
        std::fs::write(dir.join("now"), kubeconfig().repeat(100)).expect("write");
        let text = no_token(&Snapshot::from_dir(&dir).expect_err("too long"));
        assert!(
            text.contains("more than the 4096 a timestamp takes"),
            "{text}"
        );
        std::fs::copy(case.join("now"), dir.join("now")).expect("copy");

        // A field holding a long value: the decoder's quote of it is cut.
        std::fs::write(
            dir.join("clusterversion.yaml"),
            format!("kind: ClusterVersion\nmetadata: {{name: version}}\nstatus: {{history: \"{TOKEN}{TOKEN}\"}}\n"),
        )
        .expect("write");
        let text = no_token(&Snapshot::from_dir(&dir).expect_err("bad shape"));
        assert!(text.contains("invalid type: string \"sha256~"), "{text}");
        // A syntax error quotes the line around it, shortly.
        std::fs::write(
            dir.join("clusterversion.yaml"),
            format!("kind: ClusterVersion\nmetadata: {{name: version\ntoken: [{TOKEN}{TOKEN}\n"),
        )
        .expect("write");
        let text = no_token(&Snapshot::from_dir(&dir).expect_err("bad syntax"));
        assert!(text.contains("is not valid YAML or JSON"), "{text}");
        std::fs::remove_dir_all(&base).ok();
    }

    /// The same in a must-gather: a folder of it, or the whole `cluster-scoped-resources`,
    /// linked out of the folder is never read.
    #[test]
    fn a_must_gather_is_read_only_inside_its_folder() {
        let base = std::env::temp_dir().join(format!("us-mg-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (root, home) = (base.join("mg"), base.join("home"));
        let csr = update_status_testdata::must_gather::write(&root, 2).expect("must-gather");
        let outside = update_status_testdata::must_gather::write(&home, 3).expect("elsewhere");
        // `core/nodes` is a link to another capture's nodes.
        let nodes = csr.join("core/nodes");
        std::fs::remove_dir_all(&nodes).expect("rm");
        std::os::unix::fs::symlink(outside.join("core/nodes"), &nodes).expect("symlink");
        let err = Snapshot::from_dir(&root).expect_err("refused");
        assert!(matches!(err, SnapshotError::OutsideFolder { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("core/nodes: a symbolic link leads it to"),
            "{err}"
        );
        // The whole `cluster-scoped-resources` is a link out: not found, so not read.
        std::fs::remove_dir_all(&csr).expect("rm");
        std::os::unix::fs::symlink(&outside, &csr).expect("symlink");
        let err = Snapshot::from_dir(&root).expect_err("not found");
        assert!(err.to_string().contains("is missing"), "{err}");
        std::fs::remove_dir_all(&base).ok();
    }

    #[test]
    fn reads_a_must_gather_with_3000_nodes_of_block_yaml() {
        // 3,000 real nodes in block YAML breached serde-saphyr's default budget (250,000 nodes).
        let root = std::env::temp_dir().join(format!("us-mg-3000-{}", std::process::id()));
        update_status_testdata::must_gather::write(&root, 3000).expect("write must-gather");
        let snap = Snapshot::from_dir(&root);
        std::fs::remove_dir_all(&root).ok();
        let snap = snap.unwrap_or_else(|e| panic!("{e}"));
        let case = Snapshot::from_dir(&update_status_testdata::oc_status_case(
            update_status_testdata::must_gather::BASE_CASE,
        ))
        .expect("base case");
        assert_eq!(snap.nodes.len(), 3000 + case.nodes.len());
        assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
    }

    #[test]
    fn must_gather_folders_refuse_odd_entries_and_keep_the_first_duplicate() {
        let root = std::env::temp_dir().join(format!("us-mg-dup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let csr = update_status_testdata::must_gather::write(&root, 2).expect("write must-gather");
        let nodes = csr.join("core/nodes");
        // The same two generated nodes again, as one file per object (sorted after the list).
        let generated = read_values(&nodes.join("generated.yaml")).expect("generated");
        for v in &generated {
            let name = v
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .expect("name");
            std::fs::write(nodes.join(format!("z-{name}.json")), v.to_string()).expect("write");
        }
        let snap = Snapshot::from_dir(&root).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = snap.nodes.iter().map(Node::name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(names.len(), unique.len(), "counted twice: {names:?}");
        assert_eq!(snap.warnings.len(), 2, "{:?}", snap.warnings);
        let text = snap.warnings[0].to_string();
        assert!(text.contains("duplicate Node \"gen-worker-00000"), "{text}");
        assert!(text.contains("generated.yaml, is kept"), "{text}");

        // An entry that is not a regular file is an error naming it, not "no nodes".
        std::os::unix::fs::symlink("/nonexistent", nodes.join("dangling.yaml")).expect("symlink");
        let err = Snapshot::from_dir(&root).expect_err("dangling link");
        std::fs::remove_dir_all(&root).ok();
        assert!(
            err.to_string()
                .contains("dangling.yaml: it is a dangling symbolic link"),
            "{err}"
        );
    }
}
