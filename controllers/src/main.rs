//! `update-status-controller`: watches ClusterVersion, ClusterOperators, MachineConfigPools,
//! MachineConfigs and Nodes, and writes ControlPlaneUpdateStatus, WorkerPoolUpdateStatus and
//! UpdateInsight objects into its namespace. Serves `/metrics` (HTTPS, authorized scrapers only,
//! unless `--metrics-secure=false`) and, on their own port, `/healthz` and `/readyz`.
//! With `--prometheus-url`, it also polls Prometheus' firing alerts into health insights; with
//! `--hub-kubeconfig` and `--cluster-name`, it copies its objects to a fleet hub.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use kube::Api;
use kube::api::ListParams;
use tokio::sync::watch;
use update_status_api::crd::UpdateInsight;
use update_status_controllers::alerts_reconciler::{self, AlertsReconciler, PollSettings};
use update_status_controllers::clock::Clock;
use update_status_controllers::control_plane_reconciler::ControlPlaneReconciler;
use update_status_controllers::health::Health;
use update_status_controllers::hub_sync::{self, HubConfig, HubSync};
use update_status_controllers::leader::{Elector, Leadership};
use update_status_controllers::metrics::Metrics;
use update_status_controllers::metrics_server::auth::Authorizer;
use update_status_controllers::metrics_server::{self, MetricsServerConfig, Probes};
use update_status_controllers::prometheus::{PrometheusClient, PrometheusConfig};
use update_status_controllers::runner::{self, Reconcile};
use update_status_controllers::supervisor::{TaskEnded, Tasks};
use update_status_controllers::watch::{self as watches, Caches, Wakers};
use update_status_controllers::worker_pools_reconciler::WorkerPoolsReconciler;

mod hosted_main;

