//! The hub is shared storage (issue #38 item 5): what one update-status agent may write on the
//! hub is bounded, checked through the add-on's **real identity** on the local OCM hub (the
//! client certificate OCM issued it, in the Secret its registration agent wrote), with
//! `config/acm` applied as a fleet admin applies it and `update-status-controller --mode=hub`
//! run as its Deployment runs it (its ServiceAccount's token):
//!
//! 1. enabling the add-on for `cluster1` gives its namespace the ResourceQuota `update-status`
//!    (owned by the ManagedClusterAddOn), whose limits one annotation of the ManagedClusterAddOn
//!    overrides, up to a ceiling (issue #48 item 11: the hub controller applies the ceiling to
//!    an annotation above it, and the policy refuses its identity a quota above it);
//! 2. the agent's identity cannot write a ControlPlaneUpdateStatus named after another cluster,
//!    a copy labelled for another cluster, a foreign label, a finalizer, another owner, too many
//!    related objects or too much text; the largest object it may write is measured;
//! 3. it cannot exceed the counts (`exceeded quota: update-status`), and a delete frees a slot;
//! 4. a quota deleted by hand is put back; without the quota (the hub controller stopped, the
//!    quota deleted) the agent cannot write at all, and the restarted hub controller puts it back;
//! 5. the hub admin still can (a finalizer, another cluster's label and name);
//!    an agent registered with OCM's token driver (the ServiceAccount `update-status-agent` of
//!    the cluster's namespace) is bound like the certificate one (issue #48 item 4);
//! 6. the real agent at its limit: its hub namespace full of stale copies, it deletes them,
//!    copies what fits, says `exceeded quota` once (metric reason `quota`), retries without a
//!    tight loop, leaves its local objects alone, and converges once the limit is raised.
//!
//! On the same hub (issue #47): the ACM recipes (`config/acm/policies`, `config/acm/recipes`)
//! dry-run against the real CRDs of the components that consume them
//! (`update_status_e2e::acm_recipes`); the add-on's must-gather (`must-gather/gather`) on the
//! cluster and on the hub, read back by `kubectl update-status --from-dir`
//! (`update_status_e2e::must_gather`); a hosted cluster of `cluster1` reported with no hand
//! work: the hosted add-on placed on its hosting cluster, the hub controller's binding and quota
//! (`update_status_e2e::acm_hosted`).
#![cfg(feature = "e2e")] // needs the local control planes and OCM: `make e2e`

use std::fmt::Debug;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ResourceQuota;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use update_status_api::crd::{
    Condition, ConditionStatus, ControlPlaneUpdateStatus, HealthInsight, Impact, ImpactLevel,
    InsightType, ProgressInsight, Remediation, ResourceRef, UpdateInsight, UpdateInsightStatus,
};
use update_status_controllers::reconcilers::hub_quota::{CEILING, parse_count};
use update_status_e2e::controller::{Controller, workspace_bin};
use update_status_e2e::hub_copies::{Local, list_at, wait_mirrored_between};
use update_status_e2e::hub_limits::{QUOTA, copy_body, start_hub_controller};
use update_status_e2e::ocm::{self, OcmEnv, SecretVolume};
use update_status_e2e::{oc_status_case, poll_until, wait_for};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const CLUSTER: &str = "cluster1";
const ADDON: &str = "update-status";
const AGENT_NS: &str = "openshift-update-status";
const SECRET: &str = "update-status-hub-kubeconfig";
const INSIGHTS_KEY: &str = "count/updateinsights.update.openshift.io";
const OVERRIDE: &str = "update.openshift.io/hub-quota-updateinsights";
const TIMEOUT: Duration = Duration::from_secs(90);
const MANAGER: &str = "update-status-controller/hub-sync";

#[tokio::test]
async fn the_hub_bounds_what_each_agent_writes() -> TestResult {
    let started = Instant::now();
    let env = OcmEnv::shared(&[CLUSTER]).await?;
    let hub = env.hub_client().await?;
    let up = started.elapsed();
    let result = ocm::run_scenario(env, "hub_limits", scenario(env, hub.clone())).await;
    let _ = ocm::disable_addon(&hub, CLUSTER, ADDON).await;
    eprintln!(
        "hub_limits: OCM environment up in {:.1}s, scenario {:.1}s",
        up.as_secs_f64(),
        (started.elapsed() - up).as_secs_f64()
    );
    if result.is_ok() {
        env.stop().await?;
    }
    result
}

