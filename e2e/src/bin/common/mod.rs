//! Code shared by the `load-snapshot` and `simulate-update` binaries.

use std::path::Path;

use anyhow::Context;
use kube::Client;

/// A client for the cluster of `kubeconfig`, else of `KUBECONFIG` / `~/.kube/config`.
pub async fn client(kubeconfig: Option<&Path>) -> anyhow::Result<Client> {
    match kubeconfig {
        Some(path) => update_status_e2e::client_for(path)
            .await
            .with_context(|| format!("using kubeconfig {}", path.display())),
        None => Client::try_default()
            .await
            .context("creating a client from KUBECONFIG / ~/.kube/config"),
    }
}
