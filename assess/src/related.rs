//! `related`: the further objects a health insight points at, so that an administrator sees
//! the cause without digging. Every entry is read from an input; where two inputs disagree
//! nothing is said rather than a guess. One function per rule, each with its unit tests:
//!
//! - [`of_alert`] (rule A): the objects a firing alert's labels name (`pod`,
//!   `poddisruptionbudget`, `deployment`, `daemonset`, `statefulset`, `job`, `service`,
//!   `node`, `namespace`), each with its kind and namespace.
//! - [`of_node`] (rule N): a node insight's MachineConfigPool and, where known, the
//!   MachineConfig the node is going to (its `desiredConfig` annotation).
//! - [`parse_drain_failure`] (rule D1): the pods, and the PodDisruptionBudgets, a failed
//!   drain's message names (`error when evicting pods/"NAME" -n "NAMESPACE"`, `The disruption
//!   budget NAME ...`, `PodDisruptionBudget NAMESPACE/NAME`).
//! - [`drain_blockers`] (rules D2 and D3): when the message names no budget (real 4.16
//!   messages say only `failed to drain node: X after 1 hour`), what an administrator would
//!   look up: the pods on the node that a PodDisruptionBudget allowing 0 disruptions selects,
//!   and those budgets ([`DrainEvidence`]: read only for nodes whose drain fails); a firing
//!   `PodDisruptionBudgetAtLimit`/`PodDisruptionBudgetLimit` alert corroborates a budget, and
//!   a budget contradicted by those alerts (alerts fire for other budgets of its namespace,
//!   none for it) is left out.
//! - [`bounded`]: at most [`limits::RELATED_SHOWN`] entries (duplicates dropped), plus the
//!   count of the rest.

use std::collections::{BTreeMap, BTreeSet};

use update_status_api::crd::{ResourceRef, limits};
use update_status_api::input::{Alert, Pod, PodDisruptionBudget};

use crate::format::ellipsize;

/// The alerts about PodDisruptionBudgets at their limit (D.9 shows them whenever they fire):
/// they corroborate or contradict what a failed drain's message says.
pub const PDB_ALERTS: [&str; 2] = ["PodDisruptionBudgetLimit", "PodDisruptionBudgetAtLimit"];

/// Whether `alert` comes from the platform rather than from a tenant's rule (user-workload
/// monitoring feeds the same Thanos Querier), by what a tenant's rule cannot set: the alert is
/// about a namespace `openshift-*` or `kube-*`. User-workload monitoring sets the `namespace`
/// label of every alert of a tenant's rule to the rule's own namespace (its Prometheus and
/// Thanos Ruler enforce it), and no tenant can create a namespace of those prefixes (project
/// requests refuse them). Labels a rule may set are not trusted: real alerts as Thanos Querier
/// answers them carry neither `prometheus` nor `openshift_io_alert_source`, and a tenant's rule
/// can set both. The platform's alerts about a tenant's objects (`PodDisruptionBudgetAtLimit`
/// about `shop/checkout`) cannot be told from a tenant's alert of that name, so they are not
/// counted as the platform's here (their text stays `oc`'s: see `crate::alerts`). Limit: a
/// namespace an administrator exempts from the label's enforcement
/// (`namespacesWithoutLabelEnforcement` in `user-workload-monitoring-config`) can forge it.
pub fn is_platform(alert: &Alert) -> bool {
    alert
        .labels
        .get("namespace")
        .is_some_and(|ns| is_platform_namespace(ns))
}

/// A namespace only the platform has: `openshift-*` or `kube-*` (reserved prefixes).
pub fn is_platform_namespace(namespace: &str) -> bool {
    ["openshift-", "kube-"]
        .iter()
        .any(|p| namespace.len() > p.len() && namespace.starts_with(p))
}

/// API group of MachineConfigPools and MachineConfigs.
const MCO_GROUP: &str = "machineconfiguration.openshift.io";

/// A reference, its texts cut to the schema's limits.
pub fn reference(group: &str, kind: &str, namespace: Option<&str>, name: &str) -> ResourceRef {
    ResourceRef {
        group: ellipsize(group, limits::RESOURCE_GROUP),
        kind: ellipsize(kind, limits::RESOURCE_KIND),
        name: ellipsize(name, limits::RESOURCE_NAME),
        namespace: namespace
            .filter(|n| !n.is_empty())
            .map(|n| ellipsize(n, limits::NAMESPACE)),
    }
}

