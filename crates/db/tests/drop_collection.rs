//! Regression tests for dropping collections and databases:
//! - a drop used to race the background hint writer: maintenance could create a hint file in
//!   the directory while the drop deleted it, and about one drop in eight of a fresh collection
//!   with a 1 MiB journal failed with "Directory not empty", leaving the collection listed but
//!   unusable. A drop now commits by renaming the directory and waits out upkeep in progress;
//! - on a full disk a drop used to fail, because it first wrote a temporary `parameter.json`;
//!   freeing space through the API must work on a full disk, and the rename writes no data.

use crate::common;

use std::sync::Arc;

use common::{collection, config, create, open_os, opts};
use quince_db::Catalog;
use quince_storage::io::SimFileIo;
use serde_json::json;

/// Enough data to seal the 1 MiB journal a few times in a burst, so several hint files are due
/// for the maintenance thread when the drop comes.
fn fill(c: &quince_db::Collection) {
    let pad = "x".repeat(4000);
    let documents = (0..1000)
        .map(|i| json!({"_key": format!("k{i}"), "pad": pad}))
        .collect();
    let (results, _) = c.insert_many_deferred(documents, &opts());
    assert!(results.iter().all(Result::is_ok));
}

#[test]
fn drops_never_race_the_hint_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = open_os(tmp.path());
    let db = catalog.database("_system").unwrap();
    for round in 0..30u64 {
        let c = collection(&catalog, "fresh");
        fill(&c);
        // Spread the drops over the maintenance thread's 100 ms cycle (not a synchronisation:
        // the drop must succeed at any moment of it).
        std::thread::sleep(std::time::Duration::from_millis(round * 37 % 100));
        db.drop_collection("fresh", false)
            .unwrap_or_else(|e| panic!("round {round}: drop failed: {e}"));
        assert!(db.collection("fresh").is_err());
    }
    // Nothing of the dropped collections is left on disk.
    catalog.shutdown().unwrap();
    let db_dir = std::fs::read_dir(tmp.path().join("databases"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let names: Vec<String> = std::fs::read_dir(db_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("collection-"))
        .collect();
    // `_users` (and whatever system collections exist) only.
    let catalog = open_os(tmp.path());
    let live = catalog.database("_system").unwrap().collections().len();
    assert_eq!(names.len(), live, "left behind: {names:?}");
}

#[test]
fn a_collection_and_a_database_can_be_dropped_on_a_full_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let catalog = Catalog::open(config(tmp.path(), Arc::new(sim.clone()))).unwrap();
    let c = collection(&catalog, "big");
    fill(&c);
    let other = catalog.create_database("other").unwrap();
    other.create_collection(create("inside")).unwrap();
    sim.set_space_left(Some(0));
    let db = catalog.database("_system").unwrap();
    db.drop_collection("big", false)
        .expect("dropping frees space; it must work on a full disk");
    catalog
        .drop_database("other")
        .expect("dropping a database must work on a full disk");
    assert!(db.collection("big").is_err());
    assert!(catalog.database("other").is_none());
    sim.set_space_left(None);
    catalog.shutdown().unwrap();
    drop(catalog);
    let catalog = Catalog::open(config(tmp.path(), Arc::new(sim.crash(1, false)))).unwrap();
    assert!(catalog
        .database("_system")
        .unwrap()
        .collection("big")
        .is_err());
    assert!(catalog.database("other").is_none());
}

#[test]
fn calls_racing_a_drop_answer_not_found() {
    // A compaction or write that races a drop used to fail with an I/O error (and make the
    // store read-only), or with "shutting down"; ArangoDB answers 1203.
    let tmp = tempfile::tempdir().unwrap();
    let catalog = open_os(tmp.path());
    let db = catalog.database("_system").unwrap();
    for round in 0..20 {
        let c = collection(&catalog, "racy");
        fill(&c);
        let racer = {
            let c = c.clone();
            std::thread::spawn(move || loop {
                if let Err(e) = c.compact() {
                    return e;
                }
                if let Err(e) = c.insert(serde_json::json!({"x": 1}), &opts()) {
                    return e;
                }
            })
        };
        db.drop_collection("racy", false).unwrap();
        let err = racer.join().unwrap();
        assert_eq!(err.num(), 1203, "round {round}: {err}");
    }
}
