//! Firing Prometheus alerts → health insights (algorithms.md D.9), and the insight that says
//! alerts cannot be read at all.
//!
//! Pure: the alerts (Prometheus' `/api/v1/alerts` answer), the update's start and `now` in;
//! insights out. The alerts reconciler polls Prometheus and calls [`assess_alert_insights`];
//! the CLI's offline mode passes a snapshot's `alerts.json` through
//! [`crate::assess_cluster`].

use jiff::Timestamp;
use update_status_api::crd::limits;
use update_status_api::crd::{
    Caveat, ControlPlaneUpdateStatusStatus, HealthInsight, Impact, ImpactLevel, ImpactType,
    InsightScope, InsightType, Remediation, ResourceRef, ScopeType, UpdateInsightStatus,
    WorkerPoolUpdateStatusStatus,
};
use update_status_api::input::Alert;

use crate::format::{cut_noting, ellipsize};
use crate::naming;

/// `source` of an alert insight (D.9).
pub const SOURCE_ALERT: &str = "Alert";
/// `source` of the insight saying alerts cannot be read.
pub const SOURCE_ALERTS_UNAVAILABLE: &str = "AlertsUnavailable";
/// Source of the insight saying Prometheus answered something that is not a list of alerts.
pub const SOURCE_ALERTS_MALFORMED: &str = "AlertsMalformed";
/// Group of the `Alert` resource kind (D.0).
pub const ALERT_GROUP: &str = "config.openshift.io";
/// Kind of the resource an alert insight is about.
pub const ALERT_KIND: &str = "Alert";
/// Alerts known to affect updates: shown even when they started firing before the update, and
/// described so, by name as `oc` does (issue #48: nothing in Prometheus' answer tells the
/// platform's alert about a tenant's budget from a tenant's alert of that name). Those not told
/// to be the platform's ([`is_platform`]) carry [`Caveat::AlertSourceUnverified`] and vouch for
/// no budget ([`pdb_alerts_of_insights`]).
pub const ALLOWED_ALERTS: [&str; 2] = crate::related::PDB_ALERTS;
/// How the description of an alert known to affect updates starts.
const KNOWN_PREFIX: &str = "Alert known to affect updates";
pub use crate::related::is_platform;
/// Reference of an alert without a `runbook_url` annotation.
pub const NO_RUNBOOK: &str = "<alert does not have a runbook_url annotation>";
/// Reference of the "alerts unavailable" insight: the runbook of the matching shipped alert.
pub const ALERTS_UNAVAILABLE_REFERENCE: &str = "https://github.com/openshift/runbooks/blob/master/alerts/update-status/UpdateStatusPrometheusUnreachable.md";

/// Alert insights written at most (issue #29: tenants define alerts where user-workload
/// monitoring feeds Thanos, so their number is not ours to bound): past it, the most severe are
/// kept and one more insight ([`SOURCE_ALERTS_OVER_CAP`]) says how many were left out.
pub const MAX_ALERT_INSIGHTS: usize = 100;
/// `source` of the insight saying alert insights were left out.
pub const SOURCE_ALERTS_OVER_CAP: &str = "AlertsOverCap";

/// [`assess_alert_insights`] capped: at most [`MAX_ALERT_INSIGHTS`] insights, of the platform's
/// alerts first ([`is_platform`]: 150 critical tenant alerts must not push `etcdMembersDown`
/// out), then the most severe (Critical before Warning, then in alert order), in alert order,
/// plus one Warning insight ([`SOURCE_ALERTS_OVER_CAP`]) saying how many were left out; the
/// same as [`assess_alert_insights`] when not over the cap. Only the kept alerts become
/// insights: the others are only counted (no text is built for them).
pub fn assess_alert_insights_capped(
    alerts: &[Alert],
    update_started_at: Option<Timestamp>,
    now: Timestamp,
) -> Vec<AlertInsight> {
    let shown: Vec<(usize, bool, ImpactLevel)> = alerts
        .iter()
        .enumerate()
        .filter_map(|(i, a)| Some((i, is_platform(a), shown_level(a, update_started_at)?)))
        .collect();
    let total = shown.len();
    if total <= MAX_ALERT_INSIGHTS {
        return assess_alert_insights(alerts, update_started_at, now);
    }
    let mut order = shown;
    // Stable: equal ranks keep the alert order.
    order.sort_by_key(|&(_, platform, level)| std::cmp::Reverse((platform, level)));
    order.truncate(MAX_ALERT_INSIGHTS);
    let weakest = order.iter().map(|&(_, _, l)| l).min().unwrap_or_default();
    let mut keep: Vec<usize> = order.into_iter().map(|(i, _, _)| i).collect();
    keep.sort_unstable();
    let kept: Vec<Alert> = keep.into_iter().map(|i| alerts[i].clone()).collect();
    let mut out = assess_alert_insights(&kept, update_started_at, now);
    let left_out = total - MAX_ALERT_INSIGHTS;
    let summary = format!(
        "{total} alerts are firing, more than {MAX_ALERT_INSIGHTS}; showing the \
         {MAX_ALERT_INSIGHTS} most severe, platform alerts first, {left_out} left out"
    );
    let description = format!(
        "update-status writes at most {MAX_ALERT_INSIGHTS} alert insights, so that the alerts \
         anyone can define (user-workload monitoring feeds Thanos) cannot flood the cluster \
         with objects. {total} firing alerts started during the update (or are known to affect \
         updates); {MAX_ALERT_INSIGHTS} are shown, the platform's first (those about an \
         openshift-* or kube-* namespace: a tenant's rule cannot raise one), then the most severe (down to level {weakest:?}), and \
         {left_out} are left out. See them all in the console (Observe > Alerting) or with \
         Prometheus' /api/v1/alerts."
    );
    let mut status = prometheus_insight(
        "alerts".to_string(),
        PrometheusProblem {
            level: ImpactLevel::Warning,
            source: SOURCE_ALERTS_OVER_CAP,
            summary,
            description,
        },
        jiff::Timestamp::UNIX_EPOCH,
    );
    if let Some(h) = status.health.as_mut() {
        // Since the earliest of the alerts shown (a stable start: no rewrite each poll).
        h.started_at = out
            .iter()
            .filter_map(|a| a.status.health.as_ref()?.started_at)
            .min();
    }
    out.push(AlertInsight {
        identity: SOURCE_ALERTS_OVER_CAP.to_string(),
        status,
    });
    out
}

