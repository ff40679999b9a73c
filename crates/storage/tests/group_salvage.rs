//! Salvage (`--database.ignore-datafile-errors`) of journals holding transaction groups: the
//! records of a group that did not survive whole are left out, as recovery would cut them, and
//! commit records are kept, so the newest commit (and the verdict on a pending part that
//! depends on it) survives the salvage.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quince_storage::io::SimFileIo;
use quince_storage::{commit, settle, StorageError, Store, StoreOptions};

const JOURNAL: u64 = 1 << 16;

fn options(salvage: bool) -> StoreOptions {
    StoreOptions {
        salvage,
        ..common::options(JOURNAL)
    }
}

fn open(io: &SimFileIo, dir: &Path, salvage: bool) -> Result<Store, StorageError> {
    Store::open(Arc::new(io.clone()), dir, options(salvage))
}

/// The offsets and types of the records of a file.
fn records(bytes: &[u8]) -> Vec<(usize, u8)> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 16 <= bytes.len() {
        let size = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        if size == 0 || at + size > bytes.len() {
            break;
        }
        out.push((at, bytes[at + 8]));
        at += size.div_ceil(8) * 8;
    }
    out
}

fn only_journal(io: &SimFileIo, dir: &Path) -> PathBuf {
    let journals = common::files_named(io, dir, "journal-");
    assert_eq!(journals.len(), 1, "{journals:?}");
    journals[0].clone()
}

#[test]
fn salvage_leaves_out_a_group_that_did_not_survive_whole() {
    let (io, store) = common::sim_store(JOURNAL);
    for (i, key) in [b"r1", b"r2", b"r3"].iter().enumerate() {
        common::put(&store, *key, i as u64 + 1, &[i as u8; 100], true).unwrap();
    }
    let journal = only_journal(&io, &common::dir());
    let durable = io.read_file(&journal).unwrap().len();
    let mut part = store.part(1);
    for key in [b"g1", b"g2", b"g3"] {
        common::stage_put(&mut part, key, 10, &[7; 100]);
    }
    commit(4, vec![part]).unwrap();
    let group = io.read_file(&journal).unwrap()[durable..].to_vec();
    drop(store);

    // The marker and one record of the group survived; then bit rot in r2.
    let image = io.crash(0, false);
    let kept = records(&group)[2].0;
    image.append_durable(&journal, &group[..kept]);
    let bytes = image.read_file(&journal).unwrap();
    let r2 = records(&bytes)
        .iter()
        .filter(|(_, kind)| *kind == 2)
        .nth(1)
        .unwrap()
        .0;
    image.flip_byte(&journal, r2 as u64 + 40);
    assert!(matches!(
        open(&image, &common::dir(), false),
        Err(StorageError::Corrupted { .. })
    ));
    let store = open(&image, &common::dir(), true).unwrap();
    store.check_consistency().unwrap();
    let keys: Vec<Vec<u8>> = common::contents(&store).into_keys().collect();
    assert_eq!(keys, vec![b"r1".to_vec(), b"r3".to_vec()]);
    assert_eq!(store.pending_group(), None);
    drop(store);
    let store = open(&image, &common::dir(), false).unwrap();
    assert_eq!(store.len(), 2);
}

#[test]
fn salvage_keeps_the_newest_commit_so_a_committed_pending_part_stays() {
    let io = SimFileIo::new();
    let dirs = [PathBuf::from("/data/a"), PathBuf::from("/data/l")];
    let create = |dir: &Path| Store::create(Arc::new(io.clone()), dir, options(false)).unwrap();
    let (a, l) = (create(&dirs[0]), create(&dirs[1]));
    common::put(&l, b"warm", 1, &[1; 100], true).unwrap();
    for trx in [5, 7] {
        let (mut pa, mut pl) = (a.part(1), l.part(2));
        common::stage_put(&mut pa, b"x", trx, &[trx as u8; 50]);
        common::stage_put(&mut pl, b"y", trx, &[trx as u8; 50]);
        commit(trx, vec![pa, pl]).unwrap();
    }
    drop((a, l));
    let image = io.crash(0, false);
    // Bit rot in L's first record, before both transactions' groups.
    let journal = only_journal(&image, &dirs[1]);
    let bytes = image.read_file(&journal).unwrap();
    let warm = records(&bytes)
        .iter()
        .find(|(_, kind)| *kind == 2)
        .unwrap()
        .0;
    image.flip_byte(&journal, warm as u64 + 40);
    assert!(open(&image, &dirs[1], false).is_err());
    let l = open(&image, &dirs[1], true).unwrap();
    let a = open(&image, &dirs[0], false).unwrap();
    assert_eq!(l.newest_commit(), 7);
    assert_eq!(a.pending_group().map(|p| p.trx), Some(7));
    assert!(settle(&[(1, &a), (2, &l)]).is_empty());
    assert_eq!(common::value(&a, b"x"), Some(vec![7; 50]));
    assert_eq!(common::value(&l, b"y"), Some(vec![7; 50]));
    assert_eq!(common::value(&l, b"warm"), None);
    l.check_consistency().unwrap();
    // The salvaged datafile holds the commit records alone, without their markers.
    drop(l);
    let l = open(&image, &dirs[1], false).unwrap();
    assert_eq!(l.newest_commit(), 7);
}

/// A group marker followed, before its count is reached, by a record of a kind a group never
/// holds (here a metadata record): the engine never writes that, so it is damage, refused by a
/// plain open and salvaged on request.
#[test]
fn a_foreign_record_inside_a_group_is_damage() {
    use quince_storage::fuzzing::{encode, encode_group_marker, GroupMarker, RecordType};
    let (io, store) = common::sim_store(JOURNAL);
    common::put(&store, b"a", 1, b"one", true).unwrap();
    drop(store);
    let image = io.crash(0, false);
    let journal = only_journal(&image, &common::dir());
    let marker = GroupMarker {
        trx: 9,
        count: 2,
        commit_point: true,
        commit_participant: 0,
    };
    let mut crafted = encode_group_marker(2, &marker);
    crafted.extend(encode(RecordType::Document, 3, 2, b"b", b"two"));
    crafted.extend(encode(RecordType::Meta, 4, 0, b"", b"meta"));
    image.append_durable(&journal, &crafted);
    let refused = open(&image, &common::dir(), false);
    assert!(
        matches!(&refused, Err(StorageError::Corrupted { reason, .. }) if reason.contains("inside the group")),
        "{:?}",
        refused.err()
    );
    let store = open(&image, &common::dir(), true).unwrap();
    store.check_consistency().unwrap();
    assert_eq!(common::value(&store, b"a"), Some(b"one".to_vec()));
}
