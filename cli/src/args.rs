//! The plugin's command line (`kubectl update-status --help`).

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Parser;
use jiff::Timestamp;

use crate::show::report::Format;

/// The namespace of the update-status objects of a standalone cluster.
pub const DEFAULT_NAMESPACE: &str = "openshift-update-status";

/// Show how an OpenShift cluster update goes, like `oc adm upgrade status`.
#[derive(Parser, Debug)]
#[command(name = "kubectl-update_status", version, about, long_about = None)]
pub struct Cli {
    /// Detailed sections to show: none, all, nodes, operators or health.
    #[arg(long, value_name = "SECTION", default_value = "none")]
    pub details: String,

    /// With --details=health or all: each health insight also lists what it points at (its
    /// `related` resources: the pods and PodDisruptionBudgets blocking a drain, the node's
    /// pool and MachineConfig, the objects an alert names). Not in oc's output.
    #[arg(long)]
    pub related: bool,

    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Text)]
    pub output: Format,

    /// Namespace of the update-status objects.
    #[arg(short = 'n', long, default_value = DEFAULT_NAMESPACE)]
    pub namespace: String,

    /// Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// Offline mode: analyse a captured cluster (clusterversion.yaml, clusteroperators.yaml,
    /// machineconfigpools.yaml, machineconfigs.yaml, nodes.yaml, optional `now`) instead of
    /// reading the API.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["kubeconfig", "context", "fleet"])]
    pub from_dir: Option<PathBuf>,

    /// The instant to evaluate at (RFC 3339). Offline default: the snapshot's `now` file, else
    /// the latest condition transition plus 368975ns (oc's rule); online default: the clock.
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<Timestamp>,

    /// On a hub: one row per cluster namespace holding a ControlPlaneUpdateStatus, worst first;
    /// on an ACM hub also every cluster with the update-status add-on enabled (a row saying
    /// when it has not reported) and the add-on's state.
    #[arg(long)]
    pub fleet: bool,

    /// With --fleet on an ACM hub: only the clusters whose ManagedCluster matches this label
    /// selector (e.g. environment=prod).
    #[arg(short = 'l', long, value_name = "SELECTOR", requires = "fleet")]
    pub selector: Option<String>,

    /// With --fleet on an ACM hub: only the clusters of this ManagedClusterSet.
    #[arg(long, value_name = "NAME", requires = "fleet")]
    pub clusterset: Option<String>,

    /// With --fleet: a cluster whose agent last reported longer ago than this is shown as
    /// Stale (the agent refreshes its report at least every 5 minutes by default).
    #[arg(long, value_name = "DURATION", default_value = "15m", value_parser = parse_stale_after, requires = "fleet")]
    pub stale_after: jiff::SignedDuration,

    /// With --fleet: read the lists in pages of this many objects (0: all at once), as
    /// kubectl's --chunk-size.
    #[arg(long, value_name = "N", default_value_t = 500, requires = "fleet")]
    pub chunk_size: u32,

    /// Hosted control planes: show the HostedCluster NAME of the management cluster (its
    /// namespace: -n). Offline (--from-dir): a folder of HostedCluster, NodePool, Machine,
    /// MachineSet and MachineDeployment objects, or a management-cluster must-gather.
    #[arg(long, value_name = "NAME", conflicts_with = "fleet")]
    pub hosted_cluster: Option<String>,

    /// Read every UpdateInsight even where the view could be read by label (the identity
    /// tests and the bench compare both reads).
    #[arg(long, hide = true)]
    pub full_read: bool,

    /// Serve a live picture of the update (a web page fed by watches, changes pushed as they
    /// happen) on --address:--port until Ctrl-C; with --from-dir, the snapshot's picture. Open
    /// the URL it prints: it carries this session's token.
    #[arg(long, conflicts_with = "output")]
    pub web: bool,

    /// With --web: the port to listen on (0: a free port, printed).
    #[arg(long, value_name = "PORT", default_value_t = 0, requires = "web")]
    pub port: u16,

    /// With --web: the address to listen on. Anything but a loopback address serves the view
    /// beyond this machine over plain HTTP (the URL's token can be seen on the network).
    #[arg(long, value_name = "IP", default_value = "127.0.0.1", requires = "web")]
    pub address: IpAddr,
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
