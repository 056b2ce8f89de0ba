//! Reading the hub for `--fleet`: the lists in pages (`--chunk-size`, 500 by default as
//! kubectl's), the pools and health insights folded into counts page by page; and, for a user
//! who may not list them in all namespaces (an ACM clusterset user), the namespaces of the
//! clusters they may see, read one by one, saying which could not be read.

use std::collections::BTreeSet;

use futures::StreamExt as _;
use k8s_openapi::api::authorization::v1::{SelfSubjectRulesReview, SelfSubjectRulesReviewSpec};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use kube::{Client, Resource};
use update_status_api::acm::{
    ADDON_NAME, CLUSTER_GROUP, CLUSTERVIEW_GROUP, ClusterManagementAddOn, LAST_REPORTED_ANNOTATION,
    ManagedCluster, ManagedClusterAddOn,
};
use update_status_api::crd::{
    ControlPlaneUpdateStatus, ImpactLevel, UpdateInsight, WorkerPoolUpdateStatus, labels,
};

use super::assemble::{assemble, mark_pending};
use super::join::Tally;
use super::model::{Fleet, FleetFilter, FleetRow, addons_forbidden};
use crate::read::online::{
    OnlineError, Paging, fold_metadata_pages, fold_pages, health_selector, list_named,
};

/// Namespaces read at once when reading them one by one.
const PARALLEL: usize = 8;

/// What is kept of a ControlPlaneUpdateStatus: no managed fields, no annotation but the
/// heartbeat.
pub fn slim<K: Resource>(mut o: K) -> K {
    let meta = o.meta_mut();
    meta.managed_fields = None;
    if let Some(a) = meta.annotations.as_mut() {
        a.retain(|k, _| k == LAST_REPORTED_ANNOTATION);
    }
    o
}

/// What was read of one scope (all namespaces, or one).
#[derive(Default)]
struct Read {
    cps: Vec<ControlPlaneUpdateStatus>,
    tally: Tally,
    /// `None`: not an ACM hub, or the add-ons could not be read.
    addons: Option<Vec<ManagedClusterAddOn>>,
    addons_forbidden: bool,
}

impl Read {
    fn merge(&mut self, other: Read) {
        self.cps.extend(other.cps);
        self.tally.merge(other.tally);
        if let Some(a) = other.addons {
            self.addons.get_or_insert_with(Vec::new).extend(a);
        }
        self.addons_forbidden |= other.addons_forbidden;
    }
}

/// Reads every cluster's objects on the hub at `now`, and on an ACM hub the add-on of every
/// cluster (and, with a filter, the ManagedClusters it selects). When RBAC denies the lists in
/// all namespaces, reads the namespaces of the clusters the user may see ([`discover`]).
pub async fn fetch(
    client: &Client,
    filter: &FleetFilter,
    now: jiff::Timestamp,
) -> Result<Fleet, OnlineError> {
    let judge = filter.judge(now);
    let (read, selected) = match tokio::try_join!(
        read_scope(client, None, filter.chunk_size),
        selected(client, filter)
    ) {
        Ok(r) => r,
        Err(denied @ OnlineError::Forbidden { .. }) => {
            return per_namespace(client, filter, denied, judge).await;
        }
        Err(e) => return Err(e),
    };
    let mut warnings = Vec::new();
    if read.addons_forbidden {
        warnings.push(addons_forbidden());
    }
    let mut rows = assemble(
        &read.cps,
        &read.tally,
        read.addons.as_deref(),
        selected.as_ref(),
        &judge,
    );
    warnings.extend(with_fleet_rollout(client, &mut rows).await);
    Ok(Fleet {
        rows,
        warnings,
        unreadable: Vec::new(),
    })
}

