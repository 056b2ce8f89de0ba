//! The simulated objects as the API holds them (server-side apply bodies): metadata and spec,
//! or status (written through the status subresource). Valid against the real HyperShift and
//! cluster-api CRDs (`testdata/hosted/crds/`): every required field is set, cluster-api
//! condition reasons and messages are omitted when empty (they must not be empty strings).

use serde_json::{Value, json};
use update_status_api::hosted::{
    CURRENT_CONFIG_VERSION_ANNOTATION, NODE_POOL_ANNOTATION, NODE_POOL_LABEL,
    RELEASE_VERSION_ANNOTATION, TARGET_CONFIG_VERSION_ANNOTATION,
};
use update_status_api::input::{
    NODE_CURRENT_CONFIG, NODE_DESIRED_CONFIG, NODE_DESIRED_DRAIN, NODE_LAST_APPLIED_DRAIN,
    NODE_STATE,
};

use super::super::state::{Cond, HistoryEntry, ts};
use super::state::{HostedRef, HostedSimulation, MachinePhase, Part, REPLACE, SimMachine};

/// API version of HostedCluster and NodePool.
pub const HYPERSHIFT_API: &str = "hypershift.openshift.io/v1beta1";
/// API version of the cluster-api objects (HyperShift reads them as v1beta1).
pub const CAPI_API: &str = "cluster.x-k8s.io/v1beta1";
/// cluster-api's Machine finalizer: a deleted Machine stays (deleting) until it is removed.
pub const MACHINE_FINALIZER: &str = "machine.cluster.x-k8s.io";
/// Agent platform infrastructure API version.
const AGENT_API: &str = "capi-provider.agent-install.openshift.io/v1beta1";

/// A cluster-api v1beta1 condition: reason and message only when set, severity only when
/// False (Warning for failures, else Info).
fn capi_condition(c: &Cond) -> Value {
    let mut v = json!({"type": c.type_, "status": c.status, "lastTransitionTime": ts(c.ltt)});
    if !c.reason.is_empty() {
        v["reason"] = json!(c.reason);
    }
    if !c.message.is_empty() {
        v["message"] = json!(c.message);
    }
    if c.status == "False" {
        v["severity"] = json!(if c.reason.ends_with("Failed") {
            "Warning"
        } else {
            "Info"
        });
    }
    v
}

fn history(h: &[HistoryEntry], verified: bool) -> Vec<Value> {
    h.iter()
        .map(|e| {
            let mut v = json!({
                "state": e.state,
                "startedTime": ts(e.started),
                "completionTime": e.completed.map(ts),
                "version": e.version,
                "image": e.image,
            });
            if verified {
                v["verified"] = json!(true);
            } else if e.completed.is_none() {
                // controlPlaneVersion's completionTime is optional, not nullable.
                if let Some(o) = v.as_object_mut() {
                    o.remove("completionTime");
                }
            }
            v
        })
        .collect()
}

impl HostedSimulation {
    fn pool_of(&self, p: usize) -> String {
        format!(
            "{}/{}",
            self.config.namespace,
            self.pools.get(p).map_or("", |p| p.name.as_str())
        )
    }

    /// The body to apply for one part of one object; `None` if it does not exist (or has no
    /// such part).
    pub fn render(&self, r: HostedRef, part: Part) -> Option<Value> {
        match (r, part) {
            (HostedRef::HostedCluster, Part::Main) => Some(self.hosted_cluster_main()),
            (HostedRef::HostedCluster, Part::Status) => Some(self.hosted_cluster_status()),
            (HostedRef::NodePool(p), Part::Main) => self.node_pool_main(p),
            (HostedRef::NodePool(p), Part::Status) => self.node_pool_status(p),
            (HostedRef::MachineDeployment | HostedRef::MachineSet, part) => {
                self.machine_owner(r == HostedRef::MachineSet, part)
            }
            (HostedRef::Machine(i), part) => {
                let m = self.machines.get(i).filter(|m| m.exists())?;
                Some(match part {
                    Part::Main => self.machine_main(m),
                    Part::Status => self.machine_status(m),
                })
            }
        }
    }

    fn hosted_cluster_main(&self) -> Value {
        let services: Vec<Value> = ["APIServer", "OAuthServer", "Konnectivity", "Ignition"]
            .map(|s| json!({"service": s, "servicePublishingStrategy": {"type": "Route"}}))
            .into();
        json!({
            "apiVersion": HYPERSHIFT_API,
            "kind": "HostedCluster",
            "metadata": {"name": self.config.name, "namespace": self.config.namespace},
            "spec": {
                "release": {"image": self.hc.spec_image},
                "infraID": self.infra_id,
                "pullSecret": {"name": format!("{}-pull-secret", self.config.name)},
                "etcd": {"managementType": "Managed", "managed": {"storage": {"type": "PersistentVolume"}}},
                "networking": {"networkType": "OVNKubernetes"},
                "platform": {"type": "Agent", "agent": {"agentNamespace": format!("{}-agents", self.config.namespace)}},
                "services": services,
            },
        })
    }

