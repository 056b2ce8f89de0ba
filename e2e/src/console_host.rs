//! The console plugin's test host (`e2e/tests/console_plugin.rs`). The OpenShift console
//! cannot run here; this stands in for its bridge, and no more:
//!
//! - `/api/plugins/update-status-console-plugin/...` is proxied to the plugin's own server, the
//!   real `update-status-console-plugin` binary ([`PluginServer`]) serving `console/dist` over
//!   HTTPS with a certificate of a CA made here (the service CA's part), verified against that
//!   CA, as the bridge does;
//! - `/api/kubernetes/...` is proxied to the real API server with a bearer token (the bridge
//!   adds the user's; here a ServiceAccount's), GET only, streamed (watches);
//! - `/static/...` is the host page's own script (`console/dist-host`, built from
//!   `console/host/`: the plugin loader of `@openshift/dynamic-plugin-sdk`, the shared modules,
//!   PatternFly's base styles) and every other path the page itself.
//!
//! Every answer carries a Content-Security-Policy as strict as the page allows (scripts from
//! the origin only, no inline script, no eval), so a string the plugin let through as markup
//! could not run, and the browser reports the attempt.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt as _, Empty};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::paths::{repo_root, workspace_bin};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The plugin's name (its `ConsolePlugin`, `config/console-plugin/console-plugin.yaml`).
pub const PLUGIN: &str = "update-status-console-plugin";

/// The Content-Security-Policy of every answer.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/// `console/dist`, the built plugin, or an error saying how to build it.
pub fn plugin_dist() -> Result<PathBuf, BoxError> {
    let dist = repo_root().join("console/dist");
    let host = repo_root().join("console/dist-host/host.js");
    if !dist.join("plugin-manifest.json").is_file() || !host.is_file() {
        return Err(format!(
            "{} is not built: run `make console` (npm ci and the SDK's webpack build)",
            dist.display()
        )
        .into());
    }
    Ok(dist)
}

/// A CA and a serving certificate for `127.0.0.1` signed by it (PEM): what the service CA
/// gives the plugin's Service.
pub fn serving_cert() -> Result<(String, String, String), BoxError> {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate()?;
    let mut leaf = CertificateParams::new(vec!["localhost".to_owned()])?;
    leaf.subject_alt_names
        .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    let cert = leaf.signed_by(&key, &issuer)?;
    Ok((ca_cert.pem(), cert.pem(), key.serialize_pem()))
}

/// The real `update-status-console-plugin` serving `dist`, stopped on drop.
#[derive(Debug)]
pub struct PluginServer {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub addr: SocketAddr,
    /// The CA its certificate is signed by (PEM).
    pub ca_pem: String,
    _certs: TempDir,
}

#[derive(Debug)]
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

