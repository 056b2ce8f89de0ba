//! The local control plane itself: apiserver, CRDs, snapshot loading and the controllers
//! of kube-controller-manager we rely on (garbage collector, namespace, service accounts).
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{self, Scope};
use serde_json::{Value, json};
use update_status_e2e::snapshot::{self, SnapshotObject};
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case, wait_for};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);

#[tokio::test]
async fn control_plane_is_up() -> TestResult {
    let env = TestEnv::new().await?;
    assert_eq!(
        env.kubectl_ok(["get", "--raw", "/readyz"]).await?.trim(),
        "ok"
    );
    let version = env.client().apiserver_version().await?;
    eprintln!("apiserver {}", version.git_version);

    // kube-controller-manager runs with per-controller service-account credentials...
    let sas: Api<ServiceAccount> = Api::namespaced(env.client(), "kube-system");
    for sa in ["generic-garbage-collector", "namespace-controller"] {
        wait_for(
            TIMEOUT,
            &format!("service account kube-system/{sa}"),
            || {
                let sas = sas.clone();
                async move { matches!(sas.get_opt(sa).await, Ok(Some(_))) }
            },
        )
        .await?;
    }
    // ...and its service-account controller gives every new namespace a `default` SA.
    let ns = env.namespace("sa").await?;
    let sas: Api<ServiceAccount> = Api::namespaced(env.client(), ns.name());
    wait_for(TIMEOUT, "the default service account", || {
        let sas = sas.clone();
        async move { matches!(sas.get_opt("default").await, Ok(Some(_))) }
    })
    .await?;
    Ok(())
}

#[tokio::test]
async fn openshift_input_crds_are_established_and_discoverable() -> TestResult {
    let env = TestEnv::new().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client());
    // (group, kind, plural, short name, has a status subresource)
    let expected = [
        (
            "config.openshift.io",
            "ClusterVersion",
            "clusterversions",
            None,
            true,
        ),
        (
            "config.openshift.io",
            "ClusterOperator",
            "clusteroperators",
            Some("co"),
            true,
        ),
        (
            "machineconfiguration.openshift.io",
            "MachineConfigPool",
            "machineconfigpools",
            Some("mcp"),
            true,
        ),
        (
            "machineconfiguration.openshift.io",
            "MachineConfig",
            "machineconfigs",
            Some("mc"),
            false,
        ),
    ];
    for (group, kind, plural, short, has_status) in expected {
        let crd = crds.get(&format!("{plural}.{group}")).await?;
        let established = crd
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .any(|c| c.type_ == "Established" && c.status == "True");
        assert!(established, "{plural}.{group} is not Established");
        assert_eq!(
            crd.spec
                .names
                .short_names
                .as_ref()
                .and_then(|s| s.first())
                .map(String::as_str),
            short
        );

        let (ar, caps) =
            discovery::pinned_kind(&env.client(), &GroupVersionKind::gvk(group, "v1", kind))
                .await?;
        assert_eq!(ar.plural, plural);
        assert_eq!(caps.scope, Scope::Cluster, "{kind}");
        let status = caps
            .subresources
            .iter()
            .any(|(sub, _)| sub.plural == "status");
        assert_eq!(status, has_status, "status subresource of {kind}");
    }
    // kubectl resolves the short names through discovery.
    env.kubectl_ok(["get", "clusterversion,co,mcp,mc", "-o", "name"])
        .await?;
    Ok(())
}

fn first<'a>(objects: &'a [SnapshotObject], kind: &str) -> Result<&'a SnapshotObject, String> {
    objects
        .iter()
        .find(|o| o.kind == kind)
        .ok_or_else(|| format!("no {kind} in the snapshot"))
}

fn count(objects: &[SnapshotObject], kind: &str) -> usize {
    objects.iter().filter(|o| o.kind == kind).count()
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> Result<&'a str, String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no string at {pointer}"))
}

