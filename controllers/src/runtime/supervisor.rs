//! Supervision of the long-running tasks: none of them is expected to end while the process
//! runs, so the first one that ends (returned, panicked or was cancelled) is reported by name
//! and the process stops with an error instead of running on without it.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use tokio::task::{Id, JoinSet};

/// How a supervised task ended. Its `Display` (what `/healthz` answers, unauthenticated) says
/// which task and how, never the panic message: that goes to the log only ([`TaskEnded::panic`]).
#[derive(Debug, thiserror::Error)]
#[error("task {name} {how}")]
pub struct TaskEnded {
    /// The task's name.
    pub name: String,
    /// `ended`, `panicked` or `was cancelled`.
    pub how: &'static str,
    /// The panic message, if it panicked (may quote data: for the log only).
    pub panic: Option<String>,
}

/// A named group of tasks.
#[derive(Default)]
pub struct Tasks {
    set: JoinSet<()>,
    names: HashMap<Id, String>,
}

impl Tasks {
    /// An empty group.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts `task` under `name`.
    pub fn spawn(
        &mut self,
        name: impl Into<String>,
        task: impl Future<Output = ()> + Send + 'static,
    ) {
        let handle = self.set.spawn(task);
        self.names.insert(handle.id(), name.into());
    }

    /// Number of tasks still running.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether no task runs.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Waits for the first task to end and says which and how. With no task, never returns.
    pub async fn first_ended(&mut self) -> TaskEnded {
        let Some(result) = self.set.join_next_with_id().await else {
            return std::future::pending().await;
        };
        let (id, how, panic) = match result {
            Ok((id, ())) => (id, "ended", None),
            Err(e) if e.is_panic() => {
                let id = e.id();
                let payload = e.into_panic();
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(no message)".into());
                (id, "panicked", Some(msg))
            }
            Err(e) => (e.id(), "was cancelled", None),
        };
        TaskEnded {
            name: self.names.remove(&id).unwrap_or_else(|| format!("{id}")),
            how,
            panic,
        }
    }

    /// Gives the tasks `grace` to end on their own (after being told to stop), then aborts the
    /// rest and waits until all are gone.
    pub async fn stop(&mut self, grace: Duration) {
        let _ = tokio::time::timeout(grace, async {
            while self.set.join_next().await.is_some() {}
        })
        .await;
        self.abort().await;
    }

    /// Aborts every task now and waits until all are gone (an aborted task stops at its next
    /// await point: an API call in flight is dropped).
    pub async fn abort(&mut self) {
        self.set.abort_all();
        while self.set.join_next().await.is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn names_the_task_that_ended_or_panicked() {
        let mut tasks = Tasks::new();
        tasks.spawn("forever", std::future::pending());
        tasks.spawn("short", async {});
        let ended = tasks.first_ended().await;
        assert_eq!(ended.name, "short");
        assert_eq!(ended.to_string(), "task short ended");

        #[allow(clippy::panic)]
        tasks.spawn("broken", async { panic!("index out of range") });
        let ended = tasks.first_ended().await;
        assert_eq!(ended.name, "broken");
        assert_eq!(ended.how, "panicked");
        assert_eq!(ended.panic.as_deref(), Some("index out of range"));
        assert_eq!(ended.to_string(), "task broken panicked", "no message");
        assert_eq!(tasks.len(), 1);

        tasks.abort().await;
        assert!(tasks.is_empty());
    }

    #[tokio::test]
    async fn stop_waits_for_the_grace_then_aborts() {
        let mut tasks = Tasks::new();
        tasks.spawn("forever", std::future::pending());
        let started = std::time::Instant::now();
        tasks.stop(Duration::from_millis(50)).await;
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
