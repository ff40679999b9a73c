//! The store's metadata record: the newest value written with `write_meta` survives a crash
//! (as a prefix of the journal: if a write after it survived, it did), hint-based reopening,
//! truncation and compaction that drops every file it was written in.

use crate::common;

use common::{dir, files_named, put, remove, reopen, sim_store};

#[test]
fn the_newest_value_survives_reopen_compaction_and_truncate() {
    let (io, store) = sim_store(4096);
    assert_eq!(store.meta(), None);
    store.write_meta(b"{\"v\":1}").unwrap();
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
    store.write_meta(b"{\"v\":2}").unwrap();
    for i in 0..100u64 {
        remove(&store, format!("key{i:03}").as_bytes(), 200 + i, false).unwrap();
    }
    store.truncate(400, false).unwrap();
    store.rotate().unwrap();
    assert!(files_named(&io, &dir(), "datafile-").len() > 2);
    store.compact().unwrap();
    store.compact().unwrap();
    assert_eq!(store.meta(), Some(b"{\"v\":2}".to_vec()));
    store.sync().unwrap();
    drop(store);
    // Reopened from hints, then once more without them (scanned).
    let io = io.crash(4, false);
    let store = reopen(&io, 4096).unwrap();
    assert_eq!(store.meta(), Some(b"{\"v\":2}".to_vec()));
    assert!(store.is_empty());
    drop(store);
    for hint in files_named(&io, &dir(), "datafile-")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "hint"))
    {
        quince_storage::io::FileIo::remove_file(&io, &hint).unwrap();
    }
    let store = reopen(&io, 4096).unwrap();
    assert_eq!(store.meta(), Some(b"{\"v\":2}".to_vec()));
}

#[test]
fn metadata_is_kept_as_a_prefix_with_the_writes_after_it() {
    for seed in 0..30u64 {
        let (io, store) = sim_store(1 << 20);
        store.write_meta(b"{\"v\":1}").unwrap();
        put(&store, b"a", 1, b"x", true).unwrap();
        store.write_meta(b"{\"v\":2}").unwrap();
        put(&store, b"b", 2, b"y", false).unwrap();
        drop(store);
        let store = reopen(&io.crash(seed, true), 1 << 20).unwrap();
        let meta = store.meta().unwrap();
        if store.get(b"b").unwrap().is_some() {
            assert_eq!(meta, b"{\"v\":2}".to_vec(), "seed {seed}");
        } else {
            assert!(meta == b"{\"v\":1}" || meta == b"{\"v\":2}", "seed {seed}");
        }
    }
}
