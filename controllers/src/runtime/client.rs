//! The Kubernetes clients of the controller, with a bounded retry of throttled calls.
//!
//! kube 5's default retry (`Config::default_retry`) retries `429`/`503`/`504` answers up to 15
//! times with an exponential back-off that grows to 1,000 s: against a throttling API server a
//! single write could wait minutes inside the client, and the reconciler's whole pass with it
//! (a throttled e2e run once stalled past its 3-minute bound that way). These clients retry the
//! same answers like client-go does: honouring the server's `Retry-After` (the max-inflight and
//! priority-and-fairness filters answer 1 s), otherwise backing off from [`RETRY_MIN`] to
//! [`RETRY_MAX`], [`RETRY_ATTEMPTS`] times at most, so a call fails within about 15 s and the
//! writer's own per-object back-off takes over (see [`crate::runtime::writer`]).
//!
//! Made with kube's own pieces ([`RetryPolicy`], tower's `RetryLayer`): kube builds its retry
//! layer only with fixed parameters, so it is turned off and ours wraps the client's service,
//! behind a `Buffer` (tower's retry needs a cloneable service; kube's is boxed).

use std::time::Duration;

use kube::client::ClientBuilder;
use kube::client::retry::RetryPolicy;
use tower::buffer::BufferLayer;
use tower::retry::RetryLayer;

pub use update_status_proxy::client::{
    BUFFER, ClientError, HUB_PING_INTERVAL, HUB_PING_TIMEOUT, RETRY_ATTEMPTS, RETRY_MAX, RETRY_MIN,
    build_http2,
};

/// A client for `config` with the bounded retry. Must be called within a Tokio runtime.
pub fn build(config: kube::Config) -> Result<kube::Client, ClientError> {
    with_retry(config, RETRY_MIN, RETRY_MAX, RETRY_ATTEMPTS)
}

fn with_retry(
    mut config: kube::Config,
    min: Duration,
    max: Duration,
    attempts: u32,
) -> Result<kube::Client, ClientError> {
    config.default_retry = false;
    let policy = RetryPolicy::new(min, max, attempts, true)
        .map_err(|e| ClientError::Retry(e.to_string()))?;
    Ok(ClientBuilder::try_from(config)?
        .with_layer(&BufferLayer::new(BUFFER))
        .with_layer(&RetryLayer::new(policy))
        .build())
}

/// What is wrong with a kubeconfig kube refused, as a fixed text: kube's own messages may quote
/// the file (a token), so none of them is shown (hub credentials, hosted clusters' admin
/// kubeconfigs).
pub fn kubeconfig_problem(e: &kube::config::KubeconfigError) -> &'static str {
    use kube::config::KubeconfigError as E;
    match e {
        E::ReadConfig(..) => "cannot be read",
        E::Parse(_) => "is not a valid kubeconfig (YAML)",
        E::CurrentContextNotSet => "has no current-context",
        E::LoadContext(_) => "names a current-context that it does not define",
        E::LoadClusterOfContext(_) => "has a current context whose cluster it does not define",
        E::MissingClusterUrl => "has no server URL for its cluster",
        E::ParseClusterUrl(_) => "has a server URL that is not valid",
        E::ParseProxyUrl(_) => "has a proxy URL that is not valid",
        E::LoadCertificateAuthority(_) => {
            "has a certificate authority that cannot be read or decoded"
        }
        E::LoadClientCertificate(_) => "has a client certificate that cannot be read or decoded",
        E::LoadClientKey(_) => "has a client key that cannot be read or decoded",
        E::ParseCertificates(_) => "has certificates that are not valid PEM",
        _ => "cannot be used",
    }
}

/// User agent of the controller's main client (watches, writes, the Lease).
pub const USER_AGENT: &str = concat!("update-status-controller/", env!("CARGO_PKG_VERSION"));
/// User agent of the client that reviews `/metrics` tokens: a client of its own (its own
/// connections), told apart in the API server's audit log and by a FlowSchema if one wants.
pub const REVIEWS_USER_AGENT: &str = concat!(
    "update-status-controller/",
    env!("CARGO_PKG_VERSION"),
    " (metrics-auth)"
);

/// `config` sending `agent` as its `User-Agent` (kube sends none of its own).
pub fn with_user_agent(mut config: kube::Config, agent: &'static str) -> kube::Config {
    config
        .headers
        .retain(|(name, _)| name != hyper::header::USER_AGENT);
    config.headers.push((
        hyper::header::USER_AGENT,
        hyper::header::HeaderValue::from_static(agent),
    ));
    config
}

/// The in-cluster configuration or `KUBECONFIG`'s (as `kube::Client::try_default` reads it).
///
/// kube takes `HTTPS_PROXY` for a kubeconfig's cluster without looking at `NO_PROXY` for it:
/// a proxy from the environment is dropped here when `NO_PROXY` names the API server (an
/// add-on's container gets the fleet's proxy settings, meant for the hub, not for its own
/// cluster). The in-cluster configuration uses no proxy.
pub async fn infer_config() -> Result<kube::Config, ClientError> {
    let mut config = kube::Config::infer()
        .await
        .map_err(|e| ClientError::Kube(kube::Error::InferConfig(e)))?;
    drop_env_proxy_if_excluded(&mut config);
    Ok(config)
}

