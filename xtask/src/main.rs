//! `cargo run -p xtask -- modules [CRATE_DIR...]`: prints, for every target of every workspace
//! crate (or of the crates named), its files, the arrows between them, its import cycles and the imports running back up (to a
//! parent module or the crate root).
//! Exits 1 when a target has a cycle or an import back up.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use xtask::{Crate, members, targets};

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<bool> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("modules") {
        anyhow::bail!("usage: cargo run -p xtask -- modules [CRATE_DIR...]");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("the workspace root")?
        .to_path_buf();
    let crates: Vec<PathBuf> = if args.len() > 1 {
        args[1..].iter().map(|a| root.join(a)).collect()
    } else {
        members(&root)?
    };
    let mut clean = true;
    for dir in crates {
        for (target, file) in targets(&dir) {
            let c = Crate::read(&file)?;
            let cycles = c.cycles();
            let upward = c.upward_arrows();
            println!(
                "{} ({target}): {} files, {} arrows, {} cycles, {} back up",
                dir.strip_prefix(&root).unwrap_or(&dir).display(),
                c.modules
                    .iter()
                    .filter(|m| m.parent.is_none_or(|p| c.modules[p].file != m.file))
                    .count(),
                c.edges.len(),
                cycles.len(),
                upward.len()
            );
            for (from, to) in c.arrows() {
                println!("  {from} -> {to}");
            }
            for (from, to) in &upward {
                println!("  BACK UP: {from} -> {to}");
            }
            for cycle in &cycles {
                println!("  CYCLE: {}", cycle.join(" <-> "));
            }
            clean &= cycles.is_empty() && upward.is_empty();
        }
    }
    Ok(clean)
}
