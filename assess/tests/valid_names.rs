//! Every name and label value update-status derives from input data passes the API server's own
//! validation (apimachinery `IsDNS1123Subdomain` and `IsValidLabelValue`, their regexes ported
//! here), and every status string fits its schema limit, for arbitrary Unicode input.

use std::sync::LazyLock;

use proptest::prelude::*;
use regex::Regex;
use update_status_api::crd::*;
use update_status_assess::naming;

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
