//! A small client of Prometheus' HTTP API (`GET /api/v1/alerts`): the firing alerts, an input
//! polled rather than watched.
//!
//! Plain `http://` and `https://` (rustls with the `ring` provider; the CA is the
//! `--prometheus-ca-file` when given, else the system's roots). The bearer token is read from
//! its file before every request, because projected service-account tokens rotate; the CA
//! file is re-read too, and the TLS client rebuilt only when its content changes.
//!
//! User information in the URL (`https://user:password@host/`) is sent as HTTP Basic
//! authentication (`Authorization: Basic`), never in the request line (hyper drops it, and
//! Basic auth would fail without a word); it is refused together with a token file, and over
//! plain `http://` without `--prometheus-insecure-http`, as a token is. Neither the URL's
//! credentials nor the token are ever shown: `PrometheusConfig`'s `Debug` prints the URL
//! redacted.
//!
//! Behind a proxy: `HTTPS_PROXY`/`HTTP_PROXY` (and lower-case) unless `NO_PROXY` names
//! Prometheus' host ([`crate::runtime::proxy`]; in-cluster Prometheus is normally in
//! `NO_PROXY`), through an HTTP `CONNECT` tunnel; an `https://` proxy is verified with the
//! `--prometheus-ca-file` and the bundle of `CA_BUNDLE_FILE_PATH`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper::{Request, StatusCode, Uri, header};
use hyper_rustls::{ConfigBuilderExt, HttpsConnector};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use secrecy::{ExposeSecret, SecretString};

use crate::runtime::proxy::{Connector, Proxy, proxy_for, proxy_tls};
use update_status_api::input::{Alert, AlertsResponse};
use update_status_assess::redact::{redact_url, redact_urls_in};

/// Largest `/api/v1/alerts` answer read: about 100,000 small alerts, 10,000 richly annotated
/// ones (a cluster with thousands of alerts stays below); a longer one is an error, not read
/// further. It is parsed straight into [`AlertsResponse`] (no JSON tree in between).
pub const MAX_BODY: usize = 16 * 1024 * 1024;
/// Characters kept of a text Prometheus sent (its `error`, a body quoted in an error).
pub const MAX_ERROR_TEXT: usize = 300;

/// Where and how to reach Prometheus. `Debug` shows the URL without its credentials.
#[derive(Clone)]
pub struct PrometheusConfig {
    /// Base URL, e.g. `https://thanos-querier.openshift-monitoring.svc:9091` (a path prefix is
    /// kept: `<url>/api/v1/alerts` is requested).
    pub url: String,
    /// File holding a bearer token, read before every request.
    pub token_file: Option<PathBuf>,
    /// PEM file of the CA(s) to trust for `https` (instead of the system's roots).
    pub ca_file: Option<PathBuf>,
    /// Timeout of one request (connection, answer and body).
    pub timeout: Duration,
    /// Allow sending the bearer token over plain `http://` (`--prometheus-insecure-http`);
    /// without it, a token file with an `http://` URL is refused at start.
    pub insecure_http: bool,
}

impl std::fmt::Debug for PrometheusConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusConfig")
            .field("url", &redact_url(&self.url))
            .field("token_file", &self.token_file)
            .field("ca_file", &self.ca_file)
            .field("timeout", &self.timeout)
            .field("insecure_http", &self.insecure_http)
            .finish()
    }
}

