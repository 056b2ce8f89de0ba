//! The ACM recipes (`config/acm/policies`, the policy pack; `config/acm/recipes`, a TALM
//! ClusterGroupUpgrade and a ClusterCurator upgrade) against the real CRDs of the components
//! that consume them, on the real kube-apiserver of the local OCM hub: none of these controllers
//! (governance propagator and framework, configuration-policy controller, cluster curator, TALM)
//! can be built here, so their CRDs are vendored (`testdata/acm-crds/`, see
//! `testdata/PROVENANCE.md`) and every manifest is dry-run through the API server (server-side
//! apply, strict field validation: the structural schema, enums, required fields, CEL rules).
//!
//! [`check`] also shows that the checks bite (a wrong enum value, a missing required field, a
//! CEL rule broken, an unknown field: each refused), that the pack's Placement selects the
//! clusters with the add-on (the real placement controller), and what the pack promises that no
//! schema says (InformOnly templates, completion on both claims, every policy bound).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, ValidationDirective};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

use crate::ocm::{self, OcmEnv};
use crate::paths::repo_root;
use crate::wait::{kubectl_wait_retrying, poll_until};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The namespace of the pack and of the ClusterGroupUpgrade (config/acm's).
pub const POLICY_NAMESPACE: &str = "open-cluster-management-update-status";
/// The vendored CRDs, by name.
pub const CRDS: [&str; 5] = [
    "policies.policy.open-cluster-management.io",
    "placementbindings.policy.open-cluster-management.io",
    "configurationpolicies.policy.open-cluster-management.io",
    "clustercurators.cluster.open-cluster-management.io",
    "clustergroupupgrades.ran.openshift.io",
];
/// The label OCM's registration controller puts on the ManagedCluster of a cluster with the
/// add-on (`pkg/registration/hub/addon/discovery_controller.go`).
pub const FEATURE_LABEL: &str = "feature.open-cluster-management.io/addon-update-status";
const TIMEOUT: Duration = Duration::from_secs(60);
const MANAGER: &str = "update-status-e2e-recipes";

/// Installs the vendored CRDs (`testdata/acm-crds/`) on the cluster of `kubeconfig` and waits
/// until they are established.
pub async fn install_crds(kubeconfig: &std::path::Path) -> Result<(), BoxError> {
    let dir = repo_root().join("testdata/acm-crds");
    ocm::kubectl(
        kubeconfig,
        ["apply", "--server-side", "-f", &dir.display().to_string()],
    )
    .await?;
    let mut args = vec![
        "wait".to_string(),
        "--for=condition=Established".into(),
        "--timeout=60s".into(),
    ];
    args.extend(CRDS.iter().map(|c| format!("crd/{c}")));
    kubectl_wait_retrying(TIMEOUT, || ocm::kubectl(kubeconfig, args.clone())).await?;
    Ok(())
}

/// The objects of a YAML stream (documents that are not null).
pub fn documents(yaml: &str) -> Result<Vec<Value>, BoxError> {
    Ok(serde_saphyr::from_multiple::<Value>(yaml)?
        .into_iter()
        .filter(|v| !v.is_null())
        .collect())
}

/// The objects of a file of the repository.
pub fn file_objects(rel: &str) -> Result<Vec<Value>, BoxError> {
    let path = repo_root().join(rel);
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    documents(&text)
}

/// `config/acm/policies` as kustomize renders it.
pub async fn policy_pack(hub_kubeconfig: &std::path::Path) -> Result<Vec<Value>, BoxError> {
    let dir = repo_root().join("config/acm/policies");
    let yaml = ocm::kubectl(hub_kubeconfig, ["kustomize", &dir.display().to_string()]).await?;
    documents(&yaml)
}

/// Server-side dry run of `obj` (an apply with strict field validation), in `namespace` when
/// the object has none and its kind is namespaced. `Err`: the API server's message.
pub async fn dry_run(client: &Client, obj: &Value, namespace: &str) -> Result<(), String> {
    let (api_version, kind) = (
        obj["apiVersion"].as_str().unwrap_or_default(),
        obj["kind"].as_str().unwrap_or_default(),
    );
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (ar, caps) = pinned_kind(client, &gvk)
        .await
        .map_err(|e| format!("{api_version} {kind} is not served: {e}"))?;
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let api: Api<DynamicObject> = match caps.scope {
        Scope::Cluster => Api::all_with(client.clone(), &ar),
        Scope::Namespaced => Api::namespaced_with(
            client.clone(),
            obj["metadata"]["namespace"].as_str().unwrap_or(namespace),
            &ar,
        ),
    };
    let params = PatchParams {
        dry_run: true,
        field_validation: Some(ValidationDirective::Strict),
        ..PatchParams::apply(MANAGER).force()
    };
    api.patch(name, &params, &Patch::Apply(obj))
        .await
        .map(drop)
        .map_err(|e| match e {
            kube::Error::Api(s) => s.message,
            other => other.to_string(),
        })
}

/// Expects `obj` accepted by the API server (a dry run).
async fn accepted(
    client: &Client,
    obj: &Value,
    namespace: &str,
    what: &str,
) -> Result<(), BoxError> {
    dry_run(client, obj, namespace)
        .await
        .map_err(|m| format!("{what}: refused by the API server: {m}").into())
}

/// Expects `obj` refused with a message containing `needle`.
async fn refused(
    client: &Client,
    obj: &Value,
    namespace: &str,
    needle: &str,
    what: &str,
) -> Result<(), BoxError> {
    match dry_run(client, obj, namespace).await {
        Err(m) if m.contains(needle) => Ok(()),
        Err(m) => Err(format!("{what}: refused, but not with {needle:?}: {m}").into()),
        Ok(()) => Err(format!("{what}: accepted; the schema should refuse it ({needle:?})").into()),
    }
}

fn of_kind<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

fn name(o: &Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or_default()
}

/// The ConfigurationPolicies of a Policy's templates.
fn templates(policy: &Value) -> Vec<&Value> {
    policy["spec"]["policy-templates"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| &t["objectDefinition"])
        .collect()
}

/// What the pack promises that no schema says: parents `inform`, every template InformOnly (so
/// an enforcing binding, TALM's, cannot make the configuration-policy controller write the
/// agent's claims), completion on `state=Completed` and `target=<a version>` (not the
/// placeholder), every Policy bound to a Placement of the pack.
pub fn check_pack_semantics(pack: &[Value]) -> Result<String, BoxError> {
    let policies = of_kind(pack, "Policy");
    let placements: BTreeSet<&str> = of_kind(pack, "Placement").into_iter().map(name).collect();
    let bindings = of_kind(pack, "PlacementBinding");
    if policies.is_empty() {
        return Err("the pack has no Policy".into());
    }
    let mut target = None;
    for p in &policies {
        let pname = name(p);
        if p["spec"]["remediationAction"] != "inform" {
            return Err(format!("Policy {pname}: remediationAction is not inform").into());
        }
        for t in templates(p) {
            if t["kind"] != "ConfigurationPolicy" || t["spec"]["remediationAction"] != "InformOnly"
            {
                return Err(format!(
                    "Policy {pname}: a template is not an InformOnly ConfigurationPolicy: {t}"
                )
                .into());
            }
        }
        let bound = bindings.iter().any(|b| {
            b["subjects"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["kind"] == "Policy" && s["name"] == pname)
                && b["placementRef"]["kind"] == "Placement"
                && b["placementRef"]["name"]
                    .as_str()
                    .is_some_and(|n| placements.contains(n))
        });
        if !bound {
            return Err(
                format!("Policy {pname}: no PlacementBinding to a Placement of the pack").into(),
            );
        }
        if pname == "update-status-complete" {
            let claims: Vec<(&str, &str, &str)> = templates(p)
                .iter()
                .flat_map(|t| {
                    t["spec"]["object-templates"]
                        .as_array()
                        .into_iter()
                        .flatten()
                })
                .map(|o| {
                    let d = &o["objectDefinition"];
                    (
                        o["complianceType"].as_str().unwrap_or_default(),
                        name(d),
                        d["spec"]["value"].as_str().unwrap_or_default(),
                    )
                })
                .collect();
            if !claims.contains(&("musthave", "state.update.openshift.io", "Completed")) {
                return Err(format!(
                    "update-status-complete does not require state Completed: {claims:?}"
                )
                .into());
            }
            let version = claims
                .iter()
                .find(|(c, n, _)| *c == "musthave" && *n == "target.update.openshift.io")
                .map(|(_, _, v)| *v)
                .ok_or("update-status-complete does not require the target version")?;
            let looks_like_a_version = version.split('.').count() >= 3
                && version.split('.').take(3).all(|n| n.parse::<u32>().is_ok())
                && version != "0.0.0";
            if !looks_like_a_version {
                return Err(format!("update-status-complete's target {version:?} is not a version (set it in config/acm/policies/kustomization.yaml)").into());
            }
            target = Some(version.to_string());
        }
    }
    target.ok_or_else(|| "the pack has no update-status-complete".into())
}

/// A template as the governance framework creates it on a managed cluster (in the cluster's
/// namespace there), with `remediation` as its remediationAction.
fn as_created(template: &Value, remediation: &str) -> Value {
    let mut t = template.clone();
    t["spec"]["remediationAction"] = json!(remediation);
    t
}

/// The whole check (see the module documentation). Prints what it measured.
pub async fn check(env: &'static OcmEnv, cluster: &str) -> Result<(), BoxError> {
    let started = Instant::now();
    let hub = env.hub_client().await?;
    let spoke = env.cluster_client(cluster).await?;
    install_crds(&env.hub_kubeconfig()).await?;
    let _ = env
        .kubectl_hub(["create", "namespace", POLICY_NAMESPACE])
        .await;
    let pack = policy_pack(&env.hub_kubeconfig()).await?;
    let target = check_pack_semantics(&pack)?;

    // 1. Every manifest as the hub gets it.
    for o in &pack {
        accepted(
            &hub,
            o,
            POLICY_NAMESPACE,
            &format!("{} {} (config/acm/policies)", o["kind"], name(o)),
        )
        .await?;
    }
    let cgu = file_objects("config/acm/recipes/cluster-group-upgrade.yaml")?;
    let curator = file_objects("config/acm/recipes/cluster-curator-upgrade.yaml")?;
    for o in cgu.iter().chain(&curator) {
        accepted(
            &hub,
            o,
            POLICY_NAMESPACE,
            &format!("{} {} (config/acm/recipes)", o["kind"], name(o)),
        )
        .await?;
    }
    let managed: Vec<&Value> = cgu[0]["spec"]["managedPolicies"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if !managed.iter().any(|p| *p == "update-status-complete") {
        return Err(
            "the ClusterGroupUpgrade recipe does not wait on update-status-complete".into(),
        );
    }
    if curator[0]["spec"]["upgrade"]["desiredUpdate"] != target.as_str() {
        return Err(format!(
            "the ClusterCurator recipe upgrades to another version than the pack's {target}"
        )
        .into());
    }
    let playbook =
        std::fs::read_to_string(repo_root().join("config/acm/recipes/wait-update-complete.yml"))?;
    documents(&playbook)?;
    if !playbook.contains("cluster_info.clusterName") || playbook.contains("target_clusters") {
        return Err("the curator's hook does not read cluster_info.clusterName, the variable the curator sets".into());
    }

    // 2. Each template as the managed cluster gets it: a ConfigurationPolicy in the cluster's
    // namespace, and the objects it checks (ClusterClaims, served on the managed cluster).
    for p in of_kind(&pack, "Policy") {
        for t in templates(p) {
            let what = format!("the template {} of Policy {}", name(t), name(p));
            // The CRD lists Inform and Enforce only: InformOnly is the framework's value for a
            // template, not one a ConfigurationPolicy may hold.
            refused(&hub, t, cluster, "Unsupported value: \"InformOnly\"", &what).await?;
            accepted(&hub, &as_created(t, "inform"), cluster, &what).await?;
            for o in t["spec"]["object-templates"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let d = &o["objectDefinition"];
                accepted(
                    &spoke,
                    d,
                    cluster,
                    &format!("{what}: the {} {} it checks", d["kind"], name(d)),
                )
                .await?;
            }
        }
    }

    // 3. The checks bite: an enum, a required field, a CEL rule, an unknown field.
    negative_cases(&hub, &pack, &cgu[0], &curator[0], cluster).await?;

    // 4. The pack's Placement selects the OpenShift clusters with the add-on (the registration
    // controller's feature label), as the real placement controller decides.
    placement_selects(env, &hub, &pack, cluster).await?;
    eprintln!(
        "acm_recipes: {} pack objects, 2 recipes, their templates and claims valid for the real CRDs; target {target}; {:.1}s",
        pack.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

async fn negative_cases(
    hub: &Client,
    pack: &[Value],
    cgu: &Value,
    curator: &Value,
    cluster: &str,
) -> Result<(), BoxError> {
    let policy = of_kind(pack, "Policy")[0].clone();
    let mut p = policy.clone();
    p["spec"]["remediationAction"] = json!("InformOnly");
    refused(
        hub,
        &p,
        POLICY_NAMESPACE,
        "Unsupported value: \"InformOnly\"",
        "a Policy whose parent says InformOnly",
    )
    .await?;
    let mut p = policy.clone();
    p["spec"]["remediationActon"] = json!("inform");
    refused(
        hub,
        &p,
        POLICY_NAMESPACE,
        ".spec.remediationActon: field not declared in schema",
        "a misspelt field",
    )
    .await?;
    let mut b = of_kind(pack, "PlacementBinding")[0].clone();
    b["placementRef"]["apiGroup"] = json!("apps");
    refused(
        hub,
        &b,
        POLICY_NAMESPACE,
        "Unsupported value: \"apps\"",
        "a PlacementBinding to another group",
    )
    .await?;
    let mut t = as_created(templates(&policy)[0], "inform");
    t["spec"]["object-templates"][0]["complianceType"] = json!("musthav");
    refused(
        hub,
        &t,
        cluster,
        "Unsupported value: \"musthav\"",
        "a ConfigurationPolicy with a wrong complianceType",
    )
    .await?;
    let mut c = curator.clone();
    c["spec"]["upgrade"]["intermediateUpdate"] = json!("4.17.20");
    c["spec"]["upgrade"]["desiredUpdate"] = json!("");
    refused(
        hub,
        &c,
        cluster,
        "The intermediateUpdate cannot be created if desiredUpdate is missing or empty",
        "a ClusterCurator breaking a CEL rule",
    )
    .await?;
    let mut g = cgu.clone();
    if let Some(s) = g["spec"]["remediationStrategy"].as_object_mut() {
        s.remove("maxConcurrency");
    }
    refused(
        hub,
        &g,
        POLICY_NAMESPACE,
        "maxConcurrency: Required value",
        "a ClusterGroupUpgrade without maxConcurrency",
    )
    .await?;
    Ok(())
}

/// The pack applied for real (no governance controller acts on it here): its Placement selects
/// `cluster` (whose add-on is enabled: the registration controller labels its ManagedCluster
/// `feature.open-cluster-management.io/addon-update-status`) only once it is labelled
/// `vendor=OpenShift`, as ACM labels OpenShift clusters.
async fn placement_selects(
    env: &OcmEnv,
    hub: &Client,
    pack: &[Value],
    cluster: &str,
) -> Result<(), BoxError> {
    let placement = name(of_kind(pack, "Placement")[0]).to_string();
    let clusters: Api<DynamicObject> = Api::all_with(hub.clone(), &ocm::kinds::managed_cluster());
    poll_until(
        TIMEOUT,
        &format!("ManagedCluster {cluster} labelled {FEATURE_LABEL}"),
        || async {
            clusters
                .get_opt(cluster)
                .await
                .ok()?
                .filter(|mc| mc.labels().contains_key(FEATURE_LABEL))
        },
    )
    .await?;
    let file = env.dir().join("acm-recipes-pack.json");
    std::fs::write(
        &file,
        json!({"apiVersion": "v1", "kind": "List", "items": pack}).to_string(),
    )?;
    let file = file.display().to_string();
    env.kubectl_hub(["apply", "--server-side", "-f", &file])
        .await?;
    let decisions: Api<DynamicObject> = Api::namespaced_with(
        hub.clone(),
        POLICY_NAMESPACE,
        &ocm::kinds::placement_decision(),
    );
    let selector = format!("cluster.open-cluster-management.io/placement={placement}");
    // Decided once without the vendor label: not selected.
    poll_until(
        TIMEOUT,
        &format!("Placement {placement}'s first decision"),
        || async {
            let list = decisions
                .list(&ListParams::default().labels(&selector))
                .await
                .ok()?;
            (!list.items.is_empty()).then_some(())
        },
    )
    .await?;
    let before = ocm::placement_decisions(hub, POLICY_NAMESPACE, &placement).await?;
    let t = Instant::now();
    let labelled = env
        .kubectl_hub([
            "label",
            "--overwrite",
            "managedcluster",
            cluster,
            "vendor=OpenShift",
        ])
        .await;
    let selected = poll_until(
        TIMEOUT,
        &format!("Placement {placement} selecting {cluster}"),
        || async {
            let d = ocm::placement_decisions(hub, POLICY_NAMESPACE, &placement)
                .await
                .ok()?;
            d.contains(cluster).then_some(())
        },
    )
    .await;
    let _ = env
        .kubectl_hub(["label", "managedcluster", cluster, "vendor-"])
        .await;
    let _ = env
        .kubectl_hub(["delete", "--ignore-not-found", "--wait=false", "-f", &file])
        .await;
    labelled?;
    if before.contains(cluster) {
        return Err(format!(
            "Placement {placement} selected {cluster} without vendor=OpenShift: {before:?}"
        )
        .into());
    }
    selected?;
    eprintln!(
        "acm_recipes: Placement {placement} selected {cluster} {:.1}s after it was labelled vendor=OpenShift",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
