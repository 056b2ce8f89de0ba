//! With `--fleet --web`: the views of single clusters opened from the grid (`/c/<namespace>`,
//! `/c/<namespace>/<hosted cluster>`), each one set of watches on the hub, opened on demand.
//!
//! - **A cap:** at most [`MAX_OPEN`] clusters are watched at once; opening another closes the
//!   least recently viewed (one no page shows first), whose open pages see their event stream
//!   end (they reconnect, which opens it again).
//! - **No lock across I/O:** the map of views is locked only to look up, insert and remove;
//!   opening a view (the hub's lists) happens outside it, once per cluster however many requests
//!   ask for it at the same time (`OnceCell`), so a slow or failing cluster delays no other.
//! - **Closed when unused:** a view no page shows is closed [`LINGER`] after it was last viewed
//!   (checked every [`SWEEP`] and at each request).
//!
//! The cache is generic over how a view is opened ([`Open`]): the server's opener starts the
//! hub watches ([`HubOpener`]); the unit tests count and hold their openings.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use jiff::Timestamp;
use kube::Client;
use tokio::sync::{Notify, OnceCell, watch};
use tokio::time::Instant;

use super::feed::{self, ClusterFeed, ClusterScope, Published};
use super::watch::Task;

/// Clusters watched at once (each: five lists, then five watches on the hub).
pub const MAX_OPEN: usize = 8;
/// How long a view no page shows stays open after it was last viewed.
pub const LINGER: Duration = Duration::from_secs(60);
/// How often views past [`LINGER`] are looked for.
pub const SWEEP: Duration = Duration::from_secs(15);

/// A cluster: its hub namespace, and the hosted cluster's name.
pub type Key = (String, Option<String>);

/// What opening a view gives: its data, and the task feeding it (which ends when dropped,
/// closing its watches).
pub type Opened = (Published, Task);

/// A future opening a view.
pub type Opening = Pin<Box<dyn Future<Output = Result<Opened, String>> + Send>>;

/// How a view is opened.
pub trait Open: Send + Sync + 'static {
    /// Opens the view of `key` (its error is shown to the page: 502).
    fn open(&self, key: &Key) -> Opening;
}

/// Opens a cluster's view from the hub copies (`ClusterFeed` of its namespace).
pub struct HubOpener {
    /// The hub.
    pub client: Client,
    /// `--now`.
    pub now: Option<Timestamp>,
}

impl Open for HubOpener {
    fn open(&self, key: &Key) -> Opening {
        let (client, now) = (self.client.clone(), self.now);
        let (namespace, hosted) = key.clone();
        Box::pin(async move {
            let title = match &hosted {
                Some(h) => format!("hosted cluster {h} (namespace {namespace}, hub copies)"),
                None => format!("cluster {namespace} (hub copies)"),
            };
            let changed = Arc::new(Notify::new());
            let scope = ClusterScope {
                namespace: &namespace,
                hosted: hosted.as_deref(),
            };
            let cluster = ClusterFeed::start(&client, scope, title, &changed, false)
                .await
                .map_err(|e| e.to_string())?;
            Ok(feed::publish(cluster, changed, now))
        })
    }
}

/// One cluster's view.
struct Slot {
    opened: OnceCell<Opened>,
    /// Pages showing it (event streams open).
    readers: AtomicUsize,
    /// When it was last asked for, or last shown.
    last_viewed: Mutex<Instant>,
    /// Set when it is closed: its streams end.
    closed: watch::Sender<bool>,
}

impl Slot {
    fn new() -> Self {
        Slot {
            opened: OnceCell::new(),
            readers: AtomicUsize::new(0),
            last_viewed: Mutex::new(Instant::now()),
            closed: watch::Sender::new(false),
        }
    }

