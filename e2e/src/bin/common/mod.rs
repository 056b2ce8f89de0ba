//! Code shared by the `load-snapshot` and `simulate-update` binaries.

use std::path::Path;

use anyhow::Context;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// A client for the cluster of `kubeconfig`, else of `KUBECONFIG` / `~/.kube/config`.
pub async fn client(kubeconfig: Option<&Path>) -> anyhow::Result<Client> {
    match kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("using kubeconfig {}", path.display()))?;
            Client::try_from(config).context("creating a client")
        }
        None => Client::try_default()
            .await
            .context("creating a client from KUBECONFIG / ~/.kube/config"),
    }
}
