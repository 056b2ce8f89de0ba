//! Our three CRDs on a real kube-apiserver: discovery, the `updatestatus` category, printer
//! columns, schema and CEL validation, label selectors, and garbage collection of an insight
//! whose owner is deleted (by the real kube-controller-manager).
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use update_status_api::crd::UpdateInsight;
use update_status_e2e::{TestEnv, wait_for};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);

fn health_insight(name: &str, level: &str, pool: &str, owner: Option<(&str, &str)>) -> Value {
    let mut meta = json!({
        "name": name,
        "labels": {
            "update.openshift.io/insight-type": "health",
            "update.openshift.io/impact-level": level.to_lowercase(),
            "update.openshift.io/pool": pool,
        },
    });
    if let Some((owner_name, uid)) = owner {
        meta["ownerReferences"] = json!([{
            "apiVersion": "v1", "kind": "ConfigMap", "name": owner_name, "uid": uid,
        }]);
    }
    json!({
        "apiVersion": "update.openshift.io/v1alpha1",
        "kind": "UpdateInsight",
        "metadata": meta,
        "spec": {},
    })
}

fn health_status(level: &str, summary: &str) -> Value {
    json!({
        "apiVersion": "update.openshift.io/v1alpha1",
        "kind": "UpdateInsight",
        "status": {
            "type": "Health",
            "resource": {"group": "", "kind": "Node", "name": "node-a"},
            "scope": {"type": "WorkerPool", "pool": "worker"},
            "health": {
                "impact": {"level": level, "type": "Update Stalled", "summary": summary, "description": "d"},
                "remediation": {"reference": "https://example.com/runbook"},
                "source": "NodeDegraded",
            },
        },
    })
}

async fn create_insight(
    api: &Api<UpdateInsight>,
    name: &str,
    level: &str,
    pool: &str,
) -> TestResult {
    let pp = PatchParams::apply("update-status-e2e").force();
    api.patch(
        name,
        &pp,
        &Patch::Apply(health_insight(name, level, pool, None)),
    )
    .await?;
    api.patch_status(
        name,
        &pp,
        &Patch::Apply(health_status(level, &format!("{name} is degraded"))),
    )
    .await?;
    Ok(())
}

/// The row of the cluster in namespace `ns` in `kubectl update-status --fleet -o json`, run as
/// a user would (the built plugin, the test's kubeconfig).
fn fleet_row(env: &TestEnv, ns: &str) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
    let bin = update_status_e2e::controller::workspace_bin(
        "kubectl-update_status",
        "UPDATE_STATUS_CLI_BIN",
    );
    let out = std::process::Command::new(&bin)
        .args(["--fleet", "-o", "json"])
        .env("KUBECONFIG", env.kubeconfig_path())
        .stdin(std::process::Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    let report: Value = serde_json::from_slice(&out.stdout)?;
    let row = report["clusters"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["cluster"] == ns))
        .cloned()
        .ok_or_else(|| format!("no row for {ns}: {report}"))?;
    Ok(row)
}

#[tokio::test]
async fn crds_are_discoverable_in_the_updatestatus_category() -> TestResult {
    let env = TestEnv::new().await?;
    let resources = env
        .kubectl_ok([
            "api-resources",
            "--api-group=update.openshift.io",
            "-o",
            "wide",
        ])
        .await?;
    for (plural, short) in [
        ("updateinsights", "uins"),
        ("controlplaneupdatestatuses", "cpus"),
        ("workerpoolupdatestatuses", "wpus"),
    ] {
        let line = resources
            .lines()
            .find(|l| l.starts_with(plural))
            .ok_or_else(|| format!("{plural} missing from api-resources:\n{resources}"))?;
        assert!(line.contains(short), "{line}");
        assert!(line.contains("true"), "namespaced: {line}");
        assert!(line.contains("updatestatus"), "category: {line}");
    }
    let ns = env.namespace("cat").await?;
    let api: Api<UpdateInsight> = Api::namespaced(env.client(), ns.name());
    create_insight(&api, "node-degraded-node-a", "Error", "worker").await?;
    let out = env
        .kubectl_ok(["get", "updatestatus", "-n", ns.name()])
        .await?;
    assert!(
        out.contains("updateinsight.update.openshift.io/node-degraded-node-a"),
        "{out}"
    );
    Ok(())
}

