//! The live view read by label prints the same bytes as a full read (`--full-read`), for
//! every `--details` value: at every step of a simulated update (pools larger than the ten
//! rows a compact node table prints, so the omitted-nodes footer comes from the statuses'
//! counts), on each loaded fixture snapshot, and on one with a label removed (the selective
//! read must notice, fall back to a full read and say so on stderr).
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::{Duration, Instant};

use jiff::SignedDuration;
use kube::api::{Api, ListParams};
use update_status_api::crd::{
    Assessment, ImpactLevel, InsightType, UpdateInsight, UpdateInsightStatus, labels,
};
use update_status_e2e::controller::Controller;
use update_status_e2e::playback::{self, Simulator};
use update_status_e2e::{TestEnv, exclusive_cluster_state, fixtures_dir, oc_status_case};
use update_status_simulator::{SimConfig, Simulation};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const DETAILS: [&str; 5] = ["none", "health", "operators", "nodes", "all"];
/// How long the controller may take to settle after a change.
const SETTLE: Duration = Duration::from_secs(30);
const START: &str = "2026-01-01T03:00:00Z";
const ASSESS_AT: &str = "2026-01-01T06:00:00Z";
/// The fixture (with a degraded node, unavailable nodes and health insights) whose objects
/// lose a label.
const FALLBACK_CASE: &str = "4.16.0-ec2-control-plane-updated-pdb-prohibits-draining";

/// The examples of docs/reference.md ("Reading insights by label") select exactly the insights their
/// description says, computed from the full list.
async fn readme_examples(env: &TestEnv, ns: &str) -> TestResult {
    type Filter = fn(&UpdateInsightStatus) -> bool;
    let examples: [(&str, Filter); 3] = [
        (
            "update.openshift.io/insight-type=progress,update.openshift.io/resource-kind=Node,update.openshift.io/pool=worker,update.openshift.io/assessment in (degraded,unavailable)",
            |i| {
                i.type_ == InsightType::Progress
                    && i.resource.kind == "Node"
                    && i.scope.pool.as_deref() == Some("worker")
                    && i.progress.as_ref().is_some_and(|p| {
                        matches!(p.assessment, Assessment::Degraded | Assessment::Unavailable)
                    })
            },
        ),
        (
            "update.openshift.io/insight-type=health,update.openshift.io/impact-level=error",
            |i| {
                i.health
                    .as_ref()
                    .is_some_and(|h| h.impact.level == ImpactLevel::Error)
            },
        ),
        (
            "update.openshift.io/insight-type=progress,update.openshift.io/assessment!=completed",
            |i| {
                i.progress
                    .as_ref()
                    .is_some_and(|p| p.assessment != Assessment::Completed)
            },
        ),
    ];
    let all = Api::<UpdateInsight>::namespaced(env.client(), ns)
        .list(&ListParams::default())
        .await?;
    let mut selected = 0;
    for (selector, filter) in examples {
        let got = env.get_insights(ns, selector, "name").await?;
        let mut got: Vec<&str> = got.lines().collect();
        got.sort_unstable();
        let want: Vec<String> = all
            .items
            .iter()
            .filter(|i| i.status.as_ref().is_some_and(filter))
            .filter_map(|i| i.metadata.name.as_ref())
            .map(|n| format!("updateinsight.update.openshift.io/{n}"))
            .collect();
        let mut want: Vec<&str> = want.iter().map(String::as_str).collect();
        want.sort_unstable();
        assert_eq!(got, want, "kubectl get -l '{selector}'");
        selected += got.len();
    }
    assert!(selected > 0, "the examples select nothing in the fixture");
    Ok(())
}

/// One CLI run: stdout, stderr.
fn run(
    env: &TestEnv,
    ns: &str,
    now: &str,
    details: &str,
    full: bool,
) -> Result<(String, String), String> {
    let mut args = vec!["-n", ns, "--now", now, "--details", details];
    if full {
        args.push("--full-read");
    }
    let out = env.plugin(&args).map_err(|e| e.to_string())?;
    Ok((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// The first line where `a` and `b` differ, both shown.
fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = (0..la.len().max(lb.len()))
        .find(|&i| la.get(i) != lb.get(i))
        .unwrap_or(0);
    format!(
        "line {}: selective {:?} / full {:?}",
        i + 1,
        la.get(i).copied().unwrap_or("<end>"),
        lb.get(i).copied().unwrap_or("<end>")
    )
}

/// Polls until, for every `--details` value, the selective read prints what the full read
/// prints (the controller may still be writing; a persistent difference fails). Returns the
/// selective reads' stderr.
async fn identical(env: &TestEnv, ns: &str, now: &str, what: &str) -> Result<Vec<String>, String> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let mut diff = None;
        let mut notes = Vec::new();
        for details in DETAILS {
            let (sel, sel_err) = run(env, ns, now, details, false)?;
            let (full, full_err) = run(env, ns, now, details, true)?;
            if sel != full || sel.is_empty() {
                diff = Some(format!(
                    "{what} --details={details}: the selective read differs from the full read at {}\nselective stderr: {sel_err}\nfull stderr: {full_err}\n--- selective:\n{sel}--- full:\n{full}",
                    first_difference(&sel, &full)
                ));
                break;
            }
            notes.push(sel_err);
        }
        match diff {
            None => return Ok(notes),
            Some(d) if Instant::now() > deadline => return Err(d),
            Some(_) => tokio::time::sleep(Duration::from_millis(300)).await,
        }
    }
}

