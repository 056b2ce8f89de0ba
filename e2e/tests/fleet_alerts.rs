//! Fleet alerting for add-on installs, end to end with real processes (issue #37 item 1): what
//! the cluster's Prometheus scrapes is configured by what the add-on delivers, and ACM's fleet
//! rules fire on it.
//!
//! On the real OCM of `hack/ocm-env.sh` (a hub, `cluster1` and `cluster2`), `config/acm` is
//! applied on the hub and the add-on enabled for both clusters. On each managed cluster:
//!
//! 1. the ManifestWork delivers the ServiceMonitor, the PrometheusRule and the RBAC of the
//!    cluster's Prometheus (`openshift-monitoring/prometheus-k8s`), read back from the managed
//!    cluster's API server: the ServiceMonitor and the PrometheusRule exactly as in
//!    `config/prometheus` (the alert texts' Go templates survive OCM's rendering);
//! 2. the agent runs as the delivered Deployment starts it (the debug controller with its
//!    arguments, as its ServiceAccount, its hub credentials from the Secret OCM wrote and its
//!    `/metrics` serving certificate from the Secret its Service asks OpenShift's service CA for,
//!    both projected as the kubelet would), `/metrics` secure as shipped;
//! 3. a real `prometheus` plays `prometheus-k8s`: its scrape job is the delivered ServiceMonitor
//!    translated as the Prometheus Operator does (`update_status_e2e::monitoring`): the agent's
//!    Service is discovered as `prometheus-k8s` (the delivered Role; Debian's Prometheus has no
//!    Kubernetes discovery, so the test lists the Services with `prometheus-k8s`'s token and
//!    hands them over as file SD with the same meta labels), kept by the ServiceMonitor's
//!    selector and port, and scraped with its scheme, path, TLS server name and CA, and
//!    `prometheus-k8s`'s ServiceAccount token, which the agent's TokenReview and
//!    SubjectAccessReview accept through the delivered RoleBinding; its rules are the delivered
//!    PrometheusRule.
//!
//! A second real `prometheus` plays ACM observability on the hub: it federates each cluster's
//! allowlisted series (the allowlist the add-on delivered to that cluster,
//! `open-cluster-management-addon-observability/observability-metrics-custom-allowlist`, one
//! `match[]` per name) adding the `cluster` and `clusterID` labels ACM's metrics collector adds,
//! and evaluates
//! `config/acm/observability/fleet-rules.yaml` with every `for:` shortened (the rewritten file
//! passes `promtool check rules`). A simulated update on `cluster1` gets stuck on a drain blocked
//! by a PodDisruptionBudget, `cluster2` is not updating: `UpdateStatusFleetUpdateTakingLong`
//! fires for `cluster1` alone (read from the hub Prometheus' `/api/v1/alerts`), and
//! `UpdateStatusFleetErrorHealthInsight` for `cluster1`'s node whose drain is blocked; both
//! resolve once the drain goes through and the update completes.
//!
//! The dashboards (issue #49), at the stuck point and once the update completed: every query
//! of the console's "Cluster update" dashboard (the ConfigMap the add-on delivered to
//! `cluster1`'s `openshift-config-managed`) evaluated by `cluster1`'s Prometheus, and every
//! query of the fleet dashboard (`config/acm/observability/grafana-dashboard.yaml`, all clusters)
//! by the hub Prometheus, must return what the clusters' objects say
//! (`update_status_e2e::dashboard_expect`); at the stuck point both are drawn from those results
//! into `docs/images/dashboard-console.png` and `docs/images/dashboard-fleet.png`
//! (`update_status_e2e::dashboards`: our own HTML in headless Chromium, not the console's or
//! Grafana's renderer).
//!
//! Stand-ins, as in `acm_addon`: no kubelet (Secrets projected by the harness), no service CA
//! (the test signs the serving certificate the Service asks for and writes its Secret), no
//! cluster network (the Service's address is mapped to the agent's loopback port; the Service,
//! its target port and the container port must still agree with the ServiceMonitor's port).
#![cfg(feature = "e2e")] // needs the local control planes and OCM: `make e2e`

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine;
use k8s_openapi::api::core::v1::{Container, PodSpec, Service};
use kube::api::{Api, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::discovery::ApiResource;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use update_status_e2e::addon_agent::wait_deployment;
use update_status_e2e::controller::{Controller, Launch, workspace_bin};
use update_status_e2e::dashboard_expect::{self, ClusterObjects, Expect};
use update_status_e2e::dashboards::{self, Evaluated, Panel};
use update_status_e2e::monitoring;
use update_status_e2e::ocm::{self, OcmEnv, SecretVolume};
use update_status_e2e::playback::Simulator;
use update_status_e2e::prometheus::{Prometheus, PrometheusOptions, free_port};
use update_status_e2e::{poll_until, repo_root};
use update_status_simulator::{FaultSpec, Faults, SimConfig, Simulation};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

const ADDON: &str = "update-status";
const AGENT_NS: &str = "openshift-update-status";
const DEPLOYMENT: &str = "update-status-controller";
const HUB_SECRET: &str = "update-status-hub-kubeconfig";
const MONITORING_NS: &str = "openshift-monitoring";
const PROMETHEUS_SA: &str = "prometheus-k8s";
const CLUSTER1: &str = "cluster1";
const CLUSTER2: &str = "cluster2";
/// The fleet alert of an update running too long, and the one of an agent not reporting.
const TAKING_LONG: &str = "UpdateStatusFleetUpdateTakingLong";
const NOT_REPORTING: &str = "UpdateStatusFleetAddOnNotReporting";
/// The fleet alert of a lasting Error (or Critical) health insight.
const ERROR_INSIGHT: &str = "UpdateStatusFleetErrorHealthInsight";
/// The `for:` of every fleet rule here (6 hours and 30 minutes in the shipped file).
const SHORT_FOR: &str = "3s";
/// Scrape and federation interval (the ServiceMonitor says 30s, ACM collects every 5 minutes).
const INTERVAL: &str = "1s";
/// Files of the prometheus-k8s pod that the ServiceMonitor names: its ServiceAccount token and
/// the service CA bundle OpenShift mounts into it.
const POD_TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";
const POD_SERVICE_CA: &str = "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt";
/// For OCM to act (controller round trips, a work status sync of 2 s), Prometheus to scrape,
/// federate and evaluate.
const TIMEOUT: Duration = Duration::from_secs(90);

#[tokio::test]
async fn a_stuck_update_fires_the_fleet_alert_naming_its_cluster() -> TestResult {
    let started = Instant::now();
    let env = OcmEnv::shared(&[CLUSTER1, CLUSTER2]).await?;
    eprintln!(
        "fleet_alerts: OCM environment up after {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let hub = env.hub_client().await?;
    let result = ocm::run_scenario(env, "fleet_alerts", scenario(env, hub.clone())).await;
    for c in [CLUSTER1, CLUSTER2] {
        let _ = ocm::disable_addon(&hub, c, ADDON).await;
    }
    if result.is_ok() {
        env.stop().await?;
    }
    eprintln!(
        "fleet_alerts: {:.1}s in all",
        started.elapsed().as_secs_f64()
    );
    result
}

fn gvk_resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// A delivered object of `cluster`, once the ManifestWork has applied it.
async fn delivered(
    spoke: &Client,
    cluster: &str,
    ar: &ApiResource,
    name: &str,
) -> Result<Value, BoxError> {
    let api: Api<DynamicObject> = Api::namespaced_with(spoke.clone(), AGENT_NS, ar);
    let obj = poll_until(
        TIMEOUT,
        &format!(
            "{} {AGENT_NS}/{name} on {cluster}, delivered by the add-on's ManifestWork",
            ar.kind
        ),
        || async { api.get_opt(name).await.ok().flatten() },
    )
    .await?;
    Ok(serde_json::to_value(obj)?)
}

/// Creates namespace `ns` on `cluster` unless it exists.
async fn ensure_namespace(env: &OcmEnv, cluster: &str, ns: &str) -> Result<(), BoxError> {
    match env
        .kubectl_cluster(cluster, ["create", "namespace", ns])
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.to_string().contains("AlreadyExists") => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// A one-hour token of ServiceAccount `ns/name` on `cluster` (the TokenRequest API).
async fn token(env: &OcmEnv, cluster: &str, ns: &str, name: &str) -> Result<String, BoxError> {
    Ok(env
        .kubectl_cluster(
            cluster,
            ["create", "token", name, "-n", ns, "--duration=1h"],
        )
        .await?
        .trim()
        .to_string())
}

/// The managed cluster's API server URL and its CA (written to `dir`).
fn api_server(env: &OcmEnv, cluster: &str, dir: &Path) -> Result<(String, PathBuf), BoxError> {
    let kc = kube::config::Kubeconfig::read_from(env.cluster_kubeconfig(cluster)?)?;
    let c = kc
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .ok_or("no cluster in the managed cluster's kubeconfig")?;
    let server = c.server.clone().ok_or("no server in the kubeconfig")?;
    let ca = dir.join(format!("{cluster}-apiserver-ca.crt"));
    match (&c.certificate_authority, &c.certificate_authority_data) {
        (Some(path), _) => {
            std::fs::copy(path, &ca)?;
        }
        (None, Some(data)) => {
            std::fs::write(
                &ca,
                base64::engine::general_purpose::STANDARD.decode(data.trim())?,
            )?;
        }
        (None, None) => return Err("the managed cluster's kubeconfig has no CA".into()),
    }
    Ok((server, ca))
}

/// A kubeconfig of ServiceAccount `ns/name` on `cluster` (a one-hour token), in `dir`, and the
/// token.
async fn sa_kubeconfig(
    env: &OcmEnv,
    cluster: &str,
    ns: &str,
    name: &str,
    dir: &Path,
) -> Result<(PathBuf, String), BoxError> {
    let token = token(env, cluster, ns, name).await?;
    let (server, ca) = api_server(env, cluster, dir)?;
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority": ca}}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": cluster, "user": name}}],
        "current-context": name,
    });
    let path = dir.join(format!("{cluster}-{ns}-{name}.kubeconfig"));
    std::fs::write(&path, config.to_string())?;
    Ok((path, token))
}

