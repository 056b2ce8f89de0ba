//! Nodes remembered one by one: a node that drains 2.5× slower than its group (long-lived
//! pods, a big `emptyDir`) or reboots faster does so in every update, and is often among a
//! pool's last. Each learned update measures every finished node against its group *in that
//! update* (so the update's pace cancels), and [`fold`] keeps the most deviant
//! [`MAX_NODE_FACTORS`] of the cluster with their deviation averaged over the updates they were
//! seen in.

use update_status_api::history::{
    CurrentUpdate, DurationStats, MAX_NODE_FACTORS, NodeFactor, UpdateHistoryStatus,
};

/// An update weighs at least this share of a node's deviation (the newest updates say most:
/// nodes change, e.g. their pods move).
pub const NEWEST_SHARE: f64 = 0.4;
/// Updates counted per node at most.
pub const MAX_COUNT: u32 = 5;

fn mean_log(s: &DurationStats) -> Option<f64> {
    (s.count >= 2).then(|| s.sum_log / f64::from(s.count))
}

fn dev(seconds: u32, s: &DurationStats) -> Option<f64> {
    mean_log(s).map(|m| (1.0 + f64::from(seconds)).ln() - m)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Folds the finished nodes of a completed update into `status.node_factors`, keeping the
/// [`MAX_NODE_FACTORS`] most deviant.
pub fn fold(status: &mut UpdateHistoryStatus, current: &CurrentUpdate) {
    for f in &current.finished {
        let Some(g) = current.node_groups.get(f.group as usize) else {
            continue;
        };
        let (Some(d), Some(r)) = (
            dev(f.drain_seconds, &g.drain),
            dev(f.reboot_seconds, &g.reboot),
        ) else {
            // A group of one node: nothing to compare it with.
            continue;
        };
        match status.node_factors.iter_mut().find(|n| n.name == f.name) {
            Some(n) => {
                let a = (1.0 / (f64::from(n.updates) + 1.0)).max(NEWEST_SHARE);
                n.drain = round3(n.drain * (1.0 - a) + d * a);
                n.reboot = round3(n.reboot * (1.0 - a) + r * a);
                n.updates = (n.updates + 1).min(MAX_COUNT);
            }
            None => status.node_factors.push(NodeFactor {
                name: f.name.clone(),
                updates: 1,
                drain: round3(d),
                reboot: round3(r),
            }),
        }
    }
    status.node_factors.sort_by(|a, b| {
        deviance(b)
            .total_cmp(&deviance(a))
            .then(a.name.cmp(&b.name))
    });
    status.node_factors.truncate(MAX_NODE_FACTORS);
}

/// How far a node is from its group (what decides which are kept).
pub fn deviance(n: &NodeFactor) -> f64 {
    n.drain.abs() + n.reboot.abs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimates::stats;
    use update_status_api::history::{FinishedNode, NodeGroupTiming};

    fn update(nodes: &[(&str, u32, u32)]) -> CurrentUpdate {
        let mut g = NodeGroupTiming::default();
        for (_, d, r) in nodes {
            stats::add(&mut g.drain, f64::from(*d));
            stats::add(&mut g.reboot, f64::from(*r));
        }
        CurrentUpdate {
            node_groups: vec![g],
            finished: nodes
                .iter()
                .map(|(n, d, r)| FinishedNode {
                    name: n.to_string(),
                    group: 0,
                    drain_seconds: *d,
                    reboot_seconds: *r,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_slow_node_is_remembered_and_the_pace_cancels() {
        let mut status = UpdateHistoryStatus::default();
        fold(
            &mut status,
            &update(&[("a", 100, 300), ("b", 100, 300), ("slow", 250, 300)]),
        );
        // Twice as slow an update: the same deviations.
        fold(
            &mut status,
            &update(&[("a", 200, 600), ("b", 200, 600), ("slow", 500, 600)]),
        );
        let slow = &status.node_factors[0];
        assert_eq!(slow.name, "slow");
        assert_eq!(slow.updates, 2);
        // ln(251) - mean(ln 101, ln 101, ln 251) ≈ 2/3 ln(2.5).
        assert!((slow.drain - 0.61).abs() < 0.02, "{slow:?}");
        assert!(slow.reboot.abs() < 0.01, "{slow:?}");
        assert!(status.node_factors[1].drain < 0.0);
    }

    #[test]
    fn only_the_most_deviant_are_kept() {
        let mut status = UpdateHistoryStatus::default();
        let names: Vec<String> = (0..100).map(|i| format!("n{i:03}")).collect();
        let nodes: Vec<(&str, u32, u32)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), 100 + i as u32 * 10, 300))
            .collect();
        fold(&mut status, &update(&nodes));
        assert_eq!(status.node_factors.len(), MAX_NODE_FACTORS);
        // The fastest and the slowest stay, the middle ones go.
        let kept: Vec<&str> = status
            .node_factors
            .iter()
            .map(|n| n.name.as_str())
            .collect();
        assert!(kept.contains(&"n000") && kept.contains(&"n099"), "{kept:?}");
        assert!(!kept.contains(&"n050"), "{kept:?}");
    }
}
