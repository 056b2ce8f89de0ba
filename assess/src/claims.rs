//! What the cluster's ClusterClaims say about its update, for ACM's upgrade tools: the agent
//! publishes them on its managed cluster, the klusterlet copies them into the ManagedCluster's
//! `status.clusterClaims` on the hub, and a Placement (`claimSelector`), a ClusterCurator or a
//! TALM policy can wait on them (docs/acm.md, "Feeding ACM's upgrade tools").
//!
//! Pure: from the ControlPlaneUpdateStatus and WorkerPoolUpdateStatus contents to the claims'
//! values. The update is complete only when the control plane (its operators and its nodes) and
//! every worker pool are updated; a paused pool is not complete, whatever its nodes (ACM's own
//! tools read ClusterVersion alone and call an update done while worker pools still roll or are
//! paused, as in an EUS-to-EUS update).

use update_status_api::acm::{CLAIM_STATE, CLAIM_TARGET, CLAIM_WORKERS_COMPLETE};
use update_status_api::crd::{
    Assessment, ControlPlaneUpdateStatusStatus, WorkerPoolUpdateStatusStatus,
};

/// The update's state as a whole, the value of [`CLAIM_STATE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateState {
    /// The control plane and every worker pool are at the target.
    Completed,
    /// Something is still updating (the control plane, its nodes, or a worker pool).
    Progressing,
    /// The control plane is updated and what is left waits on a paused worker pool.
    Paused,
    /// The control-plane update is stalled (`Stalled`).
    Stalled,
    /// A worker pool or a control-plane node is degraded.
    Degraded,
    /// Not known (no ControlPlaneUpdateStatus yet, or its assessment is `Unknown`).
    Unknown,
}

impl UpdateState {
    /// The claim's value.
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateState::Completed => "Completed",
            UpdateState::Progressing => "Progressing",
            UpdateState::Paused => "Paused",
            UpdateState::Stalled => "Stalled",
            UpdateState::Degraded => "Degraded",
            UpdateState::Unknown => "Unknown",
        }
    }
}

/// One claim: name and value (never empty: OCM's CRD requires 1 to 1024 characters).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Claim {
    /// The ClusterClaim's name.
    pub name: &'static str,
    /// Its `spec.value`.
    pub value: String,
}

/// Every claim the agent writes (and the only ones it may create, patch or delete:
/// config/rbac/role.yaml names them).
pub const CLAIM_NAMES: [&str; 3] = [CLAIM_STATE, CLAIM_TARGET, CLAIM_WORKERS_COMPLETE];

/// Longest claim value OCM accepts.
pub const MAX_VALUE: usize = 1024;

/// Whether a worker pool is updated: at its target (or without nodes), and not paused.
pub fn pool_complete(pool: &WorkerPoolUpdateStatusStatus) -> bool {
    !pool.paused && matches!(pool.assessment, Assessment::Completed | Assessment::Empty)
}

/// Whether the control plane is updated: its operators (`Completed`) and its nodes.
fn control_plane_complete(cp: &ControlPlaneUpdateStatusStatus) -> bool {
    cp.assessment == Assessment::Completed && cp.nodes.outdated == 0
}

/// The update's state from the control plane's status and the worker pools'.
pub fn update_state(
    cp: Option<&ControlPlaneUpdateStatusStatus>,
    pools: &[&WorkerPoolUpdateStatusStatus],
) -> UpdateState {
    let Some(cp) = cp else {
        return UpdateState::Unknown;
    };
    if cp.assessment == Assessment::Stalled {
        return UpdateState::Stalled;
    }
    if cp.nodes.degraded > 0 || pools.iter().any(|p| p.assessment == Assessment::Degraded) {
        return UpdateState::Degraded;
    }
    if cp.assessment == Assessment::Unknown {
        return UpdateState::Unknown;
    }
    if !control_plane_complete(cp) {
        return UpdateState::Progressing;
    }
    let incomplete: Vec<&&WorkerPoolUpdateStatusStatus> =
        pools.iter().filter(|p| !pool_complete(p)).collect();
    if incomplete.is_empty() {
        UpdateState::Completed
    } else if incomplete.iter().any(|p| p.paused) {
        UpdateState::Paused
    } else {
        UpdateState::Progressing
    }
}

