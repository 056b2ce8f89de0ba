//! A real Prometheus (the `prometheus` binary, Debian's package in CI) on loopback, for the
//! alerts tests: a free port, a temporary folder holding its configuration, rule file, TSDB and
//! log, fast evaluation (1 s scrape and rule intervals), killed on drop.
//!
//! With `tls`, it serves HTTPS with a certificate for `127.0.0.1` signed by a CA made for it
//! with openssl ([`Prometheus::ca_file`]), so the controller's `--prometheus-ca-file` path is
//! exercised. The harness talks to it over plain TCP (HTTP/1.0) or, for HTTPS, through
//! `openssl s_client` (openssl is required anyway: `hack/ensure-tools.sh`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::settings::{KEEP_ENV, env_flag};
use crate::wait::wait_for;

/// What can go wrong with the Prometheus process.
#[derive(Debug, thiserror::Error)]
pub enum PrometheusError {
    /// `prometheus` is not installed.
    #[error(
        "prometheus is not installed (hack/ensure-tools.sh installs Debian's `prometheus` package)"
    )]
    NotInstalled,
    /// An I/O error (files, spawning, the HTTP exchange).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// openssl failed making the certificates.
    #[error("openssl {step} failed: {stderr}")]
    Openssl {
        /// The step.
        step: &'static str,
        /// Its standard error.
        stderr: String,
    },
    /// An unexpected HTTP answer.
    #[error("{method} {path}: {answer}")]
    Http {
        /// The method.
        method: &'static str,
        /// The path.
        path: String,
        /// The status line or the problem.
        answer: String,
    },
    /// Prometheus did not become ready.
    #[error("prometheus did not become ready: {0} (log: {1})")]
    NotReady(String, PathBuf),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> PrometheusError {
    let what = what.into();
    move |source| PrometheusError::Io { what, source }
}

/// How to run it.
#[derive(Clone, Debug, Default)]
pub struct PrometheusOptions {
    /// Content of the rule file (YAML or JSON).
    pub rules: String,
    /// Scrape jobs: (job name, `host:port` target), scraped every second.
    pub scrape: Vec<(String, String)>,
    /// More scrape jobs, as Prometheus configuration (`scrape_configs` entries): service
    /// discovery, TLS, federation (`monitoring.rs` makes them).
    pub scrape_configs: Vec<Value>,
    /// Serve HTTPS.
    pub tls: bool,
    /// Listen on this port (default: a free one).
    pub port: Option<u16>,
}

/// A running (or stopped) Prometheus; killed, and its folder removed, on drop.
pub struct Prometheus {
    child: Option<Child>,
    dir: PathBuf,
    port: u16,
    tls: bool,
    starts: u32,
    /// Its log file (of the latest start).
    pub log: PathBuf,
}

/// A free loopback port (bound then released: good enough for tests).
pub fn free_port() -> Result<u16, PrometheusError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(io("picking a free port"))
}

