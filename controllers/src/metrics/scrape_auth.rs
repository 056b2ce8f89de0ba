//! The authorization of `/metrics` scrapes (`crate::endpoints::auth`): the TokenReviews sent
//! (`update_status_metrics_auth_reviews_total{result}`) and the requests and connections
//! refused before any review (`update_status_metrics_auth_refused_total{reason}`).

use prometheus::core::Collector;
use prometheus::{IntCounterVec, Opts};

use super::family::{Family, total};

/// The authorization of `/metrics` scrapes.
pub struct ScrapeAuthMetrics {
    reviews: IntCounterVec,
    refused: IntCounterVec,
}

impl ScrapeAuthMetrics {
    pub(super) fn new() -> Result<Self, prometheus::Error> {
        Ok(ScrapeAuthMetrics {
            reviews: IntCounterVec::new(
                Opts::new(
                    "update_status_metrics_auth_reviews_total",
                    "TokenReviews sent to the API server to authorize /metrics scrapes, by result (allowed, forbidden, unauthenticated, error).",
                ),
                &["result"],
            )?,
            refused: IntCounterVec::new(
                Opts::new(
                    "update_status_metrics_auth_refused_total",
                    "/metrics requests and connections refused before any review, by reason (malformed: not a token's shape; throttled: the review budget was spent; connections: too many open connections; source: too many open connections from one address).",
                ),
                &["reason"],
            )?,
        })
    }

    /// Counts a TokenReview made for `/metrics` (`result`: allowed, forbidden,
    /// unauthenticated, error).
    pub fn reviewed(&self, result: &str) {
        self.reviews.with_label_values(&[result]).inc();
    }

    /// TokenReviews made for `/metrics` so far.
    pub fn reviews(&self) -> u64 {
        total(&self.reviews)
    }

    /// Counts a `/metrics` request or connection refused before any review (`reason`:
    /// malformed, throttled, connections, source).
    pub fn refused(&self, reason: &str) {
        self.refused.with_label_values(&[reason]).inc();
    }

    /// Requests or connections refused so far for `reason`.
    pub fn refusals(&self, reason: &str) -> u64 {
        self.refused.with_label_values(&[reason]).get()
    }
}

impl Family for ScrapeAuthMetrics {
    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.reviews.clone()),
            Box::new(self.refused.clone()),
        ]
    }
}
