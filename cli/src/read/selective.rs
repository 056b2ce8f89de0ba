//! The live view's reads: by label, only what the compact view prints (the default view and
//! `--details=health|operators`), or everything in pages (`--details=nodes|all`, `-o json|yaml`).
//!
//! The selective read lists, at once: the ControlPlaneUpdateStatus and WorkerPoolUpdateStatus
//! objects, the non-node progress insights, the health insights, the "interesting" node
//! insights (assessment `degraded` or `unavailable`: a compact node table prints them all), and
//! four label checks. Then, per pool still short of the ten first nodes, the next assessment
//! classes in the node tables' order (`progressing`, `excluded`, `outdated`, `completed`) until
//! it has them. The omitted-nodes footers come from the statuses' node counts. Whenever a label
//! or a count the view depends on is missing or unknown (objects from another version), it
//! falls back to a full read and says so on stderr: it never prints a wrong view.

use futures::future::try_join_all;
use kube::Client;
use kube::api::{Api, ListParams};
use update_status_api::crd::{
    Assessment, ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus, InsightType, NodeCounts,
    UpdateInsight, UpdateInsightStatus, WorkerPoolUpdateStatus, WorkerPoolUpdateStatusStatus,
    labels,
};
use update_status_assess::naming::label_value;
use update_status_assess::nodes::MASTER_POOL;

use crate::read::online::{OnlineError, list};
use crate::show::view::View;

/// Page size of the full read.
pub const PAGE: u32 = 500;
/// Rows a compact node table prints whatever their class.
const FIRST_ROWS: usize = 10;
/// Node assessment classes, in the node tables' order; the first two are always printed.
const CLASSES: [Assessment; 6] = [
    Assessment::Degraded,
    Assessment::Unavailable,
    Assessment::Progressing,
    Assessment::Excluded,
    Assessment::Outdated,
    Assessment::Completed,
];

/// Selector of node progress insights.
fn nodes_selector() -> String {
    format!(
        "{}=progress,{}=Node",
        labels::INSIGHT_TYPE,
        labels::RESOURCE_KIND
    )
}

/// `(a,b,...)` of assessment slugs.
fn slugs(classes: &[Assessment]) -> String {
    let v: Vec<&str> = classes.iter().map(|a| a.slug()).collect();
    format!("({})", v.join(","))
}

/// The selectors the live view uses (documented in docs/reference.md, "Reading insights by label").
pub mod selectors {
    use crate::read::selective::{CLASSES, labels, nodes_selector, slugs};

    /// Non-node progress insights (ClusterVersion, ClusterOperators).
    pub fn other_progress() -> String {
        format!(
            "{}=progress,{}!=Node",
            labels::INSIGHT_TYPE,
            labels::RESOURCE_KIND
        )
    }
    /// Every health insight.
    pub fn health() -> String {
        format!("{}=health", labels::INSIGHT_TYPE)
    }
    /// The node insights every compact node table prints.
    pub fn interesting_nodes() -> String {
        format!(
            "{},{} in {}",
            nodes_selector(),
            labels::ASSESSMENT,
            slugs(&CLASSES[..2])
        )
    }
    /// One pool's nodes of one class.
    pub fn pool_class(pool_label: &str, class: &str) -> String {
        format!(
            "{},{}={pool_label},{}={class}",
            nodes_selector(),
            labels::POOL,
            labels::ASSESSMENT
        )
    }
    /// Checks: any object here means a label the view depends on is missing or unknown.
    pub fn checks() -> [String; 4] {
        [
            format!("{} notin (progress,health)", labels::INSIGHT_TYPE),
            format!(
                "{}=progress,!{}",
                labels::INSIGHT_TYPE,
                labels::RESOURCE_KIND
            ),
            format!(
                "{},{} notin {}",
                nodes_selector(),
                labels::ASSESSMENT,
                slugs(&CLASSES)
            ),
            format!("{},!{}", nodes_selector(), labels::POOL),
        ]
    }
}

