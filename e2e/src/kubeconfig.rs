//! Identities other than cluster-admin: a ServiceAccount's token minted with the TokenRequest
//! API (`kubectl create token`), and a kubeconfig holding only that token and the test
//! cluster's server and CA, for running the controller or the plugin as that ServiceAccount.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use kube::config::Kubeconfig;
use serde_json::json;

use crate::error::Error;
use crate::test_env::TestEnv;

/// What can go wrong writing a ServiceAccount's kubeconfig.
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    /// The harness failed (kubectl, the admin kubeconfig).
    #[error(transparent)]
    Harness(#[from] Error),
    /// The admin kubeconfig has no current context, or it names no cluster.
    #[error("kubeconfig {0}: no cluster for the current context")]
    NoCluster(PathBuf),
    /// `kubectl create token` printed nothing.
    #[error("kubectl create token {0} printed no token")]
    EmptyToken(String),
    /// The kubeconfig or token file could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// A ServiceAccount's credentials, written under a folder of the caller's.
#[derive(Debug, Clone)]
pub struct ServiceAccountConfig {
    /// `system:serviceaccount:<namespace>:<name>`, for `kubectl --as`.
    pub user: String,
    /// Kubeconfig with the server, the CA and the token only.
    pub kubeconfig: PathBuf,
    /// The token alone (e.g. for `--prometheus-token-file`).
    pub token_file: PathBuf,
}

/// Writes `content` to `path`, readable by the owner only (it holds a token).
fn write_private(path: &Path, content: &[u8]) -> Result<(), KubeconfigError> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(content))
        .map_err(|source| KubeconfigError::Write {
            path: path.to_path_buf(),
            source,
        })
}

/// Mints a one-hour token for the ServiceAccount `namespace/name` (TokenRequest API) and writes
/// `<dir>/<name>.kubeconfig` and `<dir>/<name>.token`. The token is never printed.
pub async fn service_account_config(
    env: &TestEnv,
    namespace: &str,
    name: &str,
    dir: &Path,
) -> Result<ServiceAccountConfig, KubeconfigError> {
    let token = env
        .kubectl_ok(["create", "token", name, "-n", namespace, "--duration=1h"])
        .await?
        .trim()
        .to_string();
    if token.is_empty() {
        return Err(KubeconfigError::EmptyToken(format!("{namespace}/{name}")));
    }
    let admin = env.kubeconfig_path();
    let kc = Kubeconfig::read_from(admin).map_err(|source| Error::Kubeconfig {
        path: admin.to_path_buf(),
        source,
    })?;
    let cluster = kc
        .current_context
        .as_deref()
        .and_then(|current| kc.contexts.iter().find(|c| c.name == current))
        .and_then(|c| c.context.as_ref())
        .and_then(|c| kc.clusters.iter().find(|n| n.name == c.cluster))
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| KubeconfigError::NoCluster(admin.to_path_buf()))?;
    let user = format!("system:serviceaccount:{namespace}:{name}");
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": "e2e", "user": user}}],
        "current-context": name,
    });
    let kubeconfig = dir.join(format!("{name}.kubeconfig"));
    let token_file = dir.join(format!("{name}.token"));
    // JSON is YAML: kubectl and kube read it as a kubeconfig.
    write_private(&kubeconfig, config.to_string().as_bytes())?;
    write_private(&token_file, token.as_bytes())?;
    Ok(ServiceAccountConfig {
        user,
        kubeconfig,
        token_file,
    })
}
