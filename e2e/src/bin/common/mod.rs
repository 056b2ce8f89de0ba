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

/// Runs a simulator binary's `run` until it ends or Ctrl-C: exits 1 with the error, 130 when
/// interrupted.
#[allow(dead_code)] // not every binary that shares this module uses it
pub async fn run_or_interrupt(
    name: &str,
    run: impl std::future::Future<Output = anyhow::Result<()>>,
) {
    tokio::select! {
        result = run => {
            if let Err(e) = result {
                eprintln!("{name}: error: {e:#}");
                std::process::exit(1);
            }
        }
        _ = tokio::signal::ctrl_c() => {
            eprintln!("{name}: interrupted");
            std::process::exit(130);
        }
    }
}

/// Waits `start_delay`, then ticks every `interval` (1 s if it is not a positive duration);
/// a late tick delays the next ones rather than bursting.
#[allow(dead_code)] // not every binary that shares this module uses it
pub async fn step_ticker(
    interval: jiff::SignedDuration,
    start_delay: jiff::SignedDuration,
) -> tokio::time::Interval {
    use std::time::Duration;
    let interval = Duration::try_from(interval)
        .ok()
        .filter(|d| !d.is_zero())
        .unwrap_or(Duration::from_secs(1));
    tokio::time::sleep(Duration::try_from(start_delay).unwrap_or_default()).await;
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker
}

/// One line per simulated step: number, instant, stage, summary and (when applied) the writes.
#[allow(dead_code)] // not every binary that shares this module uses it
pub fn print_step(
    step: u64,
    at: jiff::Timestamp,
    stage: &dyn std::fmt::Display,
    summary: &str,
    writes: Option<usize>,
) {
    let writes = writes.map(|w| format!(" ({w} writes)")).unwrap_or_default();
    println!(
        "step {step:>4}  {}  {:<13} {summary}{writes}",
        at.strftime("%H:%M:%SZ"),
        stage.to_string(),
    );
}
