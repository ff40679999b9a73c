//! Salvage (`StoreOptions::salvage`, the server's `--database.ignore-datafile-errors`): a store
//! whose files are damaged opens with every record that still verifies; the damaged file is kept
//! beside it under a `.corrupt` name, byte for byte; the store is writable and later opens
//! without salvage. An interrupted salvage is refused by a plain open and finished by the next
//! salvaging one.

use crate::common;

use std::sync::Arc;

use common::{dir, files_named, options, put, reopen, sim_store, value};
use quince_storage::io::{FileIo, SimFileIo};
use quince_storage::{StorageError, Store};

fn salvaging(io: &SimFileIo, journal_size: u64) -> Result<Store, StorageError> {
    let mut options = options(journal_size);
    options.salvage = true;
    Store::open(Arc::new(io.clone()), &dir(), options)
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

#[test]
fn a_damaged_journal_is_salvaged_and_kept_aside() {
    let (io, store) = sim_store(64 << 20);
    for i in 0..720u64 {
        put(&store, &key(i), i + 1, &[b'v'; 100], true).unwrap();
    }
    drop(store);
    let io = io.crash(1, false);
    let journal = files_named(&io, &dir(), "journal-").pop().unwrap();
    // Record 360 (0-based 359): 64-byte file header, 144 bytes per record.
    io.flip_byte(&journal, 64 + 359 * 144 + 50);
    let damaged = io.read_file(&journal).unwrap();
    assert!(reopen(&io, 64 << 20).is_err());

    let store = salvaging(&io, 64 << 20).unwrap();
    assert_eq!(store.len(), 719);
    assert_eq!(value(&store, &key(359)), None);
    assert_eq!(value(&store, &key(360)), Some(vec![b'v'; 100]));
    assert_eq!(value(&store, &key(719)), Some(vec![b'v'; 100]));
    let aside = dir().join(format!(
        "{}.corrupt",
        journal.file_name().unwrap().to_string_lossy()
    ));
    assert_eq!(
        io.read_file(&aside).unwrap(),
        damaged,
        "the damaged file must be kept whole"
    );
    put(&store, b"after", 5000, b"written after salvage", true).unwrap();
    drop(store);
    let store = reopen(&io.crash(2, false), 64 << 20).unwrap();
    assert_eq!(store.len(), 720);
}

#[test]
fn a_damaged_sealed_datafile_is_salvaged() {
    let (io, store) = sim_store(8192);
    for i in 0..300u64 {
        put(&store, &key(i), i + 1, &[b'v'; 100], true).unwrap();
    }
    // Closing finishes the seals the writer handed off.
    store.close().unwrap();
    drop(store);
    let io = io.crash(1, false);
    // Without its hint the datafile is scanned, and the damage is seen at open.
    let datafile = files_named(&io, &dir(), "datafile-")
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "db"))
        .unwrap();
    let hint = datafile.with_extension("hint");
    if io.exists(&hint) {
        io.remove_file(&hint).unwrap();
    }
    io.flip_byte(&datafile, 64 + 3 * 144 + 70);
    assert!(matches!(
        reopen(&io, 8192),
        Err(StorageError::Corrupted { .. })
    ));
    let store = salvaging(&io, 8192).unwrap();
    assert_eq!(store.len(), 299);
    assert_eq!(value(&store, &key(3)), None);
    drop(store);
    assert_eq!(reopen(&io, 8192).unwrap().len(), 299);
}

#[test]
fn an_interrupted_salvage_is_refused_then_finished() {
    let (io, store) = sim_store(64 << 20);
    for i in 0..50u64 {
        put(&store, &key(i), i + 1, &[b'v'; 100], true).unwrap();
    }
    drop(store);
    let io = io.crash(1, false);
    let journal = files_named(&io, &dir(), "journal-").pop().unwrap();
    io.flip_byte(&journal, 64 + 10 * 144 + 50);
    // The crash came after the damaged file was set aside and before the copy was renamed.
    let aside = dir().join(format!(
        "{}.corrupt",
        journal.file_name().unwrap().to_string_lossy()
    ));
    io.rename(&journal, &aside).unwrap();
    io.sync_dir(&dir()).unwrap();
    let err = reopen(&io, 64 << 20).err().unwrap();
    assert!(err.to_string().contains("interrupted salvage"), "{err}");
    let store = salvaging(&io, 64 << 20).unwrap();
    assert_eq!(store.len(), 49);
    drop(store);
    assert_eq!(reopen(&io.crash(2, false), 64 << 20).unwrap().len(), 49);
}