/// Reads one cluster's view from `namespace`: by label when `selective` (falling back to a full
/// read, with a note on stderr, when the labels or counts do not allow it), else everything.
pub async fn fetch_view(
    client: &Client,
    namespace: &str,
    selective: bool,
) -> Result<View, OnlineError> {
    if selective {
        match fetch_selective(client, namespace).await? {
            Ok(view) => return Ok(view),
            Err(reason) => eprintln!(
                "note: reading every UpdateInsight in {namespace}: {reason} (objects written by another version?)"
            ),
        }
    }
    fetch_full(client, namespace).await
}

/// The statuses of a namespace: its control plane and its worker pools with their names.
type Statuses = (
    ControlPlaneUpdateStatusStatus,
    Vec<(String, WorkerPoolUpdateStatusStatus)>,
);

async fn statuses(client: &Client, namespace: &str) -> Result<Statuses, OnlineError> {
    let ns = Some(namespace);
    let params = ListParams::default();
    let cps_api = Api::<ControlPlaneUpdateStatus>::namespaced(client.clone(), namespace);
    let pools_api = Api::<WorkerPoolUpdateStatus>::namespaced(client.clone(), namespace);
    let (cps, pools) =
        tokio::try_join!(list(&cps_api, &params, ns), list(&pools_api, &params, ns))?;
    let control_plane =
        pick_control_plane(cps.items).ok_or_else(|| OnlineError::NoControlPlane {
            namespace: namespace.to_owned(),
        })?;
    let mut pools: Vec<(String, _)> = pools
        .items
        .into_iter()
        .filter_map(|p| {
            let status = p.status?;
            let name = if status.resource.name.is_empty() {
                p.metadata.name.unwrap_or_default()
            } else {
                status.resource.name.clone()
            };
            Some((name, status))
        })
        .collect();
    // The MachineConfigPool list order an API server gives oc: by pool name.
    pools.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((control_plane, pools))
}

/// Every insight (those `selector` selects, when given), `PAGE` at a time (only the `.status`
/// of each page is kept).
pub async fn all_insights(
    client: &Client,
    namespace: &str,
    selector: Option<&str>,
) -> Result<Vec<UpdateInsightStatus>, OnlineError> {
    let api = Api::<UpdateInsight>::namespaced(client.clone(), namespace);
    let mut out = Vec::new();
    let mut params = ListParams::default().limit(PAGE);
    if let Some(selector) = selector {
        params = params.labels(selector);
    }
    loop {
        let page = list(&api, &params, Some(namespace)).await?;
        out.extend(page.items.into_iter().filter_map(|i| i.status));
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => return Ok(out),
        }
    }
}

/// The full read: every insight (paged) and the statuses, at once.
pub async fn fetch_full(client: &Client, namespace: &str) -> Result<View, OnlineError> {
    // Insights first: when nothing is installed, the message names `updateinsights`.
    let (insights, (control_plane, worker_pools)) = tokio::try_join!(
        all_insights(client, namespace, None),
        statuses(client, namespace)
    )?;
    Ok(View {
        control_plane: Some(control_plane),
        worker_pools,
        insights,
        printed_nodes_only: false,
    })
}

/// Lists the insights `selector` selects (at most `limit`).
async fn select(
    api: &Api<UpdateInsight>,
    namespace: &str,
    selector: &str,
    limit: Option<u32>,
) -> Result<Vec<UpdateInsight>, OnlineError> {
    let mut params = ListParams::default().labels(selector);
    if let Some(limit) = limit {
        params = params.limit(limit);
    }
    Ok(list(api, &params, Some(namespace)).await?.items)
}

