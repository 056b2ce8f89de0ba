//! The reference to the resource an object is about (an insight's resource, a pool, the
//! resources related to a problem).

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use crate::crd::limits;

/// What an object is about.
#[derive(
    Serialize, Deserialize, Clone, Debug, PartialEq, Eq, KubeSchema, Default, PartialOrd, Ord, Hash,
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// API group (empty for the core group).
    #[serde(default)]
    #[schemars(length(max = limits::RESOURCE_GROUP))]
    pub group: String,
    /// Kind, e.g. `Node`.
    #[schemars(length(min = 1, max = limits::RESOURCE_KIND))]
    pub kind: String,
    /// Name.
    #[schemars(length(min = 1, max = limits::RESOURCE_NAME))]
    pub name: String,
    /// Namespace, for namespaced resources (and alerts: the alert's `namespace` label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = limits::NAMESPACE))]
    pub namespace: Option<String>,
}
