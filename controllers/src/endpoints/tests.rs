//! The endpoints over real sockets: probes, plain and HTTPS `/metrics`, the 401/403/500
//! answers that need no API server (anonymous requests, cached decisions, an unreachable API
//! server), and a rotated certificate served to new connections.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Bytes;
use axum::http::{Request, header};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::CertificateDer;

use super::auth::Decision;
use super::tls::{CERT_FILE, KEY_FILE};
use super::*;

/// A kube client whose API server refuses connections: any review fails.
fn unreachable_api() -> kube::Client {
    let config = kube::Config::new("https://127.0.0.1:1".parse().expect("a URL"));
    kube::Client::try_from(config).expect("a client")
}

/// Tokens of the shape of a JWT (`{"alg":"RS256"}`, a payload, a signature): anything else is
/// refused without a review.
const READER: &str = "eyJhbGciOiJSUzI1NiJ9.cmVhZGVy.c2ln";
const NOBODY: &str = "eyJhbGciOiJSUzI1NiJ9.bm9ib2R5.c2ln";
const UNKNOWN: &str = "eyJhbGciOiJSUzI1NiJ9.dW5rbm93bg.c2ln";

fn localhost(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// GET `url` (plain HTTP, or HTTPS trusting only `ca`), optionally with a bearer token.
async fn get_url(
    url: &str,
    ca: Option<&CertificateDer<'static>>,
    token: Option<&str>,
) -> Result<(u16, hyper::HeaderMap, String), Box<dyn std::error::Error + Send + Sync>> {
    let mut req = Request::get(url);
    if let Some(t) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let req = req.body(Empty::<Bytes>::new())?;
    let res = match ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(ca.clone())?;
            let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
            let https = hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(tls)
                .https_only()
                .enable_http1()
                .build();
            Client::builder(TokioExecutor::new())
                .build(https)
                .request(req)
                .await?
        }
        None => {
            Client::builder(TokioExecutor::new())
                .build_http()
                .request(req)
                .await?
        }
    };
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let body = String::from_utf8(res.into_body().collect().await?.to_bytes().to_vec())?;
    Ok((status, headers, body))
}

/// A CA, and a `tls.crt`/`tls.key` for `localhost`/127.0.0.1 it signs, written into `dir`.
fn write_serving_cert(dir: &Path) -> CertificateDer<'static> {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "test service CA");
    let ca =
        rcgen::CertifiedIssuer::self_signed(ca_params, rcgen::KeyPair::generate().expect("key"))
            .expect("CA");
    let key = rcgen::KeyPair::generate().expect("key");
    let leaf = rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])
        .expect("params")
        .signed_by(&key, &ca)
        .expect("signing");
    std::fs::write(dir.join(CERT_FILE), leaf.pem()).expect("writing tls.crt");
    std::fs::write(dir.join(KEY_FILE), key.serialize_pem()).expect("writing tls.key");
    ca.der().clone()
}

#[tokio::test]
async fn probes_answer_without_data_and_follow_health() {
    let ready = Arc::new(AtomicBool::new(false));
    let health = Probes::new().with_ready({
        let ready = ready.clone();
        move || {
            ready
                .load(Ordering::SeqCst)
                .then_some(())
                .ok_or_else(|| "caches not synced".to_string())
        }
    });
    let probes = serve_probes(localhost(0), health).await.expect("serving");
    let base = format!("http://{}", probes.local_addr());
    let get = |path: &str| get_url_owned(format!("{base}{path}"));
    assert_eq!(get("/healthz").await.0, 200);
    assert_eq!(get("/healthz").await.2, "ok");
    let (status, _, body) = get("/readyz").await;
    assert_eq!((status, body.as_str()), (503, "caches not synced"));
    ready.store(true, Ordering::SeqCst);
    let (status, _, body) = get("/readyz").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    // No metrics (nor anything else) on the probe port.
    assert_eq!(get("/metrics").await.0, 404);
    probes.abort();
}

async fn get_url_owned(url: String) -> (u16, hyper::HeaderMap, String) {
    get_url(&url, None, None).await.expect("GET")
}