/// OpenShift's service CA, standing in: a CA, and the serving certificate it would issue for
/// `dns_name` (`<service>.<namespace>.svc`), as PEM `(ca, tls.crt, tls.key)`.
fn service_ca_certificate(dns_name: &str) -> Result<(String, String, String), BoxError> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca.distinguished_name.push(
        rcgen::DnType::CommonName,
        "openshift-service-serving-signer (e2e)",
    );
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate()?;
    let mut params = rcgen::CertificateParams::new(vec![dns_name.to_string()])?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, dns_name);
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.signed_by(&key, &issuer)?;
    Ok((ca_cert.pem(), cert.pem(), key.serialize_pem()))
}

/// The port of `--flag=host:port` in `args`.
fn flag_port(args: &[String], flag: &str) -> Option<u16> {
    args.iter()
        .find_map(|a| a.strip_prefix(&format!("{flag}=")))
        .and_then(|v| v.rsplit(':').next())
        .and_then(|p| p.parse().ok())
}

/// One managed cluster with its agent and its Prometheus.
struct Monitored {
    name: &'static str,
    cluster_id: String,
    simulator: Simulator,
    prometheus: Prometheus,
    agent: Controller,
    _volumes: Vec<SecretVolume>,
}

/// What the add-on's ManifestWork delivered to a managed cluster.
struct Delivered {
    pod: PodSpec,
    container: Container,
    args: Vec<String>,
    service: Service,
    service_monitor: Value,
    rule: Value,
}

