//! Applying a [`Simulation`] to a real API server: server-side apply of what each step
//! changed (status through the status subresource), reading the simulated kinds back, and
//! clearing them.

use std::collections::BTreeMap;
use std::fmt;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::json;
use update_status_api::input::{
    ClusterOperator, ClusterVersion, MCO_DEPLOYMENT, MCO_NAMESPACE, MachineConfig,
    MachineConfigPool, McoDeployment, Node,
};

use update_status_simulator::{ObjectRef, Part, SimInputs, Simulation, StepReport};

use crate::playback::error::{FIELD_MANAGER, PlaybackError};

/// The five cluster-scoped kinds the simulator lists, applies and deletes.
trait ClusterObject:
    Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
    + Clone
    + fmt::Debug
    + DeserializeOwned
{
}

impl ClusterObject for ClusterVersion {}
impl ClusterObject for ClusterOperator {}
impl ClusterObject for MachineConfigPool {}
impl ClusterObject for MachineConfig {}
impl ClusterObject for Node {}

/// Default number of concurrent requests.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// A [`Simulation`] bound to an API server: writes what each step changes.
pub struct Simulator {
    sim: Simulation,
    client: Client,
    concurrency: usize,
    writes: u64,
    /// Every object exists (after [`Simulator::install`]): a status may be written first.
    installed: bool,
}

async fn apply<K: ClusterObject>(
    client: &Client,
    name: &str,
    part: Part,
    body: &Value,
) -> Result<(), PlaybackError> {
    let api: Api<K> = Api::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let result = match part {
        Part::Main => api.patch(name, &params, &Patch::Apply(body)).await,
        Part::Status => api.patch_status(name, &params, &Patch::Apply(body)).await,
    };
    result.map(drop).map_err(|source| PlaybackError::Api {
        action: format!(
            "applying {} {name}{}",
            K::kind(&()),
            if part == Part::Status { " status" } else { "" }
        ),
        source: Box::new(source),
    })
}

/// Applies the MCO Deployment (namespaced, no status).
async fn apply_mco_deployment(client: &Client, body: &Value) -> Result<(), PlaybackError> {
    let api: Api<McoDeployment> = Api::namespaced(client.clone(), MCO_NAMESPACE);
    api.patch(
        MCO_DEPLOYMENT,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(body),
    )
    .await
    .map(drop)
    .map_err(|source| PlaybackError::Api {
        action: format!("applying Deployment {MCO_NAMESPACE}/{MCO_DEPLOYMENT}"),
        source: Box::new(source),
    })
}

impl Simulator {
    /// Binds a simulation to a client.
    pub fn new(client: Client, sim: Simulation) -> Self {
        Simulator {
            sim,
            client,
            concurrency: DEFAULT_CONCURRENCY,
            writes: 0,
            installed: false,
        }
    }

    /// Sets how many requests run at once.
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// The simulation.
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// The simulation, to change it (then [`Simulator::flush`]).
    pub fn simulation_mut(&mut self) -> &mut Simulation {
        &mut self.sim
    }

    /// Writes made so far.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Writes every object (creating the cluster, and the MCO Deployment's namespace).
    pub async fn install(&mut self) -> Result<usize, PlaybackError> {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let body =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": MCO_NAMESPACE}});
        namespaces
            .patch(
                MCO_NAMESPACE,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&body),
            )
            .await
            .map_err(|source| PlaybackError::Api {
                action: format!("applying Namespace {MCO_NAMESPACE}"),
                source: Box::new(source),
            })?;
        self.sim.mark_all_dirty();
        self.installed = false;
        let writes = self.flush().await?;
        self.installed = true;
        Ok(writes)
    }

    /// One step: [`Simulation::step`], then the changed objects are written.
    pub async fn step(&mut self) -> Result<StepReport, PlaybackError> {
        let report = self.sim.step();
        self.flush().await?;
        Ok(report)
    }

    /// Writes the changed object parts: kind by kind (MachineConfigs, pools, ClusterVersion,
    /// operators, nodes), the objects of a kind concurrently, each object's status after its
    /// metadata and spec, or before them once installed if [`Simulation::status_first`].
    /// Returns the number of writes.
    pub async fn flush(&mut self) -> Result<usize, PlaybackError> {
        let dirty = self.sim.take_dirty();
        let mut by_rank: BTreeMap<u8, BTreeMap<ObjectRef, Vec<Part>>> = BTreeMap::new();
        for (r, part) in dirty {
            by_rank
                .entry(r.rank())
                .or_default()
                .entry(r)
                .or_default()
                .push(part);
        }
        let mut total = 0;
        for (_, objects) in by_rank {
            let mut jobs = Vec::with_capacity(objects.len());
            for (r, mut parts) in objects {
                // A status cannot be written before its object exists.
                if self.installed && self.sim.status_first(r) {
                    parts.reverse();
                }
                let name = self.sim.name_of(r).unwrap_or_default().to_string();
                let bodies: Vec<(Part, Value)> = parts
                    .into_iter()
                    .filter_map(|p| self.sim.render(r, p).map(|b| (p, b)))
                    .collect();
                jobs.push((r, name, bodies));
            }
            let client = self.client.clone();
            let counts: Vec<usize> = futures::stream::iter(jobs)
                .map(|(r, name, bodies)| {
                    let client = client.clone();
                    async move {
                        for (part, body) in &bodies {
                            match r {
                                ObjectRef::MachineConfig(_) => {
                                    apply::<MachineConfig>(&client, &name, *part, body).await?
                                }
                                ObjectRef::Pool(_) => {
                                    apply::<MachineConfigPool>(&client, &name, *part, body).await?
                                }
                                ObjectRef::ClusterVersion => {
                                    apply::<ClusterVersion>(&client, &name, *part, body).await?
                                }
                                ObjectRef::Operator(_) => {
                                    apply::<ClusterOperator>(&client, &name, *part, body).await?
                                }
                                ObjectRef::Node(_) => {
                                    apply::<Node>(&client, &name, *part, body).await?
                                }
                                ObjectRef::McoDeployment => {
                                    apply_mco_deployment(&client, body).await?
                                }
                            }
                        }
                        Ok::<usize, PlaybackError>(bodies.len())
                    }
                })
                .buffer_unordered(self.concurrency)
                .try_collect()
                .await?;
            total += counts.iter().sum::<usize>();
        }
        self.writes += total as u64;
        Ok(total)
    }
}

