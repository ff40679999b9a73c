//! [`MemoryStore`]: the metadata store in process memory, for deterministic simulation tests.
//!
//! What it is: a sorted map of keys with etcd's revisions, transactions, watches (replayed
//! from a bounded history, then live) and leases, behind one mutex. Time is a [`Clock`]: a
//! test drives a [`ManualClock`], and a lease expires at the first call that sees its
//! deadline passed (or at [`MemoryStore::expire_leases`]).
//!
//! What it is not: durable or distributed: one process's memory, gone with it.
//!
//! Invariants: those of the crate; in addition every call is one step under the mutex, so
//! a sequence of calls from one thread is applied in that order, and [`MemoryStore::set_available`]
//! makes every call fail with [`MetaError::Unavailable`] without changing anything (a store
//! outage, or a partition of every client).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::store::{
    Compare, Entry, Event, EventKind, LeaseId, MetaError, MetaStore, Op, Revision, Snapshot, Txn,
    TxnResult, Watch,
};

/// How many events the store keeps for watches that start in the past.
const HISTORY_MAX: usize = 100_000;

/// The time leases are measured in.
pub trait Clock: Send + Sync {
    /// Time since some fixed start.
    fn now(&self) -> Duration;
}

/// The machine's monotonic clock.
pub struct SystemClock(Instant);

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock(Instant::now())
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

/// A clock that moves only when told to (simulation tests).
#[derive(Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.0.fetch_add(nanos, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::SeqCst))
    }
}

struct Lease {
    ttl: Duration,
    deadline: Duration,
    keys: BTreeSet<String>,
}

struct Watcher {
    prefix: String,
    sender: Sender<Result<Vec<Event>, MetaError>>,
}

#[derive(Default)]
struct State {
    revision: Revision,
    keys: BTreeMap<String, Entry>,
    history: VecDeque<Event>,
    leases: HashMap<LeaseId, Lease>,
    next_lease: LeaseId,
    watchers: HashMap<u64, Watcher>,
    next_watcher: u64,
}

struct Inner {
    state: Mutex<State>,
    clock: Arc<dyn Clock>,
    available: AtomicBool,
}

/// The in-memory store (see the module documentation). Clones share the store.
#[derive(Clone)]
pub struct MemoryStore {
    inner: Arc<Inner>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(Arc::new(SystemClock::default()))
    }
}

impl MemoryStore {
    /// An empty store whose leases follow `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> MemoryStore {
        MemoryStore {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                clock,
                available: AtomicBool::new(true),
            }),
        }
    }

    /// Makes every later call fail (false) or work again (true).
    pub fn set_available(&self, available: bool) {
        self.inner.available.store(available, Ordering::SeqCst);
    }

    /// Expires every lease whose deadline has passed (calls do this themselves too).
    pub fn expire_leases(&self) {
        let now = self.inner.clock.now();
        self.inner.state.lock().expire(now);
    }

    /// The current revision.
    pub fn revision(&self) -> Revision {
        self.inner.state.lock().revision
    }

    fn enter(&self) -> Result<parking_lot::MutexGuard<'_, State>, MetaError> {
        if !self.inner.available.load(Ordering::SeqCst) {
            return Err(MetaError::Unavailable(
                "the in-memory store is switched off".into(),
            ));
        }
        let now = self.inner.clock.now();
        let mut state = self.inner.state.lock();
        state.expire(now);
        Ok(state)
    }
}

impl State {
    fn expire(&mut self, now: Duration) {
        let expired: Vec<LeaseId> = self
            .leases
            .iter()
            .filter(|(_, lease)| lease.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            self.end_lease(id);
        }
    }

    fn end_lease(&mut self, id: LeaseId) {
        let Some(lease) = self.leases.remove(&id) else {
            return;
        };
        let ops: Vec<Op> = lease.keys.into_iter().map(Op::Delete).collect();
        self.apply(&ops);
    }

    fn matches(&self, compare: &Compare) -> bool {
        match compare {
            Compare::ModRevision(key, revision) => {
                self.keys.get(key).map_or(0, |entry| entry.mod_revision) == *revision
            }
            Compare::Value(key, value) => self.keys.get(key).is_some_and(|e| &e.value == value),
            Compare::Exists(key) => self.keys.contains_key(key),
            Compare::Absent(key) => !self.keys.contains_key(key),
        }
    }

