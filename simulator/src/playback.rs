//! The flags of a played update, shared by both simulators' binaries (`simulate-update`,
//! `simulate-hosted-update`): how fast the steps come, how much simulated time each one stands
//! for, when step 0 happens, and when to stop. Flattened into each binary's own flags.

use jiff::{SignedDuration, Timestamp};

use crate::config::parse_duration;

/// How a simulated update is played (`#[command(flatten)]` into a binary's flags).
#[derive(clap::Args, Clone, Debug)]
pub struct PlaybackArgs {
    /// Wall-clock time between steps (e.g. 500ms, 1s, 2s): the speed of the playback.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: SignedDuration,
    /// Simulated time per step (default: the interval, so timestamps follow the wall clock;
    /// longer: accelerated time, for a controller evaluating at a fixed --assess-at).
    #[arg(long, value_parser = parse_duration)]
    pub sim_step: Option<SignedDuration>,
    /// Simulated instant of step 0 (RFC 3339; default: now + start delay − interval, so that
    /// step timestamps follow the wall clock and are never in its future).
    #[arg(long, value_name = "RFC3339")]
    pub start: Option<Timestamp>,
    /// Wait this long after creating the cluster before the update starts.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub start_delay: SignedDuration,
    /// Stop after this many steps (an update with a stalled operator never completes).
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// No API server: print what each step does, as fast as possible.
    #[arg(long)]
    pub dry_run: bool,
}

impl PlaybackArgs {
    /// The simulated instant of step 0: `--start`, else `now` + start delay − interval (the
    /// first step then comes at the wall-clock instant it is simulated at).
    pub fn start_at(&self, now: Timestamp) -> Timestamp {
        self.start.unwrap_or_else(|| {
            now.checked_add(self.start_delay - self.interval)
                .unwrap_or(now)
        })
    }

    /// The simulated time of one step: `--sim-step`, else the interval.
    pub fn sim_step(&self) -> SignedDuration {
        self.sim_step.unwrap_or(self.interval)
    }

    /// Whether a playback stops: the update `completed`, or `steps` reached `max` (`--max-steps`
    /// unless the caller bounds it otherwise).
    pub fn done(completed: bool, steps: u64, max: Option<u64>) -> bool {
        completed || max.is_some_and(|m| steps >= m)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(clap::Parser)]
    struct Flags {
        #[command(flatten)]
        playback: PlaybackArgs,
    }

    #[test]
    fn step_zero_follows_the_wall_clock_unless_given() {
        let now: Timestamp = "2026-01-01T10:00:00Z".parse().expect("ts");
        let f = Flags::parse_from(["x", "--interval", "2s", "--start-delay", "10s"]);
        assert_eq!(f.playback.start_at(now), now + SignedDuration::from_secs(8));
        assert_eq!(f.playback.sim_step(), SignedDuration::from_secs(2));
        let f = Flags::parse_from(["x", "--start", "2025-01-01T00:00:00Z", "--sim-step", "1m"]);
        assert_eq!(
            f.playback.start_at(now),
            "2025-01-01T00:00:00Z".parse::<Timestamp>().expect("ts")
        );
        assert_eq!(f.playback.sim_step(), SignedDuration::from_mins(1));
        assert!(PlaybackArgs::done(true, 0, None));
        assert!(PlaybackArgs::done(false, 3, Some(3)));
        assert!(!PlaybackArgs::done(false, 2, Some(3)));
    }
}
