//! Which HostedCluster reports under which managed-cluster name (hosted mode's hub sync), and
//! who holds a name: the rule that keeps a tenant's HostedCluster from taking another cluster's
//! hub identity (issue #38 item 8, issue #48 item 1).
//!
//! A HostedCluster claims the name of its annotation [`MANAGED_CLUSTER_NAME_ANNOTATION`], else
//! its own name. Anyone who may edit a HostedCluster can set that annotation, and the multicluster
//! engine imports a hosted cluster under its own name by default (no annotation), so neither
//! kind of claim proves anything about the hub's managed cluster. What does: **who reports under
//! the name already**. So a name claimed by several HostedClusters goes, in this order:
//! 1. to the HostedCluster whose session holds it now ([`Holders::running`]): a running holder
//!    is never displaced by a new claim, annotated or not;
//! 2. after a restart (no session yet), to the HostedCluster whose copies are on the hub under
//!    that name ([`Holders::recorded`]: the label `update.openshift.io/hosted-cluster` of the
//!    ControlPlaneUpdateStatus copy, which only the hub identity writes and no tenant of the
//!    management cluster can), so the holder keeps its name across restarts;
//! 3. when nobody holds it (nothing reported under it yet), to the one claiming it by the
//!    annotation over those merely named so; between equal claims, to none (a tie is refused
//!    until only one claims it).
//!
//! Every other claimant is refused, with a reason naming the holder or the other claimants
//! (the hosted hub sync logs it, sets its metrics, publishes an Event on the HostedCluster).
//!
//! Why the hub's ManagedCluster is not asked whether it agrees with an annotation: the markers of
//! a hosted import (`import.open-cluster-management.io/klusterlet-deploy-mode: Hosted`,
//! `import.open-cluster-management.io/hosting-cluster-name`) are set by the multicluster
//! engine's import controller, not by the OCM we build and test against (its source has neither),
//! they name the hosting cluster but not the HostedCluster (two HostedClusters of one management
//! cluster look the same), and neither hub identity of hosted mode may read ManagedClusters (a
//! cluster-scoped read of the whole fleet's inventory, which the hub Role and the add-on
//! identity deliberately lack). docs/acm.md, "Hosted control planes under ACM".

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kube::ResourceExt;
use update_status_api::crd::{ControlPlaneUpdateStatus, labels};
use update_status_api::hosted::HostedCluster;

use super::config::validate_cluster_name;
use super::errors::HubError;

/// The HostedCluster annotation naming its managed cluster on the hub (multicluster engine,
/// hypershift addon); absent: the HostedCluster's name.
pub const MANAGED_CLUSTER_NAME_ANNOTATION: &str =
    "cluster.open-cluster-management.io/managedcluster-name";

/// A HostedCluster: `(namespace, name)`.
pub type HostedKey = (String, String);

/// Who holds the names.
#[derive(Clone, Debug, Default)]
pub struct Holders {
    /// Name → the HostedCluster whose session holds it now.
    pub running: BTreeMap<String, HostedKey>,
    /// Name → what the hub says of it, read for contested names nobody runs a session for
    /// ([`needs_lookup`]): `Ok(Some(label))`, the `update.openshift.io/hosted-cluster` label of
    /// its ControlPlaneUpdateStatus copy; `Ok(None)`, no copy; `Err`, why it could not be read.
    pub recorded: BTreeMap<String, Result<Option<String>, String>>,
}

/// The value of the label `update.openshift.io/hosted-cluster` of a hosted cluster's copies.
pub fn hosted_cluster_label((ns, name): &HostedKey) -> String {
    update_status_assess::naming::label_value(&format!("{ns}.{name}"))
}

/// `namespace/name`, for messages.
pub fn label((ns, name): &HostedKey) -> String {
    format!("{ns}/{name}")
}

struct Claim {
    key: HostedKey,
    /// Claimed by the annotation, not by its own name.
    annotated: bool,
}

/// Each HostedCluster's hub name, or why it has none.
pub type HubNames = BTreeMap<HostedKey, Result<String, String>>;

/// The claims by name, and the HostedClusters whose claimed name is not a valid one.
fn claims(hosted_clusters: &[Arc<HostedCluster>]) -> (BTreeMap<String, Vec<Claim>>, HubNames) {
    let mut invalid = BTreeMap::new();
    let mut by_name: BTreeMap<String, Vec<Claim>> = BTreeMap::new();
    for hc in hosted_clusters
        .iter()
        .filter(|hc| hc.metadata.deletion_timestamp.is_none())
    {
        let (Some(ns), Some(own)) = (hc.metadata.namespace.clone(), hc.metadata.name.clone())
        else {
            continue;
        };
        let annotation = hc
            .annotations()
            .get(MANAGED_CLUSTER_NAME_ANNOTATION)
            .filter(|n| !n.is_empty());
        let name = annotation.cloned().unwrap_or_else(|| own.clone());
        let key = (ns, own);
        if let Err(e) = validate_cluster_name(&name) {
            invalid.insert(key, Err(e.to_string()));
            continue;
        }
        by_name.entry(name).or_default().push(Claim {
            key,
            annotated: annotation.is_some(),
        });
    }
    (by_name, invalid)
}

