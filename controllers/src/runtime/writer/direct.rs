//! One write outside a [`super::Writer`]'s sync, for the objects that are not our status kinds
//! (the ClusterClaims, the UpdateHistory, a hub's ResourceQuotas and RoleBindings): a
//! server-side apply (of the object or its status) or a deletion, counted on success in
//! `update_status_api_writes_total{kind, verb}` as the writer counts its own, a failure
//! returned as a [`WriteError::Api`] naming the object. Failures are the caller's to count
//! ([`Direct::count_failure`]): some count each call, others once per object and pass.

use std::fmt::Debug;

use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde::de::DeserializeOwned;

use crate::metrics::Metrics;

use super::outcome::{WriteError, error_reason};

/// The object one direct write is about, and where it is counted.
pub struct Direct<'a> {
    /// Its kind (the `kind` label).
    pub kind: &'a str,
    /// Its namespace (empty: cluster-scoped).
    pub namespace: &'a str,
    /// Its name.
    pub name: &'a str,
    /// Where the write is counted.
    pub metrics: &'a Metrics,
}

impl Direct<'_> {
    /// Server-side applies `body` (the object) through `api`.
    pub async fn apply<K>(
        &self,
        api: &Api<K>,
        params: &PatchParams,
        body: &serde_json::Value,
    ) -> Result<(), WriteError>
    where
        K: Clone + DeserializeOwned + Debug,
    {
        let patch = Patch::Apply(body);
        self.counted("apply", api.patch(self.name, params, &patch))
            .await
    }

    /// Server-side applies `body` (the object's status) through `api`'s status subresource.
    pub async fn apply_status<K>(
        &self,
        api: &Api<K>,
        params: &PatchParams,
        body: &serde_json::Value,
    ) -> Result<(), WriteError>
    where
        K: Clone + DeserializeOwned + Debug,
    {
        let patch = Patch::Apply(body);
        self.counted("apply-status", api.patch_status(self.name, params, &patch))
            .await
    }

    /// Awaits `call`, a `verb` of the object, and counts it when it succeeded.
    async fn counted<T>(
        &self,
        verb: &'static str,
        call: impl std::future::Future<Output = Result<T, kube::Error>>,
    ) -> Result<(), WriteError> {
        call.await.map_err(|e| self.error(verb, e))?;
        self.metrics.writes.write(self.kind, verb);
        Ok(())
    }

    /// Deletes the object through `api`; `Ok(false)`: it was gone already (not counted).
    pub async fn delete<K>(&self, api: &Api<K>, params: &DeleteParams) -> Result<bool, WriteError>
    where
        K: Clone + DeserializeOwned + Debug,
    {
        match api.delete(self.name, params).await {
            Ok(_) => {
                self.metrics.writes.write(self.kind, "delete");
                Ok(true)
            }
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
            Err(e) => Err(self.error("delete", e)),
        }
    }

    /// Counts a failed write in `update_status_write_errors_total{kind, reason}`.
    pub fn count_failure(&self, e: &WriteError) {
        let reason = match e {
            WriteError::Api { source, .. } => error_reason(source),
            _ => "other",
        };
        self.metrics.writes.error(self.kind, reason);
    }

    fn error(&self, verb: &'static str, e: kube::Error) -> WriteError {
        WriteError::Api {
            verb,
            kind: self.kind.to_string(),
            namespace: self.namespace.to_string(),
            name: self.name.to_string(),
            source: Box::new(e),
        }
    }
}
