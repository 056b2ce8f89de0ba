//! Showing a [`view::View`]: the text exactly as `oc adm upgrade status` prints it and the
//! machine-readable report, with what the cluster wrote made safe for a terminal.
//!
//! - [`view`]: what every path reads and shows;
//! - [`render`]: the text (oc's layout, and the hosted layout);
//! - [`gosort`], [`tabwriter`]: Go's `sort.Slice` and `text/tabwriter`, ported so that ties and
//!   columns match oc;
//! - [`report`]: `-o json|yaml`;
//! - [`escape`], [`invisible`]: escaping what the cluster wrote before a terminal sees it.

pub mod escape;
pub mod gosort;
pub mod invisible;
pub mod render;
pub mod report;
pub mod tabwriter;
pub mod view;
