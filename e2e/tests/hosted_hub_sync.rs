//! The hub sync in hosted mode against a real control plane, the same API server playing the
//! fleet hub: each simulated HostedCluster is reported as a managed cluster of its own, into the
//! hub namespace named after it (or after its ACM annotation
//! `cluster.open-cluster-management.io/managedcluster-name`), with only its own objects. Checked
//! as a fleet admin would see it: the copies equal the hosted cluster's objects (names, labels,
//! status, no owners), `kubectl update-status --fleet` lists the hosted clusters, changes are
//! mirrored, nothing is written in a steady state, a HostedCluster merely named like the
//! managed cluster another one is imported as (its ACM annotation) is refused, from the start
//! (and its metric says so), an annotation never takes the name of a running holder, not even
//! after a restart (issue #48), a renamed managed cluster moves its
//! copies, a deleted HostedCluster's copies are deleted, freeing its name, and a refused one's
//! series goes with it.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::Duration;

use serde_json::Value;
use update_status_e2e::controller::Controller;
use update_status_e2e::hosted_objects::{ClusterRbacGuard, install_hosted_crds};
use update_status_e2e::hub_copies::{ACM_LABEL, KINDS, Local, list, name, wait_mirrored};
use update_status_e2e::playback::HostedSimulator;
use update_status_e2e::{TestEnv, quiet_period, wait_for};
use update_status_simulator::hosted::{HostedSimConfig, HostedSimulation};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

const TIMEOUT: Duration = Duration::from_secs(120);
/// The instant the controller evaluates at (`--assess-at`): time alone changes nothing.
const NOW: &str = "2026-01-01T09:10:00Z";
const ANNOTATION: &str = "cluster.open-cluster-management.io/managedcluster-name";

/// A small simulated hosted cluster.
fn simulator(env: &TestEnv, ns: &str, name: &str, seed: u64) -> Result<HostedSimulator, BoxError> {
    let sim = HostedSimulation::new(HostedSimConfig {
        namespace: ns.to_string(),
        name: name.to_string(),
        replace_replicas: 2,
        in_place_replicas: 2,
        start: "2026-01-01T09:00:00Z".parse()?,
        step: jiff::SignedDuration::from_secs(5),
        seed,
        ..Default::default()
    })?;
    Ok(HostedSimulator::new(env.client(), sim))
}

async fn annotate(env: &TestEnv, ns: &str, hc: &str, managed: &str) -> TestResult {
    env.kubectl_ok([
        "annotate",
        "hostedcluster",
        hc,
        "-n",
        ns,
        "--overwrite",
        &format!("{ANNOTATION}={managed}"),
    ])
    .await?;
    Ok(())
}

/// Our copies in hub namespace `ns` (any kind).
async fn copies_in(env: &TestEnv, ns: &str) -> Result<usize, BoxError> {
    let mut n = 0;
    for kind in KINDS {
        n += list(env, kind, ns)
            .await?
            .iter()
            .filter(|o| !o["metadata"]["labels"][ACM_LABEL].is_null())
            .count();
    }
    Ok(n)
}

