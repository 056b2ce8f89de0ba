//! Runs the real `update-status-controller` binary against the test cluster.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub use crate::paths::{release_bin, workspace_bin};
use crate::test_env::TestEnv;

/// A running controller process; killed on drop.
pub struct Controller {
    child: Child,
    metrics_addr: String,
    probe_addr: String,
    /// Its log file.
    pub log: PathBuf,
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Which binary to run, as whom, logging where (see [`Controller::launch`]).
#[derive(Clone, Debug)]
pub struct Launch {
    /// The controller binary.
    pub bin: PathBuf,
    /// The kubeconfig it uses (`KUBECONFIG`).
    pub kubeconfig: PathBuf,
    /// Its log file (standard output and error).
    pub log: PathBuf,
}

/// What can go wrong starting or querying the controller.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The binary is not built.
    #[error("{0} is not built (run `cargo build [--release] -p update-status-controllers`)")]
    NotBuilt(PathBuf),
    /// An I/O error (spawning, the log file, the metrics endpoint).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> ControllerError + '_ {
    move |source| ControllerError::Io {
        what: what.to_string(),
        source,
    }
}

/// A free loopback port (bound then released: good enough for tests).
fn free_port() -> Result<u16, ControllerError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(io("picking a free port"))
}

impl Controller {
    /// Starts the controller writing into `namespace`, with extra flags (e.g. `--assess-at`).
    /// `/metrics` is plain HTTP without authentication (`--metrics-secure=false`) unless
    /// `extra` has a `--metrics-secure...` flag; the probes are on their own free port.
    pub fn start(env: &TestEnv, namespace: &str, extra: &[&str]) -> Result<Self, ControllerError> {
        Self::start_on(env, namespace, free_port()?, extra)
    }

    /// [`Controller::start`] as one replica of a leader-elected set: `--leader-elect
    /// --leader-identity <identity>`.
    pub fn start_replica(
        env: &TestEnv,
        namespace: &str,
        identity: &str,
    ) -> Result<Self, ControllerError> {
        Self::start(
            env,
            namespace,
            &["--leader-elect", "--leader-identity", identity],
        )
    }

    /// As [`Controller::start`], serving `/metrics` on `127.0.0.1:<metrics_port>` (e.g. a port
    /// a Prometheus is already configured to scrape).
    pub fn start_on(
        env: &TestEnv,
        namespace: &str,
        metrics_port: u16,
        extra: &[&str],
    ) -> Result<Self, ControllerError> {
        Self::start_with(env.kubeconfig_path(), namespace, metrics_port, extra)
    }

    /// As [`Controller::start`], talking to the API server through `kubeconfig` (e.g. one that
    /// points at a proxy), `/metrics` on a free port.
    pub fn start_via(
        kubeconfig: &std::path::Path,
        namespace: &str,
        extra: &[&str],
    ) -> Result<Self, ControllerError> {
        Self::start_with(kubeconfig, namespace, free_port()?, extra)
    }

    fn start_with(
        kubeconfig: &std::path::Path,
        namespace: &str,
        metrics_port: u16,
        extra: &[&str],
    ) -> Result<Self, ControllerError> {
        Self::launch(
            &Launch {
                bin: workspace_bin("update-status-controller", "UPDATE_STATUS_CONTROLLER_BIN"),
                kubeconfig: kubeconfig.to_path_buf(),
                // One log per replica (several may run in one namespace).
                log: std::env::temp_dir().join(format!(
                    "update-status-controller-{namespace}-{metrics_port}.log"
                )),
            },
            namespace,
            metrics_port,
            extra,
        )
    }

    /// Starts `launch.bin` with `launch.kubeconfig` (e.g. a ServiceAccount's), writing into
    /// `namespace` and serving `/metrics` on `127.0.0.1:<metrics_port>`.
    pub fn launch(
        launch: &Launch,
        namespace: &str,
        metrics_port: u16,
        extra: &[&str],
    ) -> Result<Self, ControllerError> {
        Self::launch_with_env(launch, namespace, metrics_port, extra, &[])
    }

