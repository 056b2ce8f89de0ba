//! `kubectl-update_status` (`kubectl update-status`, `oc update-status`): prints how a cluster
//! update goes, exactly like `oc adm upgrade status`, from the objects update-status writes —
//! online from the API, or offline from a captured snapshot analysed with the controller's
//! pure logic. See `cli/README.md`.

use update_status_assess::format as duration;
mod escape;
mod exit;
mod fleet;
mod gosort;
mod hosted;
mod invisible;
mod offline;
mod online;
mod render;
mod report;
mod selective;
mod tabwriter;
mod web;

use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use jiff::Timestamp;

use crate::render::Details;
use crate::report::{Format, UpdateStatusReport};

/// The namespace of the update-status objects of a standalone cluster.
const DEFAULT_NAMESPACE: &str = "openshift-update-status";

/// Show how an OpenShift cluster update goes, like `oc adm upgrade status`.
#[derive(Parser, Debug)]
#[command(name = "kubectl-update_status", version, about, long_about = None)]
struct Cli {
    /// Detailed sections to show: none, all, nodes, operators or health.
    #[arg(long, value_name = "SECTION", default_value = "none")]
    details: String,

    /// With --details=health or all: each health insight also lists what it points at (its
    /// `related` resources: the pods and PodDisruptionBudgets blocking a drain, the node's
    /// pool and MachineConfig, the objects an alert names). Not in oc's output.
    #[arg(long)]
    related: bool,

    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Text)]
    output: Format,

    /// Namespace of the update-status objects.
    #[arg(short = 'n', long, default_value = DEFAULT_NAMESPACE)]
    namespace: String,

    /// Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use.
    #[arg(long, value_name = "NAME")]
    context: Option<String>,

    /// Offline mode: analyse a captured cluster (clusterversion.yaml, clusteroperators.yaml,
    /// machineconfigpools.yaml, machineconfigs.yaml, nodes.yaml, optional `now`) instead of
    /// reading the API.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["kubeconfig", "context", "fleet"])]
    from_dir: Option<PathBuf>,

    /// The instant to evaluate at (RFC 3339). Offline default: the snapshot's `now` file, else
    /// the latest condition transition plus 368975ns (oc's rule); online default: the clock.
    #[arg(long, value_name = "RFC3339")]
    now: Option<Timestamp>,

    /// On a hub: one row per cluster namespace holding a ControlPlaneUpdateStatus, worst first;
    /// on an ACM hub also every cluster with the update-status add-on enabled (a row saying
    /// when it has not reported) and the add-on's state.
    #[arg(long)]
    fleet: bool,

    /// With --fleet on an ACM hub: only the clusters whose ManagedCluster matches this label
    /// selector (e.g. environment=prod).
    #[arg(short = 'l', long, value_name = "SELECTOR", requires = "fleet")]
    selector: Option<String>,

    /// With --fleet on an ACM hub: only the clusters of this ManagedClusterSet.
    #[arg(long, value_name = "NAME", requires = "fleet")]
    clusterset: Option<String>,

    /// With --fleet: a cluster whose agent last reported longer ago than this is shown as
    /// Stale (the agent refreshes its report at least every 5 minutes by default).
    #[arg(long, value_name = "DURATION", default_value = "15m", value_parser = parse_stale_after, requires = "fleet")]
    stale_after: jiff::SignedDuration,

    /// With --fleet: read the lists in pages of this many objects (0: all at once), as
    /// kubectl's --chunk-size.
    #[arg(long, value_name = "N", default_value_t = 500, requires = "fleet")]
    chunk_size: u32,

    /// Hosted control planes: show the HostedCluster NAME of the management cluster (its
    /// namespace: -n). Offline (--from-dir): a folder of HostedCluster, NodePool, Machine,
    /// MachineSet and MachineDeployment objects, or a management-cluster must-gather.
    #[arg(long, value_name = "NAME", conflicts_with = "fleet")]
    hosted_cluster: Option<String>,

    /// Read every UpdateInsight even where the view could be read by label (the identity
    /// tests and the bench compare both reads).
    #[arg(long, hide = true)]
    full_read: bool,

    /// Serve a live picture of the update (a web page fed by watches, changes pushed as they
    /// happen) on --address:--port until Ctrl-C; with --from-dir, the snapshot's picture. Open
    /// the URL it prints: it carries this session's token.
    #[arg(long, conflicts_with = "output")]
    web: bool,

    /// With --web: the port to listen on (0: a free port, printed).
    #[arg(long, value_name = "PORT", default_value_t = 0, requires = "web")]
    port: u16,

    /// With --web: the address to listen on. Anything but a loopback address serves the view
    /// beyond this machine over plain HTTP (the URL's token can be seen on the network).
    #[arg(long, value_name = "IP", default_value = "127.0.0.1", requires = "web")]
    address: IpAddr,
}

