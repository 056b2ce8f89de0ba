//! What an administrator would look up when a node's drain fails and the machine-config
//! daemon's message does not say why (real 4.16 messages: `failed to drain node: X after 1
//! hour`): the pods on that node and the PodDisruptionBudgets. Read on demand, only for those
//! nodes, read-only (`list` on pods and poddisruptionbudgets: `config/rbac/role.yaml`), and
//! kept bounded:
//!
//! - at most [`MAX_NODES`] nodes at once (the first by name), at most [`MAX_PODS_PER_NODE`]
//!   pods each (one page of a list with the field selector `spec.nodeName=<node>`): only in the
//!   namespaces of the pods the message names, when it names some (the drain touches those;
//!   at most [`MAX_NAMED_NAMESPACES`]), else in every namespace (any pod of the node may be the
//!   one);
//! - pods listed metadata-only (`PartialObjectMetadata`: names, namespaces and labels are all
//!   the drain rules read of them; the node is the selector's): a pod's spec, its environment
//!   values included, never reaches the controller;
//! - the budgets listed cluster-wide in pages of [`BUDGET_PAGE`], at most [`MAX_BUDGET_PAGES`]
//!   pages, and only those allowing 0 disruptions in a namespace of a pod read are kept (a
//!   budget holds nothing secret, and one paged list costs less than a list per namespace of
//!   a node's pods);
//! - pods and budgets trimmed to what the drain rules read (name, namespace, labels, node;
//!   selector, disruptions allowed);
//! - read again at most every [`REFRESH`] while the drain fails, and forgotten as soon as it
//!   no longer does.
//!
//! Nothing is watched: a cluster has tens of thousands of pods, and a failing drain is rare.
//! A read that fails keeps what the last one said (logged once until it succeeds again).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams};
use kube::core::PartialObjectMeta;
use update_status_api::input::{Pod, PodDisruptionBudget, PodSpec};
use update_status_assess::related::{DrainEvidence, PdbAlerts};

/// Nodes looked up at once.
pub const MAX_NODES: usize = 16;
/// Pods read per node.
pub const MAX_PODS_PER_NODE: u32 = 500;
/// Namespaces of a node's named pods read at most (one list each).
pub const MAX_NAMED_NAMESPACES: usize = 8;
/// PodDisruptionBudgets per page.
pub const BUDGET_PAGE: u32 = 500;
/// Pages of PodDisruptionBudgets read at most.
pub const MAX_BUDGET_PAGES: usize = 20;
/// How often a failing node's pods and the budgets are read again.
pub const REFRESH: Duration = Duration::from_secs(60);

/// One node's pods as last read.
#[derive(Debug)]
struct NodePods {
    read_at: Instant,
    /// The pods the message named when they were read (none: any pod of the node).
    named: Vec<(String, String)>,
    pods: Vec<Pod>,
}

/// The lookups of the worker-pools reconciler.
pub struct DrainLookups {
    client: kube::Client,
    nodes: BTreeMap<String, NodePods>,
    /// Budgets at their limit (those of the namespaces of the pods read), and when read.
    budgets: Option<(Instant, Vec<PodDisruptionBudget>)>,
    /// What failed, logged once until it succeeds again.
    failing: BTreeSet<String>,
}

impl DrainLookups {
    /// No lookup yet.
    pub fn new(client: kube::Client) -> Self {
        DrainLookups {
            client,
            nodes: BTreeMap::new(),
            budgets: None,
            failing: BTreeSet::new(),
        }
    }

