//! The controller's flags, and the checks of their combinations that clap cannot express.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::hub_sync;

/// What the controller reports on (`--mode`; its values are documented on the flag: doc
/// comments here would change `--help`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    // The cluster the controller runs in.
    #[default]
    Standalone,
    // Every HostedCluster of a HyperShift management cluster.
    Hosted,
    // On the fleet hub: the ResourceQuota of every cluster namespace with the add-on.
    Hub,
}

/// The log format (`--log-format`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    // Human-readable lines.
    #[default]
    Text,
    // One JSON object per line, with the spans of the pass it belongs to.
    Json,
}

/// Command-line flags.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "update-status-controller",
    version,
    about = "Tells how an OpenShift cluster update goes, as Kubernetes objects"
)]
pub struct Args {
    /// `standalone`: report on the cluster the controller runs in (ClusterVersion, ...).
    /// `hosted`: on a HyperShift management cluster, report on every HostedCluster (objects
    /// written into each HostedCluster's namespace; see docs/hosted.md).
    /// `hub`: on an ACM/OCM fleet hub, keep the ResourceQuota `update-status` (counts of the
    /// hub copies) in the namespace of every cluster with the add-on (docs/acm.md).
    #[arg(long, env = "UPDATE_STATUS_MODE", value_enum, default_value_t = Mode::Standalone)]
    pub mode: Mode,
    /// Hosted mode: watch HostedClusters, NodePools and our objects in this namespace only
    /// (default: all namespaces). The cluster-api objects are watched in every namespace (they
    /// live in the control-plane namespaces `<namespace>-<name>`).
    #[arg(long, env = "WATCH_NAMESPACE", value_name = "NAMESPACE")]
    pub watch_namespace: Option<String>,
    /// Hosted mode: also read each hosted cluster's ClusterOperators and Nodes through its admin
    /// kubeconfig Secret (HostedCluster status.kubeconfig, key `kubeconfig`; needs
    /// config/rbac/hosted/kubeconfig-access). A hosted cluster that cannot be read is reported
    /// as HostedClusterUnreachable, the others as usual.
    #[arg(long, env = "HOSTED_KUBECONFIG_ACCESS", default_value_t = false)]
    pub hosted_kubeconfig_access: bool,
    /// Namespace the objects are written to (standalone mode) and of the leader-election
    /// Lease (both modes).
    #[arg(long, env = "POD_NAMESPACE", default_value = "openshift-update-status")]
    pub namespace: String,
    /// Address of the /metrics endpoint.
    #[arg(long, env = "METRICS_BIND_ADDRESS", default_value = "0.0.0.0:8443")]
    pub metrics_bind_address: SocketAddr,
    /// Serve /metrics over HTTPS, only to clients whose bearer token passes a TokenReview and
    /// a SubjectAccessReview for `get` on /metrics. `--metrics-secure=false`: plain HTTP without
    /// authentication (local development, tests).
    #[arg(
        long,
        env = "METRICS_SECURE",
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true",
        require_equals = true
    )]
    pub metrics_secure: bool,
    /// Folder holding the /metrics serving certificate, `tls.crt` and `tls.key` (e.g. the
    /// service CA's Secret), re-read when they change. Unset: a self-signed certificate.
    #[arg(long, env = "METRICS_CERT_DIR", value_name = "DIR")]
    pub metrics_cert_dir: Option<PathBuf>,
    /// Address of the /healthz and /readyz endpoints (plain HTTP, no data).
    #[arg(
        long,
        env = "HEALTH_PROBE_BIND_ADDRESS",
        default_value = "0.0.0.0:8081"
    )]
    pub health_probe_bind_address: SocketAddr,
    /// Cluster ID put in the `update.openshift.io/cluster` label (optional).
    #[arg(long, env = "CLUSTER_ID")]
    pub cluster_id: Option<String>,
    /// Evaluate at this fixed instant (RFC 3339) instead of the wall clock: reproduces a
    /// captured cluster exactly (tests, demos of snapshots). Not for production.
    #[arg(long, hide = true)]
    pub assess_at: Option<jiff::Timestamp>,
    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Run only while holding the Lease `<namespace>/<leader-election-id>` (one writer among
    /// replicas). Off by default for local runs; the Deployment turns it on.
    #[arg(long, env = "LEADER_ELECT", default_value_t = false)]
    pub leader_elect: bool,
    /// Name of the leader-election Lease.
    #[arg(long, default_value = "update-status-controller")]
    pub leader_election_id: String,
    /// Identity in the Lease (default: `$POD_NAME`, else the host name and process id).
    #[arg(long, env = "POD_NAME")]
    pub leader_identity: Option<String>,
    /// Base URL of the Prometheus (or Thanos Querier) HTTP API whose firing alerts become
    /// health insights, e.g. `https://thanos-querier.openshift-monitoring.svc:9091`.
    /// Unset: no alert insights.
    #[arg(long, env = "PROMETHEUS_URL")]
    pub prometheus_url: Option<String>,
    /// File holding the bearer token sent to Prometheus (read before every poll: tokens rotate),
    /// e.g. `/var/run/secrets/kubernetes.io/serviceaccount/token`.
    #[arg(long, env = "PROMETHEUS_TOKEN_FILE")]
    pub prometheus_token_file: Option<PathBuf>,
    /// PEM file of the CA that signs Prometheus' serving certificate (default: the system's
    /// CAs), e.g. `/var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt`.
    #[arg(long, env = "PROMETHEUS_CA_FILE")]
    pub prometheus_ca_file: Option<PathBuf>,
    /// Allow sending the bearer token of `--prometheus-token-file` to an `http://` URL, in
    /// clear. Without it the controller refuses to start with such a configuration.
    #[arg(long)]
    pub prometheus_insecure_http: bool,
    /// Timeout of one request to Prometheus (`10s`, `1m`, ...).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub prometheus_timeout: Duration,
    /// Interval between polls of Prometheus (±10 % jitter; exponential back-off up to 5m
    /// while it fails).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub prometheus_interval: Duration,
    /// Kubeconfig of a fleet hub (e.g. ACM) to report to: the ControlPlaneUpdateStatus, the
    /// WorkerPoolUpdateStatus objects and the health insights are copied into namespace
    /// `<cluster-name>` there. Unset: no hub sync. Standalone mode: needs `--cluster-name`.
    /// Hosted mode: each HostedCluster is reported as a managed cluster of its own (named by
    /// its annotation `cluster.open-cluster-management.io/managedcluster-name`, else its name).
    #[arg(long, env = "HUB_KUBECONFIG", value_name = "PATH")]
    pub hub_kubeconfig: Option<PathBuf>,
    /// This cluster's name on the hub (a DNS-1123 label): the namespace of the copies, the
    /// name of the ControlPlaneUpdateStatus copy, label `open-cluster-management.io/cluster-name`.
    #[arg(long, env = "CLUSTER_NAME", value_name = "NAME", value_parser = parse_cluster_name)]
    pub cluster_name: Option<String>,
    /// Hosted mode under ACM: each hosted cluster reports to the hub with an add-on identity of
    /// its own, read from a Secret `update-status-hub-kubeconfig` in the format OCM's
    /// registration agent writes (in the namespace of --hub-addon-secret-namespace; needs
    /// config/rbac/hosted/hub-addon-secrets), instead of one shared identity. Needs
    /// --hub-kubeconfig naming the hub: only its server and CA are used, and a Secret naming
    /// another server is refused. See docs/acm.md.
    #[arg(long, env = "HUB_ADDON_SECRETS", default_value_t = false)]
    pub hub_addon_secrets: bool,
    /// With --hub-addon-secrets: the namespace of a managed cluster's add-on Secret on this
    /// management cluster, `{cluster}` standing for the managed cluster's name.
    #[arg(long, env = "HUB_ADDON_SECRET_NAMESPACE", default_value = crate::hub_sync::hosted::DEFAULT_ADDON_SECRET_NAMESPACE)]
    pub hub_addon_secret_namespace: String,
    /// Also copy progress insights (one per node, operator and the ClusterVersion) to the hub.
    #[arg(long, env = "HUB_INCLUDE_PROGRESS", default_value_t = false)]
    pub hub_include_progress: bool,
    /// The hub copy of the ControlPlaneUpdateStatus carries the annotation
    /// `update.openshift.io/last-reported` (the last successful pass), rewritten once older
    /// than this (1s to 1h): at most one hub write per interval when nothing else changes.
    #[arg(long, env = "HUB_HEARTBEAT_INTERVAL", default_value = "5m", value_parser = parse_heartbeat)]
    pub hub_heartbeat_interval: Duration,
    /// Hub mode: ControlPlaneUpdateStatus objects allowed in one cluster's hub namespace
    /// (ResourceQuota `update-status`; per cluster: the ManagedClusterAddOn's annotation
    /// `update.openshift.io/hub-quota-controlplaneupdatestatuses`).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(..=crate::reconcilers::hub_quota::CEILING.control_planes))]
    pub hub_quota_control_planes: u64,
    /// Hub mode: WorkerPoolUpdateStatus objects allowed in one cluster's hub namespace
    /// (annotation `update.openshift.io/hub-quota-workerpoolupdatestatuses`).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(..=crate::reconcilers::hub_quota::CEILING.worker_pools))]
    pub hub_quota_worker_pools: u64,
    /// Hub mode: UpdateInsights allowed in one cluster's hub namespace (annotation
    /// `update.openshift.io/hub-quota-updateinsights`; with `--hub-include-progress` a cluster
    /// needs about one per node more: docs/acm.md).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(..=crate::reconcilers::hub_quota::CEILING.insights))]
    pub hub_quota_insights: u64,
    /// A reconcile pass still running after this long makes `/healthz` fail (the kubelet then
    /// restarts the controller): a call that never returns must not stop the reports silently.
    #[arg(long, default_value = "3m", value_parser = parse_duration)]
    pub reconcile_stuck_after: Duration,
}

