//! The update-status add-on's agent as a fleet admin runs it on the real OCM (issue #37 items 3
//! and 4): behind a proxy, with a heartbeat, reporting its own health.
//!
//! One managed cluster, `cluster1`, and a hub whose address only a proxy can reach: the agent's
//! hub kubeconfig names `hub.update-status.invalid` (the `.invalid` top-level domain never
//! resolves), which the test's HTTP CONNECT proxy ([`ConnectProxy`]) maps to the real hub. The
//! fleet's proxy settings are those of the AddOnDeploymentConfig (`proxyConfig`), as OCM's
//! add-on manager renders them into the agent's Deployment; then the kubeconfig's own
//! `proxy-url`, as OCM writes it for a klusterlet behind a proxy.
//!
//! 1. The rendered Deployment has the proxy variables and mounts the proxy CA's ConfigMap from
//!    its own namespace, and the template put that ConfigMap there.
//! 2. The agent (the release controller, as the Deployment starts it, with the container's
//!    environment) keeps its copies on the hub through the proxy, over **one** tunnel.
//! 3. The heartbeat annotation of the control plane's copy advances, one hub write per interval
//!    when nothing else changes (measured).
//! 4. Prometheus unreachable: the control plane's hub copy gets `AgentDegraded=True`
//!    (`PrometheusUnreachable`, shown by `--fleet`), and `False` once Prometheus is back; the
//!    ManagedClusterAddOn carries OCM's conditions only, and the agent's certificate may patch
//!    none of its status (`status.registrations`, `status.namespace`, a condition: 403 each; the
//!    add-on's RoleBinding subjects unchanged: issue #48 item 2).
//! 5. SIGSTOP of the agent: the annotation stops advancing; SIGCONT: it advances again.
//! 6. A `proxy-url` in the kubeconfig takes over from `HTTPS_PROXY` at the next credentials
//!    change: one tunnel through the other proxy.
//! 7. The proxies' passwords appear nowhere in the agent's log.
//!
//! Stand-ins for the kubelet as in `acm_addon` ([`update_status_e2e::addon_agent`]).
#![cfg(feature = "e2e")] // needs the local control planes and OCM: `make e2e`

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use update_status_api::acm::{CONDITION_AGENT_DEGRADED, LAST_REPORTED_ANNOTATION};
use update_status_api::crd::ControlPlaneUpdateStatus;
use update_status_e2e::addon_agent::{
    ADDON, AGENT_NS, DEPLOYMENT, TIMEOUT, agent_container, counter, hub_secret_volume,
    service_account_kubeconfig, start_agent_with,
};
use update_status_e2e::controller::Controller;
use update_status_e2e::hub_copies::{Local, wait_mirrored_between};
use update_status_e2e::ocm::{self, OcmEnv};
use update_status_e2e::playback::Simulator;
use update_status_e2e::poll_until;
use update_status_e2e::prometheus::{Prometheus, PrometheusOptions};
use update_status_e2e::proxy::ConnectProxy;
use update_status_simulator::{SimConfig, Simulation};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

const CLUSTER: &str = "cluster1";
/// A host name that resolves nowhere: only the proxy knows where the hub is.
const HUB_HOST: &str = "hub.update-status.invalid";
/// The agent's heartbeat interval here (`--hub-heartbeat-interval`; 5 min by default).
const HEARTBEAT: Duration = Duration::from_secs(2);
const PASSWORD1: &str = "pw1-ENV-PROXY-SECRET";
const PASSWORD2: &str = "pw2-KUBECONFIG-PROXY-SECRET";

#[tokio::test]
async fn the_agent_reports_through_a_proxy_with_a_heartbeat_and_its_health() -> TestResult {
    let env = OcmEnv::shared(&[CLUSTER]).await?;
    let hub = env.hub_client().await?;
    let started = Instant::now();
    let result = ocm::run_scenario(env, "acm_agent", scenario(env, hub.clone())).await;
    let _ = ocm::disable_addon(&hub, CLUSTER, ADDON).await;
    eprintln!("acm_agent: scenario took {:?}", started.elapsed());
    if result.is_ok() {
        env.stop().await?;
    }
    result
}

/// The hub's port and CA (base64), from the hub's admin kubeconfig.
fn hub_address(hub_kc: &Path) -> Result<(u16, String), BoxError> {
    let kc = kube::config::Kubeconfig::read_from(hub_kc)?;
    let cluster = kc
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .ok_or("no cluster in the hub kubeconfig")?;
    let server: http::Uri = cluster.server.as_deref().ok_or("no server")?.parse()?;
    let port = server.port_u16().ok_or("no port in the hub's URL")?;
    let ca = cluster
        .certificate_authority_data
        .ok_or("no CA data in the hub kubeconfig")?;
    Ok((port, ca))
}

