//! What the assessment reads of one cluster, borrowed ([`ClusterInputs`]), and what is known of
//! the machine-config operator's image ([`McoImage`]).

use update_status_api::input::{
    Alert, ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool, McoDeployment, Node,
    Pod, PodDisruptionBudget,
};

/// Everything the assessment reads, borrowed.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClusterInputs<'a> {
    /// The ClusterVersion (`None`: not an OpenShift cluster, or not readable yet).
    pub cluster_version: Option<&'a ClusterVersion>,
    /// All ClusterOperators (non-platform ones are ignored by the logic).
    pub cluster_operators: &'a [ClusterOperator],
    /// All MachineConfigPools.
    pub pools: &'a [MachineConfigPool],
    /// MachineConfigs (only names and the release-version annotation matter).
    pub machine_configs: &'a [MachineConfig],
    /// All Nodes.
    pub nodes: &'a [Node],
    /// Image of the machine-config-operator container (multi-arch migration check).
    pub mco_image: McoImage<'a>,
    /// Prometheus alerts (`/api/v1/alerts`), when read (`None`: no alert insights).
    pub alerts: Option<&'a [Alert]>,
    /// Pods on the nodes whose drain fails, when read (what a failed drain's insight points
    /// at: [`related`](crate::related)).
    pub pods: &'a [Pod],
    /// PodDisruptionBudgets, when read.
    pub pod_disruption_budgets: &'a [PodDisruptionBudget],
}

/// [`McoImage::Absent`]: the Deployment is not there (or not visible).
pub const NO_MCO_DEPLOYMENT: &str =
    "Deployment openshift-machine-config-operator/machine-config-operator not found";
/// [`McoImage::Absent`]: the Deployment has no `machine-config-operator` container image.
pub const NO_MCO_CONTAINER: &str = "Deployment openshift-machine-config-operator/machine-config-operator has no machine-config-operator container image";

/// What is known of the machine-config operator's image (A.3): the image of the
/// `machine-config-operator` container of the Deployment
/// `openshift-machine-config-operator/machine-config-operator`, which `machine-config`'s
/// `operator-image` version must equal for that operator to count as updated (B.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum McoImage<'a> {
    /// Not read (a snapshot without `mco-deployment.yaml`): compared as `""`, as oc does
    /// offline, and nothing is said about it.
    #[default]
    NotRead,
    /// The image the Deployment holds.
    Observed(&'a str),
    /// The controller looked and found no image: why (e.g. `Deployment <ns>/<name> not
    /// found`). Compared as `""` too (an `operator-image` then counts as not updated), and,
    /// when `machine-config` reports an `operator-image`, an Info insight says so.
    Absent(&'a str),
}

/// A captured image ([`McoImage::Observed`]), or none captured ([`McoImage::NotRead`]): how
/// the offline path reads `mco-deployment.yaml`.
impl<'a> From<Option<&'a str>> for McoImage<'a> {
    fn from(image: Option<&'a str>) -> Self {
        image.map_or(McoImage::NotRead, McoImage::Observed)
    }
}

impl<'a> McoImage<'a> {
    /// What a watch of the Deployment says (`None`: no such Deployment): the controller's
    /// reading; never [`McoImage::NotRead`].
    pub fn of_deployment(deployment: Option<&'a McoDeployment>) -> Self {
        match deployment {
            None => McoImage::Absent(NO_MCO_DEPLOYMENT),
            Some(d) => d
                .operator_image()
                .map_or(McoImage::Absent(NO_MCO_CONTAINER), McoImage::Observed),
        }
    }

    /// The image the `operator-image` version is compared with (`""` when not known).
    pub fn image(self) -> &'a str {
        match self {
            McoImage::Observed(image) => image,
            McoImage::NotRead | McoImage::Absent(_) => "",
        }
    }
}
