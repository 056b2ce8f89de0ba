//! Hosted mode (`--mode=hosted`) on a real kube-apiserver with the real HyperShift and
//! cluster-api CRDs (`testdata/hosted/crds/`, applied here server-side): a HostedCluster mid-update
//! with a Replace NodePool (MachineDeployment + Machines) and an InPlace NodePool (MachineSet).
//!
//! At three steps (control plane updating with one old Machine; a Machine replaced and the
//! InPlace pool failed with `InplaceUpgradeFailed`; the update done) the objects the controller
//! wrote must equal what `desired_hosted` wants from the same inputs read back from the API
//! (names, labels, owners, status). Then: a second HostedCluster in the same namespace and the
//! `update.openshift.io/cluster` label query; the CLI's `--hosted-cluster` view; and, with the
//! controller stopped, the garbage collector removing a deleted NodePool's objects and then a
//! deleted HostedCluster's.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use update_status_api::crd::{
    ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus, labels,
};
use update_status_api::hosted::{
    HostedCluster, Machine, MachineDeployment, MachineSet, NodePool, control_plane_namespace,
};
use update_status_assess::compose::{Desired, Existing, ExistingInsights};
use update_status_assess::hosted::{HostedInputs, desired_hosted};
use update_status_e2e::controller::Controller;
use update_status_e2e::{TestEnv, repo_root, wait_for};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

const TIMEOUT: Duration = Duration::from_secs(60);
/// The garbage collector notices a new kind (HostedCluster, NodePool) at its next discovery
/// resync (30 s): allow for it.
const GC_TIMEOUT: Duration = Duration::from_secs(120);
const NOW: &str = "2026-01-01T10:00:00Z";
const FM: &str = "update-status-e2e";

const IMG_OLD: &str = "quay.io/openshift-release-dev/ocp-release:4.15.1-x86_64";
const IMG_NEW: &str = "quay.io/openshift-release-dev/ocp-release:4.16.0-x86_64";

/// Applies the vendored HyperShift and cluster-api CRDs and waits until they are served.
async fn install_crds(env: &TestEnv) -> TestResult {
    let dir = repo_root().join("testdata/hosted/crds");
    let dir = dir.to_string_lossy();
    env.kubectl_ok([
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager",
        FM,
        "-f",
        &dir,
    ])
    .await?;
    env.kubectl_ok([
        "wait",
        "--for",
        "condition=Established",
        "--timeout",
        "60s",
        "-f",
        &dir,
    ])
    .await?;
    Ok(())
}

fn condition(type_: &str, status: &str, reason: &str, message: &str, at: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": at})
}

fn history(state: &str, version: &str, image: &str, started: &str, done: Option<&str>) -> Value {
    json!({"state": state, "version": version, "image": image, "startedTime": started,
           "completionTime": done, "verified": true})
}

/// A HostedCluster going to 4.16.0 (`done`: the control plane finished).
fn hosted_cluster(ns: &str, name: &str, done: bool) -> (Value, Value) {
    let services: Vec<Value> = ["APIServer", "OAuthServer", "Konnectivity", "Ignition"]
        .map(|s| json!({"service": s, "servicePublishingStrategy": {"type": "Route"}}))
        .into();
    let obj = json!({
        "apiVersion": "hypershift.openshift.io/v1beta1",
        "kind": "HostedCluster",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "release": {"image": IMG_NEW},
            "pullSecret": {"name": "pull-secret"},
            "etcd": {"managementType": "Managed", "managed": {"storage": {"type": "PersistentVolume"}}},
            "networking": {"networkType": "OVNKubernetes"},
            "platform": {"type": "None"},
            "services": services,
        },
    });
    let (first, progressing) = if done {
        (
            history(
                "Completed",
                "4.16.0",
                IMG_NEW,
                "2026-01-01T08:00:00Z",
                Some("2026-01-01T08:55:00Z"),
            ),
            condition(
                "ClusterVersionProgressing",
                "False",
                "FromClusterVersion",
                "Cluster version is 4.16.0",
                "2026-01-01T08:55:00Z",
            ),
        )
    } else {
        (
            history("Partial", "4.16.0", IMG_NEW, "2026-01-01T08:00:00Z", None),
            condition(
                "ClusterVersionProgressing",
                "True",
                "FromClusterVersion",
                "Working towards 4.16.0: 500 of 800 done (62% complete)",
                "2026-01-01T08:00:00Z",
            ),
        )
    };
    let status = json!({
        "version": {
            "desired": {"version": "4.16.0", "image": IMG_NEW},
            "observedGeneration": 1,
            "availableUpdates": [],
            "history": [first, history("Completed", "4.15.1", IMG_OLD, "2025-12-01T08:00:00Z", Some("2025-12-01T09:10:00Z"))],
        },
        "conditions": [
            condition("Available", "True", "AsExpected", "", "2025-12-01T08:30:00Z"),
            condition("Progressing", "False", "AsExpected", "", "2026-01-01T08:00:00Z"),
            progressing,
            condition("ClusterVersionSucceeding", "True", "FromClusterVersion", "", "2025-12-01T08:30:00Z"),
            condition("ValidReleaseImage", "True", "AsExpected", "", "2025-12-01T08:00:00Z"),
        ],
    });
    (obj, status)
}

