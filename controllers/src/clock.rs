//! Where "now" comes from: the wall clock, or a fixed instant (`--assess-at`, for reproducing a
//! captured cluster exactly, as `oc adm upgrade status` does in its mock mode).

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
