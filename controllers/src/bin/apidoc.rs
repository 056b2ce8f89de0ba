//! Writes `docs/api.md`: one real object of each kind update-status writes, and one
//! UpdateInsight of each type and resource kind (and, for health insights, each rule), exactly
//! as the controller writes them for a captured cluster (`testdata/oc-status/<FIXTURE>`,
//! assessed at its `now`): the names, namespace, labels (the writer's reconciler and managed-by
//! labels included), owner reference and status of the objects the core wants
//! ([`update_status_assess::compose::desired_cluster`], the composition the reconcilers run).
//!
//! `apidoc` writes the file; `apidoc --check` exits non-zero when the checked-in file differs
//! (CI drift check: `make manifests-check`), so the examples cannot go stale when the types or
//! the assessment change.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use update_status_api::crd::labels;
use update_status_api::crd::{
    ControlPlaneUpdateStatus, InsightType, UpdateInsight, UpdateInsightStatus,
    WorkerPoolUpdateStatus,
};
use update_status_api::history::{UPDATE_HISTORY_NAME, UpdateHistory, UpdateHistoryStatus};
use update_status_assess::compose::{self, Desired};
use update_status_assess::estimates::{estimate, observe};
use update_status_assess::naming;
use update_status_controllers::reconcilers::{alerts, control_plane, estimates, worker_pools};
use update_status_controllers::runtime::writer::written_labels;
use update_status_snapshot::Snapshot;

/// The captured cluster the examples come from: a control plane updated, worker nodes whose
/// drain a PodDisruptionBudget blocks.
const FIXTURE: &str = "4.16.0-ec2-control-plane-updated-pdb-prohibits-draining";
/// Where the controller writes (its default `--namespace`).
const NAMESPACE: &str = "openshift-update-status";

fn main() -> anyhow::Result<()> {
    let mut check = false;
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut out = root.join("docs/api.md");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--check" => check = true,
            "--out" => out = args.next().context("--out needs a value")?.into(),
            other => bail!("unknown argument {other:?}; usage: apidoc [--check] [--out FILE]"),
        }
    }
    let text = render(&root.join("testdata/oc-status").join(FIXTURE))?;
    if check {
        if std::fs::read_to_string(&out).unwrap_or_default() != text {
            bail!(
                "{} differs from what the code generates (run `make manifests`)",
                out.display()
            );
        }
    } else {
        std::fs::write(&out, text).with_context(|| format!("writing {}", out.display()))?;
        println!("wrote {}", out.display());
    }
    Ok(())
}

/// The reconciler whose writer writes an insight about `kind` (its `update.openshift.io/reconciler`
/// label): the control plane's (ClusterVersion, ClusterOperators, the machine-config operator's
/// Deployment), the alerts', the worker pools' (Nodes, pools).
fn reconciler_of(kind: &str) -> &'static str {
    match kind {
        "ClusterVersion" | "ClusterOperator" | "Deployment" => control_plane::NAME,
        "Alert" => alerts::NAME,
        _ => worker_pools::NAME,
    }
}

/// The object as written: `desired` in our namespace with the writer's labels.
fn meta<S>(d: &Desired<S>, reconciler: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(d.name.clone()),
        namespace: Some(NAMESPACE.to_string()),
        labels: Some(written_labels(&d.labels, reconciler)),
        owner_references: d.owner.clone().map(|o| vec![o]),
        ..Default::default()
    }
}

fn yaml_block(out: &mut String, object: &impl Serialize) -> anyhow::Result<()> {
    let y = serde_saphyr::to_string(object).context("serializing an example")?;
    let _ = writeln!(out, "```yaml\n{}```\n", y.trim_end().to_string() + "\n");
    Ok(())
}

/// What an insight example is titled by: its type, its resource's kind and, for a health
/// insight, its rule (`source`).
/// Progress insights first.
fn insight_key(s: &UpdateInsightStatus) -> (bool, String, String) {
    (
        s.type_ == InsightType::Health,
        s.resource.kind.clone(),
        s.health
            .as_ref()
            .map(|h| h.source.clone())
            .unwrap_or_default(),
    )
}

