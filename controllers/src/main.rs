//! `update-status-controller`: watches ClusterVersion, ClusterOperators, MachineConfigPools,
//! MachineConfigs and Nodes, and writes ControlPlaneUpdateStatus, WorkerPoolUpdateStatus and
//! UpdateInsight objects into its namespace. Serves `/metrics` (HTTPS, authorized scrapers
//! only) and, on a separate port, `/healthz` and `/readyz`.
//! With `--prometheus-url`, it also polls Prometheus' firing alerts into health insights; with
//! `--hub-kubeconfig` and `--cluster-name`, it copies its objects to a fleet hub.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use clap::Parser;
use kube::Api;
use kube::api::ListParams;
use tokio::sync::watch;
use update_status_api::crd::UpdateInsight;
use update_status_controllers::alerts_reconciler::{self, AlertsReconciler, PollSettings};
use update_status_controllers::clock::Clock;
use update_status_controllers::control_plane_reconciler::ControlPlaneReconciler;
use update_status_controllers::hub_sync::{self, HubConfig, HubSync};
use update_status_controllers::leader::Elector;
use update_status_controllers::metrics::Metrics;
use update_status_controllers::metrics_server::auth::Authorizer;
use update_status_controllers::metrics_server::{self, Health, MetricsServerConfig};
use update_status_controllers::prometheus::{PrometheusClient, PrometheusConfig};
use update_status_controllers::runner;
use update_status_controllers::watch::{self as watches, Wakers};
use update_status_controllers::worker_pools_reconciler::WorkerPoolsReconciler;

/// Command-line flags.
#[derive(Parser, Debug)]
#[command(
    version,
    about = "Tells how an OpenShift cluster update goes, as Kubernetes objects"
)]
struct Args {
    /// Namespace the objects are written to.
    #[arg(long, env = "POD_NAMESPACE", default_value = "openshift-update-status")]
    namespace: String,
    /// Address of the /metrics endpoint.
    #[arg(long, env = "METRICS_BIND_ADDRESS", default_value = "0.0.0.0:8443")]
    metrics_bind_address: SocketAddr,
    /// Serve /metrics over HTTPS, only to clients whose bearer token passes a TokenReview and
    /// a SubjectAccessReview for `get` on /metrics. `--metrics-secure=false`: plain HTTP without
    /// authentication (local development, tests).
    #[arg(
        long,
        env = "METRICS_SECURE",
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true",
        require_equals = true
    )]
    metrics_secure: bool,
    /// Folder holding the /metrics serving certificate, `tls.crt` and `tls.key` (e.g. the
    /// service CA's Secret), re-read when they change. Unset: a self-signed certificate.
    #[arg(long, env = "METRICS_CERT_DIR", value_name = "DIR")]
    metrics_cert_dir: Option<PathBuf>,
    /// Address of the /healthz and /readyz endpoints (plain HTTP, no data).
    #[arg(
        long,
        env = "HEALTH_PROBE_BIND_ADDRESS",
        default_value = "0.0.0.0:8081"
    )]
    health_probe_bind_address: SocketAddr,
    /// Cluster ID put in the `update.openshift.io/cluster` label (optional).
    #[arg(long, env = "CLUSTER_ID")]
    cluster_id: Option<String>,
    /// Evaluate at this fixed instant (RFC 3339) instead of the wall clock: reproduces a
    /// captured cluster exactly (tests, demos of snapshots). Not for production.
    #[arg(long, hide = true)]
    assess_at: Option<jiff::Timestamp>,
    /// Log format.
    #[arg(long, env = "LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
    /// Run only while holding the Lease `<namespace>/<leader-election-id>` (one writer among
    /// replicas). Off by default for local runs; the Deployment turns it on.
    #[arg(long, env = "LEADER_ELECT", default_value_t = false)]
    leader_elect: bool,
    /// Name of the leader-election Lease.
    #[arg(long, default_value = "update-status-controller")]
    leader_election_id: String,
    /// Identity in the Lease (default: `$POD_NAME`, else the host name and process id).
    #[arg(long, env = "POD_NAME")]
    leader_identity: Option<String>,
    /// Base URL of the Prometheus (or Thanos Querier) HTTP API whose firing alerts become
    /// health insights, e.g. `https://thanos-querier.openshift-monitoring.svc:9091`.
    /// Unset: no alert insights.
    #[arg(long, env = "PROMETHEUS_URL")]
    prometheus_url: Option<String>,
    /// File holding the bearer token sent to Prometheus (read before every poll: tokens rotate),
    /// e.g. `/var/run/secrets/kubernetes.io/serviceaccount/token`.
    #[arg(long, env = "PROMETHEUS_TOKEN_FILE")]
    prometheus_token_file: Option<PathBuf>,
    /// PEM file of the CA that signs Prometheus' serving certificate (default: the system's
    /// CAs), e.g. `/var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt`.
    #[arg(long, env = "PROMETHEUS_CA_FILE")]
    prometheus_ca_file: Option<PathBuf>,
    /// Timeout of one request to Prometheus (`10s`, `1m`, ...).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    prometheus_timeout: std::time::Duration,
    /// Interval between polls of Prometheus (±10 % jitter; exponential back-off up to 5m
    /// while it fails).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    prometheus_interval: std::time::Duration,
    /// Kubeconfig of a fleet hub (e.g. ACM) to report to: the ControlPlaneUpdateStatus, the
    /// WorkerPoolUpdateStatus objects and the health insights are copied into namespace
    /// `<cluster-name>` there. Unset: no hub sync. Needs `--cluster-name`.
    #[arg(
        long,
        env = "HUB_KUBECONFIG",
        value_name = "PATH",
        requires = "cluster_name"
    )]
    hub_kubeconfig: Option<PathBuf>,
    /// This cluster's name on the hub (a DNS-1123 label): the namespace of the copies, the
    /// name of the ControlPlaneUpdateStatus copy, label `open-cluster-management.io/cluster-name`.
    #[arg(long, env = "CLUSTER_NAME", value_name = "NAME", value_parser = parse_cluster_name)]
    cluster_name: Option<String>,
    /// Also copy progress insights (one per node, operator and the ClusterVersion) to the hub.
    #[arg(long, env = "HUB_INCLUDE_PROGRESS", default_value_t = false)]
    hub_include_progress: bool,
}

