//! The fleet bench's hub identities and the hub-side load they make: with `--fleet-identity
//! addon` (the default) every hosted cluster reports with an add-on identity of its own, as ACM
//! gives each managed cluster (`--hub-addon-secrets`); with `shared`, one hub kubeconfig for all.
//!
//! For each managed cluster `<c>` ([`provision`]):
//! - on the hub, the hub sync's Role (`config/hub/role.yaml`) in namespace `<c>`, bound to the
//!   group `system:open-cluster-management:cluster:<c>:addon:update-status` (what OCM's add-on
//!   manager binds for `hubPermissions: CurrentCluster`);
//! - a client certificate of the user
//!   `system:open-cluster-management:cluster:<c>:addon:update-status:agent:update-status-agent`
//!   in that group, signed by the hub's CA (OCM's add-on signer signs with the hub's CA too);
//! - on the management cluster, the Secret `update-status-hub-kubeconfig` in namespace `<c>`
//!   (`--hub-addon-secret-namespace={cluster}`), in the format OCM's registration agent writes
//!   (`kubeconfig` naming `tls.crt`/`tls.key`, `cluster-name`).
//!
//! And what the hub sees of them: the controller's connections to the hub API server
//! ([`connections_to`], from `/proc`), and the hub API server's open watches of our kinds
//! ([`hub_watches`]).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding, RoleRef, Subject};
use kube::Client;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use update_status_e2e::repo_root;

/// Whose identity writes the fleet's hub copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Identity {
    /// One add-on identity per managed cluster (`--hub-addon-secrets`), as ACM gives them.
    Addon,
    /// One hub kubeconfig for every cluster (`--hub-kubeconfig`).
    Shared,
}

/// The add-on's hub kubeconfig Secret (OCM: `<add-on>-hub-kubeconfig`).
pub const SECRET: &str = "update-status-hub-kubeconfig";

/// The group OCM gives the add-on agent of cluster `c`.
pub fn group(c: &str) -> String {
    format!("system:open-cluster-management:cluster:{c}:addon:update-status")
}

