//! What is copied to the hub, under which name and with which labels (pure).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::{Resource, ResourceExt};
use update_status_api::crd::{
    ControlPlaneUpdateStatus, ControlPlaneUpdateStatusStatus, InsightType, UpdateInsight,
    UpdateInsightStatus, WorkerPoolUpdateStatus, WorkerPoolUpdateStatusStatus, labels,
};

use super::config::NAME;
use crate::runtime::writer::Desired;
use update_status_assess::naming;

/// Label selector of this cluster's copies on the hub (ours, by the hub sync, for this
/// cluster): what the hub reflectors see, hence all that a pass may change or delete.
pub fn hub_selector(cluster_name: &str) -> String {
    format!(
        "{}={},{}={NAME},{}={cluster_name}",
        labels::MANAGED_BY,
        labels::MANAGED_BY_VALUE,
        labels::RECONCILER,
        labels::ACM_CLUSTER_NAME,
    )
}

/// [`hub_selector`] narrowed to the copies of one hosted cluster (`source`: the value of
/// `update.openshift.io/hosted-cluster`), so that its session never sees, changes or deletes
/// the copies another HostedCluster wrote under the same managed-cluster name.
pub fn hub_selector_for(cluster_name: &str, source: Option<&str>) -> String {
    match source {
        None => hub_selector(cluster_name),
        Some(s) => format!(
            "{},{}={s}",
            hub_selector(cluster_name),
            labels::HOSTED_CLUSTER
        ),
    }
}

/// The hub copies of this cluster's objects, each list sorted by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HubCopies {
    /// The ControlPlaneUpdateStatus, named after the cluster (at most one).
    pub control_planes: Vec<Desired<ControlPlaneUpdateStatusStatus>>,
    /// One per WorkerPoolUpdateStatus.
    pub worker_pools: Vec<Desired<WorkerPoolUpdateStatusStatus>>,
    /// One per health insight (and progress insight, when asked).
    pub insights: Vec<Desired<UpdateInsightStatus>>,
}

impl HubCopies {
    /// Every copy labelled `update.openshift.io/hosted-cluster=<source>` (hosted mode).
    pub fn set_source(&mut self, source: &str) {
        let l = || (labels::HOSTED_CLUSTER.to_string(), source.to_string());
        for c in &mut self.control_planes {
            c.labels.extend([l()]);
        }
        for c in &mut self.worker_pools {
            c.labels.extend([l()]);
        }
        for c in &mut self.insights {
            c.labels.extend([l()]);
        }
    }

    /// Every copy owned by `owner` (the hub namespace's ManagedClusterAddOn), or by nothing.
    pub fn set_owner(&mut self, owner: Option<OwnerReference>) {
        for c in &mut self.control_planes {
            c.owner.clone_from(&owner);
        }
        for c in &mut self.worker_pools {
            c.owner.clone_from(&owner);
        }
        for c in &mut self.insights {
            c.owner.clone_from(&owner);
        }
    }
}

