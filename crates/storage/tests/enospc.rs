//! A full disk: the write fails with `Full`, the store turns read-only, a half-written record
//! never becomes visible, and a reopen with space again recovers everything before it.

mod common;

use common::{put, reopen, sim_store, value};
use quince_storage::StorageError;

#[test]
fn full_disk_fails_the_write_and_poisons() {
    let (io, store) = sim_store(1 << 20);
    put(&store, b"before", 1, b"fits", true).unwrap();
    io.set_space_left(Some(100));
    let full = put(&store, b"big", 2, &[7; 500], true);
    assert!(matches!(full, Err(StorageError::Full { .. })), "{full:?}");
    assert!(store.poisoned().is_some());
    assert!(matches!(
        put(&store, b"small", 3, b"x", false),
        Err(StorageError::Poisoned { .. })
    ));
    assert_eq!(value(&store, b"before"), Some(b"fits".to_vec()));
    assert_eq!(value(&store, b"big"), None);

    io.set_space_left(None);
    drop(store);
    let store = reopen(&io, 1 << 20).unwrap();
    assert_eq!(value(&store, b"before"), Some(b"fits".to_vec()));
    assert_eq!(value(&store, b"big"), None);
    put(&store, b"after", 4, b"room again", true).unwrap();
    assert_eq!(store.len(), 2);
}

#[test]
fn torn_write_is_never_built_upon() {
    let (io, store) = sim_store(1 << 20);
    put(&store, b"a", 1, b"one", true).unwrap();
    io.tear_next_write(10);
    assert!(put(&store, b"b", 2, b"two", false).is_err());
    assert!(put(&store, b"c", 3, b"three", false).is_err());
    drop(store);
    let store = reopen(&io, 1 << 20).unwrap();
    assert_eq!(value(&store, b"a"), Some(b"one".to_vec()));
    assert_eq!((value(&store, b"b"), value(&store, b"c")), (None, None));
}
