//! The API carries everything the renderer needs: with the controller running on a loaded
//! snapshot (evaluating at the snapshot's instant), `kubectl update-status` online prints
//! exactly what `oc adm upgrade status` printed for that cluster — the same bytes as the
//! offline mode's golden outputs.
//!
//! One caveat: oc prints worker pools (and breaks health ties) in MachineConfigPool list order,
//! and an API server lists by name. Where a capture's `machineconfigpools.yaml` is not in name
//! order (`4.14.1-workers-started-updating-multiple-pools`: `worker` before `infra`), oc on the
//! live cluster would print the pools by name, so the online output is compared with the offline
//! output of the same capture with its pool list in name order (the offline path is byte-exact
//! with oc on every vendored case, the pool-order ones included).
#![cfg(feature = "e2e")] // needs the local control plane: `make e2e`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use update_status_e2e::controller::Controller;
use update_status_e2e::proxy::ConnectProxy;
use update_status_e2e::{TestEnv, exclusive_cluster_state, oc_status_case};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const TIMEOUT: Duration = Duration::from_secs(60);

fn cli(
    env: &TestEnv,
    args: &[&str],
) -> Result<(String, String, bool), Box<dyn std::error::Error + Send + Sync>> {
    let out = env.plugin(args)?;
    Ok((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    ))
}

