//! The secure `/metrics` endpoint of the real controller binary against the real API server:
//! HTTPS (self-signed, or the certificate of `--metrics-cert-dir`), and only for bearer tokens
//! that pass a TokenReview and a SubjectAccessReview for `get` on `services/metrics` in the
//! controller's namespace: anonymous → 401, an invalid token → 401, a ServiceAccount without the
//! permission → 403, one allowed only the non-resource URL `/metrics` (the role shipped before
//! issue #29) → 403, a ServiceAccount bound in the namespace to the shipped
//! `update-status-metrics-reader` ClusterRole (`config/prometheus/`) → 200, and that role does
//! not open the kube-apiserver's own `/metrics` (`kubectl auth can-i`). 600 idle TCP
//! connections from one address never block that reader's scrapes (issue #38): at most 16 are
//! held, each until the 3 s handshake deadline.
//! The probes answer on their own plain-HTTP port, without authentication and without data.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use update_status_e2e::controller::{Controller, plain_get};
use update_status_e2e::{TestEnv, poll_until, wait_for};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);

/// `GET https://<addr>/metrics` with curl: `(status, body)`, or `None` if no HTTP answer (not
/// listening yet, TLS failure). `ca`: the CA to verify the server with (none: `-k`). The
/// token goes through curl's standard input, not its command line.
async fn scrape(addr: &str, token: Option<&str>, ca: Option<&Path>) -> Option<(u16, String)> {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--max-time", "10", "-w", "\n%{http_code}"]);
    match ca {
        Some(ca) => cmd.arg("--cacert").arg(ca),
        None => cmd.arg("-k"),
    };
    if token.is_some() {
        cmd.args(["-H", "@-"]);
    }
    cmd.arg(format!("https://{addr}/metrics"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let header = token.map(|t| format!("Authorization: Bearer {t}\n"));
    let out = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().ok()?;
        let mut stdin = child.stdin.take()?;
        if let Some(h) = header {
            stdin.write_all(h.as_bytes()).ok()?;
        }
        drop(stdin);
        child.wait_with_output().ok()
    })
    .await
    .ok()??;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n')?;
    match code.trim().parse::<u16>().ok()? {
        0 => None,
        code => Some((code, body.to_string())),
    }
}

/// The first `(status, body)` the controller answers at all.
async fn first_answer(
    controller: &mut Controller,
    token: Option<&str>,
    ca: Option<&Path>,
) -> Result<(u16, String), Box<dyn std::error::Error + Send + Sync>> {
    let addr = controller.metrics_addr().to_string();
    let log = controller.log.display().to_string();
    let answer = poll_until(TIMEOUT, "the HTTPS /metrics endpoint to answer", || {
        let exited = controller.running().err();
        let addr = addr.clone();
        async move {
            match exited {
                Some(why) => Some(Err(why)),
                None => scrape(&addr, token, ca).await.map(Ok),
            }
        }
    })
    .await;
    Ok(answer
        .map_err(|e| e.to_string())
        .and_then(|r| r)
        .map_err(|e| format!("{e} (controller log: {log})"))?)
}

/// Idle TCP connections opened by the test from one source address.
const IDLE_CONNECTIONS: usize = 600;
/// The controller's per-source limit and TLS handshake deadline
/// (`controllers/src/endpoints/mod.rs`).
const PER_SOURCE: usize = 16;
const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(3);

