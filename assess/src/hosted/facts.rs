//! The facts of one NodePool's update (hosted.md §8): its current and target versions,
//! whether it updates, is paused or InPlace, its desired size; and which NodePools and Machines
//! belong to a HostedCluster. Read by the NodePool share ([`super::node_pools`]) and the
//! NodePool health insights ([`super::health`]).

use jiff::Timestamp;
use update_status_api::hosted::{
    HostedCluster, Machine, NodePool, node_pool_of_machine, paused_until, template_version,
};

use super::control_plane::version_of_image;
use super::inputs::HostedInputs;

/// What one NodePool's update is (hosted.md §8).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePoolFacts {
    /// `status.version` (empty before the first rollout completes).
    pub current: String,
    /// The version the pool goes to (empty: unknown).
    pub target: String,
    /// A version rollout is wanted or running.
    pub updating: bool,
    /// InPlace pool.
    pub in_place: bool,
    /// Paused (`ReconciliationActive=False`, or `spec.pausedUntil` true or in the future).
    pub paused: bool,
    /// The desired node count (`spec.replicas`, else the MachineSet/MachineDeployment's).
    pub desired_replicas: Option<u32>,
}

/// The NodePools of the HostedCluster, by name.
pub fn node_pools_of<'a>(hc: &HostedCluster, pools: &'a [NodePool]) -> Vec<&'a NodePool> {
    let mut out: Vec<&NodePool> = pools
        .iter()
        .filter(|np| np.spec.cluster_name == hc.name() && !np.name().is_empty())
        .filter(|np| {
            np.metadata
                .namespace
                .as_deref()
                .is_none_or(|ns| hc.metadata.namespace.as_deref().is_none_or(|h| h == ns))
        })
        .collect();
    out.sort_by(|a, b| a.name().cmp(b.name()));
    out
}

/// The Machines of a NodePool (annotation `hypershift.openshift.io/nodePool=<ns>/<name>`).
pub fn machines_of<'a>(
    hc: &HostedCluster,
    np: &NodePool,
    machines: &'a [Machine],
) -> Vec<&'a Machine> {
    let ns = np
        .metadata
        .namespace
        .as_deref()
        .unwrap_or_else(|| hc.namespace());
    machines
        .iter()
        .filter(|m| node_pool_of_machine(m) == Some((ns, np.name())))
        .collect()
}

/// hosted.md §8: the facts of one NodePool.
pub fn facts(inputs: &HostedInputs<'_>, np: &NodePool, now: Timestamp) -> NodePoolFacts {
    let hc = inputs.hosted_cluster;
    let in_place = np.is_in_place();
    let template = if in_place {
        find(inputs.machine_sets, np.name(), |m| &m.metadata)
            .map(|m| (template_version(&m.spec.template), m.spec.replicas))
    } else {
        find(inputs.machine_deployments, np.name(), |m| &m.metadata)
            .map(|m| (template_version(&m.spec.template), m.spec.replicas))
    };
    let current = np.current_version().to_string();
    let updating_version = np.condition("UpdatingVersion");
    let target = template
        .and_then(|(v, _)| v)
        .map(str::to_string)
        .or_else(|| {
            updating_version
                .filter(|c| c.is_false() && c.reason == "AsExpected" && !current.is_empty())
                .map(|_| current.clone())
        })
        .or_else(|| {
            updating_version
                .filter(|_| !in_place)
                .and_then(|c| target_in_message(&c.message))
        })
        .or_else(|| version_of_image(hc, &np.spec.release.image).map(str::to_string))
        .unwrap_or_default();
    let failed =
        updating_version.is_some_and(|c| c.is_false() && c.reason == REASON_IN_PLACE_FAILED);
    let updating = updating_version.is_some_and(|c| c.is_true())
        || failed
        || (!target.is_empty() && !current.is_empty() && target != current);
    let paused = np
        .condition("ReconciliationActive")
        .is_some_and(|c| c.is_false())
        || paused_until(np.spec.paused_until.as_deref())
            .is_some_and(|until| until.is_none_or(|t| t > now));
    let desired_replicas = np
        .spec
        .replicas
        .or_else(|| template.and_then(|(_, r)| r))
        .map(|r| u32::try_from(r).unwrap_or(0));
    NodePoolFacts {
        current,
        target,
        updating,
        in_place,
        paused,
        desired_replicas,
    }
}

/// `UpdatingVersion` reason of a failed in-place update.
pub const REASON_IN_PLACE_FAILED: &str = "InplaceUpgradeFailed";

/// `Target version: <v>` in an `UpdatingVersion` message (Replace).
fn target_in_message(message: &str) -> Option<String> {
    let rest = message.split("Target version: ").nth(1)?;
    let v: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
    let v = v.trim_end_matches(['.', ',']).to_string();
    (!v.is_empty()).then_some(v)
}

/// The object named `name` among `objs`.
pub(crate) fn find<'a, T>(
    objs: &'a [T],
    name: &str,
    meta: impl Fn(&T) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<&'a T> {
    objs.iter().find(|o| meta(o).name.as_deref() == Some(name))
}
