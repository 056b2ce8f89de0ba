//! Waiting for a condition: [`poll_until`] and [`wait_for`], at short, growing intervals.

use std::future::Future;
use std::time::{Duration, Instant};

use crate::error::Error;

/// Polls `check` until it returns `Some`, at short, growing intervals (20 ms up to 250 ms),
/// and returns the value; fails with [`Error::Timeout`] naming `what` after `timeout`.
pub async fn poll_until<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    let mut interval = Duration::from_millis(20);
    loop {
        if let Some(v) = check().await {
            return Ok(v);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::Timeout {
                what: what.to_string(),
                timeout,
            });
        }
        tokio::time::sleep(interval.min(deadline - now)).await;
        interval = (interval * 2).min(Duration::from_millis(250));
    }
}

/// Polls the predicate until it holds (see [`poll_until`]).
pub async fn wait_for<F, Fut>(timeout: Duration, what: &str, mut check: F) -> Result<(), Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    poll_until(timeout, what, || {
        let fut = check();
        async move { fut.await.then_some(()) }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wait_for_polls_and_times_out() {
        let mut n = 0;
        wait_for(Duration::from_secs(5), "n to reach 3", || {
            n += 1;
            let done = n >= 3;
            async move { done }
        })
        .await
        .expect("reaches 3");
        let err = wait_for(Duration::from_millis(100), "never", || async { false })
            .await
            .expect_err("times out");
        assert!(err.to_string().contains("waiting for never"), "{err}");
    }
}