/// jemalloc, with the options of `.cargo/config.toml` (one arena, freed pages returned within a
/// second): glibc's malloc kept two arenas of freed pages after the cold start, 96 → 79 MiB
/// peak RSS at 5,000 nodes (docs/benchmarks.md, "Controller memory"). mimalloc was worse.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Command-line flags.
#[derive(Parser, Debug)]
#[command(
    version,
    about = "Tells how an OpenShift cluster update goes, as Kubernetes objects"
)]
struct Args {
    /// `standalone`: report on the cluster the controller runs in (ClusterVersion, ...).
    /// `hosted`: on a HyperShift management cluster, report on every HostedCluster (objects
    /// written into each HostedCluster's namespace; see docs/hosted.md).
    #[arg(long, env = "UPDATE_STATUS_MODE", default_value = "standalone", value_parser = ["standalone", "hosted"])]
    mode: String,
    /// Hosted mode: watch HostedClusters, NodePools and our objects in this namespace only
    /// (default: all namespaces). The cluster-api objects are watched in every namespace (they
    /// live in the control-plane namespaces `<namespace>-<name>`).
    #[arg(long, env = "WATCH_NAMESPACE", value_name = "NAMESPACE")]
    watch_namespace: Option<String>,
    /// Hosted mode: also read each hosted cluster's ClusterOperators and Nodes through its admin
    /// kubeconfig Secret (HostedCluster status.kubeconfig, key `kubeconfig`; needs
    /// config/rbac/hosted/kubeconfig-access). A hosted cluster that cannot be read is reported
    /// as HostedClusterUnreachable, the others as usual.
    #[arg(long, env = "HOSTED_KUBECONFIG_ACCESS", default_value_t = false)]
    hosted_kubeconfig_access: bool,
    /// Namespace the objects are written to (standalone mode) and of the leader-election
    /// Lease (both modes).
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
    /// Allow sending the bearer token of `--prometheus-token-file` to an `http://` URL, in
    /// clear. Without it the controller refuses to start with such a configuration.
    #[arg(long)]
    prometheus_insecure_http: bool,
    /// Timeout of one request to Prometheus (`10s`, `1m`, ...).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    prometheus_timeout: Duration,
    /// Interval between polls of Prometheus (±10 % jitter; exponential back-off up to 5m
    /// while it fails).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    prometheus_interval: Duration,
    /// Kubeconfig of a fleet hub (e.g. ACM) to report to: the ControlPlaneUpdateStatus, the
    /// WorkerPoolUpdateStatus objects and the health insights are copied into namespace
    /// `<cluster-name>` there. Unset: no hub sync. Standalone mode: needs `--cluster-name`.
    /// Hosted mode: each HostedCluster is reported as a managed cluster of its own (named by
    /// its annotation `cluster.open-cluster-management.io/managedcluster-name`, else its name).
    #[arg(long, env = "HUB_KUBECONFIG", value_name = "PATH")]
    hub_kubeconfig: Option<PathBuf>,
    /// This cluster's name on the hub (a DNS-1123 label): the namespace of the copies, the
    /// name of the ControlPlaneUpdateStatus copy, label `open-cluster-management.io/cluster-name`.
    #[arg(long, env = "CLUSTER_NAME", value_name = "NAME", value_parser = parse_cluster_name)]
    cluster_name: Option<String>,
    /// Hosted mode under ACM: each hosted cluster reports to the hub with an add-on identity of
    /// its own, read from a Secret `update-status-hub-kubeconfig` in the format OCM's
    /// registration agent writes (in the namespace of --hub-addon-secret-namespace; needs
    /// config/rbac/hosted/hub-addon-secrets), instead of one shared --hub-kubeconfig. See
    /// docs/acm.md.
    #[arg(long, env = "HUB_ADDON_SECRETS", default_value_t = false)]
    hub_addon_secrets: bool,
    /// With --hub-addon-secrets: the namespace of a managed cluster's add-on Secret on this
    /// management cluster, `{cluster}` standing for the managed cluster's name.
    #[arg(long, env = "HUB_ADDON_SECRET_NAMESPACE", default_value = update_status_controllers::hub_sync::hosted::DEFAULT_ADDON_SECRET_NAMESPACE)]
    hub_addon_secret_namespace: String,
    /// Also copy progress insights (one per node, operator and the ClusterVersion) to the hub.
    #[arg(long, env = "HUB_INCLUDE_PROGRESS", default_value_t = false)]
    hub_include_progress: bool,
    /// A reconcile pass still running after this long makes `/healthz` fail (the kubelet then
    /// restarts the controller): a call that never returns must not stop the reports silently.
    #[arg(long, default_value = "3m", value_parser = parse_duration)]
    reconcile_stuck_after: Duration,
}

/// `--cluster-name`: a DNS-1123 label.
fn parse_cluster_name(s: &str) -> Result<String, String> {
    hub_sync::validate_cluster_name(s)
        .map(|()| s.to_string())
        .map_err(|e| e.to_string())
}

/// A positive duration: `30s`, `1m`, `500ms`, `1h 30m` or ISO 8601 (`PT30S`).
fn parse_duration(s: &str) -> Result<Duration, String> {
    let d: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("{s:?} is not a duration like 30s, 1m or 500ms: {e}"))?;
    Duration::try_from(d)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?}: the duration must be positive"))
}