#[tokio::test]
async fn selective_and_full_reads_print_the_same_at_every_step_of_a_simulated_update() -> TestResult
{
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let ns = env.namespace("bylabel").await?;
    let client = env.client();
    playback::clear(&client).await?;
    let sim = Simulation::new(SimConfig {
        operators: 4,
        pools: 2,
        masters: 3,
        nodes_per_pool: 13,
        max_unavailable: 3,
        seed: 5,
        start: START.parse()?,
        step: SignedDuration::from_secs(60),
        ..Default::default()
    })?;
    let mut simulator = Simulator::new(client.clone(), sim);
    simulator.install().await?;
    let controller = Controller::start(&env, ns.name(), &["--assess-at", ASSESS_AT])?;
    let mut steps = 0;
    let mut footers = 0;
    loop {
        let step = simulator.simulation().steps();
        // Let the controller catch up with the step before comparing.
        tokio::time::sleep(Duration::from_millis(400)).await;
        let what = format!("step {step} (controller log {})", controller.log.display());
        let notes = identical(&env, ns.name(), ASSESS_AT, &what).await?;
        if let Some(note) = notes.iter().find(|n| !n.is_empty()) {
            return Err(format!("{what}: the selective read fell back: {note}").into());
        }
        let (out, _) = run(&env, ns.name(), ASSESS_AT, "none", false)?;
        if out.contains("Omitted additional") {
            footers += 1;
        }
        steps += 1;
        if simulator.simulation().is_completed() {
            break;
        }
        if step > 300 {
            return Err("the simulated update did not complete in 300 steps".into());
        }
        simulator.step().await?;
    }
    assert!(steps > 5, "only {steps} steps compared");
    assert!(footers > 0, "no step printed an omitted-nodes footer");
    drop(controller);
    playback::clear(&client).await?;
    ns.delete().await?;
    Ok(())
}

#[tokio::test]
async fn selective_and_full_reads_print_the_same_on_every_fixture_and_fall_back_without_a_label()
-> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let mut cases: Vec<String> = std::fs::read_dir(fixtures_dir())?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("now").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    // The fallback case last: loading the next snapshot would delete its inputs, and the
    // garbage collector the insights they own.
    cases.sort_by_key(|c| (c == FALLBACK_CASE, c.clone()));
    assert!(cases.len() >= 6, "fixture cases: {cases:?}");
    let mut kept = None;
    for case in &cases {
        let dir = oc_status_case(case);
        let now = std::fs::read_to_string(dir.join("now"))?.trim().to_string();
        let ns = env.namespace("bylabel").await?;
        env.replace_snapshot(&dir).await?;
        let controller = Controller::start(&env, ns.name(), &["--assess-at", &now])?;
        // Wait until the controller wrote what the fixture's oc printed (the same lines: online,
        // pools come in the order an API server lists them, by name, which may not be the
        // capture's file order; e2e cli_online checks the order).
        let expected = std::fs::read_to_string(dir.join("expected.output"))?;
        let deadline = Instant::now() + SETTLE;
        while !same_lines(&run(&env, ns.name(), &now, "none", true)?.0, &expected) {
            if Instant::now() > deadline {
                return Err(format!("{case}: the controller never wrote the expected view").into());
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let notes = identical(&env, ns.name(), &now, case).await?;
        if let Some(note) = notes.iter().find(|n| !n.is_empty()) {
            return Err(format!("{case}: the selective read fell back: {note}").into());
        }
        drop(controller);
        if case == FALLBACK_CASE {
            kept = Some((ns, now));
        } else {
            ns.delete().await?;
        }
    }

    // One case, its controller stopped: docs/reference.md's selectors select what they say; then with
    // one node insight's assessment label removed, the selective read cannot trust the labels,
    // reads everything and says so.
    let case = FALLBACK_CASE;
    let (ns, now) = kept.ok_or("the fallback case is not among the fixtures")?;
    readme_examples(&env, ns.name()).await?;
    let selector = format!(
        "{}=progress,{}=Node",
        labels::INSIGHT_TYPE,
        labels::RESOURCE_KIND
    );
    let remove = format!("{}-", labels::ASSESSMENT);
    let node_insights = env.get_insights(ns.name(), &selector, "name").await?;
    let victim = node_insights
        .lines()
        .next()
        .ok_or(format!("{case}: no node insight"))?
        .to_string();
    env.kubectl_ok(["label", "-n", ns.name(), victim.as_str(), remove.as_str()])
        .await?;
    let notes = identical(&env, ns.name(), &now, &format!("{case} without a label")).await?;
    let note = &notes[0];
    assert!(
        note.contains("note: reading every UpdateInsight") && note.contains(ns.name()),
        "the fallback is not noted on stderr: {note:?}"
    );
    ns.delete().await?;
    Ok(())
}

/// Whether two outputs hold the same lines, in any order.
fn same_lines(a: &str, b: &str) -> bool {
    fn sorted(s: &str) -> Vec<&str> {
        let mut lines: Vec<&str> = s.lines().collect();
        lines.sort_unstable();
        lines
    }
    sorted(a) == sorted(b)
}
