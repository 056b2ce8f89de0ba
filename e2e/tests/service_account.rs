//! The controller as its ServiceAccount, with the permissions this repository ships.
//!
//! The real manifests (`kubectl apply --server-side -k config/default`, what `make deploy`
//! applies) go on the local control plane; there is no kubelet, so the Deployment's pod never
//! runs. Instead the RELEASE controller binary runs with a kubeconfig holding only a token of
//! the `update-status-controller` ServiceAccount (TokenRequest API), `--leader-elect` and a real
//! Prometheus, writing into `openshift-update-status` — and, side by side, the same binary as
//! cluster-admin into a test namespace. On a loaded snapshot, then through a simulated update,
//! the ServiceAccount's run must write the same objects (labels, spec, status) as the admin's,
//! and log no `403`. `kubectl auth can-i --as` checks what the ServiceAccount may and may not do
//! (no Secrets, no writes outside its namespace, no writes to its inputs, no `get` of a
//! MachineConfig), and a ServiceAccount bound only to the `update-status-viewer` ClusterRole
//! runs `kubectl update-status`. A drain failing without saying why is looked up (the pod and
//! the budget blocking it), and the API server's audit log shows what the ServiceAccount read
//! of MachineConfigs and Pods: their metadata only, never the secret their specs hold.
//!
//! Then the same ServiceAccount as OLM would create it from the bundle (issue #49): config/default's
//! RBAC and Deployment removed, the ClusterServiceVersion's install strategy applied as OLM
//! creates it (`update_status_e2e::olm`: the ServiceAccount, a Role and RoleBinding per
//! `permissions` entry, a ClusterRole and ClusterRoleBinding per `clusterPermissions` entry, the
//! Deployment, the bundle's other manifests in the install namespace), `kubectl auth can-i`
//! again (the two Roles OLM cannot create outside its namespace are granted everywhere: exactly
//! those two checks change), and the ServiceAccount's controller restarted with the
//! Deployment's arguments and a token of OLM's ServiceAccount: the simulated update runs as it.
//!
//! A missing verb in `config/rbac/` or in the bundle fails this test. Fixed names (the namespace
//! `openshift-update-status`, cluster-wide RBAC): it holds [`exclusive_cluster_state`].
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use jiff::SignedDuration;
use serde_json::{Value, json};
use update_status_assess::nodes::SOURCE_NODE_DEGRADED;
use update_status_e2e::controller::{Controller, Launch, release_bin, workspace_bin};
use update_status_e2e::kubeconfig::{ServiceAccountConfig, service_account_config};
use update_status_e2e::olm;
use update_status_e2e::playback::{self, Simulator};
use update_status_e2e::prometheus::{Prometheus, PrometheusOptions, free_port};
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case, repo_root, wait_for};
use update_status_simulator::{FaultSpec, Faults, SimConfig, Simulation};

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Where config/default installs the controller, and its ServiceAccount.
const NS: &str = "openshift-update-status";
const SA: &str = "update-status-controller";
/// Both runs evaluate at this instant (after the simulated update's end), so they can be
/// compared field by field.
const ASSESS_AT: &str = "2026-01-01T06:00:00Z";
const TIMEOUT: Duration = Duration::from_secs(60);
/// The namespace of the machine-config operator's Deployment, which the controller may read.
const MCO_NAMESPACE: &str = "openshift-machine-config-operator";
const MCO_DEPLOYMENT_RESOURCE: &str = "deployments.apps/machine-config-operator";
const OUTPUT_KINDS: &str = "updateinsights,controlplaneupdatestatuses,workerpoolupdatestatuses";

/// Applies the shipped manifests as `make deploy` does, and removes what an earlier run left in
/// the namespace (objects, the Lease) and the roles of an earlier OLM install.
async fn deploy(env: &TestEnv) -> TestResult {
    remove_olm_install(env).await?;
    // OpenShift has this namespace; config/rbac/mco_deployment.yaml grants in it.
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(env.client());
    namespaces
        .patch(
            MCO_NAMESPACE,
            &kube::api::PatchParams::apply("update-status-e2e"),
            &kube::api::Patch::Apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": MCO_NAMESPACE}})),
        )
        .await?;
    let config = repo_root().join("config/default");
    env.kubectl_ok([
        "apply",
        "--server-side",
        "--field-manager=update-status-deploy",
        "-k",
        path(&config)?,
    ])
    .await?;
    env.kubectl_ok([
        "delete",
        &format!("{OUTPUT_KINDS},leases"),
        "--all",
        "-n",
        NS,
        "--ignore-not-found",
    ])
    .await?;
    Ok(())
}

/// Removes what [`install_as_olm`] created (by OLM's owner label).
async fn remove_olm_install(env: &TestEnv) -> TestResult {
    env.kubectl_ok([
        "delete",
        "clusterroles,clusterrolebindings,roles,rolebindings,deployments,serviceaccounts",
        "-A",
        "-l",
        olm::OWNER_LABEL,
        "--ignore-not-found",
    ])
    .await?;
    Ok(())
}

