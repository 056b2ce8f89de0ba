//! What a fleet hub should hold for a cluster's objects (the hub sync's copies), read with
//! kubectl as a fleet admin would, and compared with the local objects: shared by the hub
//! tests of both modes (`hub_sync`, `hosted_hub_sync`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::test_env::TestEnv;
use crate::wait::poll_until;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// For the hub copies to converge: includes the hub watches' back-off (up to 30 s) after a
/// forbidden or failed list, and the sync's own (up to 60 s).
pub const HUB_TIMEOUT: Duration = Duration::from_secs(120);
/// The ACM label every copy carries.
pub const ACM_LABEL: &str = "open-cluster-management.io/cluster-name";
/// Our reconciler label.
pub const RECONCILER_LABEL: &str = "update.openshift.io/reconciler";
/// The kinds copied.
pub const KINDS: [&str; 3] = [
    "controlplaneupdatestatuses",
    "workerpoolupdatestatuses",
    "updateinsights",
];

/// The objects of `kind` (a kubectl resource name) in `ns`, as JSON.
pub async fn list(env: &TestEnv, kind: &str, ns: &str) -> Result<Vec<Value>, BoxError> {
    list_selected(env, kind, ns, None).await
}

/// The objects of `kind` in `ns` matching the label `selector` (`None`: all), as JSON.
pub async fn list_selected(
    env: &TestEnv,
    kind: &str,
    ns: &str,
    selector: Option<&str>,
) -> Result<Vec<Value>, BoxError> {
    list_at(env.kubeconfig_path(), kind, ns, selector).await
}

/// [`list_selected`] on the cluster of `kubeconfig` (a hub and a managed cluster apart).
pub async fn list_at(
    kubeconfig: &Path,
    kind: &str,
    ns: &str,
    selector: Option<&str>,
) -> Result<Vec<Value>, BoxError> {
    let mut args = vec!["get", kind, "-n", ns, "-o", "json"];
    if let Some(s) = selector {
        args.extend(["-l", s]);
    }
    let out = crate::ocm::kubectl(kubeconfig, args).await?;
    let v: Value = serde_json::from_str(&out)?;
    Ok(v["items"].as_array().cloned().unwrap_or_default())
}

/// `metadata.name`.
pub fn name(o: &Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or_default()
}

/// `metadata.labels`.
pub fn labels(o: &Value) -> BTreeMap<String, String> {
    o["metadata"]["labels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// A progress insight.
pub fn is_progress(o: &Value) -> bool {
    o["status"]["type"] == "Progress"
}

/// What the hub should hold for one local object: its copy's name, labels and status.
pub fn expected_copy(
    o: &Value,
    kind: &str,
    cluster: &str,
) -> (String, BTreeMap<String, String>, Value) {
    let name = if kind == "controlplaneupdatestatuses" {
        cluster.to_string()
    } else {
        name(o).to_string()
    };
    let mut l: BTreeMap<String, String> = labels(o)
        .into_iter()
        .filter(|(k, _)| {
            k.starts_with("update.openshift.io/") || k == "app.kubernetes.io/managed-by"
        })
        .collect();
    l.insert(RECONCILER_LABEL.into(), "hub-sync".into());
    l.insert(ACM_LABEL.into(), cluster.into());
    (name, l, o["status"].clone())
}

/// A copy's status without the agent's own health (the condition `AgentDegraded` the agent adds
/// to its control plane's copy: the local object has none).
pub fn without_agent_health(status: &Value) -> Value {
    let mut s = status.clone();
    // `get_mut`, not `s["conditions"]`: indexing a map mutably inserts a null for a missing key.
    if let Some(conditions) = s.get_mut("conditions").and_then(Value::as_array_mut) {
        conditions.retain(|c| c["type"] != "AgentDegraded");
        if conditions.is_empty()
            && let Some(o) = s.as_object_mut()
        {
            o.remove("conditions");
        }
    }
    s
}

/// Where the local objects of one cluster are: a namespace (standalone), and in hosted mode
/// the `update.openshift.io/cluster` label of one HostedCluster.
#[derive(Clone, Copy, Debug)]
pub struct Local<'a> {
    /// The namespace of the local objects.
    pub namespace: &'a str,
    /// Hosted mode: the HostedCluster whose objects are copied.
    pub hosted_cluster: Option<&'a str>,
    /// On an ACM hub: the uid of the ManagedClusterAddOn every copy must be owned by (`None`:
    /// the copies have no owner).
    pub owner_uid: Option<&'a str>,
}

impl<'a> From<&'a str> for Local<'a> {
    fn from(namespace: &'a str) -> Self {
        Local {
            namespace,
            hosted_cluster: None,
            owner_uid: None,
        }
    }
}

