//! The simulated cluster before the update: the ClusterVersion at the old version, its
//! operators, pools, rendered MachineConfigs and nodes.

use std::collections::{BTreeMap, BTreeSet};

use jiff::SignedDuration;

use super::config::SimConfig;
use super::error::SimError;
use super::faults::ActiveFaults;
use super::state::Simulation;
use super::state::{
    ALL_IS_WELL, Cond, Cv, HistoryEntry, KUBELET_READY, Mc, NodeStep, OpPhase, Operator, Pool,
    ROLE_PREFIX, Rng, SimNode, Stage, fnv, rendered_config,
};

/// The instance type label of a node ([`super::Durations::instance_types`]).
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";

/// Platform operators in the order the cluster-version operator updates them (roughly its
/// run levels); `machine-config` always comes last and is not in this list.
pub const OPERATORS: [&str; 33] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "config-operator",
    "openshift-apiserver",
    "openshift-controller-manager",
    "kube-storage-version-migrator",
    "cloud-credential",
    "cloud-controller-manager",
    "cluster-autoscaler",
    "machine-api",
    "machine-approver",
    "control-plane-machine-set",
    "authentication",
    "network",
    "dns",
    "service-ca",
    "ingress",
    "image-registry",
    "storage",
    "csi-snapshot-controller",
    "node-tuning",
    "baremetal",
    "console",
    "insights",
    "monitoring",
    "marketplace",
    "openshift-samples",
    "operator-lifecycle-manager",
    "operator-lifecycle-manager-catalog",
    "operator-lifecycle-manager-packageserver",
    "olm",
];
/// The operator that rolls the nodes.
pub const MACHINE_CONFIG: &str = "machine-config";
/// Names of custom pools, in order (then `pool-<n>`).
const CUSTOM_POOLS: [&str; 5] = ["infra", "gpu", "edge", "storage", "batch"];

const DAY: i64 = 86_400;

/// When the cluster was installed and last updated (Unix seconds).
#[derive(Clone, Copy, Debug)]
struct Past {
    /// Start of the simulation (step 0).
    start: i64,
    /// Installation, 90 days before.
    installed_at: i64,
    /// Start of the update to the current version, 40 days before.
    from_started: i64,
    /// Its completion, 70 minutes later.
    from_completed: i64,
}

impl Past {
    fn of(config: &SimConfig) -> Self {
        let start = config.start.as_second();
        let earlier = config
            .durations
            .as_ref()
            .map_or(&[][..], |d| &d.history[..]);
        if let Some(last) = earlier.first() {
            let oldest = earlier.last().map_or(start, |h| h.started.as_second());
            return Past {
                start,
                installed_at: (start - 90 * DAY).min(oldest - 30 * DAY),
                from_started: last.started.as_second(),
                from_completed: last.completed.as_second(),
            };
        }
        let from_started = start - 40 * DAY;
        Past {
            start,
            installed_at: start - 90 * DAY,
            from_started,
            from_completed: from_started + 70 * 60,
        }
    }
}

impl Simulation {
    /// Builds the cluster at `from_version`, not updating; every object is dirty (to be
    /// created).
    pub fn new(config: SimConfig) -> Result<Self, SimError> {
        check(&config)?;
        let past = Past::of(&config);
        let mut rng = Rng(config.seed);
        let cv = initial_cv(&config, past);
        let operators = initial_operators(&config, past);
        let mut pools = Vec::new();
        let mut mcs = Vec::new();
        let mut nodes = Vec::new();
        for p in 0..config.pools {
            let name = pool_name(p);
            let old_config = rendered_config(&name, &config.from_version);
            for base in [format!("00-{name}"), format!("01-{name}-kubelet")] {
                mcs.push(Mc::new(base, &name, None, past.installed_at));
            }
            mcs.push(Mc::new(
                old_config.clone(),
                &name,
                Some(&config.from_version),
                past.from_started,
            ));
            let size = if p == 0 {
                config.masters
            } else {
                config.nodes_per_pool
            };
            let first = nodes.len();
            nodes.extend((first..first + size).map(|g| {
                let mut node = initial_node(g, p, &name, &old_config, past);
                if let Some(t) = config.durations.as_ref().and_then(|d| d.instance_type(g)) {
                    node.labels
                        .insert(INSTANCE_TYPE_LABEL.to_string(), t.to_string());
                }
                node
            }));
            let mut pick_order: Vec<usize> = (first..first + size).collect();
            rng.shuffle(&mut pick_order);
            pools.push(Pool {
                role: name.clone(),
                is_master: p == 0,
                max_unavailable: if p == 0 {
                    1
                } else {
                    config.max_unavailable.max(1)
                },
                config: old_config.clone(),
                old_config,
                new_config: rendered_config(&name, &config.to_version),
                paused: false,
                pick_order,
                updating: false,
                name,
            });
        }

        let mut sim = Simulation {
            step_count: 0,
            now: past.start,
            stage: Stage::Idle,
            cv,
            operators,
            current_op: 0,
            pools,
            mcs,
            nodes,
            mco_deployment_version: config.from_version.clone(),
            rng,
            faults: ActiveFaults::default(),
            dirty: BTreeSet::new(),
            config,
        };
        sim.faults = sim.resolve_faults()?;
        sim.dirty = sim.all_parts();
        Ok(sim)
    }
}

