//! Names, labels and status strings derived from nasty input data (a 307-character
//! ClusterVersion `version`, the alert name `weird..name.-x`, upper case, Unicode, control
//! characters, leading and trailing punctuation) are accepted by the real kube-apiserver: the
//! controller's [`Writer`] writes every one of them without a single refusal.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::sync::Arc;

use kube::Api;
use kube::api::ListParams;
use update_status_api::crd::*;
use update_status_assess::compose::{Desired, base_labels};
use update_status_assess::naming;
use update_status_controllers::metrics::Metrics;
use update_status_controllers::runtime::writer::Writer;
use update_status_e2e::TestEnv;

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const NASTY: &[&str] = &[
    "weird..name.-x",
    "-leading.and.trailing-",
    "UPPER_case name",
    "ümlaut-Ω-名前",
    "\u{1b}]0;retitled\u{7}",
    ".",
];

fn resource(kind: &str, name: &str) -> ResourceRef {
    ResourceRef {
        group: String::new(),
        kind: kind.into(),
        name: naming::status_text(name, limits::RESOURCE_NAME),
        namespace: None,
    }
}

fn node_progress(name: &str, pool: &str, version: &str) -> UpdateInsightStatus {
    UpdateInsightStatus {
        type_: InsightType::Progress,
        resource: resource("Node", name),
        scope: InsightScope {
            type_: ScopeType::WorkerPool,
            pool: Some(naming::status_text(pool, limits::POOL)),
        },
        progress: Some(ProgressInsight {
            assessment: Assessment::Progressing,
            version: Some(VersionPair {
                current: naming::status_text(version, limits::VERSION),
                target: naming::status_text(version, limits::VERSION),
            }),
            ..Default::default()
        }),
        health: None,
    }
}

fn alert_health(name: &str) -> UpdateInsightStatus {
    UpdateInsightStatus {
        type_: InsightType::Health,
        resource: resource("Alert", name),
        scope: InsightScope {
            type_: ScopeType::Cluster,
            pool: None,
        },
        progress: None,
        health: Some(HealthInsight {
            started_at: None,
            impact: Impact {
                level: ImpactLevel::Warning,
                type_: ImpactType::UpdateSpeed,
                summary: naming::status_text(&format!("alert {name} firing"), limits::SUMMARY),
                description: String::new(),
            },
            remediation: Remediation {
                reference: "https://example.com/runbook".into(),
            },
            related: vec![],
            related_omitted: 0,
            caveat: None,
            source: "Alert".into(),
        }),
    }
}

#[tokio::test]
async fn names_and_labels_from_nasty_inputs_are_accepted() -> TestResult {
    let env = TestEnv::new().await?;
    let ns = env.namespace("names").await?;
    let version = format!("4.18.0-{}", "x".repeat(300));
    assert_eq!(version.len(), 307);
    let base = base_labels(Some(&version));
    let mut insights = Vec::new();
    for input in NASTY {
        insights.push(Desired::insight(
            node_progress(input, input, &version),
            "",
            &base,
            None,
        ));
        insights.push(Desired::insight(alert_health(input), input, &base, None));
    }
    let pools: Vec<Desired<WorkerPoolUpdateStatusStatus>> = NASTY
        .iter()
        .map(|input| Desired {
            name: naming::pool_status_name(input),
            labels: base.clone(),
            owner: None,
            status: WorkerPoolUpdateStatusStatus {
                resource: resource("MachineConfigPool", input),
                target_version: naming::status_text(&version, limits::VERSION),
                ..Default::default()
            },
        })
        .collect();

    let metrics = Arc::new(Metrics::new()?);
    let mut w: Writer<UpdateInsight> =
        Writer::new(env.client(), ns.name(), "worker-pools", metrics.clone());
    let stats = w.sync(&insights, &[] as &[Arc<UpdateInsight>]).await?;
    assert_eq!(stats.meta_writes as usize, insights.len());
    let mut p: Writer<WorkerPoolUpdateStatus> =
        Writer::new(env.client(), ns.name(), "worker-pools", metrics.clone());
    p.sync(&pools, &[] as &[Arc<WorkerPoolUpdateStatus>])
        .await?;
    assert_eq!(w.failing() + p.failing(), 0);

    // Everything is there, with the full values in the status.
    let api: Api<UpdateInsight> = Api::namespaced(env.client(), ns.name());
    let listed = api.list(&ListParams::default()).await?;
    assert_eq!(listed.items.len(), insights.len());
    for d in &insights {
        let o = api.get(&d.name).await?;
        assert_eq!(o.status.as_ref(), Some(&d.status), "{}", d.name);
    }
    let weird = naming::insight_name(&alert_health("weird..name.-x"), "weird..name.-x");
    assert!(
        listed
            .items
            .iter()
            .any(|o| o.metadata.name.as_deref() == Some(&weird)),
        "{weird}"
    );
    let pool_api: Api<WorkerPoolUpdateStatus> = Api::namespaced(env.client(), ns.name());
    assert_eq!(
        pool_api.list(&ListParams::default()).await?.items.len(),
        pools.len()
    );
    ns.delete().await?;
    Ok(())
}
