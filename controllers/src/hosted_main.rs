//! `--mode=hosted`: the same process as standalone (endpoints, supervisor, leader election,
//! health, metrics) with the hosted watches and the one hosted reconciler
//! ([`update_status_controllers::hosted_reconciler`]).

use std::sync::Arc;

use anyhow::Context;
use kube::Api;
use kube::api::ListParams;
use tokio::sync::{Notify, watch};
use update_status_api::crd::UpdateInsight;
use update_status_api::hosted::HostedCluster;
use update_status_controllers::clock::Clock;
use update_status_controllers::health::Health;
use update_status_controllers::hosted_reconciler::{self, HostedReconciler, HubWake};
use update_status_controllers::hub_sync::Credentials;
use update_status_controllers::hub_sync::LocalObjects;
use update_status_controllers::hub_sync::hosted::{
    HostedCredentials, HostedHubSync, watch_addon_secrets,
};
use update_status_controllers::metrics::Metrics;
use update_status_controllers::supervisor::Tasks;

use super::{
    Args, LoopContext, Running, count_insights_of, serve_endpoints, shutdown_signal, supervise,
    sync_then_lead,
};

/// Flags of standalone mode only, refused in hosted mode (`(flag, set)`). `--cluster-name`:
/// each HostedCluster has its own name on the hub ([`HostedHubSync`]).
fn standalone_only(args: &Args) -> Vec<&'static str> {
    [
        ("--prometheus-url", args.prometheus_url.is_some()),
        ("--cluster-name", args.cluster_name.is_some()),
        ("--cluster-id", args.cluster_id.is_some()),
    ]
    .into_iter()
    .filter_map(|(flag, set)| set.then_some(flag))
    .collect()
}

/// Runs the controller in hosted mode until a signal or a fatal error.
pub(crate) async fn run(args: Args) -> anyhow::Result<()> {
    let refused = standalone_only(&args);
    if !refused.is_empty() {
        anyhow::bail!(
            "{} not supported with --mode=hosted (standalone mode only)",
            refused.join(", ")
        );
    }
    let client = update_status_controllers::client::infer()
        .await
        .context("connecting to the Kubernetes API (in-cluster config or KUBECONFIG)")?;
    preflight(&client, args.watch_namespace.as_deref()).await?;

    let metrics = Arc::new(Metrics::new_hosted()?);
    let health = Health::new(args.reconcile_stuck_after);
    let mut shutdown = std::pin::pin!(shutdown_signal());
    let mut infra = Tasks::new();
    serve_endpoints(&args, &client, &metrics, &health, &mut infra).await?;
    if args.hub_kubeconfig.is_some() && args.hub_addon_secrets {
        anyhow::bail!(
            "--hub-kubeconfig and --hub-addon-secrets both set: choose one identity for the hosted clusters' hub copies (docs/acm.md)"
        );
    }
    let hub_on = args.hub_kubeconfig.is_some() || args.hub_addon_secrets;
    let wake = Arc::new(Notify::new());
    let hub_wake = HubWake {
        wake: hub_on.then(|| Arc::new(Notify::new())),
        keep_progress: hub_on && args.hub_include_progress,
    };
    let caches = hosted_reconciler::start(
        &client,
        args.watch_namespace.as_deref(),
        &wake,
        &hub_wake,
        &health,
        &mut infra,
    );
    count_insights_of(&metrics, &caches.insights);
    // Checked before the reconciler starts (the hub is not contacted yet): an unreadable hub
    // kubeconfig is a configuration error.
    let credentials = match (&args.hub_kubeconfig, &hub_wake.wake) {
        (Some(kubeconfig), Some(_)) => Some(HostedCredentials::Shared(
            Credentials::from_file(kubeconfig).context("--hub-kubeconfig")?,
        )),
        (None, Some(hub_wake)) if args.hub_addon_secrets => {
            let (credentials, task) = watch_addon_secrets(
                &client,
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
    let mut writers = Tasks::new();
    let ctx = LoopContext {
        clock: args.assess_at.map_or(Clock::Wall, Clock::Fixed),
        metrics: metrics.clone(),
        health: health.clone(),
        stopping,
    };
    let mut reconciler = HostedReconciler::new(client.clone(), caches, metrics.clone());
    if args.hosted_kubeconfig_access {
        reconciler = reconciler.with_guest_access(wake.clone());
    }
    ctx.spawn(&mut writers, reconciler, &wake);
    match hub {
        Some(hub) => writers.spawn("hub-sync", hub.run(ctx.stopping.clone())),
        None => tracing::info!("no --hub-kubeconfig or --hub-addon-secrets: hub sync off"),
    }
    wake.notify_one();
    if let Some(w) = &hub_wake.wake {
        w.notify_one();
    }
    tracing::info!(
        watch_namespace = args.watch_namespace.as_deref().unwrap_or("(all)"),
        hosted_kubeconfig_access = args.hosted_kubeconfig_access,
        hub_sync = hub_on,
        "update-status-controller running in hosted mode"
    );
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

/// Fails early, with a clear message, if the HyperShift or our CRDs are missing or not allowed.
async fn preflight(client: &kube::Client, namespace: Option<&str>) -> anyhow::Result<()> {
    let where_ = namespace.map_or("all namespaces".to_string(), |n| format!("namespace {n}"));
    let insights: Api<UpdateInsight> = match namespace {
        Some(n) => Api::namespaced(client.clone(), n),
        None => Api::all(client.clone()),
    };
    let hcs: Api<HostedCluster> = match namespace {
        Some(n) => Api::namespaced(client.clone(), n),
        None => Api::all(client.clone()),
    };
    let one = ListParams::default().limit(1);
    match insights.list(&one).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.is_not_found() => anyhow::bail!(
            "the update-status CRDs are not installed (no updateinsights.update.openshift.io resource): apply config/crd/ first"
        ),
        Err(kube::Error::Api(s)) if s.is_forbidden() => anyhow::bail!(
            "not allowed to list updateinsights in {where_}: check the RBAC in config/rbac/hosted/ ({})",
            s.message
        ),
        Err(e) => return Err(e).context("checking that the update-status CRDs are installed"),
    }
    match hcs.list(&one).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_not_found() => anyhow::bail!(
            "no hostedclusters.hypershift.openshift.io resource: --mode=hosted runs on a HyperShift management cluster"
        ),
        Err(kube::Error::Api(s)) if s.is_forbidden() => anyhow::bail!(
            "not allowed to list hostedclusters in {where_}: check the RBAC in config/rbac/hosted/ ({})",
            s.message
        ),
        Err(e) => Err(e).context("checking that the HostedCluster CRD is installed"),
    }
}
