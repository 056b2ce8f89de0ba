//! Reading a captured management cluster for hosted mode: a folder of HostedCluster, NodePool,
//! Machine, MachineSet and MachineDeployment objects (YAML or JSON, one object, lists or
//! several documents per file, any file names), or a management-cluster must-gather
//! (`namespaces/<ns>/hypershift.openshift.io/{hostedclusters,nodepools}/`,
//! `namespaces/<ns>-<name>/cluster.x-k8s.io/{machines,machinesets,machinedeployments}/`).
//!
//! Objects read inside the hosted cluster (ClusterOperators, Nodes) go in a `hosted-cluster/`
//! subfolder (`hosted-cluster/<name>/` when the folder holds several HostedClusters). An
//! optional `now` file holds the instant to assess at.
//!
//! Bad input never stops the reading: an unreadable file, or an object that is not a valid
//! object of its kind, is a warning naming the file and the object, and everything else is
//! still read.
//!
//! Nothing outside the given folder is read: a symbolic link (to a file or a folder) is
//! followed only when its target is inside the folder; one pointing out of it is skipped with
//! a warning (a must-gather comes from elsewhere, and may hold links to `/` or `/etc`).

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::SnapshotError;
use crate::excerpt;
use crate::file::{Root, entry_exists, read_now};
use crate::parse::read_values;
use update_status_api::hosted::{HostedCluster, Machine, MachineDeployment, MachineSet, NodePool};
use update_status_api::input::{ClusterOperator, Node};

/// The folder holding the objects read inside the hosted cluster.
pub const GUEST_DIR: &str = "hosted-cluster";
/// Deepest folder level searched (a must-gather nests objects 5 levels down).
const MAX_DEPTH: usize = 7;
/// Folders of a must-gather that hold the objects hosted mode reads.
const MUST_GATHER_DIRS: [&str; 5] = [
    "hostedclusters",
    "nodepools",
    "machines",
    "machinesets",
    "machinedeployments",
];

/// Something odd in a hosted snapshot that did not stop it from being read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct HostedSnapshotWarning {
    /// The file.
    pub path: PathBuf,
    /// What was wrong (names the object when it is about one).
    pub message: String,
}

/// The objects read inside one hosted cluster.
#[derive(Clone, Debug, Default)]
pub struct GuestSnapshot {
    /// Its ClusterOperators.
    pub cluster_operators: Vec<ClusterOperator>,
    /// Its Nodes.
    pub nodes: Vec<Node>,
}

/// A captured management cluster's hosted-mode inputs.
#[derive(Clone, Debug, Default)]
pub struct HostedSnapshot {
    /// Every HostedCluster, sorted by namespace and name.
    pub hosted_clusters: Vec<HostedCluster>,
    /// Every NodePool.
    pub node_pools: Vec<NodePool>,
    /// Every Machine.
    pub machines: Vec<Machine>,
    /// Every MachineSet.
    pub machine_sets: Vec<MachineSet>,
    /// Every MachineDeployment.
    pub machine_deployments: Vec<MachineDeployment>,
    /// Objects read inside hosted clusters: `(HostedCluster name or "" for the only one, objects)`.
    pub guests: Vec<(String, GuestSnapshot)>,
    /// The `now` file, when present.
    pub now: Option<Timestamp>,
    /// What was skipped, in reading order.
    pub warnings: Vec<HostedSnapshotWarning>,
}

impl HostedSnapshot {
    /// Reads a folder (see the module documentation). Fails only when the folder itself cannot
    /// be listed or the `now` file is malformed.
    pub fn from_dir(dir: &Path) -> Result<Self, SnapshotError> {
        let mut snap = HostedSnapshot::default();
        let mut files = Vec::new();
        let root = Root::new(dir)?;
        collect(&root, dir, 0, &mut files, &mut snap.warnings)?;
        for (path, guest) in files {
            snap.read_file(&path, guest);
        }
        snap.hosted_clusters
            .sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
        let now = dir.join("now");
        if entry_exists(&now) {
            root.check(&now)?;
            snap.now = Some(read_now(&now)?);
        }
        Ok(snap)
    }

