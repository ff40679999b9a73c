//! A store of 2,000 sealed datafiles opens and is read across all of them in a process whose
//! descriptor limit is 1,024 (hard): the engine's open files are bounded by `CachedFileIo`, not
//! by the number of files. (It used to keep one descriptor per datafile for ever.)
//!
//! This test binary lowers its own `RLIMIT_NOFILE`, so it is the only test in its file.

use std::path::Path;
use std::sync::Arc;

use quince_storage::io::{CachedFileIo, FileIo, OsFileIo};
use quince_storage::Store;

mod common;

const DATAFILES: u64 = 2000;
const LIMIT: u64 = 1024;
const OPEN_FILES_MAX: usize = 256;

fn descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn two_thousand_datafiles_under_a_limit_of_1024() {
    rlimit::setrlimit(rlimit::Resource::NOFILE, LIMIT, LIMIT).unwrap();
    // On tmpfs when there is one: the test is about descriptors, not fsync latency.
    let shm = Path::new("/dev/shm");
    let tmp = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let dir = tmp.path().join("store");
    let io = || -> Arc<dyn FileIo> {
        Arc::new(CachedFileIo::new(Arc::new(OsFileIo::new()), OPEN_FILES_MAX))
    };
    let store = Store::create(io(), &dir, common::options(1 << 20)).unwrap();
    for i in 0..DATAFILES {
        common::put(&store, format!("key{i}").as_bytes(), i + 1, b"value", false).unwrap();
        store.rotate().unwrap();
    }
    assert_eq!(store.figures().datafiles_count, DATAFILES);
    store.close().unwrap();
    drop(store);

    let store = Store::open(io(), &dir, common::options(1 << 20)).unwrap();
    for i in 0..DATAFILES {
        let record = store.get(format!("key{i}").as_bytes()).unwrap().unwrap();
        assert_eq!(record.rev, i + 1);
    }
    assert!(
        descriptors() < OPEN_FILES_MAX + 64,
        "{} descriptors open",
        descriptors()
    );
}
