//! Where each kind of vendored test data lives: the `oc-status` cases (or another folder named
//! by `$UPDATE_STATUS_FIXTURES`), the `oc-differential` cases, the hosted cases and the
//! bad-input corpus, and the sorted list of the case folders of each.

use std::path::{Path, PathBuf};

/// Environment variable naming another folder of `oc-status` cases (same layout), e.g. a larger
/// private collection.
pub const FIXTURES_ENV: &str = "UPDATE_STATUS_FIXTURES";

/// The folder of captured clusters with `oc adm upgrade status` outputs: `$UPDATE_STATUS_FIXTURES`,
/// else `testdata/oc-status` in this repository.
pub fn oc_status_dir() -> PathBuf {
    std::env::var_os(FIXTURES_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("oc-status"))
}

/// One case of [`oc_status_dir`], e.g. `oc_status_case("4.14.1-degraded")`.
pub fn oc_status_case(name: &str) -> PathBuf {
    oc_status_dir().join(name)
}

/// The simulated snapshots with the real `oc adm upgrade status` outputs (`oc-differential/`,
/// same layout as `oc-status/`): each isolates one place where this project's output once
/// differed from oc's.
pub fn oc_differential_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("oc-differential")
}

/// The hand-written hosted-mode cases (`hosted/cases/`, one folder per case, each with the
/// objects, a `now` file and the `expected*.txt` outputs of this project; see
/// `hosted/PROVENANCE.md`).
pub fn hosted_cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("hosted")
        .join("cases")
}

/// The bad-input corpus: one folder per case, each with a `case` file (how to build the input)
/// and an `expected` file (exit code and output fragments); see `bad-inputs/README.md`.
pub fn bad_inputs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bad-inputs")
}

/// The case folders of [`oc_status_dir`], sorted.
///
/// # Panics
/// If the folder cannot be read: a test without its data must fail, not pass on nothing.
pub fn oc_status_cases() -> Vec<PathBuf> {
    case_dirs(&oc_status_dir())
}

/// The case folders of [`oc_differential_dir`], sorted.
///
/// # Panics
/// If the folder cannot be read.
pub fn oc_differential_cases() -> Vec<PathBuf> {
    case_dirs(&oc_differential_dir())
}

/// Every case with an oc output: [`oc_status_cases`] then [`oc_differential_cases`].
///
/// # Panics
/// If a folder cannot be read.
pub fn all_oc_cases() -> Vec<PathBuf> {
    let mut all = oc_status_cases();
    all.extend(oc_differential_cases());
    all
}

fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("test data folder {} cannot be read: {e}", root.display()));
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_eight_vendored_cases_are_there() {
        let cases = super::oc_status_cases();
        assert!(cases.len() >= 8, "{cases:?}");
        let differential = super::oc_differential_cases();
        assert_eq!(differential.len(), 7, "{differential:?}");
        for c in cases.iter().chain(&differential) {
            assert!(c.join("expected.output").is_file(), "{}", c.display());
            assert!(c.join("now").is_file(), "{}", c.display());
        }
    }
}
