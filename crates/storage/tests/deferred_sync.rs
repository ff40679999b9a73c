//! The non-blocking durability API: `Store::mutate_deferred` writes and hands back a
//! `WriteTicket`; `WriteTicket::on_durable` fires once an fsync covered the write, without
//! blocking the caller, and fires with an error when the fsync fails (the store is poisoned).
//! Checked against `SimFileIo`'s durable image: what a crash at the moment of the callback keeps.

use crate::common;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use common::{dir, options, put, reopen, sim_store, value};
use quince_storage::io::SimFileIo;
use quince_storage::{Mutation, StorageError, Store, WriteTicket};

/// Generous bound on waiting for a callback: a failure detector for hangs, not synchronisation.
const HANG: Duration = Duration::from_secs(20);

/// Writes `key` at `rev` without waiting; the ticket of the record written.
fn put_deferred(store: &Store, key: &[u8], rev: u64, value: &[u8]) -> WriteTicket {
    let ((), ticket) = store
        .mutate_deferred(key, |_| {
            Ok::<_, StorageError>((
                Mutation::Put {
                    rev,
                    value: value.to_vec(),
                },
                (),
            ))
        })
        .unwrap();
    ticket.expect("a put writes a record")
}

/// What a callback saw: the write's seq, the result, and the durable image at that moment.
type Seen = (u64, Result<(), StorageError>, SimFileIo);

/// Registers a callback for `ticket` that reports what it saw on `sender`.
fn report_on(ticket: WriteTicket, io: &SimFileIo, sender: &mpsc::Sender<Seen>) {
    let (io, sender, seq) = (io.clone(), sender.clone(), ticket.seq());
    ticket.on_durable(Box::new(move |result| {
        // The crash image is taken inside the callback: it is what survives a crash now.
        let image = io.crash(0, false);
        sender.send((seq, result, image)).unwrap();
    }));
}

#[test]
fn callback_fires_only_once_the_write_is_in_the_durable_image() {
    let (io, store) = sim_store(1 << 20);
    let (sender, receiver) = mpsc::channel();
    for i in 0..20u64 {
        let key = format!("k{i}");
        let ticket = put_deferred(&store, key.as_bytes(), i + 1, b"durable");
        report_on(ticket, &io, &sender);
    }
    for _ in 0..20 {
        let (seq, result, image) = receiver.recv_timeout(HANG).unwrap();
        result.unwrap();
        // Every write up to this one survives a crash taken when its callback fired.
        let recovered = reopen(&image, 1 << 20).unwrap();
        for i in 0..seq {
            assert_eq!(
                value(&recovered, format!("k{i}").as_bytes()),
                Some(b"durable".to_vec()),
                "k{i} missing when seq {seq} was acknowledged"
            );
        }
    }
}

#[test]
fn on_durable_does_not_wait_for_the_fsync() {
    let (io, store) = sim_store(1 << 20);
    // An fsync slower than anything else in this test: if `on_durable` waited for it, the
    // callback would have fired by the time it returns.
    io.set_sync_delay(Some(Duration::from_millis(300)));
    let ticket = put_deferred(&store, b"k", 1, b"v");
    let (sender, receiver) = mpsc::channel();
    ticket.on_durable(Box::new(move |result| sender.send(result).unwrap()));
    assert!(matches!(
        receiver.try_recv(),
        Err(mpsc::TryRecvError::Empty)
    ));
    receiver.recv_timeout(HANG).unwrap().unwrap();
    assert_eq!(
        value(&reopen(&io.crash(0, false), 1 << 20).unwrap(), b"k"),
        Some(b"v".to_vec())
    );
}

#[test]
fn waiters_that_arrive_during_an_fsync_share_the_next_one() {
    let (io, store) = sim_store(1 << 20);
    // The first write starts the journal (fsyncs of its own); counting starts after it.
    put(&store, b"first", 100, b"v", true).unwrap();
    io.set_sync_delay(Some(Duration::from_millis(100)));
    let syncs_before = io.stats().syncs;
    let store_syncs_before = store.stats().syncs;
    let (sender, receiver) = mpsc::channel();
    // The first waiter starts a round; the other 49 register while its slow fsync runs.
    for i in 0..50u64 {
        let ticket = put_deferred(&store, format!("k{i}").as_bytes(), i + 1, b"v");
        report_on(ticket, &io, &sender);
    }
    for _ in 0..50 {
        receiver.recv_timeout(HANG).unwrap().1.unwrap();
    }
    let syncs = io.stats().syncs - syncs_before;
    assert!(syncs <= 2, "{syncs} fsyncs for 50 waiters");
    assert_eq!(store.stats().syncs - store_syncs_before, syncs);
}

