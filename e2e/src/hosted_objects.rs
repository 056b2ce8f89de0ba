//! What the hosted e2e tests (`tests/hosted.rs`, `tests/hosted_guest.rs`) read back and
//! compare: our objects of one hosted cluster, reduced to what the controller decides (our
//! labels, owners, status), and a guard removing the cluster-wide RBAC they apply.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, ListParams};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus, labels,
};
use update_status_assess::compose::{Desired, DesiredCluster};

use crate::wait::kubectl_wait_retrying;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The objects of kind `K` in `ns` (those matching `selector`, if any), sorted by name.
pub async fn list<K>(client: &Client, ns: &str, selector: Option<&str>) -> Result<Vec<K>, BoxError>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let lp = selector.map_or_else(ListParams::default, |s| ListParams::default().labels(s));
    let mut items = api.list(&lp).await?.items;
    items.sort_by_key(|o| o.name_any());
    Ok(items)
}

/// Our objects of one hosted cluster, read back.
pub struct Live {
    /// Its ControlPlaneUpdateStatus (one).
    pub cps: Vec<ControlPlaneUpdateStatus>,
    /// Its WorkerPoolUpdateStatus objects.
    pub wps: Vec<WorkerPoolUpdateStatus>,
    /// Its UpdateInsights.
    pub insights: Vec<UpdateInsight>,
}

/// Our objects labelled for hosted cluster `cluster` in `ns`.
pub async fn live(client: &Client, ns: &str, cluster: &str) -> Result<Live, BoxError> {
    let sel = format!("{}={cluster}", labels::CLUSTER);
    Ok(Live {
        cps: list(client, ns, Some(&sel)).await?,
        wps: list(client, ns, Some(&sel)).await?,
        insights: list(client, ns, Some(&sel)).await?,
    })
}

/// Applies the vendored HyperShift and cluster-api CRDs (`testdata/hosted/crds`) server-side
/// and waits until they are served.
pub async fn install_hosted_crds(env: &crate::test_env::TestEnv) -> Result<(), BoxError> {
    let dir = crate::paths::repo_root().join("testdata/hosted/crds");
    let dir = dir.to_string_lossy();
    env.kubectl_ok([
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager",
        "update-status-e2e",
        "-f",
        &dir,
    ])
    .await?;
    kubectl_wait_retrying(Duration::from_secs(60), || {
        env.kubectl_ok([
            "wait",
            "--for",
            "condition=Established",
            "--timeout",
            "60s",
            "-f",
            &dir,
        ])
    })
    .await?;
    Ok(())
}

/// What we compare of one object: labels (ours only), owners, status.
pub type Seen = (BTreeMap<String, String>, Vec<OwnerReference>, Value);

fn ours(l: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    l.iter()
        .filter(|(k, _)| {
            k.starts_with("update.openshift.io/")
                && k.as_str() != labels::RECONCILER
                && k.as_str() != labels::MANAGED_BY
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn bare(o: &OwnerReference) -> OwnerReference {
    OwnerReference {
        block_owner_deletion: None,
        controller: None,
        ..o.clone()
    }
}

/// Desired objects as compared, by name.
pub fn seen_desired<S: Serialize>(d: &[&Desired<S>]) -> BTreeMap<String, Seen> {
    d.iter()
        .map(|d| {
            let status = serde_json::to_value(&d.status).unwrap_or_default();
            (
                d.name.clone(),
                (ours(&d.labels), d.owner.iter().map(bare).collect(), status),
            )
        })
        .collect()
}

/// Live objects as compared, by name.
pub fn seen_live<K: Resource, S: Serialize>(
    objs: &[K],
    status: impl Fn(&K) -> Option<&S>,
) -> BTreeMap<String, Seen> {
    objs.iter()
        .map(|o| {
            let owners = o
                .meta()
                .owner_references
                .iter()
                .flatten()
                .map(bare)
                .collect();
            let l = o.meta().labels.clone().unwrap_or_default();
            let status = serde_json::to_value(status(o)).unwrap_or_default();
            (
                o.meta().name.clone().unwrap_or_default(),
                (ours(&l), owners, status),
            )
        })
        .collect()
}

/// The kinds of [`seen_all`] and [`seen_all_live`], in their order.
pub const KINDS: [&str; 3] = [
    "ControlPlaneUpdateStatus",
    "WorkerPoolUpdateStatus",
    "UpdateInsight",
];

/// The three kinds of a [`DesiredCluster`] as compared.
pub fn seen_all(d: &DesiredCluster) -> [BTreeMap<String, Seen>; 3] {
    [
        seen_desired(&d.control_plane.iter().collect::<Vec<_>>()),
        seen_desired(&d.worker_pools.iter().collect::<Vec<_>>()),
        seen_desired(&d.insights.iter().collect::<Vec<_>>()),
    ]
}

/// The three kinds of [`Live`] objects as compared.
pub fn seen_all_live(got: &Live) -> [BTreeMap<String, Seen>; 3] {
    [
        seen_live(&got.cps, |o| o.status.as_ref()),
        seen_live(&got.wps, |o| o.status.as_ref()),
        seen_live(&got.insights, |o| o.status.as_ref()),
    ]
}

/// The differences between two sets of (name → what we compare) of `kind`, appended to `diffs`.
pub fn compare_seen(
    diffs: &mut Vec<String>,
    kind: &str,
    want: BTreeMap<String, Seen>,
    got: BTreeMap<String, Seen>,
) {
    for (name, w) in &want {
        match got.get(name) {
            None => diffs.push(format!("{kind} {name}: missing")),
            Some(g) if g != w => diffs.push(format!(
                "{kind} {name}: want {}\n got {}",
                serde_json::to_string(w).unwrap_or_default(),
                serde_json::to_string(g).unwrap_or_default()
            )),
            Some(_) => {}
        }
    }
    for name in got.keys().filter(|n| !want.contains_key(*n)) {
        diffs.push(format!("{kind} {name}: not wanted"));
    }
}

/// The differences between `want` and the objects `got`; empty when equal.
pub fn differences(want: &DesiredCluster, got: &Live) -> Vec<String> {
    let mut diffs = Vec::new();
    for ((kind, w), g) in KINDS
        .into_iter()
        .zip(seen_all(want))
        .zip(seen_all_live(got))
    {
        compare_seen(&mut diffs, kind, w, g);
    }
    diffs
}

/// Deletes the listed cluster-scoped objects (`kind/name`) when dropped, even when the test
/// fails: `config/hosted`'s ClusterRoleBinding binds the same ServiceAccount as
/// `config/default`, and left in place it would give that account hosted mode's writes in every
/// namespace, which the `service_account` test checks are denied.
pub struct ClusterRbacGuard {
    /// The kubeconfig of the test cluster.
    pub kubeconfig: PathBuf,
    /// `kind/name` of each object.
    pub objects: Vec<String>,
}

impl Drop for ClusterRbacGuard {
    fn drop(&mut self) {
        let out = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("delete")
            .args(&self.objects)
            .arg("--ignore-not-found")
            .stdin(std::process::Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!(
                "removing the cluster-wide RBAC failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => eprintln!("cannot run kubectl to remove the cluster-wide RBAC: {e}"),
        }
    }
}