/// The agent's hub kubeconfig as OCM would write it for a hub behind a proxy: the projected
/// one, naming the hub by `HUB_HOST` (its certificate is for `localhost`: `tls-server-name`),
/// with `proxy_url` if given; the certificate and key are the projected files (renewals
/// follow).
fn proxied_kubeconfig(
    projected: &Path,
    out: &Path,
    hub_port: u16,
    proxy_url: Option<&str>,
) -> Result<(), BoxError> {
    let mut kc: Value = serde_saphyr::from_str(&std::fs::read_to_string(projected)?)?;
    let dir = projected.parent().ok_or("no folder")?;
    for c in kc["clusters"].as_array_mut().ok_or("no clusters")? {
        c["cluster"]["server"] = json!(format!("https://{HUB_HOST}:{hub_port}"));
        c["cluster"]["tls-server-name"] = json!("localhost");
        if let Some(p) = proxy_url {
            c["cluster"]["proxy-url"] = json!(p);
        }
    }
    for u in kc["users"].as_array_mut().ok_or("no users")? {
        for key in ["client-certificate", "client-key"] {
            if let Some(f) = u["user"][key].as_str() {
                u["user"][key] = json!(dir.join(f).display().to_string());
            }
        }
    }
    // Written whole then renamed: the agent follows this file.
    let tmp = out.with_extension("tmp");
    std::fs::write(&tmp, kc.to_string())?;
    std::fs::rename(&tmp, out)?;
    Ok(())
}

/// The heartbeat annotation of the control plane's hub copy, if any.
async fn last_reported(hub: &Client) -> Option<jiff::Timestamp> {
    let api: Api<ControlPlaneUpdateStatus> = Api::namespaced(hub.clone(), CLUSTER);
    let cp = api.get_opt(CLUSTER).await.ok()??;
    cp.annotations().get(LAST_REPORTED_ANNOTATION)?.parse().ok()
}

/// Waits until the heartbeat annotation is later than `after`.
async fn wait_advanced(
    hub: &Client,
    after: Option<jiff::Timestamp>,
    what: &str,
) -> Result<jiff::Timestamp, BoxError> {
    Ok(poll_until(TIMEOUT, what, || async {
        let t = last_reported(hub).await?;
        (after.is_none_or(|a| t > a)).then_some(t)
    })
    .await?)
}

/// The `AgentDegraded` condition of the control plane's hub copy: (status, reason, message).
async fn degraded(hub: &Client) -> Option<(String, String, String)> {
    let api: Api<ControlPlaneUpdateStatus> = Api::namespaced(hub.clone(), CLUSTER);
    let cp = api.get_opt(CLUSTER).await.ok()??;
    let c = cp
        .status?
        .conditions
        .into_iter()
        .find(|c| c.type_ == CONDITION_AGENT_DEGRADED)?;
    Some((format!("{:?}", c.status), c.reason, c.message))
}

/// The plugin's `--fleet -o json` on the hub: the row of `cluster`.
fn fleet_row(hub_kubeconfig: &Path, cluster: &str) -> Result<Value, BoxError> {
    let bin = update_status_e2e::controller::workspace_bin(
        "kubectl-update_status",
        "UPDATE_STATUS_CLI_BIN",
    );
    let out = Command::new(&bin)
        .args(["--fleet", "-o", "json"])
        .env("KUBECONFIG", hub_kubeconfig)
        .stdin(std::process::Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    let report: Value = serde_json::from_slice(&out.stdout)?;
    report["clusters"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["cluster"] == cluster).cloned())
        .ok_or_else(|| format!("no fleet row for {cluster}: {report}").into())
}

/// The subjects of the RoleBindings of the add-on's hub ClusterRole in `cluster`'s namespace.
async fn addon_binding_subjects(hub: &Client) -> Result<Vec<String>, BoxError> {
    let api: Api<k8s_openapi::api::rbac::v1::RoleBinding> = Api::namespaced(hub.clone(), CLUSTER);
    let mut subjects: Vec<String> = api
        .list(&Default::default())
        .await?
        .items
        .into_iter()
        .filter(|b| b.role_ref.name == "open-cluster-management:update-status:agent")
        .flat_map(|b| b.subjects.unwrap_or_default())
        .map(|s| format!("{}:{}", s.kind, s.name))
        .collect();
    subjects.sort();
    Ok(subjects)
}