/// Marks on the add-on rows the configurations the ClusterManagementAddOn `update-status` rolls
/// out that have not reached their clusters ([`mark_pending`]). Without rows with an add-on
/// nothing is read. A user whose RBAC does not let them read it (a clusterset's users), or a hub
/// without it, sees the rows as they are; another failure is the returned warning.
async fn with_fleet_rollout(client: &Client, rows: &mut [FleetRow]) -> Option<String> {
    if rows.iter().all(|r| r.add_on.is_none()) {
        return None;
    }
    let api = Api::<ClusterManagementAddOn>::all(client.clone());
    match api.get_opt(ADDON_NAME).await {
        Ok(Some(cma)) => mark_pending(rows, &cma),
        Ok(None) => {}
        // Not an ACM hub (404); not the user's to read (403).
        Err(kube::Error::Api(s)) if matches!(s.code, 403 | 404) => {}
        Err(e) => {
            return Some(format!(
                "the ClusterManagementAddOn {ADDON_NAME} could not be read ({e}): clusters a \
                 rollout of the add-on has not reached are not told"
            ));
        }
    }
    None
}

/// The names of the ManagedClusters `--selector`/`--clusterset` select (`None`: no filter).
async fn selected(
    client: &Client,
    filter: &FleetFilter,
) -> Result<Option<BTreeSet<String>>, OnlineError> {
    let Some(selector) = filter.managed_cluster_selector() else {
        return Ok(None);
    };
    let params = ListParams::default().labels(&selector);
    match managed_cluster_names::<BTreeSet<String>>(client, &params, filter.chunk_size).await {
        Ok(names) => Ok(Some(names)),
        Err(OnlineError::NotInstalled { resource }) => Err(OnlineError::NotAHub { resource }),
        Err(e) => Err(e),
    }
}

/// The names of the ManagedClusters `params` select, listed in pages of `chunk`.
async fn managed_cluster_names<C: Default + Extend<String>>(
    client: &Client,
    params: &ListParams,
    chunk: u32,
) -> Result<C, OnlineError> {
    let api = Api::<ManagedCluster>::all(client.clone());
    let paging = Paging {
        namespace: None,
        chunk,
    };
    fold_pages(&api, params, paging, C::default, |names, page| {
        names.extend(page.into_iter().filter_map(|c| c.metadata.name));
    })
    .await
}

/// Reads the statuses, pools and health insights of `namespace` (`None`: all), in pages, and
/// the add-ons there.
async fn read_scope(
    client: &Client,
    namespace: Option<&str>,
    chunk: u32,
) -> Result<Read, OnlineError> {
    fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        match namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        }
    }
    let paging = Paging { namespace, chunk };
    let all = ListParams::default();
    let addon_params = ListParams::default().fields(&format!("metadata.name={ADDON_NAME}"));
    let cps = api::<ControlPlaneUpdateStatus>(client, namespace);
    let pools = api::<WorkerPoolUpdateStatus>(client, namespace);
    let insights = api::<UpdateInsight>(client, namespace);
    let addons = api::<ManagedClusterAddOn>(client, namespace);
    let (cps, pools, health, addons) = tokio::join!(
        fold_pages(&cps, &all, paging, Vec::new, |v, page| v
            .extend(page.into_iter().map(slim))),
        fold_pages(&pools, &all, paging, Tally::default, |t, page| {
            page.iter().for_each(|p| t.add_pool(p));
        }),
        read_health(&insights, paging),
        fold_pages(&addons, &addon_params, paging, Vec::new, |v, page| v
            .extend(page.into_iter().map(slim))),
    );
    let (cps, mut tally, health) = (cps?, pools?, health?);
    tally.merge(health);
    let (addons, addons_forbidden) = match addons {
        Ok(a) => (Some(a), false),
        // Not an ACM hub: the rows of the copies found, as on any hub.
        Err(OnlineError::NotInstalled { .. }) => (None, false),
        Err(OnlineError::Forbidden { .. }) => (None, true),
        Err(e) => return Err(e),
    };
    Ok(Read {
        cps,
        tally,
        addons,
        addons_forbidden,
    })
}