/// A Pod.
pub fn pod(namespace: &str, name: &str) -> ResourceRef {
    reference("", "Pod", Some(namespace), name)
}

/// A PodDisruptionBudget.
pub fn pod_disruption_budget(namespace: &str, name: &str) -> ResourceRef {
    reference("policy", "PodDisruptionBudget", Some(namespace), name)
}

/// Alert labels that name an object, in the order their objects are listed (the most
/// specific first), with the object's group and kind and whether it lives in the alert's
/// `namespace`.
const ALERT_LABELS: [(&str, &str, &str, bool); 9] = [
    ("pod", "", "Pod", true),
    ("poddisruptionbudget", "policy", "PodDisruptionBudget", true),
    ("deployment", "apps", "Deployment", true),
    ("daemonset", "apps", "DaemonSet", true),
    ("statefulset", "apps", "StatefulSet", true),
    ("job", "batch", "Job", true),
    ("service", "", "Service", true),
    ("node", "", "Node", false),
    ("namespace", "", "Namespace", false),
];

/// Rule A: the objects an alert's labels name. A namespaced object needs the `namespace`
/// label (without it the object cannot be told, so it is left out).
pub fn of_alert(labels: &BTreeMap<String, String>) -> Vec<ResourceRef> {
    let get = |k: &str| labels.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let namespace = get("namespace");
    ALERT_LABELS
        .iter()
        .filter_map(|&(label, group, kind, namespaced)| {
            let name = get(label)?;
            match (namespaced, namespace) {
                (true, None) => None,
                (true, ns) => Some(reference(group, kind, ns, name)),
                (false, _) => Some(reference(group, kind, None, name)),
            }
        })
        .collect()
}

/// Rule N: a node's MachineConfigPool and, when known, the MachineConfig it is going to.
pub fn of_node(pool: &str, desired_config: Option<&str>) -> Vec<ResourceRef> {
    let mut out = Vec::with_capacity(2);
    if !pool.is_empty() {
        out.push(reference(MCO_GROUP, "MachineConfigPool", None, pool));
    }
    if let Some(mc) = desired_config.filter(|c| !c.is_empty()) {
        out.push(reference(MCO_GROUP, "MachineConfig", None, mc));
    }
    out
}

/// What a failed drain's message says (rule D1): the pods whose eviction failed and the
/// PodDisruptionBudgets it names, as (namespace, name), in message order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DrainFailure {
    /// Pods whose eviction failed.
    pub pods: Vec<(String, String)>,
    /// PodDisruptionBudgets the message names.
    pub budgets: Vec<(String, String)>,
}

impl DrainFailure {
    /// The message names no budget: the budgets must be looked up (rule D2).
    pub fn needs_lookup(&self) -> bool {
        self.budgets.is_empty()
    }
}

/// Rule D1: reads a machine-config daemon's (or cluster-api's) drain failure. `None` when the
/// message is not about a failed drain.
pub fn parse_drain_failure(message: &str) -> Option<DrainFailure> {
    const EVICTING: &str = "error when evicting pods/";
    if !message.contains("failed to drain node") && !message.contains(EVICTING) {
        return None;
    }
    let mut out = DrainFailure::default();
    for (i, _) in message.match_indices(EVICTING) {
        let rest = &message[i + EVICTING.len()..];
        let Some((name, rest)) = quoted(rest) else {
            continue;
        };
        let Some(rest) = rest.strip_prefix(" -n ") else {
            continue;
        };
        let Some((namespace, rest)) = quoted(rest) else {
            continue;
        };
        push_unique(&mut out.pods, (namespace.clone(), name));
        // What this eviction's error says, up to the next eviction.
        let this = rest.split(EVICTING).next().unwrap_or_default();
        if let Some(budget) = this
            .split("The disruption budget ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .filter(|b| valid_name(b))
        {
            push_unique(&mut out.budgets, (namespace.clone(), budget.to_string()));
        }
    }
    for (i, _) in message.match_indices("PodDisruptionBudget ") {
        let word = message[i + "PodDisruptionBudget ".len()..]
            .split(|c: char| c.is_whitespace() || c == ':' || c == ',' || c == ')')
            .next()
            .unwrap_or_default();
        if let Some((ns, name)) = word.split_once('/')
            && valid_name(ns)
            && valid_name(name)
        {
            push_unique(&mut out.budgets, (ns.to_string(), name.to_string()));
        }
    }
    Some(out)
}

/// A Go-quoted string at the start of `s` (`"name"`): the name and what follows.
fn quoted(s: &str) -> Option<(String, &str)> {
    let rest = s.strip_prefix('"')?;
    let end = rest.find('"')?;
    let name = &rest[..end];
    valid_name(name).then(|| (name.to_string(), &rest[end + 1..]))
}

/// A plausible object name or namespace (DNS-1123 characters; what a message quotes).
fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= limits::RESOURCE_NAME
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
}

