//! Where a hub session's credentials come from, and noticing when they change.
//!
//! - **A kubeconfig file** (`--hub-kubeconfig`). As an ACM add-on agent, the file comes from the
//!   Secret `update-status-hub-kubeconfig` that OCM's registration agent writes, mounted by the
//!   kubelet (`/managed/hub-kubeconfig`): the registration agent renews the client certificate in
//!   that Secret before it expires, and the kubelet swaps the mounted files (the `..data` symlink).
//!   The folders of the kubeconfig and of the files it names are watched (inotify, through the
//!   `notify` crate); when their content changes, the new credentials are read whole (the
//!   kubeconfig with its certificate, key and CA files inlined, so a client is always built from
//!   one consistent set) and published. The session switches to them before the old certificate
//!   expires: no failed call, no restart. A `401` also makes it read the files again (a change
//!   the watch did not see).
//! - **A Secret** (hosted mode under ACM, [`super::hosted`]): each hosted cluster's add-on
//!   credentials are read from its Secret by the hosted manager and published to its session
//!   through [`Credentials::channel`].
//!
//! Error texts never quote the kubeconfig: kube's parse errors can hold a snippet of it (a token),
//! so they become fixed texts ([`kubeconfig_problem`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine as _;
use kube::config::{KubeConfigOptions, Kubeconfig};
use secrecy::SecretString;
use sha2::{Digest, Sha256};
use tokio::sync::{Notify, watch};

use super::config::CONNECT_TIMEOUT;
use super::errors::HubError;
use crate::runtime::client::{ClientError, kubeconfig_problem};
use crate::runtime::proxy::proxy_for;

/// Quiet time after a file event before the files are read (a kubelet swap, or an editor's
/// write, comes as several events).
const SETTLE: Duration = Duration::from_millis(200);

/// A usable set of hub credentials: a kubeconfig with every file it names inlined.
pub struct Material {
    /// The kubeconfig (no file references left but `tokenFile`, which kube re-reads itself).
    pub kubeconfig: Kubeconfig,
    /// SHA-256 of everything it was made from: equal fingerprints, same credentials.
    pub fingerprint: [u8; 32],
}

impl std::fmt::Debug for Material {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Material({:02x}{:02x}{:02x}{:02x}…)",
            self.fingerprint[0], self.fingerprint[1], self.fingerprint[2], self.fingerprint[3]
        )
    }
}

impl Material {
    /// A hub client for these credentials (HTTP/2, bounded retries, [`CONNECT_TIMEOUT`]),
    /// through the kubeconfig's `proxy-url`, else the proxy of `HTTPS_PROXY` unless `NO_PROXY`
    /// names the hub ([`crate::runtime::proxy`]).
    pub async fn client(&self, origin: &str) -> Result<kube::Client, HubError> {
        let mut config = kube::Config::from_custom_kubeconfig(
            self.kubeconfig.clone(),
            &KubeConfigOptions::default(),
        )
        .await
        .map_err(|e| HubError::Credentials {
            origin: origin.to_string(),
            problem: kubeconfig_problem(&e).to_string(),
        })?;
        config.connect_timeout = Some(CONNECT_TIMEOUT);
        let client_error = |e: ClientError| HubError::Client {
            origin: origin.to_string(),
            source: Box::new(e),
        };
        // kube's `proxy_url` mixes the kubeconfig's with HTTPS_PROXY (NO_PROXY unread): ours is
        // decided from the kubeconfig itself.
        config.proxy_url = None;
        let proxy = proxy_for(
            &config.cluster_url,
            self.proxy_url(),
            &format!("the proxy-url of {origin}"),
        )
        .map_err(|e| client_error(e.into()))?;
        if let Some(p) = &proxy {
            tracing::debug!(credentials = %origin, proxy = %p, "hub connections go through a proxy");
        }
        crate::runtime::client::build_http2(config, proxy.as_ref()).map_err(client_error)
    }

    /// The `proxy-url` of the kubeconfig's current context's cluster, if set.
    pub fn proxy_url(&self) -> Option<&str> {
        self.cluster()?.proxy_url.as_deref()
    }

