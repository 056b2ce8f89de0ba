//! The OCM kinds the harness and tests use, as [`ApiResource`]s for
//! [`DynamicObject`](kube::api::DynamicObject)s (there is no OCM Rust crate).

use kube::api::GroupVersionKind;
use kube::discovery::ApiResource;

fn ar(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// `ManagedCluster` (cluster-scoped, hub).
pub fn managed_cluster() -> ApiResource {
    ar(
        "cluster.open-cluster-management.io",
        "v1",
        "ManagedCluster",
        "managedclusters",
    )
}
/// `ManagedClusterAddOn` v1beta1 (in the cluster's namespace, hub).
pub fn managed_cluster_addon() -> ApiResource {
    ar(
        "addon.open-cluster-management.io",
        "v1beta1",
        "ManagedClusterAddOn",
        "managedclusteraddons",
    )
}
/// `ClusterManagementAddOn` v1beta1 (cluster-scoped, hub).
pub fn cluster_management_addon() -> ApiResource {
    ar(
        "addon.open-cluster-management.io",
        "v1beta1",
        "ClusterManagementAddOn",
        "clustermanagementaddons",
    )
}
/// `AddOnTemplate` v1alpha1 (cluster-scoped, hub).
pub fn addon_template() -> ApiResource {
    ar(
        "addon.open-cluster-management.io",
        "v1alpha1",
        "AddOnTemplate",
        "addontemplates",
    )
}
/// `AddOnDeploymentConfig` v1alpha1 (namespaced, hub).
pub fn addon_deployment_config() -> ApiResource {
    ar(
        "addon.open-cluster-management.io",
        "v1alpha1",
        "AddOnDeploymentConfig",
        "addondeploymentconfigs",
    )
}
/// `Placement` v1beta1 (namespaced, hub).
pub fn placement() -> ApiResource {
    ar(
        "cluster.open-cluster-management.io",
        "v1beta1",
        "Placement",
        "placements",
    )
}
/// `PlacementDecision` v1beta1 (namespaced, hub; written by the placement controller).
pub fn placement_decision() -> ApiResource {
    ar(
        "cluster.open-cluster-management.io",
        "v1beta1",
        "PlacementDecision",
        "placementdecisions",
    )
}
/// `ManifestWork` (in the cluster's namespace, hub).
pub fn manifest_work() -> ApiResource {
    ar(
        "work.open-cluster-management.io",
        "v1",
        "ManifestWork",
        "manifestworks",
    )
}
/// `AppliedManifestWork` (cluster-scoped, managed cluster): what the work agent applied of a
/// ManifestWork, named `<hub hash>-<ManifestWork name>`.
pub fn applied_manifest_work() -> ApiResource {
    ar(
        "work.open-cluster-management.io",
        "v1",
        "AppliedManifestWork",
        "appliedmanifestworks",
    )
}
