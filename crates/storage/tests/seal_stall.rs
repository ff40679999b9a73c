//! The stall a seal causes, on the real file system: the write that fills an 8 MiB journal pays
//! for its footer and for creating the next journal in the page cache (no spare was prepared
//! here), but for no fsync, no rename and not for the datafile's hint file: `maintain` seals the
//! handed-off journal and writes the hint afterwards, outside the writer lock. Prints both times
//! (machines differ, so no timing is asserted); asserts where the seal and hint work happen. The server's
//! background fsync (every 100 ms) leaves little unsynced data in a journal when it is sealed;
//! a `sync` every 1,000 writes stands in for it here, so the seal's own fsync is realistic.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_storage::io::OsFileIo;
use quince_storage::{Mutation, StorageError, Store};

#[test]
fn sealing_leaves_the_hint_out_of_the_write_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let store = Store::create(Arc::new(OsFileIo::new()), &dir, common::options(8 << 20)).unwrap();
    let value = [b'x'; 200];
    let mut slowest = Duration::ZERO;
    let mut i = 0u64;
    while store.figures().journals_count < 2 {
        if i % 1000 == 999 {
            store.sync().unwrap();
        }
        let key = format!("doc{i:08}");
        let started = Instant::now();
        store
            .mutate(key.as_bytes(), false, |_| {
                Ok::<_, StorageError>((
                    Mutation::Put {
                        rev: i + 1,
                        value: value.to_vec(),
                    },
                    (),
                ))
            })
            .unwrap();
        slowest = slowest.max(started.elapsed());
        i += 1;
    }
    let hint = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().ends_with(".hint"))
    };
    assert!(!hint(&dir), "the seal wrote the hint under the writer lock");
    assert_eq!(store.stats().seals, 0, "the writer finished a seal itself");
    let started = Instant::now();
    store.maintain().unwrap();
    let hint_time = started.elapsed();
    assert_eq!(store.stats().seals, 1, "maintain did not finish the seal");
    assert!(hint(&dir), "maintain did not write the pending hint");
    eprintln!(
        "8 MiB journal, {i} writes: slowest write (the one that handed the journal off) \
         {slowest:?}; the seal and the hint, done afterwards by maintain outside the writer \
         lock, took {hint_time:?}"
    );
}
