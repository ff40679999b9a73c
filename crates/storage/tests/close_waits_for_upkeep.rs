//! Closing or abandoning a store waits for upkeep in progress (a hint file being written,
//! a compaction), and no upkeep touches the directory afterwards: the store's directory can be
//! deleted right after. (A drop used to race the background hint writer and fail with
//! "Directory not empty".)

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{dir, files_named, put, sim_store};

#[test]
fn abandon_waits_for_a_hint_being_written_and_stops_later_upkeep() {
    let (io, store) = sim_store(4096);
    for i in 0..100u64 {
        put(
            &store,
            format!("key{i:03}").as_bytes(),
            i + 1,
            &[b'v'; 60],
            false,
        )
        .unwrap();
    }
    // The writer handed full journals off; `maintain` seals them and then writes their hints.
    assert!(
        files_named(&io, &dir(), "journal-").len() >= 3,
        "hand-offs happened"
    );
    let store = Arc::new(store);
    // Every fsync now takes a while, so upkeep is caught in the middle of writing a hint.
    io.set_sync_delay(Some(Duration::from_millis(300)));
    let upkeep = {
        let store = store.clone();
        std::thread::spawn(move || store.maintain().unwrap())
    };
    // Wait (bounded) until the first hint file exists: upkeep is writing hints now, several of
    // them, each with a slow fsync.
    let deadline = Instant::now() + Duration::from_secs(10);
    while files_named(&io, &dir(), "datafile-")
        .iter()
        .all(|p| p.extension().is_none_or(|e| e != "hint"))
    {
        assert!(Instant::now() < deadline, "upkeep never started a hint");
        std::thread::yield_now();
    }
    store.abandon();
    let after_abandon = io.paths();
    upkeep.join().unwrap();
    assert_eq!(
        io.paths(),
        after_abandon,
        "abandon returned while upkeep was still writing into the directory"
    );
    io.clear_faults();
    let files = io.paths();
    store.maintain().unwrap();
    assert!(
        store.compact().is_err(),
        "an abandoned store compacts nothing"
    );
    assert_eq!(
        io.paths(),
        files,
        "upkeep ran after the store was abandoned"
    );
}