/// The level of the insight `alert` gives, if it gives one (the checks of [`alert_insight`]
/// without building anything).
fn shown_level(alert: &Alert, update_started_at: Option<Timestamp>) -> Option<ImpactLevel> {
    let name = non_empty(&alert.labels, "alertname")?;
    let started_during_update = match (update_started_at, alert.active_at) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(start), Some(active)) => start < active,
    };
    if !started_during_update && !is_known_blocker(name) || alert.state == "pending" {
        return None;
    }
    let level = severity_level(alert);
    (level >= ImpactLevel::Warning).then_some(level)
}

/// D.9 step 2's allow-list, by name as `oc` has it (its text is `oc`'s); whether the alert is
/// the platform's is only our caveat ([`caveat`]).
fn is_known_blocker(name: &str) -> bool {
    ALLOWED_ALERTS.contains(&name)
}

/// Our doubt about an alert known to affect updates: its source cannot be told unless it is
/// about a platform namespace ([`is_platform`]).
fn caveat(name: &str, alert: &Alert) -> Option<Caveat> {
    (is_known_blocker(name) && !is_platform(alert)).then_some(Caveat::AlertSourceUnverified)
}

/// D.9 step 4: severity → level.
fn severity_level(alert: &Alert) -> ImpactLevel {
    match alert.labels.get("severity").map(String::as_str) {
        Some("warning") => ImpactLevel::Warning,
        Some("critical") => ImpactLevel::Critical,
        _ => ImpactLevel::Info,
    }
}

/// An alert insight with the identity its object name is derived from.
#[derive(Clone, Debug, PartialEq)]
pub struct AlertInsight {
    /// The alert's full label set (sorted, JSON), so that alerts of the same name with other
    /// labels get distinct objects and an alert keeps its object while it fires (its
    /// annotations may change: `{{ $value }}` in a description). Alerts with the same labels
    /// and different annotations (two rule files defining one alert, Thanos without replica
    /// labels) are told apart by their rank among them (`#1`, `#2`, … after the label set; the
    /// first keeps the bare label set), sorted by annotations: oc prints each, so each gets its
    /// own object. Alerts equal in labels and annotations share it: they are one alert.
    pub identity: String,
    /// The insight.
    pub status: UpdateInsightStatus,
}

impl AlertInsight {
    /// Object name (see [`naming::insight_name`]).
    pub fn name(&self) -> String {
        naming::insight_name(&self.status, &self.identity)
    }
}

/// D.9: the health insights of firing alerts, in alert order (duplicates kept, as `oc` does).
///
/// `update_started_at` is the update's start (B.1: `history[0].startedTime`, else the
/// Progressing condition's transition time); unknown (`None`) counts as "long ago", like Go's
/// zero time. `now` is not used by D.9 (an alert's start is its own `activeAt`); it is taken
/// so that every rule has the same shape.
pub fn assess_alerts(
    alerts: &[Alert],
    update_started_at: Option<Timestamp>,
    now: Timestamp,
) -> Vec<UpdateInsightStatus> {
    assess_alert_insights(alerts, update_started_at, now)
        .into_iter()
        .map(|a| a.status)
        .collect()
}

/// [`assess_alerts`] with each insight's identity (for its object name: see
/// [`AlertInsight::identity`]), in alert order.
pub fn assess_alert_insights(
    alerts: &[Alert],
    update_started_at: Option<Timestamp>,
    _now: Timestamp,
) -> Vec<AlertInsight> {
    let mut out: Vec<(AlertInsight, String)> = alerts
        .iter()
        .filter_map(|a| {
            let i = alert_insight(a, update_started_at)?;
            Some((i, serde_json::to_string(&a.annotations).unwrap_or_default()))
        })
        .collect();
    // The distinct annotation sets of each label set, sorted: an alert's rank among them.
    let mut ranks: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for (i, annotations) in &out {
        ranks
            .entry(i.identity.as_str())
            .or_default()
            .push(annotations.as_str());
    }
    let ranks: std::collections::BTreeMap<String, Vec<String>> = ranks
        .into_iter()
        .map(|(labels, mut sets)| {
            sets.sort_unstable();
            sets.dedup();
            (
                labels.to_string(),
                sets.into_iter().map(str::to_string).collect(),
            )
        })
        .collect();
    for (i, annotations) in &mut out {
        let rank = ranks
            .get(&i.identity)
            .and_then(|sets| sets.iter().position(|s| s == annotations))
            .unwrap_or(0);
        if rank > 0 {
            i.identity = format!("{}#{rank}", i.identity);
        }
    }
    out.into_iter().map(|(i, _)| i).collect()
}

/// The alert's identity: its full label set, sorted, as JSON (unambiguous whatever the values).
pub fn alert_identity(alert: &Alert) -> String {
    serde_json::to_string(&alert.labels).unwrap_or_default()
}

/// A non-empty label or annotation value.
fn non_empty<'a>(m: &'a std::collections::BTreeMap<String, String>, key: &str) -> Option<&'a str> {
    m.get(key).map(String::as_str).filter(|v| !v.is_empty())
}

