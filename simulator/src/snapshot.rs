//! The simulated cluster as a snapshot folder, for `kubectl update-status --from-dir`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::error::SimError;
use super::state::ObjectRef;
use super::state::Simulation;

impl Simulation {
    /// Writes the cluster as a snapshot folder (the `testdata/oc-status` layout, JSON
    /// lists) that `kubectl update-status --from-dir` reads, with a `now` file holding the
    /// current simulated instant.
    pub fn write_snapshot(&self, dir: &Path) -> Result<(), SimError> {
        let io = |path: PathBuf| move |source| SimError::Io { path, source };
        std::fs::create_dir_all(dir).map_err(io(dir.to_path_buf()))?;
        let mut groups: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
        for r in self.object_refs() {
            let file = match r {
                ObjectRef::MachineConfig(_) => "machineconfigs.yaml",
                ObjectRef::Pool(_) => "machineconfigpools.yaml",
                ObjectRef::ClusterVersion => "clusterversion.yaml",
                ObjectRef::Operator(_) => "clusteroperators.yaml",
                ObjectRef::Node(_) => "nodes.yaml",
                ObjectRef::McoDeployment => "mco-deployment.yaml",
            };
            if let Some(v) = self.object(r) {
                groups.entry(file).or_default().push(v);
            }
        }
        for (file, items) in groups {
            let path = dir.join(file);
            // One object, as oc's `--mock-clusterversion` inputs hold it; the others are lists.
            let body = match (file, items.as_slice()) {
                ("mco-deployment.yaml", [one]) => one.clone(),
                _ => json!({"apiVersion": "v1", "kind": "List", "items": items}),
            };
            let text = serde_json::to_string(&body).map_err(|source| SimError::Json {
                what: file.to_string(),
                source,
            })?;
            std::fs::write(&path, text).map_err(io(path.clone()))?;
        }
        let path = dir.join("now");
        std::fs::write(&path, format!("{}\n", self.now())).map_err(io(path.clone()))?;
        Ok(())
    }
}
