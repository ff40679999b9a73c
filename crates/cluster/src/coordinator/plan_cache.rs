//! [`PlanCache`]: a coordinator's copy of the agency's Plan, Current and heartbeats, kept
//! current by a watch.
//!
//! What it is: one thread that reads everything under the agency prefix that the
//! [`Catalog`] needs (`Plan/`, `Current/Shards/`, `Current/ServersRegistered/`,
//! `Sync/ServerStates/`), then watches the prefix from the snapshot's revision plus one and
//! applies each batch of events, publishing a new [`Catalog`] after each. On any error (the
//! store unreachable, the history compacted, the watch closed) it starts again from a fresh
//! read. Callers take the current catalog ([`PlanCache::catalog`]) or wait, with a deadline,
//! until it includes a revision ([`PlanCache::wait_for_revision`]: DDL waits for its own
//! write) or satisfies a condition ([`PlanCache::wait_until`]: a shard's leader reported).
//!
//! What it is not: a writer, or a source of truth: decisions that must not act on a stale
//! view (DDL) are transactions guarded by the revisions they read.
//!
//! Invariants: the revision seen only grows; once it reached `r`, the catalog reflects every
//! change to the watched keys up to `r` (it is rebuilt only when a watched key changed: the
//! id counter moves often and changes nothing in it).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use quince_meta::{EventKind, MetaError, MetaStore, Revision};

use super::catalog::Catalog;
use crate::layout::Layout;

/// How long the watch thread waits for events before it looks at its stop flag.
const POLL: Duration = Duration::from_millis(100);

/// Which keys the catalog is built from (relative to the prefix).
const WATCHED: [&str; 4] = [
    "Plan/",
    "Current/Shards/",
    "Current/ServersRegistered/",
    "Sync/ServerStates/",
];

struct State {
    raw: BTreeMap<String, Vec<u8>>,
    catalog: Arc<Catalog>,
    /// The newest revision seen (the catalog is rebuilt only when a watched key changed, so
    /// its own revision may be older).
    seen: Revision,
    /// The last error seen by the watch thread (cleared by a successful read).
    error: Option<MetaError>,
}

struct Shared {
    layout: Layout,
    store: Arc<dyn MetaStore>,
    state: Mutex<State>,
    changed: Condvar,
    stop: AtomicBool,
}

/// The cache (see the module documentation).
pub struct PlanCache {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl PlanCache {
    /// Reads the store once (so the first catalog is complete) and starts the watch thread.
    pub fn start(store: Arc<dyn MetaStore>, layout: Layout) -> Result<PlanCache, MetaError> {
        let shared = Arc::new(Shared {
            layout,
            store,
            state: Mutex::new(State {
                raw: BTreeMap::new(),
                catalog: Arc::new(Catalog::default()),
                seen: 0,
                error: None,
            }),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let revision = shared.reload()?;
        let runner = shared.clone();
        let thread = std::thread::Builder::new()
            .name("coordinator-plan".into())
            .spawn(move || runner.run(revision))
            .expect("spawning the plan cache thread");
        Ok(PlanCache {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The current view.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.shared.state.lock().catalog.clone()
    }

    /// Waits until the view includes `revision`; false when `timeout` passed first.
    pub fn wait_for_revision(&self, revision: Revision, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.state.lock();
        while state.seen < revision {
            if self
                .shared
                .changed
                .wait_until(&mut state, deadline)
                .timed_out()
            {
                return state.seen >= revision;
            }
        }
        true
    }

    /// Waits until `condition` holds for the view; the view, or `None` when `timeout` passed
    /// first.
    pub fn wait_until(
        &self,
        timeout: Duration,
        mut condition: impl FnMut(&Catalog) -> bool,
    ) -> Option<Arc<Catalog>> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.state.lock();
        loop {
            if condition(&state.catalog) {
                return Some(state.catalog.clone());
            }
            if self
                .shared
                .changed
                .wait_until(&mut state, deadline)
                .timed_out()
            {
                return condition(&state.catalog).then(|| state.catalog.clone());
            }
        }
    }

    /// Reads the store now and publishes what it read (after a write whose revision the watch
    /// has not delivered yet, or to recover at once from a suspected stale view).
    pub fn refresh(&self) -> Result<(), MetaError> {
        self.shared.reload().map(|_| ())
    }

    /// Stops the watch thread. Idempotent.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.lock().take() {
            let _ = thread.join();
        }
    }
}

impl Drop for PlanCache {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Shared {
    fn watched(&self, key: &str) -> bool {
        let prefix = format!("{}/", self.layout.prefix());
        key.strip_prefix(&prefix)
            .is_some_and(|rest| WATCHED.iter().any(|w| rest.starts_with(w)))
    }

