//! Proof that one composition serves both the controller and the offline CLI.
//!
//! Every fixture case (`testdata/oc-status`, with the captured alerts where there are some) and
//! every step of simulated updates (in memory: no API server, so this runs under a plain
//! `cargo test`) goes through
//! - the controller's path: the pieces exactly as the reconcilers compose them (the
//!   control-plane share with its own master-pool counts; the worker-pools share with its
//!   per-node cache, kept across the steps of a simulation; the alerts share fed from the
//!   control-plane and pool objects as the alerts reconciler reads them), and
//! - the offline path: [`compose::desired_cluster`] (what `kubectl update-status --from-dir`
//!   and the fixture tests run),
//!
//! and both must give the same desired objects: names, labels, owner references and status.
//! "What our objects already say" is, at each step, what the previous step's desired objects
//! were (as if written), so the carry-over rules are exercised too.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus, UpdateInsight, UpdateInsightStatus,
    WorkerPoolUpdateStatus, WorkerPoolUpdateStatusStatus,
};
use update_status_api::input::{
    Alert, ClusterOperator, ClusterVersion, Node, Pod, PodDisruptionBudget,
};
use update_status_assess::compose::{
    self, AlertsPoll, Desired, Existing, ExistingInsights, Labels,
};
use update_status_assess::incremental::{PoolInputs, WorkerPools};
use update_status_assess::related::DrainEvidence;
use update_status_assess::{ClusterInputs, order};
use update_status_simulator::{FaultSpec, Faults, SimConfig, SimInputs, Simulation};
use update_status_snapshot::Snapshot;

/// The desired objects, by name.
#[derive(Debug, Default, PartialEq)]
struct Objects {
    control_plane: Option<Desired<ControlPlaneUpdateStatusStatus>>,
    worker_pools: BTreeMap<String, Desired<WorkerPoolUpdateStatusStatus>>,
    insights: BTreeMap<String, Desired<UpdateInsightStatus>>,
}

impl Objects {
    fn new<'a>(
        control_plane: Option<Desired<ControlPlaneUpdateStatusStatus>>,
        worker_pools: impl IntoIterator<Item = &'a Desired<WorkerPoolUpdateStatusStatus>>,
        insights: impl IntoIterator<Item = &'a Desired<UpdateInsightStatus>>,
    ) -> Self {
        let mut out = Objects {
            control_plane,
            ..Default::default()
        };
        for d in worker_pools {
            assert!(
                out.worker_pools.insert(d.name.clone(), d.clone()).is_none(),
                "two WorkerPoolUpdateStatuses named {}",
                d.name
            );
        }
        for d in insights {
            assert!(
                out.insights.insert(d.name.clone(), d.clone()).is_none(),
                "two UpdateInsights named {}",
                d.name
            );
        }
        out
    }
}

/// Our objects as the API would hold them after writing `objects` (with uids).
#[derive(Default)]
struct Ours {
    control_plane: Option<ControlPlaneUpdateStatus>,
    worker_pools: Vec<Arc<WorkerPoolUpdateStatus>>,
    insights: Vec<Arc<UpdateInsight>>,
}

impl Ours {
    fn written(objects: &Objects) -> Self {
        let meta = |name: &str| ObjectMeta {
            name: Some(name.to_string()),
            uid: Some(format!("uid-ours-{name}")),
            ..Default::default()
        };
        Ours {
            control_plane: objects.control_plane.as_ref().map(|d| {
                let mut o = ControlPlaneUpdateStatus::new(&d.name, Default::default());
                o.metadata = meta(&d.name);
                o.status = Some(d.status.clone());
                o
            }),
            worker_pools: objects
                .worker_pools
                .values()
                .map(|d| {
                    let mut o = WorkerPoolUpdateStatus::new(&d.name, Default::default());
                    o.metadata = meta(&d.name);
                    o.status = Some(d.status.clone());
                    Arc::new(o)
                })
                .collect(),
            insights: objects
                .insights
                .values()
                .map(|d| {
                    let mut o = UpdateInsight::new(&d.name, Default::default());
                    o.metadata = meta(&d.name);
                    o.status = Some(d.status.clone());
                    Arc::new(o)
                })
                .collect(),
        }
    }
}

