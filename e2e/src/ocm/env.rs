//! [`OcmEnv`]: the OCM environment of a test process (a hub and managed clusters started by
//! `hack/ocm-env.sh`, or reused from `UPDATE_STATUS_OCM_ENV_DIR`), its clients, kubectl, the
//! klusterlet agents' signals, its logs and its teardown.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use kube::Client;

use crate::cluster::client_for;
use crate::ocm::error::{OcmError, io_err};
use crate::paths::repo_root;
use crate::settings::{KEEP_ENV, env_flag};

/// Set to a directory to use the OCM environment running there instead of starting one.
pub const ENV_DIR_ENV: &str = "UPDATE_STATUS_OCM_ENV_DIR";

/// `hack/ocm-env.sh`.
fn script() -> PathBuf {
    repo_root().join("hack/ocm-env.sh")
}

/// How to start the environment (see `hack/ocm-env.sh` for the meaning of each).
#[derive(Clone, Debug, Default)]
pub struct OcmOptions {
    /// Names of the managed clusters (`OCM_CLUSTERS`).
    pub clusters: Vec<String>,
    /// Lifetime of the certificates the hub signs (`OCM_SIGNING_DURATION`, e.g. `"10m"`);
    /// `None`: kube-controller-manager's default, one year.
    pub signing_duration: Option<String>,
    /// How long a klusterlet keeps what a ManifestWork missing from the hub applied
    /// (`OCM_EVICTION_GRACE`, e.g. `"20s"`); `None`: the work agent's default, 60 minutes.
    pub eviction_grace: Option<String>,
}

/// A running OCM environment (shared by the tests of a process).
#[derive(Debug)]
pub struct OcmEnv {
    dir: PathBuf,
    clusters: Vec<String>,
    /// Started by this process (not `UPDATE_STATUS_OCM_ENV_DIR`).
    started_here: bool,
}

