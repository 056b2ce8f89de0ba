//! Running statistics of durations ([`DurationStats`]): constant size, merged across updates
//! with weights, read back as a mean and a log-normal spread.

use update_status_api::history::DurationStats;

/// Adds one duration (seconds).
pub fn add(stats: &mut DurationStats, seconds: f64) {
    let s = seconds.max(0.0);
    let l = (1.0 + s).ln();
    stats.count = stats.count.saturating_add(1);
    // Rounded: the object stays short (a few digits each), the summary as exact as needed.
    stats.sum_seconds = (stats.sum_seconds + s).round();
    stats.sum_log = round_to(stats.sum_log + l, 1e5);
    stats.sum_log_sq = round_to(stats.sum_log_sq + l * l, 1e4);
}

fn round_to(x: f64, scale: f64) -> f64 {
    (x * scale).round() / scale
}

/// A weighted merge of several statistics: mean seconds, and the standard deviation of
/// `ln(1 + seconds)` (the spread of one sample).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Weighted number of samples.
    pub weight: f64,
    /// Mean duration (seconds).
    pub mean: f64,
    /// Standard deviation of the log durations.
    pub log_sd: f64,
    /// Mean of the log durations (`ln(1 + seconds)`).
    pub mean_log: f64,
}

impl Summary {
    /// No sample.
    pub fn is_empty(&self) -> bool {
        self.weight <= 0.0
    }
}

/// Merges `(stats, weight)` pairs: each sample of a statistic counts `weight`.
pub fn merge<'a>(items: impl IntoIterator<Item = (&'a DurationStats, f64)>) -> Summary {
    let (mut w, mut sum, mut sl, mut sl2) = (0.0, 0.0, 0.0, 0.0);
    for (s, weight) in items {
        if s.count == 0 || !weight.is_finite() || weight <= 0.0 {
            continue;
        }
        let n = f64::from(s.count) * weight;
        w += n;
        sum += s.sum_seconds * weight;
        sl += s.sum_log * weight;
        sl2 += s.sum_log_sq * weight;
    }
    if w <= 0.0 {
        return Summary::default();
    }
    let mean_log = sl / w;
    let var = (sl2 / w - mean_log * mean_log).max(0.0);
    Summary {
        weight: w,
        mean: sum / w,
        log_sd: var.sqrt(),
        mean_log,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_with_weights() {
        let mut a = DurationStats::default();
        let mut b = DurationStats::default();
        add(&mut a, 100.0);
        add(&mut a, 100.0);
        add(&mut b, 400.0);
        let m = merge([(&a, 1.0), (&b, 1.0)]);
        assert!((m.mean - 200.0).abs() < 1e-9);
        assert!((m.weight - 3.0).abs() < 1e-9);
        let m = merge([(&a, 1.0), (&b, 2.0)]);
        assert!((m.mean - 250.0).abs() < 1e-9);
        assert!(m.log_sd > 0.5);
        // Two equal samples: no spread (but for the rounding of the sums).
        assert!(merge([(&a, 1.0)]).log_sd < 0.01);
        assert!(merge([(&DurationStats::default(), 1.0)]).is_empty());
    }
}