    /// A fresh read of every watched key (one consistent range of the prefix); publishes it
    /// unless the view is already newer.
    fn reload(&self) -> Result<Revision, MetaError> {
        let snapshot = self.store.range(&format!("{}/", self.layout.prefix()))?;
        let raw: BTreeMap<String, Vec<u8>> = snapshot
            .entries
            .into_iter()
            .filter(|entry| self.watched(&entry.key))
            .map(|entry| (entry.key, entry.value))
            .collect();
        let mut state = self.state.lock();
        if snapshot.revision >= state.seen {
            let catalog = Catalog::build(&self.layout, snapshot.revision, raw.iter());
            state.raw = raw;
            state.catalog = Arc::new(catalog);
            state.seen = snapshot.revision;
            state.error = None;
            self.changed.notify_all();
        }
        Ok(snapshot.revision)
    }

    fn run(self: Arc<Self>, mut revision: Revision) {
        let prefix = format!("{}/", self.layout.prefix());
        while !self.stop.load(Ordering::Acquire) {
            match self.follow(&prefix, revision) {
                Ok(()) => return,
                Err(error) => {
                    tracing::warn!(event = "coordinator.plan_watch_failed", "{error}");
                    self.state.lock().error = Some(error);
                }
            }
            // Back off a little before reading again; the stop flag is checked each time.
            loop {
                if self.stop.load(Ordering::Acquire) {
                    return;
                }
                std::thread::park_timeout(POLL);
                match self.reload() {
                    Ok(read) => {
                        revision = read;
                        break;
                    }
                    Err(error) => self.state.lock().error = Some(error),
                }
            }
        }
    }

