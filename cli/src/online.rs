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
    /// `--fleet`: RBAC denies the lists in all namespaces, and no cluster the user may see was
    /// found to read namespace by namespace.
    #[error(
        "{denied}; and no cluster you may see was found to read namespace by namespace (no clusterview API, ManagedClusters not listable, none named in your RBAC rules)"
    )]
    NoNamespaceReadable {
        /// The cluster-wide list's error.
        denied: String,
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
    list_named(api, params, namespace, &resource_name::<K>()).await
}

/// [`list`] of any kind, `resource` (`<plural>.<group>`) naming it in errors.
pub async fn list_named<K>(
    api: &Api<K>,
    params: &ListParams,
    namespace: Option<&str>,
    resource: &str,
) -> Result<ObjectList<K>, OnlineError>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
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
                resource: resource.to_owned(),
            }
        }
        kube::Error::Api(status) if status.code == 403 || status.is_forbidden() => {
            OnlineError::Forbidden {
                verb: "list",
                resource: resource.to_owned(),
                scope: scope(),
                message: status.message.clone(),
            }
        }
        kube::Error::Api(status) => OnlineError::Status {
            verb: "list",
            resource: resource.to_owned(),
            scope: scope(),
            code: status.code,
            message: status.message.clone(),
        },
        source => OnlineError::Request {
            verb: "list",
            resource: resource.to_owned(),
            scope: scope(),
            source,
        },
    })
}

/// Lists `K` in pages of `chunk` objects (`limit` and `continue`, as kubectl's `--chunk-size`;
/// 0: one request), folding each page into the accumulator `init()` makes, so that only what
/// `fold` keeps stays in memory. A continue token that expired meanwhile (410 Gone) ends in one
/// list of everything, folded into a new accumulator (client-go's pager does the same).
pub async fn fold_pages<K, A>(
    api: &Api<K>,
    params: &ListParams,
    namespace: Option<&str>,
    chunk: u32,
    init: impl Fn() -> A,
    mut fold: impl FnMut(&mut A, Vec<K>),
) -> Result<A, OnlineError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut acc = init();
    let mut page_params = params.clone();
    if chunk > 0 {
        page_params = page_params.limit(chunk);
    }
    loop {
        match list(api, &page_params, namespace).await {
            Ok(page) => {
                let token = page.metadata.continue_.filter(|t| !t.is_empty());
                fold(&mut acc, page.items);
                match token {
                    Some(token) => page_params = page_params.continue_token(&token),
                    None => return Ok(acc),
                }
            }
            Err(OnlineError::Status { code: 410, .. }) if page_params.continue_token.is_some() => {
                let all = list(api, params, namespace).await?;
                let mut acc = init();
                fold(&mut acc, all.items);
                return Ok(acc);
            }
            Err(e) => return Err(e),
        }
    }
}

/// The label selector of health insights.
pub fn health_selector() -> String {
    format!("{}=health", labels::INSIGHT_TYPE)
}
