//! The simulated cluster as the controller reads it.

use serde::de::DeserializeOwned;
use serde_json::Value;
use update_status_api::input::{
    ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool, McoDeployment, Node,
};
use update_status_assess::{ClusterInputs, McoImage};

use super::error::SimError;
use super::state::ObjectRef;
use super::state::Simulation;

/// The inputs of the simulated cluster, as the controller reads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimInputs {
    /// The ClusterVersion.
    pub cluster_version: ClusterVersion,
    /// ClusterOperators, by name.
    pub cluster_operators: Vec<ClusterOperator>,
    /// MachineConfigPools.
    pub pools: Vec<MachineConfigPool>,
    /// MachineConfigs.
    pub machine_configs: Vec<MachineConfig>,
    /// Nodes.
    pub nodes: Vec<Node>,
    /// The MCO Deployment (`None`: not there).
    pub mco_deployment: Option<McoDeployment>,
}

impl SimInputs {
    /// The same inputs with only the metadata the assessment reads (name, labels,
    /// annotations) and every list sorted by name: what to compare a simulation with what an
    /// API server holds.
    pub fn normalized(&self) -> SimInputs {
        fn meta(
            m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        ) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: m.name.clone(),
                labels: m.labels.clone().filter(|l| !l.is_empty()),
                annotations: m.annotations.clone().filter(|a| !a.is_empty()),
                ..Default::default()
            }
        }
        let mut out = self.clone();
        out.cluster_version.metadata = meta(&out.cluster_version.metadata);
        for o in &mut out.cluster_operators {
            o.metadata = meta(&o.metadata);
        }
        for o in &mut out.pools {
            o.metadata = meta(&o.metadata);
        }
        for o in &mut out.machine_configs {
            o.metadata = meta(&o.metadata);
        }
        for o in &mut out.nodes {
            o.metadata = meta(&o.metadata);
        }
        // Only its name (the deployment controller annotates it with its revision).
        if let Some(d) = out.mco_deployment.as_mut() {
            d.metadata = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: d.metadata.name.clone(),
                ..Default::default()
            };
        }
        out.cluster_operators
            .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        out.pools
            .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        out.machine_configs
            .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        out.nodes
            .sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        out
    }

    /// Borrowed view for [`update_status_assess`], with the MCO image as the
    /// controller reads it ([`McoImage::of_deployment`]).
    pub fn as_cluster_inputs(&self) -> ClusterInputs<'_> {
        ClusterInputs {
            cluster_version: Some(&self.cluster_version),
            cluster_operators: &self.cluster_operators,
            pools: &self.pools,
            machine_configs: &self.machine_configs,
            nodes: &self.nodes,
            mco_image: McoImage::of_deployment(self.mco_deployment.as_ref()),
            ..Default::default()
        }
    }
}

impl Simulation {
    /// The inputs as the controller reads them.
    pub fn inputs(&self) -> Result<SimInputs, SimError> {
        fn read<T: DeserializeOwned>(sim: &Simulation, r: ObjectRef) -> Result<T, SimError> {
            let v = sim.object(r).unwrap_or(Value::Null);
            serde_json::from_value(v).map_err(|source| SimError::Json {
                what: format!("{r:?}"),
                source,
            })
        }
        let mut inputs = SimInputs {
            cluster_version: read(self, ObjectRef::ClusterVersion)?,
            ..Default::default()
        };
        for r in self.object_refs() {
            match r {
                ObjectRef::MachineConfig(_) => inputs.machine_configs.push(read(self, r)?),
                ObjectRef::Pool(_) => inputs.pools.push(read(self, r)?),
                ObjectRef::Operator(_) => inputs.cluster_operators.push(read(self, r)?),
                ObjectRef::Node(_) => inputs.nodes.push(read(self, r)?),
                ObjectRef::McoDeployment => inputs.mco_deployment = Some(read(self, r)?),
                ObjectRef::ClusterVersion => {}
            }
        }
        inputs
            .cluster_operators
            .sort_by(|a, b| a.name().cmp(b.name()));
        Ok(inputs)
    }

    /// One node as the controller reads it.
    pub fn node_input(&self, index: usize) -> Result<Node, SimError> {
        let v = self.object(ObjectRef::Node(index)).unwrap_or(Value::Null);
        serde_json::from_value(v).map_err(|source| SimError::Json {
            what: format!("node #{index}"),
            source,
        })
    }
}
