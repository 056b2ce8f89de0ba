//! What to simulate: sizes, versions, seed, simulated time and the faults to inject.

use std::str::FromStr;

use jiff::{SignedDuration, Timestamp};

use super::durations::Durations;
use super::error::SimError;

/// A fault: what it hits (`None`: let the simulation pick) and for how many steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultSpec {
    /// Operator, node or pool name; `None` picks one.
    pub target: Option<String>,
    /// Steps the fault lasts (ignored by the stalled operator, which never recovers).
    pub steps: u32,
}

/// Default duration of a fault, in steps.
pub const DEFAULT_FAULT_STEPS: u32 = 6;

impl FaultSpec {
    /// A fault on an automatically chosen target.
    pub fn auto(steps: u32) -> Self {
        FaultSpec {
            target: None,
            steps,
        }
    }
    /// A fault on a named target.
    pub fn on(target: &str, steps: u32) -> Self {
        FaultSpec {
            target: Some(target.to_string()),
            steps,
        }
    }
}

impl FromStr for FaultSpec {
    type Err = SimError;
    /// `auto`, `NAME`, `auto:STEPS`, `NAME:STEPS` or `:STEPS`.
    fn from_str(s: &str) -> Result<Self, SimError> {
        let (target, steps) = match s.rsplit_once(':') {
            Some((t, n)) => (
                t,
                n.parse::<u32>()
                    .map_err(|_| SimError::FaultSyntax(s.to_string()))?,
            ),
            None => (s, DEFAULT_FAULT_STEPS),
        };
        let target = match target.trim() {
            "" | "auto" => None,
            t if t.contains(char::is_whitespace) => {
                return Err(SimError::FaultSyntax(s.to_string()));
            }
            t => Some(t.to_string()),
        };
        Ok(FaultSpec { target, steps })
    }
}

/// Faults to inject.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// An operator is `Degraded=True` while it updates, for `steps` steps (it does not finish
    /// before it recovers).
    pub degraded_operator: Option<FaultSpec>,
    /// A node's drain is blocked by a PodDisruptionBudget for `steps` steps: the daemon state
    /// is `Degraded` with a `failed to drain node: ... PodDisruptionBudget ...` reason.
    pub blocked_drain: Option<FaultSpec>,
    /// A node is `Ready=False` for `steps` steps from the moment the pools start rolling (it
    /// counts against its pool's `maxUnavailable`, and is not picked while not ready).
    pub not_ready_node: Option<FaultSpec>,
    /// A pool is `spec.paused` for `steps` steps from the moment the pools start rolling.
    pub paused_pool: Option<FaultSpec>,
    /// An operator starts updating and never finishes: the update never completes.
    pub stalled_operator: Option<FaultSpec>,
}

/// What to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Platform ClusterOperators, `machine-config` included (at least 1).
    pub operators: usize,
    /// MachineConfigPools: `master`, `worker`, then custom pools (at least 1).
    pub pools: usize,
    /// Nodes of the master pool.
    pub masters: usize,
    /// Nodes of each other pool.
    pub nodes_per_pool: usize,
    /// `maxUnavailable` of the non-master pools (the master pool uses 1).
    pub max_unavailable: u32,
    /// Version the cluster was installed at (oldest history entry).
    pub installed_version: String,
    /// Version the cluster runs before the update.
    pub from_version: String,
    /// Version it updates to.
    pub to_version: String,
    /// Seed of the step durations and of the order nodes are picked in.
    pub seed: u64,
    /// Simulated instant of step 0.
    pub start: Timestamp,
    /// Simulated time per step.
    pub step: SignedDuration,
    /// Injected faults.
    pub faults: Faults,
    /// Per-operator and per-node durations, instance types and earlier updates (`None`: every
    /// operator, drain and reboot takes 1–2 steps drawn from `seed`).
    pub durations: Option<Durations>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            operators: 12,
            pools: 2,
            masters: 3,
            nodes_per_pool: 7,
            max_unavailable: 2,
            installed_version: "4.17.5".into(),
            from_version: "4.17.12".into(),
            to_version: "4.18.3".into(),
            seed: 1,
            start: Timestamp::from_second(1_767_225_600).unwrap_or(Timestamp::UNIX_EPOCH), // 2026-01-01
            step: SignedDuration::from_secs(60),
            faults: Faults::default(),
            durations: None,
        }
    }
}

impl SimConfig {
    /// Total number of nodes.
    pub fn total_nodes(&self) -> usize {
        self.masters + self.nodes_per_pool * self.pools.saturating_sub(1)
    }
}

/// Parses a duration: `500ms`, `2s`, `1.5s`, `3m`, `1h`, or a number of seconds.
pub fn parse_duration(s: &str) -> Result<SignedDuration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (e.g. 500ms, 2s, 1m)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (ms, s, m, h)")),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("{s:?} is not a positive duration"));
    }
    SignedDuration::try_from_secs_f64(secs).map_err(|e| format!("{s:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_specs_parse() {
        assert_eq!(
            "auto".parse::<FaultSpec>().ok(),
            Some(FaultSpec::auto(DEFAULT_FAULT_STEPS))
        );
        assert_eq!("auto:3".parse::<FaultSpec>().ok(), Some(FaultSpec::auto(3)));
        assert_eq!(":4".parse::<FaultSpec>().ok(), Some(FaultSpec::auto(4)));
        assert_eq!(
            "console:9".parse::<FaultSpec>().ok(),
            Some(FaultSpec::on("console", 9))
        );
        assert_eq!(
            "console".parse::<FaultSpec>().ok(),
            Some(FaultSpec::on("console", DEFAULT_FAULT_STEPS))
        );
        assert!("console:x".parse::<FaultSpec>().is_err());
        assert!("a b:1".parse::<FaultSpec>().is_err());
    }

    #[test]
    fn durations_parse() {
        assert_eq!(
            parse_duration("500ms"),
            Ok(SignedDuration::from_millis(500))
        );
        assert_eq!(parse_duration("2s"), Ok(SignedDuration::from_secs(2)));
        assert_eq!(parse_duration("1.5"), Ok(SignedDuration::from_millis(1500)));
        assert_eq!(parse_duration("3m"), Ok(SignedDuration::from_secs(180)));
        assert_eq!(parse_duration("1h"), Ok(SignedDuration::from_secs(3600)));
        assert!(parse_duration("3 weeks").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
