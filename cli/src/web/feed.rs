//! What feeds the live view: one cluster's watches (by label, as the text view reads) or a
//! fleet's, and the task that turns them into the page's JSON whenever they change.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kube::Client;
use kube::api::Api;
use serde::Serialize;
use tokio::sync::{Notify, watch};
use update_status_api::acm::{ADDON_NAME, ManagedCluster, ManagedClusterAddOn};
use update_status_api::crd::{
    ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus, labels,
};
use update_status_api::history::{UPDATE_HISTORY_NAME, UpdateHistory};

use super::model::{self, Source};
use super::page::script_json;
use super::watch::{self as reflect, Selection, Store, Task};
use crate::fleet::{self, Fleet, FleetFilter, FleetRow, Tally};
use crate::read::online::OnlineError;
use crate::read::selective::{pick_control_plane, selectors};
use crate::show::view::View;

/// The page's JSON, as last published.
pub type Published = watch::Receiver<Arc<String>>;

/// Time given to a burst of changes before the page is rebuilt (the controller's own debounce
/// is 100 ms: a pass's writes arrive together).
const DEBOUNCE: Duration = Duration::from_millis(40);
/// Rebuilt this often without a change: durations and "since" values move with the clock.
const TICK: Duration = Duration::from_secs(15);

/// Something that can build the page's data.
pub trait Feed: Send + Sync + 'static {
    /// The page's JSON now.
    fn build(&self, now: Timestamp) -> String;
}

/// Starts the task that publishes `feed`'s JSON at each change (and every [`TICK`]); `now`
/// fixes the instant (`--now`), else the clock. The task ends with the returned [`Task`].
pub fn publish<F: Feed>(
    feed: F,
    changed: Arc<Notify>,
    now: Option<Timestamp>,
) -> (Published, Task) {
    let at = move || now.unwrap_or_else(Timestamp::now);
    let (tx, rx) = watch::channel(Arc::new(feed.build(at())));
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                () = changed.notified() => tokio::time::sleep(DEBOUNCE).await,
                () = tokio::time::sleep(TICK) => {}
            }
            let json = feed.build(at());
            if **tx.borrow() != json && tx.send(Arc::new(json)).is_err() {
                return;
            }
        }
    });
    (rx, Task::from(task))
}

/// A page that never changes (`--from-dir`).
pub fn fixed(json: String) -> Published {
    let (tx, rx) = watch::channel(Arc::new(json));
    // The sender lives as long as the process: receivers never see it closed.
    std::mem::forget(tx);
    rx
}

fn json<T: Serialize>(value: &T) -> String {
    script_json(value).unwrap_or_else(|e| {
        format!(
            "{{\"kind\":\"cluster\",\"version\":1,\"title\":\"\",\"source\":\"live\",\"error\":{}}}",
            serde_json::Value::String(e.to_string())
        )
    })
}

/// Whose objects a [`ClusterFeed`] watches: those of `namespace`, and for a hosted cluster only
/// those labelled with it.
#[derive(Clone, Copy, Debug)]
pub struct ClusterScope<'a> {
    /// The namespace watched.
    pub namespace: &'a str,
    /// `--hosted-cluster`: the hosted cluster's name.
    pub hosted: Option<&'a str>,
}

/// One cluster's watches: its statuses, and its insights by label (non-node progress, node
/// progress, health), in one namespace; for a hosted cluster only the objects labelled with it.
pub struct ClusterFeed {
    title: String,
    namespace: String,
    hosted: Option<String>,
    cps: Arc<Store<ControlPlaneUpdateStatus>>,
    pools: Arc<Store<WorkerPoolUpdateStatus>>,
    insights: Vec<Arc<Store<UpdateInsight>>>,
    /// The `UpdateHistory` (the estimates); `None` when it cannot be watched (an older
    /// installation without its CRD, no RBAC to read it): the page shows no estimates.
    history: Option<Arc<Store<UpdateHistory>>>,
    _tasks: Vec<Task>,
}

