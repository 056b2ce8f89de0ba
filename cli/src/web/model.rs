//! The page model: what the web view draws, computed from a [`View`] at an instant. One JSON
//! document for the live view (sent whole on each change) and the `-o html` file (embedded).
//!
//! Strings are the objects' exact values: the page inserts them as text (never as markup) and
//! makes control and bidi characters visible itself. Numbers and texts that the text view also
//! prints (completion, operator and node counts, the health table) are computed here by the same
//! functions the text renderer uses, so the two views cannot disagree.

use jiff::Timestamp;
use serde::Serialize;
use update_status_api::crd::{
    Assessment, Condition, ConditionStatus, ControlPlaneUpdateStatusStatus, HealthCounts,
    InsightType, NodeCounts, NodePhase, OperatorCounts, ResourceRef, UpdateInsightStatus,
};
use update_status_assess::control_plane::{operator_health_display, target_version_display};
use update_status_assess::format::{SECOND, round, short_duration};
use update_status_assess::nodes::MASTER_POOL;

use crate::show::render::{estimate_text, health_since, is_updating, sorted_health, update_timing};
use crate::show::view::View;

/// Version of the model's layout (the page refuses another).
pub const MODEL_VERSION: u32 = 1;

/// What the page shows about where the data comes from.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// The plugin's watches: changes arrive as they happen.
    Live,
    /// A snapshot (`--from-dir`, or `-o html`): one instant.
    Snapshot,
}

/// Node cell states, in the order of the page's legend (the page knows the same list).
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub enum CellState {
    /// At the target version.
    Updated,
    /// Not started (outdated).
    Pending,
    /// Being drained.
    Draining,
    /// Applying the new configuration.
    Updating,
    /// Rebooting into it.
    Rebooting,
    /// Excluded: its pool is paused.
    Excluded,
    /// Degraded.
    Degraded,
    /// Unavailable while not updating.
    Unavailable,
    /// Cannot tell.
    Unknown,
}

impl CellState {
    /// The state of a node (or Machine) from its progress insight.
    pub fn of_node(i: &UpdateInsightStatus) -> Self {
        let Some(p) = i.progress.as_ref() else {
            return CellState::Unknown;
        };
        match p.assessment {
            Assessment::Degraded => CellState::Degraded,
            Assessment::Unavailable => CellState::Unavailable,
            Assessment::Excluded => CellState::Excluded,
            Assessment::Completed => CellState::Updated,
            Assessment::Outdated => CellState::Pending,
            Assessment::Progressing => match p.phase {
                Some(NodePhase::Draining) => CellState::Draining,
                Some(NodePhase::Rebooting) => CellState::Rebooting,
                Some(NodePhase::Paused) => CellState::Excluded,
                Some(NodePhase::Updated) => CellState::Updated,
                Some(NodePhase::Pending) => CellState::Pending,
                Some(NodePhase::Updating) | None => CellState::Updating,
            },
            _ => match p.phase {
                Some(NodePhase::Updated) => CellState::Updated,
                Some(NodePhase::Paused) => CellState::Excluded,
                Some(NodePhase::Pending) => CellState::Pending,
                _ => CellState::Unknown,
            },
        }
    }

    /// The index the page's legend gives this state.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// The state of a ClusterOperator tile.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum OperatorState {
    /// At the target version.
    Updated,
    /// Progressing toward it.
    Updating,
    /// Not started (waiting, or cannot tell).
    Pending,
    /// Available but degraded.
    Degraded,
    /// Not available.
    Unavailable,
}

/// The whole page of one cluster.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPage {
    /// Always `cluster`.
    pub kind: &'static str,
    /// [`MODEL_VERSION`].
    pub version: u32,
    /// What the page is about (`namespace openshift-update-status`, `hosted cluster demo`, ...).
    pub title: String,
    /// Live or a snapshot.
    pub source: Source,
    /// The instant it was evaluated at (RFC 3339).
    pub now: Timestamp,
    /// Why there is nothing to show yet (the page shows it; the last good data stays).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `false`: the text view prints "The cluster is not updating."
    pub updating: bool,
    /// The control plane, `None` when there is no ControlPlaneUpdateStatus.
    pub control_plane: Option<ControlPlane>,
    /// The pools with nodes: the control plane's (`master`) first, then the worker pools in
    /// the text view's order.
    pub pools: Vec<Pool>,
    /// Health insights in the text view's order.
    pub health: Vec<Health>,
    /// `Update is proceeding well` when there is no health insight (the text view's line).
    pub health_none_since: Option<String>,
    /// The remaining-time estimates of the `UpdateHistory` (live view only; absent when it
    /// holds none or cannot be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimates: Option<super::estimates::Estimates>,
}