    /// The current context's cluster (server, CA, proxy).
    pub fn cluster(&self) -> Option<&kube::config::Cluster> {
        let kc = &self.kubeconfig;
        let i = current_cluster_index(kc)?;
        kc.clusters[i].cluster.as_ref()
    }

    /// These credentials talking to `hub` (server, CA, TLS name, proxy) instead of the cluster
    /// their kubeconfig names, which must have the same server; else why not.
    pub fn pinned_to(mut self, hub: &kube::config::Cluster) -> Result<Self, String> {
        let i = current_cluster_index(&self.kubeconfig)
            .ok_or("its kubeconfig has no current context naming a cluster")?;
        let named = &mut self.kubeconfig.clusters[i].cluster;
        let server = named.as_ref().and_then(|c| c.server.as_deref());
        let want = hub.server.as_deref().map(|s| s.trim_end_matches('/'));
        if server.map(|s| s.trim_end_matches('/')) != want || want.is_none() {
            let shown = |s: Option<&str>| {
                s.map_or_else(
                    || "(none)".to_string(),
                    |s| format!("{:?}", update_status_assess::redact::redact_endpoint(s)),
                )
            };
            return Err(format!(
                "its kubeconfig names the server {}, not the hub of --hub-kubeconfig ({})",
                shown(server),
                shown(hub.server.as_deref()),
            ));
        }
        *named = Some(hub.clone());
        Ok(self)
    }
}

/// The index in `kc.clusters` of the current context's cluster.
fn current_cluster_index(kc: &Kubeconfig) -> Option<usize> {
    let context = kc.current_context.as_deref()?;
    let cluster = kc
        .contexts
        .iter()
        .find(|c| c.name == context)?
        .context
        .as_ref()?
        .cluster
        .as_str();
    kc.clusters.iter().position(|c| c.name == cluster)
}

/// A session's credentials: the current [`Material`] and its changes. Cheap to clone (each clone
/// sees the changes on its own).
#[derive(Clone)]
pub struct Credentials {
    /// For messages: the kubeconfig's path, or the Secret's `namespace/name`.
    origin: Arc<str>,
    rx: watch::Receiver<Option<Arc<Material>>>,
    /// A kubeconfig file: reads it again on demand (after a `401`).
    file: Option<Arc<FileSource>>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({})", self.origin)
    }
}

impl Credentials {
    /// The credentials of the kubeconfig file `path`, read now (an unreadable or invalid file is
    /// a configuration error) and followed from then on. Must be called within a Tokio runtime.
    pub fn from_file(path: &Path) -> Result<Self, HubError> {
        let material = read_file(path)?;
        let (tx, rx) = watch::channel(Some(Arc::new(material)));
        let source = Arc::new(FileSource {
            path: path.to_path_buf(),
            tx,
            rejected: Mutex::new(None),
            event: Arc::new(Notify::new()),
        });
        source.clone().follow();
        Ok(Credentials {
            origin: path.display().to_string().into(),
            rx,
            file: Some(source),
        })
    }

    /// Credentials published by someone else (hosted mode: the add-on Secret of a hosted
    /// cluster), from `origin`; the sender publishes each new set, `None` while there is none.
    pub fn channel(origin: &str) -> (watch::Sender<Option<Arc<Material>>>, Self) {
        let (tx, rx) = watch::channel(None);
        (
            tx,
            Credentials {
                origin: origin.into(),
                rx,
                file: None,
            },
        )
    }

    /// Where they come from (a path or a Secret), for messages.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The current credentials, `None` while there are none (a Secret not written yet).
    pub fn current(&mut self) -> Option<Arc<Material>> {
        self.rx.borrow_and_update().clone()
    }

