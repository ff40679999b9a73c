//! A transaction in one store (`Store::part`, `commit` with one part): its group is all or
//! nothing after a crash at any byte of its append, its items see each other's staged versions,
//! a group larger than the journal gets a journal of its own, and a dropped part writes nothing.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use quince_storage::io::{FileIo, SimFileIo};
use quince_storage::{commit, Mutation, StorageError, Store};

type State = BTreeMap<Vec<u8>, (u64, Vec<u8>)>;

fn decide_put(rev: u64, value: &[u8]) -> Result<(Mutation, ()), StorageError> {
    Ok((
        Mutation::Put {
            rev,
            value: value.to_vec(),
        },
        (),
    ))
}

/// The single journal of the store in `io`.
fn only_journal(io: &SimFileIo) -> std::path::PathBuf {
    let journals = common::files_named(io, &common::dir(), "journal-");
    assert_eq!(journals.len(), 1, "{journals:?}");
    journals[0].clone()
}

/// Opens the image, checks it, and returns what it holds.
fn recovered(image: &SimFileIo, context: &str) -> State {
    let store = common::reopen(image, 1 << 16).unwrap_or_else(|e| panic!("{context}: {e}"));
    store
        .check_consistency()
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    assert_eq!(
        store.pending_group(),
        None,
        "{context}: a lone part is its commit point"
    );
    common::contents(&store)
}

#[test]
fn a_group_survives_whole_or_not_at_all_whatever_part_of_its_append_reached_the_disk() {
    let (io, store) = common::sim_store(1 << 16);
    for i in 0..3u64 {
        common::put(&store, &[b'k', i as u8], i + 1, &[i as u8; 50], true).unwrap();
    }
    let before = common::contents(&store);
    let journal = only_journal(&io);
    let durable_len = io.crash(0, false).read_file(&journal).unwrap().len();
    assert_eq!(durable_len, io.read_file(&journal).unwrap().len());

    let mut part = store.part(1);
    common::stage_put(&mut part, b"k\x01", 10, &[0xa1; 300]);
    common::stage_put(&mut part, b"new", 11, &[0xa2; 200]);
    part.mutate(b"k\x02", |_| {
        Ok::<_, StorageError>((Mutation::Remove { rev: 12 }, ()))
    })
    .unwrap();
    common::stage_put(&mut part, b"new", 13, &[0xa3; 400]);
    let tickets = commit(5, vec![part]).unwrap();
    assert_eq!(tickets.len(), 1);
    let after = common::contents(&store);
    assert_ne!(before, after);
    let group = io.read_file(&journal).unwrap()[durable_len..].to_vec();
    assert!(group.len() > 1024, "the group spans several sectors");

    // Every prefix of the group's bytes, as a torn append leaves it.
    for keep in 0..=group.len() {
        let image = io.crash(0, false);
        image.append_durable(&journal, &group[..keep]);
        let context = format!("{keep} of {} bytes of the group", group.len());
        let state = recovered(&image, &context);
        let whole = keep == group.len();
        assert_eq!(&state, if whole { &after } else { &before }, "{context}");
        let len = image.read_file(&journal).unwrap().len();
        assert_eq!(
            len,
            if whole {
                durable_len + keep
            } else {
                durable_len
            },
            "{context}"
        );
    }
    // Sectors the disk never wrote: the group's bytes up to a 512-byte boundary of the file,
    // zeroes from there to where the append ended.
    let first_sector = durable_len.div_ceil(512) * 512;
    for boundary in (first_sector..durable_len + group.len()).step_by(512) {
        let keep = boundary - durable_len;
        let mut bytes = group[..keep].to_vec();
        bytes.resize(group.len(), 0);
        let image = io.crash(0, false);
        image.append_durable(&journal, &bytes);
        let context = format!("group zeroed from file offset {boundary}");
        assert_eq!(recovered(&image, &context), before, "{context}");
    }
}

