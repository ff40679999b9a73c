//! Helpers shared by the storage integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use quince_storage::io::{CachedFileIo, FileIo, SimFileIo};
use quince_storage::{CompactionPolicy, Mutation, StorageError, Store, StoreOptions};

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
