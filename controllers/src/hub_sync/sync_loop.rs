//! The hub sync task ([`HubSync`]): the loop that waits for a reason to sync, runs passes on
//! the session, backs off while the hub fails ([`backoff`]), switches sessions when the
//! credentials change, stamps the heartbeat and reports the agent's health (a condition of its
//! ControlPlaneUpdateStatus copy).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, watch};
use update_status_assess::redact::redact_urls_in;

use super::agent_health::{self, AgentHealth};
use super::config::{
    DEBOUNCE, HubConfig, MAX_BACKOFF, MIN_BACKOFF, RESYNC, SessionSettings, validate_cluster_name,
};
use super::copies::{HubCopies, desired_copies, hub_selector_for};
use super::credentials::{Credentials, Material};
use super::errors::{HubError, hint};
use super::heartbeat;
use super::local::LocalObjects;
use super::session::{Session, attempt};
use super::watches::{Signals, WatchContext};
use crate::metrics::Metrics;
use crate::runtime::writer::{PENDING_TTL, SyncStats};
use update_status_api::acm::CONDITION_AGENT_DEGRADED;

/// Wait before attempt `failures + 1`: [`MIN_BACKOFF`] doubled per consecutive failure up to
/// [`MAX_BACKOFF`], times `1 + jitter` (`jitter` in [-0.1, 0.1]), never above the cap.
pub fn backoff(failures: u32, jitter: f64) -> Duration {
    crate::runtime::clock::backoff(MIN_BACKOFF, MAX_BACKOFF, failures, jitter)
}

/// The hub sync task (see the documentation of [`crate::hub_sync`]).
pub struct HubSync {
    /// The managed cluster's name: the hub namespace of the copies.
    cluster_name: String,
    include_progress: bool,
    creds: Credentials,
    local: LocalObjects,
    wake: Arc<Notify>,
    metrics: Arc<Metrics>,
    /// The `hosted_cluster` label of the hub metrics (`""` in standalone mode).
    metrics_label: String,
    /// Set when the hosted cluster is gone: copy nothing (its copies are deleted), and end
    /// after the first pass that succeeds.
    retired: Arc<AtomicBool>,
    /// Hosted mode: the value of `update.openshift.io/hosted-cluster` of this session's copies
    /// (the only ones it sees and deletes).
    source: Option<String>,
    /// The Lease gate of the hub writes and the heartbeat interval.
    settings: SessionSettings,
    /// Standalone mode on an ACM hub: the agent's health, reported on its ManagedClusterAddOn.
    health: Option<AgentHealth>,
}

/// What a session keeps between passes beyond its hub client.
#[derive(Default)]
struct Reported {
    /// The last heartbeat written (the hub's copy may not show it yet).
    stamped: Option<jiff::Timestamp>,
    /// The last pass had a control plane's copy to stamp (else no heartbeat is due).
    stampable: bool,
}

impl HubSync {
    /// Checks the configuration and reads the hub kubeconfig (no call to the hub): a wrong
    /// name or an unreadable kubeconfig is a configuration error, reported before anything
    /// starts. The kubeconfig is followed from then on (see [`Credentials::from_file`]). `wake`
    /// is notified when our local objects change ([`crate::app::standalone::Wakers`]).
    pub async fn new(
        config: HubConfig,
        local: LocalObjects,
        wake: Arc<Notify>,
        metrics: Arc<Metrics>,
    ) -> Result<Self, HubError> {
        validate_cluster_name(&config.cluster_name)?;
        let creds = Credentials::from_file(&config.kubeconfig)?;
        Ok(
            Self::with_credentials(config.cluster_name, creds, local, wake, metrics)
                .with_progress(config.include_progress),
        )
    }

    /// A session reporting as managed cluster `cluster_name` (a valid name:
    /// [`validate_cluster_name`]) with `creds` (hosted mode: a kubeconfig file shared by every
    /// session, or each hosted cluster's add-on Secret); progress insights are not copied unless
    /// [`HubSync::with_progress`].
    pub fn with_credentials(
        cluster_name: String,
        creds: Credentials,
        local: LocalObjects,
        wake: Arc<Notify>,
        metrics: Arc<Metrics>,
    ) -> Self {
        HubSync {
            cluster_name,
            include_progress: false,
            creds,
            local,
            wake,
            metrics,
            metrics_label: String::new(),
            retired: Arc::default(),
            source: None,
            settings: SessionSettings::default(),
            health: None,
        }
    }

    /// Copies progress insights too when `include_progress` (`--hub-include-progress`).
    pub fn with_progress(mut self, include_progress: bool) -> Self {
        self.include_progress = include_progress;
        self
    }