/// Replaces config/default's RBAC and Deployment by what OLM creates from the bundle's CSV
/// (`update_status_e2e::olm`); returns the Deployment's controller arguments.
async fn install_as_olm(env: &TestEnv, dir: &Path) -> TestResult<Vec<String>> {
    for what in ["config/rbac", "config/manager"] {
        if what == "config/manager" {
            // The namespace stays (OLM installs into an existing one).
            env.kubectl_ok([
                "delete",
                "-f",
                path(&repo_root().join("config/manager/deployment.yaml"))?,
                "--ignore-not-found",
            ])
            .await?;
            continue;
        }
        env.kubectl_ok([
            "delete",
            "-k",
            path(&repo_root().join(what))?,
            "--ignore-not-found",
        ])
        .await?;
    }
    let bundle = olm::read_bundle(&repo_root().join("bundle"))?;
    let mut objects = Vec::new();
    for o in olm::install_objects(&bundle, NS) {
        // The local control plane serves no console.openshift.io kinds.
        if o["apiVersion"]
            .as_str()
            .is_some_and(|a| a.starts_with("console.openshift.io/"))
        {
            eprintln!(
                "olm install: skipped {} {} (no console here)",
                o["kind"], o["metadata"]["name"]
            );
            continue;
        }
        objects.push(o);
    }
    let kinds: Vec<String> = objects
        .iter()
        .map(|o| {
            format!(
                "{} {}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    eprintln!("olm install: {}", kinds.join(", "));
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    let file = dir.join("olm-install.json");
    std::fs::write(&file, list.to_string())?;
    // OLM owns what it creates (the CRDs were applied by the control plane's start-up).
    env.kubectl_ok([
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=olm",
        "-f",
        path(&file)?,
    ])
    .await?;
    let deployment = objects
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == SA)
        .ok_or("the CSV installs no controller Deployment")?;
    assert_eq!(
        deployment["spec"]["template"]["spec"]["serviceAccountName"], SA,
        "the CSV's Deployment runs as {SA}"
    );
    let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .ok_or("the CSV's Deployment has no arguments")?
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    Ok(args)
}

/// operator-framework/api's validators (`hack/olm-validate`, built once by
/// `hack/build-olm-validate.sh`) pass the bundle, and fail a copy missing an owned CRD.
fn validate_bundle(dir: &Path) -> TestResult {
    let root = repo_root();
    let build = Command::new(root.join("hack/build-olm-validate.sh"))
        .status()
        .map_err(|e| format!("running hack/build-olm-validate.sh: {e}"))?;
    assert!(build.success(), "hack/build-olm-validate.sh failed");
    let validate = |bundle: &Path| -> TestResult<(bool, String)> {
        let out = Command::new(root.join(".cache/tools/olm-validate"))
            .arg(bundle)
            .output()
            .map_err(|e| format!("running .cache/tools/olm-validate: {e}"))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok((out.status.success(), text))
    };
    let (ok, text) = validate(&root.join("bundle"))?;
    assert!(
        ok,
        "operator-framework/api's validators refuse bundle/:\n{text}"
    );
    eprintln!("{}", text.trim());
    // Able to fail: the same bundle without the UpdateInsight CRD.
    let broken = dir.join("bundle-without-a-crd");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(broken.join(sub))?;
        for f in std::fs::read_dir(root.join("bundle").join(sub))? {
            let f = f?.path();
            if f.file_name()
                .is_some_and(|n| n.to_string_lossy().contains("updateinsights"))
            {
                continue;
            }
            if let Some(name) = f.file_name() {
                std::fs::copy(&f, broken.join(sub).join(name))?;
            }
        }
    }
    let (ok, text) = validate(&broken)?;
    assert!(
        !ok && text.contains("owned CRD") && text.contains("not found"),
        "a bundle missing an owned CRD passed:\n{text}"
    );
    Ok(())
}

/// The Deployment's arguments the test keeps: those the harness sets (namespace, ports), the
/// serving certificate (no service CA here) and the Prometheus and leader flags (the test's own,
/// the same for both runs) go; any other one is passed on.
fn deployment_flags(args: &[String]) -> Vec<String> {
    args.iter()
        .filter(|a| {
            let flag = a.split_once('=').map_or(a.as_str(), |(f, _)| f);
            !matches!(
                flag,
                "--namespace"
                    | "--metrics-bind-address"
                    | "--health-probe-bind-address"
                    | "--metrics-cert-dir"
                    | "--prometheus-url"
                    | "--prometheus-token-file"
                    | "--prometheus-ca-file"
                    | "--leader-elect"
            )
        })
        .cloned()
        .collect()
}

fn path(p: &Path) -> TestResult<&str> {
    Ok(p.to_str().ok_or("non-UTF-8 path")?)
}

/// `kubectl auth can-i VERB RESOURCE[/status] --as USER` in `ns` (`None`: cluster-scoped,
/// `Some("*")`: all namespaces); `RESOURCE/NAME` asks about one object.
async fn can_i(
    env: &TestEnv,
    user: &str,
    verb: &str,
    resource: &str,
    ns: Option<&str>,
) -> TestResult<bool> {
    let mut args = vec!["auth", "can-i", verb];
    match resource.split_once('/') {
        Some((r, sub @ "status")) => args.extend([r, "--subresource", sub]),
        _ => args.push(resource),
    }
    args.extend(["--as", user]);
    match ns {
        Some("*") => args.push("--all-namespaces"),
        Some(ns) => args.extend(["-n", ns]),
        None => {}
    }
    let out = env.kubectl(&args).await?;
    // "yes", or "no" possibly followed by a reason (e.g. a missing role another binding names).
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.split_whitespace().next().unwrap_or_default() {
        "yes" => Ok(true),
        "no" => Ok(false),
        other => Err(format!(
            "kubectl {}: {other:?} {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        )
        .into()),
    }
}

/// Asserts every `(verb, resource, namespace)` is allowed (`want`) or denied to `user`.
async fn assert_can(
    env: &TestEnv,
    user: &str,
    want: bool,
    checks: &[(&str, &str, Option<&str>)],
) -> TestResult {
    let mut wrong = Vec::new();
    for (verb, resource, ns) in checks {
        if can_i(env, user, verb, resource, *ns).await? != want {
            wrong.push(format!(
                "{verb} {resource} in {}",
                ns.unwrap_or("(cluster)")
            ));
        }
    }
    let how = if want { "denied" } else { "allowed" };
    assert!(wrong.is_empty(), "{user} is {how}: {wrong:#?}");
    Ok(())
}

/// Runs `program` with `KUBECONFIG=kubeconfig`; returns (stdout, stderr, success).
fn run_as(program: &Path, kubeconfig: &Path, args: &[&str]) -> TestResult<(String, String, bool)> {
    let out = Command::new(program)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", program.display()))?;
    Ok((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    ))
}

/// The kubeconfig authenticates as the ServiceAccount (its token, not the admin's
/// certificate): reading Secrets is Forbidden.
fn assert_token_only(sa: &ServiceAccountConfig) -> TestResult {
    let kubectl = PathBuf::from("kubectl");
    let (_, err, ok) = run_as(&kubectl, &sa.kubeconfig, &["get", "secrets", "-n", NS])?;
    assert!(
        !ok && err.contains("Forbidden") && err.contains(&sa.user),
        "{} reading secrets: {err}",
        sa.user
    );
    Ok(())
}

/// What a namespace holds: `kind/name` → its labels, spec and status.
async fn outputs(env: &TestEnv, ns: &str) -> TestResult<BTreeMap<String, Value>> {
    let list: Value = serde_json::from_str(
        &env.kubectl_ok(["get", OUTPUT_KINDS, "-n", ns, "-o", "json"])
            .await?,
    )?;
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let key = format!("{}/{}", o["kind"].as_str().unwrap_or_default(), o["metadata"]["name"].as_str().unwrap_or_default());
            (key, json!({"labels": o["metadata"]["labels"], "spec": o["spec"], "status": o["status"]}))
        })
        .collect())
}

