//! The hub sync against a real control plane, the same API server playing the fleet hub: the
//! controller reports a loaded cluster into a second namespace (the `<cluster-name>` namespace
//! of the hub), as a ServiceAccount holding only `config/hub/role.yaml`, through a TCP proxy the
//! test can cut to simulate a hub outage. Checked the way a fleet admin would see it: the
//! copies (names, labels, status, no owners), `kubectl update-status --fleet`, local changes
//! mirrored and stale copies deleted, no hub writes in steady state, progress insights only on
//! request, rotated credentials picked up, and a hub that rejects us, forbids us or is away never
//! holding up the local objects.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::net::{Shutdown, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use update_status_e2e::controller::{Controller, run_without_cluster, workspace_bin};
use update_status_e2e::hub_copies::{
    ACM_LABEL, KINDS, is_progress, labels, list, name, wait_mirrored,
};
use update_status_e2e::{
    TestEnv, exclusive_cluster_state, oc_status_case, quiet_period, repo_root, wait_for,
};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// For the controller to write the local objects.
const TIMEOUT: Duration = Duration::from_secs(60);
const AGENT: &str = "update-status-agent";

/// A TCP proxy on loopback to the API server, which the test can cut (the hub goes away:
/// connections refused, open ones closed) and restore on the same port. Plain threads: it
/// must keep forwarding whatever the test's runtime does.
struct Proxy {
    port: u16,
    upstream: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<std::thread::JoinHandle<()>>,
    connections: Arc<Mutex<Vec<std::net::TcpStream>>>,
    /// Connections whose client side is still open.
    open: Arc<std::sync::atomic::AtomicUsize>,
}

impl Proxy {
    fn start(upstream: SocketAddr) -> Result<Self, BoxError> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let mut p = Proxy {
            port: listener.local_addr()?.port(),
            upstream,
            stop: Arc::default(),
            accept: None,
            connections: Arc::default(),
            open: Arc::default(),
        };
        p.serve(listener)?;
        Ok(p)
    }

    fn serve(&mut self, listener: std::net::TcpListener) -> Result<(), BoxError> {
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        self.stop = stop.clone();
        let upstream = self.upstream;
        let connections = self.connections.clone();
        let open = self.open.clone();
        self.accept = Some(std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let inbound = match listener.accept() {
                    Ok((s, _)) => s,
                    Err(_) => {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                };
                let Ok(outbound) = std::net::TcpStream::connect(upstream) else {
                    continue;
                };
                let _ = inbound.set_nonblocking(false);
                let (Ok(a), Ok(b)) = (inbound.try_clone(), outbound.try_clone()) else {
                    continue;
                };
                if let Ok(mut c) = connections.lock() {
                    c.extend([a, b]);
                }
                open.fetch_add(1, Ordering::SeqCst);
                for (i, (mut from, mut to)) in [
                    (inbound.try_clone(), outbound.try_clone()),
                    (outbound.try_clone(), inbound.try_clone()),
                ]
                .into_iter()
                .filter_map(|(f, t)| Some((f.ok()?, t.ok()?)))
                .enumerate()
                {
                    let open = open.clone();
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(Shutdown::Write);
                        // The client closed its side (or the proxy went down).
                        if i == 0 {
                            open.fetch_sub(1, Ordering::SeqCst);
                        }
                    });
                }
            }
        }));
        Ok(())
    }

    /// Connections the client still holds open.
    fn open_connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// Closes the port and every open connection.
    fn down(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(a) = self.accept.take() {
            let _ = a.join();
        }
        if let Ok(mut c) = self.connections.lock() {
            for s in c.drain(..) {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }

    /// Listens again on the same port.
    fn up(&mut self) -> Result<(), BoxError> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", self.port))?;
        self.serve(listener)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.down();
    }
}

/// The API server's address and CA (base64) from the harness kubeconfig.
fn apiserver(env: &TestEnv) -> Result<(SocketAddr, String), BoxError> {
    let kc = kube::config::Kubeconfig::read_from(env.kubeconfig_path())?;
    let cluster = kc
        .clusters
        .first()
        .and_then(|c| c.cluster.as_ref())
        .ok_or("no cluster in the harness kubeconfig")?;
    let server = cluster.server.as_deref().ok_or("no server")?;
    let addr = server
        .strip_prefix("https://")
        .ok_or_else(|| format!("server {server} is not https"))?
        .trim_end_matches('/')
        .parse()?;
    let ca = cluster
        .certificate_authority_data
        .clone()
        .ok_or("no certificate-authority-data")?;
    Ok((addr, ca))
}