fn push_unique<T: PartialEq>(v: &mut Vec<T>, t: T) {
    if !v.contains(&t) {
        v.push(t);
    }
}

/// What is known beyond the Nodes about failing drains: the pods on the nodes whose drain
/// fails (read only for those), the PodDisruptionBudgets, and the firing PodDisruptionBudget
/// alerts. The controller looks the pods and budgets up; offline they come from the
/// must-gather when it holds them; the alerts from Prometheus (or `alerts.json`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrainEvidence {
    /// Pods by the name of the node they run on.
    pub pods: BTreeMap<String, Vec<Pod>>,
    /// PodDisruptionBudgets (those allowing 0 disruptions are the ones that block).
    pub budgets: Vec<PodDisruptionBudget>,
    /// Firing `PodDisruptionBudgetAtLimit`/`PodDisruptionBudgetLimit` alerts: the
    /// (namespace, name) their labels name (none read: nothing is contradicted).
    pub alerts: PdbAlerts,
}

impl DrainEvidence {
    /// From flat inputs: pods grouped by their node, the budgets, the alerts (`None`: not read).
    pub fn from_inputs(
        pods: &[Pod],
        budgets: &[PodDisruptionBudget],
        alerts: Option<&[Alert]>,
    ) -> Self {
        let mut by_node: BTreeMap<String, Vec<Pod>> = BTreeMap::new();
        for p in pods.iter().filter(|p| !p.spec.node_name.is_empty()) {
            by_node
                .entry(p.spec.node_name.clone())
                .or_default()
                .push(p.clone());
        }
        DrainEvidence {
            pods: by_node,
            budgets: budgets.to_vec(),
            alerts: alerts.map(PdbAlerts::of_alerts).unwrap_or_default(),
        }
    }

    /// From a cluster's inputs ([`crate::ClusterInputs`]: its pods, budgets and alerts).
    pub fn of_inputs(inputs: &crate::inputs::ClusterInputs<'_>) -> Self {
        Self::from_inputs(inputs.pods, inputs.pod_disruption_budgets, inputs.alerts)
    }

    /// Nothing known beyond the Nodes.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty() && self.budgets.is_empty() && self.alerts.0.is_empty()
    }
}

/// The PodDisruptionBudgets firing PodDisruptionBudget alerts name, as (namespace, name);
/// from Prometheus' alerts ([`PdbAlerts::of_alerts`]) or from our alert insights
/// ([`crate::alerts::pdb_alerts_of_insights`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PdbAlerts(pub BTreeSet<(String, String)>);

impl PdbAlerts {
    /// From Prometheus' alerts: the firing (not pending) `PodDisruptionBudgetAtLimit` and
    /// `PodDisruptionBudgetLimit` alerts of the platform ([`is_platform`]) with `namespace`
    /// and `poddisruptionbudget` labels.
    pub fn of_alerts(alerts: &[Alert]) -> Self {
        PdbAlerts(
            alerts
                .iter()
                .filter(|a| a.state != "pending" && is_platform(a))
                .filter(|a| {
                    a.labels
                        .get("alertname")
                        .is_some_and(|n| PDB_ALERTS.contains(&n.as_str()))
                })
                .filter_map(|a| {
                    let ns = a.labels.get("namespace").filter(|v| !v.is_empty())?;
                    let pdb = a
                        .labels
                        .get("poddisruptionbudget")
                        .filter(|v| !v.is_empty())?;
                    Some((ns.clone(), pdb.clone()))
                })
                .collect(),
        )
    }

    /// Is the budget (namespace, name) contradicted: alerts fire for other budgets of its
    /// namespace and none for it?
    fn contradicts(&self, namespace: &str, name: &str) -> bool {
        let in_namespace: Vec<_> = self.0.iter().filter(|(ns, _)| ns == namespace).collect();
        !in_namespace.is_empty() && !in_namespace.iter().any(|(_, n)| n == name)
    }
}

