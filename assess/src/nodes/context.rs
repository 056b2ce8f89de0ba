//! The context every node is assessed in: the pools, their selectors and configs, the MachineConfigs' versions, the ClusterVersion's target.

use std::collections::HashMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use update_status_api::crd::{InsightScope, ResourceRef, ScopeType};
use update_status_api::input::{
    ClusterVersion, MachineConfig, MachineConfigPool, POOL_LAYERING_ENABLED,
    POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG, first_condition, selector_matches,
};

use super::constants::MCO_GROUP;
use super::source::NodeSource;
use crate::inputs::ClusterInputs;
use crate::order::MASTER_POOL;

/// A MachineConfigPool, compiled for node assessment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolContext {
    /// Pool name.
    pub name: String,
    /// The `master` pool.
    pub is_master: bool,
    /// Valid node selector; `None` (missing or invalid) selects no node (G.58).
    pub(super) selector: Option<LabelSelector>,
    /// `spec.paused`.
    pub paused: bool,
    /// `spec.configuration.name` (empty when unset).
    pub configuration: String,
    /// Layered pool with a non-empty `newestImageEquivalentConfig` annotation: that image.
    pub layered_image: Option<String>,
    /// The MachineConfigPool as an insight resource.
    pub resource: ResourceRef,
    /// `spec.maxUnavailable` as written (a count or a percentage; `None`: 1).
    pub max_unavailable: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
}

impl PoolContext {
    /// How many nodes of a pool of `total` may update at once (at least 1).
    pub fn max_unavailable_of(&self, total: u32) -> u32 {
        update_status_api::input::MachineConfigPoolSpec {
            max_unavailable: self.max_unavailable.clone(),
            ..Default::default()
        }
        .max_unavailable_of(total)
    }
}

impl PoolContext {
    /// Compiles a pool.
    pub fn new(pool: &MachineConfigPool) -> Self {
        let name = pool.name().to_string();
        let layered = pool
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(POOL_LAYERING_ENABLED));
        let layered_image = pool
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(POOL_NEWEST_IMAGE_EQUIVALENT_CONFIG))
            .filter(|img| layered && !img.is_empty())
            .cloned();
        PoolContext {
            is_master: name == MASTER_POOL,
            selector: pool
                .spec
                .node_selector
                .as_ref()
                .filter(|s| selector_is_valid(s))
                .cloned(),
            paused: pool.spec.paused,
            configuration: pool.spec.configuration.name.clone(),
            layered_image,
            resource: ResourceRef {
                group: MCO_GROUP.to_string(),
                kind: "MachineConfigPool".to_string(),
                name: name.clone(),
                namespace: None,
            },
            max_unavailable: pool.spec.max_unavailable.clone(),
            name,
        }
    }

    /// Does this pool's selector select the node? A pool without a valid selector selects nothing.
    pub fn selects(&self, node: &impl NodeSource) -> bool {
        self.selector
            .as_ref()
            .is_some_and(|s| selector_matches(s, |k| node.label(k)))
    }

    /// Scope of the insights about this pool's nodes: `ControlPlane` + `master` for the master
    /// pool, `WorkerPool` + the pool otherwise.
    pub fn node_scope(&self) -> InsightScope {
        InsightScope {
            type_: if self.is_master {
                ScopeType::ControlPlane
            } else {
                ScopeType::WorkerPool
            },
            pool: Some(self.name.clone()),
        }
    }
}

/// A selector the API server would accept as a label selector (what OC's conversion checks):
/// known operators, values for `In`/`NotIn`, none for `Exists`/`DoesNotExist`.
pub(super) fn selector_is_valid(selector: &LabelSelector) -> bool {
    selector.match_expressions.as_deref().is_none_or(|exprs| {
        exprs.iter().all(|e| {
            let n = e.values.as_ref().map_or(0, Vec::len);
            !e.key.is_empty()
                && match e.operator.as_str() {
                    "In" | "NotIn" => n > 0,
                    "Exists" | "DoesNotExist" => n == 0,
                    _ => false,
                }
        })
    })
}

