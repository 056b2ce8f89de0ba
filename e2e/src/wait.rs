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

/// What kubectl (1.32) says when `kubectl wait --for=condition=Established` reads a CRD created
/// a moment before, whose status has no conditions yet: it fails instead of waiting.
pub const CONDITIONS_UNSET: &str = ".status.conditions accessor error: <nil>";

/// Runs `run` (a `kubectl wait --for=condition=...`) again, every 200 ms until `timeout`, while
/// it fails with [`CONDITIONS_UNSET`] (seen under load in `hub_limits`: the CRDs applied, the
/// wait straight after); any other outcome is returned as it is.
pub async fn kubectl_wait_retrying<T, E, F, Fut>(timeout: Duration, mut run: F) -> Result<T, E>
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        match run().await {
            Err(e) if e.to_string().contains(CONDITIONS_UNSET) && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            done => return done,
        }
    }
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

    /// A wait that first fails as kubectl does on a CRD without conditions is run again; any
    /// other failure is returned at once.
    #[tokio::test]
    async fn a_wait_on_unset_conditions_is_retried_and_only_that() {
        let mut calls = 0;
        let out: Result<u32, String> = kubectl_wait_retrying(Duration::from_secs(5), || {
            calls += 1;
            let n = calls;
            async move {
                match n {
                    1 | 2 => Err(format!("error: {CONDITIONS_UNSET} is of the type <nil>")),
                    _ => Ok(n),
                }
            }
        })
        .await;
        assert_eq!(out, Ok(3));
        let mut calls = 0;
        let out: Result<(), String> = kubectl_wait_retrying(Duration::from_secs(5), || {
            calls += 1;
            async { Err("error: timed out waiting for the condition".to_owned()) }
        })
        .await;
        assert_eq!(calls, 1);
        assert!(out.is_err());
    }
}
