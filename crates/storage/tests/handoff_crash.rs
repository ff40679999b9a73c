//! A crash at every step of a journal's hand-off: the footer the writer appends, the journal it
//! creates when no spare is ready, the group-commit round that makes a handed-off or new journal
//! durable (fsyncs, directory fsync, manifest), the seal `maintain` finishes (fsync, rename,
//! directory fsync), the spare it prepares (create, header, fsync, directory fsync, manifest)
//! and the hints it writes.
//!
//! The workload writes distinct keys in order into 1 KiB journals, waits for some tickets, and
//! runs maintenance passes and a rotation in between. A `FileIo` wrapper numbers every
//! mutating call (create, write, fsync, `set_len`, rename, remove, directory fsync); for each
//! number N the workload runs again and the file system is crashed just before call N (the
//! simulation keeps a random prefix of unsynced bytes, or none), while the workload goes on.
//! The crashed image must open, pass `check_consistency`, hold exactly the first j keys for
//! some j (unsynced writes are lost only as a suffix, across journals too) with j at least
//! the number of writes acknowledged durable before the crash, and open the same after a
//! second crash.

use crate::common;

use std::sync::Arc;

use common::crashing::CrashPlan;
use quince_storage::io::{FileIo, SimFileIo};
use quince_storage::{Mutation, StorageError, Store};

const JOURNAL: u64 = 1024;
const WRITES: u64 = 60;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:03}").into_bytes()
}

/// Runs the workload against `plan`; returns how many mutating calls it made.
fn workload(plan: &Arc<CrashPlan>) -> u64 {
    let io = plan.io();
    plan.arm();
    let store = Store::create(io, &common::dir(), common::options(JOURNAL)).unwrap();
    for i in 0..WRITES {
        let (_, ticket) = store
            .mutate_deferred(&key(i), |_| {
                Ok::<_, StorageError>((
                    Mutation::Put {
                        rev: i + 1,
                        value: vec![i as u8; 100 + (i as usize % 7) * 10],
                    },
                    (),
                ))
            })
            .unwrap();
        if i % 3 == 2 {
            ticket.unwrap().wait().unwrap();
            // Ordered: once this write is durable, so is every earlier one.
            plan.ack(0, (i + 1) as usize);
        }
        if i % 5 == 4 {
            store.maintain().unwrap();
        }
        if i == WRITES / 2 {
            store.rotate().unwrap();
            plan.ack(0, (i + 1) as usize);
        }
    }
    store.close().unwrap();
    plan.ack(0, WRITES as usize);
    plan.calls()
}

/// The keys of the store, which must be `key(0)..key(j)`; returns j.
fn prefix(store: &Store) -> u64 {
    let mut n = 0;
    while store.get(&key(n)).unwrap().is_some() {
        n += 1;
    }
    assert_eq!(store.len(), n, "the surviving writes are not a prefix");
    n
}

#[test]
fn a_crash_at_any_step_of_a_hand_off_keeps_a_prefix_with_every_acknowledged_write() {
    let dry = CrashPlan::new(&SimFileIo::new(), u64::MAX, 0, false, 1);
    let total = workload(&dry);
    assert!(total > 100, "{total} calls");
    for at in 0..total {
        for keep_unsynced in [false, true] {
            let plan = CrashPlan::new(&SimFileIo::new(), at, at, keep_unsynced, 1);
            workload(&plan);
            assert!(plan.caught(), "the crash point was reached");
            let (image, acked) = plan.take();
            let acked = acked[0] as u64;
            let context = format!("crash before call {at} (keep unsynced: {keep_unsynced})");
            if !image.exists(&common::dir()) {
                continue;
            }
            let store = match common::reopen(&image, JOURNAL) {
                Ok(store) => store,
                // The crash came before the store's first files were made.
                Err(_) if acked == 0 && !image.exists(&common::dir().join("manifest.db")) => {
                    continue
                }
                Err(e) => panic!("{context}: {e}"),
            };
            store
                .check_consistency()
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            let n = prefix(&store);
            assert!(
                n >= acked,
                "{context}: {n} writes survived, {acked} acknowledged"
            );
            drop(store);
            let again = common::reopen(&image.crash(at, false), JOURNAL)
                .unwrap_or_else(|e| panic!("{context}, then again: {e}"));
            again
                .check_consistency()
                .unwrap_or_else(|e| panic!("{context}, then again: {e}"));
            assert_eq!(
                prefix(&again),
                n,
                "{context}: a second crash changed the store"
            );
        }
    }
}

