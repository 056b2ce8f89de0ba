//! Insight construction shared by every rule: the one way to build a health insight (D.0's
//! completeness filter and the schema cuts included) and the one health tally.

use jiff::Timestamp;
use update_status_api::crd::{
    HealthCounts, HealthInsight, Impact, ImpactLevel, ImpactType, InsightScope, InsightType,
    Remediation, ResourceRef, UpdateInsightStatus, limits,
};

use crate::format::{cut_noting, ellipsize};

/// What a health rule found, before D.0's completeness filter.
#[derive(Clone, Debug)]
pub struct HealthDraft<'a> {
    /// What the insight is about.
    pub resource: ResourceRef,
    /// Where it applies.
    pub scope: InsightScope,
    /// Rule that produced it (`source`).
    pub source: &'a str,
    /// Since when it holds, when known.
    pub started_at: Option<Timestamp>,
    /// Impact level.
    pub level: ImpactLevel,
    /// Impact type.
    pub type_: ImpactType,
    /// One-line summary.
    pub summary: String,
    /// Description.
    pub description: String,
    /// Runbook or documentation URL.
    pub reference: &'a str,
}

impl HealthDraft<'_> {
    /// D.0: no insight without summary, description or reference; long texts are cut to the
    /// schema's limits (ending in `...`).
    pub fn build(self) -> Option<UpdateInsightStatus> {
        if self.summary.is_empty() || self.description.is_empty() || self.reference.is_empty() {
            return None;
        }
        Some(UpdateInsightStatus {
            type_: InsightType::Health,
            resource: self.resource,
            scope: self.scope,
            progress: None,
            health: Some(HealthInsight {
                started_at: self.started_at,
                impact: Impact {
                    level: self.level,
                    type_: self.type_,
                    summary: ellipsize(&self.summary, limits::SUMMARY),
                    description: cut_noting(&self.description, limits::DESCRIPTION),
                },
                remediation: Remediation {
                    reference: ellipsize(self.reference, limits::REFERENCE),
                },
                related: Vec::new(),
                source: self.source.to_string(),
            }),
        })
    }
}

/// Counts one health insight of `level` in `counts`.
pub fn count(counts: &mut HealthCounts, level: ImpactLevel) {
    match level {
        ImpactLevel::Critical => counts.critical += 1,
        ImpactLevel::Error => counts.error += 1,
        ImpactLevel::Warning => counts.warning += 1,
        ImpactLevel::Info => counts.info += 1,
        ImpactLevel::Unknown => counts.unknown += 1,
    }
}

/// The health insights among `insights`, counted by level.
pub fn tally<'a>(insights: impl IntoIterator<Item = &'a UpdateInsightStatus>) -> HealthCounts {
    let mut c = HealthCounts::default();
    for h in insights.into_iter().filter_map(|i| i.health.as_ref()) {
        count(&mut c, h.impact.level);
    }
    c
}