/// The control plane block.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlane {
    /// `Progressing`, `Completed`, ...
    pub assessment: &'static str,
    /// The assessment's label slug (`progressing-slow`): the page colours by it.
    pub assessment_slug: &'static str,
    /// The target version as the text view prints it (`4.16.0 (from 4.15.3)`).
    pub target: String,
    /// The version updated from (empty for an installation).
    pub previous: String,
    /// Completion in percent.
    pub completion: u32,
    /// When the update started.
    pub started_at: Option<Timestamp>,
    /// When it completed.
    pub completed_at: Option<Timestamp>,
    /// When it is estimated to complete.
    pub estimated_at: Option<Timestamp>,
    /// `Duration:` of the text view.
    pub duration: String,
    /// `Est. Time Remaining:` of the text view (`None`: not printed).
    pub estimate: Option<String>,
    /// The `Operator Health` line.
    pub operator_health: String,
    /// Operator counts.
    pub operators: OperatorCounts,
    /// Health insights by level.
    pub health_insights: HealthCounts,
    /// One tile per ClusterOperator, by name.
    pub tiles: Vec<Tile>,
}

/// One ClusterOperator.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Tile {
    /// Its name.
    pub name: String,
    /// Its state.
    pub state: OperatorState,
    /// Its version and the target (`4.15.3 → 4.16.0`, or one version).
    pub version: String,
    /// What it says: its Progressing message while updating, else the message of the
    /// condition that makes it degraded or unavailable.
    pub message: String,
    /// Since when it is in this state (the condition's last transition).
    pub since: Option<Timestamp>,
}

/// A pool and its nodes.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Pool {
    /// The pool's name.
    pub name: String,
    /// `true` for the control plane's pool (`master`).
    pub control_plane: bool,
    /// The pool's assessment (`Empty` for a pool without nodes).
    pub assessment: &'static str,
    /// Its label slug.
    pub assessment_slug: &'static str,
    /// Completion in percent, as the text view's COMPLETION column.
    pub completion: u32,
    /// Updated nodes (the COMPLETION column's numerator).
    pub updated: u32,
    /// The pool's counts.
    pub counts: NodeCounts,
    /// The nodes, by name, column-wise.
    pub nodes: Nodes,
}

/// The nodes of a pool, one array per field (compact at thousands of nodes).
#[derive(Serialize, Debug, Clone, PartialEq, Default)]
pub struct Nodes {
    /// Names.
    pub name: Vec<String>,
    /// [`CellState::code`] of each.
    pub state: Vec<u8>,
    /// Phase (`Draining`, ...; empty when unknown).
    pub phase: Vec<&'static str>,
    /// Assessment (`Outdated`, ...).
    pub assessment: Vec<&'static str>,
    /// Current version (`?` when unknown).
    pub version: Vec<String>,
    /// The estimate (`+10m`, `?`, `-`, empty).
    pub estimate: Vec<String>,
    /// The message.
    pub message: Vec<String>,
}

/// One health insight.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `Critical`, `Error`, `Warning`, `Info` or `Unknown`.
    pub level: &'static str,
    /// SINCE as the text view prints it (`-` when unknown).
    pub since: String,
    /// When it started.
    pub started_at: Option<Timestamp>,
    /// IMPACT.
    pub impact: &'static str,
    /// MESSAGE (the summary).
    pub summary: String,
    /// The description.
    pub description: String,
    /// The remediation reference (a URL, usually).
    pub reference: String,
    /// The resource it is about.
    pub resource: ResourceRef,
    /// Further resources (`status.health.related`).
    pub related: Vec<ResourceRef>,
    /// The rule that produced it.
    pub source: String,
}

/// The page of `view` at `now`.
pub fn cluster_page(view: &View, now: Timestamp, title: String, source: Source) -> ClusterPage {
    let control_plane = view
        .control_plane
        .as_ref()
        .map(|cp| control_plane(cp, view, now));
    let health: Vec<Health> = sorted_health(view)
        .into_iter()
        .filter_map(|i| health(i, now))
        .collect();
    let health_none_since = match (&view.control_plane, health.is_empty()) {
        (Some(cp), true) => {
            let updating_for = cp.started_at.map_or(0, |s| {
                round(now.as_nanosecond() - s.as_nanosecond(), SECOND)
            });
            Some(short_duration(updating_for))
        }
        _ => None,
    };
    ClusterPage {
        kind: "cluster",
        version: MODEL_VERSION,
        title,
        source,
        now,
        error: None,
        updating: view.control_plane.is_some() && is_updating(view),
        control_plane,
        pools: pools(view),
        health,
        health_none_since,
        estimates: None,
    }
}

