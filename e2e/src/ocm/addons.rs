//! ManagedClusterAddOns on the hub: enabling and disabling an add-on for a cluster, waiting for
//! its conditions and its install namespace.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use serde_json::{Value, json};

use crate::ocm::conditions::{condition, condition_status};
use crate::ocm::error::{OcmError, api_err, timeout_err};
use crate::ocm::kinds;
use crate::wait::poll_until;

/// The ManagedClusterAddOns of a cluster's hub namespace.
pub fn addons_api(hub: &Client, cluster: &str) -> Api<DynamicObject> {
    Api::namespaced_with(hub.clone(), cluster, &kinds::managed_cluster_addon())
}

/// Enables add-on `addon` for `cluster` as `clusteradm addon enable` does: a ManagedClusterAddOn
/// named after the add-on in the cluster's hub namespace.
pub async fn enable_addon(
    hub: &Client,
    cluster: &str,
    addon: &str,
) -> Result<DynamicObject, OcmError> {
    let ar = kinds::managed_cluster_addon();
    let mut obj = DynamicObject::new(addon, &ar).within(cluster);
    obj.data = json!({"spec": {}});
    addons_api(hub, cluster)
        .create(&PostParams::default(), &obj)
        .await
        .map_err(api_err(format!(
            "creating ManagedClusterAddOn {cluster}/{addon} on the hub"
        )))
}

/// Disables add-on `addon` for `cluster`: deletes its ManagedClusterAddOn (already gone: fine).
pub async fn disable_addon(hub: &Client, cluster: &str, addon: &str) -> Result<(), OcmError> {
    match addons_api(hub, cluster)
        .delete(addon, &DeleteParams::background())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
        Err(source) => Err(OcmError::Api {
            action: format!("deleting ManagedClusterAddOn {cluster}/{addon} on the hub"),
            source,
        }),
    }
}

/// Waits until condition `type_` of the ManagedClusterAddOn `cluster/addon` has `status`;
/// the error names the condition as last seen.
pub async fn wait_addon_condition(
    hub: &Client,
    cluster: &str,
    addon: &str,
    type_: &str,
    status: &str,
    timeout: Duration,
) -> Result<DynamicObject, OcmError> {
    let api = addons_api(hub, cluster);
    let last = Arc::new(Mutex::new(String::from("not seen")));
    let result = poll_until(
        timeout,
        &format!("ManagedClusterAddOn {cluster}/{addon} condition {type_}={status}"),
        || {
            let (api, last) = (api.clone(), last.clone());
            async move {
                let mca = api.get_opt(addon).await.ok()??;
                if let Ok(mut l) = last.lock() {
                    *l = condition(&mca, type_).map_or("absent".into(), Value::to_string);
                }
                (condition_status(&mca, type_).as_deref() == Some(status)).then_some(mca)
            }
        },
    )
    .await;
    result.map_err(|e| match timeout_err(e) {
        OcmError::Timeout { what, timeout } => OcmError::Timeout {
            what: format!(
                "{what} (last seen: {})",
                last.lock().map(|l| l.clone()).unwrap_or_default()
            ),
            timeout,
        },
        other => other,
    })
}

/// The namespace on the managed cluster in which the add-on is installed and its Secret kept
/// (`status.namespace` of its ManagedClusterAddOn, set by the add-on manager).
pub async fn wait_addon_namespace(
    hub: &Client,
    cluster: &str,
    addon: &str,
    timeout: Duration,
) -> Result<String, OcmError> {
    let api = addons_api(hub, cluster);
    poll_until(
        timeout,
        &format!("status.namespace of ManagedClusterAddOn {cluster}/{addon}"),
        || async {
            let mca = api.get_opt(addon).await.ok()??;
            let ns = mca.data.pointer("/status/namespace")?.as_str()?;
            (!ns.is_empty()).then(|| ns.to_string())
        },
    )
    .await
    .map_err(timeout_err)
}
