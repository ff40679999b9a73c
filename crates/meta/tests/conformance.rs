//! One set of scenarios run against both implementations of `MetaStore`: `MemoryStore` (with
//! a manual clock) and `EtcdStore` (over a real single-member etcd started for each test).
//! Revisions are compared relative to the store's revision at the start (etcd's empty store
//! is at revision 1, the in-memory one at 0).
//!
//! The etcd variants skip with a message when the `etcd` binary is missing, unless
//! `QUINCE_REQUIRE_ETCD=1` is set.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_meta::election::{leader, try_lead};
use quince_meta::{
    Compare, EtcdOptions, EtcdStore, Event, EventKind, ManualClock, MemoryStore, MetaError,
    MetaStore, Op, Revision, Txn,
};
use support::EtcdCluster;

/// A store under test and how time passes for its leases.
trait Harness {
    fn store(&self) -> &dyn MetaStore;
    /// Lets `by` pass for the leases (the in-memory clock moves; etcd's time passes anyway).
    fn pass(&self, by: Duration);
    /// A handle on the same store for other threads.
    fn shared(&self) -> Arc<dyn MetaStore>;
}

struct Memory {
    store: MemoryStore,
    clock: Arc<ManualClock>,
}

impl Harness for Memory {
    fn store(&self) -> &dyn MetaStore {
        &self.store
    }
    fn pass(&self, by: Duration) {
        self.clock.advance(by);
    }
    fn shared(&self) -> Arc<dyn MetaStore> {
        Arc::new(self.store.clone())
    }
}

struct Etcd {
    store: EtcdStore,
    _cluster: EtcdCluster,
}

impl Harness for Etcd {
    fn store(&self) -> &dyn MetaStore {
        &self.store
    }
    fn pass(&self, _by: Duration) {}
    fn shared(&self) -> Arc<dyn MetaStore> {
        Arc::new(self.store.clone())
    }
}

fn memory() -> Option<Memory> {
    let clock = Arc::new(ManualClock::default());
    Some(Memory {
        store: MemoryStore::new(clock.clone()),
        clock,
    })
}

fn etcd(test: &str) -> Option<Etcd> {
    let cluster = EtcdCluster::start(test, 1)?;
    let store = EtcdStore::connect(&cluster.endpoints(), EtcdOptions::default()).expect("connect");
    Some(Etcd {
        store,
        _cluster: cluster,
    })
}

/// Polls `condition` until it holds, failing after `limit`.
fn eventually(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Collects events from `watch` until `count` arrived (or fails after 10 s).
fn collect(watch: &quince_meta::Watch, count: usize) -> Vec<Event> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut events = Vec::new();
    while events.len() < count {
        assert!(
            Instant::now() < deadline,
            "only {} of {count} events: {events:?}",
            events.len()
        );
        if let Some(batch) = watch.next_timeout(Duration::from_millis(100)).unwrap() {
            events.extend(batch);
        }
    }
    events
}

fn summary(events: &[Event]) -> Vec<(EventKind, String, Vec<u8>, Revision)> {
    events
        .iter()
        .map(|e| {
            (
                e.kind,
                e.entry.key.clone(),
                e.entry.value.clone(),
                e.entry.mod_revision,
            )
        })
        .collect()
}

fn start_revision(store: &dyn MetaStore) -> Revision {
    store.range("").unwrap().revision
}

