//! The workspace's structure, kept (docs/architecture.md): no crate has an import cycle between
//! its files or an import running back up (to a parent module or the crate root), the
//! controller's layers import only the layers below them and are named after concerns (no
//! `hosted` layer), and no file is too long to find one's way in.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use xtask::{Crate, code_lines, members, product_code, targets};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut found = Vec::new();
    let members = members(&root()).expect("the workspace's members");
    assert!(members.len() >= 8, "members: {members:?}");
    for dir in members {
        for (target, file) in targets(&dir) {
            let c = Crate::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            for cycle in c.cycles() {
                found.push(format!(
                    "{} ({target}): {}",
                    dir.display(),
                    cycle.join(" <-> ")
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "import cycles (cargo run -p xtask -- modules shows every arrow):\n{}",
        found.join("\n")
    );
}

/// The controller's layers, top down, each with the layers it may import (besides itself).
const LAYERS: &[(&str, &[&str])] = &[
    (
        "app",
        &[
            "hub_sync",
            "reconcilers",
            "cache",
            "runtime",
            "endpoints",
            "metrics",
        ],
    ),
    ("hub_sync", &["cache", "runtime", "metrics"]),
    ("reconcilers", &["cache", "runtime", "metrics"]),
    ("cache", &["runtime", "metrics"]),
    ("runtime", &["metrics"]),
    // The HTTP endpoints: `/metrics` (its TLS, authorization, connection slots) and the probes.
    ("endpoints", &["metrics"]),
    ("metrics", &[]),
    // Beside the layers, leaves: the generators of the ACM add-on's manifests and of the
    // dashboards (crdgen), and of the OLM bundle (bundlegen).
    ("acm_manifests", &[]),
    // Beside the layers: the console plugin's static HTTPS server, with /metrics' certificate.
    ("console_assets", &["endpoints"]),
    ("dashboards", &[]),
    ("olm_bundle", &[]),
];

#[test]
fn the_controller_layers_import_only_the_layers_below() {
    let lib = root().join("controllers/src/lib.rs");
    let c = Crate::read(&lib).expect("the controllers crate");
    let layer = |m: &str| {
        m.strip_prefix("crate::")
            .map(|p| p.split("::").next().unwrap_or(p).to_string())
    };
    let mut seen = BTreeSet::new();
    let mut wrong = Vec::new();
    for (from, to) in c.arrows() {
        let (Some(a), Some(b)) = (layer(&from), layer(&to)) else {
            continue;
        };
        seen.insert(a.clone());
        if a == b {
            continue;
        }
        match LAYERS.iter().find(|(l, _)| *l == a) {
            Some((_, allowed)) if allowed.contains(&b.as_str()) => {}
            Some(_) => wrong.push(format!("{from} -> {to}: {a} may not import {b}")),
            None => wrong.push(format!("{from}: {a} is no layer of docs/architecture.md")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Every layer is there (a rename would make this test vacuous).
    let leaves = ["acm_manifests", "dashboards", "olm_bundle"];
    for (l, _) in LAYERS.iter().filter(|(l, _)| !leaves.contains(l)) {
        assert!(seen.contains(*l), "no file of layer {l} imports anything");
    }
}

#[test]
fn no_import_runs_back_up() {
    let mut found = Vec::new();
    for dir in members(&root()).expect("the workspace's members") {
        for (target, file) in targets(&dir) {
            let c = Crate::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            for (from, to) in c.upward_arrows() {
                found.push(format!("{} ({target}): {from} -> {to}", dir.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "imports running back up (move what they import down, into a module of its own):\n{}",
        found.join("\n")
    );
}

/// Hosted mode is a mode, not a concern: its caches are in `cache/`, its reconciler in
/// `reconcilers/`, its start-up in `app/`.
#[test]
fn the_controller_has_no_layer_named_after_a_mode() {
    let src = root().join("controllers/src");
    for mode in ["hosted", "standalone", "hub"] {
        assert!(!src.join(mode).exists(), "controllers/src/{mode}/ is back");
        assert!(
            !src.join(format!("{mode}.rs")).exists(),
            "controllers/src/{mode}.rs"
        );
    }
}

/// The most lines of code a file may have, its inline tests aside.
const MAX_CODE_LINES: usize = 800;
/// The most lines a file of tests may have (`tests/*.rs`, `tests.rs`).
const MAX_TEST_LINES: usize = 1500;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_file_is_too_long() {
    let root = root();
    let mut files = Vec::new();
    for dir in members(&root).expect("the workspace's members") {
        rust_files(&dir.join("src"), &mut files);
        rust_files(&dir.join("tests"), &mut files);
    }
    assert!(files.len() > 100, "{} files", files.len());
    let mut long = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let is_tests = f.file_name().is_some_and(|n| n == "tests.rs")
            || f.components().any(|c| c.as_os_str() == "tests");
        let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
        if is_tests {
            let n = text.lines().count();
            if n > MAX_TEST_LINES {
                long.push(format!(
                    "{rel}: {n} lines of tests (at most {MAX_TEST_LINES})"
                ));
            }
        } else {
            let n = code_lines(&text);
            if n > MAX_CODE_LINES {
                long.push(format!(
                    "{rel}: {n} lines of code, inline tests aside (at most {MAX_CODE_LINES})"
                ));
            }
        }
    }
    assert!(long.is_empty(), "files to split:\n{}", long.join("\n"));
}

/// The crates that are not product code: the e2e tests and bench, the fixtures, these checks.
const NOT_PRODUCT: &[&str] = &["e2e", "testdata", "xtask"];

/// Issue #50 item 1: `make lint` denies `clippy::too_many_lines` (more than 80) and
/// `clippy::too_many_arguments` (more than 5, `clippy.toml`) in product code, and no product
/// code may switch them off: a long function is split into named phases instead.
#[test]
fn product_code_never_allows_long_functions() {
    let root = root();
    let mut files = Vec::new();
    for dir in members(&root).expect("the workspace's members") {
        if dir
            .file_name()
            .is_some_and(|n| NOT_PRODUCT.iter().any(|p| n == *p))
        {
            continue;
        }
        rust_files(&dir.join("src"), &mut files);
    }
    assert!(files.len() > 100, "{} files", files.len());
    let mut allowed = Vec::new();
    for f in files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if matches!(name, "tests.rs" | "proptests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let code = product_code(&text);
        for lint in ["too_many_lines", "too_many_arguments"] {
            if code.contains(lint) {
                let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
                allowed.push(format!("{rel}: clippy::{lint}"));
            }
        }
    }
    assert!(
        allowed.is_empty(),
        "product code switching off a length lint (split the function instead):\n{}",
        allowed.join("\n")
    );
}
