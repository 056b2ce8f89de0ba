//! The simulated objects as an API server holds them (JSON), part by part.

use serde_json::{Value, json};
use update_status_api::input::{
    MC_RELEASE_IMAGE_VERSION, MCO_DEPLOYMENT, MCO_NAMESPACE, NODE_CURRENT_CONFIG,
    NODE_DESIRED_CONFIG, NODE_DESIRED_DRAIN, NODE_LAST_APPLIED_DRAIN, NODE_REASON, NODE_STATE,
};

use super::cluster::MACHINE_CONFIG;
use super::state::Simulation;
use super::state::{ObjectRef, Part, ROLE_PREFIX, SimNode, fnv, hex32, mco_image, ts};

impl Simulation {
    /// Name of an object.
    pub fn name_of(&self, r: ObjectRef) -> Option<&str> {
        match r {
            ObjectRef::MachineConfig(i) => self.mcs.get(i).map(|m| m.name.as_str()),
            ObjectRef::Pool(i) => self.pools.get(i).map(|p| p.name.as_str()),
            ObjectRef::ClusterVersion => Some("version"),
            ObjectRef::Operator(i) => self.operators.get(i).map(|o| o.name.as_str()),
            ObjectRef::Node(i) => self.nodes.get(i).map(|n| n.name.as_str()),
            ObjectRef::McoDeployment => Some(MCO_DEPLOYMENT),
        }
    }

    /// The whole object (metadata, spec and status) as the API would hold it.
    pub fn object(&self, r: ObjectRef) -> Option<Value> {
        let mut main = self.render(r, Part::Main)?;
        if r.has_status()
            && let (Some(status), Value::Object(m)) = (self.render(r, Part::Status), &mut main)
            && let Some(s) = status.get("status")
        {
            m.insert("status".into(), s.clone());
        }
        Some(main)
    }

    /// The body to apply for one part: metadata and spec (`Main`), or just the status.
    pub fn render(&self, r: ObjectRef, part: Part) -> Option<Value> {
        let (api_version, kind) = match r {
            ObjectRef::MachineConfig(_) => {
                ("machineconfiguration.openshift.io/v1", "MachineConfig")
            }
            ObjectRef::Pool(_) => ("machineconfiguration.openshift.io/v1", "MachineConfigPool"),
            ObjectRef::ClusterVersion => ("config.openshift.io/v1", "ClusterVersion"),
            ObjectRef::Operator(_) => ("config.openshift.io/v1", "ClusterOperator"),
            ObjectRef::Node(_) => ("v1", "Node"),
            ObjectRef::McoDeployment => ("apps/v1", "Deployment"),
        };
        let name = self.name_of(r)?;
        let body = match (r, part) {
            (ObjectRef::MachineConfig(i), Part::Main) => self.mc_main(i)?,
            (ObjectRef::Pool(i), Part::Main) => self.pool_main(i)?,
            (ObjectRef::Pool(i), Part::Status) => json!({"status": self.pool_status(i)?}),
            (ObjectRef::ClusterVersion, Part::Main) => self.cv_main(),
            (ObjectRef::ClusterVersion, Part::Status) => json!({"status": self.cv_status()}),
            (ObjectRef::Operator(i), Part::Main) => self.operator_main(i)?,
            (ObjectRef::Operator(i), Part::Status) => json!({"status": self.operator_status(i)?}),
            (ObjectRef::Node(i), Part::Main) => self.node_main(i)?,
            (ObjectRef::Node(i), Part::Status) => json!({"status": self.node_status(i)?}),
            (ObjectRef::McoDeployment, Part::Main) => self.mco_deployment_main(),
            (ObjectRef::MachineConfig(_) | ObjectRef::McoDeployment, Part::Status) => return None,
        };
        let mut out = json!({"apiVersion": api_version, "kind": kind});
        if let (Value::Object(o), Value::Object(b)) = (&mut out, body) {
            o.extend(b);
            let meta = o.entry("metadata").or_insert_with(|| json!({}));
            if let Value::Object(m) = meta {
                m.insert("name".into(), json!(name));
            }
        }
        Some(out)
    }

