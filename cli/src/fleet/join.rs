//! The fleet's rows from the hub's objects, in time linear in their number: the pools and
//! health insights are folded once into counts by namespace and cluster label ([`Tally`], page
//! by page as they are read), then each ControlPlaneUpdateStatus takes the counts of its key.
//!
//! A row is identified by its namespace: the hub lets a cluster's agent write there only. A
//! hosted cluster's row (a ControlPlaneUpdateStatus named after a HostedCluster and labelled
//! `update.openshift.io/cluster` with that name, as the controller writes them on a management
//! cluster) is shown as `<namespace>/<name>`: the name is a claim of whoever writes in the
//! namespace. A claim that is another row's cluster name, or an ACM cluster-name label that
//! disagrees with the namespace, adds a warning to the row.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use kube::{Resource, ResourceExt};
use update_status_api::crd::{
    Assessment, ControlPlaneUpdateStatus, HealthCounts, ImpactLevel, InsightType, UpdateInsight,
    WorkerPoolUpdateStatus, labels,
};

use super::age::Judge;
use super::model::{FleetRow, PoolSummary};

/// What the rows need of the pools and health insights, by namespace and then by the value of
/// their `update.openshift.io/cluster` label.
#[derive(Debug, Default)]
pub struct Tally {
    by_namespace: HashMap<String, HashMap<Option<String>, Group>>,
}

#[derive(Debug, Default, Clone)]
struct Group {
    worker_nodes: u32,
    worker_nodes_updated: u32,
    /// Pools neither Completed nor Empty, by name.
    not_completed: BTreeMap<String, Assessment>,
    health: HealthCounts,
}

impl Group {
    fn merge(&mut self, other: &Group) {
        self.worker_nodes = self.worker_nodes.saturating_add(other.worker_nodes);
        self.worker_nodes_updated = self
            .worker_nodes_updated
            .saturating_add(other.worker_nodes_updated);
        self.not_completed
            .extend(other.not_completed.iter().map(|(k, v)| (k.clone(), *v)));
        let (h, o) = (&mut self.health, &other.health);
        h.critical = h.critical.saturating_add(o.critical);
        h.error = h.error.saturating_add(o.error);
        h.warning = h.warning.saturating_add(o.warning);
        h.info = h.info.saturating_add(o.info);
        h.unknown = h.unknown.saturating_add(o.unknown);
    }
}

