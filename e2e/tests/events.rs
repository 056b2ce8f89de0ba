//! The update's story as Kubernetes Events, read back with `kubectl events` as an administrator
//! would.
//!
//! The simulator plays a short update (3 operators, 2 pools, 7 nodes) in which the first worker
//! node's drain is blocked by a PodDisruptionBudget for 3 steps, against the real control plane
//! and the real controller. At every step the test waits until the controller's objects match
//! the pure logic (so each state is seen by the events task), and records what the health
//! insights say. At the end:
//! - `kubectl events --for node/<blocked>` shows, in order, the Warning `InsightAppeared`
//!   ("Node ... is degraded", related to the pod whose eviction is refused) and the Normal
//!   `InsightResolved`;
//! - `kubectl events --for clusterversion/version` shows `UpdateStarted` then
//!   `UpdateCompleted`;
//! - every Event this controller published is one of those transitions: as many as the health
//!   insights' appearing, changing level and resolving between the steps, plus the two of the
//!   update (none for the many progress-only changes), and the controller's
//!   `update_status_events_total` says the same.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use serde_json::Value;
use update_status_api::crd::ImpactLevel;
use update_status_assess::events::{
    REASON_INSIGHT_APPEARED, REASON_INSIGHT_LEVEL_CHANGED, REASON_INSIGHT_RESOLVED,
    REASON_UPDATE_COMPLETED, REASON_UPDATE_STARTED, REASONS,
};
use update_status_e2e::controller::Controller;
use update_status_e2e::outputs::Outputs;
use update_status_e2e::playback;
use update_status_e2e::scenario::{self, ASSESS_AT, Size};
use update_status_e2e::{TestEnv, exclusive_cluster_state, poll_until};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// The health insights of a reading: level by insight name.
fn health(outputs: &Outputs) -> BTreeMap<String, ImpactLevel> {
    outputs
        .insights
        .iter()
        .filter_map(|(name, i)| Some((name.clone(), i.health.as_ref()?.impact.level)))
        .collect()
}

/// Transitions between two readings of the health insights.
fn health_transitions(
    before: &BTreeMap<String, ImpactLevel>,
    after: &BTreeMap<String, ImpactLevel>,
) -> usize {
    let gone = before.keys().filter(|k| !after.contains_key(*k)).count();
    let new_or_changed = after
        .iter()
        .filter(|(k, level)| before.get(*k) != Some(level))
        .count();
    gone + new_or_changed
}

/// One Event as `kubectl events -o json` lists it (core/v1 view of events.k8s.io/v1).
#[derive(Debug)]
struct Seen {
    type_: String,
    reason: String,
    note: String,
    regarding: String,
    related: String,
}

fn seen(v: &Value) -> Seen {
    let s = |p: &str| v.pointer(p).and_then(Value::as_str).unwrap_or_default();
    Seen {
        type_: s("/type").into(),
        reason: s("/reason").into(),
        note: s("/message").into(),
        regarding: format!(
            "{}/{}",
            s("/involvedObject/kind"),
            s("/involvedObject/name")
        ),
        related: format!("{}/{}", s("/related/kind"), s("/related/name")),
    }
}

/// The Events `kubectl events` lists (in its order) that `instance` reported.
async fn kubectl_events(
    env: &TestEnv,
    instance: &str,
    args: &[&str],
) -> Result<Vec<Seen>, Box<dyn std::error::Error + Send + Sync>> {
    let mut all = vec!["events", "-n", "default", "-o", "json"];
    all.extend_from_slice(args);
    let out = env.kubectl_ok(&all).await?;
    let list: Value = serde_json::from_str(&out)?;
    Ok(list
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|e| e.get("reportingInstance").and_then(Value::as_str) == Some(instance))
        .map(seen)
        .collect())
}