    /// Resolves when new credentials are published (never, once the publisher is gone).
    pub async fn changed(&mut self) {
        if self.rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Reads a kubeconfig file again now (a `401`: a change the watch may have missed); a
    /// change is published as usual.
    pub async fn reread(&self) {
        if let Some(f) = &self.file {
            let f = f.clone();
            // File I/O off the runtime's threads.
            let _ = tokio::task::spawn_blocking(move || f.refresh()).await;
        }
    }
}

/// A followed kubeconfig file.
struct FileSource {
    path: PathBuf,
    tx: watch::Sender<Option<Arc<Material>>>,
    /// Fingerprint of the last content that could not be used (warned about once).
    rejected: Mutex<Option<String>>,
    event: Arc<Notify>,
}

impl FileSource {
    /// Watches the folders of the kubeconfig and of the files it names; re-reads after each
    /// burst of events. Without a watch (inotify limits), reads every minute instead.
    fn follow(self: Arc<Self>) {
        let dirs = watched_dirs(&self.path);
        let event = self.event.clone();
        let watcher = notify::recommended_watcher(move |_res: notify::Result<notify::Event>| {
            event.notify_one();
        });
        let watcher = match watcher {
            Ok(mut w) => {
                let mut ok = true;
                for dir in &dirs {
                    use notify::Watcher as _;
                    if let Err(e) = w.watch(dir, notify::RecursiveMode::NonRecursive) {
                        tracing::warn!(dir = %dir.display(), error = %e, "cannot watch the hub kubeconfig's folder; reading it every minute instead");
                        ok = false;
                    }
                }
                ok.then_some(w)
            }
            Err(e) => {
                tracing::warn!(kubeconfig = %self.path.display(), error = %e, "cannot watch the hub kubeconfig; reading it every minute instead");
                None
            }
        };
        let polling = watcher.is_none();
        let weak = Arc::downgrade(&self);
        let event = self.event.clone();
        drop(self);
        tokio::spawn(async move {
            // The watcher lives as long as this task, which ends with the last Credentials.
            let _watcher = watcher;
            loop {
                if polling {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                } else {
                    event.notified().await;
                    tokio::time::sleep(SETTLE).await;
                }
                let Some(source) = weak.upgrade() else { return };
                if source.tx.is_closed() {
                    return;
                }
                let _ = tokio::task::spawn_blocking(move || source.refresh()).await;
            }
        });
    }