/// How long `settled` wants the controller to have written nothing (its passes wait 100 ms for
/// more events, the estimates' 1 s, which write no object compared here).
const QUIET: Duration = Duration::from_millis(1500);

/// Waits until `controller` has written and then written nothing for [`QUIET`], and `ready`
/// holds for what `ns` holds; returns it.
async fn settled(
    env: &TestEnv,
    controller: &Controller,
    ns: &str,
    ready: impl Fn(&BTreeMap<String, Value>) -> bool,
) -> TestResult<BTreeMap<String, Value>> {
    let deadline = Instant::now() + TIMEOUT;
    // Until its /metrics serves (just started), nothing counts as written.
    let mut last = (controller.writes().unwrap_or_default(), Instant::now());
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let writes = controller.writes().unwrap_or_default();
        if writes != last.0 {
            last = (writes, Instant::now());
        } else if writes > 0 && last.1.elapsed() >= QUIET {
            let got = outputs(env, ns).await?;
            if controller.writes().unwrap_or_default() == writes && ready(&got) {
                return Ok(got);
            }
        }
        if Instant::now() > deadline {
            let got = outputs(env, ns).await?;
            return Err(format!(
                "{ns} did not settle in {TIMEOUT:?} (controller log {}): {got:#?}",
                controller.log.display()
            )
            .into());
        }
    }
}