/// Labels of a copy: the local object's labels of ours (`update.openshift.io/*` and
/// `app.kubernetes.io/managed-by`) except the local reconciler's name (the hub writer puts
/// its own), plus the cluster-name label. Labels set by others stay home.
pub fn copy_labels(
    local: &BTreeMap<String, String>,
    cluster_name: &str,
) -> BTreeMap<String, String> {
    let mut l: BTreeMap<String, String> = local
        .iter()
        .filter(|(k, _)| {
            (k.starts_with("update.openshift.io/") && k.as_str() != labels::RECONCILER)
                || k.as_str() == labels::MANAGED_BY
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    l.insert(
        labels::ACM_CLUSTER_NAME.to_string(),
        cluster_name.to_string(),
    );
    l
}

/// A local object worth copying: named, with a status, not being deleted.
fn live<K: Resource>(o: &K) -> bool {
    o.meta().name.is_some() && o.meta().deletion_timestamp.is_none()
}

fn copy<S: Clone>(
    name: String,
    local: &BTreeMap<String, String>,
    status: &S,
    cluster_name: &str,
) -> Desired<S> {
    Desired {
        name,
        labels: copy_labels(local, cluster_name),
        owner: None,
        status: status.clone(),
    }
}

/// The hub copies of the local objects (pure): see the module documentation. Objects without
/// a status yet or being deleted are not copied (so their copies go). The ControlPlaneUpdateStatus
/// copied is the one named `cluster` if there are several.
pub fn desired_copies(
    cluster_name: &str,
    include_progress: bool,
    control_planes: &[Arc<ControlPlaneUpdateStatus>],
    worker_pools: &[Arc<WorkerPoolUpdateStatus>],
    insights: &[Arc<UpdateInsight>],
) -> HubCopies {
    let cp = control_planes
        .iter()
        .filter(|o| live(&***o))
        .filter_map(|o| Some((o.name_any(), o, o.status.as_ref()?)))
        .min_by(|a, b| {
            let rank = |n: &str| (n != naming::CONTROL_PLANE_STATUS_NAME, n.to_string());
            rank(&a.0).cmp(&rank(&b.0))
        })
        .map(|(_, o, s)| copy(cluster_name.to_string(), o.labels(), s, cluster_name));
    let mut pools: Vec<_> = worker_pools
        .iter()
        .filter(|o| live(&***o))
        .filter_map(|o| {
            Some(copy(
                o.name_any(),
                o.labels(),
                o.status.as_ref()?,
                cluster_name,
            ))
        })
        .collect();
    pools.sort_by(|a, b| a.name.cmp(&b.name));
    let mut copies: Vec<_> = insights
        .iter()
        .filter(|o| live(&***o))
        .filter_map(|o| {
            let s = o.status.as_ref()?;
            (s.type_ == InsightType::Health || include_progress)
                .then(|| copy(o.name_any(), o.labels(), s, cluster_name))
        })
        .collect();
    copies.sort_by(|a, b| a.name.cmp(&b.name));
    HubCopies {
        control_planes: cp.into_iter().collect(),
        worker_pools: pools,
        insights: copies,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use update_status_api::crd::{
        Assessment, ControlPlaneUpdateStatusSpec, HealthInsight, Impact, ImpactLevel, ResourceRef,
        UpdateInsightSpec, WorkerPoolUpdateStatusSpec,
    };

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn owner(kind: &str, name: &str) -> Option<Vec<OwnerReference>> {
        Some(vec![OwnerReference {
            api_version: "v1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: "u".into(),
            ..Default::default()
        }])
    }

    fn cp(name: &str, assessment: Assessment) -> Arc<ControlPlaneUpdateStatus> {
        let mut o = ControlPlaneUpdateStatus::new(name, ControlPlaneUpdateStatusSpec {});
        o.metadata.namespace = Some("openshift-update-status".into());
        o.metadata.labels = Some(map(&[
            (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
            (labels::RECONCILER, "control-plane"),
            (labels::SCOPE, "control-plane"),
            (labels::ASSESSMENT, "progressing"),
            (labels::CLUSTER, "abc-123"),
            ("team", "someone else's"),
        ]));
        o.metadata.owner_references = owner("ClusterVersion", "version");
        o.status = Some(ControlPlaneUpdateStatusStatus {
            assessment,
            completion_percent: 40,
            ..Default::default()
        });
        Arc::new(o)
    }

    fn pool(name: &str) -> Arc<WorkerPoolUpdateStatus> {
        let mut o = WorkerPoolUpdateStatus::new(name, WorkerPoolUpdateStatusSpec {});
        o.metadata.labels = Some(map(&[
            (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
            (labels::RECONCILER, "worker-pools"),
            (labels::POOL, name),
        ]));
        o.metadata.owner_references = owner("MachineConfigPool", name);
        let mut status = WorkerPoolUpdateStatusStatus {
            assessment: Assessment::Degraded,
            ..Default::default()
        };
        status.resource.name = name.into();
        status.nodes.total = 3;
        o.status = Some(status);
        Arc::new(o)
    }

    fn insight(name: &str, type_: InsightType) -> Arc<UpdateInsight> {
        let mut o = UpdateInsight::new(name, UpdateInsightSpec {});
        o.metadata.labels = Some(map(&[
            (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
            (labels::RECONCILER, "worker-pools"),
            (labels::INSIGHT_TYPE, type_.slug()),
        ]));
        o.metadata.owner_references = owner("Node", name);
        o.status = Some(UpdateInsightStatus {
            type_,
            resource: ResourceRef {
                kind: "Node".into(),
                name: name.into(),
                ..Default::default()
            },
            progress: (type_ == InsightType::Progress).then(Default::default),
            health: (type_ == InsightType::Health).then(|| HealthInsight {
                impact: Impact {
                    level: ImpactLevel::Error,
                    summary: "s".into(),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        });
        Arc::new(o)
    }

    fn names<S>(d: &[Desired<S>]) -> Vec<&str> {
        d.iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn hub_copies_are_renamed_relabelled_ownerless_with_the_same_status() {
        let cps = [cp("cluster", Assessment::Progressing)];
        let pools = [pool("worker"), pool("infra")];
        let insights = [
            insight("node-b", InsightType::Health),
            insight("node-a", InsightType::Progress),
            insight("node-a-drain", InsightType::Health),
        ];
        let c = desired_copies("prod-east", false, &cps, &pools, &insights);

        // The control plane is named after the cluster.
        assert_eq!(names(&c.control_planes), ["prod-east"]);
        let copy = &c.control_planes[0];
        assert_eq!(Some(&copy.status), cps[0].status.as_ref());
        assert_eq!(copy.owner, None, "owners do not exist on the hub");
        assert_eq!(
            copy.labels,
            map(&[
                (labels::MANAGED_BY, labels::MANAGED_BY_VALUE),
                (labels::SCOPE, "control-plane"),
                (labels::ASSESSMENT, "progressing"),
                (labels::CLUSTER, "abc-123"),
                (labels::ACM_CLUSTER_NAME, "prod-east"),
            ]),
            "ours without the local reconciler (the hub writer sets hub-sync), plus the cluster name; not other teams' labels"
        );

        // Pools keep their names, sorted.
        assert_eq!(names(&c.worker_pools), ["infra", "worker"]);
        assert_eq!(Some(&c.worker_pools[1].status), pools[0].status.as_ref());
        assert_eq!(c.worker_pools[1].labels[labels::POOL], "worker");
        assert_eq!(
            c.worker_pools[1].labels[labels::ACM_CLUSTER_NAME],
            "prod-east"
        );
        assert!(c.worker_pools.iter().all(|p| p.owner.is_none()));

        // Health insights only, unless asked.
        assert_eq!(names(&c.insights), ["node-a-drain", "node-b"]);
        assert!(c.insights.iter().all(|i| i.owner.is_none()
            && i.labels[labels::ACM_CLUSTER_NAME] == "prod-east"
            && !i.labels.contains_key(labels::RECONCILER)));
        let with_progress = desired_copies("prod-east", true, &cps, &pools, &insights);
        assert_eq!(
            names(&with_progress.insights),
            ["node-a", "node-a-drain", "node-b"]
        );
        assert_eq!(
            with_progress.insights[0].labels[labels::INSIGHT_TYPE],
            "progress"
        );
    }

    #[test]
    fn hub_copies_are_owned_by_the_managed_cluster_addon_when_there_is_one() {
        let mut c = desired_copies(
            "c1",
            true,
            &[cp("cluster", Assessment::Progressing)],
            &[pool("worker")],
            &[insight("n", InsightType::Health)],
        );
        let mca = OwnerReference {
            api_version: "addon.open-cluster-management.io/v1alpha1".into(),
            kind: "ManagedClusterAddOn".into(),
            name: "update-status".into(),
            uid: "u-1".into(),
            ..Default::default()
        };
        c.set_owner(Some(mca.clone()));
        assert!(
            c.control_planes
                .iter()
                .all(|d| d.owner.as_ref() == Some(&mca))
        );
        assert!(
            c.worker_pools
                .iter()
                .all(|d| d.owner.as_ref() == Some(&mca))
        );
        assert!(c.insights.iter().all(|d| d.owner.as_ref() == Some(&mca)));
        c.set_owner(None);
        assert!(
            c.insights.iter().all(|d| d.owner.is_none()),
            "a plain hub: no owner"
        );
    }

    #[test]
    fn hub_copies_skip_objects_without_status_or_being_deleted() {
        let mut no_status = (*insight("pending", InsightType::Health)).clone();
        no_status.status = None;
        let mut deleting = (*insight("going", InsightType::Health)).clone();
        deleting.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        let mut cp_no_status = (*cp("cluster", Assessment::Completed)).clone();
        cp_no_status.status = None;
        let c = desired_copies(
            "c1",
            false,
            &[Arc::new(cp_no_status)],
            &[],
            &[
                Arc::new(no_status),
                Arc::new(deleting),
                insight("kept", InsightType::Health),
            ],
        );
        assert!(c.control_planes.is_empty());
        assert_eq!(names(&c.insights), ["kept"]);
        assert_eq!(
            desired_copies("c1", true, &[], &[], &[]),
            HubCopies::default(),
            "nothing local: every copy goes"
        );
    }

    #[test]
    fn hub_gets_one_control_plane_preferably_the_one_named_cluster() {
        let c = desired_copies(
            "c1",
            false,
            &[
                cp("another", Assessment::Stalled),
                cp("cluster", Assessment::Progressing),
                cp("aaa", Assessment::Unknown),
            ],
            &[],
            &[],
        );
        assert_eq!(c.control_planes.len(), 1);
        assert_eq!(c.control_planes[0].name, "c1");
        assert_eq!(
            c.control_planes[0].status.assessment,
            Assessment::Progressing
        );
        let c = desired_copies(
            "c1",
            false,
            &[
                cp("hosted-b", Assessment::Stalled),
                cp("hosted-a", Assessment::Unknown),
            ],
            &[],
            &[],
        );
        assert_eq!(
            c.control_planes[0].status.assessment,
            Assessment::Unknown,
            "else the first by name"
        );
    }

    #[test]
    fn hub_selector_names_our_copies_of_this_cluster() {
        assert_eq!(
            hub_selector("prod-east"),
            "app.kubernetes.io/managed-by=update-status-controller,update.openshift.io/reconciler=hub-sync,open-cluster-management.io/cluster-name=prod-east"
        );
        assert_eq!(
            hub_selector_for("prod-east", None),
            hub_selector("prod-east")
        );
        assert_eq!(
            hub_selector_for("prod-east", Some("clusters.prod")),
            format!(
                "{},update.openshift.io/hosted-cluster=clusters.prod",
                hub_selector("prod-east")
            )
        );
    }

    #[test]
    fn hosted_copies_carry_their_hosted_cluster() {
        let mut c = desired_copies(
            "c1",
            false,
            &[cp("cluster", Assessment::Progressing)],
            &[pool("worker")],
            &[insight("n", InsightType::Health)],
        );
        c.set_source("clusters.prod");
        assert!(
            c.control_planes
                .iter()
                .chain(c.insights.iter().map(|_| &c.control_planes[0]))
                .all(|d| d.labels[labels::HOSTED_CLUSTER] == "clusters.prod")
        );
        assert!(
            c.worker_pools
                .iter()
                .all(|d| d.labels[labels::HOSTED_CLUSTER] == "clusters.prod")
        );
        assert!(
            c.insights
                .iter()
                .all(|d| d.labels[labels::HOSTED_CLUSTER] == "clusters.prod")
        );
    }
}