/// A page that only says what is wrong (nothing read yet).
pub fn error_page(title: String, now: Timestamp, error: String) -> ClusterPage {
    ClusterPage {
        kind: "cluster",
        version: MODEL_VERSION,
        title,
        source: Source::Live,
        now,
        error: Some(error),
        updating: false,
        control_plane: None,
        pools: Vec::new(),
        health: Vec::new(),
        health_none_since: None,
        estimates: None,
    }
}

fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

fn control_plane(cp: &ControlPlaneUpdateStatusStatus, view: &View, now: Timestamp) -> ControlPlane {
    let (_, duration) = update_timing(cp, now);
    let mut tiles: Vec<Tile> = view
        .insights
        .iter()
        .filter(|i| i.type_ == InsightType::Progress && i.resource.kind == "ClusterOperator")
        .filter_map(tile)
        .collect();
    tiles.sort_by(|a, b| a.name.cmp(&b.name));
    ControlPlane {
        assessment: cp.assessment.as_str(),
        assessment_slug: cp.assessment.slug(),
        target: target_version_display(&cp.versions),
        previous: cp.versions.previous.clone(),
        completion: cp.completion_percent,
        started_at: cp.started_at,
        completed_at: cp.completed_at,
        estimated_at: cp.estimated_completed_at,
        duration: short_duration(duration),
        estimate: estimate_text(cp, now),
        operator_health: operator_health_display(&cp.operators),
        operators: cp.operators.clone(),
        health_insights: cp.health_insights.clone(),
        tiles,
    }
}

fn tile(i: &UpdateInsightStatus) -> Option<Tile> {
    let p = i.progress.as_ref()?;
    let is = |t: &str, s: ConditionStatus| condition(&p.conditions, t).filter(|c| c.status == s);
    let (state, cond) = if let Some(c) = is("Available", ConditionStatus::False) {
        (OperatorState::Unavailable, Some(c))
    } else if let Some(c) = is("Degraded", ConditionStatus::True) {
        (OperatorState::Degraded, Some(c))
    } else {
        let updating = condition(&p.conditions, "Updating");
        match p.assessment {
            Assessment::Updated => (OperatorState::Updated, None),
            Assessment::Updating => (OperatorState::Updating, updating),
            _ => (OperatorState::Pending, updating),
        }
    };
    let version = match &p.version {
        Some(v) if !v.current.is_empty() && !v.target.is_empty() && v.current != v.target => {
            format!("{} → {}", v.current, v.target)
        }
        Some(v) if !v.current.is_empty() => v.current.clone(),
        Some(v) => v.target.clone(),
        None => String::new(),
    };
    Some(Tile {
        name: i.resource.name.clone(),
        state,
        version,
        message: cond.map(|c| c.message.clone()).unwrap_or_default(),
        since: cond.and_then(|c| c.last_transition_time).or(p.since),
    })
}

/// The pools with their nodes: `master` (from the control plane's counts) when it has nodes,
/// then the worker pools in the view's order.
fn pools(view: &View) -> Vec<Pool> {
    let mut out = Vec::new();
    if let Some(cp) = &view.control_plane {
        let nodes = nodes(view, MASTER_POOL);
        if cp.nodes.total > 0 || !nodes.name.is_empty() {
            let n = &cp.nodes;
            let completion = percent(n.total.saturating_sub(n.outdated), n.total);
            let assessment = if n.total > 0 && n.outdated == 0 {
                Assessment::Completed
            } else if n.degraded > 0 {
                Assessment::Degraded
            } else if n.progressing > 0 || n.draining > 0 {
                Assessment::Progressing
            } else {
                Assessment::Pending
            };
            out.push(Pool {
                name: MASTER_POOL.to_owned(),
                control_plane: true,
                assessment: assessment.as_str(),
                assessment_slug: assessment.slug(),
                completion,
                updated: n.total.saturating_sub(n.outdated),
                counts: n.clone(),
                nodes,
            });
        }
    }
    for (name, status) in &view.worker_pools {
        let n = &status.nodes;
        let assessment = if n.total == 0 {
            Assessment::Empty
        } else {
            status.assessment
        };
        out.push(Pool {
            name: name.clone(),
            control_plane: false,
            assessment: assessment.as_str(),
            assessment_slug: assessment.slug(),
            completion: status.completion_percent,
            updated: n.total.saturating_sub(n.outdated),
            counts: n.clone(),
            nodes: nodes(view, name),
        });
    }
    out
}

