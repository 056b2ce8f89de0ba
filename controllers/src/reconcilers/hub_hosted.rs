//! On the fleet hub (`--mode=hub`): what hosted mode needs on the hub for each hosted cluster
//! (issue #47 item 7), so that hosted clusters under ACM report with no hand work.
//!
//! ACM imports a HyperShift hosted cluster as a ManagedCluster of its own, annotated
//! `import.open-cluster-management.io/klusterlet-deploy-mode: Hosted` and
//! `import.open-cluster-management.io/hosting-cluster-name: <hosting cluster>`. Its update is
//! reported by hosted mode on that hosting cluster, delivered there by the second template add-on
//! `update-status-hosted` (`config/acm/hosted`), whose agent has one hub identity (group
//! `system:open-cluster-management:cluster:<hosting>:addon:update-status-hosted`) that OCM binds
//! in the hosting cluster's own namespace only. For each hosted ManagedCluster whose hosting
//! cluster has that add-on (its ManagedClusterAddOn `update-status-hosted`), this reconciler keeps,
//! in the hosted cluster's hub namespace:
//!
//! - the RoleBinding `update-status-hosted` of the agents' hub ClusterRole
//!   (`open-cluster-management:update-status:agent`) to that group: the hosting cluster's agent may
//!   write that hosted cluster's copies, and no other cluster's;
//! - the ResourceQuota `update-status` of [`crate::reconcilers::hub_quota`] (the admission policy
//!   refuses an agent's writes where it is missing), with the flags' limits or the hosted
//!   ManagedCluster's annotations `update.openshift.io/hub-quota-<plural>`;
//!
//! both owned by the hosted ManagedCluster (detached, they go with it) and labelled
//! `update.openshift.io/reconciler=hub-hosted`. Once the hosting cluster loses the add-on, or the
//! annotations name another hosting cluster (or none), they are deleted or rewritten at once: the
//! former hosting cluster's agent can no longer write there. A namespace with a ManagedClusterAddOn
//! `update-status` of its own is left to the hub quota reconciler (a cluster reporting as a
//! standalone agent). Written only when they differ from the cached objects.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::{ResourceQuota, ResourceQuotaSpec};
use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{DeleteParams, PatchParams};
use kube::runtime::reflector::Store;
use kube::{Api, Resource, ResourceExt};
use update_status_api::acm::{
    ADDON_NAME, HOSTED_ADDON_NAME, HOSTING_CLUSTER_ANNOTATION, HUB_AGENT_CLUSTER_ROLE,
    KLUSTERLET_DEPLOY_MODE_ANNOTATION, ManagedCluster, ManagedClusterAddOn,
};
use update_status_api::crd::labels;

use super::backoffs::Backoffs;
use super::hub_quota::{QUOTA_NAME, QuotaLimits, up_to_date};
use crate::metrics::Metrics;
use crate::reconcilers::context::Context;
use crate::runtime::runner::{Reconcile, Requeue};
use crate::runtime::writer::{Direct, WriteError, error_reason, field_manager};

/// Reconciler name (field manager `update-status-controller/hub-hosted`, the objects' label
/// `update.openshift.io/reconciler`, metrics label).
pub const NAME: &str = "hub-hosted";
/// The RoleBinding in each hosted cluster's namespace.
pub const BINDING_NAME: &str = "update-status-hosted";
/// The value of [`KLUSTERLET_DEPLOY_MODE_ANNOTATION`] of a cluster imported in hosted mode.
pub const HOSTED_MODE: &str = "Hosted";
/// Longest wait before writing a namespace's objects again after failures.
const RETRY_CAP: Duration = Duration::from_secs(300);

/// The hub group of the `update-status-hosted` agents of cluster `hosting` (OCM's
/// `system:open-cluster-management:cluster:<cluster>:addon:<addon>`).
pub fn agent_group(hosting: &str) -> String {
    format!("system:open-cluster-management:cluster:{hosting}:addon:{HOSTED_ADDON_NAME}")
}