    /// Reads the files; publishes them if they differ from the current credentials. Content
    /// that cannot be used is warned about once and the current credentials are kept.
    fn refresh(&self) {
        match read_file(&self.path) {
            Ok(m) => {
                let changed = self
                    .tx
                    .borrow()
                    .as_ref()
                    .is_none_or(|old| old.fingerprint != m.fingerprint);
                if changed {
                    tracing::info!(kubeconfig = %self.path.display(), "hub credentials changed on disk");
                    self.tx.send_replace(Some(Arc::new(m)));
                }
                *self.rejected.lock().unwrap_or_else(PoisonError::into_inner) = None;
            }
            Err(e) => {
                let text = e.to_string();
                let mut r = self.rejected.lock().unwrap_or_else(PoisonError::into_inner);
                if r.as_deref() != Some(text.as_str()) {
                    tracing::warn!(error = %text, "the hub kubeconfig changed but cannot be used; keeping the current credentials");
                    *r = Some(text);
                }
            }
        }
    }
}

/// The folders to watch: the kubeconfig's, and those of the files it names (read leniently: a
/// file that does not parse yet is watched in its own folder only).
fn watched_dirs(path: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut add = |p: &Path| {
        if let Some(d) = p.parent() {
            let d = if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d.to_path_buf()
            };
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    };
    add(path);
    if let Ok(kc) = Kubeconfig::read_from(path) {
        for f in referenced_files(&kc) {
            add(Path::new(&f));
        }
    }
    dirs
}

/// Files a kubeconfig names (CA, client certificate and key; not `tokenFile`: kube re-reads it).
fn referenced_files(kc: &Kubeconfig) -> Vec<String> {
    let mut out = Vec::new();
    for c in kc.clusters.iter().filter_map(|c| c.cluster.as_ref()) {
        out.extend(c.certificate_authority.clone());
    }
    for a in kc.auth_infos.iter().filter_map(|a| a.auth_info.as_ref()) {
        out.extend(a.client_certificate.clone());
        out.extend(a.client_key.clone());
    }
    out
}

/// Reads the kubeconfig `path` and inlines the CA, certificate and key files it names; reads
/// them until two reads in a row agree, so that a kubelet swap between the certificate and the
/// key (a renewal writes both) never gives a certificate with another's key.
fn read_file(path: &Path) -> Result<Material, HubError> {
    let mut last = read_file_once(path)?;
    for _ in 0..5 {
        let again = read_file_once(path)?;
        if again.fingerprint == last.fingerprint {
            return Ok(again);
        }
        last = again;
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(HubError::Credentials {
        origin: path.display().to_string(),
        problem: "kept changing while being read".into(),
    })
}

/// One read of [`read_file`].
fn read_file_once(path: &Path) -> Result<Material, HubError> {
    let origin = path.display().to_string();
    let err = |problem: String| HubError::Credentials {
        origin: origin.clone(),
        problem,
    };
    let raw = std::fs::read(path).map_err(|e| err(format!("cannot be read: {e}")))?;
    // kube's own reader resolves the files relative to the kubeconfig's folder.
    let mut kc =
        Kubeconfig::read_from(path).map_err(|e| err(kubeconfig_problem(&e).to_string()))?;
    let mut hasher = Sha256::new();
    hasher.update((raw.len() as u64).to_le_bytes());
    hasher.update(&raw);
    let mut read = |file: &str| -> Result<Vec<u8>, HubError> {
        let bytes = std::fs::read(file)
            .map_err(|e| err(format!("names the file {file}, which cannot be read: {e}")))?;
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
        Ok(bytes)
    };
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    for c in kc.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
        if let Some(f) = c.certificate_authority.take() {
            c.certificate_authority_data = Some(b64(&read(&f)?));
        }
    }
    for a in kc
        .auth_infos
        .iter_mut()
        .filter_map(|a| a.auth_info.as_mut())
    {
        if let Some(f) = a.client_certificate.take() {
            a.client_certificate_data = Some(b64(&read(&f)?));
        }
        if let Some(f) = a.client_key.take() {
            a.client_key_data = Some(SecretString::from(b64(&read(&f)?)));
        }
    }
    Ok(Material {
        kubeconfig: kc,
        fingerprint: hasher.finalize().into(),
    })
}

/// The hub credentials in a Secret written by OCM's registration agent for an add-on: key
/// `kubeconfig` (naming its certificate and key as the files `tls.crt` and `tls.key`, keys of
/// the same Secret), `tls.crt`, `tls.key`. File references are allowed only to keys of the
/// Secret; exec plugins, auth providers and token files are refused (the Secret is written by an
/// agent, not by the admin). `origin`: `namespace/name`, for messages.
pub fn from_secret_data(
    data: &BTreeMap<String, Vec<u8>>,
    origin: &str,
) -> Result<Material, HubError> {
    let err = |problem: &str| HubError::Credentials {
        origin: origin.to_string(),
        problem: problem.to_string(),
    };
    let raw = data
        .get("kubeconfig")
        .ok_or_else(|| err("has no key \"kubeconfig\""))?;
    let text = std::str::from_utf8(raw).map_err(|_| err("has a kubeconfig that is not UTF-8"))?;
    // The parser's message may quote the text: only a fixed reason leaves.
    let mut kc =
        Kubeconfig::from_yaml(text).map_err(|_| err("has a kubeconfig that is not valid YAML"))?;
    let mut hasher = Sha256::new();
    for (k, v) in data {
        hasher.update((k.len() as u64).to_le_bytes());
        hasher.update(k.as_bytes());
        hasher.update((v.len() as u64).to_le_bytes());
        hasher.update(v);
    }
    // A reference is taken from the Secret when it names one of its keys (as `tls.crt`, or
    // `/managed/hub-kubeconfig/tls.crt`: the Secret's mount path); anything else is refused.
    let key_of = |file: &str| -> Result<&Vec<u8>, HubError> {
        let name = file.rsplit('/').next().unwrap_or(file);
        data.get(name)
            .filter(|_| name != "kubeconfig")
            .ok_or_else(|| err("has a kubeconfig naming a file that is not a key of the Secret"))
    };
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    for c in kc.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
        if let Some(f) = c.certificate_authority.take() {
            c.certificate_authority_data = Some(b64(key_of(&f)?));
        }
    }
    for a in kc
        .auth_infos
        .iter_mut()
        .filter_map(|a| a.auth_info.as_mut())
    {
        if a.exec.is_some() || a.auth_provider.is_some() || a.token_file.is_some() {
            return Err(err(
                "has a kubeconfig asking for an exec plugin, an auth provider or a token file, which update-status does not run or read",
            ));
        }
        if let Some(f) = a.client_certificate.take() {
            a.client_certificate_data = Some(b64(key_of(&f)?));
        }
        if let Some(f) = a.client_key.take() {
            a.client_key_data = Some(SecretString::from(b64(key_of(&f)?)));
        }
    }
    Ok(Material {
        kubeconfig: kc,
        fingerprint: hasher.finalize().into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn kubeconfig(user: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: hub\nclusters:\n- name: hub\n  cluster:\n    server: https://127.0.0.1:6443\n    certificate-authority: ca.crt\ncontexts:\n- name: hub\n  context: {{cluster: hub, user: agent}}\nusers:\n- name: agent\n  user:\n{user}"
        )
    }

    #[test]
    fn a_kubeconfig_file_is_read_with_its_files_inlined_and_fingerprinted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("kubeconfig");
        std::fs::write(dir.path().join("ca.crt"), CA).expect("write");
        std::fs::write(dir.path().join("tls.crt"), "CERT-1").expect("write");
        std::fs::write(dir.path().join("tls.key"), "KEY-1").expect("write");
        std::fs::write(
            &p,
            kubeconfig("    client-certificate: tls.crt\n    client-key: tls.key\n"),
        )
        .expect("write");
        let a = read_file(&p).expect("reads");
        let user = a.kubeconfig.auth_infos[0].auth_info.as_ref().expect("user");
        assert!(user.client_certificate.is_none() && user.client_key.is_none());
        assert_eq!(
            user.client_certificate_data.as_deref(),
            Some(
                base64::engine::general_purpose::STANDARD
                    .encode("CERT-1")
                    .as_str()
            )
        );
        let cluster = a.kubeconfig.clusters[0].cluster.as_ref().expect("cluster");
        assert!(
            cluster.certificate_authority.is_none() && cluster.certificate_authority_data.is_some()
        );
        assert_eq!(
            read_file(&p).expect("reads").fingerprint,
            a.fingerprint,
            "stable"
        );
        // A renewed certificate (same kubeconfig) is a change.
        std::fs::write(dir.path().join("tls.crt"), "CERT-2").expect("write");
        assert_ne!(read_file(&p).expect("reads").fingerprint, a.fingerprint);
        assert_eq!(watched_dirs(&p), [dir.path().to_path_buf()]);
    }

