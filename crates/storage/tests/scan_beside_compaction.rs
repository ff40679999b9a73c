//! A scan that pauses (a streaming query waiting for its client) delays compaction of its
//! store, but never the other scans: a scan started while compaction waits runs at once.

use crate::common;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use common::{put, remove, sim_store};

#[test]
fn a_paused_scan_delays_compaction_but_not_other_scans() {
    let (_io, store) = sim_store(4096);
    for i in 0..200u64 {
        put(&store, format!("k{i}").as_bytes(), i + 1, &[7; 80], false).unwrap();
    }
    for i in 0..100u64 {
        remove(&store, format!("k{i}").as_bytes(), 1000 + i, false).unwrap();
    }
    store.rotate().unwrap();
    let store = Arc::new(store);

    // A scan that stops in its first record until told to go on.
    let (paused_tx, paused_rx) = mpsc::channel();
    let (resume_tx, resume_rx) = mpsc::channel::<()>();
    let paused = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || {
            let mut first = true;
            store
                .scan(&mut |_, _, _| {
                    if first {
                        first = false;
                        paused_tx.send(()).unwrap();
                        resume_rx.recv().unwrap();
                    }
                    true
                })
                .unwrap();
        })
    };
    paused_rx.recv().unwrap();

    // Compaction now waits for the paused scan.
    let (compacted_tx, compacted_rx) = mpsc::channel();
    let compactor = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || {
            let report = store.compact().unwrap();
            compacted_tx.send(report.files_compacted).unwrap();
        })
    };
    assert!(
        compacted_rx
            .recv_timeout(Duration::from_millis(200))
            .is_err(),
        "compaction ran beside a scan in progress"
    );

    // Another scan runs to its end meanwhile.
    let (scanned_tx, scanned_rx) = mpsc::channel();
    let other = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || {
            let mut n = 0;
            store
                .scan(&mut |_, _, _| {
                    n += 1;
                    true
                })
                .unwrap();
            scanned_tx.send(n).unwrap();
        })
    };
    let seen = scanned_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a scan waited behind compaction waiting for a paused scan");
    assert_eq!(seen, 100);

    resume_tx.send(()).unwrap();
    paused.join().unwrap();
    other.join().unwrap();
    assert!(compacted_rx.recv_timeout(Duration::from_secs(10)).unwrap() > 0);
    compactor.join().unwrap();
}