/// The hosting cluster of `mc` if it is a cluster imported in hosted mode; `Err` when the
/// annotations say hosted but cannot be used (no hosting cluster, not a DNS label, itself).
pub fn hosting_cluster(mc: &ManagedCluster) -> Option<Result<&str, String>> {
    let a = mc.annotations();
    let hosted = a
        .get(KLUSTERLET_DEPLOY_MODE_ANNOTATION)
        .is_some_and(|m| m.eq_ignore_ascii_case(HOSTED_MODE));
    if !hosted {
        return None;
    }
    let name = mc.name_any();
    Some(match a.get(HOSTING_CLUSTER_ANNOTATION).map(|h| h.trim()) {
        None | Some("") => Err(format!("no annotation {HOSTING_CLUSTER_ANNOTATION}")),
        Some(h) if h == name => Err(format!(
            "{HOSTING_CLUSTER_ANNOTATION} names the cluster itself"
        )),
        Some(h) if !is_cluster_name(h) => Err(format!(
            "{HOSTING_CLUSTER_ANNOTATION} {:?} is not a cluster name",
            h.chars().take(64).collect::<String>()
        )),
        Some(h) => Ok(h),
    })
}

/// A DNS-1123 label, as a managed cluster's name (and its hub namespace) is.
fn is_cluster_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// What one hosted cluster's namespace holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Desired {
    /// The hosted cluster's hub namespace (its name).
    pub namespace: String,
    /// The cluster hosting it.
    pub hosting: String,
    /// Its ResourceQuota.
    pub quota: ResourceQuota,
    /// Its RoleBinding.
    pub binding: RoleBinding,
}