/// How long the writers get to finish their pass at shutdown before they are aborted.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    init_logging(&args.log_format);
    if args.mode == "hosted" {
        return hosted_main::run(args).await;
    }
    if args.hub_addon_secrets {
        anyhow::bail!(
            "--hub-addon-secrets is for --mode=hosted; a standalone cluster reports with --hub-kubeconfig (as an ACM add-on: the one OCM mounts, see docs/acm.md)"
        );
    }
    if args.hub_kubeconfig.is_some() && args.cluster_name.is_none() {
        anyhow::bail!(
            "--hub-kubeconfig needs --cluster-name: this cluster's name on the hub (the namespace of its copies there)"
        );
    }
    // Checked before anything starts: a wrong URL is a configuration error.
    let prometheus = prometheus_client(&args)?;
    let client = update_status_controllers::client::infer()
        .await
        .context("connecting to the Kubernetes API (in-cluster config or KUBECONFIG)")?;
    preflight(&client, &args.namespace).await?;

    let metrics = Arc::new(Metrics::new()?);
    let health = Health::new(args.reconcile_stuck_after);
    // One signal listener for the whole run: a SIGTERM between two phases is not lost.
    let mut shutdown = std::pin::pin!(shutdown_signal());
    // The tasks that run whether or not we lead: the HTTP server and the watches.
    let mut infra = Tasks::new();
    serve_endpoints(&args, &client, &metrics, &health, &mut infra).await?;
    let wakers = Wakers::default();
    // Progress insights are cached whole only when the hub sync copies them.
    let keep_progress = args.hub_kubeconfig.is_some() && args.hub_include_progress;
    let caches = watches::start(
        &client,
        &args.namespace,
        &wakers,
        &health,
        &mut infra,
        keep_progress,
    );
    let hub = hub_sync(&args, &caches, &wakers, &metrics).await?;
    count_insights_of(&metrics, &caches.insights);

    let Some(leadership) = sync_then_lead(
        &args,
        &client,
        &health,
        &mut infra,
        caches.synced(),
        shutdown.as_mut(),
    )
    .await?
    else {
        return Ok(());
    };

    let (stop_writers, stopping) = watch::channel(false);
    let writers = start_writers(
        &args, &client, &caches, &wakers, &metrics, &health, prometheus, hub, stopping,
    );
    tracing::info!(namespace = %args.namespace, "update-status-controller running");
    supervise(
        Running {
            infra,
            writers,
            stop_writers,
            leadership,
            health,
        },
        shutdown,
        &args,
    )
    .await
}

/// Health series are computed from our insights at scrape time (every scope, whichever
/// reconciler wrote them), from this cache.
fn count_insights_of(
    metrics: &Metrics,
    insights: &kube::runtime::reflector::Store<update_status_controllers::cached::CachedInsight>,
) {
    let insights = insights.clone();
    // Health insights are always cached whole (progress insights, not counted, may not be).
    metrics.set_insight_source(Box::new(move || {
        update_status_controllers::cached::wholes(&insights.state())
    }));
}

/// Waits until every cache listed once, then (with `--leader-elect`) until we hold the Lease.
/// `Ok(None)`: a signal came first (stop quietly).
///
/// Reconcile only once every cache has listed: otherwise a half-filled cache would look like
/// deleted objects and we would delete and re-create insights at every start. With leader
/// election, only the Lease holder writes; losing the Lease stops the process (it is restarted
/// and campaigns again) so two replicas never write at once.
async fn sync_then_lead<E>(
    args: &Args,
    client: &kube::Client,
    health: &Health,
    infra: &mut Tasks,
    synced: impl Future<Output = Result<(), E>>,
    mut shutdown: std::pin::Pin<&mut impl Future<Output = ()>>,
) -> anyhow::Result<Option<Option<Leadership>>>
where
    E: std::error::Error + Send + Sync + 'static,
{
    tokio::select! {
        synced = synced => synced.context("a watch stopped before its cache listed")?,
        ended = infra.first_ended() => return Err(fatal(health, ended)),
        _ = &mut shutdown => { tracing::info!("shutting down before caches synced"); return Ok(None); }
    }
    tracing::info!("all caches synced");
    health.set_synced();
    if !args.leader_elect {
        return Ok(Some(None));
    }
    tokio::select! {
        l = campaign(args, client) => Ok(Some(Some(l))),
        ended = infra.first_ended() => Err(fatal(health, ended)),
        _ = &mut shutdown => { tracing::info!("shutting down before becoming leader"); Ok(None) }
    }
}

