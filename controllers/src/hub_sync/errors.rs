//! Hub failures: what went wrong, its `reason` label (metrics, warnings) and a hint for the
//! administrator.

use std::time::Duration;

use kube::runtime::watcher;

use crate::runtime::writer::{QUOTA_REQUIRED_POLICY, Refusal, WriteError, refusal};

/// Errors of the hub sync.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// `--cluster-name` is not a DNS-1123 label.
    #[error(
        "invalid cluster name {name:?}: {reason} (it must be a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit)"
    )]
    InvalidClusterName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The hub credentials (a kubeconfig file, or an add-on's Secret) cannot be read or used.
    /// `problem` is a fixed text: kube's own messages may quote a credential.
    #[error("hub credentials {origin}: {problem}")]
    Credentials {
        /// The file, or `namespace/name` of the Secret.
        origin: String,
        /// What is wrong.
        problem: String,
    },
    /// No client can be built from the hub credentials.
    #[error("hub credentials {origin}: cannot build a client: {source}")]
    Client {
        /// The file, or `namespace/name` of the Secret.
        origin: String,
        /// The error.
        #[source]
        source: Box<crate::runtime::client::ClientError>,
    },
    /// No credentials yet (hosted mode: the add-on Secret of this managed cluster does not
    /// exist yet).
    #[error("no hub credentials for managed cluster {cluster}: {hint}")]
    NoCredentials {
        /// The managed cluster.
        cluster: String,
        /// Where they are expected.
        hint: String,
    },
    /// A call to the hub failed.
    #[error("{verb} in namespace {namespace} on the hub: {source}")]
    Api {
        /// What was being done (`list`).
        verb: &'static str,
        /// The hub namespace.
        namespace: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A write to the hub failed.
    #[error("on the hub: {0}")]
    Write(#[from] WriteError),
    /// A pass did not finish in time.
    #[error("a pass took longer than {0:?}")]
    Timeout(Duration),
}

impl HubError {
    /// Why it failed, as the `reason` label of `update_status_hub_sync_errors_total`:
    /// `connect`, `timeout`, `unauthorized`, `forbidden`, `not-found`, `quota` (the hub's
    /// ResourceQuota of the namespace is full, or missing where an admission policy requires
    /// it), `refused` (the hub refused some objects: an admission policy, the schema), `api`,
    /// `config` or `other`.
    pub fn reason(&self) -> &'static str {
        match self {
            HubError::InvalidClusterName { .. } | HubError::Credentials { .. } => "config",
            HubError::Client { .. } | HubError::NoCredentials { .. } => "config",
            HubError::Api { source, .. } => kube_reason(source),
            HubError::Write(WriteError::Api { source, .. }) => kube_reason(source),
            HubError::Write(WriteError::Refused { first, .. }) => match &**first {
                WriteError::Api { source, .. } if refusal(source) == Some(Refusal::QuotaFull) => {
                    "quota"
                }
                _ => "refused",
            },
            HubError::Write(WriteError::Serialize { .. }) => "other",
            HubError::Timeout(_) => "timeout",
        }
    }
}

/// The reason label of a client error.
fn kube_reason(e: &kube::Error) -> &'static str {
    match e {
        kube::Error::Api(s) if s.message.contains(QUOTA_REQUIRED_POLICY) => "quota",
        kube::Error::Api(s) => status_reason(s.code),
        kube::Error::HyperError(_) | kube::Error::Service(_) => "connect",
        kube::Error::Auth(_) => "config",
        _ => "other",
    }
}

fn status_reason(code: u16) -> &'static str {
    match code {
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not-found",
        _ => "api",
    }
}

/// The reason label of a hub watch error; `None` for what is routine (a `410 Gone`: the
/// watcher lists again).
pub(super) fn watch_reason(e: &watcher::Error) -> Option<&'static str> {
    match e {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => Some(kube_reason(e)),
        watcher::Error::WatchError(s) if s.code == 410 => None,
        watcher::Error::WatchError(s) => Some(status_reason(s.code)),
        watcher::Error::NoResourceVersion => Some("api"),
    }
}

