//! What the add-on holds survives ACM's own lifecycle (issue #47 items 1 and 2), checked on the
//! checked-in manifests:
//!
//! - every hub object of `config/acm` (and of `config/acm-placement`, and what their
//!   kustomizations pull in from elsewhere: our CRDs) carries ACM's backup label, so that a hub
//!   restore brings the add-on's definition back before the klusterlets evict its ManifestWorks;
//! - both add-on templates mark our CRDs and the agent's namespace (its UpdateHistory) to be
//!   orphaned when the add-on goes, and nothing else.
//! - `config/acm-placement`'s two Placements (issue #47 item 3) select the same clusters, in
//!   the same decision groups; only the rollout one lets offline clusters go, and it is listed
//!   last (the one that configures a cluster both select).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use update_status_controllers::acm_manifests::{BACKUP_LABEL, DELETION_ORPHAN};

fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

fn docs(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_saphyr::from_multiple::<Value>(&text)
        .unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
        .into_iter()
        .filter(|v| !v.is_null())
        .collect()
}

fn is_object(v: &Value) -> bool {
    v["apiVersion"].is_string() && v["kind"].is_string() && v["metadata"].is_object()
}

/// The YAML files of a directory tree, and of every directory or file a kustomization there
/// names outside it (`../crd`).
fn files(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        // `hosted/agent`: the hosted agent's overlay, rendered into its AddOnTemplate
        // (`make manifests`), never applied on the hub.
        if p.is_dir() && p.file_name().is_some_and(|n| n == "agent") {
            continue;
        }
        if p.is_dir() {
            files(&p, out);
            continue;
        }
        let yaml = p.extension().is_some_and(|x| x == "yaml" || x == "yml");
        if !yaml {
            continue;
        }
        if p.file_name().is_some_and(|n| n == "kustomization.yaml") {
            for k in docs(&p) {
                for r in k["resources"].as_array().into_iter().flatten() {
                    let Some(r) = r.as_str() else { continue };
                    let target = dir.join(r);
                    let Ok(target) = target.canonicalize() else {
                        panic!("{} names {r}, which does not exist", p.display())
                    };
                    if target.is_dir() && !out.iter().any(|f| f.starts_with(&target)) {
                        files(&target, out);
                    } else if target.is_file() {
                        out.insert(target);
                    }
                }
            }
            continue;
        }
        if let Ok(p) = p.canonicalize() {
            out.insert(p);
        }
    }
}

#[test]
fn every_hub_object_of_config_acm_carries_the_backup_label() {
    let mut all = BTreeSet::new();
    for root in ["acm", "acm-placement"] {
        files(&config().join(root), &mut all);
    }
    // Files of config/acm that hold no Kubernetes object (rules for the hub's Thanos ruler and
    // their promtool test, an Ansible playbook): nothing to back up by label.
    let not_objects = [
        "fleet-rules.yaml",
        "fleet-rules.test.yaml",
        "wait-update-complete.yml",
    ];
    let mut unlabelled = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &all {
        let objects: Vec<Value> = docs(f).into_iter().filter(is_object).collect();
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if objects.is_empty() {
            assert!(
                not_objects.contains(&name),
                "{} holds no Kubernetes object: say why in this test",
                f.display()
            );
            continue;
        }
        for o in objects {
            let id = format!(
                "{} {} ({})",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default(),
                f.display()
            );
            if o["metadata"]["labels"].get(BACKUP_LABEL).is_none() {
                unlabelled.push(id.clone());
            } else {
                assert_ne!(
                    o["metadata"]["labels"][BACKUP_LABEL], "cluster-activation",
                    "{id}: restored with the hub's resources, before the managed clusters"
                );
            }
            seen.insert(id);
        }
    }
    assert!(
        unlabelled.is_empty(),
        "without {BACKUP_LABEL}, ACM's hub backup leaves these out: {unlabelled:#?}"
    );
    // What must come back is in what was checked: the add-ons' definitions, the deployment
    // config, the hub controller and its RBAC, the admission policies, our CRDs, the placements.
    for want in [
        "ClusterManagementAddOn update-status ",
        "ClusterManagementAddOn update-status-hosted ",
        "AddOnTemplate update-status-",
        "ClusterRole open-cluster-management:update-status:agent ",
        "AddOnDeploymentConfig update-status ",
        "Deployment update-status-hub ",
        "ClusterRoleBinding ",
        "ValidatingAdmissionPolicy update-status-hub-copies ",
        "ValidatingAdmissionPolicyBinding update-status-hub-quota-required ",
        "CustomResourceDefinition updatehistories.update.openshift.io ",
        "CustomResourceDefinition updateinsights.update.openshift.io ",
        "Placement update-status ",
        "Placement update-status-hosted ",
    ] {
        assert!(
            seen.iter().any(|s| s.starts_with(want)),
            "{want}… among the checked objects: {seen:#?}"
        );
    }
}