/// Starts the /metrics and probe servers (tasks of `infra`).
async fn serve_endpoints(
    args: &Args,
    client: &kube::Client,
    metrics: &Arc<Metrics>,
    health: &Arc<Health>,
    infra: &mut Tasks,
) -> anyhow::Result<()> {
    let metrics_server = metrics_server::serve_metrics(
        MetricsServerConfig {
            bind: args.metrics_bind_address,
            secure: args.metrics_secure,
            cert_dir: args.metrics_cert_dir.clone(),
        },
        metrics.clone(),
        Arc::new(Authorizer::new(client.clone())),
    )
    .await?;
    infra.spawn("metrics-server", metrics_server.wait());
    let probes =
        metrics_server::serve_probes(args.health_probe_bind_address, probes(health)).await?;
    infra.spawn("probe-server", probes.wait());
    Ok(())
}

/// `RUST_LOG` (default `info`), as text or JSON; on standard output; colours only when that is a terminal (a log
/// file or a pod's log gets no escape sequences).
fn init_logging(format: &str) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    if format == "json" {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .with_ansi(false)
            .init();
    } else {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(std::io::stdout().is_terminal())
            .init();
    }
}

/// The Prometheus client of `--prometheus-url`, if set.
fn prometheus_client(args: &Args) -> anyhow::Result<Option<PrometheusClient>> {
    args.prometheus_url
        .as_deref()
        .map(|url| {
            PrometheusClient::new(PrometheusConfig {
                url: url.to_string(),
                token_file: args.prometheus_token_file.clone(),
                ca_file: args.prometheus_ca_file.clone(),
                insecure_http: args.prometheus_insecure_http,
                timeout: args.prometheus_timeout,
            })
        })
        .transpose()
        .context("--prometheus-url")
}

/// The hub sync of `--hub-kubeconfig`, if set. Checked before the reconcilers start (the hub
/// is not contacted yet): an unreadable hub kubeconfig is a configuration error.
async fn hub_sync(
    args: &Args,
    caches: &Caches,
    wakers: &Wakers,
    metrics: &Arc<Metrics>,
) -> anyhow::Result<Option<HubSync>> {
    let (Some(kubeconfig), Some(cluster_name)) = (&args.hub_kubeconfig, &args.cluster_name) else {
        return Ok(None);
    };
    let hub = HubSync::new(
        HubConfig {
            kubeconfig: kubeconfig.clone(),
            cluster_name: cluster_name.clone(),
            include_progress: args.hub_include_progress,
        },
        caches.into(),
        wakers.hub_sync.clone(),
        metrics.clone(),
    )
    .await
    .context("--hub-kubeconfig")?;
    Ok(Some(hub))
}

/// Waits until we hold the leader-election Lease.
async fn campaign(args: &Args, client: &kube::Client) -> Leadership {
    let me = args.leader_identity.clone().unwrap_or_else(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        format!("{}-{}", host.trim(), std::process::id())
    });
    tracing::info!(lease = %args.leader_election_id, identity = %me, "waiting to become leader");
    Elector::new(
        client.clone(),
        &args.namespace,
        &args.leader_election_id,
        &me,
    )
    .acquire()
    .await
}

/// Starts the tasks that write (the reconcilers, the hub sync): they run only while we lead.
#[allow(clippy::too_many_arguments)]
fn start_writers(
    args: &Args,
    client: &kube::Client,
    caches: &Caches,
    wakers: &Wakers,
    metrics: &Arc<Metrics>,
    health: &Arc<Health>,
    prometheus: Option<PrometheusClient>,
    hub: Option<HubSync>,
    stopping: watch::Receiver<bool>,
) -> Tasks {
    let mut tasks = Tasks::new();
    let ctx = LoopContext {
        clock: args.assess_at.map_or(Clock::Wall, Clock::Fixed),
        metrics: metrics.clone(),
        health: health.clone(),
        stopping: stopping.clone(),
    };
    let cp = ControlPlaneReconciler::new(
        client.clone(),
        &args.namespace,
        caches.clone(),
        metrics.clone(),
        args.cluster_id.clone(),
    );
    let wp = WorkerPoolsReconciler::new(
        client.clone(),
        &args.namespace,
        caches.clone(),
        metrics.clone(),
        args.cluster_id.clone(),
    );
    ctx.spawn(&mut tasks, cp, &wakers.control_plane);
    ctx.spawn(&mut tasks, wp, &wakers.worker_pools);
    match prometheus {
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
            ctx.spawn(&mut tasks, r, &wakers.alerts);
        }
        None => tracing::info!("no --prometheus-url: alert insights off"),
    }
    match hub {
        Some(hub) => tasks.spawn("hub-sync", hub.run(stopping.clone())),
        None => tracing::info!("no --hub-kubeconfig: hub sync off"),
    }
    wakers.control_plane.notify_one();
    wakers.worker_pools.notify_one();
    wakers.alerts.notify_one();
    wakers.hub_sync.notify_one();
    tasks
}

