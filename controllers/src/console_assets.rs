//! `update-status-console-plugin` (src/bin/console-plugin.rs): serves the OpenShift console
//! plugin's built assets (`console/dist`: `plugin-manifest.json`, the entry script, the exposed
//! modules' chunks) over HTTPS to the console's bridge, which fetches them for the browser at
//! `/api/plugins/update-status-console-plugin/`.
//!
//! The folder is read once at start into memory (a few hundred KiB): only the files it held are
//! served, by exact name, so no request path reaches the file system (no `..`, no symbolic
//! link, no file added later). `GET` and `HEAD` only; every answer has
//! `X-Content-Type-Options: nosniff` and a JavaScript, JSON or CSS content type (the bridge
//! requires a valid type for scripts); `plugin-manifest.json` is `no-cache` (a new plugin
//! version is seen at once), the content-hashed chunks immutable. `/healthz` answers `ok`
//! (the probes). The certificate is the service CA's (`tls.crt`/`tls.key` of `--cert-dir`, the
//! Secret of `config/console-plugin/service.yaml`), re-read when it rotates, as `/metrics`'
//! ([`crate::endpoints::tls`]).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::endpoints::tls::{self, CertError, CertResolver};

/// Most files served (the build makes about ten).
pub const MAX_FILES: usize = 1000;
/// Largest total of the files (the build makes about 1 MiB).
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Most connections open at once.
pub const MAX_CONNECTIONS: usize = 256;
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What can go wrong starting the server.
#[derive(Debug, thiserror::Error)]
pub enum AssetsError {
    /// The assets' folder cannot be read, or holds no plugin.
    #[error("{path}: {problem}")]
    Folder {
        /// The folder or file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The certificate.
    #[error(transparent)]
    Cert(#[from] CertError),
    /// TLS settings.
    #[error("TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// The address cannot be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// One file: its bytes and content type.
#[derive(Debug, Clone)]
struct Asset {
    bytes: axum::body::Bytes,
    content_type: &'static str,
}

/// The files of the folder, by their path relative to it (`/`-separated).
#[derive(Debug, Clone, Default)]
pub struct Assets {
    files: Arc<BTreeMap<String, Asset>>,
}

/// The content type of a file name, `None` for a kind not served.
pub fn content_type(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "js" => "application/javascript; charset=utf-8",
        "json" => "application/json; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => return None,
    })
}

impl Assets {
    /// Reads every regular file of `dir` (recursively; symbolic links and other kinds are left
    /// out and logged); `plugin-manifest.json` must be there.
    pub fn load(dir: &Path) -> Result<Assets, AssetsError> {
        let mut files = BTreeMap::new();
        let mut total = 0u64;
        let mut stack = vec![dir.to_path_buf()];
        let err = |path: &Path, problem: String| AssetsError::Folder {
            path: path.to_path_buf(),
            problem,
        };
        while let Some(d) = stack.pop() {
            let entries = std::fs::read_dir(&d).map_err(|e| err(&d, e.to_string()))?;
            for entry in entries {
                let entry = entry.map_err(|e| err(&d, e.to_string()))?;
                let path = entry.path();
                let kind = entry.file_type().map_err(|e| err(&path, e.to_string()))?;
                if kind.is_dir() {
                    stack.push(path);
                    continue;
                }
                let rel = path
                    .strip_prefix(dir)
                    .ok()
                    .and_then(Path::to_str)
                    .map(|s| s.replace(std::path::MAIN_SEPARATOR, "/"));
                let (Some(rel), true) = (rel, kind.is_file()) else {
                    tracing::warn!(path = %path.display(), "not served: not a regular file with a UTF-8 name");
                    continue;
                };
                let Some(content_type) = content_type(&rel) else {
                    tracing::warn!(path = %path.display(), "not served: unknown kind of file");
                    continue;
                };
                let bytes = std::fs::read(&path).map_err(|e| err(&path, e.to_string()))?;
                total += bytes.len() as u64;
                if files.len() >= MAX_FILES || total > MAX_BYTES {
                    return Err(err(
                        dir,
                        format!("more than {MAX_FILES} files or {MAX_BYTES} bytes"),
                    ));
                }
                files.insert(
                    rel,
                    Asset {
                        bytes: bytes.into(),
                        content_type,
                    },
                );
            }
        }
        if !files.contains_key("plugin-manifest.json") {
            return Err(err(
                dir,
                "no plugin-manifest.json: not a built console plugin (make console)".to_owned(),
            ));
        }
        Ok(Assets {
            files: Arc::new(files),
        })
    }