/// `part` of `total` in percent, rounded half to even as the statuses are.
fn percent(part: u32, total: u32) -> u32 {
    if total == 0 {
        return 0;
    }
    let x = f64::from(part) * 100.0 / f64::from(total);
    x.round_ties_even() as u32
}

/// The progress insights of the nodes (and Machines without a Node: hosted clusters) of a pool,
/// by name: a cell keeps its place while its state changes.
fn nodes(view: &View, pool: &str) -> Nodes {
    let mut members: Vec<&UpdateInsightStatus> = view
        .insights
        .iter()
        .filter(|i| {
            i.type_ == InsightType::Progress
                && i.progress.is_some()
                && matches!(i.resource.kind.as_str(), "Node" | "Machine")
                && i.scope.pool.as_deref() == Some(pool)
        })
        .collect();
    members.sort_by(|a, b| a.resource.name.cmp(&b.resource.name));
    let mut out = Nodes::default();
    for i in members {
        let Some(p) = i.progress.as_ref() else {
            continue;
        };
        out.name.push(i.resource.name.clone());
        out.state.push(CellState::of_node(i).code());
        out.phase
            .push(p.phase.map(NodePhase::as_str).unwrap_or_default());
        out.assessment.push(p.assessment.as_str());
        out.version.push(match p.version.as_ref() {
            Some(v) if !v.current.is_empty() => v.current.clone(),
            _ => "?".to_owned(),
        });
        out.estimate.push(p.estimate.clone());
        out.message.push(p.message.clone());
    }
    out
}

fn health(i: &UpdateInsightStatus, now: Timestamp) -> Option<Health> {
    let h = i.health.as_ref()?;
    Some(Health {
        level: h.impact.level.as_str(),
        since: health_since(h.started_at, now),
        started_at: h.started_at,
        impact: h.impact.type_.as_str(),
        summary: h.impact.summary.clone(),
        description: h.impact.description.clone(),
        reference: h.remediation.reference.clone(),
        resource: i.resource.clone(),
        related: h.related.clone(),
        source: h.source.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{InsightScope, ProgressInsight, ScopeType};

    fn node(
        name: &str,
        pool: &str,
        assessment: Assessment,
        phase: NodePhase,
    ) -> UpdateInsightStatus {
        UpdateInsightStatus {
            type_: InsightType::Progress,
            resource: ResourceRef {
                kind: "Node".into(),
                name: name.into(),
                ..Default::default()
            },
            scope: InsightScope {
                type_: ScopeType::WorkerPool,
                pool: Some(pool.into()),
            },
            progress: Some(ProgressInsight {
                assessment,
                phase: Some(phase),
                ..Default::default()
            }),
            health: None,
        }
    }

    #[test]
    fn cell_states_follow_assessment_then_phase() {
        let cases = [
            (
                Assessment::Completed,
                NodePhase::Updated,
                CellState::Updated,
            ),
            (Assessment::Outdated, NodePhase::Pending, CellState::Pending),
            (
                Assessment::Progressing,
                NodePhase::Draining,
                CellState::Draining,
            ),
            (
                Assessment::Progressing,
                NodePhase::Updating,
                CellState::Updating,
            ),
            (
                Assessment::Progressing,
                NodePhase::Rebooting,
                CellState::Rebooting,
            ),
            (Assessment::Excluded, NodePhase::Paused, CellState::Excluded),
            (
                Assessment::Degraded,
                NodePhase::Draining,
                CellState::Degraded,
            ),
            (
                Assessment::Unavailable,
                NodePhase::Pending,
                CellState::Unavailable,
            ),
        ];
        for (a, p, want) in cases {
            assert_eq!(
                CellState::of_node(&node("n", "w", a, p)),
                want,
                "{a:?} {p:?}"
            );
        }
        assert_eq!(CellState::Unknown.code(), 8);
    }

    #[test]
    fn nodes_are_listed_by_name_per_pool() {
        let view = View {
            insights: vec![
                node("b", "worker", Assessment::Outdated, NodePhase::Pending),
                node("a", "worker", Assessment::Completed, NodePhase::Updated),
                node("c", "infra", Assessment::Completed, NodePhase::Updated),
            ],
            ..Default::default()
        };
        let n = nodes(&view, "worker");
        assert_eq!(n.name, ["a", "b"]);
        assert_eq!(
            n.state,
            [CellState::Updated.code(), CellState::Pending.code()]
        );
        assert_eq!(n.version, ["?", "?"]);
    }

    #[test]
    fn percent_rounds_half_to_even() {
        assert_eq!(percent(1, 8), 12);
        assert_eq!(percent(3, 8), 38);
        assert_eq!(percent(0, 0), 0);
        assert_eq!(percent(5, 5), 100);
    }
}