/// A combination of flags the controller does not run with.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FlagError {
    /// Standalone mode: add-on Secrets are hosted mode's.
    #[error(
        "--hub-addon-secrets is for --mode=hosted; a standalone cluster reports with --hub-kubeconfig (as an ACM add-on: the one OCM mounts, see docs/acm.md)"
    )]
    AddonSecretsStandalone,
    /// Hosted mode: add-on Secrets without the hub they must name.
    #[error(
        "--hub-addon-secrets needs --hub-kubeconfig naming the hub (its server and CA; its user is not used): an add-on Secret naming another server is refused, so whoever creates a klusterlet-<cluster> namespace first cannot receive that cluster's status (docs/acm.md)"
    )]
    AddonSecretsWithoutHub,
    /// Standalone mode: a hub without this cluster's name there.
    #[error(
        "--hub-kubeconfig needs --cluster-name: this cluster's name on the hub (the namespace of its copies there)"
    )]
    HubWithoutClusterName,
    /// Hosted mode: flags of standalone mode only.
    #[error("{} not supported with --mode=hosted (standalone mode only)", .0.join(", "))]
    StandaloneOnly(Vec<&'static str>),
    /// Hub mode: flags of the modes that report a cluster.
    #[error("{} not supported with --mode=hub (it reports no cluster: it runs on the hub)", .0.join(", "))]
    NotOnHub(Vec<&'static str>),
}

impl Args {
    /// Who this process is: `--leader-identity` (`POD_NAME`), else `<hostname>-<pid>` (the
    /// Lease holder's identity and the Events' reporting instance).
    pub fn identity(&self) -> String {
        self.leader_identity.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
            format!("{}-{}", host.trim(), std::process::id())
        })
    }
}

