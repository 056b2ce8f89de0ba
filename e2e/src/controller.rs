//! Runs the real `update-status-controller` binary against the test cluster.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::{TestEnv, repo_root};

/// A running controller process; killed on drop.
pub struct Controller {
    child: Child,
    metrics_addr: String,
    /// Its log file.
    pub log: PathBuf,
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What can go wrong starting or querying the controller.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The binary is not built.
    #[error("{0} is not built (run `cargo build -p update-status-controllers`)")]
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

/// Path of a binary of this workspace (`target/debug/<name>`), overridable with `env`.
pub fn workspace_bin(name: &str, env: &str) -> PathBuf {
    std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/debug").join(name))
}

impl Controller {
    /// Starts the controller writing into `namespace`, with extra flags (e.g. `--assess-at`).
    pub fn start(env: &TestEnv, namespace: &str, extra: &[&str]) -> Result<Self, ControllerError> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(io("picking a free port"))?
            .port();
        Self::start_on(env, namespace, port, extra)
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
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(io("picking a free port"))?
            .port();
        Self::start_with(kubeconfig, namespace, port, extra)
    }

    fn start_with(
        kubeconfig: &std::path::Path,
        namespace: &str,
        metrics_port: u16,
        extra: &[&str],
    ) -> Result<Self, ControllerError> {
        let bin = workspace_bin("update-status-controller", "UPDATE_STATUS_CONTROLLER_BIN");
        if !bin.exists() {
            return Err(ControllerError::NotBuilt(bin));
        }
        let port = metrics_port;
        // One log per replica (several may run in one namespace).
        let log = std::env::temp_dir().join(format!(
            "update-status-controller-{namespace}-{metrics_port}.log"
        ));
        let out = std::fs::File::create(&log).map_err(io("creating the controller log"))?;
        let err = out.try_clone().map_err(io("creating the controller log"))?;
        let metrics_addr = format!("127.0.0.1:{port}");
        let child = Command::new(&bin)
            .args([
                "--namespace",
                namespace,
                "--metrics-bind-address",
                &metrics_addr,
            ])
            .args(extra)
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(io("starting the controller"))?;
        Ok(Controller {
            child,
            metrics_addr,
            log,
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

    /// `127.0.0.1:<port>` of its `/metrics`, `/healthz` and `/readyz`.
    pub fn metrics_addr(&self) -> &str {
        &self.metrics_addr
    }

    /// The controller's `/metrics` text (plain HTTP/1.0 on loopback).
    pub fn metrics(&self) -> Result<String, ControllerError> {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&self.metrics_addr)
            .map_err(io("connecting to /metrics"))?;
        s.write_all(
            format!(
                "GET /metrics HTTP/1.0\r\nHost: {}\r\n\r\n",
                self.metrics_addr
            )
            .as_bytes(),
        )
        .map_err(io("requesting /metrics"))?;
        let mut body = String::new();
        s.read_to_string(&mut body)
            .map_err(io("reading /metrics"))?;
        Ok(body)
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
