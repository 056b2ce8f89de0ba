//! Deterministic names and labels of the objects update-status writes (design.md "Names" and
//! "Labels"). The same insight always gets the same name, so a problem keeps its object (and
//! its `startedAt`) for as long as it lasts.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};
use update_status_api::crd::{InsightType, UpdateInsightStatus, labels};

/// Name of the ControlPlaneUpdateStatus of a standalone cluster.
pub const CONTROL_PLANE_STATUS_NAME: &str = "cluster";

const MAX_NAME: usize = 253;
const MAX_LABEL: usize = 63;
const HASH_LEN: usize = 10;

/// Lower-case hex SHA-256 prefix of `input`.
pub fn short_hash(input: &str) -> String {
    let digest = Sha256::digest(input.as_bytes());
    digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
        .chars()
        .take(HASH_LEN)
        .collect()
}

/// `CamelCase` → `camel-case`.
pub fn kebab(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut prev_lower_or_digit = false;
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower_or_digit {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower_or_digit = false;
        } else {
            out.push(c);
            prev_lower_or_digit = c.is_ascii_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// `raw` as DNS-1123 subdomain characters: lower case, characters other than `[a-z0-9.-]`
/// replaced by `-`, every dot-separated part trimmed to start and end alphanumeric, empty
/// parts dropped (`weird..name.-x` → `weird.name.x`). May be empty.
fn subdomain_slug(raw: &str) -> String {
    let mapped: String = raw
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '.') => c,
            _ => '-',
        })
        .collect();
    let parts: Vec<&str> = mapped
        .split('.')
        .map(|p| p.trim_matches('-'))
        .filter(|p| !p.is_empty())
        .collect();
    parts.join(".")
}

/// Makes `raw` a valid DNS-1123 subdomain of at most `max` characters (see
/// [`subdomain_slug`]); when it had to be changed or shortened, a hash suffix of the original
/// keeps distinct inputs distinct. Never empty.
pub fn dns_subdomain(raw: &str, max: usize) -> String {
    let slug = subdomain_slug(raw);
    if slug == raw && !slug.is_empty() && slug.len() <= max {
        return slug;
    }
    let hash = short_hash(raw);
    let keep = max.saturating_sub(HASH_LEN + 1);
    let head = subdomain_slug(&slug.chars().take(keep).collect::<String>());
    if head.is_empty() {
        hash
    } else {
        format!("{head}-{hash}")
    }
}

/// A status string within its schema limit (`max` characters, from
/// [`update_status_api::crd::limits`]): cut with `...` when longer.
pub fn status_text(raw: &str, max: usize) -> String {
    crate::format::ellipsize(raw, max)
}

/// A valid label value for `raw` (≤ 63 characters, `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`).
/// Values that are already valid are kept as they are; others are slugged and, if too long,
/// shortened with a hash suffix (the full value stays in `.status`).
pub fn label_value(raw: &str) -> String {
    let valid_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.';
    let is_valid = raw.len() <= MAX_LABEL
        && raw.chars().all(valid_char)
        && raw
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && raw
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    if is_valid || raw.is_empty() {
        return raw.to_string();
    }
    let slug: String = raw
        .chars()
        .map(|c| if valid_char(c) { c } else { '-' })
        .collect();
    let trim = |s: &str| {
        s.trim_matches(|c: char| !c.is_ascii_alphanumeric())
            .to_string()
    };
    let slug = trim(&slug);
    if slug.len() <= MAX_LABEL && !slug.is_empty() {
        return slug;
    }
    let keep = MAX_LABEL - HASH_LEN - 1;
    let head = trim(&slug.chars().take(keep).collect::<String>());
    let hash = short_hash(raw);
    if head.is_empty() {
        hash
    } else {
        format!("{head}-{hash}")
    }
}

/// Object name of the progress insight of a resource of `kind` named `name` (e.g. `Node`).
pub fn progress_insight_name(kind: &str, name: &str) -> String {
    dns_subdomain(&format!("{}-{}", kind.to_ascii_lowercase(), name), MAX_NAME)
}

/// Object name of an insight.
///
/// - progress: `<kind>-<resource name>`, e.g. `node-ip-10-0-1-2`, `clusteroperator-etcd`;
/// - health: `<source>-<resource name>-<hash>`, the hash over the rule, the resource it is
///   about and `identity` (extra distinguishing data, e.g. an alert's labels; usually empty).
///   Not over `related`: what an insight points at may change while the problem lasts (a
///   drain blocked by another pod), and the problem keeps its object and its `startedAt`.
pub fn insight_name(status: &UpdateInsightStatus, identity: &str) -> String {
    let r = &status.resource;
    match status.type_ {
        InsightType::Progress => progress_insight_name(&r.kind, &r.name),
        InsightType::Health => {
            let source = status
                .health
                .as_ref()
                .map(|h| h.source.as_str())
                .unwrap_or("health");
            let mut key = format!(
                "{source}\n{}/{}/{}/{}",
                r.group,
                r.kind,
                r.namespace.as_deref().unwrap_or(""),
                r.name
            );
            if !identity.is_empty() {
                key.push('\n');
                key.push_str(identity);
            }
            let head = dns_subdomain(
                &format!("{}-{}", kebab(source), r.name),
                MAX_NAME - HASH_LEN - 1,
            );
            format!("{head}-{}", short_hash(&key))
        }
    }
}

