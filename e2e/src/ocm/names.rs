//! The names OCM gives things the tests look for: its labels, an add-on's hub-kubeconfig
//! Secret, hub user and groups, where a template add-on's hub kubeconfig is mounted, and the
//! harness's field manager.

/// Where the add-on manager mounts the hub kubeconfig Secret in a template add-on's Deployments
/// (and what `{{HUB_KUBECONFIG}}` expands to, plus `/kubeconfig`).
pub const HUB_KUBECONFIG_MOUNT: &str = "/managed/hub-kubeconfig";
/// Label of OCM objects naming their managed cluster (CSRs, namespaces, ...).
pub const CLUSTER_NAME_LABEL: &str = "open-cluster-management.io/cluster-name";
/// Label of OCM objects naming their add-on (add-on CSRs, ManifestWorks, RoleBindings).
pub const ADDON_NAME_LABEL: &str = "open-cluster-management.io/addon-name";
/// Field manager of the harness's writes to OCM objects.
pub const FIELD_MANAGER: &str = "update-status-e2e-ocm";

/// The Secret in which the registration agent keeps an add-on's hub credentials (keys
/// `kubeconfig`, `tls.crt`, `tls.key`, `cluster-name`), in the add-on's install namespace on the
/// managed cluster.
pub fn hub_kubeconfig_secret(addon: &str) -> String {
    format!("{addon}-hub-kubeconfig")
}

/// The hub user of an add-on's client certificate when the add-on is a template add-on (agent
/// name `<addon>-agent`).
pub fn template_addon_user(cluster: &str, addon: &str) -> String {
    format!("system:open-cluster-management:cluster:{cluster}:addon:{addon}:agent:{addon}-agent")
}

/// The hub groups of an add-on's client certificate.
pub fn addon_groups(cluster: &str, addon: &str) -> [String; 2] {
    [
        format!("system:open-cluster-management:cluster:{cluster}:addon:{addon}"),
        format!("system:open-cluster-management:addon:{addon}"),
    ]
}