    /// Applies `ops` in one revision (if any of them changes something) and tells watchers.
    fn apply(&mut self, ops: &[Op]) {
        let revision = self.revision + 1;
        let mut events = Vec::new();
        for op in ops {
            match op {
                Op::Put { key, value, lease } => {
                    let lease = lease.unwrap_or(0);
                    let previous = self.keys.get(key).cloned();
                    if let Some(old) = previous.as_ref().filter(|old| old.lease != lease) {
                        if let Some(old_lease) = self.leases.get_mut(&old.lease) {
                            old_lease.keys.remove(key);
                        }
                    }
                    if let Some(new_lease) = self.leases.get_mut(&lease) {
                        new_lease.keys.insert(key.clone());
                    }
                    let entry = Entry {
                        key: key.clone(),
                        value: value.clone(),
                        create_revision: previous.as_ref().map_or(revision, |e| e.create_revision),
                        mod_revision: revision,
                        version: previous.as_ref().map_or(1, |e| e.version + 1),
                        lease,
                    };
                    self.keys.insert(key.clone(), entry.clone());
                    events.push(Event {
                        kind: EventKind::Put,
                        entry,
                    });
                }
                Op::Delete(key) => {
                    if let Some(old) = self.keys.remove(key) {
                        events.push(self.deleted(old, revision));
                    }
                }
                Op::DeletePrefix(prefix) => {
                    let doomed: Vec<String> = self
                        .keys
                        .range(prefix.clone()..)
                        .take_while(|(key, _)| key.starts_with(prefix.as_str()))
                        .map(|(key, _)| key.clone())
                        .collect();
                    for key in doomed {
                        let old = self.keys.remove(&key).expect("listed just now");
                        events.push(self.deleted(old, revision));
                    }
                }
            }
        }
        if events.is_empty() {
            return;
        }
        self.revision = revision;
        for event in &events {
            if self.history.len() == HISTORY_MAX {
                self.history.pop_front();
            }
            self.history.push_back(event.clone());
        }
        self.watchers.retain(|_, watcher| {
            let batch: Vec<Event> = events
                .iter()
                .filter(|event| event.entry.key.starts_with(&watcher.prefix))
                .cloned()
                .collect();
            batch.is_empty() || watcher.sender.send(Ok(batch)).is_ok()
        });
    }

    fn deleted(&mut self, old: Entry, revision: Revision) -> Event {
        if let Some(lease) = self.leases.get_mut(&old.lease) {
            lease.keys.remove(&old.key);
        }
        Event {
            kind: EventKind::Delete,
            entry: Entry {
                key: old.key,
                value: Vec::new(),
                create_revision: 0,
                mod_revision: revision,
                version: 0,
                lease: 0,
            },
        }
    }
}

/// Removes a watcher from the store when its [`Watch`] is dropped.
struct CancelWatch {
    inner: Weak<Inner>,
    id: u64,
}

impl Drop for CancelWatch {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade() {
            inner.state.lock().watchers.remove(&self.id);
        }
    }
}