/// Deletes every ClusterVersion, ClusterOperator, MachineConfigPool, MachineConfig and Node
/// (one collection delete per kind) and the MCO Deployment (its namespace stays), and waits
/// until they are gone.
pub async fn clear(client: &Client) -> Result<(), PlaybackError> {
    async fn clear_kind<K: ClusterObject>(client: &Client) -> Result<(), PlaybackError> {
        let api: Api<K> = Api::all(client.clone());
        let err = |source| PlaybackError::Api {
            action: format!("deleting every {}", K::kind(&())),
            source: Box::new(source),
        };
        api.delete_collection(&DeleteParams::background(), &ListParams::default())
            .await
            .map_err(err)?;
        for _ in 0..600 {
            let left = api
                .list_metadata(&ListParams::default().limit(1))
                .await
                .map_err(err)?;
            if left.items.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        Ok(())
    }
    clear_kind::<Node>(client).await?;
    clear_kind::<ClusterOperator>(client).await?;
    clear_kind::<ClusterVersion>(client).await?;
    clear_kind::<MachineConfigPool>(client).await?;
    clear_kind::<MachineConfig>(client).await?;
    let mco: Api<McoDeployment> = Api::namespaced(client.clone(), MCO_NAMESPACE);
    mco.delete(MCO_DEPLOYMENT, &DeleteParams::default())
        .await
        .map(drop)
        .or_else(|e| match e {
            kube::Error::Api(s) if s.code == 404 => Ok(()),
            source => Err(PlaybackError::Api {
                action: format!("deleting Deployment {MCO_NAMESPACE}/{MCO_DEPLOYMENT}"),
                source: Box::new(source),
            }),
        })?;
    Ok(())
}

/// Reads the simulated cluster's inputs from an API server (every object of the five kinds).
pub async fn read_inputs(client: &Client) -> Result<SimInputs, PlaybackError> {
    async fn list<K: ClusterObject>(client: &Client) -> Result<Vec<K>, PlaybackError> {
        let api: Api<K> = Api::all(client.clone());
        api.list(&ListParams::default())
            .await
            .map(|l| l.items)
            .map_err(|source| PlaybackError::Api {
                action: format!("listing {}", K::kind(&())),
                source: Box::new(source),
            })
    }
    let cvs: Vec<ClusterVersion> = list(client).await?;
    let mco: Api<McoDeployment> = Api::namespaced(client.clone(), MCO_NAMESPACE);
    let mco_deployment =
        mco.get_opt(MCO_DEPLOYMENT)
            .await
            .map_err(|source| PlaybackError::Api {
                action: format!("reading Deployment {MCO_NAMESPACE}/{MCO_DEPLOYMENT}"),
                source: Box::new(source),
            })?;
    Ok(SimInputs {
        cluster_version: cvs
            .into_iter()
            .find(|c| c.metadata.name.as_deref() == Some("version"))
            .unwrap_or_default(),
        cluster_operators: list(client).await?,
        pools: list(client).await?,
        machine_configs: list(client).await?,
        nodes: list(client).await?,
        mco_deployment,
    })
}
