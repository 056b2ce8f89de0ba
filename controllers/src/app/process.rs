//! The pieces of the start-up both modes share ([`super::run`] puts them in order): the CRD
//! check, the endpoints, waiting for the caches and the Lease, the reconcile loops' context,
//! supervision until a signal, logging.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::Context;
use kube::Api;
use kube::api::ListParams;
use kube::runtime::reflector::Store;
use tokio::sync::{Notify, watch};
use update_status_api::acm::ManagedClusterAddOn;
use update_status_api::crd::UpdateInsight;
use update_status_api::hosted::HostedCluster;

use super::args::{Args, LogFormat, Mode};
use crate::cache::insights::{CachedInsight, wholes};
use crate::cache::prometheus::{PrometheusClient, PrometheusConfig};
use crate::endpoints::auth::Authorizer;
use crate::endpoints::{self as metrics_server, MetricsServerConfig, Probes};
use crate::metrics::Metrics;
use crate::runtime::clock::Clock;
use crate::runtime::health::Health;
use crate::runtime::leader::{Elector, Leadership, SHUTDOWN_GRACE};
use crate::runtime::runner::{self, Reconcile};
use crate::runtime::supervisor::{TaskEnded, Tasks};

/// What every mode's start-up reads: the flags, the controller's client, the metrics and the
/// health checks.
#[derive(Clone, Copy)]
pub(crate) struct Setup<'a> {
    pub args: &'a Args,
    pub client: &'a kube::Client,
    pub metrics: &'a Arc<Metrics>,
    pub health: &'a Arc<Health>,
}

/// A cache that has listed once (`Err`: its watch ended before).
pub(crate) type Synced = Pin<
    Box<dyn Future<Output = Result<(), kube::runtime::reflector::store::WriterDropped>> + Send>,
>;

/// Starts a mode's writers once we lead (the reconcile loops' context, the flags, the client).
pub(crate) type StartWriters = Box<dyn FnOnce(&LoopContext, &Args, &kube::Client) -> Tasks + Send>;

/// What a mode started before we lead, and how it starts its writers once we do.
pub(crate) struct Started {
    /// Resolves once every cache of the mode has listed.
    pub synced: Synced,
    /// Our UpdateInsights (the health series are computed from them at scrape time).
    pub insights: Store<CachedInsight>,
    /// Starts the reconcilers and the hub sync (they run only while we lead), and wakes them.
    pub writers: StartWriters,
}

impl Started {
    /// What a mode started: `synced` resolves once its caches listed, `insights` is its cache
    /// of our UpdateInsights, `writers` starts its writers.
    pub fn new(
        synced: impl Future<Output = Result<(), kube::runtime::reflector::store::WriterDropped>>
        + Send
        + 'static,
        insights: Store<CachedInsight>,
        writers: impl FnOnce(&LoopContext, &Args, &kube::Client) -> Tasks + Send + 'static,
    ) -> Self {
        Started {
            synced: Box::pin(synced),
            insights,
            writers: Box::new(writers),
        }
    }
}

/// Health series are computed from our insights at scrape time (every scope, whichever
/// reconciler wrote them), from this cache.
pub(crate) fn count_insights_of(metrics: &Metrics, insights: &Store<CachedInsight>) {
    let insights = insights.clone();
    // Health insights are always cached whole (progress insights, not counted, may not be).
    metrics
        .insights
        .set_source(Box::new(move || wholes(&insights.state())));
}