/// The labels every insight carries (the reconciler adds its own `reconciler` and `cluster`).
pub fn insight_labels(status: &UpdateInsightStatus) -> BTreeMap<String, String> {
    let mut l = BTreeMap::new();
    l.insert(
        labels::MANAGED_BY.to_string(),
        labels::MANAGED_BY_VALUE.to_string(),
    );
    l.insert(
        labels::INSIGHT_TYPE.to_string(),
        status.type_.slug().to_string(),
    );
    l.insert(
        labels::RESOURCE_KIND.to_string(),
        label_value(&status.resource.kind),
    );
    l.insert(
        labels::RESOURCE_NAME.to_string(),
        label_value(&status.resource.name),
    );
    l.insert(
        labels::SCOPE.to_string(),
        status.scope.type_.slug().to_string(),
    );
    if let Some(pool) = &status.scope.pool {
        l.insert(labels::POOL.to_string(), label_value(pool));
    }
    if let Some(p) = &status.progress {
        l.insert(
            labels::ASSESSMENT.to_string(),
            p.assessment.slug().to_string(),
        );
        // No phase label: a node passes through up to five phases in one update and each
        // label change costs a metadata write; the phase is in `.status.progress.phase`.
    }
    if let Some(h) = &status.health {
        l.insert(
            labels::IMPACT_LEVEL.to_string(),
            h.impact.level.slug().to_string(),
        );
        l.insert(
            labels::IMPACT_TYPE.to_string(),
            h.impact.type_.slug().to_string(),
        );
        l.insert(labels::SOURCE.to_string(), label_value(&kebab(&h.source)));
    }
    l
}

/// The labels every object of a cluster carries besides its own: the cluster ID, when known.
pub fn cluster_labels(cluster_id: Option<&str>) -> BTreeMap<String, String> {
    cluster_id
        .map(|id| (labels::CLUSTER.to_string(), label_value(id)))
        .into_iter()
        .collect()
}

/// Object name of a WorkerPoolUpdateStatus: the pool's name (made DNS-safe if it is not).
pub fn pool_status_name(pool: &str) -> String {
    dns_subdomain(pool, MAX_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::*;

    fn health(source: &str, kind: &str, name: &str, level: ImpactLevel) -> UpdateInsightStatus {
        UpdateInsightStatus {
            type_: InsightType::Health,
            resource: ResourceRef {
                group: String::new(),
                kind: kind.into(),
                name: name.into(),
                namespace: None,
            },
            scope: InsightScope {
                type_: ScopeType::WorkerPool,
                pool: Some("worker".into()),
            },
            progress: None,
            health: Some(HealthInsight {
                started_at: None,
                impact: Impact {
                    level,
                    type_: ImpactType::UpdateStalled,
                    summary: "s".into(),
                    description: String::new(),
                },
                remediation: Remediation {
                    reference: "https://x".into(),
                },
                related: vec![],
                related_omitted: 0,
                caveat: None,
                source: source.into(),
            }),
        }
    }

    #[test]
    fn what_an_insight_points_at_does_not_name_it() {
        let plain = health("NodeDegraded", "Node", "worker-1", ImpactLevel::Error);
        let mut pointing = plain.clone();
        crate::insight::set_related(&mut pointing, [crate::related::pod("shop", "checkout-1")]);
        assert_eq!(pointing.health.as_ref().map(|h| h.related.len()), Some(1));
        assert_eq!(insight_name(&plain, ""), insight_name(&pointing, ""));
    }

    #[test]
    fn label_values_are_valid_and_stable() {
        assert_eq!(
            label_value("ip-10-0-1-2.ec2.internal"),
            "ip-10-0-1-2.ec2.internal"
        );
        assert_eq!(label_value("Update Stalled"), "Update-Stalled");
        let long = "a".repeat(40) + "." + &"b".repeat(40);
        let v = label_value(&long);
        assert!(v.len() <= 63, "{v}");
        assert_eq!(v, label_value(&long));
        assert_ne!(v, label_value(&(long.clone() + "c")));
        assert!(v.chars().last().is_some_and(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn names_are_dns_safe_deterministic_and_level_independent() {
        let a = insight_name(
            &health("NodeDegraded", "Node", "Node-A_1", ImpactLevel::Warning),
            "",
        );
        let b = insight_name(
            &health("NodeDegraded", "Node", "Node-A_1", ImpactLevel::Error),
            "",
        );
        assert_eq!(a, b, "a level change keeps the object");
        assert!(a.starts_with("node-degraded-node-a-1-"), "{a}");
        assert!(
            a.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        );
        let c = insight_name(
            &health("NodeDegraded", "Node", "node-a-1", ImpactLevel::Error),
            "",
        );
        assert_ne!(a, c, "distinct resources get distinct names");
        let d = insight_name(
            &health("Alert", "Alert", "X", ImpactLevel::Error),
            "severity=warning",
        );
        let e = insight_name(
            &health("Alert", "Alert", "X", ImpactLevel::Error),
            "severity=critical",
        );
        assert_ne!(d, e);
        let long = insight_name(
            &health("NodeDegraded", "Node", &"n".repeat(300), ImpactLevel::Error),
            "",
        );
        assert!(long.len() <= 253);
    }

    #[test]
    fn labels_use_slugs() {
        let l = insight_labels(&health(
            "ClusterOperatorDegraded",
            "ClusterOperator",
            "etcd",
            ImpactLevel::Error,
        ));
        assert_eq!(l[labels::IMPACT_LEVEL], "error");
        assert_eq!(l[labels::IMPACT_TYPE], "update-stalled");
        assert_eq!(l[labels::SOURCE], "cluster-operator-degraded");
        assert_eq!(l[labels::INSIGHT_TYPE], "health");
        assert_eq!(l[labels::POOL], "worker");
        assert_eq!(kebab("NodeDrainFailed"), "node-drain-failed");
        assert_eq!(kebab("CVFailing"), "cvfailing");
    }
}