/// How the description of alert `name` starts, as oc says when it started; `None`: not shown
/// (it started before the update and is not known to affect updates). Strict: an alert active
/// exactly at the start did not start during it. Unknown activeAt is Go's zero time (before any
/// start); unknown start is the zero time too.
fn description_prefix(
    name: &str,
    alert: &Alert,
    update_started_at: Option<Timestamp>,
) -> Option<&'static str> {
    let started_during_update = match (update_started_at, alert.active_at) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(start), Some(active)) => start < active,
    };
    match (is_known_blocker(name), started_during_update) {
        (true, true) => Some("Alert known to affect updates started firing during the update."),
        (true, false) => {
            Some("Alert known to affect updates has been firing since before the update started.")
        }
        (false, true) => Some("Alert started firing during the update."),
        (false, false) => None,
    }
}

/// The end of an alert insight's description: the alert's description and message.
fn description_suffix(alert: &Alert) -> String {
    match (
        non_empty(&alert.annotations, "description"),
        non_empty(&alert.annotations, "message"),
    ) {
        (Some(d), Some(m)) => format!(" The alert description is: {d} | {m}"),
        (Some(d), None) => format!(" The alert description is: {d}"),
        (None, Some(m)) => format!(" The alert description is: {m}"),
        (None, None) => " The alert has no description.".to_string(),
    }
}

fn alert_insight(alert: &Alert, update_started_at: Option<Timestamp>) -> Option<AlertInsight> {
    // 1. An alert without a name is not shown.
    let name = non_empty(&alert.labels, "alertname")?;
    // 2. Only alerts that started during the update, unless known to affect updates.
    let prefix = description_prefix(name, alert, update_started_at)?;
    // 3. Pending alerts are not firing yet.
    if alert.state == "pending" {
        return None;
    }
    // 4. Severity → level; below Warning is not shown.
    let level = severity_level(alert);
    if level < ImpactLevel::Warning {
        return None;
    }
    // 5. Reference.
    let reference = non_empty(&alert.annotations, "runbook_url").unwrap_or(NO_RUNBOOK);
    // 6. Description.
    let suffix = description_suffix(alert);
    // 7. Summary, impact, scope, resource, start.
    let summary = format!(
        "Alert is firing: {}",
        non_empty(&alert.annotations, "summary").unwrap_or(name)
    );
    let status = UpdateInsightStatus {
        type_: InsightType::Health,
        resource: ResourceRef {
            group: ALERT_GROUP.to_string(),
            kind: ALERT_KIND.to_string(),
            name: ellipsize(name, limits::RESOURCE_NAME),
            namespace: non_empty(&alert.labels, "namespace")
                .map(|n| ellipsize(n, limits::NAMESPACE)),
        },
        scope: InsightScope {
            type_: ScopeType::Cluster,
            pool: None,
        },
        progress: None,
        health: Some(HealthInsight {
            started_at: alert.active_at,
            impact: Impact {
                level,
                type_: ImpactType::Unknown,
                summary,
                description: format!("{prefix}{suffix}"),
            },
            remediation: Remediation {
                reference: reference.to_string(),
            },
            related: Vec::new(),
            related_omitted: 0,
            caveat: caveat(name, alert),
            source: SOURCE_ALERT.to_string(),
        }),
    };
    let mut status = status;
    crate::insight::set_related(&mut status, crate::related::of_alert(&alert.labels));
    complete(status).map(|status| AlertInsight {
        identity: alert_identity(alert),
        status,
    })
}

/// The PodDisruptionBudgets our insights about firing PodDisruptionBudget alerts point at
/// (their `related`, rule A): what the controller's worker-pools pass reads to corroborate
/// a failed drain's budgets ([`crate::related::drain_blockers`]).
pub fn pdb_alerts_of_insights<'a>(
    insights: impl IntoIterator<Item = &'a UpdateInsightStatus>,
) -> crate::related::PdbAlerts {
    crate::related::PdbAlerts(
        insights
            .into_iter()
            .filter(|i| i.resource.kind == ALERT_KIND)
            .filter(|i| ALLOWED_ALERTS.contains(&i.resource.name.as_str()))
            .filter_map(|i| i.health.as_ref())
            // Only the platform's (known to affect updates, no caveat): an alert of that name
            // whose source cannot be told may be a tenant's.
            .filter(|h| {
                h.source == SOURCE_ALERT
                    && h.caveat.is_none()
                    && h.impact.description.starts_with(KNOWN_PREFIX)
            })
            .flat_map(|h| &h.related)
            .filter(|r| r.kind == "PodDisruptionBudget")
            .filter_map(|r| Some((r.namespace.clone()?, r.name.clone())))
            .collect(),
    )
}

/// D.0: no insight without summary, description or reference; long texts are cut to the
/// schema's limits (ending in `...`).
fn complete(mut status: UpdateInsightStatus) -> Option<UpdateInsightStatus> {
    let h = status.health.as_mut()?;
    if h.impact.summary.is_empty()
        || h.impact.description.is_empty()
        || h.remediation.reference.is_empty()
    {
        return None;
    }
    h.impact.summary = ellipsize(&h.impact.summary, limits::SUMMARY);
    h.impact.description = cut_noting(&h.impact.description, limits::DESCRIPTION);
    h.remediation.reference = ellipsize(&h.remediation.reference, limits::REFERENCE);
    Some(status)
}

