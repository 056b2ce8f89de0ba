//! [`DriftingCluster`] makes a series of updates of one cluster whose durations are
//! heterogeneous (operators of 30 s to 8 min, instance types that reboot at different speeds,
//! a few slow nodes) and drift between updates (the operators and the nodes each get slower or
//! faster as a random walk), with the incidents the estimates must live with: an operator much
//! slower than usual, a pool paused for an hour, a drain blocked by a PodDisruptionBudget that
//! clears. The estimates bench (`bench --estimates`) replays them.
//!
//! Clusters differ from each other too: each runs on a [`Platform`] (cloud virtual machines,
//! vSphere, bare metal, whose reboots take from 3 to 20 minutes) and carries its own workload,
//! which sets how long its drains take (a cluster-wide factor, log-normal around 1). The
//! reboot figures are assumptions of the order admins report (a cloud VM restarts in a few
//! minutes; a bare-metal server's firmware self-test alone can take ten), not measurements.

use jiff::SignedDuration;

use super::config::{FaultSpec, Faults, SimConfig};
use super::durations::{Durations, PastUpdate};
use super::state::Rng;

/// A standard normal sample (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u = |rng: &mut Rng| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (a, b) = (u(rng), u(rng));
    (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
}

/// Where a simulated cluster runs: what its nodes' reboots take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    /// Cloud virtual machines (AWS-like instance types).
    Cloud,
    /// vSphere virtual machines.
    VSphere,
    /// Bare-metal servers (no instance type label; two hardware generations).
    BareMetal,
}

impl Platform {
    /// Every platform.
    pub const ALL: [Platform; 3] = [Platform::Cloud, Platform::VSphere, Platform::BareMetal];

    /// The platform a seed draws: cloud for half the seeds, vSphere and bare metal for a
    /// quarter each.
    fn draw(rng: &mut Rng) -> Platform {
        match rng.next_u64() % 4 {
            0 | 1 => Platform::Cloud,
            2 => Platform::VSphere,
            _ => Platform::BareMetal,
        }
    }

    /// `cloud`, `vsphere` or `metal`.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Cloud => "cloud",
            Platform::VSphere => "vsphere",
            Platform::BareMetal => "metal",
        }
    }

    /// The platform named so (see [`Platform::name`]).
    pub fn parse(s: &str) -> Option<Platform> {
        Platform::ALL.into_iter().find(|p| p.name() == s)
    }

    /// Worker node kinds: `node.kubernetes.io/instance-type` (empty: none) and reboot seconds.
    pub fn worker_types(self) -> [(&'static str, f64); 2] {
        match self {
            Platform::Cloud => [("m6i.xlarge", 200.0), ("m6i.4xlarge", 420.0)],
            Platform::VSphere => [
                ("vsphere-vm.cpu-4.mem-16gb.os-unknown", 180.0),
                ("vsphere-vm.cpu-16.mem-64gb.os-unknown", 300.0),
            ],
            // Two server generations, told apart by nothing but their pace.
            Platform::BareMetal => [("", 720.0), ("", 1200.0)],
        }
    }

    /// The masters' kind (see [`Platform::worker_types`]).
    pub fn master_type(self) -> (&'static str, f64) {
        match self {
            Platform::Cloud => ("m6i.2xlarge", 300.0),
            Platform::VSphere => ("vsphere-vm.cpu-8.mem-32gb.os-unknown", 240.0),
            Platform::BareMetal => ("", 900.0),
        }
    }
}

/// Spread (log) of a cluster's drain factor: its workload (how many pods, their grace periods
/// and disruption budgets) makes every drain of the cluster shorter or longer.
pub const WORKLOAD_SIGMA: f64 = 0.5;

/// One cluster updated again and again (see the module documentation).
#[derive(Clone, Debug)]
pub struct DriftingCluster {
    seed: u64,
    base: SimConfig,
    platform: Platform,
    /// Each operator's usual duration (seconds).
    operator_base: Vec<f64>,
    /// Each node's usual drain, apply and reboot (seconds).
    node_base: Vec<[f64; 3]>,
    instance_types: Vec<String>,
    /// The operators' and the nodes' pace of each update (random walks).
    pace: Vec<(f64, f64)>,
}

/// What happens in one update of a [`DriftingCluster`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Incidents {
    /// An operator takes this many times its usual duration.
    pub slow_operator: Option<(usize, f64)>,
    /// The second pool is paused for this many steps when the pools start rolling.
    pub paused_steps: Option<u32>,
    /// A node's drain is blocked by a PodDisruptionBudget for this many steps.
    pub blocked_drain_steps: Option<u32>,
}

impl DriftingCluster {
    /// A cluster of `base`'s shape (operators, pools, nodes, step) whose durations are drawn
    /// from `seed`, for `updates` updates.
    pub fn new(seed: u64, base: SimConfig, updates: usize) -> Self {
        Self::build(seed, base, updates, None)
    }

    /// [`DriftingCluster::new`] on a given platform (the seed draws the rest).
    pub fn on(seed: u64, base: SimConfig, updates: usize, platform: Platform) -> Self {
        Self::build(seed, base, updates, Some(platform))
    }

    /// The platform this cluster runs on.
    pub fn platform(&self) -> Platform {
        self.platform
    }

