//! Helpers shared by the storage integration tests.
#![allow(dead_code)]

pub mod crashing;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use quince_storage::io::{CachedFileIo, FileIo, SimFileIo};
use quince_storage::{
    CompactionPolicy, Existing, Mutation, StorageError, Store, StoreOptions, WriteTicket,
};

/// Options with a small journal and a compaction policy that never runs in `maintain`.
pub fn options(journal_size: u64) -> StoreOptions {
    StoreOptions {
        journal_size,
        sync_interval: Duration::from_millis(100),
        compaction: CompactionPolicy {
            dead_share_min: 0.1,
            dead_bytes_min: 1 << 20,
            interval: Duration::from_secs(3600),
        },
        salvage: false,
    }
}

/// The directory every simulated store lives in.
pub fn dir() -> PathBuf {
    PathBuf::from("/data/store")
}

/// A fresh simulated file system and a store on it.
pub fn sim_store(journal_size: u64) -> (SimFileIo, Store) {
    let io = SimFileIo::new();
    let store = Store::create(Arc::new(io.clone()), &dir(), options(journal_size)).unwrap();
    (io, store)
}

/// A fresh simulated file system and a store on it that may hold only `capacity` descriptors
/// at once (through `CachedFileIo`).
pub fn sim_store_cached(journal_size: u64, capacity: usize) -> (SimFileIo, Store) {
    let io = SimFileIo::new();
    let store = Store::create(cached(&io, capacity), &dir(), options(journal_size)).unwrap();
    (io, store)
}

/// `io` behind a descriptor bound of `capacity`.
pub fn cached(io: &SimFileIo, capacity: usize) -> Arc<dyn FileIo> {
    Arc::new(CachedFileIo::new(Arc::new(io.clone()), capacity))
}

/// Opens the store in `dir()` of `io`.
pub fn reopen(io: &SimFileIo, journal_size: u64) -> Result<Store, StorageError> {
    Store::open(Arc::new(io.clone()), &dir(), options(journal_size))
}

/// Decides `keys` in order in one part of `store` and commits it as a one-store transaction
/// group, as the database layer writes a multi-document request: each item's outcome (an item
/// that staged a record answers the commit's error when the commit fails) and the ticket.
pub fn commit_part<K, R, E>(
    store: &Store,
    keys: &[K],
    mut decide: impl FnMut(usize, Option<Existing<'_>>) -> Result<(Mutation, R), E>,
) -> (Vec<Result<R, E>>, Option<WriteTicket>)
where
    K: AsRef<[u8]>,
    E: From<StorageError>,
{
    // Transaction ids only need to grow per store; one counter for every test serves.
    static NEXT_TRX: AtomicU64 = AtomicU64::new(1);
    let mut part = store.part(1);
    let mut results: Vec<Result<R, E>> = Vec::with_capacity(keys.len());
    let mut staged = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let before = part.staged_bytes();
        results.push(part.mutate(key.as_ref(), |existing| decide(i, existing)));
        staged.push(part.staged_bytes() != before);
    }
    match quince_storage::commit(NEXT_TRX.fetch_add(1, Ordering::Relaxed), vec![part]) {
        Ok(mut tickets) => (results, tickets.pop().flatten()),
        Err(error) => {
            for (result, staged) in results.iter_mut().zip(staged) {
                if staged {
                    *result = Err(error.clone().into());
                }
            }
            (results, None)
        }
    }
}

/// Writes `value` at `rev`.
pub fn put(
    store: &Store,
    key: &[u8],
    rev: u64,
    value: &[u8],
    sync: bool,
) -> Result<(), StorageError> {
    store.mutate(key, sync, |_| {
        Ok::<_, StorageError>((
            Mutation::Put {
                rev,
                value: value.to_vec(),
            },
            (),
        ))
    })
}

/// Removes `key` at `rev`.
pub fn remove(store: &Store, key: &[u8], rev: u64, sync: bool) -> Result<(), StorageError> {
    store.mutate(key, sync, |_| {
        Ok::<_, StorageError>((Mutation::Remove { rev }, ()))
    })
}

/// The value of `key`, panicking on errors.
pub fn value(store: &Store, key: &[u8]) -> Option<Vec<u8>> {
    store.get(key).unwrap().map(|r| r.value)
}

/// Files of the store's directory whose name starts with `prefix`.
pub fn files_named(io: &dyn FileIo, dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = io
        .list_dir(dir)
        .unwrap()
        .into_iter()
        .filter(|n| n.to_string_lossy().starts_with(prefix))
        .map(|n| dir.join(n))
        .collect();
    names.sort();
    names
}

/// Every live record of a store: key, then revision and value (read by a scan, checked against
/// the index and `get`).
pub fn contents(store: &Store) -> BTreeMap<Vec<u8>, (u64, Vec<u8>)> {
    let mut state = BTreeMap::new();
    store
        .scan(&mut |k, rev, v| {
            state.insert(k.to_vec(), (rev, v.to_vec()));
            true
        })
        .unwrap();
    assert_eq!(store.len(), state.len() as u64, "index and scan disagree");
    for (k, (rev, v)) in &state {
        let got = store.get(k).unwrap().unwrap();
        assert_eq!((&got.rev, &got.value), (rev, v));
    }
    state
}

/// Opens (`create`: creates) the store in `dir` of `io`.
pub fn store_at(
    io: Arc<dyn FileIo>,
    dir: &Path,
    journal_size: u64,
    create: bool,
) -> Result<Store, StorageError> {
    match create {
        true => Store::create(io, dir, options(journal_size)),
        false => Store::open(io, dir, options(journal_size)),
    }
}

/// Stages a put of `value` at `rev` in a transaction's part.
pub fn stage_put(part: &mut quince_storage::Part<'_>, key: &[u8], rev: u64, value: &[u8]) {
    part.mutate(key, |_| {
        Ok::<_, StorageError>((
            Mutation::Put {
                rev,
                value: value.to_vec(),
            },
            (),
        ))
    })
    .unwrap()
}
