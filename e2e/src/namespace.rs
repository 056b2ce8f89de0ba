//! [`TestNamespace`]: a namespace created for one test (`<prefix>-<random>`), deleted when
//! dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

use crate::error::Error;
use crate::settings::{KEEP_ENV, env_flag};

/// Label put on every test namespace.
pub const NAMESPACE_LABEL: &str = "update-status.openshift.io/e2e";
/// Field manager of the harness's own writes.
pub const FIELD_MANAGER: &str = "update-status-e2e";

/// A namespace created for one test.
pub struct TestNamespace {
    name: String,
    client: Client,
    kubeconfig: PathBuf,
    deleted: bool,
}

impl TestNamespace {
    /// Creates a namespace named `<prefix>-<random>` with `client`; it is deleted when the
    /// returned guard is dropped (or by [`TestNamespace::delete`]), through `kubeconfig`.
    pub(crate) async fn create(
        client: &Client,
        kubeconfig: &Path,
        prefix: &str,
    ) -> Result<TestNamespace, Error> {
        let name = namespace_name(prefix);
        let api: Api<Namespace> = Api::all(client.clone());
        let body = json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {NAMESPACE_LABEL: "true"}},
        });
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER),
            &Patch::Apply(&body),
        )
        .await
        .map_err(|source| Error::Api {
            action: format!("creating namespace {name}"),
            source,
        })?;
        Ok(TestNamespace {
            name,
            client: client.clone(),
            kubeconfig: kubeconfig.to_path_buf(),
            deleted: false,
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Deletes it now (the namespace controller then removes its content).
    pub async fn delete(mut self) -> Result<(), Error> {
        self.deleted = true;
        let api: Api<Namespace> = Api::all(self.client.clone());
        match api.delete(&self.name, &DeleteParams::background()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.is_not_found() => Ok(()),
            Err(source) => Err(Error::Api {
                action: format!("deleting namespace {}", self.name),
                source,
            }),
        }
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        if self.deleted || env_flag(KEEP_ENV) {
            return;
        }
        // Drop cannot await, and the test's runtime may already be shutting down: ask
        // kubectl, without waiting for the namespace controller.
        let result = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args([
                "delete",
                "namespace",
                &self.name,
                "--wait=false",
                "--ignore-not-found",
            ])
            .stdin(Stdio::null())
            .output();
        match result {
            Ok(out) if out.status.success() => {}
            Ok(out) => eprintln!(
                "e2e: deleting namespace {} failed: {}",
                self.name,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => eprintln!(
                "e2e: deleting namespace {}: cannot run kubectl: {e}",
                self.name
            ),
        }
    }
}

/// `<prefix>-<6 random chars>`, a valid DNS label.
fn namespace_name(prefix: &str) -> String {
    let mut clean: String = prefix
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    clean.truncate(55);
    let clean = clean.trim_matches('-');
    let clean = if clean.is_empty() { "e2e" } else { clean };
    format!("{clean}-{}", random_suffix())
}

fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(d.as_nanos());
    }
    let mut n = hasher.finish();
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..6)
        .map(|_| {
            let c = alphabet[(n % 36) as usize];
            n /= 36;
            c as char
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names_are_dns_labels() {
        let a = namespace_name("GC Test_1");
        assert!(a.starts_with("gc-test-1-"), "{a}");
        assert_eq!(a.len(), "gc-test-1-".len() + 6);
        assert_ne!(namespace_name("x"), namespace_name("x"));
        let long = namespace_name(&"a".repeat(100));
        assert!(long.len() <= 63, "{long}");
        assert!(namespace_name("--").starts_with("e2e-"));
    }
}
