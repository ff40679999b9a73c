//! A transaction across stores (`commit` with several parts): nothing is published before the
//! whole transaction is durable; a failed commit publishes nothing and poisons every
//! participant; a part whose commit point did not survive is cut by `settle`, one whose commit
//! point did is kept; `newest_commit` survives compaction and reopening.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use quince_storage::io::{FileIo, SimFileIo};
use quince_storage::{commit, settle, PendingGroup, Store};

const JOURNAL: u64 = 1 << 16;

fn dir(name: &str) -> PathBuf {
    Path::new("/data").join(name)
}

fn create(io: &SimFileIo, name: &str, journal: u64) -> Store {
    common::store_at(Arc::new(io.clone()), &dir(name), journal, true).unwrap()
}

fn open(io: &SimFileIo, name: &str, journal: u64) -> Store {
    common::store_at(Arc::new(io.clone()), &dir(name), journal, false).unwrap()
}

/// Two stores, A (participant 1) and L (participant 2), each with a durable journal, so a
/// commit's fsyncs are one per store.
fn two_stores(io: &SimFileIo) -> (Store, Store) {
    let a = create(io, "a", JOURNAL);
    let l = create(io, "l", JOURNAL);
    common::put(&a, b"warm", 1, b"a", true).unwrap();
    common::put(&l, b"warm", 1, b"l", true).unwrap();
    (a, l)
}

/// Commits `x` in A and `y` in L as transaction `trx`.
fn commit_both(a: &Store, l: &Store, trx: u64) -> Result<(), quince_storage::StorageError> {
    let mut pa = a.part(1);
    let mut pl = l.part(2);
    common::stage_put(&mut pa, b"x", trx, b"in a");
    common::stage_put(&mut pl, b"y", trx, b"in l");
    let tickets = commit(trx, vec![pa, pl])?;
    assert!(tickets.iter().all(Option::is_some));
    for ticket in tickets.into_iter().flatten() {
        ticket.wait().expect("already durable");
    }
    Ok(())
}

/// Opens A and L on `image`, settles them (reopening what was cut), and says whether the
/// transaction's records are there (checking that they are there in both or in neither).
fn settled(image: &SimFileIo) -> bool {
    let a = open(image, "a", JOURNAL);
    let l = open(image, "l", JOURNAL);
    let cut = settle(&[(1, &a), (2, &l)]);
    assert!(!cut.contains(&2), "the commit point is never pending");
    let a = match cut.contains(&1) {
        true => {
            drop(a);
            let a = open(image, "a", JOURNAL);
            assert_eq!(a.pending_group(), None);
            a
        }
        false => a,
    };
    a.check_consistency().unwrap();
    l.check_consistency().unwrap();
    let in_a = common::value(&a, b"x").is_some();
    let in_l = common::value(&l, b"y").is_some();
    assert_eq!(in_a, in_l, "a transaction is whole or absent");
    in_a
}