#[cfg(test)]
thread_local! {
    /// Objects visited by the join (the complexity test counts them).
    pub(super) static VISITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The namespace and cluster label of an object: the one place the join looks at them.
fn key<K: Resource>(o: &K) -> (&str, Option<&str>) {
    #[cfg(test)]
    VISITS.with(|v| v.set(v.get() + 1));
    (
        o.meta().namespace.as_deref().unwrap_or_default(),
        o.meta()
            .labels
            .as_ref()
            .and_then(|l| l.get(labels::CLUSTER))
            .map(String::as_str),
    )
}

impl Tally {
    fn group(&mut self, (namespace, cluster): (&str, Option<&str>)) -> &mut Group {
        // The namespace is copied only when it is new.
        if !self.by_namespace.contains_key(namespace) {
            self.by_namespace
                .insert(namespace.to_owned(), HashMap::new());
        }
        let groups = self
            .by_namespace
            .get_mut(namespace)
            .unwrap_or_else(|| unreachable!("inserted above"));
        groups.entry(cluster.map(str::to_owned)).or_default()
    }

    /// Counts a worker pool (one without a status counts nothing).
    pub fn add_pool(&mut self, pool: &WorkerPoolUpdateStatus) {
        let Some(p) = pool.status.as_ref() else {
            return;
        };
        let g = self.group(key(pool));
        g.worker_nodes = g.worker_nodes.saturating_add(p.nodes.total);
        g.worker_nodes_updated = g.worker_nodes_updated.saturating_add(p.nodes.updated);
        if !matches!(p.assessment, Assessment::Completed | Assessment::Empty) {
            let name = if p.resource.name.is_empty() {
                pool.name_any()
            } else {
                p.resource.name.clone()
            };
            g.not_completed.insert(name, p.assessment);
        }
    }

    /// Counts a health insight (any other insight counts nothing).
    pub fn add_insight(&mut self, insight: &UpdateInsight) {
        let Some(h) = insight
            .status
            .as_ref()
            .filter(|s| s.type_ == InsightType::Health)
            .and_then(|s| s.health.as_ref())
        else {
            return;
        };
        let level = h.impact.level;
        update_status_assess::insight::count(&mut self.group(key(insight)).health, level);
    }

    /// Counts a health insight read as metadata by the level its agent labels it with
    /// (`update.openshift.io/impact-level`, written from the same status [`Tally::add_insight`]
    /// reads). `false`, counting nothing: the label is missing or no level's, and the caller
    /// reads that insight whole.
    pub fn add_labelled_insight<K: Resource>(&mut self, insight: &K) -> bool {
        let Some(level) = insight
            .meta()
            .labels
            .as_ref()
            .and_then(|l| l.get(labels::IMPACT_LEVEL))
            .and_then(|v| ImpactLevel::from_slug(v))
        else {
            return false;
        };
        update_status_assess::insight::count(&mut self.group(key(insight)).health, level);
        true
    }

    /// Adds another tally's counts (a namespace read apart).
    pub fn merge(&mut self, other: Tally) {
        for (namespace, groups) in other.by_namespace {
            let mine = self.by_namespace.entry(namespace).or_default();
            for (cluster, g) in groups {
                mine.entry(cluster).or_default().merge(&g);
            }
        }
    }
}

/// The HostedCluster a ControlPlaneUpdateStatus is about, in hosted mode: it is named after
/// the HostedCluster and labelled `update.openshift.io/cluster=<that name>` (a standalone one
/// is named `cluster`, a hub copy after its namespace).
fn hosted_cluster(cp: &ControlPlaneUpdateStatus) -> Option<&str> {
    let name = cp.metadata.name.as_deref()?;
    let label = cp.labels().get(labels::CLUSTER)?;
    (label == name && name != "cluster" && cp.metadata.namespace.as_deref() != Some(name))
        .then_some(name)
}

/// The rows of `cps` (one per namespace holding a ControlPlaneUpdateStatus, and one per hosted
/// cluster's), counted from `tally`, judged fresh or stale by `judge`; not sorted. A
/// namespace's standalone row counts its objects but those of its hosted clusters.
pub fn rows<'a>(
    cps: impl IntoIterator<Item = &'a ControlPlaneUpdateStatus>,
    tally: &Tally,
    judge: &Judge,
) -> Vec<FleetRow> {
    // One standalone row per namespace, from its ControlPlaneUpdateStatus named after the
    // namespace (the hub copy, named after the cluster), else `cluster` (a standalone
    // cluster's), else the first by name; hosted clusters' each make a row.
    let mut standalone: HashMap<&str, &ControlPlaneUpdateStatus> = HashMap::new();
    let mut hosted: Vec<(&str, &str, &ControlPlaneUpdateStatus)> = Vec::new();
    let rank = |cp: &ControlPlaneUpdateStatus, ns: &str| {
        let name = cp.metadata.name.as_deref().unwrap_or_default();
        (name != ns, name != "cluster", name.to_owned())
    };
    for cp in cps {
        if cp.status.is_none() {
            continue;
        }
        let (namespace, _) = key(cp);
        match hosted_cluster(cp) {
            Some(name) => hosted.push((namespace, name, cp)),
            None => {
                let better = standalone
                    .get(namespace)
                    .is_none_or(|held| rank(cp, namespace) < rank(held, namespace));
                if better {
                    standalone.insert(namespace, cp);
                }
            }
        }
    }
    let claimed: HashSet<(&str, &str)> = hosted.iter().map(|(ns, name, _)| (*ns, *name)).collect();
    let mut out = Vec::with_capacity(standalone.len() + hosted.len());
    for (namespace, cp) in standalone {
        let mut counts = Group::default();
        if let Some(groups) = tally.by_namespace.get(namespace) {
            for (cluster, g) in groups {
                let theirs = cluster
                    .as_deref()
                    .is_some_and(|c| claimed.contains(&(namespace, c)));
                if !theirs {
                    counts.merge(g);
                }
            }
        }
        out.push(row(cp, namespace, None, &counts, judge));
    }
    for (namespace, name, cp) in hosted {
        let counts = tally
            .by_namespace
            .get(namespace)
            .and_then(|groups| groups.get(&Some(name.to_owned())))
            .cloned()
            .unwrap_or_default();
        out.push(row(cp, namespace, Some(name), &counts, judge));
    }
    out
}

