//! Regression test: a sealed datafile deleted behind the engine's back used to lose its
//! documents with nothing logged (its orphaned hint file was deleted too). The store's manifest
//! lists every file that holds its data; a listed file that is missing, and not superseded by a
//! compaction output that is there, stops the store from opening (errorNum 1100), and nothing
//! is deleted.

use crate::common;

use common::{dir, files_named, put, reopen, sim_store};
use quince_storage::io::{FileIo, SimFileIo};
use quince_storage::StorageError;

/// A store with several sealed datafiles (hints written) and a journal, all synced.
fn sealed_store() -> SimFileIo {
    let (io, store) = sim_store(4096);
    for i in 0..200u64 {
        put(
            &store,
            format!("key{i:04}").as_bytes(),
            i + 1,
            &[b'v'; 60],
            true,
        )
        .unwrap();
    }
    store.rotate().unwrap();
    put(&store, b"last", 500, b"in the journal", true).unwrap();
    drop(store);
    io.crash(1, false)
}

fn refused(io: &SimFileIo) -> StorageError {
    let names_before = io.paths();
    let err = reopen(io, 4096).err().expect("the store must not open");
    assert!(matches!(err, StorageError::Corrupted { .. }), "{err}");
    assert_eq!(io.paths(), names_before, "opening deleted or created files");
    err
}

#[test]
fn a_deleted_sealed_datafile_refuses_to_open() {
    let io = sealed_store();
    let datafiles = files_named(&io, &dir(), "datafile-");
    let victim = datafiles
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "db"))
        .unwrap()
        .clone();
    io.remove_file(&victim).unwrap();
    io.sync_dir(&dir()).unwrap();
    let err = refused(&io);
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    assert!(err.to_string().contains(&name), "{err}");
}

#[test]
fn a_deleted_journal_refuses_to_open() {
    let io = sealed_store();
    let journal = files_named(&io, &dir(), "journal-").pop().unwrap();
    io.remove_file(&journal).unwrap();
    io.sync_dir(&dir()).unwrap();
    refused(&io);
}

#[test]
fn a_deleted_manifest_refuses_to_open() {
    let io = sealed_store();
    io.remove_file(&dir().join("manifest.db")).unwrap();
    io.sync_dir(&dir()).unwrap();
    let err = refused(&io);
    assert!(err.to_string().contains("manifest"), "{err}");
}

#[test]
fn a_store_that_never_got_past_its_creation_opens_without_a_manifest() {
    let (io, store) = sim_store(4096);
    drop(store);
    let io = io.crash(2, false);
    io.remove_file(&dir().join("manifest.db")).unwrap();
    let store = reopen(&io, 4096).unwrap();
    assert!(store.is_empty());
    put(&store, b"k", 1, b"v", true).unwrap();
    drop(store);
    assert_eq!(reopen(&io.crash(3, false), 4096).unwrap().len(), 1);
}

#[test]
fn every_seal_and_compaction_keeps_the_manifest_true() {
    let (io, store) = sim_store(4096);
    for round in 0..5u64 {
        for i in 0..100u64 {
            put(
                &store,
                format!("key{i:03}").as_bytes(),
                round * 1000 + i + 1,
                &[b'v'; 60],
                true,
            )
            .unwrap();
        }
        store.compact().unwrap();
        // A crash at any point after a seal or a compaction reopens with every file it needs.
        let after = io.crash(round, false);
        let reopened = reopen(&after, 4096).unwrap();
        assert_eq!(reopened.len(), 100);
    }
}