/// Waits until every cache listed once, then (with `--leader-elect`) until we hold the Lease.
/// `Ok(None)`: a signal came first (stop quietly).
///
/// Reconcile only once every cache has listed: otherwise a half-filled cache would look like
/// deleted objects and we would delete and re-create insights at every start. With leader
/// election, only the Lease holder writes; losing the Lease stops the process (it is restarted
/// and campaigns again) so two replicas never write at once.
pub(crate) async fn sync_then_lead(
    setup: &Setup<'_>,
    infra: &mut Tasks,
    synced: Synced,
    mut shutdown: Pin<&mut impl Future<Output = ()>>,
) -> anyhow::Result<Option<Option<Leadership>>> {
    let Setup {
        args,
        client,
        health,
        ..
    } = *setup;
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

/// Starts the /metrics and probe servers (tasks of `infra`); `reviews` is the client of the
/// `/metrics` token reviews (not the writers').
pub(crate) async fn serve_endpoints(
    args: &Args,
    reviews: kube::Client,
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
        Arc::new(Authorizer::new(
            reviews,
            &args.namespace,
            Some(metrics.clone()),
        )),
    )
    .await?;
    infra.spawn("metrics-server", metrics_server.wait());
    let probes =
        metrics_server::serve_probes(args.health_probe_bind_address, probes(health)).await?;
    infra.spawn("probe-server", probes.wait());
    Ok(())
}

/// `RUST_LOG` (default `info`), as text or JSON; on standard output; colours only when that is
/// a terminal (a log file or a pod's log gets no escape sequences).
pub fn init_logging(format: LogFormat) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    match format {
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .with_ansi(false)
            .init(),
        LogFormat::Text => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(std::io::stdout().is_terminal())
            .init(),
    }
}