/// The selective read: `Ok(Err(reason))` when it cannot be trusted.
async fn fetch_selective(
    client: &Client,
    namespace: &str,
) -> Result<Result<View, String>, OnlineError> {
    let api = Api::<UpdateInsight>::namespaced(client.clone(), namespace);
    let checks = selectors::checks();
    let (others, health, interesting) = (
        selectors::other_progress(),
        selectors::health(),
        selectors::interesting_nodes(),
    );
    let (others, health, interesting, (control_plane, worker_pools), checks) = tokio::try_join!(
        select(&api, namespace, &others, None),
        select(&api, namespace, &health, None),
        select(&api, namespace, &interesting, None),
        statuses(client, namespace),
        try_join_all(checks.iter().map(|c| select(&api, namespace, c, Some(1)))),
    )?;
    if let Some(found) = checks.iter().flatten().next() {
        return Ok(Err(format!(
            "UpdateInsight {} lacks a label the selective read needs, or has an unknown value",
            found.metadata.name.as_deref().unwrap_or_default()
        )));
    }
    let mut pools: Vec<(&str, &NodeCounts)> = vec![(MASTER_POOL, &control_plane.nodes)];
    pools.extend(worker_pools.iter().map(|(n, p)| (n.as_str(), &p.nodes)));
    if let Some((pool, _)) = pools
        .iter()
        .find(|(_, c)| c.total > 0 && (c.completed.is_none() || c.assessed_progressing.is_none()))
    {
        return Ok(Err(format!(
            "the status of pool {pool} lacks the node counts the footer needs"
        )));
    }
    let mut nodes = match checked(interesting) {
        Ok(nodes) => nodes,
        Err(reason) => return Ok(Err(reason)),
    };
    let more = try_join_all(pools.iter().map(|(pool, counts)| {
        let have = nodes
            .iter()
            .filter(|n| n.scope.pool.as_deref() == Some(pool))
            .count();
        pool_first_rows(&api, namespace, pool, have, counts.total as usize)
    }))
    .await?;
    for batch in more {
        match checked(batch) {
            Ok(batch) => nodes.extend(batch),
            Err(reason) => return Ok(Err(reason)),
        }
    }
    let mut insights: Vec<UpdateInsightStatus> = others
        .into_iter()
        .chain(health)
        .filter_map(|i| i.status)
        .collect();
    insights.extend(nodes);
    Ok(Ok(View {
        control_plane: Some(control_plane),
        worker_pools,
        insights,
        printed_nodes_only: true,
    }))
}

/// The pool's next classes after the interesting ones, until it has the first rows (`have`
/// nodes read so far, `total` in the pool).
async fn pool_first_rows(
    api: &Api<UpdateInsight>,
    namespace: &str,
    pool: &str,
    mut have: usize,
    total: usize,
) -> Result<Vec<UpdateInsight>, OnlineError> {
    let mut out = Vec::new();
    let pool_label = label_value(pool);
    for class in &CLASSES[2..] {
        if have >= FIRST_ROWS.min(total) {
            break;
        }
        let batch = select(
            api,
            namespace,
            &selectors::pool_class(&pool_label, class.slug()),
            None,
        )
        .await?;
        have += batch.len();
        out.extend(batch);
    }
    Ok(out)
}

/// The statuses of node insights, provided their `assessment` label matches their status
/// (else the reason not to trust the selection).
fn checked(items: Vec<UpdateInsight>) -> Result<Vec<UpdateInsightStatus>, String> {
    items
        .into_iter()
        .map(|i| {
            let name = i.metadata.name.clone().unwrap_or_default();
            let label = i
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(labels::ASSESSMENT))
                .cloned();
            let status = i.status.filter(|s| {
                s.type_ == InsightType::Progress
                    && s.progress.as_ref().map(|p| p.assessment.slug()) == label.as_deref()
            });
            status.ok_or_else(|| {
                format!("UpdateInsight {name}: its assessment label does not match its status")
            })
        })
        .collect()
}

/// The ControlPlaneUpdateStatus of a namespace: the one named `cluster` if several exist,
/// else the first by name, among those with a status.
pub(crate) fn pick_control_plane(
    mut cps: Vec<ControlPlaneUpdateStatus>,
) -> Option<ControlPlaneUpdateStatusStatus> {
    cps.retain(|c| c.status.is_some());
    cps.sort_by_key(|c| {
        (
            c.metadata.name.as_deref() != Some("cluster"),
            c.metadata.name.clone(),
        )
    });
    cps.into_iter().next().and_then(|c| c.status)
}