/// Expects `r` to be refused with HTTP `code` and a message containing `needle`.
fn refused<T>(r: Result<T, kube::Error>, code: u16, needle: &str, what: &str) -> TestResult {
    match r {
        Err(kube::Error::Api(s)) if s.code == code && s.message.contains(needle) => Ok(()),
        Err(e) => Err(format!("{what}: expected {code} with {needle:?}, got: {e}").into()),
        Ok(_) => Err(format!("{what}: accepted; expected a refusal with {needle:?}").into()),
    }
}

fn apply() -> PatchParams {
    PatchParams::apply(MANAGER).force()
}

/// Server-side applies `body` as object `name` of `api`, as the agent writes ([`apply`]).
async fn put<K>(api: &Api<K>, name: &str, body: Value) -> Result<K, kube::Error>
where
    K: Clone + DeserializeOwned + Debug,
{
    api.patch(name, &apply(), &Patch::Apply(body)).await
}

/// [`put`] of the copy [`copy_body`] makes of a `kind` object `name` for [`CLUSTER`].
async fn put_copy<K>(api: &Api<K>, kind: &str, name: &str) -> Result<K, kube::Error>
where
    K: Clone + DeserializeOwned + Debug,
{
    put(api, name, copy_body(kind, name, CLUSTER)).await
}

/// The hard and used counts of insights in the quota.
async fn insight_counts(quotas: &Api<ResourceQuota>) -> Option<(u64, Option<u64>)> {
    let q = quotas.get_opt(QUOTA).await.ok()??;
    let hard = q
        .spec?
        .hard?
        .get(INSIGHTS_KEY)
        .and_then(|v| parse_count(&v.0))?;
    // Filled by kube-controller-manager's quota controller: until then, every write is refused.
    let used = q
        .status
        .as_ref()
        .and_then(|s| {
            s.hard
                .as_ref()?
                .get(INSIGHTS_KEY)
                .map(|h| (h, s.used.as_ref()))
        })
        .filter(|(h, _)| parse_count(&h.0) == Some(hard))
        .and_then(|(_, used)| used?.get(INSIGHTS_KEY).and_then(|v| parse_count(&v.0)));
    Some((hard, used))
}

/// Sets the ManagedClusterAddOn's insight limit (`None`: back to the default).
async fn set_override(hub: &Client, limit: Option<u64>) -> TestResult {
    ocm::addons_api(hub, CLUSTER)
        .patch(
            ADDON,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {OVERRIDE: limit.map(|n| n.to_string())}}}),
            ),
        )
        .await?;
    Ok(())
}

/// Waits until the quota's insight limit is `limit` and the quota controller counted it.
async fn wait_limit(quotas: &Api<ResourceQuota>, limit: u64) -> TestResult {
    poll_until(
        TIMEOUT,
        &format!("ResourceQuota {CLUSTER}/{QUOTA} with {INSIGHTS_KEY}={limit}, counted"),
        || async {
            let (hard, used) = insight_counts(quotas).await?;
            (hard == limit && used.is_some()).then_some(())
        },
    )
    .await?;
    Ok(())
}