#[tokio::test]
async fn printer_columns_render_in_kubectl_get() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("cols").await?;
    let api: Api<UpdateInsight> = Api::namespaced(env.client(), ns.name());
    create_insight(&api, "node-degraded-node-a", "Error", "worker").await?;
    let out = env.kubectl_ok(["get", "uins", "-n", ns.name()]).await?;
    let mut lines = out.lines();
    let header = lines.next().unwrap_or_default();
    for col in [
        "NAME", "TYPE", "SCOPE", "KIND", "RESOURCE", "LEVEL", "IMPACT", "AGE",
    ] {
        assert!(header.contains(col), "column {col} missing: {header}");
    }
    let row = lines.next().unwrap_or_default();
    for cell in [
        "node-degraded-node-a",
        "Health",
        "WorkerPool",
        "Node",
        "node-a",
        "Error",
        "Update Stalled",
    ] {
        assert!(row.contains(cell), "cell {cell} missing: {row}");
    }
    let wide = env
        .kubectl_ok(["get", "uins", "-n", ns.name(), "-o", "wide"])
        .await?;
    assert!(
        wide.contains("node-degraded-node-a is degraded"),
        "summary column (wide): {wide}"
    );
    Ok(())
}

#[tokio::test]
async fn invalid_objects_are_rejected_with_a_clear_message() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("invalid").await?;
    let api: Api<UpdateInsight> = Api::namespaced(env.client(), ns.name());
    let pp = PatchParams::apply("update-status-e2e").force();
    api.patch(
        "x",
        &pp,
        &Patch::Apply(health_insight("x", "Error", "worker", None)),
    )
    .await?;

    // CEL: a Health insight must carry .health, not .progress.
    let mut bad = health_status("Error", "s");
    bad["status"]["progress"] = json!({"assessment": "Progressing"});
    let err = api
        .patch_status("x", &pp, &Patch::Apply(bad))
        .await
        .err()
        .ok_or("a Health insight with .progress was accepted")?;
    assert!(
        err.to_string()
            .contains("a Progress insight carries .progress only, a Health insight .health only"),
        "{err}"
    );

    // Enum: an unknown impact level.
    let err = api
        .patch_status("x", &pp, &Patch::Apply(health_status("Disaster", "s")))
        .await
        .err()
        .ok_or("an unknown impact level was accepted")?;
    assert!(
        err.to_string().contains("Unsupported value: \"Disaster\""),
        "{err}"
    );

    // Length limit: summary longer than 256 characters.
    let err = api
        .patch_status(
            "x",
            &pp,
            &Patch::Apply(health_status("Error", &"s".repeat(300))),
        )
        .await
        .err()
        .ok_or("a 300-character summary was accepted")?;
    assert!(
        err.to_string().contains("may not be more than 256"),
        "{err}"
    );

    // CEL on the scope: a WorkerPool scope names its pool.
    let mut no_pool = health_status("Error", "s");
    no_pool["status"]["scope"] = json!({"type": "WorkerPool"});
    let err = api
        .patch_status("x", &pp, &Patch::Apply(no_pool))
        .await
        .err()
        .ok_or("a WorkerPool scope without pool was accepted")?;
    assert!(
        err.to_string()
            .contains("a WorkerPool scope names its pool"),
        "{err}"
    );

    // And kubectl shows the message to a user writing a bad status.
    let out = env
        .kubectl([
            "patch", "updateinsight", "x", "-n", ns.name(), "--subresource=status", "--type=merge",
            "-p", r#"{"status":{"type":"Health","resource":{"kind":"Node","name":"n"},"scope":{"type":"Cluster"},"health":{"impact":{"level":"Sideways","type":"None","summary":"s"},"remediation":{"reference":"r"},"source":"x"}}}"#,
        ])
        .await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "kubectl accepted an invalid status");
    assert!(
        stderr.contains("Unsupported value: \"Sideways\""),
        "{stderr}"
    );
    Ok(())
}

