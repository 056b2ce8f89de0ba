//! How fresh a cluster's report is: the hub copy's `update.openshift.io/last-reported`
//! annotation (the agent's heartbeat), its age as kubectl prints an AGE, and `Stale` past
//! `--stale-after`.

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;
use update_status_api::acm::LAST_REPORTED_ANNOTATION;
use update_status_api::crd::ControlPlaneUpdateStatus;

/// The default of `--stale-after`: three heartbeat intervals of the agent (5 minutes each).
pub const DEFAULT_STALE_AFTER: SignedDuration = SignedDuration::from_mins(15);

/// How far ahead of `now` a heartbeat may be stamped and still count (the agent's clock and
/// the reader's disagree a little): beyond it, the row is `Unknown` with a warning, since a
/// heartbeat stamped in the future would otherwise keep a row `Fresh` until that time, whatever
/// became of the agent. Five minutes, as the skew Kerberos and most token validators accept.
pub const CLOCK_SKEW_ALLOWANCE: SignedDuration = SignedDuration::from_mins(5);

/// At most this many characters of a bad annotation value are quoted in a warning.
const EXCERPT: usize = 40;

/// Whether a cluster's last report is recent enough to trust.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// The agent reported within `--stale-after`.
    Fresh,
    /// The agent's last report is older than `--stale-after`: what the row says may be out of
    /// date (the agent stopped, or cannot reach the hub).
    Stale,
    /// The copy carries no heartbeat (an agent older than the heartbeat, or a copy that is not a
    /// hub copy), an unreadable one, or one stamped further in the future than
    /// [`CLOCK_SKEW_ALLOWANCE`]: its age cannot be told. Never counted as stale.
    Unknown,
}

/// The instant and threshold rows are judged at.
#[derive(Clone, Copy, Debug)]
pub struct Judge {
    /// The instant (`--now`, else the clock).
    pub now: Timestamp,
    /// `--stale-after`.
    pub stale_after: SignedDuration,
}

impl Judge {
    /// The last report of `cp` and its freshness; a value that is not an RFC 3339 time gives
    /// `Unknown` and a warning naming the object and quoting the start of the value.
    pub fn of(
        &self,
        cp: &ControlPlaneUpdateStatus,
    ) -> (Option<Timestamp>, Freshness, Option<String>) {
        let Some(value) = cp
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(LAST_REPORTED_ANNOTATION))
        else {
            return (None, Freshness::Unknown, None);
        };
        match value.trim().parse::<Timestamp>() {
            Ok(at) if at.duration_since(self.now) > CLOCK_SKEW_ALLOWANCE => (
                Some(at),
                Freshness::Unknown,
                Some(format!(
                    "ControlPlaneUpdateStatus {}/{}: annotation {LAST_REPORTED_ANNOTATION} is {} in the future ({at}), beyond the {} clock-skew allowance: its freshness is shown as unknown (check the clocks of the cluster and of this machine)",
                    cp.metadata.namespace.as_deref().unwrap_or_default(),
                    cp.metadata.name.as_deref().unwrap_or_default(),
                    human(at.duration_since(self.now)),
                    human(CLOCK_SKEW_ALLOWANCE),
                )),
            ),
            Ok(at) => {
                let fresh = self.now.duration_since(at) <= self.stale_after;
                let freshness = if fresh {
                    Freshness::Fresh
                } else {
                    Freshness::Stale
                };
                (Some(at), freshness, None)
            }
            Err(_) => {
                let excerpt: String = value.chars().take(EXCERPT).collect();
                let more = if value.chars().count() > EXCERPT {
                    "..."
                } else {
                    ""
                };
                (
                    None,
                    Freshness::Unknown,
                    Some(format!(
                        "ControlPlaneUpdateStatus {}/{}: annotation {LAST_REPORTED_ANNOTATION} is not an RFC 3339 time ({excerpt:?}{more}): its last report is shown as unknown",
                        cp.metadata.namespace.as_deref().unwrap_or_default(),
                        cp.metadata.name.as_deref().unwrap_or_default(),
                    )),
                )
            }
        }
    }
}

/// `d` as kubectl prints an AGE (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`):
/// about two significant figures, `0s` for up to a second in the future (clock skew),
/// `<invalid>` beyond.
pub fn human(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::ControlPlaneUpdateStatusSpec;

    #[test]
    fn ages_read_as_kubectl_prints_them() {
        let s = SignedDuration::from_secs;
        for (secs, want) in [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (125, "2m5s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (49 * 3600, "2d1h"),
            (8 * 86400, "8d"),
            (730 * 86400, "2y"),
            (731 * 86400, "2y1d"),
            (9 * 365 * 86400, "9y"),
        ] {
            assert_eq!(human(s(secs)), want, "{secs} s");
        }
    }

    fn cp(annotation: Option<&str>) -> ControlPlaneUpdateStatus {
        let mut o = ControlPlaneUpdateStatus::new("c1", ControlPlaneUpdateStatusSpec {});
        o.metadata.namespace = Some("c1".into());
        o.metadata.annotations = annotation.map(|v| {
            [(LAST_REPORTED_ANNOTATION.to_owned(), v.to_owned())]
                .into_iter()
                .collect()
        });
        o
    }

    #[test]
    fn a_report_older_than_the_threshold_is_stale_and_one_without_heartbeat_unknown() {
        let judge = Judge {
            now: "2026-12-05T12:00:00Z".parse().expect("now"),
            stale_after: DEFAULT_STALE_AFTER,
        };
        let at = |v| judge.of(&cp(v));
        assert_eq!(at(Some("2026-12-05T11:50:00Z")).1, Freshness::Fresh);
        assert_eq!(at(Some("2026-12-05T11:45:00Z")).1, Freshness::Fresh, "15m");
        assert_eq!(at(Some("2026-12-05T11:44:59Z")).1, Freshness::Stale);
        assert_eq!(
            at(Some("2026-12-05T12:05:00Z")).1,
            Freshness::Fresh,
            "future"
        );
        assert_eq!(at(None), (None, Freshness::Unknown, None));
        assert_eq!(
            at(Some("2026-12-05T12:04:00Z")).1,
            Freshness::Fresh,
            "within the skew allowance"
        );
        let (ts, f, future) = at(Some("2099-01-01T00:00:00Z"));
        assert_eq!(
            (ts, f),
            (
                Some("2099-01-01T00:00:00Z".parse().expect("ts")),
                Freshness::Unknown
            ),
            "a heartbeat stamped beyond the skew allowance never keeps a row fresh"
        );
        let future = future.expect("a warning about the future heartbeat");
        assert!(
            future.contains("c1/c1")
                && future.contains("in the future")
                && future.contains("2099-01-01T00:00:00Z"),
            "{future}"
        );
        let (ts, f, warning) = at(Some(
            "yesterday\u{1b}[31m and a very long tail that goes on and on",
        ));
        assert_eq!((ts, f), (None, Freshness::Unknown));
        let warning = warning.expect("a warning");
        assert!(
            warning.contains("c1/c1") && warning.contains(LAST_REPORTED_ANNOTATION),
            "{warning}"
        );
        assert!(
            !warning.contains("on and on") && !warning.contains('\u{1b}'),
            "quotes a short, escaped excerpt: {warning}"
        );
    }
}
