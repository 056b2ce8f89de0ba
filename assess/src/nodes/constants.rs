//! The node and pool rules' words and thresholds: insight sources, documentation links, the
//! machine-config daemon's states, C.4's reasons and grace periods.

use jiff::SignedDuration;

/// `source` of D.6 insights.
pub const SOURCE_NODE_UNAVAILABLE: &str = "NodeUnavailable";
/// `source` of D.7 insights.
pub const SOURCE_NODE_DEGRADED: &str = "NodeDegraded";
/// `source` of D.8 insights.
pub const SOURCE_POOL_PAUSED: &str = "PoolPaused";

/// Reference of D.6 and D.7.
pub const MCO_REFERENCE: &str = "https://docs.openshift.com/container-platform/latest/post_installation_configuration/machine-configuration-tasks.html#understanding-the-machine-config-operator";
/// Reference of D.8.
pub const PAUSED_POOL_REFERENCE: &str = "https://docs.openshift.com/container-platform/latest/support/troubleshooting/troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues";
/// Description of D.8.
pub const PAUSED_POOL_DESCRIPTION: &str = "Pool is paused, which stops all changes to the nodes in the pool, including updates. The nodes will not be updated until the pool is unpaused by the administrator.";

/// API group of MachineConfigPools.
pub(super) const MCO_GROUP: &str = "machineconfiguration.openshift.io";

/// A `Not ready` node is not "seriously" unavailable before this long (C.4).
pub const NOT_READY_GRACE: SignedDuration = SignedDuration::from_secs(5 * 60);
/// A node with disk pressure or unavailable network is not "seriously" unavailable before this long (C.4).
pub const PRESSURE_GRACE: SignedDuration = SignedDuration::from_secs(60);

// Machine-config daemon states (`Working` and any other state read as updating, C.7).
pub(super) const STATE_DONE: &str = "Done";
pub(super) const STATE_REBOOTING: &str = "Rebooting";
pub(super) const STATE_DEGRADED: &str = "Degraded";
pub(super) const STATE_UNRECONCILABLE: &str = "Unreconcilable";

// C.4 reason texts.
pub(super) const REASON_NOT_READY: &str = "Not ready";
pub(super) const REASON_DISK_PRESSURE: &str = "Disk pressure";
pub(super) const REASON_NETWORK_UNAVAILABLE: &str = "Network unavailable";
pub(super) const REASON_UNSCHEDULABLE: &str = "Node is marked unschedulable";
pub(super) const REASON_MCD_PROCESSING: &str = "Machine Config Daemon is processing the node";
