//! Online mode: read the three kinds from the API.

use std::path::PathBuf;

use kube::api::{Api, ListParams, ObjectList, PartialObjectMeta};
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
///
/// Through a proxy as kubectl and oc choose it (the `update-status-proxy` crate, the
/// controller's): the kubeconfig cluster's `proxy-url` for every request, else `HTTPS_PROXY`
/// unless `NO_PROXY` names the API server (Go's rules; never for localhost). The client speaks
/// HTTP/2 when the API server offers it, and retries throttled calls a bounded number of times
/// (the controller's hub client). No error shows the proxy's URL: it may hold a password.
pub async fn client(conn: &Connection) -> Result<Client, OnlineError> {
    let options = KubeConfigOptions {
        context: conn.context.clone(),
        ..Default::default()
    };
    let (config, kubeconfig) = match (&conn.kubeconfig, &conn.context) {
        (Some(path), _) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .map_err(|e| OnlineError::Config(format!("{}: {e}", path.display())))?;
            let config = Config::from_custom_kubeconfig(kubeconfig.clone(), &options)
                .await
                .map_err(|e| OnlineError::Config(e.to_string()))?;
            (config, Some(kubeconfig))
        }
        (None, Some(_)) => (
            Config::from_kubeconfig(&options)
                .await
                .map_err(|e| OnlineError::Config(e.to_string()))?,
            Kubeconfig::read().ok(),
        ),
        (None, None) => (
            Config::infer()
                .await
                .map_err(|e| OnlineError::Config(e.to_string()))?,
            Kubeconfig::read().ok(),
        ),
    };
    let explicit = kubeconfig.and_then(|k| kubeconfig_proxy(&k, conn.context.as_deref()));
    with_proxy(config, explicit.as_deref()).map_err(OnlineError::Config)
}

/// A client for `config` through `explicit` (a kubeconfig's `proxy-url`) or the environment's
/// proxy. The error is a fixed text (it never quotes the proxy's URL).
fn with_proxy(mut config: Config, explicit: Option<&str>) -> Result<Client, String> {
    use update_status_proxy::{client::build_http2, proxy_for};
    let proxy = proxy_for(&config.cluster_url, explicit, "the kubeconfig's proxy-url")
        .map_err(|e| e.to_string())?;
    // kube's own choice (the kubeconfig's, else HTTPS_PROXY without NO_PROXY) is not used.
    config.proxy_url = None;
    build_http2(config, proxy.as_ref()).map_err(|e| e.to_string())
}

/// The `proxy-url` of the cluster of `context` (else the current context) in `kubeconfig`.
fn kubeconfig_proxy(kubeconfig: &Kubeconfig, context: Option<&str>) -> Option<String> {
    let name = context.or(kubeconfig.current_context.as_deref())?;
    let context = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == name)?
        .context
        .as_ref()?;
    let cluster = kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)?
        .cluster
        .as_ref()?;
    cluster.proxy_url.clone().filter(|u| !u.trim().is_empty())
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
    api.list(params)
        .await
        .map_err(|e| call_error(e, "list", resource, namespace))
}

/// Lists the metadata of `K` with `api` (a `PartialObjectMetadataList`: no spec, no status),
/// turning 404 and 403 into clear errors as [`list`] does.
pub async fn list_metadata<K>(
    api: &Api<K>,
    params: &ListParams,
    namespace: Option<&str>,
) -> Result<ObjectList<PartialObjectMeta<K>>, OnlineError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    api.list_metadata(params)
        .await
        .map_err(|e| call_error(e, "list", &resource_name::<K>(), namespace))
}

/// The error of a `verb` call on `resource` in `namespace` (`None`: all namespaces).
fn call_error(
    e: kube::Error,
    verb: &'static str,
    resource: &str,
    namespace: Option<&str>,
) -> OnlineError {
    let scope = || match namespace {
        Some(ns) => format!("in namespace {ns}"),
        None => "in all namespaces".to_owned(),
    };
    match e {
        // kube's `is_not_found` ignores the code when the reason is missing (a bare
        // "404 page not found" for an unknown resource), so look at the code too.
        kube::Error::Api(status) if status.code == 404 || status.is_not_found() => {
            OnlineError::NotInstalled {
                resource: resource.to_owned(),
            }
        }
        kube::Error::Api(status) if status.code == 403 || status.is_forbidden() => {
            OnlineError::Forbidden {
                verb,
                resource: resource.to_owned(),
                scope: scope(),
                message: status.message.clone(),
            }
        }
        kube::Error::Api(status) => OnlineError::Status {
            verb,
            resource: resource.to_owned(),
            scope: scope(),
            code: status.code,
            message: status.message.clone(),
        },
        source => OnlineError::Request {
            verb,
            resource: resource.to_owned(),
            scope: scope(),
            source,
        },
    }
}

/// Where [`fold_pages`] lists (the namespace, `None`: all, which names it in errors) and in
/// pages of how many objects (`chunk`; 0: one request).
#[derive(Clone, Copy, Debug)]
pub struct Paging<'a> {
    /// The namespace listed (`None`: all namespaces).
    pub namespace: Option<&'a str>,
    /// The objects per page (`limit`; 0: everything in one request).
    pub chunk: u32,
}

