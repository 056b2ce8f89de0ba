//! Standing in for kubelet, which the test clusters do not run: a Deployment reported available,
//! and a Secret projected into a directory as a secret volume is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use crate::ocm::error::{OcmError, api_err, io_err};

/// Reports the Deployment `namespace/name` as rolled out with all its replicas available, as
/// kubelet and the deployment controller would (neither runs in the test clusters): the work
/// agent then feeds the replicas back to the hub, and the add-on manager's health check makes the
/// ManagedClusterAddOn `Available`.
pub async fn set_deployment_available(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<(), OcmError> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let d = api
        .get(name)
        .await
        .map_err(api_err(format!("reading Deployment {namespace}/{name}")))?;
    let replicas = d.spec.replicas.unwrap_or(1);
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map_err(|e| OcmError::Unexpected(format!("rounding the time: {e}")))?
        .to_string();
    let condition = |type_: &str, reason: &str| {
        json!({
            "type": type_, "status": "True", "reason": reason,
            "message": "set by the e2e harness, standing in for kubelet",
            "lastUpdateTime": now, "lastTransitionTime": now,
        })
    };
    let status = json!({"status": {
        "observedGeneration": d.metadata.generation.unwrap_or(1),
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            condition("Available", "MinimumReplicasAvailable"),
            condition("Progressing", "NewReplicaSetAvailable"),
        ],
    }});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .map_err(api_err(format!(
            "setting the status of Deployment {namespace}/{name}"
        )))?;
    Ok(())
}

#[derive(Default)]
struct VolumeState {
    writes: u64,
    last: Option<BTreeMap<String, ByteString>>,
    error: Option<String>,
}

/// A Secret of a managed cluster materialised into a directory the way kubelet's secret volume
/// does, and kept up to date while this value lives: every key is a symbolic link `<key>` ->
/// `..data/<key>`, `..data` a symbolic link to a timestamped directory holding the files, swapped
/// atomically (rename) when the Secret's data changes. A deleted Secret leaves the last content,
/// as for a running pod. This stands in for kubelet, which the test clusters do not run.
pub struct SecretVolume {
    dir: PathBuf,
    state: Arc<Mutex<VolumeState>>,
    writes: tokio::sync::watch::Receiver<u64>,
    task: tokio::task::JoinHandle<()>,
    label: String,
}

impl Drop for SecretVolume {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SecretVolume {
    /// Starts projecting Secret `namespace/name` into `dir` (created; must be empty or absent)
    /// and waits for the first write (the Secret must exist within `timeout`).
    pub async fn mount(
        client: &Client,
        namespace: &str,
        name: &str,
        dir: &Path,
        timeout: Duration,
    ) -> Result<SecretVolume, OcmError> {
        let label = format!("Secret {namespace}/{name} projected into {}", dir.display());
        std::fs::create_dir_all(dir).map_err(io_err(format!("creating {}", dir.display())))?;
        let not_empty = std::fs::read_dir(dir)
            .map_err(io_err(format!("reading {}", dir.display())))?
            .next()
            .is_some();
        if not_empty {
            return Err(OcmError::Unexpected(format!(
                "{label}: {} is not empty",
                dir.display()
            )));
        }
        let state = Arc::new(Mutex::new(VolumeState::default()));
        let (tx, rx) = tokio::sync::watch::channel(0u64);
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let (task_dir, task_state, task_label) = (dir.to_path_buf(), state.clone(), label.clone());
        let task = tokio::spawn(async move {
            let mut events = watcher(api, config)
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(event) = events.next().await {
                let secret = match event {
                    Ok(s) => s,
                    Err(e) => {
                        // The watcher retries with back-off; remember the error for the report.
                        if let Ok(mut st) = task_state.lock() {
                            st.error = Some(format!("{task_label}: watch: {e}"));
                        }
                        continue;
                    }
                };
                let data = secret.data.clone().unwrap_or_default();
                let Ok(mut st) = task_state.lock() else {
                    return;
                };
                if st.last.as_ref() == Some(&data) {
                    continue;
                }
                match write_atomically(&task_dir, &data, st.writes) {
                    Ok(()) => {
                        st.writes += 1;
                        st.last = Some(data);
                        st.error = None;
                        let _ = tx.send(st.writes);
                    }
                    Err(e) => st.error = Some(format!("{task_label}: {e}")),
                }
            }
        });
        let volume = SecretVolume {
            dir: dir.to_path_buf(),
            state,
            writes: rx,
            task,
            label,
        };
        volume.wait_writes(1, timeout).await?;
        Ok(volume)
    }

    /// The directory (what the container would see at its mount path).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<dir>/kubeconfig`: the `{{HUB_KUBECONFIG}}` of a template add-on, here.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    /// How many times the content was written (1 after [`SecretVolume::mount`]).
    pub fn writes(&self) -> u64 {
        *self.writes.borrow()
    }

    /// Waits until the content was written at least `n` times.
    pub async fn wait_writes(&self, n: u64, timeout: Duration) -> Result<(), OcmError> {
        let mut rx = self.writes.clone();
        let waited = tokio::time::timeout(timeout, rx.wait_for(|w| *w >= n)).await;
        match waited {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(OcmError::Unexpected(format!(
                "{}: the projection stopped",
                self.label
            ))),
            Err(_) => {
                let error = self
                    .state
                    .lock()
                    .ok()
                    .and_then(|s| s.error.clone())
                    .map(|e| format!(" (last error: {e})"))
                    .unwrap_or_default();
                Err(OcmError::Timeout {
                    what: format!("write {n} of the {}{error}", self.label),
                    timeout,
                })
            }
        }
    }
}

static VOLUME_SEQ: AtomicU64 = AtomicU64::new(0);

/// kubelet's AtomicWriter, reduced: a new timestamped directory with the files, `..data`
/// switched to it by renaming a fresh symbolic link over it, the per-key links, the old
/// directory removed.
fn write_atomically(
    dir: &Path,
    data: &BTreeMap<String, ByteString>,
    generation: u64,
) -> Result<(), String> {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let ts = jiff::Timestamp::now().strftime("%Y_%m_%d_%H_%M_%S");
    let seq = VOLUME_SEQ.fetch_add(1, Ordering::Relaxed);
    let versioned = format!("..{ts}.{generation}-{seq}");
    let new_dir = dir.join(&versioned);
    std::fs::create_dir(&new_dir).map_err(|e| format!("creating {}: {e}", new_dir.display()))?;
    let written = data.iter().try_for_each(|(key, value)| {
        if key.contains('/') || key.starts_with("..") || key.is_empty() {
            return Err(format!("Secret key {key:?} cannot be a file name"));
        }
        let file = new_dir.join(key);
        std::fs::write(&file, &value.0).map_err(|e| format!("writing {}: {e}", file.display()))?;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644))
            .map_err(|e| format!("chmod {}: {e}", file.display()))
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&new_dir);
        return Err(e);
    }
    let old = std::fs::read_link(dir.join("..data")).ok();
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    symlink(&versioned, &tmp).map_err(|e| format!("linking {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join("..data"))
        .map_err(|e| format!("switching {}/..data: {e}", dir.display()))?;
    for key in data.keys() {
        let link = dir.join(key);
        if std::fs::symlink_metadata(&link).is_err() {
            symlink(format!("..data/{key}"), &link)
                .map_err(|e| format!("linking {}: {e}", link.display()))?;
        }
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("..") && !data.contains_key(&name) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    if let Some(old) = old.filter(|o| o.as_os_str() != versioned.as_str()) {
        let _ = std::fs::remove_dir_all(dir.join(old));
    }
    Ok(())
}