#[tokio::test]
async fn snapshot_round_trips_through_the_apiserver() -> TestResult {
    let env = TestEnv::new().await?;
    let _cluster_state = exclusive_cluster_state().await;
    let dir = oc_status_case("4.14.1-degraded");
    let objects = snapshot::read_dir(&dir)?;

    let loaded = env.replace_snapshot(&dir).await?;
    assert_eq!(loaded, objects.len());
    // Loading again is an idempotent apply.
    assert_eq!(env.load_snapshot(&dir).await?, objects.len());

    let cv = first(&objects, "ClusterVersion")?;
    let version = env
        .kubectl_ok([
            "get",
            "clusterversion",
            "version",
            "-o",
            "jsonpath={.status.history[0].version}",
        ])
        .await?;
    assert_eq!(version, str_at(&cv.value, "/status/history/0/version")?);
    let progressing = env
        .kubectl_ok([
            "get",
            "clusterversion",
            "version",
            "-o",
            r#"jsonpath={.status.conditions[?(@.type=="Progressing")].message}"#,
        ])
        .await?;
    assert!(
        progressing.starts_with("Unable to apply 4.14.1"),
        "{progressing}"
    );

    let lines = |s: String| s.lines().filter(|l| !l.is_empty()).count();
    let nodes = lines(env.kubectl_ok(["get", "nodes", "-o", "name"]).await?);
    assert_eq!(nodes, count(&objects, "Node"));
    let cos = lines(env.kubectl_ok(["get", "co", "-o", "name"]).await?);
    assert_eq!(cos, count(&objects, "ClusterOperator"));
    let mcps = lines(env.kubectl_ok(["get", "mcp", "-o", "name"]).await?);
    assert_eq!(mcps, count(&objects, "MachineConfigPool"));
    let mcs = lines(env.kubectl_ok(["get", "mc", "-o", "name"]).await?);
    assert_eq!(mcs, count(&objects, "MachineConfig"));

    // One kubectl call for all nodes: name, MCO state annotation, Ready status.
    let live = env
        .kubectl_ok([
            "get",
            "nodes",
            "-o",
            r#"jsonpath={range .items[*]}{.metadata.name}{"\t"}{.metadata.annotations.machineconfiguration\.openshift\.io/state}{"\t"}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}"#,
        ])
        .await?;
    let live: Vec<&str> = live.lines().collect();
    for node in objects.iter().filter(|o| o.kind == "Node") {
        let state = str_at(
            &node.value,
            "/metadata/annotations/machineconfiguration.openshift.io~1state",
        )?;
        let ready = node
            .value
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| c.get("type") == Some(&json!("Ready")))
            .and_then(|c| c.get("status"))
            .and_then(Value::as_str)
            .ok_or("no Ready condition in the file")?;
        let want = format!("{}\t{state}\t{ready}", node.name);
        assert!(live.contains(&want.as_str()), "{want:?} not in {live:#?}");
    }

    // Status went through the status subresource of the CRDs too.
    let mcp = first(&objects, "MachineConfigPool")?;
    let machines = env
        .kubectl_ok([
            "get",
            "mcp",
            &mcp.name,
            "-o",
            "jsonpath={.status.machineCount}",
        ])
        .await?;
    let want = mcp
        .value
        .pointer("/status/machineCount")
        .ok_or("no machineCount")?;
    assert_eq!(machines, want.to_string());
    let co = first(&objects, "ClusterOperator")?;
    let live = env
        .kubectl_ok([
            "get",
            "co",
            &co.name,
            "-o",
            "jsonpath={.status.versions[0].version}",
        ])
        .await?;
    assert_eq!(live, str_at(&co.value, "/status/versions/0/version")?);
    Ok(())
}

#[tokio::test]
async fn loader_names_file_and_object_of_failures() -> TestResult {
    let env = TestEnv::new().await?;
    let dir = std::env::temp_dir().join(format!("us-e2e-bad-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("widgets.yaml"),
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\n",
    )?;
    std::fs::write(dir.join("broken.json"), "{\"kind\": ")?;
    let result = env.load_snapshot(&dir).await;
    std::fs::remove_dir_all(&dir).ok();
    let err = result.err().ok_or("loading a bad snapshot succeeded")?;
    let msg = err.to_string();
    assert!(
        msg.contains("widgets.yaml: Widget w1: the apiserver does not serve example.com/v1 Widget"),
        "{msg}"
    );
    assert!(
        msg.contains("broken.json is not valid YAML or JSON"),
        "{msg}"
    );
    Ok(())
}

#[tokio::test]
async fn garbage_collector_deletes_dependents_of_deleted_owners() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("gc").await?;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), ns.name());
    let owner: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "owner"}}))?;
    let owner = cms.create(&PostParams::default(), &owner).await?;
    let uid = owner.metadata.uid.ok_or("owner has no uid")?;
    let dependent: ConfigMap = serde_json::from_value(json!({
        "metadata": {
            "name": "dependent",
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}],
        },
        "data": {"k": "v"},
    }))?;
    cms.create(&PostParams::default(), &dependent).await?;

    cms.delete("owner", &DeleteParams::background()).await?;
    wait_for(
        TIMEOUT,
        "the garbage collector to delete the dependent ConfigMap",
        || {
            let cms = cms.clone();
            async move { matches!(cms.get_opt("dependent").await, Ok(None)) }
        },
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn namespace_controller_finalizes_deleted_namespaces() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("ns-delete").await?;
    let name = ns.name().to_string();
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), &name);
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "content"}}))?;
    cms.create(&PostParams::default(), &cm).await?;

    ns.delete().await?;
    let namespaces: Api<Namespace> = Api::all(env.client());
    wait_for(
        TIMEOUT,
        &format!("namespace {name} to be finalized"),
        || {
            let namespaces = namespaces.clone();
            let name = name.clone();
            async move { matches!(namespaces.get_opt(&name).await, Ok(None)) }
        },
    )
    .await?;
    Ok(())
}