/// The manifests of the AddOnTemplate in `file`.
fn template_manifests(file: &str) -> Vec<Value> {
    let addon = docs(&config().join(file));
    let template = addon
        .iter()
        .find(|d| d["kind"] == "AddOnTemplate")
        .unwrap_or_else(|| panic!("{file} has no AddOnTemplate"));
    template["spec"]["agentSpec"]["workload"]["manifests"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{file}: the template has no manifests"))
}

#[test]
fn the_templates_orphan_the_crds_and_the_agent_namespace_only() {
    for (file, namespace) in [
        ("acm/addon.yaml", "openshift-update-status"),
        ("acm/hosted/addon.yaml", "openshift-update-status-hosted"),
    ] {
        let manifests = template_manifests(file);
        let orphaned: BTreeSet<String> = manifests
            .iter()
            .filter(|m| m["metadata"]["annotations"].get(DELETION_ORPHAN).is_some())
            .map(|m| {
                format!(
                    "{}/{}",
                    m["kind"].as_str().unwrap_or_default(),
                    m["metadata"]["name"].as_str().unwrap_or_default()
                )
            })
            .collect();
        let mut want: BTreeSet<String> = manifests
            .iter()
            .filter(|m| m["kind"] == "CustomResourceDefinition")
            .map(|m| {
                format!(
                    "CustomResourceDefinition/{}",
                    m["metadata"]["name"].as_str().unwrap_or_default()
                )
            })
            .collect();
        assert_eq!(want.len(), 4, "{file}: our four CRDs are shipped");
        want.insert(format!("Namespace/{namespace}"));
        if file == "acm/addon.yaml" {
            // ACM observability's namespace, which it may have created first (issue #49).
            want.insert("Namespace/open-cluster-management-addon-observability".into());
        }
        assert_eq!(orphaned, want, "{file}: what outlives the add-on");
    }
}

/// The install strategy's Placements, in order, from config/acm-placement's kustomization patch.
fn install_strategy_placements() -> Vec<String> {
    let k = docs(&config().join("acm-placement/kustomization.yaml"));
    let patch = k[0]["patches"][0]["patch"]
        .as_str()
        .unwrap_or_else(|| panic!("config/acm-placement/kustomization.yaml: no patch"))
        .to_string();
    let ops: Vec<Value> = serde_saphyr::from_str(&patch)
        .unwrap_or_else(|e| panic!("the install strategy patch is not YAML: {e}"));
    ops.iter()
        .filter(|op| op["path"] == "/spec/installStrategy")
        .flat_map(|op| {
            op["value"]["placements"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|p| p["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_rollout_placement_selects_the_install_placements_clusters_and_comes_last() {
    let placements = docs(&config().join("acm-placement/placement.yaml"));
    let by_name = |name: &str| -> &Value {
        placements
            .iter()
            .find(|p| p["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("placement.yaml has no Placement {name}"))
    };
    let install = by_name("update-status");
    let rollout = by_name("update-status-rollout");
    for field in ["clusterSets", "predicates", "decisionStrategy"] {
        assert_eq!(
            install["spec"][field], rollout["spec"][field],
            "{field}: a cluster only in the rollout Placement would lose the add-on with its taint"
        );
    }
    let seconds = |p: &Value| -> Vec<Option<u64>> {
        p["spec"]["tolerations"]
            .as_array()
            .unwrap_or_else(|| panic!("{} has no tolerations", p["metadata"]["name"]))
            .iter()
            .map(|t| t["tolerationSeconds"].as_u64())
            .collect()
    };
    assert_eq!(
        seconds(install),
        vec![None, None],
        "the install tolerates forever"
    );
    assert!(
        seconds(rollout)
            .iter()
            .all(|s| s.is_some_and(|s| s < 25 * 60)),
        "the rollout lets an offline cluster go before progressDeadline (30m, less the 5m grace)"
    );
    assert_eq!(
        install_strategy_placements(),
        ["update-status", "update-status-rollout"],
        "the rollout Placement last: it configures the clusters both select"
    );
}
