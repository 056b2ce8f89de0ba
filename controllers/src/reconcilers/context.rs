//! The one context every reconciler is built from ([`Context`], like kube-rs `Controller`'s):
//! made once by the start-up, cloned into each reconciler's `new`.

use std::sync::Arc;

use crate::cache::watch::Caches;
use crate::metrics::Metrics;
use crate::runtime::writer::{StatusObject, Writer};

/// What the reconcilers of one process are built from, made once by the start-up and cloned
/// into each `new` (cheap: a client, reflector stores and `Arc`s). `C`: the caches of the mode
/// ([`Caches`] in standalone mode, [`crate::cache::hosted::HostedCaches`] in hosted mode).
#[derive(Clone)]
pub struct Context<C = Caches> {
    /// The API client of the cluster written.
    pub client: kube::Client,
    /// The namespace our objects are written to (`--namespace`; hosted mode: each
    /// HostedCluster's own).
    pub namespace: String,
    /// The watch caches read.
    pub caches: C,
    /// The process's metrics.
    pub metrics: Arc<Metrics>,
    /// `--cluster-id`: the cluster's identity in our objects' labels and the passes' spans.
    pub cluster_id: Option<String>,
}

impl<C> Context<C> {
    /// A writer of `K` in the context's namespace for the reconciler `name`.
    pub fn writer<K: StatusObject>(&self, name: &'static str) -> Writer<K> {
        Writer::new(
            self.client.clone(),
            &self.namespace,
            name,
            self.metrics.clone(),
        )
    }

    /// The same context with other caches.
    pub fn with_caches<D>(self, caches: D) -> Context<D> {
        Context {
            client: self.client,
            namespace: self.namespace,
            caches,
            metrics: self.metrics,
            cluster_id: self.cluster_id,
        }
    }
}