/// The disk wrote a later journal back before the end of the one handed off before it (the OS
/// may write back any dirty page at any time): the earlier journal lost its footer and its
/// last records, the later one kept records that were never acknowledged. Recovery ends the
/// log where the earlier journal ends and cuts the later journal's records, so what survives
/// is still a prefix of the writes; the later journal stays, empty, as the spare.
#[test]
fn records_written_after_a_lost_footer_are_cut() {
    let sim = SimFileIo::new();
    let store = Store::create(
        Arc::new(sim.clone()),
        &common::dir(),
        common::options(JOURNAL),
    )
    .unwrap();
    let put = |i: u64, sync: bool| common::put(&store, &key(i), i + 1, &[i as u8; 100], sync);
    put(0, true).unwrap();
    let first = common::files_named(&sim, &common::dir(), "journal-");
    assert_eq!(first.len(), 1);
    // Unsynced writes until the journal is handed off and the next one holds records.
    let mut i = 1;
    while common::files_named(&sim, &common::dir(), "journal-").len() < 2 {
        put(i, false).unwrap();
        i += 1;
    }
    put(i, false).unwrap();
    put(i + 1, false).unwrap();
    let later = common::files_named(&sim, &common::dir(), "journal-")
        .into_iter()
        .find(|p| !first.contains(p))
        .unwrap();
    // Write-back of the later journal alone: its records and its directory entry.
    sim.open(&later).unwrap().sync_data().unwrap();
    sim.sync_dir(&common::dir()).unwrap();
    drop(store);

    let image = sim.crash(0, false);
    let store = common::reopen(&image, JOURNAL).unwrap();
    store.check_consistency().unwrap();
    assert_eq!(prefix(&store), 1, "only the synced write survives");
    // The later journal is kept, empty: the spare the next rotation takes.
    assert_eq!(
        sim.read_file(&later).map(|b| b.len() > 64),
        Some(true),
        "the live file had records"
    );
    assert_eq!(image.read_file(&later).map(|b| b.len()), Some(64));
    assert_eq!(store.figures().journals_count, 1);
    // Writing goes on in the earlier journal, and survives another crash.
    common::put(&store, &key(1), 100, b"again", true).unwrap();
    drop(store);
    let store = common::reopen(&image.crash(1, false), JOURNAL).unwrap();
    store.check_consistency().unwrap();
    assert_eq!(prefix(&store), 2);
}

/// A journal the writer took lost every record (its header may survive alone, or nothing at
/// all) while the next journal kept records, none of them acknowledged: the next journal's
/// link record names the lost one, so recovery ends the log there and cuts the later records.
/// (Without the link, a journal holding only its header looks like a spare never taken.)
#[test]
fn records_after_a_journal_that_lost_everything_are_cut() {
    for keep_header in [false, true] {
        let sim = SimFileIo::new();
        let store = Store::create(
            Arc::new(sim.clone()),
            &common::dir(),
            common::options(JOURNAL),
        )
        .unwrap();
        let put = |i: u64| common::put(&store, &key(i), i + 1, &[i as u8; 100], false);
        put(0).unwrap();
        let first = common::files_named(&sim, &common::dir(), "journal-")[0].clone();
        let mut i = 1;
        while common::files_named(&sim, &common::dir(), "journal-").len() < 2 {
            put(i).unwrap();
            i += 1;
        }
        put(i).unwrap();
        let later = common::files_named(&sim, &common::dir(), "journal-")
            .into_iter()
            .find(|p| *p != first)
            .unwrap();
        // Write-back of the later journal and of the directory, nothing of the first journal.
        sim.open(&later).unwrap().sync_data().unwrap();
        sim.sync_dir(&common::dir()).unwrap();
        let header = sim.read_file(&first).unwrap()[..64].to_vec();
        drop(store);
        let image = sim.crash(0, false);
        assert_eq!(image.read_file(&first).map(|b| b.len()), Some(0));
        if keep_header {
            image.append_durable(&first, &header);
        }
        let store = common::reopen(&image, JOURNAL).unwrap();
        store.check_consistency().unwrap();
        assert_eq!(prefix(&store), 0, "keep_header {keep_header}");
        // Cut to its header: kept as the spare, or retired when the first journal's header is
        // the spare.
        let left = image.read_file(&later).map(|b| b.len());
        assert!(left.is_none_or(|len| len == 64), "{left:?}");
        drop(store);
        let store = common::reopen(&image.crash(1, false), JOURNAL).unwrap();
        assert_eq!(prefix(&store), 0);
    }
}