/// Step 1: the agent's Deployment and Service, the ServiceMonitor and the PrometheusRule, once
/// the ManifestWork has applied them on `cluster`; the last two exactly as in `config/prometheus`.
async fn delivered_objects(spoke: &Client, cluster: &str) -> Result<Delivered, BoxError> {
    let deployment = wait_deployment(spoke, AGENT_NS, DEPLOYMENT, cluster, TIMEOUT).await?;
    let pod = deployment
        .spec
        .template
        .spec
        .ok_or("the Deployment has no pod spec")?;
    let container: Container = pod
        .containers
        .first()
        .cloned()
        .ok_or("the Deployment has no container")?;
    let service_monitor = delivered(
        spoke,
        cluster,
        &gvk_resource(
            "monitoring.coreos.com",
            "v1",
            "ServiceMonitor",
            "servicemonitors",
        ),
        DEPLOYMENT,
    )
    .await?;
    let rule = delivered(
        spoke,
        cluster,
        &gvk_resource(
            "monitoring.coreos.com",
            "v1",
            "PrometheusRule",
            "prometheusrules",
        ),
        "update-status",
    )
    .await?;
    // As shipped in config/prometheus: OCM's rendering of the template (every {{...}} a
    // variable) leaves the alert texts' Go templates intact.
    for (obj, file, kind) in [
        (&service_monitor, "service-monitor.yaml", "ServiceMonitor"),
        (&rule, "prometheus-rule.yaml", "PrometheusRule"),
    ] {
        let shipped = serde_saphyr::from_multiple::<Value>(&std::fs::read_to_string(
            repo_root().join("config/prometheus").join(file),
        )?)?
        .into_iter()
        .find(|d| d["kind"] == kind)
        .ok_or_else(|| format!("no {kind} in config/prometheus/{file}"))?;
        assert_eq!(
            obj["spec"], shipped["spec"],
            "the {kind} {cluster} got is config/prometheus/{file}'s"
        );
    }
    let services: Api<Service> = Api::namespaced(spoke.clone(), AGENT_NS);
    let service = poll_until(
        TIMEOUT,
        &format!("Service {AGENT_NS}/{DEPLOYMENT} on {cluster}"),
        || async { services.get_opt(DEPLOYMENT).await.ok().flatten() },
    )
    .await?;

    Ok(Delivered {
        pod,
        args: container.args.clone().unwrap_or_default(),
        container,
        service,
        service_monitor,
        rule,
    })
}

