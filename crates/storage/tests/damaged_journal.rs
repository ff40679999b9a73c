//! Regression test: one damaged record in the middle of the active journal used to be treated as
//! a torn tail, so the journal was cut there and every acknowledged (synced) write after it was
//! lost with nothing but a warning. A crash can only tear the last append; damage that is
//! followed by a record that verifies, or that has a shape no crash leaves (garbage, a whole
//! record with a bad checksum), is corruption: the store refuses to open (errorNum 1100) and
//! leaves the file exactly as it found it.

use crate::common;

use common::{dir, files_named, put, reopen, sim_store};
use quince_storage::io::SimFileIo;
use quince_storage::StorageError;

/// A journal of `n` synced records of one size (`key0000`..), crashed with only synced bytes kept.
fn synced_journal(n: u64) -> (SimFileIo, std::path::PathBuf) {
    let (io, store) = sim_store(64 << 20);
    for i in 0..n {
        put(
            &store,
            format!("key{i:04}").as_bytes(),
            i + 1,
            &[b'v'; 100],
            true,
        )
        .unwrap();
    }
    drop(store);
    let io = io.crash(7, false);
    let journal = files_named(&io, &dir(), "journal-").pop().unwrap();
    (io, journal)
}

/// Opens the store expecting `Corrupted` at `offset` of the journal, and checks the journal
/// was not touched.
fn assert_refused(io: &SimFileIo, journal: &std::path::Path, offset: u64) {
    let before = io.read_file(journal).unwrap();
    let err = reopen(io, 64 << 20)
        .err()
        .expect("a damaged journal must not open");
    match &err {
        StorageError::Corrupted {
            path, offset: at, ..
        } => {
            assert_eq!(path, journal);
            assert_eq!(*at, offset, "{err}");
        }
        other => panic!("expected Corrupted, got {other}"),
    }
    assert_eq!(quince_errors::HasErrorCode::error_code(&err).num, 1100);
    assert_eq!(
        io.read_file(journal).unwrap(),
        before,
        "the journal was changed"
    );
}

/// Where record `i` (0-based, after the file header and the link record) starts: every record
/// here has the same size.
fn record_offset(io: &SimFileIo, journal: &std::path::Path, n: u64, i: u64) -> u64 {
    let len = io.read_file(journal).unwrap().len() as u64;
    let header = quince_storage::fuzzing::FILE_HEADER_RECORD_SIZE
        + quince_storage::fuzzing::LINK_RECORD_SIZE;
    let size = (len - header) / n;
    header + i * size
}

#[test]
fn a_flipped_byte_in_record_360_of_720_refuses_to_open() {
    let (io, journal) = synced_journal(720);
    let at = record_offset(&io, &journal, 720, 359);
    io.flip_byte(&journal, at + 40);
    assert_refused(&io, &journal, at);
}

#[test]
fn a_damaged_header_in_the_middle_refuses_to_open() {
    let (io, journal) = synced_journal(50);
    let at = record_offset(&io, &journal, 50, 20);
    io.flip_byte(&journal, at);
    assert_refused(&io, &journal, at);
}

#[test]
fn a_damaged_last_record_refuses_to_open() {
    // A crash cannot leave a whole record with a bad checksum: the last acknowledged write is
    // damaged, and cutting it would lose it.
    let (io, journal) = synced_journal(20);
    let at = record_offset(&io, &journal, 20, 19);
    io.flip_byte(&journal, at + 60);
    assert_refused(&io, &journal, at);
}

#[test]
fn garbage_after_the_last_record_refuses_to_open() {
    let (io, journal) = synced_journal(10);
    let end = io.read_file(&journal).unwrap().len() as u64;
    let garbage: Vec<u8> = (0..300u32).map(|i| (i * 7919 % 251) as u8 | 1).collect();
    io.append_durable(&journal, &garbage);
    assert_refused(&io, &journal, end);
}