#[test]
fn items_of_a_part_see_the_versions_it_staged() {
    let (io, store) = common::sim_store(1 << 16);
    common::put(&store, b"a", 1, b"one", false).unwrap();
    let mut part = store.part(1);
    part.mutate(b"b", |existing| {
        assert!(existing.is_none());
        decide_put(2, b"two")
    })
    .unwrap();
    part.mutate(b"b", |existing| {
        let existing = existing.expect("the staged insert is the current version");
        assert_eq!(
            (existing.rev, existing.value().unwrap()),
            (2, b"two".to_vec())
        );
        decide_put(3, b"three")
    })
    .unwrap();
    part.mutate(b"a", |existing| {
        assert_eq!(existing.unwrap().value().unwrap(), b"one");
        Ok::<_, StorageError>((Mutation::Remove { rev: 4 }, ()))
    })
    .unwrap();
    let staged = part.staged_bytes();
    // The key the part removed is absent: removing it again, or keeping, stages nothing.
    part.mutate(b"a", |existing| {
        assert!(existing.is_none());
        Ok::<_, StorageError>((Mutation::Remove { rev: 5 }, ()))
    })
    .unwrap();
    part.mutate(b"b", |_| Ok::<_, StorageError>((Mutation::Keep, ())))
        .unwrap();
    // A failed decision and a record too large fail their item alone.
    let refused: Result<(), StorageError> = part.mutate(b"c", |_| Err(StorageError::ShuttingDown));
    assert!(matches!(refused, Err(StorageError::ShuttingDown)));
    let too_long = vec![b'x'; 64 * 1024 + 1];
    let too_large = part.mutate(&too_long, |_| decide_put(6, b"v"));
    assert!(matches!(
        too_large,
        Err(StorageError::RecordTooLarge { .. })
    ));
    assert_eq!(part.staged_bytes(), staged);
    assert!(!part.is_empty());
    // Nothing is visible before the commit.
    assert_eq!(common::value(&store, b"b"), None);
    assert_eq!(common::value(&store, b"a"), Some(b"one".to_vec()));

    let tickets = commit(9, vec![part]).unwrap();
    tickets.into_iter().next().unwrap().unwrap().wait().unwrap();
    let expect: State = [(b"b".to_vec(), (3, b"three".to_vec()))].into();
    assert_eq!(common::contents(&store), expect);
    store.check_consistency().unwrap();
    drop(store);
    let store = common::reopen(&io.crash(0, false), 1 << 16).unwrap();
    assert_eq!(common::contents(&store), expect);
    store.check_consistency().unwrap();
}

#[test]
fn a_dropped_part_writes_nothing_and_an_empty_one_takes_no_part() {
    let (io, store) = common::sim_store(1 << 16);
    common::put(&store, b"a", 1, b"one", true).unwrap();
    let journal = only_journal(&io);
    let len = io.read_file(&journal).unwrap().len();
    let mut part = store.part(1);
    common::stage_put(&mut part, b"b", 2, b"two");
    drop(part);
    assert_eq!(io.read_file(&journal).unwrap().len(), len);
    let empty = store.part(1);
    assert!(empty.is_empty());
    let tickets = commit(3, vec![empty]).unwrap();
    assert!(tickets[0].is_none());
    assert_eq!(io.read_file(&journal).unwrap().len(), len);
    // The lock was released both times.
    common::put(&store, b"c", 4, b"three", true).unwrap();
    assert_eq!(common::value(&store, b"b"), None);
    store.check_consistency().unwrap();
}

#[test]
fn a_group_larger_than_the_journal_goes_into_a_journal_of_its_own() {
    const JOURNAL: u64 = 1024;
    let (io, store) = common::sim_store(JOURNAL);
    common::put(&store, b"first", 1, &[1; 100], false).unwrap();
    let first = only_journal(&io);
    let mut part = store.part(1);
    for i in 0..10u8 {
        common::stage_put(&mut part, &[b'g', i], 10 + u64::from(i), &[i; 200]);
    }
    assert!(part.staged_bytes() > JOURNAL);
    let ticket = commit(2, vec![part]).unwrap().pop().unwrap().unwrap();
    ticket.wait().unwrap();
    // The first journal was handed off before the group; the group fills the next one.
    let journals = common::files_named(&io, &common::dir(), "journal-");
    assert_eq!(journals.len(), 2, "{journals:?}");
    assert_eq!(journals[0], first);
    let bytes = io.read_file(&journals[1]).unwrap();
    assert!(bytes.len() as u64 > JOURNAL);
    let kinds = record_kinds(&bytes);
    assert_eq!(kinds.len(), 1 + 1 + 1 + 10, "{kinds:?}");
    assert_eq!(&kinds[..3], &[1, 9, 10], "header, link, group marker");
    assert!(kinds[3..].iter().all(|k| *k == 2), "{kinds:?}");
    // The next write finds that journal over its size and takes another.
    common::put(&store, b"after", 30, b"x", true).unwrap();
    assert_eq!(
        common::files_named(&io, &common::dir(), "journal-").len(),
        3
    );
    let expect = common::contents(&store);
    assert_eq!(expect.len(), 12);
    drop(store);
    let store = common::reopen(&io.crash(0, false), JOURNAL).unwrap();
    store.check_consistency().unwrap();
    assert_eq!(common::contents(&store), expect);
}