    #[test]
    fn a_broken_kubeconfig_never_quotes_its_token() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("kubeconfig");
        let token = "sha256~SECRET-TOKEN-VALUE-1234";
        std::fs::write(
            &p,
            format!("apiVersion: v1\nusers:\n- name: a\n  user:\n    token: {token}\n  : [\n"),
        )
        .expect("write");
        let e = read_file(&p).expect_err("broken");
        let text = format!("{e} {e:?}");
        assert!(!text.contains("SECRET-TOKEN"), "{text}");
        assert!(text.contains("not a valid kubeconfig"), "{text}");
        assert_eq!(e.reason(), "config");
        let missing = read_file(&dir.path().join("nope")).expect_err("missing");
        assert!(missing.to_string().contains("cannot be read"), "{missing}");
    }

    /// Issue #29 item 6: kubeconfigs broken right after `token:` in the ways whose parse error
    /// kube (serde_yaml) reports with the offending text. Our error, shown at start and on each
    /// re-read, names the file and a fixed problem only.
    #[test]
    fn a_kubeconfig_broken_after_its_token_gives_an_error_without_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("kubeconfig");
        let token = "sha256~LEAKED-TOKEN-VALUE-5678";
        let mut quoted_by_kube = 0;
        for broken in [
            format!(
                "    token: {token}
      - x
"
            ),
            format!(
                "    token: {token}
  : [
"
            ),
            format!(
                "    token: [{token}
"
            ),
            format!(
                "    token: {{{token}: [1, 2}}
"
            ),
            format!(
                "    token: !{token} x
"
            ),
            format!(
                "    token: *{token}
"
            ),
            format!(
                "    token: \"{token}\\q\"
"
            ),
            format!(
                "    token: {token}
    token: {token}
"
            ),
        ] {
            std::fs::write(&p, kubeconfig(&broken)).expect("write");
            // What kube itself would say (the text the old code printed).
            let Err(raw) = Kubeconfig::read_from(&p) else {
                continue; // YAML after all (e.g. a duplicate key): nothing to report
            };
            if format!("{raw} {raw:?}").contains("LEAKED-TOKEN") {
                quoted_by_kube += 1;
            }
            let e = read_file(&p).expect_err("broken");
            let text = format!("{e} {e:?}");
            assert!(!text.contains("LEAKED-TOKEN"), "{broken:?}: {text}");
            assert!(text.contains(&p.display().to_string()), "{text}");
            assert_eq!(e.reason(), "config");
        }
        // The control: kube's own errors do quote the token for some of these.
        assert!(
            quoted_by_kube > 0,
            "none of the inputs makes kube quote the token"
        );
    }

    fn secret_data(kc: &str) -> BTreeMap<String, Vec<u8>> {
        [
            ("kubeconfig", kc.as_bytes().to_vec()),
            ("tls.crt", b"CERT".to_vec()),
            ("tls.key", b"KEY".to_vec()),
            ("ca.crt", CA.as_bytes().to_vec()),
            ("cluster-name", b"cluster1".to_vec()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    #[test]
    fn an_addon_secret_gives_credentials_from_its_own_keys_only() {
        let ok = secret_data(&kubeconfig(
            "    client-certificate: tls.crt\n    client-key: /managed/hub-kubeconfig/tls.key\n",
        ));
        let m = from_secret_data(&ok, "klusterlet-c1/update-status-hub-kubeconfig").expect("ok");
        let user = m.kubeconfig.auth_infos[0].auth_info.as_ref().expect("user");
        assert_eq!(
            user.client_key_data
                .as_ref()
                .map(|k| k.expose_secret().to_string()),
            Some(base64::engine::general_purpose::STANDARD.encode("KEY"))
        );
        let mut renewed = ok.clone();
        renewed.insert("tls.crt".into(), b"CERT-2".to_vec());
        assert_ne!(
            from_secret_data(&renewed, "x").expect("ok").fingerprint,
            m.fingerprint
        );
        for (user, why) in [
            (
                "    client-certificate: /etc/passwd\n    client-key: tls.key\n",
                "not a key of the Secret",
            ),
            (
                "    client-certificate: kubeconfig\n",
                "not a key of the Secret",
            ),
            (
                "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n",
                "token file",
            ),
            (
                "    exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}\n",
                "exec plugin",
            ),
        ] {
            let e = from_secret_data(&secret_data(&kubeconfig(user)), "ns/s").expect_err(user);
            assert!(
                e.to_string().contains(why) && e.to_string().contains("ns/s"),
                "{e}"
            );
        }
        let mut no_key = ok.clone();
        no_key.remove("kubeconfig");
        assert!(from_secret_data(&no_key, "ns/s").is_err());
    }

    #[tokio::test]
    async fn a_renewed_certificate_on_disk_is_published_without_a_failed_call() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("kubeconfig");
        std::fs::write(dir.path().join("ca.crt"), CA).expect("write");
        std::fs::write(dir.path().join("tls.crt"), "CERT-1").expect("write");
        std::fs::write(dir.path().join("tls.key"), "KEY-1").expect("write");
        std::fs::write(
            &p,
            kubeconfig("    client-certificate: tls.crt\n    client-key: tls.key\n"),
        )
        .expect("write");
        let mut creds = Credentials::from_file(&p).expect("reads");
        let first = creds.current().expect("current").fingerprint;
        // As the kubelet does: new files in a new folder, then one rename.
        std::fs::write(dir.path().join("tls.crt.new"), "CERT-2").expect("write");
        std::fs::rename(dir.path().join("tls.crt.new"), dir.path().join("tls.crt"))
            .expect("rename");
        tokio::time::timeout(Duration::from_secs(10), creds.changed())
            .await
            .expect("the change is seen by the watch");
        let second = creds.current().expect("current").fingerprint;
        assert_ne!(first, second);
        // Half-written content is not published; the current credentials stay.
        std::fs::write(&p, "apiVersion: v1\nusers: [").expect("write");
        tokio::time::sleep(SETTLE * 3).await;
        assert_eq!(creds.current().expect("kept").fingerprint, second);
    }
}