/// The Prometheus client of `--prometheus-url`, if set.
pub(crate) fn prometheus_client(args: &Args) -> anyhow::Result<Option<PrometheusClient>> {
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

/// Waits until we hold the leader-election Lease.
async fn campaign(args: &Args, client: &kube::Client) -> Leadership {
    let me = args.identity();
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

/// What every reconcile loop shares.
pub(crate) struct LoopContext {
    pub clock: Clock,
    pub metrics: Arc<Metrics>,
    pub health: Arc<Health>,
    pub stopping: watch::Receiver<bool>,
    /// Closed once the leader-election Lease is lost: the writers' clients, local and hub,
    /// send no mutating call after that.
    pub gate: crate::runtime::leader::LeaseGate,
}

impl LoopContext {
    /// The one context the reconcilers are built from ([`crate::reconcilers::context::Context`]):
    /// writing through `client` (the writers' client, gated by the Lease) into `--namespace`,
    /// reading `caches`, counting in the process's metrics, labelled with `--cluster-id`.
    pub fn reconcilers<C>(
        &self,
        args: &Args,
        client: &kube::Client,
        caches: C,
    ) -> crate::reconcilers::context::Context<C> {
        crate::reconcilers::context::Context {
            client: client.clone(),
            namespace: args.namespace.clone(),
            caches,
            metrics: self.metrics.clone(),
            cluster_id: args.cluster_id.clone(),
        }
    }

    /// Runs `r`'s loop as task `reconciler/<name>`, woken by `wake`.
    pub fn spawn<R: Reconcile>(&self, tasks: &mut Tasks, r: R, wake: &Arc<Notify>) {
        tasks.spawn(
            format!("reconciler/{}", R::NAME),
            runner::run(
                r,
                runner::Loop {
                    clock: self.clock,
                    metrics: self.metrics.clone(),
                    wake: wake.clone(),
                    shutdown: self.stopping.clone(),
                    heartbeat: self.health.heartbeat(R::NAME),
                },
            ),
        );
    }
}

/// Everything that runs once we write.
pub(crate) struct Running {
    pub infra: Tasks,
    pub writers: Tasks,
    pub stop_writers: watch::Sender<bool>,
    pub leadership: Option<Leadership>,
    pub health: Arc<Health>,
}

/// Why the process stops.
enum Stop {
    Signal,
    LostLease,
    Ended(TaskEnded),
}

/// Runs until a signal, the loss of the Lease or the end of any task; then stops the writers
/// first, releases the Lease when we still hold it, and stops the rest.
pub(crate) async fn supervise(
    mut run: Running,
    shutdown: Pin<&mut impl Future<Output = ()>>,
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
            // The grace is no time to write without the Lease: lost meanwhile, the writers are
            // aborted at once (their client already refuses to send: LeaseGate).
            let lost = async {
                match run.leadership.as_mut() {
                    Some(l) => l.lost().await,
                    None => std::future::pending().await,
                }
            };
            let lost_in_grace = tokio::select! {
                () = run.writers.stop(SHUTDOWN_GRACE) => false,
                () = lost => true,
            };
            if lost_in_grace {
                run.writers.abort().await;
                tracing::error!(
                    "stopped writing: lost the leader-election Lease while shutting down"
                );
                run.infra.abort().await;
                anyhow::bail!(
                    "lost the leader-election Lease {}/{} while shutting down",
                    args.namespace,
                    args.leader_election_id
                )
            }
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
///
/// The panic message (which may quote data) is logged; `/healthz`, served without
/// authentication, says only which task ended and how.
fn fatal(health: &Health, ended: TaskEnded) -> anyhow::Error {
    match &ended.panic {
        Some(message) => {
            tracing::error!(task = %ended.name, how = ended.how, panic = %message, "a long-running task stopped; exiting")
        }
        None => {
            tracing::error!(task = %ended.name, how = ended.how, "a long-running task stopped; exiting")
        }
    }
    health.set_stopped(ended.to_string());
    anyhow::Error::new(ended).context("the controller cannot run without it")
}

/// Hub mode: OCM's ManagedClusterAddOn resource exists and we may read it and our quotas.
async fn preflight_hub(client: &kube::Client) -> anyhow::Result<()> {
    let one = ListParams::default().limit(1);
    let rbac = "config/acm/limits/hub-controller.yaml";
    let addons: Api<ManagedClusterAddOn> = Api::all(client.clone());
    match addons.list_metadata(&one).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.is_not_found() => anyhow::bail!(
            "no managedclusteraddons.addon.open-cluster-management.io resource: --mode=hub runs on an Open Cluster Management (ACM) hub"
        ),
        Err(kube::Error::Api(s)) if s.is_forbidden() => anyhow::bail!(
            "not allowed to list managedclusteraddons in all namespaces: check the RBAC in {rbac} ({})",
            s.message
        ),
        Err(e) => return Err(e).context("checking that the ManagedClusterAddOn CRD is installed"),
    }
    let quotas: Api<k8s_openapi::api::core::v1::ResourceQuota> = Api::all(client.clone());
    match quotas.list_metadata(&one).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_forbidden() => anyhow::bail!(
            "not allowed to list resourcequotas in all namespaces: check the RBAC in {rbac} ({})",
            s.message
        ),
        Err(e) => Err(e).context("listing resourcequotas"),
    }
}

/// Fails early, with a clear message, if our CRDs (and in hosted mode HyperShift's) are not
/// installed or we may not use them: standalone mode reads our namespace, hosted mode the
/// watched namespace (`--watch-namespace`, else all).
pub(crate) async fn preflight(client: &kube::Client, args: &Args) -> anyhow::Result<()> {
    let (namespace, rbac) = match args.mode {
        Mode::Standalone => (Some(args.namespace.as_str()), "config/rbac/"),
        Mode::Hosted => (args.watch_namespace.as_deref(), "config/rbac/hosted/"),
        Mode::Hub => return preflight_hub(client).await,
    };
    let where_ = namespace.map_or("all namespaces".to_string(), |n| format!("namespace {n}"));
    let one = ListParams::default().limit(1);
    let insights: Api<UpdateInsight> = match namespace {
        Some(n) => Api::namespaced(client.clone(), n),
        None => Api::all(client.clone()),
    };
    match insights.list(&one).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.is_not_found() => anyhow::bail!(
            "the update-status CRDs are not installed (no updateinsights.update.openshift.io resource): apply config/crd/ first"
        ),
        Err(kube::Error::Api(s)) if s.is_forbidden() => anyhow::bail!(
            "not allowed to list updateinsights in {where_}: check the RBAC in {rbac} ({})",
            s.message
        ),
        Err(e) => return Err(e).context("checking that the update-status CRDs are installed"),
    }
    if args.mode == Mode::Standalone {
        return Ok(());
    }
    let hcs: Api<HostedCluster> = match namespace {
        Some(n) => Api::namespaced(client.clone(), n),
        None => Api::all(client.clone()),
    };
    match hcs.list(&one).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_not_found() => anyhow::bail!(
            "no hostedclusters.hypershift.openshift.io resource: --mode=hosted runs on a HyperShift management cluster"
        ),
        Err(kube::Error::Api(s)) if s.is_forbidden() => anyhow::bail!(
            "not allowed to list hostedclusters in {where_}: check the RBAC in {rbac} ({})",
            s.message
        ),
        Err(e) => Err(e).context("checking that the HostedCluster CRD is installed"),
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

pub(crate) async fn shutdown_signal() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Issue #29: a SIGTERM while renewal fails. The writers' grace used to run its course
    /// (5 s) with the Lease lost meanwhile; now the loss stops them at once, and the process
    /// exits with an error instead of releasing a Lease it no longer holds.
    #[tokio::test]
    async fn a_lease_lost_during_the_shutdown_grace_stops_the_writers_at_once() {
        let args = Args::try_parse_from(["update-status-controller"]).expect("default flags");
        let (leadership, held) = Leadership::held_until();
        let ticks = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut writers = Tasks::new();
        let counted = ticks.clone();
        // A writer inside a long pass: it does not look at the stop signal.
        writers.spawn("reconciler/busy", async move {
            loop {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        let (stop_writers, _stopping) = watch::channel(false);
        let run = Running {
            infra: Tasks::new(),
            writers,
            stop_writers,
            leadership: Some(leadership),
            health: Health::new(Duration::from_secs(60)),
        };
        let started = std::time::Instant::now();
        let supervised = tokio::spawn(async move {
            let signal = std::pin::pin!(async {});
            supervise(run, signal, &args).await
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        held.send_replace(false);
        let result = supervised.await.expect("supervise ran");
        let took = started.elapsed();
        let error = format!(
            "{:#}",
            result.expect_err("losing the Lease is an error exit")
        );
        assert!(error.contains("lost the leader-election Lease"), "{error}");
        assert!(
            took < Duration::from_secs(1),
            "stopped {took:?} after the signal"
        );
        let at_stop = ticks.load(std::sync::atomic::Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            ticks.load(std::sync::atomic::Ordering::SeqCst),
            at_stop,
            "the writer is gone"
        );
    }

    /// The probe port is unauthenticated: a panicking task's message (it may quote data) is
    /// logged, and `/healthz` says only which task failed and how.
    #[tokio::test]
    async fn the_probe_names_a_panicked_task_without_its_message() {
        let health = Health::new(Duration::from_secs(60));
        let mut tasks = Tasks::new();
        #[allow(clippy::panic)]
        tasks.spawn("reconciler/alerts", async {
            panic!("secret-looking detail: token=abc123")
        });
        let ended = tasks.first_ended().await;
        let error = fatal(&health, ended);
        assert!(
            format!("{error:#}").contains("reconciler/alerts"),
            "{error:#}"
        );

        let server =
            metrics_server::serve_probes("127.0.0.1:0".parse().expect("addr"), probes(&health))
                .await
                .expect("serving the probes");
        let mut tcp = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .expect("connecting");
        tcp.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .expect("sending");
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).await.expect("reading");
        server.abort();
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(
            answer.ends_with("task reconciler/alerts panicked"),
            "{answer}"
        );
        assert!(!answer.contains("token=abc123"), "{answer}");
    }
}
