//! When a reconciler wants its next pass, time alone considered ([`Requeue`]): what every
//! `reconcile` returns, and the one way requeues are merged (the sooner wins).

use std::time::Duration;

/// When the next pass is due if nothing wakes the reconciler before: never (only a change
/// does) or after a delay. Merged with [`Requeue::min`] (or collected from several): the
/// sooner wins, `Never` yields to any delay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Requeue {
    /// Only a change wakes it (the runner still looks again after
    /// [`crate::runtime::runner::MAX_REQUEUE`]).
    #[default]
    Never,
    /// After this delay.
    After(Duration),
}

impl Requeue {
    /// The sooner of the two.
    #[must_use]
    pub fn min(self, other: Requeue) -> Requeue {
        match (self, other) {
            (Requeue::After(a), Requeue::After(b)) => Requeue::After(a.min(b)),
            (Requeue::Never, r) | (r, Requeue::Never) => r,
        }
    }

    /// The delay (`None`: never).
    pub fn delay(self) -> Option<Duration> {
        match self {
            Requeue::Never => None,
            Requeue::After(d) => Some(d),
        }
    }
}

impl From<Option<Duration>> for Requeue {
    /// `None`: never.
    fn from(d: Option<Duration>) -> Self {
        d.map_or(Requeue::Never, Requeue::After)
    }
}

impl From<Duration> for Requeue {
    fn from(d: Duration) -> Self {
        Requeue::After(d)
    }
}

impl<R: Into<Requeue>> FromIterator<R> for Requeue {
    /// The soonest of all (`Never` when empty).
    fn from_iter<I: IntoIterator<Item = R>>(iter: I) -> Self {
        iter.into_iter()
            .map(Into::into)
            .fold(Requeue::Never, Requeue::min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sooner_wins_and_never_yields() {
        let (a, b) = (Duration::from_secs(1), Duration::from_secs(2));
        assert_eq!(Requeue::After(b).min(Requeue::After(a)), Requeue::After(a));
        assert_eq!(Requeue::Never.min(Requeue::After(b)), Requeue::After(b));
        assert_eq!(Requeue::After(b).min(Requeue::Never), Requeue::After(b));
        assert_eq!(Requeue::Never.min(Requeue::Never), Requeue::Never);
        assert_eq!(
            [Some(b), None, Some(a)].into_iter().collect::<Requeue>(),
            Requeue::After(a)
        );
        assert_eq!(
            std::iter::empty::<Requeue>().collect::<Requeue>(),
            Requeue::Never
        );
        assert_eq!(Requeue::from(None), Requeue::Never);
        assert_eq!(Requeue::After(a).delay(), Some(a));
    }
}
