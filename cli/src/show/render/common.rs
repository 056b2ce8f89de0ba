//! What the sections of the text share: `--details` (which sections are detailed, E.1) and
//! its errors, and two helpers of the statuses' conditions and times.

use std::str::FromStr;

use jiff::Timestamp;
use update_status_api::crd::Condition;

/// `--details`: which detailed sections to print (E.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Details {
    /// The default, compact output.
    #[default]
    None,
    /// Every detailed section.
    All,
    /// Every node (no omission).
    Nodes,
    /// The "Updating Cluster Operators" table.
    Operators,
    /// The detailed Update Health view.
    Health,
}

impl Details {
    /// The "Updating Cluster Operators" table (`operators`, `all`).
    pub(super) fn operators(self) -> bool {
        matches!(self, Details::All | Details::Operators)
    }
    pub fn nodes(self) -> bool {
        matches!(self, Details::All | Details::Nodes)
    }
    /// The detailed Update Health view (`health`, `all`).
    pub fn health(self) -> bool {
        matches!(self, Details::All | Details::Health)
    }
}

/// `--related` without the detailed Update Health view it adds to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--related adds to the detailed health view: use it with --details=health or --details=all"
)]
pub struct RelatedNeedsHealth;

/// An invalid `--details` value; the text is oc's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value for --details: {0} (must be one of none, all, nodes, health, operators)")]
pub struct InvalidDetails(pub String);

impl FromStr for Details {
    type Err = InvalidDetails;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Details::None),
            "all" => Ok(Details::All),
            "nodes" => Ok(Details::Nodes),
            "operators" => Ok(Details::Operators),
            "health" => Ok(Details::Health),
            other => Err(InvalidDetails(other.to_owned())),
        }
    }
}

pub(super) fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// `a − b` in nanoseconds.
pub(super) fn elapsed(a: Timestamp, b: Timestamp) -> i128 {
    a.as_nanosecond() - b.as_nanosecond()
}