impl ClusterFeed {
    /// Lists and starts watching; errors are the text view's (not installed, RBAC, ...).
    /// `estimates`: also watch the cluster's `UpdateHistory` (a standalone cluster's own view:
    /// a hub holds no copy of it and hosted mode writes none, so a fleet's cluster views and a
    /// hosted cluster's do not ask).
    pub async fn start(
        client: &Client,
        ClusterScope { namespace, hosted }: ClusterScope<'_>,
        title: String,
        changed: &Arc<Notify>,
        estimates: bool,
    ) -> Result<Self, OnlineError> {
        let cluster = hosted.map(|h| format!("{}={h}", labels::CLUSTER));
        let with = |s: String| match &cluster {
            Some(c) => format!("{s},{c}"),
            None => s,
        };
        let sel = |labels: Option<String>| Selection {
            labels,
            fields: None,
            namespace: Some(namespace.to_owned()),
        };
        let nodes = format!(
            "{}=progress,{}=Node",
            labels::INSIGHT_TYPE,
            labels::RESOURCE_KIND
        );
        let insights_api = Api::<UpdateInsight>::namespaced(client.clone(), namespace);
        // Insights first: when nothing is installed, the message names `updateinsights`.
        let (others, nodes, health) = tokio::try_join!(
            reflect::start(
                insights_api.clone(),
                sel(Some(with(selectors::other_progress()))),
                Arc::clone(changed)
            ),
            reflect::start(
                insights_api.clone(),
                sel(Some(with(nodes))),
                Arc::clone(changed)
            ),
            reflect::start(
                insights_api,
                sel(Some(with(selectors::health()))),
                Arc::clone(changed)
            ),
        )?;
        let (cps, pools) = tokio::try_join!(
            reflect::start(
                Api::<ControlPlaneUpdateStatus>::namespaced(client.clone(), namespace),
                sel(cluster.clone()),
                Arc::clone(changed)
            ),
            reflect::start(
                Api::<WorkerPoolUpdateStatus>::namespaced(client.clone(), namespace),
                sel(cluster.clone()),
                Arc::clone(changed)
            ),
        )?;
        // Optional: not installed or not readable, the page has no estimates block (the rest
        // of the page does not depend on it; the text view never reads it).
        let history = if estimates && hosted.is_none() {
            reflect::start(
                Api::<UpdateHistory>::namespaced(client.clone(), namespace),
                sel(None),
                Arc::clone(changed),
            )
            .await
            .ok()
        } else {
            None
        };
        let (history, history_task) = history.unzip();
        Ok(ClusterFeed {
            history,
            title,
            namespace: namespace.to_owned(),
            hosted: hosted.map(str::to_owned),
            cps: cps.0,
            pools: pools.0,
            insights: vec![others.0, nodes.0, health.0],
            _tasks: [others.1, nodes.1, health.1, cps.1, pools.1]
                .into_iter()
                .chain(history_task)
                .collect(),
        })
    }

    /// The view as the watches hold it, or why there is none.
    fn view(&self) -> Result<View, String> {
        let cps = self.cps.objects();
        let control_plane = match &self.hosted {
            Some(name) => cps
                .into_iter()
                .find(|c| c.metadata.name.as_deref() == Some(name.as_str()))
                .and_then(|c| c.status),
            None => pick_control_plane(cps),
        };
        let control_plane = control_plane.ok_or_else(|| {
            OnlineError::NoControlPlane {
                namespace: self.namespace.clone(),
            }
            .to_string()
        })?;
        let mut worker_pools: Vec<(String, _)> = self.pools.with(|m| {
            m.values()
                .filter_map(|p| {
                    let status = p.status.clone()?;
                    let name = if status.resource.name.is_empty() {
                        p.metadata.name.clone().unwrap_or_default()
                    } else {
                        status.resource.name.clone()
                    };
                    Some((name, status))
                })
                .collect()
        });
        worker_pools.sort_by(|a, b| a.0.cmp(&b.0));
        let mut insights = Vec::new();
        for store in &self.insights {
            store.with(|m| insights.extend(m.values().filter_map(|i| i.status.clone())));
        }
        Ok(View {
            control_plane: Some(control_plane),
            worker_pools,
            insights,
            printed_nodes_only: false,
        })
    }

    /// The estimates block of the `UpdateHistory` `cluster`, when there is one.
    fn estimates(&self, now: Timestamp) -> Option<super::estimates::Estimates> {
        let history = self.history.as_ref()?;
        let status = history.with(|m| {
            m.values()
                .find(|h| h.metadata.name.as_deref() == Some(UPDATE_HISTORY_NAME))
                .and_then(|h| h.status.as_ref())
                .and_then(|s| s.estimates.clone())
        });
        super::estimates::estimates(status.as_ref(), now)
    }

    fn error(&self) -> Option<String> {
        std::iter::once(self.cps.error())
            .chain(std::iter::once(self.pools.error()))
            .chain(self.insights.iter().map(|s| s.error()))
            .flatten()
            .next()
    }
}

impl Feed for ClusterFeed {
    fn build(&self, now: Timestamp) -> String {
        let mut page = match self.view() {
            Ok(view) => {
                let mut page = model::cluster_page(&view, now, self.title.clone(), Source::Live);
                page.estimates = self.estimates(now);
                page
            }
            Err(e) => model::error_page(self.title.clone(), now, e),
        };
        if let Some(e) = self.error() {
            page.error = Some(format!("{e} (retrying; the page shows what was last read)"));
        }
        json(&page)
    }
}

