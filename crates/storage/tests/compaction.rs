//! Compaction reclaims dead bytes, keeps every key's latest version, survives a reopen, and
//! loses nothing written by concurrent writers.

use crate::common;

use std::sync::Arc;

use common::{put, remove, reopen, sim_store, value};

const JOURNAL: u64 = 4096;

#[test]
fn compaction_reclaims_space_and_keeps_latest_versions() {
    let (io, store) = sim_store(JOURNAL);
    for round in 0..5u64 {
        for i in 0..100u64 {
            let rev = round * 1000 + i + 1;
            put(
                &store,
                format!("k{i}").as_bytes(),
                rev,
                &[round as u8; 80],
                false,
            )
            .unwrap();
        }
    }
    for i in 0..30u64 {
        remove(&store, format!("k{i}").as_bytes(), 9000 + i, false).unwrap();
    }
    store.rotate().unwrap();
    let before = store.figures();
    assert!(before.dead_count >= 400, "{before:?}");
    let report = store.compact().unwrap();
    let after = store.figures();
    assert!(report.files_compacted > 0);
    assert!(report.bytes_reclaimed > 0);
    assert!(
        after.datafiles_file_size < before.datafiles_file_size / 2,
        "{} -> {}",
        before.datafiles_file_size,
        after.datafiles_file_size
    );
    assert_eq!(after.alive_count, 70);
    assert_eq!(after.alive_size, before.alive_size);
    assert_eq!(store.stats().compactions, 1);
    let check = |store: &quince_storage::Store| {
        for i in 0..100u64 {
            let got = store.get(format!("k{i}").as_bytes()).unwrap();
            if i < 30 {
                assert_eq!(got, None, "k{i} came back");
            } else {
                let got = got.unwrap();
                assert_eq!((got.rev, got.value), (4000 + i + 1, vec![4; 80]));
            }
        }
    };
    check(&store);
    drop(store);
    let store = reopen(&io, JOURNAL).unwrap();
    check(&store);
    assert_eq!(store.figures().alive_count, 70);
}

#[test]
fn truncated_datafiles_are_deleted() {
    let (io, store) = sim_store(JOURNAL);
    for i in 0..200u64 {
        put(&store, format!("k{i}").as_bytes(), i + 1, &[1; 60], false).unwrap();
    }
    remove(&store, b"k0", 500, false).unwrap();
    store.truncate(1000, false).unwrap();
    store.rotate().unwrap();
    assert!(store.figures().datafiles_count > 3);
    store.compact().unwrap();
    // Everything is dead: at most the (empty) output remains, and a second pass drops it.
    store.compact().unwrap();
    let f = store.figures();
    assert_eq!(
        (f.datafiles_count, f.alive_count, f.dead_deletion),
        (0, 0, 0),
        "{f:?}"
    );
    drop(store);
    let store = reopen(&io, JOURNAL).unwrap();
    assert_eq!(store.len(), 0);
}

#[test]
fn writers_racing_compaction_lose_nothing() {
    racing_compaction(sim_store(JOURNAL));
}

#[test]
fn writers_racing_compaction_lose_nothing_with_two_descriptors() {
    // Descriptors are closed and reopened all the time, files are renamed and deleted while
    // handles to them live: nothing may get lost or fail.
    racing_compaction(common::sim_store_cached(JOURNAL, 2));
}

fn racing_compaction((io, store): (quince_storage::io::SimFileIo, quince_storage::Store)) {
    let store = Arc::new(store);
    let threads = 4u64;
    let per_thread = 400u64;
    // The first version writer 0 writes too, so the reader has something to read from the start.
    put(&store, b"t0-k0", 1, &1u64.to_le_bytes(), false).unwrap();
    let writers: Vec<_> = (0..threads)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                for n in 0..per_thread {
                    let key = format!("t{t}-k{}", n % 25);
                    let rev = t * 1_000_000 + n + 1;
                    put(&store, key.as_bytes(), rev, &rev.to_le_bytes(), false).unwrap();
                }
            })
        })
        .collect();
    // A reader that must never see an error while files move and disappear under it.
    let reader = {
        let store = store.clone();
        std::thread::spawn(move || {
            let mut reads = 0u64;
            for round in 0..2000u64 {
                let key = format!("t{}-k{}", round % threads, round % 25);
                if let Some(r) = store.get(key.as_bytes()).unwrap() {
                    assert_eq!(r.value, r.rev.to_le_bytes());
                    reads += 1;
                }
            }
            reads
        })
    };
    let mut compactions = 0;
    while writers.iter().any(|w| !w.is_finished()) {
        compactions += store.compact().unwrap().files_compacted;
    }
    for w in writers {
        w.join().unwrap();
    }
    assert!(reader.join().unwrap() > 0);
    store.rotate().unwrap();
    compactions += store.compact().unwrap().files_compacted;
    assert!(compactions > 0);
    let check = |store: &quince_storage::Store| {
        for t in 0..threads {
            for k in 0..25u64 {
                // The last n with n % 25 == k.
                let last = (per_thread - 25) + k;
                let rev = t * 1_000_000 + last + 1;
                let got = store.get(format!("t{t}-k{k}").as_bytes()).unwrap().unwrap();
                assert_eq!((got.rev, got.value), (rev, rev.to_le_bytes().to_vec()));
            }
        }
        assert_eq!(store.len(), threads * 25);
        assert_eq!(store.figures().alive_count, threads * 25);
    };
    check(&store);
    drop(store);
    let store = reopen(&io, JOURNAL).unwrap();
    check(&store);
}

#[test]
fn compaction_output_survives_a_crash_right_after_it() {
    let (io, store) = sim_store(JOURNAL);
    for i in 0..100u64 {
        put(&store, format!("k{i}").as_bytes(), i + 1, &[1; 60], false).unwrap();
        put(
            &store,
            format!("k{i}").as_bytes(),
            i + 1001,
            &[2; 60],
            false,
        )
        .unwrap();
    }
    for i in 0..50u64 {
        remove(&store, format!("k{i}").as_bytes(), 5000 + i, false).unwrap();
    }
    store.rotate().unwrap();
    store.compact().unwrap();
    drop(store);
    let store = reopen(&io.crash(7, false), JOURNAL).unwrap();
    assert_eq!(store.len(), 50);
    for i in 0..100u64 {
        let expect = (i >= 50).then(|| vec![2; 60]);
        assert_eq!(value(&store, format!("k{i}").as_bytes()), expect, "k{i}");
    }
}

#[test]
fn an_explicit_compaction_seals_handed_off_journals_first() {
    // Full journals are handed off by the writes that fill them and sealed by the next
    // maintenance pass; an explicit compaction must not wait for that pass to see them.
    let (_io, store) = sim_store(JOURNAL);
    for round in 0..3u64 {
        for i in 0..40u64 {
            let rev = round * 1000 + i + 1;
            put(
                &store,
                format!("k{i}").as_bytes(),
                rev,
                &[round as u8; 80],
                false,
            )
            .unwrap();
        }
    }
    let before = store.figures();
    assert!(
        before.journals_count > 1,
        "journals handed off, not sealed yet: {before:?}"
    );
    let report = store.compact().unwrap();
    assert!(report.files_compacted > 0, "{report:?}, before: {before:?}");
    let after = store.figures();
    assert_eq!(after.journals_count, 1, "{after:?}");
    assert_eq!(after.alive_count, 40);
    store.check_consistency().unwrap();
}
