//! Large must-gathers made at run time (megabytes are not committed): an `oc-status` case's
//! cluster-scoped objects in the must-gather layout, plus `n` generated worker Nodes in one
//! block-YAML `nodes.yaml` list, each as heavy as a real one (labels, annotations, conditions,
//! addresses, managedFields).

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// The case whose objects surround the generated nodes (workers rolling from one rendered
/// config to another).
pub const BASE_CASE: &str = "4.14.1-workers-started-updating-multiple-pools";

/// Writes a must-gather at `root` (`root/<image>/cluster-scoped-resources/...`) holding
/// [`BASE_CASE`]'s objects and `nodes` generated worker Nodes; returns the
/// `cluster-scoped-resources` folder. The case's own nodes are in `core/nodes/nodes.yaml`, the
/// generated ones in `core/nodes/generated.yaml`.
pub fn write(root: &Path, nodes: usize) -> io::Result<PathBuf> {
    let case = crate::folders::oc_status_case(BASE_CASE);
    let csr = root.join("quay-io-openshift-release-dev-sha256-0123/cluster-scoped-resources");
    for (file, sub) in [
        ("clusterversion.yaml", "config.openshift.io/clusterversions"),
        (
            "clusteroperators.yaml",
            "config.openshift.io/clusteroperators",
        ),
        (
            "machineconfigpools.yaml",
            "machineconfiguration.openshift.io/machineconfigpools",
        ),
        (
            "machineconfigs.yaml",
            "machineconfiguration.openshift.io/machineconfigs",
        ),
        ("nodes.yaml", "core/nodes"),
    ] {
        let dir = csr.join(sub);
        std::fs::create_dir_all(&dir)?;
        std::fs::copy(case.join(file), dir.join(file))?;
    }
    let case_nodes = std::fs::read_to_string(case.join("nodes.yaml"))?;
    let config = |key: &str| {
        case_nodes
            .lines()
            .filter_map(|l| l.trim().strip_prefix(key))
            .find(|v| v.starts_with("rendered-worker-"))
            .unwrap_or("rendered-worker-0")
            .to_owned()
    };
    let old = config("machineconfiguration.openshift.io/currentConfig: ");
    let new = config("machineconfiguration.openshift.io/desiredConfig: ");
    let new = if new == old {
        // The first worker already runs the new config: the old one is the other one.
        case_nodes
            .lines()
            .filter_map(|l| l.trim().split_once("Config: ").map(|(_, v)| v))
            .find(|v| v.starts_with("rendered-worker-") && *v != old)
            .unwrap_or("rendered-worker-1")
            .to_owned()
    } else {
        new
    };
    std::fs::write(
        csr.join("core/nodes/generated.yaml"),
        nodes_yaml(nodes, &old, &new),
    )?;
    Ok(csr)
}

/// `n` worker Nodes (about 3 KB each; the 3,000-node, 6.9 MB must-gather of issue 14 had 2.3 KB
/// per node) as one block-YAML `kind: List`: every third one updated to `new`, one in
/// fifty updating (cordoned, `Working`), the others still on `old`.
pub fn nodes_yaml(n: usize, old: &str, new: &str) -> String {
    let mut out = String::with_capacity(n * 3100 + 64);
    out.push_str("apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n");
    for i in 0..n {
        let (current, desired, state, unschedulable) = match i {
            i if i % 3 == 0 => (new, new, "Done", false),
            i if i % 50 == 1 => (old, new, "Working", true),
            _ => (old, old, "Done", false),
        };
        let name = format!("gen-worker-{i:05}.us-east-2.compute.internal");
        let ip = format!("10.{}.{}.{}", 128 + i / 65536, (i / 256) % 256, i % 256);
        let _ = write!(
            out,
            r#"- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      machineconfiguration.openshift.io/controlPlaneTopology: HighlyAvailable
      machineconfiguration.openshift.io/currentConfig: {current}
      machineconfiguration.openshift.io/desiredConfig: {desired}
      machineconfiguration.openshift.io/desiredDrain: uncordon-{current}
      machineconfiguration.openshift.io/lastAppliedDrain: uncordon-{current}
      machineconfiguration.openshift.io/lastSyncedControllerConfigResourceVersion: "24893"
      machineconfiguration.openshift.io/reason: ""
      machineconfiguration.openshift.io/state: {state}
    creationTimestamp: "2024-02-07T16:09:53Z"
    labels:
      kubernetes.io/arch: amd64
      kubernetes.io/hostname: {name}
      kubernetes.io/os: linux
      node-role.kubernetes.io/worker: ""
      node.kubernetes.io/instance-type: m6a.xlarge
      topology.kubernetes.io/region: us-east-2
      topology.kubernetes.io/zone: us-east-2{zone}
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:metadata:
          f:annotations:
            f:machineconfiguration.openshift.io/currentConfig: {{}}
            f:machineconfiguration.openshift.io/desiredConfig: {{}}
            f:machineconfiguration.openshift.io/state: {{}}
      manager: machine-config-daemon
      operation: Update
      time: "2024-02-07T16:31:02Z"
    name: {name}
    resourceVersion: "{rv}"
    uid: 88626d63-b4f4-44a5-{i:04x}-4de955567fbe
  spec:
    unschedulable: {unschedulable}
  status:
    addresses:
    - address: {ip}
      type: InternalIP
    - address: {name}
      type: Hostname
    conditions:
    - lastHeartbeatTime: "2024-02-07T16:31:20Z"
      lastTransitionTime: "2024-02-07T16:09:53Z"
      message: kubelet has sufficient memory available
      reason: KubeletHasSufficientMemory
      status: "False"
      type: MemoryPressure
    - lastHeartbeatTime: "2024-02-07T16:31:20Z"
      lastTransitionTime: "2024-02-07T16:09:53Z"
      message: kubelet has no disk pressure
      reason: KubeletHasNoDiskPressure
      status: "False"
      type: DiskPressure
    - lastHeartbeatTime: "2024-02-07T16:31:20Z"
      lastTransitionTime: "2024-02-07T16:09:53Z"
      message: kubelet has sufficient PID available
      reason: KubeletHasSufficientPID
      status: "False"
      type: PIDPressure
    - lastHeartbeatTime: "2024-02-07T16:31:20Z"
      lastTransitionTime: "2024-02-07T16:10:36Z"
      message: kubelet is posting ready status
      reason: KubeletReady
      status: "True"
      type: Ready
    nodeInfo:
      architecture: amd64
      kernelVersion: 5.14.0-284.36.1.el9_2.x86_64
      kubeletVersion: v1.27.6+f67aeb3
      operatingSystem: linux
      osImage: Red Hat Enterprise Linux CoreOS 414.92.202310210434-0 (Plow)
"#,
            zone = ["a", "b", "c"][i % 3],
            rv = 30_000 + i,
        );
    }
    out
}
