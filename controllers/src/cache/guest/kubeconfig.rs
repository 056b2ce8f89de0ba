//! A hosted cluster's admin kubeconfig (from a Secret others can write) made into a client:
//! only inline credentials are accepted, and every reason it gives is a fixed text or quotes
//! only names and the server URL without user information ([`Credentials::scrub`]).

use k8s_openapi::api::core::v1::Secret;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::watcher;
use secrecy::ExposeSecret;
use std::time::Duration;
use update_status_api::hosted::KUBECONFIG_SECRET_KEY;
use update_status_assess::redact::{REDACTED, redact_url, redact_urls_in};

/// TCP connect timeout of a hosted client.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest reason (the insight's description has room; a reason is one short sentence).
pub(super) const MAX_REASON: usize = 300;

/// Why the kubeconfig of a hosted cluster cannot be used. The texts are fixed or quote only
/// names (never the Secret's contents).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GuestError {
    /// The HostedCluster has no `status.kubeconfig` yet.
    #[error("HostedCluster {0} has no status.kubeconfig yet (no admin kubeconfig published)")]
    NoKubeconfigYet(String),
    /// The Secret does not exist.
    #[error("Secret {0} (the HostedCluster's status.kubeconfig) does not exist")]
    SecretMissing(String),
    /// The Secret cannot be read.
    #[error("Secret {secret} cannot be read: {why}")]
    SecretUnreadable {
        /// `namespace/name`.
        secret: String,
        /// Why (status code and a fixed hint).
        why: String,
    },
    /// The Secret has no `kubeconfig` key.
    #[error("Secret {0} has no key \"kubeconfig\"")]
    NoKey(String),
    /// The key's value is not a usable kubeconfig.
    #[error("the kubeconfig in Secret {secret} {why}")]
    Invalid {
        /// `namespace/name`.
        secret: String,
        /// What is wrong (fixed text).
        why: &'static str,
    },
    /// The kubeconfig asks for something we refuse to run or read.
    #[error(
        "the kubeconfig in Secret {secret} uses {what}, which update-status does not run or read \
         (only inline credentials: token, client certificate and key, username and password)"
    )]
    Unsupported {
        /// `namespace/name`.
        secret: String,
        /// The refused field.
        what: &'static str,
    },
}

/// A kubeconfig's credentials, to scrub them from any error text quoted in a reason.
#[derive(Clone, Default)]
pub struct Credentials(pub(super) Vec<String>);

impl Credentials {
    /// `text` with every credential replaced by [`REDACTED`], URLs without user information.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = redact_urls_in(text);
        for s in &self.0 {
            out = out.replace(s.as_str(), REDACTED);
        }
        out
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({} redacted)", self.0.len())
    }
}

/// A client for a hosted cluster, built from its admin kubeconfig.
pub struct GuestClient {
    /// The client.
    pub client: kube::Client,
    /// The API server URL without user information or token parameters.
    pub server: String,
    /// Its credentials, for scrubbing error texts.
    pub credentials: Credentials,
}

impl std::fmt::Debug for GuestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GuestClient({})", self.server)
    }
}

/// The value of `data.kubeconfig` of `secret` (`secret_ref`: `namespace/name`, for messages).
pub fn kubeconfig_of(secret: &Secret, secret_ref: &str) -> Result<Vec<u8>, GuestError> {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(KUBECONFIG_SECRET_KEY))
        .map(|b| b.0.clone())
        .or_else(|| {
            secret
                .string_data
                .as_ref()
                .and_then(|d| d.get(KUBECONFIG_SECRET_KEY))
                .map(|s| s.clone().into_bytes())
        })
        .ok_or_else(|| GuestError::NoKey(secret_ref.to_string()))
}