/// The health insights of `paging`'s scope counted by level: their metadata only (the level is
/// a label: the bulk of what the hub would send, their statuses, stays there). Those whose level
/// label is missing or no level's (an agent that wrote none, a hand edit) are then read whole
/// and counted by their status, in one more paged list that selects them alone: however many a
/// tenant writes, they cost what the full read cost, never a request each.
async fn read_health(api: &Api<UpdateInsight>, paging: Paging<'_>) -> Result<Tally, OnlineError> {
    let params = ListParams::default().labels(&health_selector());
    let (mut tally, unlabelled) = fold_metadata_pages(
        api,
        &params,
        paging,
        || (Tally::default(), false),
        |(tally, unlabelled), page| {
            for m in &page {
                *unlabelled |= !tally.add_labelled_insight(m);
            }
        },
    )
    .await?;
    if unlabelled {
        let levels = ImpactLevel::ALL.map(ImpactLevel::slug).join(",");
        let selector = format!(
            "{},{} notin ({levels})",
            health_selector(),
            labels::IMPACT_LEVEL
        );
        let params = ListParams::default().labels(&selector);
        let whole = fold_pages(api, &params, paging, Tally::default, |t, page| {
            page.iter().for_each(|i| t.add_insight(i));
        })
        .await?;
        tally.merge(whole);
    }
    Ok(tally)
}

/// `--fleet` for a user who may not list the objects in all namespaces (`denied`): the
/// namespaces of the clusters they may see, each read alone; those RBAC denies are listed.
async fn per_namespace(
    client: &Client,
    filter: &FleetFilter,
    denied: OnlineError,
    judge: super::age::Judge,
) -> Result<Fleet, OnlineError> {
    let Some(found) = discover(client, filter).await? else {
        return Err(OnlineError::NoNamespaceReadable {
            denied: denied.to_string(),
        });
    };
    let mut warnings = found.warnings;
    warnings.push(format!(
        "{denied}: read the namespaces of the {} cluster{} you may see ({}) one by one",
        found.namespaces.len(),
        if found.namespaces.len() == 1 { "" } else { "s" },
        found.source
    ));
    let chunk = filter.chunk_size;
    let mut reads: Vec<(String, Result<Read, OnlineError>)> =
        futures::stream::iter(found.namespaces)
            .map(|ns| async move {
                let read = read_scope(client, Some(&ns), chunk).await;
                (ns, read)
            })
            .buffer_unordered(PARALLEL)
            .collect()
            .await;
    reads.sort_by(|a, b| a.0.cmp(&b.0));
    let mut all = Read::default();
    let mut unreadable = Vec::new();
    for (ns, read) in reads {
        match read {
            Ok(r) => all.merge(r),
            Err(OnlineError::Forbidden { .. }) => unreadable.push(ns),
            Err(e) => return Err(e),
        }
    }
    if all.addons_forbidden {
        warnings.push(addons_forbidden());
    }
    let mut rows = assemble(&all.cps, &all.tally, all.addons.as_deref(), None, &judge);
    warnings.extend(with_fleet_rollout(client, &mut rows).await);
    Ok(Fleet {
        rows,
        warnings,
        unreadable,
    })
}

/// The namespaces of the clusters a user may see, and where they come from.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Cluster namespaces, sorted.
    pub namespaces: Vec<String>,
    /// Where the names come from, for the reader.
    pub source: &'static str,
    /// What went wrong on the way (a source that failed, a cluster whose labels could not be
    /// matched).
    pub warnings: Vec<String>,
}

