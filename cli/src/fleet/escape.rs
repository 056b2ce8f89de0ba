//! The fleet's rows made safe for a terminal: every string the clusters or the hub wrote is
//! escaped (`crate::show::escape`, line feeds and tabs too: the fleet table is ours, not oc's).

use update_status_api::acm::ConfigSpecHash;

use super::model::{AddOnCondition, AddOnState, FleetRow, PoolSummary};
use super::rollout::{DesiredApplied, Rollout};
use crate::show::escape::{Newlines, text};

/// The fleet rows with every string escaped for the text output.
pub fn escaped(rows: &[FleetRow]) -> Vec<FleetRow> {
    let esc = |s: &str| text(s, Newlines::Escape).into_owned();
    rows.iter()
        .map(|r| FleetRow {
            cluster: esc(&r.cluster),
            namespace: esc(&r.namespace),
            from: esc(&r.from),
            to: esc(&r.to),
            worker_pools_not_completed: r
                .worker_pools_not_completed
                .iter()
                .map(|p| PoolSummary {
                    name: esc(&p.name),
                    assessment: p.assessment,
                })
                .collect(),
            hosted_cluster: r.hosted_cluster.as_deref().map(esc),
            add_on: r.add_on.as_ref().map(|a| AddOnState {
                available: esc(&a.available),
                reason: esc(&a.reason),
                message: esc(&a.message),
                degraded: a.degraded.as_ref().map(|d| condition(d, esc)),
                rollout: rollout(&a.rollout, esc),
            }),
            warnings: r.warnings.iter().map(|w| esc(w)).collect(),
            ..r.clone()
        })
        .collect()
}

/// An add-on condition with every string escaped by `esc`.
fn condition(c: &AddOnCondition, esc: impl Fn(&str) -> String) -> AddOnCondition {
    AddOnCondition {
        status: esc(&c.status),
        reason: esc(&c.reason),
        message: esc(&c.message),
    }
}

/// The add-on's rollout with every string escaped by `esc`.
fn rollout(r: &Rollout, esc: impl Fn(&str) -> String + Copy) -> Rollout {
    let hash = |h: &ConfigSpecHash| ConfigSpecHash {
        name: esc(&h.name),
        namespace: esc(&h.namespace),
        spec_hash: esc(&h.spec_hash),
    };
    let pair = |p: &DesiredApplied| DesiredApplied {
        desired: p.desired.as_ref().map(hash),
        applied: p.applied.as_ref().map(hash),
        fleet_desired: p.fleet_desired.as_ref().map(hash),
    };
    Rollout {
        template: r.template.as_ref().map(pair),
        deployment_config: r.deployment_config.as_ref().map(pair),
        progressing: r.progressing.as_ref().map(|c| condition(c, esc)),
        own_configs: r.own_configs.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row whose strings hold what a terminal acts on (but `namespace` and `to`).
    fn nasty_row() -> FleetRow {
        FleetRow {
            cluster: "c\x1b]0;x\x07".into(),
            namespace: "ns".into(),
            from: "4.1\n".into(),
            to: "4.2".into(),
            assessment: update_status_api::crd::Assessment::Progressing,
            completion_percent: 5,
            worker_nodes: 1,
            worker_nodes_updated: 0,
            worker_pools_not_completed: vec![PoolSummary {
                name: "p\u{9b}".into(),
                assessment: update_status_api::crd::Assessment::Degraded,
            }],
            health: Default::default(),
            reported: true,
            hosted_cluster: None,
            last_reported: None,
            freshness: None,
            warnings: Vec::new(),
            agent_health: None,
            add_on: Some(AddOnState {
                available: "False".into(),
                reason: "R\x1b[2J".into(),
                message: "m\r".into(),
                degraded: Some(AddOnCondition {
                    status: "True".into(),
                    reason: "D\x1b[1m".into(),
                    message: String::new(),
                }),
                rollout: Rollout {
                    template: Some(DesiredApplied {
                        desired: Some(ConfigSpecHash {
                            name: "update-status-0.2.0\x1b[2J".into(),
                            ..Default::default()
                        }),
                        applied: None,
                        fleet_desired: None,
                    }),
                    deployment_config: Some(DesiredApplied {
                        fleet_desired: Some(ConfigSpecHash {
                            name: "next\x1b[2J".into(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    progressing: Some(AddOnCondition {
                        status: "True".into(),
                        reason: "Progressing".into(),
                        message: "p\x07".into(),
                    }),
                    own_configs: Vec::new(),
                },
            }),
        }
    }

    #[test]
    fn fleet_rows_are_escaped() {
        let row = nasty_row();
        let out = escaped(std::slice::from_ref(&row));
        assert_eq!(out[0].cluster, "c^[]0;x^G");
        let a = out[0].add_on.as_ref().expect("add-on");
        assert_eq!((a.reason.as_str(), a.message.as_str()), ("R^[[2J", "m\\r"));
        assert_eq!(out[0].from, "4.1\\n");
        assert_eq!(out[0].worker_pools_not_completed[0].name, "p\\u009b");
        assert_eq!(
            out[0]
                .add_on
                .as_ref()
                .and_then(|a| a.degraded.as_ref())
                .map(|d| d.reason.as_str()),
            Some("D^[[1m")
        );
        let rollout = &out[0].add_on.as_ref().expect("add-on").rollout;
        let fleet_desired = rollout.deployment_config.as_ref();
        let fleet_desired = fleet_desired.and_then(|c| c.fleet_desired.as_ref());
        assert_eq!(fleet_desired.map(|c| c.name.as_str()), Some("next^[[2J"));
        assert_eq!(
            rollout.progressing.as_ref().map(|p| p.message.as_str()),
            Some("p^G")
        );
        assert!(
            crate::fleet::render(&out, jiff::Timestamp::UNIX_EPOCH)
                .contains("Installing (0.2.0^[[2J)"),
            "the template's name is escaped in the ADD-ON column"
        );
        assert_eq!(out[0].to, row.to);
        let table = crate::fleet::render(&out, jiff::Timestamp::UNIX_EPOCH);
        assert!(
            !table.chars().any(|c| c.is_control() && c != '\n'),
            "{table}"
        );
    }
}