/// Lists `K` in pages of `chunk` objects (`limit` and `continue`, as kubectl's `--chunk-size`;
/// 0: one request), folding each page into the accumulator `init()` makes, so that only what
/// `fold` keeps stays in memory. A continue token that expired meanwhile (410 Gone) ends in one
/// list of everything, folded into a new accumulator (client-go's pager does the same).
pub async fn fold_pages<K, A>(
    api: &Api<K>,
    params: &ListParams,
    Paging { namespace, chunk }: Paging<'_>,
    init: impl Fn() -> A,
    fold: impl FnMut(&mut A, Vec<K>),
) -> Result<A, OnlineError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let get = |p: ListParams| async move { list(api, &p, namespace).await };
    fold_paged(params, chunk, get, init, fold).await
}

/// [`fold_pages`] of the objects' metadata only ([`list_metadata`]).
pub async fn fold_metadata_pages<K, A>(
    api: &Api<K>,
    params: &ListParams,
    Paging { namespace, chunk }: Paging<'_>,
    init: impl Fn() -> A,
    fold: impl FnMut(&mut A, Vec<PartialObjectMeta<K>>),
) -> Result<A, OnlineError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let get = |p: ListParams| async move { list_metadata(api, &p, namespace).await };
    fold_paged(params, chunk, get, init, fold).await
}

/// The pager of [`fold_pages`] and [`fold_metadata_pages`]: `get` lists one page.
async fn fold_paged<T, A, F, Fut>(
    params: &ListParams,
    chunk: u32,
    get: F,
    init: impl Fn() -> A,
    mut fold: impl FnMut(&mut A, Vec<T>),
) -> Result<A, OnlineError>
where
    F: Fn(ListParams) -> Fut,
    Fut: std::future::Future<Output = Result<ObjectList<T>, OnlineError>>,
    T: Clone,
{
    let mut acc = init();
    let mut page_params = params.clone();
    if chunk > 0 {
        page_params = page_params.limit(chunk);
    }
    loop {
        match get(page_params.clone()).await {
            Ok(page) => {
                let token = page.metadata.continue_.filter(|t| !t.is_empty());
                fold(&mut acc, page.items);
                match token {
                    Some(token) => page_params = page_params.continue_token(&token),
                    None => return Ok(acc),
                }
            }
            Err(OnlineError::Status { code: 410, .. }) if page_params.continue_token.is_some() => {
                let all = get(params.clone()).await?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    use std::net::{Shutdown, TcpListener, TcpStream};

    use k8s_openapi::api::core::v1::ConfigMap;

    /// A plain-HTTP API server answering one empty ConfigMap list; its address.
    fn api_server() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let body = r#"{"apiVersion":"v1","kind":"ConfigMapList","metadata":{},"items":[]}"#;
                let mut stream = reader.into_inner();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.shutdown(Shutdown::Write);
            }
        });
        addr
    }

    /// A CONNECT proxy tunnelling every request to `upstream`; its port and the heads it got.
    fn connect_proxy(upstream: String) -> (u16, std::sync::mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for mut client in listener.incoming().flatten() {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && client.read_exact(&mut byte).is_ok() {
                    head.push(byte[0]);
                }
                let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
                let Ok(mut server) = TcpStream::connect(&upstream) else {
                    return;
                };
                let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
                let (Ok(mut c2), Ok(mut s2)) = (client.try_clone(), server.try_clone()) else {
                    return;
                };
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c2, &mut s2);
                    let _ = s2.shutdown(Shutdown::Write);
                });
                let _ = std::io::copy(&mut server, &mut client);
                let _ = client.shutdown(Shutdown::Both);
            }
        });
        (port, rx)
    }

    fn kubeconfig(name: &str, server: &str, proxy: &str) -> Connection {
        let path = std::env::temp_dir().join(format!(
            "update-status-cli-{}-{name}.kubeconfig",
            std::process::id()
        ));
        let yaml = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: {server}\n    proxy-url: {proxy}\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n  user:\n    token: t\n"
        );
        std::fs::write(&path, yaml).expect("write the kubeconfig");
        Connection {
            kubeconfig: Some(path),
            context: None,
        }
    }

    #[tokio::test]
    async fn the_kubeconfig_proxy_is_used_and_its_password_never_shown() {
        let (port, heads) = connect_proxy(api_server());
        let conn = kubeconfig(
            "proxied",
            "http://apiserver.invalid:6443",
            &format!("http://alice:S3cret@127.0.0.1:{port}"),
        );
        let client = client(&conn)
            .await
            .unwrap_or_else(|e| panic!("client through the proxy: {e}"));
        let api: Api<ConfigMap> = Api::namespaced(client, "ns");
        let list = api
            .list(&ListParams::default())
            .await
            .unwrap_or_else(|e| panic!("list through the proxy: {e}"));
        assert!(list.items.is_empty());
        let head = heads.recv().expect("the proxy was asked");
        assert!(
            head.starts_with("CONNECT apiserver.invalid:6443 HTTP/1.1\r\n"),
            "{head}"
        );
        // alice:S3cret in Basic.
        assert!(
            head.contains("YWxpY2U6UzNjcmV0"),
            "the proxy's credentials: {head}"
        );
        for (name, proxy) in [
            ("socks", "socks5://alice:S3cret@127.0.0.1:1"),
            ("ftp", "ftp://alice:S3cret@127.0.0.1:1"),
        ] {
            let conn = kubeconfig(name, "https://apiserver.invalid:6443", proxy);
            let e = super::client(&conn)
                .await
                .err()
                .expect("refused")
                .to_string();
            assert!(
                !e.contains("S3cret") && !e.contains("alice") && e.contains("proxy-url"),
                "{e}"
            );
        }
    }
}