    /// The Lease gate of its writes and its heartbeat interval.
    pub fn with_settings(mut self, settings: SessionSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Reports the agent's health as a condition of its ControlPlaneUpdateStatus copy
    /// (standalone mode).
    pub fn with_agent_health(mut self, health: AgentHealth) -> Self {
        self.health = Some(health);
        self
    }

    /// Hosted mode: the hub metrics of this session carry `hosted_cluster=<label>`, its copies
    /// `update.openshift.io/hosted-cluster=<source>` (it sees and deletes only those), and
    /// `retired` ends it (see [`HubSync::run`]).
    pub fn for_hosted_cluster(
        mut self,
        label: String,
        source: String,
        retired: Arc<AtomicBool>,
    ) -> Self {
        self.metrics_label = label;
        self.source = Some(source);
        self.retired = retired;
        self
    }

    /// The copies a pass writes; with the agent's health, its condition on the control plane's
    /// copy (its transition time kept from the hub's copy in `session`).
    fn desired(&self, session: &Session) -> HubCopies {
        if self.retired.load(Ordering::SeqCst) {
            return HubCopies::default();
        }
        let l = &self.local;
        let mut copies = desired_copies(
            &self.cluster_name,
            self.include_progress,
            &l.select(&l.control_plane_statuses),
            &l.select(&l.worker_pool_statuses),
            &crate::cache::insights::wholes(&l.select(&l.insights)),
        );
        if let Some(source) = &self.source {
            copies.set_source(source);
        }
        if let (Some(health), Some(cp)) = (&self.health, copies.control_planes.first_mut()) {
            let previous = session.hub_condition(&cp.name, CONDITION_AGENT_DEGRADED);
            let c = agent_health::condition(
                &health.verdict(&self.local),
                previous.as_ref(),
                jiff::Timestamp::now(),
            );
            agent_health::set_on(&mut cp.status, c);
        }
        copies
    }

    /// Runs until `shutdown` changes, or, once retired, until a pass has deleted every copy.
    /// Never fails: hub errors are logged, counted and retried.
    #[tracing::instrument(name = "hub_sync", skip_all, fields(cluster = %self.cluster_name))]
    pub async fn run(self, shutdown: watch::Receiver<bool>) {
        let mut run = self.begin(shutdown);
        let Some(mut session) = self.first_session(&mut run).await else {
            return;
        };
        while self.step(&mut run, &mut session).await {}
    }

    /// The state of a run, its start logged.
    fn begin(&self, shutdown: watch::Receiver<bool>) -> Run {
        let ns = self.cluster_name.clone();
        let selector = hub_selector_for(&ns, self.source.as_deref());
        let signals = Arc::new(Signals::default());
        let ctx = WatchContext {
            selector: selector.clone(),
            namespace: ns.clone(),
            wake: self.wake.clone(),
            signals: signals.clone(),
            metrics: self.metrics.clone(),
            metrics_label: self.metrics_label.clone(),
            retired: self.retired.clone(),
        };
        tracing::info!(
            namespace = %ns,
            credentials = %self.creds.origin(),
            include_progress = self.include_progress,
            heartbeat_interval = ?self.settings.heartbeat,
            agent_health = self.health.is_some(),
            "hub sync on: reporting to the hub"
        );
        Run {
            ns,
            selector,
            signals,
            ctx,
            creds: self.creds.clone(),
            outage: Outage::default(),
            reported: Reported::default(),
            health: self.health.clone(),
            shutdown,
        }
    }

    /// One turn of the loop: wait for a reason, follow new credentials, then a pass when the
    /// session's watches have listed; `false` when the run ends.
    async fn step(&self, run: &mut Run, session: &mut Session) -> bool {
        if !self.pause(session, run).await {
            return false;
        }
        if !self.follow_credentials(run, session).await {
            return true;
        }
        if self.retired.load(Ordering::SeqCst) && run.signals.not_found() {
            tracing::info!(namespace = %run.ns, "hosted cluster gone: its hub namespace or our CRDs do not exist there, so no copy is left; hub session ends");
            return false;
        }
        if !session.listed() {
            // The reflectors report their own errors and their first list wakes us; while
            // they fail, back off (a reload, for one, waits for it).
            if run.signals.unhealthy.swap(false, Ordering::SeqCst) {
                run.outage.failures = run.outage.failures.saturating_add(1);
            }
            return true;
        }
        self.pass(run, session).await
    }

    /// Rereads the credentials after a `401`, and switches to a new session when they changed;
    /// `false` when the new ones make no client (the failure is counted).
    async fn follow_credentials(&self, run: &mut Run, session: &mut Session) -> bool {
        let creds = &mut run.creds;
        if run.signals.reload.swap(false, Ordering::SeqCst) {
            // A `401`: the files may have changed without the watch seeing it.
            creds.reread().await;
        }
        if run.signals.rotated.swap(false, Ordering::SeqCst)
            && let Some(m) = creds.current()
            && m.fingerprint != session.fingerprint
        {
            match m.client(creds.origin()).await {
                Ok(client) => {
                    tracing::info!(namespace = %run.ns, credentials = %creds.origin(), "new hub credentials: switching to them (a new session; its watches list before the next pass)");
                    self.metrics.hub.credentials_reloaded(&self.metrics_label);
                    // The old reflectors stop with the old session.
                    *session =
                        Session::start(client, m.fingerprint, &run.ctx, &self.settings.gate).await;
                }
                Err(e) => {
                    self.failed(&e, &mut run.outage);
                    return false;
                }
            }
        }
        true
    }

    /// A pass on the listed session and what follows it; `false` when the run ends (a retired
    /// session's copies are deleted, or `shutdown` changed).
    async fn pass(&self, run: &mut Run, session: &mut Session) -> bool {
        let watch_failed = run.signals.unhealthy.swap(false, Ordering::SeqCst);
        let probe = run.outage.failures > 0 || watch_failed;
        let retired = self.retired.load(Ordering::SeqCst);
        let copies = self.desired(session);
        let Some(result) = attempt(session, &run.selector, probe, copies, &mut run.shutdown).await
        else {
            return false;
        };
        match result {
            Ok((stats, _)) if retired => {
                tracing::info!(namespace = %run.ns, deletes = stats.deletes, "hosted cluster gone: its hub copies are deleted, hub session ends");
                return false;
            }
            Ok((stats, copies)) => match self.after_pass(session, &copies, &mut run.reported).await
            {
                Ok(()) => self.succeeded(&stats, &copies, &mut run.outage),
                Err(e) => self.failed(&e, &mut run.outage),
            },
            Err(e) => {
                self.failed(&e, &mut run.outage);
                if e.reason() == "unauthorized" {
                    run.signals.reload.store(true, Ordering::SeqCst);
                }
            }
        }
        true
    }

    /// The first session, once there are credentials that make a client (hosted mode: the
    /// add-on Secret may not exist yet); `None` when `shutdown` changed meanwhile.
    async fn first_session(&self, run: &mut Run) -> Option<Session> {
        let creds = &mut run.creds;
        loop {
            let current: Option<Arc<Material>> = creds.current();
            let error = match current {
                Some(m) => match m.client(creds.origin()).await {
                    Ok(client) => {
                        return Some(
                            Session::start(client, m.fingerprint, &run.ctx, &self.settings.gate)
                                .await,
                        );
                    }
                    Err(e) => e,
                },
                None => HubError::NoCredentials {
                    cluster: self.cluster_name.clone(),
                    hint: format!("waiting for {}", creds.origin()),
                },
            };
            self.failed(&error, &mut run.outage);
            tokio::select! {
                _ = creds.changed() => {}
                _ = run.shutdown.changed() => return None,
            }
        }
    }

    /// Waits for a reason to attempt a pass (our objects or the hub's copies changed, a hub
    /// watch listed, the back-off or the resync period is over, the heartbeat is due, the
    /// agent's health changed), then [`DEBOUNCE`]; `false` when `shutdown` changed meanwhile.
    async fn pause(&self, session: &Session, run: &mut Run) -> bool {
        let heartbeat_due = if run.reported.stampable {
            heartbeat::due_in(
                run.reported.stamped.max(session.last_reported(&run.ns)),
                self.settings.heartbeat,
                jiff::Timestamp::now(),
            )
        } else {
            Duration::MAX
        };
        let failures = run.outage.failures;
        let wait = if failures > 0 {
            backoff(failures, crate::runtime::clock::jitter())
        } else if session.has_pending() {
            // Re-check once our writes are no longer trusted over the cache.
            (PENDING_TTL + Duration::from_secs(1)).min(heartbeat_due)
        } else {
            RESYNC.min(heartbeat_due)
        };
        let health = async {
            match run.health.as_mut() {
                Some(h) => h.changed().await,
                None => std::future::pending().await,
            }
        };
        let (signals, creds, shutdown) = (&run.signals, &mut run.creds, &mut run.shutdown);
        let timer = tokio::select! {
            _ = self.wake.notified(), if failures == 0 => false,
            _ = health, if failures == 0 => false,
            _ = signals.listed.notified() => false,
            _ = creds.changed() => {
                signals.rotated.store(true, Ordering::SeqCst);
                false
            }
            _ = tokio::time::sleep(wait) => true,
            _ = shutdown.changed() => return false,
        };
        // A burst of changes is collected into one pass; a timer (back-off, resync, heartbeat)
        // is not a burst.
        if !timer {
            tokio::select! {
                _ = tokio::time::sleep(DEBOUNCE) => {}
                _ = shutdown.changed() => return false,
            }
        }
        true
    }

    /// After a pass that wrote the copies: the heartbeat when it is due (a failure fails the
    /// pass).
    async fn after_pass(
        &self,
        session: &mut Session,
        copies: &HubCopies,
        reported: &mut Reported,
    ) -> Result<(), HubError> {
        let now = jiff::Timestamp::now();
        reported.stampable = !copies.control_planes.is_empty();
        // Only a copy that exists after this pass is stamped (a patch never creates one).
        if let Some(cp) = copies.control_planes.first() {
            let last = reported.stamped.max(session.last_reported(&cp.name));
            if heartbeat::due_in(last, self.settings.heartbeat, now).is_zero() {
                heartbeat::stamp(&session.client, &session.namespace, &cp.name, now).await?;
                self.metrics
                    .hub
                    .write("ControlPlaneUpdateStatus", "heartbeat");
                reported.stamped = Some(now);
            }
        }
        Ok(())
    }

    /// Records a pass that succeeded: the metric, the end of an outage, what was written.
    fn succeeded(&self, stats: &SyncStats, copies: &HubCopies, outage: &mut Outage) {
        let ns = &self.cluster_name;
        self.metrics.hub.sync_succeeded(
            &self.metrics_label,
            jiff::Timestamp::now().as_millisecond() as f64 / 1000.0,
        );
        if outage.failures > 0 {
            tracing::info!(namespace = %ns, failed_attempts = outage.failures, "hub sync recovered");
        }
        *outage = Outage::default();
        if stats.writes() > 0 {
            tracing::info!(
                namespace = %ns,
                writes = stats.writes(),
                deletes = stats.deletes,
                copies = copies.control_planes.len() + copies.worker_pools.len() + copies.insights.len(),
                "hub copies updated"
            );
        }
    }

    /// Counts a failed attempt; warns when an outage starts or its reason changes.
    fn failed(&self, e: &HubError, outage: &mut Outage) {
        outage.failures = outage.failures.saturating_add(1);
        let reason = e.reason();
        if !self.retired.load(Ordering::SeqCst) {
            self.metrics.hub.sync_failed(&self.metrics_label, reason);
        }
        let ns = &self.cluster_name;
        if outage.reported != Some(reason) {
            tracing::warn!(
                namespace = %ns,
                reason,
                error = %redact_urls_in(&e.to_string()),
                hint = %hint(reason, ns),
                "hub sync failed; retrying with back-off (local status objects are not affected)"
            );
            outage.reported = Some(reason);
        } else {
            tracing::debug!(namespace = %ns, reason, error = %redact_urls_in(&e.to_string()), failures = outage.failures, "hub sync still failing");
        }
    }
}

/// One run of the loop: its session's names and watches' signals, what it keeps between passes.
struct Run {
    /// The hub namespace of the copies (the managed cluster's name).
    ns: String,
    /// The label selector of this session's copies.
    selector: String,
    signals: Arc<Signals>,
    /// What every session of the run watches with.
    ctx: WatchContext,
    creds: Credentials,
    outage: Outage,
    reported: Reported,
    /// The agent's health, when reported: a change is a reason for a pass.
    health: Option<AgentHealth>,
    shutdown: watch::Receiver<bool>,
}

/// Consecutive failed attempts, and the reason last warned about (a warning per outage and per
/// change of reason).
#[derive(Debug, Default)]
struct Outage {
    failures: u32,
    reported: Option<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_backoff_doubles_up_to_the_cap_with_bounded_jitter() {
        assert_eq!(backoff(1, 0.0), MIN_BACKOFF);
        assert_eq!(backoff(2, 0.0), MIN_BACKOFF * 2);
        assert_eq!(backoff(4, 0.0), MIN_BACKOFF * 8);
        assert_eq!(backoff(30, 0.0), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX, 0.1), MAX_BACKOFF, "never above the cap");
        assert_eq!(backoff(1, -1.0), MIN_BACKOFF.mul_f64(0.9), "jitter clamped");
    }
}