/// `--cluster-name`: a DNS-1123 label.
fn parse_cluster_name(s: &str) -> Result<String, String> {
    hub_sync::validate_cluster_name(s)
        .map(|()| s.to_string())
        .map_err(|e| e.to_string())
}

/// A positive duration: `30s`, `1m`, `500ms`, `1h 30m` or ISO 8601 (`PT30S`).
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let d: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("{s:?} is not a duration like 30s, 1m or 500ms: {e}"))?;
    std::time::Duration::try_from(d)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?}: the duration must be positive"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    if args.log_format == "json" {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .init();
    } else {
        tracing_subscriber::fmt().with_env_filter(filter).init();
    }

    // Checked before anything starts: a wrong URL is a configuration error.
    let prometheus = args
        .prometheus_url
        .as_deref()
        .map(|url| {
            PrometheusClient::new(PrometheusConfig {
                url: url.to_string(),
                token_file: args.prometheus_token_file.clone(),
                ca_file: args.prometheus_ca_file.clone(),
                timeout: args.prometheus_timeout,
            })
        })
        .transpose()
        .context("--prometheus-url")?;

    let client = kube::Client::try_default()
        .await
        .context("connecting to the Kubernetes API (in-cluster config or KUBECONFIG)")?;
    preflight(&client, &args.namespace).await?;

    let metrics = Arc::new(Metrics::new()?);
    let synced = Arc::new(AtomicBool::new(false));
    let (shutdown_tx, shutdown_rx) = watch::channel(false);

    let server = metrics_server::serve_metrics(
        MetricsServerConfig {
            bind: args.metrics_bind_address,
            secure: args.metrics_secure,
            cert_dir: args.metrics_cert_dir.clone(),
        },
        metrics.clone(),
        Arc::new(Authorizer::new(client.clone())),
    )
    .await?;
    let health = Health::new().with_ready({
        let synced = synced.clone();
        move || {
            synced
                .load(Ordering::SeqCst)
                .then_some(())
                .ok_or_else(|| "caches not synced".to_string())
        }
    });
    let probes = metrics_server::serve_probes(args.health_probe_bind_address, health).await?;

    let wakers = Wakers::default();
    let caches = watches::start(&client, &args.namespace, &wakers, synced.clone());
    // Checked before the reconcilers start (the hub is not contacted yet): an unreadable hub
    // kubeconfig is a configuration error.
    let hub = match (&args.hub_kubeconfig, &args.cluster_name) {
        (Some(kubeconfig), Some(cluster_name)) => Some(
            HubSync::new(
                HubConfig {
                    kubeconfig: kubeconfig.clone(),
                    cluster_name: cluster_name.clone(),
                    include_progress: args.hub_include_progress,
                },
                caches.clone(),
                wakers.hub_sync.clone(),
                metrics.clone(),
            )
            .await
            .context("--hub-kubeconfig")?,
        ),
        _ => None,
    };
    {
        // Health series are computed from our insights at scrape time (every scope, whichever
        // reconciler wrote them).
        let insights = caches.insights.clone();
        metrics.set_insight_source(Box::new(move || insights.state()));
    }
    let cp = ControlPlaneReconciler::new(
        client.clone(),
        &args.namespace,
        caches.clone(),
        metrics.clone(),
        args.cluster_id.clone(),
    );
    let clock = args.assess_at.map_or(Clock::Wall, Clock::Fixed);
    let wp = WorkerPoolsReconciler::new(
        client.clone(),
        &args.namespace,
        caches.clone(),
        metrics.clone(),
        args.cluster_id.clone(),
    );
    // Reconcile only once every cache has listed: otherwise a half-filled cache would look like
    // deleted objects and we would delete and re-create insights at every start.
    let ready = {
        let synced = synced.clone();
        async move {
            while !synced.load(Ordering::SeqCst) {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    };
    tokio::select! {
        _ = ready => {}
        _ = shutdown_signal() => { tracing::info!("shutting down before caches synced"); return Ok(()); }
    }
    // With leader election, only the Lease holder writes; losing the Lease stops the process
    // (it is restarted and campaigns again) so two replicas never write at once.
    let mut leadership = if args.leader_elect {
        let me = args.leader_identity.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
            format!("{}-{}", host.trim(), std::process::id())
        });
        tracing::info!(lease = %args.leader_election_id, identity = %me, "waiting to become leader");
        let elector = Elector::new(
            client.clone(),
            &args.namespace,
            &args.leader_election_id,
            &me,
        );
        tokio::select! {
            rx = elector.acquire() => Some(rx),
            _ = shutdown_signal() => { tracing::info!("shutting down before becoming leader"); return Ok(()); }
        }
    } else {
        None
    };
    let cp_task = tokio::spawn(runner::run(
        cp,
        clock,
        metrics.clone(),
        wakers.control_plane.clone(),
        shutdown_rx.clone(),
    ));
    let wp_task = tokio::spawn(runner::run(
        wp,
        clock,
        metrics.clone(),
        wakers.worker_pools.clone(),
        shutdown_rx.clone(),
    ));
    let alerts_task = match prometheus {
        Some(prometheus) => {
            tracing::info!(
                url = %prometheus.alerts_url(),
                interval = ?args.prometheus_interval,
                "alert insights on: polling Prometheus"
            );
            let r = AlertsReconciler::new(
                client.clone(),
                &args.namespace,
                caches.clone(),
                metrics.clone(),
                prometheus,
                PollSettings {
                    interval: args.prometheus_interval,
                    max_backoff: alerts_reconciler::MAX_BACKOFF,
                },
                args.cluster_id.clone(),
            );
            Some(tokio::spawn(runner::run(
                r,
                clock,
                metrics.clone(),
                wakers.alerts.clone(),
                shutdown_rx.clone(),
            )))
        }
        None => {
            tracing::info!("no --prometheus-url: alert insights off");
            None
        }
    };
    // Like the reconcilers, the hub sync runs only while we lead.
    let hub_task = match hub {
        Some(hub) => Some(tokio::spawn(hub.run(shutdown_rx.clone()))),
        None => {
            tracing::info!("no --hub-kubeconfig: hub sync off");
            None
        }
    };
    wakers.control_plane.notify_one();
    wakers.worker_pools.notify_one();
    wakers.alerts.notify_one();
    wakers.hub_sync.notify_one();
    tracing::info!(namespace = %args.namespace, "update-status-controller running");

    let lost = async {
        match leadership.as_mut() {
            Some(rx) => {
                while *rx.borrow() {
                    if rx.changed().await.is_err() {
                        break;
                    }
                }
            }
            None => std::future::pending::<()>().await,
        }
    };
    let lost_leadership = tokio::select! {
        _ = shutdown_signal() => false,
        _ = lost => true,
    };
    tracing::info!(lost_leadership, "shutting down");
    let _ = shutdown_tx.send(true);
    let _ = tokio::join!(cp_task, wp_task);
    if let Some(t) = alerts_task {
        let _ = t.await;
    }
    if let Some(t) = hub_task {
        let _ = t.await;
    }
    server.abort();
    probes.abort();
    if lost_leadership {
        anyhow::bail!(
            "lost the leader-election Lease {}/{}",
            args.namespace,
            args.leader_election_id
        );
    }
    Ok(())
}

/// Fails early, with a clear message, if our CRDs are not installed or we may not use them.
async fn preflight(client: &kube::Client, namespace: &str) -> anyhow::Result<()> {
    let api: Api<UpdateInsight> = Api::namespaced(client.clone(), namespace);
    match api.list(&ListParams::default().limit(1)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_not_found() => anyhow::bail!(
            "the update-status CRDs are not installed (no updateinsights.update.openshift.io resource): apply config/crd/ first"
        ),
        Err(kube::Error::Api(s)) if s.is_forbidden() => anyhow::bail!(
            "not allowed to list updateinsights in namespace {namespace}: check the RBAC in config/rbac/ ({})",
            s.message
        ),
        Err(e) => Err(e).context("checking that the update-status CRDs are installed"),
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; only Ctrl-C stops the controller");
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
