//! The local Open Cluster Management environment (`hack/ocm-env.sh`, `update_status_e2e::ocm`)
//! against the real OCM: a hub and `cluster1` joined, a minimal template add-on
//! (`testdata/ocm/probe-addon.yaml`) enabled for `cluster1`, then checked the way the update-status
//! add-on will rely on it: its Deployment arrives through the ManifestWork, rendered as the
//! add-on manager renders template add-ons; its hub credentials arrive in
//! `<addon>-hub-kubeconfig`, with the identity OCM documents and the permissions of its ClusterRole
//! in its own cluster's namespace only; it becomes `Available` once its Deployment is; a forced
//! rotation renews its certificate; disabling it removes what it installed.
//!
//! Also on this hub: a user bound to one ManagedClusterSet as ACM binds clusterset users
//! (`view` in its clusters' namespaces, `get` on its ManagedClusters by name) sees exactly its
//! clusters with `kubectl update-status --fleet`, which reads their namespaces one by one when
//! the cluster-wide lists are forbidden, and says which it could not read.
#![cfg(feature = "e2e")] // needs the local control planes and OCM: `make e2e`

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::RoleBinding;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use kube::{Client, ResourceExt};
use serde_json::json;
use update_status_e2e::addon_agent::wait_deployment;
use update_status_e2e::ocm::{
    self, HUB_KUBECONFIG_MOUNT, OcmEnv, SecretVolume, addon_groups, condition_status,
    hub_kubeconfig_secret, kinds, template_addon_user,
};
use update_status_e2e::{client_for, poll_until, repo_root};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const CLUSTER: &str = "cluster1";
const ADDON: &str = "ocm-env-probe";
/// The install namespace: the namespace of the template's (first) Deployment.
const ADDON_NS: &str = "ocm-env-probe";
const DEPLOYMENT: &str = "ocm-env-probe-agent";
/// For OCM to act on a change (a few controller round trips, a work status sync of 2s).
const TIMEOUT: Duration = Duration::from_secs(60);

fn probe_addon() -> PathBuf {
    repo_root().join("testdata/ocm/probe-addon.yaml")
}

async fn identity(client: &Client) -> Result<(String, Vec<String>), kube::Error> {
    let api: Api<SelfSubjectReview> = Api::all(client.clone());
    let review = api
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await?;
    let info = review.status.and_then(|s| s.user_info).unwrap_or_default();
    Ok((
        info.username.unwrap_or_default(),
        info.groups.unwrap_or_default(),
    ))
}

const PROBE_CONFIG_MAP: &str = "ocm-env-probe";

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        data: Some([("from".to_string(), "ocm_env".to_string())].into()),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn a_template_addon_gets_installed_credentials_rotation_and_removal() -> TestResult {
    let env = OcmEnv::shared(&[CLUSTER]).await?;
    let hub = env.hub_client().await?;
    let spoke = env.cluster_client(CLUSTER).await?;
    // In a task of its own, so that a failed assertion (a panic) is reported with the state of
    // the environment and cleaned up after like an error.
    let (task_hub, task_spoke) = (hub.clone(), spoke.clone());
    let result = ocm::run_scenario(env, "ocm_env", async move {
        scenario(env, &task_hub, &task_spoke).await
    })
    .await;
    // Leave the hub as it was for other tests of the process (the add-on is already disabled
    // when the scenario got that far).
    let _ = ocm::disable_addon(&hub, CLUSTER, ADDON).await;
    let _ = env.delete_on_hub(&probe_addon()).await;
    finished(env, result.is_ok()).await?;
    result
}

/// The tests of this binary.
const TESTS: usize = 2;

/// Counts a finished test; the last of [`TESTS`] stops the environment (if all passed) rather
/// than leave it running while the next test binary runs.
async fn finished(env: &OcmEnv, ok: bool) -> TestResult {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static DONE: AtomicUsize = AtomicUsize::new(0);
    static FAILED: AtomicUsize = AtomicUsize::new(0);
    if !ok {
        FAILED.fetch_add(1, Ordering::SeqCst);
    }
    if DONE.fetch_add(1, Ordering::SeqCst) + 1 == TESTS && FAILED.load(Ordering::SeqCst) == 0 {
        env.stop().await?;
    }
    Ok(())
}

