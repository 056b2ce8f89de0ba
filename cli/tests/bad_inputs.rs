//! The bad-input corpus (`testdata/bad-inputs/`, format in its `README.md`): the binary, run
//! offline on every case, ends in time, never panics, prints no raw control character (nor one
//! that prints nothing or moves text), and gives the documented exit code and message.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a run may take (a FIFO used to hang the CLI forever).
const TIMEOUT: Duration = Duration::from_secs(30);

/// `key: value` lines of a file, comments and blank lines skipped.
fn entries(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l
                .split_once(": ")
                .or_else(|| l.strip_suffix(':').map(|k| (k, "")))
                .unwrap_or_else(|| panic!("{}: bad line {l:?}", path.display()));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path, skip: &[&str]) {
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.expect("dir entry");
        let name = entry.file_name();
        if skip.iter().any(|s| name == *s) {
            continue;
        }
        std::fs::copy(entry.path(), to.join(&name))
            .unwrap_or_else(|e| panic!("copy {}: {e}", entry.path().display()));
    }
}

/// Builds the input of `case` in `dir`; returns the extra arguments and the base case folder.
fn build(case: &Path, dir: &Path) -> (Vec<String>, Option<PathBuf>) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let spec = entries(&case.join("case"));
    let base = spec
        .iter()
        .find(|(k, _)| k == "base")
        .map(|(_, b)| update_status_testdata::oc_status_case(b));
    if let Some(base) = &base {
        copy_dir(base, dir, &["expected.output", "expected.detailed-output"]);
    }
    copy_dir(case, dir, &["case", "expected"]);
    // `*.outside` files are put out of the folder by `setup: link-out`, never into it.
    for entry in std::fs::read_dir(case).expect("case dir") {
        let name = entry.expect("entry").file_name();
        if name.to_string_lossy().ends_with(".outside") {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    let mut args = Vec::new();
    let mut replace: Option<(String, String)> = None;
    for (key, value) in spec {
        match key.as_str() {
            "base" => {}
            "args" => args.extend(value.split(' ').map(str::to_owned)),
            "setup" => setup(dir, case, &value),
            "replace" => replace = Some((value, String::new())),
            "old" => {
                let r = replace.as_mut().expect("old: after replace:");
                r.1 = value;
            }
            "new" => {
                let (file, old) = replace.take().expect("new: after replace: and old:");
                let path = dir.join(&file);
                let text = std::fs::read_to_string(&path).expect("replace: read");
                assert!(
                    text.contains(&old),
                    "{}: {old:?} not in {file}",
                    case.display()
                );
                std::fs::write(&path, text.replacen(&old, &value, 1)).expect("replace: write");
            }
            other => panic!("{}: unknown key {other}", case.display()),
        }
    }
    (args, base)
}

/// One `setup:` action.
fn setup(dir: &Path, case: &Path, action: &str) {
    let words: Vec<&str> = action.split(' ').collect();
    let file = dir.join(words.get(1).expect("setup: a file"));
    if words[0] != "append" {
        let _ = std::fs::remove_file(&file);
    }
    match words.as_slice() {
        ["symlink", _, "->", target] => {
            std::os::unix::fs::symlink(target, &file).expect("symlink");
        }
        ["link-out", _, from] => {
            // A file out of the folder (someone's kubeconfig), and a link to it.
            let away = outside(dir);
            std::fs::create_dir_all(&away).expect("mkdir");
            let target = away.join(from);
            std::fs::copy(case.join(from), &target).expect("link-out: copy");
            std::os::unix::fs::symlink(&target, &file).expect("symlink");
        }
        ["fifo", _] => {
            let ok = Command::new("mkfifo")
                .arg(&file)
                .status()
                .expect("mkfifo")
                .success();
            assert!(ok, "mkfifo {}", file.display());
        }
        ["mkdir", _] => std::fs::create_dir(&file).expect("mkdir"),
        ["sparse", _, bytes] => {
            let f = std::fs::File::create(&file).expect("create");
            f.set_len(bytes.parse().expect("sparse: a size"))
                .expect("set_len");
        }
        ["append", _, from] => {
            let mut text = std::fs::read_to_string(dir.join(words[1])).unwrap_or_default();
            text.push_str(&std::fs::read_to_string(case.join(from)).expect("append: read"));
            std::fs::write(&file, text).expect("append: write");
        }
        _ => panic!("{}: unknown setup {action:?}", case.display()),
    }
}

/// The folder beside the input folder `dir` that `setup: link-out` puts files into.
fn outside(dir: &Path) -> PathBuf {
    dir.with_extension("outside")
}

/// Runs the binary; returns (exit code, stdout, stderr), or an error after [`TIMEOUT`].
fn run(dir: &Path, args: &[String]) -> Result<(Option<i32>, String, String), String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-update_status"))
        .arg("--from-dir")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run the binary");
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {TIMEOUT:?} (killed)"));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ok((
        status.code(),
        out.join().expect("stdout reader"),
        err.join().expect("stderr reader"),
    ))
}

/// The first raw control character (other than a line feed) of `s`, or one that prints
/// nothing or moves text (`update_status_cli::show::invisible`: Unicode's default-ignorable
/// characters and the line and paragraph separators).
fn raw_control(s: &str) -> Option<char> {
    s.chars().find(|&c| {
        (c.is_control() && c != '\n') || update_status_cli::show::invisible::invisible(c)
    })
}

fn check(case: &Path) -> Result<(), String> {
    let name = case.file_name().expect("case name").to_string_lossy();
    let dir = std::env::temp_dir().join(format!("us-bad-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (args, base) = build(case, &dir);
    let result = run(&dir, &args);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(outside(&dir));
    let (code, stdout, stderr) = result.map_err(|e| format!("{name}: {e}"))?;
    let mut problems = Vec::new();
    if stderr.contains("panicked") {
        problems.push("panicked".to_owned());
    }
    for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        if let Some(c) = raw_control(text) {
            problems.push(format!("raw control character {c:?} on {stream}"));
        }
    }
    for (key, want) in entries(&case.join("expected")) {
        let ok = match key.as_str() {
            "exit" => code == Some(want.parse().expect("exit: a number")),
            "stdout" => stdout.contains(&want),
            "stderr" => stderr.contains(&want),
            "stderr-once" => stderr.matches(&want).count() == 1,
            "not" => !stderr.contains(&want) && !stdout.contains(&want),
            "stdout-no-line" => !stdout.lines().any(|l| l.starts_with(&want)),
            "stdout-same-as" => {
                let base = base.as_ref().expect("stdout-same-as needs a base");
                std::fs::read_to_string(base.join(&want)).expect("base output") == stdout
            }
            other => panic!("{}: unknown expectation {other}", case.display()),
        };
        if !ok {
            problems.push(format!("{key}: {want}"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{name}: failed {problems:?}\n  exit {code:?}\n  stdout:\n{stdout}\n  stderr:\n{stderr}"
        ))
    }
}

#[test]
fn every_bad_input_gives_the_documented_exit_code_and_message() {
    let root = update_status_testdata::bad_inputs_dir();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.expect("entry").path())
        // `controller/`: the controller's corpus (e2e/tests/bad_inputs.rs), not the CLI's.
        .filter(|p| p.is_dir() && !p.ends_with("controller"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 20, "corpus too small: {cases:?}");
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