/// Waits until the ServiceAccount's namespace holds exactly `want`.
async fn converged(
    env: &TestEnv,
    want: &BTreeMap<String, Value>,
    what: &str,
    log: &Path,
) -> TestResult {
    let last = std::cell::RefCell::new(BTreeMap::new());
    let result = wait_for(TIMEOUT, what, || async {
        let got = outputs(env, NS).await.unwrap_or_default();
        let same = &got == want;
        *last.borrow_mut() = got;
        same
    })
    .await;
    if let Err(e) = result {
        let got = last.borrow();
        let diff: Vec<&String> = want
            .keys()
            .chain(got.keys().filter(|k| !want.contains_key(*k)))
            .filter(|k| want.get(*k) != got.get(*k))
            .collect();
        // A missing verb shows as a denied watch or write in the log.
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let denials: Vec<&str> = text.lines().filter(|l| is_denial(l)).take(3).collect();
        let mut fields = Vec::new();
        for k in diff.iter().take(3) {
            differing_fields(
                k,
                want.get(*k).unwrap_or(&Value::Null),
                got.get(*k).unwrap_or(&Value::Null),
                &mut fields,
            );
        }
        return Err(format!(
            "{e} (log {}); denials: {denials:#?}; differing objects: {diff:?}; first differences (admin's, then the ServiceAccount's): {fields:#?}",
            log.display()
        )
        .into());
    }
    Ok(())
}

/// The fields where `a` and `b` differ (at most 12), as `path: a != b`.
fn differing_fields(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    if out.len() >= 12 || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                differing_fields(&format!("{path}.{k}"), va, vb, out);
            }
        }
        _ => out.push(format!("{path}: {a} != {b}")),
    }
}

/// A secret only the spec of [`secret_machine_config`] and the pod of
/// [`blocked_drain_is_looked_up_from_metadata`] hold: the ServiceAccount must never read it.
const SECRET: &str = "e2e-pull-secret-c2VjcmV0LWluLWEtc3BlYw";
/// The worker node of 4.14.1-degraded whose drain the test makes fail.
const DRAIN_NODE: &str = "ip-10-0-20-162.us-east-2.compute.internal";

/// A MachineConfig holding [`SECRET`] in its ignition config, as a rendered MachineConfig holds
/// the cluster's pull secret (`/var/lib/kubelet/config.json`).
fn secret_machine_config() -> String {
    json!({
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": {"name": "rendered-worker-e2e-secret"},
        "spec": {"config": {"ignition": {"version": "3.2.0"}, "storage": {"files": [{
            "path": "/var/lib/kubelet/config.json",
            "contents": {"source": format!("data:,{{\"auths\":{{\"quay.io\":{{\"auth\":\"{SECRET}\"}}}}}}")}
        }]}}}
    })
    .to_string()
}

/// `kubectl apply --server-side -f` of `text` (JSON or YAML), written to `dir/name`. Server
/// side: a client-side apply copies the whole object into its
/// `kubectl.kubernetes.io/last-applied-configuration` annotation, which a metadata-only read
/// then answers, [`SECRET`] included (the MCO creates rendered MachineConfigs without it).
async fn apply_file(env: &TestEnv, dir: &Path, name: &str, text: &str) -> TestResult {
    let file = dir.join(name);
    std::fs::write(&file, text)?;
    env.kubectl_ok(["apply", "--server-side", "-f", path(&file)?])
        .await?;
    Ok(())
}

