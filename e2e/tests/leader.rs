//! Two replicas with `--leader-elect`: only the Lease holder writes; when it dies, the other
//! takes the Lease over (after it expires) and carries on; a leader stopped with SIGTERM hands
//! the Lease over in seconds; a leader whose renewal hangs stops writing before the other
//! takes over.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use update_status_e2e::controller::Controller;
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case, poll_until, wait_for};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Lease duration (15 s) + follower retry (2 s) + slack.
const TAKEOVER: Duration = Duration::from_secs(75);
const TIMEOUT: Duration = Duration::from_secs(60);

#[tokio::test]
async fn only_the_leader_writes_and_a_follower_takes_over() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("leader").await?;
    let n = ns.name().to_string();
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let a = Controller::start_replica(&env, &n, "replica-a")?;
    let b = Controller::start_replica(&env, &n, "replica-b")?;

    let first = poll_until(TIMEOUT, "a leader", || env.lease_holder(&n)).await?;
    wait_for(TIMEOUT, "the control-plane status", || async {
        env.kubectl(["get", "controlplaneupdatestatus", "cluster", "-n", &n])
            .await
            .is_ok_and(|o| o.status.success())
    })
    .await?;
    let (leader, follower) = if first == "replica-a" { (a, b) } else { (b, a) };
    let follower_name = if first == "replica-a" {
        "replica-b"
    } else {
        "replica-a"
    };
    // The writer counts a batch of writes when the whole batch is done, so an object can be
    // visible a moment before its write is counted.
    wait_for(TIMEOUT, "the leader's writes to be counted", || async {
        leader.writes().is_ok_and(|w| w > 0)
    })
    .await?;
    assert_eq!(follower.writes()?, 0, "the follower wrote");

    // The leader dies; its objects stay. Something removes the status object meanwhile.
    drop(leader);
    env.kubectl_ok(["delete", "controlplaneupdatestatus", "cluster", "-n", &n])
        .await?;
    poll_until(TAKEOVER, "the follower to take the Lease", || async {
        env.lease_holder(&n).await.filter(|h| h == follower_name)
    })
    .await?;
    wait_for(
        TIMEOUT,
        "the new leader to restore the status object",
        || async {
            env.kubectl(["get", "controlplaneupdatestatus", "cluster", "-n", &n])
                .await
                .is_ok_and(|o| o.status.success())
        },
    )
    .await?;
    wait_for(TIMEOUT, "the new leader's writes to be counted", || async {
        follower.writes().is_ok_and(|w| w > 0)
    })
    .await?;
    Ok(())
}

/// A SIGTERM hands the Lease over at once (release on shutdown), not after a lease duration.
const HANDOVER: Duration = Duration::from_secs(5);

async fn status_exists(env: &TestEnv, ns: &str) -> bool {
    env.kubectl(["get", "controlplaneupdatestatus", "cluster", "-n", ns])
        .await
        .is_ok_and(|o| o.status.success())
}

/// Starts replica `name` (through `kubeconfig` when given) and waits until it leads and wrote.
async fn first_leader(
    env: &TestEnv,
    ns: &str,
    name: &str,
    kubeconfig: Option<&Path>,
) -> Result<Controller, BoxError> {
    let args = ["--leader-elect", "--leader-identity", name];
    let leader = match kubeconfig {
        Some(k) => Controller::start_via(k, ns, &args)?,
        None => Controller::start(env, ns, &args)?,
    };
    poll_until(TIMEOUT, "the first replica to lead", || async {
        env.lease_holder(ns).await.filter(|h| h == name)
    })
    .await?;
    wait_for(TIMEOUT, "the control-plane status", || {
        status_exists(env, ns)
    })
    .await?;
    wait_for(TIMEOUT, "the leader's writes to be counted", || async {
        leader.writes().is_ok_and(|w| w > 0)
    })
    .await?;
    Ok(leader)
}

/// Starts replica `name` as a follower and waits until its caches are synced.
async fn follower(env: &TestEnv, ns: &str, name: &str) -> Result<Controller, BoxError> {
    let f = Controller::start_replica(env, ns, name)?;
    wait_for(TIMEOUT, "the follower to be ready", || async {
        http_get(f.probe_addr(), "/readyz")
            .is_some_and(|r| r.starts_with("HTTP/1.0 200") || r.starts_with("HTTP/1.1 200"))
    })
    .await?;
    Ok(f)
}

/// A plain HTTP/1.0 GET on loopback: the whole response, or `None` if it cannot connect.
fn http_get(addr: &str, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

#[tokio::test]
async fn a_terminated_leader_hands_the_lease_over_in_seconds() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("leader-term").await?;
    let n = ns.name().to_string();
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let mut leader = first_leader(&env, &n, "replica-a", None).await?;
    let follower = follower(&env, &n, "replica-b").await?;
    assert_eq!(follower.writes()?, 0, "the follower wrote");

    let sent = Instant::now();
    leader.terminate()?;
    poll_until(HANDOVER * 2, "the follower to take the Lease", || async {
        env.lease_holder(&n).await.filter(|h| h == "replica-b")
    })
    .await?;
    let handover = sent.elapsed();
    eprintln!("SIGTERM to the follower holding the Lease: {handover:?}");
    assert!(
        handover < HANDOVER,
        "the Lease was handed over {handover:?} after SIGTERM (want < {HANDOVER:?})"
    );
    let status = poll_until(TIMEOUT, "the old leader to exit", || {
        std::future::ready(leader.exit_status())
    })
    .await?;
    assert!(status.success(), "a SIGTERM is a clean exit: {status}");

    // The new leader writes: it restores an object deleted meanwhile.
    env.kubectl_ok(["delete", "controlplaneupdatestatus", "cluster", "-n", &n])
        .await?;
    wait_for(
        TIMEOUT,
        "the new leader to restore the status object",
        || status_exists(&env, &n),
    )
    .await?;
    wait_for(TIMEOUT, "the new leader's writes to be counted", || async {
        follower.writes().is_ok_and(|w| w > 0)
    })
    .await?;
    Ok(())
}

