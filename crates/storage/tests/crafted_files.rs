//! Regression tests for what the `journal_recovery` fuzz target found: files whose checksums
//! are right but whose fields are not. Each used to panic at open (overflow checks are on in
//! every build) or to serve a revision no record holds. A store must open with every document
//! (a hint it cannot trust is ignored and its datafile scanned), or refuse with `Corrupted`, or
//! refuse the one read; never panic, never serve what was not written.

use crate::common;

use std::path::Path;

use common::{dir, files_named, put, reopen, sim_store};
use quince_storage::fuzzing::{reseal_hint, reseal_records, PREFIX_SIZE};
use quince_storage::io::{FileIo, SimFileIo};
use quince_storage::StorageError;

const JOURNAL: u64 = 4096;
/// Bytes of a hint file's header; its first entry follows.
const HINT_HEADER: usize = 40;

/// A store with sealed datafiles (with hints) and a journal, all synced and closed.
fn sealed_store() -> SimFileIo {
    let (io, store) = sim_store(JOURNAL);
    for i in 0..40u64 {
        put(
            &store,
            format!("key{i:03}").as_bytes(),
            i + 1,
            &[b'v'; 60],
            true,
        )
        .unwrap();
    }
    store.rotate().unwrap();
    drop(store);
    io
}

fn overwrite(io: &SimFileIo, path: &Path, bytes: &[u8]) {
    let handle = io.open(path).unwrap();
    handle.write_all_at(bytes, 0).unwrap();
    handle.sync_data().unwrap();
}

/// Changes the first entry of the first hint file with `change`, and reseals the hint.
fn change_first_hint_entry(io: &SimFileIo, change: impl FnOnce(&mut [u8])) {
    let hint = files_named(io, &dir(), "datafile-")
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "hint"))
        .expect("a hint file");
    let mut bytes = io.read_file(&hint).unwrap();
    change(&mut bytes[HINT_HEADER..]);
    reseal_hint(&mut bytes);
    overwrite(io, &hint, &bytes);
}

/// Every document is there with its revision and value.
fn assert_whole(io: &SimFileIo) {
    let store = reopen(io, JOURNAL).expect("a hint that cannot be trusted is ignored");
    for i in 0..40u64 {
        let record = store.get(format!("key{i:03}").as_bytes()).unwrap().unwrap();
        assert_eq!(record.rev, i + 1);
        assert_eq!(record.value, vec![b'v'; 60]);
    }
}

#[test]
fn a_hint_entry_smaller_than_its_record_prefix_is_not_trusted() {
    let io = sealed_store();
    // size (u32 at 32) 17: below the 32-byte prefix plus the key.
    change_first_hint_entry(&io, |entry| {
        entry[32..36].copy_from_slice(&17u32.to_le_bytes())
    });
    assert_whole(&io);
}

#[test]
fn a_hint_entry_whose_end_overflows_is_not_trusted() {
    let io = sealed_store();
    // offset (u64 at 24) u64::MAX: offset + size overflows.
    change_first_hint_entry(&io, |entry| {
        entry[24..32].copy_from_slice(&u64::MAX.to_le_bytes())
    });
    assert_whole(&io);
}

#[test]
fn a_record_with_the_largest_sequence_number_is_refused() {
    let (io, store) = sim_store(JOURNAL);
    put(&store, b"only", 1, b"value", true).unwrap();
    drop(store);
    let journal = files_named(&io, &dir(), "journal-")
        .pop()
        .expect("a journal");
    let mut bytes = io.read_file(&journal).unwrap();
    // The file header record, the link record, then the document: its seq is the u64 at 16.
    let header_len = (quince_storage::fuzzing::FILE_HEADER_RECORD_SIZE
        + quince_storage::fuzzing::LINK_RECORD_SIZE) as usize;
    bytes[header_len + 16..header_len + 24].copy_from_slice(&u64::MAX.to_le_bytes());
    reseal_records(&mut bytes);
    overwrite(&io, &journal, &bytes);
    let err = reopen(&io, JOURNAL).err().expect("the store must not open");
    assert!(matches!(err, StorageError::Corrupted { .. }), "{err}");
}

