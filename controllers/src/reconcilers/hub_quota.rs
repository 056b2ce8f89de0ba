//! On the fleet hub (`--mode=hub`): the ResourceQuota `update-status` in the namespace of every
//! cluster with the add-on enabled (a ManagedClusterAddOn `update-status` there), counting our
//! three kinds (`count/<plural>.update.openshift.io`), owned by that ManagedClusterAddOn (the
//! add-on disabled, the quota goes with it; issue #38 item 5).
//!
//! Why a controller: a policy cannot count objects and a ResourceQuota lives in one namespace,
//! but OCM creates nothing of an add-on in a cluster's hub namespace except its RoleBinding, and
//! OpenShift's ClusterResourceQuota would put every cluster in one shared budget. The admission
//! policy `update-status-hub-quota-required` (config/acm/limits) refuses the agents' writes in
//! a namespace without this quota, so a cluster's agent never writes unbounded, even before this
//! controller has run.
//!
//! The limits are the flags' (`--hub-quota-*`), or per cluster the ManagedClusterAddOn's
//! annotations `update.openshift.io/hub-quota-<plural>` (a count; anything else is warned about
//! and the flag's value used). A quota changed or deleted by hand is put back: the annotation is
//! the way to change one cluster's limits. Written only when it differs from the cached quota.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ResourceQuota, ResourceQuotaSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::PatchParams;
use kube::runtime::reflector::Store;
use kube::{Api, Resource, ResourceExt};
use update_status_api::acm::{ADDON_NAME, ManagedClusterAddOn};
use update_status_api::crd::{GROUP, labels};

use super::backoffs::Backoffs;
use crate::metrics::Metrics;
use crate::reconcilers::context::Context;
use crate::runtime::runner::{Reconcile, Requeue};
use crate::runtime::writer::{Direct, WriteError, error_reason, field_manager};

/// Reconciler name (field manager `update-status-controller/hub-quota`, metrics label).
pub const NAME: &str = "hub-quota";
/// Name of the ResourceQuota in each cluster namespace (and of the admission policy's
/// parameter: config/acm/limits/admission-policy.yaml).
pub const QUOTA_NAME: &str = "update-status";
/// Prefix of the ManagedClusterAddOn annotations that override one cluster's limits
/// (`update.openshift.io/hub-quota-updateinsights: "8000"`).
pub const OVERRIDE_PREFIX: &str = "update.openshift.io/hub-quota-";
/// The resources counted, by plural.
pub const PLURALS: [&str; 3] = [
    "controlplaneupdatestatuses",
    "workerpoolupdatestatuses",
    "updateinsights",
];
/// The most one cluster may be allowed, by the flags or its annotations (issue #48 item 11: an
/// override had no ceiling, so whoever may annotate a ManagedClusterAddOn could lift its agent's
/// bound on the hub's etcd entirely). The policy `update-status-hub-quota-writer`
/// (config/acm/limits/admission-policy.yaml) refuses a quota above them too. Sized for the
/// largest OpenShift cluster with `--hub-include-progress` (2,000 nodes: about one progress
/// insight per node and operator, plus up to 2,000 health insights: docs/acm.md): at these
/// ceilings one agent may hold at most about 680 MB of the hub's etcd (10,504 objects of at most
/// 66 KB), where the defaults allow 140 MB.
pub const CEILING: QuotaLimits = QuotaLimits {
    control_planes: 4,
    worker_pools: 500,
    insights: 10_000,
};
/// Longest wait before writing a cluster's quota again after failures.
const RETRY_CAP: Duration = Duration::from_secs(300);

/// Object counts allowed in one cluster namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuotaLimits {
    /// ControlPlaneUpdateStatus objects (an agent writes one, named after its cluster).
    pub control_planes: u64,
    /// WorkerPoolUpdateStatus objects (one per pool or NodePool).
    pub worker_pools: u64,
    /// UpdateInsights (health insights; with `--hub-include-progress`, one more per node and
    /// operator).
    pub insights: u64,
}

/// The quota's key of a plural: `count/<plural>.update.openshift.io`.
pub fn count_key(plural: &str) -> String {
    format!("count/{plural}.{GROUP}")
}