/// Parses `bytes` (a kubeconfig from the Secret `secret_ref`) and checks it uses inline
/// credentials only; its credentials, for scrubbing.
pub fn parse_kubeconfig(
    bytes: &[u8],
    secret_ref: &str,
) -> Result<(Kubeconfig, Credentials), GuestError> {
    let invalid = |why| GuestError::Invalid {
        secret: secret_ref.to_string(),
        why,
    };
    let unsupported = |what| GuestError::Unsupported {
        secret: secret_ref.to_string(),
        what,
    };
    let text = std::str::from_utf8(bytes).map_err(|_| invalid("is not UTF-8 text"))?;
    // The parser's message may quote the text: only a fixed reason leaves.
    let kc =
        Kubeconfig::from_yaml(text).map_err(|_| invalid("is not a valid kubeconfig (YAML)"))?;
    let mut credentials = Vec::new();
    for a in kc.auth_infos.iter().filter_map(|a| a.auth_info.as_ref()) {
        if a.exec.is_some() {
            return Err(unsupported("an exec credential plugin (users[].user.exec)"));
        }
        if a.auth_provider.is_some() {
            return Err(unsupported("an auth provider (users[].user.auth-provider)"));
        }
        if a.token_file.is_some() {
            return Err(unsupported("a token file (users[].user.tokenFile)"));
        }
        if a.client_certificate.is_some() || a.client_key.is_some() {
            return Err(unsupported(
                "client certificate or key files (users[].user.client-certificate/client-key)",
            ));
        }
        for s in [&a.token, &a.password, &a.client_key_data]
            .into_iter()
            .flatten()
        {
            let s = s.expose_secret().trim();
            if !s.is_empty() {
                credentials.push(s.to_string());
            }
        }
    }
    if kc
        .clusters
        .iter()
        .filter_map(|c| c.cluster.as_ref())
        .any(|c| c.certificate_authority.is_some())
    {
        return Err(unsupported(
            "a certificate authority file (clusters[].cluster.certificate-authority)",
        ));
    }
    // Longest first: a secret containing another is replaced whole.
    credentials.sort_by_key(|s| std::cmp::Reverse(s.len()));
    Ok((kc, Credentials(credentials)))
}

/// A client from the kubeconfig `bytes` of the Secret `secret_ref` (see [`parse_kubeconfig`]).
pub async fn guest_client(bytes: &[u8], secret_ref: &str) -> Result<GuestClient, GuestError> {
    let (kc, credentials) = parse_kubeconfig(bytes, secret_ref)?;
    let invalid = |why| GuestError::Invalid {
        secret: secret_ref.to_string(),
        why,
    };
    let mut config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(|e| invalid(crate::runtime::client::kubeconfig_problem(&e)))?;
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    let server = redact_url(&config.cluster_url.to_string());
    let client = crate::runtime::client::build(config).map_err(|_| {
        invalid("cannot make a client (the certificate authority or client certificate/key cannot be used)")
    })?;
    Ok(GuestClient {
        client,
        server,
        credentials,
    })
}

/// Why watching `kind` on the hosted API server `server` fails, short and without credentials.
pub fn watch_reason(
    e: &watcher::Error,
    kind: &str,
    server: &str,
    credentials: &Credentials,
) -> String {
    let api = match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s))
        | watcher::Error::WatchError(s) => Some(s),
        _ => None,
    };
    let text = match api.map(|s| s.code) {
        Some(401) => {
            format!("{server} does not accept the kubeconfig's credentials (401 Unauthorized)")
        }
        Some(403) => format!("{server}: the kubeconfig's user may not list {kind} (403 Forbidden)"),
        Some(404) => format!("{server} does not serve {kind} (404)"),
        Some(code) => format!("{server} answered {code} to listing {kind}"),
        None => {
            let mut cause: &dyn std::error::Error = e;
            while let Some(next) = cause.source() {
                cause = next;
            }
            format!("cannot reach {server}: {cause}")
        }
    };
    let text = credentials.scrub(&text);
    if text.chars().count() > MAX_REASON {
        text.chars().take(MAX_REASON).collect::<String>() + "..."
    } else {
        text
    }
}
