//! [`run_scenario`]: a test of the OCM environment run in a task of its own, with the state of
//! the environment and its logs printed when it fails.

use crate::ocm::env::OcmEnv;

/// A test scenario's error.
pub type ScenarioError = Box<dyn std::error::Error + Send + Sync>;

/// Runs `scenario` in a task of its own, so that a failed assertion (a panic) comes back as an
/// error like any other; on failure, prints the state of the environment and the last lines of
/// its logs, prefixed with `test`.
pub async fn run_scenario<F>(env: &OcmEnv, test: &str, scenario: F) -> Result<(), ScenarioError>
where
    F: std::future::Future<Output = Result<(), ScenarioError>> + Send + 'static,
{
    let result = match tokio::spawn(scenario).await {
        Ok(r) => r,
        Err(e) if e.is_panic() => {
            let payload = e.into_panic();
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            Err(message.into())
        }
        Err(e) => Err(e.into()),
    };
    if result.is_err() {
        eprintln!(
            "{test}: failed; OCM environment:\n{}\n{}",
            env.status().await,
            env.log_tails(30)
        );
    }
    result
}
