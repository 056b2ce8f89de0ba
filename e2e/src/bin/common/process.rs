//! The processes the bench starts and measures: the local control plane
//! (`hack/local-cluster.sh`), a process's memory and CPU time from `/proc`, and the bench's log
//! line.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use jiff::Timestamp;
use update_status_e2e::repo_root;

/// One line of the bench's log (standard error), with the time.
pub fn log(msg: &str) {
    eprintln!("bench: [{}] {msg}", Timestamp::now().strftime("%H:%M:%S"));
}

/// Runs `hack/local-cluster.sh <cmd>` on the control plane in `dir` (`down` may fail: nothing
/// was running).
pub fn cluster(dir: &Path, cmd: &str) -> anyhow::Result<()> {
    let out = Command::new(repo_root().join("hack/local-cluster.sh"))
        .arg(cmd)
        .env("CLUSTER_DIR", dir)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running hack/local-cluster.sh {cmd}"))?;
    if !out.status.success() && cmd != "down" {
        bail!(
            "hack/local-cluster.sh {cmd} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// Clock ticks per second (`getconf CLK_TCK`), what [`cpu_seconds`] divides by.
pub fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// (VmHWM, VmRSS) in KiB.
pub fn memory_kib(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// utime + stime in seconds.
pub fn cpu_seconds(pid: u32, ticks: f64) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces, inside parentheses).
    let Some((_, rest)) = text.rsplit_once(')') else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state): utime is field 14, stime field 15.
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (get(11) + get(12)) / ticks
}

/// KiB in MiB.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The process id of `component` (`kube-apiserver`, `etcd`) of the local control plane in
/// `cluster_dir`, from its pid file.
pub fn pid_of(cluster_dir: &Path, component: &str) -> Option<u32> {
    std::fs::read_to_string(cluster_dir.join(format!("{component}.pid")))
        .ok()?
        .trim()
        .parse()
        .ok()
}