/// The running holder of `name` when it still claims it.
fn running_holder<'a>(name: &str, claims: &'a [Claim], holders: &Holders) -> Option<&'a HostedKey> {
    let holder = holders.running.get(name)?;
    claims.iter().map(|c| &c.key).find(|k| *k == holder)
}

/// The names whose holder must be read from the hub before they can be given: claimed by
/// several HostedClusters, none of which runs a session under it.
pub fn needs_lookup(hosted_clusters: &[Arc<HostedCluster>], holders: &Holders) -> BTreeSet<String> {
    let (by_name, _) = claims(hosted_clusters);
    by_name
        .into_iter()
        .filter(|(name, c)| c.len() > 1 && running_holder(name, c, holders).is_none())
        .map(|(name, _)| name)
        .collect()
}

/// The hub name (managed cluster name) of every live HostedCluster, or why it has none (pure;
/// the rule is the module's). HostedClusters being deleted are left out (their sessions retire).
pub fn hub_names(hosted_clusters: &[Arc<HostedCluster>], holders: &Holders) -> HubNames {
    let (by_name, mut out) = claims(hosted_clusters);
    for (name, claims) in by_name {
        let (winner, refusal) = decide(&name, &claims, holders);
        for Claim { key, .. } in &claims {
            let result = match &winner {
                Some(w) if w == key => Ok(name.clone()),
                _ => Err(refusal.clone()),
            };
            out.insert(key.clone(), result);
        }
    }
    out
}

/// The claimant that gets `name`, if any, and what the others are told.
fn decide(name: &str, claims: &[Claim], holders: &Holders) -> (Option<HostedKey>, String) {
    let a = MANAGED_CLUSTER_NAME_ANNOTATION;
    let fix = format!(
        "if this HostedCluster is another managed cluster, set the annotation {a} to its own name; if it really is {name:?}, delete the other claimant's annotation or the other HostedCluster"
    );
    let held = |h: &HostedKey| {
        format!(
            "managed cluster name {name:?} is held by HostedCluster {}, which reports under it: a new claim never takes a name from its holder; {fix}",
            label(h)
        )
    };
    if let Some(h) = running_holder(name, claims, holders) {
        return (Some(h.clone()), held(h));
    }
    if let [only] = claims {
        return (Some(only.key.clone()), String::new());
    }
    let mut all: Vec<String> = claims.iter().map(|c| label(&c.key)).collect();
    all.sort();
    let all = all.join(", ");
    match holders.recorded.get(name) {
        None => {
            return (
                None,
                format!(
                    "managed cluster name {name:?} is claimed by HostedClusters {all}: reading who holds it on the hub first"
                ),
            );
        }
        Some(Err(e)) => {
            return (
                None,
                format!(
                    "managed cluster name {name:?} is claimed by HostedClusters {all}, and who holds it cannot be read on the hub ({e}): none of them is reported under it until it can"
                ),
            );
        }
        Some(Ok(Some(recorded))) => {
            if let Some(c) = claims
                .iter()
                .find(|c| hosted_cluster_label(&c.key) == *recorded)
            {
                return (Some(c.key.clone()), held(&c.key));
            }
        }
        Some(Ok(None)) => {}
    }
    // Nobody holds it: the annotated claim over those named so; a tie goes to none.
    let annotated = claims.iter().any(|c| c.annotated);
    let top: Vec<&Claim> = claims.iter().filter(|c| c.annotated == annotated).collect();
    if let [only] = top.as_slice() {
        let why = format!(
            "managed cluster name {name:?} is claimed by HostedCluster {} through the annotation {a}, which wins over a HostedCluster's own name while nobody reports under it; {fix}",
            label(&only.key)
        );
        return (Some(only.key.clone()), why);
    }
    let how = if annotated {
        format!("by the annotation {a}")
    } else {
        "by their own names".to_string()
    };
    let mut tied: Vec<String> = top.iter().map(|c| label(&c.key)).collect();
    tied.sort();
    (
        None,
        format!(
            "managed cluster name {name:?} is claimed by HostedClusters {} ({how}) and none holds it: none of them is reported under it until only one claims it; set the annotation {a} on each to its own managed cluster's name",
            tied.join(", ")
        ),
    )
}