impl OcmEnv {
    /// The environment of this process with these managed clusters, started on first use.
    pub async fn shared(clusters: &[&str]) -> Result<&'static OcmEnv, OcmError> {
        Self::shared_with(OcmOptions {
            clusters: clusters.iter().map(|c| c.to_string()).collect(),
            ..OcmOptions::default()
        })
        .await
    }

    /// As [`OcmEnv::shared`], with options; every caller of a process must ask for the same
    /// clusters (the options of the first one are used).
    pub async fn shared_with(options: OcmOptions) -> Result<&'static OcmEnv, OcmError> {
        static ENV: OnceLock<Result<OcmEnv, String>> = OnceLock::new();
        let want = options.clusters.clone();
        let env = tokio::task::spawn_blocking(move || {
            ENV.get_or_init(|| start_or_reuse(&options))
                .as_ref()
                .map_err(|message| OcmError::Start(message.clone()))
        })
        .await
        .map_err(|e| OcmError::Start(format!("start-up task failed: {e}")))??;
        if env.clusters != want {
            return Err(OcmError::OtherClusters {
                have: env.clusters.clone(),
                want,
            });
        }
        Ok(env)
    }

    /// The state directory (`OCM_ENV_DIR`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The managed clusters.
    pub fn clusters(&self) -> &[String] {
        &self.clusters
    }

    /// Where the OCM processes log (`<component>.log`: controller, manager, webhook,
    /// agent-`<cluster>`).
    pub fn log_dir(&self) -> PathBuf {
        self.dir.join("ocm")
    }

    /// The admin kubeconfig of the hub.
    pub fn hub_kubeconfig(&self) -> PathBuf {
        self.dir.join("hub/kubeconfig")
    }

    /// The admin kubeconfig of a managed cluster.
    pub fn cluster_kubeconfig(&self, cluster: &str) -> Result<PathBuf, OcmError> {
        if !self.clusters.iter().any(|c| c == cluster) {
            return Err(OcmError::UnknownCluster(cluster.to_string()));
        }
        Ok(self.dir.join("clusters").join(cluster).join("kubeconfig"))
    }

    /// The directory in which the klusterlet agent of `cluster` keeps the hub credentials it
    /// obtained (its `--hub-kubeconfig-dir`).
    pub fn agent_hub_kubeconfig_dir(&self, cluster: &str) -> Result<PathBuf, OcmError> {
        self.cluster_kubeconfig(cluster)?;
        Ok(self
            .log_dir()
            .join(format!("agent-{cluster}/hub-kubeconfig")))
    }

    /// The folder `name` in the environment's folder for one test's files, emptied first of
    /// what an earlier run left there.
    pub fn work_dir(&self, name: &str) -> std::io::Result<PathBuf> {
        let work = self.dir.join(name);
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work)?;
        Ok(work)
    }

    /// `kubectl apply --server-side -k config/acm` on the hub, as docs/acm.md says; its standard
    /// output.
    pub async fn apply_acm_config(&self) -> Result<String, OcmError> {
        self.kubectl_hub([
            "apply",
            "--server-side",
            "-k",
            &repo_root().join("config/acm").display().to_string(),
        ])
        .await
    }

    /// `kubectl delete --ignore-not-found --wait=false -f <file>` on the hub; its standard output.
    pub async fn delete_on_hub(&self, file: &Path) -> Result<String, OcmError> {
        self.kubectl_hub([
            "delete",
            "--ignore-not-found",
            "--wait=false",
            "-f",
            &file.display().to_string(),
        ])
        .await
    }

    /// An admin client of the hub (bound to the calling test's runtime).
    pub async fn hub_client(&self) -> Result<Client, OcmError> {
        client(&self.hub_kubeconfig()).await
    }

    /// An admin client of a managed cluster.
    pub async fn cluster_client(&self, cluster: &str) -> Result<Client, OcmError> {
        client(&self.cluster_kubeconfig(cluster)?).await
    }

    /// Runs kubectl on the hub (as admin) and returns its standard output.
    pub async fn kubectl_hub<I, S>(&self, args: I) -> Result<String, OcmError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        kubectl(&self.hub_kubeconfig(), args).await
    }

    /// Runs kubectl on a managed cluster (as admin) and returns its standard output.
    pub async fn kubectl_cluster<I, S>(&self, cluster: &str, args: I) -> Result<String, OcmError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        kubectl(&self.cluster_kubeconfig(cluster)?, args).await
    }

    /// Sends `signal` (`STOP`, `CONT`, ...) to the klusterlet agent of `cluster` and its restart
    /// loop (one process group): `STOP` freezes the agent as a cluster that drops off the network
    /// would look to the hub (no lease renewal, no status), `CONT` resumes it.
    pub fn signal_agent(&self, cluster: &str, signal: &str) -> Result<(), OcmError> {
        let pid = self.agent_pid(cluster)?;
        send_kill(
            &[&format!("-{signal}"), "--", &format!("-{pid}")],
            format!("kill -{signal} -- -{pid} (the agent of {cluster})"),
        )
    }

    /// Kills the klusterlet agent process of `cluster` (not its restart loop, which starts it
    /// again a second later, as kubelet would restart a crashed container): the new process
    /// lists the hub afresh, so it never sees what happened there while the old one was frozen
    /// (`signal_agent(cluster, "STOP")` first; `CONT` after this lets the loop run).
    pub fn kill_agent_process(&self, cluster: &str) -> Result<(), OcmError> {
        let loop_pid = self.agent_pid(cluster)?;
        let children = std::fs::read_dir("/proc")
            .map_err(io_err("listing /proc"))?
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                // pid (comm) state ppid ...: the ppid is the second field after the comm.
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1));
                // argv[0]: hack/ocm-env.sh runs `<repo>/.cache/bin/ocm agent ...` (not `sleep`).
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let argv0 = cmd.split(|b| *b == 0).next().unwrap_or_default();
                ppid == Some(loop_pid.as_str()) && argv0.ends_with(b"/.cache/bin/ocm")
            })
            .collect::<Vec<_>>();
        let [pid] = children[..] else {
            return Err(OcmError::Unexpected(format!(
                "the restart loop {loop_pid} of {cluster}'s agent has {} agent processes ({children:?}), not one",
                children.len()
            )));
        };
        send_kill(
            &["-KILL", &pid.to_string()],
            format!("kill -KILL {pid} ({cluster}'s agent)"),
        )
    }

    /// The pid of the restart loop of `cluster`'s klusterlet agent (its process group).
    fn agent_pid(&self, cluster: &str) -> Result<String, OcmError> {
        self.cluster_kubeconfig(cluster)?;
        let pidfile = self.log_dir().join(format!("agent-{cluster}.pid"));
        let pid = std::fs::read_to_string(&pidfile)
            .map_err(io_err(format!("reading {}", pidfile.display())))?;
        let pid = pid.trim();
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            return Err(OcmError::Unexpected(format!(
                "{} does not hold a process id: {pid:?}",
                pidfile.display()
            )));
        }
        Ok(pid.to_string())
    }

    /// Stops the environment now (`hack/ocm-env.sh down`) instead of after the test process
    /// exits, so that its teardown does not overlap the next test binary: for the end of the last
    /// test of a binary that uses it. A no-op for an environment this process did not start or
    /// with `UPDATE_STATUS_E2E_KEEP=1`; later uses of the environment fail.
    pub async fn stop(&self) -> Result<(), OcmError> {
        if !self.started_here || env_flag(KEEP_ENV) {
            return Ok(());
        }
        let failed = |message| OcmError::Command {
            what: format!("{} down", script().display()),
            message,
        };
        let out = match run_script(&self.dir, "down").await {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => return Err(failed(e.to_string())),
            Err(e) => return Err(failed(format!("task failed: {e}"))),
        };
        if out.status.success() {
            Ok(())
        } else {
            Err(OcmError::Command {
                what: format!(
                    "OCM_ENV_DIR={} {} down ({})",
                    self.dir.display(),
                    script().display(),
                    out.status
                ),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// The last `lines` lines of every OCM process's log (without library-go's repeated
    /// complaint that the test API servers have no request-header CA), for failure messages: the
    /// logs go with the environment when it is removed.
    pub fn log_tails(&self, lines: usize) -> String {
        let mut out = String::new();
        let Ok(entries) = std::fs::read_dir(self.log_dir()) else {
            return format!("(no logs in {})", self.log_dir().display());
        };
        let mut logs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        for log in logs {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let kept: Vec<&str> = text
                .lines()
                .filter(|l| !l.contains("extension-apiserver-authentication"))
                .collect();
            let tail = &kept[kept.len().saturating_sub(lines)..];
            out.push_str(&format!(
                "--- {} (last {} lines)\n",
                log.display(),
                tail.len()
            ));
            for l in tail {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    /// `hack/ocm-env.sh status`: the state of every component, for failure messages.
    pub async fn status(&self) -> String {
        match run_script(&self.dir, "status").await {
            Ok(Ok(out)) => format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            Ok(Err(e)) => format!("cannot run {}: {e}", script().display()),
            Err(e) => format!("status task failed: {e}"),
        }
    }
}

/// Runs `hack/ocm-env.sh <command>` with `OCM_ENV_DIR=<dir>` (no standard input), off the
/// runtime's threads, and returns its output whatever the exit status.
async fn run_script(
    dir: &Path,
    command: &'static str,
) -> Result<std::io::Result<std::process::Output>, tokio::task::JoinError> {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        Command::new(script())
            .arg(command)
            .env("OCM_ENV_DIR", &dir)
            .stdin(Stdio::null())
            .output()
    })
    .await
}

async fn client(kubeconfig: &Path) -> Result<Client, OcmError> {
    client_for(kubeconfig).await.map_err(|e| match e {
        crate::error::Error::Kubeconfig { path, source } => OcmError::Kubeconfig { path, source },
        other => OcmError::Client(other.to_string()),
    })
}

/// Runs kubectl with `kubeconfig`, off the runtime's threads; a failed exit is an error carrying
/// its standard error.
pub async fn kubectl<I, S>(kubeconfig: &Path, args: I) -> Result<String, OcmError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect();
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .args(&args)
        .stdin(Stdio::null());
    let what = format!("kubectl {}", args.join(" "));
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .map_err(|e| OcmError::Command {
            what: what.clone(),
            message: format!("task failed: {e}"),
        })?
        .map_err(|e| OcmError::Command {
            what: what.clone(),
            message: format!("cannot run kubectl: {e}"),
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(OcmError::Command {
            what: format!("{what} ({})", out.status),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

fn start_or_reuse(options: &OcmOptions) -> Result<OcmEnv, String> {
    if let Some(dir) = std::env::var_os(ENV_DIR_ENV).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        let env_file = dir.join("ocm/env");
        let text = std::fs::read_to_string(&env_file).map_err(|e| {
            format!(
                "{ENV_DIR_ENV}={}: cannot read {} ({e}); start it with OCM_ENV_DIR={} {} up",
                dir.display(),
                env_file.display(),
                dir.display(),
                script().display()
            )
        })?;
        let clusters = text
            .lines()
            .find_map(|l| l.strip_prefix("OCM_CLUSTERS="))
            .map(|v| {
                v.trim_matches('"')
                    .split_whitespace()
                    .map(String::from)
                    .collect::<Vec<_>>()
            })
            .ok_or_else(|| format!("{} has no OCM_CLUSTERS line", env_file.display()))?;
        let grace = text
            .lines()
            .find_map(|l| l.strip_prefix("OCM_EVICTION_GRACE="))
            .filter(|v| !v.is_empty());
        // A test that needs a short grace cannot run on klusterlets without it (the default
        // changes nothing a test without that need sees).
        if options.eviction_grace.is_some() && grace != options.eviction_grace.as_deref() {
            return Err(format!(
                "{ENV_DIR_ENV}={}: its klusterlets' eviction grace is {grace:?}, the test needs {:?} (OCM_EVICTION_GRACE)",
                dir.display(),
                options.eviction_grace
            ));
        }
        eprintln!(
            "e2e: using the OCM environment in {} (clusters {clusters:?})",
            dir.display()
        );
        return Ok(OcmEnv {
            dir,
            clusters,
            started_here: false,
        });
    }
    if options.clusters.is_empty() {
        return Err("no managed cluster asked for".into());
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!(
        "update-status-ocm-env-{}-{nanos:x}",
        std::process::id()
    ));
    let started = Instant::now();
    eprintln!(
        "e2e: starting an OCM hub and managed clusters {:?} in {} (hack/ocm-env.sh up, about a minute)",
        options.clusters,
        dir.display()
    );
    // The reaper first: a failed or interrupted start-up leaves nothing running either.
    if !env_flag(KEEP_ENV) {
        spawn_reaper(&dir)?;
    }
    let mut cmd = Command::new(script());
    cmd.arg("up")
        .env("OCM_ENV_DIR", &dir)
        .env("OCM_CLUSTERS", options.clusters.join(" "))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Its progress lines go to the test's standard error as they come.
        .stderr(Stdio::inherit());
    match &options.signing_duration {
        Some(d) => cmd.env("OCM_SIGNING_DURATION", d),
        None => cmd.env_remove("OCM_SIGNING_DURATION"),
    };
    match &options.eviction_grace {
        Some(d) => cmd.env("OCM_EVICTION_GRACE", d),
        None => cmd.env_remove("OCM_EVICTION_GRACE"),
    };
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", script().display()))?;
    if !status.success() {
        return Err(format!(
            "{} up ({status}) with OCM_ENV_DIR={}: see its output above and the logs in {}",
            script().display(),
            dir.display(),
            dir.join("ocm").display()
        ));
    }
    eprintln!(
        "e2e: OCM environment up in {:.1}s, OCM_ENV_DIR={}",
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    if env_flag(KEEP_ENV) {
        eprintln!(
            "e2e: {KEEP_ENV}=1: leaving it running; stop it with OCM_ENV_DIR={} {} down",
            dir.display(),
            script().display()
        );
    }
    Ok(OcmEnv {
        dir,
        clusters: options.clusters.clone(),
        started_here: true,
    })
}

/// A detached watchdog that runs `hack/ocm-env.sh down` once this process is gone.
fn spawn_reaper(dir: &Path) -> Result<(), String> {
    Command::new("setsid")
        .args([
            "sh",
            "-c",
            r#"while kill -0 "$1" 2>/dev/null; do sleep 0.5; done; exec "$2" down"#,
            "update-status-ocm-env-reaper",
        ])
        .arg(std::process::id().to_string())
        .arg(script())
        .env("OCM_ENV_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot start the OCM environment's reaper (setsid sh): {e}"))
}

/// Runs `kill ARGS`; `what` names it in the error (with kill's own message).
fn send_kill(args: &[&str], what: String) -> Result<(), OcmError> {
    let out = Command::new("kill")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| OcmError::Command {
            what: what.clone(),
            message: e.to_string(),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(OcmError::Command {
            what,
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}