fn our_labels() -> BTreeMap<String, String> {
    [
        (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
        (labels::RECONCILER, NAME),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn owned_meta(name: &str, mc: &ManagedCluster, uid: String) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: Some(mc.name_any()),
        labels: Some(our_labels()),
        owner_references: Some(vec![OwnerReference {
            api_version: ManagedCluster::api_version(&()).to_string(),
            kind: ManagedCluster::kind(&()).to_string(),
            name: mc.name_any(),
            uid,
            controller: Some(true),
            block_owner_deletion: None,
        }]),
        ..ObjectMeta::default()
    }
}

/// The objects of each hosted cluster whose hosting cluster has the hosted add-on (`hosting`:
/// the namespaces with a live ManagedClusterAddOn `update-status-hosted`), but of those whose
/// namespace has an add-on `update-status` of its own (`standalone`); and, by cluster, why a
/// cluster annotated as hosted is left out (pure).
pub fn desired(
    clusters: &[Arc<ManagedCluster>],
    hosting: &BTreeSet<String>,
    standalone: &BTreeSet<String>,
    limits: QuotaLimits,
) -> (Vec<Desired>, BTreeMap<String, String>) {
    let mut out = Vec::new();
    let mut problems = BTreeMap::new();
    for mc in clusters {
        let name = mc.name_any();
        if mc.metadata.deletion_timestamp.is_some() || standalone.contains(&name) {
            continue;
        }
        let Some(uid) = mc.uid() else { continue };
        let host = match hosting_cluster(mc) {
            None => continue,
            Some(Err(e)) => {
                problems.insert(name, e);
                continue;
            }
            Some(Ok(h)) => h.to_string(),
        };
        if !hosting.contains(&host) {
            continue;
        }
        let (limits, bad) = limits.with_overrides(mc.annotations());
        if !bad.is_empty() {
            problems.insert(name.clone(), bad.join("; "));
        }
        let quota = ResourceQuota {
            metadata: owned_meta(QUOTA_NAME, mc, uid.clone()),
            spec: Some(ResourceQuotaSpec {
                hard: Some(limits.hard()),
                ..ResourceQuotaSpec::default()
            }),
            status: None,
        };
        let binding = RoleBinding {
            metadata: owned_meta(BINDING_NAME, mc, uid),
            role_ref: RoleRef {
                api_group: Some("rbac.authorization.k8s.io".into()),
                kind: "ClusterRole".into(),
                name: HUB_AGENT_CLUSTER_ROLE.into(),
            },
            subjects: Some(vec![Subject {
                api_group: Some("rbac.authorization.k8s.io".into()),
                kind: "Group".into(),
                name: agent_group(&host),
                namespace: None,
            }]),
        };
        out.push(Desired {
            namespace: name,
            hosting: host,
            quota,
            binding,
        });
    }
    (out, problems)
}

/// Whether the cached RoleBinding already is `desired` (labels, owner, role, subjects).
pub fn binding_up_to_date(cached: &RoleBinding, desired: &RoleBinding) -> bool {
    let labels_ok = desired
        .labels()
        .iter()
        .all(|(k, v)| cached.labels().get(k) == Some(v));
    let owners = |b: &RoleBinding| {
        b.owner_references()
            .iter()
            .map(|o| o.uid.clone())
            .collect::<Vec<_>>()
    };
    labels_ok
        && owners(cached) == owners(desired)
        && cached.role_ref == desired.role_ref
        && cached.subjects == desired.subjects
}

/// The reconciler (see the module documentation).
pub struct HubHostedReconciler {
    client: kube::Client,
    caches: HostedCaches,
    limits: QuotaLimits,
    metrics: Arc<Metrics>,
    failures: Backoffs,
    /// Clusters whose annotations were warned about, with the problem.
    warned: BTreeMap<String, String>,
}

/// What the reconciler reads.
pub struct HostedCaches {
    /// The ManagedClusters (their annotations).
    pub clusters: Store<ManagedCluster>,
    /// The ManagedClusterAddOns `update-status`.
    pub addons: Store<ManagedClusterAddOn>,
    /// The ManagedClusterAddOns `update-status-hosted`.
    pub hosted_addons: Store<ManagedClusterAddOn>,
    /// Our ResourceQuotas (label reconciler=hub-hosted).
    pub quotas: Store<ResourceQuota>,
    /// Our RoleBindings (label reconciler=hub-hosted).
    pub bindings: Store<RoleBinding>,
}

fn live_namespaces(store: &Store<ManagedClusterAddOn>, name: &str) -> BTreeSet<String> {
    store
        .state()
        .iter()
        .filter(|a| a.name_any() == name && a.metadata.deletion_timestamp.is_none())
        .filter_map(|a| a.namespace())
        .collect()
}

impl HubHostedReconciler {
    /// A reconciler writing through the context's client, reading its caches (each object goes
    /// to its cluster's namespace: the context's is not used), `limits` by default.
    pub fn new(ctx: Context<HostedCaches>, limits: QuotaLimits) -> Self {
        HubHostedReconciler {
            client: ctx.client,
            caches: ctx.caches,
            limits,
            metrics: ctx.metrics,
            failures: Backoffs::new(RETRY_CAP),
            warned: BTreeMap::new(),
        }
    }

    fn warn_problems(&mut self, problems: BTreeMap<String, String>) {
        for (cluster, problem) in &problems {
            if self.warned.get(cluster) != Some(problem) {
                tracing::warn!(
                    cluster,
                    problem,
                    "hosted ManagedCluster: its annotations cannot all be used (docs/acm.md, \"Hosted control planes under ACM\")"
                );
            }
        }
        self.warned = problems;
    }

    async fn apply<K>(&self, obj: &K, namespace: &str, name: &str) -> Result<(), WriteError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + serde::Serialize
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        let mut body = serde_json::to_value(obj).map_err(|source| WriteError::Serialize {
            name: format!("{namespace}/{name}"),
            source,
        })?;
        body["apiVersion"] = K::api_version(&()).into();
        body["kind"] = K::kind(&()).into();
        if let Some(m) = body["metadata"].as_object_mut() {
            m.remove("managedFields");
        }
        let params = PatchParams::apply(&field_manager(NAME)).force();
        let kind = K::kind(&());
        let direct = Direct {
            kind: &kind,
            namespace,
            name,
            metrics: &self.metrics,
        };
        direct.apply(&api, &params, &body).await
    }

    async fn delete<K>(&self, namespace: &str, name: &str) -> Result<(), WriteError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        let kind = K::kind(&());
        let direct = Direct {
            kind: &kind,
            namespace,
            name,
            metrics: &self.metrics,
        };
        direct
            .delete(&api, &DeleteParams::default())
            .await
            .map(drop)
    }

    /// Writes what differs of one namespace's objects.
    async fn sync_one(&self, d: &Desired) -> Result<bool, WriteError> {
        let quota_ok = self.caches.quotas.state().iter().any(|q| {
            q.namespace().as_deref() == Some(d.namespace.as_str())
                && q.name_any() == QUOTA_NAME
                && up_to_date(q, &d.quota)
        });
        let binding_ok = self.caches.bindings.state().iter().any(|b| {
            b.namespace().as_deref() == Some(d.namespace.as_str())
                && b.name_any() == BINDING_NAME
                && binding_up_to_date(b, &d.binding)
        });
        if !quota_ok {
            self.apply(&d.quota, &d.namespace, QUOTA_NAME).await?;
        }
        if !binding_ok {
            self.apply(&d.binding, &d.namespace, BINDING_NAME).await?;
        }
        Ok(!quota_ok || !binding_ok)
    }

    /// Deletes our objects of the namespaces not in `wanted`.
    async fn delete_stale(&self, wanted: &BTreeSet<&str>) -> Result<(), WriteError> {
        for q in self.caches.quotas.state() {
            let ns = q.namespace().unwrap_or_default();
            if !wanted.contains(ns.as_str()) && q.name_any() == QUOTA_NAME {
                self.delete::<ResourceQuota>(&ns, QUOTA_NAME).await?;
                tracing::info!(
                    namespace = %ns,
                    "hosted cluster's hub quota deleted: no hosting cluster with the hosted add-on"
                );
            }
        }
        for b in self.caches.bindings.state() {
            let ns = b.namespace().unwrap_or_default();
            if !wanted.contains(ns.as_str()) && b.name_any() == BINDING_NAME {
                self.delete::<RoleBinding>(&ns, BINDING_NAME).await?;
                tracing::info!(
                    namespace = %ns,
                    "hosted cluster's hub binding deleted: no hosting cluster with the hosted add-on"
                );
            }
        }
        Ok(())
    }

    fn failed(&mut self, namespace: &str, e: &WriteError, now: Instant) {
        let reason = match e {
            WriteError::Api { source, .. } => error_reason(source),
            _ => "other",
        };
        self.metrics.writes.error("RoleBinding", reason);
        let (wait, first) = self.failures.failed(namespace, reason, now);
        if first {
            tracing::warn!(namespace, reason, error = %e, retry_in_s = wait.as_secs_f64(), "writing a hosted cluster's hub quota or binding failed; retrying with back-off (its hosting cluster's agent cannot write its copies until then)");
        }
    }
}

