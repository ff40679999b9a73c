//! The engine's open files stay bounded whatever the number of collections and datafiles: it
//! used to keep one descriptor per journal and datafile for ever, so under the common limit of
//! 1,024 open files creating about the 1,010th collection failed ("Too many open files").
//! Here the bound is 16 files (`DbConfig::open_files_max`); the process's descriptor count is
//! read from `/proc/self/fd`.

use crate::common;

use std::sync::Arc;

use common::{config, create, opts};
use quince_db::{Catalog, WriteOptions};
use quince_storage::io::OsFileIo;
use serde_json::json;

const OPEN_FILES_MAX: usize = 16;

fn descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn many_collections_and_datafiles_use_a_bounded_number_of_files() {
    // On tmpfs when there is one: the test is about descriptors, and fsyncs there are free.
    let shm = std::path::Path::new("/dev/shm");
    let tmp = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let catalog = Catalog::open(quince_db::DbConfig {
        open_files_max: OPEN_FILES_MAX,
        ..config(tmp.path(), Arc::new(OsFileIo::new()))
    })
    .unwrap();
    let db = catalog.database("_system").unwrap();
    let before = descriptors();
    let synced = WriteOptions {
        wait_for_sync: true,
        ..opts()
    };
    for i in 0..150 {
        let c = db.create_collection(create(&format!("c{i}"))).unwrap();
        c.insert(json!({"_key": "k", "i": i}), &synced).unwrap();
    }
    for i in 0..150 {
        let c = db.collection(&format!("c{i}")).unwrap();
        assert_eq!(common::read(&c, "k")["i"], i);
    }
    // One collection with many sealed datafiles (1 MiB journals), read across all of them.
    let big = db.create_collection(create("big")).unwrap();
    let pad = "p".repeat(100_000);
    for i in 0..200 {
        big.insert(json!({"_key": format!("k{i}"), "pad": pad}), &opts())
            .unwrap();
    }
    // Full journals are sealed into datafiles by the catalog's upkeep thread (every 100 ms),
    // which a loaded machine may delay: wait for it, within a deadline.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while big.figures().storage.datafiles_count < 15 {
        assert!(
            std::time::Instant::now() < deadline,
            "the full journals were not sealed: {} datafiles",
            big.figures().storage.datafiles_count
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for i in 0..200 {
        assert_eq!(common::read(&big, &format!("k{i}"))["pad"], pad.as_str());
    }
    let held = descriptors().saturating_sub(before);
    // The bound, plus descriptors of calls in flight and of the test's own reading.
    assert!(
        held <= OPEN_FILES_MAX + 8,
        "{held} more descriptors than before (bound {OPEN_FILES_MAX})"
    );
    catalog.shutdown().unwrap();
    drop(catalog);
    let catalog = common::open_os(tmp.path());
    let db = catalog.database("_system").unwrap();
    assert_eq!(db.collection("big").unwrap().count(), 200);
    assert_eq!(db.collections().len(), 151);
}
