//! Group commit: concurrent syncing writers share fsyncs, and every acknowledged write is
//! durable (it survives a crash that keeps only synced bytes).

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{put, reopen, sim_store, value};

#[test]
fn concurrent_sync_writers_share_fsyncs() {
    let (io, store) = sim_store(1 << 20);
    // A device latency, so that writers arrive while an fsync is in flight, as on a disk.
    io.set_sync_delay(Some(Duration::from_millis(2)));
    let store = Arc::new(store);
    let threads = 32u64;
    let per_thread = 20u64;
    // The first write starts the journal (fsyncs of its own); counting starts after it.
    put(&store, b"first", 1, b"durable", true).unwrap();
    let syncs_before = io.stats().syncs;
    let store_syncs_before = store.stats().syncs;
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                for n in 0..per_thread {
                    let key = format!("t{t}-n{n}");
                    put(&store, key.as_bytes(), t * 1000 + n + 1, b"durable", true).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let writes = threads * per_thread;
    let syncs = io.stats().syncs - syncs_before;
    assert!(syncs * 4 < writes, "{syncs} fsyncs for {writes} writes");
    assert_eq!(store.stats().syncs - store_syncs_before, syncs);

    // Only synced bytes survive this crash: every acknowledged write must be among them.
    let crashed = io.crash(3, false);
    drop(store);
    let store = reopen(&crashed, 1 << 20).unwrap();
    for t in 0..threads {
        for n in 0..per_thread {
            assert_eq!(
                value(&store, format!("t{t}-n{n}").as_bytes()),
                Some(b"durable".to_vec())
            );
        }
    }
}

#[test]
fn maintain_syncs_unsynced_writes_once_the_interval_passed() {
    let store_with = |interval: Duration| {
        let io = quince_storage::io::SimFileIo::new();
        let mut options = common::options(1 << 20);
        options.sync_interval = interval;
        let store = quince_storage::Store::create(Arc::new(io.clone()), &common::dir(), options);
        (io, store.unwrap())
    };
    // Not yet due: the write stays unsynced. (The first pass makes the journal the first write
    // started durable, which covers that write; the second write is the lazy one.)
    let (io, store) = store_with(Duration::from_secs(3600));
    put(&store, b"first", 1, b"v", false).unwrap();
    store.maintain().unwrap();
    put(&store, b"lazy", 2, b"v", false).unwrap();
    store.maintain().unwrap();
    assert_eq!(
        value(&reopen(&io.crash(0, false), 1 << 20).unwrap(), b"lazy"),
        None
    );
    // Due at once: maintain makes it durable.
    let (io, store) = store_with(Duration::ZERO);
    put(&store, b"lazy", 1, b"v", false).unwrap();
    store.maintain().unwrap();
    assert_eq!(
        value(&reopen(&io.crash(0, false), 1 << 20).unwrap(), b"lazy"),
        Some(b"v".to_vec())
    );
}

/// On the real file system: 64 syncing writers against one. Prints the throughputs (machines
/// differ, so only the fsync count is asserted).
#[test]
fn real_disk_group_commit_throughput() {
    use quince_storage::io::OsFileIo;
    use std::time::Instant;

    let run = |writers: u64, per_writer: u64| {
        let tmp = tempfile::tempdir().unwrap();
        let store = quince_storage::Store::create(
            Arc::new(OsFileIo::new()),
            &tmp.path().join("c"),
            common::options(32 << 20),
        )
        .unwrap();
        let store = Arc::new(store);
        let started = Instant::now();
        let threads: Vec<_> = (0..writers)
            .map(|t| {
                let store = store.clone();
                std::thread::spawn(move || {
                    for n in 0..per_writer {
                        let key = format!("t{t}-n{n}");
                        put(&store, key.as_bytes(), t * 100_000 + n + 1, &[7; 100], true).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let per_second = (writers * per_writer) as f64 / started.elapsed().as_secs_f64();
        (per_second, store.stats().syncs)
    };
    let (single, single_syncs) = run(1, 100);
    let (many, many_syncs) = run(64, 50);
    eprintln!(
        "sync writes/s: 1 writer {single:.0} ({single_syncs} fsyncs for 100), \
         64 writers {many:.0} ({many_syncs} fsyncs for 3200): {:.1}x",
        many / single
    );
    assert!(single_syncs >= 100);
    assert!(many_syncs * 4 < 3200, "{many_syncs} fsyncs for 3200 writes");
}