impl QuotaLimits {
    /// The limit of `plural`.
    pub fn get(&self, plural: &str) -> u64 {
        match plural {
            "controlplaneupdatestatuses" => self.control_planes,
            "workerpoolupdatestatuses" => self.worker_pools,
            _ => self.insights,
        }
    }

    fn set(&mut self, plural: &str, n: u64) {
        match plural {
            "controlplaneupdatestatuses" => self.control_planes = n,
            "workerpoolupdatestatuses" => self.worker_pools = n,
            _ => self.insights = n,
        }
    }

    /// These limits with one cluster's overrides (the ManagedClusterAddOn's annotations), and
    /// what is wrong with the overrides that could not be read or were above [`CEILING`] (the
    /// ceiling applies then).
    pub fn with_overrides(mut self, annotations: &BTreeMap<String, String>) -> (Self, Vec<String>) {
        let mut problems = Vec::new();
        for (key, value) in annotations.range(OVERRIDE_PREFIX.to_string()..) {
            let Some(plural) = key.strip_prefix(OVERRIDE_PREFIX) else {
                break;
            };
            if !PLURALS.contains(&plural) {
                problems.push(format!(
                    "annotation {key}: unknown resource {plural:?} (one of {})",
                    PLURALS.join(", ")
                ));
                continue;
            }
            match value.trim().parse::<u64>() {
                Ok(n) if n > CEILING.get(plural) => {
                    let max = CEILING.get(plural);
                    problems.push(format!(
                        "annotation {key}: {n} is above the ceiling of {max} (the hub controller's and the policy update-status-hub-quota-writer's): {max} applies"
                    ));
                    self.set(plural, max);
                }
                Ok(n) => self.set(plural, n),
                Err(_) => problems.push(format!(
                    "annotation {key}: {:?} is not a count (a whole number, e.g. \"8000\")",
                    value.chars().take(64).collect::<String>()
                )),
            }
        }
        (self, problems)
    }

    /// The quota's `spec.hard`.
    pub fn hard(&self) -> BTreeMap<String, Quantity> {
        PLURALS
            .iter()
            .map(|p| (count_key(p), Quantity(self.get(p).to_string())))
            .collect()
    }
}

/// A count as the API server writes it back (`2000` reads `2k`): plain digits, or digits with a
/// decimal SI suffix or exponent. `None`: not such a count.
pub fn parse_count(q: &str) -> Option<u64> {
    let q = q.trim();
    let digits = q.find(|c: char| !c.is_ascii_digit()).unwrap_or(q.len());
    let (n, suffix) = q.split_at(digits);
    let n: u64 = n.parse().ok()?;
    let exp: u32 = match suffix {
        "" => 0,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        s => s.strip_prefix(['e', 'E'])?.parse().ok()?,
    };
    n.checked_mul(10u64.checked_pow(exp)?)
}

/// The ResourceQuota of the namespace of `addon` (pure); `None` when the add-on has no
/// namespace or uid yet, or is being deleted.
pub fn desired_quota(addon: &ManagedClusterAddOn, limits: QuotaLimits) -> Option<ResourceQuota> {
    let meta = addon.meta();
    if meta.deletion_timestamp.is_some() {
        return None;
    }
    let (namespace, uid) = (meta.namespace.clone()?, meta.uid.clone()?);
    Some(ResourceQuota {
        metadata: ObjectMeta {
            name: Some(QUOTA_NAME.to_string()),
            namespace: Some(namespace),
            labels: Some(quota_labels()),
            owner_references: Some(vec![OwnerReference {
                api_version: ManagedClusterAddOn::api_version(&()).to_string(),
                kind: ManagedClusterAddOn::kind(&()).to_string(),
                name: addon.name_any(),
                uid,
                controller: Some(true),
                // Blocking would need permission on the add-on's finalizers, and must not hold up
                // the add-on's deletion anyway.
                block_owner_deletion: None,
            }]),
            ..ObjectMeta::default()
        },
        spec: Some(ResourceQuotaSpec {
            hard: Some(limits.hard()),
            ..ResourceQuotaSpec::default()
        }),
        status: None,
    })
}