fn transactions_apply_only_when_every_compare_holds(h: &dyn Harness) {
    let store = h.store();
    let r0 = start_revision(store);
    let absent = |key: &str| Compare::Absent(key.into());

    let created = store
        .txn(Txn::when(vec![absent("/t/a")], vec![Op::put("/t/a", "1")]))
        .unwrap();
    assert!(created.succeeded);
    assert_eq!(created.revision, r0 + 1);
    let again = store
        .txn(Txn::when(vec![absent("/t/a")], vec![Op::put("/t/a", "2")]))
        .unwrap();
    assert!(!again.succeeded);
    assert_eq!(
        again.revision,
        r0 + 1,
        "a failed transaction changes nothing"
    );
    assert_eq!(store.get("/t/a").unwrap().unwrap().value, b"1");

    // ModRevision 0 means "absent".
    let missing = Compare::ModRevision("/t/m".into(), 0);
    assert!(
        store
            .txn(Txn::when(vec![missing.clone()], vec![Op::put("/t/m", "m")]))
            .unwrap()
            .succeeded
    );
    assert!(
        !store
            .txn(Txn::when(vec![missing], vec![Op::put("/t/m", "again")]))
            .unwrap()
            .succeeded,
        "an existing key's mod_revision is not 0"
    );
    let a = store.get("/t/a").unwrap().unwrap();
    assert_eq!(a.mod_revision, r0 + 1);
    assert_eq!(a.create_revision, r0 + 1);
    assert_eq!(a.version, 1);
    let stale = Compare::ModRevision("/t/a".into(), a.mod_revision - 1);
    let current = Compare::ModRevision("/t/a".into(), a.mod_revision);
    assert!(
        !store
            .txn(Txn::when(vec![stale], vec![Op::put("/t/a", "x")]))
            .unwrap()
            .succeeded
    );
    let guarded = store
        .txn(Txn::when(
            vec![current],
            vec![Op::put("/t/a", "3"), Op::put("/t/b", "b")],
        ))
        .unwrap();
    assert!(guarded.succeeded);
    assert_eq!(guarded.revision, r0 + 3, "two puts, one revision");
    let a = store.get("/t/a").unwrap().unwrap();
    assert_eq!(
        (a.version, a.create_revision, a.mod_revision),
        (2, r0 + 1, r0 + 3)
    );

    // Exists and Value.
    let exists = |key: &str| Compare::Exists(key.into());
    assert!(
        store
            .txn(Txn::when(vec![exists("/t/a")], vec![]))
            .unwrap()
            .succeeded
    );
    assert!(
        !store
            .txn(Txn::when(vec![exists("/t/none")], vec![]))
            .unwrap()
            .succeeded
    );
    let value = |key: &str, v: &str| Compare::Value(key.into(), v.as_bytes().to_vec());
    assert!(
        store
            .txn(Txn::when(vec![value("/t/a", "3")], vec![]))
            .unwrap()
            .succeeded
    );
    assert!(
        !store
            .txn(Txn::when(vec![value("/t/a", "2")], vec![]))
            .unwrap()
            .succeeded
    );
    assert!(
        !store
            .txn(Txn::when(vec![value("/t/none", "")], vec![]))
            .unwrap()
            .succeeded,
        "a missing key has no value, not an empty one"
    );

    // Every compare must hold; otherwise the `otherwise` branch applies.
    let mixed = store
        .txn(Txn {
            compares: vec![exists("/t/a"), exists("/t/none")],
            then: vec![Op::put("/t/then", "x")],
            otherwise: vec![Op::put("/t/otherwise", "y")],
        })
        .unwrap();
    assert!(!mixed.succeeded);
    assert_eq!(mixed.revision, r0 + 4);
    assert_eq!(store.get("/t/then").unwrap(), None);
    assert_eq!(store.get("/t/otherwise").unwrap().unwrap().value, b"y");

    // Deletes: one key, then a prefix (only keys under it).
    store.put("/t2", b"sibling").unwrap();
    let deleted = store
        .txn(Txn::when(vec![], vec![Op::delete("/t/b")]))
        .unwrap();
    assert_eq!(deleted.revision, r0 + 6);
    assert_eq!(store.get("/t/b").unwrap(), None);
    let nothing = store
        .txn(Txn::when(vec![], vec![Op::delete("/t/b")]))
        .unwrap();
    assert_eq!(nothing.revision, r0 + 6, "deleting nothing changes nothing");
    let swept = store
        .txn(Txn::when(vec![], vec![Op::DeletePrefix("/t/".into())]))
        .unwrap();
    assert_eq!(swept.revision, r0 + 7);
    assert!(store.range("/t/").unwrap().entries.is_empty());
    assert_eq!(store.get("/t2").unwrap().unwrap().value, b"sibling");

    // A put on a lease that does not exist fails whole.
    let result = store.txn(Txn::when(
        vec![],
        vec![
            Op::put("/t/x", "1"),
            Op::Put {
                key: "/t/y".into(),
                value: b"2".to_vec(),
                lease: Some(0x7777_0000_1234),
            },
        ],
    ));
    assert_eq!(result, Err(MetaError::LeaseNotFound(0x7777_0000_1234)));
    assert_eq!(store.get("/t/x").unwrap(), None);
}

