//! Loads snapshot folders (the `testdata/oc-status/<case>/` layout) into the cluster
//! of `KUBECONFIG` (or `--kubeconfig FILE`).
//!
//! usage: load-snapshot [--kubeconfig FILE] [--clean] DIR...
//!
//! `--clean` first deletes every ClusterVersion, ClusterOperator, MachineConfigPool,
//! MachineConfig and Node, so the cluster holds exactly the loaded snapshot.

use std::path::PathBuf;

use anyhow::{Context, bail};
use update_status_tools::{front, snapshot};

const USAGE: &str = "usage: load-snapshot [--kubeconfig FILE] [--clean] DIR...";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(err) = run().await {
        // Loader errors already name their cause; other errors print their chain (`{:#}`).
        // Either way, no backtrace.
        match err.downcast_ref::<snapshot::Error>() {
            Some(e) => eprintln!("load-snapshot: error: {e}"),
            None => eprintln!("load-snapshot: error: {err:#}"),
        }
        std::process::exit(1);
    }
}

async fn run() -> anyhow::Result<()> {
    let mut kubeconfig: Option<PathBuf> = None;
    let mut clean = false;
    let mut dirs = Vec::new();
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--kubeconfig") => {
                kubeconfig = Some(args.next().context("--kubeconfig needs a file")?.into())
            }
            Some("--clean") => clean = true,
            Some("-h" | "--help") => {
                println!("{USAGE}");
                return Ok(());
            }
            Some(s) if s.starts_with('-') => bail!("unknown option {s}\n{USAGE}"),
            _ => dirs.push(PathBuf::from(arg)),
        }
    }
    if dirs.is_empty() {
        bail!("no snapshot folder given\n{USAGE}");
    }

    let client = front::client(kubeconfig.as_deref()).await?;

    if clean {
        let n = snapshot::clear(&client).await?;
        println!("deleted {n} objects of earlier snapshots");
    }
    for dir in &dirs {
        let n = snapshot::load_dir(&client, dir).await?;
        println!("loaded {n} objects from {}", dir.display());
    }
    Ok(())
}