/// The Unknown-level insight shown while alerts cannot be read: firing alerts may be missing
/// from the health insights, and resolved ones may still be shown.
///
/// `prometheus` is the URL polled (its credentials, if any, are not shown), `error` the last
/// failure, `since` the first failure of this outage (the insight's `startedAt`).
pub fn alerts_unavailable_insight(
    prometheus: &str,
    error: &str,
    since: Timestamp,
) -> UpdateInsightStatus {
    let endpoint = redact_url(prometheus);
    // The error may quote the URL polled, credentials included.
    let error = &crate::redact::redact_urls_in(error);
    let summary = format!("Cannot read alerts from Prometheus: {}", one_line(error));
    let description = format!(
        "update-status reads the firing alerts from {endpoint}/api/v1/alerts to show them as health \
         insights, and it has failed since {since}. Until it succeeds again, alerts that started \
         firing are not shown and alerts that stopped firing are still shown. Check that \
         Prometheus (or Thanos Querier) is up and reachable from the controller, that the bearer \
         token in --prometheus-token-file is valid and allowed to read alerts \
         (cluster-monitoring-view), and that --prometheus-ca-file holds the CA of its serving \
         certificate. The last error was: {error}"
    );
    prometheus_insight(
        prometheus_resource_name(&endpoint),
        PrometheusProblem {
            level: ImpactLevel::Unknown,
            source: SOURCE_ALERTS_UNAVAILABLE,
            summary,
            description,
        },
        since,
    )
}

/// The Info-level insight shown while Prometheus answers something that is not a list of
/// alerts: the alerts are ignored (as `oc` does: `Ignoring alerts in 'Update Health'. Error
/// unmarshaling alerts: ...`) and everything else is shown.
///
/// `prometheus` is the URL polled, `error` the decoding failure, `since` the first such answer.
pub fn alerts_malformed_insight(
    prometheus: &str,
    error: &str,
    since: Timestamp,
) -> UpdateInsightStatus {
    let endpoint = redact_url(prometheus);
    let summary = format!(
        "Ignoring alerts in 'Update Health'. Error unmarshaling alerts: {}",
        one_line(error)
    );
    let description = format!(
        "update-status reads the firing alerts from {endpoint}/api/v1/alerts, and since {since} \
         the answer is not a list of alerts, so alerts are not shown; everything else is. The \
         last error was: {error}"
    );
    prometheus_insight(
        prometheus_resource_name(&endpoint),
        PrometheusProblem {
            level: ImpactLevel::Info,
            source: SOURCE_ALERTS_MALFORMED,
            summary,
            description,
        },
        since,
    )
}

/// What goes wrong reading alerts from Prometheus: the impact of a [`prometheus_insight`].
struct PrometheusProblem<'a> {
    level: ImpactLevel,
    source: &'a str,
    summary: String,
    description: String,
}

/// The resource a Prometheus insight names: the authority of the (redacted) `endpoint`, else
/// `prometheus`.
fn prometheus_resource_name(endpoint: &str) -> String {
    let authority = url_authority(endpoint);
    if authority.is_empty() {
        "prometheus".to_string()
    } else {
        ellipsize(&authority, limits::RESOURCE_NAME)
    }
}

