//! The start-up: the flags ([`Args`], the mode a [`Mode`]), then one skeleton for every mode
//! ([`run`]): check the flags, connect, check the CRDs, serve `/metrics` and the probes, start
//! the mode's watches, wait for the caches (and the Lease), start the mode's writers, and
//! supervise until a signal, the loss of the Lease or the end of a task. A mode adds only its
//! watches and writers ([`standalone::start`], [`hosted::start`], `hub::start`); the pieces both share are in
//! `process.rs`.
//!
//! This is the composition root: the only layer that knows every other one, and the one that
//! routes the watches' wake-ups to the reconcilers (`crate::cache::watch::Routes`).
//!
//! May import: every layer.

mod args;
pub mod hosted;
mod hub;
mod process;
pub mod standalone;

use std::sync::Arc;

use anyhow::Context;
use tokio::sync::watch;

pub use args::{Args, FlagError, LogFormat, Mode, parse_duration};
pub use process::init_logging;

use crate::metrics::Metrics;
use crate::runtime::clock::Clock;
use crate::runtime::health::Health;
use crate::runtime::leader::{Leadership, LeaseGate};
use crate::runtime::supervisor::Tasks;
use process::{
    LoopContext, Running, Setup, count_insights_of, preflight, prometheus_client, serve_endpoints,
    shutdown_signal, supervise, sync_then_lead,
};

/// Runs the controller until a signal or a fatal error (logging set up by the caller:
/// [`init_logging`]).
pub async fn run(args: Args) -> anyhow::Result<()> {
    args.check()?;
    // Checked before anything starts: a wrong URL is a configuration error.
    let prometheus = prometheus_client(&args)?;
    use crate::runtime::client::{REVIEWS_USER_AGENT, USER_AGENT, build, with_user_agent};
    let config = crate::runtime::client::infer_config()
        .await
        .context("connecting to the Kubernetes API (in-cluster config or KUBECONFIG)")?;
    let client = build(with_user_agent(config.clone(), USER_AGENT))
        .context("connecting to the Kubernetes API (in-cluster config or KUBECONFIG)")?;
    // The /metrics token reviews get a client of their own: the Lease renewals and the writers
    // never queue behind them (issue #29).
    let reviews = build(with_user_agent(config, REVIEWS_USER_AGENT))
        .context("a client for the /metrics token reviews")?;
    preflight(&client, &args).await?;

    let metrics = Arc::new(match args.mode {
        Mode::Standalone | Mode::Hub => Metrics::new()?,
        Mode::Hosted => Metrics::new_hosted()?,
    });
    let health = Health::new(args.reconcile_stuck_after);
    // One signal listener for the whole run: a SIGTERM between two phases is not lost.
    let mut shutdown = std::pin::pin!(shutdown_signal());
    // The tasks that run whether or not we lead: the HTTP servers and the watches.
    let mut infra = Tasks::new();
    serve_endpoints(&args, reviews, &metrics, &health, &mut infra).await?;
    let setup = Setup {
        args: &args,
        client: &client,
        metrics: &metrics,
        health: &health,
    };
    let started = match args.mode {
        Mode::Standalone => standalone::start(setup, &mut infra, prometheus).await?,
        Mode::Hosted => hosted::start(setup, &mut infra).await?,
        Mode::Hub => hub::start(&client, &health, &mut infra),
    };
    count_insights_of(&metrics, &started.insights);

    let Some(leadership) =
        sync_then_lead(&setup, &mut infra, started.synced, shutdown.as_mut()).await?
    else {
        return Ok(());
    };

    let (stop_writers, stopping) = watch::channel(false);
    // The writers write through a client that refuses every mutating call once the Lease is
    // lost (reads go on): the moment it is lost, whatever they are doing (issue #29); the hub
    // sync's clients too (issue #38 item 10).
    let gate = leadership
        .as_ref()
        .map_or_else(LeaseGate::open, Leadership::gate);
    let ctx = LoopContext {
        clock: args.assess_at.map_or(Clock::Wall, Clock::Fixed),
        metrics,
        health: health.clone(),
        stopping,
        gate: gate.clone(),
    };
    let writers = (started.writers)(&ctx, &args, &gate.guard(&client));
    supervise(
        Running {
            infra,
            writers,
            stop_writers,
            leadership,
            health,
        },
        shutdown,
        &args,
    )
    .await
}
