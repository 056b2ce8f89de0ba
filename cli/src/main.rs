//! `kubectl-update_status` (`kubectl update-status`, `oc update-status`): prints how a cluster
//! update goes, exactly like `oc adm upgrade status`, from the objects update-status writes —
//! online from the API, or offline from a captured snapshot analysed with the controller's
//! pure logic. See `cli/README.md`.

use std::process::ExitCode;

use clap::Parser;
use update_status_cli::args::Cli;
use update_status_cli::{dispatch, exit};

/// mimalloc (v2, no transparent huge pages: as little RSS as glibc): a large capture allocates
/// and frees millions of small values, and glibc's allocator spent half of the time after
/// parsing on consolidating freed chunks (docs/benchmarks.md). Feature `mimalloc` (default).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match dispatch::run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", exit::message(&e));
            exit::code(&e)
        }
    }
}
