//! The release controller as the bench runs it: started with plain-HTTP `/metrics` in the
//! bench's namespace, its write counters and reconcile times scraped, waited for until quiet.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The namespace the controller writes to.
pub const NAMESPACE: &str = "openshift-update-status";

/// The controller process.
pub struct Controller {
    child: Child,
    metrics: String,
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Controller {
    /// Starts `bin` on the cluster of `kubeconfig`, logging to `log`, with `extra` flags.
    pub fn start(
        bin: &Path,
        kubeconfig: &Path,
        log: &Path,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let metrics = format!("127.0.0.1:{port}");
        let out = std::fs::File::create(log)?;
        let err = out.try_clone()?;
        // Plain-HTTP /metrics (scraped below); the probes on a port of their own.
        let child = Command::new(bin)
            .args(["--namespace", NAMESPACE, "--metrics-bind-address", &metrics])
            .args([
                "--metrics-secure=false",
                "--health-probe-bind-address",
                "127.0.0.1:0",
            ])
            .args(extra)
            .env("KUBECONFIG", kubeconfig)
            .env(
                "RUST_LOG",
                std::env::var("BENCH_CONTROLLER_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        Ok(Controller { child, metrics })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The text of its `/metrics`; `None` when it does not answer.
    pub async fn scrape(&self) -> Option<String> {
        let addr = self.metrics.clone();
        tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(&addr).ok()?;
            s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
            s.write_all(format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
                .ok()?;
            let mut body = String::new();
            s.read_to_string(&mut body).ok()?;
            Some(body)
        })
        .await
        .ok()
        .flatten()
    }

    /// `update_status_api_writes_total` by `kind/verb`.
    pub async fn writes(&self) -> Option<BTreeMap<String, u64>> {
        let text = self.scrape().await?;
        let mut out = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("update_status_api_writes_total{") else {
                continue;
            };
            let Some((labels, value)) = rest.split_once("} ") else {
                continue;
            };
            let get = |key: &str| {
                labels
                    .split(',')
                    .find_map(|kv| kv.strip_prefix(&format!("{key}=\"")))
                    .map(|v| v.trim_end_matches('"').to_string())
                    .unwrap_or_default()
            };
            let n = value.trim().parse::<f64>().unwrap_or(0.0) as u64;
            *out.entry(format!("{} {}", get("kind"), get("verb")))
                .or_default() += n;
        }
        Some(out)
    }

    /// (seconds, passes) of every reconciler's duration histogram, by reconciler.
    pub async fn pass_times(&self) -> Option<std::collections::BTreeMap<String, (f64, f64)>> {
        let text = self.scrape().await?;
        let mut out = std::collections::BTreeMap::<String, (f64, f64)>::new();
        for (metric, sum) in [
            ("update_status_reconcile_duration_seconds_sum{", true),
            ("update_status_reconcile_duration_seconds_count{", false),
        ] {
            for l in text.lines().filter(|l| l.starts_with(metric)) {
                let Some(name) = l
                    .split("reconciler=\"")
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                else {
                    continue;
                };
                let v = l
                    .rsplit(' ')
                    .next()
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(0.0);
                let e = out.entry(name.to_string()).or_default();
                if sum {
                    e.0 += v;
                } else {
                    e.1 += v;
                }
            }
        }
        Some(out)
    }

    /// (sum, count) of the worker-pools reconcile duration histogram.
    pub async fn pass_time(&self) -> Option<(f64, f64)> {
        self.pass_times().await?.get("worker-pools").copied()
    }

    /// Every write `update_status_api_writes_total` counted.
    pub async fn total_writes(&self) -> Option<u64> {
        self.writes().await.map(|w| w.values().sum())
    }

    /// Waits until the write counter has not moved for `quiet`; returns (writes, instant of
    /// the last change).
    pub async fn settle(
        &self,
        quiet: Duration,
        timeout: Duration,
    ) -> anyhow::Result<(u64, Instant)> {
        let deadline = Instant::now() + timeout;
        let mut last = self.total_writes().await.unwrap_or(0);
        let mut changed = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = self.total_writes().await.unwrap_or(last);
            if now != last {
                last = now;
                changed = Instant::now();
            } else if changed.elapsed() >= quiet {
                return Ok((last, changed));
            }
            if Instant::now() > deadline {
                bail!("the controller kept writing for {timeout:?}");
            }
        }
    }
}
