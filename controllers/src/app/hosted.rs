//! Hosted mode (`--mode=hosted`): the same process as standalone (endpoints, supervisor, leader
//! election, health, metrics) with the hosted watches, the one hosted reconciler
//! ([`crate::reconcilers::hosted`]) and the hosted hub sync. [`routes`] says whom each hosted
//! watch wakes, as `super::standalone::Wakers::routes` does for standalone's.

use std::sync::Arc;

use anyhow::Context;
use tokio::sync::Notify;
use tracing::Instrument;

use super::args::Args;
use super::process::{LoopContext, Setup, Started};
use crate::cache::hosted::{self, HostedCaches, HostedRoutes};
use crate::cache::watch::{Wake, Watches};
use crate::hub_sync::hosted::{HostedCredentials, HostedHubSync, watch_addon_secrets};
use crate::hub_sync::{Credentials, LocalObjects, SessionSettings};
use crate::reconcilers::events::{EventsReconciler, Watched};
use crate::reconcilers::hosted::HostedReconciler;
use crate::runtime::supervisor::Tasks;

/// Whom each hosted watch wakes: every event the hosted reconciler (`reconciler`); those of
/// HostedClusters and of our objects the hub sync (`hub`, when on); those of our insights and
/// control-plane statuses the events task (`events`).
pub fn routes(
    reconciler: &Arc<Notify>,
    hub: Option<&Arc<Notify>>,
    events: &Arc<Notify>,
) -> HostedRoutes {
    let wake = |others: &[Option<&Arc<Notify>>]| {
        Wake::always(
            std::iter::once(reconciler)
                .chain(others.iter().flatten().copied())
                .cloned()
                .collect(),
        )
    };
    HostedRoutes {
        hosted_clusters: wake(&[hub]),
        node_pools: wake(&[]),
        machines: wake(&[]),
        insights: wake(&[hub, Some(events)]),
        control_plane_statuses: wake(&[hub, Some(events)]),
        worker_pool_statuses: wake(&[hub]),
    }
}

/// Starts the hosted watches (tasks of `infra`), waking whom [`routes`] says, and checks the
/// hub configuration; returns how to start the writers once we lead.
pub(crate) async fn start(setup: Setup<'_>, infra: &mut Tasks) -> anyhow::Result<Started> {
    let Setup {
        args,
        client,
        metrics,
        health,
    } = setup;
    let wake = Arc::new(Notify::new());
    let events_wake = Arc::new(Notify::new());
    let hub_wake = args.hub_on().then(|| Arc::new(Notify::new()));
    let caches = hosted::start(
        Watches::new(client, health, infra),
        args.watch_namespace.as_deref(),
        routes(&wake, hub_wake.as_ref(), &events_wake),
        args.keep_progress(),
    );
    // Checked before the reconciler starts (the hub is not contacted yet): an unreadable hub
    // kubeconfig is a configuration error.
    let credentials = hub_credentials(args, client, hub_wake.as_ref(), infra)?;
    let hub = match (credentials, &hub_wake) {
        (Some(credentials), Some(hub_wake)) => Some(
            HostedHubSync::new(
                credentials,
                caches.hosted_clusters.clone(),
                LocalObjects::all(
                    caches.control_plane_statuses.clone(),
                    caches.worker_pool_statuses.clone(),
                    caches.insights.clone(),
                ),
                hub_wake.clone(),
                metrics.clone(),
            )
            .with_progress(args.hub_include_progress),
        ),
        _ => None,
    };
    let listed = caches.clone();
    let insights = caches.insights.clone();
    let writers = Writers {
        caches,
        wake,
        events_wake,
        hub_wake,
        hub,
    };
    Ok(Started::new(
        async move { listed.synced().await },
        insights,
        move |ctx: &LoopContext, args: &Args, client: &kube::Client| {
            writers.start(ctx, args, client)
        },
    ))
}

/// The hub's credentials when the hub sync is on (`hub_wake`): the add-on's rotated Secrets
/// (`--hub-addon-secrets`, watched by a task of `infra`) or `--hub-kubeconfig` alone.
fn hub_credentials(
    args: &Args,
    client: &kube::Client,
    hub_wake: Option<&Arc<Notify>>,
    infra: &mut Tasks,
) -> anyhow::Result<Option<HostedCredentials>> {
    Ok(match (&args.hub_kubeconfig, hub_wake) {
        (Some(kubeconfig), Some(hub_wake)) if args.hub_addon_secrets => {
            // The hub the add-on Secrets must name: its server and CA (issue #48 item 14).
            let mut named = Credentials::from_file(kubeconfig).context("--hub-kubeconfig")?;
            let hub = named
                .current()
                .and_then(|m| m.cluster().cloned())
                .context("--hub-kubeconfig: no current context naming a cluster")?;
            let (credentials, task) = watch_addon_secrets(
                client,
                args.hub_addon_secret_namespace.clone(),
                Arc::new(hub),
                hub_wake.clone(),
            );
            infra.spawn("hub-addon-secrets", task);
            Some(credentials)
        }
        (Some(kubeconfig), Some(_)) => Some(HostedCredentials::Shared(
            Credentials::from_file(kubeconfig).context("--hub-kubeconfig")?,
        )),
        _ => None,
    })
}

/// What the hosted writers are started from once we lead: the caches, the wake-ups of the
/// reconciler, the events task and the hub sync, and the hub sync itself (when on).
struct Writers {
    caches: HostedCaches,
    wake: Arc<Notify>,
    events_wake: Arc<Notify>,
    hub_wake: Option<Arc<Notify>>,
    hub: Option<HostedHubSync>,
}

impl Writers {
    /// Starts the events task, the hosted reconciler (built from the one
    /// [`crate::reconcilers::context::Context`]) and the hub sync, and wakes them.
    fn start(self, ctx: &LoopContext, args: &Args, client: &kube::Client) -> Tasks {
        let Writers {
            caches,
            wake,
            events_wake,
            hub_wake,
            hub,
        } = self;
        let mut writers = Tasks::new();
        // The update's story as Events regarding the HostedClusters and NodePools.
        let watched = Watched {
            insights: caches.insights.clone(),
            statuses: caches.control_plane_statuses.clone(),
        };
        let events = EventsReconciler::new(ctx.reconcilers(args, client, watched), args.identity());
        ctx.spawn(&mut writers, events, &events_wake);
        let mut reconciler = HostedReconciler::new(ctx.reconcilers(args, client, caches));
        if args.hosted_kubeconfig_access {
            reconciler = reconciler.with_guest_access(wake.clone());
        }
        ctx.spawn(&mut writers, reconciler, &wake);
        match hub {
            Some(hub) => writers.spawn(
                "hub-sync",
                hub.with_settings(SessionSettings {
                    gate: ctx.gate.clone(),
                    heartbeat: args.hub_heartbeat_interval,
                })
                .with_events(client.clone(), args.identity())
                .run(ctx.stopping.clone())
                .instrument(tracing::info_span!("hub_sync", mode = "hosted")),
            ),
            None => {
                tracing::info!("no --hub-kubeconfig or --hub-addon-secrets: hub sync off")
            }
        }
        wake.notify_one();
        events_wake.notify_one();
        if let Some(w) = &hub_wake {
            w.notify_one();
        }
        tracing::info!(
            watch_namespace = args.watch_namespace.as_deref().unwrap_or("(all)"),
            hosted_kubeconfig_access = args.hosted_kubeconfig_access,
            hub_sync = args.hub_on(),
            "update-status-controller running in hosted mode"
        );
        writers
    }
}