#[test]
fn a_failed_fsync_answers_every_pending_waiter_with_an_error_and_poisons() {
    let (io, store) = sim_store(1 << 20);
    let (sender, receiver) = mpsc::channel();
    let mut seen: Vec<Seen> = Vec::new();
    // Five writes made durable, then fifteen whose fsync fails.
    for i in 0..5u64 {
        let ticket = put_deferred(&store, format!("k{i}").as_bytes(), i + 1, b"v");
        report_on(ticket, &io, &sender);
    }
    seen.extend((0..5).map(|_| receiver.recv_timeout(HANG).unwrap()));
    io.fail_sync_after(0);
    let mut registered = 0;
    for i in 5..20u64 {
        let write = store.mutate_deferred(format!("k{i}").as_bytes(), |_| {
            Ok::<_, StorageError>((
                Mutation::Put {
                    rev: i + 1,
                    value: b"v".to_vec(),
                },
                (),
            ))
        });
        match write {
            Ok(((), ticket)) => {
                report_on(ticket.unwrap(), &io, &sender);
                registered += 1;
            }
            // The failed round may poison the store while this loop still writes.
            Err(e) => assert!(matches!(e, StorageError::Poisoned { .. }), "{e:?}"),
        }
    }
    assert!(registered > 0);
    seen.extend((0..registered).map(|_| receiver.recv_timeout(HANG).unwrap()));
    seen.sort_by_key(|s| s.0);
    let acknowledged = seen.iter().take_while(|s| s.1.is_ok()).count();
    assert_eq!(acknowledged, 5, "the failed fsync acknowledged a write");
    for (seq, result, _) in &seen[acknowledged..] {
        assert!(
            matches!(
                result,
                Err(StorageError::Io { .. } | StorageError::Poisoned { .. })
            ),
            "seq {seq}: {result:?}"
        );
    }
    assert!(seen
        .iter()
        .any(|s| matches!(s.1, Err(StorageError::Io { .. }))));
    assert!(store.poisoned().is_some());
    // Acknowledged writes are durable; later waiters learn of the poison at once.
    let image = io.crash(0, false);
    let recovered = reopen(&image, 1 << 20).unwrap();
    for (seq, _, _) in &seen[..acknowledged] {
        assert_eq!(
            value(&recovered, format!("k{}", seq - 1).as_bytes()),
            Some(b"v".to_vec())
        );
    }
    assert!(matches!(
        put(&store, b"late", 99, b"v", true),
        Err(StorageError::Poisoned { .. })
    ));
}

#[test]
fn close_answers_pending_waiters_and_refuses_new_writes() {
    let (io, store) = sim_store(1 << 20);
    io.set_sync_delay(Some(Duration::from_millis(50)));
    let (sender, receiver) = mpsc::channel();
    for i in 0..10u64 {
        let ticket = put_deferred(&store, format!("k{i}").as_bytes(), i + 1, b"v");
        report_on(ticket, &io, &sender);
    }
    store.close().unwrap();
    // A ticket outlives its store: the syncers still answer it.
    let orphan_io = {
        let (io2, store2) = sim_store(1 << 20);
        let ticket = put_deferred(&store2, b"orphan", 1, b"v");
        drop(store2);
        report_on(ticket, &io2, &sender);
        io2
    };
    drop(store);
    for _ in 0..11 {
        receiver.recv_timeout(HANG).unwrap().1.unwrap();
    }
    assert_eq!(
        value(
            &reopen(&orphan_io.crash(0, false), 1 << 20).unwrap(),
            b"orphan"
        ),
        Some(b"v".to_vec())
    );
    let reopened = reopen(&io.crash(0, false), 1 << 20).unwrap();
    assert_eq!(reopened.len(), 10);
    let closed = Store::open(Arc::new(io.clone()), &dir(), options(1 << 20)).unwrap();
    closed.close().unwrap();
    assert!(matches!(
        put(&closed, b"after", 1, b"v", false),
        Err(StorageError::ShuttingDown)
    ));
}

#[test]
fn writes_that_write_nothing_have_no_ticket() {
    let (_io, store) = sim_store(1 << 20);
    let ((), kept) = store
        .mutate_deferred(b"k", |_| Ok::<_, StorageError>((Mutation::Keep, ())))
        .unwrap();
    assert!(kept.is_none());
    let ((), removed) = store
        .mutate_deferred(b"missing", |_| {
            Ok::<_, StorageError>((Mutation::Remove { rev: 1 }, ()))
        })
        .unwrap();
    assert!(removed.is_none());
    let first = put_deferred(&store, b"a", 1, b"v");
    let second = put_deferred(&store, b"b", 2, b"v");
    assert!(second.seq() > first.seq());
    second.wait().unwrap();
    // The later write's durability covers the earlier one: it is answered at once.
    first.wait().unwrap();
}

#[test]
fn a_seal_leaves_the_hint_to_maintenance() {
    let (io, store) = sim_store(4096);
    for i in 0..100u64 {
        put(
            &store,
            format!("key{i:04}").as_bytes(),
            i + 1,
            &[7; 100],
            false,
        )
        .unwrap();
    }
    let hints = |io: &SimFileIo| {
        common::files_named(io, &dir(), "datafile-")
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "hint"))
            .count() as u64
    };
    // The writer handed full journals off and wrote no hint; the maintenance pass seals them
    // and writes every hint.
    assert!(store.figures().journals_count >= 3);
    assert_eq!(hints(&io), 0);
    store.maintain().unwrap();
    let sealed = store.figures().datafiles_count;
    assert!(sealed >= 2);
    assert_eq!(hints(&io), sealed);
    // A crash before the hints were written only costs a scan at the next open.
    let (io, store) = sim_store(4096);
    for i in 0..100u64 {
        put(
            &store,
            format!("key{i:04}").as_bytes(),
            i + 1,
            &[7; 100],
            true,
        )
        .unwrap();
    }
    let recovered = reopen(&io.crash(0, false), 4096).unwrap();
    assert_eq!(recovered.len(), 100);
}