/// Opens [`IDLE_CONNECTIONS`] TCP connections to `/metrics` from 127.0.0.2 that never start a
/// TLS handshake (more than the controller's 512 slots), then scrapes with `reader`'s token
/// from 127.0.0.1, as Prometheus would: every scrape is served. Measures when the server closes
/// the idle connections: those past the per-source limit at once, the others at the handshake
/// deadline.
async fn idle_connections_never_block_the_scraper(
    controller: &Controller,
    reader: &str,
) -> TestResult {
    use tokio::io::AsyncReadExt as _;
    let addr: std::net::SocketAddr = controller.metrics_addr().parse()?;
    let source: std::net::SocketAddr = "127.0.0.2:0".parse()?;
    let opened = std::time::Instant::now();
    let mut idle = Vec::with_capacity(IDLE_CONNECTIONS);
    for _ in 0..IDLE_CONNECTIONS {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(source)?;
        idle.push(socket.connect(addr).await?);
    }
    // When the server closes each idle connection (EOF or reset), watched from now on.
    let closing = tokio::spawn(futures::future::join_all(idle.into_iter().map(
        |mut c| async move {
            let mut buf = [0u8; 16];
            let _ = tokio::time::timeout(Duration::from_secs(30), c.read(&mut buf)).await;
            opened.elapsed()
        },
    )));
    let mut served = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let answer = scrape(controller.metrics_addr(), Some(reader), None).await;
        let took = t.elapsed();
        assert!(
            matches!(answer, Some((200, _))),
            "the scraper is refused while {IDLE_CONNECTIONS} idle connections come from one source: {answer:?} (controller log: {})",
            controller.log.display()
        );
        served.push(took);
    }
    let closed: Vec<Duration> = closing.await?;
    let held = closed
        .iter()
        .filter(|d| **d >= HANDSHAKE_DEADLINE - Duration::from_millis(500))
        .count();
    let last = closed.iter().max().copied().unwrap_or_default();
    let metrics = scrape(controller.metrics_addr(), Some(reader), None)
        .await
        .ok_or("no answer after the idle connections")?
        .1;
    let refused = metrics
        .lines()
        .find(|l| l.starts_with(r#"update_status_metrics_auth_refused_total{reason="source"}"#))
        .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .unwrap_or_default();
    eprintln!(
        "{IDLE_CONNECTIONS} idle connections from 127.0.0.2: {held} held until the handshake deadline (the last closed after {last:?}), {refused} refused at once; 5 scrapes from 127.0.0.1 served in {served:?}"
    );
    assert_eq!(held, PER_SOURCE, "connections held from one source");
    assert!(
        last < HANDSHAKE_DEADLINE + Duration::from_secs(2),
        "the idle connections were held past the handshake deadline: {last:?}"
    );
    assert!(
        refused >= (IDLE_CONNECTIONS - PER_SOURCE) as f64,
        "refusals counted: {refused}"
    );
    Ok(())
}

/// A token of ServiceAccount `namespace/name`, from the TokenRequest API.
async fn token(
    env: &TestEnv,
    namespace: &str,
    name: &str,
) -> Result<String, update_status_e2e::Error> {
    env.kubectl_ok(["create", "serviceaccount", "-n", namespace, name])
        .await?;
    Ok(env
        .kubectl_ok([
            "create",
            "token",
            "-n",
            namespace,
            name,
            "--duration",
            "10m",
        ])
        .await?
        .trim()
        .to_string())
}

/// Cluster-scoped RBAC made by the test, deleted when dropped.
struct ClusterRbac {
    kubeconfig: std::path::PathBuf,
    objects: Vec<String>,
}

impl Drop for ClusterRbac {
    fn drop(&mut self) {
        for object in &self.objects {
            let _ = Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&self.kubeconfig)
                .args(["delete", object, "--ignore-not-found", "--wait=false"])
                .stdin(Stdio::null())
                .output();
        }
    }
}

