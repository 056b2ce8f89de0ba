//! The live view's own watches (kube's client only: the CLI has no kube-runtime): each reads one
//! kind by label selector, keeps the objects in a map, and says when something changed.
//!
//! A watch lists first (500 a page; its errors are the text view's: not installed, RBAC, ...),
//! then watches from the list's resourceVersion with bookmarks. When the watch ends it resumes
//! from the last version; when the version is too old (410 Gone) or the API server fails, it
//! lists again after a pause (1 s, doubling up to 10 s) and reports the error until it recovers.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::read::online::{OnlineError, list};

/// Objects by `(namespace, name)`.
pub type Objects<K> = BTreeMap<(String, String), K>;

/// What a watch shares with its reader.
#[derive(Debug)]
pub struct Store<K> {
    objects: Mutex<Objects<K>>,
    error: Mutex<Option<String>>,
}

impl<K: Clone> Store<K> {
    /// A copy of every object.
    pub fn objects(&self) -> Vec<K> {
        self.objects
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// Reads the objects without copying them.
    pub fn with<R>(&self, f: impl FnOnce(&Objects<K>) -> R) -> R {
        f(&self.objects.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The last error, while it lasts.
    pub fn error(&self) -> Option<String> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_error(&self, e: Option<String>) {
        *self.error.lock().unwrap_or_else(PoisonError::into_inner) = e;
    }

    fn replace(&self, objects: Objects<K>) {
        *self.objects.lock().unwrap_or_else(PoisonError::into_inner) = objects;
    }

    fn apply(&self, f: impl FnOnce(&mut Objects<K>)) {
        f(&mut self.objects.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// A task that ends when this is dropped.
#[derive(Debug)]
pub struct Task(JoinHandle<()>);

impl From<JoinHandle<()>> for Task {
    fn from(handle: JoinHandle<()>) -> Self {
        Task(handle)
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One watch: what to read.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// A label selector.
    pub labels: Option<String>,
    /// A field selector.
    pub fields: Option<String>,
    /// For errors: `in namespace <ns>`, or all namespaces when `None`.
    pub namespace: Option<String>,
}

fn key<K: Resource>(o: &K) -> (String, String) {
    (
        o.meta().namespace.clone().unwrap_or_default(),
        o.meta().name.clone().unwrap_or_default(),
    )
}

/// Trims what the view never reads (managed fields are most of an object's size): no
/// annotation but the heartbeat of a hub copy (the fleet's LAST REPORT).
fn trimmed<K: Resource>(mut o: K) -> K {
    o.meta_mut().managed_fields = None;
    if let Some(a) = o.meta_mut().annotations.as_mut() {
        a.retain(|k, _| k == update_status_api::acm::LAST_REPORTED_ANNOTATION);
    }
    o
}

async fn list_all<K>(api: &Api<K>, sel: &Selection) -> Result<(Objects<K>, String), OnlineError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let mut params = ListParams::default().limit(500);
    if let Some(l) = &sel.labels {
        params = params.labels(l);
    }
    if let Some(f) = &sel.fields {
        params = params.fields(f);
    }
    let mut out = Objects::new();
    loop {
        let page = list(api, &params, sel.namespace.as_deref()).await?;
        let version = page.metadata.resource_version.clone().unwrap_or_default();
        out.extend(page.items.into_iter().map(|o| (key(&o), trimmed(o))));
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => return Ok((out, version)),
        }
    }
}

/// Lists `api` (errors returned: the caller stops before serving anything), then keeps the
/// store up to date in a task; `changed` is notified on every change and error.
pub async fn start<K>(
    api: Api<K>,
    sel: Selection,
    changed: Arc<Notify>,
) -> Result<(Arc<Store<K>>, Task), OnlineError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (objects, version) = list_all(&api, &sel).await?;
    let store = Arc::new(Store {
        objects: Mutex::new(objects),
        error: Mutex::new(None),
    });
    let task = tokio::spawn(run(api, sel, Arc::clone(&store), version, changed));
    Ok((store, Task(task)))
}

async fn run<K>(
    api: Api<K>,
    sel: Selection,
    store: Arc<Store<K>>,
    mut version: String,
    changed: Arc<Notify>,
) where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let mut pause = Duration::from_secs(1);
    loop {
        match watch_once(&api, &sel, &store, &mut version, &changed).await {
            Ok(()) => continue,
            // The version is too old: list again at once, nothing is wrong.
            Err(None) => {}
            Err(Some(e)) => {
                store.set_error(Some(e));
                changed.notify_one();
                tokio::time::sleep(pause).await;
            }
        }
        pause = (pause * 2).min(Duration::from_secs(10));
        match list_all(&api, &sel).await {
            Ok((objects, v)) => {
                store.replace(objects);
                store.set_error(None);
                version = v;
                pause = Duration::from_secs(1);
                changed.notify_one();
            }
            Err(e) => {
                store.set_error(Some(e.to_string()));
                changed.notify_one();
            }
        }
    }
}

/// Watches from `version` until the watch ends (`Ok`) or fails (`Err`: list again, after the
/// error when there is one; `None`: the version expired).
async fn watch_once<K>(
    api: &Api<K>,
    sel: &Selection,
    store: &Store<K>,
    version: &mut String,
    changed: &Notify,
) -> Result<(), Option<String>>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    if version.is_empty() {
        return Err(None);
    }
    let mut params = WatchParams::default().timeout(290);
    if let Some(l) = &sel.labels {
        params = params.labels(l);
    }
    if let Some(f) = &sel.fields {
        params = params.fields(f);
    }
    let stream = api
        .watch(&params, version)
        .await
        .map_err(|e| Some(format!("cannot watch {}: {e}", K::plural(&()))))?;
    let mut stream = std::pin::pin!(stream.map_err(|e| Some(e.to_string())));
    while let Some(event) = stream.next().await {
        match event? {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                if let Some(v) = o.resource_version() {
                    *version = v;
                }
                let o = trimmed(o);
                store.apply(|m| {
                    m.insert(key(&o), o);
                });
            }
            WatchEvent::Deleted(o) => {
                if let Some(v) = o.resource_version() {
                    *version = v;
                }
                store.apply(|m| {
                    m.remove(&key(&o));
                });
            }
            WatchEvent::Bookmark(b) => {
                *version = b.metadata.resource_version;
                continue;
            }
            WatchEvent::Error(status) if status.code == 410 => return Err(None),
            WatchEvent::Error(status) => {
                return Err(Some(format!(
                    "watching {}: {} ({})",
                    K::plural(&()),
                    status.message,
                    status.code
                )));
            }
        }
        store.set_error(None);
        changed.notify_one();
    }
    Ok(())
}