    /// As [`Controller::launch`], with these environment variables set too (e.g. those a
    /// rendered Deployment gives its container: `HTTPS_PROXY`, `NO_PROXY`, ...).
    pub fn launch_with_env(
        launch: &Launch,
        namespace: &str,
        metrics_port: u16,
        extra: &[&str],
        env: &[(String, String)],
    ) -> Result<Self, ControllerError> {
        let Launch {
            bin,
            kubeconfig,
            log,
        } = launch;
        if !bin.exists() {
            return Err(ControllerError::NotBuilt(bin.clone()));
        }
        let out = std::fs::File::create(log).map_err(io("creating the controller log"))?;
        let err = out.try_clone().map_err(io("creating the controller log"))?;
        let metrics_addr = format!("127.0.0.1:{metrics_port}");
        let probe_addr = format!("127.0.0.1:{}", free_port()?);
        let secure_set = extra.iter().any(|a| a.starts_with("--metrics-secure"));
        let child = Command::new(bin)
            .args([
                "--namespace",
                namespace,
                "--metrics-bind-address",
                &metrics_addr,
                "--health-probe-bind-address",
                &probe_addr,
            ])
            .args((!secure_set).then_some("--metrics-secure=false"))
            .args(extra)
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", "info")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(io("starting the controller"))?;
        Ok(Controller {
            child,
            metrics_addr,
            probe_addr,
            log: log.clone(),
        })
    }

    /// Whether the process is still running (`Err(status)`: it exited, how).
    pub fn running(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("the controller exited: {status}")),
            Err(e) => Err(format!("cannot tell whether the controller runs: {e}")),
        }
    }

    /// Sends SIGTERM (what the kubelet sends at a rollout), without waiting.
    pub fn terminate(&self) -> Result<(), ControllerError> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .map_err(io("sending SIGTERM"))?;
        if status.success() {
            Ok(())
        } else {
            Err(ControllerError::Io {
                what: "sending SIGTERM".into(),
                source: std::io::Error::other(format!("kill exited with {status}")),
            })
        }
    }

    /// Its exit status, once it has exited (`None` while it runs).
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its peak resident memory (`VmHWM`), in KiB, while it runs.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// `127.0.0.1:<port>` of its `/metrics`.
    pub fn metrics_addr(&self) -> &str {
        &self.metrics_addr
    }

    /// `127.0.0.1:<port>` of its `/healthz` and `/readyz` (plain HTTP).
    pub fn probe_addr(&self) -> &str {
        &self.probe_addr
    }

    /// The controller's `/metrics` answer, headers included (plain HTTP/1.0 on loopback:
    /// `--metrics-secure=false`).
    pub fn metrics(&self) -> Result<String, ControllerError> {
        plain_get(&self.metrics_addr, "/metrics")
    }

    /// Sum of `update_status_api_writes_total` (all kinds and verbs).
    pub fn writes(&self) -> Result<u64, ControllerError> {
        Ok(self
            .metrics()?
            .lines()
            .filter(|l| l.starts_with("update_status_api_writes_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64)
    }
}

/// `GET <path>` over plain HTTP/1.0 to `addr`: the whole answer, status line and headers
/// included.
pub fn plain_get(addr: &str, path: &str) -> Result<String, ControllerError> {
    use std::io::{Read, Write};
    let what = format!("GET http://{addr}{path}");
    let mut s = std::net::TcpStream::connect(addr).map_err(io(&what))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .map_err(io(&what))?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .map_err(io(&what))?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).map_err(io(&what))?;
    Ok(answer)
}

/// Runs `bin` with `args` and `KUBECONFIG=/nonexistent` (for flags refused before the first API
/// call) and returns its output whatever the exit status; the error names `bin`.
pub fn run_without_cluster(bin: &Path, args: &[&str]) -> Result<Output, String> {
    Command::new(bin)
        .args(args)
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .map_err(|e| format!("running {}: {e}", bin.display()))
}