/// Owned inputs, as the watch caches hold them (nodes behind `Arc`s, with resourceVersions).
struct Inputs {
    cluster_version: Option<ClusterVersion>,
    cluster_operators: Vec<ClusterOperator>,
    pools: Vec<update_status_api::input::MachineConfigPool>,
    machine_configs: Vec<update_status_api::input::MachineConfig>,
    nodes: Vec<Arc<Node>>,
    nodes_owned: Vec<Node>,
    alerts: Option<Vec<Alert>>,
    mco_image: Option<String>,
    pods: Vec<Pod>,
    budgets: Vec<PodDisruptionBudget>,
}

/// An API server's identity of an object: a uid from its name, a resourceVersion from its
/// content (what the per-node cache keys on).
fn identify(meta: &mut ObjectMeta, kind: &str, content: &impl serde::Serialize) {
    let name = meta.name.clone().unwrap_or_default();
    meta.uid.get_or_insert_with(|| format!("uid-{kind}-{name}"));
    meta.resource_version = None;
    let mut h = DefaultHasher::new();
    serde_json::to_string(content)
        .expect("inputs serialize")
        .hash(&mut h);
    meta.resource_version = Some(h.finish().to_string());
}

impl Inputs {
    #[allow(clippy::too_many_arguments)]
    fn new(
        mut cluster_version: Option<ClusterVersion>,
        mut cluster_operators: Vec<ClusterOperator>,
        mut pools: Vec<update_status_api::input::MachineConfigPool>,
        machine_configs: Vec<update_status_api::input::MachineConfig>,
        mut nodes: Vec<Node>,
        alerts: Option<Vec<Alert>>,
        mco_image: Option<String>,
    ) -> Self {
        if let Some(cv) = cluster_version.as_mut() {
            let c = cv.clone();
            identify(&mut cv.metadata, "cv", &c);
        }
        for o in &mut cluster_operators {
            let c = o.clone();
            identify(&mut o.metadata, "co", &c);
        }
        for o in &mut pools {
            let c = o.clone();
            identify(&mut o.metadata, "pool", &c);
        }
        for o in &mut nodes {
            let c = o.clone();
            identify(&mut o.metadata, "node", &c);
        }
        Inputs {
            cluster_version,
            cluster_operators,
            pools,
            machine_configs,
            nodes: nodes.iter().cloned().map(Arc::new).collect(),
            nodes_owned: nodes,
            alerts,
            mco_image,
            pods: Vec::new(),
            budgets: Vec::new(),
        }
    }

    fn from_snapshot(snap: &Snapshot) -> Self {
        Inputs {
            pods: snap.pods.clone(),
            budgets: snap.pod_disruption_budgets.clone(),
            ..Inputs::new(
                snap.cluster_version.clone(),
                snap.cluster_operators.clone(),
                snap.machine_config_pools.clone(),
                snap.machine_configs.clone(),
                snap.nodes.clone(),
                snap.alerts.as_ref().map(|a| a.data.alerts.clone()),
                snap.mco_image.clone(),
            )
        }
    }

    fn from_simulation(sim: &SimInputs) -> Self {
        Inputs::new(
            Some(sim.cluster_version.clone()),
            sim.cluster_operators.clone(),
            sim.pools.clone(),
            sim.machine_configs.clone(),
            sim.nodes.clone(),
            None,
            None,
        )
    }

    /// The whole-cluster view the offline path reads.
    fn cluster(&self) -> ClusterInputs<'_> {
        ClusterInputs {
            cluster_version: self.cluster_version.as_ref(),
            cluster_operators: &self.cluster_operators,
            pools: &self.pools,
            machine_configs: &self.machine_configs,
            nodes: &self.nodes_owned,
            mco_image: self.mco_image.as_deref().into(),
            alerts: self.alerts.as_deref(),
            pods: &self.pods,
            pod_disruption_budgets: &self.budgets,
        }
    }
}

/// The controller's path: the reconcilers' pure parts, with the worker-pools share kept
/// between passes.
#[derive(Default)]
struct Controller {
    worker_pools: WorkerPools,
}

