//! Applying a [`HostedSimulation`] to a real API server: server-side apply of what each step
//! changed (status through the status subresource), Machine deletes (the API server sets
//! `deletionTimestamp`; the finalizer keeps the Machine until the simulation releases it), and
//! reading a simulated hosted cluster back, and clearing it.

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use update_status_api::hosted::{
    HostedCluster, Machine, MachineDeployment, MachineSet, NodePool, control_plane_namespace,
};

use update_status_simulator::Part;
use update_status_simulator::hosted::{
    HostedRef, HostedSimInputs, HostedSimulation, HostedStepReport, Lifecycle,
};

use crate::playback::error::{FIELD_MANAGER, PlaybackError};

/// A [`HostedSimulation`] bound to an API server: writes what each step changes.
pub struct HostedSimulator {
    sim: HostedSimulation,
    client: Client,
    writes: u64,
}

trait Namespaced:
    Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + std::fmt::Debug
{
}
impl Namespaced for HostedCluster {}
impl Namespaced for NodePool {}
impl Namespaced for MachineDeployment {}
impl Namespaced for MachineSet {}
impl Namespaced for Machine {}

fn api_error(action: String) -> impl FnOnce(kube::Error) -> PlaybackError {
    move |source| PlaybackError::Api {
        action,
        source: Box::new(source),
    }
}

async fn apply<K: Namespaced>(
    client: &Client,
    ns: &str,
    name: &str,
    part: Part,
    body: &Value,
) -> Result<(), PlaybackError> {
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let result = match part {
        Part::Main => api.patch(name, &params, &Patch::Apply(body)).await,
        Part::Status => api.patch_status(name, &params, &Patch::Apply(body)).await,
    };
    result.map(drop).map_err(api_error(format!(
        "applying {} {ns}/{name}{}",
        K::kind(&()),
        if part == Part::Status { " status" } else { "" }
    )))
}

/// Deletes a Machine (it stays, deleting, while its finalizer holds it).
async fn delete_machine(client: &Client, ns: &str, name: &str) -> Result<(), PlaybackError> {
    let api: Api<Machine> = Api::namespaced(client.clone(), ns);
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(api_error(format!("deleting Machine {ns}/{name}"))(e)),
    }
}

/// Removes a Machine's finalizers: a deleting Machine is then gone.
async fn release_machine(client: &Client, ns: &str, name: &str) -> Result<(), PlaybackError> {
    let api: Api<Machine> = Api::namespaced(client.clone(), ns);
    let body = json!({"metadata": {"finalizers": null}});
    match api
        .patch(name, &PatchParams::default(), &Patch::Merge(&body))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(api_error(format!(
            "removing the finalizer of Machine {ns}/{name}"
        ))(e)),
    }
}

async fn ensure_namespace(client: &Client, name: &str) -> Result<(), PlaybackError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    api.patch(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
    .map(drop)
    .map_err(api_error(format!("applying Namespace {name}")))
}

impl HostedSimulator {
    /// Binds a simulation to a client.
    pub fn new(client: Client, sim: HostedSimulation) -> Self {
        HostedSimulator {
            sim,
            client,
            writes: 0,
        }
    }

    /// The simulation.
    pub fn simulation(&self) -> &HostedSimulation {
        &self.sim
    }

    /// Writes made so far.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Creates both namespaces and writes every object.
    pub async fn install(&mut self) -> Result<usize, PlaybackError> {
        ensure_namespace(&self.client, self.sim.namespace()).await?;
        ensure_namespace(&self.client, &self.sim.control_plane_namespace()).await?;
        self.sim.mark_all_dirty();
        self.flush().await
    }

    /// One step: [`HostedSimulation::step`], then the changes are written.
    pub async fn step(&mut self) -> Result<HostedStepReport, PlaybackError> {
        let report = self.sim.step();
        self.flush().await?;
        Ok(report)
    }

    /// Writes the changed object parts (HostedCluster, NodePools, MachineDeployment,
    /// MachineSet, Machines; each object's status after its metadata and spec), then the
    /// Machine deletes and finalizer releases. Returns the number of writes.
    pub async fn flush(&mut self) -> Result<usize, PlaybackError> {
        let (dirty, lifecycle) = self.sim.take_dirty();
        let ns = self.sim.namespace().to_string();
        let cp_ns = self.sim.control_plane_namespace();
        let mut n = 0;
        for (r, part) in dirty {
            let Some(body) = self.sim.render(r, part) else {
                continue;
            };
            let name = self.sim.name_of(r).unwrap_or_default().to_string();
            let c = &self.client;
            match r {
                HostedRef::HostedCluster => {
                    apply::<HostedCluster>(c, &ns, &name, part, &body).await?
                }
                HostedRef::NodePool(_) => apply::<NodePool>(c, &ns, &name, part, &body).await?,
                HostedRef::MachineDeployment => {
                    apply::<MachineDeployment>(c, &cp_ns, &name, part, &body).await?
                }
                HostedRef::MachineSet => apply::<MachineSet>(c, &cp_ns, &name, part, &body).await?,
                HostedRef::Machine(_) => apply::<Machine>(c, &cp_ns, &name, part, &body).await?,
            }
            n += 1;
        }
        for l in lifecycle {
            let (Lifecycle::Delete(i) | Lifecycle::Release(i)) = l;
            let name = self
                .sim
                .name_of(HostedRef::Machine(i))
                .unwrap_or_default()
                .to_string();
            match l {
                Lifecycle::Delete(_) => delete_machine(&self.client, &cp_ns, &name).await?,
                Lifecycle::Release(_) => release_machine(&self.client, &cp_ns, &name).await?,
            }
            n += 1;
        }
        self.writes += n as u64;
        Ok(n)
    }
}