/// The delivered objects agree with each other: the ServiceMonitor's port is the Service's,
/// whose target port is the container's metrics port, the one the agent binds; the Deployment
/// mounts at `--metrics-cert-dir` the Secret the Service asks the service CA for, issued for the
/// TLS server name the ServiceMonitor checks. Returns that Secret's name and the server name.
fn check_wiring(d: &Delivered) -> Result<(String, String), BoxError> {
    let Delivered {
        pod,
        container,
        args,
        service,
        service_monitor,
        ..
    } = d;
    let endpoint = &service_monitor["spec"]["endpoints"][0];
    let port_name = endpoint["port"].as_str().ok_or("no endpoint port")?;
    let service_port = service
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .and_then(|ports| ports.iter().find(|p| p.name.as_deref() == Some(port_name)))
        .ok_or_else(|| format!("the Service has no port {port_name}"))?;
    let target = match &service_port.target_port {
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s)) => s.clone(),
        other => return Err(format!("the Service's target port is {other:?}").into()),
    };
    let container_port = container
        .ports
        .iter()
        .flatten()
        .find(|p| p.name.as_deref() == Some(target.as_str()))
        .map(|p| p.container_port)
        .ok_or_else(|| format!("the container has no port {target}"))?;
    assert_eq!(
        flag_port(args, "--metrics-bind-address").map(i32::from),
        Some(container_port),
        "the agent serves /metrics on the port the Service targets: {args:?}"
    );

    let cert_secret = service
        .annotations()
        .get("service.beta.openshift.io/serving-cert-secret-name")
        .cloned()
        .ok_or("the Service asks the service CA for no serving certificate")?;
    let cert_dir = args
        .iter()
        .find_map(|a| a.strip_prefix("--metrics-cert-dir="))
        .ok_or("the agent has no --metrics-cert-dir")?;
    let volume = container
        .volume_mounts
        .iter()
        .flatten()
        .find(|m| m.mount_path == cert_dir)
        .map(|m| m.name.clone())
        .ok_or_else(|| format!("nothing is mounted at {cert_dir}"))?;
    let mounted = pod
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name == volume)
        .and_then(|v| v.secret.as_ref())
        .and_then(|s| s.secret_name.clone());
    assert_eq!(
        mounted.as_deref(),
        Some(cert_secret.as_str()),
        "the Deployment mounts the Secret the service CA writes at {cert_dir}"
    );
    let server_name = endpoint["tlsConfig"]["serverName"]
        .as_str()
        .ok_or("the ServiceMonitor names no TLS server")?;
    assert_eq!(
        server_name,
        format!("{}.{}.svc", service.name_any(), AGENT_NS),
        "the service CA's certificate is for the Service's DNS name"
    );
    Ok((cert_secret, server_name.to_string()))
}

/// Sets up `cluster` as the module documentation says (steps 1 to 3), with `sim` installed.
async fn monitor(
    env: &OcmEnv,
    cluster: &'static str,
    sim: Simulation,
    work: &Path,
) -> Result<Monitored, BoxError> {
    let spoke = env.cluster_client(cluster).await?;
    let dir = work.join(cluster);
    std::fs::create_dir_all(&dir)?;
    let d = delivered_objects(&spoke, cluster).await?;
    let (cert_secret, server_name) = check_wiring(&d)?;

    // 2. The agent's files: the serving certificate its Service asks the service CA for, and
    //    its hub credentials, projected as the kubelet would.
    let (ca, crt, key) = service_ca_certificate(&server_name)?;
    let service_ca = dir.join("service-ca.crt");
    std::fs::write(&service_ca, &ca)?;
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(spoke.clone(), AGENT_NS);
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    secrets
        .patch(
            &cert_secret,
            &PatchParams::apply("update-status-e2e-service-ca").force(),
            &Patch::Apply(json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": cert_secret, "namespace": AGENT_NS},
                "type": "kubernetes.io/tls",
                "data": {"tls.crt": b64(&crt), "tls.key": b64(&key)},
            })),
        )
        .await?;
    let certs = SecretVolume::mount(
        &spoke,
        AGENT_NS,
        &cert_secret,
        &dir.join("metrics-tls"),
        TIMEOUT,
    )
    .await?;
    ocm::wait_secret(
        &spoke,
        AGENT_NS,
        HUB_SECRET,
        &["kubeconfig", "tls.crt", "tls.key"],
        TIMEOUT,
    )
    .await?;
    let hub_volume =
        SecretVolume::mount(&spoke, AGENT_NS, HUB_SECRET, &dir.join("hub"), TIMEOUT).await?;

    // The cluster's state, then the agent as the Deployment starts it.
    let mut simulator = Simulator::new(spoke.clone(), sim);
    simulator.install().await?;
    let cluster_id = env
        .kubectl_cluster(
            cluster,
            [
                "get",
                "clusterversion",
                "version",
                "-o",
                "jsonpath={.spec.clusterID}",
            ],
        )
        .await?;
    let metrics_port = free_port()?;
    let mut extra = vec!["--metrics-secure=true".to_string()];
    for a in &d.args {
        let (flag, _) = a.split_once('=').unwrap_or((a.as_str(), ""));
        match flag {
            // Launch sets these (loopback ports, the namespace).
            "--metrics-bind-address" | "--health-probe-bind-address" | "--namespace" => {}
            // The alerts the agent reads are another test's (alerts, service_account).
            "--prometheus-url" | "--prometheus-token-file" | "--prometheus-ca-file" => {}
            "--metrics-cert-dir" => {
                extra.push(format!("--metrics-cert-dir={}", certs.dir().display()));
            }
            "--hub-kubeconfig" => {
                extra.push(format!(
                    "--hub-kubeconfig={}",
                    hub_volume.kubeconfig().display()
                ));
            }
            _ => extra.push(a.clone()),
        }
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let agent = Controller::launch(
        &Launch {
            bin: workspace_bin("update-status-controller", "UPDATE_STATUS_CONTROLLER_BIN"),
            kubeconfig: sa_kubeconfig(env, cluster, AGENT_NS, DEPLOYMENT, &dir)
                .await?
                .0,
            log: dir.join("agent.log"),
        },
        AGENT_NS,
        metrics_port,
        &extra,
    )?;

    // 3. prometheus-k8s, as OpenShift has it, configured by the delivered objects.
    ensure_namespace(env, cluster, MONITORING_NS).await?;
    if let Err(e) = env
        .kubectl_cluster(
            cluster,
            [
                "create",
                "serviceaccount",
                PROMETHEUS_SA,
                "-n",
                MONITORING_NS,
            ],
        )
        .await
        && !e.to_string().contains("AlreadyExists")
    {
        return Err(e.into());
    }
    let (prometheus_kubeconfig, prometheus_token) =
        sa_kubeconfig(env, cluster, MONITORING_NS, PROMETHEUS_SA, &dir).await?;
    let token_file = dir.join("prometheus-k8s.token");
    std::fs::write(&token_file, prometheus_token)?;
    // Service discovery as prometheus-k8s (what Prometheus' Kubernetes discovery, role service,
    // lists: the delivered Role allows it), handed to Prometheus as file SD.
    let as_prometheus = update_status_e2e::client_for(&prometheus_kubeconfig).await?;
    let mut discovered = Vec::new();
    for ns in monitoring::service_monitor_namespaces(&d.service_monitor)? {
        let api: Api<Service> = Api::namespaced(as_prometheus.clone(), &ns);
        let list = api.list(&Default::default()).await.map_err(|e| {
            format!("{PROMETHEUS_SA} discovering the Services of {ns} on {cluster}: {e}")
        })?;
        for svc in list {
            discovered.push(serde_json::to_value(svc)?);
        }
    }
    let targets = dir.join("targets.json");
    std::fs::write(
        &targets,
        monitoring::service_targets(&discovered).to_string(),
    )?;
    let pod_file = |path: &str| match path {
        POD_TOKEN => Some(token_file.clone()),
        POD_SERVICE_CA => Some(service_ca.clone()),
        _ => None,
    };
    let jobs = monitoring::service_monitor_jobs(
        &d.service_monitor,
        &targets,
        &pod_file,
        &format!("127.0.0.1:{metrics_port}"),
        INTERVAL,
    )?;
    let rules_file = dir.join("prometheus-rule.json");
    std::fs::write(&rules_file, monitoring::prometheus_rule_file(&d.rule)?)?;
    monitoring::promtool_check_rules(&rules_file)?;
    let mut prometheus = Prometheus::start(PrometheusOptions {
        rules: std::fs::read_to_string(&rules_file)?,
        scrape_configs: jobs,
        ..Default::default()
    })?;
    prometheus.wait_ready(TIMEOUT).await?;

    Ok(Monitored {
        name: cluster,
        cluster_id,
        simulator,
        prometheus,
        agent,
        _volumes: vec![certs, hub_volume],
    })
}

