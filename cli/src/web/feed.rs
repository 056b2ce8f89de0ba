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

use super::model::{self, Source};
use super::page::script_json;
use super::watch::{self as reflect, Selection, Store, Task};
use crate::fleet::{self, FleetFilter, FleetRow};
use crate::online::OnlineError;
use crate::render::View;
use crate::selective::{pick_control_plane, selectors};

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

/// One cluster's watches: its statuses, and its insights by label (non-node progress, node
/// progress, health), in one namespace; for a hosted cluster only the objects labelled with it.
pub struct ClusterFeed {
    title: String,
    namespace: String,
    hosted: Option<String>,
    cps: Arc<Store<ControlPlaneUpdateStatus>>,
    pools: Arc<Store<WorkerPoolUpdateStatus>>,
    insights: Vec<Arc<Store<UpdateInsight>>>,
    _tasks: Vec<Task>,
}

impl ClusterFeed {
    /// Lists and starts watching; errors are the text view's (not installed, RBAC, ...).
    pub async fn start(
        client: &Client,
        namespace: &str,
        hosted: Option<&str>,
        title: String,
        changed: &Arc<Notify>,
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
        Ok(ClusterFeed {
            title,
            namespace: namespace.to_owned(),
            hosted: hosted.map(str::to_owned),
            cps: cps.0,
            pools: pools.0,
            insights: vec![others.0, nodes.0, health.0],
            _tasks: vec![others.1, nodes.1, health.1, cps.1, pools.1],
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
            Ok(view) => model::cluster_page(&view, now, self.title.clone(), Source::Live),
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
    /// Where its view is (live only): `/c/<namespace>`, `/c/<namespace>/<hosted cluster>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
}

/// The path of a row's view on the live server.
pub fn href(row: &FleetRow) -> String {
    if row.cluster == row.namespace {
        format!("/c/{}", row.namespace)
    } else {
        format!("/c/{}/{}", row.namespace, row.cluster)
    }
}

/// The fleet page of `rows` (`-o html`: no links).
pub fn fleet_page(rows: Vec<FleetRow>, now: Timestamp, source: Source) -> FleetPage {
    FleetPage {
        kind: "fleet",
        version: model::MODEL_VERSION,
        title: "fleet".to_owned(),
        source,
        now,
        error: None,
        clusters: rows
            .into_iter()
            .map(|row| FleetEntry {
                href: (source == Source::Live && row.reported).then(|| href(&row)),
                row,
            })
            .collect(),
    }
}

/// A hub's watches: every ControlPlaneUpdateStatus and WorkerPoolUpdateStatus, the health
/// insights (as `--fleet` reads), and on an ACM hub the add-ons and the selected clusters.
pub struct FleetFeed {
    cps: Arc<Store<ControlPlaneUpdateStatus>>,
    pools: Arc<Store<WorkerPoolUpdateStatus>>,
    health: Arc<Store<UpdateInsight>>,
    addons: Option<Arc<Store<ManagedClusterAddOn>>>,
    selected: Option<Arc<Store<ManagedCluster>>>,
    _tasks: Vec<Task>,
}

impl FleetFeed {
    /// Lists and starts watching.
    pub async fn start(
        client: &Client,
        filter: &FleetFilter,
        changed: &Arc<Notify>,
    ) -> Result<(Self, Vec<String>), OnlineError> {
        let all = || Selection::default();
        let (cps, pools, health) = tokio::try_join!(
            reflect::start(
                Api::<ControlPlaneUpdateStatus>::all(client.clone()),
                all(),
                Arc::clone(changed)
            ),
            reflect::start(
                Api::<WorkerPoolUpdateStatus>::all(client.clone()),
                all(),
                Arc::clone(changed)
            ),
            reflect::start(
                Api::<UpdateInsight>::all(client.clone()),
                Selection {
                    labels: Some(selectors::health()),
                    ..all()
                },
                Arc::clone(changed)
            ),
        )?;
        let mut tasks = vec![cps.1, pools.1, health.1];
        let mut warnings = Vec::new();
        let addons = match reflect::start(
            Api::<ManagedClusterAddOn>::all(client.clone()),
            Selection {
                fields: Some(format!("metadata.name={ADDON_NAME}")),
                ..all()
            },
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
                warnings.push(fleet::addons_forbidden());
                None
            }
            Err(e) => return Err(e),
        };
        let selected = match fleet_selector(filter) {
            None => None,
            Some(selector) => match reflect::start(
                Api::<ManagedCluster>::all(client.clone()),
                Selection {
                    labels: Some(selector),
                    ..all()
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
        Ok((
            FleetFeed {
                cps: cps.0,
                pools: pools.0,
                health: health.0,
                addons,
                selected,
                _tasks: tasks,
            },
            warnings,
        ))
    }

    /// The rows, as `--fleet` makes them.
    pub fn rows(&self) -> Vec<FleetRow> {
        let mut warnings = Vec::new();
        let mut rows = fleet::rows(
            &self.cps.objects(),
            &self.pools.objects(),
            &self.health.objects(),
            &mut warnings,
        );
        if let Some(addons) = &self.addons {
            rows = fleet::with_addons(rows, &addons.objects());
        }
        if let Some(selected) = &self.selected {
            let names: BTreeSet<String> =
                selected.with(|m| m.keys().map(|(_, name)| name.clone()).collect());
            rows.retain(|r| names.contains(&r.namespace));
        }
        rows.sort_by(|a, b| fleet::sort_key(a).cmp(&fleet::sort_key(b)));
        rows
    }

    fn error(&self) -> Option<String> {
        [self.cps.error(), self.pools.error(), self.health.error()]
            .into_iter()
            .chain(self.addons.iter().map(|s| s.error()))
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
        let mut page = fleet_page(self.rows(), now, Source::Live);
        page.error = self
            .error()
            .map(|e| format!("{e} (retrying; the page shows what was last read)"));
        json(&page)
    }
}