/// Everything node assessment shares across nodes. Build it once per change of the
/// ClusterVersion, the pools or the MachineConfigs; compare two contexts with `==` to know
/// whether cached [`NodeAssessment`]s are still valid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeContext {
    /// `history[0].version` (empty without ClusterVersion or history: then no node is updated
    /// or updating).
    pub target_version: String,
    /// Multi-arch migration in progress (C.3): `history[0].version == history[1].version`,
    /// different images, and ClusterVersion `Progressing=True`.
    pub multi_arch_migration: bool,
    /// Rendered MachineConfig name → OpenShift version (non-empty annotations only, A.5).
    pub(super) mc_versions: HashMap<String, String>,
    /// Pools in display order: `master`, `worker`, then the others by name (unique names).
    pub(super) pools: Vec<PoolContext>,
    /// Indices into `pools` in membership precedence (C.1): master, custom by name, worker.
    pub(super) membership: Vec<usize>,
}

impl NodeContext {
    /// Builds the context.
    pub fn new(
        cluster_version: Option<&ClusterVersion>,
        pools: &[MachineConfigPool],
        machine_configs: &[MachineConfig],
    ) -> Self {
        let history = cluster_version.map_or(&[][..], |cv| &cv.status.history[..]);
        let target_version = history
            .first()
            .map(|h| h.version.clone())
            .unwrap_or_default();
        let multi_arch_migration = match (history.first(), history.get(1), cluster_version) {
            (Some(h0), Some(h1), Some(cv)) => {
                h0.version == h1.version
                    && h0.image != h1.image
                    && first_condition(&cv.status.conditions, "Progressing")
                        .is_some_and(|c| c.is_true())
            }
            _ => false,
        };
        let mc_versions = machine_configs
            .iter()
            .filter_map(|mc| {
                let name = mc.metadata.name.as_deref().filter(|n| !n.is_empty())?;
                Some((name.to_string(), mc.release_version()?.to_string()))
            })
            .collect();

        let mut compiled: Vec<PoolContext> = pools
            .iter()
            .filter(|p| !p.name().is_empty())
            .map(PoolContext::new)
            .collect();
        // List order, as oc keeps it (offline the file's, online by name); among duplicate
        // names the first listed is kept.
        let mut seen = std::collections::HashSet::new();
        compiled.retain(|p| seen.insert(p.name.clone()));

        let mut membership: Vec<usize> = (0..compiled.len()).collect();
        membership.sort_by(|&a, &b| {
            crate::order::pool_membership_rank(&compiled[a].name)
                .cmp(&crate::order::pool_membership_rank(&compiled[b].name))
        });

        NodeContext {
            target_version,
            multi_arch_migration,
            mc_versions,
            pools: compiled,
            membership,
        }
    }

    /// Builds the context from the cluster inputs.
    pub fn from_inputs(inputs: &ClusterInputs<'_>) -> Self {
        Self::new(inputs.cluster_version, inputs.pools, inputs.machine_configs)
    }

    /// Pools in display order (`master`, `worker`, then the others by name).
    pub fn pools(&self) -> &[PoolContext] {
        &self.pools
    }

    /// A pool by name.
    pub fn pool(&self, name: &str) -> Option<&PoolContext> {
        self.pools.iter().find(|p| p.name == name)
    }

    /// The pool a node belongs to (C.1): master first, then custom pools by name, then worker.
    pub fn pool_of(&self, node: &impl NodeSource) -> Option<&PoolContext> {
        self.membership
            .iter()
            .filter_map(|&i| self.pools.get(i))
            .find(|p| p.selects(node))
    }

    /// OpenShift version of a rendered MachineConfig, when known.
    pub fn machine_config_version(&self, name: &str) -> Option<&str> {
        self.mc_versions
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}