/// A cluster-scoped health insight about reading alerts from Prometheus (`resource_name`: what
/// it names, see [`prometheus_resource_name`]), since `since`.
fn prometheus_insight(
    resource_name: String,
    problem: PrometheusProblem<'_>,
    since: Timestamp,
) -> UpdateInsightStatus {
    let PrometheusProblem {
        level,
        source,
        summary,
        description,
    } = problem;
    UpdateInsightStatus {
        type_: InsightType::Health,
        resource: ResourceRef {
            group: "monitoring.coreos.com".to_string(),
            kind: "Prometheus".to_string(),
            name: resource_name,
            namespace: None,
        },
        scope: InsightScope {
            type_: ScopeType::Cluster,
            pool: None,
        },
        progress: None,
        health: Some(HealthInsight {
            started_at: Some(since),
            impact: Impact {
                level,
                type_: ImpactType::Unknown,
                summary: ellipsize(&summary, limits::SUMMARY),
                description: cut_noting(&description, limits::DESCRIPTION),
            },
            remediation: Remediation {
                reference: ALERTS_UNAVAILABLE_REFERENCE.to_string(),
            },
            related: Vec::new(),
            related_omitted: 0,
            caveat: None,
            source: source.to_string(),
        }),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `scheme://host[:port]/path` without user information, query or fragment, and no trailing `/`
/// (the endpoint an insight names).
pub fn redact_url(url: &str) -> String {
    // Redacted whole first: a password may hold `?` or `#` (issue #29).
    crate::redact::redact_endpoint(url)
}

fn url_authority(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split('/').next().unwrap_or_default().to_string()
}

/// B.1's gate: the cluster is updating while the ClusterVersion is progressing or some worker
/// pool with nodes is not fully updated. `oc adm upgrade status` shows nothing (so no alert)
/// otherwise; the alerts reconciler and [`crate::assess_cluster`] show alert insights
/// only while this holds, so a critical alert long after an update does not read as an update
/// problem.
pub fn update_in_progress<'a>(
    control_plane: Option<&ControlPlaneUpdateStatusStatus>,
    worker_pools: impl IntoIterator<Item = &'a WorkerPoolUpdateStatusStatus>,
) -> bool {
    let progressing = control_plane.is_some_and(|cp| {
        cp.conditions.iter().any(|c| {
            c.type_ == crate::control_plane::CONDITION_UPDATING
                && c.status == update_status_api::crd::ConditionStatus::True
        })
    });
    progressing
        || worker_pools
            .into_iter()
            .any(|p| p.nodes.total > 0 && p.completion_percent != 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use update_status_api::crd::{Condition, ConditionStatus, NodeCounts};

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    const START: &str = "2024-01-01T12:00:00Z";
    const NOW: &str = "2024-01-01T13:00:00Z";

    fn alert(
        name: &str,
        severity: &str,
        state: &str,
        active_at: &str,
        annotations: &[(&str, &str)],
    ) -> Alert {
        let mut labels: BTreeMap<String, String> = BTreeMap::new();
        if !name.is_empty() {
            labels.insert("alertname".into(), name.into());
        }
        if !severity.is_empty() {
            labels.insert("severity".into(), severity.into());
        }
        labels.insert("namespace".into(), "default".into());
        Alert {
            labels,
            annotations: annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            state: state.into(),
            active_at: Some(ts(active_at)),
        }
    }

    /// `a` as the platform's: about a namespace only the platform has.
    fn platform(a: Alert) -> Alert {
        in_namespace(a, "openshift-machine-config-operator")
    }

    /// `a` with the labels the platform's alerts were once trusted by (issue #48: a tenant's
    /// rule can set them).
    fn spoofed(mut a: Alert) -> Alert {
        a.labels
            .insert("openshift_io_alert_source".into(), "platform".into());
        a.labels
            .insert("prometheus".into(), "openshift-monitoring/k8s".into());
        a
    }

    /// `a` about namespace `ns` (a tenant's when not `openshift-*`).
    fn in_namespace(mut a: Alert, ns: &str) -> Alert {
        a.labels.insert("namespace".into(), ns.into());
        a
    }

    fn run(alerts: &[Alert]) -> Vec<UpdateInsightStatus> {
        assess_alerts(alerts, Some(ts(START)), ts(NOW))
    }

    fn health(i: &UpdateInsightStatus) -> &HealthInsight {
        i.health.as_ref().expect("health")
    }

    /// Issue #29 item 5: 100,000 firing alerts (40 critical, scattered) give
    /// `MAX_ALERT_INSIGHTS` insights, every critical one among them, then the first warnings,
    /// in alert order, and one more saying how many were left out; at the cap, nothing is said.
    #[test]
    fn alert_insights_are_capped_most_severe_first() {
        let alerts: Vec<Alert> = (0..100_000)
            .map(|i| {
                let severity = if i % 2_500 == 1_234 {
                    "critical"
                } else {
                    "warning"
                };
                alert(
                    &format!("A{i}"),
                    severity,
                    "firing",
                    "2024-01-01T12:30:00Z",
                    &[],
                )
            })
            .collect();
        let capped = assess_alert_insights_capped(&alerts, Some(ts(START)), ts(NOW));
        assert_eq!(capped.len(), MAX_ALERT_INSIGHTS + 1);
        let (shown, over) = capped.split_at(MAX_ALERT_INSIGHTS);
        let level = |a: &AlertInsight| health(&a.status).impact.level;
        assert_eq!(
            shown
                .iter()
                .filter(|a| level(a) == ImpactLevel::Critical)
                .count(),
            40
        );
        let names: Vec<&str> = shown
            .iter()
            .map(|a| a.status.resource.name.as_str())
            .collect();
        assert_eq!(names[..3], ["A0", "A1", "A2"], "warnings in alert order");
        assert!(names.contains(&"A98734"), "the last critical is kept");
        let o = health(&over[0].status);
        assert_eq!(o.source, SOURCE_ALERTS_OVER_CAP);
        assert_eq!(
            o.impact.summary,
            "100000 alerts are firing, more than 100; showing the 100 most severe, platform alerts first, 99900 left out"
        );
        assert_eq!(o.started_at, Some(ts("2024-01-01T12:30:00Z")));
        // At the cap, and with alerts that give no insight (pending, info, before the update)
        // around it: unchanged.
        let mut mixed = alerts[..MAX_ALERT_INSIGHTS].to_vec();
        mixed.extend((0..50).map(|i| {
            alert(
                &format!("P{i}"),
                "critical",
                "pending",
                "2024-01-01T12:30:00Z",
                &[],
            )
        }));
        mixed.extend((0..50).map(|i| {
            alert(
                &format!("I{i}"),
                "info",
                "firing",
                "2024-01-01T12:30:00Z",
                &[],
            )
        }));
        mixed.extend((0..50).map(|i| {
            alert(
                &format!("B{i}"),
                "critical",
                "firing",
                "2024-01-01T11:00:00Z",
                &[],
            )
        }));
        let all = assess_alert_insights(&mixed, Some(ts(START)), ts(NOW));
        assert_eq!(all.len(), MAX_ALERT_INSIGHTS);
        assert_eq!(
            assess_alert_insights_capped(&mixed, Some(ts(START)), ts(NOW)),
            all
        );
    }

    /// Issue #38: 150 critical user-workload alerts pushed `etcdMembersDown` out of the 100
    /// slots. The platform's alerts rank first, whatever their level, then the most severe.
    #[test]
    fn tenant_alerts_never_crowd_platform_alerts_out_of_the_cap() {
        let during = "2024-01-01T12:30:00Z";
        let mut alerts: Vec<Alert> = (0..150)
            .map(|i| {
                in_namespace(
                    alert(&format!("Tenant{i}"), "critical", "firing", during, &[]),
                    "shop",
                )
            })
            .collect();
        alerts.push(in_namespace(
            alert("etcdMembersDown", "critical", "firing", during, &[]),
            "openshift-etcd",
        ));
        alerts.push(platform(alert(
            "MCDRebootError",
            "warning",
            "firing",
            during,
            &[],
        )));
        alerts.push(in_namespace(
            alert("KubeletDown", "warning", "firing", during, &[]),
            "kube-system",
        ));
        // A tenant naming its alert like a platform one, or giving it the platform's labels
        // (issue #48), does not make it the platform's.
        alerts.push(in_namespace(
            alert("etcdMembersDown", "warning", "firing", during, &[]),
            "shop",
        ));
        alerts.push(spoofed(in_namespace(
            alert("SpoofedWarning", "warning", "firing", during, &[]),
            "shop",
        )));
        let capped = assess_alert_insights_capped(&alerts, Some(ts(START)), ts(NOW));
        assert_eq!(capped.len(), MAX_ALERT_INSIGHTS + 1);
        let shown: Vec<(&str, Option<&str>)> = capped[..MAX_ALERT_INSIGHTS]
            .iter()
            .map(|a| {
                (
                    a.status.resource.name.as_str(),
                    a.status.resource.namespace.as_deref(),
                )
            })
            .collect();
        for platform_alert in [
            ("etcdMembersDown", Some("openshift-etcd")),
            ("MCDRebootError", Some("openshift-machine-config-operator")),
            ("KubeletDown", Some("kube-system")),
        ] {
            assert!(
                shown.contains(&platform_alert),
                "{platform_alert:?} left out"
            );
        }
        assert!(!shown.contains(&("etcdMembersDown", Some("shop"))));
        assert!(!shown.contains(&("SpoofedWarning", Some("shop"))));
        assert_eq!(
            shown.iter().filter(|(_, ns)| *ns == Some("shop")).count(),
            97,
            "the first 97 tenant criticals fill the rest"
        );
        assert!(
            shown.contains(&("Tenant96", Some("shop")))
                && !shown.contains(&("Tenant97", Some("shop")))
        );
        let over = health(&capped[MAX_ALERT_INSIGHTS].status);
        assert_eq!(
            over.impact.summary,
            "155 alerts are firing, more than 100; showing the 100 most severe, platform alerts first, 55 left out"
        );
        assert!(
            over.impact.description.contains("the platform's first")
                && over.impact.description.contains("down to level Warning"),
            "{}",
            over.impact.description
        );
    }

    /// Issue #48: `oc` classifies by name, so the text does; whether the alert is the
    /// platform's is only our caveat (a tenant's rule can raise an alert of that name, and
    /// set the labels the platform's were once told by).
    #[test]
    fn known_blockers_are_named_as_oc_does_with_our_caveat() {
        let pdb = |active_at: &str, ns: &str| {
            in_namespace(
                alert(
                    "PodDisruptionBudgetAtLimit",
                    "warning",
                    "firing",
                    active_at,
                    &[],
                ),
                ns,
            )
        };
        let before = "2024-01-01T11:00:00Z";
        let during = "2024-01-01T12:10:00Z";
        let cases = [
            (
                pdb(before, "shop"),
                "has been firing since before the update started.",
            ),
            (pdb(during, "shop"), "started firing during the update."),
            (
                spoofed(pdb(during, "shop")),
                "started firing during the update.",
            ),
        ];
        for (a, rest) in cases {
            let out = run(std::slice::from_ref(&a));
            assert_eq!(out.len(), 1, "{:?}", a.labels);
            let h = health(&out[0]);
            assert_eq!(
                h.impact.description,
                format!("{KNOWN_PREFIX} {rest} The alert has no description."),
            );
            assert_eq!(
                h.caveat,
                Some(Caveat::AlertSourceUnverified),
                "{:?}",
                a.labels
            );
        }
        // About a platform namespace: no doubt.
        for ns in ["openshift-monitoring", "kube-system"] {
            let out = run(&[pdb(before, ns)]);
            assert!(health(&out[0]).impact.description.starts_with(KNOWN_PREFIX));
            assert_eq!(health(&out[0]).caveat, None, "{ns}");
        }
        // Not a known blocker: no caveat, whatever its namespace.
        let other = in_namespace(alert("Other", "warning", "firing", during, &[]), "shop");
        assert_eq!(health(&run(&[other])[0]).caveat, None);
        // Not platform namespaces: their prefixes alone, or look-alikes.
        for ns in [
            "openshift",
            "kube-",
            "openshiftx",
            "default",
            "shop-openshift-x",
        ] {
            assert!(!is_platform(&pdb(during, ns)), "{ns}");
        }
    }

    // G.50: empty → none.
    #[test]
    fn no_alerts_no_insights() {
        assert!(run(&[]).is_empty());
    }

    // G.50: the full shape of a critical alert insight.
    #[test]
    fn critical_alert_full_shape() {
        let a = alert(
            "NodeDown",
            "critical",
            "firing",
            "2024-01-01T12:30:00Z",
            &[("summary", "Node is down")],
        );
        let out = run(&[a]);
        assert_eq!(out.len(), 1);
        let expected = UpdateInsightStatus {
            type_: InsightType::Health,
            resource: ResourceRef {
                group: "config.openshift.io".into(),
                kind: "Alert".into(),
                name: "NodeDown".into(),
                namespace: Some("default".into()),
            },
            scope: InsightScope {
                type_: ScopeType::Cluster,
                pool: None,
            },
            progress: None,
            health: Some(HealthInsight {
                started_at: Some(ts("2024-01-01T12:30:00Z")),
                impact: Impact {
                    level: ImpactLevel::Critical,
                    type_: ImpactType::Unknown,
                    summary: "Alert is firing: Node is down".into(),
                    description:
                        "Alert started firing during the update. The alert has no description."
                            .into(),
                },
                remediation: Remediation {
                    reference: "<alert does not have a runbook_url annotation>".into(),
                },
                // Rule A: the objects its labels name (here its namespace).
                related: vec![ResourceRef {
                    group: String::new(),
                    kind: "Namespace".into(),
                    name: "default".into(),
                    namespace: None,
                }],
                related_omitted: 0,
                caveat: None,
                source: "Alert".into(),
            }),
        };
        assert_eq!(out[0], expected);
    }

    // G.50: active after start → kept; before start → dropped unless allow-listed.
    #[test]
    fn started_during_update_is_strict_and_pdb_alerts_are_allowed() {
        let after = alert("A", "warning", "firing", "2024-01-01T12:00:01Z", &[]);
        let at = alert("B", "warning", "firing", START, &[]);
        let before = alert("C", "warning", "firing", "2024-01-01T11:00:00Z", &[]);
        let pdb_before = platform(alert(
            "PodDisruptionBudgetAtLimit",
            "warning",
            "firing",
            "2024-01-01T11:00:00Z",
            &[],
        ));
        let pdb_limit_after = platform(alert(
            "PodDisruptionBudgetLimit",
            "critical",
            "firing",
            "2024-01-01T12:10:00Z",
            &[],
        ));
        let out = run(&[after, at, before, pdb_before, pdb_limit_after]);
        let names: Vec<&str> = out.iter().map(|i| i.resource.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "A",
                "PodDisruptionBudgetAtLimit",
                "PodDisruptionBudgetLimit"
            ]
        );
        assert_eq!(
            health(&out[0]).impact.description,
            "Alert started firing during the update. The alert has no description."
        );
        assert_eq!(
            health(&out[1]).impact.description,
            "Alert known to affect updates has been firing since before the update started. The alert has no description."
        );
        assert_eq!(
            health(&out[2]).impact.description,
            "Alert known to affect updates started firing during the update. The alert has no description."
        );
    }

    // G.50: info severity → dropped; unknown severity is Info → dropped; pending → dropped;
    // no alertname → dropped.
    #[test]
    fn filters() {
        let t = "2024-01-01T12:30:00Z";
        let out = run(&[
            alert("Info", "info", "firing", t, &[]),
            alert("None", "none", "firing", t, &[]),
            alert("NoSeverity", "", "firing", t, &[]),
            alert("Upper", "Critical", "firing", t, &[]),
            alert("Pending", "critical", "pending", t, &[]),
            alert("", "critical", "firing", t, &[]),
            alert("Warn", "warning", "firing", t, &[]),
        ]);
        let names: Vec<&str> = out.iter().map(|i| i.resource.name.as_str()).collect();
        assert_eq!(names, ["Warn"]);
        assert_eq!(health(&out[0]).impact.level, ImpactLevel::Warning);
    }

    #[test]
    fn unknown_times() {
        let mut no_active = alert("A", "warning", "firing", START, &[]);
        no_active.active_at = None;
        let with_active = alert("B", "warning", "firing", "2020-01-01T00:00:00Z", &[]);
        let out = assess_alerts(&[no_active.clone(), with_active], None, ts(NOW));
        let names: Vec<&str> = out.iter().map(|i| i.resource.name.as_str()).collect();
        assert_eq!(
            names,
            ["B"],
            "unknown start: every active alert is during it"
        );
        assert!(run(&[no_active]).is_empty(), "unknown activeAt: before it");
    }

    #[test]
    fn descriptions_references_and_summaries() {
        let t = "2024-01-01T12:30:00Z";
        let out = run(&[
            alert(
                "Both",
                "warning",
                "firing",
                t,
                &[
                    ("description", "d"),
                    ("message", "m"),
                    ("summary", "S"),
                    ("runbook_url", "https://r"),
                ],
            ),
            alert("Desc", "warning", "firing", t, &[("description", "d")]),
            alert(
                "Msg",
                "warning",
                "firing",
                t,
                &[("message", "m"), ("description", "")],
            ),
            alert(
                "Empty",
                "warning",
                "firing",
                t,
                &[("summary", ""), ("runbook_url", "")],
            ),
        ]);
        let d: Vec<(&str, &str, &str)> = out
            .iter()
            .map(|i| {
                let h = health(i);
                (
                    h.impact.summary.as_str(),
                    h.impact.description.as_str(),
                    h.remediation.reference.as_str(),
                )
            })
            .collect();
        assert_eq!(
            d,
            [
                (
                    "Alert is firing: S",
                    "Alert started firing during the update. The alert description is: d | m",
                    "https://r"
                ),
                (
                    "Alert is firing: Desc",
                    "Alert started firing during the update. The alert description is: d",
                    NO_RUNBOOK
                ),
                (
                    "Alert is firing: Msg",
                    "Alert started firing during the update. The alert description is: m",
                    NO_RUNBOOK
                ),
                (
                    "Alert is firing: Empty",
                    "Alert started firing during the update. The alert has no description.",
                    NO_RUNBOOK
                ),
            ]
        );
    }

    #[test]
    fn long_texts_are_cut_to_the_schema() {
        let t = "2024-01-01T12:30:00Z";
        let long = "x".repeat(40_000);
        let url = format!("https://example.com/{}", "p".repeat(600));
        let ns = "n".repeat(70);
        let mut a = alert(
            &"A".repeat(300),
            "warning",
            "firing",
            t,
            &[
                ("summary", long.as_str()),
                ("description", long.as_str()),
                ("runbook_url", url.as_str()),
            ],
        );
        a.labels.insert("namespace".into(), ns);
        let out = run(&[a]);
        let h = health(&out[0]);
        assert_eq!(h.impact.summary.chars().count(), 256);
        assert!(h.impact.summary.ends_with("..."));
        assert_eq!(h.impact.description.chars().count(), 32768);
        assert!(h.impact.description.ends_with("too long to store]"));
        assert_eq!(h.remediation.reference.chars().count(), 512);
        assert_eq!(out[0].resource.name.chars().count(), 253);
        assert_eq!(
            out[0]
                .resource
                .namespace
                .as_deref()
                .map(|n| n.chars().count()),
            Some(63)
        );
    }

    #[test]
    fn duplicated_alerts_get_distinct_stable_names() {
        let t = "2024-01-01T12:30:00Z";
        let mut a = alert("KubePodNotReady", "warning", "firing", t, &[]);
        let mut b = a.clone();
        a.labels.insert("pod".into(), "a".into());
        b.labels.insert("pod".into(), "b".into());
        let out = assess_alert_insights(&[a.clone(), b], Some(ts(START)), ts(NOW));
        assert_eq!(out.len(), 2, "oc shows duplicated alerts twice");
        // Labels only differ: the statuses too, only in what the labels name (rule A).
        let without_related = |s: &UpdateInsightStatus| {
            let mut s = s.clone();
            if let Some(h) = s.health.as_mut() {
                h.related.clear();
            }
            s
        };
        assert_eq!(
            without_related(&out[0].status),
            without_related(&out[1].status)
        );
        let pods: Vec<&str> = out
            .iter()
            .map(|a| health(&a.status).related[0].name.as_str())
            .collect();
        assert_eq!(pods, ["a", "b"]);
        assert_ne!(out[0].name(), out[1].name());
        // The same alert, read again (another activeAt, annotations changed): same object.
        let mut again = a.clone();
        again.active_at = Some(ts("2024-01-01T12:40:00Z"));
        again.annotations.insert("description".into(), "new".into());
        let again = assess_alert_insights(&[again], Some(ts(START)), ts(NOW));
        assert_eq!(again[0].name(), out[0].name());
        assert!(
            out[0].name().starts_with("alert-kubepodnotready-"),
            "{}",
            out[0].name()
        );
        let labels = naming::insight_labels(&out[0].status);
        assert_eq!(labels["update.openshift.io/source"], "alert");
        assert_eq!(labels["update.openshift.io/scope"], "cluster");
        assert_eq!(labels["update.openshift.io/resource-kind"], "Alert");
    }

    #[test]
    fn alerts_sharing_labels_get_one_insight_each_and_exact_copies_share_one() {
        let t = "2024-01-01T12:30:00Z";
        let mut a = alert("KubePodNotReady", "warning", "firing", t, &[]);
        a.labels.insert("pod".into(), "a".into());
        let mut b = a.clone();
        a.annotations
            .insert("description".into(), "from rule file one".into());
        b.annotations
            .insert("description".into(), "from rule file two".into());
        let out = assess_alert_insights(&[a.clone(), b.clone()], Some(ts(START)), ts(NOW));
        assert_eq!(out.len(), 2, "oc prints one line for each");
        assert_ne!(out[0].name(), out[1].name(), "each gets its own object");
        assert!(
            health(&out[0].status)
                .impact
                .description
                .contains("rule file one")
        );
        // Stable while they fire: the same names whatever order Prometheus answers in.
        let reversed = assess_alert_insights(&[b.clone(), a.clone()], Some(ts(START)), ts(NOW));
        assert_eq!(reversed[0].name(), out[1].name());
        assert_eq!(reversed[1].name(), out[0].name());
        // The first by annotations keeps the name the alert would have alone.
        let alone = assess_alert_insights(std::slice::from_ref(&a), Some(ts(START)), ts(NOW));
        assert_eq!(alone[0].name(), out[0].name());
        // Equal in labels and annotations: one alert (Thanos replicas), one object.
        let twins = assess_alert_insights(&[a.clone(), a.clone()], Some(ts(START)), ts(NOW));
        assert_eq!(twins[0].identity, twins[1].identity);
        assert_eq!(twins[0].name(), alone[0].name());
    }

    #[test]
    fn alerts_unavailable() {
        let i = alerts_unavailable_insight(
            "https://user:secret@thanos-querier.openshift-monitoring.svc:9091/?x=1",
            "connecting to thanos-querier:\n connection refused",
            ts(START),
        );
        let h = health(&i);
        assert_eq!(h.impact.level, ImpactLevel::Unknown);
        assert_eq!(h.impact.type_, ImpactType::Unknown);
        assert_eq!(
            h.impact.summary,
            "Cannot read alerts from Prometheus: connecting to thanos-querier: connection refused"
        );
        assert!(!h.impact.description.contains("secret"));
        assert!(
            h.impact
                .description
                .contains("https://thanos-querier.openshift-monitoring.svc:9091/api/v1/alerts"),
            "{}",
            h.impact.description
        );
        assert_eq!(h.started_at, Some(ts(START)));
        assert_eq!(h.source, SOURCE_ALERTS_UNAVAILABLE);
        assert_eq!(i.scope.type_, ScopeType::Cluster);
        assert_eq!(
            i.resource.name,
            "thanos-querier.openshift-monitoring.svc:9091"
        );
        assert_eq!(
            naming::insight_labels(&i)["update.openshift.io/source"],
            "alerts-unavailable"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:9090/"),
            "http://127.0.0.1:9090"
        );
        assert_eq!(redact_url("127.0.0.1:9090/p/"), "127.0.0.1:9090/p");
    }

    #[test]
    fn alerts_unavailable_never_shows_credentials() {
        let i = alerts_unavailable_insight(
            "https://user:s3cret@thanos:9091",
            "requesting https://user:s3cret@thanos:9091/api/v1/alerts?access_token=t0k: refused",
            ts(START),
        );
        let text = serde_json::to_string(&i).expect("json");
        assert!(!text.contains("s3cret") && !text.contains("t0k"), "{text}");
        assert!(text.contains("https://thanos:9091/api/v1/alerts"), "{text}");
    }

    #[test]
    fn updating_gate_is_b1() {
        let mut cp = ControlPlaneUpdateStatusStatus::default();
        let updating = |s| Condition {
            type_: "Updating".into(),
            status: s,
            ..Default::default()
        };
        assert!(!update_in_progress(None, []));
        cp.conditions = vec![updating(ConditionStatus::False)];
        assert!(!update_in_progress(Some(&cp), []));
        let done = WorkerPoolUpdateStatusStatus {
            completion_percent: 100,
            nodes: NodeCounts {
                total: 3,
                ..Default::default()
            },
            ..Default::default()
        };
        let empty = WorkerPoolUpdateStatusStatus::default();
        let outdated = WorkerPoolUpdateStatusStatus {
            completion_percent: 33,
            nodes: NodeCounts {
                total: 3,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(!update_in_progress(Some(&cp), [&done, &empty]));
        assert!(update_in_progress(Some(&cp), [&done, &outdated]));
        cp.conditions = vec![updating(ConditionStatus::True)];
        assert!(update_in_progress(Some(&cp), []));
    }
}
