//! Go duration primitives: instants and durations as `i128` nanoseconds, with Go's
//! `time.Duration` semantics (see the module documentation of [`super`]).

use jiff::{SignedDuration, Timestamp};

use crate::format::SECOND;

/// Go's `Duration.Seconds()`.
pub(super) fn go_seconds(ns: i128) -> f64 {
    let sec = ns / SECOND;
    let nsec = ns % SECOND;
    sec as f64 + nsec as f64 / 1e9
}

/// Go's `t.Sub(u)`: nanoseconds, saturated to the `i64` range.
pub(super) fn sub(t: i128, u: i128) -> i128 {
    (t - u).clamp(i128::from(i64::MIN), i128::from(i64::MAX))
}

pub(super) fn ns(t: Timestamp) -> i128 {
    t.as_nanosecond()
}

pub(super) fn ts(ns: i128) -> Option<Timestamp> {
    Timestamp::from_nanosecond(ns).ok()
}

pub(super) fn signed(ns: i128) -> Option<SignedDuration> {
    SignedDuration::try_from_nanos_i128(ns)
}

/// Like [`signed`], saturating instead of failing (inputs here are already bounded).
pub(super) fn saturating_signed(ns: i128) -> SignedDuration {
    signed(ns).unwrap_or(if ns < 0 {
        SignedDuration::MIN
    } else {
        SignedDuration::MAX
    })
}
