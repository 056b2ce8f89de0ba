//! Hosted inputs the watches cannot decode (a field of an unexpected type, a CRD version skew):
//! as standalone, each becomes an "unreadable input" health insight
//! ([`crate::insight::unreadable_input_insight`]) and every other object is still read. Hosted
//! mode writes it into the namespace of the HostedCluster it concerns, labelled and named like
//! that cluster's other insights, so `-l update.openshift.io/cluster=<name>` finds it.
//!
//! Which HostedCluster an unreadable object concerns ([`concerns`]): a HostedCluster itself; a
//! NodePool of its namespace owned by it (HyperShift sets that owner reference), or, without a
//! HostedCluster owner, every HostedCluster of the namespace (its `spec.clusterName` cannot be
//! read); a Machine, MachineSet or MachineDeployment of its control-plane namespace.

use jiff::Timestamp;
use update_status_api::crd::{UpdateInsightStatus, limits};
use update_status_api::hosted::{HostedCluster, control_plane_namespace};

use super::desired::DesiredHosted;
use crate::compose::{Desired, ExistingInsights, keep_started_at, owner_of};
use crate::format::ellipsize;
use crate::insight::{UnreadableInput, unreadable_input_insight};

/// Whether the unreadable `u` concerns the HostedCluster `namespace/name` (see the module).
pub fn concerns(u: &UnreadableInput, namespace: &str, name: &str) -> bool {
    let ns = u.place.namespace.as_deref().unwrap_or_default();
    match u.kind.as_str() {
        "HostedCluster" => ns == namespace && u.name == name,
        "NodePool" => {
            let mut clusters = u
                .place
                .owners
                .iter()
                .filter(|(k, _)| k == "HostedCluster")
                .peekable();
            ns == namespace && (clusters.peek().is_none() || clusters.any(|(_, n)| n == name))
        }
        _ => ns == control_plane_namespace(namespace, name),
    }
}

/// The health insights of the unreadable inputs concerning `hc` (see [`concerns`]), in its
/// namespace, owned by it, named and labelled like its other insights, keeping their first
/// `startedAt` (`now` when first seen).
pub fn unreadable_insights(
    hc: &HostedCluster,
    unreadable: &[UnreadableInput],
    existing: &ExistingInsights,
    now: Timestamp,
) -> Vec<Desired<UpdateInsightStatus>> {
    let (ns, name) = (hc.namespace(), hc.name());
    insights_of(
        hc,
        unreadable.iter().filter(|u| concerns(u, ns, name)),
        existing,
        now,
        false,
    )
}

/// The health insights of the objects inside the hosted cluster `hc` that cannot be decoded
/// (its ClusterOperators and Nodes read with `--hosted-kubeconfig-access`): as
/// [`unreadable_insights`], saying that the object is inside the hosted cluster, so the command
/// to look at it needs the hosted cluster's kubeconfig.
pub fn guest_unreadable_insights(
    hc: &HostedCluster,
    guest: &[UnreadableInput],
    existing: &ExistingInsights,
    now: Timestamp,
) -> Vec<Desired<UpdateInsightStatus>> {
    insights_of(hc, guest.iter(), existing, now, true)
}

/// The insights of `inputs` as insights of `hc`; `inside`: the objects are inside the hosted
/// cluster (the texts say so).
fn insights_of<'a>(
    hc: &HostedCluster,
    inputs: impl Iterator<Item = &'a UnreadableInput>,
    existing: &ExistingInsights,
    now: Timestamp,
    inside: bool,
) -> Vec<Desired<UpdateInsightStatus>> {
    let base = super::objects::hosted_labels(hc);
    let owner = owner_of(hc);
    let (ns, name) = (hc.namespace(), hc.name());
    let mut out: Vec<_> = inputs
        .filter_map(|u| {
            let mut s = unreadable_input_insight(u, Some(now))?;
            if let Some(h) = s.health.as_mut().filter(|_| inside) {
                h.impact.summary = ellipsize(
                    &format!("{} (in hosted cluster {ns}/{name})", h.impact.summary),
                    limits::SUMMARY,
                );
                h.impact.description = ellipsize(
                    &format!(
                        "{} The {} is inside hosted cluster {ns}/{name}: run the command with \
                         its admin kubeconfig (the Secret named in the HostedCluster's \
                         status.kubeconfig).",
                        h.impact.description, u.kind
                    ),
                    limits::DESCRIPTION,
                );
            }
            Some(super::objects::insight(s, hc, &base, owner.clone()))
        })
        .collect();
    keep_started_at(&mut out, existing);
    out
}