    /// The guest objects of the HostedCluster `name` (those of a `hosted-cluster/<name>/`
    /// folder, else of `hosted-cluster/` itself).
    pub fn guest(&self, name: &str) -> Option<&GuestSnapshot> {
        self.guests
            .iter()
            .find(|(n, _)| n == name)
            .or_else(|| self.guests.iter().find(|(n, _)| n.is_empty()))
            .map(|(_, g)| g)
    }

    /// The instant to assess at: the `now` file, else the latest condition transition of the
    /// HostedClusters and NodePools (what was last observed).
    pub fn derived_now(&self) -> Option<Timestamp> {
        let hc = self
            .hosted_clusters
            .iter()
            .filter_map(|h| h.status.as_ref())
            .flat_map(|s| s.conditions.iter());
        let np = self
            .node_pools
            .iter()
            .filter_map(|n| n.status.as_ref())
            .flat_map(|s| s.conditions.iter());
        self.now
            .or_else(|| hc.chain(np).filter_map(|c| c.last_transition_time).max())
    }

    fn read_file(&mut self, path: &Path, guest: Option<String>) {
        let values = match read_values(path) {
            Ok(v) => v,
            Err(e) => {
                self.warn(path, format!("skipped: {e}"));
                return;
            }
        };
        for (index, v) in values.into_iter().enumerate() {
            let kind = v
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            match (kind.as_str(), &guest) {
                ("HostedCluster", None) => self.push(path, index, v, |s| &mut s.hosted_clusters),
                ("NodePool", None) => self.push(path, index, v, |s| &mut s.node_pools),
                ("Machine", None) => self.push(path, index, v, |s| &mut s.machines),
                ("MachineSet", None) => self.push(path, index, v, |s| &mut s.machine_sets),
                ("MachineDeployment", None) => {
                    self.push(path, index, v, |s| &mut s.machine_deployments)
                }
                ("ClusterOperator", Some(g)) => {
                    let g = g.clone();
                    self.push(path, index, v, move |s| {
                        &mut s.guest_mut(&g).cluster_operators
                    })
                }
                ("Node", Some(g)) => {
                    let g = g.clone();
                    self.push(path, index, v, move |s| &mut s.guest_mut(&g).nodes)
                }
                _ => {
                    let name = name_of(&v);
                    let kind = if kind.is_empty() {
                        "object without kind".to_string()
                    } else {
                        excerpt::bare(&kind)
                    };
                    let place = if guest.is_some() {
                        "inside the hosted cluster only ClusterOperators and Nodes are read"
                    } else {
                        "not a kind hosted mode reads"
                    };
                    self.warn(
                        path,
                        format!("object #{index} ({kind} {name}) ignored: {place}"),
                    );
                }
            }
        }
    }

    fn guest_mut(&mut self, name: &str) -> &mut GuestSnapshot {
        if let Some(i) = self.guests.iter().position(|(n, _)| n == name) {
            return &mut self.guests[i].1;
        }
        self.guests
            .push((name.to_string(), GuestSnapshot::default()));
        let last = self.guests.len() - 1;
        &mut self.guests[last].1
    }

    fn push<T: DeserializeOwned>(
        &mut self,
        path: &Path,
        index: usize,
        v: Value,
        list: impl FnOnce(&mut Self) -> &mut Vec<T>,
    ) {
        let (kind, name) = (
            excerpt::bare(v.get("kind").and_then(Value::as_str).unwrap_or("?")),
            name_of(&v),
        );
        match serde_json::from_value::<T>(v) {
            Ok(obj) => list(self).push(obj),
            Err(e) => self.warn(
                path,
                format!(
                    "object #{index} ({kind} {name}) skipped: it is not a valid {kind}: {}",
                    excerpt::message(&e.to_string())
                ),
            ),
        }
    }

    fn warn(&mut self, path: &Path, message: String) {
        self.warnings.push(HostedSnapshotWarning {
            path: path.to_path_buf(),
            message,
        });
    }
}