/// Deletes HostedCluster `namespace/name`, its NodePools, and every Machine (finalizers
/// removed), MachineSet and MachineDeployment of its control-plane namespace; the namespaces
/// stay. Waits until they are gone.
pub async fn clear_hosted(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<(), PlaybackError> {
    let cp_ns = control_plane_namespace(namespace, name);
    let machines: Api<Machine> = Api::namespaced(client.clone(), &cp_ns);
    let listed = match machines.list_metadata(&ListParams::default()).await {
        Ok(l) => l.items,
        Err(kube::Error::Api(s)) if s.code == 404 => Vec::new(),
        Err(e) => return Err(api_error(format!("listing Machines in {cp_ns}"))(e)),
    };
    for m in listed {
        let n = m.metadata.name.unwrap_or_default();
        release_machine(client, &cp_ns, &n).await?;
    }
    async fn delete_all<K: Namespaced>(
        client: &Client,
        ns: &str,
        lp: &ListParams,
        keep: impl Fn(&K) -> bool,
    ) -> Result<(), PlaybackError> {
        let api: Api<K> = Api::namespaced(client.clone(), ns);
        let action = || format!("deleting {} in {ns}", K::kind(&()));
        let items = match api.list(lp).await {
            Ok(l) => l.items,
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
            Err(e) => return Err(api_error(action())(e)),
        };
        for o in items.iter().filter(|o| !keep(o)) {
            let n = o.meta().name.clone().unwrap_or_default();
            match api.delete(&n, &DeleteParams::background()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(api_error(action())(e)),
            }
        }
        for _ in 0..300 {
            let left = api.list(lp).await.map_err(api_error(action()))?;
            if left.items.iter().all(&keep) {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        Ok(())
    }
    let all = ListParams::default();
    delete_all::<Machine>(client, &cp_ns, &all, |_| false).await?;
    delete_all::<MachineSet>(client, &cp_ns, &all, |_| false).await?;
    delete_all::<MachineDeployment>(client, &cp_ns, &all, |_| false).await?;
    delete_all::<NodePool>(client, namespace, &all, |p: &NodePool| {
        p.spec.cluster_name != name
    })
    .await?;
    let by_name = ListParams::default().fields(&format!("metadata.name={name}"));
    delete_all::<HostedCluster>(client, namespace, &by_name, |_| false).await?;
    Ok(())
}

/// Reads the simulated inputs of HostedCluster `namespace/name` from an API server: the
/// HostedCluster, the NodePools of the namespace naming it, and every Machine, MachineSet
/// and MachineDeployment of its control-plane namespace (no guest Nodes).
pub async fn read_hosted_inputs(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<HostedSimInputs, PlaybackError> {
    async fn list<K>(client: &Client, ns: &str) -> Result<Vec<K>, PlaybackError>
    where
        K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
    {
        let api: Api<K> = Api::namespaced(client.clone(), ns);
        let mut items = api
            .list(&ListParams::default())
            .await
            .map_err(|source| PlaybackError::Api {
                action: format!("listing {} in {ns}", K::kind(&())),
                source: Box::new(source),
            })?
            .items;
        items.sort_by(|a, b| a.meta().name.cmp(&b.meta().name));
        Ok(items)
    }
    let hcs: Api<HostedCluster> = Api::namespaced(client.clone(), namespace);
    let hosted_cluster = hcs.get(name).await.map_err(|source| PlaybackError::Api {
        action: format!("reading HostedCluster {namespace}/{name}"),
        source: Box::new(source),
    })?;
    let cp_ns = control_plane_namespace(namespace, name);
    let node_pools: Vec<NodePool> = list::<NodePool>(client, namespace)
        .await?
        .into_iter()
        .filter(|p| p.spec.cluster_name == name)
        .collect();
    Ok(HostedSimInputs {
        hosted_cluster,
        node_pools,
        machines: list(client, &cp_ns).await?,
        machine_sets: list(client, &cp_ns).await?,
        machine_deployments: list(client, &cp_ns).await?,
        guest_nodes: Vec::new(),
    })
}
