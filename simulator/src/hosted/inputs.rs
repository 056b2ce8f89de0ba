//! The simulated hosted cluster as the controller reads it (the objects the API would return).

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use update_status_api::hosted::{HostedCluster, Machine, MachineDeployment, MachineSet, NodePool};
use update_status_api::input::Node;
use update_status_assess::hosted::{GuestInputs, HostedInputs};

use super::super::error::SimError;
use super::super::state::ts;
use super::state::{HostedRef, HostedSimulation, Part};

/// The inputs of one hosted cluster, as the controller reads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostedSimInputs {
    /// The HostedCluster.
    pub hosted_cluster: HostedCluster,
    /// Its NodePools, by name.
    pub node_pools: Vec<NodePool>,
    /// The Machines in the control-plane namespace, by name.
    pub machines: Vec<Machine>,
    /// The MachineSets there.
    pub machine_sets: Vec<MachineSet>,
    /// The MachineDeployments there.
    pub machine_deployments: Vec<MachineDeployment>,
    /// The hosted cluster's Nodes (the guest view; never read from the management cluster).
    pub guest_nodes: Vec<Node>,
}

impl HostedSimInputs {
    /// Borrowed as the pure logic takes them; `guest`: with the hosted Nodes (as with
    /// `--hosted-kubeconfig-access`), else the management cluster's view only.
    pub fn as_hosted_inputs(&self, guest: bool) -> HostedInputs<'_> {
        HostedInputs {
            hosted_cluster: &self.hosted_cluster,
            node_pools: &self.node_pools,
            machines: &self.machines,
            machine_sets: &self.machine_sets,
            machine_deployments: &self.machine_deployments,
            guest: guest.then_some(GuestInputs {
                cluster_operators: &[],
                nodes: &self.guest_nodes,
                reported: Default::default(),
            }),
            guest_unreachable: None,
        }
    }
}

/// An object from its two parts (metadata and spec; status).
fn merged(main: Option<Value>, status: Option<Value>) -> Value {
    let mut v = main.unwrap_or_else(|| json!({}));
    if let Some(s) = status.and_then(|s| s.get("status").cloned()) {
        v["status"] = s;
    }
    v
}

fn decode<K: DeserializeOwned>(what: String, v: Value) -> Result<K, SimError> {
    serde_json::from_value(v).map_err(|source| SimError::Json { what, source })
}

impl HostedSimulation {
    fn object(&self, r: HostedRef) -> Value {
        merged(self.render(r, Part::Main), self.render(r, Part::Status))
    }

    /// The inputs as the controller would read them now (creation and deletion timestamps
    /// are simulated instants; an API server sets its own).
    pub fn inputs(&self) -> Result<HostedSimInputs, SimError> {
        let hosted_cluster = decode(
            "the HostedCluster".into(),
            self.object(HostedRef::HostedCluster),
        )?;
        let mut node_pools = Vec::new();
        for p in 0..self.pools.len() {
            node_pools.push(decode(
                format!("NodePool {p}"),
                self.object(HostedRef::NodePool(p)),
            )?);
        }
        node_pools.sort_by(|a: &NodePool, b| a.metadata.name.cmp(&b.metadata.name));
        let mut machines = Vec::new();
        for (i, m) in self.machines.iter().enumerate().filter(|(_, m)| m.exists()) {
            let mut v = self.object(HostedRef::Machine(i));
            v["metadata"]["creationTimestamp"] = json!(ts(m.created));
            if let Some(t) = m.deleting_since {
                v["metadata"]["deletionTimestamp"] = json!(ts(t));
            }
            machines.push(decode::<Machine>(format!("Machine {}", m.name), v)?);
        }
        machines.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let mut guest_nodes = Vec::new();
        for n in self.render_guest_nodes() {
            guest_nodes.push(decode::<Node>("a hosted Node".into(), n)?);
        }
        guest_nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        Ok(HostedSimInputs {
            hosted_cluster,
            node_pools,
            machines,
            machine_sets: vec![decode(
                "the MachineSet".into(),
                self.object(HostedRef::MachineSet),
            )?],
            machine_deployments: vec![decode(
                "the MachineDeployment".into(),
                self.object(HostedRef::MachineDeployment),
            )?],
            guest_nodes,
        })
    }
}