/// mimalloc (v2, no transparent huge pages: as little RSS as glibc): a large capture allocates
/// and frees millions of small values, and glibc's allocator spent half of the time after
/// parsing on consolidating freed chunks (docs/benchmarks.md). Feature `mimalloc` (default).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", exit::message(&e));
            exit::code(&e)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let details: Details = cli.details.parse()?;
    if cli.web {
        return serve_web(&cli);
    }
    if cli.related && cli.output == Format::Text && !cli.fleet && !details.health() {
        return Err(render::RelatedNeedsHealth.into());
    }
    let text = if cli.fleet {
        let now = cli.now.unwrap_or_else(Timestamp::now);
        let conn = connection(&cli);
        let filter = fleet_filter(&cli);
        let fleet = runtime()?.block_on(async {
            let client = online::client(&conn).await?;
            fleet::fetch(&client, &filter, now).await
        })?;
        for w in fleet.all_warnings() {
            eprintln!("warning: {}", escape::text(&w, escape::Newlines::Escape));
        }
        match cli.output {
            Format::Text => fleet::render(&escape::fleet(&fleet.rows), now),
            Format::Html => web::html_fleet(fleet, now, cli.stale_after)?,
            format => report::serialise(
                &fleet::FleetReport::new(fleet, now, cli.stale_after),
                format,
            )?,
        }
    } else if let Some(name) = &cli.hosted_cluster {
        let (view, now) = match &cli.from_dir {
            Some(dir) => {
                let namespace =
                    (cli.namespace != DEFAULT_NAMESPACE).then_some(cli.namespace.as_str());
                hosted::load(dir, name, namespace, cli.now)?
            }
            None => {
                let now = cli.now.unwrap_or_else(Timestamp::now);
                let conn = connection(&cli);
                let view = runtime()?.block_on(async {
                    let client = online::client(&conn).await?;
                    hosted::fetch(&client, &cli.namespace, name).await
                })?;
                (view, now)
            }
        };
        match cli.output {
            Format::Text => {
                render::hosted::render_with(name, &escape::view(view)?, now, details, cli.related)
            }
            Format::Html => web::html_cluster(&view, now, format!("hosted cluster {name}"))?,
            format => report::serialise(&UpdateStatusReport::new(&view, now), format)?,
        }
    } else {
        let (view, now) = match &cli.from_dir {
            Some(dir) => offline::load(dir, cli.now)?,
            None => {
                let now = cli.now.unwrap_or_else(Timestamp::now);
                let conn = connection(&cli);
                let namespace = cli.namespace.clone();
                // Only the compact text views can be read by label; the others print every
                // node (`--details=nodes|all`) or every insight (`-o json|yaml`).
                // (`-o html` draws every node.)
                let selective = cli.output == Format::Text && !details.nodes() && !cli.full_read;
                let view = runtime()?.block_on(async {
                    let client = online::client(&conn).await?;
                    selective::fetch_view(&client, &namespace, selective).await
                })?;
                (view, now)
            }
        };
        match cli.output {
            Format::Text => {
                render::check(&view)?;
                render::render_with(&escape::view(view)?, now, details, cli.related)
            }
            Format::Html => web::html_cluster(&view, now, title_of(&cli))?,
            format => report::serialise(&UpdateStatusReport::new(&view, now), format)?,
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot write to standard output")?;
    Ok(())
}

/// The title of a cluster's page: the snapshot folder's name, or the namespace.
fn title_of(cli: &Cli) -> String {
    match &cli.from_dir {
        Some(dir) => {
            let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
            format!(
                "snapshot {}",
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| dir.display().to_string())
            )
        }
        None => format!("namespace {}", cli.namespace),
    }
}

/// `--web`: serves the view until Ctrl-C.
fn serve_web(cli: &Cli) -> anyhow::Result<()> {
    let listen = web::Listen {
        address: cli.address,
        port: cli.port,
    };
    let rt = runtime()?;
    if let Some(dir) = &cli.from_dir {
        let (view, now, title) = match &cli.hosted_cluster {
            Some(name) => {
                let namespace =
                    (cli.namespace != DEFAULT_NAMESPACE).then_some(cli.namespace.as_str());
                let (view, now) = hosted::load(dir, name, namespace, cli.now)?;
                (view, now, format!("hosted cluster {name}"))
            }
            None => {
                let (view, now) = offline::load(dir, cli.now)?;
                (view, now, title_of(cli))
            }
        };
        let target = web::Target::Snapshot {
            view: Box::new(view),
            now,
            title,
        };
        return rt.block_on(web::serve(listen, target, None));
    }
    let target = if cli.fleet {
        web::Target::Fleet {
            filter: fleet_filter(cli),
            now: cli.now,
        }
    } else {
        web::Target::Cluster {
            namespace: cli.namespace.clone(),
            hosted: cli.hosted_cluster.clone(),
            now: cli.now,
        }
    };
    let conn = connection(cli);
    rt.block_on(async {
        let client = online::client(&conn).await?;
        web::serve(listen, target, Some(client)).await
    })
}

fn fleet_filter(cli: &Cli) -> fleet::FleetFilter {
    fleet::FleetFilter {
        selector: cli.selector.clone(),
        clusterset: cli.clusterset.clone(),
        stale_after: cli.stale_after,
        chunk_size: cli.chunk_size,
    }
}

/// `--stale-after`: a positive duration (`15m`, `1h`, `90s`).
fn parse_stale_after(s: &str) -> Result<jiff::SignedDuration, String> {
    let d: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("{s:?} is not a duration like 15m, 1h or 90s: {e}"))?;
    if d.is_positive() {
        Ok(d)
    } else {
        Err(format!("{s:?}: the duration must be positive"))
    }
}

fn connection(cli: &Cli) -> online::Connection {
    online::Connection {
        kubeconfig: cli.kubeconfig.clone(),
        context: cli.context.clone(),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
