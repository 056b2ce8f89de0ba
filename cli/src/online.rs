//! Online mode: read the three kinds from the API.

use std::path::PathBuf;

use kube::api::{Api, ListParams, ObjectList};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config, Resource};
use serde::de::DeserializeOwned;
use update_status_api::crd::labels;

/// What can go wrong reading the objects from the API.
#[derive(Debug, thiserror::Error)]
pub enum OnlineError {
    /// The kubeconfig (or in-cluster configuration) could not be loaded.
    #[error("cannot load the Kubernetes client configuration: {0}")]
    Config(String),
    /// The CRDs are not installed (the resource is unknown to the API server).
    #[error("update-status is not installed on this cluster (no {resource} resource)")]
    NotInstalled {
        /// `<plural>.<group>`.
        resource: String,
    },
    /// RBAC forbids reading the objects.
    #[error("RBAC denied access: cannot {verb} {resource} {scope} ({message})")]
    Forbidden {
        /// The verb (`list`).
        verb: &'static str,
        /// `<plural>.<group>`.
        resource: String,
        /// `in namespace <ns>` or `in all namespaces`.
        scope: String,
        /// The API server's message.
        message: String,
    },
    /// Any other answer of the API server.
    #[error("cannot {verb} {resource} {scope}: the API server answered HTTP {code}: {message}")]
    Status {
        /// The verb (`list`).
        verb: &'static str,
        /// `<plural>.<group>`.
        resource: String,
        /// `in namespace <ns>` or `in all namespaces`.
        scope: String,
        /// HTTP status code.
        code: u16,
        /// The API server's message.
        message: String,
    },
    /// The request failed before an answer (connection, TLS, decoding...).
    #[error("cannot {verb} {resource} {scope}")]
    Request {
        /// The verb (`list`).
        verb: &'static str,
        /// `<plural>.<group>`.
        resource: String,
        /// `in namespace <ns>` or `in all namespaces`.
        scope: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// `--selector`/`--clusterset` on a cluster that is not an ACM hub.
    #[error(
        "--selector and --clusterset select ACM ManagedClusters, and this is not an ACM hub (no {resource} resource)"
    )]
    NotAHub {
        /// `<plural>.<group>`.
        resource: String,
    },
    /// The namespace holds no ControlPlaneUpdateStatus.
    #[error(
        "no ControlPlaneUpdateStatus in namespace {namespace}: the update-status controller has not assessed this cluster yet (or runs in another namespace; see -n)"
    )]
    NoControlPlane {
        /// The namespace.
        namespace: String,
    },
}

/// How to reach the cluster.
#[derive(Clone, Debug, Default)]
pub struct Connection {
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`.
    pub context: Option<String>,
}

/// Builds a client the standard way: `--kubeconfig` (or `$KUBECONFIG`/`~/.kube/config` when
/// only `--context` is given), else the inferred configuration (kubeconfig or in-cluster).
pub async fn client(conn: &Connection) -> Result<Client, OnlineError> {
    let options = KubeConfigOptions {
        context: conn.context.clone(),
        ..Default::default()
    };
    let config = match (&conn.kubeconfig, &conn.context) {
        (Some(path), _) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .map_err(|e| OnlineError::Config(format!("{}: {e}", path.display())))?;
            Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| OnlineError::Config(e.to_string()))?
        }
        (None, Some(_)) => Config::from_kubeconfig(&options)
            .await
            .map_err(|e| OnlineError::Config(e.to_string()))?,
        (None, None) => Config::infer()
            .await
            .map_err(|e| OnlineError::Config(e.to_string()))?,
    };
    Client::try_from(config).map_err(|e| OnlineError::Config(e.to_string()))
}

/// `<plural>.<group>` of a kind.
fn resource_name<K: Resource<DynamicType = ()>>() -> String {
    format!("{}.{}", K::plural(&()), K::group(&()))
}

/// Lists `K` with `api`, turning 404 and 403 into clear errors.
pub async fn list<K>(
    api: &Api<K>,
    params: &ListParams,
    namespace: Option<&str>,
) -> Result<ObjectList<K>, OnlineError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let scope = || match namespace {
        Some(ns) => format!("in namespace {ns}"),
        None => "in all namespaces".to_owned(),
    };
    api.list(params).await.map_err(|e| match e {
        // kube's `is_not_found` ignores the code when the reason is missing (a bare
        // "404 page not found" for an unknown resource), so look at the code too.
        kube::Error::Api(status) if status.code == 404 || status.is_not_found() => {
            OnlineError::NotInstalled {
                resource: resource_name::<K>(),
            }
        }
        kube::Error::Api(status) if status.code == 403 || status.is_forbidden() => {
            OnlineError::Forbidden {
                verb: "list",
                resource: resource_name::<K>(),
                scope: scope(),
                message: status.message.clone(),
            }
        }
        kube::Error::Api(status) => OnlineError::Status {
            verb: "list",
            resource: resource_name::<K>(),
            scope: scope(),
            code: status.code,
            message: status.message.clone(),
        },
        source => OnlineError::Request {
            verb: "list",
            resource: resource_name::<K>(),
            scope: scope(),
            source,
        },
    })
}

/// The label selector of health insights.
pub fn health_selector() -> String {
    format!("{}=health", labels::INSIGHT_TYPE)
}