/// The fleet page's data.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct FleetPage {
    /// Always `fleet`.
    pub kind: &'static str,
    /// [`model::MODEL_VERSION`].
    pub version: u32,
    /// `fleet`.
    pub title: String,
    /// Live or a snapshot.
    pub source: Source,
    /// When it was made.
    pub now: Timestamp,
    /// What went wrong reading it, while it lasts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `--stale-after` as the LAST REPORT column prints an age (`15m`).
    pub stale_after: String,
    /// Every warning, as `--fleet` prints them (the read's, then each row's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Namespaces whose objects could not be read (RBAC).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
    /// One entry per cluster, worst first.
    pub clusters: Vec<FleetEntry>,
}

/// A cluster of the fleet page.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct FleetEntry {
    /// The `--fleet` row.
    #[serde(flatten)]
    pub row: FleetRow,
    /// The LAST REPORT column of `--fleet`.
    pub last_report: String,
    /// The ADD-ON column of `--fleet` (on an ACM hub).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on_text: Option<String>,
    /// Where its view is (live only): `/c/<namespace>`, `/c/<namespace>/<hosted cluster>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
}

/// The path of a row's view on the live server.
pub fn href(row: &FleetRow) -> String {
    match &row.hosted_cluster {
        None => format!("/c/{}", row.namespace),
        Some(name) => format!("/c/{}/{name}", row.namespace),
    }
}

/// The fleet page of `fleet` at `now` (`-o html`: no links).
pub fn fleet_page(
    fleet: Fleet,
    now: Timestamp,
    source: Source,
    stale_after: jiff::SignedDuration,
) -> FleetPage {
    let warnings = fleet.all_warnings();
    FleetPage {
        kind: "fleet",
        version: model::MODEL_VERSION,
        title: "fleet".to_owned(),
        source,
        now,
        error: None,
        stale_after: fleet::human(stale_after),
        warnings,
        unreadable: fleet.unreadable,
        clusters: fleet
            .rows
            .into_iter()
            .map(|row| FleetEntry {
                href: (source == Source::Live && row.reported).then(|| href(&row)),
                last_report: row.last_report_text(now),
                add_on_text: row.add_on.as_ref().map(fleet::AddOnState::text),
                row,
            })
            .collect(),
    }
}

/// One scope's watches (all namespaces, or one namespace read alone).
struct Scope {
    cps: Arc<Store<ControlPlaneUpdateStatus>>,
    pools: Arc<Store<WorkerPoolUpdateStatus>>,
    health: Arc<Store<UpdateInsight>>,
    addons: Option<Arc<Store<ManagedClusterAddOn>>>,
}

/// A hub's watches: every ControlPlaneUpdateStatus and WorkerPoolUpdateStatus, the health
/// insights (as `--fleet` reads), and on an ACM hub the add-ons and the selected clusters.
/// For a user who may not list them in all namespaces, the same in each namespace of the
/// clusters they may see (found once, at the start, as `--fleet` finds them).
pub struct FleetFeed {
    scopes: Vec<Scope>,
    selected: Option<Arc<Store<ManagedCluster>>>,
    filter: FleetFilter,
    /// Warnings of the start (the add-ons unreadable, the per-namespace read).
    warnings: Vec<String>,
    unreadable: Vec<String>,
    _tasks: Vec<Task>,
}

/// Starts the watches of one scope; a denied add-on watch is `Ok(None)` with `addons_denied`.
async fn start_scope(
    client: &Client,
    namespace: Option<&str>,
    changed: &Arc<Notify>,
    tasks: &mut Vec<Task>,
    addons_denied: &mut bool,
) -> Result<Scope, OnlineError> {
    fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        match namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        }
    }
    let sel = |labels: Option<String>, fields: Option<String>| Selection {
        labels,
        fields,
        namespace: namespace.map(str::to_owned),
    };
    let (cps, pools, health) = tokio::try_join!(
        reflect::start(
            api::<ControlPlaneUpdateStatus>(client, namespace),
            sel(None, None),
            Arc::clone(changed)
        ),
        reflect::start(
            api::<WorkerPoolUpdateStatus>(client, namespace),
            sel(None, None),
            Arc::clone(changed)
        ),
        reflect::start(
            api::<UpdateInsight>(client, namespace),
            sel(Some(selectors::health()), None),
            Arc::clone(changed)
        ),
    )?;
    tasks.extend([cps.1, pools.1, health.1]);
    let addons = match reflect::start(
        api::<ManagedClusterAddOn>(client, namespace),
        sel(None, Some(format!("metadata.name={ADDON_NAME}"))),
        Arc::clone(changed),
    )
    .await
    {
        Ok((store, task)) => {
            tasks.push(task);
            Some(store)
        }
        Err(OnlineError::NotInstalled { .. }) => None,
        Err(OnlineError::Forbidden { .. }) => {
            *addons_denied = true;
            None
        }
        Err(e) => return Err(e),
    };
    Ok(Scope {
        cps: cps.0,
        pools: pools.0,
        health: health.0,
        addons,
    })
}