/// A NodePool of `cluster` (`failed`: an InPlace rollout failed; `done`: at 4.16.0).
fn node_pool(ns: &str, name: &str, cluster: &str, in_place: bool, state: Step) -> (Value, Value) {
    let management = if in_place {
        json!({"upgradeType": "InPlace", "inPlace": {"maxUnavailable": 1}})
    } else {
        json!({"upgradeType": "Replace", "replace": {"strategy": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}})
    };
    let obj = json!({
        "apiVersion": "hypershift.openshift.io/v1beta1",
        "kind": "NodePool",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"clusterName": cluster, "replicas": 2, "release": {"image": IMG_NEW},
                 "management": management, "platform": {"type": "None"}},
    });
    let updating = match state {
        Step::Done => condition(
            "UpdatingVersion",
            "False",
            "AsExpected",
            "",
            "2026-01-01T09:50:00Z",
        ),
        Step::Failed if in_place => condition(
            "UpdatingVersion",
            "False",
            "InplaceUpgradeFailed",
            "Node edge-2 in nodepool degraded: failed to pull the OS image: manifest unknown",
            "2026-01-01T09:45:00Z",
        ),
        _ => condition(
            "UpdatingVersion",
            "True",
            "AsExpected",
            "Updating version in progress. Target version: 4.16.0",
            "2026-01-01T09:10:00Z",
        ),
    };
    let version = if state == Step::Done {
        "4.16.0"
    } else {
        "4.15.1"
    };
    let status = json!({
        "version": version,
        "replicas": 2,
        "conditions": [
            updating,
            condition("AllMachinesReady", "True", "AsExpected", "", "2025-12-02T10:00:00Z"),
            condition("AllNodesHealthy", "True", "AsExpected", "", "2025-12-02T10:00:00Z"),
        ],
    });
    (obj, status)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Updating,
    Failed,
    Done,
}

/// A Machine of pool `pool` at `version` (`healthy`: NodeHealthy=True).
fn machine(cp_ns: &str, ns: &str, name: &str, pool: &str, version: &str) -> (Value, Value) {
    let obj = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Machine",
        "metadata": {"name": name, "namespace": cp_ns, "annotations": {
            "hypershift.openshift.io/nodePool": format!("{ns}/{pool}"),
            "hypershift.openshift.io/release-version": version,
        }},
        "spec": {"clusterName": "demo", "version": version, "bootstrap": {"dataSecretName": "none"},
                 "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "AgentMachine", "name": name}},
    });
    let status = json!({
        "phase": "Running",
        "nodeRef": {"name": format!("node-{name}")},
        "conditions": [{"type": "NodeHealthy", "status": "True", "lastTransitionTime": "2026-01-01T09:25:00Z"}],
    });
    (obj, status)
}