/// A HostedCluster standing in for the unreadable one `u` (its name, namespace and uid only).
pub fn stand_in(u: &UnreadableInput) -> HostedCluster {
    let mut hc = HostedCluster::default();
    hc.metadata.name = Some(u.name.clone());
    hc.metadata.namespace = u.place.namespace.clone();
    hc.metadata.uid = u.place.uid.clone();
    hc
}

/// What hosted mode wants for a HostedCluster that cannot be read (`u`, kind HostedCluster):
/// the insights of its unreadable inputs only (its own among them). Its status objects are not
/// wanted: nothing about its update can be known.
pub fn desired_unreadable(
    u: &UnreadableInput,
    unreadable: &[UnreadableInput],
    existing: &ExistingInsights,
    now: Timestamp,
) -> DesiredHosted {
    let mut out = DesiredHosted::default();
    out.cluster.insights = unreadable_insights(&stand_in(u), unreadable, existing, now);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insight::InputPlace;
    use update_status_api::crd::{ScopeType, labels};

    fn bad(kind: &str, ns: &str, name: &str, owners: &[(&str, &str)]) -> UnreadableInput {
        UnreadableInput {
            group: if kind == "NodePool" || kind == "HostedCluster" {
                "hypershift.openshift.io".into()
            } else {
                "cluster.x-k8s.io".into()
            },
            kind: kind.into(),
            name: name.into(),
            place: Box::new(InputPlace {
                namespace: Some(ns.into()),
                uid: Some(format!("uid-{name}")),
                owners: owners
                    .iter()
                    .map(|(k, n)| (k.to_string(), n.to_string()))
                    .collect(),
            }),
            problem: "spec.replicas: invalid value: integer `3000000000`, expected i32".into(),
        }
    }

    /// HostedCluster `clusters/a`.
    fn cluster_a() -> HostedCluster {
        let mut a = HostedCluster::default();
        a.metadata.name = Some("a".into());
        a.metadata.namespace = Some("clusters".into());
        a.metadata.uid = Some("uid-a".into());
        a
    }

    fn now() -> Timestamp {
        "2026-01-01T10:00:00Z".parse().expect("time")
    }

    #[test]
    fn each_unreadable_input_goes_to_the_hosted_cluster_it_concerns() {
        let owned = bad("NodePool", "clusters", "np-a", &[("HostedCluster", "a")]);
        let orphan = bad("NodePool", "clusters", "np-x", &[]);
        let elsewhere = bad("NodePool", "other", "np-o", &[]);
        let machine = bad("Machine", "clusters-a-b", "m-1", &[]);
        let hc = bad("HostedCluster", "clusters", "a.b", &[]);
        assert!(concerns(&owned, "clusters", "a"));
        assert!(!concerns(&owned, "clusters", "c"), "owned by another");
        assert!(concerns(&orphan, "clusters", "a") && concerns(&orphan, "clusters", "c"));
        assert!(!concerns(&elsewhere, "clusters", "a"));
        assert!(concerns(&machine, "clusters", "a.b"), "dots become dashes");
        assert!(!concerns(&machine, "clusters", "a"));
        assert!(concerns(&hc, "clusters", "a.b") && !concerns(&hc, "other", "a.b"));
    }

    #[test]
    fn an_unreadable_node_pool_is_a_labelled_insight_of_its_cluster() {
        let a = cluster_a();
        let all = [
            bad("NodePool", "clusters", "np-a", &[("HostedCluster", "a")]),
            bad("NodePool", "clusters", "np-c", &[("HostedCluster", "c")]),
        ];
        let got = unreadable_insights(&a, &all, &ExistingInsights::default(), now());
        assert_eq!(got.len(), 1);
        let d = &got[0];
        assert!(d.name.starts_with("a-"), "{}", d.name);
        assert_eq!(d.labels.get(labels::CLUSTER).map(String::as_str), Some("a"));
        assert_eq!(d.owner.as_ref().map(|o| o.uid.as_str()), Some("uid-a"));
        let h = d.status.health.as_ref().expect("health");
        assert_eq!(
            h.impact.summary,
            "NodePool np-a cannot be read: spec.replicas: invalid value: integer `3000000000`, expected i32"
        );
        assert!(
            h.impact
                .description
                .contains("oc get nodepool np-a -n clusters -o yaml")
        );
        assert_eq!(d.status.resource.namespace.as_deref(), Some("clusters"));
        assert_eq!(d.status.scope.type_, ScopeType::WorkerPool);
        assert_eq!(d.status.scope.pool.as_deref(), Some("np-a"));
        assert_eq!(h.started_at, Some(now()));
    }

    #[test]
    fn an_unreadable_hosted_cluster_gets_only_its_insight_owned_by_it() {
        let u = bad("HostedCluster", "clusters", "b", &[]);
        let np = bad("NodePool", "clusters", "np-b", &[("HostedCluster", "b")]);
        let got = desired_unreadable(&u, &[u.clone(), np], &ExistingInsights::default(), now());
        assert!(got.cluster.control_plane.is_none() && got.cluster.worker_pools.is_empty());
        assert_eq!(got.cluster.insights.len(), 2);
        let own = &got.cluster.insights[0];
        assert_eq!(own.status.scope.type_, ScopeType::ControlPlane);
        assert_eq!(own.status.resource.kind, "HostedCluster");
        assert_eq!(own.owner.as_ref().map(|o| o.uid.as_str()), Some("uid-b"));
        assert_eq!(
            own.labels.get(labels::CLUSTER).map(String::as_str),
            Some("b")
        );
    }

    #[test]
    fn an_unreadable_object_inside_the_hosted_cluster_says_where_it_is() {
        let a = cluster_a();
        let co = UnreadableInput {
            group: "config.openshift.io".into(),
            kind: "ClusterOperator".into(),
            name: "dns".into(),
            place: Box::default(),
            problem: "status.conditions: invalid type: string \"x\", expected a sequence".into(),
        };
        let got = guest_unreadable_insights(&a, &[co], &ExistingInsights::default(), now());
        assert_eq!(
            got.len(),
            1,
            "no namespace filter: it is inside the hosted cluster"
        );
        let d = &got[0];
        assert_eq!(d.labels.get(labels::CLUSTER).map(String::as_str), Some("a"));
        assert_eq!(d.owner.as_ref().map(|o| o.uid.as_str()), Some("uid-a"));
        assert_eq!(d.status.scope.type_, ScopeType::ControlPlane);
        let h = d.status.health.as_ref().expect("health");
        assert_eq!(
            h.impact.summary,
            "ClusterOperator dns cannot be read: status.conditions: invalid type: string \"x\", expected a sequence (in hosted cluster clusters/a)"
        );
        assert!(
            h.impact
                .description
                .contains("oc get clusteroperator dns -o yaml")
                && h.impact
                    .description
                    .contains("inside hosted cluster clusters/a")
                && h.impact.description.contains("status.kubeconfig"),
            "{}",
            h.impact.description
        );
        let long = UnreadableInput {
            name: "n".repeat(300),
            ..got_input()
        };
        let got = guest_unreadable_insights(&a, &[long], &ExistingInsights::default(), now());
        let h = got[0].status.health.as_ref().expect("health");
        assert!(
            h.impact.summary.chars().count() <= limits::SUMMARY,
            "cut to the CRD's limit"
        );
    }

    fn got_input() -> UnreadableInput {
        UnreadableInput {
            group: String::new(),
            kind: "Node".into(),
            name: "w".into(),
            place: Box::default(),
            problem: "p".into(),
        }
    }
}
