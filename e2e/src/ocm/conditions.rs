//! Conditions of OCM objects, and waiting for an object to go or a Secret to be filled.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, DynamicObject};
use serde_json::Value;

use crate::ocm::error::{OcmError, timeout_err};
use crate::wait::poll_until;

/// The status (`True`, `False`, `Unknown`) of condition `type_` of an OCM object.
pub fn condition_status(obj: &DynamicObject, type_: &str) -> Option<String> {
    condition(obj, type_).and_then(|c| c.get("status")?.as_str().map(String::from))
}

/// Condition `type_` of an OCM object, whole (`status`, `reason`, `message`, ...).
pub fn condition<'a>(obj: &'a DynamicObject, type_: &str) -> Option<&'a Value> {
    obj.data
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// Waits until the object `name` of `api` is gone.
pub async fn wait_gone<K>(
    api: &Api<K>,
    name: &str,
    what: &str,
    timeout: Duration,
) -> Result<(), OcmError>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let gone = poll_until(timeout, &format!("{what} to be deleted"), || async {
        match api.get_opt(name).await {
            Ok(None) => Some(()),
            _ => None,
        }
    })
    .await;
    gone.map_err(timeout_err)
}

/// Waits until the Secret `namespace/name` exists with every key of `keys`.
pub async fn wait_secret(
    client: &Client,
    namespace: &str,
    name: &str,
    keys: &[&str],
    timeout: Duration,
) -> Result<Secret, OcmError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    poll_until(
        timeout,
        &format!("Secret {namespace}/{name} with keys {keys:?}"),
        || async {
            let s = api.get_opt(name).await.ok()??;
            let data = s.data.as_ref()?;
            keys.iter().all(|k| data.contains_key(*k)).then_some(s)
        },
    )
    .await
    .map_err(timeout_err)
}