/// Rules D1–D3: the pods and PodDisruptionBudgets blocking the drain of `node` (pods first,
/// then budgets), from the message's `failure` and the `evidence`.
///
/// - The pods the message names are listed (an input says so).
/// - The budgets the message names are listed unless the alerts contradict them.
/// - When the message names no budget and the node's pods were read: the budgets allowing 0
///   disruptions that select one of the node's pods (one the message names, if it names any),
///   unless the alerts contradict them, and the pods they select on the node.
pub fn drain_blockers(
    node: &str,
    failure: &DrainFailure,
    evidence: &DrainEvidence,
) -> Vec<ResourceRef> {
    let mut pods: Vec<(String, String)> = failure.pods.clone();
    let mut budgets: Vec<(String, String)> = failure
        .budgets
        .iter()
        .filter(|(ns, name)| !evidence.alerts.contradicts(ns, name))
        .cloned()
        .collect();
    if failure.needs_lookup()
        && let Some(on_node) = evidence.pods.get(node)
    {
        let candidates: Vec<&Pod> = on_node
            .iter()
            .filter(|p| {
                failure.pods.is_empty()
                    || failure.pods.iter().any(|(ns, name)| {
                        p.metadata.namespace.as_deref() == Some(ns.as_str())
                            && p.metadata.name.as_deref() == Some(name.as_str())
                    })
            })
            .collect();
        for b in evidence.budgets.iter().filter(|b| b.at_limit()) {
            let (Some(ns), Some(name)) = (&b.metadata.namespace, &b.metadata.name) else {
                continue;
            };
            if evidence.alerts.contradicts(ns, name) {
                continue;
            }
            let selected: Vec<&&Pod> = candidates.iter().filter(|p| b.selects(p)).collect();
            if selected.is_empty() {
                continue;
            }
            push_unique(&mut budgets, (ns.clone(), name.clone()));
            for p in selected {
                if let (Some(pns), Some(pname)) = (&p.metadata.namespace, &p.metadata.name) {
                    push_unique(&mut pods, (pns.clone(), pname.clone()));
                }
            }
        }
    }
    pods.iter()
        .map(|(ns, name)| pod(ns, name))
        .chain(
            budgets
                .iter()
                .map(|(ns, name)| pod_disruption_budget(ns, name)),
        )
        .collect()
}

