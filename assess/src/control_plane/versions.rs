//! B.8: the control plane's versions from the ClusterVersion history.

use update_status_api::crd::{ControlPlaneVersions, limits};
use update_status_api::input::UpdateHistory;

use crate::format::ellipsize;

pub(super) fn version_or_unknown(v: &str) -> String {
    if v.is_empty() {
        "unknown".to_string()
    } else {
        ellipsize(v, limits::VERSION)
    }
}

/// B.8 `versionsFromHistory`, plus `lastCompleted` (D.5).
pub fn versions_from_history(history: &[UpdateHistory]) -> ControlPlaneVersions {
    let target = history
        .first()
        .map_or_else(|| "unknown".to_string(), |h| version_or_unknown(&h.version));
    match history {
        [] => ControlPlaneVersions {
            target,
            previous: "unknown".to_string(),
            ..Default::default()
        },
        [_] => ControlPlaneVersions {
            target,
            installation: true,
            ..Default::default()
        },
        [current, previous, older @ ..] => {
            let previous_partial = previous.is_partial();
            let last_completed = if previous_partial {
                older
                    .iter()
                    .find(|h| h.is_completed())
                    .map_or_else(|| "unknown".to_string(), |h| version_or_unknown(&h.version))
            } else {
                String::new()
            };
            ControlPlaneVersions {
                target,
                previous: version_or_unknown(&previous.version),
                previous_partial,
                last_completed,
                installation: false,
                multi_arch_migration: current.version == previous.version
                    && current.image != previous.image,
            }
        }
    }
}

/// The "Target Version" text of B.8: `<target> (a new install)`, `<target> (from incomplete
/// <previous>)`, `<target> to Multi-Architecture` or `<target> (from <previous>)`.
pub fn target_version_display(v: &ControlPlaneVersions) -> String {
    if v.installation {
        format!("{} (a new install)", v.target)
    } else if v.previous_partial {
        format!("{} (from incomplete {})", v.target, v.previous)
    } else if v.multi_arch_migration {
        format!("{} to Multi-Architecture", v.target)
    } else {
        format!("{} (from {})", v.target, v.previous)
    }
}