/// `metadata.namespace/metadata.name` (or `?`), each cut to a short excerpt.
fn name_of(v: &Value) -> String {
    let s = |p: &str| v.pointer(p).and_then(Value::as_str).map(excerpt::bare);
    match (s("/metadata/namespace"), s("/metadata/name")) {
        (Some(ns), Some(n)) => format!("{ns}/{n}"),
        (None, Some(n)) => n,
        _ => "?".to_string(),
    }
}

/// `Ok` if `path` is not a symbolic link leading out of the root (its parents were checked
/// as they were listed), why it is skipped otherwise.
fn check_link(root: &Root, path: &Path) -> Result<(), String> {
    let is_link = path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(());
    }
    match root.outside(path) {
        Some(target) => Err(format!(
            "skipped: a symbolic link to {}, outside the folder read",
            target.display()
        )),
        None => Ok(()),
    }
}

/// The object files under `dir` in name order, with the guest cluster they belong to (files
/// under `hosted-cluster/[<name>/]`). In a must-gather (a path through `namespaces/`) only the
/// folders of the kinds hosted mode reads are read. Links out of the root are skipped
/// ([`Root::check`]).
fn collect(
    root: &Root,
    dir: &Path,
    depth: usize,
    out: &mut Vec<(PathBuf, Option<String>)>,
    warnings: &mut Vec<HostedSnapshotWarning>,
) -> Result<(), SnapshotError> {
    let entries = std::fs::read_dir(dir).map_err(|error| SnapshotError::Read {
        path: dir.to_path_buf(),
        error,
    })?;
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if let Err(message) = check_link(root, &p) {
            warnings.push(HostedSnapshotWarning {
                path: p.clone(),
                message,
            });
            continue;
        }
        let rel = p.strip_prefix(root.given()).unwrap_or(&p);
        let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        if p.is_dir() {
            if depth + 1 < MAX_DEPTH
                && let Err(e) = collect(root, &p, depth + 1, out, warnings)
            {
                warnings.push(HostedSnapshotWarning {
                    path: p.clone(),
                    message: format!("skipped: {e}"),
                });
            }
            continue;
        }
        let is_object_file = p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"));
        if !is_object_file {
            continue;
        }
        let in_must_gather =
            parts.contains(&"namespaces") || parts.contains(&"cluster-scoped-resources");
        let guest_at = parts.iter().position(|c| *c == GUEST_DIR);
        if in_must_gather
            && guest_at.is_none()
            && !parts.iter().any(|c| MUST_GATHER_DIRS.contains(c))
        {
            continue;
        }
        let guest = guest_at.map(|i| {
            // hosted-cluster/<name>/file → <name>; hosted-cluster/file → "".
            if parts.len() > i + 2 {
                parts[i + 1].to_string()
            } else {
                String::new()
            }
        });
        out.push((p, guest));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, text).expect("write");
    }

    #[test]
    fn reads_objects_by_kind_and_warns_about_bad_ones() {
        let tmp = std::env::temp_dir().join(format!("hosted-snap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        write(
            &tmp,
            "hc.yaml",
            "apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedCluster\nmetadata: {name: demo, namespace: clusters}\nspec: {release: {image: x}}\n---\nkind: HostedCluster\nmetadata: {name: broken, namespace: clusters}\nspec: {release: 7}\n",
        );
        write(
            &tmp,
            "capi.json",
            r#"{"kind": "List", "items": [{"kind": "Machine", "metadata": {"name": "m1"}, "spec": {}}, {"kind": "Secret", "metadata": {"name": "s"}}]}"#,
        );
        write(&tmp, "garbage.yaml", "{ not: [valid");
        write(
            &tmp,
            "hosted-cluster/nodes.yaml",
            "kind: Node\nmetadata: {name: n1}\n",
        );
        write(&tmp, "now", "2026-01-01T10:00:00Z\n");
        let snap = HostedSnapshot::from_dir(&tmp).expect("read");
        assert_eq!(snap.hosted_clusters.len(), 1);
        assert_eq!(snap.machines.len(), 1);
        assert_eq!(snap.guest("demo").map(|g| g.nodes.len()), Some(1));
        assert_eq!(snap.now, Some("2026-01-01T10:00:00Z".parse().expect("ts")));
        let text: Vec<String> = snap.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 3, "{text:#?}");
        assert!(
            text.iter()
                .any(|w| w.contains("capi.json") && w.contains("Secret s")),
            "{text:#?}"
        );
        assert!(
            text.iter()
                .any(|w| w.contains("garbage.yaml") && w.contains("skipped")),
            "{text:#?}"
        );
        assert!(
            text.iter()
                .any(|w| w.contains("hc.yaml") && w.contains("HostedCluster clusters/broken")),
            "{text:#?}"
        );
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn reads_a_management_must_gather_layout() {
        let tmp = std::env::temp_dir().join(format!("hosted-mg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let ns = "mg/quay-io-x/namespaces";
        write(
            &tmp,
            &format!("{ns}/clusters/hypershift.openshift.io/hostedclusters/demo.yaml"),
            "kind: HostedCluster\nmetadata: {name: demo, namespace: clusters}\nspec: {}\n",
        );
        write(
            &tmp,
            &format!("{ns}/clusters/hypershift.openshift.io/nodepools/np1.yaml"),
            "kind: NodePool\nmetadata: {name: np1, namespace: clusters}\nspec: {clusterName: demo}\n",
        );
        write(
            &tmp,
            &format!("{ns}/clusters-demo/cluster.x-k8s.io/machinedeployments/np1.yaml"),
            "kind: MachineDeployment\nmetadata: {name: np1, namespace: clusters-demo}\nspec: {}\n",
        );
        // Other must-gather content is not read (no warning about it either).
        write(
            &tmp,
            &format!("{ns}/clusters/core/pods.yaml"),
            "kind: PodList\nitems: []\n",
        );
        let snap = HostedSnapshot::from_dir(&tmp).expect("read");
        assert_eq!(snap.hosted_clusters.len(), 1);
        assert_eq!(snap.node_pools.len(), 1);
        assert_eq!(snap.machine_deployments.len(), 1);
        assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
        let _ = std::fs::remove_dir_all(&tmp);
    }

    /// Links pointing out of the folder are not followed (neither to a folder nor to a file);
    /// links inside it are.
    #[test]
    fn symbolic_links_out_of_the_folder_are_never_followed() {
        let base = std::env::temp_dir().join(format!("hosted-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (tmp, outside) = (base.join("snapshot"), base.join("outside"));
        write(
            &tmp,
            "hc.yaml",
            "kind: HostedCluster\nmetadata: {name: demo, namespace: clusters}\nspec: {}\n",
        );
        write(
            &tmp,
            "inside/np.yaml",
            "kind: NodePool\nmetadata: {name: np1, namespace: clusters}\nspec: {clusterName: demo}\n",
        );
        write(
            &outside,
            "deep/hc.yaml",
            "kind: HostedCluster\nmetadata: {name: outside, namespace: clusters}\nspec: {}\n",
        );
        write(&outside, "now", "2030-01-01T00:00:00Z\n");
        std::os::unix::fs::symlink(&outside, tmp.join("escape")).expect("symlink");
        std::os::unix::fs::symlink(outside.join("deep/hc.yaml"), tmp.join("link.yaml"))
            .expect("symlink");
        std::os::unix::fs::symlink(tmp.join("inside/np.yaml"), tmp.join("np-link.yaml"))
            .expect("symlink");
        let snap = HostedSnapshot::from_dir(&tmp).expect("read");
        let names: Vec<&str> = snap.hosted_clusters.iter().map(|h| h.name()).collect();
        assert_eq!(names, ["demo"], "{:?}", snap.warnings);
        assert_eq!(
            snap.node_pools.len(),
            2,
            "the link inside the folder is followed"
        );
        let text: Vec<String> = snap.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 2, "{text:#?}");
        assert!(
            text.iter().all(|w| w.contains("outside the folder read")),
            "{text:#?}"
        );

        // A `now` file pointing out of the folder is refused.
        std::os::unix::fs::symlink(outside.join("now"), tmp.join("now")).expect("symlink");
        let err = HostedSnapshot::from_dir(&tmp).expect_err("refused");
        assert!(err.to_string().contains("outside the folder read"), "{err}");
        let _ = std::fs::remove_dir_all(&base);
    }
}