    fn mc_main(&self, i: usize) -> Option<Value> {
        let mc = self.mcs.get(i)?;
        let mut annotations = serde_json::Map::new();
        annotations.insert(
            "machineconfiguration.openshift.io/generated-by-controller-version".into(),
            json!("a3bd8b7d6e4cbbd0c3f0ae66e0b7e3c2b94e0f12"),
        );
        if let Some(v) = &mc.version {
            annotations.insert(MC_RELEASE_IMAGE_VERSION.into(), json!(v));
        }
        Some(json!({
            "metadata": {
                "annotations": annotations,
                "labels": {"machineconfiguration.openshift.io/role": mc.role},
            },
            "spec": {
                "config": {"ignition": {"version": "3.4.0"}},
                "osImageURL": format!("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:{}", hex32(&format!("os/{}/{}", mc.name, mc.created))),
            },
        }))
    }

    fn pool_main(&self, i: usize) -> Option<Value> {
        let p = self.pools.get(i)?;
        Some(json!({
            "metadata": {
                "labels": {format!("pools.operator.machineconfiguration.openshift.io/{}", p.name): ""},
            },
            "spec": {
                "configuration": {
                    "name": p.config,
                    "source": [
                        {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig", "name": format!("00-{}", p.name)},
                        {"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig", "name": format!("01-{}-kubelet", p.name)},
                    ],
                },
                "machineConfigSelector": {"matchLabels": {"machineconfiguration.openshift.io/role": p.role}},
                "nodeSelector": {"matchLabels": {format!("{ROLE_PREFIX}{}", p.role): ""}},
                "maxUnavailable": p.max_unavailable,
                "paused": p.paused,
            },
        }))
    }

    fn pool_status(&self, i: usize) -> Option<Value> {
        let p = self.pools.get(i)?;
        let nodes: Vec<&SimNode> = p
            .pick_order
            .iter()
            .filter_map(|&n| self.nodes.get(n))
            .collect();
        let total = nodes.len();
        let (updated, current) = if p.updating {
            (0, p.old_config.as_str())
        } else {
            (total, p.config.as_str())
        };
        let updating = if p.updating { "True" } else { "False" };
        let updated_c = if p.updating { "False" } else { "True" };
        let message = if p.updating {
            format!("All nodes are updating to {}", p.config)
        } else {
            format!("All nodes are updated with {}", p.config)
        };
        Some(json!({
            "configuration": {"name": current},
            "machineCount": total,
            "updatedMachineCount": updated,
            "readyMachineCount": updated,
            "unavailableMachineCount": 0,
            "degradedMachineCount": 0,
            "observedGeneration": 2,
            "conditions": [
                {"type": "Updated", "status": updated_c, "reason": "", "message": if p.updating { String::new() } else { message.clone() }},
                {"type": "Updating", "status": updating, "reason": "", "message": if p.updating { message } else { String::new() }},
                {"type": "Degraded", "status": "False", "reason": "", "message": ""},
            ],
        }))
    }

    fn cv_main(&self) -> Value {
        let to = &self.config.to_version;
        let channel = to.splitn(3, '.').take(2).collect::<Vec<_>>().join(".");
        let mut spec = json!({
            "clusterID": self.cv.cluster_id,
            "channel": format!("stable-{channel}"),
        });
        if self.cv.desired_update
            && let Value::Object(s) = &mut spec
        {
            s.insert(
                "desiredUpdate".into(),
                json!({"version": self.cv.desired_version, "image": self.cv.desired_image, "force": false}),
            );
        }
        json!({"spec": spec})
    }

    fn cv_status(&self) -> Value {
        let history: Vec<Value> = self
            .cv
            .history
            .iter()
            .map(|h| {
                json!({
                    "state": h.state,
                    "startedTime": ts(h.started),
                    "completionTime": h.completed.map(ts),
                    "version": h.version,
                    "image": h.image,
                    "verified": true,
                })
            })
            .collect();
        json!({
            "desired": {"version": self.cv.desired_version, "image": self.cv.desired_image},
            "history": history,
            "observedGeneration": if self.cv.desired_update { 2 } else { 1 },
            "versionHash": hex32(&self.cv.desired_version)[..11].to_string(),
            "conditions": [
                self.cv.retrieved.json(),
                self.cv.available.json(),
                self.cv.failing.json(),
                self.cv.progressing.json(),
            ],
        })
    }

    /// The MCO Deployment as the cluster-version operator applies it (the parts a Deployment
    /// needs and the container the assessment reads; no pod ever runs on the test cluster).
    fn mco_deployment_main(&self) -> Value {
        let labels = json!({"k8s-app": MCO_DEPLOYMENT});
        json!({
            "metadata": {"namespace": MCO_NAMESPACE, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{
                        "name": MCO_DEPLOYMENT,
                        "image": mco_image(&self.mco_deployment_version),
                        "args": ["start", "--images-json=/etc/mco/images/images.json"],
                    }]},
                },
            },
        })
    }

    fn operator_main(&self, i: usize) -> Option<Value> {
        let _ = self.operators.get(i)?;
        Some(json!({
            "metadata": {"annotations": {
                "include.release.openshift.io/self-managed-high-availability": "true",
                "include.release.openshift.io/single-node-developer": "true",
            }},
            "spec": {},
        }))
    }

    fn operator_status(&self, i: usize) -> Option<Value> {
        let o = self.operators.get(i)?;
        Some(json!({
            "conditions": [o.available.json(), o.degraded.json(), o.progressing.json(), o.upgradeable.json()],
            "versions": if o.name == MACHINE_CONFIG {
                // 4.18+: the image it runs, compared with its Deployment's (B.2).
                json!([{"name": "operator", "version": o.version}, {"name": "operator-image", "version": mco_image(&o.version)}])
            } else {
                json!([{"name": "operator", "version": o.version}])
            },
            "relatedObjects": [{"group": "", "resource": "namespaces", "name": format!("openshift-{}", o.name)}],
        }))
    }

    fn node_main(&self, i: usize) -> Option<Value> {
        let n = self.nodes.get(i)?;
        let annotations = json!({
            NODE_CURRENT_CONFIG: n.current_config,
            NODE_DESIRED_CONFIG: n.desired_config,
            NODE_STATE: n.state,
            NODE_REASON: n.reason,
            NODE_DESIRED_DRAIN: n.desired_drain,
            NODE_LAST_APPLIED_DRAIN: n.last_applied_drain,
            "machineconfiguration.openshift.io/controlPlaneTopology": "HighlyAvailable",
            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        });
        Some(json!({
            "metadata": {"labels": n.labels, "annotations": annotations},
            "spec": {
                "providerID": format!("aws:///us-east-2a/i-{:017x}", fnv(3, &n.name) >> 4),
                "unschedulable": n.unschedulable,
            },
        }))
    }

    fn node_status(&self, i: usize) -> Option<Value> {
        let n = self.nodes.get(i)?;
        let hb = ts(n.heartbeat);
        let quiet = |type_: &str, reason: &str, message: &str| {
            json!({
                "type": type_, "status": "False", "reason": reason, "message": message,
                "lastHeartbeatTime": hb, "lastTransitionTime": ts(n.since),
            })
        };
        let mut ready = n.ready.json();
        if let Value::Object(r) = &mut ready {
            r.insert("lastHeartbeatTime".into(), json!(hb));
        }
        Some(json!({
            "conditions": [
                quiet("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                quiet("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                quiet("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                ready,
            ],
            "capacity": {"cpu": "8", "memory": "32386008Ki", "pods": "250", "ephemeral-storage": "125238252Ki"},
            "allocatable": {"cpu": "7500m", "memory": "31235032Ki", "pods": "250", "ephemeral-storage": "114345831439"},
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "cri-o://1.31.6",
                "kubeletVersion": "v1.31.6",
                "operatingSystem": "linux",
                "osImage": "Red Hat Enterprise Linux CoreOS",
            },
        }))
    }

    /// Every object in application order (MachineConfigs, pools, the ClusterVersion,
    /// operators, nodes, the MCO Deployment).
    pub fn object_refs(&self) -> Vec<ObjectRef> {
        let mut v: Vec<ObjectRef> = (0..self.mcs.len()).map(ObjectRef::MachineConfig).collect();
        v.extend((0..self.pools.len()).map(ObjectRef::Pool));
        v.push(ObjectRef::ClusterVersion);
        v.extend((0..self.operators.len()).map(ObjectRef::Operator));
        v.extend((0..self.nodes.len()).map(ObjectRef::Node));
        v.push(ObjectRef::McoDeployment);
        v
    }
}