    /// Follows the watch until stopped (Ok) or it fails.
    fn follow(&self, prefix: &str, from: Revision) -> Result<(), MetaError> {
        let watch = self.store.watch(prefix, from.saturating_add(1).max(1))?;
        while !self.stop.load(Ordering::Acquire) {
            let Some(events) = watch.next_timeout(POLL)? else {
                continue;
            };
            let mut state = self.state.lock();
            let base = state.seen;
            let mut newest = base;
            let mut changed = false;
            for event in events {
                newest = newest.max(event.entry.mod_revision);
                // A reload may have published a newer read than this event: skip what it holds.
                if event.entry.mod_revision <= base || !self.watched(&event.entry.key) {
                    continue;
                }
                changed = true;
                match event.kind {
                    EventKind::Put => {
                        state.raw.insert(event.entry.key, event.entry.value);
                    }
                    EventKind::Delete => {
                        state.raw.remove(&event.entry.key);
                    }
                }
            }
            if changed {
                let catalog = Catalog::build(&self.layout, newest, state.raw.iter());
                state.catalog = Arc::new(catalog);
            }
            if newest > state.seen {
                state.seen = newest;
                self.changed.notify_all();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{encode, DatabasePlan};
    use quince_meta::MemoryStore;

    fn database(name: &str) -> Vec<u8> {
        encode(&DatabasePlan {
            name: name.into(),
            id: 1,
            sharding: String::new(),
            replication_factor: 1,
            write_concern: 1,
        })
    }

    #[test]
    fn the_cache_follows_the_store_and_waits_for_revisions() {
        let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
        let layout = Layout::default();
        store.put(&layout.database("a"), &database("a")).unwrap();
        let cache = PlanCache::start(store.clone(), layout.clone()).unwrap();
        assert!(
            cache.catalog().databases.contains_key("a"),
            "the first read"
        );
        let revision = store.put(&layout.database("b"), &database("b")).unwrap();
        assert!(cache.wait_for_revision(revision, Duration::from_secs(10)));
        assert!(cache.catalog().databases.contains_key("b"));
        // A change outside the watched keys moves the revision, not the catalog.
        let before = cache.catalog();
        let revision = store.put(&layout.latest_id(), b"20000").unwrap();
        assert!(cache.wait_for_revision(revision, Duration::from_secs(10)));
        assert!(Arc::ptr_eq(&before, &cache.catalog()));
        store
            .txn(quince_meta::Txn::when(
                Vec::new(),
                vec![quince_meta::Op::delete(layout.database("a"))],
            ))
            .unwrap();
        let gone = cache.wait_until(Duration::from_secs(10), |c| !c.databases.contains_key("a"));
        assert!(gone.is_some(), "a deletion reaches the cache");
        assert!(!cache.wait_for_revision(i64::MAX, Duration::from_millis(1)));
        cache.stop();
    }

    /// A store whose first watch fails at once (as a compacted history does).
    struct FirstWatchFails {
        inner: MemoryStore,
        watches: std::sync::atomic::AtomicUsize,
    }

    impl MetaStore for FirstWatchFails {
        fn get(&self, key: &str) -> Result<Option<quince_meta::Entry>, MetaError> {
            self.inner.get(key)
        }
        fn range(&self, prefix: &str) -> Result<quince_meta::Snapshot, MetaError> {
            self.inner.range(prefix)
        }
        fn txn(&self, txn: quince_meta::Txn) -> Result<quince_meta::TxnResult, MetaError> {
            self.inner.txn(txn)
        }
        fn watch(&self, prefix: &str, from: Revision) -> Result<quince_meta::Watch, MetaError> {
            if self.watches.fetch_add(1, Ordering::AcqRel) == 0 {
                let (sender, receiver) = std::sync::mpsc::channel();
                sender.send(Err(MetaError::Compacted(from))).unwrap();
                return Ok(quince_meta::Watch::new(receiver, Box::new(())));
            }
            self.inner.watch(prefix, from)
        }
        fn grant_lease(&self, ttl: Duration) -> Result<quince_meta::LeaseId, MetaError> {
            self.inner.grant_lease(ttl)
        }
        fn keep_alive(&self, lease: quince_meta::LeaseId) -> Result<(), MetaError> {
            self.inner.keep_alive(lease)
        }
        fn revoke_lease(&self, lease: quince_meta::LeaseId) -> Result<(), MetaError> {
            self.inner.revoke_lease(lease)
        }
    }

    #[test]
    fn a_failed_watch_starts_again_from_a_fresh_read() {
        let flaky = Arc::new(FirstWatchFails {
            inner: MemoryStore::default(),
            watches: Default::default(),
        });
        let store: Arc<dyn MetaStore> = flaky.clone();
        let layout = Layout::default();
        let cache = PlanCache::start(store.clone(), layout.clone()).unwrap();
        let revision = store
            .put(&layout.database("late"), &database("late"))
            .unwrap();
        assert!(cache.wait_for_revision(revision, Duration::from_secs(10)));
        assert!(cache.catalog().databases.contains_key("late"));
        // The reload that follows the failure may publish the revision before the second
        // watch is opened: wait for that watch.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while flaky.watches.load(Ordering::Acquire) < 2 {
            assert!(
                std::time::Instant::now() < deadline,
                "the watch was not started again"
            );
            std::thread::yield_now();
        }
        let revision = store
            .put(&layout.database("later"), &database("later"))
            .unwrap();
        assert!(cache.wait_for_revision(revision, Duration::from_secs(10)));
        assert!(cache.catalog().databases.contains_key("later"));
        cache.stop();
    }
}
