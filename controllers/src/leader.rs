//! Leader election on a `coordination.k8s.io/v1` Lease, so that only one replica writes.
//!
//! The usual protocol: the holder renews `renewTime` every [`RENEW_EVERY`]; anyone may take the
//! lease once `renewTime + leaseDurationSeconds` has passed. Every write carries the
//! resourceVersion it read, so two candidates cannot both win (the loser gets a conflict). A
//! leader that fails to renew before its lease would expire stops (the process exits and is
//! restarted), as controller-runtime does: it must not keep writing while another may lead.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::PostParams;
use tokio::sync::watch;

/// How long a lease is valid without renewal.
pub const LEASE_DURATION: Duration = Duration::from_secs(30);
/// How often the leader renews.
pub const RENEW_EVERY: Duration = Duration::from_secs(10);
/// How often a follower retries.
pub const RETRY_EVERY: Duration = Duration::from_secs(5);

/// What to do with the lease as read.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Nobody holds it (or it expired): take it.
    Acquire,
    /// We hold it: renew it.
    Renew,
    /// Someone else holds a valid lease until this instant.
    Wait(Timestamp),
}

/// Decides from the lease spec (pure).
pub fn decide(spec: Option<&LeaseSpec>, me: &str, now: Timestamp) -> Decision {
    let Some(spec) = spec else {
        return Decision::Acquire;
    };
    match spec.holder_identity.as_deref() {
        None | Some("") => Decision::Acquire,
        Some(holder) if holder == me => Decision::Renew,
        Some(_) => {
            let duration = i64::from(spec.lease_duration_seconds.unwrap_or(0).max(0));
            let renewed = spec
                .renew_time
                .as_ref()
                .or(spec.acquire_time.as_ref())
                .map(|t| t.0);
            match renewed.and_then(|t| {
                t.checked_add(jiff::SignedDuration::from_secs(duration))
                    .ok()
            }) {
                Some(expiry) if expiry > now => Decision::Wait(expiry),
                _ => Decision::Acquire,
            }
        }
    }
}

/// Errors of the election loop.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// The API refused a call other than a conflict.
    #[error("lease {namespace}/{name}: {source}")]
    Api {
        /// Lease namespace.
        namespace: String,
        /// Lease name.
        name: String,
        /// The error.
        #[source]
        source: Box<kube::Error>,
    },
    /// We were leader and could not renew in time.
    #[error("lost the lease {namespace}/{name}")]
    Lost {
        /// Lease namespace.
        namespace: String,
        /// Lease name.
        name: String,
    },
}

/// A candidate for the lease `namespace/name` under identity `me`.
pub struct Elector {
    api: Api<Lease>,
    namespace: String,
    name: String,
    me: String,
}

impl Elector {
    /// A candidate.
    pub fn new(client: kube::Client, namespace: &str, name: &str, me: &str) -> Self {
        Elector {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            name: name.to_string(),
            me: me.to_string(),
        }
    }

    fn err(&self, e: kube::Error) -> LeaderError {
        LeaderError::Api {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            source: Box::new(e),
        }
    }

    /// One attempt: `Ok(true)` when we hold the lease afterwards.
    pub async fn try_once(&self, now: Timestamp) -> Result<bool, LeaderError> {
        let existing = match self.api.get_opt(&self.name).await {
            Ok(l) => l,
            Err(e) => return Err(self.err(e)),
        };
        let spec = existing.as_ref().and_then(|l| l.spec.as_ref());
        let decision = decide(spec, &self.me, now);
        if let Decision::Wait(_) = decision {
            return Ok(false);
        }
        let transitions = spec.and_then(|s| s.lease_transitions).unwrap_or(0);
        let acquire = decision == Decision::Acquire;
        let new_spec = LeaseSpec {
            holder_identity: Some(self.me.clone()),
            lease_duration_seconds: Some(LEASE_DURATION.as_secs() as i32),
            acquire_time: if acquire {
                Some(MicroTime(now))
            } else {
                spec.and_then(|s| s.acquire_time.clone())
            },
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(if acquire && existing.is_some() {
                transitions + 1
            } else {
                transitions
            }),
            ..Default::default()
        };
        let result = match existing {
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..Default::default()
                    },
                    spec: Some(new_spec),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            Some(mut lease) => {
                lease.spec = Some(new_spec);
                // Carries the resourceVersion read: a concurrent writer makes this a conflict.
                self.api
                    .replace(&self.name, &PostParams::default(), &lease)
                    .await
            }
        };
        match result {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.is_conflict() || s.code == 409 => Ok(false),
            Err(e) => Err(self.err(e)),
        }
    }

    /// Blocks until we hold the lease, then keeps renewing it in the background; the returned
    /// receiver turns `false` (and the task ends) if leadership is lost.
    pub async fn acquire(self) -> watch::Receiver<bool> {
        loop {
            match self.try_once(Timestamp::now()).await {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "leader election: cannot read or write the lease; retrying")
                }
            }
            tokio::time::sleep(RETRY_EVERY).await;
        }
        tracing::info!(lease = %format!("{}/{}", self.namespace, self.name), identity = %self.me, "became leader");
        let (tx, rx) = watch::channel(true);
        tokio::spawn(async move {
            let mut last_renewal = std::time::Instant::now();
            loop {
                tokio::time::sleep(RENEW_EVERY).await;
                match self.try_once(Timestamp::now()).await {
                    Ok(true) => last_renewal = std::time::Instant::now(),
                    Ok(false) => {
                        tracing::error!(identity = %self.me, "leader election: another replica holds the lease");
                        let _ = tx.send(false);
                        return;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "leader election: renewal failed");
                        if last_renewal.elapsed() + RENEW_EVERY >= LEASE_DURATION {
                            tracing::error!(error = %LeaderError::Lost { namespace: self.namespace.clone(), name: self.name.clone() }, "stepping down");
                            let _ = tx.send(false);
                            return;
                        }
                    }
                }
            }
        });
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    fn spec(holder: &str, renewed: &str) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(30),
            renew_time: Some(MicroTime(t(renewed))),
            ..Default::default()
        }
    }

    #[test]
    fn decisions() {
        let now = t("2026-01-01T00:00:40Z");
        assert_eq!(decide(None, "a", now), Decision::Acquire);
        assert_eq!(
            decide(Some(&spec("a", "2026-01-01T00:00:00Z")), "a", now),
            Decision::Renew
        );
        assert_eq!(
            decide(Some(&spec("b", "2026-01-01T00:00:20Z")), "a", now),
            Decision::Wait(t("2026-01-01T00:00:50Z")),
            "a valid lease of someone else is respected"
        );
        assert_eq!(
            decide(Some(&spec("b", "2026-01-01T00:00:05Z")), "a", now),
            Decision::Acquire,
            "an expired lease is taken over"
        );
        assert_eq!(
            decide(Some(&spec("", "2026-01-01T00:00:39Z")), "a", now),
            Decision::Acquire
        );
        let mut no_time = spec("b", "2026-01-01T00:00:39Z");
        no_time.renew_time = None;
        assert_eq!(
            decide(Some(&no_time), "a", now),
            Decision::Acquire,
            "a lease never renewed is free"
        );
    }
}
