//! The live `kubectl update-status` against the benchmark's control plane: the bytes it reads
//! from the API server (through a counting TCP proxy: what the server sends, TLS included), the
//! median wall time of 5 runs and the peak RSS (`VmHWM`) over them (those runs go straight to
//! the API server).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use kube::config::Kubeconfig;
use tokio::net::{TcpListener, TcpStream};

/// Runs timed per view.
const RUNS: usize = 5;

/// One view of the live CLI.
#[derive(Debug, Default, Clone)]
pub struct LiveRun {
    /// Bytes the API server sent (one run through the proxy).
    pub bytes: u64,
    /// Median wall time of [`RUNS`] runs.
    pub median_s: f64,
    /// Highest `VmHWM` of those runs.
    pub hwm_kib: u64,
    /// Lines printed.
    pub lines: usize,
    /// Every run succeeded.
    pub ok: bool,
}

/// Forwards the connections of `listener` to `upstream`, counting what `upstream` sends back.
fn counting_proxy(
    listener: TcpListener,
    upstream: String,
) -> (Arc<AtomicU64>, tokio::task::JoinHandle<()>) {
    let counter = Arc::new(AtomicU64::new(0));
    let total = counter.clone();
    let task = tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let (upstream, total) = (upstream.clone(), total.clone());
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(&upstream).await
                    && let Ok((_, down)) =
                        tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await
                {
                    total.fetch_add(down, Ordering::SeqCst);
                }
            });
        }
    });
    (counter, task)
}

/// `kubeconfig` with its clusters pointing at `proxy`, and the `host:port` they pointed at.
fn proxied_kubeconfig(kubeconfig: &Path, proxy: &str) -> anyhow::Result<(Kubeconfig, String)> {
    let mut kc = Kubeconfig::read_from(kubeconfig)?;
    let mut upstream = None;
    for named in &mut kc.clusters {
        let Some(server) = named.cluster.as_mut().and_then(|c| c.server.as_mut()) else {
            continue;
        };
        let host = server
            .strip_prefix("https://")
            .context("the kubeconfig's server is not https://")?
            .trim_end_matches('/')
            .to_string();
        *server = format!("https://{proxy}");
        upstream = Some(host);
    }
    Ok((kc, upstream.context("no server in the kubeconfig")?))
}

/// Runs the CLI once; returns (seconds, peak RSS KiB, stdout lines, success).
fn run_once(
    cli: &Path,
    kubeconfig: &Path,
    args: &[&str],
) -> anyhow::Result<(f64, u64, usize, bool)> {
    let started = Instant::now();
    let child = Command::new(cli)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}", cli.display()))?;
    let pid = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output());
    let mut hwm = 0;
    while !waiter.is_finished() {
        hwm = hwm.max(super::process::memory_kib(pid).0);
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = waiter
        .join()
        .map_err(|_| anyhow::anyhow!("the CLI waiter panicked"))??;
    let secs = started.elapsed().as_secs_f64();
    let lines = out.stdout.iter().filter(|&&b| b == b'\n').count();
    Ok((secs, hwm, lines, out.status.success()))
}

/// Measures the live CLI with `args` (e.g. `["--details", "all"]`) on the cluster of `kubeconfig`.
pub async fn measure(
    cli: &Path,
    kubeconfig: &Path,
    work: &Path,
    args: &[&str],
) -> anyhow::Result<LiveRun> {
    let proxied = work.join("kubeconfig-counting-proxy.json");
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let (kc, upstream) = proxied_kubeconfig(kubeconfig, &listener.local_addr()?.to_string())?;
    std::fs::write(&proxied, serde_json::to_vec(&kc)?)?;
    let (counter, proxy) = counting_proxy(listener, upstream);
    let (cli_path, args_owned): (std::path::PathBuf, Vec<String>) = (
        cli.to_path_buf(),
        args.iter().map(|a| a.to_string()).collect(),
    );

    let (c, p, a) = (cli_path.clone(), proxied.clone(), args_owned.clone());
    let (_, _, _, proxied_ok) = tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        run_once(&c, &p, &a)
    })
    .await??;
    // The proxy counts a connection when it closes: give it a moment after the CLI exits.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let bytes = counter.load(Ordering::SeqCst);
    proxy.abort();
    let _ = std::fs::remove_file(&proxied);

    let kc = kubeconfig.to_path_buf();
    let runs = tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args_owned.iter().map(String::as_str).collect();
        (0..RUNS)
            .map(|_| run_once(&cli_path, &kc, &a))
            .collect::<anyhow::Result<Vec<_>>>()
    })
    .await??;
    let mut times: Vec<f64> = runs.iter().map(|r| r.0).collect();
    times.sort_by(f64::total_cmp);
    Ok(LiveRun {
        bytes,
        median_s: times.get(RUNS / 2).copied().unwrap_or_default(),
        hwm_kib: runs.iter().map(|r| r.1).max().unwrap_or_default(),
        lines: runs.first().map(|r| r.2).unwrap_or_default(),
        ok: proxied_ok && runs.iter().all(|r| r.3),
    })
}