/// Provisions the add-on identities of `clusters` (see the module documentation), `concurrency`
/// at a time; `work` holds the certificate files. The hub namespaces and the management
/// cluster's namespaces named after the clusters must exist.
pub async fn provision(
    clusters: &[String],
    hub: &Client,
    management: &Client,
    hub_dir: &Path,
    hub_kubeconfig: &Path,
    work: &Path,
    concurrency: usize,
) -> anyhow::Result<()> {
    let role_path = repo_root().join("config/hub/role.yaml");
    let role: Role = serde_saphyr::from_str(
        &std::fs::read_to_string(&role_path)
            .with_context(|| format!("reading {}", role_path.display()))?,
    )
    .with_context(|| format!("{} is not a Role", role_path.display()))?;
    let kc = kube::config::Kubeconfig::read_from(hub_kubeconfig)?;
    let cluster = kc
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .context("no cluster in the hub's kubeconfig")?;
    let (server, ca) = (
        cluster.server.unwrap_or_default(),
        cluster.certificate_authority_data.unwrap_or_default(),
    );
    let kubeconfig = update_status_e2e::certs::addon_kubeconfig(&server, &ca);
    let apply = PatchParams::apply("bench").force();
    futures::stream::iter(clusters)
        .map(|c| {
            let (role, kubeconfig, apply) = (role.clone(), kubeconfig.clone(), apply.clone());
            async move {
                let mut role = role;
                role.metadata.namespace = Some(c.clone());
                Api::<Role>::namespaced(hub.clone(), c)
                    .patch(
                        role.metadata
                            .name
                            .as_deref()
                            .unwrap_or("update-status-hub-sync"),
                        &apply,
                        &Patch::Apply(&role),
                    )
                    .await
                    .with_context(|| format!("the hub Role in {c}"))?;
                let binding = RoleBinding {
                    metadata: ObjectMeta {
                        name: Some("update-status-addon".into()),
                        namespace: Some(c.clone()),
                        ..Default::default()
                    },
                    role_ref: RoleRef {
                        api_group: Some("rbac.authorization.k8s.io".into()),
                        kind: "Role".into(),
                        name: role.metadata.name.clone().unwrap_or_default(),
                    },
                    subjects: Some(vec![Subject {
                        api_group: Some("rbac.authorization.k8s.io".into()),
                        kind: "Group".into(),
                        name: group(c),
                        ..Default::default()
                    }]),
                };
                Api::<RoleBinding>::namespaced(hub.clone(), c)
                    .patch("update-status-addon", &apply, &Patch::Apply(&binding))
                    .await
                    .with_context(|| format!("the hub RoleBinding in {c}"))?;
                let (dir, work, user, grp) = (
                    hub_dir.to_path_buf(),
                    work.to_path_buf(),
                    format!("{}:agent:update-status-agent", group(c)),
                    group(c),
                );
                let cert = tokio::task::spawn_blocking(move || {
                    update_status_e2e::certs::client_cert(&dir, &work, &user, &[&grp])
                })
                .await??;
                let data: BTreeMap<String, ByteString> = [
                    ("kubeconfig", kubeconfig.into_bytes()),
                    ("tls.crt", cert.cert),
                    ("tls.key", cert.key),
                    ("cluster-name", c.clone().into_bytes()),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), ByteString(v)))
                .collect();
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(SECRET.into()),
                        namespace: Some(c.clone()),
                        ..Default::default()
                    },
                    data: Some(data),
                    ..Default::default()
                };
                Api::<Secret>::namespaced(management.clone(), c)
                    .patch(SECRET, &apply, &Patch::Apply(&secret))
                    .await
                    .with_context(|| format!("the add-on Secret in {c}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(concurrency)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// The port of the API server in `kubeconfig`.
pub fn server_port(kubeconfig: &Path) -> anyhow::Result<u16> {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let server = kc
        .clusters
        .first()
        .and_then(|c| c.cluster.as_ref()?.server.clone())
        .context("no server in the kubeconfig")?;
    server
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .with_context(|| format!("no port in {server}"))
}

/// The established TCP connections of process `pid` to local port `port` (its socket inodes
/// matched in `/proc/net/tcp{,6}`).
pub fn connections_to(pid: u32, port: u16) -> usize {
    let inodes: HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            l.to_str()?
                .strip_prefix("socket:[")?
                .strip_suffix(']')
                .map(str::to_string)
        })
        .collect();
    let mut n = 0;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local remote st ... inode (10th field)
            let (Some(remote), Some(state), Some(inode)) = (f.get(2), f.get(3), f.get(9)) else {
                continue;
            };
            let remote_port = remote
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if *state == "01" && remote_port == Some(port) && inodes.contains(*inode) {
                n += 1;
            }
        }
    }
    n
}

/// The hub API server's open watches of our kinds (`apiserver_longrunning_requests`, verb
/// WATCH, group update.openshift.io), read with kubectl.
pub fn hub_watches(hub_kubeconfig: &Path) -> anyhow::Result<u64> {
    let out = std::process::Command::new("kubectl")
        .args(["get", "--raw", "/metrics"])
        .env("KUBECONFIG", hub_kubeconfig)
        .output()
        .context("running kubectl get --raw /metrics on the hub")?;
    if !out.status.success() {
        bail!(
            "kubectl get --raw /metrics on the hub: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter(|l| {
            l.starts_with("apiserver_longrunning_requests{")
                && l.contains("verb=\"WATCH\"")
                && l.contains("group=\"update.openshift.io\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_addon_group_is_ocms() {
        assert_eq!(
            group("fleet-00001"),
            "system:open-cluster-management:cluster:fleet-00001:addon:update-status"
        );
    }

    #[test]
    fn connections_are_counted_from_proc() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let a = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let b = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        assert_eq!(connections_to(std::process::id(), port), 2);
        drop((a, b));
    }
}
