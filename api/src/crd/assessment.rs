//! Assessments (of a control plane, a pool, an operator, a node) and node phases, with the
//! text `oc adm upgrade status` shows and their label values.

label_enum! {
    /// Assessment of a control plane, a pool, an operator or a node.
    pub enum Assessment {
        /// Cannot tell.
        #[default]
        Unknown,
        /// Moving.
        Progressing,
        /// Moving, but behind the estimate (less than 10 minutes late).
        #[serde(rename = "Progressing - Slow")]
        ProgressingSlow,
        /// Far behind the estimate (more than 10 minutes late).
        Stalled,
        /// Done.
        Completed,
        /// Pool: no node started yet.
        Pending,
        /// Pool or node: degraded.
        Degraded,
        /// Pool: paused with outdated nodes; node: excluded by a paused pool.
        Excluded,
        /// Pool with no nodes.
        Empty,
        /// Node: not updated and not updating.
        Outdated,
        /// Node: unavailable while not updating.
        Unavailable,
        /// Operator: at the target version.
        Updated,
        /// Operator: progressing toward the target.
        Updating,
        /// Operator: not at the target and not progressing.
        Waiting,
    }
}

impl Assessment {
    /// Text as `oc adm upgrade status` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Assessment::Unknown => "Unknown",
            Assessment::Progressing => "Progressing",
            Assessment::ProgressingSlow => "Progressing - Slow",
            Assessment::Stalled => "Stalled",
            Assessment::Completed => "Completed",
            Assessment::Pending => "Pending",
            Assessment::Degraded => "Degraded",
            Assessment::Excluded => "Excluded",
            Assessment::Empty => "Empty",
            Assessment::Outdated => "Outdated",
            Assessment::Unavailable => "Unavailable",
            Assessment::Updated => "Updated",
            Assessment::Updating => "Updating",
            Assessment::Waiting => "Waiting",
        }
    }

    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            Assessment::ProgressingSlow => "progressing-slow",
            Assessment::Unknown => "unknown",
            Assessment::Progressing => "progressing",
            Assessment::Stalled => "stalled",
            Assessment::Completed => "completed",
            Assessment::Pending => "pending",
            Assessment::Degraded => "degraded",
            Assessment::Excluded => "excluded",
            Assessment::Empty => "empty",
            Assessment::Outdated => "outdated",
            Assessment::Unavailable => "unavailable",
            Assessment::Updated => "updated",
            Assessment::Updating => "updating",
            Assessment::Waiting => "waiting",
        }
    }
}

label_enum! {
    /// Where a node is in its update.
    pub enum NodePhase {
        /// Being drained.
        Draining,
        /// Applying the new configuration.
        Updating,
        /// Rebooting into it.
        Rebooting,
        /// Its pool is paused.
        Paused,
        /// Not started.
        #[default]
        Pending,
        /// At the target.
        Updated,
    }
}

impl NodePhase {
    /// Text as `oc adm upgrade status` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            NodePhase::Draining => "Draining",
            NodePhase::Updating => "Updating",
            NodePhase::Rebooting => "Rebooting",
            NodePhase::Paused => "Paused",
            NodePhase::Pending => "Pending",
            NodePhase::Updated => "Updated",
        }
    }
    /// Label value.
    pub fn slug(self) -> &'static str {
        match self {
            NodePhase::Draining => "draining",
            NodePhase::Updating => "updating",
            NodePhase::Rebooting => "rebooting",
            NodePhase::Paused => "paused",
            NodePhase::Pending => "pending",
            NodePhase::Updated => "updated",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assessments_serialize_as_oc_prints_them() {
        assert_eq!(
            serde_json::to_value(Assessment::ProgressingSlow).expect("json"),
            "Progressing - Slow"
        );
        for a in [Assessment::ProgressingSlow, Assessment::Completed] {
            assert_eq!(serde_json::to_value(a).expect("json"), a.as_str());
        }
    }
}
