//! Model-based property test: random puts, removes, truncates, rotations, compactions, syncs,
//! clean reopens and crashes on `SimFileIo`, checked against a `BTreeMap` oracle.
//!
//! The oracle keeps the operations since the last point where everything written was surely
//! durable. A crash may lose unsynced records, but only as a suffix (one journal, appended in
//! order), so the recovered store must equal the oracle's state after some prefix of those
//! operations that includes every operation acknowledged as synced. Every key's value is then
//! one that was written for it, at its revision.
//!
//! Faults (a failing fsync, a disk that fills up) poison the store; a write that failed may or
//! may not have reached the journal, so it joins the unsynced changes, and the next crash
//! checks what survived. A write refused without poisoning (a journal that could not be
//! started on a full disk) wrote nothing: the store must still equal the oracle.
//!
//! Batches (one-store transaction groups: `Store::part` and `commit`, as the database layer writes
//! a multi-document request) join the same oracle: each item that wrote is one change, in item
//! order (a group is all or nothing, which is one of the prefixes the oracle accepts); the items
//! of a failed commit are all doubtful.
//!
//! The store's metadata (`Store::write_meta`) is one more entry of the state, under a key no
//! document uses: it follows the same prefix rule, and a truncate leaves it alone.
//!
//! Maintenance passes (`Store::maintain`) join the operations: they finish the seals of journals
//! the writer handed off and prepare the spare journal, so crashes fall between every step of a
//! journal's hand-off. After every operation the store's own invariants are checked
//! (`Store::check_consistency`).
//!
//! Half of the cases run the store behind `CachedFileIo` with one to three descriptors, so
//! descriptors are closed (synced first) and reopened across every operation.

use crate::common;

use std::collections::BTreeMap;

use proptest::prelude::*;
use quince_storage::io::{FileIo, SimFileIo};
use quince_storage::{Mutation, StorageError, Store};

type State = BTreeMap<Vec<u8>, (u64, Vec<u8>)>;

/// Where the state keeps the store's metadata (documents' keys start with `k`).
const META_KEY: &[u8] = b"\0meta";

#[derive(Clone, Debug)]
enum Op {
    Put {
        key: u8,
        len: usize,
        sync: bool,
    },
    /// Items `(key, Some(len))` put a value, `(key, None)` remove the key.
    Batch {
        items: Vec<(u8, Option<usize>)>,
        sync: bool,
    },
    Remove {
        key: u8,
        sync: bool,
    },
    Truncate {
        sync: bool,
    },
    Meta {
        value: u8,
    },
    Rotate,
    /// A maintenance pass: finishes seals, prepares the spare journal, writes hints.
    Maintain,
    Compact,
    Sync,
    Reopen,
    Crash {
        seed: u64,
        keep_unsynced: bool,
    },
    FailSync {
        after: u64,
    },
    Full {
        bytes: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (0u8..12, 0usize..200, any::<bool>()).prop_map(|(key, len, sync)| Op::Put { key, len, sync }),
        3 => (0u8..12, any::<bool>()).prop_map(|(key, sync)| Op::Remove { key, sync }),
        3 => (proptest::collection::vec((0u8..12, proptest::option::weighted(0.8, 0usize..200)), 0..30), any::<bool>())
            .prop_map(|(items, sync)| Op::Batch { items, sync }),
        1 => any::<bool>().prop_map(|sync| Op::Truncate { sync }),
        1 => any::<u8>().prop_map(|value| Op::Meta { value }),
        1 => Just(Op::Rotate),
        2 => Just(Op::Maintain),
        2 => Just(Op::Compact),
        1 => Just(Op::Sync),
        1 => Just(Op::Reopen),
        2 => (any::<u64>(), any::<bool>()).prop_map(|(seed, keep_unsynced)| Op::Crash { seed, keep_unsynced }),
        1 => (0u64..4).prop_map(|after| Op::FailSync { after }),
        1 => (0u64..2000).prop_map(|bytes| Op::Full { bytes }),
    ]
}

/// A state change the oracle replays.
#[derive(Clone, Debug)]
enum Change {
    Put(Vec<u8>, u64, Vec<u8>),
    Remove(Vec<u8>),
    Truncate,
    Meta(Vec<u8>),
}

fn apply(state: &mut State, change: &Change) {
    match change {
        Change::Put(k, rev, v) => {
            state.insert(k.clone(), (*rev, v.clone()));
        }
        Change::Remove(k) => {
            state.remove(k);
        }
        Change::Truncate => state.retain(|k, _| k == META_KEY),
        Change::Meta(v) => {
            state.insert(META_KEY.to_vec(), (0, v.clone()));
        }
    }
}

