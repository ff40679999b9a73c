//! A full disk at the catalog level (regressions):
//! - creating a collection on a full disk answered 1305 ("I/O error") instead of 1104
//!   ("filesystem full"), and left an empty `parameter.json.tmp` behind;
//! - a clean shutdown on a full disk failed (the parameters' refresh could not be written), so
//!   the server exited with status 1 although nothing was lost;
//! - a collection whose journal was sealed just before the disk filled could not be opened, so
//!   the server could not start on a full disk.

use crate::common;

use std::sync::Arc;

use common::{collection, config, create, opts};
use quince_db::Catalog;
use quince_storage::io::SimFileIo;
use serde_json::json;

#[test]
fn a_full_disk_is_1104_and_a_clean_shutdown_and_restart_still_work() {
    let tmp = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let catalog = Catalog::open(config(tmp.path(), Arc::new(sim.clone()))).unwrap();
    let c = collection(&catalog, "kept");
    let sync = quince_db::WriteOptions {
        wait_for_sync: true,
        ..opts()
    };
    c.insert(json!({"_key": "a", "v": 1}), &sync).unwrap();
    let empty = collection(&catalog, "empty");
    drop(empty);
    sim.set_space_left(Some(0));

    let db = catalog.database("_system").unwrap();
    let refused = db.create_collection(create("new")).unwrap_err();
    assert_eq!(refused.num(), 1104, "{refused}");
    let leftovers: Vec<_> = sim
        .paths()
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");

    // Nothing is poisoned, so the shutdown is clean although nothing can be written.
    catalog.shutdown().expect("a clean shutdown on a full disk");
    drop((c, db, catalog));

    // The restart on the still-full disk opens every collection and serves reads.
    let catalog = Catalog::open(config(tmp.path(), Arc::new(sim.clone()))).unwrap();
    let db = catalog.database("_system").unwrap();
    let kept = db.collection("kept").unwrap();
    let a: serde_json::Value = serde_json::from_slice(&kept.read("a").unwrap().json).unwrap();
    assert_eq!(a["v"], 1);
    assert!(db.collection("empty").is_ok());
    // Writing needs a journal the full disk cannot hold: 1104, and the collection is not
    // stopped, so it writes once there is room.
    let empty = db.collection("empty").unwrap();
    let full = empty.insert(json!({"_key": "x"}), &sync).unwrap_err();
    assert_eq!(full.num(), 1104, "{full}");
    sim.set_space_left(None);
    empty.insert(json!({"_key": "x"}), &sync).unwrap();
    catalog.shutdown().unwrap();
}