async fn online_equals_expected(case: &str) -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let dir = oc_status_case(case);
    let now = std::fs::read_to_string(dir.join("now"))?.trim().to_string();
    let ns = env.namespace("cli").await?;
    env.replace_snapshot(&dir).await?;
    let controller = Controller::start(&env, ns.name(), &["--assess-at", &now])?;
    let listed = as_an_api_server_lists(&dir)?;
    for (details, file) in [
        ("none", "expected.output"),
        ("all", "expected.detailed-output"),
    ] {
        let expected = match &listed {
            None => std::fs::read_to_string(dir.join(file))?,
            Some(copy) => offline(&env, copy.path(), &now, details)?,
        };
        let deadline = Instant::now() + TIMEOUT;
        let mut last;
        loop {
            let (out, err, _) = cli(
                &env,
                &["-n", ns.name(), "--now", &now, "--details", details],
            )?;
            last = format!("{out}{err}");
            if out == expected {
                break;
            }
            if Instant::now() > deadline {
                let first_diff = expected
                    .lines()
                    .zip(out.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(expected.lines().count().min(out.lines().count()));
                return Err(format!(
                    "{case} --details={details}: online output never matched {file} (first difference at line {}; controller log {}):\n{last}",
                    first_diff + 1,
                    controller.log.display()
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    Ok(())
}

/// A copy of the capture with its MachineConfigPools in name order (what an API server lists),
/// or `None` when they already are.
fn as_an_api_server_lists(
    dir: &Path,
) -> Result<Option<TempCopy>, Box<dyn std::error::Error + Send + Sync>> {
    let pools_file = dir.join("machineconfigpools.yaml");
    let pools = update_status_snapshot::read_values(&pools_file)?;
    let name = |p: &serde_json::Value| {
        p["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let mut sorted = pools.clone();
    sorted.sort_by_key(name);
    if sorted == pools {
        return Ok(None);
    }
    let copy = TempCopy::of(dir)?;
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": sorted});
    std::fs::write(
        copy.path().join("machineconfigpools.yaml"),
        serde_json::to_vec(&list)?,
    )?;
    Ok(Some(copy))
}

/// The offline CLI's output for a capture.
fn offline(
    env: &TestEnv,
    dir: &Path,
    now: &str,
    details: &str,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let dir = dir.to_string_lossy();
    let (out, err, ok) = cli(
        env,
        &["--from-dir", &dir, "--now", now, "--details", details],
    )?;
    if !ok {
        return Err(format!("offline CLI failed on {dir}: {err}").into());
    }
    Ok(out)
}

/// A copy of a capture's files in a temporary folder, removed on drop.
struct TempCopy(PathBuf);

impl TempCopy {
    fn of(dir: &Path) -> std::io::Result<Self> {
        let to = std::env::temp_dir().join(format!(
            "update-status-online-{}-{}",
            std::process::id(),
            dir.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        ));
        std::fs::create_dir_all(&to)?;
        let copy = TempCopy(to);
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                std::fs::copy(entry.path(), copy.0.join(entry.file_name()))?;
            }
        }
        Ok(copy)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn online_matches_expected_for_a_degraded_control_plane() -> TestResult {
    online_equals_expected("4.14.1-degraded").await
}

#[tokio::test]
async fn online_matches_expected_for_a_pool_blocked_by_a_pdb() -> TestResult {
    online_equals_expected("4.16.0-ec2-control-plane-updated-pdb-prohibits-draining").await
}

#[tokio::test]
async fn online_matches_expected_for_multiple_pools() -> TestResult {
    online_equals_expected("4.14.1-workers-started-updating-multiple-pools").await
}

#[tokio::test]
async fn online_matches_expected_for_a_partial_previous_update() -> TestResult {
    online_equals_expected("4.15.0-ec2-early").await
}

#[tokio::test]
async fn online_says_when_the_cluster_is_not_updating() -> TestResult {
    online_equals_expected("not-upgrading").await
}

/// A host name that resolves nowhere: only the proxy knows where the API server is.
const API_HOST: &str = "api.update-status.invalid";
/// The proxy's password: never printed, whatever happens.
const PROXY_PASSWORD: &str = "S3cret-proxy-pw";

/// Issue #48 item 5: the plugin goes through a proxy as kubectl does (the kubeconfig's
/// `proxy-url`, else `HTTPS_PROXY`, `NO_PROXY` honoured) and never prints the proxy's password,
/// not even when the proxy refuses it. The API server is named by a host only the proxy can
/// reach, so an answer proves the request went through it. Multi-threaded: the plugin runs as a
/// blocking child process while the proxy's tasks serve it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plugin_goes_through_a_proxy_and_never_prints_its_password() -> TestResult {
    let _lock = exclusive_cluster_state().await;
    let env = TestEnv::new().await?;
    let dir = oc_status_case("not-upgrading");
    let now = std::fs::read_to_string(dir.join("now"))?.trim().to_string();
    let ns = env.namespace("cli-proxy").await?;
    env.replace_snapshot(&dir).await?;
    let controller = Controller::start(&env, ns.name(), &["--assess-at", &now])?;
    let expected = std::fs::read_to_string(dir.join("expected.output"))?;
    let args = ["-n", ns.name(), "--now", &now];
    // Direct first: the controller has written what the plugin reads.
    let deadline = Instant::now() + TIMEOUT;
    while cli(&env, &args)?.0 != expected {
        if Instant::now() > deadline {
            return Err(format!(
                "the direct output never matched (log {})",
                controller.log.display()
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let port = api_port(env.kubeconfig_path())?;
    let destination = format!("{API_HOST}:{port}");
    let routes = [(destination.clone(), format!("127.0.0.1:{port}"))].into();
    let proxy = ConnectProxy::start(routes, Some(("alice", PROXY_PASSWORD))).await?;
    let tmp = std::env::temp_dir().join(format!("us-e2e-cli-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let with_url = tmp.join("with-proxy-url");
    let without = tmp.join("without-proxy-url");
    let wrong = tmp.join("wrong-password");
    proxied_kubeconfig(env.kubeconfig_path(), &with_url, Some(&proxy.url()))?;
    proxied_kubeconfig(env.kubeconfig_path(), &without, None)?;
    let refused = proxy.url().replace(PROXY_PASSWORD, "Wr0ng-pw-never-shown");
    proxied_kubeconfig(env.kubeconfig_path(), &wrong, Some(&refused))?;
    let url = proxy.url();
    // 1. The kubeconfig's proxy-url; 2. HTTPS_PROXY.
    for (name, kubeconfig, vars) in [
        ("proxy-url", &with_url, vec![]),
        ("HTTPS_PROXY", &without, vec![("HTTPS_PROXY", url.as_str())]),
    ] {
        let before = proxy.tunnels(&destination);
        let (out, err, ok) = run(kubeconfig, &vars, &args)?;
        assert!(ok && out == expected, "{name}: {out}{err}");
        assert!(proxy.tunnels(&destination) > before, "{name}: no tunnel");
        assert!(
            !format!("{out}{err}").contains(PROXY_PASSWORD),
            "{name}: {err}"
        );
    }
    // 3. NO_PROXY naming the host: not through the proxy (the name resolves nowhere).
    let before = proxy.tunnels(&destination);
    let vars = [
        ("HTTPS_PROXY", url.as_str()),
        ("NO_PROXY", ".update-status.invalid"),
    ];
    let (_, err, ok) = run(&without, &vars, &args)?;
    assert!(
        !ok && proxy.tunnels(&destination) == before,
        "NO_PROXY ignored: {err}"
    );
    // 4. A refused password: an error, the password in neither output.
    let (out, err, ok) = run(&wrong, &[], &args)?;
    assert!(!ok, "a refused proxy password still answered: {out}");
    assert!(
        proxy.refused().iter().any(|(code, _)| *code == 407),
        "{:?}",
        proxy.refused()
    );
    let both = format!("{out}{err}");
    assert!(
        !both.contains("Wr0ng-pw-never-shown") && !both.contains(PROXY_PASSWORD),
        "{both}"
    );
    assert!(!err.trim().is_empty(), "the failure is explained");
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}

/// The plugin with `kubeconfig` and only `vars` of the proxy variables (none inherited).
fn run(
    kubeconfig: &Path,
    vars: &[(&str, &str)],
    args: &[&str],
) -> Result<(String, String, bool), Box<dyn std::error::Error + Send + Sync>> {
    let bin = update_status_e2e::controller::workspace_bin(
        "kubectl-update_status",
        "UPDATE_STATUS_CLI_BIN",
    );
    let mut cmd = std::process::Command::new(bin);
    cmd.args(args)
        .env("KUBECONFIG", kubeconfig)
        .stdin(std::process::Stdio::null());
    for v in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "NO_PROXY",
        "no_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        cmd.env_remove(v);
    }
    cmd.envs(vars.iter().copied());
    let out = cmd.output()?;
    Ok((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    ))
}

/// The API server's port in the admin kubeconfig.
fn api_port(kubeconfig: &Path) -> Result<u16, Box<dyn std::error::Error + Send + Sync>> {
    let kc: Value = serde_saphyr::from_str(&std::fs::read_to_string(kubeconfig)?)?;
    let server = kc["clusters"][0]["cluster"]["server"]
        .as_str()
        .ok_or("no server")?;
    let port = server.rsplit(':').next().ok_or("no port")?;
    Ok(port.trim_end_matches('/').parse()?)
}

/// The admin kubeconfig naming the API server by [`API_HOST`] (its certificate is for
/// `localhost`: `tls-server-name`), with `proxy_url` if given.
fn proxied_kubeconfig(
    admin: &Path,
    out: &Path,
    proxy_url: Option<&str>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut kc: Value = serde_saphyr::from_str(&std::fs::read_to_string(admin)?)?;
    let port = api_port(admin)?;
    for c in kc["clusters"].as_array_mut().ok_or("no clusters")? {
        c["cluster"]["server"] = json!(format!("https://{API_HOST}:{port}"));
        c["cluster"]["tls-server-name"] = json!("localhost");
        if let Some(p) = proxy_url {
            c["cluster"]["proxy-url"] = json!(p);
        }
    }
    std::fs::write(out, kc.to_string())?;
    Ok(())
}