/// Waits until the cluster's Prometheus scrapes the agent successfully (the target found by
/// service discovery, `health: up`); the error says what Prometheus last saw.
async fn wait_scraped(m: &mut Monitored) -> Result<(), BoxError> {
    let last = std::sync::Mutex::new(String::from("no answer"));
    let what = format!(
        "{}'s Prometheus to scrape the agent through the delivered ServiceMonitor",
        m.name
    );
    let (agent, prometheus, last) = (&mut m.agent, &m.prometheus, &last);
    let result = poll_until(TIMEOUT, &what, || {
        let running = agent.running();
        async move {
            let note = |s: String| {
                if let Ok(mut l) = last.lock() {
                    *l = s;
                }
            };
            if let Err(e) = running {
                note(e);
                return None;
            }
            let (_, body) = prometheus.request("GET", "/api/v1/targets").await.ok()?;
            let v: Value = serde_json::from_str(&body).ok()?;
            let targets = v["data"]["activeTargets"].as_array()?;
            note(format!(
                "active targets: {}",
                serde_json::to_string(targets).unwrap_or_default()
            ));
            targets
                .iter()
                .any(|t| t["labels"]["job"] == DEPLOYMENT && t["health"] == "up")
                .then_some(())
        }
    })
    .await;
    match result {
        Ok(()) => Ok(()),
        Err(e) => Err(format!(
            "{e}; {}; agent log: {}",
            last.lock().map(|l| l.clone()).unwrap_or_default(),
            agent.log.display()
        )
        .into()),
    }
}

/// Where the console reads dashboards, and the ConfigMap of ours there.
fn dashboards_ns() -> &'static str {
    update_status_controllers::dashboards::CONSOLE_DASHBOARD_NAMESPACE
}
const CONSOLE_DASHBOARD: &str = update_status_controllers::dashboards::CONSOLE_DASHBOARD_NAME;
/// The per-cluster allowlist ACM's metrics collector reads, as the add-on delivers it.
const ALLOWLIST_NS: &str = update_status_controllers::acm_manifests::OBSERVABILITY_ADDON_NAMESPACE;
const ALLOWLIST: &str = update_status_controllers::acm_manifests::CUSTOM_ALLOWLIST;