impl Controller {
    fn pass(&mut self, inputs: &Inputs, ours: &Ours, base: &Labels, now: Timestamp) -> Objects {
        // Control-plane reconciler: operators in API order, master counts from the node cache.
        let mut cos = inputs.cluster_operators.clone();
        cos.reverse();
        cos.sort_by(order::compare_operators);
        let cp_inputs = ClusterInputs {
            cluster_version: inputs.cluster_version.as_ref(),
            cluster_operators: &cos,
            pools: &inputs.pools,
            machine_configs: &inputs.machine_configs,
            mco_image: inputs.mco_image.as_deref().into(),
            ..Default::default()
        };
        let cp = compose::control_plane_share(
            &cp_inputs,
            inputs.nodes.iter().map(|n| n.as_ref()),
            ours.control_plane.as_ref().and_then(|c| c.status.as_ref()),
            compose::Naming {
                existing: &ExistingInsights::new(&ours.insights),
                base,
            },
            now,
        );
        // Worker-pools reconciler: its drain evidence is the pods and budgets it looked up
        // (here: the inputs') and the PodDisruptionBudget alerts of our alert insights.
        self.worker_pools.update(
            PoolInputs {
                cluster_version: inputs.cluster_version.as_ref(),
                pools: &inputs.pools,
                machine_configs: &inputs.machine_configs,
                nodes: &inputs.nodes,
            },
            &Existing {
                control_plane: None,
                worker_pools: &ours.worker_pools,
                insights: ExistingInsights::new(&ours.insights),
            },
            base,
            now,
        );
        let evidence = DrainEvidence {
            alerts: update_status_assess::alerts::pdb_alerts_of_insights(
                ours.insights.iter().filter_map(|o| o.status.as_ref()),
            ),
            ..DrainEvidence::from_inputs(&inputs.pods, &inputs.budgets, None)
        };
        // Alerts reconciler: reads the control-plane and pool objects from its caches (here:
        // as just written, with the uid the API gave the ControlPlaneUpdateStatus).
        let cp_object = cp.status.as_ref().map(|d| {
            let mut o = ControlPlaneUpdateStatus::new(&d.name, Default::default());
            o.metadata.name = Some(d.name.clone());
            o.metadata.uid = Some(format!("uid-ours-{}", d.name));
            o
        });
        let alerts = match &inputs.alerts {
            Some(firing) => compose::alerts_share(
                cp.status
                    .as_ref()
                    .map(|d| (&d.status, cp_object.as_ref().and_then(compose::owner_of))),
                self.worker_pools.statuses().iter().map(|d| &d.status),
                AlertsPoll {
                    firing: Some(firing),
                    unavailable: None,
                    malformed: None,
                },
                compose::Naming {
                    existing: &ExistingInsights::new(&ours.insights),
                    base,
                },
                now,
            ),
            None => Vec::new(),
        };
        let worker_pool_insights: Vec<Desired<UpdateInsightStatus>> = self
            .worker_pools
            .insights(&ours.insights, &evidence)
            .collect();
        Objects::new(
            cp.status,
            self.worker_pools.statuses(),
            cp.insights
                .iter()
                .chain(&worker_pool_insights)
                .chain(&alerts),
        )
    }
}

/// The offline path.
fn offline(inputs: &Inputs, ours: &Ours, base: &Labels, now: Timestamp) -> Objects {
    // The alert insights' owner: our ControlPlaneUpdateStatus as the API holds it.
    let cp = ours.control_plane.clone().or_else(|| {
        let mut o = ControlPlaneUpdateStatus::new("cluster", Default::default());
        o.metadata.uid = Some("uid-ours-cluster".into());
        Some(o)
    });
    let existing = Existing {
        control_plane: cp.as_ref(),
        worker_pools: &ours.worker_pools,
        insights: ExistingInsights::new(&ours.insights),
    };
    let desired = compose::desired_cluster(&inputs.cluster(), &existing, base, now);
    Objects::new(
        desired.control_plane,
        &desired.worker_pools,
        &desired.insights,
    )
}

/// Differences, named (empty: the same).
fn differences(controller: &Objects, offline: &Objects) -> Vec<String> {
    let mut d = Vec::new();
    if controller.control_plane != offline.control_plane {
        d.push(format!(
            "ControlPlaneUpdateStatus:\n  controller {:?}\n  offline    {:?}",
            controller.control_plane, offline.control_plane
        ));
    }
    fn compare<S: PartialEq + std::fmt::Debug>(
        kind: &str,
        a: &BTreeMap<String, Desired<S>>,
        b: &BTreeMap<String, Desired<S>>,
        d: &mut Vec<String>,
    ) {
        for (name, x) in a {
            match b.get(name) {
                Some(y) if x == y => {}
                Some(y) => d.push(format!(
                    "{kind} {name}:\n  controller {x:?}\n  offline    {y:?}"
                )),
                None => d.push(format!("{kind} {name}: only on the controller's path")),
            }
        }
        for name in b.keys().filter(|n| !a.contains_key(*n)) {
            d.push(format!("{kind} {name}: only on the offline path"));
        }
    }
    compare(
        "WorkerPoolUpdateStatus",
        &controller.worker_pools,
        &offline.worker_pools,
        &mut d,
    );
    compare(
        "UpdateInsight",
        &controller.insights,
        &offline.insights,
        &mut d,
    );
    d
}

