//! Secrets never leave, and logs are plain text: the controller runs with a credentialed
//! Prometheus URL (`https://user:<secret>@127.0.0.1:<closed port>`, so the "alerts unavailable"
//! insight appears and every error quotes the URL), then (the two cannot go together) with a
//! secret in its bearer-token file instead, each time
//! with `--hub-kubeconfig` to the same API server (as `hub_sync.rs` does) so its insights are
//! copied to a hub namespace. Every log line, every object of both namespaces and every hub copy
//! is searched for the secret; the log (a file, not a terminal) must hold no escape byte.
//! Also: a bearer token or a password to an `http://` URL is refused at start, naming the flag
//! that allows it.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::time::Duration;

use update_status_e2e::controller::{Controller, run_without_cluster, workspace_bin};
use update_status_e2e::prometheus::free_port;
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case, poll_until};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(90);
const SECRET: &str = "s3cretPassw0rd";
const TOKEN: &str = "t0kenValue-9f8e7d";
const KINDS: [&str; 3] = [
    "controlplaneupdatestatuses",
    "workerpoolupdatestatuses",
    "updateinsights",
];

async fn dump(env: &TestEnv, ns: &str) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let mut all = String::new();
    for kind in KINDS {
        all.push_str(
            &env.kubectl_ok(["get", kind, "-n", ns, "-o", "json"])
                .await?,
        );
    }
    Ok(all)
}

#[tokio::test]
async fn no_secret_in_logs_objects_or_hub_copies_and_no_colour_in_a_log_file() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    // A closed port: every poll fails, and the error quotes the URL polled. The URL's password
    // (Basic authentication) and a bearer-token file cannot go together: one run each.
    let port = free_port()?;
    leaves_no_secret(
        &env,
        &format!("https://user:{SECRET}@127.0.0.1:{port}"),
        false,
    )
    .await?;
    leaves_no_secret(&env, &format!("https://127.0.0.1:{port}"), true).await
}

/// One controller with Prometheus at `url` (and the bearer-token file holding [`TOKEN`] if
/// `with_token`), copying to a hub namespace: neither secret in its log, its objects or the hub
/// copies.
async fn leaves_no_secret(env: &TestEnv, url: &str, with_token: bool) -> TestResult {
    let local = env.namespace("secrets").await?;
    let hub = env.namespace("secrets-hub").await?;
    let dir = std::env::temp_dir().join(format!("us-secrets-{}", local.name()));
    std::fs::create_dir_all(&dir)?;
    let token = dir.join("token");
    std::fs::write(&token, format!("{TOKEN}\n"))?;
    let token = token.to_string_lossy().into_owned();
    let kubeconfig = env.kubeconfig_path().to_string_lossy().into_owned();
    let mut flags = vec!["--prometheus-url", url];
    if with_token {
        flags.extend(["--prometheus-token-file", &token]);
    }
    flags.extend([
        "--prometheus-interval",
        "1s",
        "--prometheus-timeout",
        "2s",
        "--hub-kubeconfig",
        &kubeconfig,
        "--cluster-name",
        hub.name(),
    ]);
    let controller = Controller::start(env, local.name(), &flags)?;
    let log = controller.log.display().to_string();

    // The alerts-unavailable insight, here and on the hub: it names the endpoint without
    // credentials.
    for ns in [local.name(), hub.name()] {
        let description = poll_until(
            TIMEOUT,
            &format!("the alerts-unavailable insight in {ns}"),
            || async {
                let out = env
                    .get_insights(
                        ns,
                        "update.openshift.io/source=alerts-unavailable",
                        "jsonpath={.items[*].status.health.impact.description}",
                    )
                    .await
                    .ok()?;
                (!out.trim().is_empty()).then_some(out)
            },
        )
        .await
        .map_err(|e| format!("{e} (controller log {log})"))?;
        assert!(
            description.contains("https://127.0.0.1:"),
            "the endpoint is named: {description}"
        );
    }
    // A few more polls and hub syncs, so every path had its chance to leak.
    tokio::time::sleep(Duration::from_secs(5)).await;

    let mut leaks = Vec::new();
    for ns in [local.name(), hub.name()] {
        let objects = dump(env, ns).await?;
        for secret in [SECRET, TOKEN] {
            if objects.contains(secret) {
                leaks.push(format!("{secret} in an object of {ns}"));
            }
        }
    }
    let text = std::fs::read(&controller.log)?;
    let text = String::from_utf8_lossy(&text);
    assert!(
        text.contains("cannot read alerts from Prometheus"),
        "the failing poll is logged: {log}"
    );
    for (i, line) in text.lines().enumerate() {
        for secret in [SECRET, TOKEN] {
            if line.contains(secret) {
                leaks.push(format!("{secret} in log line {}: {line}", i + 1));
            }
        }
    }
    assert!(leaks.is_empty(), "secrets leaked: {leaks:#?}");
    assert!(
        !text.contains('\u{1b}'),
        "escape sequences in a log that is not a terminal ({log})"
    );
    drop(controller);
    local.delete().await?;
    hub.delete().await?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

#[test]
fn a_token_or_password_over_plain_http_is_refused_at_start() -> TestResult {
    let bin = workspace_bin("update-status-controller", "UPDATE_STATUS_CONTROLLER_BIN");
    let with_password = format!("http://user:{SECRET}@127.0.0.1:9090");
    let cases: [(&str, &[&str]); 2] = [
        // A bearer token (the token file is not read before the URL is checked).
        (
            "a bearer token",
            &[
                "--prometheus-url",
                "http://127.0.0.1:9090",
                "--prometheus-token-file",
                "/nonexistent/token",
            ],
        ),
        // A password in the URL (Basic authentication).
        ("a password", &["--prometheus-url", &with_password]),
    ];
    for (what, args) in cases {
        let out = run_without_cluster(&bin, args)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}: accepted: {stderr}");
        assert!(
            stderr.contains("in clear over http://")
                && stderr.contains("--prometheus-insecure-http"),
            "{what}: {stderr}"
        );
        assert!(!stderr.contains(SECRET), "{what}: {stderr}");
        assert!(!stderr.contains('\u{1b}'), "{what}: {stderr}");
    }
    Ok(())
}
