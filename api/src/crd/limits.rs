//! Schema limits of the fields update-status writes (the CRDs' `maxLength`/`maxItems`): the
//! assessment cuts its texts to these, so every object it produces is valid.

/// `Condition.reason`.
pub const CONDITION_REASON: usize = 1024;
/// `Condition.message`.
pub const CONDITION_MESSAGE: usize = 32768;
/// `ResourceRef.group`.
pub const RESOURCE_GROUP: usize = 253;
/// `ResourceRef.kind`.
pub const RESOURCE_KIND: usize = 63;
/// `ResourceRef.name`.
pub const RESOURCE_NAME: usize = 253;
/// `ResourceRef.namespace`.
pub const NAMESPACE: usize = 63;
/// `InsightScope.pool`.
pub const POOL: usize = 253;
/// Every version string.
pub const VERSION: usize = 128;
/// `ProgressInsight.message`: 32 KiB characters, more than any real message (oc prints
/// messages whole; a real etcd message reached 4,000+ characters, OCPBUGS-60768). One
/// UpdateInsight holds at most one such text plus a few condition messages: far below the
/// API server's object size limit.
pub const PROGRESS_MESSAGE: usize = 32768;
/// `Impact.summary`.
pub const SUMMARY: usize = 256;
/// `Impact.description`: 32 KiB characters, like [`PROGRESS_MESSAGE`].
pub const DESCRIPTION: usize = 32768;
/// `Remediation.reference`.
pub const REFERENCE: usize = 512;
/// `HealthInsight.related` (items the schema admits).
pub const RELATED: usize = 128;
/// `HealthInsight.related` (items the assessment lists: the rest are counted in
/// `relatedOmitted`).
pub const RELATED_SHOWN: usize = 10;
/// `HealthInsight.source`.
pub const SOURCE: usize = 63;
/// `ControlPlaneUpdateStatus.operators.updatingNames` (items).
pub const UPDATING_NAMES: usize = 256;
