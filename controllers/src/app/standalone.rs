//! Standalone mode: the watches of the cluster the controller runs in, routed to the
//! control-plane, worker-pools, alerts and cluster-claims reconcilers and the hub sync, and those
//! writers.

use std::sync::Arc;

use anyhow::Context as _;
use tokio::sync::Notify;

use super::args::Args;
use super::process::{LoopContext, Setup, Started};
use crate::cache::prometheus::PrometheusClient;
use crate::cache::watch::{self, Caches, Routes, Wake, Watches};
use crate::hub_sync::agent_health::AgentHealth;
use crate::hub_sync::{HubConfig, HubSync, SessionSettings};
use crate::metrics::Metrics;
use crate::reconcilers::alerts::{self, AlertsReconciler, PollSettings};
use crate::reconcilers::claims::ClaimsReconciler;
use crate::reconcilers::context::Context;
use crate::reconcilers::control_plane::{self, ControlPlaneReconciler};
use crate::reconcilers::estimates::EstimatesReconciler;
use crate::reconcilers::events::{EventsReconciler, Watched};
use crate::reconcilers::worker_pools::{self, WorkerPoolsReconciler};
use crate::runtime::supervisor::Tasks;

/// Which tasks to wake.
#[derive(Clone, Default)]
pub struct Wakers {
    /// The control-plane reconciler.
    pub control_plane: Arc<Notify>,
    /// The worker-pools reconciler.
    pub worker_pools: Arc<Notify>,
    /// The alerts reconciler (woken by our status objects: the update's start and whether an
    /// update is in progress; it polls Prometheus on its own schedule).
    pub alerts: Arc<Notify>,
    /// The hub sync (woken by any of our objects; idle without `--hub-kubeconfig`).
    pub hub_sync: Arc<Notify>,
    /// The events task (woken by our insights and control-plane statuses).
    pub events: Arc<Notify>,
    /// The cluster-claims reconciler (woken by our status objects, and by the watch of the
    /// claims it starts itself).
    pub claims: Arc<Notify>,
    /// The estimates reconciler (woken by the inputs, like the control-plane one).
    pub estimates: Arc<Notify>,
}

impl Wakers {
    /// Wakes every task once (their first pass).
    fn wake_all(&self) {
        self.control_plane.notify_one();
        self.worker_pools.notify_one();
        self.alerts.notify_one();
        self.hub_sync.notify_one();
        self.events.notify_one();
        self.claims.notify_one();
        self.estimates.notify_one();
    }

    /// Whom each watch wakes. The control-plane reconciler counts the master pool's nodes
    /// itself, so the pools, MachineConfigs and Nodes wake it too. Our own objects wake the
    /// reconciler that wrote them (its name in their `update.openshift.io/reconciler` label),
    /// the status objects the alerts reconciler, and every one of them the hub sync; the
    /// alert insights also wake the worker-pools reconciler (a firing PodDisruptionBudget
    /// alert corroborates what blocks a drain), the insights and control-plane statuses
    /// the events task, and the status objects the cluster-claims reconciler.
    pub fn routes(&self) -> Routes {
        let (cp, wp) = (&self.control_plane, &self.worker_pools);
        let (alerts, hub, events) = (&self.alerts, &self.hub_sync, &self.events);
        let claims = &self.claims;
        let est = &self.estimates;
        let inputs = |w: &[&Arc<Notify>]| Wake::always(w.iter().map(|w| Arc::clone(w)).collect());
        Routes {
            cluster_versions: inputs(&[cp, wp, est]),
            cluster_operators: inputs(&[cp, est]),
            pools: inputs(&[cp, wp, est]),
            machine_configs: inputs(&[cp, wp, est]),
            nodes: inputs(&[cp, wp, est]),
            mco_deployments: inputs(&[cp, est]),
            insights: Wake::owned(
                vec![hub.clone(), events.clone()],
                vec![
                    (control_plane::NAME, cp.clone()),
                    (worker_pools::NAME, wp.clone()),
                    (alerts::NAME, wp.clone()),
                ],
            ),
            control_plane_statuses: Wake::owned(
                vec![alerts.clone(), hub.clone(), events.clone(), claims.clone()],
                vec![(control_plane::NAME, cp.clone())],
            ),
            worker_pool_statuses: Wake::owned(
                vec![alerts.clone(), hub.clone(), claims.clone()],
                vec![(worker_pools::NAME, wp.clone())],
            ),
        }
    }
}

