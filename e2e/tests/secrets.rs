//! Secrets never leave, and logs are plain text: the controller runs with a credentialed
//! Prometheus URL (`https://user:<secret>@127.0.0.1:<closed port>`, so the "alerts unavailable"
//! insight appears and every error quotes the URL) and a secret in its bearer-token file, and
//! with `--hub-kubeconfig` to the same API server (as `hub_sync.rs` does) so its insights are
//! copied to a hub namespace. Every log line, every object of both namespaces and every hub copy
//! is searched for the secret; the log (a file, not a terminal) must hold no escape byte.
//! Also: a bearer token to an `http://` URL is refused at start, naming the flag that allows it.
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::process::Command;
use std::time::Duration;

use update_status_e2e::controller::{Controller, workspace_bin};
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
    let local = env.namespace("secrets").await?;
    let hub = env.namespace("secrets-hub").await?;
    env.replace_snapshot(&oc_status_case("4.14.1-degraded"))
        .await?;
    let dir = std::env::temp_dir().join(format!("us-secrets-{}", local.name()));
    std::fs::create_dir_all(&dir)?;
    let token = dir.join("token");
    std::fs::write(&token, format!("{TOKEN}\n"))?;
    // A closed port: every poll fails, and the error quotes the URL polled.
    let url = format!("https://user:{SECRET}@127.0.0.1:{}", free_port()?);
    let kubeconfig = env.kubeconfig_path().to_string_lossy().into_owned();
    let controller = Controller::start(
        &env,
        local.name(),
        &[
            "--prometheus-url",
            &url,
            "--prometheus-token-file",
            &token.to_string_lossy(),
            "--prometheus-interval",
            "1s",
            "--prometheus-timeout",
            "2s",
            "--hub-kubeconfig",
            &kubeconfig,
            "--cluster-name",
            hub.name(),
        ],
    )?;
    let log = controller.log.display().to_string();

    // The alerts-unavailable insight, here and on the hub: it names the endpoint without
    // credentials.
    for ns in [local.name(), hub.name()] {
        let description = poll_until(
            TIMEOUT,
            &format!("the alerts-unavailable insight in {ns}"),
            || async {
                let out = env
                    .kubectl_ok([
                        "get",
                        "updateinsights",
                        "-n",
                        ns,
                        "-l",
                        "update.openshift.io/source=alerts-unavailable",
                        "-o",
                        "jsonpath={.items[*].status.health.impact.description}",
                    ])
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
        let objects = dump(&env, ns).await?;
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
fn a_token_over_plain_http_is_refused_at_start() -> TestResult {
    let bin = workspace_bin("update-status-controller", "UPDATE_STATUS_CONTROLLER_BIN");
    let out = Command::new(&bin)
        .args([
            "--prometheus-url",
            &format!("http://user:{SECRET}@127.0.0.1:9090"),
            "--prometheus-token-file",
            "/nonexistent/token",
        ])
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .map_err(|e| format!("running {}: {e}", bin.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "accepted: {stderr}");
    assert!(stderr.contains("--prometheus-insecure-http"), "{stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    Ok(())
}
