//! The environment variables that steer the harness: reusing a running cluster, keeping what
//! the harness started, the fixtures folder, the quiet period of the steady-state checks.

use std::time::Duration;

/// Set to `1` to run against the cluster of `KUBECONFIG` instead of starting one.
pub const REUSE_ENV: &str = "UPDATE_STATUS_E2E_REUSE";
/// Set to `1` to keep the cluster started by the harness, and the test namespaces.
pub const KEEP_ENV: &str = "UPDATE_STATUS_E2E_KEEP";
/// Overrides the fixtures folder (the one holding one folder per captured cluster).
pub const FIXTURES_ENV: &str = update_status_testdata::FIXTURES_ENV;

/// A flag variable is set: `1` or `true`.
pub(crate) fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// How long the steady-state checks watch for writes: `UPDATE_STATUS_E2E_QUIET_SECONDS`, else
/// `default_seconds`.
pub fn quiet_period(default_seconds: u64) -> Duration {
    Duration::from_secs(
        std::env::var("UPDATE_STATUS_E2E_QUIET_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default_seconds),
    )
}