fn quota_labels() -> BTreeMap<String, String> {
    [
        (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
        (labels::RECONCILER, NAME),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Whether the cached quota already is `desired`: its labels, owner and limits (compared as
/// numbers: the API server rewrites `2000` as `2k`). What others added (another label, a limit
/// of another resource) is left alone.
pub fn up_to_date(cached: &ResourceQuota, desired: &ResourceQuota) -> bool {
    let labels_ok = desired
        .labels()
        .iter()
        .all(|(k, v)| cached.labels().get(k) == Some(v));
    let owner = |q: &ResourceQuota| {
        q.owner_references()
            .iter()
            .map(|o| (o.uid.clone(), o.controller))
            .collect::<Vec<_>>()
    };
    let hard = |q: &ResourceQuota| {
        q.spec
            .as_ref()
            .and_then(|s| s.hard.clone())
            .unwrap_or_default()
    };
    let (have, want) = (hard(cached), hard(desired));
    let limits_ok = want
        .iter()
        .all(|(k, v)| have.get(k).and_then(|h| parse_count(&h.0)) == parse_count(&v.0));
    labels_ok && owner(cached) == owner(desired) && limits_ok
}

/// What the quota reconciler reads.
#[derive(Clone)]
pub struct QuotaCaches {
    /// The ManagedClusterAddOns `update-status`.
    pub addons: Store<ManagedClusterAddOn>,
    /// Our ResourceQuotas.
    pub quotas: Store<ResourceQuota>,
}

/// The reconciler of `--mode=hub` (see the module documentation).
pub struct HubQuotaReconciler {
    client: kube::Client,
    addons: Store<ManagedClusterAddOn>,
    quotas: Store<ResourceQuota>,
    limits: QuotaLimits,
    metrics: Arc<Metrics>,
    failures: Backoffs,
    /// Namespaces whose override problems were warned about, with the problems.
    warned: HashMap<String, Vec<String>>,
}

impl HubQuotaReconciler {
    /// A reconciler writing through the context's client, reading the add-ons and our quotas
    /// from its caches (each quota goes to its cluster's namespace: the context's is not used),
    /// `limits` by default.
    pub fn new(ctx: Context<QuotaCaches>, limits: QuotaLimits) -> Self {
        HubQuotaReconciler {
            client: ctx.client,
            addons: ctx.caches.addons,
            quotas: ctx.caches.quotas,
            limits,
            metrics: ctx.metrics,
            failures: Backoffs::new(RETRY_CAP),
            warned: HashMap::new(),
        }
    }

    /// This cluster's limits, warning once about overrides that cannot be read.
    fn limits_of(&mut self, addon: &ManagedClusterAddOn, namespace: &str) -> QuotaLimits {
        let (limits, problems) = self.limits.with_overrides(addon.annotations());
        if problems.is_empty() {
            self.warned.remove(namespace);
        } else if self.warned.get(namespace) != Some(&problems) {
            tracing::warn!(
                namespace,
                addon = %addon.name_any(),
                problems = %problems.join("; "),
                "ManagedClusterAddOn: override of the hub quota ignored; the default limit applies"
            );
            self.warned.insert(namespace.to_string(), problems);
        }
        limits
    }

    async fn apply(&self, quota: &ResourceQuota, namespace: &str) -> Result<(), WriteError> {
        let api: Api<ResourceQuota> = Api::namespaced(self.client.clone(), namespace);
        let mut body = quota.clone();
        body.metadata.managed_fields = None;
        let body = serde_json::json!({
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": body.metadata,
            "spec": body.spec,
        });
        let direct = Direct {
            kind: "ResourceQuota",
            namespace,
            name: QUOTA_NAME,
            metrics: &self.metrics,
        };
        let params = PatchParams::apply(&field_manager(NAME)).force();
        direct.apply(&api, &params, &body).await
    }

    /// Records the result of applying the quota of `namespace` (`limits`): counts it, and backs
    /// a failure off (warned once per reason).
    fn applied(
        &mut self,
        namespace: &str,
        limits: QuotaLimits,
        result: Result<(), WriteError>,
        now: Instant,
    ) {
        let e = match result {
            Ok(()) => {
                if self.failures.clear(namespace) {
                    tracing::info!(namespace, "hub quota written after failures");
                }
                tracing::info!(
                    namespace,
                    control_planes = limits.control_planes,
                    worker_pools = limits.worker_pools,
                    insights = limits.insights,
                    "hub quota {QUOTA_NAME} written"
                );
                return;
            }
            Err(e) => e,
        };
        let reason = match &e {
            WriteError::Api { source, .. } => error_reason(source),
            _ => "other",
        };
        self.metrics.writes.error("ResourceQuota", reason);
        let (wait, first) = self.failures.failed(namespace, reason, now);
        if first {
            tracing::warn!(namespace, reason, error = %e, retry_in_s = wait.as_secs_f64(), "writing the hub quota failed; retrying with back-off (the add-on's agent cannot write its copies there until it exists)");
        }
    }
}

impl Reconcile for HubQuotaReconciler {
    const NAME: &'static str = NAME;

    async fn reconcile(&mut self, _now: Timestamp) -> Result<Requeue, WriteError> {
        let cached: HashMap<String, Arc<ResourceQuota>> = self
            .quotas
            .state()
            .into_iter()
            .filter(|q| q.name_any() == QUOTA_NAME)
            .filter_map(|q| Some((q.namespace()?, q)))
            .collect();
        let mut addons = self.addons.state();
        addons.retain(|a| a.name_any() == ADDON_NAME);
        addons.sort_by_key(|a| a.namespace());
        let now = Instant::now();
        let mut wanted = Vec::new();
        for addon in &addons {
            let Some(namespace) = addon.namespace() else {
                continue;
            };
            let limits = self.limits_of(addon, &namespace);
            let Some(desired) = desired_quota(addon, limits) else {
                continue;
            };
            wanted.push(namespace.clone());
            if cached
                .get(&namespace)
                .is_some_and(|c| up_to_date(c, &desired))
            {
                self.failures.clear(&namespace);
                continue;
            }
            if self.failures.waiting(&namespace, now) {
                continue;
            }
            let result = self.apply(&desired, &namespace).await;
            self.applied(&namespace, limits, result, now);
        }
        self.failures.retain(|ns| wanted.iter().any(|w| w == ns));
        self.warned.retain(|ns, _| wanted.contains(ns));
        Ok(self.failures.waits().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: QuotaLimits = QuotaLimits {
        control_planes: 2,
        worker_pools: 100,
        insights: 2000,
    };

    fn addon(ns: &str, annotations: &[(&str, &str)]) -> ManagedClusterAddOn {
        let mut a = ManagedClusterAddOn::new(ADDON_NAME, Default::default());
        a.metadata.namespace = Some(ns.into());
        a.metadata.uid = Some(format!("uid-{ns}"));
        a.metadata.annotations = Some(
            annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        a
    }

    #[test]
    fn the_quota_counts_our_three_kinds_and_is_owned_by_the_addon() {
        let q = desired_quota(&addon("cluster1", &[]), DEFAULTS).expect("a quota");
        assert_eq!(q.name_any(), QUOTA_NAME);
        assert_eq!(q.namespace().as_deref(), Some("cluster1"));
        let hard = q.spec.as_ref().and_then(|s| s.hard.clone()).expect("hard");
        assert_eq!(
            hard.iter()
                .map(|(k, v)| (k.as_str(), v.0.as_str()))
                .collect::<Vec<_>>(),
            [
                ("count/controlplaneupdatestatuses.update.openshift.io", "2"),
                ("count/updateinsights.update.openshift.io", "2000"),
                ("count/workerpoolupdatestatuses.update.openshift.io", "100"),
            ]
        );
        let o = &q.owner_references()[0];
        assert_eq!(
            (o.kind.as_str(), o.name.as_str(), o.uid.as_str()),
            ("ManagedClusterAddOn", "update-status", "uid-cluster1")
        );
        assert_eq!(o.api_version, "addon.open-cluster-management.io/v1alpha1");
        assert_eq!((o.controller, o.block_owner_deletion), (Some(true), None));
        let mut going = addon("cluster1", &[]);
        going.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::UNIX_EPOCH),
        );
        assert!(desired_quota(&going, DEFAULTS).is_none(), "being deleted");
    }

    #[test]
    fn a_cluster_overrides_its_limits_by_annotation_and_bad_values_are_reported() {
        let (l, problems) = DEFAULTS.with_overrides(
            addon(
                "c",
                &[
                    ("update.openshift.io/hub-quota-updateinsights", "8000"),
                    (
                        "update.openshift.io/hub-quota-workerpoolupdatestatuses",
                        "many",
                    ),
                    ("update.openshift.io/hub-quota-nodes", "5"),
                    ("other", "1"),
                ],
            )
            .annotations(),
        );
        assert_eq!(
            l,
            QuotaLimits {
                insights: 8000,
                ..DEFAULTS
            }
        );
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].contains("unknown resource \"nodes\""),
            "{problems:?}"
        );
        assert!(
            problems[1].contains("\"many\" is not a count"),
            "{problems:?}"
        );
    }

    /// Issue #48 item 11: an override above the ceiling gets the ceiling (warned about), and
    /// the policy that bounds the hub controller's quota writes says the same numbers.
    #[test]
    fn an_override_has_a_ceiling_and_the_policy_the_same() {
        let (l, problems) = DEFAULTS.with_overrides(
            addon(
                "c",
                &[
                    ("update.openshift.io/hub-quota-updateinsights", "99999999"),
                    (
                        "update.openshift.io/hub-quota-workerpoolupdatestatuses",
                        "500",
                    ),
                ],
            )
            .annotations(),
        );
        assert_eq!(
            l,
            QuotaLimits {
                insights: CEILING.insights,
                worker_pools: 500,
                ..DEFAULTS
            }
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("above the ceiling of 10000"),
            "{problems:?}"
        );
        let policy = include_str!("../../../config/acm/limits/admission-policy.yaml");
        for plural in PLURALS {
            let bound = format!("'{}': '{}'", count_key(plural), CEILING.get(plural));
            assert!(
                policy.contains(&bound),
                "the policy bounds {plural}: {bound}"
            );
        }
    }

    /// Issue #48 item 10: the hub controller ships a NetworkPolicy selecting its pods and
    /// admitting only the monitoring namespace to its /metrics port.
    #[test]
    fn the_hub_controller_has_its_network_policy() {
        let policy = include_str!("../../../config/acm/limits/network-policy.yaml");
        let deployment = include_str!("../../../config/acm/limits/hub-controller.yaml");
        let kustomization = include_str!("../../../config/acm/limits/kustomization.yaml");
        assert!(kustomization.contains("- network-policy.yaml"));
        for needle in [
            "app.kubernetes.io/name: update-status-hub",
            "namespace: open-cluster-management-update-status",
        ] {
            assert!(policy.contains(needle), "{needle}");
            assert!(deployment.contains(needle), "{needle}");
        }
        assert!(deployment.contains("containerPort: 8443"));
        assert!(policy.contains("port: 8443"));
        assert!(policy.contains("kubernetes.io/metadata.name: openshift-monitoring"));
        assert!(policy.contains("policyTypes:\n  - Ingress"));
    }

    #[test]
    fn counts_read_back_as_the_api_server_writes_them() {
        for (text, n) in [
            ("2000", 2000),
            ("2k", 2000),
            ("16k", 16_000),
            ("1M", 1_000_000),
            ("3e3", 3000),
            ("0", 0),
        ] {
            assert_eq!(parse_count(text), Some(n), "{text}");
        }
        for bad in ["", "2Ki", "1.5k", "-1", "k", "99999999999999999999"] {
            assert_eq!(parse_count(bad), None, "{bad}");
        }
        let desired = desired_quota(&addon("c", &[]), DEFAULTS).expect("quota");
        let mut cached = desired.clone();
        if let Some(h) = cached.spec.as_mut().and_then(|s| s.hard.as_mut()) {
            h.insert(count_key("updateinsights"), Quantity("2k".into()));
        }
        assert!(
            up_to_date(&cached, &desired),
            "2k is 2000: nothing to write"
        );
        if let Some(h) = cached.spec.as_mut().and_then(|s| s.hard.as_mut()) {
            h.insert(count_key("updateinsights"), Quantity("3k".into()));
        }
        assert!(!up_to_date(&cached, &desired), "changed by hand: put back");
        let mut more = desired.clone();
        if let Some(h) = more.spec.as_mut().and_then(|s| s.hard.as_mut()) {
            h.insert("pods".into(), Quantity("0".into()));
        }
        assert!(
            up_to_date(&more, &desired),
            "another resource's limit is left alone"
        );
        let mut other_owner = desired.clone();
        other_owner.metadata.owner_references = None;
        assert!(!up_to_date(&other_owner, &desired));
    }
}