/// Why alerts could not be read. `reason()` is a short, bounded label for metrics.
#[derive(Debug, thiserror::Error)]
pub enum PrometheusError {
    /// The URL is not a valid `http`/`https` URL, or would send the token in clear.
    #[error("invalid Prometheus URL {url:?}: {message}")]
    Url {
        /// The URL (credentials redacted).
        url: String,
        /// What is wrong.
        message: String,
    },
    /// The token file could not be read.
    #[error("reading the bearer token from {path}: {source}")]
    Token {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The CA file could not be read or holds no certificate; or no system roots.
    #[error("TLS setup: {0}")]
    Tls(String),
    /// The proxy settings of the environment cannot be used.
    #[error("proxy: {0}")]
    Proxy(String),
    /// Connecting or sending failed.
    #[error("requesting {url}: {message}")]
    Request {
        /// The URL requested.
        url: String,
        /// The error chain.
        message: String,
    },
    /// No complete answer in time.
    #[error("requesting {url}: no answer within {timeout:?}")]
    Timeout {
        /// The URL requested.
        url: String,
        /// The timeout.
        timeout: Duration,
    },
    /// Prometheus answered with an HTTP error.
    #[error("{url} answered {status}: {body}")]
    Status {
        /// The URL requested.
        url: String,
        /// The status.
        status: StatusCode,
        /// The start of the body.
        body: String,
    },
    /// The answer is not the expected JSON, or says `"status": "error"`.
    #[error("{url}: unexpected answer: {message}")]
    Decode {
        /// The URL requested.
        url: String,
        /// What is wrong.
        message: String,
    },
}

impl PrometheusError {
    /// A bounded label value for the failure counter.
    pub fn reason(&self) -> &'static str {
        match self {
            PrometheusError::Url { .. } | PrometheusError::Proxy(_) => "config",
            PrometheusError::Token { .. } => "token",
            PrometheusError::Tls(_) => "tls",
            PrometheusError::Request { .. } => "connect",
            PrometheusError::Timeout { .. } => "timeout",
            PrometheusError::Status { .. } => "http",
            PrometheusError::Decode { .. } => "decode",
        }
    }
}

type HttpsClient = Client<HttpsConnector<Connector>, Empty<Bytes>>;

/// A Prometheus API client.
pub struct PrometheusClient {
    config: PrometheusConfig,
    /// [`PrometheusConfig::url`] and the alerts endpoint, redacted.
    base_url: String,
    alerts_url: String,
    alerts_uri: Uri,
    /// `Basic <base64(user:password)>` from the URL's user information, if it has any.
    basic_auth: Option<SecretString>,
    /// The HTTP client and the CA file content it was built with.
    client: Option<(Option<Vec<u8>>, HttpsClient)>,
    /// The proxy of the environment for Prometheus' URL, if any.
    proxy: Option<Proxy>,
}