    /// Brings the lookups up to date for `nodes` (those whose drain fails and whose message
    /// names no budget, with the pods it names; the first [`MAX_NODES`] by name are looked up):
    /// other nodes are forgotten, a node's pods and the budgets are read when not read within
    /// [`REFRESH`] (or when the pods its message names changed). Returns whether what the
    /// lookups say changed.
    pub async fn refresh<'a>(
        &mut self,
        nodes: impl IntoIterator<Item = (&'a str, &'a [(String, String)])>,
    ) -> bool {
        let wanted: BTreeMap<&str, &[(String, String)]> = nodes.into_iter().collect();
        let wanted: Vec<(&str, &[(String, String)])> = wanted.into_iter().take(MAX_NODES).collect();
        let mut changed = false;
        let before = self.nodes.len();
        self.nodes
            .retain(|n, _| wanted.iter().any(|(w, _)| *w == n.as_str()));
        changed |= self.nodes.len() != before;
        if wanted.is_empty() {
            changed |= self.budgets.take().is_some();
            return changed;
        }
        for (node, named) in &wanted {
            if self
                .nodes
                .get(*node)
                .is_some_and(|p| p.read_at.elapsed() < REFRESH && p.named == *named)
            {
                continue;
            }
            match self.read_pods(node, named).await {
                Ok(pods) => {
                    self.recovered(&format!("pods on node {node}"));
                    let same = self.nodes.get(*node).is_some_and(|p| p.pods == pods);
                    changed |= !same;
                    self.nodes.insert(
                        node.to_string(),
                        NodePods {
                            read_at: Instant::now(),
                            named: named.to_vec(),
                            pods,
                        },
                    );
                }
                Err(e) => self.failed(format!("pods on node {node}"), &e),
            }
        }
        if self
            .budgets
            .as_ref()
            .is_none_or(|(at, _)| at.elapsed() >= REFRESH)
            || changed
        {
            match self.read_budgets().await {
                Ok(budgets) => {
                    self.recovered("poddisruptionbudgets");
                    changed |= self.budgets.as_ref().is_none_or(|(_, b)| *b != budgets);
                    self.budgets = Some((Instant::now(), budgets));
                }
                Err(e) => self.failed("poddisruptionbudgets".to_string(), &e),
            }
        }
        changed
    }

    /// The evidence the drain rules read: the pods read by node, the budgets, and the firing
    /// PodDisruptionBudget alerts (`alerts`, from our alert insights).
    pub fn evidence(&self, alerts: PdbAlerts) -> DrainEvidence {
        DrainEvidence {
            pods: self
                .nodes
                .iter()
                .map(|(n, p)| (n.clone(), p.pods.clone()))
                .collect(),
            budgets: self
                .budgets
                .as_ref()
                .map(|(_, b)| b.clone())
                .unwrap_or_default(),
            alerts,
        }
    }

    /// When the next read is due, while a node is looked up.
    pub fn next_refresh(&self) -> Option<Duration> {
        self.nodes
            .values()
            .map(|p| REFRESH.saturating_sub(p.read_at.elapsed()))
            .min()
    }

    /// How many pods and budgets are held (the bench and the tests bound it).
    pub fn held(&self) -> (usize, usize) {
        (
            self.nodes.values().map(|p| p.pods.len()).sum(),
            self.budgets.as_ref().map_or(0, |(_, b)| b.len()),
        )
    }

    /// The pods on `node`, metadata only: in the namespaces of the `named` pods when there
    /// are some, else in every namespace.
    async fn read_pods(
        &self,
        node: &str,
        named: &[(String, String)],
    ) -> Result<Vec<Pod>, kube::Error> {
        let lp = ListParams::default()
            .fields(&format!("spec.nodeName={node}"))
            .limit(MAX_PODS_PER_NODE);
        let namespaces: BTreeSet<&str> = named.iter().map(|(ns, _)| ns.as_str()).collect();
        let mut metas: Vec<PartialObjectMeta<Pod>> = Vec::new();
        if namespaces.is_empty() {
            let api: Api<PartialObjectMeta<Pod>> = Api::all(self.client.clone());
            metas = api.list(&lp).await?.items;
        } else {
            for ns in namespaces.into_iter().take(MAX_NAMED_NAMESPACES) {
                let api: Api<PartialObjectMeta<Pod>> = Api::namespaced(self.client.clone(), ns);
                metas.extend(api.list(&lp).await?.items);
            }
        }
        let mut pods: Vec<Pod> = metas
            .into_iter()
            .map(|m| pod_on(node, m.metadata))
            .collect();
        pods.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        Ok(pods)
    }

    async fn read_budgets(&self) -> Result<Vec<PodDisruptionBudget>, kube::Error> {
        let namespaces: BTreeSet<&str> = self
            .nodes
            .values()
            .flat_map(|p| &p.pods)
            .filter_map(|p| p.metadata.namespace.as_deref())
            .collect();
        let api: Api<PodDisruptionBudget> = Api::all(self.client.clone());
        let mut out = Vec::new();
        let mut lp = ListParams::default().limit(BUDGET_PAGE);
        for _ in 0..MAX_BUDGET_PAGES {
            let page = api.list(&lp).await?;
            out.extend(
                page.items
                    .into_iter()
                    .filter(|b| {
                        b.at_limit()
                            && b.metadata
                                .namespace
                                .as_deref()
                                .is_some_and(|ns| namespaces.contains(ns))
                    })
                    .map(PodDisruptionBudget::trimmed),
            );
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(c) => lp = lp.continue_token(&c),
                None => break,
            }
        }
        out.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        Ok(out)
    }

    fn failed(&mut self, what: String, e: &kube::Error) {
        if self.failing.insert(what.clone()) {
            tracing::warn!(error = %e, "cannot read {what} (why a drain fails): the last reading is kept; check the RBAC of `list` on pods and poddisruptionbudgets");
        }
    }

    fn recovered(&mut self, what: &str) {
        if self.failing.remove(what) {
            tracing::info!("{what} read again");
        }
    }
}

/// A pod listed on `node` from its metadata, trimmed to what the drain rules read (its name,
/// namespace and labels; the node is the one its list selected).
fn pod_on(node: &str, meta: ObjectMeta) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: meta.name,
            namespace: meta.namespace,
            labels: meta.labels,
            ..Default::default()
        },
        spec: PodSpec {
            node_name: node.to_string(),
        },
    }
}
