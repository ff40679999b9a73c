//! Restart cost: 200k small documents, mostly in sealed datafiles with hint files, reopen on the
//! real file system. Prints the time (no timing assertion: machines differ); checks the result.
//! `QUINCE_RESTART_DOCS` changes the count (e.g. 1000000 for the 1M figure in the report).

use crate::common;

use std::sync::Arc;
use std::time::Instant;

use quince_storage::io::OsFileIo;
use quince_storage::{Mutation, StorageError, Store};

#[test]
fn reopen_with_hints_is_fast() {
    let docs: u64 = std::env::var("QUINCE_RESTART_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let options = common::options(8 << 20);
    let store = Store::create(Arc::new(OsFileIo::new()), &dir, options.clone()).unwrap();
    let value = [b'x'; 60];
    for i in 0..docs {
        let key = format!("doc{i:08}");
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
    }
    let figures = store.figures();
    store.close().unwrap();
    drop(store);

    let started = Instant::now();
    let store = Store::open(Arc::new(OsFileIo::new()), &dir, options).unwrap();
    let elapsed = started.elapsed();
    eprintln!(
        "reopen of {docs} documents ({} datafiles with hints, journal {} bytes): {:?}; index {} bytes",
        figures.datafiles_count, figures.journals_file_size, elapsed, store.figures().index_size
    );
    assert_eq!(store.len(), docs);
    assert_eq!(store.figures().alive_count, docs);
    for i in (0..docs).step_by(997) {
        let got = store.get(format!("doc{i:08}").as_bytes()).unwrap().unwrap();
        assert_eq!((got.rev, got.value), (i + 1, value.to_vec()));
    }
}