/// Refuses what cannot be simulated.
fn check(config: &SimConfig) -> Result<(), SimError> {
    if config.operators == 0 {
        return Err(SimError::Config(
            "at least one operator (machine-config)".into(),
        ));
    }
    if config.pools == 0 {
        return Err(SimError::Config("at least one pool (master)".into()));
    }
    if config.step <= SignedDuration::ZERO {
        return Err(SimError::Config(
            "the simulated step must be positive".into(),
        ));
    }
    if config.from_version == config.to_version {
        return Err(SimError::Config("from and to versions are equal".into()));
    }
    Ok(())
}

/// The ClusterVersion at `from_version`: installed at `installed_version`, updated once.
fn initial_cv(config: &SimConfig, past: Past) -> Cv {
    let from = &config.from_version;
    let Past {
        installed_at,
        from_completed,
        ..
    } = past;
    let mut cv = Cv {
        cluster_id: format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            fnv(config.seed, "id") as u32,
            fnv(config.seed, "a") as u16,
            fnv(config.seed, "b") as u16 & 0xfff,
            fnv(config.seed, "c") as u16 & 0xfff,
            fnv(config.seed, "d") & 0xffff_ffff_ffff
        ),
        desired_version: String::new(),
        desired_image: String::new(),
        desired_update: false,
        history: history(config, past),
        // Messages: `settle` below.
        available: Cond::new("Available", "True", "", "", from_completed),
        failing: Cond::new("Failing", "False", "", "", from_completed),
        progressing: Cond::new("Progressing", "False", "", "", from_completed),
        retrieved: Cond::new("RetrievedUpdates", "True", "", "", installed_at),
    };
    cv.desire(from);
    cv.settle(from, from_completed);
    cv
}

/// The platform operators at `from_version`, all well; `machine-config` last.
/// The ClusterVersion history before the update: the earlier updates of
/// [`super::Durations::history`], else one update to `from_version`; the installation last.
fn history(config: &SimConfig, past: Past) -> Vec<HistoryEntry> {
    let earlier = config
        .durations
        .as_ref()
        .map_or(&[][..], |d| &d.history[..]);
    let mut history: Vec<HistoryEntry> = if earlier.is_empty() {
        vec![HistoryEntry::new(
            "Completed",
            &config.from_version,
            past.from_started,
            Some(past.from_completed),
        )]
    } else {
        earlier
            .iter()
            .map(|h| {
                HistoryEntry::new(
                    "Completed",
                    &h.version,
                    h.started.as_second(),
                    Some(h.completed.as_second()),
                )
            })
            .collect()
    };
    history.push(HistoryEntry::new(
        "Completed",
        &config.installed_version,
        past.installed_at,
        Some(past.installed_at + 45 * 60),
    ));
    history
}

fn initial_operators(config: &SimConfig, past: Past) -> Vec<Operator> {
    let at = past.from_completed;
    let mut names: Vec<String> = OPERATORS
        .iter()
        .take(config.operators - 1)
        .map(|s| s.to_string())
        .collect();
    for i in names.len()..config.operators - 1 {
        names.push(format!("operator-{:02}", i + 1));
    }
    names.push(MACHINE_CONFIG.to_string());
    names
        .into_iter()
        .map(|name| Operator {
            available: Cond::new("Available", "True", ALL_IS_WELL.0, ALL_IS_WELL.1, at),
            degraded: Cond::new("Degraded", "False", "AsExpected", "", at),
            progressing: Cond::new("Progressing", "False", ALL_IS_WELL.0, ALL_IS_WELL.1, at),
            upgradeable: Cond::new("Upgradeable", "True", "AsExpected", "", at),
            name,
            version: config.from_version.clone(),
            phase: OpPhase::Waiting,
        })
        .collect()
}

/// Name of pool `p`: `master`, `worker`, then the custom pools.
fn pool_name(p: usize) -> String {
    match p {
        0 => "master".to_string(),
        1 => "worker".to_string(),
        n => CUSTOM_POOLS
            .get(n - 2)
            .map_or_else(|| format!("pool-{n}"), |s| s.to_string()),
    }
}

/// Node `g` (cluster-wide index) of pool `p`, on `old_config`, ready.
fn initial_node(g: usize, p: usize, pool: &str, old_config: &str, past: Past) -> SimNode {
    let name = format!(
        "ip-10-0-{}-{}.us-east-2.compute.internal",
        16 + g / 250,
        g % 250 + 2
    );
    let mut labels = BTreeMap::from([
        ("kubernetes.io/arch".to_string(), "amd64".to_string()),
        ("kubernetes.io/hostname".to_string(), name.clone()),
        ("kubernetes.io/os".to_string(), "linux".to_string()),
        (
            "topology.kubernetes.io/zone".to_string(),
            format!("us-east-2{}", ['a', 'b', 'c'][g % 3]),
        ),
    ]);
    if p == 0 {
        labels.insert(format!("{ROLE_PREFIX}master"), String::new());
        labels.insert(format!("{ROLE_PREFIX}control-plane"), String::new());
    } else {
        labels.insert(format!("{ROLE_PREFIX}worker"), String::new());
        if p >= 2 {
            labels.insert(format!("{ROLE_PREFIX}{pool}"), String::new());
        }
    }
    SimNode {
        name,
        pool: p,
        labels,
        current_config: old_config.to_string(),
        desired_config: old_config.to_string(),
        state: "Done",
        reason: String::new(),
        desired_drain: format!("uncordon-{old_config}"),
        last_applied_drain: format!("uncordon-{old_config}"),
        unschedulable: false,
        ready: Cond::new(
            "Ready",
            "True",
            KUBELET_READY.0,
            KUBELET_READY.1,
            past.from_completed,
        ),
        heartbeat: past.start,
        since: past.installed_at,
        step: NodeStep::Pending,
        left: 0,
    }
}
