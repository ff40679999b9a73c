//! The basic contract on the real file system: create, write, read, remove, reopen.

use crate::common;

use std::sync::Arc;

use common::{options, put, remove, value};
use quince_storage::io::OsFileIo;
use quince_storage::{Existing, Mutation, StorageError, Store};

#[test]
fn writes_survive_close_and_reopen_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c1");
    let store = Store::create(Arc::new(OsFileIo::new()), &dir, options(1 << 20)).unwrap();
    put(&store, b"a", 1, b"alpha", true).unwrap();
    put(&store, b"b", 2, b"beta", false).unwrap();
    put(&store, b"a", 3, b"alpha2", false).unwrap();
    remove(&store, b"b", 4, true).unwrap();
    assert_eq!(value(&store, b"a"), Some(b"alpha2".to_vec()));
    assert_eq!(value(&store, b"b"), None);
    assert_eq!(store.len(), 1);
    assert_eq!(store.rev_of(b"a"), Some(3));
    store.close().unwrap();
    assert!(matches!(
        put(&store, b"c", 5, b"x", false),
        Err(StorageError::ShuttingDown)
    ));
    drop(store);

    let store = Store::open(Arc::new(OsFileIo::new()), &dir, options(1 << 20)).unwrap();
    assert_eq!(
        store.get(b"a").unwrap().map(|r| (r.rev, r.value)),
        Some((3, b"alpha2".to_vec()))
    );
    assert_eq!(value(&store, b"b"), None);
    assert_eq!(store.len(), 1);
    let f = store.figures();
    assert_eq!((f.alive_count, f.dead_count, f.dead_deletion), (1, 2, 1));
    assert_eq!(f.last_tick, 4);
    assert!(Store::create(Arc::new(OsFileIo::new()), &dir, options(1 << 20)).is_err());
}

#[test]
fn mutate_sees_the_current_version_and_keep_writes_nothing() {
    let (_io, store) = common::sim_store(1 << 20);
    put(&store, b"k", 10, b"one", false).unwrap();
    let before = store.stats().bytes_written;
    let seen = store
        .mutate(b"k", false, |existing: Option<Existing<'_>>| {
            let e = existing.expect("present");
            Ok::<_, StorageError>((Mutation::Keep, (e.rev, e.value().unwrap())))
        })
        .unwrap();
    assert_eq!(seen, (10, b"one".to_vec()));
    assert_eq!(store.stats().bytes_written, before);
    let refused: Result<(), StorageError> =
        store.mutate(b"k", false, |_| Err(StorageError::ShuttingDown));
    assert!(refused.is_err());
    let mut keys = Vec::new();
    store.for_each_key(&mut |k, rev| {
        keys.push((k.to_vec(), rev));
        true
    });
    assert_eq!(keys, vec![(b"k".to_vec(), 10)]);
    let mut scanned = Vec::new();
    store
        .scan(&mut |k, rev, v| {
            scanned.push((k.to_vec(), rev, v.to_vec()));
            true
        })
        .unwrap();
    assert_eq!(scanned, vec![(b"k".to_vec(), 10, b"one".to_vec())]);
}

#[test]
fn truncate_removes_everything_and_stays_removed_after_reopen() {
    let (io, store) = common::sim_store(4096);
    for i in 0..100u64 {
        put(&store, format!("k{i}").as_bytes(), i + 1, b"v", false).unwrap();
    }
    store.truncate(1000, true).unwrap();
    assert_eq!(store.len(), 0);
    put(&store, b"after", 1001, b"v", true).unwrap();
    drop(store);
    let store = common::reopen(&io, 4096).unwrap();
    assert_eq!(store.len(), 1);
    assert_eq!(value(&store, b"k5"), None);
    assert_eq!(value(&store, b"after"), Some(b"v".to_vec()));
}
