//! A timing, not a test of behaviour (ignored by default; machines differ, so nothing is
//! asserted): 200,000 inserts through `Store::mutate_deferred` into 1 MiB journals on the real
//! file system, with a maintenance thread calling `maintain` every 100 ms as the server does.
//! Prints the total time, the number of seals and the slowest write (the ones that rotate).
//!
//! `cargo test --release -p quince-storage --test rotation_timing -- --ignored --nocapture`

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_storage::io::OsFileIo;
use quince_storage::{Mutation, StorageError, Store};

const WRITES: u64 = 200_000;

#[test]
#[ignore = "a timing: run by hand with --ignored --nocapture"]
fn inserts_into_small_journals() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let store =
        Arc::new(Store::create(Arc::new(OsFileIo::new()), &dir, common::options(1 << 20)).unwrap());
    // QUINCE_TIMING_MAINTAIN=0 leaves the maintenance thread out (no spare journals, no
    // background seals until the end).
    let maintain = std::env::var("QUINCE_TIMING_MAINTAIN").map_or(true, |v| v != "0");
    let stop = Arc::new(AtomicBool::new(!maintain));
    let maintenance = {
        let (store, stop) = (store.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                store.maintain().unwrap();
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let value = [b'x'; 100];
    let mut latencies = Vec::with_capacity(WRITES as usize);
    let started = Instant::now();
    for i in 0..WRITES {
        let key = format!("doc{i:08}");
        let t = Instant::now();
        let (_, ticket) = store
            .mutate_deferred(key.as_bytes(), |_| {
                Ok::<_, StorageError>((
                    Mutation::Put {
                        rev: i + 1,
                        value: value.to_vec(),
                    },
                    (),
                ))
            })
            .unwrap();
        latencies.push(t.elapsed());
        drop(ticket);
    }
    let total = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    maintenance.join().unwrap();
    store.sync().unwrap();
    store.maintain().unwrap();
    latencies.sort();
    let slow: Vec<Duration> = latencies
        .iter()
        .copied()
        .filter(|l| *l >= Duration::from_micros(500))
        .collect();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    eprintln!(
        "{WRITES} inserts, 1 MiB journals, maintenance thread {maintain}: total {total:?} ({:.0} writes/s), seals {}, \
         p50 {:?}, p99 {:?}, p99.9 {:?}, max {:?}; {} writes took 0.5 ms or more, {:?} in all",
        WRITES as f64 / total.as_secs_f64(),
        store.stats().seals,
        at(0.5),
        at(0.99),
        at(0.999),
        at(1.0),
        slow.len(),
        slow.iter().sum::<Duration>(),
    );
}
