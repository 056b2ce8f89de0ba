//! `cargo run -p xtask --bin run-tests -- [--summary FILE] [--timeout SECS] CARGO_TEST_ARGS...
//! [-- TEST_BINARY_ARGS...]`
//!
//! Builds the test binaries that `cargo test CARGO_TEST_ARGS` would run (`--no-run`), runs every
//! one of them in turn (a failure never stops the rest: `--no-fail-fast`), streaming their output,
//! and ends with a summary: each binary, passed or failed, its test counts and its wall time
//! (also written to FILE). A binary running longer than SECS (default: no limit) is killed and
//! reported as timed out. Exits 1 when any binary failed, 2 on a usage or build error.
//!
//! Each binary runs as `cargo test` runs it: in its package's folder, with `CARGO_MANIFEST_DIR`
//! and `CARGO_PKG_NAME` set. Doc-tests are not run (`cargo test --doc` runs them).
//!
//! Why not cargo-nextest: it runs each test in a process of its own, and the e2e binaries share
//! one environment (a control plane, an OCM hub) between the tests of a binary, started once per
//! process; run per test, the suite would start them again for every test.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

/// One test binary of the build.
struct Binary {
    package: String,
    target: String,
    kind: String,
    exe: PathBuf,
    dir: PathBuf,
}

/// How one binary's run ended.
enum Verdict {
    Passed,
    Failed(String),
    TimedOut,
}

/// One binary's run.
struct Run {
    binary: Binary,
    verdict: Verdict,
    counts: String,
    wall: Duration,
}

struct Options {
    summary: Option<PathBuf>,
    timeout: Option<Duration>,
    cargo_args: Vec<String>,
    test_args: Vec<String>,
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1).collect()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("run-tests: {e:#}");
            return ExitCode::from(2);
        }
    };
    let binaries = match build(&options.cargo_args) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("run-tests: {e:#}");
            return ExitCode::from(2);
        }
    };
    let total = Instant::now();
    let runs: Vec<Run> = binaries
        .into_iter()
        .map(|b| run(b, &options.test_args, options.timeout))
        .collect();
    let text = summary(&runs, total.elapsed());
    print!("{text}");
    if let Some(path) = &options.summary
        && let Err(e) = std::fs::write(path, &text)
    {
        eprintln!("run-tests: cannot write {}: {e}", path.display());
    }
    if runs.iter().all(|r| matches!(r.verdict, Verdict::Passed)) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn parse(args: Vec<String>) -> anyhow::Result<Options> {
    let mut options = Options {
        summary: None,
        timeout: None,
        cargo_args: Vec::new(),
        test_args: Vec::new(),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--summary" => options.summary = Some(args.next().context("--summary FILE")?.into()),
            "--timeout" => {
                let secs: u64 = args
                    .next()
                    .context("--timeout SECS")?
                    .parse()
                    .context("--timeout takes whole seconds")?;
                options.timeout = Some(Duration::from_secs(secs));
            }
            "--" => {
                options.test_args = args.collect();
                break;
            }
            _ => options.cargo_args.push(arg),
        }
    }
    Ok(options)
}

/// `cargo test --no-run --message-format=json`: the test binaries, in the order cargo would run
/// them (package, then library, binaries and test targets, each by name).
fn build(cargo_args: &[String]) -> anyhow::Result<Vec<Binary>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .arg("test")
        .args(cargo_args)
        .args(["--no-run", "--message-format=json-render-diagnostics"])
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo test --no-run")?;
    if !out.status.success() {
        bail!(
            "cargo test --no-run {} failed ({})",
            cargo_args.join(" "),
            out.status
        );
    }
    let mut binaries: Vec<Binary> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|m| binary(&m))
        .collect();
    let rank = |k: &str| match k {
        "lib" | "proc-macro" => 0,
        "bin" => 1,
        _ => 2,
    };
    binaries.sort_by(|a, b| {
        (a.package.as_str(), rank(&a.kind), a.target.as_str()).cmp(&(
            b.package.as_str(),
            rank(&b.kind),
            b.target.as_str(),
        ))
    });
    binaries.dedup_by(|a, b| a.exe == b.exe);
    Ok(binaries)
}

/// The test binary a compiler-artifact message names, if it names one.
fn binary(m: &Value) -> Option<Binary> {
    if m["reason"] != "compiler-artifact" || m["profile"]["test"] != true {
        return None;
    }
    let exe = PathBuf::from(m["executable"].as_str()?);
    let manifest = Path::new(m["manifest_path"].as_str()?);
    let package = m["package_id"]
        .as_str()
        .and_then(package_name)
        .unwrap_or_default();
    Some(Binary {
        package,
        target: m["target"]["name"].as_str()?.to_string(),
        kind: m["target"]["kind"][0]
            .as_str()
            .unwrap_or("test")
            .to_string(),
        exe,
        dir: manifest.parent()?.to_path_buf(),
    })
}

/// The package's name in a package id: `path+file:///dir/e2e#update-status-e2e@0.1.0`, or
/// `path+file:///dir/xtask#0.1.0` when the name is the folder's, or the older
/// `update-status-e2e 0.1.0 (path+file:///dir/e2e)`.
fn package_name(id: &str) -> Option<String> {
    let Some((url, rest)) = id.split_once('#') else {
        return id.split_whitespace().next().map(str::to_string);
    };
    match rest.split_once('@') {
        Some((name, _)) => Some(name.to_string()),
        None => url.rsplit('/').next().map(str::to_string),
    }
}