/// Starts the standalone watches (tasks of `infra`) and checks the hub configuration; returns
/// how to start the writers once we lead.
pub(crate) async fn start(
    setup: Setup<'_>,
    infra: &mut Tasks,
    prometheus: Option<PrometheusClient>,
) -> anyhow::Result<Started> {
    let Setup {
        args,
        client,
        metrics,
        health,
    } = setup;
    let wakers = Wakers::default();
    // Progress insights are cached whole only when the hub sync copies them.
    let caches = watch::start(
        Watches::new(client, health, infra),
        &args.namespace,
        wakers.routes(),
        args.keep_progress(),
    );
    let hub = hub_sync(args, &caches, &wakers, metrics).await?;
    let listed = caches.clone();
    let insights = caches.insights.clone();
    let writers = Writers {
        caches,
        wakers,
        prometheus,
        hub,
    };
    Ok(Started::new(
        async move { listed.synced().await },
        insights,
        move |ctx: &LoopContext, args: &Args, client: &kube::Client| {
            let tasks = writers.start(ctx, args, client);
            tracing::info!(namespace = %args.namespace, "update-status-controller running");
            tasks
        },
    ))
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

/// What the writers are started from once we lead: the caches, whom to wake, the Prometheus
/// client (`--prometheus-url`) and the hub sync (`--hub-kubeconfig`).
struct Writers {
    caches: Caches,
    wakers: Wakers,
    prometheus: Option<PrometheusClient>,
    hub: Option<HubSync>,
}

impl Writers {
    /// Starts the tasks that write (the reconcilers, the hub sync), all built from one
    /// [`Context`]: they run only while we lead.
    fn start(self, ctx: &LoopContext, args: &Args, client: &kube::Client) -> Tasks {
        let Writers {
            caches,
            wakers,
            prometheus,
            hub,
        } = self;
        let mut tasks = Tasks::new();
        let hub = hub.map(|hub| {
            let prometheus = prometheus
                .as_ref()
                .map(|p| (p.base_url().to_string(), ctx.metrics.alert_polls.follow()));
            hub.with_settings(SessionSettings {
                gate: ctx.gate.clone(),
                heartbeat: args.hub_heartbeat_interval,
            })
            .with_agent_health(AgentHealth::new(ctx.health.clone(), prometheus))
        });
        let context: Context = ctx.reconcilers(args, client, caches.clone());
        let watched = Watched {
            insights: caches.insights.clone(),
            statuses: caches.control_plane_statuses.clone(),
        };
        let events = EventsReconciler::new(context.clone().with_caches(watched), args.identity());
        // The events task reads its baseline first: what is already there is not told again.
        ctx.spawn(&mut tasks, events, &wakers.events);
        let cp = ControlPlaneReconciler::new(context.clone());
        ctx.spawn(&mut tasks, cp, &wakers.control_plane);
        let wp = WorkerPoolsReconciler::new(context.clone());
        ctx.spawn(&mut tasks, wp, &wakers.worker_pools);
        let claims = ClaimsReconciler::new(context.clone(), wakers.claims.clone());
        ctx.spawn(&mut tasks, claims, &wakers.claims);
        let est = EstimatesReconciler::new(context.clone());
        ctx.spawn(&mut tasks, est, &wakers.estimates);
        match prometheus {
            Some(prometheus) => {
                tracing::info!(
                    url = %prometheus.alerts_url(),
                    interval = ?args.prometheus_interval,
                    proxy = prometheus.proxy().map(ToString::to_string),
                    "alert insights on: polling Prometheus"
                );
                let settings = PollSettings {
                    interval: args.prometheus_interval,
                    max_backoff: alerts::MAX_BACKOFF,
                };
                let r = AlertsReconciler::new(context, prometheus, settings);
                ctx.spawn(&mut tasks, r, &wakers.alerts);
            }
            None => tracing::info!("no --prometheus-url: alert insights off"),
        }
        match hub {
            // Its passes' lines (and its writers' `write` spans) carry the cluster's name: the
            // `hub_sync{cluster}` span of `HubSync::run`.
            Some(hub) => tasks.spawn("hub-sync", hub.run(ctx.stopping.clone())),
            None => tracing::info!("no --hub-kubeconfig: hub sync off"),
        }
        wakers.wake_all();
        tasks
    }
}
