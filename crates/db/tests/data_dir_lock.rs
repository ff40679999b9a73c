//! One data directory, one server: a second catalog on a directory in use fails with a clear
//! error (errorNum 1107), and succeeds once the first one shut down.

use crate::common;

use common::{config, open_os};
use quince_db::Catalog;
use quince_storage::io::OsFileIo;
use std::sync::Arc;

#[test]
fn a_second_catalog_on_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let first = open_os(dir.path());
    let err = Catalog::open(config(dir.path(), Arc::new(OsFileIo::new())))
        .err()
        .unwrap();
    assert_eq!(err.num(), 1107);
    assert!(err.message.contains("locked"), "{}", err.message);
    first.shutdown().unwrap();
    let second = open_os(dir.path());
    assert!(second.database("_system").is_some());
}

#[test]
fn the_maintenance_thread_stops_with_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let weak = Arc::downgrade(&catalog);
    drop(catalog);
    // Dropping the last handle shut the catalog down and released the lock.
    assert!(weak.upgrade().is_none());
    open_os(dir.path());
}
