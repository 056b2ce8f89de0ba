//! What `--fleet` shows: a cluster's row ([`FleetRow`]), its pools and add-on state, the
//! filter the user gave ([`FleetFilter`]) and what the read found ([`Fleet`]).

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;
use update_status_api::acm::{CONDITION_AVAILABLE, ManagedClusterAddOn, clusterset_selector};
use update_status_api::crd::{Assessment, HealthCounts};

use super::age::{DEFAULT_STALE_AFTER, Freshness, Judge, human};
pub use super::rollout::AddOnCondition;
use super::rollout::Rollout;

/// Objects per list request, as kubectl's `--chunk-size`.
pub const DEFAULT_CHUNK_SIZE: u32 = 500;

/// One cluster of the fleet.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FleetRow {
    /// The row's name: its hub namespace; for a hosted cluster's row (a management cluster's
    /// objects), `<namespace>/<hosted cluster>`.
    pub cluster: String,
    /// The namespace the objects live in: what identifies the row.
    pub namespace: String,
    /// For a hosted cluster's row: the HostedCluster's name, as the objects of `namespace`
    /// claim it (their name and `update.openshift.io/cluster` label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosted_cluster: Option<String>,
    /// Version updated from (empty for an installation).
    pub from: String,
    /// Version updated to.
    pub to: String,
    /// Control-plane assessment.
    pub assessment: Assessment,
    /// Control-plane completion in percent.
    pub completion_percent: u32,
    /// Worker nodes in all pools.
    pub worker_nodes: u32,
    /// Updated worker nodes in all pools.
    pub worker_nodes_updated: u32,
    /// Pools that are neither `Completed` nor `Empty`, by name.
    pub worker_pools_not_completed: Vec<PoolSummary>,
    /// Health insights of the cluster by level.
    pub health: HealthCounts,
    /// `false`: the add-on is enabled for the cluster but its agent has not reported yet (no
    /// ControlPlaneUpdateStatus in its namespace); the other fields are then empty.
    pub reported: bool,
    /// The agent's last report (the hub copy's `update.openshift.io/last-reported`), absent
    /// for a copy without a heartbeat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_reported: Option<Timestamp>,
    /// `Fresh`, `Stale` (no report for longer than `--stale-after`) or `Unknown` (no
    /// heartbeat on the copy: an older agent); absent when the cluster has not reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freshness: Option<Freshness>,
    /// On an ACM hub: the state of the cluster's `update-status` ManagedClusterAddOn (absent:
    /// not an ACM hub, or the cluster reports without the add-on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_on: Option<AddOnState>,
    /// What the reader should know about this row (a name or label claiming another cluster,
    /// an unreadable heartbeat).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The agent's own health from its copy ([`super::agent_health`]); shown in `add_on`.
    #[serde(skip)]
    pub agent_health: Option<AddOnCondition>,
}

impl FleetRow {
    /// The row of a cluster with the add-on enabled whose agent has not reported.
    pub(super) fn not_reported(namespace: String, add_on: AddOnState) -> Self {
        FleetRow {
            cluster: namespace.clone(),
            namespace,
            hosted_cluster: None,
            from: String::new(),
            to: String::new(),
            assessment: Assessment::Unknown,
            completion_percent: 0,
            worker_nodes: 0,
            worker_nodes_updated: 0,
            worker_pools_not_completed: Vec::new(),
            health: HealthCounts::default(),
            reported: false,
            last_reported: None,
            freshness: None,
            add_on: Some(add_on),
            warnings: Vec::new(),
            agent_health: None,
        }
    }

    /// The LAST REPORT column at `now`: the age (as kubectl's AGE), `Stale (<age>)`, `<unknown>`
    /// without a heartbeat, `<invalid>` for one stamped beyond the clock-skew allowance, `-` when
    /// the cluster has not reported.
    pub fn last_report_text(&self, now: Timestamp) -> String {
        match (self.freshness, self.last_reported) {
            (None, _) => "-".to_owned(),
            (Some(Freshness::Stale), Some(at)) => {
                format!("Stale ({})", human(now.duration_since(at)))
            }
            // Within the clock-skew allowance, a heartbeat ahead of `now` is fresh: `0s`.
            (Some(Freshness::Fresh), Some(at)) => {
                human(now.duration_since(at).max(SignedDuration::ZERO))
            }
            // Beyond it (unknown freshness): kubectl's `<invalid>` for a time in the future.
            (Some(_), Some(at)) => human(now.duration_since(at)),
            (Some(_), None) => "<unknown>".to_owned(),
        }
    }
}

/// The `Available` and `Degraded` conditions of a cluster's ManagedClusterAddOn.
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct AddOnState {
    /// `True`, `False` or `Unknown` (`Unknown` too when the condition is missing).
    pub available: String,
    /// The condition's reason.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The condition's message.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The agent's own report of its health (condition `AgentDegraded` of its control plane's
    /// hub copy), when it has made one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degraded: Option<AddOnCondition>,
    /// The add-on's version and rollout: `template`, `deploymentConfig`, `rollout`.
    #[serde(flatten)]
    pub rollout: Rollout,
}