fn row(
    cp: &ControlPlaneUpdateStatus,
    namespace: &str,
    hosted: Option<&str>,
    counts: &Group,
    judge: &Judge,
) -> FleetRow {
    let status = cp.status.clone().unwrap_or_default();
    let mut warnings = Vec::new();
    // The namespace is what the hub authorizes a cluster's agent to write; the label is
    // written by the agent itself, so it only raises a warning when it disagrees.
    if let Some(claimed) = cp
        .labels()
        .get(labels::ACM_CLUSTER_NAME)
        .filter(|l| l.as_str() != namespace)
    {
        warnings.push(format!(
            "namespace {namespace} holds a ControlPlaneUpdateStatus labelled {}={claimed}: shown as cluster {}, the namespace the hub lets its writer use",
            labels::ACM_CLUSTER_NAME,
            shown(namespace, hosted),
        ));
    }
    let (last_reported, freshness, bad) = judge.of(cp);
    warnings.extend(bad);
    FleetRow {
        cluster: shown(namespace, hosted),
        namespace: namespace.to_owned(),
        hosted_cluster: hosted.map(str::to_owned),
        from: status.versions.previous,
        to: status.versions.target,
        assessment: status.assessment,
        completion_percent: status.completion_percent,
        worker_nodes: counts.worker_nodes,
        worker_nodes_updated: counts.worker_nodes_updated,
        worker_pools_not_completed: counts
            .not_completed
            .iter()
            .map(|(name, assessment)| PoolSummary {
                name: name.clone(),
                assessment: *assessment,
            })
            .collect(),
        health: counts.health.clone(),
        reported: true,
        last_reported,
        freshness: Some(freshness),
        add_on: None,
        warnings,
        agent_health: super::agent_health::on_copy(cp),
    }
}

/// A row's name: its namespace, or `<namespace>/<hosted cluster>`.
pub fn shown(namespace: &str, hosted: Option<&str>) -> String {
    match hosted {
        Some(h) => format!("{namespace}/{h}"),
        None => namespace.to_owned(),
    }
}

/// Warns on each hosted row whose claimed name is the name of another row's cluster (a
/// cluster namespace of the hub, reported or with the add-on enabled): the row stays under its
/// own namespace, and the reader is told that the name is only claimed.
pub fn check_claims(rows: &mut [FleetRow]) {
    let clusters: BTreeSet<String> = rows
        .iter()
        .filter(|r| r.hosted_cluster.is_none())
        .map(|r| r.namespace.clone())
        .collect();
    for r in rows.iter_mut() {
        let Some(name) = r.hosted_cluster.as_deref() else {
            continue;
        };
        if clusters.contains(name) {
            let warning = format!(
                "namespace {ns} holds update status claiming the name {name}, which is the cluster of namespace {name}: shown as {shown}, claimed by namespace {ns} (check who writes there)",
                ns = r.namespace,
                shown = r.cluster,
            );
            r.warnings.push(warning);
        }
    }
}