/// Who the hub says holds `name`: the `update.openshift.io/hosted-cluster` label of the
/// ControlPlaneUpdateStatus copy `name` in hub namespace `name` (`None`: no copy, or no such
/// namespace).
pub async fn recorded_holder(
    client: &kube::Client,
    name: &str,
) -> Result<Option<String>, HubError> {
    let api: kube::Api<ControlPlaneUpdateStatus> = kube::Api::namespaced(client.clone(), name);
    let copy = api.get_opt(name).await.map_err(|e| HubError::Api {
        verb: "get controlplaneupdatestatuses (who holds the name)",
        namespace: name.to_string(),
        source: Box::new(e),
    })?;
    Ok(copy.and_then(|c| c.labels().get(labels::HOSTED_CLUSTER).cloned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::hosted::HostedClusterSpec;

    fn hc(ns: &str, name: &str, annotation: Option<&str>) -> Arc<HostedCluster> {
        let mut o = HostedCluster::new(name, HostedClusterSpec::default());
        o.metadata.namespace = Some(ns.into());
        if let Some(a) = annotation {
            o.metadata.annotations = Some(
                [(MANAGED_CLUSTER_NAME_ANNOTATION.to_string(), a.to_string())]
                    .into_iter()
                    .collect(),
            );
        }
        Arc::new(o)
    }

    fn key(ns: &str, name: &str) -> HostedKey {
        (ns.into(), name.into())
    }

    fn running(name: &str, k: HostedKey) -> Holders {
        Holders {
            running: [(name.to_string(), k)].into(),
            ..Holders::default()
        }
    }

    fn recorded(name: &str, r: Result<Option<String>, String>) -> Holders {
        Holders {
            recorded: [(name.to_string(), r)].into(),
            ..Holders::default()
        }
    }

    #[test]
    fn hub_names_follow_the_acm_annotation_then_the_name() {
        let names = hub_names(
            &[
                hc("clusters", "prod", None),
                hc("clusters", "dev", Some("dev-east")),
                hc("clusters", "empty", Some("")),
            ],
            &Holders::default(),
        );
        assert_eq!(names[&key("clusters", "prod")], Ok("prod".into()));
        assert_eq!(names[&key("clusters", "dev")], Ok("dev-east".into()));
        assert_eq!(names[&key("clusters", "empty")], Ok("empty".into()));
    }

    #[test]
    fn a_bad_or_shared_hub_name_is_refused_for_that_hosted_cluster_only() {
        let hcs = [
            hc("team-b", "prod", None),
            hc("team-a", "prod", None),
            hc("clusters", "x", Some("Not_A_Label")),
            hc("clusters", "y", None),
        ];
        let nobody = recorded("prod", Ok(None));
        let names = hub_names(&hcs, &nobody);
        // The same name in two namespaces, neither holding it: a tie, refused for both.
        for k in [key("team-a", "prod"), key("team-b", "prod")] {
            let tie = names[&k].as_ref().expect_err("a tie");
            assert!(
                tie.contains("claimed by HostedClusters team-a/prod, team-b/prod")
                    && tie.contains("none holds it")
                    && tie.contains(MANAGED_CLUSTER_NAME_ANNOTATION),
                "{tie}"
            );
        }
        let bad = names[&key("clusters", "x")].as_ref().expect_err("bad");
        assert!(
            bad.contains("Not_A_Label") && bad.contains("DNS-1123"),
            "{bad}"
        );
        assert_eq!(names[&key("clusters", "y")], Ok("y".into()));
        // The one holding it (a running session) keeps it against an equal claim.
        let names = hub_names(&hcs, &running("prod", key("team-b", "prod")));
        assert_eq!(names[&key("team-b", "prod")], Ok("prod".into()));
        let refused = names[&key("team-a", "prod")].as_ref().expect_err("held");
        assert!(
            refused.contains("held by HostedCluster team-b/prod, which reports under it"),
            "{refused}"
        );
    }

    #[test]
    fn hosted_clusters_being_deleted_have_no_hub_name() {
        let mut gone = (*hc("clusters", "old", None)).clone();
        gone.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        let names = hub_names(
            &[Arc::new(gone), hc("clusters", "new", None)],
            &Holders::default(),
        );
        assert_eq!(names.len(), 1);
        assert!(names.contains_key(&key("clusters", "new")));
    }

    /// Issue #48 item 1: `oc annotate hostedcluster -n tenant mine
    /// cluster.open-cluster-management.io/managedcluster-name=prod-east` against the HostedCluster
    /// `clusters/prod-east` that MCE imported under its own name (no annotation) and that
    /// reports as `prod-east`. Before, the annotation took the name at once (and after every
    /// restart); now the holder keeps it, running or recorded on the hub.
    #[test]
    fn an_annotation_never_takes_a_name_from_its_holder() {
        let hcs = [
            hc("clusters", "prod-east", None),
            hc("tenant", "mine", Some("prod-east")),
        ];
        let (victim, tenant) = (key("clusters", "prod-east"), key("tenant", "mine"));
        // Running.
        let names = hub_names(&hcs, &running("prod-east", victim.clone()));
        assert_eq!(names[&victim], Ok("prod-east".into()));
        let refused = names[&tenant].as_ref().expect_err("refused");
        assert!(
            refused.contains("held by HostedCluster clusters/prod-east, which reports under it")
                && refused.contains("never takes a name from its holder"),
            "{refused}"
        );
        // After a restart: no session, but the hub's copies carry the victim's label.
        assert_eq!(
            needs_lookup(&hcs, &Holders::default()),
            ["prod-east".to_string()].into()
        );
        let names = hub_names(
            &hcs,
            &recorded("prod-east", Ok(Some(hosted_cluster_label(&victim)))),
        );
        assert_eq!(names[&victim], Ok("prod-east".into()));
        let refused = names[&tenant].as_ref().expect_err("refused");
        assert!(
            refused.contains("held by HostedCluster clusters/prod-east, which reports under it"),
            "the same words as while it runs (one warning and one Event per refusal): {refused}"
        );
        // Not read yet, or unreadable: nobody gets it meanwhile.
        for holders in [
            Holders::default(),
            recorded("prod-east", Err("connection refused".into())),
        ] {
            let names = hub_names(&hcs, &holders);
            assert!(
                names[&victim].is_err() && names[&tenant].is_err(),
                "{names:?}"
            );
        }
        assert!(
            needs_lookup(&hcs, &running("prod-east", victim.clone())).is_empty(),
            "a running holder needs no look-up"
        );
    }

    /// Issue #38: a tenant's HostedCluster `tenant/prod-east` (no annotation) against the
    /// cluster imported as `prod-east` (the annotation on `clusters/hc-1`). The holder wins,
    /// whichever it is; with nobody holding the name the annotated claim does.
    #[test]
    fn a_hosted_cluster_named_so_never_takes_the_name_of_an_imported_one() {
        let hcs = [
            hc("tenant", "prod-east", None),
            hc("clusters", "hc-1", Some("prod-east")),
        ];
        let victim = key("clusters", "hc-1");
        let tenant = key("tenant", "prod-east");
        for holders in [
            recorded("prod-east", Ok(None)),
            running("prod-east", victim.clone()),
            recorded("prod-east", Ok(Some(hosted_cluster_label(&victim)))),
            // A stale record of a HostedCluster that claims it no more.
            recorded("prod-east", Ok(Some("clusters.gone".into()))),
        ] {
            let names = hub_names(&hcs, &holders);
            assert_eq!(names[&victim], Ok("prod-east".into()), "{holders:?}");
            assert!(names[&tenant].is_err(), "{holders:?}");
        }
        let names = hub_names(&hcs, &recorded("prod-east", Ok(None)));
        let refused = names[&tenant].as_ref().expect_err("refused");
        assert!(
            refused.contains("claimed by HostedCluster clusters/hc-1 through the annotation"),
            "{refused}"
        );
    }

    #[test]
    fn two_annotations_claiming_one_name_are_a_tie_unless_one_holds_it() {
        let hcs = [
            hc("team-z", "old", Some("prod")),
            hc("team-a", "new", Some("prod")),
            hc("clusters", "prod", None),
        ];
        let names = hub_names(&hcs, &running("prod", key("team-z", "old")));
        assert_eq!(names[&key("team-z", "old")], Ok("prod".into()));
        assert!(names[&key("team-a", "new")].is_err());
        assert!(names[&key("clusters", "prod")].is_err());
        // After a restart, the hub says who: the holder keeps it.
        let names = hub_names(
            &hcs,
            &recorded(
                "prod",
                Ok(Some(hosted_cluster_label(&key("team-z", "old")))),
            ),
        );
        assert_eq!(names[&key("team-z", "old")], Ok("prod".into()));
        // Nothing on the hub either: nothing tells them apart (age is no proof of identity).
        let names = hub_names(&hcs, &recorded("prod", Ok(None)));
        for k in [
            key("team-z", "old"),
            key("team-a", "new"),
            key("clusters", "prod"),
        ] {
            let tie = names[&k].as_ref().expect_err("a tie");
            assert!(
                tie.contains("claimed by HostedClusters team-a/new, team-z/old (by the annotation"),
                "{tie}"
            );
        }
    }

    #[test]
    fn the_hosted_cluster_label_is_a_valid_label_value() {
        assert_eq!(
            hosted_cluster_label(&key("clusters", "prod")),
            "clusters.prod"
        );
        let long = hosted_cluster_label(&key(&"n".repeat(60), &"h".repeat(60)));
        assert!(long.len() <= 63, "{long}");
    }
}