fn machine_deployment(cp_ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineDeployment",
        "metadata": {"name": name, "namespace": cp_ns},
        "spec": {"clusterName": "demo", "replicas": 2, "selector": {"matchLabels": {"pool": name}},
                 "template": {"metadata": {"labels": {"pool": name}}, "spec": {"clusterName": "demo", "version": "4.16.0",
                   "bootstrap": {"dataSecretName": "none"},
                   "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "AgentMachineTemplate", "name": name}}}},
    })
}

fn machine_set(cp_ns: &str, name: &str, state: Step) -> Value {
    let (current, failed) = match state {
        Step::Done => ("5f2c9a1e", None),
        Step::Failed => (
            "0b7d44c3",
            Some("Node edge-2 in nodepool degraded: failed to pull the OS image: manifest unknown"),
        ),
        Step::Updating => ("0b7d44c3", None),
    };
    let mut annotations = json!({
        "hypershift.openshift.io/nodePoolTargetConfigVersion": "5f2c9a1e",
        "hypershift.openshift.io/nodePoolCurrentConfigVersion": current,
    });
    if let Some(m) = failed {
        annotations["hypershift.openshift.io/nodePoolUpgradeInProgressFalse"] = json!(m);
    }
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineSet",
        "metadata": {"name": name, "namespace": cp_ns, "annotations": annotations},
        "spec": {"clusterName": "demo", "replicas": 2, "selector": {"matchLabels": {"pool": name}},
                 "template": {"metadata": {"labels": {"pool": name}}, "spec": {"clusterName": "demo", "version": "4.16.0",
                   "bootstrap": {"dataSecretName": "none"},
                   "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "AgentMachineTemplate", "name": name}}}},
    })
}

/// Server-side applies `obj` (and its `status` through the status subresource).
async fn apply<K>(client: &Client, obj: &Value, status: Option<&Value>) -> Result<K, BoxError>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Serialize
        + std::fmt::Debug,
{
    let ns = obj["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let pp = PatchParams::apply(FM).force();
    let mut out = api
        .patch(name, &pp, &Patch::Apply(obj))
        .await
        .map_err(|e| format!("applying {} {ns}/{name}: {e}", K::kind(&())))?;
    if let Some(status) = status {
        let body = json!({"apiVersion": obj["apiVersion"], "kind": obj["kind"], "status": status});
        out = api
            .patch_status(name, &pp, &Patch::Apply(&body))
            .await
            .map_err(|e| format!("applying the status of {} {ns}/{name}: {e}", K::kind(&())))?;
    }
    Ok(out)
}

async fn list<K>(client: &Client, ns: &str, selector: Option<&str>) -> Result<Vec<K>, BoxError>
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

/// What we compare of one object: labels (ours only), owners, status.
type Seen = (BTreeMap<String, String>, Vec<OwnerReference>, Value);

fn ours(labels_: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    labels_
        .iter()
        .filter(|(k, _)| {
            k.starts_with("update.openshift.io/")
                && k.as_str() != labels::RECONCILER
                && k.as_str() != labels::MANAGED_BY
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn owners(o: &Option<OwnerReference>) -> Vec<OwnerReference> {
    o.iter()
        .map(|o| OwnerReference {
            block_owner_deletion: None,
            controller: None,
            ..o.clone()
        })
        .collect()
}

fn seen_desired<S: Serialize>(d: &[&Desired<S>]) -> BTreeMap<String, Seen> {
    d.iter()
        .map(|d| {
            (
                d.name.clone(),
                (
                    ours(&d.labels),
                    owners(&d.owner),
                    serde_json::to_value(&d.status).unwrap_or_default(),
                ),
            )
        })
        .collect()
}

fn seen_live<K: Resource, S: Serialize>(
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
                .map(|r| OwnerReference {
                    block_owner_deletion: None,
                    controller: None,
                    ..r.clone()
                })
                .collect();
            (
                o.meta().name.clone().unwrap_or_default(),
                (
                    ours(o.meta().labels.as_ref().unwrap_or(&BTreeMap::new())),
                    owners,
                    serde_json::to_value(status(o)).unwrap_or_default(),
                ),
            )
        })
        .collect()
}

/// The differences between what `desired_hosted` wants for `cluster` (inputs and our objects
/// read back from the API) and the objects there; empty when equal.
async fn differences(client: &Client, ns: &str, cluster: &str) -> Result<Vec<String>, BoxError> {
    let hc: HostedCluster = Api::namespaced(client.clone(), ns).get(cluster).await?;
    let cp_ns = control_plane_namespace(ns, cluster);
    let pools: Vec<NodePool> = list(client, ns, None).await?;
    let machines: Vec<Machine> = list(client, &cp_ns, None).await?;
    let sets: Vec<MachineSet> = list(client, &cp_ns, None).await?;
    let deployments: Vec<MachineDeployment> = list(client, &cp_ns, None).await?;
    let sel = format!("{}={cluster}", labels::CLUSTER);
    let cps: Vec<ControlPlaneUpdateStatus> = list(client, ns, Some(&sel)).await?;
    let wps: Vec<WorkerPoolUpdateStatus> = list(client, ns, Some(&sel)).await?;
    let insights: Vec<UpdateInsight> = list(client, ns, Some(&sel)).await?;
    let arcs: Vec<Arc<UpdateInsight>> = insights.iter().cloned().map(Arc::new).collect();
    let pools: Vec<NodePool> = pools
        .into_iter()
        .filter(|p| p.spec.cluster_name == cluster)
        .collect();
    let inputs = HostedInputs {
        hosted_cluster: &hc,
        node_pools: &pools,
        machines: &machines,
        machine_sets: &sets,
        machine_deployments: &deployments,
        guest: None,
        guest_unreachable: None,
    };
    let existing = Existing {
        control_plane: cps.iter().find(|c| c.name_any() == cluster),
        insights: ExistingInsights::new(&arcs),
    };
    let now: Timestamp = NOW.parse()?;
    let want = desired_hosted(&inputs, &existing, now).cluster;
    let mut diffs = Vec::new();
    let mut compare = |kind: &str, want: BTreeMap<String, Seen>, got: BTreeMap<String, Seen>| {
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
    };
    compare(
        "ControlPlaneUpdateStatus",
        seen_desired(&want.control_plane.iter().collect::<Vec<_>>()),
        seen_live(&cps, |o| o.status.as_ref()),
    );
    compare(
        "WorkerPoolUpdateStatus",
        seen_desired(&want.worker_pools.iter().collect::<Vec<_>>()),
        seen_live(&wps, |o| o.status.as_ref()),
    );
    compare(
        "UpdateInsight",
        seen_desired(&want.insights.iter().collect::<Vec<_>>()),
        seen_live(&insights, |o| o.status.as_ref()),
    );
    Ok(diffs)
}

/// Waits until the live objects of `cluster` are what `desired_hosted` wants (and there are
/// some: a ControlPlaneUpdateStatus named after the cluster).
async fn wait_equal(client: &Client, ns: &str, cluster: &str, step: &str) -> TestResult {
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let diffs = differences(client, ns, cluster).await?;
        let cps: Vec<ControlPlaneUpdateStatus> =
            list(client, ns, Some(&format!("{}={cluster}", labels::CLUSTER))).await?;
        if diffs.is_empty() && cps.iter().any(|c| c.name_any() == cluster) {
            let sel = format!("{}={cluster}", labels::CLUSTER);
            let wps = names::<WorkerPoolUpdateStatus>(client, ns, &sel).await?;
            let insights = names::<UpdateInsight>(client, ns, &sel).await?;
            eprintln!(
                "{step}: {cluster}: ControlPlaneUpdateStatus, {} WorkerPoolUpdateStatus, {} UpdateInsights equal desired_hosted",
                wps.len(),
                insights.len()
            );
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "{step}: live objects differ from desired_hosted:\n{}",
                diffs.join("\n")
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

async fn names<K>(client: &Client, ns: &str, selector: &str) -> Result<Vec<String>, BoxError>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    Ok(list::<K>(client, ns, Some(selector))
        .await?
        .iter()
        .map(|o| o.name_any())
        .collect())
}

/// The namespace of the Deployment (and the ServiceAccount, the Lease) in `config/hosted`.
const DEPLOY_NS: &str = "openshift-update-status";

/// Removes the cluster-wide RBAC of `config/hosted` when dropped, even on failure: it binds the
/// same ServiceAccount as `config/default` (`openshift-update-status/update-status-controller`),
/// and left in place it would give that account the hosted mode's writes in every namespace,
/// which the `service_account` test checks are denied.
struct HostedRbacGuard(std::path::PathBuf);

impl Drop for HostedRbacGuard {
    fn drop(&mut self) {
        let out = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.0)
            .args([
                "delete",
                "clusterrolebinding/update-status-controller-hosted",
                "clusterrole/update-status-controller-hosted",
                "--ignore-not-found",
            ])
            .stdin(std::process::Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!(
                "removing config/hosted's ClusterRole(Binding) failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => eprintln!("cannot run kubectl to remove config/hosted's RBAC: {e}"),
        }
    }
}

/// Applies `config/hosted` as `make deploy OVERLAY=hosted` does and mints a token of its
/// ServiceAccount.
async fn deploy_hosted(
    env: &TestEnv,
    ns: &str,
) -> Result<update_status_e2e::kubeconfig::ServiceAccountConfig, BoxError> {
    let config = repo_root().join("config/hosted");
    env.kubectl_ok([
        "apply",
        "--server-side",
        "--field-manager=update-status-deploy",
        "-k",
        config.to_str().ok_or("non-UTF-8 path")?,
    ])
    .await?;
    env.kubectl_ok([
        "delete",
        "leases",
        "--all",
        "-n",
        DEPLOY_NS,
        "--ignore-not-found",
    ])
    .await?;
    let dir = std::env::temp_dir().join(format!("update-status-e2e-hosted-{ns}"));
    std::fs::create_dir_all(&dir)?;
    Ok(update_status_e2e::kubeconfig::service_account_config(
        env,
        DEPLOY_NS,
        "update-status-controller",
        &dir,
    )
    .await?)
}

#[tokio::test]
async fn hosted_mode_writes_what_desired_hosted_wants() -> TestResult {
    let env = TestEnv::new().await?;
    install_crds(&env).await?;
    let client = env.client();
    let test_ns = env.namespace("hosted").await?;
    let ns = test_ns.name().to_string();
    let cp_ns = control_plane_namespace(&ns, "demo");
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.patch(
        &cp_ns,
        &PatchParams::apply(FM),
        &Patch::Apply(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": cp_ns}}),
        ),
    )
    .await?;

    // Step 1: control plane updating; Replace pool with one new and one old Machine; InPlace
    // pool rolling.
    let (o, s) = hosted_cluster(&ns, "demo", false);
    apply::<HostedCluster>(&client, &o, Some(&s)).await?;
    for (pool, in_place) in [("workers", false), ("edge", true)] {
        let (o, s) = node_pool(&ns, pool, "demo", in_place, Step::Updating);
        apply::<NodePool>(&client, &o, Some(&s)).await?;
    }
    apply::<MachineDeployment>(&client, &machine_deployment(&cp_ns, "workers"), None).await?;
    apply::<MachineSet>(&client, &machine_set(&cp_ns, "edge", Step::Updating), None).await?;
    for (name, version) in [("workers-new-a", "4.16.0"), ("workers-old-b", "4.15.1")] {
        let (o, s) = machine(&cp_ns, &ns, name, "workers", version);
        let m = apply::<Machine>(&client, &o, Some(&s)).await?;
        // Read back as v1beta1 from a v1beta2-stored CRD without a conversion webhook.
        assert_eq!(m.spec.version.as_deref(), Some(version), "{name}: {m:?}");
    }

    // The controller runs as its ServiceAccount with the shipped hosted-mode RBAC
    // (`config/hosted`), with leader election (the Lease Role).
    let _rbac = HostedRbacGuard(env.kubeconfig_path().to_path_buf());
    let sa = deploy_hosted(&env, &ns).await?;
    let controller = Controller::start_via(
        &sa.kubeconfig,
        DEPLOY_NS,
        &[
            "--mode=hosted",
            "--watch-namespace",
            &ns,
            "--assess-at",
            NOW,
            "--leader-elect",
        ],
    )?;
    let log = controller.log.clone();
    if let Err(e) = wait_equal(&client, &ns, "demo", "control plane updating").await {
        return Err(format!("{e}\ncontroller log:\n{}", std::fs::read_to_string(&log)?).into());
    }
    let wps =
        names::<WorkerPoolUpdateStatus>(&client, &ns, &format!("{}=demo", labels::CLUSTER)).await?;
    assert_eq!(
        wps,
        ["edge", "workers"],
        "one WorkerPoolUpdateStatus per NodePool"
    );

    // Step 2: the old Machine replaced; the InPlace pool failed.
    Api::<Machine>::namespaced(client.clone(), &cp_ns)
        .delete("workers-old-b", &DeleteParams::default())
        .await?;
    let (o, s) = machine(&cp_ns, &ns, "workers-new-c", "workers", "4.16.0");
    apply::<Machine>(&client, &o, Some(&s)).await?;
    let (o, s) = node_pool(&ns, "edge", "demo", true, Step::Failed);
    apply::<NodePool>(&client, &o, Some(&s)).await?;
    apply::<MachineSet>(&client, &machine_set(&cp_ns, "edge", Step::Failed), None).await?;
    wait_equal(&client, &ns, "demo", "machine replaced, in-place failed").await?;
    let insights =
        names::<UpdateInsight>(&client, &ns, &format!("{}=demo", labels::CLUSTER)).await?;
    let all: Vec<UpdateInsight> =
        list(&client, &ns, Some(&format!("{}=demo", labels::CLUSTER))).await?;
    assert!(
        all.iter().any(|i| serde_json::to_string(&i.status)
            .unwrap_or_default()
            .contains("InplaceUpgradeFailed")),
        "an insight reports the failed in-place update: {insights:?}"
    );

    // Step 3: all done.
    let (o, s) = hosted_cluster(&ns, "demo", true);
    apply::<HostedCluster>(&client, &o, Some(&s)).await?;
    for (pool, in_place) in [("workers", false), ("edge", true)] {
        let (o, s) = node_pool(&ns, pool, "demo", in_place, Step::Done);
        apply::<NodePool>(&client, &o, Some(&s)).await?;
    }
    apply::<MachineSet>(&client, &machine_set(&cp_ns, "edge", Step::Done), None).await?;
    wait_equal(&client, &ns, "demo", "update done").await?;

    // (c) A second HostedCluster in the same namespace: the label query separates them.
    let (o, s) = hosted_cluster(&ns, "other", false);
    apply::<HostedCluster>(&client, &o, Some(&s)).await?;
    let (o, s) = node_pool(&ns, "other-pool", "other", false, Step::Updating);
    apply::<NodePool>(&client, &o, Some(&s)).await?;
    wait_equal(&client, &ns, "other", "second hosted cluster").await?;
    wait_equal(&client, &ns, "demo", "first hosted cluster, with a second").await?;
    for (cluster, other) in [("demo", "other"), ("other", "demo")] {
        let out = env
            .kubectl_ok([
                "get",
                "updateinsights",
                "-A",
                "-l",
                &format!("{}={cluster}", labels::CLUSTER),
                "-o",
                "name",
            ])
            .await?;
        let listed: Vec<&str> = out.lines().collect();
        assert!(!listed.is_empty(), "{cluster} has insights");
        for l in &listed {
            assert!(
                l.starts_with(&format!("updateinsight.update.openshift.io/{cluster}-")),
                "{cluster}'s query lists only its insights, got {l} (the other is {other})"
            );
        }
    }

    // (d) The CLI renders a hosted cluster.
    let (o, s) = hosted_cluster(&ns, "demo", false);
    apply::<HostedCluster>(&client, &o, Some(&s)).await?;
    for (pool, in_place) in [("workers", false), ("edge", true)] {
        let (o, s) = node_pool(&ns, pool, "demo", in_place, Step::Updating);
        apply::<NodePool>(&client, &o, Some(&s)).await?;
    }
    wait_equal(&client, &ns, "demo", "updating again, for the CLI").await?;
    let out = env.plugin(&["-n", &ns, "--hosted-cluster", "demo", "--now", NOW])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "kubectl-update_status --hosted-cluster: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in ["Control Plane", "Worker Upgrade", "workers", "edge"] {
        assert!(
            stdout.contains(want),
            "the CLI output names {want:?}:\n{stdout}"
        );
    }
    assert!(
        !stdout.contains("other-pool"),
        "only demo's pools:\n{stdout}"
    );

    // (b) Garbage collection, with the controller stopped (it would delete them itself).
    drop(controller);
    let log = std::fs::read_to_string(&log)?;
    assert!(
        // Not a bare "403": a log timestamp such as 01:36:59.664034 contains it.
        !log.to_lowercase().contains("forbidden") && !log.contains("code: 403"),
        "the shipped RBAC is enough:\n{log}"
    );
    let sel = format!("{}=demo", labels::CLUSTER);
    Api::<NodePool>::namespaced(client.clone(), &ns)
        .delete("edge", &DeleteParams::background())
        .await?;
    wait_for(GC_TIMEOUT, "the deleted NodePool's objects collected", || {
        let (client, ns, sel) = (client.clone(), ns.clone(), sel.clone());
        async move {
            let wps = names::<WorkerPoolUpdateStatus>(&client, &ns, &sel).await;
            let ins: Result<Vec<UpdateInsight>, _> = list(&client, &ns, Some(&sel)).await;
            matches!((wps, ins), (Ok(w), Ok(i)) if !w.iter().any(|n| n == "edge")
                && !i.iter().any(|i| i.owner_references().iter().any(|r| r.kind == "NodePool" && r.name == "edge")))
        }
    })
    .await?;
    let left = names::<WorkerPoolUpdateStatus>(&client, &ns, &sel).await?;
    assert_eq!(left, ["workers"], "the other pool's status stays");
    Api::<HostedCluster>::namespaced(client.clone(), &ns)
        .delete("demo", &DeleteParams::background())
        .await?;
    Api::<NodePool>::namespaced(client.clone(), &ns)
        .delete("workers", &DeleteParams::background())
        .await?;
    wait_for(GC_TIMEOUT, "the deleted HostedCluster's objects collected", || {
        let (client, ns, sel) = (client.clone(), ns.clone(), sel.clone());
        async move {
            let a = names::<ControlPlaneUpdateStatus>(&client, &ns, &sel).await;
            let b = names::<WorkerPoolUpdateStatus>(&client, &ns, &sel).await;
            let c = names::<UpdateInsight>(&client, &ns, &sel).await;
            matches!((a, b, c), (Ok(a), Ok(b), Ok(c)) if a.is_empty() && b.is_empty() && c.is_empty())
        }
    })
    .await?;
    let other =
        names::<ControlPlaneUpdateStatus>(&client, &ns, &format!("{}=other", labels::CLUSTER))
            .await?;
    assert_eq!(other, ["other"], "the other HostedCluster's objects stay");

    let _ = nss.delete(&cp_ns, &DeleteParams::background()).await;
    test_ns.delete().await?;
    Ok(())
}

/// Flags hosted mode does not support stop the controller at start, naming the flag (no
/// cluster needed: it exits before connecting).
#[test]
fn hosted_mode_refuses_unsupported_flags() -> TestResult {
    let bin = update_status_e2e::controller::workspace_bin(
        "update-status-controller",
        "UPDATE_STATUS_CONTROLLER_BIN",
    );
    for (flags, named) in [
        (
            &["--hosted-kubeconfig-access"][..],
            "--hosted-kubeconfig-access is not implemented yet",
        ),
        (
            &["--prometheus-url", "https://prometheus.example:9091"][..],
            "--prometheus-url not supported with --mode=hosted",
        ),
    ] {
        let out = std::process::Command::new(&bin)
            .arg("--mode=hosted")
            .args(flags)
            .env("KUBECONFIG", "/nonexistent")
            .output()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flags:?} refused");
        assert!(stderr.contains(named), "{flags:?}: {stderr}");
    }
    Ok(())
}