/// At most [`limits::RELATED_SHOWN`] entries, in order, duplicates dropped; and how many
/// more there are.
pub fn bounded(refs: impl IntoIterator<Item = ResourceRef>) -> (Vec<ResourceRef>, u32) {
    let mut out: Vec<ResourceRef> = Vec::new();
    let mut more = 0u32;
    for r in refs {
        if out.contains(&r) {
            continue;
        }
        if out.len() < limits::RELATED_SHOWN {
            out.push(r);
        } else {
            more = more.saturating_add(1);
        }
    }
    (out, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn names(refs: &[ResourceRef]) -> Vec<String> {
        refs.iter()
            .map(|r| match &r.namespace {
                Some(ns) => format!("{}/{ns}/{}", r.kind, r.name),
                None => format!("{}/{}", r.kind, r.name),
            })
            .collect()
    }

    #[test]
    fn rule_a_an_alert_names_the_objects_of_its_labels_with_kind_and_namespace() {
        let refs = of_alert(&labels(&[
            ("alertname", "PodDisruptionBudgetAtLimit"),
            ("namespace", "shop"),
            ("poddisruptionbudget", "checkout-pdb"),
            ("severity", "warning"),
        ]));
        assert_eq!(
            names(&refs),
            ["PodDisruptionBudget/shop/checkout-pdb", "Namespace/shop"]
        );
        assert_eq!(refs[0].group, "policy");
        let refs = of_alert(&labels(&[
            ("alertname", "KubePodCrashLooping"),
            ("namespace", "openshift-etcd"),
            ("pod", "etcd-0"),
            ("deployment", "d"),
            ("daemonset", "ds"),
            ("statefulset", "ss"),
            ("job", "j"),
            ("service", "svc"),
            ("node", "worker-1"),
            ("container", "etcd"),
        ]));
        assert_eq!(
            names(&refs),
            [
                "Pod/openshift-etcd/etcd-0",
                "Deployment/openshift-etcd/d",
                "DaemonSet/openshift-etcd/ds",
                "StatefulSet/openshift-etcd/ss",
                "Job/openshift-etcd/j",
                "Service/openshift-etcd/svc",
                "Node/worker-1",
                "Namespace/openshift-etcd"
            ]
        );
        assert_eq!(refs[1].group, "apps");
        assert_eq!(refs[4].group, "batch");
    }

    #[test]
    fn rule_a_without_a_namespace_label_namespaced_objects_cannot_be_told() {
        let refs = of_alert(&labels(&[
            ("alertname", "X"),
            ("pod", "p"),
            ("node", "n"),
            ("namespace", ""),
        ]));
        assert_eq!(names(&refs), ["Node/n"]);
        assert!(of_alert(&labels(&[("alertname", "Watchdog")])).is_empty());
    }

    #[test]
    fn rule_n_a_node_points_at_its_pool_and_target_machine_config() {
        let refs = of_node("worker", Some("rendered-worker-abc"));
        assert_eq!(
            names(&refs),
            [
                "MachineConfigPool/worker",
                "MachineConfig/rendered-worker-abc"
            ]
        );
        assert!(refs.iter().all(|r| r.group == MCO_GROUP));
        assert_eq!(
            names(&of_node("worker", None)),
            ["MachineConfigPool/worker"]
        );
        assert_eq!(
            names(&of_node("worker", Some(""))),
            ["MachineConfigPool/worker"]
        );
    }

    /// The simulator's message (and the shape of the real eviction error it quotes).
    const SIMULATED: &str = "failed to drain node: worker-1 after 1 hour. Please see machine-config-controller logs for more information: error when evicting pods/\"checkout-7f9c6d5b4-qx2lp\" -n \"shop\": Cannot evict pod as it would violate the pod's disruption budget (PodDisruptionBudget shop/checkout-pdb: 0 disruptions allowed)";
    /// A real 4.16 message (testdata/oc-status/4.16.0-ec2-control-plane-updated-pdb-prohibits-draining).
    const REAL_416: &str = "failed to drain node: build0-gstfj-ci-tests-worker-b-4h7pn after 1 hour. Please see machine-config-controller logs for more information";

    #[test]
    fn rule_d1_the_message_names_the_pod_and_the_budget() {
        let f = parse_drain_failure(SIMULATED).expect("a drain failure");
        assert_eq!(
            f.pods,
            [("shop".to_string(), "checkout-7f9c6d5b4-qx2lp".to_string())]
        );
        assert_eq!(
            f.budgets,
            [("shop".to_string(), "checkout-pdb".to_string())]
        );
        assert!(!f.needs_lookup());
        // The eviction API's own words (cluster-api quotes them): the budget is in the pod's
        // namespace. Two evictions, one budget each.
        let two = "error when evicting pods/\"a-1\" -n \"ns1\": Cannot evict pod as it would violate the pod's disruption budget. The disruption budget a-pdb needs 2 healthy pods and has 2 currently\nerror when evicting pods/\"b-1\" -n \"ns2\" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.";
        let f = parse_drain_failure(two).expect("a drain failure");
        assert_eq!(
            f.pods,
            [
                ("ns1".to_string(), "a-1".to_string()),
                ("ns2".to_string(), "b-1".to_string())
            ]
        );
        assert_eq!(f.budgets, [("ns1".to_string(), "a-pdb".to_string())]);
    }

    #[test]
    fn rule_d1_a_real_416_message_names_nothing_and_asks_for_a_lookup() {
        let f = parse_drain_failure(REAL_416).expect("a drain failure");
        assert!(f.pods.is_empty() && f.budgets.is_empty());
        assert!(f.needs_lookup());
        assert_eq!(
            parse_drain_failure("Unreconcilable: ignition changed"),
            None
        );
        assert_eq!(parse_drain_failure(""), None);
    }

    #[test]
    fn rule_d1_malformed_quotes_name_nothing() {
        for m in [
            "error when evicting pods/\"unterminated -n \"ns\"",
            "error when evicting pods/\"Bad_Name\" -n \"ns\"",
            "error when evicting pods/\"p\" in \"ns\"",
            "failed to drain node: x PodDisruptionBudget not/a/ref/ ",
            "failed to drain node: x PodDisruptionBudget UPPER/case",
        ] {
            let f = parse_drain_failure(m).expect("a drain failure");
            assert_eq!(f, DrainFailure::default(), "{m}");
        }
    }

    fn pod_on(node: &str, ns: &str, name: &str, app: &str) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
            "spec": {"nodeName": node}
        }))
        .expect("pod")
    }

    fn budget(ns: &str, name: &str, app: &str, allowed: i32) -> PodDisruptionBudget {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": allowed}
        }))
        .expect("pdb")
    }

    fn evidence(pods: Vec<Pod>, budgets: Vec<PodDisruptionBudget>) -> DrainEvidence {
        DrainEvidence::from_inputs(&pods, &budgets, None)
    }

    #[test]
    fn rule_d2_a_real_message_gets_the_pods_and_the_budgets_at_their_limit() {
        let f = parse_drain_failure(REAL_416).expect("failure");
        let node = "build0-gstfj-ci-tests-worker-b-4h7pn";
        let ev = evidence(
            vec![
                pod_on(node, "shop", "checkout-1", "checkout"),
                pod_on(node, "shop", "cart-1", "cart"),
                pod_on(node, "ci", "job-1", "job"),
                pod_on("other-node", "shop", "checkout-2", "checkout"),
            ],
            vec![
                budget("shop", "checkout-pdb", "checkout", 0),
                budget("shop", "cart-pdb", "cart", 1),
                budget("ci", "job-pdb", "nothing-selected", 0),
            ],
        );
        assert_eq!(
            names(&drain_blockers(node, &f, &ev)),
            [
                "Pod/shop/checkout-1",
                "PodDisruptionBudget/shop/checkout-pdb"
            ]
        );
        // Pods of another node are not looked at; without the node's pods nothing is said.
        assert!(drain_blockers("another", &f, &ev).is_empty());
        assert!(drain_blockers(node, &f, &DrainEvidence::default()).is_empty());
    }

    #[test]
    fn rule_d2_a_named_pod_narrows_the_lookup_to_its_budgets() {
        let node = "worker-1";
        let f = parse_drain_failure(
            "failed to drain node: worker-1: error when evicting pods/\"checkout-1\" -n \"shop\" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.",
        )
        .expect("failure");
        assert!(f.needs_lookup());
        let ev = evidence(
            vec![
                pod_on(node, "shop", "checkout-1", "checkout"),
                pod_on(node, "db", "db-1", "db"),
            ],
            vec![
                budget("shop", "checkout-pdb", "checkout", 0),
                budget("db", "db-pdb", "db", 0),
            ],
        );
        assert_eq!(
            names(&drain_blockers(node, &f, &ev)),
            [
                "Pod/shop/checkout-1",
                "PodDisruptionBudget/shop/checkout-pdb"
            ]
        );
    }

    #[test]
    fn rule_d3_alerts_corroborate_and_contradictions_are_left_out() {
        // A budget of the platform's (openshift-*): only alerts about such namespaces are told
        // to be the platform's (`is_platform`).
        let msg = SIMULATED
            .replace("\"shop\"", "\"openshift-ingress\"")
            .replace("shop/", "openshift-ingress/");
        let f = parse_drain_failure(&msg).expect("failure");
        let alert = |ns: &str, pdb: &str, state: &str| Alert {
            labels: labels(&[
                ("alertname", "PodDisruptionBudgetAtLimit"),
                ("namespace", ns),
                ("poddisruptionbudget", pdb),
            ]),
            state: state.into(),
            ..Default::default()
        };
        let with = |alerts: Vec<Alert>| DrainEvidence::from_inputs(&[], &[], Some(&alerts));
        let both = [
            "Pod/openshift-ingress/checkout-7f9c6d5b4-qx2lp",
            "PodDisruptionBudget/openshift-ingress/checkout-pdb",
        ];
        // Corroborated, not read, about another namespace, or only pending: listed.
        for ev in [
            with(vec![alert("openshift-ingress", "checkout-pdb", "firing")]),
            DrainEvidence::default(),
            with(vec![alert("openshift-dns", "db-pdb", "firing")]),
            with(vec![alert("openshift-ingress", "other-pdb", "pending")]),
        ] {
            assert_eq!(names(&drain_blockers("worker-1", &f, &ev)), both);
        }
        // Alerts fire for another budget of the namespace, none for this one: the budget is
        // left out (the pod, which the message names, stays).
        let ev = with(vec![alert("openshift-ingress", "other-pdb", "firing")]);
        assert_eq!(
            names(&drain_blockers("worker-1", &f, &ev)),
            ["Pod/openshift-ingress/checkout-7f9c6d5b4-qx2lp"]
        );
        // Issue #38, #48: an alert of that name about a tenant's namespace (a tenant's rule
        // can raise it, with the platform's labels too) neither contradicts nor corroborates.
        let f = parse_drain_failure(SIMULATED).expect("failure");
        let mut spoofed = alert("shop", "other-pdb", "firing");
        spoofed.labels.extend(labels(&[
            ("prometheus", "openshift-monitoring/k8s"),
            ("openshift_io_alert_source", "platform"),
        ]));
        assert!(
            PdbAlerts::of_alerts(std::slice::from_ref(&spoofed))
                .0
                .is_empty()
        );
        assert_eq!(
            names(&drain_blockers(
                "worker-1",
                &f,
                &with(vec![spoofed.clone()])
            )),
            [
                "Pod/shop/checkout-7f9c6d5b4-qx2lp",
                "PodDisruptionBudget/shop/checkout-pdb"
            ]
        );
        // The same for a looked-up budget: listed whatever a tenant's alert says; a platform
        // budget contradicted is left out.
        let real = parse_drain_failure(REAL_416).expect("failure");
        let node = "build0-gstfj-ci-tests-worker-b-4h7pn";
        let mut ev = evidence(
            vec![
                pod_on(node, "shop", "checkout-1", "checkout"),
                pod_on(node, "openshift-ingress", "router-1", "router"),
            ],
            vec![
                budget("shop", "checkout-pdb", "checkout", 0),
                budget("openshift-ingress", "router-pdb", "router", 0),
            ],
        );
        ev.alerts =
            PdbAlerts::of_alerts(&[spoofed, alert("openshift-ingress", "other-pdb", "firing")]);
        assert_eq!(
            names(&drain_blockers(node, &real, &ev)),
            [
                "Pod/shop/checkout-1",
                "PodDisruptionBudget/shop/checkout-pdb"
            ]
        );
        ev.alerts = PdbAlerts::of_alerts(&[alert("openshift-ingress", "router-pdb", "firing")]);
        assert_eq!(drain_blockers(node, &real, &ev).len(), 4);
    }

    #[test]
    fn pdb_alerts_from_alert_insights_read_their_related_budgets() {
        let alerts = [Alert {
            labels: labels(&[
                ("alertname", "PodDisruptionBudgetLimit"),
                ("namespace", "openshift-ingress"),
                ("poddisruptionbudget", "router-pdb"),
                ("severity", "critical"),
            ]),
            state: "firing".into(),
            ..Default::default()
        }];
        let insights = crate::alerts::assess_alerts(&alerts, None, jiff::Timestamp::UNIX_EPOCH);
        assert_eq!(insights.len(), 1);
        assert_eq!(
            crate::alerts::pdb_alerts_of_insights(&insights),
            PdbAlerts::of_alerts(&alerts)
        );
        assert_eq!(PdbAlerts::of_alerts(&alerts).0.len(), 1);
        // An alert of that name about a tenant's namespace, even labelled as the platform's:
        // described as oc does ("known to affect updates"), with our caveat, and it vouches
        // for no budget.
        let mut tenant = alerts[0].clone();
        tenant.labels.extend(labels(&[
            ("namespace", "shop"),
            ("poddisruptionbudget", "checkout-pdb"),
            ("openshift_io_alert_source", "platform"),
            ("prometheus", "openshift-monitoring/k8s"),
        ]));
        let insights = crate::alerts::assess_alerts(
            std::slice::from_ref(&tenant),
            None,
            jiff::Timestamp::UNIX_EPOCH,
        );
        assert_eq!(insights.len(), 1);
        assert!(
            crate::alerts::pdb_alerts_of_insights(&insights)
                .0
                .is_empty()
        );
    }
    #[test]
    fn at_most_ten_are_listed_and_the_rest_counted() {
        let refs: Vec<ResourceRef> = (0..14)
            .map(|i| pod("ns", &format!("p{i}")))
            .chain([pod("ns", "p0")])
            .collect();
        let (shown, more) = bounded(refs);
        assert_eq!(shown.len(), limits::RELATED_SHOWN);
        assert_eq!(shown[0].name, "p0");
        assert_eq!(more, 4);
        let (shown, more) = bounded([pod("a", "b"), pod("a", "b")]);
        assert_eq!((shown.len(), more), (1, 0));
    }
}