impl AddOnState {
    /// OCM's `Available` of `mca`, and the agent's health `degraded` (from its copy: a
    /// `Degraded` condition on the ManagedClusterAddOn is not the agent's to write).
    pub(super) fn of(mca: &ManagedClusterAddOn, degraded: Option<AddOnCondition>) -> Self {
        let status = |s: &str| match s {
            "True" | "False" => s.to_owned(),
            _ => "Unknown".to_owned(),
        };
        match mca.condition(CONDITION_AVAILABLE) {
            Some(c) => AddOnState {
                available: status(&c.status),
                reason: c.reason.clone(),
                message: c.message.clone(),
                degraded,
                rollout: Rollout::of(mca),
            },
            None => AddOnState {
                available: "Unknown".to_owned(),
                reason: String::new(),
                message: "the add-on has no Available condition yet".to_owned(),
                degraded,
                rollout: Rollout::of(mca),
            },
        }
    }

    /// The ADD-ON column: `Available`, `Degraded (<reason>)` (available, but the agent says it
    /// cannot read what it reports on), `Unavailable (<reason>)`, `Unknown (<reason>)`; a
    /// degraded agent that is not available shows both. While the add-on's version is not
    /// rolled out, the rollout follows ([`Rollout::text`]): `Available, Upgrading (0.1.0 ->
    /// 0.2.0)`.
    pub fn text(&self) -> String {
        let health = self.health_text();
        match self.rollout.text() {
            Some(r) => format!("{health}, {r}"),
            None => health,
        }
    }

    /// The add-on's and the agent's health.
    fn health_text(&self) -> String {
        let with = |what: &str, reason: &str| {
            if reason.is_empty() {
                what.to_owned()
            } else {
                format!("{what} ({reason})")
            }
        };
        let degraded = self
            .degraded
            .as_ref()
            .filter(|d| d.status == "True")
            .map(|d| with("Degraded", &d.reason));
        let available = match self.available.as_str() {
            "True" => None,
            "False" => Some(with("Unavailable", &self.reason)),
            _ => Some(with("Unknown", &self.reason)),
        };
        match (available, degraded) {
            (None, None) => "Available".to_owned(),
            (None, Some(d)) => d,
            (Some(a), None) => a,
            (Some(a), Some(d)) => format!("{a}, {d}"),
        }
    }
}

/// Which clusters `--fleet` shows on an ACM hub, and how it judges their reports.
#[derive(Clone, Debug)]
pub struct FleetFilter {
    /// `--selector`: a label selector on ManagedClusters.
    pub selector: Option<String>,
    /// `--clusterset`: the ManagedClusterSet the clusters belong to.
    pub clusterset: Option<String>,
    /// `--stale-after`: a report older than this is `Stale`.
    pub stale_after: SignedDuration,
    /// `--chunk-size`: objects per list request (0: all at once).
    pub chunk_size: u32,
}

impl Default for FleetFilter {
    fn default() -> Self {
        FleetFilter {
            selector: None,
            clusterset: None,
            stale_after: DEFAULT_STALE_AFTER,
            chunk_size: DEFAULT_CHUNK_SIZE,
        }
    }
}

impl FleetFilter {
    /// The ManagedCluster label selector, `None` when every cluster is shown.
    pub(crate) fn managed_cluster_selector(&self) -> Option<String> {
        let parts: Vec<String> = self
            .selector
            .iter()
            .filter(|s| !s.trim().is_empty())
            .cloned()
            .chain(self.clusterset.iter().map(|s| clusterset_selector(s)))
            .collect();
        (!parts.is_empty()).then(|| parts.join(","))
    }

    /// How rows are judged at `now`.
    pub fn judge(&self, now: Timestamp) -> Judge {
        Judge {
            now,
            stale_after: self.stale_after,
        }
    }
}

/// What `--fleet` read: the rows and what the reader should know about them.
#[derive(Debug, Default)]
pub struct Fleet {
    /// One row per cluster, worst first.
    pub rows: Vec<FleetRow>,
    /// Warnings about the whole read (the add-ons unreadable, the lists read per namespace).
    pub warnings: Vec<String>,
    /// Namespaces of clusters the user may see whose objects RBAC denied: not in the rows.
    pub unreadable: Vec<String>,
}

impl Fleet {
    /// Every warning: the read's, then each row's.
    pub fn all_warnings(&self) -> Vec<String> {
        let mut all = self.warnings.clone();
        if !self.unreadable.is_empty() {
            all.push(unreadable_warning(&self.unreadable));
        }
        all.extend(self.rows.iter().flat_map(|r| r.warnings.iter().cloned()));
        all
    }
}

/// The warning naming the namespaces that could not be read.
pub fn unreadable_warning(namespaces: &[String]) -> String {
    format!(
        "cannot read the update status in namespace{} {} (RBAC): {} not shown",
        if namespaces.len() == 1 { "" } else { "s" },
        namespaces.join(", "),
        if namespaces.len() == 1 {
            "its cluster is"
        } else {
            "their clusters are"
        }
    )
}

/// A pool of a [`FleetRow`].
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct PoolSummary {
    /// The pool's name.
    pub name: String,
    /// Its assessment.
    pub assessment: Assessment,
}

/// The warning when the hub's ManagedClusterAddOns cannot be listed (RBAC): the list and the
/// web view say the same.
pub fn addons_forbidden() -> String {
    format!(
        "cannot list managedclusteraddons.{} (RBAC): clusters with the add-on enabled that did not report are not shown, nor the add-on's state",
        update_status_api::acm::ADDON_GROUP
    )
}