/// Issue #48 item 2: as the agent's own certificate, no write of its ManagedClusterAddOn's
/// status is allowed: not `status.registrations` (the add-on manager binds the add-on's hub
/// ClusterRole to the subjects there), not `status.namespace`, not a condition. The bindings of
/// the ClusterRole are unchanged after the attempts.
async fn agent_cannot_patch_its_addon_status(hub: &Client, agent: &Client) -> TestResult {
    let before = addon_binding_subjects(hub).await?;
    assert!(
        !before.is_empty(),
        "the add-on manager binds the agent's identity"
    );
    let api: Api<kube::core::DynamicObject> = ocm::addons_api(agent, CLUSTER);
    let attempts = [
        json!({"status": {"registrations": [{
            "signerName": "kubernetes.io/kube-apiserver-client",
            "subject": {"user": "attacker", "groups": ["system:authenticated"]},
        }]}}),
        json!({"status": {"namespace": "kube-system"}}),
        json!({"status": {"conditions": [{
            "type": "Available", "status": "True", "reason": "Forged", "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }]}}),
    ];
    for patch in attempts {
        let r = api
            .patch_status(
                ADDON,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&patch),
            )
            .await;
        match r {
            Err(kube::Error::Api(e)) if e.code == 403 => {}
            other => return Err(format!("{patch}: want 403 Forbidden, got {other:?}").into()),
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        addon_binding_subjects(hub).await?,
        before,
        "the add-on's RoleBinding subjects are unchanged"
    );
    eprintln!("acm_agent: 3 patches of managedclusteraddons/status as the agent: 403 each");
    Ok(())
}

fn signal(agent: &Controller, sig: &str) -> Result<(), BoxError> {
    let status = Command::new("kill")
        .args([sig, &agent.pid().to_string()])
        .status()?;
    if !status.success() {
        return Err(format!("kill {sig}: {status}").into());
    }
    Ok(())
}

async fn scenario(env: &'static OcmEnv, hub: Client) -> TestResult {
    let hub_kc = env.hub_kubeconfig();
    let work = env.work_dir("acm-agent-test")?;
    ocm::wait_cluster_joined(&hub, CLUSTER, TIMEOUT).await?;
    ocm::create_openshift_namespaces(env, CLUSTER).await?;

    let (hub_port, hub_ca) = hub_address(&hub_kc)?;
    let hub_dst = format!("{HUB_HOST}:{hub_port}");
    let routes = BTreeMap::from([(hub_dst.clone(), format!("127.0.0.1:{hub_port}"))]);
    let proxy1 = ConnectProxy::start(routes.clone(), Some(("agent", PASSWORD1))).await?;
    let proxy2 = ConnectProxy::start(routes, Some(("agent", PASSWORD2))).await?;

    // The fleet's proxy in the add-on's deployment config, as an admin sets it.
    env.apply_acm_config().await?;
    // The hub controller keeping the quota without which the agent may not write.
    let _hub_controller = update_status_e2e::hub_limits::start_quota_keeper(env, &work).await?;
    let proxy_config = json!({"spec": {"proxyConfig": {
        "httpsProxy": proxy1.url(),
        "noProxy": "127.0.0.1,localhost",
        "caBundle": hub_ca,
    }}});
    env.kubectl_hub([
        "patch",
        "addondeploymentconfig",
        "update-status",
        "-n",
        "open-cluster-management-update-status",
        "--type=merge",
        "-p",
        &proxy_config.to_string(),
    ])
    .await?;
    ocm::enable_addon(&hub, CLUSTER, ADDON).await?;

    // 1. The rendered Deployment: the proxy variables, and the proxy CA mounted from a
    //    ConfigMap of its own namespace, which the template ships there.
    let spoke = env.cluster_client(CLUSTER).await?;
    let container = poll_until(TIMEOUT, "the Deployment rendered with the proxy", || {
        let spoke = spoke.clone();
        async move {
            let c = agent_container(&spoke, CLUSTER).await.ok()?;
            c.env
                .iter()
                .flatten()
                .any(|e| e.name == "HTTPS_PROXY")
                .then_some(c)
        }
    })
    .await?;
    let env_of = |name: &str| {
        container
            .env
            .iter()
            .flatten()
            .find(|e| e.name == name)
            .and_then(|e| e.value.clone())
    };
    assert_eq!(env_of("NO_PROXY").as_deref(), Some("127.0.0.1,localhost"));
    assert_eq!(
        env_of("CA_BUNDLE_FILE_PATH").as_deref(),
        Some("/managed/proxy-ca/ca-bundle.crt")
    );
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(spoke.clone(), AGENT_NS);
    let pod = deployments
        .get(DEPLOYMENT)
        .await?
        .spec
        .template
        .spec
        .ok_or("no pod template")?;
    let mounted: Vec<String> = pod
        .volumes
        .iter()
        .flatten()
        .filter_map(|v| Some(v.config_map.as_ref()?.name.clone()))
        .collect();
    assert!(
        mounted.iter().any(|n| n == "update-status-proxy-ca"),
        "the pod mounts the proxy CA's ConfigMap: {mounted:?}"
    );
    let config_maps: Api<ConfigMap> = Api::namespaced(spoke.clone(), AGENT_NS);
    let cm = poll_until(
        TIMEOUT,
        &format!("ConfigMap {AGENT_NS}/update-status-proxy-ca on {CLUSTER} (the pod's namespace)"),
        || async {
            config_maps
                .get_opt("update-status-proxy-ca")
                .await
                .ok()
                .flatten()
        },
    )
    .await?;
    assert_eq!(
        cm.labels()
            .get("config.openshift.io/inject-trusted-cabundle")
            .map(String::as_str),
        Some("true"),
        "OpenShift fills it with the cluster's trusted CA bundle"
    );
    ocm::set_deployment_available(&spoke, AGENT_NS, DEPLOYMENT).await?;
    ocm::wait_addon_condition(&hub, CLUSTER, ADDON, "Available", "True", TIMEOUT).await?;
    let mca_uid = ocm::addons_api(&hub, CLUSTER)
        .get(ADDON)
        .await?
        .uid()
        .ok_or("no uid")?;

    // 2. The agent, through the proxy of its environment.
    let volume = hub_secret_volume(&spoke, &work.join("hub-secret")).await?;
    let proxied_dir = work.join("hub-proxied");
    std::fs::create_dir_all(&proxied_dir)?;
    let proxied: PathBuf = proxied_dir.join("kubeconfig");
    proxied_kubeconfig(&volume.kubeconfig(), &proxied, hub_port, None)?;
    let sim = Simulation::new(SimConfig {
        operators: 3,
        pools: 1,
        masters: 1,
        nodes_per_pool: 1,
        seed: 11,
        start: jiff::Timestamp::now(),
        ..Default::default()
    })?;
    let mut simulator = Simulator::new(spoke.clone(), sim);
    simulator.install().await?;
    let mut prometheus = Prometheus::start(PrometheusOptions::default())?;
    prometheus.kill(); // unreachable until step 4
    let sa_kc = service_account_kubeconfig(env, CLUSTER, &work).await?;
    let agent = start_agent_with(
        &container,
        &sa_kc,
        &proxied,
        &work,
        CLUSTER,
        &[
            format!("--hub-heartbeat-interval={}s", HEARTBEAT.as_secs()),
            format!("--prometheus-url={}", prometheus.url()),
            "--prometheus-interval=1s".to_string(),
        ],
        true,
    )?;
    let spoke_kc = env.cluster_kubeconfig(CLUSTER)?;
    let local = Local {
        namespace: AGENT_NS,
        hosted_cluster: None,
        owner_uid: Some(&mca_uid),
    };
    let t = wait_mirrored_between(
        &spoke_kc,
        &hub_kc,
        local,
        CLUSTER,
        false,
        "cluster1's copies, through the proxy",
        &agent.log,
    )
    .await?;
    eprintln!("acm_agent: copies on the hub through the proxy after {t:?}");
    assert_eq!(
        (proxy1.tunnels(&hub_dst), proxy1.open()),
        (1, 1),
        "one tunnel, opened once, for the session's watches and calls"
    );

    // 3. The heartbeat advances.
    let first = wait_advanced(&hub, None, "the heartbeat annotation").await?;
    let second = wait_advanced(&hub, Some(first), "the heartbeat advancing").await?;
    assert!(second > first);

    // 4. Prometheus unreachable: AgentDegraded on the copy, with the reason, shown by
    //    --fleet; back: not degraded.
    let (_, reason, message) = poll_until(
        TIMEOUT,
        "AgentDegraded=True on the control plane's copy",
        || async { degraded(&hub).await.filter(|d| d.0 == "True") },
    )
    .await?;
    assert_eq!(reason, "PrometheusUnreachable", "{message}");
    assert!(message.contains(&prometheus.url()), "{message}");
    let row = fleet_row(&hub_kc, CLUSTER)?;
    assert_eq!(
        row["addOn"]["degraded"]["reason"], "PrometheusUnreachable",
        "--fleet shows the agent's health: {row}"
    );
    prometheus.restart()?;
    let (_, reason, _) = poll_until(
        TIMEOUT,
        "AgentDegraded=False once Prometheus is back",
        || async { degraded(&hub).await.filter(|d| d.0 == "False") },
    )
    .await?;
    assert_eq!(reason, "AsExpected");
    let mca = ocm::addons_api(&hub, CLUSTER).get(ADDON).await?;
    assert_eq!(
        ocm::condition_status(&mca, "Available").as_deref(),
        Some("True"),
        "OCM's own condition"
    );
    assert!(
        ocm::condition(&mca, "Degraded").is_none(),
        "nothing of ours on the ManagedClusterAddOn"
    );
    let agent_client = update_status_e2e::client_for(&volume.kubeconfig()).await?;
    agent_cannot_patch_its_addon_status(&hub, &agent_client).await?;

    // The steady state's cost: one heartbeat write per interval, nothing else.
    let before = agent.metrics()?;
    let window = HEARTBEAT * 5;
    let measured = Instant::now();
    tokio::time::sleep(window).await;
    let after = agent.metrics()?;
    let elapsed = measured.elapsed();
    let writes = |m: &str| counter(m, "update_status_hub_writes_total");
    let beats = |m: &str| {
        m.lines()
            .filter(|l| {
                l.starts_with("update_status_hub_writes_total{") && l.contains("verb=\"heartbeat\"")
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>()
    };
    let heartbeat_writes = beats(&after) - beats(&before);
    let per_interval = heartbeat_writes * HEARTBEAT.as_secs_f64() / elapsed.as_secs_f64();
    eprintln!(
        "acm_agent: steady state: {heartbeat_writes} heartbeat writes in {elapsed:?} ({per_interval:.2} per interval), {} hub writes in all",
        writes(&after) - writes(&before)
    );
    assert_eq!(
        writes(&after) - writes(&before),
        heartbeat_writes,
        "a steady cluster writes only its heartbeat"
    );
    assert!(
        (0.75..=1.05).contains(&per_interval),
        "at most one heartbeat write per interval, and at least one per interval and a pass: {per_interval}"
    );

    // 5. SIGSTOP: the annotation stops; SIGCONT: it advances again.
    // (Short enough for the leader's Lease: it renews within 10 s or steps down.)
    wait_advanced(&hub, Some(second), "a heartbeat before the stop").await?;
    signal(&agent, "-STOP")?;
    // A patch the agent sent just before the stop may still land.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let at_stop = last_reported(&hub).await;
    tokio::time::sleep(HEARTBEAT * 2).await;
    let stopped = last_reported(&hub).await;
    signal(&agent, "-CONT")?;
    assert_eq!(
        stopped, at_stop,
        "a stopped agent's heartbeat does not advance"
    );
    wait_advanced(&hub, stopped, "the heartbeat after SIGCONT").await?;
    assert_eq!(proxy1.tunnels(&hub_dst), 1, "still the one tunnel");

    // 6. The kubeconfig's proxy-url takes over at the next credentials change.
    let reloads = counter(
        &agent.metrics()?,
        "update_status_hub_credential_reloads_total",
    );
    proxied_kubeconfig(
        &volume.kubeconfig(),
        &proxied,
        hub_port,
        Some(&proxy2.url()),
    )?;
    poll_until(TIMEOUT, "the switch to the kubeconfig's proxy", || async {
        let m = agent.metrics().ok()?;
        (counter(&m, "update_status_hub_credential_reloads_total") > reloads).then_some(())
    })
    .await?;
    let switched = last_reported(&hub).await;
    wait_advanced(&hub, switched, "a heartbeat through the kubeconfig's proxy").await?;
    wait_advanced(&hub, last_reported(&hub).await, "another one").await?;
    assert_eq!(
        proxy2.tunnels(&hub_dst),
        1,
        "one tunnel through the proxy-url"
    );
    assert!(proxy1.refused().is_empty() && proxy2.refused().is_empty());

    // 7. No proxy password in the agent's log.
    let log = std::fs::read_to_string(&agent.log)?;
    for secret in [PASSWORD1, PASSWORD2] {
        assert!(!log.contains(secret), "the log holds a proxy password");
    }
    drop(agent);
    drop(volume);
    Ok(())
}