fn config_map_resource() -> ApiResource {
    gvk_resource("", "v1", "ConfigMap", "configmaps")
}

/// A delivered object `ns/name` of `cluster`, once the ManifestWork has applied it.
async fn delivered_in(
    spoke: &Client,
    cluster: &str,
    ns: &str,
    name: &str,
    ar: &ApiResource,
) -> Result<Value, BoxError> {
    let api: Api<DynamicObject> = Api::namespaced_with(spoke.clone(), ns, ar);
    let obj = poll_until(
        TIMEOUT,
        &format!(
            "{} {ns}/{name} on {cluster}, delivered by the add-on's ManifestWork",
            ar.kind
        ),
        || async { api.get_opt(name).await.ok().flatten() },
    )
    .await?;
    Ok(serde_json::to_value(obj)?)
}

/// Our objects on each cluster, as the dashboards' expectations read them.
async fn cluster_objects(env: &OcmEnv) -> Result<BTreeMap<String, ClusterObjects>, BoxError> {
    let mut out = BTreeMap::new();
    for c in [CLUSTER1, CLUSTER2] {
        let text = env
            .kubectl_cluster(
                c,
                [
                    "get",
                    "controlplaneupdatestatuses,workerpoolupdatestatuses,updateinsights",
                    "-n",
                    AGENT_NS,
                    "-o",
                    "json",
                ],
            )
            .await?;
        let list: Value = serde_json::from_str(&text)?;
        let items = list["items"].as_array().cloned().unwrap_or_default();
        out.insert(c.to_string(), ClusterObjects::from_items(&items));
    }
    Ok(out)
}

type Expectations =
    dyn Fn(&BTreeMap<String, ClusterObjects>) -> BTreeMap<&'static str, Expect> + Sync;

/// Waits until every query of `panels` (`$cluster`: all) evaluated by `prom` shows what the
/// clusters' objects say; returns the evaluated panels. The error names what still differs.
async fn dashboards_agree(
    env: &OcmEnv,
    prom: &Prometheus,
    panels: &[Panel],
    window: (f64, f64, f64),
    expect: &Expectations,
) -> Result<Vec<(Panel, Vec<Evaluated>)>, BoxError> {
    let vars = [(
        "$cluster",
        update_status_controllers::dashboards::ALL_CLUSTERS,
    )];
    let last = std::sync::Mutex::new(Vec::new());
    let got = poll_until(
        TIMEOUT,
        "the dashboards to agree with the objects",
        || async {
            let objects = cluster_objects(env).await.ok()?;
            let evaluated = dashboards::evaluate(prom, panels, &vars, window)
                .await
                .ok()?;
            let wrong = dashboard_expect::mismatches(&evaluated, &expect(&objects));
            let agree = wrong.is_empty();
            if let Ok(mut l) = last.lock() {
                *l = wrong;
            }
            agree.then_some(evaluated)
        },
    )
    .await;
    got.map_err(|e| {
        format!(
            "{e}: {:#?} (Prometheus: {})",
            last.lock().map(|l| l.clone()).unwrap_or_default(),
            prom.dir().display()
        )
        .into()
    })
}

/// The hub Prometheus' alerts named `name`, firing.
async fn firing(hub: &Prometheus, name: &str) -> Result<Vec<Value>, BoxError> {
    Ok(hub
        .alerts()
        .await?
        .into_iter()
        .filter(|a| a["labels"]["alertname"] == name && a["state"] == "firing")
        .collect())
}

fn clusters_of(alerts: &[Value]) -> Vec<String> {
    alerts
        .iter()
        .filter_map(|a| a["labels"]["cluster"].as_str().map(str::to_string))
        .collect()
}

