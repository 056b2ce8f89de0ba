//! The workspace's structure, kept: no crate has an import cycle between its files, and the
//! controller's layers import only the layers below them (docs/architecture.md).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use xtask::{Crate, members, targets};

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
            "hosted",
            "cache",
            "runtime",
            "metrics",
        ],
    ),
    ("hub_sync", &["hosted", "cache", "runtime", "metrics"]),
    ("reconcilers", &["cache", "runtime", "metrics"]),
    ("hosted", &["cache", "runtime", "metrics"]),
    ("cache", &["runtime", "metrics"]),
    ("runtime", &["metrics"]),
    ("metrics", &[]),
    // Beside the layers: the ACM add-on's manifest generator (crdgen), a leaf.
    ("acm_manifests", &[]),
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
    for (l, _) in LAYERS.iter().filter(|(l, _)| *l != "acm_manifests") {
        assert!(seen.contains(*l), "no file of layer {l} imports anything");
    }
}
