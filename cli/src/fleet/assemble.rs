//! The fleet's rows put together: the statuses' rows, the add-ons' state and the clusters that
//! have not reported, the selection, the claims checked, worst first.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use update_status_api::acm::{ADDON_NAME, ClusterManagementAddOn, ManagedClusterAddOn};
use update_status_api::crd::{Assessment, ControlPlaneUpdateStatus, HealthCounts};

use super::age::{Freshness, Judge};
use super::join::{Tally, check_claims, rows};
use super::model::{AddOnState, FleetRow};

/// Adds the add-on state to the rows of clusters with the add-on, and a "not reported" row for
/// each cluster with the add-on and no row (its namespace is the cluster's name).
pub fn with_addons<'a>(
    mut rows: Vec<FleetRow>,
    addons: impl IntoIterator<Item = &'a ManagedClusterAddOn>,
) -> Vec<FleetRow> {
    let by_namespace: BTreeMap<&str, &ManagedClusterAddOn> = addons
        .into_iter()
        .filter(|a| a.metadata.name.as_deref() == Some(ADDON_NAME))
        .filter(|a| a.metadata.deletion_timestamp.is_none())
        .filter_map(|a| Some((a.metadata.namespace.as_deref()?, a)))
        .collect();
    let mut seen = BTreeSet::new();
    for row in &mut rows {
        // A hosted cluster's row is not the namespace's cluster: the add-on is not its own.
        if row.hosted_cluster.is_some() {
            continue;
        }
        if let Some(a) = by_namespace.get(row.namespace.as_str()) {
            row.add_on = Some(AddOnState::of(a, row.agent_health.clone()));
            seen.insert(row.namespace.clone());
        }
    }
    for (namespace, a) in by_namespace {
        if !seen.contains(namespace) {
            rows.push(FleetRow::not_reported(
                namespace.to_owned(),
                AddOnState::of(a, None),
            ));
        }
    }
    rows
}

/// Marks on `rows` the configurations the ClusterManagementAddOn `cma` rolls out that have
/// not reached their clusters (`fleetDesired`, `Pending (...)`: the rollout module's doc).
pub fn mark_pending(rows: &mut [FleetRow], cma: &ClusterManagementAddOn) {
    for row in rows {
        if let Some(add_on) = row.add_on.as_mut() {
            add_on.rollout.mark_pending(cma);
        }
    }
}

fn worst_level(h: &HealthCounts) -> u8 {
    if h.critical > 0 {
        4
    } else if h.error > 0 {
        3
    } else if h.warning > 0 {
        2
    } else if h.info > 0 || h.unknown > 0 {
        1
    } else {
        0
    }
}

fn assessment_badness(r: &FleetRow) -> u8 {
    // Nothing known, or nothing recent (or a heartbeat from the future, which cannot tell): an
    // agent that does not report needs a look.
    let unverifiable = r.freshness == Some(Freshness::Unknown) && r.last_reported.is_some();
    if !r.reported || r.freshness == Some(Freshness::Stale) || unverifiable {
        return 5;
    }
    match r.assessment {
        Assessment::Stalled => 4,
        Assessment::ProgressingSlow => 3,
        Assessment::Unknown => 2,
        Assessment::Completed => 0,
        _ => 1,
    }
}

/// Rows worst first: by the most severe health insight, then the control-plane assessment
/// (not reported or stale, Stalled, Progressing - Slow, Unknown, Progressing, Completed), then
/// pools in trouble (Degraded before Excluded), then lowest completion, then name.
pub fn sort_key(r: &FleetRow) -> (Reverse<u8>, Reverse<u8>, Reverse<u8>, u32, &str) {
    let pools = r
        .worker_pools_not_completed
        .iter()
        .map(|p| match p.assessment {
            Assessment::Degraded => 2,
            Assessment::Excluded => 1,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    (
        Reverse(worst_level(&r.health)),
        Reverse(assessment_badness(r)),
        Reverse(pools),
        r.completion_percent,
        r.cluster.as_str(),
    )
}

/// Sorts rows worst first.
pub fn sort(rows: &mut [FleetRow]) {
    rows.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
}

/// The fleet's rows from what was read: the statuses' rows counted from `tally`, the add-ons
/// (`None`: not an ACM hub, or unreadable) with a row for each cluster that has not reported,
/// only the `selected` clusters' (`--selector`/`--clusterset`), claims checked, worst first.
pub fn assemble(
    cps: &[ControlPlaneUpdateStatus],
    tally: &Tally,
    addons: Option<&[ManagedClusterAddOn]>,
    selected: Option<&BTreeSet<String>>,
    judge: &Judge,
) -> Vec<FleetRow> {
    let mut rows = rows(cps, tally, judge);
    if let Some(addons) = addons {
        rows = with_addons(rows, addons);
    }
    if let Some(selected) = selected {
        rows.retain(|r| selected.contains(&r.namespace));
    }
    check_claims(&mut rows);
    sort(&mut rows);
    rows
}