async fn scenario(env: &'static OcmEnv, hub: Client) -> TestResult {
    let t0 = Instant::now();
    let root = repo_root();
    let work = env.work_dir("fleet-alerts-test")?;
    for c in [CLUSTER1, CLUSTER2] {
        ocm::wait_cluster_joined(&hub, c, TIMEOUT).await?;
        // As on OpenShift: the namespaces the agent's manifests hold Roles in, and the
        // console's dashboards.
        ocm::create_openshift_namespaces(env, c).await?;
    }
    env.apply_acm_config().await?;
    // The hub controller keeping the quota without which the agent may not write.
    let _hub_controller = update_status_e2e::hub_limits::start_quota_keeper(env, &work).await?;
    for c in [CLUSTER1, CLUSTER2] {
        ocm::enable_addon(&hub, c, ADDON).await?;
    }

    // cluster1 updates and gets stuck on a blocked drain; cluster2 is not updating.
    let stuck = Simulation::new(SimConfig {
        operators: 3,
        pools: 2,
        masters: 1,
        nodes_per_pool: 2,
        max_unavailable: 1,
        seed: 11,
        start: jiff::Timestamp::now(),
        faults: Faults {
            blocked_drain: Some(FaultSpec::auto(2)),
            ..Faults::default()
        },
        ..Default::default()
    })?;
    let idle = Simulation::new(SimConfig {
        operators: 3,
        pools: 2,
        masters: 1,
        nodes_per_pool: 1,
        seed: 12,
        start: jiff::Timestamp::now(),
        ..Default::default()
    })?;
    let mut c1 = monitor(env, CLUSTER1, stuck, &work).await?;
    let mut c2 = monitor(env, CLUSTER2, idle, &work).await?;
    wait_scraped(&mut c1).await?;
    wait_scraped(&mut c2).await?;
    eprintln!(
        "fleet_alerts: both agents scraped through their ServiceMonitors after {:.1}s",
        t0.elapsed().as_secs_f64()
    );
    for m in [&c1, &c2] {
        // The delivered PrometheusRule evaluates on the agent's series without error.
        let rules = poll_until(
            TIMEOUT,
            &format!("{}'s PrometheusRule evaluated", m.name),
            || async {
                let (_, body) = m.prometheus.request("GET", "/api/v1/rules").await.ok()?;
                let v: Value = serde_json::from_str(&body).ok()?;
                let rules: Vec<Value> = v["data"]["groups"]
                    .as_array()?
                    .iter()
                    .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
                    .collect();
                (!rules.is_empty() && rules.iter().all(|r| r["health"] != "unknown"))
                    .then_some(rules)
            },
        )
        .await?;
        let bad: Vec<&Value> = rules.iter().filter(|r| r["health"] != "ok").collect();
        assert!(bad.is_empty(), "{}: rules in error: {bad:?}", m.name);
    }

    // ACM observability on the hub: federation with each cluster's delivered allowlist, the
    // fleet rules shortened.
    let mut names = Vec::new();
    for c in [CLUSTER1, CLUSTER2] {
        let spoke = env.cluster_client(c).await?;
        let cm = delivered_in(&spoke, c, ALLOWLIST_NS, ALLOWLIST, &config_map_resource()).await?;
        names = monitoring::allowlist_names(&cm.to_string())?;
    }
    for used in [
        "update_status_update_in_progress",
        "update_status_health_insight_info",
    ] {
        assert!(
            names.iter().any(|n| n == used),
            "{used} not in the delivered allowlist {names:?}"
        );
    }
    let spoke1 = env.cluster_client(CLUSTER1).await?;
    let console_panels = dashboards::config_map_panels(
        &delivered_in(
            &spoke1,
            CLUSTER1,
            dashboards_ns(),
            CONSOLE_DASHBOARD,
            &config_map_resource(),
        )
        .await?,
    )?;
    let fleet_panels =
        dashboards::shipped_panels(&root.join("config/acm/observability/grafana-dashboard.yaml"))?;
    let (rules, shortened) = monitoring::shorten_for(
        &std::fs::read_to_string(root.join("config/acm/observability/fleet-rules.yaml"))?,
        SHORT_FOR,
    )?;
    assert!(shortened > 0, "the fleet rules have a `for:`");
    let rules_file = work.join("fleet-rules.short.json");
    std::fs::write(&rules_file, &rules)?;
    monitoring::promtool_check_rules(&rules_file)?;
    let federation = [&c1, &c2]
        .iter()
        .map(|m| {
            monitoring::federation_job(
                m.name,
                &m.cluster_id,
                &format!("127.0.0.1:{}", m.prometheus.port()),
                &names,
                INTERVAL,
            )
        })
        .collect();
    let mut acm = Prometheus::start(PrometheusOptions {
        rules,
        scrape_configs: federation,
        ..Default::default()
    })?;
    acm.wait_ready(TIMEOUT).await?;

    // cluster1's update gets stuck: its drain is blocked.
    let mut steps = 0;
    while c1
        .simulator
        .simulation()
        .fault_status()
        .blocked_drain
        .is_none()
    {
        c1.simulator.step().await?;
        steps += 1;
        if steps > 100 || c1.simulator.simulation().is_completed() {
            return Err(format!("no blocked drain on {CLUSTER1} after {steps} steps").into());
        }
    }
    let blocked = c1
        .simulator
        .simulation()
        .fault_status()
        .blocked_drain
        .ok_or("no blocked drain")?;
    let stuck_at = Instant::now();
    let alerts = poll_until(
        TIMEOUT,
        &format!("{TAKING_LONG} firing on the hub for {CLUSTER1}"),
        || async {
            let a = firing(&acm, TAKING_LONG).await.ok()?;
            clusters_of(&a).iter().any(|c| c == CLUSTER1).then_some(a)
        },
    )
    .await
    .map_err(|e| format!("{e}; the hub's alerts and logs: {}", acm.dir().display()))?;
    eprintln!(
        "fleet_alerts: {TAKING_LONG} fired {:.1}s after the drain was blocked",
        stuck_at.elapsed().as_secs_f64()
    );
    assert_eq!(
        clusters_of(&alerts),
        [CLUSTER1],
        "the alert names the stuck cluster, and only it: {alerts:?}"
    );
    let alert = &alerts[0];
    assert_eq!(
        alert["labels"]["clusterID"],
        c1.cluster_id.as_str(),
        "{alert}"
    );
    assert!(
        alert["annotations"]["summary"]
            .as_str()
            .is_some_and(|s| s.contains(CLUSTER1)),
        "{alert}"
    );
    // The blocked drain is an Error health insight of the node: its fleet alert names the
    // cluster and the node.
    let insights = poll_until(
        TIMEOUT,
        &format!("{ERROR_INSIGHT} firing on the hub for {CLUSTER1}'s node {blocked}"),
        || async {
            let a = firing(&acm, ERROR_INSIGHT).await.ok()?;
            a.iter()
                .any(|a| a["labels"]["resource_name"] == blocked.as_str())
                .then_some(a)
        },
    )
    .await?;
    assert!(
        insights
            .iter()
            .all(|a| a["labels"]["cluster"] == CLUSTER1 && a["labels"]["resource_kind"] == "Node"),
        "only cluster1's node: {insights:?}"
    );

    // The dashboards show the stuck update as the objects say, drawn for the docs.
    let shown_at = Instant::now();
    let window = |t0: Instant| {
        let now = jiff::Timestamp::now().as_millisecond() as f64 / 1000.0;
        (now - t0.elapsed().as_secs_f64(), now, 1.0)
    };
    let console = dashboards_agree(env, &c1.prometheus, &console_panels, window(t0), &|o| {
        dashboard_expect::console(&o[CLUSTER1])
    })
    .await?;
    let fleet = dashboards_agree(env, &acm, &fleet_panels, window(t0), &|o| {
        dashboard_expect::fleet(o)
    })
    .await?;
    let images = root.join("docs/images");
    let (from, to, _) = window(t0);
    dashboards::screenshot(
        &dashboards::render(
            "Cluster update",
            &format!("{CLUSTER1}: a worker's drain blocked by a PodDisruptionBudget. Each panel's query evaluated by {CLUSTER1}'s Prometheus, drawn by e2e fleet_alerts"),
            &console,
            (from, to),
        ),
        &images.join("dashboard-console.png"),
        (1200, 900),
    )
    .await?;
    dashboards::screenshot(
        &dashboards::render(
            "update-status fleet",
            &format!("{CLUSTER1} stuck on a blocked drain, {CLUSTER2} idle. Each panel's query evaluated by the hub Prometheus, drawn by e2e fleet_alerts"),
            &fleet,
            (from, to),
        ),
        &images.join("dashboard-fleet.png"),
        (1200, 900),
    )
    .await?;
    eprintln!(
        "fleet_alerts: both dashboards agree with the objects and are drawn, {:.1}s",
        shown_at.elapsed().as_secs_f64()
    );

    // The drain goes through, the update completes: the alerts resolve.
    while !c1.simulator.simulation().is_completed() {
        c1.simulator.step().await?;
        steps += 1;
        if steps > 300 {
            return Err("the simulated update did not complete in 300 steps".into());
        }
    }
    let completed_at = Instant::now();
    update_status_e2e::wait_for(
        TIMEOUT,
        &format!("{TAKING_LONG} and {ERROR_INSIGHT} resolved once {CLUSTER1}'s update completed"),
        || async {
            firing(&acm, TAKING_LONG).await.is_ok_and(|a| a.is_empty())
                && firing(&acm, ERROR_INSIGHT)
                    .await
                    .is_ok_and(|a| a.is_empty())
        },
    )
    .await?;
    eprintln!(
        "fleet_alerts: resolved {:.1}s after the update completed",
        completed_at.elapsed().as_secs_f64()
    );
    // Both agents report to the hub: their hub sync series say so, no NotReporting alert.
    update_status_e2e::wait_for(
        TIMEOUT,
        &format!("no {NOT_REPORTING} on the hub"),
        || async {
            firing(&acm, NOT_REPORTING)
                .await
                .is_ok_and(|a| a.is_empty())
        },
    )
    .await?;
    // The dashboards follow: nothing updating, everything complete.
    let settled_at = Instant::now();
    dashboards_agree(env, &c1.prometheus, &console_panels, window(t0), &|o| {
        dashboard_expect::console(&o[CLUSTER1])
    })
    .await?;
    dashboards_agree(env, &acm, &fleet_panels, window(t0), &|o| {
        dashboard_expect::fleet(o)
    })
    .await?;
    eprintln!(
        "fleet_alerts: dashboards agree after the update, {:.1}s",
        settled_at.elapsed().as_secs_f64()
    );
    for m in [&mut c1, &mut c2] {
        m.agent
            .running()
            .map_err(|e| format!("{}'s agent: {e}", m.name))?;
    }
    eprintln!("fleet_alerts: scenario {:.1}s", t0.elapsed().as_secs_f64());
    drop(acm);
    drop(c1);
    drop(c2);
    Ok(())
}