    /// The files' names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// The router: the files, `/healthz`, nothing else.
    pub fn router(self) -> Router {
        Router::new().fallback(serve).with_state(self)
    }
}

async fn serve(State(assets): State<Assets>, req: Request) -> Response {
    let head = req.method() == Method::HEAD;
    if req.method() != Method::GET && !head {
        return with_headers(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            "GET or HEAD only\n".into(),
        );
    }
    let path = req.uri().path().trim_start_matches('/');
    if path == "healthz" {
        return with_headers(StatusCode::OK, "text/plain; charset=utf-8", "ok\n".into());
    }
    let Some(a) = assets.files.get(path) else {
        return with_headers(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "not found\n".into(),
        );
    };
    let mut resp = with_headers(
        StatusCode::OK,
        a.content_type,
        if head {
            Body::empty()
        } else {
            Body::from(a.bytes.clone())
        },
    );
    let cache = if path == "plugin-manifest.json" {
        "no-cache"
    } else {
        "public, max-age=86400"
    };
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    resp.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(a.bytes.len()));
    resp
}

fn with_headers(status: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut resp = (status, body).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}

/// Serves `assets` on `bind` over HTTPS with the certificate of `cert_dir` (self-signed without
/// it); returns the address bound and the server's task (it runs until aborted).
pub async fn serve_https(
    assets: Assets,
    bind: SocketAddr,
    cert_dir: Option<PathBuf>,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), AssetsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let resolver = Arc::new(CertResolver::new(cert_dir, provider.clone())?);
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(resolver.clone());
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind(bind)
        .await
        .map_err(|source| AssetsError::Bind { addr: bind, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| AssetsError::Bind { addr: bind, source })?;
    let app = assets.router();
    let task = tokio::spawn(async move {
        tokio::select! {
            () = accept_loop(listener, acceptor, app) => {}
            () = resolver.follow(tls::CHECK_INTERVAL) => {}
        }
    });
    Ok((addr, task))
}

async fn accept_loop(listener: TcpListener, acceptor: TlsAcceptor, app: Router) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "accepting a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            drop(tcp);
            continue;
        };
        let acceptor = acceptor.clone();
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let stream =
                match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                    Ok(Ok(s)) => s,
                    Ok(Err(e)) => {
                        tracing::debug!(%peer, error = %e, "TLS handshake failed");
                        return;
                    }
                    Err(_) => return,
                };
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .max_buf_size(16 * 1024);
            if let Err(e) = http.serve_connection(TokioIo::new(stream), service).await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_the_ones_the_bridge_accepts() {
        assert_eq!(
            content_type("plugin-entry.abc.min.js"),
            Some("application/javascript; charset=utf-8")
        );
        assert_eq!(
            content_type("plugin-manifest.json"),
            Some("application/json; charset=utf-8")
        );
        assert_eq!(content_type("x.html"), None);
        assert_eq!(content_type("noext"), None);
    }

    #[test]
    fn only_the_folders_regular_files_are_served_and_a_manifest_is_required() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(matches!(
            Assets::load(dir.path()),
            Err(AssetsError::Folder { .. })
        ));
        std::fs::write(dir.path().join("plugin-manifest.json"), "{}").expect("write");
        std::fs::create_dir(dir.path().join("locales")).expect("mkdir");
        std::fs::write(dir.path().join("locales/en.json"), "{}").expect("write");
        std::fs::write(dir.path().join("index.html"), "<x>").expect("write");
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("passwd.txt")).expect("link");
        let a = Assets::load(dir.path()).expect("loads");
        let names: Vec<&str> = a.names().collect();
        assert_eq!(names, ["locales/en.json", "plugin-manifest.json"]);
    }
}