/// A TCP proxy that forwards until told to stall, then keeps every connection open and
/// forwards nothing more (new connections included): a renewal through it hangs.
struct StallingProxy {
    addr: SocketAddr,
    stall: watch::Sender<bool>,
}

impl StallingProxy {
    async fn start(upstream: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (stall, stalled) = watch::channel(false);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let stalled = stalled.clone();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    tokio::join!(pipe(cr, sw, stalled.clone()), pipe(sr, cw, stalled));
                });
            }
        });
        Ok(StallingProxy { addr, stall })
    }

    fn stall(&self) {
        self.stall.send_replace(true);
    }
}

async fn pipe(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut stalled: watch::Receiver<bool>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = tokio::select! {
            r = from.read(&mut buf) => match r {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            },
            _ = stalled.wait_for(|s| *s) => break,
        };
        if *stalled.borrow() || to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    // Stalled: both ends stay open, nothing moves (until the test ends).
    let _open = (from, to);
    std::future::pending::<()>().await
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The API server's address (`host:port`) in the cluster's kubeconfig.
fn api_server(env: &TestEnv) -> Result<SocketAddr, BoxError> {
    let text = std::fs::read_to_string(env.kubeconfig_path())?;
    let server = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: https://"))
        .ok_or("no `server: https://` line in the kubeconfig")?;
    Ok(server.trim().parse()?)
}

/// A copy of the cluster's kubeconfig whose server is `proxy` (same host, so the API server's
/// certificate still matches).
fn kubeconfig_via(env: &TestEnv, proxy: SocketAddr) -> Result<PathBuf, BoxError> {
    let text = std::fs::read_to_string(env.kubeconfig_path())?;
    let server = api_server(env)?;
    let path = std::env::temp_dir().join(format!(
        "update-status-e2e-proxied-{}.kubeconfig",
        proxy.port()
    ));
    std::fs::write(
        &path,
        text.replace(
            &format!("server: https://{server}"),
            &format!("server: https://{proxy}"),
        ),
    )?;
    Ok(path)
}

#[tokio::test]
async fn a_leader_whose_renewal_hangs_stops_writing_before_the_follower_takes_over() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("leader-stall").await?;
    let n = ns.name().to_string();
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    // The proxy forwards to the API server; the leader's kubeconfig points at it.
    let proxy = StallingProxy::start(api_server(&env)?).await?;
    let proxied = kubeconfig_via(&env, proxy.addr)?;
    let mut leader = first_leader(&env, &n, "replica-a", Some(&proxied)).await?;
    let follower = follower(&env, &n, "replica-b").await?;
    assert_eq!(follower.writes()?, 0, "the follower wrote");

    proxy.stall();
    let stalled = Instant::now();
    // Work for whoever leads next: the object must be written again.
    env.kubectl_ok(["delete", "controlplaneupdatestatus", "cluster", "-n", &n])
        .await?;
    let mut old_writes = leader.writes()?;
    let mut old_last_write: Option<Duration> = None;
    let mut old_exit: Option<(Duration, std::process::ExitStatus)> = None;
    let new_first_write = loop {
        let now = stalled.elapsed();
        if now > TAKEOVER {
            return Err(
                format!("the follower did not write within {TAKEOVER:?} of the stall").into(),
            );
        }
        if old_exit.is_none() {
            if let Some(status) = leader.exit_status() {
                old_exit = Some((now, status));
            } else if let Ok(w) = leader.writes()
                && w != old_writes
            {
                old_writes = w;
                old_last_write = Some(now);
            }
        }
        if follower.writes().is_ok_and(|w| w > 0) {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (exited, status) = old_exit.ok_or("the old leader still ran when the new one wrote")?;
    eprintln!(
        "after the stall: old leader's last write {old_last_write:?}, exit {exited:?} ({status}), new leader's first write {new_first_write:?}"
    );
    assert!(
        exited < new_first_write,
        "the old leader exited {exited:?} after the stall, the new one wrote at {new_first_write:?}"
    );
    assert!(
        !status.success(),
        "losing the Lease is an error exit: {status}"
    );
    assert!(
        old_last_write.is_none_or(|w| w < new_first_write),
        "the old leader wrote after the new one started"
    );
    assert_eq!(env.lease_holder(&n).await.as_deref(), Some("replica-b"));
    wait_for(
        TIMEOUT,
        "the new leader to restore the status object",
        || status_exists(&env, &n),
    )
    .await?;
    Ok(())
}