#[tokio::test]
async fn metrics_need_a_token_allowed_to_get_metrics_and_probes_need_none() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("secure-metrics").await?;
    let n = ns.name();
    let mut controller = Controller::start(&env, n, &["--metrics-secure=true"])?;

    // Anonymous (the first answer: the endpoint is up): 401, asking for a bearer token.
    let (status, body) = first_answer(&mut controller, None, None).await?;
    assert_eq!(status, 401, "anonymous scrape: {body}");
    let log = std::fs::read_to_string(&controller.log)?;
    assert!(
        log.contains("self-signed certificate"),
        "the self-signed certificate is logged: {log}"
    );

    // A token the API server does not know: 401.
    let (status, body) = scrape(controller.metrics_addr(), Some("not-a-token"), None)
        .await
        .ok_or("no answer to an invalid token")?;
    assert_eq!(status, 401, "invalid token: {body}");

    // A ServiceAccount with no permission on /metrics: 403 naming it.
    let nobody = token(&env, n, "nobody").await?;
    let (status, body) = scrape(controller.metrics_addr(), Some(&nobody), None)
        .await
        .ok_or("no answer to the nobody token")?;
    assert_eq!(status, 403, "token without permission: {body}");
    assert!(
        body.contains(&format!("system:serviceaccount:{n}:nobody")),
        "{body}"
    );

    // Allowed the non-resource URL /metrics (what the role shipped before issue #29 granted,
    // and which also opens the kube-apiserver's /metrics): no longer enough, 403.
    let old_role = format!("{n}-nonresource-metrics");
    let _rbac = ClusterRbac {
        kubeconfig: env.kubeconfig_path().to_path_buf(),
        objects: vec![
            format!("clusterrole/{old_role}"),
            format!("clusterrolebinding/{old_role}"),
        ],
    };
    env.kubectl_ok([
        "create",
        "clusterrole",
        &old_role,
        "--verb=get",
        "--non-resource-url=/metrics",
    ])
    .await?;
    env.kubectl_ok([
        "create",
        "clusterrolebinding",
        &old_role,
        &format!("--clusterrole={old_role}"),
        &format!("--serviceaccount={n}:old-reader"),
    ])
    .await?;
    let old_reader = token(&env, n, "old-reader").await?;
    let (status, body) = scrape(controller.metrics_addr(), Some(&old_reader), None)
        .await
        .ok_or("no answer to the old reader")?;
    assert_eq!(
        status, 403,
        "a non-resource /metrics grant is not enough: {body}"
    );
    assert!(body.contains("services/metrics"), "{body}");

    // A ServiceAccount bound, in the controller's namespace, to the shipped metrics-reader
    // ClusterRole: the metrics.
    env.bind_metrics_reader(n, "reader").await?;
    let reader = token(&env, n, "reader").await?;
    // RBAC reaches the authorizer within moments; a denial is cached for 10 s at most.
    let body = poll_until(
        Duration::from_secs(30),
        "the reader's scrape to succeed",
        || async {
            match scrape(controller.metrics_addr(), Some(&reader), None).await {
                Some((200, body)) => Some(body),
                _ => None,
            }
        },
    )
    .await?;
    assert!(body.contains("update_status_"), "{body}");
    // The shipped role opens nothing else: not the API server's /metrics, not another
    // namespace's services/metrics.
    let as_reader = format!("--as=system:serviceaccount:{n}:reader");
    for (what, args) in [
        (
            "the kube-apiserver's /metrics",
            vec!["auth", "can-i", "get", "/metrics"],
        ),
        (
            "services/metrics in another namespace",
            // `TYPE/NAME` would ask about a Service named `metrics`: the subresource is a flag.
            vec![
                "auth",
                "can-i",
                "get",
                "services",
                "--subresource=metrics",
                "-n",
                "default",
            ],
        ),
    ] {
        let mut args: Vec<&str> = args;
        args.push(&as_reader);
        let out = env.kubectl(args).await?;
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "no",
            "the metrics reader may not get {what}"
        );
    }
    let out = env
        .kubectl([
            "auth",
            "can-i",
            "get",
            "services",
            "--subresource=metrics",
            "-n",
            n,
            &as_reader,
        ])
        .await?;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "yes");

    // Issue #38 item 8: idle TCP connections from one source (an allowed one: the
    // NetworkPolicy admits the whole monitoring namespace) took every slot before their TLS
    // handshakes, and the scraper was refused. Now at most MAX_HANDSHAKES_PER_SOURCE of them
    // are held, each until the handshake deadline, and the scraper is served throughout.
    idle_connections_never_block_the_scraper(&controller, &reader).await?;

    // The nobody token is still refused (the reader's permission is its own).
    let (status, _) = scrape(controller.metrics_addr(), Some(&nobody), None)
        .await
        .ok_or("no answer to the nobody token")?;
    assert_eq!(status, 403);

    // Tokens never reach the log.
    let log = std::fs::read_to_string(&controller.log)?;
    assert!(
        !log.contains(&reader) && !log.contains(&nobody) && !log.contains(&old_reader),
        "a token was logged"
    );

    // Probes: plain HTTP on their own port, no token needed, no metrics.
    let probes = controller.probe_addr().to_string();
    let healthz = plain_get(&probes, "/healthz")?;
    assert!(
        healthz.starts_with("HTTP/1.0 200") && healthz.ends_with("\r\n\r\nok"),
        "{healthz}"
    );
    wait_for(TIMEOUT, "/readyz to answer ok", || async {
        plain_get(&probes, "/readyz")
            .is_ok_and(|a| a.starts_with("HTTP/1.0 200") && a.ends_with("ok"))
    })
    .await?;
    let metrics_on_probes = plain_get(&probes, "/metrics")?;
    assert!(
        metrics_on_probes.starts_with("HTTP/1.0 404"),
        "{metrics_on_probes}"
    );
    assert!(
        !metrics_on_probes.contains("update_status_"),
        "{metrics_on_probes}"
    );
    // And /metrics is not served as plain HTTP.
    let plain = plain_get(controller.metrics_addr(), "/metrics").unwrap_or_default();
    assert!(
        !plain.contains("update_status_"),
        "plain HTTP served metrics: {plain}"
    );
    Ok(())
}