/// Compares the hub namespace `cluster` with the local objects; `Err` says the first
/// difference; `Ok`: the number of copies.
pub async fn hub_mirrors_local(
    env: &TestEnv,
    local: Local<'_>,
    cluster: &str,
    include_progress: bool,
) -> Result<usize, String> {
    let kc = env.kubeconfig_path();
    mirrors_between(kc, kc, local, cluster, include_progress).await
}

/// [`hub_mirrors_local`] with the local objects on the cluster of `local_kc` and the copies on
/// the hub of `hub_kc`.
pub async fn mirrors_between(
    local_kc: &Path,
    hub_kc: &Path,
    local: Local<'_>,
    cluster: &str,
    include_progress: bool,
) -> Result<usize, String> {
    let selector = local
        .hosted_cluster
        .map(|c| format!("update.openshift.io/cluster={c}"));
    let mut copies = 0;
    for kind in KINDS {
        let here = list_at(local_kc, kind, local.namespace, selector.as_deref())
            .await
            .map_err(|e| e.to_string())?;
        let there = list_at(hub_kc, kind, cluster, None)
            .await
            .map_err(|e| e.to_string())?;
        let want: BTreeMap<String, (BTreeMap<String, String>, Value)> = here
            .iter()
            .filter(|o| include_progress || !is_progress(o))
            .map(|o| {
                let (n, mut l, s) = expected_copy(o, kind, cluster);
                if let Some(hc) = local.hosted_cluster {
                    // A hosted cluster's copies name their HostedCluster (its session sees and
                    // deletes only those).
                    l.insert(
                        "update.openshift.io/hosted-cluster".into(),
                        format!("{}.{hc}", local.namespace),
                    );
                }
                (n, (l, s))
            })
            .collect();
        let have: BTreeMap<String, &Value> =
            there.iter().map(|o| (name(o).to_string(), o)).collect();
        let want_names: Vec<&String> = want.keys().collect();
        let have_names: Vec<&String> = have.keys().collect();
        if want_names != have_names {
            return Err(format!(
                "{kind}: hub has {have_names:?}, want {want_names:?}"
            ));
        }
        for (n, (l, s)) in &want {
            let o = have[n];
            if &labels(o) != l {
                return Err(format!("{kind} {n}: labels {:?}, want {l:?}", labels(o)));
            }
            let status = without_agent_health(&o["status"]);
            if &status != s {
                return Err(format!("{kind} {n}: status {status}, want {s}"));
            }
            let owners = &o["metadata"]["ownerReferences"];
            match local.owner_uid {
                None if !owners.is_null() => {
                    return Err(format!("{kind} {n}: has owner references"));
                }
                Some(uid)
                    if owners[0]["kind"] != "ManagedClusterAddOn"
                        || owners[0]["uid"] != uid
                        || owners.as_array().map(Vec::len) != Some(1) =>
                {
                    return Err(format!(
                        "{kind} {n}: owner references {owners}, want the ManagedClusterAddOn {uid}"
                    ));
                }
                _ => {}
            }
        }
        copies += want.len();
    }
    Ok(copies)
}

/// Waits until the hub namespace `cluster` mirrors the local objects; returns how long it
/// took.
pub async fn wait_mirrored(
    env: &TestEnv,
    local: impl Into<Local<'_>>,
    cluster: &str,
    include_progress: bool,
    what: &str,
    log: &Path,
) -> Result<Duration, BoxError> {
    let kc = env.kubeconfig_path();
    wait_mirrored_between(kc, kc, local, cluster, include_progress, what, log).await
}

/// [`wait_mirrored`] with the local objects on the cluster of `local_kc` and the copies on the
/// hub of `hub_kc`.
pub async fn wait_mirrored_between(
    local_kc: &Path,
    hub_kc: &Path,
    local: impl Into<Local<'_>>,
    cluster: &str,
    include_progress: bool,
    what: &str,
    log: &Path,
) -> Result<Duration, BoxError> {
    let local = local.into();
    let started = Instant::now();
    let last = Mutex::new(String::new());
    let r = poll_until(HUB_TIMEOUT, what, || async {
        match mirrors_between(local_kc, hub_kc, local, cluster, include_progress).await {
            Ok(n) if n > 0 => Some(()),
            Ok(_) => {
                if let Ok(mut l) = last.lock() {
                    *l = "nothing to copy yet".into();
                }
                None
            }
            Err(e) => {
                if let Ok(mut l) = last.lock() {
                    *l = e;
                }
                None
            }
        }
    })
    .await;
    match r {
        Ok(()) => Ok(started.elapsed()),
        Err(e) => Err(format!(
            "{e}: {} (controller log: {})",
            last.lock().map(|l| l.clone()).unwrap_or_default(),
            log.display()
        )
        .into()),
    }
}