/// The writes of copies to the hub (not the heartbeat: one write per `--hub-heartbeat-interval`
/// and hosted cluster, e2e `acm_agent`'s).
fn hub_writes(c: &Controller) -> Result<f64, BoxError> {
    Ok(c.metrics()?
        .lines()
        .filter(|l| {
            l.starts_with("update_status_hub_writes_total{") && !l.contains("verb=\"heartbeat\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

/// The line of metric `name` of a hosted cluster (its only label) in `c`'s `/metrics`, if any.
fn hosted_metric(c: &Controller, name: &str, hc: &str) -> Option<String> {
    let prefix = format!("{name}{{hosted_cluster=\"{hc}\"}}");
    c.metrics()
        .ok()?
        .lines()
        .find(|l| l.starts_with(&prefix))
        .map(str::to_string)
}

/// The `update_status_hub_sync_up` line of a hosted cluster, if any.
fn hub_up(c: &Controller, hc: &str) -> Option<String> {
    hosted_metric(c, "update_status_hub_sync_up", hc)
}

#[tokio::test]
async fn each_hosted_cluster_is_reported_to_the_hub_as_a_managed_cluster() -> TestResult {
    let env = TestEnv::new().await?;
    install_hosted_crds(&env).await?;
    let clusters_ns = env.namespace("hosted-hub").await?;
    let ns = clusters_ns.name().to_string();
    // The hub namespaces (the managed clusters' names). HostedCluster `alpha` is imported as
    // managed cluster `a` (the ACM annotation), `b` under another name too; `zeta`, a
    // tenant's HostedCluster, is named `a` without the annotation (issue #38): the imported
    // mapping wins, from the controller's start (no session holds the name yet).
    let hub_a = env.namespace("hub-a").await?;
    let hub_b = env.namespace("hub-b").await?;
    let hub_b2 = env.namespace("hub-b2").await?;
    let (a, alpha, b) = (hub_a.name().to_string(), "alpha", "bravo");
    let zeta = a.as_str();
    let mut sim_a = simulator(&env, &ns, alpha, 11)?;
    let mut sim_b = simulator(&env, &ns, b, 12)?;
    let mut sim_zeta = simulator(&env, &ns, zeta, 13)?;
    for s in [&mut sim_a, &mut sim_b, &mut sim_zeta] {
        s.install().await?;
        for _ in 0..3 {
            s.step().await?;
        }
    }
    annotate(&env, &ns, alpha, &a).await?;
    annotate(&env, &ns, b, hub_b.name()).await?;

    let hub_kubeconfig = env.kubeconfig_path().display().to_string();
    let controller = Controller::start(
        &env,
        &ns,
        &[
            "--mode=hosted",
            "--watch-namespace",
            &ns,
            "--hub-kubeconfig",
            &hub_kubeconfig,
            "--assess-at",
            NOW,
        ],
    )?;
    let log = controller.log.clone();
    let local = |hc| Local {
        namespace: &ns,
        hosted_cluster: Some(hc),
        owner_uid: None,
    };

    // 1. Each hosted cluster in its own hub namespace, with its own objects only.
    wait_mirrored(&env, local(alpha), &a, false, "alpha's copies", &log).await?;
    wait_mirrored(&env, local(b), hub_b.name(), false, "b's copies", &log).await?;
    let cp = list(&env, "controlplaneupdatestatuses", hub_b.name()).await?;
    assert_eq!(cp.len(), 1);
    assert_eq!(
        name(&cp[0]),
        hub_b.name(),
        "named after the managed cluster"
    );
    assert_eq!(
        cp[0]["metadata"]["labels"]["update.openshift.io/cluster"], b,
        "the hosted cluster's label is kept"
    );

    // 2. The fleet view lists the hosted clusters like any managed cluster (this API server
    //    also holds the hosted clusters' own objects, listed as rows of their namespace).
    let out = env.plugin(&["--fleet", "-o", "json"])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout)?;
    for cluster in [a.as_str(), hub_b.name()] {
        let row = report["clusters"]
            .as_array()
            .and_then(|rows| {
                rows.iter()
                    .find(|r| r["cluster"] == cluster && r["namespace"] == cluster)
            })
            .ok_or_else(|| format!("no fleet row for {cluster}: {report}"))?;
        assert_eq!(row["to"], "4.18.3", "{row}");
        assert_eq!(row["workerNodes"], 4, "two NodePools of two: {row}");
    }

    // 3. The name `zeta` is named after is refused for zeta only, and its metric says so.
    let (key_a, key_zeta) = (format!("{ns}/{alpha}"), format!("{ns}/{zeta}"));
    wait_for(TIMEOUT, "zeta's hub sync reported down", || async {
        hub_up(&controller, &key_zeta).is_some_and(|l| l.ends_with(" 0"))
    })
    .await?;
    assert!(
        hub_up(&controller, &key_a).is_some_and(|l| l.ends_with(" 1")),
        "{:?}",
        hub_up(&controller, &key_a)
    );
    let text = std::fs::read_to_string(&log)?;
    assert!(
        text.contains(&format!(
            "is claimed by HostedCluster {key_a} through the annotation"
        )),
        "the log says why zeta is not reported"
    );

    // 4. Changes are mirrored; then a steady state writes nothing to the hub.
    for _ in 0..4 {
        sim_a.step().await?;
    }
    wait_mirrored(
        &env,
        local(alpha),
        &a,
        false,
        "alpha's copies after 4 steps",
        &log,
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = hub_writes(&controller)?;
    tokio::time::sleep(quiet_period(6)).await;
    assert_eq!(
        hub_writes(&controller)?,
        before,
        "steady state: no hub writes"
    );

    // 5. A renamed managed cluster moves its copies; first to a name without a hub namespace
    //    (reported down), then to one with it: the session of the missing namespace has
    //    nothing to delete and ends without reporting b down again.
    let key_b = format!("{ns}/{b}");
    let missing = format!("{}-missing", hub_b2.name());
    annotate(&env, &ns, b, &missing).await?;
    wait_for(TIMEOUT, "b reported down (no hub namespace)", || async {
        hub_up(&controller, &key_b).is_some_and(|l| l.ends_with(" 0"))
    })
    .await?;
    wait_for(TIMEOUT, "the old name's copies deleted", || async {
        copies_in(&env, hub_b.name()).await.is_ok_and(|n| n == 0)
    })
    .await?;
    annotate(&env, &ns, b, hub_b2.name()).await?;
    wait_mirrored(
        &env,
        local(b),
        hub_b2.name(),
        false,
        "b's copies, renamed",
        &log,
    )
    .await?;
    wait_for(TIMEOUT, "b reported up", || async {
        hub_up(&controller, &key_b).is_some_and(|l| l.ends_with(" 1"))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        hub_up(&controller, &key_b).is_some_and(|l| l.ends_with(" 1")),
        "the retired session of the missing namespace does not report b down: {:?}",
        hub_up(&controller, &key_b)
    );

    // 6. A deleted HostedCluster's copies are deleted and its series go; its name is free, so
    //    zeta now reports under it.
    env.kubectl_ok(["delete", "hostedcluster", alpha, "-n", &ns, "--wait=false"])
        .await?;
    wait_mirrored(
        &env,
        local(zeta),
        &a,
        false,
        "zeta's copies under alpha's former name",
        &log,
    )
    .await?;
    let cp = list(&env, "controlplaneupdatestatuses", &a).await?;
    assert_eq!(
        cp[0]["metadata"]["labels"]["update.openshift.io/cluster"], zeta,
        "only zeta's objects are in the namespace now"
    );
    wait_for(TIMEOUT, "alpha's hub series removed", || async {
        hub_up(&controller, &key_a).is_none()
    })
    .await?;
    assert!(hub_up(&controller, &key_zeta).is_some_and(|l| l.ends_with(" 1")));

    // 7. A name that cannot be a namespace: refused (series 0), the old copies deleted; the
    //    HostedCluster deleted while refused: its series go.
    annotate(&env, &ns, b, "Not_A_Label").await?;
    wait_for(TIMEOUT, "b refused", || async {
        hub_up(&controller, &key_b).is_some_and(|l| l.ends_with(" 0"))
    })
    .await?;
    wait_for(TIMEOUT, "b's copies deleted", || async {
        copies_in(&env, hub_b2.name()).await.is_ok_and(|n| n == 0)
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        hub_up(&controller, &key_b).is_some_and(|l| l.ends_with(" 0")),
        "still reported down once its old session ended: {:?}",
        hub_up(&controller, &key_b)
    );
    env.kubectl_ok(["delete", "hostedcluster", b, "-n", &ns, "--wait=false"])
        .await?;
    wait_for(TIMEOUT, "b's hub series removed", || async {
        hub_up(&controller, &key_b).is_none()
    })
    .await?;
    drop(controller);
    Ok(())
}

/// The namespace of config/hosted's ServiceAccount (and the Lease).
const DEPLOY_NS: &str = "openshift-update-status";
/// The add-on's hub-kubeconfig Secret, as OCM's registration agent names it.
const ADDON_SECRET: &str = "update-status-hub-kubeconfig";

/// Creates (or replaces) the add-on Secret of managed cluster `cluster` in namespace `ns`: a
/// fresh client certificate of the add-on agent's identity for that cluster, signed by the
/// control plane's CA, as OCM's registration agent writes it (kubeconfig naming `tls.crt` and
/// `tls.key`, key `cluster-name`).
async fn addon_secret(env: &TestEnv, ns: &str, cluster: &str) -> TestResult {
    addon_secret_to(env, ns, cluster, None).await
}

/// [`addon_secret`] with a kubeconfig naming `server` instead of the hub (`None`: the hub).
async fn addon_secret_to(
    env: &TestEnv,
    ns: &str,
    cluster: &str,
    server: Option<&str>,
) -> TestResult {
    let dir = env
        .cluster_dir()
        .ok_or("the test needs the control plane's CA: run it with make e2e")?;
    let work = std::env::temp_dir().join(format!("update-status-e2e-addon-{ns}-{cluster}"));
    let cert = update_status_e2e::certs::client_cert(
        dir,
        &work,
        &format!(
            "system:open-cluster-management:cluster:{cluster}:addon:update-status:agent:update-status-agent"
        ),
        // The group OCM gives the agent of this cluster (the one the hub Role is bound to).
        &[&format!(
            "system:open-cluster-management:cluster:{cluster}:addon:update-status"
        )],
    )?;
    let (hub_server, ca) = update_status_e2e::certs::server_and_ca(env)?;
    let server = server.map_or(hub_server, str::to_string);
    let files = [
        (
            "kubeconfig",
            update_status_e2e::certs::addon_kubeconfig(&server, &ca).into_bytes(),
        ),
        ("tls.crt", cert.cert),
        ("tls.key", cert.key),
        ("cluster-name", cluster.as_bytes().to_vec()),
    ];
    let mut args = vec![
        "create".to_string(),
        "secret".into(),
        "generic".into(),
        ADDON_SECRET.into(),
        "-n".into(),
        ns.into(),
        "--dry-run=client".into(),
        "-o".into(),
        "json".into(),
    ];
    for (k, v) in &files {
        let p = work.join(k);
        std::fs::write(&p, v)?;
        args.push(format!("--from-file={k}={}", p.display()));
    }
    let secret = env.kubectl_ok(args).await?;
    let file = work.join("secret.json");
    std::fs::write(&file, secret)?;
    env.kubectl_ok([
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        &file.display().to_string(),
    ])
    .await?;
    Ok(())
}

/// The hub Role of the hub sync, bound to the add-on identity of `cluster` in its namespace.
async fn bind_hub_role(env: &TestEnv, cluster: &str) -> TestResult {
    let role = update_status_e2e::repo_root().join("config/hub/role.yaml");
    env.kubectl_ok(["apply", "-n", cluster, "-f", &role.display().to_string()])
        .await?;
    env.kubectl_ok([
        "create",
        "rolebinding",
        "update-status-addon",
        "-n",
        cluster,
        "--role=update-status-hub-sync",
        &format!("--group=system:open-cluster-management:cluster:{cluster}:addon:update-status"),
    ])
    .await?;
    Ok(())
}

fn counter(c: &Controller, name: &str, hc: &str) -> f64 {
    let prefix = format!("{name}{{hosted_cluster=\"{hc}\"}} ");
    c.metrics()
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix(&prefix).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0.0)
}

/// Under ACM, hosted clusters are managed clusters of their own, and `--hub-addon-secrets`
/// makes each write its copies with its own add-on identity (the Secret OCM's registration agent
/// writes for it), not one shared: checked with the controller running as config/hosted's
/// ServiceAccount with config/rbac/hosted/hub-addon-secrets (the Secrets watched by name), two
/// hosted clusters, one identity's permissions revoked (only its cluster stops, and comes back)
/// and one Secret renewed (the session switches to it, no failed pass).
#[tokio::test]
async fn each_hosted_cluster_writes_with_its_own_addon_identity() -> TestResult {
    let env = TestEnv::new().await?;
    install_hosted_crds(&env).await?;
    // config/hosted binds the ServiceAccount config/default binds too: removed at the end, or
    // the service_account test finds hosted mode's writes allowed in every namespace.
    let _rbac = ClusterRbacGuard {
        kubeconfig: env.kubeconfig_path().to_path_buf(),
        objects: [
            "clusterrolebinding/update-status-controller-hosted",
            "clusterrole/update-status-controller-hosted",
            "clusterrolebinding/update-status-controller-hub-addon-secrets",
            "clusterrole/update-status-controller-hub-addon-secrets",
        ]
        .map(String::from)
        .to_vec(),
    };
    let clusters_ns = env.namespace("hosted-acm").await?;
    let ns = clusters_ns.name().to_string();
    let hub_p = env.namespace("hub-p").await?;
    let hub_q = env.namespace("hub-q").await?;
    let (p, q) = ("papa", "quebec");
    let mut sims = [simulator(&env, &ns, p, 21)?, simulator(&env, &ns, q, 22)?];
    for s in &mut sims {
        s.install().await?;
        for _ in 0..3 {
            s.step().await?;
        }
    }
    annotate(&env, &ns, p, hub_p.name()).await?;
    annotate(&env, &ns, q, hub_q.name()).await?;
    for hub in [hub_p.name(), hub_q.name()] {
        bind_hub_role(&env, hub).await?;
        // The management cluster is this API server too: the Secret in the hub namespace's
        // name (--hub-addon-secret-namespace={cluster}).
        addon_secret(&env, hub, hub).await?;
    }

    // The controller as config/hosted's ServiceAccount, with the add-on Secrets' role only.
    let root = update_status_e2e::repo_root();
    for k in ["config/hosted", "config/rbac/hosted/hub-addon-secrets"] {
        env.kubectl_ok([
            "apply",
            "--server-side",
            "--field-manager=update-status-deploy",
            "-k",
            &root.join(k).display().to_string(),
        ])
        .await?;
    }
    let dir = std::env::temp_dir().join(format!("update-status-e2e-hosted-acm-{ns}"));
    std::fs::create_dir_all(&dir)?;
    let sa = update_status_e2e::kubeconfig::service_account_config(
        &env,
        DEPLOY_NS,
        "update-status-controller",
        &dir,
    )
    .await?;
    // The hub the Secrets must name (issue #48 item 14): this API server, as the ServiceAccount's
    // kubeconfig names it (its user is not used for the hub).
    let hub_named = sa.kubeconfig.display().to_string();
    let controller = Controller::start_via(
        &sa.kubeconfig,
        DEPLOY_NS,
        &[
            "--mode=hosted",
            "--watch-namespace",
            &ns,
            "--hub-kubeconfig",
            &hub_named,
            "--hub-addon-secrets",
            "--hub-addon-secret-namespace={cluster}",
            "--assess-at",
            NOW,
        ],
    )?;
    let log = controller.log.clone();
    let local = |hc| Local {
        namespace: &ns,
        hosted_cluster: Some(hc),
        owner_uid: None,
    };

    // 1. Each hosted cluster's copies, written with its own identity.
    wait_mirrored(&env, local(p), hub_p.name(), false, "p's copies", &log).await?;
    wait_mirrored(&env, local(q), hub_q.name(), false, "q's copies", &log).await?;
    let (key_p, key_q) = (format!("{ns}/{p}"), format!("{ns}/{q}"));

    // 2. p's identity loses its permissions: p's session only is forbidden, and says so.
    env.kubectl_ok([
        "delete",
        "rolebinding",
        "update-status-addon",
        "-n",
        hub_p.name(),
    ])
    .await?;
    sims[0].step().await?;
    sims[1].step().await?;
    wait_for(
        TIMEOUT,
        "p's hub sync reported down (forbidden)",
        || async { hub_up(&controller, &key_p).is_some_and(|l| l.ends_with(" 0")) },
    )
    .await?;
    wait_mirrored(&env, local(q), hub_q.name(), false, "q unaffected", &log).await?;
    assert!(hub_up(&controller, &key_q).is_some_and(|l| l.ends_with(" 1")));
    let text = std::fs::read_to_string(&log)?;
    assert!(
        text.contains("forbidden") && text.contains(hub_p.name()),
        "the log names the hub namespace and the reason"
    );
    // Given back: p recovers.
    bind_hub_role(&env, hub_p.name()).await?;
    wait_mirrored(&env, local(p), hub_p.name(), false, "p recovered", &log).await?;

    // 3. q's certificate renewed in its Secret: its session switches to it, no failed pass.
    let failures = |c: &Controller| {
        c.metrics()
            .ok()
            .map(|m| {
                m.lines()
                    .filter(|l| {
                        l.starts_with(&format!(
                            "update_status_hub_sync_errors_total{{hosted_cluster=\"{key_q}\""
                        ))
                    })
                    .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                    .sum::<f64>()
            })
            .unwrap_or(0.0)
    };
    let before = failures(&controller);
    addon_secret(&env, hub_q.name(), hub_q.name()).await?;
    wait_for(TIMEOUT, "q switched to its renewed credentials", || async {
        counter(
            &controller,
            "update_status_hub_credential_reloads_total",
            &key_q,
        ) >= 1.0
    })
    .await?;
    sims[1].step().await?;
    wait_mirrored(
        &env,
        local(q),
        hub_q.name(),
        false,
        "q after its renewal",
        &log,
    )
    .await?;
    assert_eq!(
        failures(&controller),
        before,
        "no failed hub call for the renewal"
    );

    // 4. Issue #48 item 14: whoever creates a managed cluster's Secret namespace first (a
    //    tenant) writes a Secret naming that cluster and a server of its own: the Secret is
    //    refused, and not one connection reaches that server.
    let hub_r = env.namespace("hub-r").await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let fake = format!("https://{}", listener.local_addr()?);
    let reached = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter_task = {
        let reached = reached.clone();
        tokio::spawn(async move {
            while listener.accept().await.is_ok() {
                reached.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        })
    };
    addon_secret_to(&env, hub_r.name(), hub_r.name(), Some(&fake)).await?;
    let mut sim_r = simulator(&env, &ns, "romeo", 23)?;
    sim_r.install().await?;
    sim_r.step().await?;
    annotate(&env, &ns, "romeo", hub_r.name()).await?;
    wait_for(TIMEOUT, "the tenant's Secret refused (log)", || async {
        std::fs::read_to_string(&log).is_ok_and(|t| {
            t.contains("not the hub of --hub-kubeconfig") && t.contains(hub_r.name())
        })
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        reached.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no connection to the server the tenant's Secret names"
    );
    assert_eq!(copies_in(&env, hub_r.name()).await?, 0);
    counter_task.abort();
    drop(controller);
    Ok(())
}

/// The `hosted-cluster` label of the ControlPlaneUpdateStatus copy in hub namespace `ns`.
async fn holder_on_hub(env: &TestEnv, ns: &str) -> Result<Option<String>, BoxError> {
    let cp = list(env, "controlplaneupdatestatuses", ns).await?;
    Ok(cp.first().and_then(|o| {
        o["metadata"]["labels"]["update.openshift.io/hosted-cluster"]
            .as_str()
            .map(str::to_string)
    }))
}

/// The `update_status_hub_name_refused` line of a hosted cluster, if any.
fn name_refused(c: &Controller, hc: &str) -> Option<String> {
    hosted_metric(c, "update_status_hub_name_refused", hc)
}

/// Issue #48 item 1: a tenant annotates its own HostedCluster with the managed-cluster name of
/// a running cluster that the multicluster engine imported under its own name (no annotation).
/// Before, the annotation ranked above the holder: the victim's session was retired, its copies
/// deleted, and the tenant's cluster reported under the victim's name. Now the holder keeps the
/// name, the newcomer is refused (log, metric, Event), and after a restart with both present the
/// holder still reports (read back from its copies' `hosted-cluster` label on the hub).
#[tokio::test]
async fn an_annotation_never_takes_a_running_clusters_hub_name() -> TestResult {
    let env = TestEnv::new().await?;
    install_hosted_crds(&env).await?;
    let clusters_ns = env.namespace("hosted-steal").await?;
    let ns = clusters_ns.name().to_string();
    let hub_v = env.namespace("hub-v").await?;
    // The victim is named like its managed cluster (MCE's default import: no annotation).
    let (victim, tenant) = (hub_v.name().to_string(), "mine");
    let mut sim_v = simulator(&env, &ns, &victim, 31)?;
    let mut sim_t = simulator(&env, &ns, tenant, 32)?;
    for s in [&mut sim_v, &mut sim_t] {
        s.install().await?;
        for _ in 0..3 {
            s.step().await?;
        }
    }
    let hub_kubeconfig = env.kubeconfig_path().display().to_string();
    let flags = [
        "--mode=hosted",
        "--watch-namespace",
        &ns,
        "--hub-kubeconfig",
        &hub_kubeconfig,
        "--assess-at",
        NOW,
    ];
    let controller = Controller::start(&env, &ns, &flags)?;
    let local = |hc| Local {
        namespace: &ns,
        hosted_cluster: Some(hc),
        owner_uid: None,
    };
    let (key_v, key_t) = (format!("{ns}/{victim}"), format!("{ns}/{tenant}"));
    let victim_label = format!("{ns}.{victim}");
    wait_mirrored(
        &env,
        local(&victim),
        &victim,
        false,
        "the victim's copies",
        &controller.log,
    )
    .await?;

    // 1. The tenant's annotation, while the victim runs: refused, reported, nothing moves.
    annotate(&env, &ns, tenant, &victim).await?;
    wait_for(TIMEOUT, "the tenant's claim refused (metric)", || async {
        name_refused(&controller, &key_t).is_some_and(|l| l.ends_with(" 1"))
    })
    .await?;
    let text = std::fs::read_to_string(&controller.log)?;
    assert!(
        text.contains(&format!(
            "is held by HostedCluster {key_v}, which reports under it"
        )),
        "the log names the holder"
    );
    wait_for(
        TIMEOUT,
        "a HubNameRefused Event on the tenant's HostedCluster",
        || async {
            env.kubectl_ok([
                "get",
                "events",
                "-n",
                &ns,
                "--field-selector",
                &format!("involvedObject.name={tenant},reason=HubNameRefused"),
                "-o",
                "name",
            ])
            .await
            .is_ok_and(|o| !o.trim().is_empty())
        },
    )
    .await?;
    sim_v.step().await?;
    sim_t.step().await?;
    wait_mirrored(
        &env,
        local(&victim),
        &victim,
        false,
        "the victim's copies, still its own",
        &controller.log,
    )
    .await?;
    assert_eq!(
        holder_on_hub(&env, &victim).await?,
        Some(victim_label.clone())
    );
    assert!(hub_up(&controller, &key_v).is_some_and(|l| l.ends_with(" 1")));
    assert!(name_refused(&controller, &key_v).is_none());
    drop(controller);

    // 2. Restarted with both present: the hub's copies say who holds the name.
    let controller = Controller::start(&env, &ns, &flags)?;
    wait_for(TIMEOUT, "the tenant refused after the restart", || async {
        name_refused(&controller, &key_t).is_some_and(|l| l.ends_with(" 1"))
    })
    .await?;
    sim_v.step().await?;
    wait_mirrored(
        &env,
        local(&victim),
        &victim,
        false,
        "the victim's copies after the restart",
        &controller.log,
    )
    .await?;
    wait_for(
        TIMEOUT,
        "the victim reporting after the restart",
        || async { hub_up(&controller, &key_v).is_some_and(|l| l.ends_with(" 1")) },
    )
    .await?;
    assert_eq!(holder_on_hub(&env, &victim).await?, Some(victim_label));
    let text = std::fs::read_to_string(&controller.log)?;
    assert!(
        text.contains("read who holds it on the hub")
            && text.contains(&format!("is held by HostedCluster {key_v}")),
        "the log says the holder was read back from the hub"
    );

    // 3. The victim deleted: the name is free, and the tenant's annotation now gets it.
    env.kubectl_ok([
        "delete",
        "hostedcluster",
        &victim,
        "-n",
        &ns,
        "--wait=false",
    ])
    .await?;
    wait_mirrored(
        &env,
        local(tenant),
        &victim,
        false,
        "the tenant's copies once the name is free",
        &controller.log,
    )
    .await?;
    wait_for(TIMEOUT, "the tenant's refusal series gone", || async {
        name_refused(&controller, &key_t).is_none()
    })
    .await?;
    drop(controller);
    Ok(())
}
