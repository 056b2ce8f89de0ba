//! Client certificates signed by the local control plane's CA (`$CLUSTER_DIR/pki/ca.{crt,key}`),
//! with `openssl`: identities such as an ACM add-on agent's
//! (`system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>`, in the
//! groups OCM gives it), without running OCM.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::Error;
use crate::test_env::TestEnv;

/// A client certificate and its key (PEM).
pub struct ClientCert {
    /// The certificate (PEM).
    pub cert: Vec<u8>,
    /// The private key (PEM).
    pub key: Vec<u8>,
}

/// A client certificate for `user` in `groups` (the subject's CN and O; rcgen keeps one value
/// per attribute, so at most one group), valid one day, signed by the CA of the control plane in
/// `cluster_dir`; the files are made in `work`.
pub fn client_cert(
    cluster_dir: &Path,
    work: &Path,
    user: &str,
    groups: &[&str],
) -> Result<ClientCert, Error> {
    if groups.len() > 1 {
        return Err(Error::LocalCluster(
            "client_cert: at most one group (one O attribute)".into(),
        ));
    }
    let pki = cluster_dir.join("pki");
    std::fs::create_dir_all(work)
        .map_err(|e| Error::LocalCluster(format!("{}: {e}", work.display())))?;
    let stem = user.replace([':', '/'], "_");
    let csr = work.join(format!("{stem}.csr"));
    let crt = work.join(format!("{stem}.crt"));
    // The key and the request with rcgen: openssl refuses subject fields over 64 characters,
    // and OCM's identities are longer (Go has no such limit).
    let key = rcgen::KeyPair::generate()
        .map_err(|e| Error::LocalCluster(format!("generating a key: {e}")))?;
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, user);
    for g in groups {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, *g);
    }
    let request = params
        .serialize_request(&key)
        .and_then(|r| r.pem())
        .map_err(|e| Error::LocalCluster(format!("making a certificate request: {e}")))?;
    std::fs::write(&csr, request)
        .map_err(|e| Error::LocalCluster(format!("{}: {e}", csr.display())))?;
    let run = |args: &[&std::ffi::OsStr]| -> Result<(), Error> {
        let out = Command::new("openssl")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| Error::Spawn {
                program: "openssl".into(),
                source,
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(Error::LocalCluster(format!(
                "openssl {}: {}",
                args.first()
                    .map(|a| a.to_string_lossy())
                    .unwrap_or_default(),
                String::from_utf8_lossy(&out.stderr)
            )))
        }
    };
    // Extensions make it an X.509 v3 certificate (rustls refuses v1). A file per identity:
    // certificates are made concurrently, and a shared file rewritten while openssl reads it
    // gave some of them no extensions (v1 certificates, refused by rustls).
    let ext = work.join(format!("{stem}.ext"));
    std::fs::write(
        &ext,
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
    )
    .map_err(|e| Error::LocalCluster(format!("{}: {e}", ext.display())))?;
    run(&[
        "x509".as_ref(),
        "-req".as_ref(),
        "-in".as_ref(),
        csr.as_os_str(),
        "-CA".as_ref(),
        pki.join("ca.crt").as_os_str(),
        "-CAkey".as_ref(),
        pki.join("ca.key").as_os_str(),
        // A serial of its own (no shared serial file: certificates are made concurrently).
        "-set_serial".as_ref(),
        serial().as_ref(),
        "-days".as_ref(),
        "1".as_ref(),
        "-sha256".as_ref(),
        "-extfile".as_ref(),
        ext.as_os_str(),
        "-out".as_ref(),
        crt.as_os_str(),
    ])?;
    let read = |p: &Path| {
        std::fs::read(p).map_err(|e| Error::LocalCluster(format!("{}: {e}", p.display())))
    };
    Ok(ClientCert {
        cert: read(&crt)?,
        key: key.serialize_pem().into_bytes(),
    })
}

/// A serial number unique in this process and unlikely to repeat across processes (time, pid
/// and a counter).
fn serial() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "0x{:x}{:08x}{:08x}",
        nanos,
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// The API server URL and CA (base64) of `env`'s kubeconfig.
pub fn server_and_ca(env: &TestEnv) -> Result<(String, String), Error> {
    let path = env.kubeconfig_path();
    let kc = kube::config::Kubeconfig::read_from(path).map_err(|source| Error::Kubeconfig {
        path: path.to_path_buf(),
        source,
    })?;
    let cluster = kc
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| Error::LocalCluster(format!("no cluster in {}", path.display())))?;
    Ok((
        cluster.server.unwrap_or_default(),
        cluster.certificate_authority_data.unwrap_or_default(),
    ))
}

/// A kubeconfig for `server` naming its client certificate and key as the files `tls.crt` and
/// `tls.key` next to it, as OCM's registration agent writes an add-on's hub kubeconfig.
pub fn addon_kubeconfig(server: &str, ca_b64: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca_b64}\ncontexts:\n- name: default-context\n  context:\n    cluster: hub\n    user: default-auth\ncurrent-context: default-context\nusers:\n- name: default-auth\n  user:\n    client-certificate: tls.crt\n    client-key: tls.key\n"
    )
}