/// What every reconcile loop shares.
struct LoopContext {
    clock: Clock,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
    stopping: watch::Receiver<bool>,
}

impl LoopContext {
    /// Runs `r`'s loop as task `reconciler/<name>`, woken by `wake`.
    fn spawn<R: Reconcile>(&self, tasks: &mut Tasks, r: R, wake: &Arc<tokio::sync::Notify>) {
        tasks.spawn(
            format!("reconciler/{}", R::NAME),
            runner::run(
                r,
                self.clock,
                self.metrics.clone(),
                wake.clone(),
                self.stopping.clone(),
                self.health.heartbeat(R::NAME),
            ),
        );
    }
}

/// Everything that runs once we write.
struct Running {
    infra: Tasks,
    writers: Tasks,
    stop_writers: watch::Sender<bool>,
    leadership: Option<Leadership>,
    health: Arc<Health>,
}

/// Why the process stops.
enum Stop {
    Signal,
    LostLease,
    Ended(TaskEnded),
}

/// Runs until a signal, the loss of the Lease or the end of any task; then stops the writers
/// first, releases the Lease when we still hold it, and stops the rest.
async fn supervise(
    mut run: Running,
    shutdown: std::pin::Pin<&mut impl Future<Output = ()>>,
    args: &Args,
) -> anyhow::Result<()> {
    let lost = async {
        match run.leadership.as_mut() {
            Some(l) => l.lost().await,
            None => std::future::pending().await,
        }
    };
    let stop = tokio::select! {
        _ = shutdown => Stop::Signal,
        _ = lost => Stop::LostLease,
        ended = run.infra.first_ended() => Stop::Ended(ended),
        ended = run.writers.first_ended() => Stop::Ended(ended),
    };
    match stop {
        Stop::Signal => {
            tracing::info!("shutting down");
            let _ = run.stop_writers.send(true);
            run.writers.stop(SHUTDOWN_GRACE).await;
            if let Some(l) = run.leadership {
                l.release().await;
            }
            run.infra.abort().await;
            Ok(())
        }
        Stop::LostLease => {
            // The lease may expire soon (by a follower's clock): no write may follow.
            run.writers.abort().await;
            tracing::error!("stopped writing: lost the leader-election Lease");
            anyhow::bail!(
                "lost the leader-election Lease {}/{}",
                args.namespace,
                args.leader_election_id
            )
        }
        Stop::Ended(ended) => {
            let error = fatal(&run.health, ended);
            run.writers.abort().await;
            if let Some(l) = run.leadership {
                l.release().await;
            }
            Err(error)
        }
    }
}

/// A task ended that should not have: unhealthy from now on, and the process exits with this.
fn fatal(health: &Health, ended: TaskEnded) -> anyhow::Error {
    tracing::error!(task = %ended.name, how = %ended.how, "a long-running task stopped; exiting");
    health.set_stopped(ended.to_string());
    anyhow::Error::new(ended).context("the controller cannot run without it")
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

/// What the probe port answers: the supervisor's view of liveness and readiness.
fn probes(health: &Arc<Health>) -> Probes {
    let check = |f: fn(&Health) -> (bool, String), health: Arc<Health>| {
        move || match f(&health) {
            (true, _) => Ok(()),
            (false, why) => Err(why),
        }
    };
    Probes::new()
        .with_live(check(Health::live, health.clone()))
        .with_ready(check(Health::ready, health.clone()))
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