impl Prometheus {
    /// Writes the configuration and starts Prometheus (see [`Prometheus::wait_ready`]).
    pub fn start(options: PrometheusOptions) -> Result<Self, PrometheusError> {
        if Command::new("prometheus")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_err()
        {
            return Err(PrometheusError::NotInstalled);
        }
        let port = match options.port {
            Some(p) => p,
            None => free_port()?,
        };
        let dir = std::env::temp_dir().join(format!(
            "update-status-e2e-prometheus-{}-{port}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
        let scrape: Vec<Value> = options
            .scrape
            .iter()
            .map(|(job, target)| {
                json!({
                    "job_name": job,
                    "scrape_interval": "1s",
                    "scrape_timeout": "1s",
                    "static_configs": [{"targets": [target]}],
                })
            })
            .chain(options.scrape_configs.iter().cloned())
            .collect();
        // JSON is YAML: no YAML writer needed.
        let config = json!({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [dir.join("rules.yml")],
            "scrape_configs": scrape,
        });
        write(&dir.join("prometheus.yml"), &config.to_string())?;
        write(&dir.join("rules.yml"), &options.rules)?;
        if options.tls {
            make_certificates(&dir)?;
            let web = json!({"tls_server_config": {
                "cert_file": dir.join("tls.crt"),
                "key_file": dir.join("tls.key"),
            }});
            write(&dir.join("web.yml"), &web.to_string())?;
        }
        let mut p = Prometheus {
            child: None,
            log: dir.join("prometheus-0.log"),
            dir,
            port,
            tls: options.tls,
            starts: 0,
        };
        p.spawn()?;
        Ok(p)
    }

    fn spawn(&mut self) -> Result<(), PrometheusError> {
        self.log = self.dir.join(format!("prometheus-{}.log", self.starts));
        let out = std::fs::File::create(&self.log).map_err(io("creating the Prometheus log"))?;
        let err = out.try_clone().map_err(io("creating the Prometheus log"))?;
        let mut cmd = Command::new("prometheus");
        cmd.arg(format!(
            "--config.file={}",
            self.dir.join("prometheus.yml").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{}", self.port))
        // A fresh TSDB per start: a restart must not depend on the killed one's lock.
        .arg(format!(
            "--storage.tsdb.path={}",
            self.dir.join(format!("data-{}", self.starts)).display()
        ))
        .arg("--web.enable-lifecycle")
        .arg("--query.lookback-delta=10s")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
        if self.tls {
            cmd.arg(format!(
                "--web.config.file={}",
                self.dir.join("web.yml").display()
            ));
        }
        self.child = Some(cmd.spawn().map_err(io("starting prometheus"))?);
        self.starts += 1;
        Ok(())
    }

    /// Its base URL (`http://127.0.0.1:<port>` or `https://...`).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The CA of its serving certificate (with `tls`).
    pub fn ca_file(&self) -> Option<PathBuf> {
        self.tls.then(|| self.dir.join("ca.crt"))
    }

    /// Its folder (configuration, certificates, TSDBs, logs).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Waits until `/-/ready` answers 200 (fails early if the process exits).
    pub async fn wait_ready(&mut self, timeout: Duration) -> Result<(), PrometheusError> {
        let log = self.log.clone();
        let (port, ca) = (self.port, self.ca_file());
        let mut child = self.child.take();
        let mut exited = None;
        let ready = wait_for(timeout, "prometheus /-/ready", || {
            if let Some(c) = child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                exited = Some(status);
            }
            let done = exited.is_some();
            let ca = ca.clone();
            async move {
                done || http(port, ca, "GET", "/-/ready")
                    .await
                    .is_ok_and(|(status, _)| status == 200)
            }
        })
        .await;
        self.child = child;
        match (ready, exited) {
            (_, Some(status)) => Err(PrometheusError::NotReady(
                format!("it exited ({status}): {}", tail(&log)),
                log,
            )),
            (Err(e), None) => Err(PrometheusError::NotReady(e.to_string(), log)),
            (Ok(()), None) => Ok(()),
        }
    }

    /// Replaces the rule file and reloads (`POST /-/reload`).
    pub async fn set_rules(&self, rules: &str) -> Result<(), PrometheusError> {
        write(&self.dir.join("rules.yml"), rules)?;
        let (status, body) = self.request("POST", "/-/reload").await?;
        if status != 200 {
            return Err(PrometheusError::Http {
                method: "POST",
                path: "/-/reload".into(),
                answer: format!("{status}: {body}"),
            });
        }
        Ok(())
    }

    /// `GET /api/v1/alerts`: the active alerts (`labels`, `annotations`, `state`, ...).
    pub async fn alerts(&self) -> Result<Vec<Value>, PrometheusError> {
        let (status, body) = self.request("GET", "/api/v1/alerts").await?;
        let v: Value = serde_json::from_str(&body).map_err(|e| PrometheusError::Http {
            method: "GET",
            path: "/api/v1/alerts".into(),
            answer: format!("{status}, not JSON ({e}): {body}"),
        })?;
        Ok(v["data"]["alerts"].as_array().cloned().unwrap_or_default())
    }

    /// `GET /api/v1/query`: the instant vector `promql` evaluates to now (`data.result`: each
    /// `{"metric": {labels}, "value": [time, "text"]}`); an error answer is an error.
    pub async fn query(&self, promql: &str) -> Result<Vec<Value>, PrometheusError> {
        self.api(&format!("/api/v1/query?query={}", encode(promql)))
            .await
    }

    /// `GET /api/v1/query_range` from `start` to `end` (Unix seconds) every `step` seconds:
    /// `data.result`, each `{"metric": {labels}, "values": [[time, "text"], ...]}`.
    pub async fn query_range(
        &self,
        promql: &str,
        (start, end, step): (f64, f64, f64),
    ) -> Result<Vec<Value>, PrometheusError> {
        self.api(&format!(
            "/api/v1/query_range?query={}&start={start:.3}&end={end:.3}&step={step}",
            encode(promql)
        ))
        .await
    }

    async fn api(&self, path: &str) -> Result<Vec<Value>, PrometheusError> {
        let (status, body) = self.request("GET", path).await?;
        let v: Value = serde_json::from_str(&body).map_err(|e| PrometheusError::Http {
            method: "GET",
            path: path.to_string(),
            answer: format!("{status}, not JSON ({e}): {body}"),
        })?;
        if status != 200 || v["status"] != "success" {
            return Err(PrometheusError::Http {
                method: "GET",
                path: path.to_string(),
                answer: format!("{status}: {body}"),
            });
        }
        Ok(v["data"]["result"].as_array().cloned().unwrap_or_default())
    }

    /// Kills it (SIGKILL: no goodbye). [`Prometheus::restart`] starts it again.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again, same port, configuration and certificates, fresh TSDB.
    pub fn restart(&mut self) -> Result<(), PrometheusError> {
        self.kill();
        self.spawn()
    }

    /// One HTTP/1.0 exchange: (status code, body).
    pub async fn request(
        &self,
        method: &'static str,
        path: &str,
    ) -> Result<(u16, String), PrometheusError> {
        http(self.port, self.ca_file(), method, path).await
    }
}

async fn http(
    port: u16,
    ca: Option<PathBuf>,
    method: &'static str,
    path: &str,
) -> Result<(u16, String), PrometheusError> {
    let path = path.to_string();
    tokio::task::spawn_blocking(move || exchange(port, ca.as_deref(), method, &path))
        .await
        .map_err(|e| PrometheusError::Io {
            what: "the request task".into(),
            source: std::io::Error::other(e),
        })?
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        self.kill();
        if !env_flag(KEEP_ENV) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// `text` as a URL query value.
fn encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn write(path: &Path, content: &str) -> Result<(), PrometheusError> {
    std::fs::write(path, content).map_err(io(format!("writing {}", path.display())))
}

fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

fn exchange(
    port: u16,
    ca: Option<&Path>,
    method: &'static str,
    path: &str,
) -> Result<(u16, String), PrometheusError> {
    let request =
        format!("{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n");
    let raw = match ca {
        None => {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port))
                .map_err(io(format!("connecting to 127.0.0.1:{port}")))?;
            s.set_read_timeout(Some(Duration::from_secs(10)))
                .map_err(io("setting a read timeout"))?;
            s.write_all(request.as_bytes())
                .map_err(io(format!("{method} {path}")))?;
            let mut buf = Vec::new();
            s.read_to_end(&mut buf)
                .map_err(io(format!("{method} {path}")))?;
            buf
        }
        Some(ca) => {
            use std::io::Write;
            // -quiet: no session dump; it keeps reading until the server closes (HTTP/1.0).
            let mut child = Command::new("openssl")
                .args(["s_client", "-quiet", "-verify_return_error", "-connect"])
                .arg(format!("127.0.0.1:{port}"))
                .arg("-CAfile")
                .arg(ca)
                .args(["-verify_ip", "127.0.0.1"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .map_err(io("running openssl s_client"))?;
            if let Some(mut stdin) = child.stdin.take() {
                stdin
                    .write_all(request.as_bytes())
                    .map_err(io(format!("{method} {path} (TLS)")))?;
            }
            child
                .wait_with_output()
                .map_err(io(format!("{method} {path} (TLS)")))?
                .stdout
        }
    };
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text.as_str(), ""));
    let status = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| PrometheusError::Http {
            method,
            path: path.to_string(),
            answer: format!("no HTTP status line in {:?}", head.lines().next()),
        })?;
    Ok((status, body.to_string()))
}

/// A CA and a serving certificate for `127.0.0.1` it signs (as `hack/local-cluster.sh` does).
fn make_certificates(dir: &Path) -> Result<(), PrometheusError> {
    let run = |step: &'static str, args: &[&str]| -> Result<(), PrometheusError> {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(io("running openssl"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(PrometheusError::Openssl {
                step,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    };
    write(
        &dir.join("ca.cnf"),
        "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = update-status-e2e-prometheus-ca\n[ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign,digitalSignature\nsubjectKeyIdentifier = hash\n",
    )?;
    write(
        &dir.join("tls.ext"),
        "[ext]\nbasicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature,keyEncipherment\nauthorityKeyIdentifier = keyid\nextendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1,DNS:localhost\n",
    )?;
    run(
        "req (CA)",
        &[
            "req",
            "-x509",
            "-new",
            "-nodes",
            "-newkey",
            "rsa:2048",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "2",
            "-sha256",
            "-config",
            "ca.cnf",
            "-extensions",
            "ca",
        ],
    )?;
    run(
        "req (serving certificate)",
        &[
            "req",
            "-new",
            "-nodes",
            "-newkey",
            "rsa:2048",
            "-keyout",
            "tls.key",
            "-out",
            "tls.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    )?;
    run(
        "x509 (signing)",
        &[
            "x509",
            "-req",
            "-in",
            "tls.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-set_serial",
            "0x1d2c3b4a",
            "-days",
            "2",
            "-sha256",
            "-extfile",
            "tls.ext",
            "-extensions",
            "ext",
            "-out",
            "tls.crt",
        ],
    )
}
