//! Label keys: the query surface (`kubectl get updateinsights -l ...`).

/// `progress` or `health`.
pub const INSIGHT_TYPE: &str = "update.openshift.io/insight-type";
/// Kind of the resource an insight is about (`Node`, `ClusterOperator`, ...).
pub const RESOURCE_KIND: &str = "update.openshift.io/resource-kind";
/// Name of the resource an insight is about (shortened with a hash when longer than 63).
pub const RESOURCE_NAME: &str = "update.openshift.io/resource-name";
/// `control-plane`, `worker-pool` or `cluster`.
pub const SCOPE: &str = "update.openshift.io/scope";
/// Pool name, on pool-scoped objects.
pub const POOL: &str = "update.openshift.io/pool";
/// Slug of the assessment, on progress insights and status objects.
pub const ASSESSMENT: &str = "update.openshift.io/assessment";
/// Slug of the impact level, on health insights.
pub const IMPACT_LEVEL: &str = "update.openshift.io/impact-level";
/// Slug of the impact type, on health insights.
pub const IMPACT_TYPE: &str = "update.openshift.io/impact-type";
/// Rule that produced a health insight (slug of `status.health.source`).
pub const SOURCE: &str = "update.openshift.io/source";
/// Cluster ID.
pub const CLUSTER: &str = "update.openshift.io/cluster";
/// Reconciler that owns the object (`control-plane`, `worker-pools`, `alerts`).
pub const RECONCILER: &str = "update.openshift.io/reconciler";
/// Hub copies: managed cluster name (ACM convention).
pub const ACM_CLUSTER_NAME: &str = "open-cluster-management.io/cluster-name";
/// Hub copies of a hosted cluster: `<namespace>.<name>` of the HostedCluster they come from
/// (its session sees and deletes only these).
pub const HOSTED_CLUSTER: &str = "update.openshift.io/hosted-cluster";
/// Standard managed-by label.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// Value of [`MANAGED_BY`].
pub const MANAGED_BY_VALUE: &str = "update-status-controller";