fn ranges_are_sorted_consistent_reads_of_a_prefix(h: &dyn Harness) {
    let store = h.store();
    for key in ["/r/b", "/r/a", "/r/c/d", "/rx", "/q"] {
        store.put(key, key.as_bytes()).unwrap();
    }
    let last = store.put("/r/a", b"again").unwrap();
    let snapshot = store.range("/r/").unwrap();
    let keys: Vec<&str> = snapshot.entries.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["/r/a", "/r/b", "/r/c/d"]);
    assert_eq!(snapshot.revision, last);
    assert_eq!(snapshot.entries[0].value, b"again");
    assert_eq!(snapshot.entries[0].version, 2);
    assert_eq!(snapshot.entries[0].mod_revision, last);
    assert_eq!(snapshot.entries[0].lease, 0);
    let all = store.range("").unwrap();
    assert_eq!(all.entries.len(), 5);
    assert_eq!(all.revision, last);
    assert!(store.range("/none/").unwrap().entries.is_empty());
    assert_eq!(store.get("/r").unwrap(), None, "get is exact, not a prefix");
}

fn watches_replay_the_past_then_follow_live_changes(h: &dyn Harness) {
    let store = h.store();
    let r1 = store.put("/w/1", b"a").unwrap();
    store.put("/v/1", b"elsewhere").unwrap();
    let r3 = store.put("/w/2", b"b").unwrap();
    let past = store.watch("/w/", r1 + 1).unwrap();
    let events = collect(&past, 1);
    assert_eq!(
        summary(&events),
        vec![(EventKind::Put, "/w/2".into(), b"b".to_vec(), r3)]
    );
    let live = store.watch("/w/", r3 + 1).unwrap();
    let r4 = store.put("/w/1", b"c").unwrap();
    let r5 = store
        .txn(Txn::when(vec![], vec![Op::DeletePrefix("/w/".into())]))
        .unwrap()
        .revision;
    store.put("/v/2", b"elsewhere").unwrap();
    let r7 = store.put("/w/3", b"d").unwrap();
    let expected = vec![
        (EventKind::Put, "/w/1".to_string(), b"c".to_vec(), r4),
        (EventKind::Delete, "/w/1".into(), Vec::new(), r5),
        (EventKind::Delete, "/w/2".into(), Vec::new(), r5),
        (EventKind::Put, "/w/3".into(), b"d".to_vec(), r7),
    ];
    assert_eq!(summary(&collect(&live, 4)), expected);
    let mut more = collect(&past, 4);
    assert_eq!(summary(&more), expected, "the past watch goes on live");
    let put = more.remove(0);
    assert_eq!(
        (put.entry.version, put.entry.create_revision),
        (2, r1),
        "a put event carries the key's entry"
    );
    let from_start = store.watch("/w/", 0).unwrap();
    assert_eq!(
        collect(&from_start, 6)
            .first()
            .map(|e| e.entry.mod_revision),
        Some(r1),
        "a watch from revision 0 replays all history"
    );
    drop(live);
    store.put("/w/4", b"e").unwrap();
    assert_eq!(collect(&past, 1)[0].entry.key, "/w/4");
    assert!(past.drain().unwrap().is_empty());
}