/// A kubeconfig for the hub: the proxy's address, the cluster CA, a ServiceAccount token.
fn write_hub_kubeconfig(dir: &Path, port: u16, ca: &str, token: &str) -> Result<PathBuf, BoxError> {
    let path = dir.join("hub.kubeconfig");
    let body = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster:
    server: https://127.0.0.1:{port}
    certificate-authority-data: {ca}
users:
- name: agent
  user:
    token: {token}
contexts:
- name: hub
  context:
    cluster: hub
    user: agent
current-context: hub
"
    );
    std::fs::write(&path, body)?;
    Ok(path)
}

fn temp_dir(name: &str) -> Result<PathBuf, BoxError> {
    let dir = std::env::temp_dir().join(format!("update-status-e2e-{name}"));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Sum of a metric's series whose line starts with `prefix`.
fn metric(text: &str, prefix: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The writes of copies to the hub (the heartbeat, one write per `--hub-heartbeat-interval`, is
/// e2e `acm_agent`'s).
fn hub_writes(c: &Controller) -> Result<f64, BoxError> {
    let text = c.metrics()?;
    Ok(metric(&text, "update_status_hub_writes_total{")
        - metric(
            &text,
            r#"update_status_hub_writes_total{kind="ControlPlaneUpdateStatus",verb="heartbeat"}"#,
        ))
}

/// Waits until the controller reports the hub failing for `reason` (`update_status_hub_sync_up`
/// 0 and an error counted with that reason).
async fn hub_failing(controller: &Controller, reason: &str, what: &str) -> TestResult {
    let series = format!(r#"update_status_hub_sync_errors_total{{reason="{reason}"}}"#);
    wait_for(TIMEOUT, what, || async {
        let m = controller.metrics().unwrap_or_default();
        metric(&m, &series) > 0.0 && m.contains("update_status_hub_sync_up 0")
    })
    .await?;
    Ok(())
}

/// The local health insight about a ClusterOperator.
async fn operator_insight(env: &TestEnv, ns: &str, operator: &str) -> Result<String, BoxError> {
    list(env, "updateinsights", ns)
        .await?
        .iter()
        .find(|o| {
            o["status"]["type"] == "Health"
                && o["status"]["resource"]["kind"] == "ClusterOperator"
                && o["status"]["resource"]["name"] == operator
        })
        .map(|o| name(o).to_string())
        .ok_or_else(|| format!("no health insight about {operator} in {ns}").into())
}

async fn exists(env: &TestEnv, kind: &str, name: &str, ns: &str) -> bool {
    env.kubectl(["get", kind, name, "-n", ns])
        .await
        .is_ok_and(|o| o.status.success())
}

fn fleet(env: &TestEnv, args: &[&str]) -> Result<String, BoxError> {
    let mut a = vec!["--fleet"];
    a.extend(args);
    cli(env, &a)
}

/// Runs `kubectl update-status` (the built plugin) against the cluster; a failed exit is an
/// error carrying its standard error.
fn cli(env: &TestEnv, args: &[&str]) -> Result<String, BoxError> {
    let out = env.plugin(args)?;
    if !out.status.success() {
        return Err(format!(
            "kubectl update-status {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Health insights of a namespace by level, as the fleet report counts them.
async fn health_counts(env: &TestEnv, ns: &str) -> Result<Value, BoxError> {
    let mut c = json!({"critical": 0, "error": 0, "warning": 0, "info": 0, "unknown": 0});
    for o in list(env, "updateinsights", ns).await? {
        if o["status"]["type"] != "Health" {
            continue;
        }
        let level = o["status"]["health"]["impact"]["level"]
            .as_str()
            .unwrap_or_default()
            .to_lowercase();
        if let Some(n) = c[&level].as_u64() {
            c[&level] = json!(n + 1);
        }
    }
    Ok(c)
}

/// Waits until the hub copy of UpdateInsight `name` in `hub_ns` is gone.
async fn copy_gone(env: &TestEnv, name: &str, hub_ns: &str, what: &str) -> TestResult {
    wait_for(
        TIMEOUT,
        &format!("the hub copy of {what} to go"),
        || async { !exists(env, "updateinsight", name, hub_ns).await },
    )
    .await?;
    Ok(())
}

/// Waits until the controller holds exactly one connection to the hub (through `proxy`): a
/// session's watches and calls share it (HTTP/2), and earlier sessions closed theirs.
async fn one_hub_connection(proxy: &Proxy, when: &str, log_hint: &str) -> TestResult {
    wait_for(
        TIMEOUT,
        &format!("the controller to hold one connection to the hub {when}"),
        || async { proxy.open_connections() == 1 },
    )
    .await
    .map_err(|e| format!("{e}: {} open {log_hint}", proxy.open_connections()))?;
    Ok(())
}

#[tokio::test]
async fn hub_copies_mirror_the_cluster_and_survive_a_hub_outage() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let local_ns = env.namespace("hub-local").await?;
    let hub_ns = env.namespace("hub-spoke").await?;
    let (local, cluster) = (local_ns.name(), hub_ns.name());

    // The agent's hub identity: a ServiceAccount of the cluster namespace, no permission yet.
    env.kubectl_ok(["create", "serviceaccount", AGENT, "-n", cluster])
        .await?;
    let token = env
        .kubectl_ok(["create", "token", AGENT, "-n", cluster, "--duration", "2h"])
        .await?;
    let (upstream, ca) = apiserver(&env)?;
    let mut proxy = Proxy::start(upstream)?;
    let dir = temp_dir(cluster)?;
    // First with credentials the hub rejects.
    let kubeconfig_path = write_hub_kubeconfig(&dir, proxy.port, &ca, "not-a-valid-token")?;
    let kubeconfig = kubeconfig_path.to_string_lossy().into_owned();

    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let controller = Controller::start(
        &env,
        local,
        &["--hub-kubeconfig", &kubeconfig, "--cluster-name", cluster],
    )?;
    let log = controller.log.clone();
    let log_hint = || format!("(controller log: {})", log.display());

    // 1. Rejected credentials, then rotated ones (the file rewritten, as a mounted Secret
    // is), which are valid but not yet allowed anything: both said and counted; the local
    // objects wait for neither.
    wait_for(TIMEOUT, "the local ControlPlaneUpdateStatus", || {
        exists(&env, "controlplaneupdatestatus", "cluster", local)
    })
    .await
    .map_err(|e| format!("{e} {}", log_hint()))?;
    wait_for(
        TIMEOUT,
        "rejected hub credentials to be reported",
        || async {
            let m = controller.metrics().unwrap_or_default();
            metric(
                &m,
                r#"update_status_hub_sync_errors_total{reason="unauthorized"}"#,
            ) > 0.0
        },
    )
    .await
    .map_err(|e| format!("{e} {}", log_hint()))?;
    write_hub_kubeconfig(&dir, proxy.port, &ca, token.trim())?;
    hub_failing(&controller, "forbidden", "a forbidden hub to be reported")
        .await
        .map_err(|e| format!("{e} {}", log_hint()))?;
    let text = std::fs::read_to_string(&log)?;
    assert!(
        text.lines().any(|l| l.contains("WARN")
            && l.contains("hub watch failing")
            && l.contains("forbidden")),
        "no warning about the forbidden hub {}",
        log_hint()
    );
    for kind in KINDS {
        assert!(
            list(&env, kind, cluster).await?.is_empty(),
            "{kind} copied while forbidden"
        );
    }

    // 2. Granted config/hub/role.yaml: the copies converge.
    let role = repo_root().join("config/hub/role.yaml");
    env.kubectl_ok(["apply", "-n", cluster, "-f", &role.to_string_lossy()])
        .await?;
    let granted = Instant::now();
    env.kubectl_ok([
        "create",
        "rolebinding",
        "update-status-hub-sync",
        "-n",
        cluster,
        "--role=update-status-hub-sync",
        &format!("--serviceaccount={cluster}:{AGENT}"),
    ])
    .await?;
    wait_mirrored(&env, local, cluster, false, "the hub copies", &log).await?;
    eprintln!(
        "hub: copies converged {:?} after the Role was bound",
        granted.elapsed()
    );
    let hub_cp = list(&env, "controlplaneupdatestatuses", cluster).await?;
    assert_eq!(hub_cp.len(), 1);
    assert_eq!(name(&hub_cp[0]), cluster, "named after the cluster");
    assert_eq!(labels(&hub_cp[0])[ACM_LABEL], cluster);
    assert_eq!(hub_cp[0]["status"]["versions"]["target"], "4.14.1");
    let hub_insights = list(&env, "updateinsights", cluster).await?;
    let local_insights = list(&env, "updateinsights", local).await?;
    assert!(
        hub_insights.len() >= 6,
        "the 5 degraded operators and the ClusterVersion warning: {}",
        hub_insights.len()
    );
    assert!(
        hub_insights.iter().all(|o| !is_progress(o)),
        "progress insights copied without --hub-include-progress"
    );
    let local_progress = local_insights.iter().filter(|o| is_progress(o)).count();
    assert!(local_progress > 0, "the snapshot has progress insights");
    assert_eq!(
        list(&env, "workerpoolupdatestatuses", cluster).await?.len(),
        1,
        "the worker pool"
    );

    // 3. The fleet view shows the cluster, with the cluster's health.
    let report: Value = serde_json::from_str(&fleet(&env, &["-o", "json"])?)?;
    let row = report["clusters"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["cluster"] == cluster))
        .ok_or_else(|| format!("no fleet row for {cluster}: {report}"))?;
    assert_eq!(row["namespace"], cluster, "{row}");
    assert_eq!(row["to"], "4.14.1", "{row}");
    assert_eq!(row["from"], "4.14.0-rc.3", "{row}");
    assert_eq!(
        row["assessment"], hub_cp[0]["status"]["assessment"],
        "{row}"
    );
    assert_eq!(row["workerNodes"], 3, "{row}");
    assert_eq!(row["health"], health_counts(&env, local).await?, "{row}");
    let table = fleet(&env, &[])?;
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(cluster))
        .ok_or_else(|| format!("no fleet row for {cluster}:\n{table}"))?;
    assert!(line.contains("4.14.1") && line.contains("Error"), "{line}");
    // And the cluster's own report from its hub namespace.
    let report = cli(&env, &["-n", cluster])?;
    assert!(
        report.contains("Target Version:  4.14.1 (from 4.14.0-rc.3)"),
        "{report}"
    );

    // 4. Steady state: nothing changes, nothing is written, to the hub or locally.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (hub_before, local_before) = (hub_writes(&controller)?, controller.writes()?);
    let quiet = quiet_period(20);
    tokio::time::sleep(quiet).await;
    let (hub_after, local_after) = (hub_writes(&controller)?, controller.writes()?);
    assert_eq!(
        hub_after,
        hub_before,
        "hub writes in {quiet:?} of steady state {}",
        log_hint()
    );
    assert_eq!(
        local_after, local_before,
        "local writes in {quiet:?} of steady state"
    );
    eprintln!("hub: {hub_before} writes to converge, 0 over {quiet:?} of steady state");
    // One connection to the hub: the session's three watches and its calls share it (HTTP/2),
    // and the sessions that came before (rejected, then forbidden) closed theirs.
    one_hub_connection(&proxy, "after the steady state", &log_hint()).await?;

    // 5. A local change is mirrored: an operator recovers, its insight goes here and there.
    let gone = operator_insight(&env, local, "kube-apiserver").await?;
    assert!(exists(&env, "updateinsight", &gone, cluster).await);
    let changed = Instant::now();
    env.clear_operator_degraded("kube-apiserver").await?;
    copy_gone(&env, &gone, cluster, "the resolved insight")
        .await
        .map_err(|e| format!("{e} {}", log_hint()))?;
    let deleted_after = changed.elapsed();
    wait_mirrored(
        &env,
        local,
        cluster,
        false,
        "the hub to mirror the change",
        &log,
    )
    .await?;
    eprintln!(
        "hub: resolved insight deleted on the hub {deleted_after:?} after the input changed, all mirrored after {:?}",
        changed.elapsed()
    );

    // 6. The hub goes away: the cluster carries on, the failure is counted; once the hub is
    // back, the copies converge.
    proxy.down();
    let stale = operator_insight(&env, local, "etcd").await?;
    env.clear_operator_degraded("etcd").await?;
    wait_for(TIMEOUT, "the local etcd insight to go", || {
        let stale = stale.clone();
        let env = &env;
        async move { !exists(env, "updateinsight", &stale, local).await }
    })
    .await?;
    hub_failing(&controller, "connect", "an unreachable hub to be reported")
        .await
        .map_err(|e| format!("{e} {}", log_hint()))?;
    assert!(
        exists(&env, "updateinsight", &stale, cluster).await,
        "the hub copy cannot have been deleted while the hub was away"
    );
    let text = std::fs::read_to_string(&log)?;
    assert!(
        text.lines()
            .any(|l| l.contains("WARN") && l.contains("hub") && l.contains("connect")),
        "no warning about the unreachable hub {}",
        log_hint()
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    proxy.up()?;
    let back = Instant::now();
    wait_mirrored(
        &env,
        local,
        cluster,
        false,
        "the hub to converge after the outage",
        &log,
    )
    .await?;
    eprintln!(
        "hub: converged {:?} after the hub came back",
        back.elapsed()
    );
    wait_for(TIMEOUT, "update_status_hub_sync_up 1", || async {
        controller
            .metrics()
            .is_ok_and(|m| m.contains("update_status_hub_sync_up 1"))
    })
    .await?;

    // (That this one connection outlives a quiet spell longer than hyper's pool timeout, 90 s,
    // is the unit test `the_hub_client_reuses_its_connection_after_a_long_quiet_spell` of
    // controllers/src/runtime/client.rs: a 95-second wait here before.)

    // 7. Progress insights on request, with a restarted controller that rewrites nothing else;
    // without the flag again, their copies go.
    drop(controller);
    let controller = Controller::start(
        &env,
        local,
        &[
            "--hub-kubeconfig",
            &kubeconfig,
            "--cluster-name",
            cluster,
            "--hub-include-progress",
        ],
    )?;
    let log = controller.log.clone();
    wait_mirrored(&env, local, cluster, true, "the progress copies", &log).await?;
    let progress = list(&env, "updateinsights", local)
        .await?
        .iter()
        .filter(|o| is_progress(o))
        .count();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        hub_writes(&controller)?,
        (2 * progress) as f64,
        "a restart writes only the new copies (metadata + status each) {}",
        log.display()
    );
    drop(controller);
    let controller = Controller::start(
        &env,
        local,
        &["--hub-kubeconfig", &kubeconfig, "--cluster-name", cluster],
    )?;
    wait_mirrored(
        &env,
        local,
        cluster,
        false,
        "the progress copies to go",
        &controller.log,
    )
    .await?;
    // The hub shows the last copy gone before the controller has counted its delete (the
    // answer is still on its way): a run counted 39 deletes of 40. Counted after the same 3 s as
    // above, which also leaves room for any write too many.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        hub_writes(&controller)?,
        progress as f64,
        "one delete per progress copy, nothing else"
    );
    Ok(())
}

#[tokio::test]
async fn an_unreachable_hub_does_not_hold_up_the_cluster() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let local_ns = env.namespace("hub-down").await?;
    let local = local_ns.name();
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let (_, ca) = apiserver(&env)?;
    let dir = temp_dir(local)?;
    let kubeconfig = write_hub_kubeconfig(&dir, port, &ca, "no-token")?;
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let controller = Controller::start(
        &env,
        local,
        &[
            "--hub-kubeconfig",
            &kubeconfig.to_string_lossy(),
            "--cluster-name",
            "nowhere",
        ],
    )?;
    let log_hint = format!("(controller log: {})", controller.log.display());
    wait_for(TIMEOUT, "the local health insights", || async {
        list(&env, "updateinsights", local)
            .await
            .is_ok_and(|l| l.iter().filter(|o| !is_progress(o)).count() >= 6)
    })
    .await
    .map_err(|e| format!("{e} {log_hint}"))?;
    wait_for(TIMEOUT, "the unreachable hub to be reported", || async {
        let m = controller.metrics().unwrap_or_default();
        metric(
            &m,
            r#"update_status_hub_sync_errors_total{reason="connect"}"#,
        ) > 0.0
            && m.contains("update_status_hub_sync_up 0")
    })
    .await
    .map_err(|e| format!("{e} {log_hint}"))?;
    let text = std::fs::read_to_string(&controller.log)?;
    assert!(
        text.lines().any(|l| l.contains("WARN")
            && l.contains("hub watch failing")
            && l.contains("connect")),
        "no warning about the unreachable hub {log_hint}"
    );
    assert_eq!(hub_writes(&controller)?, 0.0);
    assert!(
        controller.writes()? > 0,
        "the local reconcilers wrote nothing"
    );
    Ok(())
}

#[test]
fn hub_flags_are_checked_before_anything_starts() -> TestResult {
    let bin = workspace_bin("update-status-controller", "UPDATE_STATUS_CONTROLLER_BIN");
    for (args, says) in [
        (&["--hub-kubeconfig", "/nonexistent"][..], "--cluster-name"),
        (&["--cluster-name", "Prod_East"][..], "DNS-1123 label"),
        (&["--cluster-name=-prod"][..], "DNS-1123 label"),
    ] {
        let out = run_without_cluster(&bin, args)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    Ok(())
}