/// The UpdateHistory the `estimates` reconciler writes on its first reading of the captured
/// cluster (the same `observe` and `estimate` calls on the same inputs).
fn update_history(out: &mut String, snap: &Snapshot, now: jiff::Timestamp) -> anyhow::Result<()> {
    let inputs = snap.inputs();
    let mut status = UpdateHistoryStatus::default();
    observe(&mut status, &inputs, inputs.nodes, now);
    status.estimates = estimate(&status, &inputs, inputs.nodes, now);
    let mut l = naming::cluster_labels(None);
    l.insert(labels::RECONCILER.to_string(), estimates::NAME.to_string());
    l.insert(
        labels::MANAGED_BY.to_string(),
        labels::MANAGED_BY_VALUE.to_string(),
    );
    let mut o = UpdateHistory::new(UPDATE_HISTORY_NAME, Default::default());
    o.metadata = ObjectMeta {
        name: Some(UPDATE_HISTORY_NAME.to_string()),
        namespace: Some(NAMESPACE.to_string()),
        labels: Some(l),
        ..Default::default()
    };
    o.status = Some(status);
    let _ = writeln!(
        out,
        "## UpdateHistory\n\nOne per cluster, named `{UPDATE_HISTORY_NAME}`, written by the `estimates` \
         reconciler only: the durations learned from this cluster's updates and the estimates of \
         the update in progress. Here, what it writes on its first reading of the captured \
         cluster (nothing observed yet): the completed updates of the ClusterVersion history, \
         control-plane durations only, installation excluded. While an update is in progress, \
         `current` follows it (operators at the target, node groups, nodes in flight, nodes \
         finished) and `estimates` holds the remaining time of the control plane, each pool \
         and the whole update with its interval: `method: OcBaseline` (oc's method) until one \
         update was observed to its end, then `Learned`. An observed update in `updates[]` \
         holds its operators, node groups and pools; `nodeFactors[]`, the nodes slower or \
         faster than their group.\n"
    );
    yaml_block(out, &o)
}

fn render(fixture: &Path) -> anyhow::Result<String> {
    let snap = Snapshot::from_dir(fixture)
        .with_context(|| format!("reading the snapshot {}", fixture.display()))?;
    let now = snap
        .now
        .or_else(|| snap.derived_now())
        .context("the snapshot has no instant to assess at")?;
    let desired = compose::desired_cluster(
        &snap.inputs(),
        &compose::Existing::default(),
        &compose::Labels::new(),
        now,
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# API examples\n\n\
         <!-- Generated by `make manifests` (controllers/src/bin/apidoc.rs). Do not edit: \
         `make manifests-check` fails when this file is stale. -->\n\n\
         What update-status writes (group `update.openshift.io/v1alpha1`, namespace `{NAMESPACE}`), \
         shown with one real object of each kind and one UpdateInsight of each type, resource kind \
         and rule: exactly what the controller writes for the captured cluster \
         `testdata/oc-status/{FIXTURE}` (a control plane updated, worker nodes whose drain a \
         PodDisruptionBudget blocks), assessed at its capture instant {now}. What each field means: \
         [`assessment-contract.md`](assessment-contract.md); the CRDs: `config/crd/`. Fields the \
         API server sets (uid, resourceVersion, managedFields, ...) are left out.\n"
    );
    if let Some(cp) = &desired.control_plane {
        let mut o = ControlPlaneUpdateStatus::new(&cp.name, Default::default());
        o.metadata = meta(cp, control_plane::NAME);
        o.status = Some(cp.status.clone());
        let _ = writeln!(
            out,
            "## ControlPlaneUpdateStatus\n\nOne per cluster, named `cluster`, owned by the ClusterVersion.\n"
        );
        yaml_block(&mut out, &o)?;
    }
    if let Some(wp) = desired.worker_pools.first() {
        let mut o = WorkerPoolUpdateStatus::new(&wp.name, Default::default());
        o.metadata = meta(wp, worker_pools::NAME);
        o.status = Some(wp.status.clone());
        let _ = writeln!(
            out,
            "## WorkerPoolUpdateStatus\n\nOne per worker pool (here `{}`), owned by its MachineConfigPool.\n",
            wp.name
        );
        yaml_block(&mut out, &o)?;
    }
    update_history(&mut out, &snap, now)?;
    let _ = writeln!(out, "## UpdateInsight\n");
    let mut seen = BTreeSet::new();
    let mut insights: Vec<&Desired<UpdateInsightStatus>> = desired
        .insights
        .iter()
        .filter(|d| seen.insert(insight_key(&d.status)))
        .collect();
    insights.sort_by_key(|d| insight_key(&d.status));
    for d in insights {
        let s = &d.status;
        let mut o = UpdateInsight::new(&d.name, Default::default());
        o.metadata = meta(d, reconciler_of(&s.resource.kind));
        o.status = Some(s.clone());
        match &s.health {
            None => {
                let _ = writeln!(
                    out,
                    "### Progress of a {} (`{}`)\n",
                    s.resource.kind, s.resource.name
                );
            }
            Some(h) => {
                let _ = writeln!(
                    out,
                    "### Health: {} (`{}`, about {} `{}`)\n",
                    h.impact.summary, h.source, s.resource.kind, s.resource.name
                );
            }
        }
        yaml_block(&mut out, &o)?;
    }
    Ok(out.trim_end().to_string() + "\n")
}
