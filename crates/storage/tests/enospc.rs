//! A full disk: the write fails with `Full`, the store turns read-only, a half-written record
//! never becomes visible, and a reopen with space again recovers everything before it. A store
//! whose journals are all sealed opens on a full disk: the journal its next write needs cannot
//! be started (`Full`, nothing poisoned), and is once there is room.

use crate::common;

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

#[test]
fn a_store_without_a_journal_opens_on_a_full_disk_and_writes_once_there_is_room() {
    let (io, store) = sim_store(1 << 20);
    put(&store, b"sealed", 1, b"kept", true).unwrap();
    // Room for the seal's footer (a 40-byte record) and nothing more: the seal succeeds, and
    // every record is in a sealed datafile. (The engine used to start the next journal right
    // away, which failed here and poisoned the store; reopening then failed on the same full
    // disk, so the server could not start.)
    io.set_space_left(Some(40));
    store.rotate().unwrap();
    assert!(store.poisoned().is_none());
    drop(store);
    io.set_space_left(Some(0));

    // Opening writes no data file, so it succeeds on a full disk; reads work.
    let store = reopen(&io, 1 << 20).unwrap();
    assert_eq!(value(&store, b"sealed"), Some(b"kept".to_vec()));
    // The write cannot start a journal: `Full`, and nothing is left behind or poisoned.
    let full = put(&store, b"new", 2, b"v", true);
    assert!(matches!(full, Err(StorageError::Full { .. })), "{full:?}");
    assert!(store.poisoned().is_none());
    assert!(common::files_named(&io, &common::dir(), "journal-").is_empty());
    let again = put(&store, b"new", 3, b"v", false);
    assert!(matches!(again, Err(StorageError::Full { .. })), "{again:?}");

    // Space freed (a collection dropped elsewhere): the same store writes again.
    io.set_space_left(None);
    put(&store, b"new", 4, b"v", true).unwrap();
    drop(store);
    let store = reopen(&io.crash(1, false), 1 << 20).unwrap();
    assert_eq!(value(&store, b"sealed"), Some(b"kept".to_vec()));
    assert_eq!(value(&store, b"new"), Some(b"v".to_vec()));
}

/// The length of a spare journal as the maintenance pass creates it (its header record only).
fn spare_journal_len() -> u64 {
    let (io, store) = sim_store(1 << 20);
    put(&store, b"k", 1, b"v", true).unwrap();
    store.rotate().unwrap();
    store.maintain().unwrap();
    let journals = common::files_named(&io, &common::dir(), "journal-");
    assert_eq!(journals.len(), 1, "{journals:?}");
    io.read_file(&journals[0]).unwrap().len() as u64
}

#[test]
fn a_spare_the_manifest_cannot_name_for_lack_of_space_is_given_up_without_poisoning() {
    let (io, store) = sim_store(1 << 20);
    put(&store, b"sealed", 1, b"kept", true).unwrap();
    store.rotate().unwrap();
    // Room for the spare's header and not for the manifest that must name it. (The store used
    // to be poisoned here, so an idle server whose disk filled up failed its shutdown.)
    io.set_space_left(Some(spare_journal_len()));
    store.maintain().unwrap();
    assert!(store.poisoned().is_none(), "{:?}", store.poisoned());
    assert!(common::files_named(&io, &common::dir(), "journal-").is_empty());
    store.maintain().unwrap();
    assert!(store.poisoned().is_none());
    store.close().unwrap();
    drop(store);

    io.set_space_left(None);
    let io = io.crash(2, false);
    let store = reopen(&io, 1 << 20).unwrap();
    assert_eq!(value(&store, b"sealed"), Some(b"kept".to_vec()));
    store.maintain().unwrap();
    put(&store, b"new", 2, b"v", true).unwrap();
    drop(store);
    let store = reopen(&io.crash(3, false), 1 << 20).unwrap();
    assert_eq!(value(&store, b"new"), Some(b"v".to_vec()));
}

#[test]
fn a_compaction_without_room_for_its_output_is_abandoned_without_poisoning() {
    let (io, store) = sim_store(4096);
    for i in 0..40u64 {
        put(
            &store,
            format!("k{i}").as_bytes(),
            i + 1,
            &[b'x'; 200],
            false,
        )
        .unwrap();
    }
    for i in 0..30u64 {
        common::remove(&store, format!("k{i}").as_bytes(), 100 + i, false).unwrap();
    }
    store.rotate().unwrap();
    // Room for the output's header and little else. (A compaction used to poison the store
    // here, so an idle server whose disk filled up failed its shutdown.)
    io.set_space_left(Some(300));
    let full = store.compact();
    assert!(matches!(full, Err(StorageError::Full { .. })), "{full:?}");
    assert!(store.poisoned().is_none(), "{:?}", store.poisoned());
    assert!(common::files_named(&io, &common::dir(), "compaction-").is_empty());
    for i in 30..40u64 {
        assert_eq!(
            value(&store, format!("k{i}").as_bytes()),
            Some(vec![b'x'; 200])
        );
    }
    store.close().unwrap();
    drop(store);

    io.set_space_left(None);
    let io = io.crash(4, false);
    let store = reopen(&io, 4096).unwrap();
    assert!(store.compact().unwrap().files_compacted > 0);
    assert_eq!(store.len(), 10);
    drop(store);
    let store = reopen(&io.crash(5, false), 4096).unwrap();
    assert_eq!(store.len(), 10);
    assert_eq!(value(&store, b"k35"), Some(vec![b'x'; 200]));
}