/// Drops `config.proxy_url` when it is the environment's `HTTPS_PROXY` and the environment's
/// `NO_PROXY` excludes the API server.
fn drop_env_proxy_if_excluded(config: &mut kube::Config) {
    let from_env = ["HTTPS_PROXY", "https_proxy"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty());
    let same = match (&config.proxy_url, &from_env) {
        (Some(p), Some(e)) => e.trim().parse::<hyper::Uri>().is_ok_and(|e| &e == p),
        _ => false,
    };
    if same && !update_status_proxy::env_proxies(&config.cluster_url) {
        config.proxy_url = None;
    }
}

/// A client from the in-cluster configuration or `KUBECONFIG`, with the bounded retry and
/// [`USER_AGENT`].
pub async fn infer() -> Result<kube::Client, ClientError> {
    build(with_user_agent(infer_config().await?, USER_AGENT))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Instant;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::Api;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A plain-HTTP server that answers `429` with `Retry-After: 0` to every request but the
    /// `ok_after`-th, which gets a ConfigMap; counts the requests.
    async fn server(ok_after: u32) -> (String, Arc<AtomicU32>) {
        let (url, requests, _connections) = counting_server(ok_after).await;
        (url, requests)
    }

    /// [`server`], also counting the connections it accepted.
    async fn counting_server(ok_after: u32) -> (String, Arc<AtomicU32>, Arc<AtomicU32>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let count = Arc::new(AtomicU32::new(0));
        let seen = count.clone();
        let connections = Arc::new(AtomicU32::new(0));
        let accepted = connections.clone();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                accepted.fetch_add(1, Ordering::SeqCst);
                let seen = seen.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    loop {
                        let Ok(n) = sock.read(&mut buf).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        let i = seen.fetch_add(1, Ordering::SeqCst) + 1;
                        let reply = if i >= ok_after {
                            let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"}}"#;
                            format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                                body.len()
                            )
                        } else {
                            let body = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"message":"too many requests"}"#;
                            format!(
                                "HTTP/1.1 429 Too Many Requests\r\nretry-after: 0\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                                body.len()
                            )
                        };
                        if sock.write_all(reply.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (format!("http://{addr}"), count, connections)
    }

    /// Short waits: the test checks the retries, not the production waits.
    const MAX: Duration = Duration::from_millis(20);

    fn client(url: &str) -> kube::Client {
        let config = kube::Config::new(url.parse().expect("url"));
        with_retry(config, Duration::from_millis(5), MAX, RETRY_ATTEMPTS).expect("client")
    }

    #[tokio::test]
    async fn a_throttled_call_is_retried_until_it_succeeds() {
        let (url, count) = server(4).await;
        let cms: Api<ConfigMap> = Api::namespaced(client(&url), "ns");
        let cm = cms.get("x").await.expect("the fourth try succeeds");
        assert_eq!(cm.metadata.name.as_deref(), Some("x"));
        assert_eq!(count.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_call_throttled_for_good_fails_after_the_bounded_retries() {
        let (url, count) = server(u32::MAX).await;
        let cms: Api<ConfigMap> = Api::namespaced(client(&url), "ns");
        let started = Instant::now();
        let err = cms.get("x").await.expect_err("always throttled");
        assert!(
            matches!(&err, kube::Error::Api(s) if s.code == 429),
            "the 429 reaches the caller: {err}"
        );
        assert_eq!(count.load(Ordering::SeqCst), RETRY_ATTEMPTS + 1);
        // Bounded: at most the longest wait per retry (kube's default would wait minutes).
        assert!(started.elapsed() < MAX * RETRY_ATTEMPTS + Duration::from_secs(2));
    }

    /// The hub client keeps its connection however long it stays idle: hyper's default pool
    /// drops a connection 90 s after the last request started on it, although the session's
    /// watches still stream over it, and the next call then opens a second one that both hold
    /// until the watches end. (This replaced a 95-second wait in the e2e `hub_sync`.) Tokio's
    /// clock, the pool's clock too (`pool_timer`), is advanced past hyper's 90 s.
    #[tokio::test]
    async fn the_hub_client_reuses_its_connection_after_a_long_quiet_spell() {
        let (url, requests, connections) = counting_server(1).await;
        let config = kube::Config::new(url.parse().expect("url"));
        let cms: Api<ConfigMap> = Api::namespaced(build_http2(config, None).expect("client"), "ns");
        cms.get("x").await.expect("the first call");
        // The connection goes back to the pool once the answer is read.
        tokio::time::sleep(Duration::from_millis(50)).await;
        tokio::time::pause();
        tokio::time::advance(Duration::from_secs(95)).await;
        tokio::time::resume();
        cms.get("x").await.expect("the call after the quiet spell");
        assert_eq!(requests.load(Ordering::SeqCst), 2);
        assert_eq!(
            connections.load(Ordering::SeqCst),
            1,
            "the call after 95 quiet seconds opened a second connection"
        );
    }
}
