//! What every path of the plugin reads and shows: the content of one cluster's update-status
//! objects ([`View`]), online (read from the API), offline (made by the controller's pure logic
//! from a snapshot) or from a fleet hub's copies. The text renderer, the JSON/YAML report and the
//! web view all take a `View`; none of them can tell where it came from.

use update_status_api::crd::{
    ControlPlaneUpdateStatusStatus, UpdateInsightStatus, WorkerPoolUpdateStatusStatus,
};

/// What the renderer reads: the content of one cluster's update-status objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct View {
    /// The ControlPlaneUpdateStatus `.status` (`None`: there is none).
    pub control_plane: Option<ControlPlaneUpdateStatusStatus>,
    /// Every WorkerPoolUpdateStatus `.status` with its pool name, in any order.
    pub worker_pools: Vec<(String, WorkerPoolUpdateStatusStatus)>,
    /// Every UpdateInsight `.status` (progress and health), in any order.
    pub insights: Vec<UpdateInsightStatus>,
    /// The node progress insights are only those the compact node tables print (a selective
    /// read): the omitted-nodes footers subtract them from the statuses' node counts.
    pub printed_nodes_only: bool,
}