/// The claims, sorted by name. Without a ControlPlaneUpdateStatus there is no target to tell:
/// only the state (`Unknown`) and `workers-complete` (`false`) are claimed.
pub fn cluster_claims(
    cp: Option<&ControlPlaneUpdateStatusStatus>,
    pools: &[&WorkerPoolUpdateStatusStatus],
) -> Vec<Claim> {
    let mut claims = vec![Claim {
        name: CLAIM_STATE,
        value: update_state(cp, pools).as_str().to_string(),
    }];
    if let Some(target) = cp
        .map(|cp| cp.versions.target.trim())
        .filter(|t| !t.is_empty())
    {
        claims.push(Claim {
            name: CLAIM_TARGET,
            value: crate::format::ellipsize(target, MAX_VALUE),
        });
    }
    let workers = cp.is_some() && pools.iter().all(|p| pool_complete(p));
    claims.push(Claim {
        name: CLAIM_WORKERS_COMPLETE,
        value: workers.to_string(),
    });
    claims.sort();
    claims
}

#[cfg(test)]
mod tests {
    use super::*;
    use update_status_api::crd::{ControlPlaneVersions, NodeCounts};

    fn cp(assessment: Assessment, outdated_masters: u32) -> ControlPlaneUpdateStatusStatus {
        ControlPlaneUpdateStatusStatus {
            assessment,
            versions: ControlPlaneVersions {
                target: "4.18.3".into(),
                previous: "4.18.2".into(),
                ..Default::default()
            },
            nodes: NodeCounts {
                total: 3,
                outdated: outdated_masters,
                updated: 3 - outdated_masters,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn pool(assessment: Assessment, paused: bool) -> WorkerPoolUpdateStatusStatus {
        WorkerPoolUpdateStatusStatus {
            assessment,
            paused,
            ..Default::default()
        }
    }

    fn value(claims: &[Claim], name: &str) -> Option<String> {
        claims
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.value.clone())
    }

    #[test]
    fn complete_only_when_the_control_plane_and_every_pool_are_updated() {
        let done = cp(Assessment::Completed, 0);
        let (worker, infra) = (
            pool(Assessment::Completed, false),
            pool(Assessment::Empty, false),
        );
        let claims = cluster_claims(Some(&done), &[&worker, &infra]);
        assert_eq!(
            claims,
            vec![
                Claim {
                    name: CLAIM_STATE,
                    value: "Completed".into()
                },
                Claim {
                    name: CLAIM_TARGET,
                    value: "4.18.3".into()
                },
                Claim {
                    name: CLAIM_WORKERS_COMPLETE,
                    value: "true".into()
                },
            ],
            "sorted by name, as the klusterlet exposes them"
        );
        // ClusterVersion says done, a worker pool still rolls: not complete.
        let rolling = pool(Assessment::Progressing, false);
        let claims = cluster_claims(Some(&done), &[&worker, &rolling]);
        assert_eq!(value(&claims, CLAIM_STATE).as_deref(), Some("Progressing"));
        assert_eq!(
            value(&claims, CLAIM_WORKERS_COMPLETE).as_deref(),
            Some("false")
        );
        // Operators done, a master node not yet.
        let masters = cp(Assessment::Completed, 1);
        assert_eq!(
            update_state(Some(&masters), &[&worker]),
            UpdateState::Progressing
        );
        // A control plane still updating, pools not started.
        let pending = pool(Assessment::Pending, false);
        assert_eq!(
            update_state(Some(&cp(Assessment::Progressing, 3)), &[&pending]),
            UpdateState::Progressing
        );
        assert_eq!(
            update_state(Some(&cp(Assessment::ProgressingSlow, 3)), &[&pending]),
            UpdateState::Progressing
        );
    }

    #[test]
    fn a_paused_pool_is_not_complete() {
        let done = cp(Assessment::Completed, 0);
        // EUS-to-EUS: the worker pool paused while the control plane goes through two updates.
        let excluded = pool(Assessment::Excluded, true);
        let claims = cluster_claims(Some(&done), &[&excluded]);
        assert_eq!(value(&claims, CLAIM_STATE).as_deref(), Some("Paused"));
        assert_eq!(
            value(&claims, CLAIM_WORKERS_COMPLETE).as_deref(),
            Some("false")
        );
        // Paused even though its nodes are at the target: not complete either.
        let paused_done = pool(Assessment::Completed, true);
        assert!(!pool_complete(&paused_done));
        assert_eq!(
            update_state(Some(&done), &[&paused_done]),
            UpdateState::Paused
        );
        // One pool paused, another still rolling: paused (the rest waits on the admin).
        let rolling = pool(Assessment::Progressing, false);
        assert_eq!(
            update_state(Some(&done), &[&rolling, &excluded]),
            UpdateState::Paused
        );
        // Unpaused and updated: complete.
        let resumed = pool(Assessment::Completed, false);
        assert_eq!(
            update_state(Some(&done), &[&resumed]),
            UpdateState::Completed
        );
    }

    #[test]
    fn stalled_degraded_and_unknown_take_precedence() {
        let worker = pool(Assessment::Completed, false);
        assert_eq!(
            update_state(Some(&cp(Assessment::Stalled, 0)), &[&worker]),
            UpdateState::Stalled
        );
        let degraded = pool(Assessment::Degraded, false);
        assert_eq!(
            update_state(Some(&cp(Assessment::Completed, 0)), &[&degraded]),
            UpdateState::Degraded
        );
        assert_eq!(
            update_state(Some(&cp(Assessment::Progressing, 1)), &[&degraded]),
            UpdateState::Degraded,
            "a degraded pool is worth more than a running update"
        );
        let mut master_degraded = cp(Assessment::Completed, 0);
        master_degraded.nodes.degraded = 1;
        assert_eq!(
            update_state(Some(&master_degraded), &[&worker]),
            UpdateState::Degraded
        );
        assert_eq!(
            update_state(Some(&cp(Assessment::Unknown, 0)), &[&worker]),
            UpdateState::Unknown
        );
    }

    #[test]
    fn without_a_control_plane_status_nothing_is_complete() {
        let claims = cluster_claims(None, &[]);
        assert_eq!(value(&claims, CLAIM_STATE).as_deref(), Some("Unknown"));
        assert_eq!(value(&claims, CLAIM_TARGET), None, "no target to tell");
        assert_eq!(
            value(&claims, CLAIM_WORKERS_COMPLETE).as_deref(),
            Some("false")
        );
        // A cluster without worker pools (compact, three masters) is complete with its
        // control plane.
        let claims = cluster_claims(Some(&cp(Assessment::Completed, 0)), &[]);
        assert_eq!(value(&claims, CLAIM_STATE).as_deref(), Some("Completed"));
        assert_eq!(
            value(&claims, CLAIM_WORKERS_COMPLETE).as_deref(),
            Some("true")
        );
    }

    #[test]
    fn values_fit_the_claim_crd() {
        let mut long = cp(Assessment::Completed, 0);
        long.versions.target = "9".repeat(5000);
        let mut blank = cp(Assessment::Completed, 0);
        blank.versions.target = " ".into();
        for claims in [
            cluster_claims(Some(&long), &[]),
            cluster_claims(Some(&blank), &[]),
        ] {
            for c in &claims {
                assert!(
                    (1..=MAX_VALUE).contains(&c.value.chars().count()),
                    "{}: {} characters",
                    c.name,
                    c.value.len()
                );
            }
        }
    }
}