    fn hosted_cluster_status(&self) -> Value {
        let hc = &self.hc;
        let updates: Vec<Value> = hc
            .available_updates
            .iter()
            .map(|(v, i)| json!({"version": v, "image": i}))
            .collect();
        let cp_image = hc
            .cp_history
            .first()
            .map_or_else(String::new, |h| h.image.clone());
        json!({
            "apiVersion": HYPERSHIFT_API,
            "kind": "HostedCluster",
            "status": {
                "version": {
                    "desired": {"version": hc.desired_version, "image": hc.desired_image},
                    "history": history(&hc.history, true),
                    "observedGeneration": 1,
                    "availableUpdates": updates,
                },
                "controlPlaneVersion": {
                    "desired": {"version": hc.cp_desired_version, "image": cp_image},
                    "history": history(&hc.cp_history, false),
                    "observedGeneration": 1,
                },
                "conditions": hc.conditions.iter().map(Cond::json).collect::<Vec<_>>(),
            },
        })
    }

    fn node_pool_main(&self, p: usize) -> Option<Value> {
        let pool = self.pools.get(p)?;
        let management = if pool.in_place {
            json!({"upgradeType": "InPlace", "inPlace": {"maxUnavailable": self.config.in_place_max_unavailable.max(1)}})
        } else {
            json!({"upgradeType": "Replace", "replace": {"strategy": "RollingUpdate", "rollingUpdate": {
                "maxSurge": self.config.max_surge, "maxUnavailable": self.config.max_unavailable}}})
        };
        Some(json!({
            "apiVersion": HYPERSHIFT_API,
            "kind": "NodePool",
            "metadata": {"name": pool.name, "namespace": self.config.namespace},
            "spec": {
                "clusterName": self.config.name,
                "replicas": pool.replicas,
                "release": {"image": pool.spec_image},
                "management": management,
                "platform": {"type": "Agent"},
            },
        }))
    }

    fn node_pool_status(&self, p: usize) -> Option<Value> {
        let pool = self.pools.get(p)?;
        let (_, _, ready) = self.counts(p);
        let conditions: Vec<Value> = std::iter::once(&pool.updating_version)
            .chain(pool.conditions.iter())
            .map(Cond::json)
            .collect();
        Some(json!({
            "apiVersion": HYPERSHIFT_API,
            "kind": "NodePool",
            "status": {"version": pool.version, "replicas": ready, "conditions": conditions},
        }))
    }

    /// Labels selecting a pool's Machines.
    fn selector(&self, p: usize) -> Value {
        let name = self.pools.get(p).map_or("", |p| p.name.as_str());
        if p == REPLACE {
            json!({"cluster.x-k8s.io/deployment-name": name})
        } else {
            json!({"cluster.x-k8s.io/set-name": name})
        }
    }

    fn template(&self, p: usize) -> Value {
        let Some(pool) = self.pools.get(p) else {
            return json!({});
        };
        let hash = &super::cluster::config_hash(&pool.name, &pool.template_version);
        json!({
            "metadata": {
                "labels": self.selector(p),
                "annotations": {
                    NODE_POOL_ANNOTATION: self.pool_of(p),
                    RELEASE_VERSION_ANNOTATION: pool.template_version,
                },
            },
            "spec": {
                "clusterName": self.infra_id,
                "version": pool.template_version,
                "bootstrap": {"dataSecretName": format!("user-data-{}-{hash}", pool.name)},
                "infrastructureRef": {"apiVersion": AGENT_API, "kind": "AgentMachineTemplate",
                    "name": format!("{}-{hash}", pool.name), "namespace": self.control_plane_namespace()},
            },
        })
    }

