//! Credential rotation: the registration agent made to renew an add-on's client certificate now,
//! through the same path as a renewal at 75-80% of the certificate's lifetime.

use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::json;

use crate::ocm::error::{OcmError, api_err, timeout_err};
use crate::ocm::names::{ADDON_NAME_LABEL, CLUSTER_NAME_LABEL, hub_kubeconfig_secret};
use crate::wait::poll_until;

fn secret_bytes(secret: &Secret, key: &str) -> Option<Vec<u8>> {
    secret.data.as_ref()?.get(key).map(|b| b.0.clone())
}
/// The certificates before and after a rotation.
#[derive(Clone, Debug)]
pub struct Rotation {
    /// `tls.crt` before.
    pub old_cert: Vec<u8>,
    /// `tls.crt` after (a new key too).
    pub new_cert: Vec<u8>,
}

/// Makes the registration agent of `cluster` renew the client certificate of `addon` now, and
/// waits until its Secret (`<addon>-hub-kubeconfig` in `namespace` of the managed cluster) holds
/// the new certificate and key.
///
/// How: the agent requests a new certificate when the Secret's certificate is due (20-25% of its
/// lifetime left), invalid, or when the Secret's other keys differ from what it wrote. The last is
/// the trigger here: the Secret's `cluster-name` is set to another value; the agent then makes a
/// new key and CSR, the add-on manager approves it, the hub's signer signs it, and the agent writes
/// the new `tls.crt`/`tls.key` with `cluster-name` restored, in one update. `kubeconfig`,
/// `tls.crt` and `tls.key` stay valid throughout. Before that, the add-on's issued CSRs are deleted
/// from the hub (as kube-controller-manager's CSR cleaner does after an hour): the agent stops
/// requesting certificates for an add-on while 10 of its CSRs exist.
pub async fn force_rotation(
    hub: &Client,
    managed: &Client,
    cluster: &str,
    addon: &str,
    namespace: &str,
    timeout: Duration,
) -> Result<Rotation, OcmError> {
    let name = hub_kubeconfig_secret(addon);
    let what = format!("Secret {namespace}/{name} on managed cluster {cluster}");
    let secrets: Api<Secret> = Api::namespaced(managed.clone(), namespace);
    let before = secrets
        .get(&name)
        .await
        .map_err(api_err(format!("reading {what}")))?;
    let old_cert = secret_bytes(&before, "tls.crt")
        .ok_or_else(|| OcmError::Unexpected(format!("{what} has no tls.crt")))?;
    let cluster_name = secret_bytes(&before, "cluster-name")
        .ok_or_else(|| OcmError::Unexpected(format!("{what} has no cluster-name")))?;

    let csrs: Api<CertificateSigningRequest> = Api::all(hub.clone());
    let selector = format!("{CLUSTER_NAME_LABEL}={cluster},{ADDON_NAME_LABEL}={addon}");
    poll_until(
        timeout,
        &format!("no pending CSR of add-on {addon} of {cluster} on the hub"),
        || async {
            let list = csrs
                .list(&ListParams::default().labels(&selector))
                .await
                .ok()?;
            list.items
                .iter()
                .all(|c| {
                    let status = c.status.as_ref();
                    status.is_some_and(|s| s.certificate.is_some())
                        || status
                            .and_then(|s| s.conditions.as_ref())
                            .is_some_and(|cs| {
                                cs.iter()
                                    .any(|c| c.type_ == "Denied" || c.type_ == "Failed")
                            })
                })
                .then_some(())
        },
    )
    .await
    .map_err(timeout_err)?;
    let issued = csrs
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(api_err(format!(
            "listing the CSRs of add-on {addon} of {cluster} on the hub"
        )))?;
    for csr in issued.items {
        let csr_name = csr.name_any();
        match csrs.delete(&csr_name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(source) => {
                return Err(OcmError::Api {
                    action: format!("deleting issued CSR {csr_name} on the hub"),
                    source,
                });
            }
        }
    }

    let trigger = json!({"data": {"cluster-name": ByteString(b"rotation-forced-by-e2e".to_vec())}});
    secrets
        .patch(&name, &PatchParams::default(), &Patch::Merge(&trigger))
        .await
        .map_err(api_err(format!("changing cluster-name in {what}")))?;
    let new_cert = poll_until(timeout, &format!("a new certificate in {what}"), || async {
        let s = secrets.get_opt(&name).await.ok()??;
        let cert = secret_bytes(&s, "tls.crt")?;
        (cert != old_cert && secret_bytes(&s, "cluster-name")? == cluster_name).then_some(cert)
    })
    .await
    .map_err(timeout_err)?;
    Ok(Rotation { old_cert, new_cert })
}