async fn scenario(env: &OcmEnv, hub: &Client, spoke: &Client) -> TestResult {
    // What a failed earlier run against the same environment may have left
    // (UPDATE_STATUS_OCM_ENV_DIR).
    let cms: Api<ConfigMap> = Api::namespaced(hub.clone(), CLUSTER);
    let _ = cms.delete(PROBE_CONFIG_MAP, &DeleteParams::default()).await;

    let mc = ocm::wait_cluster_joined(hub, CLUSTER, TIMEOUT).await?;
    assert_eq!(
        mc.data.pointer("/spec/hubAcceptsClient"),
        Some(&json!(true)),
        "ManagedCluster {CLUSTER} is joined, so accepted"
    );

    env.kubectl_hub(["apply", "-f", &probe_addon().to_string_lossy()])
        .await?;
    ocm::enable_addon(hub, CLUSTER, ADDON).await?;

    // 1. The agent's manifests arrive through the ManifestWork, rendered.
    let work_name = format!("addon-{ADDON}-deploy-0");
    let works: Api<DynamicObject> =
        Api::namespaced_with(hub.clone(), CLUSTER, &kinds::manifest_work());
    let work = poll_until(
        TIMEOUT,
        &format!("ManifestWork {CLUSTER}/{work_name}"),
        || async { works.get_opt(&work_name).await.ok().flatten() },
    )
    .await?;
    let owner = work.owner_references().first().cloned();
    assert!(
        owner
            .as_ref()
            .is_some_and(|o| o.kind == "ManagedClusterAddOn"
                && o.name == ADDON
                && o.controller == Some(true)),
        "ManifestWork {CLUSTER}/{work_name} is owned by its ManagedClusterAddOn: {owner:?}"
    );
    let deployments: Api<Deployment> = Api::namespaced(spoke.clone(), ADDON_NS);
    let deployment = wait_deployment(spoke, ADDON_NS, DEPLOYMENT, CLUSTER, TIMEOUT).await?;
    let pod = deployment
        .spec
        .template
        .spec
        .clone()
        .ok_or("the Deployment has no pod template")?;
    let container = pod
        .containers
        .first()
        .ok_or("the Deployment has no container")?;
    let args = container.args.clone().unwrap_or_default();
    assert_eq!(
        args,
        [
            format!("--hub-kubeconfig={HUB_KUBECONFIG_MOUNT}/kubeconfig"),
            format!("--cluster-name={CLUSTER}"),
            "--unset-variable=[]".to_string(),
        ],
        "{{{{HUB_KUBECONFIG}}}} and {{{{CLUSTER_NAME}}}} expanded, an unknown variable to nothing"
    );
    let env_vars: Vec<(String, String)> = container
        .env
        .iter()
        .flatten()
        .map(|e| (e.name.clone(), e.value.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        env_vars,
        [
            (
                "HUB_KUBECONFIG".to_string(),
                format!("{HUB_KUBECONFIG_MOUNT}/kubeconfig")
            ),
            ("CLUSTER_NAME".to_string(), CLUSTER.to_string()),
        ],
        "the add-on manager also sets the values as environment variables"
    );
    let mount = container
        .volume_mounts
        .iter()
        .flatten()
        .find(|m| m.name == "hub-kubeconfig")
        .ok_or("no hub-kubeconfig volume mount")?;
    assert_eq!(mount.mount_path, HUB_KUBECONFIG_MOUNT);
    let volume = pod
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name == "hub-kubeconfig")
        .ok_or("no hub-kubeconfig volume")?;
    assert_eq!(
        volume
            .secret
            .as_ref()
            .and_then(|s| s.secret_name.as_deref()),
        Some(hub_kubeconfig_secret(ADDON).as_str())
    );
    assert_eq!(
        ocm::wait_addon_namespace(hub, CLUSTER, ADDON, TIMEOUT).await?,
        ADDON_NS,
        "the install namespace is the Deployment's"
    );

    // 2. The hub credentials arrive in <addon>-hub-kubeconfig, projected as a secret volume.
    let secret_name = hub_kubeconfig_secret(ADDON);
    let secret = ocm::wait_secret(
        spoke,
        ADDON_NS,
        &secret_name,
        &["kubeconfig", "tls.crt", "tls.key", "cluster-name"],
        TIMEOUT,
    )
    .await?;
    let kubeconfig = String::from_utf8(
        secret
            .data
            .as_ref()
            .and_then(|d| d.get("kubeconfig"))
            .map(|b| b.0.clone())
            .unwrap_or_default(),
    )?;
    assert!(
        kubeconfig.contains("client-certificate: tls.crt")
            && kubeconfig.contains("client-key: tls.key")
            && kubeconfig.contains("certificate-authority-data:"),
        "the kubeconfig refers to the certificate files next to it and embeds the hub CA:\n{kubeconfig}"
    );
    let mount_dir = std::env::temp_dir().join(format!(
        "update-status-e2e-ocm-volume-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&mount_dir);
    let volume = SecretVolume::mount(spoke, ADDON_NS, &secret_name, &mount_dir, TIMEOUT).await?;

    // 3. Its identity, and what it may do on the hub.
    let addon_client = client_for(&volume.kubeconfig()).await?;
    let (user, groups) = identity(&addon_client).await?;
    assert_eq!(user, template_addon_user(CLUSTER, ADDON));
    for g in addon_groups(CLUSTER, ADDON) {
        assert!(groups.contains(&g), "group {g} in {groups:?}");
    }
    let bindings: Api<RoleBinding> = Api::namespaced(hub.clone(), CLUSTER);
    let binding_name = format!("open-cluster-management:{ADDON}:clusterrole:agent");
    let binding = bindings.get(&binding_name).await?;
    assert_eq!(binding.role_ref.name, "ocm-env-probe-hub");
    let in_cluster_ns: Api<ConfigMap> = Api::namespaced(addon_client.clone(), CLUSTER);
    in_cluster_ns
        .create(&PostParams::default(), &config_map(PROBE_CONFIG_MAP))
        .await
        .map_err(|e| format!("the add-on may create ConfigMaps in hub namespace {CLUSTER}: {e}"))?;
    let in_default: Api<ConfigMap> = Api::namespaced(addon_client.clone(), "default");
    match in_default
        .create(&PostParams::default(), &config_map(PROBE_CONFIG_MAP))
        .await
    {
        Err(kube::Error::Api(s)) if s.code == 403 => {}
        other => {
            return Err(format!("the add-on must be forbidden in default, got {other:?}").into());
        }
    }

    // 4. Available once its Deployment is (the stand-in for kubelet).
    let mca = ocm::addons_api(hub, CLUSTER).get(ADDON).await?;
    assert_ne!(
        condition_status(&mca, "Available").as_deref(),
        Some("True"),
        "not Available before its Deployment has available replicas"
    );
    ocm::set_deployment_available(spoke, ADDON_NS, DEPLOYMENT).await?;
    ocm::wait_addon_condition(hub, CLUSTER, ADDON, "Available", "True", TIMEOUT).await?;

    // 5. A forced rotation: new certificate and key in the Secret, and in the projection.
    let writes = volume.writes();
    let rotation = ocm::force_rotation(hub, spoke, CLUSTER, ADDON, ADDON_NS, TIMEOUT).await?;
    assert_ne!(rotation.old_cert, rotation.new_cert);
    volume.wait_writes(writes + 1, TIMEOUT).await?;
    poll_until(
        TIMEOUT,
        "the new certificate in the projected volume",
        || async {
            let on_disk = std::fs::read(volume.dir().join("tls.crt")).ok()?;
            (on_disk == rotation.new_cert).then_some(())
        },
    )
    .await?;
    let rotated_client = client_for(&volume.kubeconfig()).await?;
    assert_eq!(
        identity(&rotated_client).await?.0,
        template_addon_user(CLUSTER, ADDON)
    );
    let after = Api::<Secret>::namespaced(spoke.clone(), ADDON_NS)
        .get(&secret_name)
        .await?;
    assert_eq!(
        after
            .data
            .as_ref()
            .and_then(|d| d.get("cluster-name"))
            .map(|b| b.0.as_slice()),
        Some(CLUSTER.as_bytes()),
        "the agent restored cluster-name"
    );

    // 6. Disabling the add-on removes what it installed, on the managed cluster and on the hub.
    ocm::disable_addon(hub, CLUSTER, ADDON).await?;
    ocm::wait_gone(
        &deployments,
        DEPLOYMENT,
        &format!("Deployment {ADDON_NS}/{DEPLOYMENT} on {CLUSTER}"),
        TIMEOUT,
    )
    .await?;
    ocm::wait_gone(
        &works,
        &work_name,
        &format!("ManifestWork {CLUSTER}/{work_name}"),
        TIMEOUT,
    )
    .await?;
    let secrets: Api<Secret> = Api::namespaced(spoke.clone(), ADDON_NS);
    ocm::wait_gone(
        &secrets,
        &secret_name,
        &format!("Secret {ADDON_NS}/{secret_name} on {CLUSTER}"),
        TIMEOUT,
    )
    .await?;
    ocm::wait_gone(
        &bindings,
        &binding_name,
        &format!("RoleBinding {CLUSTER}/{binding_name} on the hub"),
        TIMEOUT,
    )
    .await?;
    cms.delete(PROBE_CONFIG_MAP, &DeleteParams::default())
        .await?;
    drop(volume);
    let _ = std::fs::remove_dir_all(&mount_dir);
    Ok(())
}

/// Clusters of the clusterset test: (name, ManagedClusterSet).
const SET_CLUSTERS: [(&str, &str); 3] = [
    ("fv-east-1", "fv-east"),
    ("fv-east-2", "fv-east"),
    ("fv-west-1", "fv-west"),
];
const VIEWER: &str = "fv-east-viewer";

fn cli_bin() -> PathBuf {
    update_status_e2e::controller::workspace_bin("kubectl-update_status", "UPDATE_STATUS_CLI_BIN")
}

/// `kubectl update-status --fleet ARGS` with `kubeconfig`: (success, stdout, stderr).
fn fleet(kubeconfig: &std::path::Path, args: &[&str]) -> Result<(bool, String, String), BoxError> {
    let out = std::process::Command::new(cli_bin())
        .arg("--fleet")
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .stdin(std::process::Stdio::null())
        .output()?;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The hub objects of the clusterset test: our CRDs and the hub viewer role (`config/acm`), the
/// sets, their ManagedClusters (not joined: no agent is needed to hold hub copies) and
/// namespaces, a hub copy in each, and the user bound as ACM binds a clusterset's viewers.
fn clusterset_objects() -> serde_json::Value {
    let mut items = Vec::new();
    for set in ["fv-east", "fv-west"] {
        items.push(json!({"apiVersion": "cluster.open-cluster-management.io/v1beta2", "kind": "ManagedClusterSet",
            "metadata": {"name": set}, "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}}));
    }
    for (cluster, set) in SET_CLUSTERS {
        items.push(json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": cluster, "labels": {"cluster.open-cluster-management.io/clusterset": set}},
            "spec": {"hubAcceptsClient": false}}));
        items.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": cluster}}));
        // ACM's per-cluster role (get on the ManagedCluster by name), bound to the set's
        // viewers: every cluster the user may see, fv-west-1's too (its namespace is not).
        items.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": format!("open-cluster-management:view:{cluster}")},
            "rules": [{"apiGroups": ["cluster.open-cluster-management.io"], "resources": ["managedclusters"],
                "resourceNames": [cluster], "verbs": ["get", "list", "watch"]}]}));
        items.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": format!("open-cluster-management:view:{cluster}:{VIEWER}")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": format!("open-cluster-management:view:{cluster}")},
            "subjects": [{"kind": "ServiceAccount", "name": VIEWER, "namespace": "default"}]}));
        if set == "fv-east" {
            // `view` in the namespaces of the set's clusters.
            items.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": format!("open-cluster-management:managedclusterset:view:{VIEWER}"), "namespace": cluster},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                "subjects": [{"kind": "ServiceAccount", "name": VIEWER, "namespace": "default"}]}));
        }
    }
    // The set's view role, bound to the user.
    items.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "open-cluster-management:managedclusterset:view:fv-east"},
        "rules": [{"apiGroups": ["cluster.open-cluster-management.io"], "resources": ["managedclustersets"],
            "resourceNames": ["fv-east"], "verbs": ["get", "list", "watch"]}]}));
    items.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": format!("open-cluster-management:managedclusterset:view:fv-east:{VIEWER}")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "open-cluster-management:managedclusterset:view:fv-east"},
        "subjects": [{"kind": "ServiceAccount", "name": VIEWER, "namespace": "default"}]}));
    items.push(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": VIEWER, "namespace": "default"}}));
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// A hub copy of a ControlPlaneUpdateStatus in `cluster`'s namespace (server-side apply).
async fn write_copy(hub: &Client, cluster: &str) -> TestResult {
    use kube::api::{Patch, PatchParams};
    let api: Api<update_status_api::crd::ControlPlaneUpdateStatus> =
        Api::namespaced(hub.clone(), cluster);
    let pp = PatchParams::apply("update-status-e2e").force();
    let meta = json!({"apiVersion": "update.openshift.io/v1alpha1", "kind": "ControlPlaneUpdateStatus",
        "metadata": {"name": cluster, "labels": {"open-cluster-management.io/cluster-name": cluster}}, "spec": {}});
    api.patch(cluster, &pp, &Patch::Apply(&meta)).await?;
    // fv-east-1's agent says, on the copy it owns, that it cannot read Prometheus.
    let conditions = match cluster {
        "fv-east-1" => {
            json!([{"type": update_status_api::acm::CONDITION_AGENT_DEGRADED, "status": "True",
            "reason": "PrometheusUnreachable", "message": "cannot reach Prometheus",
            "lastTransitionTime": "2026-12-05T12:00:00Z"}])
        }
        _ => json!([]),
    };
    let status = json!({"apiVersion": "update.openshift.io/v1alpha1", "kind": "ControlPlaneUpdateStatus",
        "metadata": {"name": cluster}, "status": {"assessment": "Progressing", "completionPercent": 40,
            "conditions": conditions,
            "versions": {"target": "4.18.3", "previous": "4.18.2"}, "healthInsights": {},
            "nodes": {"available": 0, "degraded": 0, "draining": 0, "excluded": 0, "outdated": 0, "pending": 0, "progressing": 0, "total": 0, "updated": 0},
            "operators": {"degraded": 0, "healthy": 0, "total": 0, "unavailable": 0, "updated": 0, "updating": 0, "waiting": 0}}});
    api.patch_status(cluster, &pp, &Patch::Apply(&status))
        .await?;
    Ok(())
}

/// A kubeconfig of `VIEWER`'s token for the hub, in `dir`.
async fn viewer_kubeconfig(env: &OcmEnv, dir: &std::path::Path) -> Result<PathBuf, BoxError> {
    let token = env
        .kubectl_hub(["create", "token", VIEWER, "-n", "default", "--duration=1h"])
        .await?
        .trim()
        .to_owned();
    let admin = kube::config::Kubeconfig::read_from(env.hub_kubeconfig())?;
    let cluster = admin
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .ok_or("the hub kubeconfig names no cluster")?;
    let config = json!({"apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "hub", "cluster": cluster}],
        "users": [{"name": VIEWER, "user": {"token": token}}],
        "contexts": [{"name": VIEWER, "context": {"cluster": "hub", "user": VIEWER}}],
        "current-context": VIEWER});
    let path = dir.join("viewer.kubeconfig");
    std::fs::write(&path, config.to_string())?;
    Ok(path)
}

fn namespaces_of(report: &serde_json::Value, field: &str) -> Vec<String> {
    let mut v: Vec<String> = report[field]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| {
            x.as_str()
                .map(str::to_owned)
                .or_else(|| x["namespace"].as_str().map(str::to_owned))
        })
        .filter(|n| n.starts_with("fv-"))
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn a_clusterset_user_sees_exactly_its_clusters() -> TestResult {
    let env = OcmEnv::shared(&[CLUSTER]).await?;
    let hub = env.hub_client().await?;
    let t = std::time::Instant::now();
    let result = clusterset_scenario(env, &hub).await;
    eprintln!("clusterset scenario: {:?}", t.elapsed());
    finished(env, result.is_ok()).await?;
    result
}

async fn clusterset_scenario(env: &OcmEnv, hub: &Client) -> TestResult {
    let root = repo_root();
    let dir = std::env::temp_dir().join(format!("us-ocm-clusterset-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    env.kubectl_hub([
        "apply",
        "--server-side",
        "-k",
        &root.join("config/crd").display().to_string(),
    ])
    .await?;
    env.kubectl_hub([
        "apply",
        "--server-side",
        "-f",
        &root
            .join("config/acm/hub-viewer-role.yaml")
            .display()
            .to_string(),
    ])
    .await?;
    let objects = dir.join("clusterset.json");
    std::fs::write(&objects, clusterset_objects().to_string())?;
    env.kubectl_hub([
        "apply",
        "--server-side",
        "-f",
        &objects.display().to_string(),
    ])
    .await?;
    for (cluster, _) in SET_CLUSTERS {
        write_copy(hub, cluster).await?;
    }
    let viewer = viewer_kubeconfig(env, &dir).await?;
    let admin = env.hub_kubeconfig();

    // fv-east-1's add-on is available (OCM's lease probe); its agent's own health is on its
    // copy (write_copy): the agent may not patch its ManagedClusterAddOn's status.
    let addons = ocm::addons_api(hub, "fv-east-1");
    let mca = json!({"apiVersion": "addon.open-cluster-management.io/v1beta1", "kind": "ManagedClusterAddOn",
        "metadata": {"name": "update-status", "namespace": "fv-east-1"}, "spec": {}});
    addons
        .create(&PostParams::default(), &serde_json::from_value(mca)?)
        .await?;
    let status = json!({"status": {"conditions": [
        {"type": "Available", "status": "True", "reason": "ProbeAvailable", "message": "ok", "lastTransitionTime": "2026-12-05T12:00:00Z"}]}});
    addons
        .patch_status(
            "update-status",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&status),
        )
        .await?;

    // The admin sees the three, and the add-on's state.
    let (ok, out, err) = fleet(&admin, &["-o", "json"])?;
    assert!(ok, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out)?;
    assert_eq!(
        namespaces_of(&report, "clusters"),
        ["fv-east-1", "fv-east-2", "fv-west-1"]
    );
    let (ok, text, err) = fleet(&admin, &[])?;
    assert!(ok, "{err}");
    let header = text.lines().next().unwrap_or_default();
    assert!(
        header.contains("LAST REPORT") && header.contains("ADD-ON"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("fv-east-1 ")
            && l.trim_end().ends_with("Degraded (PrometheusUnreachable)")),
        "{text}"
    );

    // The viewer may not list the copies in all namespaces: --fleet reads the namespaces of the
    // clusters it may see, shows exactly its set's, and says which it could not read. (The
    // aggregation of the hub viewer role into `view` takes a moment.)
    let report = poll_until(TIMEOUT, "the viewer's --fleet", || async {
        let (ok, out, _) = fleet(&viewer, &["-o", "json"]).ok()?;
        let r: serde_json::Value = serde_json::from_str(&out).ok().filter(|_| ok)?;
        (namespaces_of(&r, "clusters").len() == 2).then_some(r)
    })
    .await
    .map_err(|e| format!("{e}: {:?}", fleet(&viewer, &["-o", "json"])))?;
    assert_eq!(
        namespaces_of(&report, "clusters"),
        ["fv-east-1", "fv-east-2"],
        "{report}"
    );
    assert_eq!(
        namespaces_of(&report, "unreadableNamespaces"),
        ["fv-west-1"],
        "{report}"
    );
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("one by one") && warnings.contains("fv-west-1"),
        "{warnings}"
    );
    // Text: the rows, and the warnings on standard error.
    let (ok, text, err) = fleet(&viewer, &[])?;
    assert!(ok, "{err}");
    let rows: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("fv-"))
        .collect();
    assert_eq!(rows, ["fv-east-1", "fv-east-2"], "{text}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("warning: ") && l.contains("fv-west-1")),
        "{err}"
    );
    // --clusterset: the set's clusters, found by their label, nothing unreadable.
    let (ok, out, err) = fleet(&viewer, &["--clusterset", "fv-east", "-o", "json"])?;
    assert!(ok, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out)?;
    assert_eq!(
        namespaces_of(&report, "clusters"),
        ["fv-east-1", "fv-east-2"],
        "{report}"
    );
    assert!(report.get("unreadableNamespaces").is_none(), "{report}");

    // Leave the hub as it was.
    env.kubectl_hub([
        "delete",
        "--ignore-not-found",
        "--wait=false",
        "-f",
        &objects.display().to_string(),
    ])
    .await?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
