//! The copies' owner on an ACM hub: the `ManagedClusterAddOn` of our add-on in the cluster's hub
//! namespace. Copies owned by it are garbage-collected by the hub when the add-on is disabled
//! for the cluster (the ManagedClusterAddOn is deleted), with nothing left to clean by hand.
//! Without one (a plain `--hub-kubeconfig`, not an ACM hub, or no permission to read it) the
//! copies have no owner, as before.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::{Api, Resource, ResourceExt};
use update_status_api::acm::{ADDON_NAME, ManagedClusterAddOn};

use super::errors::HubError;

/// The ManagedClusterAddOn `update-status` of `namespace`, if it exists and can be read (its
/// status too: the agent's health condition is compared with it). `404` (no such object, or no
/// such resource: not an ACM hub) and `403` (not allowed to read it) mean none; other failures
/// are errors of the pass.
pub async fn addon(
    client: &kube::Client,
    namespace: &str,
) -> Result<Option<ManagedClusterAddOn>, HubError> {
    let api: Api<ManagedClusterAddOn> = Api::namespaced(client.clone(), namespace);
    match api.get_opt(ADDON_NAME).await {
        Ok(m) => Ok(m),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 403 => {
            tracing::debug!(
                namespace,
                code = s.code,
                "no ManagedClusterAddOn readable in the hub namespace: the copies have no owner"
            );
            Ok(None)
        }
        Err(e) => Err(HubError::Api {
            verb: "get managedclusteraddons",
            namespace: namespace.to_string(),
            source: Box::new(e),
        }),
    }
}

/// The owner reference to `mca` (no `controller`, no `blockOwnerDeletion`: the copies must not
/// hold up the add-on's deletion, and blocking would need more permissions).
pub fn owner_of<K: Resource<DynamicType = ()>>(mca: &K) -> Option<OwnerReference> {
    Some(OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: mca.meta().name.clone()?,
        uid: mca.uid()?,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::PartialObjectMeta;

    #[test]
    fn the_owner_is_the_managed_cluster_addon_by_uid() {
        let mut m = ManagedClusterAddOn::new(ADDON_NAME, Default::default());
        m.metadata.namespace = Some("cluster1".into());
        assert_eq!(owner_of(&m), None, "no uid: not a stored object");
        m.metadata.uid = Some("uid-1".into());
        let o = owner_of(&m).expect("owner");
        assert_eq!(
            (
                o.api_version.as_str(),
                o.kind.as_str(),
                o.name.as_str(),
                o.uid.as_str()
            ),
            (
                "addon.open-cluster-management.io/v1alpha1",
                "ManagedClusterAddOn",
                ADDON_NAME,
                "uid-1"
            )
        );
        assert_eq!((o.controller, o.block_owner_deletion), (None, None));
        let meta: PartialObjectMeta<ManagedClusterAddOn> = PartialObjectMeta {
            types: None,
            metadata: m.metadata.clone(),
            _phantom: Default::default(),
        };
        assert_eq!(owner_of(&meta), Some(o), "from its metadata alone");
    }
}
