//! Every name and label value update-status derives from input data passes the API server's own
//! validation (apimachinery `IsDNS1123Subdomain` and `IsValidLabelValue`, their regexes ported
//! here), and every status string fits its schema limit, for arbitrary Unicode input.

use std::sync::LazyLock;

use proptest::prelude::*;
use regex::Regex;
use update_status_api::crd::*;
use update_status_assess::test_support::*;
use update_status_assess::{ClusterInputs, compose, naming};

/// apimachinery `dns1123SubdomainFmt` (`IsDNS1123Subdomain`: also at most 253 characters).
fn is_dns1123_subdomain(s: &str) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        const LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
        Regex::new(&format!("^{LABEL}(\\.{LABEL})*$")).expect("regex")
    });
    s.len() <= 253 && RE.is_match(s)
}

/// apimachinery `labelValueFmt` (`IsValidLabelValue`: also at most 63 characters; empty is valid).
fn is_label_value(s: &str) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new("^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$").expect("regex")
    });
    s.len() <= 63 && RE.is_match(s)
}

/// Nasty inputs seen in the wild or built to break naive slugs.
const NASTY: &[&str] = &[
    "weird..name.-x",
    "-leading",
    "trailing-",
    ".dot.",
    "UPPER_case name",
    "ümlaut-Ω-名前",
    "\u{1b}]0;title\u{7}",
    "",
    "-",
    "..",
    "a.-.b",
];

fn health(source: &str, kind: &str, name: &str, pool: &str) -> UpdateInsightStatus {
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
            pool: Some(pool.into()),
        },
        progress: None,
        health: Some(HealthInsight {
            started_at: None,
            impact: Impact {
                level: ImpactLevel::Warning,
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

fn progress(kind: &str, name: &str) -> UpdateInsightStatus {
    UpdateInsightStatus {
        type_: InsightType::Progress,
        health: None,
        ..health("s", kind, name, "worker")
    }
}

/// Checks every derived name and label for one input.
fn check(input: &str) -> Result<(), TestCaseError> {
    let pool = naming::pool_status_name(input);
    prop_assert!(
        is_dns1123_subdomain(&pool),
        "pool name {pool:?} from {input:?}"
    );
    let sub = naming::dns_subdomain(input, 253);
    prop_assert!(is_dns1123_subdomain(&sub), "{sub:?} from {input:?}");
    let value = naming::label_value(input);
    prop_assert!(is_label_value(&value), "label {value:?} from {input:?}");
    prop_assert_eq!(value.is_empty(), input.is_empty());
    for status in [
        health(input, "Node", input, input),
        health("Alert", "Alert", input, "worker"),
        progress("Node", input),
        progress(input, "etcd"),
    ] {
        let name = naming::insight_name(&status, input);
        prop_assert!(
            is_dns1123_subdomain(&name),
            "insight {name:?} from {input:?}"
        );
        for (k, v) in naming::insight_labels(&status) {
            prop_assert!(is_label_value(&v), "label {k}={v:?} from {input:?}");
        }
    }
    for (k, v) in naming::cluster_labels(Some(input)) {
        prop_assert!(is_label_value(&v), "label {k}={v:?} from {input:?}");
    }
    let text = naming::status_text(input, limits::VERSION);
    prop_assert!(text.chars().count() <= limits::VERSION);
    Ok(())
}

#[test]
fn nasty_inputs_give_valid_names_and_labels() {
    let long_version = format!("4.18.0-{}", "x".repeat(300));
    assert_eq!(long_version.len(), 307);
    for input in NASTY.iter().copied().chain([long_version.as_str()]) {
        check(input).expect("valid");
    }
    // Valid values are kept; changed ones are told apart by a hash.
    assert_eq!(naming::pool_status_name("worker"), "worker");
    assert_eq!(naming::label_value("4.18.0-rc.1"), "4.18.0-rc.1");
    let weird = naming::dns_subdomain("weird..name.-x", 253);
    assert!(weird.starts_with("weird.name.x-"), "{weird}");
    assert_ne!(weird, naming::dns_subdomain("weird.name.x", 253));
}

/// The whole composition of a cluster whose versions are 307 characters long, with odd pool
/// and node names: every object's name and labels are valid, every version within its limit
/// (a 307-character history `version` made every node insight invalid before).
#[test]
fn a_cluster_with_overlong_versions_and_odd_names_gives_valid_objects() {
    let version = format!("4.18.0-{}", "x".repeat(300));
    let now: jiff::Timestamp = "2026-01-01T12:00:00Z".parse().expect("time");
    let started = Some(now - jiff::SignedDuration::from_mins(30));
    let cv = cv(
        &version,
        history(&[("Partial", &version, started, None)]),
        vec![cond("Progressing", "True", started)],
    );
    let pools = [
        pool(
            "weird..name.-x",
            "rendered-w",
            label_selector("role/w"),
            false,
        ),
        pool("master", "rendered-m", label_selector("role/m"), false),
    ];
    let mcs = [
        mc("rendered-w", Some(&version)),
        mc("rendered-m", Some(&version)),
    ];
    let mco = [
        ("currentConfig", "rendered-w"),
        ("desiredConfig", "rendered-w"),
        ("state", "Done"),
    ];
    let nodes = [
        node(
            "Node_A..b-",
            &["role/w"],
            &mco,
            vec![cond("Ready", "True", started)],
        ),
        node(&"n".repeat(300), &["role/w"], &mco, vec![]),
    ];
    let cos = [co("etcd", &version, vec![])];
    let inputs = ClusterInputs {
        cluster_version: Some(&cv),
        cluster_operators: &cos,
        pools: &pools,
        machine_configs: &mcs,
        nodes: &nodes,
        ..Default::default()
    };
    let base = compose::base_labels(Some(&version));
    let desired = compose::desired_cluster(&inputs, &compose::Existing::default(), &base, now);
    let cp = desired.control_plane.expect("a control plane");
    assert!(cp.status.versions.target.chars().count() <= limits::VERSION);
    assert_eq!(desired.worker_pools.len(), 1);
    for p in &desired.worker_pools {
        assert!(is_dns1123_subdomain(&p.name), "{}", p.name);
        assert!(p.status.target_version.chars().count() <= limits::VERSION);
        assert!(
            p.labels.values().all(|v| is_label_value(v)),
            "{:?}",
            p.labels
        );
    }
    let mut node_versions = 0;
    for i in &desired.insights {
        assert!(is_dns1123_subdomain(&i.name), "{}", i.name);
        assert!(
            i.labels.values().all(|v| is_label_value(v)),
            "{:?}",
            i.labels
        );
        if let Some(v) = i.status.progress.as_ref().and_then(|p| p.version.as_ref()) {
            assert!(v.current.chars().count() <= limits::VERSION, "{}", i.name);
            assert!(v.target.chars().count() <= limits::VERSION, "{}", i.name);
            node_versions += usize::from(i.status.resource.kind == "Node");
        }
    }
    assert_eq!(node_versions, nodes.len(), "both nodes' progress insights");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn any_unicode_gives_valid_names_and_labels(input in any::<String>()) {
        check(&input)?;
    }

    #[test]
    fn name_like_inputs_give_valid_names_and_labels(input in "[-a-zA-Z0-9._ ]{0,300}") {
        check(&input)?;
    }

    #[test]
    fn derived_names_are_stable(input in any::<String>()) {
        prop_assert_eq!(naming::pool_status_name(&input), naming::pool_status_name(&input));
        prop_assert_eq!(naming::label_value(&input), naming::label_value(&input));
    }
}