struct Oracle {
    /// The state at the last point where everything was durable.
    durable: State,
    /// Changes since then, in order.
    pending: Vec<Change>,
    /// How many of `pending` were acknowledged as durable (a prefix: a sync covers all before).
    synced: usize,
    /// The last `doubtful` pending changes come from writes that failed: they may never have
    /// been written, so a later successful sync does not vouch for them.
    doubtful: usize,
}

impl Oracle {
    fn current(&self) -> State {
        let mut state = self.durable.clone();
        self.pending.iter().for_each(|c| apply(&mut state, c));
        state
    }

    fn all_durable(&mut self) {
        if self.doubtful > 0 {
            self.synced = self.pending.len() - self.doubtful;
            return;
        }
        self.durable = self.current();
        self.pending.clear();
        self.synced = 0;
    }

    /// The recovered state must be one of the prefixes from `synced` on; it becomes durable.
    fn check_recovered(&mut self, recovered: &State) -> Result<(), TestCaseError> {
        let mut state = self.durable.clone();
        let mut candidates = Vec::new();
        for (i, change) in self.pending.iter().enumerate() {
            if i >= self.synced {
                candidates.push(state.clone());
            }
            apply(&mut state, change);
        }
        candidates.push(state);
        prop_assert!(
            candidates.iter().any(|c| c == recovered),
            "recovered state matches no allowed prefix: {:?}\nsynced {} of {:?}",
            recovered,
            self.synced,
            self.pending
        );
        self.durable = recovered.clone();
        self.pending.clear();
        self.synced = 0;
        self.doubtful = 0;
        Ok(())
    }
}

fn contents(store: &Store) -> State {
    let mut state = State::new();
    store
        .scan(&mut |k, rev, v| {
            state.insert(k.to_vec(), (rev, v.to_vec()));
            true
        })
        .unwrap();
    let mut keys = 0;
    store.for_each_key(&mut |k, rev| {
        assert_eq!(
            state.get(k).map(|e| e.0),
            Some(rev),
            "index and scan disagree"
        );
        keys += 1;
        true
    });
    assert_eq!(keys, state.len());
    for (k, (rev, v)) in &state {
        let got = store.get(k).unwrap().unwrap();
        assert_eq!((&got.rev, &got.value), (rev, v));
    }
    let f = store.figures();
    assert_eq!(f.alive_count, state.len() as u64);
    if let Some(meta) = store.meta() {
        state.insert(META_KEY.to_vec(), (0, meta));
    }
    state
}

const JOURNAL: u64 = 1024;

/// The file system the store sees: the simulation itself, or the simulation behind a bound of
/// `capacity` descriptors.
fn file_io(io: &SimFileIo, capacity: Option<usize>) -> std::sync::Arc<dyn FileIo> {
    match capacity {
        Some(capacity) => common::cached(io, capacity),
        None => std::sync::Arc::new(io.clone()),
    }
}

fn reopen(io: &SimFileIo, capacity: Option<usize>) -> Result<Store, StorageError> {
    Store::open(
        file_io(io, capacity),
        &common::dir(),
        common::options(JOURNAL),
    )
}