impl FleetFeed {
    /// Lists and starts watching; returns the warnings of the start too.
    pub async fn start(
        client: &Client,
        filter: &FleetFilter,
        changed: &Arc<Notify>,
    ) -> Result<(Self, Vec<String>), OnlineError> {
        let mut tasks = Vec::new();
        let mut warnings = Vec::new();
        let mut unreadable = Vec::new();
        let mut addons_denied = false;
        let mut scopes = Vec::new();
        let mut per_namespace = false;
        match start_scope(client, None, changed, &mut tasks, &mut addons_denied).await {
            Ok(scope) => scopes.push(scope),
            Err(denied @ OnlineError::Forbidden { .. }) => {
                let Some(found) = fleet::discover(client, filter).await? else {
                    return Err(OnlineError::NoNamespaceReadable {
                        denied: denied.to_string(),
                    });
                };
                per_namespace = true;
                warnings.extend(found.warnings);
                warnings.push(format!(
                    "{denied}: watching the namespaces of the {} cluster{} you may see ({}) one by one",
                    found.namespaces.len(),
                    if found.namespaces.len() == 1 { "" } else { "s" },
                    found.source
                ));
                for ns in found.namespaces {
                    match start_scope(client, Some(&ns), changed, &mut tasks, &mut addons_denied)
                        .await
                    {
                        Ok(scope) => scopes.push(scope),
                        Err(OnlineError::Forbidden { .. }) => unreadable.push(ns),
                        Err(e) => return Err(e),
                    }
                }
            }
            Err(e) => return Err(e),
        }
        if addons_denied {
            warnings.push(fleet::addons_forbidden());
        }
        // Per namespace, the clusters found are those selected already.
        let selected = match fleet_selector(filter).filter(|_| !per_namespace) {
            None => None,
            Some(selector) => match reflect::start(
                Api::<ManagedCluster>::all(client.clone()),
                Selection {
                    labels: Some(selector),
                    ..Selection::default()
                },
                Arc::clone(changed),
            )
            .await
            {
                Ok((store, task)) => {
                    tasks.push(task);
                    Some(store)
                }
                Err(OnlineError::NotInstalled { resource }) => {
                    return Err(OnlineError::NotAHub { resource });
                }
                Err(e) => return Err(e),
            },
        };
        let mut start_warnings = warnings.clone();
        if !unreadable.is_empty() {
            start_warnings.push(fleet::unreadable_warning(&unreadable));
        }
        Ok((
            FleetFeed {
                scopes,
                selected,
                filter: filter.clone(),
                warnings,
                unreadable,
                _tasks: tasks,
            },
            start_warnings,
        ))
    }

    /// The fleet at `now`, as `--fleet` makes it: the pools and insights folded in place
    /// (nothing copied but the statuses and add-ons), joined in linear time.
    pub fn fleet(&self, now: Timestamp) -> Fleet {
        let mut tally = Tally::default();
        let mut cps = Vec::new();
        let mut addons: Option<Vec<ManagedClusterAddOn>> = None;
        for s in &self.scopes {
            s.pools.with(|m| m.values().for_each(|p| tally.add_pool(p)));
            s.health
                .with(|m| m.values().for_each(|i| tally.add_insight(i)));
            cps.extend(s.cps.objects());
            if let Some(a) = &s.addons {
                addons.get_or_insert_with(Vec::new).extend(a.objects());
            }
        }
        let selected: Option<BTreeSet<String>> = self
            .selected
            .as_ref()
            .map(|s| s.with(|m| m.keys().map(|(_, name)| name.clone()).collect()));
        let rows = fleet::assemble(
            &cps,
            &tally,
            addons.as_deref(),
            selected.as_ref(),
            &self.filter.judge(now),
        );
        Fleet {
            rows,
            warnings: self.warnings.clone(),
            unreadable: self.unreadable.clone(),
        }
    }

    fn error(&self) -> Option<String> {
        self.scopes
            .iter()
            .flat_map(|s| {
                [s.cps.error(), s.pools.error(), s.health.error()]
                    .into_iter()
                    .chain(s.addons.iter().map(|a| a.error()))
            })
            .chain(self.selected.iter().map(|s| s.error()))
            .flatten()
            .next()
    }
}

/// The ManagedCluster selector of `--selector`/`--clusterset`.
fn fleet_selector(filter: &FleetFilter) -> Option<String> {
    filter.managed_cluster_selector()
}

impl Feed for FleetFeed {
    fn build(&self, now: Timestamp) -> String {
        let mut page = fleet_page(self.fleet(now), now, Source::Live, self.filter.stale_after);
        page.error = self
            .error()
            .map(|e| format!("{e} (retrying; the page shows what was last read)"));
        json(&page)
    }
}