impl PrometheusClient {
    /// Checks the URL; the TLS setup happens at the first request.
    pub fn new(config: PrometheusConfig) -> Result<Self, PrometheusError> {
        let bad = |message: &str| PrometheusError::Url {
            url: redact_url(&config.url),
            message: message.to_string(),
        };
        // The url crate's errors are fixed texts (they never quote the URL).
        let mut parsed =
            url::Url::parse(config.url.trim()).map_err(|e| bad(&format!("not a URL: {e}")))?;
        let https = match parsed.scheme() {
            "https" => true,
            "http" => false,
            _ => return Err(bad("the scheme must be http or https")),
        };
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(bad("no host"));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(bad("no query or fragment allowed"));
        }
        let basic_auth = basic_auth(&parsed).map_err(&bad)?;
        if basic_auth.is_some() && config.token_file.is_some() {
            return Err(bad(
                "the URL has user information (sent as Basic authentication) and \
                 --prometheus-token-file gives a bearer token: use one of them",
            ));
        }
        if !https && !config.insecure_http {
            if config.token_file.is_some() {
                return Err(bad(
                    "the bearer token of --prometheus-token-file would be sent in clear over \
                     http://; use an https:// URL (with --prometheus-ca-file for a private CA), or \
                     pass --prometheus-insecure-http to allow it",
                ));
            }
            if basic_auth.is_some() {
                return Err(bad(
                    "the password in the URL (Basic authentication) would be sent in clear over \
                     http://; use an https:// URL, or pass --prometheus-insecure-http to allow it",
                ));
            }
        }
        // Never in the request line: the credentials travel in the Authorization header only.
        if parsed.set_username("").is_err() || parsed.set_password(None).is_err() {
            return Err(bad("the user information cannot be separated from the URL"));
        }
        let base = parsed.as_str().trim_end_matches('/').to_string();
        let uri: Uri = format!("{base}/api/v1/alerts")
            .parse()
            .map_err(|e: hyper::http::uri::InvalidUri| bad(&e.to_string()))?;
        let proxy = proxy_for(&uri, None, "Prometheus")
            .map_err(|e| PrometheusError::Proxy(e.to_string()))?;
        Ok(PrometheusClient {
            proxy,
            base_url: redact_url(&base),
            alerts_url: redact_url(&uri.to_string()),
            config,
            alerts_uri: uri,
            basic_auth,
            client: None,
        })
    }

    /// The configured base URL, without credentials (for logs and insights).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The proxy its requests go through, if any (shown without credentials).
    pub fn proxy(&self) -> Option<&Proxy> {
        self.proxy.as_ref()
    }

    /// The URL of the alerts endpoint, without credentials (for logs and errors).
    pub fn alerts_url(&self) -> String {
        self.alerts_url.clone()
    }

    fn http_client(&mut self) -> Result<HttpsClient, PrometheusError> {
        let ca = match &self.config.ca_file {
            Some(path) => Some(std::fs::read(path).map_err(|e| {
                PrometheusError::Tls(format!("reading the CA file {}: {e}", path.display()))
            })?),
            None => None,
        };
        if let Some((built_with, client)) = &self.client
            && *built_with == ca
        {
            return Ok(client.clone());
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| PrometheusError::Tls(e.to_string()))?;
        // The CA file's certificates also verify an https:// proxy.
        let mut ca_der: Vec<Vec<u8>> = Vec::new();
        let tls = match &ca {
            Some(pem) => {
                let mut roots = rustls::RootCertStore::empty();
                let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
                    .collect::<Result<_, _>>()
                    .map_err(|e| {
                        PrometheusError::Tls(format!("parsing the CA file {}: {e}", self.ca_name()))
                    })?;
                ca_der.extend(certs.iter().map(|c| c.to_vec()));
                let (added, _) = roots.add_parsable_certificates(certs);
                if added == 0 {
                    return Err(PrometheusError::Tls(format!(
                        "the CA file {} holds no usable certificate",
                        self.ca_name()
                    )));
                }
                builder.with_root_certificates(roots).with_no_client_auth()
            }
            None => builder
                .with_native_roots()
                .map_err(|e| PrometheusError::Tls(format!("loading the system's CAs: {e}")))?
                .with_no_client_auth(),
        };
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(self.config.timeout));
        let http = Connector::new(http, self.proxy.as_ref(), |p| proxy_tls(p, &ca_der))
            .map_err(|e| PrometheusError::Tls(e.to_string()))?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).build(connector);
        self.client = Some((ca, client.clone()));
        Ok(client)
    }

    fn ca_name(&self) -> String {
        self.config
            .ca_file
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }

    fn token(&self) -> Result<Option<String>, PrometheusError> {
        let Some(path) = &self.config.token_file else {
            return Ok(None);
        };
        let token = std::fs::read_to_string(path).map_err(|source| PrometheusError::Token {
            path: path.clone(),
            source,
        })?;
        let token = token.trim();
        Ok((!token.is_empty()).then(|| token.to_string()))
    }

    /// The active alerts (firing and pending), as Prometheus lists them.
    pub async fn alerts(&mut self) -> Result<Vec<Alert>, PrometheusError> {
        let url = self.alerts_url();
        let token = self.token()?;
        let client = self.http_client()?;
        let mut req =
            Request::get(self.alerts_uri.clone()).header(header::ACCEPT, "application/json");
        if let Some(t) = token {
            req = req.header(
                header::AUTHORIZATION,
                sensitive(&url, &format!("Bearer {t}"))?,
            );
        } else if let Some(basic) = &self.basic_auth {
            req = req.header(
                header::AUTHORIZATION,
                sensitive(&url, basic.expose_secret())?,
            );
        }
        let req = req
            .body(Empty::<Bytes>::new())
            .map_err(|e| PrometheusError::Request {
                url: url.clone(),
                message: e.to_string(),
            })?;
        let timeout = self.config.timeout;
        let fetch = async {
            let resp = client
                .request(req)
                .await
                .map_err(|e| PrometheusError::Request {
                    url: url.clone(),
                    message: error_chain(&e),
                })?;
            let status = resp.status();
            let body = Limited::new(resp.into_body(), MAX_BODY)
                .collect()
                .await
                .map_err(|e| PrometheusError::Request {
                    url: url.clone(),
                    message: format!("reading the answer: {e}"),
                })?
                .to_bytes();
            Ok::<_, PrometheusError>((status, body))
        };
        let (status, body) = tokio::time::timeout(timeout, fetch).await.map_err(|_| {
            PrometheusError::Timeout {
                url: url.clone(),
                timeout,
            }
        })??;
        parse_alerts(&url, status, &body)
    }
}