/// What an administrator can do about a failure of this reason.
pub(super) fn hint(reason: &str, namespace: &str) -> String {
    match reason {
        "connect" => "the hub API server is unreachable (address, network, TLS)".to_string(),
        "timeout" => "the hub API server does not answer in time".to_string(),
        "unauthorized" => {
            "the hub rejects the credentials (expired or rotated?); the kubeconfig is read again before the next attempt".to_string()
        }
        "forbidden" => format!(
            "not allowed: bind the Role of config/hub/role.yaml in namespace {namespace} on the hub to this agent's hub identity"
        ),
        "not-found" => format!(
            "namespace {namespace} or the update-status CRDs do not exist on the hub (the namespace comes with the cluster's registration; apply config/crd/ on the hub)"
        ),
        "quota" => format!(
            "the hub's ResourceQuota update-status in namespace {namespace} is full, or missing (the hub refuses every write without it): the copies that fit are written and kept up to date, the others are retried with back-off; the hub admin raises a cluster's limits with the ManagedClusterAddOn annotation update.openshift.io/hub-quota-<plural> (update-status-controller --mode=hub keeps the quota: docs/acm.md), or copy less (no --hub-include-progress)"
        ),
        "refused" => "the hub refused some copies (an admission policy such as update-status-hub-copies of config/acm/limits, or the CRD's schema; see the error): the others are written, the refused ones retried with back-off".to_string(),
        "config" => "check the hub credentials (--hub-kubeconfig, or in hosted mode the add-on Secret of this managed cluster)".to_string(),
        _ => "see the error".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub_sync::PASS_TIMEOUT;

    #[test]
    fn hub_error_reasons() {
        let api = |code: u16| HubError::Api {
            verb: "list",
            namespace: "c1".into(),
            source: Box::new(kube::Error::Api(Box::new(kube::core::Status {
                code,
                ..Default::default()
            }))),
        };
        assert_eq!(api(401).reason(), "unauthorized");
        assert_eq!(api(403).reason(), "forbidden");
        assert_eq!(api(404).reason(), "not-found");
        assert_eq!(api(500).reason(), "api");
        assert_eq!(HubError::Timeout(PASS_TIMEOUT).reason(), "timeout");
        let gone = watcher::Error::WatchError(Box::new(kube::core::Status {
            code: 410,
            ..Default::default()
        }));
        assert_eq!(watch_reason(&gone), None, "a 410 is a routine re-list");
        let forbidden =
            watcher::Error::InitialListFailed(kube::Error::Api(Box::new(kube::core::Status {
                code: 403,
                ..Default::default()
            })));
        assert_eq!(watch_reason(&forbidden), Some("forbidden"));
        assert!(hint("forbidden", "c1").contains("config/hub/role.yaml"));
        assert!(hint("not-found", "c1").contains("namespace c1"));
    }

    fn status(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            message: message.into(),
            ..Default::default()
        }))
    }

    fn refused(source: kube::Error) -> HubError {
        let first = WriteError::Api {
            verb: "apply",
            kind: "UpdateInsight".into(),
            namespace: "c1".into(),
            name: "n".into(),
            source: Box::new(source),
        };
        HubError::Write(WriteError::Refused {
            kind: "UpdateInsight".into(),
            namespace: "c1".into(),
            refused: 3,
            stats: Default::default(),
            first: Box::new(first),
        })
    }

    #[test]
    fn a_full_quota_and_admission_refusals_have_reasons_and_hints_of_their_own() {
        // As the API server words them (quota admission, ValidatingAdmissionPolicy).
        let full = status(
            403,
            "updateinsights.update.openshift.io \"n\" is forbidden: exceeded quota: update-status, requested: count/updateinsights.update.openshift.io=1, used: count/updateinsights.update.openshift.io=5, limited: count/updateinsights.update.openshift.io=5",
        );
        let e = refused(full);
        assert_eq!(e.reason(), "quota");
        assert!(
            e.to_string().contains("exceeded quota: update-status"),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("on the hub: 3 UpdateInsight object(s) refused in namespace c1"),
            "{e}"
        );
        let policy = status(
            403,
            "updateinsights.update.openshift.io \"n\" is forbidden: ValidatingAdmissionPolicy 'update-status-hub-copies' with binding 'update-status-hub-copies' denied request: no finalizers",
        );
        assert_eq!(refused(policy).reason(), "refused");
        assert_eq!(refused(status(422, "invalid")).reason(), "refused");
        // No quota at all: every write is refused, the pass stops as for a hub-wide failure.
        let missing = status(
            422,
            "updateinsights.update.openshift.io \"n\" is forbidden: ValidatingAdmissionPolicy 'update-status-hub-quota-required' with binding 'update-status-hub-quota-required' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
        );
        assert_eq!(refusal(&missing), None, "not one object's problem");
        let e = HubError::Write(WriteError::Api {
            verb: "apply",
            kind: "UpdateInsight".into(),
            namespace: "c1".into(),
            name: "n".into(),
            source: Box::new(missing),
        });
        assert_eq!(e.reason(), "quota");
        assert!(hint("quota", "c1").contains("ResourceQuota update-status in namespace c1"));
        assert!(hint("quota", "c1").contains("update.openshift.io/hub-quota-"));
        // RBAC's own 403 stays `forbidden`.
        assert_eq!(
            refusal(&status(403, "User \"x\" cannot create resource")),
            None
        );
        assert!(hint("refused", "c1").contains("admission policy"));
    }
}
