//! Where the vendored test data lives (see `PROVENANCE.md`). Dev-only: used by tests, benches
//! and dev tools, never by the shipped binaries.

mod folders;
pub mod must_gather;

pub use folders::{
    FIXTURES_ENV, all_oc_cases, bad_inputs_dir, hosted_cases_dir, oc_differential_cases,
    oc_differential_dir, oc_status_case, oc_status_cases, oc_status_dir,
};
