//! Hosted mode (`--mode=hosted`): the same process as standalone (endpoints, supervisor, leader
//! election, health, metrics) with the hosted watches, the one hosted reconciler
//! ([`crate::hosted::reconciler`]) and the hosted hub sync.

use std::sync::Arc;

use anyhow::Context;
use tokio::sync::Notify;
use tracing::Instrument;

use super::args::Args;
use super::process::{LoopContext, Started};
use crate::hosted::reconciler::{self, HostedReconciler, HubWake};
use crate::hub_sync::hosted::{HostedCredentials, HostedHubSync, watch_addon_secrets};
use crate::hub_sync::{Credentials, LocalObjects, SessionSettings};
use crate::metrics::Metrics;
use crate::reconcilers::events::EventsReconciler;
use crate::runtime::health::Health;
use crate::runtime::supervisor::Tasks;

/// Starts the hosted watches (tasks of `infra`), every event waking the hosted reconciler and
/// those of HostedClusters and our objects the hub sync, and checks the hub configuration;
/// returns how to start the writers once we lead.
pub(crate) async fn start(
    args: &Args,
    client: &kube::Client,
    metrics: &Arc<Metrics>,
    health: &Arc<Health>,
    infra: &mut Tasks,
) -> anyhow::Result<Started> {
    let wake = Arc::new(Notify::new());
    let events_wake = Arc::new(Notify::new());
    let hub_wake = HubWake {
        wake: args.hub_on().then(|| Arc::new(Notify::new())),
        events: Some(events_wake.clone()),
        keep_progress: args.keep_progress(),
    };
    let caches = reconciler::start(
        client,
        args.watch_namespace.as_deref(),
        &wake,
        &hub_wake,
        health,
        infra,
    );
    // Checked before the reconciler starts (the hub is not contacted yet): an unreadable hub
    // kubeconfig is a configuration error.
    let credentials = match (&args.hub_kubeconfig, &hub_wake.wake) {
        (Some(kubeconfig), Some(_)) => Some(HostedCredentials::Shared(
            Credentials::from_file(kubeconfig).context("--hub-kubeconfig")?,
        )),
        (None, Some(hub_wake)) if args.hub_addon_secrets => {
            let (credentials, task) = watch_addon_secrets(
                client,
                args.hub_addon_secret_namespace.clone(),
                hub_wake.clone(),
            );
            infra.spawn("hub-addon-secrets", task);
            Some(credentials)
        }
        _ => None,
    };
    let hub = match (credentials, &hub_wake.wake) {
        (Some(credentials), Some(hub_wake)) => Some(HostedHubSync::new(
            credentials,
            args.hub_include_progress,
            caches.hosted_clusters.clone(),
            LocalObjects::all(
                caches.control_plane_statuses.clone(),
                caches.worker_pool_statuses.clone(),
                caches.insights.clone(),
            ),
            hub_wake.clone(),
            metrics.clone(),
        )),
        _ => None,
    };
    let listed = caches.clone();
    let insights = caches.insights.clone();
    Ok(Started::new(
        async move { listed.synced().await },
        insights,
        move |ctx: &LoopContext, args: &Args, client: &kube::Client| {
            let mut writers = Tasks::new();
            // The update's story as Events regarding the HostedClusters and NodePools.
            let events = EventsReconciler::new(
                client.clone(),
                args.identity(),
                caches.insights.clone(),
                caches.control_plane_statuses.clone(),
                ctx.metrics.clone(),
            );
            ctx.spawn(&mut writers, events, &events_wake);
            let mut reconciler = HostedReconciler::new(client.clone(), caches, ctx.metrics.clone());
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
                    .run(ctx.stopping.clone())
                    .instrument(tracing::info_span!("hub_sync", mode = "hosted")),
                ),
                None => {
                    tracing::info!("no --hub-kubeconfig or --hub-addon-secrets: hub sync off")
                }
            }
            wake.notify_one();
            events_wake.notify_one();
            if let Some(w) = &hub_wake.wake {
                w.notify_one();
            }
            tracing::info!(
                watch_namespace = args.watch_namespace.as_deref().unwrap_or("(all)"),
                hosted_kubeconfig_access = args.hosted_kubeconfig_access,
                hub_sync = args.hub_on(),
                "update-status-controller running in hosted mode"
            );
            writers
        },
    ))
}