/// The record types of a journal's records, in order.
fn record_kinds(bytes: &[u8]) -> Vec<u8> {
    let mut kinds = Vec::new();
    let mut at = 0usize;
    while at + 16 <= bytes.len() {
        let size = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        if size == 0 {
            break;
        }
        kinds.push(bytes[at + 8]);
        at += size.div_ceil(8) * 8;
    }
    kinds
}

#[test]
fn a_group_on_a_real_disk_survives_a_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c1");
    let io: Arc<dyn FileIo> = Arc::new(quince_storage::io::OsFileIo::new());
    let store = Store::create(io.clone(), &dir, common::options(1 << 16)).unwrap();
    let mut part = store.part(7);
    common::stage_put(&mut part, b"x", 1, b"one");
    common::stage_put(&mut part, b"y", 2, b"two");
    commit(1, vec![part]).unwrap()[0]
        .take()
        .unwrap()
        .wait()
        .unwrap();
    store.close().unwrap();
    drop(store);
    let store = Store::open(io, &dir, common::options(1 << 16)).unwrap();
    assert_eq!(common::contents(&store).len(), 2);
    assert_eq!(store.pending_group(), None);
}

/// A group that had a journal of its own and lost its end: the journal holds no record after
/// the cut, so it is kept empty (as the spare) and the log ends with the journal before it.
#[test]
fn a_torn_group_alone_in_its_journal_leaves_the_journal_empty() {
    const JOURNAL: u64 = 1024;
    let (io, store) = common::sim_store(JOURNAL);
    common::put(&store, b"first", 1, &[1; 100], true).unwrap();
    let mut part = store.part(1);
    for i in 0..10u8 {
        common::stage_put(&mut part, &[b'g', i], 10 + u64::from(i), &[i; 200]);
    }
    commit(2, vec![part]).unwrap();
    // Seals the first journal; makes the group's journal and its entry durable.
    store.maintain().unwrap();
    drop(store);
    let image = io.crash(0, false);
    let journal = common::files_named(&image, &common::dir(), "journal-")
        .into_iter()
        .find(|p| record_kinds(&image.read_file(p).unwrap()).len() > 3)
        .expect("the group's journal");
    let bytes = image.read_file(&journal).unwrap();
    // Header, link, marker, three of the ten records.
    let cut: usize = 64 + 40 + 56 + 3 * (32 + 2 + 200usize).div_ceil(8) * 8;
    assert_eq!(record_kinds(&bytes[..cut]), vec![1, 9, 10, 2, 2, 2]);
    let handle = image.open(&journal).unwrap();
    handle.set_len(cut as u64).unwrap();
    handle.sync_data().unwrap();
    let store = common::reopen(&image, JOURNAL).unwrap();
    store.check_consistency().unwrap();
    let keys: Vec<Vec<u8>> = common::contents(&store).into_keys().collect();
    assert_eq!(keys, vec![b"first".to_vec()]);
    assert_eq!(image.read_file(&journal).map(|b| b.len()), Some(64));
    common::put(&store, b"next", 30, b"x", true).unwrap();
    drop(store);
    let store = common::reopen(&image.crash(0, false), JOURNAL).unwrap();
    store.check_consistency().unwrap();
    assert_eq!(store.len(), 2);
}
