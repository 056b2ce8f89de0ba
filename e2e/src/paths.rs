//! Where things are: the repository root, the captured clusters, the workspace's binaries.

use std::path::{Path, PathBuf};

/// The repository root (parent of the e2e crate).
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The folder of captured clusters (see [`update_status_testdata::oc_status_dir`]).
pub fn fixtures_dir() -> PathBuf {
    update_status_testdata::oc_status_dir()
}

/// The folder of one `oc adm upgrade status` snapshot, e.g. `oc_status_case("4.14.1-degraded")`.
pub fn oc_status_case(name: &str) -> PathBuf {
    fixtures_dir().join(name)
}

/// Path of a binary of this workspace (`target/debug/<name>`), overridable with `env`.
pub fn workspace_bin(name: &str, env: &str) -> PathBuf {
    std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/debug").join(name))
}

/// Path of a release binary of this workspace (`target/release/<name>`, built by `hack/e2e.sh`
/// and `make image`), overridable with `env`.
pub fn release_bin(name: &str, env: &str) -> PathBuf {
    std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/release").join(name))
}