    fn touch(&self) {
        *self
            .last_viewed
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn last_viewed(&self) -> Instant {
        *self
            .last_viewed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn shown(&self) -> bool {
        self.readers.load(Ordering::Relaxed) > 0
    }

    fn close(&self) {
        self.closed.send_replace(true);
    }
}

type Slots = Mutex<HashMap<Key, Arc<Slot>>>;

/// The open views.
pub struct Views<O> {
    opener: O,
    slots: Arc<Slots>,
    linger: Duration,
    _sweeper: Task,
}

/// A view as a request gets it.
pub struct View {
    /// Its data.
    pub data: Published,
    slot: Arc<Slot>,
}

impl View {
    /// Counts a page showing it until the returned guard drops.
    pub fn reader(&self) -> Reader {
        self.slot.readers.fetch_add(1, Ordering::Relaxed);
        self.slot.touch();
        Reader(Arc::clone(&self.slot))
    }

    /// Completes when the view is closed (at once if it already is).
    pub fn closed(&self) -> impl Future<Output = ()> + Send + 'static + use<> {
        let mut rx = self.slot.closed.subscribe();
        async move {
            let _ = rx.wait_for(|closed| *closed).await;
        }
    }
}

/// A page showing a view (see [`View::reader`]); holds the view open while it lives.
pub struct Reader(Arc<Slot>);

impl Drop for Reader {
    fn drop(&mut self) {
        self.0.touch();
        self.0.readers.fetch_sub(1, Ordering::Relaxed);
    }
}

fn lock(slots: &Slots) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<Slot>>> {
    slots.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Closes the views no page shows that were last viewed `linger` ago or more.
fn sweep(slots: &mut HashMap<Key, Arc<Slot>>, linger: Duration) {
    slots.retain(|_, s| {
        let keep = s.shown() || s.opened.get().is_none() || s.last_viewed().elapsed() < linger;
        if !keep {
            s.close();
        }
        keep
    });
}

impl<O: Open> Views<O> {
    /// No view open yet; starts the sweeper (a tokio runtime is needed).
    pub fn new(opener: O) -> Self {
        Self::with_timing(opener, LINGER, SWEEP)
    }

    /// As [`Views::new`], views no page shows closed `linger` after they were last viewed,
    /// looked for every `every`.
    fn with_timing(opener: O, linger: Duration, every: Duration) -> Self {
        let slots: Arc<Slots> = Arc::default();
        let weak: Weak<Slots> = Arc::downgrade(&slots);
        let sweeper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(slots) = weak.upgrade() else { return };
                sweep(&mut lock(&slots), linger);
            }
        });
        Views {
            opener,
            slots,
            linger,
            _sweeper: Task::from(sweeper),
        }
    }

    /// The view of `key`, opened if needed (closing the least recently viewed one past
    /// [`MAX_OPEN`]); the opener's error otherwise.
    pub async fn get(&self, key: Key) -> Result<View, String> {
        let slot = {
            let mut slots = lock(&self.slots);
            sweep(&mut slots, self.linger);
            match slots.get(&key) {
                Some(s) => {
                    s.touch();
                    Arc::clone(s)
                }
                None => {
                    while slots.len() >= MAX_OPEN {
                        // The least recently viewed, those no page shows first.
                        let Some(victim) = slots
                            .iter()
                            .min_by_key(|(_, s)| (s.shown(), s.last_viewed()))
                            .map(|(k, _)| k.clone())
                        else {
                            break;
                        };
                        if let Some(s) = slots.remove(&victim) {
                            s.close();
                        }
                    }
                    let s = Arc::new(Slot::new());
                    slots.insert(key.clone(), Arc::clone(&s));
                    s
                }
            }
        };
        // Outside the lock: other clusters are served meanwhile; requests for this one wait
        // for the same opening.
        match slot.opened.get_or_try_init(|| self.opener.open(&key)).await {
            Ok((data, _)) => Ok(View {
                data: data.clone(),
                slot,
            }),
            Err(e) => {
                let mut slots = lock(&self.slots);
                if slots.get(&key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                    slots.remove(&key);
                }
                Err(e)
            }
        }
    }

    /// The clusters open now.
    #[cfg(test)]
    fn open_keys(&self) -> Vec<Key> {
        let mut keys: Vec<Key> = lock(&self.slots).keys().cloned().collect();
        keys.sort();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Opens views whose task holds the data's sender (the data closes when the task ends);
    /// counts its openings; holds those of the keys in `held` until `release` is notified.
    #[derive(Clone, Default)]
    struct Fake {
        opened: Arc<Mutex<Vec<Key>>>,
        held: Arc<Mutex<HashSet<String>>>,
        release: Arc<Notify>,
        fail: Arc<Mutex<HashSet<String>>>,
    }

    impl Open for Fake {
        fn open(&self, key: &Key) -> Opening {
            let f = self.clone();
            let key = key.clone();
            Box::pin(async move {
                f.opened.lock().expect("lock").push(key.clone());
                let held = f.held.lock().expect("lock").contains(&key.0);
                if held {
                    f.release.notified().await;
                }
                if f.fail.lock().expect("lock").contains(&key.0) {
                    return Err(format!("cannot list in {}", key.0));
                }
                let (tx, rx) = watch::channel(Arc::new(format!("{key:?}")));
                let task = tokio::spawn(async move {
                    let _tx = tx;
                    std::future::pending::<()>().await;
                });
                Ok((rx, Task::from(task)))
            })
        }
    }

    impl Fake {
        fn openings(&self) -> usize {
            self.opened.lock().expect("lock").len()
        }
    }

    fn key(ns: &str) -> Key {
        (ns.to_owned(), None)
    }

    /// Its data's sender is gone: the view's task ended, its watches closed.
    async fn ended(data: &mut Published) -> bool {
        tokio::time::timeout(Duration::from_secs(5), data.changed())
            .await
            .is_ok_and(|r| r.is_err())
    }

    #[tokio::test]
    async fn at_most_max_open_clusters_the_least_recently_viewed_closed() {
        let fake = Fake::default();
        let views = Views::new(fake.clone());
        let mut first = Vec::new();
        for i in 0..MAX_OPEN {
            first.push(views.get(key(&format!("ns{i}"))).await.expect("open").data);
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        // ns0 viewed again: ns1 is now the least recently viewed.
        views.get(key("ns0")).await.expect("again");
        assert_eq!(fake.openings(), MAX_OPEN, "a view open is not opened again");
        views.get(key("new")).await.expect("open");
        assert_eq!(fake.openings(), MAX_OPEN + 1);
        let open = views.open_keys();
        assert_eq!(open.len(), MAX_OPEN, "{open:?}");
        assert!(
            !open.contains(&key("ns1")) && open.contains(&key("ns0")),
            "{open:?}"
        );
        assert!(ended(&mut first[1]).await, "ns1's watches were not closed");
        assert!(first[0].has_changed().is_ok(), "ns0 was closed");
        // ns1 again: opened anew.
        views.get(key("ns1")).await.expect("reopen");
        assert_eq!(fake.openings(), MAX_OPEN + 2);
        assert_eq!(views.open_keys().len(), MAX_OPEN);
    }

    #[tokio::test]
    async fn a_view_a_page_shows_is_closed_after_those_no_page_shows() {
        let fake = Fake::default();
        let views = Views::new(fake.clone());
        // ns0 is the oldest, but a page shows it.
        let shown = views.get(key("ns0")).await.expect("open");
        let reader = shown.reader();
        for i in 1..MAX_OPEN {
            tokio::time::sleep(Duration::from_millis(2)).await;
            views.get(key(&format!("ns{i}"))).await.expect("open");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
        views.get(key("new")).await.expect("open");
        let open = views.open_keys();
        assert!(
            open.contains(&key("ns0")) && !open.contains(&key("ns1")),
            "{open:?}"
        );
        // When every view is shown, the least recently viewed goes all the same, and its page's
        // stream ends.
        let mut readers = Vec::new();
        for k in open.iter().filter(|k| **k != key("ns0")) {
            readers.push(views.get(k.clone()).await.expect("open").reader());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
        let closed = shown.closed();
        views.get(key("another")).await.expect("open");
        assert!(!views.open_keys().contains(&key("ns0")));
        tokio::time::timeout(Duration::from_secs(5), closed)
            .await
            .expect("ns0's page was not told its view closed");
        let mut data = shown.data.clone();
        drop((reader, shown, readers));
        assert!(ended(&mut data).await, "ns0's watches outlived its pages");
    }

    #[tokio::test]
    async fn opening_a_slow_cluster_delays_no_other_and_happens_once() {
        let fake = Fake::default();
        fake.held.lock().expect("lock").insert("slow".to_owned());
        let views = Arc::new(Views::new(fake.clone()));
        let (a, b) = (Arc::clone(&views), Arc::clone(&views));
        let slow1 = tokio::spawn(async move { a.get(key("slow")).await.map(|v| v.data) });
        let slow2 = tokio::spawn(async move { b.get(key("slow")).await.map(|v| v.data) });
        tokio::task::yield_now().await;
        // Another cluster while "slow" is still listing: served at once.
        tokio::time::timeout(Duration::from_secs(5), views.get(key("fast")))
            .await
            .expect("a slow cluster's opening held up another cluster")
            .expect("open");
        fake.release.notify_waiters();
        let (d1, d2) = (slow1.await.expect("join"), slow2.await.expect("join"));
        assert_eq!(
            *d1.expect("slow").borrow().as_str(),
            *d2.expect("slow").borrow().as_str()
        );
        let slow_openings = fake
            .opened
            .lock()
            .expect("lock")
            .iter()
            .filter(|k| k.0 == "slow")
            .count();
        assert_eq!(
            slow_openings, 1,
            "two requests opened the same cluster twice"
        );
    }

    #[tokio::test]
    async fn a_failed_opening_takes_no_slot_and_is_tried_again() {
        let fake = Fake::default();
        fake.fail.lock().expect("lock").insert("bad".to_owned());
        let views = Views::new(fake.clone());
        let e = views.get(key("bad")).await.err().expect("an error");
        assert_eq!(e, "cannot list in bad");
        assert!(views.open_keys().is_empty());
        fake.fail.lock().expect("lock").clear();
        views.get(key("bad")).await.expect("open");
        assert_eq!(fake.openings(), 2);
    }

    #[tokio::test]
    async fn a_view_no_page_shows_closes_a_while_after_it_was_last_viewed() {
        // LINGER and SWEEP scaled down from a minute and 15 s.
        let (linger, every) = (Duration::from_millis(400), Duration::from_millis(50));
        let fake = Fake::default();
        let views = Views::with_timing(fake.clone(), linger, every);
        let mut idle = views.get(key("idle")).await.expect("open").data;
        let shown = views.get(key("shown")).await.expect("open");
        let reader = shown.reader();
        assert_eq!(views.open_keys().len(), 2);
        // The sweeper, with no request: the idle one goes, the shown one stays.
        assert!(ended(&mut idle).await, "the idle view was not closed");
        assert_eq!(views.open_keys(), vec![key("shown")]);
        tokio::time::sleep(linger * 2).await;
        assert_eq!(views.open_keys(), vec![key("shown")]);
        // Its page closes: it lingers, then goes.
        drop(reader);
        assert_eq!(views.open_keys(), vec![key("shown")]);
        let mut data = shown.data.clone();
        drop(shown);
        assert!(
            ended(&mut data).await,
            "the view outlived its page by more than 5 s"
        );
        assert!(views.open_keys().is_empty());
    }
}