/// The clusters the user may see (selected by `--selector`/`--clusterset`), from the first
/// source that answers: ACM's clusterview API (`clusterview.open-cluster-management.io/v1
/// managedclusters`: the ManagedClusters the user may see); the ManagedClusters, for a user who
/// may list them; the ManagedClusters the user's RBAC rules name (a SelfSubjectRulesReview: ACM
/// grants a clusterset's users `get` on each of its ManagedClusters by name). `None`: none
/// answered.
pub async fn discover(
    client: &Client,
    filter: &FleetFilter,
) -> Result<Option<Discovered>, OnlineError> {
    let selector = filter.managed_cluster_selector();
    let params = match &selector {
        Some(s) => ListParams::default().labels(s),
        None => ListParams::default(),
    };
    let mut warnings = Vec::new();
    // 1. ACM's cluster view.
    match from_cluster_view(client, &params).await {
        Ok(names) => return Ok(Some(found(names, "ACM's clusterview API", warnings))),
        Err(OnlineError::NotInstalled { .. } | OnlineError::Forbidden { .. }) => {}
        Err(e) => warnings.push(format!("{e}: trying the ManagedClusters")),
    }
    // 2. The ManagedClusters.
    match managed_cluster_names::<Vec<String>>(client, &params, filter.chunk_size).await {
        Ok(names) => return Ok(Some(found(names, "the ManagedClusters", warnings))),
        Err(OnlineError::NotInstalled { resource }) => {
            return match selector {
                Some(_) => Err(OnlineError::NotAHub { resource }),
                None => Ok(None),
            };
        }
        Err(OnlineError::Forbidden { .. }) => {}
        Err(e) => return Err(e),
    }
    // 3. The ManagedClusters the user's RBAC rules name.
    let named = rules_named_clusters(client).await;
    if named.is_empty() {
        return Ok(None);
    }
    let names = match &selector {
        None => named,
        Some(selector) => {
            let api = Api::<ManagedCluster>::all(client.clone());
            matching_selector(&api, named, selector, &mut warnings).await
        }
    };
    Ok(Some(found(
        names,
        "the ManagedClusters your RBAC rules name",
        warnings,
    )))
}

/// The ManagedClusters ACM's cluster view lists (`clusterview.open-cluster-management.io/v1
/// managedclusters`), by name.
async fn from_cluster_view(
    client: &Client,
    params: &ListParams,
) -> Result<Vec<String>, OnlineError> {
    let view = ApiResource {
        group: CLUSTERVIEW_GROUP.to_owned(),
        version: "v1".to_owned(),
        api_version: format!("{CLUSTERVIEW_GROUP}/v1"),
        kind: "ManagedCluster".to_owned(),
        plural: "managedclusters".to_owned(),
    };
    let api = Api::<DynamicObject>::all_with(client.clone(), &view);
    let resource = format!("managedclusters.{CLUSTERVIEW_GROUP}");
    let l = list_named(&api, params, None, &resource).await?;
    Ok(l.items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect())
}

/// Of the ManagedClusters the user's RBAC rules name, those `selector` matches; a cluster that
/// cannot be checked is left out with a warning.
async fn matching_selector(
    api: &Api<ManagedCluster>,
    named: Vec<String>,
    selector: &str,
    warnings: &mut Vec<String>,
) -> Vec<String> {
    // A list of one name by field selector is authorized by a `resourceNames` rule.
    let checks: Vec<(String, Result<bool, OnlineError>)> = futures::stream::iter(named)
        .map(|name| async {
            let params = ListParams::default()
                .fields(&format!("metadata.name={name}"))
                .labels(selector);
            let r = crate::read::online::list(api, &params, None)
                .await
                .map(|l| !l.items.is_empty());
            (name, r)
        })
        .buffer_unordered(PARALLEL)
        .collect()
        .await;
    let mut names = Vec::new();
    for (name, r) in checks {
        match r {
            Ok(true) => names.push(name),
            Ok(false) => {}
            Err(e) => warnings.push(format!(
                "cannot tell whether ManagedCluster {name} matches --selector/--clusterset ({e}): not shown"
            )),
        }
    }
    names
}