/// A pod on [`DRAIN_NODE`] (its spec holding [`SECRET`] in an environment value) selected by
/// a PodDisruptionBudget allowing 0 disruptions, then the node's drain failing without naming
/// them (as real 4.16 messages do): both runs write the node's insight pointing at the pod and
/// the budget, the same objects.
async fn blocked_drain_is_looked_up_from_metadata(
    env: &TestEnv,
    admin: &Controller,
    mine: &Controller,
    admin_ns: &str,
    dir: &Path,
) -> TestResult {
    let ns = env.namespace("sa-drain").await?;
    let n = ns.name().to_string();
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "checkout-0", "namespace": n, "labels": {"app": "checkout"}},
        "spec": {"nodeName": DRAIN_NODE, "automountServiceAccountToken": false,
            "containers": [{"name": "app", "image": "example.invalid/app:1",
                "env": [{"name": "API_TOKEN", "value": SECRET}]}]}});
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "checkout-pdb", "namespace": n},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "checkout"}}}});
    // The namespace's default ServiceAccount comes a moment after the namespace.
    wait_for(TIMEOUT, "the pod to be created", || async {
        apply_file(env, dir, "drain-pod.json", &pod.to_string())
            .await
            .is_ok()
    })
    .await?;
    apply_file(env, dir, "drain-pdb.json", &pdb.to_string()).await?;
    // No disruption controller runs: the budget's status is what is written.
    env.kubectl_ok([
        "patch",
        "poddisruptionbudget",
        "checkout-pdb",
        "-n",
        &n,
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"disruptionsAllowed":0,"currentHealthy":1,"desiredHealthy":1,"expectedPods":1}}"#,
    ])
    .await?;
    env.kubectl_ok([
        "annotate",
        "node",
        DRAIN_NODE,
        "--overwrite",
        "machineconfiguration.openshift.io/state=Degraded",
        &format!(
            "machineconfiguration.openshift.io/reason=failed to drain node: {DRAIN_NODE} after 1 hour. Please see machine-config-controller logs for more information"
        ),
    ])
    .await?;
    let points_at_blockers = |objects: &BTreeMap<String, Value>| {
        objects.values().any(|o| {
            let related = o["status"]["health"]["related"].to_string();
            related.contains(r#""name":"checkout-0""#)
                && related.contains(r#""name":"checkout-pdb""#)
        })
    };
    let want = settled(env, admin, admin_ns, &points_at_blockers).await?;
    converged(
        env,
        &want,
        "the ServiceAccount's objects to equal the admin's (a drain looked up)",
        &mine.log,
    )
    .await?;
    assert!(points_at_blockers(&outputs(env, NS).await?));
    // No kubelet confirms the deletion of a pod bound to a node: forced, or its namespace
    // would stay Terminating (and the namespace controller's lists disturb later tests'
    // counts: web_guard waits for no namespace terminating).
    env.kubectl_ok([
        "delete",
        "pod",
        "checkout-0",
        "-n",
        &n,
        "--grace-period=0",
        "--force",
    ])
    .await?;
    ns.delete().await?;
    Ok(())
}

/// What the ServiceAccount `user` read of MachineConfigs and Pods, in the API server's audit
/// log (`hack/local-cluster.sh` audits exactly that, with the answers): lists of metadata only
/// (`PartialObjectMetadataList`), never a `get`, never [`SECRET`].
fn assert_reads_are_metadata_only(env: &TestEnv, user: &str) -> TestResult {
    let log = env
        .kubeconfig_path()
        .parent()
        .ok_or("no cluster folder")?
        .join("audit.log");
    let text = std::fs::read_to_string(&log).map_err(|e| {
        format!(
            "{}: {e} (a cluster started before hack/local-cluster.sh had an audit policy: restart it)",
            log.display()
        )
    })?;
    let mut problems = Vec::new();
    let mut lists: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if event["user"]["username"] != user {
            continue;
        }
        let resource = event["objectRef"]["resource"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let verb = event["verb"].as_str().unwrap_or_default();
        let uri = event["requestURI"].as_str().unwrap_or_default();
        if line.contains(SECRET) {
            problems.push(format!("{verb} {uri} answered the secret"));
        }
        match verb {
            "get" => problems.push(format!("get {uri}")),
            "list" if event["stage"] == "ResponseComplete" => {
                let kind = event["responseObject"]["kind"].as_str().unwrap_or_default();
                if kind != "PartialObjectMetadataList" {
                    problems.push(format!("list {uri} answered a {kind:?}"));
                }
                *lists.entry(resource).or_default() += 1;
            }
            _ => {}
        }
    }
    eprintln!("audited lists by the ServiceAccount: {lists:?}");
    for resource in ["machineconfigs", "pods"] {
        if !lists.contains_key(resource) {
            problems.push(format!("no list of {resource} audited"));
        }
    }
    assert!(
        problems.is_empty(),
        "the ServiceAccount read more than metadata ({}): {problems:#?}",
        log.display()
    );
    Ok(())
}

/// A log line saying the API server refused: `403` as a number of its own (not in a port like
/// 40327), or `forbidden`.
fn is_denial(line: &str) -> bool {
    let digit_at = |i: usize| line.as_bytes().get(i).is_some_and(u8::is_ascii_digit);
    line.to_ascii_lowercase().contains("forbidden")
        || line
            .match_indices("403")
            // No digit right before or after (before 0: usize::MAX, out of the line).
            .any(|(i, _)| ![i.wrapping_sub(1), i + 3].into_iter().any(digit_at))
}

/// The ServiceAccount's run led and was never refused.
fn assert_never_denied(log_path: &Path) -> TestResult {
    let log = std::fs::read_to_string(log_path)?;
    assert!(
        log.contains("became leader"),
        "the log was not captured: {}",
        log_path.display()
    );
    let denials: Vec<&str> = log.lines().filter(|l| is_denial(l)).collect();
    assert!(
        denials.is_empty(),
        "denied in the ServiceAccount's log {}: {denials:#?}",
        log_path.display()
    );
    Ok(())
}

fn has_alert_insight(objects: &BTreeMap<String, Value>) -> bool {
    objects
        .values()
        .any(|o| o["labels"]["update.openshift.io/source"] == "alert")
}

/// What the ServiceAccount `user` may do: watch its inputs (the MCO Deployment by name only),
/// write its outputs and its Lease in its namespace; and nothing else (no Secrets, no writes elsewhere or to its inputs).
///
/// `olm`: installed from the bundle, where the Roles of config/rbac outside the install
/// namespace (the MCO's Deployment, Events in `default`) are granted in every namespace
/// instead (docs/olm.md): those two checks move from denied to allowed, nothing else.
async fn assert_service_account_permissions(
    env: &TestEnv,
    user: &str,
    other_ns: &str,
    olm: bool,
) -> TestResult {
    let outputs_in = |ns| {
        [
            ("create", "updateinsights.update.openshift.io", Some(ns)),
            (
                "patch",
                "controlplaneupdatestatuses.update.openshift.io",
                Some(ns),
            ),
            (
                "patch",
                "workerpoolupdatestatuses.update.openshift.io/status",
                Some(ns),
            ),
            ("delete", "updateinsights.update.openshift.io", Some(ns)),
        ]
    };
    let mut allowed = vec![
        ("watch", "clusterversions.config.openshift.io", None),
        ("list", "clusteroperators.config.openshift.io", None),
        (
            "watch",
            "machineconfigpools.machineconfiguration.openshift.io",
            None,
        ),
        (
            "watch",
            "machineconfigs.machineconfiguration.openshift.io",
            None,
        ),
        (
            "list",
            "machineconfigs.machineconfiguration.openshift.io",
            None,
        ),
        ("watch", "nodes", None),
        ("watch", "updateinsights.update.openshift.io", Some(NS)),
        ("get", "leases.coordination.k8s.io", Some(NS)),
        ("create", "leases.coordination.k8s.io", Some(NS)),
        ("update", "leases.coordination.k8s.io", Some(NS)),
        // The one Deployment, by name (a list or watch with its field selector).
        ("get", MCO_DEPLOYMENT_RESOURCE, Some(MCO_NAMESPACE)),
        ("list", MCO_DEPLOYMENT_RESOURCE, Some(MCO_NAMESPACE)),
        ("watch", MCO_DEPLOYMENT_RESOURCE, Some(MCO_NAMESPACE)),
        // What blocks a failing drain (read on demand, never watched).
        ("list", "pods", Some("*")),
        ("list", "poddisruptionbudgets.policy", Some("*")),
        // The update's story, about cluster-scoped objects.
        ("create", "events.events.k8s.io", Some("default")),
        ("patch", "events.events.k8s.io", Some("default")),
    ];
    allowed.extend(outputs_in(NS));
    assert_can(env, user, true, &allowed).await?;
    let widened = [
        (
            "get",
            "deployments.apps/machine-config-operator",
            Some("default"),
        ),
        ("create", "events.events.k8s.io", Some(other_ns)),
    ];
    let mut denied = vec![
        ("list", "deployments.apps", Some(MCO_NAMESPACE)),
        (
            "get",
            "deployments.apps/machine-config-daemon",
            Some(MCO_NAMESPACE),
        ),
        ("patch", MCO_DEPLOYMENT_RESOURCE, Some(MCO_NAMESPACE)),
        ("list", "deployments.apps", Some("*")),
        ("get", "secrets", Some(NS)),
        ("list", "secrets", Some("*")),
        ("list", "configmaps", Some("kube-system")),
        ("create", "pods", Some(NS)),
        ("watch", "pods", Some("*")),
        ("get", "pods/log", Some("default")),
        ("delete", "events.events.k8s.io", Some("default")),
        ("update", "poddisruptionbudgets.policy", Some("default")),
        ("patch", "clusterversions.config.openshift.io", None),
        (
            "update",
            "clusteroperators.config.openshift.io/status",
            None,
        ),
        (
            "delete",
            "machineconfigpools.machineconfiguration.openshift.io",
            None,
        ),
        (
            "create",
            "machineconfigs.machineconfiguration.openshift.io",
            None,
        ),
        // Listed and watched metadata-only; never read one by one (issue #38).
        (
            "get",
            "machineconfigs.machineconfiguration.openshift.io/rendered-worker-e2e-secret",
            None,
        ),
        ("get", "pods", Some("default")),
        ("patch", "nodes", None),
        ("delete", "nodes", None),
        ("update", "leases.coordination.k8s.io", Some("kube-system")),
        (
            "list",
            "updateinsights.update.openshift.io",
            Some("default"),
        ),
    ];
    denied.extend(outputs_in("default"));
    denied.extend(outputs_in(other_ns));
    if olm {
        assert_can(env, user, true, &widened).await?;
    } else {
        denied.extend(widened);
    }
    assert_can(env, user, false, &denied).await?;
    Ok(())
}

/// A ServiceAccount of `admin_ns` bound only to the `update-status-viewer` ClusterRole may read
/// the outputs and nothing else, and `kubectl update-status` as it renders what cluster-admin
/// sees in `admin_ns` (the admin run's objects).
async fn assert_viewer_renders(env: &TestEnv, dir: &Path, admin_ns: &str) -> TestResult {
    let binding = format!("{admin_ns}-update-status-viewer");
    env.kubectl_ok(["create", "serviceaccount", "viewer", "-n", admin_ns])
        .await?;
    env.kubectl_ok([
        "create",
        "clusterrolebinding",
        &binding,
        "--clusterrole=update-status-viewer",
        &format!("--serviceaccount={admin_ns}:viewer"),
    ])
    .await?;
    let viewer = service_account_config(env, admin_ns, "viewer", dir).await?;
    assert_token_only(&viewer)?;
    let reads = [
        ("list", "updateinsights.update.openshift.io", Some(NS)),
        (
            "get",
            "controlplaneupdatestatuses.update.openshift.io",
            Some(NS),
        ),
        (
            "list",
            "workerpoolupdatestatuses.update.openshift.io",
            Some(NS),
        ),
    ];
    assert_can(env, &viewer.user, true, &reads).await?;
    let writes = [
        ("patch", "updateinsights.update.openshift.io", Some(NS)),
        (
            "delete",
            "controlplaneupdatestatuses.update.openshift.io",
            Some(NS),
        ),
        ("list", "nodes", None),
        ("get", "secrets", Some(NS)),
    ];
    assert_can(env, &viewer.user, false, &writes).await?;
    let plugin = workspace_bin("kubectl-update_status", "UPDATE_STATUS_CLI_BIN");
    let (out, err, ok) = run_as(&plugin, &viewer.kubeconfig, &["--now", ASSESS_AT])?;
    assert!(ok, "kubectl update-status as the viewer failed: {err}");
    for header in [
        "= Control Plane =",
        "Assessment:",
        "Target Version:  4.14.1 (from 4.14.0-rc.3)",
        "= Worker Upgrade =",
        "= Update Health =",
    ] {
        assert!(
            out.contains(header),
            "no {header:?} in the viewer's output:\n{out}"
        );
    }
    let admin_view = env.plugin(&["-n", admin_ns, "--now", ASSESS_AT])?;
    assert_eq!(
        out,
        String::from_utf8_lossy(&admin_view.stdout),
        "the viewer sees what cluster-admin sees"
    );
    env.kubectl_ok(["delete", "clusterrolebinding", &binding])
        .await?;
    Ok(())
}

#[test]
fn denials_are_found_in_log_lines() {
    assert!(is_denial("watch failed: ApiError: 403 Forbidden"));
    assert!(is_denial("code=403"));
    assert!(is_denial("clusterversions is forbidden: User cannot list"));
    assert!(!is_denial("serving /metrics addr=127.0.0.1:40327"));
    assert!(!is_denial("took 14030ms; 1403 objects"));
}

#[tokio::test]
async fn the_controller_runs_as_its_service_account_with_the_shipped_rbac() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    deploy(&env).await?;
    let admin_ns = env.namespace("sa-admin-run").await?;
    let dir = std::env::temp_dir().join(format!("update-status-e2e-sa-{}", admin_ns.name()));
    std::fs::create_dir_all(&dir)?;
    let sa = service_account_config(&env, NS, SA, &dir).await?;
    assert_token_only(&sa)?;

    assert_service_account_permissions(&env, &sa.user, admin_ns.name(), false).await?;

    // A real Prometheus with one firing alert, read with the ServiceAccount's token.
    let rules = json!({"groups": [{"name": "e2e", "rules": [
        {"alert": "E2EServiceAccount", "expr": "vector(1)",
         "labels": {"severity": "critical", "namespace": "openshift-e2e"},
         "annotations": {"summary": "Fires for the ServiceAccount test"}}]}]});
    let mut prom = Prometheus::start(PrometheusOptions {
        rules: rules.to_string(),
        tls: true,
        ..Default::default()
    })?;
    prom.wait_ready(TIMEOUT).await?;
    let ca = prom.ca_file().ok_or("no Prometheus CA file")?;
    let url = prom.url();
    let flags = |identity: &'static str| -> TestResult<Vec<String>> {
        Ok([
            "--leader-elect",
            "--leader-identity",
            identity,
            "--assess-at",
            ASSESS_AT,
            "--prometheus-url",
            &url,
            "--prometheus-ca-file",
            path(&ca)?,
            "--prometheus-token-file",
            path(&sa.token_file)?,
            "--prometheus-interval",
            "1s",
        ]
        .map(str::to_string)
        .to_vec())
    };
    let start = |kubeconfig: &Path, ns: &str, flags: Vec<String>| -> TestResult<Controller> {
        let launch = Launch {
            bin: release_bin(
                "update-status-controller",
                "UPDATE_STATUS_CONTROLLER_RELEASE_BIN",
            ),
            kubeconfig: kubeconfig.to_path_buf(),
            log: dir.join(format!("controller-{ns}.log")),
        };
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        Ok(Controller::launch(&launch, ns, free_port()?, &flags)?)
    };

    // 1. A captured cluster: the ServiceAccount's run writes what the admin's writes. One more
    //    MachineConfig holds a secret in its spec, as a rendered one holds the pull secret.
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    apply_file(&env, &dir, "secret-mc.yaml", &secret_machine_config()).await?;
    let admin = start(env.kubeconfig_path(), admin_ns.name(), flags("admin-run")?)?;
    let mut mine = start(&sa.kubeconfig, NS, flags("sa-run")?)?;
    let want = settled(&env, &admin, admin_ns.name(), |o| {
        o.get("ControlPlaneUpdateStatus/cluster")
            .is_some_and(|cp| cp["status"]["nodes"]["total"] == 3)
            && has_alert_insight(o)
    })
    .await?;
    converged(
        &env,
        &want,
        "the ServiceAccount's objects to equal the admin's (snapshot)",
        &mine.log,
    )
    .await?;
    let holder = env
        .kubectl_ok([
            "get",
            "lease",
            SA,
            "-n",
            NS,
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ])
        .await?;
    assert_eq!(holder, "sa-run", "the ServiceAccount's run holds the Lease");
    eprintln!(
        "snapshot: {} objects, the same as cluster-admin's",
        want.len()
    );

    // 2. update-status-viewer alone is enough for `kubectl update-status`.
    assert_viewer_renders(&env, &dir, admin_ns.name()).await?;

    // 2b. A drain that fails without saying why: both runs look up the pods on the node and the
    //     budgets, and point at them; then what the ServiceAccount read, in the API server's
    //     audit log: MachineConfigs and Pods as metadata only (issue #38 item 9).
    blocked_drain_is_looked_up_from_metadata(&env, &admin, &mine, admin_ns.name(), &dir).await?;
    assert_reads_are_metadata_only(&env, &sa.user)?;

    // 2c. Installed as OLM would from the bundle: config/default's RBAC and Deployment go, the
    //     CSV's install strategy comes; the ServiceAccount's controller restarts with the
    //     Deployment's arguments and a token of the ServiceAccount OLM created.
    assert_never_denied(&mine.log)?;
    let olm_started = Instant::now();
    mine.terminate()?;
    let deadline = Instant::now() + TIMEOUT;
    while mine.exit_status().is_none() {
        if Instant::now() > deadline {
            return Err(format!(
                "the config/default run did not exit on SIGTERM ({})",
                mine.log.display()
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(mine);
    validate_bundle(&dir)?;
    let csv_args = install_as_olm(&env, &dir).await?;
    let sa = service_account_config(&env, NS, SA, &dir).await?;
    assert_token_only(&sa)?;
    assert_service_account_permissions(&env, &sa.user, admin_ns.name(), true).await?;
    let mut olm_flags = deployment_flags(&csv_args);
    olm_flags.extend(flags("sa-run")?);
    let mine = start(&sa.kubeconfig, NS, olm_flags)?;
    eprintln!(
        "OLM install: switched in {:.1}s (its Deployment's own flags kept: {:?})",
        olm_started.elapsed().as_secs_f64(),
        deployment_flags(&csv_args)
    );

    // 3. A simulated update with a drain blocked for 2 steps (the insight it raises is deleted
    //    when it clears): at every step and at the end, the same objects as the admin's.
    let client = env.client();
    playback::clear(&client).await?;
    let sim = Simulation::new(SimConfig {
        operators: 4,
        nodes_per_pool: 3,
        max_unavailable: 1,
        seed: 5,
        start: "2026-01-01T03:00:00Z".parse()?,
        step: SignedDuration::from_secs(60),
        faults: Faults {
            blocked_drain: Some(FaultSpec::auto(2)),
            ..Default::default()
        },
        ..Default::default()
    })?;
    let mut simulator = Simulator::new(client.clone(), sim);
    simulator.install().await?;
    let mut degraded_steps = 0;
    loop {
        let step = simulator.simulation().steps();
        let want = settled(&env, &admin, admin_ns.name(), |o| {
            o.contains_key("ControlPlaneUpdateStatus/cluster")
        })
        .await?;
        converged(
            &env,
            &want,
            &format!("the ServiceAccount's objects to equal the admin's at step {step}"),
            &mine.log,
        )
        .await?;
        if want
            .values()
            .any(|o| o["status"]["health"]["source"] == SOURCE_NODE_DEGRADED)
        {
            degraded_steps += 1;
        }
        if simulator.simulation().is_completed() {
            let cp = &want["ControlPlaneUpdateStatus/cluster"]["status"];
            assert_eq!(cp["assessment"], "Completed", "{cp}");
            assert!(!has_alert_insight(&want), "alert insights after the update");
            break;
        }
        if step > 200 {
            return Err("the simulated update did not complete in 200 steps".into());
        }
        simulator.step().await?;
    }
    assert!(degraded_steps > 0, "the blocked drain never showed");
    eprintln!(
        "simulated update: {} steps, the same objects as cluster-admin's at each",
        simulator.simulation().steps()
    );

    // 4. Never denied.
    assert_never_denied(&mine.log)?;
    drop((admin, mine));
    remove_olm_install(&env).await?;
    std::fs::remove_dir_all(&dir)?; // the tokens (logs too: the test passed)
    Ok(())
}
