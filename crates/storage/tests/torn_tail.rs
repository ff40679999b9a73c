//! A journal whose tail is what a crash leaves (half a record, zeroes, a record whose last
//! sectors never reached the disk) opens with the tail cut and every record before it kept;
//! writing and reopening afterwards work. Tails a crash cannot leave are in
//! `damaged_journal.rs`.

use crate::common;

use common::{dir, files_named, put, reopen, sim_store, value};
use quince_storage::io::SimFileIo;

/// Ten synced records, then `tail` appended to the journal as if it had reached the disk.
fn check_tail_is_cut(make_tail: impl FnOnce(&SimFileIo, &[u8]) -> Vec<u8>) {
    let (io, store) = sim_store(1 << 20);
    for i in 0..10u64 {
        put(&store, format!("key{i}").as_bytes(), i + 1, b"value", true).unwrap();
    }
    let journal = files_named(&io, &dir(), "journal-").pop().unwrap();
    let good = io.read_file(&journal).unwrap();
    // An eleventh record that was never synced, for the tails that want a real record; it is
    // long enough to span a sector boundary whatever its offset.
    put(&store, b"key10", 11, &[b'x'; 1500], false).unwrap();
    let live = io.read_file(&journal).unwrap();
    drop(store);
    let io = io.crash(0, false);
    assert_eq!(io.read_file(&journal).unwrap(), good);
    let tail = make_tail(&io, &live[good.len()..]);
    io.append_durable(&journal, &tail);

    let store = reopen(&io, 1 << 20).unwrap();
    assert_eq!(store.len(), 10);
    for i in 0..10u64 {
        assert_eq!(
            store
                .get(format!("key{i}").as_bytes())
                .unwrap()
                .unwrap()
                .rev,
            i + 1
        );
    }
    assert_eq!(value(&store, b"key10"), None);
    assert_eq!(
        io.read_file(&journal).unwrap(),
        good,
        "the tail was not cut"
    );
    put(&store, b"after", 20, b"x", true).unwrap();
    drop(store);
    let store = reopen(&io, 1 << 20).unwrap();
    assert_eq!(store.len(), 11);
    assert_eq!(value(&store, b"after"), Some(b"x".to_vec()));
}

#[test]
fn half_a_record_is_cut() {
    check_tail_is_cut(|_, record| record[..record.len() / 2].to_vec());
}

#[test]
fn a_header_alone_is_cut() {
    check_tail_is_cut(|_, record| record[..10].to_vec());
}

#[test]
fn a_record_whose_last_sectors_are_zero_is_cut() {
    check_tail_is_cut(|io, record| {
        let journal = files_named(io, &dir(), "journal-").pop().unwrap();
        let at = io.read_file(&journal).unwrap().len();
        // The first sector boundary after the record's header: the disk wrote up to there.
        let boundary = (at + 16).div_ceil(512) * 512;
        let mut bytes = record.to_vec();
        bytes[boundary - at..].fill(0);
        bytes
    });
}

#[test]
fn zeroes_are_cut() {
    check_tail_is_cut(|_, _| vec![0; 4096]);
}

#[test]
fn unsynced_tails_torn_at_random_lengths_recover() {
    for seed in 0..40u64 {
        let (io, store) = sim_store(1 << 20);
        put(&store, b"synced", 1, b"durable", true).unwrap();
        for i in 0..20u64 {
            put(
                &store,
                format!("n{i}").as_bytes(),
                i + 2,
                &[i as u8; 50],
                false,
            )
            .unwrap();
        }
        drop(store);
        let io = io.crash(seed, true);
        let store = reopen(&io, 1 << 20).unwrap();
        assert_eq!(value(&store, b"synced"), Some(b"durable".to_vec()));
        // Unsynced records survive as a prefix: if n(i) is there, every earlier one is too.
        let present: Vec<bool> = (0..20u64)
            .map(|i| value(&store, format!("n{i}").as_bytes()).is_some())
            .collect();
        let kept = present.iter().take_while(|p| **p).count();
        assert!(
            present[kept..].iter().all(|p| !p),
            "seed {seed}: not a prefix: {present:?}"
        );
        for i in 0..kept as u64 {
            assert_eq!(
                value(&store, format!("n{i}").as_bytes()),
                Some(vec![i as u8; 50])
            );
        }
    }
}
