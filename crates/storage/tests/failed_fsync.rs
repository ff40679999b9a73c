//! A failed fsync poisons the store: the failing write is not acknowledged, every later write
//! fails with `Poisoned`, reads keep working, and a reopen recovers everything synced before.

use crate::common;

use common::{put, reopen, sim_store, value};
use quince_storage::StorageError;

#[test]
fn failed_fsync_poisons_and_reopen_recovers_synced_writes() {
    let (io, store) = sim_store(1 << 20);
    for i in 0..5u64 {
        put(&store, format!("k{i}").as_bytes(), i + 1, b"synced", true).unwrap();
    }
    io.fail_sync_after(0);
    let failed = put(&store, b"k5", 6, b"unlucky", true);
    assert!(matches!(failed, Err(StorageError::Io { .. })), "{failed:?}");
    assert!(store.poisoned().is_some());
    assert!(matches!(
        put(&store, b"k6", 7, b"x", false),
        Err(StorageError::Poisoned { .. })
    ));
    assert!(matches!(
        store.truncate(8, false),
        Err(StorageError::Poisoned { .. })
    ));
    assert!(matches!(store.rotate(), Err(StorageError::Poisoned { .. })));
    assert!(matches!(store.sync(), Err(StorageError::Poisoned { .. })));
    assert_eq!(value(&store, b"k0"), Some(b"synced".to_vec()));
    store.maintain().unwrap();
    assert_eq!(io.stats().failed_syncs, 1);

    let io = io.crash(1, false);
    let store = reopen(&io, 1 << 20).unwrap();
    assert!(store.poisoned().is_none());
    for i in 0..5u64 {
        assert_eq!(
            value(&store, format!("k{i}").as_bytes()),
            Some(b"synced".to_vec())
        );
    }
    assert_eq!(value(&store, b"k6"), None);
    put(&store, b"k7", 9, b"again", true).unwrap();
}

#[test]
fn failed_fsync_during_rotation_poisons() {
    let (io, store) = sim_store(1024);
    put(&store, b"first", 1, &[1; 100], true).unwrap();
    io.fail_sync_after(0);
    // Enough records to hand full journals off: the writer fsyncs nothing, so every write
    // succeeds; the seal's fsync, in the maintenance pass, fails.
    for i in 0..20u64 {
        put(&store, format!("k{i}").as_bytes(), i + 2, &[2; 100], false).unwrap();
    }
    assert!(store.figures().journals_count >= 2);
    let failure = store.maintain();
    assert!(
        matches!(failure, Err(StorageError::Io { .. })),
        "{failure:?}"
    );
    assert!(store.poisoned().is_some());
    assert!(matches!(
        put(&store, b"z", 99, b"x", false),
        Err(StorageError::Poisoned { .. })
    ));
    assert_eq!(value(&store, b"first"), Some(vec![1; 100]));
    let store = reopen(&io.crash(2, true), 1024).unwrap();
    assert_eq!(value(&store, b"first"), Some(vec![1; 100]));
}