fn health_status(description: String, related: usize) -> UpdateInsightStatus {
    UpdateInsightStatus {
        type_: InsightType::Health,
        resource: ResourceRef {
            kind: "Node".into(),
            name: "worker-0".into(),
            ..Default::default()
        },
        health: Some(HealthInsight {
            impact: Impact {
                level: ImpactLevel::Error,
                summary: "Node worker-0 is degraded".into(),
                description,
                ..Default::default()
            },
            remediation: Remediation {
                reference: "https://docs.openshift.com".into(),
            },
            related: (0..related)
                .map(|i| ResourceRef {
                    kind: "Pod".into(),
                    name: format!("pod-{i}"),
                    namespace: Some("shop".into()),
                    ..Default::default()
                })
                .collect(),
            source: "NodeDegraded".into(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn status_body(name: &str, status: &UpdateInsightStatus) -> Value {
    json!({
        "apiVersion": "update.openshift.io/v1alpha1",
        "kind": "UpdateInsight",
        "metadata": {"name": name},
        "status": status,
    })
}

async fn scenario(env: &'static OcmEnv, hub: Client) -> TestResult {
    let work = env.work_dir("hub-limits-test")?;
    ocm::wait_cluster_joined(&hub, CLUSTER, TIMEOUT).await?;
    // As on OpenShift: the namespaces the agent's manifests put objects in.
    let _ = ocm::create_openshift_namespaces(env, CLUSTER).await;
    env.apply_acm_config().await?;
    let controller_bin = workspace_bin("update-status-controller", "UPDATE_STATUS_CONTROLLER_BIN");
    let mut hub_controller = start_hub_controller(env, controller_bin.clone(), &work, &[]).await?;
    ocm::enable_addon(&hub, CLUSTER, ADDON).await?;
    let mca_uid = ocm::addons_api(&hub, CLUSTER)
        .get(ADDON)
        .await?
        .uid()
        .ok_or("the ManagedClusterAddOn has no uid")?;

    // 1. The quota of the cluster's namespace, as the hub controller keeps it.
    let quotas: Api<ResourceQuota> = Api::namespaced(hub.clone(), CLUSTER);
    let t = Instant::now();
    let quota = poll_until(
        TIMEOUT,
        &format!("ResourceQuota {CLUSTER}/{QUOTA}"),
        || async { quotas.get_opt(QUOTA).await.ok().flatten() },
    )
    .await
    .map_err(|e| format!("{e} (hub controller log: {})", hub_controller.log.display()))?;
    eprintln!(
        "hub_limits: quota made {:.2}s after the add-on was enabled",
        t.elapsed().as_secs_f64()
    );
    let hard = quota.spec.and_then(|s| s.hard).unwrap_or_default();
    let count = |k: &str| {
        hard.get(&format!("count/{k}.update.openshift.io"))
            .and_then(|v| parse_count(&v.0))
    };
    assert_eq!(
        (
            count("controlplaneupdatestatuses"),
            count("workerpoolupdatestatuses"),
            count("updateinsights")
        ),
        (Some(2), Some(100), Some(2000)),
        "the shipped limits: {hard:?}"
    );
    let owner = quota.metadata.owner_references.unwrap_or_default();
    assert!(
        owner.len() == 1 && owner[0].kind == "ManagedClusterAddOn" && owner[0].uid == mca_uid,
        "owned by the ManagedClusterAddOn: {owner:?}"
    );
    // Issue #48 item 11: an override has a ceiling, on the hub controller and in the policy
    // bounding its quota writes.
    set_override(&hub, Some(99_999_999)).await?;
    wait_limit(&quotas, CEILING.insights).await?;
    let hub_controller_client = update_status_e2e::client_for(
        &update_status_e2e::hub_limits::hub_controller_kubeconfig(env, &work.join("hc")).await?,
    )
    .await?;
    let as_hub_controller: Api<ResourceQuota> = Api::namespaced(hub_controller_client, CLUSTER);
    let above = json!({
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": QUOTA, "namespace": CLUSTER},
        "spec": {"hard": {INSIGHTS_KEY: "10001"}},
    });
    let as_quota_writer = PatchParams::apply("update-status-controller/hub-quota").force();
    // The API server loads new policies asynchronously: a dry run first, until refused.
    let ceiling_message = "allows at most 4 ControlPlaneUpdateStatus, 500 WorkerPoolUpdateStatus and 10000 UpdateInsights";
    wait_for(TIMEOUT, "the quota writer's ceiling in force", || async {
        let dry = PatchParams {
            dry_run: true,
            ..as_quota_writer.clone()
        };
        as_hub_controller
            .patch(QUOTA, &dry, &Patch::Apply(&above))
            .await
            .is_err_and(|e| e.to_string().contains(ceiling_message))
    })
    .await?;
    refused(
        as_hub_controller
            .patch(QUOTA, &as_quota_writer, &Patch::Apply(&above))
            .await,
        403,
        ceiling_message,
        "the hub controller's identity writing a quota above the ceiling",
    )?;
    set_override(&hub, Some(4)).await?;
    wait_limit(&quotas, 4).await?;
    // Issue #47 item 5: the ACM recipes against the real CRDs, on this hub.
    update_status_e2e::acm_recipes::check(env, CLUSTER).await?;

    // 2. The agent's identity, as OCM issued it.
    let spoke = env.cluster_client(CLUSTER).await?;
    ocm::wait_secret(
        &spoke,
        AGENT_NS,
        SECRET,
        &["kubeconfig", "tls.crt", "tls.key"],
        TIMEOUT,
    )
    .await?;
    let volume =
        SecretVolume::mount(&spoke, AGENT_NS, SECRET, &work.join("agent-hub"), TIMEOUT).await?;
    let agent = update_status_e2e::client_for(&volume.kubeconfig()).await?;
    let insights: Api<UpdateInsight> = Api::namespaced(agent.clone(), CLUSTER);
    let planes: Api<ControlPlaneUpdateStatus> = Api::namespaced(agent.clone(), CLUSTER);
    // The API server loads new policies asynchronously (about a second): wait until a dry run
    // of a write they refuse is refused.
    let dry_run = PatchParams {
        dry_run: true,
        ..apply()
    };
    let bad_name = copy_body("ControlPlaneUpdateStatus", "cluster2", CLUSTER);
    let t = Instant::now();
    wait_for(TIMEOUT, "the admission policies in force", || async {
        planes
            .patch("cluster2", &dry_run, &Patch::Apply(&bad_name))
            .await
            .is_err_and(|e| e.to_string().contains("named after its cluster"))
    })
    .await?;
    eprintln!(
        "hub_limits: policies in force {:.2}s after the agent's credentials arrived",
        t.elapsed().as_secs_f64()
    );
    put_copy(&insights, "UpdateInsight", "ok-0").await?;
    put_copy(&planes, "ControlPlaneUpdateStatus", CLUSTER).await?;
    refused(
        put_copy(&planes, "ControlPlaneUpdateStatus", "cluster2").await,
        403,
        "a ControlPlaneUpdateStatus copy is named after its cluster: cluster1",
        "a ControlPlaneUpdateStatus named after another cluster",
    )?;
    let mut other = copy_body("UpdateInsight", "spoof", CLUSTER);
    other["metadata"]["labels"]["open-cluster-management.io/cluster-name"] = json!("cluster2");
    refused(
        put(&insights, "spoof", other).await,
        403,
        "label open-cluster-management.io/cluster-name must be cluster1",
        "a copy labelled for another cluster",
    )?;
    let mut foreign = copy_body("UpdateInsight", "foreign", CLUSTER);
    foreign["metadata"]["labels"]["team"] = json!("payments");
    refused(
        put(&insights, "foreign", foreign).await,
        403,
        "only update-status's labels",
        "a label that is not ours",
    )?;
    let mut held = copy_body("UpdateInsight", "ok-0", CLUSTER);
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    refused(
        put(&insights, "ok-0", held).await,
        403,
        "no finalizers",
        "a finalizer",
    )?;
    let mut owned = copy_body("UpdateInsight", "owned", CLUSTER);
    owned["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "Namespace", "name": CLUSTER, "uid": mca_uid}]);
    refused(
        put(&insights, "owned", owned).await,
        403,
        "the only owner a copy may have",
        "another owner",
    )?;
    let pp = apply();
    refused(
        insights
            .patch_status(
                "ok-0",
                &pp,
                &Patch::Apply(status_body("ok-0", &health_status("d".into(), 11))),
            )
            .await,
        422,
        "at most 10 related objects",
        "11 related objects",
    )?;
    // Each text within the schema's 32,768 characters, together at most the policy's 65,536.
    let mut big = UpdateInsightStatus {
        type_: InsightType::Progress,
        resource: ResourceRef {
            kind: "ClusterVersion".into(),
            name: "version".into(),
            ..Default::default()
        },
        progress: Some(ProgressInsight {
            message: "m".repeat(32_768),
            conditions: vec![Condition {
                type_: "Updating".into(),
                status: ConditionStatus::True,
                message: "c".repeat(32_768),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let largest = insights
        .patch_status("ok-0", &pp, &Patch::Apply(status_body("ok-0", &big)))
        .await?;
    let bytes = serde_json::to_vec(&largest)?.len();
    eprintln!("hub_limits: the largest insight the agent may write: {bytes} bytes of JSON");
    if let Some(c) = big.progress.as_mut().and_then(|p| p.conditions.first_mut()) {
        c.reason = "R".into();
    }
    refused(
        insights
            .patch_status("ok-0", &pp, &Patch::Apply(status_body("ok-0", &big)))
            .await,
        413,
        "at most 65536 characters in all, not 65537",
        "too much text",
    )?;

    // 2b. An agent registered with OCM's token driver (issue #48 item 4): the same refusals.
    let token_agent = token_registered_agent(env, &work).await?;
    let token_planes: Api<ControlPlaneUpdateStatus> = Api::namespaced(token_agent.clone(), CLUSTER);
    let token_insights: Api<UpdateInsight> = Api::namespaced(token_agent.clone(), CLUSTER);
    refused(
        put_copy(&token_planes, "ControlPlaneUpdateStatus", "cluster2").await,
        403,
        "a ControlPlaneUpdateStatus copy is named after its cluster: cluster1",
        "a token-registered agent: a ControlPlaneUpdateStatus named after another cluster",
    )?;
    let mut held = copy_body("UpdateInsight", "ok-0", CLUSTER);
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    refused(
        put(&token_insights, "ok-0", held).await,
        403,
        "no finalizers",
        "a token-registered agent: a finalizer",
    )?;

    // 3. The counts: 4 insights, then `exceeded quota`; a delete frees a slot.
    for n in 1..4 {
        let name = format!("ok-{n}");
        put_copy(&insights, "UpdateInsight", &name).await?;
    }
    refused(
        put_copy(&insights, "UpdateInsight", "ok-4").await,
        403,
        "exceeded quota: update-status",
        "a fifth insight",
    )?;
    insights.delete("ok-3", &DeleteParams::default()).await?;
    let t = Instant::now();
    poll_until(TIMEOUT, "a slot freed by a delete", || async {
        put_copy(&insights, "UpdateInsight", "ok-4").await.ok()
    })
    .await?;
    eprintln!(
        "hub_limits: a deleted copy's slot reusable after {:.2}s",
        t.elapsed().as_secs_f64()
    );

    // 4. A quota deleted by hand is put back; with the hub controller stopped, no quota, no write.
    let uid = |q: &ResourceQuota| q.metadata.uid.clone();
    let before = quotas.get(QUOTA).await?;
    quotas.delete(QUOTA, &DeleteParams::default()).await?;
    let t = Instant::now();
    poll_until(TIMEOUT, "the deleted quota put back", || async {
        let q = quotas.get_opt(QUOTA).await.ok()??;
        (uid(&q) != uid(&before)).then_some(())
    })
    .await?;
    eprintln!(
        "hub_limits: a deleted quota put back after {:.2}s",
        t.elapsed().as_secs_f64()
    );
    wait_limit(&quotas, 4).await?;
    // Stopped as the kubelet stops it (SIGTERM: it releases its Lease, so the next one leads at
    // once).
    hub_controller.terminate()?;
    let t = Instant::now();
    while hub_controller.exit_status().is_none() {
        if t.elapsed() > TIMEOUT {
            return Err("the hub controller did not stop on SIGTERM".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    quotas.delete(QUOTA, &DeleteParams::default()).await?;
    ocm::wait_gone(&quotas, QUOTA, "the ResourceQuota", TIMEOUT).await?;
    let mut relabelled = copy_body("UpdateInsight", "ok-0", CLUSTER);
    relabelled["metadata"]["labels"]["update.openshift.io/scope"] = json!("cluster");
    refused(
        put(&insights, "ok-0", relabelled.clone()).await,
        // The API server answers a binding without its parameter as Invalid.
        422,
        "ValidatingAdmissionPolicy 'update-status-hub-quota-required' with binding 'update-status-hub-quota-required' denied request: failed to configure binding: no params found",
        "a write where no quota bounds the counts",
    )?;
    refused(
        put(&token_insights, "ok-0", relabelled.clone()).await,
        422,
        "no params found",
        "a token-registered agent: a write where no quota bounds the counts",
    )?;
    hub_controller = start_hub_controller(env, controller_bin.clone(), &work, &[]).await?;
    wait_limit(&quotas, 4).await?;
    put(&insights, "ok-0", relabelled).await?;

    // 5. The hub admin is not bound by the policies (only by the counts, which it sets): a
    // finalizer and a foreign label (then removed), another cluster's ControlPlaneUpdateStatus.
    let admin: Api<UpdateInsight> = Api::namespaced(hub.clone(), CLUSTER);
    admin
        .patch("ok-1", &PatchParams::apply("admin"), &Patch::Apply(json!({
            "apiVersion": "update.openshift.io/v1alpha1", "kind": "UpdateInsight",
            "metadata": {"name": "ok-1", "finalizers": ["example.com/hold"], "labels": {"team": "payments"}},
        })))
        .await?;
    admin
        .patch("ok-1", &PatchParams::apply("admin"), &Patch::Apply(json!({
            "apiVersion": "update.openshift.io/v1alpha1", "kind": "UpdateInsight", "metadata": {"name": "ok-1"},
        })))
        .await?;
    let admin_planes: Api<ControlPlaneUpdateStatus> = Api::namespaced(hub.clone(), CLUSTER);
    let mut theirs = copy_body("ControlPlaneUpdateStatus", "cluster2", CLUSTER);
    theirs["metadata"]["labels"]["open-cluster-management.io/cluster-name"] = json!("cluster2");
    admin_planes
        .patch(
            "cluster2",
            &PatchParams::apply("admin"),
            &Patch::Apply(theirs),
        )
        .await?;
    admin_planes
        .delete("cluster2", &DeleteParams::default())
        .await?;
    planes.delete(CLUSTER, &DeleteParams::default()).await?;

    // 6. The real agent at its limit. Its namespace is full of stale copies (ok-0..2, ok-4).
    let spoke_kc = env.cluster_kubeconfig(CLUSTER)?;
    let hub_kc = env.hub_kubeconfig();
    update_status_e2e::snapshot::load_dir(&spoke, &oc_status_case("4.14.1-degraded")).await?;
    let before_403 = hub_refusals(env).await?;
    let hub_kubeconfig = format!("--hub-kubeconfig={}", volume.kubeconfig().display());
    let mut agent_process = Controller::launch(
        &update_status_e2e::controller::Launch {
            bin: controller_bin.clone(),
            kubeconfig: spoke_kc.clone(),
            log: work.join("agent.log"),
        },
        AGENT_NS,
        std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port(),
        &[
            &hub_kubeconfig,
            "--cluster-name=cluster1",
            "--hub-include-progress",
        ],
    )?;
    let log = agent_process.log.clone();
    let selector = "update.openshift.io/reconciler=hub-sync";
    poll_until(
        TIMEOUT,
        "the stale copies deleted, the quota filled with the agent's copies",
        || async {
            let there = list_at(&hub_kc, "updateinsights", CLUSTER, Some(selector))
                .await
                .ok()?;
            let names: Vec<&str> = there
                .iter()
                .filter_map(|o| o["metadata"]["name"].as_str())
                .collect();
            let planes = list_at(&hub_kc, "controlplaneupdatestatuses", CLUSTER, None)
                .await
                .ok()?;
            (names.len() == 4 && names.iter().all(|n| !n.starts_with("ok-")) && planes.len() == 1)
                .then_some(())
        },
    )
    .await
    .map_err(|e| format!("{e} (agent log: {})", log.display()))?;
    let local = list_at(&spoke_kc, "updateinsights", AGENT_NS, None).await?;
    assert!(
        local.len() > 4,
        "the local objects are all there: {}",
        local.len()
    );
    wait_for(
        TIMEOUT,
        "the refusal reported with reason quota",
        || async {
            agent_process.metrics().is_ok_and(|m| {
                m.lines().any(|l| {
                    l.starts_with("update_status_hub_sync_errors_total{")
                        && l.contains("reason=\"quota\"")
                })
            })
        },
    )
    .await?;
    let text = std::fs::read_to_string(&log)?;
    assert!(
        text.contains("exceeded quota: update-status"),
        "the warning names the quota: {}",
        log.display()
    );
    let warnings = text
        .lines()
        .filter(|l| l.contains("hub sync failed") && l.contains("exceeded quota"))
        .count();
    assert_eq!(
        warnings,
        1,
        "warned once while at the limit: {}",
        log.display()
    );
    let metrics = agent_process.metrics()?;
    assert!(
        !metrics
            .lines()
            .any(|l| l.starts_with("update_status_write_errors_total{")),
        "no local write failed"
    );
    // No tight loop: refused calls over a while, counted by the hub's API server itself.
    let start_403 = hub_refusals(env).await?;
    tokio::time::sleep(Duration::from_secs(8)).await;
    let refusals = hub_refusals(env).await? - start_403;
    eprintln!(
        "hub_limits: {} refused calls until the agent's copies filled the quota, then {refusals} in 8s",
        start_403 - before_403
    );
    // A pass tries at most a batch of creations once the quota is full, and passes back off
    // (1 s doubling): a tight loop would make thousands.
    assert!(
        refusals <= 100,
        "refused calls in 8s at the limit: {refusals}"
    );
    agent_process.running()?;

    // The limit raised: every copy arrives.
    set_override(&hub, Some(500)).await?;
    let t = Instant::now();
    wait_mirrored_between(
        &spoke_kc,
        &hub_kc,
        Local {
            namespace: AGENT_NS,
            hosted_cluster: None,
            owner_uid: Some(&mca_uid),
        },
        CLUSTER,
        true,
        "every copy once the limit is raised",
        &log,
    )
    .await?;
    eprintln!(
        "hub_limits: converged {:.1}s after the limit was raised",
        t.elapsed().as_secs_f64()
    );
    // Issue #47 item 6: the add-on's must-gather, on the cluster and on the hub, read back.
    update_status_e2e::must_gather::check(env, CLUSTER, &oc_status_case("4.14.1-degraded"), &work)
        .await
        .map_err(|e| format!("{e} (agent log: {})", log.display()))?;
    // Issue #47 item 7: a hosted cluster of cluster1, with no hand work.
    update_status_e2e::acm_hosted::check(env, CLUSTER, &work.join("hosted"))
        .await
        .map_err(|e| format!("{e} (hub controller log: {})", hub_controller.log.display()))?;
    drop(agent_process);
    drop(hub_controller);
    let _ = Api::<UpdateInsight>::namespaced(hub.clone(), CLUSTER)
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await;
    Ok(())
}

/// Calls on updateinsights the hub refused (403), from its API server's own counter.
/// An agent identity as OCM's token driver registers one (`pkg/registration/register/token`:
/// the ServiceAccount `<add-on>-agent` in the cluster's hub namespace, given the add-on's hub
/// ClusterRole there by the add-on manager): a client with a token of it.
async fn token_registered_agent(
    env: &OcmEnv,
    work: &std::path::Path,
) -> Result<Client, Box<dyn std::error::Error + Send + Sync>> {
    let sa = format!("{ADDON}-agent");
    let exists = |r: Result<String, ocm::OcmError>| match r {
        Err(e) if !e.to_string().contains("AlreadyExists") => Err(e),
        _ => Ok(()),
    };
    exists(
        env.kubectl_hub(["create", "serviceaccount", &sa, "-n", CLUSTER])
            .await,
    )?;
    exists(
        env.kubectl_hub([
            "create",
            "rolebinding",
            "update-status-token-agent",
            "-n",
            CLUSTER,
            "--clusterrole=open-cluster-management:update-status:agent",
            &format!("--serviceaccount={CLUSTER}:{sa}"),
        ])
        .await,
    )?;
    let token = env
        .kubectl_hub(["create", "token", &sa, "-n", CLUSTER])
        .await?;
    let hub = kube::config::Kubeconfig::read_from(env.hub_kubeconfig())?;
    let cluster = hub
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .ok_or("no cluster in the hub kubeconfig")?;
    let kubeconfig = json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "agent",
        "clusters": [{"name": "hub", "cluster": {
            "server": cluster.server,
            "certificate-authority-data": cluster.certificate_authority_data,
        }}],
        "contexts": [{"name": "agent", "context": {"cluster": "hub", "user": "agent"}}],
        "users": [{"name": "agent", "user": {"token": token.trim()}}],
    });
    let path = work.join("token-agent.kubeconfig");
    std::fs::write(&path, serde_json::to_vec(&kubeconfig)?)?;
    Ok(update_status_e2e::client_for(&path).await?)
}

async fn hub_refusals(env: &OcmEnv) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
    let m = env.kubectl_hub(["get", "--raw", "/metrics"]).await?;
    Ok(m.lines()
        .filter(|l| {
            l.starts_with("apiserver_request_total{")
                && l.contains("code=\"403\"")
                && l.contains("resource=\"updateinsights\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64)
}
