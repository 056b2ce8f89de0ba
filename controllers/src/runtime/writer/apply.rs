//! The API calls of one object's writes ([`Job`]): a server-side apply of its metadata, then
//! of its status (the status subresource), each body serialized straight from the desired
//! object; an object deleted behind our back is created again at once.

use std::collections::BTreeMap;
use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde::Serialize;

use super::compare::StatusObject;

/// The writes one object needs.
pub(super) struct Job<S> {
    pub(super) name: String,
    /// The object does not exist yet (as far as we know).
    pub(super) create: bool,
    /// Apply the metadata: the labels or the owner changed (or a creation).
    pub(super) meta: bool,
    /// Apply the status: it changed (or a creation).
    pub(super) status_body: bool,
    pub(super) labels: BTreeMap<String, String>,
    pub(super) owner: Option<OwnerReference>,
    pub(super) status: S,
}

/// Body of a metadata apply (serialized straight from the desired object: the bodies of a
/// large sync never all exist at once).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct MetaBody<'a> {
    api_version: &'a str,
    kind: &'a str,
    metadata: MetaPart<'a>,
    spec: Empty,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct MetaPart<'a> {
    name: &'a str,
    labels: &'a BTreeMap<String, String>,
    owner_references: Vec<&'a OwnerReference>,
}

#[derive(Serialize, Debug)]
struct Empty {}

/// Body of a status apply.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct StatusBody<'a, S> {
    api_version: &'a str,
    kind: &'a str,
    metadata: NamePart<'a>,
    status: &'a S,
}

#[derive(Serialize, Debug)]
struct NamePart<'a> {
    name: &'a str,
}

/// Runs a job's writes; returns the last resourceVersion, or the verb that failed.
pub(super) async fn execute<K: StatusObject, S: Serialize + Debug>(
    api: &Api<K>,
    params: &PatchParams,
    job: &Job<S>,
) -> Result<Written, (&'static str, kube::Error)> {
    let mut written = Written::default();
    if job.meta {
        written.resource_version = apply_meta(api, params, job).await?;
        written.meta = true;
    }
    if job.status_body {
        let status = apply_status(api, params, job).await;
        written.resource_version = match status {
            // Deleted behind our back since we last saw it (e.g. while the API server was away
            // and our cache did not show it yet): create it again now, not after a retry.
            Err(kube::Error::Api(s)) if s.is_not_found() && !written.meta => {
                apply_meta(api, params, job).await?;
                written.meta = true;
                apply_status(api, params, job).await
            }
            other => other,
        }
        .map_err(|e| ("apply-status", e))?;
    }
    Ok(written)
}

/// What [`execute`] wrote.
#[derive(Default)]
pub(super) struct Written {
    /// The object's resourceVersion after the last write.
    pub(super) resource_version: Option<String>,
    /// Whether its metadata was applied (a creation included).
    pub(super) meta: bool,
}

async fn apply_meta<K: StatusObject, S: Serialize + Debug>(
    api: &Api<K>,
    params: &PatchParams,
    job: &Job<S>,
) -> Result<Option<String>, (&'static str, kube::Error)> {
    let kind = K::kind(&());
    let api_version = K::api_version(&());
    let body = MetaBody {
        api_version: &api_version,
        kind: &kind,
        metadata: MetaPart {
            name: &job.name,
            labels: &job.labels,
            owner_references: job.owner.iter().collect(),
        },
        spec: Empty {},
    };
    let obj = api
        .patch(&job.name, params, &Patch::Apply(&body))
        .await
        .map_err(|e| ("apply", e))?;
    Ok(obj.meta().resource_version.clone())
}

async fn apply_status<K: StatusObject, S: Serialize + Debug>(
    api: &Api<K>,
    params: &PatchParams,
    job: &Job<S>,
) -> Result<Option<String>, kube::Error> {
    let kind = K::kind(&());
    let api_version = K::api_version(&());
    let body = StatusBody {
        api_version: &api_version,
        kind: &kind,
        metadata: NamePart { name: &job.name },
        status: &job.status,
    };
    let obj = api
        .patch_status(&job.name, params, &Patch::Apply(&body))
        .await?;
    Ok(obj.meta().resource_version.clone())
}
