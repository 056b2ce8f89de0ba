//! What a writer remembers of a write until the watch cache shows it ([`Pending`]), and the
//! fingerprints it compares the next desired content with.

use std::collections::BTreeMap;
use std::time::Instant;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde::Serialize;

/// A write the watch cache may not show yet: its resourceVersion and fingerprints of what was
/// written (not copies: a first pass writes thousands of objects, all pending at once).
#[derive(Clone, Debug)]
pub(super) struct Pending {
    pub(super) resource_version: Option<String>,
    /// [`meta_fingerprint`] of the labels and owner written.
    pub(super) meta: u64,
    /// [`json_fingerprint`] of the status written.
    pub(super) status: u64,
    pub(super) at: Instant,
    /// The metadata was applied (a creation included).
    pub(super) meta_written: bool,
}

/// Feeds what is written to a hasher.
struct HashWriter(std::hash::DefaultHasher);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        std::hash::Hasher::write(&mut self.0, buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A 64-bit fingerprint of a value's JSON (equal values, equal JSON: our types serialize
/// deterministically, maps are B-trees). Allocates nothing.
pub(super) fn json_fingerprint<T: Serialize>(value: &T) -> u64 {
    let mut w = HashWriter(std::hash::DefaultHasher::new());
    // Our status types always serialize; were one to fail, the partial fingerprint would only
    // make the object look changed (one extra write).
    let _ = serde_json::to_writer(&mut w, value);
    std::hash::Hasher::finish(&w.0)
}

/// Fingerprint of an object's labels (as written: with the reconciler's) and owner.
pub(super) fn meta_fingerprint(
    labels: &BTreeMap<String, String>,
    owner: Option<&OwnerReference>,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    labels.hash(&mut h);
    owner.map(|o| (&o.uid, &o.kind, &o.name)).hash(&mut h);
    h.finish()
}