/// A self-signed certificate for 127.0.0.1 and localhost, as `tls.crt`/`tls.key` in `dir`.
fn write_certificate(dir: &Path, cn: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let out = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ])
        .args([
            "-keyout",
            "tls.key.new",
            "-out",
            "tls.crt.new",
            "-days",
            "1",
        ])
        .args(["-subj", &format!("/CN={cn}")])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(format!("openssl req: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    // Renamed into place, key first, as a rotation would.
    std::fs::rename(dir.join("tls.key.new"), dir.join("tls.key"))?;
    std::fs::rename(dir.join("tls.crt.new"), dir.join("tls.crt"))?;
    Ok(())
}

#[tokio::test]
async fn metrics_are_served_with_the_certificate_of_the_cert_dir_and_its_rotation() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("metrics-cert").await?;
    let dir = std::env::temp_dir().join(format!("update-status-e2e-{}", ns.name()));
    std::fs::create_dir_all(&dir)?;
    write_certificate(&dir, "first")?;
    let first = dir.join("first.crt");
    std::fs::copy(dir.join("tls.crt"), &first)?;
    let cert_dir = dir.display().to_string();
    let mut controller = Controller::start(
        &env,
        ns.name(),
        &["--metrics-secure", "--metrics-cert-dir", &cert_dir],
    )?;

    // Verified against the certificate itself: served from the folder.
    let (status, _) = first_answer(&mut controller, None, Some(&first)).await?;
    assert_eq!(status, 401);

    // Rotated: new connections get the new certificate, the old one no longer verifies.
    write_certificate(&dir, "second")?;
    let second = dir.join("second.crt");
    std::fs::copy(dir.join("tls.crt"), &second)?;
    let addr = controller.metrics_addr().to_string();
    wait_for(TIMEOUT, "the rotated certificate to be served", || async {
        scrape(&addr, None, Some(&second))
            .await
            .is_some_and(|(s, _)| s == 401)
    })
    .await?;
    assert!(
        scrape(&addr, None, Some(&first)).await.is_none(),
        "the old certificate is still served"
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
