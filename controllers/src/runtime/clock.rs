//! Where "now" comes from: the wall clock, or a fixed instant (`--assess-at`, for reproducing a
//! captured cluster exactly, as `oc adm upgrade status` does in its mock mode).

use std::time::Duration;

use jiff::Timestamp;

/// The reconcilers' clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// The wall clock.
    #[default]
    Wall,
    /// Always this instant.
    Fixed(Timestamp),
}

impl Clock {
    /// The current instant by this clock.
    pub fn now(&self) -> Timestamp {
        match self {
            Clock::Wall => Timestamp::now(),
            Clock::Fixed(t) => *t,
        }
    }
}

/// Exponential back-off, shared by everything that retries: `first` before the first retry
/// (and with no failure yet), doubled per further consecutive failure up to `cap`, times
/// `1 + jitter` (clamped to [-0.1, 0.1]), never above `cap`.
pub fn backoff(first: Duration, cap: Duration, failures: u32, jitter: f64) -> Duration {
    let exp = failures.saturating_sub(1).min(20);
    first
        .saturating_mul(1u32 << exp)
        .min(cap)
        .mul_f64(1.0 + jitter.clamp(-0.1, 0.1))
        .min(cap)
}

/// A pseudo-random jitter in [-0.1, 0.1) (no RNG crate needed for this).
pub fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    jitter_from(h.finish())
}

/// Maps any hash to [-0.1, 0.1): 2,000 steps of 0.0001 starting at -0.1.
fn jitter_from(hash: u64) -> f64 {
    (hash % 2000) as f64 / 10_000.0 - 0.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_in_its_range() {
        for _ in 0..100 {
            let j = jitter();
            assert!((-0.1..0.1).contains(&j), "{j}");
        }
        // The bounds, deterministically: the extremes of the hash range stay inside.
        assert_eq!(jitter_from(0), -0.1);
        for hash in [1999, 2000, 3999, u64::MAX, u64::MAX - 1, 2000 * 7 + 1999] {
            let j = jitter_from(hash);
            assert!((-0.1..0.1).contains(&j), "{hash} -> {j}");
        }
    }
}