    /// The Replace pool's MachineDeployment or the InPlace pool's MachineSet.
    fn machine_owner(&self, set: bool, part: Part) -> Option<Value> {
        let p = usize::from(set);
        let pool = self.pools.get(p)?;
        let kind = if set {
            "MachineSet"
        } else {
            "MachineDeployment"
        };
        let (all, updated, ready) = self.counts(p);
        Some(match part {
            Part::Main => {
                let mut annotations = json!({NODE_POOL_ANNOTATION: self.pool_of(p)});
                if set {
                    annotations[TARGET_CONFIG_VERSION_ANNOTATION] = json!(pool.target_hash);
                    annotations[CURRENT_CONFIG_VERSION_ANNOTATION] = json!(pool.current_hash);
                }
                let mut spec = json!({
                    "clusterName": self.infra_id,
                    "replicas": pool.replicas,
                    "selector": {"matchLabels": self.selector(p)},
                    "template": self.template(p),
                });
                if !set {
                    spec["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {
                        "maxSurge": self.config.max_surge, "maxUnavailable": self.config.max_unavailable}});
                }
                json!({
                    "apiVersion": CAPI_API,
                    "kind": kind,
                    "metadata": {"name": pool.name, "namespace": self.control_plane_namespace(),
                                 "annotations": annotations},
                    "spec": spec,
                })
            }
            Part::Status if set => json!({
                "apiVersion": CAPI_API, "kind": kind,
                "status": {"replicas": all, "fullyLabeledReplicas": all, "readyReplicas": ready,
                           "availableReplicas": ready, "observedGeneration": 1},
            }),
            Part::Status => json!({
                "apiVersion": CAPI_API, "kind": kind,
                "status": {"replicas": all, "updatedReplicas": updated, "readyReplicas": ready,
                           "availableReplicas": ready,
                           "unavailableReplicas": pool.replicas.saturating_sub(ready),
                           "observedGeneration": 1},
            }),
        })
    }

    fn machine_main(&self, m: &SimMachine) -> Value {
        let pool = self.pools.get(m.pool).map_or("", |p| p.name.as_str());
        let mut labels = self.selector(m.pool);
        labels["cluster.x-k8s.io/cluster-name"] = json!(self.infra_id);
        if m.pool == REPLACE {
            let hash = super::cluster::config_hash(pool, &m.version);
            labels["cluster.x-k8s.io/set-name"] = json!(format!("{pool}-{hash}"));
        }
        let hash = super::cluster::config_hash(pool, &m.version);
        json!({
            "apiVersion": CAPI_API,
            "kind": "Machine",
            "metadata": {
                "name": m.name,
                "namespace": self.control_plane_namespace(),
                "labels": labels,
                "annotations": {
                    NODE_POOL_ANNOTATION: self.pool_of(m.pool),
                    RELEASE_VERSION_ANNOTATION: m.release_version,
                },
                "finalizers": [MACHINE_FINALIZER],
            },
            "spec": {
                "clusterName": self.infra_id,
                "version": m.version,
                "bootstrap": {"dataSecretName": format!("user-data-{pool}-{hash}")},
                "infrastructureRef": {"apiVersion": AGENT_API, "kind": "AgentMachine",
                    "name": m.name, "namespace": self.control_plane_namespace()},
            },
        })
    }

    fn machine_status(&self, m: &SimMachine) -> Value {
        let phase = match m.phase {
            MachinePhase::Provisioning => "Provisioning",
            MachinePhase::Running => "Running",
            MachinePhase::Deleting => "Deleting",
        };
        let ready = {
            let mut c = m.node_healthy.clone();
            c.type_ = "Ready";
            c
        };
        let mut conditions = vec![capi_condition(&ready), capi_condition(&m.node_healthy)];
        if let Some(d) = &m.draining {
            conditions.push(capi_condition(d));
        }
        let mut status = json!({
            "phase": phase,
            "bootstrapReady": true,
            "infrastructureReady": m.phase != MachinePhase::Provisioning,
            "conditions": conditions,
        });
        if m.phase != MachinePhase::Provisioning {
            status["nodeRef"] = json!({"apiVersion": "v1", "kind": "Node", "name": m.node_name()});
        }
        if let Some(since) = m.deleting_since {
            status["deletion"] = json!({"nodeDrainStartTime": ts(since)});
        }
        json!({"apiVersion": CAPI_API, "kind": "Machine", "status": status})
    }

    /// The hosted cluster's Nodes (not on the management cluster: the guest view, for
    /// `--hosted-kubeconfig-access`): one per Machine whose Node joined, labelled with its
    /// NodePool; InPlace nodes carry the machine-config annotations the in-place upgrader
    /// writes (config-version hashes).
    pub fn render_guest_nodes(&self) -> Vec<Value> {
        self.machines
            .iter()
            .filter(|m| m.exists() && m.phase != MachinePhase::Provisioning)
            .map(|m| {
                let pool = self.pools.get(m.pool).map_or("", |p| p.name.as_str());
                let in_place = self.pools.get(m.pool).is_some_and(|p| p.in_place);
                let mut annotations = json!({
                    "cluster.x-k8s.io/machine": m.name,
                    "cluster.x-k8s.io/cluster-namespace": self.control_plane_namespace(),
                    "cluster.x-k8s.io/cluster-name": self.infra_id,
                });
                if in_place {
                    annotations[NODE_CURRENT_CONFIG] = json!(m.current_config);
                    annotations[NODE_DESIRED_CONFIG] = json!(m.desired_config);
                    annotations[NODE_STATE] = json!(m.state);
                    annotations[NODE_DESIRED_DRAIN] = json!(m.desired_drain);
                    annotations[NODE_LAST_APPLIED_DRAIN] = json!(m.last_applied_drain);
                }
                let (status, reason) = if m.healthy() {
                    ("True", "KubeletReady")
                } else {
                    ("Unknown", "NodeStatusUnknown")
                };
                json!({
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": m.node_name(),
                        "labels": {NODE_POOL_LABEL: pool, "node-role.kubernetes.io/worker": ""},
                        "annotations": annotations,
                    },
                    "spec": {"unschedulable": m.unschedulable || m.deleting()},
                    "status": {"conditions": [{"type": "Ready", "status": status, "reason": reason,
                        "lastTransitionTime": ts(m.node_healthy.ltt), "lastHeartbeatTime": ts(self.now)}]},
                })
            })
            .collect()
    }
}
