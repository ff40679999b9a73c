//! 5,000 collections, each written and read back, in a process whose descriptor limit is
//! 1,024 (hard). Creating about the 1,010th collection used to fail with "Too many open files",
//! because the engine kept a descriptor per journal and datafile for ever.
//!
//! This test binary lowers its own `RLIMIT_NOFILE`, so it is the only test in its file.

mod common;

use std::sync::Arc;

use common::{config, create, opts};
use quince_db::{Catalog, DbConfig};
use quince_storage::io::OsFileIo;
use serde_json::json;

const COLLECTIONS: usize = 5000;
const LIMIT: u64 = 1024;

#[test]
fn five_thousand_collections_under_a_limit_of_1024() {
    rlimit::setrlimit(rlimit::Resource::NOFILE, LIMIT, LIMIT).unwrap();
    let shm = std::path::Path::new("/dev/shm");
    let tmp = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let open = || {
        Catalog::open(DbConfig {
            open_files_max: 256,
            ..config(tmp.path(), Arc::new(OsFileIo::new()))
        })
        .unwrap()
    };
    let catalog = open();
    let db = catalog.database("_system").unwrap();
    for i in 0..COLLECTIONS {
        let c = db.create_collection(create(&format!("c{i}"))).unwrap();
        c.insert(json!({"_key": "k", "i": i}), &opts()).unwrap();
    }
    for i in 0..COLLECTIONS {
        let c = db.collection(&format!("c{i}")).unwrap();
        assert_eq!(common::read(&c, "k")["i"], i);
    }
    catalog.shutdown().unwrap();
    drop(catalog);
    let catalog = open();
    let db = catalog.database("_system").unwrap();
    assert_eq!(db.collections().len(), COLLECTIONS);
    for i in (0..COLLECTIONS).step_by(97) {
        let c = db.collection(&format!("c{i}")).unwrap();
        assert_eq!(common::read(&c, "k")["i"], i);
    }
}