fn run(ops: Vec<Op>, capacity: Option<usize>) -> Result<(), TestCaseError> {
    let mut io = SimFileIo::new();
    let mut store = Some(
        Store::create(
            file_io(&io, capacity),
            &common::dir(),
            common::options(JOURNAL),
        )
        .map_err(fail)?,
    );
    let mut oracle = Oracle {
        durable: State::new(),
        pending: Vec::new(),
        synced: 0,
        doubtful: 0,
    };
    let mut rev = 0u64;
    for op in ops {
        let s = store.as_ref().unwrap();
        rev += 1;
        // A write that failed with an I/O error may have reached the journal: it becomes an
        // unsynced change. One refused up front (poisoned) did not.
        let mut record = |result: Result<(), StorageError>, change: Change, sync: bool| match result
        {
            Ok(()) => {
                oracle.pending.push(change);
                if sync {
                    oracle.synced = oracle.pending.len();
                }
            }
            Err(StorageError::Poisoned { .. }) => {}
            // Refused without poisoning: nothing was written.
            Err(_) if s.poisoned().is_none() => {}
            Err(_) => {
                oracle.pending.push(change);
                oracle.doubtful += 1;
            }
        };
        match op {
            Op::Put { key, len, sync } => {
                let k = vec![b'k', key];
                let v: Vec<u8> = (0..len).map(|i| (i as u64 + rev) as u8).collect();
                record(
                    common::put(s, &k, rev, &v, sync),
                    Change::Put(k, rev, v),
                    sync,
                );
            }
            Op::Batch { items, sync } => {
                let keys: Vec<Vec<u8>> = items.iter().map(|(key, _)| vec![b'k', *key]).collect();
                let first_rev = rev;
                rev += items.len() as u64;
                // What each decided item would change (None: writes nothing).
                let mut intended: Vec<Option<Change>> = vec![None; items.len()];
                let (results, ticket) = common::commit_part(s, &keys, |i, existing| {
                    let rev = first_rev + i as u64;
                    let k = keys[i].clone();
                    let mutation = match items[i].1 {
                        Some(len) => {
                            let v: Vec<u8> = (0..len).map(|j| (j as u64 + rev) as u8).collect();
                            intended[i] = Some(Change::Put(k, rev, v.clone()));
                            Mutation::Put { rev, value: v }
                        }
                        None => {
                            if existing.is_some() {
                                intended[i] = Some(Change::Remove(k));
                            }
                            Mutation::Remove { rev }
                        }
                    };
                    Ok::<_, StorageError>((mutation, ()))
                });
                // Only a ticket that became durable vouches (for every change before it).
                let durable = match ticket {
                    Some(ticket) if sync => ticket.wait().is_ok(),
                    _ => false,
                };
                let mut failed = false;
                let refused_cleanly = s.poisoned().is_none();
                for (result, change) in results.into_iter().zip(intended) {
                    match (result, change) {
                        (_, None) | (Err(StorageError::Poisoned { .. }), _) => {}
                        // Refused without poisoning: nothing was written.
                        (Err(_), Some(_)) if refused_cleanly => failed = true,
                        (Ok(()), Some(change)) => oracle.pending.push(change),
                        // An item of a failed append may have reached the journal.
                        (Err(_), Some(change)) => {
                            failed = true;
                            oracle.pending.push(change);
                            oracle.doubtful += 1;
                        }
                    }
                }
                if durable && !failed {
                    oracle.synced = oracle.pending.len();
                }
            }
            Op::Remove { key, sync } => {
                let k = vec![b'k', key];
                if s.rev_of(&k).is_some() {
                    record(common::remove(s, &k, rev, sync), Change::Remove(k), sync);
                }
            }
            Op::Truncate { sync } => record(s.truncate(rev, sync), Change::Truncate, sync),
            Op::Meta { value } => {
                let v = vec![value; 1 + usize::from(value % 40)];
                record(s.write_meta(&v).map(|_| ()), Change::Meta(v), false);
            }
            Op::Rotate => {
                if s.rotate().is_ok() {
                    oracle.all_durable();
                }
            }
            Op::Maintain => {
                // Not a durability point either: it fsyncs what it seals, not the active journal.
                let _ = s.maintain();
            }
            Op::Compact => {
                // Not a durability point: with nothing to compact it syncs nothing.
                let _ = s.compact();
            }
            Op::Sync => {
                if s.sync().is_ok() {
                    oracle.all_durable();
                }
            }
            Op::FailSync { after } => io.fail_sync_after(after),
            Op::Full { bytes } => io.set_space_left(Some(bytes)),
            // A clean close can still fail: a descriptor the file cache closed earlier may have
            // failed its fsync, which the next sync of that file reports. The state is then in
            // doubt, as after a crash.
            Op::Reopen
                if s.poisoned().is_none() && {
                    io.clear_faults();
                    s.close().is_ok()
                } =>
            {
                drop(store.take());
                let reopened = reopen(&io, capacity).map_err(fail)?;
                oracle.all_durable();
                prop_assert_eq!(contents(&reopened), oracle.current());
                store = Some(reopened);
            }
            Op::Reopen | Op::Crash { .. } => {
                let (seed, keep_unsynced) = match op {
                    Op::Crash {
                        seed,
                        keep_unsynced,
                    } => (seed, keep_unsynced),
                    _ => (rev, true),
                };
                drop(store.take());
                io = io.crash(seed, keep_unsynced);
                let reopened = reopen(&io, capacity).map_err(fail)?;
                oracle.check_recovered(&contents(&reopened))?;
                store = Some(reopened);
            }
        }
        let s = store.as_ref().unwrap();
        s.check_consistency().map_err(TestCaseError::fail)?;
        // A poisoned store's memory may hold a write whose fsync failed; only a crash tells.
        if s.poisoned().is_none() {
            prop_assert_eq!(contents(s), oracle.current());
        }
    }
    // A final crash, and a crash of the recovered store (double crash).
    drop(store);
    let io = io.crash(99, true);
    let reopened = reopen(&io, capacity).map_err(fail)?;
    oracle.check_recovered(&contents(&reopened))?;
    drop(reopened);
    let reopened = reopen(&io.crash(100, false), capacity).map_err(fail)?;
    prop_assert_eq!(contents(&reopened), oracle.current());
    Ok(())
}

fn fail(e: StorageError) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_the_model_across_crashes(
        ops in proptest::collection::vec(op(), 1..80),
        capacity in proptest::option::of(1usize..4),
    ) {
        run(ops, capacity)?;
    }
}
