//! The machine-readable output (`-o json|yaml`): a stable document, described in
//! `cli/README.md`. Field contents are exactly the `.status` of our objects.

use jiff::Timestamp;
use serde::Serialize;
use update_status_api::crd::{
    ControlPlaneUpdateStatusStatus, UpdateInsightStatus, WorkerPoolUpdateStatusStatus,
};

use crate::render::{View, sorted_health, sorted_progress};

/// `apiVersion` of the reports.
pub const API_VERSION: &str = "update.openshift.io/v1alpha1";

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// What `oc adm upgrade status` prints.
    Text,
    /// JSON (pretty-printed).
    Json,
    /// YAML.
    Yaml,
    /// One self-contained HTML page (the web view at this instant; see `cli/README.md`).
    Html,
}

/// What can go wrong serialising a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// JSON serialisation failed.
    #[error("cannot serialise the report as JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// YAML serialisation failed.
    #[error("cannot serialise the report as YAML: {0}")]
    Yaml(#[from] serde_saphyr::SerializeError),
}

/// One cluster's update status (`kind: UpdateStatusReport`).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatusReport<'a> {
    /// Always [`API_VERSION`].
    pub api_version: &'static str,
    /// Always `UpdateStatusReport`.
    pub kind: &'static str,
    /// The instant the report was evaluated at.
    pub now: Timestamp,
    /// The ControlPlaneUpdateStatus `.status`, `null` when there is none.
    pub control_plane: Option<&'a ControlPlaneUpdateStatusStatus>,
    /// The worker pools: `master`, `worker`, then the others by name.
    pub worker_pools: Vec<WorkerPoolEntry<'a>>,
    /// Progress insights (ClusterVersion, ClusterOperators by name, nodes by pool and name),
    /// then health insights in the order the text output lists them.
    pub insights: Vec<&'a UpdateInsightStatus>,
}

/// A worker pool of a report.
#[derive(Serialize, Debug)]
pub struct WorkerPoolEntry<'a> {
    /// The pool's name.
    pub name: &'a str,
    /// The WorkerPoolUpdateStatus `.status`.
    pub status: &'a WorkerPoolUpdateStatusStatus,
}

impl<'a> UpdateStatusReport<'a> {
    /// The report of `view` at `now`.
    pub fn new(view: &'a View, now: Timestamp) -> Self {
        let pools: Vec<&(String, WorkerPoolUpdateStatusStatus)> =
            view.worker_pools.iter().collect();
        let mut insights = sorted_progress(view);
        insights.extend(sorted_health(view));
        UpdateStatusReport {
            api_version: API_VERSION,
            kind: "UpdateStatusReport",
            now,
            control_plane: view.control_plane.as_ref(),
            worker_pools: pools
                .into_iter()
                .map(|(name, status)| WorkerPoolEntry { name, status })
                .collect(),
            insights,
        }
    }
}

/// Serialises `value` in `format` (`Text` and `Html` are not serialisations: they yield JSON).
pub fn serialise<T: Serialize>(value: &T, format: Format) -> Result<String, ReportError> {
    match format {
        Format::Yaml => Ok(serde_saphyr::to_string(value)?),
        Format::Json | Format::Text | Format::Html => {
            let mut s = serde_json::to_string_pretty(value)?;
            s.push('\n');
            Ok(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{InsightType, ResourceRef};

    #[test]
    fn report_shape() {
        let view = View {
            control_plane: None,
            worker_pools: vec![
                ("infra".into(), WorkerPoolUpdateStatusStatus::default()),
                ("worker".into(), WorkerPoolUpdateStatusStatus::default()),
            ],
            insights: vec![UpdateInsightStatus {
                type_: InsightType::Progress,
                resource: ResourceRef {
                    kind: "Node".into(),
                    name: "n1".into(),
                    ..Default::default()
                },
                ..Default::default()
            }],
            printed_nodes_only: false,
        };
        let now: Timestamp = "2024-01-01T00:00:00Z".parse().expect("ts");
        let report = UpdateStatusReport::new(&view, now);
        let json: serde_json::Value =
            serde_json::from_str(&serialise(&report, Format::Json).expect("json")).expect("parse");
        assert_eq!(json["apiVersion"], "update.openshift.io/v1alpha1");
        assert_eq!(json["kind"], "UpdateStatusReport");
        assert_eq!(json["now"], "2024-01-01T00:00:00Z");
        assert!(json["controlPlane"].is_null());
        // The view's (list) order: oc sorts nothing.
        assert_eq!(json["workerPools"][0]["name"], "infra");
        assert_eq!(json["workerPools"][1]["name"], "worker");
        assert_eq!(json["insights"][0]["resource"]["name"], "n1");
        let yaml = serialise(&report, Format::Yaml).expect("yaml");
        assert!(yaml.contains("kind: UpdateStatusReport"), "{yaml}");
    }
}
