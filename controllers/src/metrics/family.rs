//! What every metrics family shares: its collectors for the one registry ([`Family`]), the
//! leading `hosted_cluster` label of hosted mode ([`PerCluster`]), a counter's total.

use prometheus::IntCounterVec;
use prometheus::core::Collector;

/// A family of metrics of one concern: its collectors, registered into the one registry.
pub trait Family {
    /// Its collectors (each a clone sharing the family's series).
    fn collectors(&self) -> Vec<Box<dyn Collector>>;
}

/// Hosted mode: series per HostedCluster, with a leading `hosted_cluster` label
/// (`<namespace>/<name>`); standalone: no such label (one cluster).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerCluster(pub bool);

impl PerCluster {
    /// The label names of a series: `hosted_cluster` first in hosted mode, then `rest`.
    pub fn labels(self, rest: &[&'static str]) -> Vec<&'static str> {
        self.0
            .then_some("hosted_cluster")
            .into_iter()
            .chain(rest.iter().copied())
            .collect()
    }

    /// The label values of a series: the hosted cluster's first in hosted mode (`""` when
    /// `None`), then `rest`.
    pub fn values<'a>(self, hosted_cluster: Option<&'a str>, rest: &[&'a str]) -> Vec<&'a str> {
        self.0
            .then(|| hosted_cluster.unwrap_or_default())
            .into_iter()
            .chain(rest.iter().copied())
            .collect()
    }
}

/// The sum of a counter's series.
pub fn total(counter: &IntCounterVec) -> u64 {
    counter
        .collect()
        .iter()
        .flat_map(|f| {
            f.get_metric()
                .iter()
                .map(|m| m.get_counter().get_value() as u64)
        })
        .sum()
}