#[test]
fn a_record_whose_revision_differs_from_the_index_is_not_served() {
    let io = sealed_store();
    let datafile = files_named(&io, &dir(), "datafile-")
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "db"))
        .expect("a datafile");
    let mut bytes = io.read_file(&datafile).unwrap();
    // The first document after the file header and the link record (the datafile was a
    // journal the writer took): its rev is the u64 at 24. The hint keeps the old one, so the
    // index loads a revision that no record holds.
    let at = (quince_storage::fuzzing::FILE_HEADER_RECORD_SIZE
        + quince_storage::fuzzing::LINK_RECORD_SIZE) as usize;
    let key_len = u32::from_le_bytes(bytes[at + 12..at + 16].try_into().unwrap()) as usize;
    let key = bytes[at + PREFIX_SIZE..at + PREFIX_SIZE + key_len].to_vec();
    bytes[at + 24..at + 32].copy_from_slice(&999u64.to_le_bytes());
    reseal_records(&mut bytes);
    overwrite(&io, &datafile, &bytes);
    let store = reopen(&io, JOURNAL).unwrap();
    match store.get(&key) {
        Err(StorageError::Corrupted { .. }) => {}
        other => panic!("served a revision no record holds: {other:?}"),
    }
}

#[test]
fn a_file_numbered_beyond_the_engines_range_is_refused() {
    let io = sealed_store();
    let name = dir().join(format!("datafile-{}.db", u64::MAX));
    io.create_new(&name).unwrap().sync_data().unwrap();
    let err = reopen(&io, JOURNAL).err().expect("the store must not open");
    assert!(matches!(err, StorageError::Corrupted { .. }), "{err}");
}

/// Recovery used to delete the files a committed compaction replaced before it had loaded the
/// replacement; with the replacement damaged, the only good copies were gone.
#[test]
fn the_files_a_damaged_compaction_output_replaced_are_kept() {
    let (io, store) = sim_store(JOURNAL);
    for i in 0..40u64 {
        put(
            &store,
            format!("key{i:03}").as_bytes(),
            i + 1,
            &[b'v'; 60],
            true,
        )
        .unwrap();
    }
    for i in 0..30u64 {
        common::remove(&store, format!("key{i:03}").as_bytes(), 100 + i, true).unwrap();
    }
    store.rotate().unwrap();
    let originals: Vec<(std::path::PathBuf, Vec<u8>)> = files_named(&io, &dir(), "datafile-")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "db"))
        .map(|p| (p.clone(), io.read_file(&p).unwrap()))
        .collect();
    store.compact().unwrap();
    drop(store);
    // The cleanup "did not happen": the replaced files are back beside the output.
    let mut restored = 0;
    for (path, bytes) in &originals {
        if !io.exists(path) {
            io.create_new(path).unwrap().write_all_at(bytes, 0).unwrap();
            restored += 1;
        }
    }
    io.sync_dir(&dir()).unwrap();
    assert!(restored > 0, "the compaction replaced no file");
    // Damage the output (a file none of the originals are): a record past its header, and its
    // hint goes so that it is scanned.
    let output = files_named(&io, &dir(), "datafile-")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "db"))
        .find(|p| originals.iter().all(|(o, _)| o != p))
        .expect("the compaction output");
    let mut bytes = io.read_file(&output).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    overwrite(&io, &output, &bytes);
    io.remove_file(&output.with_extension("hint")).ok();
    let err = reopen(&io, JOURNAL).err().expect("the store must not open");
    assert!(matches!(err, StorageError::Corrupted { .. }), "{err}");
    for (path, _) in &originals {
        assert!(io.exists(path), "{} was deleted", path.display());
    }
}

#[test]
fn a_hint_larger_than_twice_its_datafile_is_not_read() {
    let io = sealed_store();
    let hint = files_named(&io, &dir(), "datafile-")
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "hint"))
        .expect("a hint file");
    let datafile_len = io.read_file(&hint.with_extension("db")).unwrap().len();
    let mut bytes = io.read_file(&hint).unwrap();
    bytes.resize(datafile_len * 2 + 4096, 0);
    reseal_hint(&mut bytes);
    overwrite(&io, &hint, &bytes);
    assert_whole(&io);
}