#[tokio::test]
async fn label_selectors_filter_insights() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("labels").await?;
    let api: Api<UpdateInsight> = Api::namespaced(env.client(), ns.name());
    create_insight(&api, "a-error-worker", "Error", "worker").await?;
    create_insight(&api, "b-warning-worker", "Warning", "worker").await?;
    create_insight(&api, "c-critical-infra", "Critical", "infra").await?;
    let names =
        |out: String| -> Vec<String> { out.split_whitespace().map(str::to_string).collect() };
    let q = |sel: &'static str| {
        let ns = ns.name().to_string();
        let env = &env;
        async move {
            env.get_insights(&ns, sel, "jsonpath={.items[*].metadata.name}")
                .await
        }
    };
    assert_eq!(
        names(q("update.openshift.io/insight-type=health,update.openshift.io/impact-level in (error,critical)").await?),
        ["a-error-worker", "c-critical-infra"]
    );
    assert_eq!(
        names(q("update.openshift.io/pool=worker,update.openshift.io/impact-level=warning").await?),
        ["b-warning-worker"]
    );
    assert_eq!(
        names(q("update.openshift.io/pool=infra").await?),
        ["c-critical-infra"]
    );
    Ok(())
}

#[tokio::test]
async fn an_insight_is_garbage_collected_with_its_owner() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("gc").await?;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), ns.name());
    let owner = cms
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "owner"}}))?,
        )
        .await?;
    let uid = owner.metadata.uid.ok_or("owner has no uid")?;
    let api: Api<UpdateInsight> = Api::namespaced(env.client(), ns.name());
    let pp = PatchParams::apply("update-status-e2e").force();
    api.patch(
        "owned",
        &pp,
        &Patch::Apply(health_insight(
            "owned",
            "Error",
            "worker",
            Some(("owner", &uid)),
        )),
    )
    .await?;
    api.patch(
        "unowned",
        &pp,
        &Patch::Apply(health_insight("unowned", "Error", "worker", None)),
    )
    .await?;
    cms.delete("owner", &DeleteParams::background()).await?;
    wait_for(TIMEOUT, "the owned insight to be garbage-collected", || {
        let api = api.clone();
        async move { matches!(api.get_opt("owned").await, Ok(None)) }
    })
    .await?;
    assert!(
        api.get_opt("unowned").await?.is_some(),
        "GC removed an insight without owner"
    );
    Ok(())
}