/// Runs one binary, streaming its standard output and keeping its `test result:` line.
fn run(binary: Binary, test_args: &[String], timeout: Option<Duration>) -> Run {
    let label = format!("{} ({} {})", binary.target, binary.package, binary.kind);
    println!("\nrun-tests: running {label}: {}", binary.exe.display());
    let started = Instant::now();
    let child = Command::new(&binary.exe)
        .args(test_args)
        .current_dir(&binary.dir)
        .env("CARGO_MANIFEST_DIR", &binary.dir)
        .env("CARGO_PKG_NAME", &binary.package)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Run {
                binary,
                verdict: Verdict::Failed(format!("cannot start it: {e}")),
                counts: String::new(),
                wall: started.elapsed(),
            };
        }
    };
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut result = String::new();
        let Some(stdout) = stdout else { return result };
        let mut out = std::io::stdout();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
            if let Some(r) = line.strip_prefix("test result: ") {
                result = r.to_string();
            }
        }
        result
    });
    let verdict = wait(&mut child, started, timeout);
    let counts = reader.join().unwrap_or_default();
    Run {
        binary,
        verdict,
        counts: counts_of(&counts),
        wall: started.elapsed(),
    }
}

/// Waits for the child, killing it once it has run longer than `timeout`.
fn wait(child: &mut std::process::Child, started: Instant, timeout: Option<Duration>) -> Verdict {
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Verdict::Passed,
            Ok(Some(status)) => return Verdict::Failed(status.to_string()),
            Ok(None) => {}
            Err(e) => return Verdict::Failed(format!("cannot wait for it: {e}")),
        }
        if timeout.is_some_and(|t| started.elapsed() > t) {
            // Its processes first, found while they are still its descendants: once the test
            // binary is gone they are init's, and a controller it started would go on writing
            // into the shared cluster (and holding whatever file locks it inherited).
            let strays = descendants(child.id());
            let _ = child.kill();
            let _ = child.wait();
            kill_all(&strays);
            return Verdict::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The processes descended from `root` (children, theirs...), from `/proc`: a process's parent
/// is the fourth field of its `stat`, after the command name in parentheses.
fn descendants(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let after = &stat[stat.rfind(')')? + 1..];
            let ppid: u32 = after.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// SIGKILL to each of `pids` (those already gone are no error).
fn kill_all(pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    eprintln!(
        "run-tests: killing {} process(es) the timed-out test left",
        pids.len()
    );
    let _ = Command::new("kill")
        .arg("-KILL")
        .args(pids.iter().map(u32::to_string))
        .stderr(Stdio::null())
        .status();
}

/// `ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 1.2s` →
/// `3 passed, 0 failed, 1 ignored`.
fn counts_of(result: &str) -> String {
    let body = result.split_once(". ").map_or(result, |(_, b)| b);
    body.split("; ")
        .filter(|part| {
            ["passed", "failed", "ignored"]
                .iter()
                .any(|w| part.ends_with(w))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn summary(runs: &[Run], total: Duration) -> String {
    let width = runs
        .iter()
        .map(|r| r.binary.target.len())
        .max()
        .unwrap_or(0);
    let mut text = format!("\nrun-tests: summary ({} binaries)\n", runs.len());
    for r in runs {
        let (word, why) = match &r.verdict {
            Verdict::Passed => ("PASS", String::new()),
            Verdict::Failed(s) => ("FAIL", format!("  ({s})")),
            Verdict::TimedOut => ("TIME", "  (killed: ran past --timeout)".to_string()),
        };
        text += &format!(
            "  {word}  {:<width$}  {:>7.1} s  {}{why}\n",
            r.binary.target,
            r.wall.as_secs_f64(),
            r.counts
        );
    }
    let failed: Vec<&str> = runs
        .iter()
        .filter(|r| !matches!(r.verdict, Verdict::Passed))
        .map(|r| r.binary.target.as_str())
        .collect();
    text += &format!(
        "run-tests: {} passed, {} failed in {:.1} min{}\n",
        runs.len() - failed.len(),
        failed.len(),
        total.as_secs_f64() / 60.0,
        if failed.is_empty() {
            String::new()
        } else {
            format!(": {}", failed.join(", "))
        }
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `pid` runs (a zombie, killed and not yet reaped by init, does not).
    fn running(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| Some(s[s.rfind(')')? + 1..].split_whitespace().next()? != "Z"))
            .unwrap_or(false)
    }

    /// A test binary killed past its timeout takes the processes it started with it (issue #46:
    /// a timed-out e2e test's controller went on running, holding the lock file it inherited).
    #[test]
    fn a_timed_out_binary_leaves_no_process_behind() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 300 & echo $!; wait"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout).read_line(&mut line).expect("pid");
        let grandchild: u32 = line.trim().parse().expect("a pid");
        assert!(running(grandchild));
        let verdict = wait(&mut child, Instant::now(), Some(Duration::from_millis(200)));
        assert!(matches!(verdict, Verdict::TimedOut));
        let deadline = Instant::now() + Duration::from_secs(5);
        while running(grandchild) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            !running(grandchild),
            "the test's own child {grandchild} still runs"
        );
    }
}