impl Reconcile for HubHostedReconciler {
    const NAME: &'static str = NAME;

    async fn reconcile(&mut self, _now: Timestamp) -> Result<Requeue, WriteError> {
        let hosting = live_namespaces(&self.caches.hosted_addons, HOSTED_ADDON_NAME);
        let standalone = live_namespaces(&self.caches.addons, ADDON_NAME);
        let mut clusters = self.caches.clusters.state();
        clusters.sort_by_key(|c| c.name_any());
        let (wanted, problems) = desired(&clusters, &hosting, &standalone, self.limits);
        self.warn_problems(problems);
        let now = Instant::now();
        for d in &wanted {
            if self.failures.waiting(&d.namespace, now) {
                continue;
            }
            match self.sync_one(d).await {
                Ok(wrote) => {
                    if self.failures.clear(&d.namespace) || wrote {
                        tracing::info!(
                            namespace = %d.namespace,
                            hosting = %d.hosting,
                            "hosted cluster's hub quota and binding written: {}'s update-status-hosted agent reports it",
                            d.hosting
                        );
                    }
                }
                Err(e) => self.failed(&d.namespace, &e, now),
            }
        }
        let names: BTreeSet<&str> = wanted.iter().map(|d| d.namespace.as_str()).collect();
        self.failures.retain(|ns| names.contains(ns));
        self.delete_stale(&names).await?;
        Ok(self.failures.waits().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: QuotaLimits = QuotaLimits {
        control_planes: 2,
        worker_pools: 100,
        insights: 2000,
    };

    fn cluster(name: &str, annotations: &[(&str, &str)]) -> Arc<ManagedCluster> {
        let mut mc = ManagedCluster::new(name, Default::default());
        mc.metadata.uid = Some(format!("uid-{name}"));
        mc.metadata.annotations = Some(
            annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        Arc::new(mc)
    }

    fn hosted(name: &str, host: &str) -> Arc<ManagedCluster> {
        cluster(
            name,
            &[
                (KLUSTERLET_DEPLOY_MODE_ANNOTATION, "Hosted"),
                (HOSTING_CLUSTER_ANNOTATION, host),
            ],
        )
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_hosted_cluster_of_a_hosting_cluster_with_the_addon_gets_its_binding_and_quota() {
        let clusters = [
            hosted("hc1", "mgmt"),
            hosted("hc2", "other"),
            cluster("standalone", &[]),
        ];
        let (d, problems) = desired(&clusters, &set(&["mgmt"]), &set(&[]), LIMITS);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            d.len(),
            1,
            "only hc1: hc2's hosting cluster has no hosted add-on"
        );
        let d = &d[0];
        assert_eq!((d.namespace.as_str(), d.hosting.as_str()), ("hc1", "mgmt"));
        let subjects = d.binding.subjects.clone().unwrap_or_default();
        assert_eq!(subjects.len(), 1);
        assert_eq!(
            (subjects[0].kind.as_str(), subjects[0].name.as_str()),
            (
                "Group",
                "system:open-cluster-management:cluster:mgmt:addon:update-status-hosted"
            )
        );
        assert_eq!(d.binding.role_ref.name, HUB_AGENT_CLUSTER_ROLE);
        for meta in [&d.binding.metadata, &d.quota.metadata] {
            assert_eq!(meta.namespace.as_deref(), Some("hc1"));
            let o = &meta.owner_references.as_ref().expect("owned")[0];
            assert_eq!(
                (o.kind.as_str(), o.name.as_str(), o.uid.as_str()),
                ("ManagedCluster", "hc1", "uid-hc1")
            );
            assert_eq!(
                meta.labels
                    .as_ref()
                    .and_then(|l| l.get(labels::RECONCILER))
                    .map(String::as_str),
                Some(NAME)
            );
        }
        assert_eq!(d.quota.metadata.name.as_deref(), Some(QUOTA_NAME));
        assert_eq!(
            d.quota.spec.as_ref().and_then(|s| s.hard.clone()),
            Some(LIMITS.hard())
        );
    }

    #[test]
    fn clusters_that_cannot_be_served_are_left_out_and_said_why() {
        let mut annotated = (*hosted("hc1", "mgmt")).clone();
        annotated
            .metadata
            .annotations
            .get_or_insert_default()
            .insert(
                "update.openshift.io/hub-quota-updateinsights".into(),
                "7000".into(),
            );
        let clusters = [
            Arc::new(annotated),
            cluster("nohost", &[(KLUSTERLET_DEPLOY_MODE_ANNOTATION, "Hosted")]),
            hosted("self", "self"),
            hosted("bad", "Not A Name"),
            hosted("own-addon", "mgmt"),
            cluster(
                "default-mode",
                &[
                    (KLUSTERLET_DEPLOY_MODE_ANNOTATION, "Default"),
                    (HOSTING_CLUSTER_ANNOTATION, "mgmt"),
                ],
            ),
        ];
        let (d, problems) = desired(
            &clusters,
            &set(&["mgmt", "self"]),
            &set(&["own-addon"]),
            LIMITS,
        );
        assert_eq!(
            d.iter().map(|d| d.namespace.as_str()).collect::<Vec<_>>(),
            ["hc1"]
        );
        let hard = d[0]
            .quota
            .spec
            .as_ref()
            .and_then(|s| s.hard.clone())
            .unwrap_or_default();
        assert_eq!(
            hard.get("count/updateinsights.update.openshift.io")
                .map(|q| q.0.as_str()),
            Some("7000"),
            "the ManagedCluster's override"
        );
        assert_eq!(
            problems.keys().collect::<Vec<_>>(),
            ["bad", "nohost", "self"]
        );
        assert!(
            problems["bad"].contains("is not a cluster name"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_binding_to_another_hosting_cluster_is_rewritten() {
        let (d, _) = desired(&[hosted("hc1", "mgmt")], &set(&["mgmt"]), &set(&[]), LIMITS);
        let desired_binding = &d[0].binding;
        assert!(binding_up_to_date(desired_binding, desired_binding));
        let (other, _) = desired(
            &[hosted("hc1", "mgmt2")],
            &set(&["mgmt2"]),
            &set(&[]),
            LIMITS,
        );
        assert!(!binding_up_to_date(&other[0].binding, desired_binding));
        let mut foreign_label = desired_binding.clone();
        foreign_label
            .metadata
            .labels
            .get_or_insert_default()
            .insert("x".into(), "y".into());
        assert!(
            binding_up_to_date(&foreign_label, desired_binding),
            "another label is left alone"
        );
    }
}