/// Metrics with a series in them.
fn some_metrics() -> Arc<Metrics> {
    let metrics = Metrics::new().expect("metrics");
    metrics.writes.write("UpdateInsight", "create");
    Arc::new(metrics)
}

#[tokio::test]
async fn plain_metrics_need_no_token() {
    let metrics = some_metrics();
    let config = MetricsServerConfig {
        bind: localhost(0),
        secure: false,
        cert_dir: None,
    };
    let auth = Arc::new(Authorizer::new(unreachable_api(), "ns", None));
    let server = serve_metrics(config, metrics, auth).await.expect("serving");
    let (status, _, body) = get_url_owned(format!("http://{}/metrics", server.local_addr())).await;
    assert_eq!(status, 200);
    assert!(body.contains("update_status_api_writes_total{"), "{body}");
    server.abort();
}

#[tokio::test]
async fn https_metrics_answer_401_403_200_500_and_serve_a_rotated_certificate() {
    let dir = std::env::temp_dir().join(format!(
        "update-status-metrics-server-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let ca = write_serving_cert(&dir);

    let metrics = some_metrics();
    let auth = Arc::new(Authorizer::new(unreachable_api(), "ns", None));
    auth.remember(
        READER,
        "/metrics",
        Decision::Allowed {
            user: "system:serviceaccount:ns:reader".into(),
        },
    );
    auth.remember(
        NOBODY,
        "/metrics",
        Decision::Forbidden {
            user: "system:serviceaccount:ns:nobody".into(),
        },
    );
    let config = MetricsServerConfig {
        bind: localhost(0),
        secure: true,
        cert_dir: Some(dir.clone()),
    };
    let server = serve_metrics(config, metrics, auth).await.expect("serving");
    let url = format!("https://localhost:{}/metrics", server.local_addr().port());
    let get = |token: Option<&'static str>, ca: CertificateDer<'static>| {
        let url = url.clone();
        async move { get_url(&url, Some(&ca), token).await }
    };

    // Anonymous: 401, without calling the API server.
    let (status, headers, _) = get(None, ca.clone()).await.expect("anonymous GET");
    assert_eq!(status, 401);
    assert_eq!(
        headers.get(header::WWW_AUTHENTICATE).map(|v| v.as_bytes()),
        Some(&b"Bearer"[..])
    );
    // Known to be forbidden: 403 naming the user.
    let (status, _, body) = get(Some(NOBODY), ca.clone()).await.expect("GET");
    assert_eq!(status, 403);
    assert!(body.contains("system:serviceaccount:ns:nobody"), "{body}");
    // Known to be allowed: the metrics.
    let (status, _, body) = get(Some(READER), ca.clone()).await.expect("GET");
    assert_eq!(status, 200);
    assert!(body.contains("update_status_api_writes_total{"), "{body}");
    // Unknown token and no API server to review it: 500, and the server keeps serving.
    let (status, _, body) = get(Some(UNKNOWN), ca.clone()).await.expect("GET");
    assert_eq!(status, 500, "{body}");
    assert!(!body.contains(UNKNOWN), "{body}");
    // No plain HTTP on the HTTPS port.
    let plain = get_url(
        &format!("http://{}/metrics", server.local_addr()),
        None,
        None,
    )
    .await;
    assert!(
        !matches!(plain, Ok((200, _, _))),
        "plain HTTP served the metrics"
    );

    // The service CA rotates: a client trusting only the new CA gets through; one trusting
    // only the old one no longer does.
    let new_ca = write_serving_cert(&dir);
    // The folder's watch reloads it within moments (no handshake reads the files).
    let mut answer = None;
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        if let Ok(a) = get(Some(READER), new_ca.clone()).await {
            answer = Some(a);
            break;
        }
    }
    let (status, _, _) = answer.expect("GET with the new CA within 5 s");
    assert_eq!(status, 200);
    assert!(
        get(Some(READER), ca).await.is_err(),
        "the old certificate is still served"
    );
    server.abort();
    let _ = std::fs::remove_dir_all(&dir);
}