impl Args {
    /// Checks the combinations of flags of the chosen mode.
    pub fn check(&self) -> Result<(), FlagError> {
        match self.mode {
            Mode::Standalone if self.hub_addon_secrets => Err(FlagError::AddonSecretsStandalone),
            Mode::Standalone if self.hub_kubeconfig.is_some() && self.cluster_name.is_none() => {
                Err(FlagError::HubWithoutClusterName)
            }
            Mode::Standalone => Ok(()),
            Mode::Hub => {
                let refused = self.reporting_only();
                if refused.is_empty() {
                    Ok(())
                } else {
                    Err(FlagError::NotOnHub(refused))
                }
            }
            Mode::Hosted => {
                let refused = self.standalone_only();
                if !refused.is_empty() {
                    Err(FlagError::StandaloneOnly(refused))
                } else if self.hub_kubeconfig.is_none() && self.hub_addon_secrets {
                    Err(FlagError::AddonSecretsWithoutHub)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Flags of standalone mode only that are set. `--cluster-name`: in hosted mode each
    /// HostedCluster has its own name on the hub (`crate::hub_sync::hosted`).
    fn standalone_only(&self) -> Vec<&'static str> {
        [
            ("--prometheus-url", self.prometheus_url.is_some()),
            ("--cluster-name", self.cluster_name.is_some()),
            ("--cluster-id", self.cluster_id.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, set)| set.then_some(flag))
        .collect()
    }

    /// Flags of the modes that report a cluster that are set (hub mode reports none).
    fn reporting_only(&self) -> Vec<&'static str> {
        let mut set = self.standalone_only();
        set.extend(
            [
                ("--hub-kubeconfig", self.hub_kubeconfig.is_some()),
                ("--hub-addon-secrets", self.hub_addon_secrets),
                ("--hub-include-progress", self.hub_include_progress),
                ("--watch-namespace", self.watch_namespace.is_some()),
                ("--hosted-kubeconfig-access", self.hosted_kubeconfig_access),
            ]
            .into_iter()
            .filter_map(|(flag, on)| on.then_some(flag)),
        );
        set
    }

    /// Hub mode: the object counts allowed in one cluster namespace.
    pub fn hub_quota(&self) -> crate::reconcilers::hub_quota::QuotaLimits {
        crate::reconcilers::hub_quota::QuotaLimits {
            control_planes: self.hub_quota_control_planes,
            worker_pools: self.hub_quota_worker_pools,
            insights: self.hub_quota_insights,
        }
    }

    /// Whether the hub sync is on: `--hub-kubeconfig`, or (hosted mode) `--hub-addon-secrets`.
    pub fn hub_on(&self) -> bool {
        self.hub_kubeconfig.is_some() || self.hub_addon_secrets
    }

    /// Whether our progress insights are cached whole: only when the hub sync copies them.
    pub fn keep_progress(&self) -> bool {
        self.hub_on() && self.hub_include_progress
    }
}

/// `--cluster-name`: a DNS-1123 label.
fn parse_cluster_name(s: &str) -> Result<String, String> {
    hub_sync::validate_cluster_name(s)
        .map(|()| s.to_string())
        .map_err(|e| e.to_string())
}

/// `--hub-heartbeat-interval`: a duration within the heartbeat's bounds.
fn parse_heartbeat(s: &str) -> Result<Duration, String> {
    hub_sync::heartbeat::check_interval(parse_duration(s)?)
}

/// A positive duration: `30s`, `1m`, `500ms`, `1h 30m` or ISO 8601 (`PT30S`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("{s:?} is not a duration like 30s, 1m or 500ms: {e}"))?;
    Duration::try_from(d)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?}: the duration must be positive"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(flags: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(
            std::iter::once("update-status-controller").chain(flags.iter().copied()),
        )
    }

    #[test]
    fn the_mode_is_an_enum_and_standalone_by_default() {
        assert_eq!(args(&[]).expect("no flags").mode, Mode::Standalone);
        assert_eq!(
            args(&["--mode", "hosted"]).expect("hosted").mode,
            Mode::Hosted
        );
        let err = args(&["--mode", "other"]).expect_err("not a mode");
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
        assert_eq!(
            args(&["--log-format", "json"]).expect("json").log_format,
            LogFormat::Json
        );
        assert!(args(&["--log-format", "yaml"]).is_err());
    }

    #[test]
    fn each_mode_checks_its_flags() {
        let hub = args(&["--hub-kubeconfig", "/hub"]).expect("flags");
        assert_eq!(hub.check(), Err(FlagError::HubWithoutClusterName));
        let named = args(&["--hub-kubeconfig", "/hub", "--cluster-name", "a"]).expect("flags");
        assert_eq!(named.check(), Ok(()));
        let hosted = args(&[
            "--mode=hosted",
            "--prometheus-url",
            "https://p",
            "--cluster-id",
            "x",
        ])
        .expect("flags");
        assert_eq!(
            hosted.check().map_err(|e| e.to_string()),
            Err(
                "--prometheus-url, --cluster-id not supported with --mode=hosted (standalone mode only)"
                    .to_string()
            )
        );
        assert_eq!(
            args(&["--mode=hosted", "--hub-kubeconfig", "/hub"])
                .expect("flags")
                .check(),
            Ok(())
        );
        assert_eq!(
            args(&["--hub-addon-secrets"]).expect("flags").check(),
            Err(FlagError::AddonSecretsStandalone)
        );
        let both = args(&[
            "--mode=hosted",
            "--hub-kubeconfig",
            "/hub",
            "--hub-addon-secrets",
        ]);
        assert_eq!(both.expect("flags").check(), Ok(()));
        assert_eq!(
            args(&["--mode=hosted", "--hub-addon-secrets"])
                .expect("flags")
                .check(),
            Err(FlagError::AddonSecretsWithoutHub),
            "issue #48 item 14: the Secrets' hub must be named"
        );
        let hub = args(&["--mode=hub", "--hub-quota-insights=50"]).expect("flags");
        assert_eq!(hub.mode, Mode::Hub);
        assert_eq!(hub.check(), Ok(()));
        assert_eq!(hub.hub_quota().insights, 50);
        assert_eq!(hub.hub_quota().worker_pools, 100, "default");
        let reporting = args(&[
            "--mode=hub",
            "--hub-kubeconfig",
            "/hub",
            "--cluster-name",
            "c1",
        ])
        .expect("flags");
        assert_eq!(
            reporting.check().map_err(|e| e.to_string()),
            Err("--cluster-name, --hub-kubeconfig not supported with --mode=hub (it reports no cluster: it runs on the hub)".to_string())
        );
    }

    #[test]
    fn durations_are_positive() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("PT1M"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
