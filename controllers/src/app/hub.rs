//! Hub mode (`--mode=hub`, on an ACM/OCM fleet hub): the same process as the other modes
//! (endpoints, supervisor, leader election, health, metrics) with two watches, the
//! ManagedClusterAddOns of our add-on and our ResourceQuotas, and one writer, the hub quota
//! reconciler ([`crate::reconcilers::hub_quota`]).

use std::sync::Arc;

use k8s_openapi::api::core::v1::ResourceQuota;
use kube::Api;
use kube::runtime::{reflector, watcher};
use tokio::sync::Notify;
use update_status_api::acm::{ADDON_NAME, ManagedClusterAddOn};
use update_status_api::crd::labels;

use super::args::Args;
use super::process::{LoopContext, Started};
use crate::cache::insights::CachedInsight;
use crate::cache::watch::{Unreadable, Wake, Watches};
use crate::reconcilers::hub_quota::{self, HubQuotaReconciler, QUOTA_NAME};
use crate::runtime::health::Health;
use crate::runtime::supervisor::Tasks;

/// Starts the watches (tasks of `infra`), each event waking the hub quota reconciler; returns
/// how to start it once we lead.
pub(crate) fn start(client: &kube::Client, health: &Arc<Health>, infra: &mut Tasks) -> Started {
    let wake = Arc::new(Notify::new());
    let mut watches = Watches {
        tasks: infra,
        health: health.clone(),
        client: client.clone(),
        unreadable: Unreadable::default(),
    };
    let addons = watches.spawn(
        Api::<ManagedClusterAddOn>::all(client.clone()),
        watcher::Config::default().fields(&format!("metadata.name={ADDON_NAME}")),
        Wake::always(vec![wake.clone()]),
        "ManagedClusterAddOn",
    );
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
    Started::new(
        async move {
            a.wait_until_ready().await?;
            q.wait_until_ready().await
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
            ctx.spawn(
                &mut tasks,
                HubQuotaReconciler::new(
                    client.clone(),
                    addons,
                    quotas,
                    limits,
                    ctx.metrics.clone(),
                ),
                &wake,
            );
            tasks
        },
    )
}