#[test]
fn nothing_is_published_before_the_whole_transaction_is_durable() {
    let io = SimFileIo::new();
    let (a, l) = two_stores(&io);
    io.set_sync_delay(Some(Duration::from_millis(20)));
    let done = AtomicBool::new(false);
    let mut polls_before = 0u64;
    let mut seen = false;
    std::thread::scope(|scope| {
        scope.spawn(|| {
            commit_both(&a, &l, 7).unwrap();
            done.store(true, Ordering::SeqCst);
        });
        while !done.load(Ordering::SeqCst) {
            let visible = common::value(&a, b"x").is_some() || common::value(&l, b"y").is_some();
            if !visible {
                polls_before += 1;
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            // Published: the durable image holds the whole transaction already.
            seen = true;
            assert!(settled(&io.crash(0, false)));
            break;
        }
    });
    assert!(polls_before > 10, "the reader polled while the commit ran");
    assert!(seen || done.load(Ordering::SeqCst));
    assert!(settled(&io.crash(1, false)));
    io.set_sync_delay(None);
}

#[test]
fn a_failed_commit_publishes_nothing_and_poisons_every_participant() {
    // The member's fsync succeeds, the commit point's fails; then the member's own fails.
    for successes in [1, 0] {
        let io = SimFileIo::new();
        let (a, l) = two_stores(&io);
        io.fail_sync_after(successes);
        assert!(commit_both(&a, &l, 7).is_err());
        assert_eq!(common::value(&a, b"x"), None);
        assert_eq!(common::value(&l, b"y"), None);
        assert!(a.poisoned().is_some() && l.poisoned().is_some());
        drop((a, l));
        // Without the unsynced bytes the commit record is lost: the member's durable part (if
        // any) is cut; with them it may be whole; either way, whole or absent.
        assert!(!settled(&io.crash(0, false)));
        for seed in 0..8 {
            settled(&io.crash(seed, true));
        }
    }
}

#[test]
fn a_pending_part_is_cut_unless_its_commit_point_committed() {
    let io = SimFileIo::new();
    let (a, l) = two_stores(&io);
    io.fail_sync_after(1);
    assert!(commit_both(&a, &l, 7).is_err());
    drop((a, l));
    let image = io.crash(0, false);
    let a = open(&image, "a", JOURNAL);
    let l = open(&image, "l", JOURNAL);
    let pending = PendingGroup {
        trx: 7,
        commit_participant: 2,
    };
    assert_eq!(a.pending_group(), Some(pending));
    // Its records are indexed until the caller decides.
    assert!(common::value(&a, b"x").is_some());
    assert_eq!((l.pending_group(), l.newest_commit()), (None, 0));
    // Without the commit point's store in the list (its collection was dropped), the part
    // counts as committed; with it, it is cut.
    assert!(settle(&[(1, &a)]).is_empty());
    assert_eq!(settle(&[(1, &a), (2, &l)]), vec![1]);
    assert!(common::put(&a, b"z", 9, b"refused", false).is_err());
    drop(a);
    let a = open(&image, "a", JOURNAL);
    assert_eq!((a.pending_group(), common::value(&a, b"x")), (None, None));
    a.check_consistency().unwrap();
    // A second crash changes nothing.
    drop(a);
    let a = open(&image.crash(0, false), "a", JOURNAL);
    assert_eq!((a.pending_group(), common::value(&a, b"x")), (None, None));
}

#[test]
fn a_committed_part_stays_pending_until_the_next_write_and_is_kept() {
    let io = SimFileIo::new();
    let (a, l) = two_stores(&io);
    commit_both(&a, &l, 7).unwrap();
    assert_eq!(l.newest_commit(), 7);
    drop((a, l));
    let image = io.crash(0, false);
    let a = open(&image, "a", JOURNAL);
    let l = open(&image, "l", JOURNAL);
    assert_eq!(a.pending_group().map(|p| p.trx), Some(7));
    assert_eq!(l.newest_commit(), 7);
    assert!(settle(&[(1, &a), (2, &l)]).is_empty());
    assert!(common::value(&a, b"x").is_some());
    common::put(&a, b"later", 8, b"v", false).unwrap();
    assert_eq!(a.pending_group(), None);
    // Nothing pending: a cut does nothing.
    a.cut_pending_group().unwrap();
    assert!(common::value(&a, b"x").is_some());
    common::put(&a, b"later", 9, b"w", false).unwrap();
}

#[test]
fn the_newest_commit_survives_compaction_and_reopening() {
    let io = SimFileIo::new();
    let a = create(&io, "a", 1024);
    let l = create(&io, "l", 1024);
    for trx in 1..=30u64 {
        let mut pa = a.part(1);
        let mut pl = l.part(2);
        let key = [b'k', (trx % 3) as u8];
        common::stage_put(&mut pa, &key, trx, &[trx as u8; 100]);
        common::stage_put(&mut pl, &key, trx, &[trx as u8; 100]);
        commit(trx * 10, vec![pa, pl]).unwrap();
        if trx % 7 == 0 {
            l.rotate().unwrap();
        }
    }
    assert_eq!((a.newest_commit(), l.newest_commit()), (0, 300));
    let before = commit_records(&io, "l");
    l.rotate().unwrap();
    let report = l.compact().unwrap();
    assert!(report.files_compacted > 1, "{report:?}");
    let after = commit_records(&io, "l");
    assert!(after < before && after >= 1, "{before} -> {after}");
    assert_eq!(l.newest_commit(), 300);
    l.check_consistency().unwrap();
    let expect = common::contents(&l);
    l.close().unwrap();
    drop(l);
    let l = open(&io, "l", 1024);
    assert_eq!(l.newest_commit(), 300);
    assert_eq!(common::contents(&l), expect);
    drop(l);
    // Without hints, from a scan of the datafiles.
    for hint in common::files_named(&io, &dir("l"), "datafile-")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "hint"))
    {
        io.remove_file(&hint).unwrap();
    }
    let l = open(&io, "l", 1024);
    assert_eq!(l.newest_commit(), 300);
    l.check_consistency().unwrap();
}

/// Commit records in the files of store `name`.
fn commit_records(io: &SimFileIo, name: &str) -> usize {
    let mut count = 0;
    for path in common::files_named(io, &dir(name), "") {
        if path.extension().is_none_or(|e| e != "db") || path.ends_with("manifest.db") {
            continue;
        }
        let bytes = io.read_file(&path).unwrap();
        let mut at = 0usize;
        while at + 16 <= bytes.len() {
            let size = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            if size == 0 {
                break;
            }
            count += usize::from(bytes[at + 8] == 11);
            at += size.div_ceil(8) * 8;
        }
    }
    count
}

#[test]
fn a_commit_touching_a_poisoned_store_is_refused_before_anything_is_appended() {
    let io = SimFileIo::new();
    let (a, l) = two_stores(&io);
    common::put(&l, b"unsynced", 2, b"v", false).unwrap();
    let journal_len = |s: &str| {
        common::files_named(&io, &dir(s), "journal-")
            .iter()
            .map(|p| io.read_file(p).unwrap().len())
            .sum::<usize>()
    };
    let before = journal_len("a");
    let mut pa = a.part(1);
    let mut pl = l.part(2);
    common::stage_put(&mut pa, b"x", 3, b"in a");
    common::stage_put(&mut pl, b"y", 3, b"in l");
    // L's store fails an fsync (a round takes no writer lock) while the parts are held.
    io.fail_sync_after(0);
    assert!(l.sync().is_err());
    assert!(commit(3, vec![pa, pl]).is_err());
    assert_eq!(journal_len("a"), before);
    assert!(
        a.poisoned().is_none(),
        "nothing of the transaction reached A"
    );
    io.clear_faults();
    common::put(&a, b"ok", 4, b"v", true).unwrap();
    assert_eq!(common::value(&a, b"x"), None);
}
