//! Journal rotation: a small journal size seals many datafiles, figures follow, hint files
//! make a reopen skip scanning datafiles, and a missing hint falls back to a strict scan.

use crate::common;

use common::{dir, files_named, put, reopen, sim_store, value};
use quince_storage::StorageError;

const JOURNAL: u64 = 4096;

fn fill(store: &quince_storage::Store, n: u64) {
    for i in 0..n {
        put(
            store,
            format!("key{i:04}").as_bytes(),
            i + 1,
            &[i as u8; 100],
            false,
        )
        .unwrap();
    }
    // Hint files of datafiles sealed by writes are written by the maintenance pass, outside
    // the writer lock.
    store.maintain().unwrap();
}

#[test]
fn small_journals_seal_into_datafiles_and_figures_follow() {
    let (io, store) = sim_store(JOURNAL);
    let empty = store.figures();
    // A journal is started by the first write that needs one.
    assert_eq!((empty.datafiles_count, empty.journals_count), (0, 0));
    assert_eq!(empty.journal_size, JOURNAL);
    fill(&store, 200);
    let f = store.figures();
    assert!(f.datafiles_count >= 5, "{f:?}");
    assert_eq!(f.journals_count, 1);
    assert!(f.journals_file_size <= JOURNAL);
    assert_eq!(f.alive_count, 200);
    assert_eq!(f.datafiles_count, store.stats().seals);
    assert_eq!(
        files_named(&io, &dir(), "datafile-").len() as u64,
        2 * f.datafiles_count
    );
    assert!(f.datafiles_file_size <= f.datafiles_count * JOURNAL);

    store.rotate().unwrap();
    let sealed = store.figures();
    assert_eq!(
        (sealed.datafiles_count, sealed.journals_count),
        (f.datafiles_count + 1, 0)
    );
    // Without a journal there is nothing to seal.
    store.rotate().unwrap();
    assert_eq!(store.figures().datafiles_count, f.datafiles_count + 1);
    // Reopened without a journal, the store starts one with its next write.
    drop(store);
    let store = common::reopen(&io, JOURNAL).unwrap();
    assert_eq!(store.figures().journals_count, 0);
    put(&store, b"after", 1000, b"v", false).unwrap();
    let reopened = store.figures();
    assert_eq!(
        (reopened.datafiles_count, reopened.journals_count),
        (f.datafiles_count + 1, 1)
    );
    assert_eq!(files_named(&io, &dir(), "journal-").len(), 1);
}

#[test]
fn journal_size_changes_apply_to_later_journals_and_big_records_get_their_own() {
    let (_io, store) = sim_store(JOURNAL);
    store.set_journal_size(64 * 1024);
    put(&store, b"a", 1, b"x", false).unwrap();
    store.rotate().unwrap();
    fill(&store, 100);
    // 100 records of about 140 bytes fit in one 64 KiB journal.
    assert_eq!(store.figures().datafiles_count, 1);
    let big = vec![9u8; 200 * 1024];
    put(&store, b"big", 1000, &big, true).unwrap();
    assert_eq!(value(&store, b"big"), Some(big));
    assert_eq!(store.figures().journal_size, 64 * 1024);
}

#[test]
fn reopen_uses_hints_instead_of_scanning_datafiles() {
    let (io, store) = sim_store(JOURNAL);
    fill(&store, 200);
    store.close().unwrap();
    drop(store);
    let datafiles: Vec<_> = files_named(&io, &dir(), "datafile-")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "db"))
        .collect();
    assert!(datafiles.len() >= 5);
    let before: Vec<u64> = datafiles.iter().map(|p| io.reads_of(p)).collect();
    let store = reopen(&io, JOURNAL).unwrap();
    assert_eq!(store.len(), 200);
    // Opening reads a datafile's head (file header, next record's header), never its records.
    for (path, before) in datafiles.iter().zip(before) {
        let reads = io.reads_of(path) - before;
        assert!(reads <= 2, "{} read {reads} times", path.display());
    }
    for i in 0..200u64 {
        assert_eq!(
            value(&store, format!("key{i:04}").as_bytes()),
            Some(vec![i as u8; 100])
        );
    }
}

#[test]
fn corrupt_datafile_is_caught_on_read_with_a_hint_and_on_open_without() {
    let (io, store) = sim_store(JOURNAL);
    fill(&store, 200);
    drop(store);
    let first = files_named(&io, &dir(), "datafile-")[0].clone();
    // The first record after the file header and the link record is key0000; its value
    // starts 32 + 7 bytes in.
    let first_record = quince_storage::fuzzing::FILE_HEADER_RECORD_SIZE
        + quince_storage::fuzzing::LINK_RECORD_SIZE;
    io.flip_byte(&first, first_record + 32 + 7 + 10);
    let store = reopen(&io, JOURNAL).unwrap();
    assert!(matches!(
        store.get(b"key0000"),
        Err(StorageError::Corrupted { .. })
    ));
    assert_eq!(value(&store, b"key0001"), Some(vec![1; 100]));
    drop(store);

    let hint = first.with_extension("hint");
    quince_storage::io::FileIo::remove_file(&io, &hint).unwrap();
    assert!(matches!(
        reopen(&io, JOURNAL),
        Err(StorageError::Corrupted { .. })
    ));
}

#[test]
fn a_damaged_hint_is_ignored_and_rebuilt() {
    let (io, store) = sim_store(JOURNAL);
    fill(&store, 50);
    drop(store);
    let hint = files_named(&io, &dir(), "datafile-")
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "hint"))
        .unwrap();
    io.flip_byte(&hint, 60);
    let store = reopen(&io, JOURNAL).unwrap();
    assert_eq!(store.len(), 50);
    drop(store);
    let datafile = hint.with_extension("db");
    let reads_before = io.reads_of(&datafile);
    let store = reopen(&io, JOURNAL).unwrap();
    assert_eq!(store.len(), 50);
    assert!(
        io.reads_of(&datafile) - reads_before <= 2,
        "hint was not rebuilt"
    );
}
