//! Hub mode (`--mode=hub`, on an ACM/OCM fleet hub): the same process as the other modes
//! (endpoints, supervisor, leader election, health, metrics) with its watches (the
//! ManagedClusterAddOns of our two add-ons, the ManagedClusters' metadata, our ResourceQuotas and
//! RoleBindings) and two writers: the hub quota reconciler ([`crate::reconcilers::hub_quota`])
//! and the hosted clusters' reconciler ([`crate::reconcilers::hub_hosted`]).

use std::sync::Arc;

use k8s_openapi::api::core::v1::ResourceQuota;
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::Api;
use kube::runtime::{reflector, watcher};
use tokio::sync::Notify;
use update_status_api::acm::{ADDON_NAME, HOSTED_ADDON_NAME, ManagedCluster, ManagedClusterAddOn};
use update_status_api::crd::labels;

use super::args::Args;
use super::process::{LoopContext, Started};
use crate::cache::insights::CachedInsight;
use crate::cache::watch::{Trimmed, Unreadable, Wake, Watches};
use crate::reconcilers::hub_hosted::{self, HostedCaches, HubHostedReconciler};
use crate::reconcilers::hub_quota::{self, HubQuotaReconciler, QUOTA_NAME, QuotaCaches};
use crate::runtime::health::Health;
use crate::runtime::supervisor::Tasks;

/// Starts the watches (tasks of `infra`), each event waking the reconcilers that read it;
/// returns how to start them once we lead.
pub(crate) fn start(client: &kube::Client, health: &Arc<Health>, infra: &mut Tasks) -> Started {
    let wake = Arc::new(Notify::new());
    let mut watches = Watches {
        tasks: infra,
        health: health.clone(),
        client: client.clone(),
        unreadable: Unreadable::default(),
    };
    let hosted_wake = Arc::new(Notify::new());
    let addons = watches.spawn(
        Api::<ManagedClusterAddOn>::all(client.clone()),
        watcher::Config::default().fields(&format!("metadata.name={ADDON_NAME}")),
        Wake::always(vec![wake.clone(), hosted_wake.clone()]),
        "ManagedClusterAddOn",
    );
    let hosted = hosted_watches(client, &mut watches, &hosted_wake, addons.clone());
    let quotas = watches.spawn(
        Api::<ResourceQuota>::all(client.clone()),
        watcher::Config::default()
            .fields(&format!("metadata.name={QUOTA_NAME}"))
            .labels(&format!("{}={}", labels::RECONCILER, hub_quota::NAME)),
        Wake::always(vec![wake.clone()]),
        "ResourceQuota",
    );
    // No insight of ours on the hub is read: the health series stay empty.
    let (insights, _) = reflector::store::<CachedInsight>();
    let (a, q) = (addons.clone(), quotas.clone());
    let (c, h, hq, hb) = (
        hosted.clusters.clone(),
        hosted.hosted_addons.clone(),
        hosted.quotas.clone(),
        hosted.bindings.clone(),
    );
    Started::new(
        async move {
            a.wait_until_ready().await?;
            q.wait_until_ready().await?;
            c.wait_until_ready().await?;
            h.wait_until_ready().await?;
            hq.wait_until_ready().await?;
            hb.wait_until_ready().await
        },
        insights,
        move |ctx: &LoopContext, args: &Args, client: &kube::Client| {
            let mut tasks = Tasks::new();
            let limits = args.hub_quota();
            tracing::info!(
                control_planes = limits.control_planes,
                worker_pools = limits.worker_pools,
                insights = limits.insights,
                "update-status-controller running on the hub: keeping the ResourceQuota {QUOTA_NAME} of every cluster with the add-on"
            );
            let quotas = ctx.reconcilers(args, client, QuotaCaches { addons, quotas });
            ctx.spawn(&mut tasks, HubQuotaReconciler::new(quotas, limits), &wake);
            let hosted = ctx.reconcilers(args, client, hosted);
            ctx.spawn(
                &mut tasks,
                HubHostedReconciler::new(hosted, limits),
                &hosted_wake,
            );
            tasks
        },
    )
}

/// The watches of the hosted clusters' reconciler (the ManagedClusters trimmed to their
/// metadata but labels, the hosted add-ons, our quotas and RoleBindings of hosted clusters), each
/// event waking it; `addons`: the ManagedClusterAddOns `update-status`, already watched.
fn hosted_watches(
    client: &kube::Client,
    watches: &mut Watches<'_>,
    wake: &Arc<Notify>,
    addons: reflector::Store<ManagedClusterAddOn>,
) -> HostedCaches {
    let ours = format!("{}={}", labels::RECONCILER, hub_hosted::NAME);
    let woken = || Wake::always(vec![wake.clone()]);
    HostedCaches {
        clusters: watches.spawn_trimmed(
            Api::<ManagedCluster>::all(client.clone()),
            watcher::Config::default(),
            woken(),
            Trimmed {
                what: "ManagedCluster",
                trim: |mc| {
                    mc.metadata.managed_fields = None;
                    mc.metadata.labels = None;
                },
            },
        ),
        addons,
        hosted_addons: watches.spawn(
            Api::<ManagedClusterAddOn>::all(client.clone()),
            watcher::Config::default().fields(&format!("metadata.name={HOSTED_ADDON_NAME}")),
            woken(),
            "ManagedClusterAddOn",
        ),
        quotas: watches.spawn(
            Api::<ResourceQuota>::all(client.clone()),
            watcher::Config::default()
                .fields(&format!("metadata.name={QUOTA_NAME}"))
                .labels(&ours),
            woken(),
            "ResourceQuota",
        ),
        bindings: watches.spawn(
            Api::<RoleBinding>::all(client.clone()),
            watcher::Config::default()
                .fields(&format!("metadata.name={}", hub_hosted::BINDING_NAME))
                .labels(&ours),
            woken(),
            "RoleBinding",
        ),
    }
}