impl MetaStore for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<Entry>, MetaError> {
        Ok(self.enter()?.keys.get(key).cloned())
    }

    fn range(&self, prefix: &str) -> Result<Snapshot, MetaError> {
        let state = self.enter()?;
        let entries = state
            .keys
            .range(prefix.to_string()..)
            .take_while(|(key, _)| key.starts_with(prefix))
            .map(|(_, entry)| entry.clone())
            .collect();
        Ok(Snapshot {
            entries,
            revision: state.revision,
        })
    }

    fn txn(&self, txn: Txn) -> Result<TxnResult, MetaError> {
        let mut state = self.enter()?;
        let succeeded = txn.compares.iter().all(|compare| state.matches(compare));
        let ops = if succeeded { &txn.then } else { &txn.otherwise };
        for op in ops {
            if let Op::Put {
                lease: Some(lease), ..
            } = op
            {
                if !state.leases.contains_key(lease) {
                    return Err(MetaError::LeaseNotFound(*lease));
                }
            }
        }
        state.apply(ops);
        Ok(TxnResult {
            succeeded,
            revision: state.revision,
        })
    }

    fn watch(&self, prefix: &str, from_revision: Revision) -> Result<Watch, MetaError> {
        let mut state = self.enter()?;
        let oldest = state
            .history
            .front()
            .map_or(state.revision + 1, |event| event.entry.mod_revision);
        if from_revision < oldest && from_revision <= state.revision && oldest > 1 {
            return Err(MetaError::Compacted(oldest - 1));
        }
        let (sender, receiver) = channel();
        let replay: Vec<Event> = state
            .history
            .iter()
            .filter(|event| {
                event.entry.mod_revision >= from_revision && event.entry.key.starts_with(prefix)
            })
            .cloned()
            .collect();
        if !replay.is_empty() {
            sender.send(Ok(replay)).expect("the receiver is here");
        }
        let id = state.next_watcher;
        state.next_watcher += 1;
        state.watchers.insert(
            id,
            Watcher {
                prefix: prefix.to_string(),
                sender,
            },
        );
        let cancel = CancelWatch {
            inner: Arc::downgrade(&self.inner),
            id,
        };
        Ok(Watch::new(receiver, Box::new(cancel)))
    }

    fn grant_lease(&self, ttl: Duration) -> Result<LeaseId, MetaError> {
        let now = self.inner.clock.now();
        let mut state = self.enter()?;
        state.next_lease += 1;
        let id = state.next_lease;
        state.leases.insert(
            id,
            Lease {
                ttl,
                deadline: now + ttl,
                keys: BTreeSet::new(),
            },
        );
        Ok(id)
    }

    fn keep_alive(&self, lease: LeaseId) -> Result<(), MetaError> {
        let now = self.inner.clock.now();
        let mut state = self.enter()?;
        let lease_state = state
            .leases
            .get_mut(&lease)
            .ok_or(MetaError::LeaseNotFound(lease))?;
        lease_state.deadline = now + lease_state.ttl;
        Ok(())
    }

    fn revoke_lease(&self, lease: LeaseId) -> Result<(), MetaError> {
        let mut state = self.enter()?;
        if !state.leases.contains_key(&lease) {
            return Err(MetaError::LeaseNotFound(lease));
        }
        state.end_lease(lease);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (MemoryStore, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::default());
        (MemoryStore::new(clock.clone()), clock)
    }

    #[test]
    fn transactions_apply_only_when_their_compares_hold() {
        let (store, _) = store();
        let first = store
            .txn(Txn::when(
                vec![Compare::Absent("/a".into())],
                vec![Op::put("/a", "1")],
            ))
            .unwrap();
        assert!(first.succeeded);
        assert_eq!(first.revision, 1);
        let again = store
            .txn(Txn::when(
                vec![Compare::Absent("/a".into())],
                vec![Op::put("/a", "2")],
            ))
            .unwrap();
        assert!(!again.succeeded);
        assert_eq!(again.revision, 1, "a failed transaction changes nothing");
        let entry = store.get("/a").unwrap().unwrap();
        assert_eq!(entry.value, b"1");
        let guarded = store
            .txn(Txn::when(
                vec![Compare::ModRevision("/a".into(), entry.mod_revision)],
                vec![Op::put("/a", "3"), Op::put("/b", "x")],
            ))
            .unwrap();
        assert!(guarded.succeeded);
        assert_eq!(guarded.revision, 2, "one revision per transaction");
        let snapshot = store.range("/").unwrap();
        assert_eq!(snapshot.entries.len(), 2);
        assert_eq!(snapshot.entries[0].version, 2);
        assert_eq!(snapshot.entries[0].create_revision, 1);
    }

    #[test]
    fn watches_replay_history_then_follow_live_changes() {
        let (store, _) = store();
        store.put("/p/1", b"a").unwrap();
        store.put("/q/1", b"b").unwrap();
        store.put("/p/2", b"c").unwrap();
        let watch = store.watch("/p/", 2).unwrap();
        store
            .txn(Txn::when(vec![], vec![Op::DeletePrefix("/p/".into())]))
            .unwrap();
        let events = watch.drain().unwrap();
        let seen: Vec<(EventKind, &str, Revision)> = events
            .iter()
            .map(|e| (e.kind, e.entry.key.as_str(), e.entry.mod_revision))
            .collect();
        assert_eq!(
            seen,
            vec![
                (EventKind::Put, "/p/2", 3),
                (EventKind::Delete, "/p/1", 4),
                (EventKind::Delete, "/p/2", 4),
            ]
        );
    }

    #[test]
    fn an_expired_lease_takes_its_keys_and_cannot_be_renewed() {
        let (store, clock) = store();
        let lease = store.grant_lease(Duration::from_secs(5)).unwrap();
        store
            .txn(Txn::when(
                vec![],
                vec![Op::Put {
                    key: "/health/a".into(),
                    value: b"up".to_vec(),
                    lease: Some(lease),
                }],
            ))
            .unwrap();
        clock.advance(Duration::from_secs(4));
        store.keep_alive(lease).unwrap();
        clock.advance(Duration::from_secs(4));
        assert!(store.get("/health/a").unwrap().is_some(), "kept alive");
        let watch = store.watch("/health/", store.revision() + 1).unwrap();
        clock.advance(Duration::from_secs(2));
        assert_eq!(store.get("/health/a").unwrap(), None);
        assert_eq!(
            store.keep_alive(lease),
            Err(MetaError::LeaseNotFound(lease))
        );
        let events = watch.drain().unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind, EventKind::Delete);
    }

    #[test]
    fn a_put_on_a_missing_lease_fails_whole() {
        let (store, _) = store();
        let result = store.txn(Txn::when(
            vec![],
            vec![
                Op::put("/x", "1"),
                Op::Put {
                    key: "/y".into(),
                    value: b"2".to_vec(),
                    lease: Some(99),
                },
            ],
        ));
        assert_eq!(result, Err(MetaError::LeaseNotFound(99)));
        assert_eq!(store.get("/x").unwrap(), None);
    }

    #[test]
    fn an_unavailable_store_refuses_every_call() {
        let (store, _) = store();
        store.set_available(false);
        assert!(matches!(
            store.put("/x", b"1"),
            Err(MetaError::Unavailable(_))
        ));
        store.set_available(true);
        assert_eq!(store.put("/x", b"1"), Ok(1));
    }
}
