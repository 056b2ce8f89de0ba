//! Fingerprints of what the caches hold: 64-bit hashes that tell "changed or not" without
//! keeping or comparing the content. [`hash_of`] is the one hash (SipHash with fixed keys:
//! stable within the process, which is all a cache needs; equal contents give equal
//! fingerprints, two different contents collide at a 2^-64 chance); [`unordered`] sums hashes
//! so that a store's order (none) does not matter; [`objects`] is a store's objects by name and
//! resourceVersion. Who fingerprints what: the inputs of a pass
//! ([`crate::cache::readings::ClusterReadings::key`], from the same list of stores as the
//! readings themselves), our progress insights ([`crate::cache::insights`]: labels, owner,
//! status). A Node's [`crate::cache::nodes::CompactNode::timing_key`] hashes its interned strings
//! by address instead, which only a node's own cache can.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::runtime::existing::Cached;

/// The fingerprint of `t`.
pub fn hash_of<T: Hash + ?Sized>(t: &T) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// The order-independent fingerprint of `items`: the wrapping sum of their [`hash_of`].
pub fn unordered<T: Hash>(items: impl IntoIterator<Item = T>) -> u64 {
    items
        .into_iter()
        .fold(0u64, |sum, t| sum.wrapping_add(hash_of(&t)))
}

/// The order-independent fingerprint of a store's `objs`: each one's name and resourceVersion,
/// with `kind` (the store's place in its list, so that the same name in two stores counts
/// twice).
pub fn objects<K: Cached>(kind: u8, objs: &[Arc<K>]) -> u64 {
    unordered(
        objs.iter()
            .map(|o| (kind, o.cached_name(), o.cached_resource_version())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::input::ClusterOperator;

    fn operator(name: &str, rv: &str) -> Arc<ClusterOperator> {
        let mut o = ClusterOperator::default();
        o.metadata.name = Some(name.into());
        o.metadata.resource_version = Some(rv.into());
        Arc::new(o)
    }

    #[test]
    fn a_store_fingerprint_ignores_order_and_sees_names_versions_and_kinds() {
        let (a, b) = (operator("a", "1"), operator("b", "1"));
        let ab = objects(0, &[a.clone(), b.clone()]);
        assert_eq!(ab, objects(0, &[b.clone(), a.clone()]));
        assert_ne!(ab, objects(0, &[a.clone(), operator("b", "2")]));
        assert_ne!(ab, objects(0, std::slice::from_ref(&a)));
        assert_ne!(ab, objects(1, &[a, b]));
        assert_eq!(objects::<ClusterOperator>(0, &[]), 0);
    }
}