fn an_expired_lease_takes_its_keys_with_delete_events(h: &dyn Harness) {
    let store = h.store();
    let lease = store.grant_lease(Duration::from_secs(1)).unwrap();
    let kept = store.grant_lease(Duration::from_secs(60)).unwrap();
    assert_ne!(lease, 0);
    assert_ne!(lease, kept);
    let put = |key: &str, lease| Op::Put {
        key: key.into(),
        value: b"up".to_vec(),
        lease: Some(lease),
    };
    let bound = store
        .txn(Txn::when(
            vec![],
            vec![
                put("/health/a", lease),
                put("/health/b", lease),
                put("/health/c", kept),
            ],
        ))
        .unwrap();
    assert_eq!(store.get("/health/a").unwrap().unwrap().lease, lease);
    store.keep_alive(lease).unwrap();
    let watch = store.watch("/health/", bound.revision + 1).unwrap();
    h.pass(Duration::from_secs(3));
    eventually("the lease expires", Duration::from_secs(15), || {
        store.get("/health/a").unwrap().is_none()
    });
    assert_eq!(store.get("/health/b").unwrap(), None);
    assert!(
        store.get("/health/c").unwrap().is_some(),
        "other leases stay"
    );
    let events = collect(&watch, 2);
    assert!(events.iter().all(|e| e.kind == EventKind::Delete));
    assert_eq!(
        events[0].entry.mod_revision, events[1].entry.mod_revision,
        "a lease's keys go in one revision"
    );
    assert_eq!(events[0].entry.mod_revision, bound.revision + 1);
    assert_eq!(
        store.keep_alive(lease),
        Err(MetaError::LeaseNotFound(lease))
    );
    assert_eq!(
        store.revoke_lease(lease),
        Err(MetaError::LeaseNotFound(lease))
    );
    let late = store.txn(Txn::when(vec![], vec![put("/health/a", lease)]));
    assert_eq!(late, Err(MetaError::LeaseNotFound(lease)));
    store.revoke_lease(kept).unwrap();
    assert_eq!(store.get("/health/c").unwrap(), None, "revoked at once");
    assert_eq!(collect(&watch, 1)[0].entry.key, "/health/c");
}

fn elections_pick_one_leader_and_fence_the_old_one(h: &dyn Harness) {
    let store = h.store();
    let a = store.grant_lease(Duration::from_secs(30)).unwrap();
    let b = store.grant_lease(Duration::from_secs(30)).unwrap();
    let won = try_lead(store, "/e", a, b"a").unwrap().expect("a leads");
    assert_eq!(try_lead(store, "/e", b, b"b").unwrap(), None);
    assert_eq!(try_lead(store, "/e", a, b"a").unwrap(), Some(won.clone()));
    assert_eq!(leader(store, "/e").unwrap().unwrap().value, b"a");
    let fenced = store
        .txn(Txn::when(vec![won.fence()], vec![Op::put("/x", "by a")]))
        .unwrap();
    assert!(fenced.succeeded);
    store.revoke_lease(a).unwrap();
    let b_won = try_lead(store, "/e", b, b"b").unwrap().expect("b leads");
    assert_eq!(leader(store, "/e").unwrap().unwrap().value, b"b");
    let stale = store
        .txn(Txn::when(vec![won.fence()], vec![Op::put("/x", "late a")]))
        .unwrap();
    assert!(!stale.succeeded, "a's fence fails once its lease ended");
    assert_ne!(b_won.revision, won.revision);
    assert_eq!(store.get("/x").unwrap().unwrap().value, b"by a");
}

/// Calls made inside another tokio runtime (in `block_on`, and on a worker thread) work: they
/// block that thread and never panic with "cannot block within a runtime".
fn calls_work_inside_another_tokio_runtime(h: &dyn Harness) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let revision = runtime.block_on(async { h.store().put("/rt/a", b"1").unwrap() });
    let store = h.shared();
    let on_worker = runtime.block_on(runtime.spawn(async move {
        let entry = store.get("/rt/a").unwrap().unwrap();
        let watch = store.watch("/rt/", entry.mod_revision).unwrap();
        let batch = watch.next_timeout(Duration::from_secs(5)).unwrap();
        (entry.mod_revision, batch.map(|b| b.len()))
    }));
    assert_eq!(on_worker.unwrap(), (revision, Some(1)));
}

macro_rules! both {
    ($($scenario:ident),* $(,)?) => {
        mod memory_store {
            $(
                #[test]
                fn $scenario() {
                    let harness = super::memory().unwrap();
                    super::$scenario(&harness);
                }
            )*
        }
        mod etcd_store {
            $(
                #[test]
                fn $scenario() {
                    let started = std::time::Instant::now();
                    let Some(harness) = super::etcd(stringify!($scenario)) else { return };
                    super::$scenario(&harness);
                    drop(harness);
                    eprintln!("etcd {}: {:?}", stringify!($scenario), started.elapsed());
                }
            )*
        }
    };
}

both!(
    transactions_apply_only_when_every_compare_holds,
    ranges_are_sorted_consistent_reads_of_a_prefix,
    watches_replay_the_past_then_follow_live_changes,
    an_expired_lease_takes_its_keys_with_delete_events,
    elections_pick_one_leader_and_fence_the_old_one,
    calls_work_inside_another_tokio_runtime,
);