impl PluginServer {
    /// Starts it on a free loopback port with a certificate of a fresh CA, and waits until it
    /// answers `/healthz`.
    pub async fn start(dist: &Path) -> Result<Self, BoxError> {
        let (ca_pem, crt, key) = serving_cert()?;
        let dir = std::env::temp_dir().join(format!("us-console-certs-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("tls.crt"), crt)?;
        std::fs::write(dir.join("tls.key"), key)?;
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()?).parse()?;
        let bin = workspace_bin(
            "update-status-console-plugin",
            "UPDATE_STATUS_CONSOLE_PLUGIN_BIN",
        );
        let child = Command::new(&bin)
            .arg("--dir")
            .arg(dist)
            .arg("--bind-address")
            .arg(addr.to_string())
            .arg("--cert-dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let server = PluginServer {
            child,
            addr,
            ca_pem,
            _certs: TempDir(dir),
        };
        let client = server.client()?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok((200, _, _)) = server.get(&client, "/healthz").await {
                return Ok(server);
            }
            if Instant::now() > deadline {
                return Err(
                    "update-status-console-plugin did not answer /healthz within 30 s".into(),
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// An HTTPS client trusting only the server's CA.
    pub fn client(
        &self,
    ) -> Result<HttpClient<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>, BoxError>
    {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject as _;
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_slice_iter(self.ca_pem.as_bytes()) {
            roots.add(c?)?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .build();
        Ok(HttpClient::builder(TokioExecutor::new()).build(https))
    }

    /// `GET https://<addr><path>`: status, headers and body.
    pub async fn get(
        &self,
        client: &HttpClient<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>,
        path: &str,
    ) -> Result<(u16, axum::http::HeaderMap, Bytes), BoxError> {
        self.request(client, Method::GET, path).await
    }

    /// `<method> https://<addr><path>`.
    pub async fn request(
        &self,
        client: &HttpClient<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>,
        method: Method,
        path: &str,
    ) -> Result<(u16, axum::http::HeaderMap, Bytes), BoxError> {
        let req = axum::http::Request::builder()
            .method(method)
            .uri(format!("https://{}{path}", self.addr))
            .body(Empty::new())?;
        let res = tokio::time::timeout(Duration::from_secs(10), client.request(req)).await??;
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let body = res.into_body().collect().await?.to_bytes();
        Ok((status, headers, body))
    }
}

impl Drop for PluginServer {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

struct Host {
    plugin: PluginServer,
    plugin_client: HttpClient<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>,
    kube: kube::Client,
    statics: BTreeMap<String, Bytes>,
}

/// The host page, serving on `127.0.0.1`; stopped on drop.
pub struct ConsoleHost {
    /// `http://127.0.0.1:<port>`.
    pub origin: String,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for ConsoleHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ConsoleHost({})", self.origin)
    }
}

impl Drop for ConsoleHost {
    fn drop(&mut self) {
        self.task.abort();
    }
}

const PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>update-status console plugin: test host</title><script src=\"/static/host.js\" defer></script></head><body><div id=\"root\"></div></body></html>\n";

impl ConsoleHost {
    /// Serves the host page for the API server of `kubeconfig`, with `token` as every API
    /// request's bearer token, and the plugin through `plugin`.
    pub async fn start(
        kubeconfig: &Path,
        token: &str,
        plugin: PluginServer,
    ) -> Result<Self, BoxError> {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
        let mut config =
            kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await?;
        // The ServiceAccount's token only: none of the kubeconfig's own credentials.
        config.auth_info = kube::config::AuthInfo::default();
        config.headers.push((
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}"))?,
        ));
        config.read_timeout = None;
        let kube = kube::Client::try_from(config)?;
        let mut statics = BTreeMap::new();
        let dir = repo_root().join("console/dist-host");
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            if entry.file_type()?.is_file()
                && let Some(name) = entry.file_name().to_str()
            {
                statics.insert(name.to_owned(), Bytes::from(std::fs::read(entry.path())?));
            }
        }
        let plugin_client = plugin.client()?;
        let state = Arc::new(Host {
            plugin,
            plugin_client,
            kube,
            statics,
        });
        let app = Router::new().fallback(route).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(ConsoleHost {
            origin: format!("http://{addr}"),
            task,
        })
    }
}

fn answer(status: StatusCode, content_type: &str, body: Body) -> Response {
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(content_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

async fn route(State(host): State<Arc<Host>>, req: Request) -> Response {
    if req.method() != Method::GET {
        return answer(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            Body::from("read-only\n"),
        );
    }
    let path = req.uri().path().to_owned();
    let query = req
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    if let Some(rest) = path.strip_prefix(&format!("/api/plugins/{PLUGIN}/")) {
        return plugin_asset(&host, rest).await;
    }
    if let Some(rest) = path.strip_prefix("/api/kubernetes/") {
        return kubernetes(&host, &format!("/{rest}{query}")).await;
    }
    if path.starts_with("/api/") {
        return answer(
            StatusCode::NOT_FOUND,
            "text/plain",
            Body::from("not found\n"),
        );
    }
    if let Some(name) = path.strip_prefix("/static/") {
        return match host.statics.get(name) {
            Some(b) => {
                let ct = if name.ends_with(".js") {
                    "application/javascript"
                } else if name.ends_with(".css") {
                    "text/css"
                } else if name.ends_with(".woff2") {
                    "font/woff2"
                } else if name.ends_with(".svg") {
                    "image/svg+xml"
                } else {
                    "application/octet-stream"
                };
                answer(StatusCode::OK, ct, Body::from(b.clone()))
            }
            None => answer(
                StatusCode::NOT_FOUND,
                "text/plain",
                Body::from("not found\n"),
            ),
        };
    }
    answer(StatusCode::OK, "text/html; charset=utf-8", Body::from(PAGE))
}

async fn plugin_asset(host: &Host, rest: &str) -> Response {
    match host
        .plugin
        .get(&host.plugin_client, &format!("/{rest}"))
        .await
    {
        Ok((status, headers, body)) => {
            let ct = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/octet-stream")
                .to_owned();
            answer(
                StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
                &ct,
                Body::from(body),
            )
        }
        Err(e) => answer(
            StatusCode::BAD_GATEWAY,
            "text/plain",
            Body::from(format!("plugin server: {e}\n")),
        ),
    }
}

async fn kubernetes(host: &Host, path_and_query: &str) -> Response {
    let req = match axum::http::Request::get(path_and_query).body(kube::client::Body::empty()) {
        Ok(r) => r,
        Err(e) => {
            return answer(
                StatusCode::BAD_REQUEST,
                "text/plain",
                Body::from(e.to_string()),
            );
        }
    };
    match host.kube.send(req).await {
        Ok(res) => {
            let status = res.status();
            let ct = res
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/json")
                .to_owned();
            answer(status, &ct, Body::new(res.into_body()))
        }
        Err(e) => answer(
            StatusCode::BAD_GATEWAY,
            "text/plain",
            Body::from(e.to_string()),
        ),
    }
}