fn assert_same(what: &str, controller: &Objects, offline: &Objects) {
    let d = differences(controller, offline);
    assert!(d.is_empty(), "{what}: the paths differ:\n{}", d.join("\n"));
}

#[test]
fn every_fixture_gives_the_same_objects_on_both_paths() {
    let base = compose::base_labels(Some("0f1c6c7e-cluster-id"));
    let cases = update_status_testdata::all_oc_cases();
    assert!(
        cases.len() >= 8,
        "expected the 8 fixtures, saw {}",
        cases.len()
    );
    let mut objects = 0;
    for dir in cases {
        let snap = Snapshot::from_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
        let now = snap
            .now
            .or_else(|| snap.derived_now())
            .unwrap_or_else(|| panic!("{}: no instant", dir.display()));
        let inputs = Inputs::from_snapshot(&snap);
        let mut controller = Controller::default();
        // First pass (nothing of ours yet), then the steady state a minute later (our objects
        // as written: the carry-over applies).
        let mut ours = Ours::default();
        for (pass, at) in [(1, now), (2, now + SignedDuration::from_mins(1))] {
            let c = controller.pass(&inputs, &ours, &base, at);
            let o = offline(&inputs, &ours, &base, at);
            assert_same(&format!("{} pass {pass}", dir.display()), &c, &o);
            assert!(
                c.insights.values().all(|d| !d.labels.is_empty()),
                "every insight is labelled"
            );
            objects += c.insights.len() + c.worker_pools.len();
            ours = Ours::written(&c);
        }
        if snap.cluster_version.is_some() {
            let cp = ours.control_plane.as_ref().expect("a control-plane status");
            assert_eq!(cp.metadata.name.as_deref(), Some("cluster"));
        }
    }
    assert!(objects > 100, "the fixtures give objects ({objects})");
}

fn simulate(config: SimConfig) -> (u64, usize) {
    let base = compose::base_labels(Some("sim-cluster"));
    let mut sim = Simulation::new(config).expect("simulation");
    let mut controller = Controller::default();
    let mut ours = Ours::default();
    let mut owned = 0;
    loop {
        let step = sim.steps();
        let inputs = Inputs::from_simulation(&sim.inputs().expect("inputs"));
        let now = sim.now();
        let c = controller.pass(&inputs, &ours, &base, now);
        let o = offline(&inputs, &ours, &base, now);
        assert_same(&format!("step {step}"), &c, &o);
        owned = owned.max(c.insights.values().filter(|d| d.owner.is_some()).count());
        ours = Ours::written(&c);
        if sim.is_completed() {
            return (step, owned);
        }
        assert!(step < 400, "the simulated update did not complete");
        sim.step();
    }
}

#[test]
fn every_step_of_simulated_updates_gives_the_same_objects_on_both_paths() {
    let start: Timestamp = "2026-01-01T03:00:00Z".parse().expect("timestamp");
    // As the e2e simulated update: a drain blocked by a PodDisruptionBudget.
    let (steps, owned) = simulate(SimConfig {
        operators: 5,
        pools: 2,
        masters: 3,
        nodes_per_pool: 7,
        seed: 3,
        start,
        faults: Faults {
            blocked_drain: Some(FaultSpec::auto(3)),
            ..Default::default()
        },
        ..Default::default()
    });
    assert!(steps > 10, "a real update ({steps} steps)");
    assert!(owned > 10, "insights are owned ({owned})");
    // A custom pool, a paused pool, a node not ready and a degraded operator: health insights
    // whose start is carried over, and pool-level insights.
    let (steps, _) = simulate(SimConfig {
        operators: 8,
        pools: 3,
        masters: 3,
        nodes_per_pool: 5,
        seed: 7,
        start,
        faults: Faults {
            paused_pool: Some(FaultSpec::auto(4)),
            not_ready_node: Some(FaultSpec::auto(8)),
            degraded_operator: Some(FaultSpec::auto(3)),
            ..Default::default()
        },
        ..Default::default()
    });
    assert!(steps > 10, "a real update ({steps} steps)");
}