/// `Basic <base64(user:password)>` of `url`'s user information (percent-decoded), if any.
fn basic_auth(url: &url::Url) -> Result<Option<SecretString>, &'static str> {
    if url.username().is_empty() && url.password().is_none() {
        return Ok(None);
    }
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .map(|d| d.into_owned())
            .map_err(|_| "the user information is not UTF-8 once percent-decoded")
    };
    let user = decode(url.username())?;
    let password = decode(url.password().unwrap_or_default())?;
    if user.contains(':') {
        return Err("the user name of the user information holds a ':'");
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    Ok(Some(SecretString::from(format!("Basic {encoded}"))))
}

/// A header value marked sensitive (hyper never logs it; HTTP/2 never indexes it).
fn sensitive(url: &str, value: &str) -> Result<header::HeaderValue, PrometheusError> {
    let mut v = header::HeaderValue::from_str(value).map_err(|_| PrometheusError::Request {
        url: url.to_string(),
        message: "the credentials hold characters an HTTP header cannot carry".to_string(),
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// `s` cut to [`MAX_ERROR_TEXT`] characters (then `...`), on one line.
fn cut(s: &str) -> String {
    let s = s.trim();
    let mut out: String = s
        .chars()
        .take(MAX_ERROR_TEXT)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.chars().nth(MAX_ERROR_TEXT).is_some() {
        out.push_str("...");
    }
    out
}

/// The fields of an error answer (`{"status": "error", "error": "..."}`): nothing else is read.
#[derive(serde::Deserialize, Default)]
struct ErrorAnswer {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// Reads an `/api/v1/alerts` answer straight into its types. Texts Prometheus sent that are
/// quoted in errors (its `error`, the body) are cut ([`cut`]).
pub fn parse_alerts(
    url: &str,
    status: StatusCode,
    body: &[u8],
) -> Result<Vec<Alert>, PrometheusError> {
    let text = || {
        cut(&String::from_utf8_lossy(
            &body[..body.len().min(4 * MAX_ERROR_TEXT)],
        ))
    };
    // Prometheus answers API errors with a JSON body (`status: error`) and a 4xx/5xx status.
    if !status.is_success() {
        let detail = serde_json::from_slice::<ErrorAnswer>(body)
            .ok()
            .and_then(|e| e.error)
            .map(|e| cut(&e))
            .unwrap_or_else(text);
        return Err(PrometheusError::Status {
            url: url.to_string(),
            status,
            body: detail,
        });
    }
    let mut resp: AlertsResponse = serde_json::from_slice(body).map_err(|e| {
        // An error answer with a 200, or not an answer at all.
        let answer = serde_json::from_slice::<ErrorAnswer>(body).unwrap_or_default();
        let message = match (answer.status.as_deref(), answer.error) {
            (Some(s), error) if s != "success" => format!(
                "status {}: {}",
                cut(s),
                error.map_or_else(|| "no error message".to_string(), |e| cut(&e))
            ),
            _ if e.is_syntax() || e.is_eof() => {
                format!("not JSON ({}): {}", cut(&e.to_string()), text())
            }
            _ => cut(&e.to_string()),
        };
        PrometheusError::Decode {
            url: url.to_string(),
            message,
        }
    })?;
    if resp.status != "success" {
        let resp_status = std::mem::take(&mut resp.status);
        drop(resp);
        let error = serde_json::from_slice::<ErrorAnswer>(body)
            .ok()
            .and_then(|a| a.error)
            .map_or_else(|| "no error message".to_string(), |e| cut(&e));
        return Err(PrometheusError::Decode {
            url: url.to_string(),
            message: format!(
                "status {:?} instead of \"success\": {error}",
                cut(&resp_status)
            ),
        });
    }
    Ok(resp.data.alerts)
}

/// An error and its sources, `: `-separated (hyper's top-level message alone says little).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        let m = inner.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = inner.source();
    }
    redact_urls_in(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(url: &str) -> PrometheusConfig {
        PrometheusConfig {
            url: url.to_string(),
            token_file: None,
            ca_file: None,
            timeout: Duration::from_secs(1),
            insecure_http: true,
        }
    }

    #[test]
    fn urls() {
        let c = PrometheusClient::new(cfg("https://thanos:9091/")).expect("valid");
        assert_eq!(c.alerts_url(), "https://thanos:9091/api/v1/alerts");
        let c = PrometheusClient::new(cfg("http://127.0.0.1:9090/prom")).expect("valid");
        assert_eq!(c.alerts_url(), "http://127.0.0.1:9090/prom/api/v1/alerts");
        for bad in ["ftp://x", "thanos:9091", "", "http://", "http://x/?a=b"] {
            let e = PrometheusClient::new(cfg(bad)).err();
            assert!(
                matches!(e, Some(PrometheusError::Url { .. })),
                "{bad}: {e:?}"
            );
        }
    }

    #[test]
    fn answers() {
        let ok = br#"{"status":"success","data":{"alerts":[{"labels":{"alertname":"A"},"annotations":{},"state":"firing","activeAt":"2024-01-01T12:00:00.123456789Z","value":"1e+00"}]}}"#;
        let alerts = parse_alerts("u", StatusCode::OK, ok).expect("parses");
        assert_eq!(alerts.len(), 1);
        assert_eq!(alerts[0].labels["alertname"], "A");
        assert!(alerts[0].active_at.is_some());

        let e = parse_alerts(
            "u",
            StatusCode::SERVICE_UNAVAILABLE,
            br#"{"status":"error","errorType":"unavailable","error":"not ready"}"#,
        )
        .expect_err("http error");
        assert_eq!(
            e.to_string(),
            "u answered 503 Service Unavailable: not ready"
        );
        assert_eq!(e.reason(), "http");

        let e = parse_alerts(
            "u",
            StatusCode::FORBIDDEN,
            b"Forbidden (user=system:anonymous)\n",
        )
        .expect_err("http error");
        assert!(
            e.to_string().ends_with("Forbidden (user=system:anonymous)"),
            "{e}"
        );

        let e = parse_alerts("u", StatusCode::OK, b"<html>login</html>").expect_err("not json");
        assert_eq!(e.reason(), "decode");
        assert!(e.to_string().contains("<html>login</html>"), "{e}");

        let e = parse_alerts("u", StatusCode::OK, br#"{"status":"error","error":"boom"}"#)
            .expect_err("api error");
        assert!(e.to_string().contains("boom"), "{e}");

        let e =
            parse_alerts("u", StatusCode::OK, br#"{"data":{"alerts":[]}}"#).expect_err("no status");
        assert_eq!(e.reason(), "decode");
    }

    #[tokio::test]
    async fn token_and_ca_errors_are_reported_not_fatal() {
        let dir = std::env::temp_dir().join(format!("us-prom-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let mut c = PrometheusClient::new(PrometheusConfig {
            token_file: Some(dir.join("missing-token")),
            ..cfg("http://127.0.0.1:1")
        })
        .expect("valid");
        let e = c.alerts().await.expect_err("no token file");
        assert_eq!(e.reason(), "token");

        let bad_ca = dir.join("ca.pem");
        std::fs::write(&bad_ca, "not a certificate").expect("write");
        let mut c = PrometheusClient::new(PrometheusConfig {
            ca_file: Some(bad_ca),
            ..cfg("https://127.0.0.1:1")
        })
        .expect("valid");
        let e = c.alerts().await.expect_err("bad CA");
        assert_eq!(e.reason(), "tls", "{e}");

        // Nothing listens on port 1: a connection error, quickly.
        let mut c = PrometheusClient::new(cfg("http://127.0.0.1:1")).expect("valid");
        let e = c.alerts().await.expect_err("refused");
        assert_eq!(e.reason(), "connect", "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A one-shot HTTP server on loopback (a thread) that answers `body` and hands back the
    /// request it got.
    fn serve_once(
        status: &'static str,
        body: &'static str,
    ) -> (String, std::thread::JoinHandle<String>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = std::thread::spawn(move || {
            let Ok((mut s, _)) = listener.accept() else {
                return String::new();
            };
            let mut buf = vec![0u8; 8192];
            let n = s.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).into_owned();
            let resp = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(resp.as_bytes());
            req
        });
        (format!("http://{addr}"), task)
    }

    /// A one-shot HTTP server on loopback that answers `body` (written in pieces; the client may
    /// stop reading it).
    fn serve_bytes(body: Vec<u8>) -> (String, std::thread::JoinHandle<()>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = std::thread::spawn(move || {
            let Ok((mut s, _)) = listener.accept() else {
                return;
            };
            let mut buf = vec![0u8; 8192];
            let _ = s.read(&mut buf);
            // A client that stops reading (the limit) must not block this thread for ever.
            let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes());
            for piece in body.chunks(1 << 16) {
                if s.write_all(piece).is_err() {
                    return;
                }
            }
        });
        (format!("http://{addr}"), task)
    }

    /// Issue #29 item 5: an answer over [`MAX_BODY`] (60 MB) is refused without being read
    /// further; 100,000 firing alerts (under it) are read straight into their types; a huge
    /// `error` is cut. Run alone, it prints the test process's peak RSS (`VmHWM`).
    #[tokio::test]
    async fn big_answers_are_bounded_and_errors_cut() {
        let alert = |i: usize| {
            format!(
                r#"{{"labels":{{"alertname":"A{i}","severity":"warning"}},"annotations":{{"summary":"s"}},"state":"firing","activeAt":"2024-01-01T12:30:00Z"}}"#
            )
        };
        let many = |n: usize| {
            let list: Vec<String> = (0..n).map(alert).collect();
            format!(
                r#"{{"status":"success","data":{{"alerts":[{}]}}}}"#,
                list.join(",")
            )
            .into_bytes()
        };
        // 60 MB: refused once MAX_BODY bytes are read.
        let mut huge = many(1);
        huge.resize(60_000_000, b' ');
        let (url, server) = serve_bytes(huge);
        let mut c = PrometheusClient::new(PrometheusConfig {
            timeout: Duration::from_secs(20),
            ..cfg(&url)
        })
        .expect("valid");
        let e = c.alerts().await.expect_err("over the limit");
        assert_eq!(e.reason(), "connect", "{e}");
        assert!(e.to_string().contains("length limit exceeded"), "{e}");
        drop(server); // stops writing within its write timeout
        // 100,000 alerts: read (about 15 MB).
        let body = many(100_000);
        assert!(body.len() < MAX_BODY, "{}", body.len());
        let (url, server) = serve_bytes(body);
        let mut c = PrometheusClient::new(PrometheusConfig {
            timeout: Duration::from_secs(20),
            ..cfg(&url)
        })
        .expect("valid");
        let alerts = c.alerts().await.expect("read");
        assert_eq!(alerts.len(), 100_000);
        let _ = server.join();
        // A 1 MB error: cut.
        let error = format!(
            r#"{{"status":"error","error":"{}"}}"#,
            "e".repeat(1_000_000)
        );
        for status in [StatusCode::OK, StatusCode::BAD_REQUEST] {
            let e = parse_alerts("u", status, error.as_bytes()).expect_err("error");
            assert!(
                e.to_string().len() < 2 * MAX_ERROR_TEXT,
                "{status}: {} chars",
                e.to_string().len()
            );
        }
        let garbage = "x".repeat(1_000_000);
        let e = parse_alerts("u", StatusCode::OK, garbage.as_bytes()).expect_err("not JSON");
        assert!(
            e.to_string().len() < 2 * MAX_ERROR_TEXT + 200,
            "{}",
            e.to_string().len()
        );
        if let Ok(s) = std::fs::read_to_string("/proc/self/status")
            && let Some(l) = s.lines().find(|l| l.starts_with("VmHWM:"))
        {
            eprintln!("peak RSS of the test process: {l}");
        }
    }

    #[test]
    fn a_token_over_plain_http_needs_the_insecure_flag() {
        let with_token = |insecure_http| PrometheusConfig {
            token_file: Some(PathBuf::from("/var/run/token")),
            insecure_http,
            ..cfg("http://prometheus:9090")
        };
        let err = PrometheusClient::new(with_token(false))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("--prometheus-insecure-http"), "{err}");
        assert!(err.contains("in clear"), "{err}");
        assert!(PrometheusClient::new(with_token(true)).is_ok());
        // No token: nothing secret goes over http.
        assert!(
            PrometheusClient::new(PrometheusConfig {
                insecure_http: false,
                ..cfg("http://prometheus:9090")
            })
            .is_ok()
        );
        // https: the token is encrypted.
        assert!(
            PrometheusClient::new(PrometheusConfig {
                url: "https://prometheus:9091".into(),
                ..with_token(false)
            })
            .is_ok()
        );
    }

    #[tokio::test]
    async fn credentials_in_the_url_are_never_shown() {
        let mut c =
            PrometheusClient::new(cfg("http://user:s3cret@127.0.0.1:1/prefix/")).expect("valid");
        assert_eq!(c.base_url(), "http://127.0.0.1:1/prefix");
        assert_eq!(c.alerts_url(), "http://127.0.0.1:1/prefix/api/v1/alerts");
        let err = c
            .alerts()
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("127.0.0.1:1"), "{err}");
        assert!(!err.contains("s3cret") && !err.contains("user:"), "{err}");
        let bad = PrometheusClient::new(cfg("ftp://user:s3cret@h/"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(bad.contains("scheme") && !bad.contains("s3cret"), "{bad}");
    }

    #[tokio::test]
    async fn reads_alerts_with_a_fresh_token_each_time() {
        let dir = std::env::temp_dir().join(format!("us-prom-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let token = dir.join("token");
        std::fs::write(&token, "first\n").expect("write");
        let (url, server) = serve_once(
            "200 OK",
            r#"{"status":"success","data":{"alerts":[{"labels":{"alertname":"X"},"state":"firing"}]}}"#,
        );
        let mut c = PrometheusClient::new(PrometheusConfig {
            token_file: Some(token.clone()),
            ..cfg(&url)
        })
        .expect("valid");
        let alerts = c.alerts().await.expect("alerts");
        assert_eq!(alerts.len(), 1);
        let req = server.join().expect("server");
        assert!(req.starts_with("GET /api/v1/alerts HTTP/1.1"), "{req}");
        assert!(
            req.to_ascii_lowercase()
                .contains("authorization: bearer first"),
            "{req}"
        );

        std::fs::write(&token, "second").expect("write");
        let (url2, server) = serve_once("200 OK", r#"{"status":"success","data":{"alerts":[]}}"#);
        c.alerts_uri = format!("{url2}/api/v1/alerts").parse().expect("uri");
        assert!(c.alerts().await.expect("alerts").is_empty());
        let req = server.join().expect("server");
        assert!(
            req.to_ascii_lowercase()
                .contains("authorization: bearer second"),
            "{req}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The URL's user information is sent as Basic authentication (hyper would drop it and the
    /// request would fail with a bare 401), never in the request line, and never shown.
    #[tokio::test]
    async fn user_information_is_sent_as_basic_authentication() {
        let (url, server) = serve_once("200 OK", r#"{"status":"success","data":{"alerts":[]}}"#);
        let with_user = url.replacen("http://", "http://reader:p%40ss%23w0rd@", 1);
        let config = cfg(&format!("{with_user}/prefix"));
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("p%40ss") && !shown.contains("reader:"),
            "{shown}"
        );
        let mut c = PrometheusClient::new(config).expect("valid");
        assert!(c.alerts().await.expect("alerts").is_empty());
        let req = server.join().expect("server");
        assert!(
            req.starts_with("GET /prefix/api/v1/alerts HTTP/1.1\r\n"),
            "{req}"
        );
        let expected = base64::engine::general_purpose::STANDARD.encode("reader:p@ss#w0rd");
        assert!(
            req.to_ascii_lowercase().contains(&format!(
                "authorization: basic {}",
                expected.to_ascii_lowercase()
            )),
            "{req}"
        );
        assert!(!req.contains("p%40ss") && !req.contains("reader:"), "{req}");
    }

    #[test]
    fn user_information_is_refused_with_a_token_or_in_clear() {
        let both = PrometheusClient::new(PrometheusConfig {
            token_file: Some(PathBuf::from("/var/run/token")),
            ..cfg("https://user:s3cret@prometheus:9091")
        })
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(both.contains("use one of them"), "{both}");
        assert!(!both.contains("s3cret"), "{both}");
        let clear = PrometheusClient::new(PrometheusConfig {
            insecure_http: false,
            ..cfg("http://user:s3cret@prometheus:9090")
        })
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(clear.contains("in clear"), "{clear}");
        assert!(!clear.contains("s3cret"), "{clear}");
        assert!(
            PrometheusClient::new(PrometheusConfig {
                insecure_http: false,
                ..cfg("https://user:s3cret@prometheus:9091")
            })
            .is_ok()
        );
    }

    /// Issue #37 item 3: behind a proxy, the polls go through an HTTP CONNECT tunnel, with the
    /// proxy URL's credentials as `Proxy-Authorization`, to a Prometheus only the proxy can
    /// reach (`prometheus.invalid` resolves nowhere).
    #[tokio::test]
    async fn alerts_are_read_through_a_connect_proxy() {
        use std::io::{Read, Write};
        let (target, server) = serve_once("200 OK", r#"{"status":"success","data":{"alerts":[]}}"#);
        let target = target.trim_start_matches("http://").to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let proxy_port = listener.local_addr().expect("addr").port();
        let (heads, head) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            let Ok((mut client, _)) = listener.accept() else {
                return;
            };
            let mut buf = vec![0u8; 8192];
            let n = client.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).into_owned();
            let allowed = request.starts_with("CONNECT prometheus.invalid:9090 ");
            let _ = heads.send(request);
            if !allowed {
                let _ = client.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
                return;
            }
            let Ok(mut upstream) = std::net::TcpStream::connect(&target) else {
                return;
            };
            let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
            let (Ok(mut c2), Ok(mut u2)) = (client.try_clone(), upstream.try_clone()) else {
                return;
            };
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut c2, &mut u2);
            });
            let _ = std::io::copy(&mut upstream, &mut client);
            let _ = client.shutdown(std::net::Shutdown::Both);
        });
        let mut c = PrometheusClient::new(cfg("http://prometheus.invalid:9090")).expect("valid");
        c.proxy = crate::runtime::proxy::proxy_with(
            &c.alerts_uri,
            Some(&format!("http://scraper:s3cret@127.0.0.1:{proxy_port}")),
            "test",
            &crate::runtime::proxy::ProxyEnv::default(),
        )
        .expect("valid proxy");
        let alerts = c.alerts().await.expect("read through the proxy");
        assert!(alerts.is_empty());
        let connect = head.recv().expect("the proxy was asked");
        assert!(
            connect.starts_with("CONNECT prometheus.invalid:9090 HTTP/1.1"),
            "{connect}"
        );
        let basic = base64::engine::general_purpose::STANDARD.encode("scraper:s3cret");
        assert!(
            connect.contains(&format!("Proxy-Authorization: Basic {basic}")),
            "{connect}"
        );
        let req = server.join().expect("server");
        assert!(req.starts_with("GET /api/v1/alerts HTTP/1.1"), "{req}");
        assert!(
            !req.to_ascii_lowercase().contains("proxy-authorization"),
            "{req}"
        );
    }
}