fn found(
    names: impl IntoIterator<Item = String>,
    source: &'static str,
    mut warnings: Vec<String>,
) -> Discovered {
    let mut namespaces = BTreeSet::new();
    for name in names {
        if is_dns_label(&name) {
            namespaces.insert(name);
        } else {
            warnings.push(format!(
                "{source} name a cluster {name:?} that cannot be a namespace: skipped"
            ));
        }
    }
    Discovered {
        namespaces: namespaces.into_iter().collect(),
        source,
        warnings,
    }
}

/// A namespace name: a DNS-1123 label.
fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// The ManagedClusters the user's RBAC rules let them get or list by name (cluster-scoped
/// rules, from a SelfSubjectRulesReview; any error: none).
async fn rules_named_clusters(client: &Client) -> Vec<String> {
    let api = Api::<SelfSubjectRulesReview>::all(client.clone());
    let review = SelfSubjectRulesReview {
        spec: SelfSubjectRulesReviewSpec {
            // Required; cluster-wide rules come with any namespace's.
            namespace: Some("default".to_owned()),
        },
        ..Default::default()
    };
    let Ok(review) = api.create(&PostParams::default(), &review).await else {
        return Vec::new();
    };
    named_clusters(&review)
}

/// The names of `get`/`list` rules on ManagedClusters in a rules review.
fn named_clusters(review: &SelfSubjectRulesReview) -> Vec<String> {
    let has = |v: &Option<Vec<String>>, want: &str| {
        v.as_ref()
            .is_some_and(|v| v.iter().any(|x| x == want || x == "*"))
    };
    let mut names = BTreeSet::new();
    for rule in review.status.iter().flat_map(|s| &s.resource_rules) {
        let readable = rule
            .verbs
            .iter()
            .any(|v| v == "get" || v == "list" || v == "*");
        if readable
            && has(&rule.api_groups, CLUSTER_GROUP)
            && has(&rule.resources, "managedclusters")
        {
            names.extend(rule.resource_names.iter().flatten().cloned());
        }
    }
    names.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::authorization::v1::{ResourceRule, SubjectRulesReviewStatus};

    #[test]
    fn the_clusters_a_rules_review_names_are_those_readable_by_name() {
        let rule = |groups: &[&str], resources: &[&str], verbs: &[&str], names: &[&str]| {
            let v = |s: &[&str]| Some(s.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>());
            ResourceRule {
                api_groups: v(groups),
                resources: v(resources),
                verbs: verbs.iter().map(|x| (*x).to_owned()).collect(),
                resource_names: if names.is_empty() { None } else { v(names) },
            }
        };
        let review = SelfSubjectRulesReview {
            status: Some(SubjectRulesReviewStatus {
                resource_rules: vec![
                    rule(
                        &[CLUSTER_GROUP],
                        &["managedclusters"],
                        &["get", "list", "watch"],
                        &["east-1"],
                    ),
                    rule(&[CLUSTER_GROUP], &["managedclusters"], &["*"], &["east-2"]),
                    rule(&["*"], &["*"], &["get"], &["east-3"]),
                    rule(
                        &[CLUSTER_GROUP],
                        &["managedclustersets"],
                        &["get"],
                        &["east"],
                    ),
                    rule(
                        &[CLUSTER_GROUP],
                        &["managedclusters"],
                        &["update"],
                        &["west-1"],
                    ),
                    rule(&["other.io"], &["managedclusters"], &["get"], &["west-2"]),
                    rule(&[CLUSTER_GROUP], &["managedclusters"], &["list"], &[]),
                ],
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(named_clusters(&review), ["east-1", "east-2", "east-3"]);
    }

    #[test]
    fn only_dns_labels_become_namespaces() {
        let d = found(
            [
                "b".to_owned(),
                "a-1".to_owned(),
                "../x".to_owned(),
                "A".to_owned(),
                "a-1".to_owned(),
            ],
            "test",
            Vec::new(),
        );
        assert_eq!(d.namespaces, ["a-1", "b"]);
        assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
    }
}