#[tokio::test]
async fn a_pdb_blocked_drain_tells_its_story_in_kubectl_events() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("events").await?;
    let client = env.client();
    let now: Timestamp = ASSESS_AT.parse()?;
    let sim = scenario::blocked_drain(Size {
        operators: 3,
        nodes_per_pool: 4,
        seed: 5,
    })?;
    let blocked = sim
        .blocked_drain_target()
        .ok_or("no blocked-drain target")?
        .to_string();
    let mut simulator = scenario::install(&client, sim).await?;
    // Events from earlier runs about the same node names are told apart by the instance.
    let instance = format!("events-e2e-{}-{}", ns.name(), std::process::id());
    let controller = Controller::start(
        &env,
        ns.name(),
        &["--assess-at", ASSESS_AT, "--leader-identity", &instance],
    )?;
    let log = controller.log.display().to_string();

    let mut previous: Option<BTreeMap<String, ImpactLevel>> = None;
    let mut expected_health_events = 0;
    let mut fault_seen = 0;
    loop {
        let step = simulator.simulation().steps();
        let inputs = playback::read_inputs(&client).await?;
        let got = scenario::until_outputs_match(
            &client,
            ns.name(),
            &inputs,
            now,
            STEP_TIMEOUT,
            &format!("step {step}"),
            &log,
        )
        .await?;
        let h = health(&got);
        if simulator
            .simulation()
            .fault_status()
            .blocked_drain
            .is_some()
        {
            fault_seen += 1;
        }
        expected_health_events += health_transitions(previous.as_ref().unwrap_or(&h), &h);
        previous = Some(h);
        if simulator.simulation().is_completed() {
            break;
        }
        if step > 200 {
            return Err("the simulated update did not complete in 200 steps".into());
        }
        simulator.step().await?;
    }
    assert_eq!(fault_seen, 3, "the fault held for 3 steps");

    // The node's story, as the administrator reads it.
    let for_node = format!("node/{blocked}");
    let node_events = poll_until(STEP_TIMEOUT, &format!("the Events of {for_node}"), || {
        let (env, instance, for_node) = (&env, &instance, &for_node);
        async move {
            let e = kubectl_events(env, instance, &["--for", for_node])
                .await
                .ok()?;
            e.iter()
                .any(|e| e.reason == REASON_INSIGHT_RESOLVED)
                .then_some(e)
        }
    })
    .await
    .map_err(|e| format!("{e}; controller log {log}"))?;
    let story: Vec<_> = node_events
        .iter()
        .map(|e| (e.type_.as_str(), e.reason.as_str()))
        .collect();
    assert_eq!(
        story,
        [
            ("Warning", REASON_INSIGHT_APPEARED),
            ("Normal", REASON_INSIGHT_RESOLVED)
        ],
        "{node_events:#?}"
    );
    for e in &node_events {
        assert_eq!(e.note, format!("Node {blocked} is degraded"), "{e:?}");
        assert_eq!(e.regarding, format!("Node/{blocked}"), "{e:?}");
        // What the insight points at first: the pod whose eviction the budget refuses (the
        // daemon's message names it).
        assert!(e.related.starts_with("Pod/checkout-"), "{e:?}");
    }
    // The text a person reads: the same two lines, in that order.
    let text = env
        .kubectl_ok(["events", "-n", "default", "--for", &for_node])
        .await?;
    eprintln!("kubectl events --for {for_node}:\n{text}");
    let ours: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(&format!("Node {blocked} is degraded")))
        .collect();
    let (appeared, resolved) = (
        ours.iter()
            .rposition(|l| l.contains(REASON_INSIGHT_APPEARED)),
        ours.iter()
            .rposition(|l| l.contains(REASON_INSIGHT_RESOLVED)),
    );
    assert!(
        matches!((appeared, resolved), (Some(a), Some(r)) if a < r),
        "kubectl events --for {for_node}:\n{text}"
    );

    // The update's start and end, on the ClusterVersion.
    let cv_events = poll_until(STEP_TIMEOUT, "the Events of clusterversion/version", || {
        let (env, instance) = (&env, &instance);
        async move {
            let e = kubectl_events(env, instance, &["--for", "clusterversion/version"])
                .await
                .ok()?;
            e.iter()
                .any(|e| e.reason == REASON_UPDATE_COMPLETED)
                .then_some(e)
        }
    })
    .await?;
    let cv: Vec<_> = cv_events
        .iter()
        .map(|e| (e.reason.as_str(), e.note.as_str()))
        .collect();
    assert_eq!(cv.len(), 2, "{cv_events:#?}");
    assert_eq!(
        cv[0],
        (
            REASON_UPDATE_STARTED,
            "Update from 4.17.12 to 4.18.3 started"
        )
    );
    assert_eq!(cv[1].0, REASON_UPDATE_COMPLETED);
    assert!(
        cv[1]
            .1
            .starts_with("Update to 4.18.3 completed (duration: "),
        "{}",
        cv[1].1
    );

    // Nothing but transitions: no Event for a progress-only change.
    let all = kubectl_events(&env, &instance, &[]).await?;
    assert!(
        all.iter().all(|e| REASONS.contains(&e.reason.as_str())),
        "{all:#?}"
    );
    let level_changes = all
        .iter()
        .filter(|e| e.reason == REASON_INSIGHT_LEVEL_CHANGED)
        .count();
    assert_eq!(
        all.len(),
        expected_health_events + 2,
        "Events: one per health-insight transition ({expected_health_events}, {level_changes} level changes) and 2 for the update: {all:#?}"
    );
    let metrics = controller.metrics()?;
    let published: u64 = metrics
        .lines()
        .filter(|l| l.starts_with("update_status_events_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert_eq!(published as usize, all.len(), "update_status_events_total");
    eprintln!(
        "events: {} steps, {} Events ({} about {blocked}, {} about the ClusterVersion)",
        simulator.simulation().steps(),
        all.len(),
        node_events.len(),
        cv_events.len()
    );
    Ok(())
}