/// Writes in `ns` the ControlPlaneUpdateStatus an agent of the previous release would write
/// there (testdata/previous-release): the fields of that release's CRD, no heartbeat.
async fn write_control_plane(env: &TestEnv, ns: &str) -> TestResult {
    let api: Api<update_status_api::crd::ControlPlaneUpdateStatus> =
        Api::namespaced(env.client(), ns);
    let counts = |names: &[&str]| -> Value {
        names
            .iter()
            .map(|n| ((*n).to_owned(), json!(0)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let mut nodes = counts(&[
        "available",
        "degraded",
        "draining",
        "excluded",
        "outdated",
        "pending",
        "progressing",
    ]);
    nodes["total"] = json!(3);
    nodes["updated"] = json!(3);
    let mut operators = counts(&["degraded", "unavailable", "updating", "waiting"]);
    operators["total"] = json!(2);
    operators["healthy"] = json!(2);
    operators["updated"] = json!(1);
    let pp = PatchParams::apply("update-status-old-agent").force();
    let object = json!({
        "apiVersion": "update.openshift.io/v1alpha1", "kind": "ControlPlaneUpdateStatus",
        "metadata": {"name": ns}, "spec": {},
    });
    api.patch(ns, &pp, &Patch::Apply(object)).await?;
    let status = json!({
        "apiVersion": "update.openshift.io/v1alpha1", "kind": "ControlPlaneUpdateStatus",
        "status": {
            "assessment": "Progressing", "completionPercent": 50,
            "healthInsights": {"error": 1},
            "nodes": nodes, "operators": operators,
            "versions": {"previous": "4.16.0", "target": "4.16.1"},
        },
    });
    api.patch_status(ns, &pp, &Patch::Apply(status)).await?;
    Ok(())
}

/// Issue #47 item 4: a copy as the previous release's agent (commit 82fef0b, the first with the
/// ACM add-on: testdata/previous-release) wrote it, with only the fields of that release's CRD
/// and no heartbeat, is accepted by today's CRD and read correctly by `--fleet -o json`.
#[tokio::test]
async fn an_older_agents_copy_is_accepted_and_read_by_the_fleet() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("old-agent").await?;
    write_control_plane(&env, ns.name()).await?;
    let row = fleet_row(&env, ns.name())?;
    assert_eq!(row["from"], "4.16.0", "{row}");
    assert_eq!(row["to"], "4.16.1", "{row}");
    assert_eq!(row["assessment"], "Progressing", "{row}");
    assert_eq!(row["completionPercent"], 50, "{row}");
    assert_eq!(row["reported"], true, "{row}");
    assert_eq!(
        row["freshness"], "Unknown",
        "no heartbeat: an older agent: {row}"
    );
    Ok(())
}

/// Issue #51 item 1: `--fleet` reads the health insights' metadata only and counts them by the
/// level label their agent writes; one without that label (an agent that wrote none, a hand
/// edit) is read whole and counted by its status, so the counts are those of the full read.
#[tokio::test]
async fn the_fleet_counts_by_level_label_and_reads_unlabelled_insights_whole() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("level-labels").await?;
    // A cluster's row: its ControlPlaneUpdateStatus.
    write_control_plane(&env, ns.name()).await?;
    let pp = PatchParams::apply("update-status-e2e").force();
    let insights: Api<UpdateInsight> = Api::namespaced(env.client(), ns.name());
    create_insight(&insights, "labelled-error", "Error", "worker").await?;
    create_insight(&insights, "labelled-warning", "Warning", "worker").await?;
    // A health insight without its level label: only its status says Critical.
    let mut unlabelled = health_insight("unlabelled-critical", "Critical", "worker", None);
    if let Some(l) = unlabelled["metadata"]["labels"].as_object_mut() {
        l.remove("update.openshift.io/impact-level");
    }
    insights
        .patch("unlabelled-critical", &pp, &Patch::Apply(unlabelled))
        .await?;
    insights
        .patch_status(
            "unlabelled-critical",
            &pp,
            &Patch::Apply(health_status("Critical", "no label")),
        )
        .await?;
    // And one whose level label is no level's: only its status says Info.
    let mut bogus = health_insight("bogus-info", "Info", "worker", None);
    bogus["metadata"]["labels"]["update.openshift.io/impact-level"] = json!("sideways");
    insights
        .patch("bogus-info", &pp, &Patch::Apply(bogus))
        .await?;
    insights
        .patch_status(
            "bogus-info",
            &pp,
            &Patch::Apply(health_status("Info", "bogus label")),
        )
        .await?;
    let row = fleet_row(&env, ns.name())?;
    let health = &row["health"];
    assert_eq!(
        health["info"], 1,
        "the one with a bogus label, read whole: {row}"
    );
    assert_eq!(
        health["critical"], 1,
        "the unlabelled one, read whole: {row}"
    );
    assert_eq!(health["error"], 1, "{row}");
    assert_eq!(health["warning"], 1, "{row}");
    Ok(())
}
