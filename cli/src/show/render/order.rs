//! The order of pools and progress insights that the sections, the JSON/YAML report and the
//! web view share: `master` first, then the worker pools in the view's order.

use update_status_api::crd::{InsightType, UpdateInsightStatus};
use update_status_assess::nodes::MASTER_POOL;

use crate::show::view::View;

/// Position of a pool in tie-breaking order: `master` first, then the worker pools in the
/// view's (list) order, unknown pools last by name.
pub(super) fn pool_position<'a>(view: &View, pool: &'a str) -> (usize, &'a str) {
    if pool == MASTER_POOL {
        return (0, "");
    }
    view.worker_pools
        .iter()
        .position(|(n, _)| n == pool)
        .map_or((usize::MAX, pool), |i| (i + 1, ""))
}

/// The progress insights in a stable order: the ClusterVersion, ClusterOperators by name, then
/// nodes by pool (`master`, then the view's pool order) and name.
pub fn sorted_progress(view: &View) -> Vec<&UpdateInsightStatus> {
    let mut progress: Vec<&UpdateInsightStatus> = view
        .insights
        .iter()
        .filter(|i| i.type_ == InsightType::Progress)
        .collect();
    progress.sort_by(|a, b| progress_key(view, a).cmp(&progress_key(view, b)));
    progress
}

fn progress_key<'a>(
    view: &View,
    i: &'a UpdateInsightStatus,
) -> (Option<(usize, &'a str)>, u8, &'a str, &'a str) {
    let kind_rank = match i.resource.kind.as_str() {
        "ClusterVersion" => 0,
        "ClusterOperator" => 1,
        _ => 2,
    };
    (
        i.scope.pool.as_deref().map(|p| pool_position(view, p)),
        kind_rank,
        i.resource.kind.as_str(),
        i.resource.name.as_str(),
    )
}