    fn build(seed: u64, base: SimConfig, updates: usize, platform: Option<Platform>) -> Self {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED);
        // Drawn first, also when given, so that the rest of the cluster is the seed's either way.
        let drawn = Platform::draw(&mut rng);
        let platform = platform.unwrap_or(drawn);
        let workload = (WORKLOAD_SIGMA * normal(&mut rng)).exp();
        let operator_base = (0..base.operators)
            .map(|i| {
                // The first operators (etcd, kube-apiserver, ...) are the long ones.
                let median = if i < 2 { 300.0 } else { 75.0 };
                (median * (0.6 * normal(&mut rng)).exp()).clamp(30.0, 600.0)
            })
            .collect();
        let mut node_base = Vec::new();
        let mut instance_types = Vec::new();
        for i in 0..base.total_nodes() {
            let master = i < base.masters;
            let (itype, reboot) = if master {
                platform.master_type()
            } else {
                platform.worker_types()[(rng.next_u64() % 2) as usize]
            };
            // One node in eight drains slowly (long-lived pods, a big emptyDir).
            let slow = if rng.next_u64().is_multiple_of(8) {
                2.5
            } else {
                1.0
            };
            let drain = if master { 90.0 } else { 180.0 }
                * workload
                * slow
                * (0.25 * normal(&mut rng)).exp();
            let apply = 60.0 * (0.2 * normal(&mut rng)).exp();
            let reboot = reboot * (0.15 * normal(&mut rng)).exp();
            node_base.push([drain, apply, reboot]);
            instance_types.push(itype.to_string());
        }
        let mut pace = Vec::with_capacity(updates);
        let (mut ops, mut nodes) = (0.0f64, 0.0f64);
        for _ in 0..updates {
            pace.push((ops.exp(), nodes.exp()));
            ops += 0.18 * normal(&mut rng);
            nodes += 0.18 * normal(&mut rng);
        }
        DriftingCluster {
            seed,
            base,
            platform,
            operator_base,
            node_base,
            instance_types,
            pace,
        }
    }

    /// The incidents of update `k` (0-based): an operator 3–5× slower in every other update,
    /// the second pool paused for an hour in update 2 (then every 5th), a drain blocked for
    /// 30–60 minutes in update 3 (then every 5th), chosen by the seed otherwise.
    pub fn incidents(&self, k: usize) -> Incidents {
        let mut rng = Rng(self.seed ^ (k as u64).wrapping_mul(0xA24B_AED4_963E_E407));
        let steps_of = |secs: f64| (secs / self.step_secs()).round().max(1.0) as u32;
        Incidents {
            slow_operator: (k % 2 == 1).then(|| {
                let i = (rng.next_u64() % (self.base.operators.saturating_sub(1).max(1) as u64))
                    as usize;
                (i, 3.0 + f64::from(rng.range(0, 20)) / 10.0)
            }),
            paused_steps: (k % 5 == 2 && self.base.pools >= 2).then(|| steps_of(3600.0)),
            blocked_drain_steps: (k % 5 == 3 && self.base.pools >= 2)
                .then(|| steps_of(f64::from(rng.range(30, 60)) * 60.0)),
        }
    }

    fn step_secs(&self) -> f64 {
        (self.base.step.as_millis() as f64 / 1000.0).max(0.001)
    }

    /// Number of updates this cluster was made for.
    pub fn updates(&self) -> usize {
        self.pace.len()
    }

    /// The simulation of update `k`: versions `4.18.k → 4.18.(k+1)`, starting 30 days after
    /// the previous one, its durations and incidents, `history` (earlier updates, newest
    /// first) in its ClusterVersion.
    pub fn update(&self, k: usize, history: Vec<PastUpdate>) -> SimConfig {
        let (pace_ops, pace_nodes) = self.pace.get(k).copied().unwrap_or((1.0, 1.0));
        let mut rng =
            Rng(self.seed.rotate_left(17) ^ (k as u64 + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93));
        let step = self.step_secs();
        let steps = |secs: f64| (secs / step).round().max(1.0) as u32;
        let incidents = self.incidents(k);
        let operator_steps = self
            .operator_base
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let slow = match incidents.slow_operator {
                    Some((j, f)) if j == i => f,
                    _ => 1.0,
                };
                steps(b * pace_ops * slow * (0.2 * normal(&mut rng)).exp())
            })
            .collect();
        let node_steps = self
            .node_base
            .iter()
            .map(|b| {
                let mut s = [0u32; 3];
                for (k, v) in s.iter_mut().enumerate() {
                    *v = steps(b[k] * pace_nodes * (0.15 * normal(&mut rng)).exp());
                }
                s
            })
            .collect();
        let start = self
            .base
            .start
            .checked_add(SignedDuration::from_hours(24 * 30 * k as i64))
            .unwrap_or(self.base.start);
        let version = |k: usize| format!("4.18.{}", k + 2);
        let mut faults = Faults::default();
        if let Some(s) = incidents.paused_steps {
            faults.paused_pool = Some(FaultSpec::on("worker", s));
        }
        if let Some(s) = incidents.blocked_drain_steps {
            faults.blocked_drain = Some(FaultSpec::auto(s));
        }
        SimConfig {
            installed_version: "4.18.1".into(),
            from_version: version(k),
            to_version: version(k + 1),
            seed: self.seed.wrapping_add(k as u64),
            start,
            faults,
            durations: Some(Durations {
                operator_steps,
                node_steps,
                instance_types: self.instance_types.clone(),
                history,
            }),
            ..self.base.clone()
        }
    }
}
