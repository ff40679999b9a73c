//! Regression test: a collection or database directory without its `parameter.json` used to be
//! removed as "debris", with every datafile in it (a database directory took `_system`'s
//! collections, `_users` included, with it). Only the engine's own markers prove debris: a
//! directory renamed as dropped, or one that holds no data yet (an interrupted create). Anything
//! else stops the catalog from opening with 1101, and is left exactly as it is.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{collection, config, opts};
use quince_db::Catalog;
use quince_storage::io::{FileIo, SimFileIo};
use serde_json::json;

/// Every path (files and directories) under `root` on `sim`, recursively.
fn tree(sim: &SimFileIo, root: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = sim.list_dir(&dir) else {
            continue;
        };
        for name in entries {
            let path = dir.join(name);
            out.insert(path.clone());
            stack.push(path);
        }
    }
    out
}

/// A catalog with a collection `c` holding synced documents; returns the collection's and its
/// database's directories.
fn populated(dir: &Path, sim: &SimFileIo) -> (PathBuf, PathBuf) {
    let catalog = Catalog::open(config(dir, std::sync::Arc::new(sim.clone()))).unwrap();
    let c = collection(&catalog, "c");
    for i in 0..20 {
        c.insert(
            json!({"_key": format!("k{i}"), "v": i}),
            &quince_db::WriteOptions {
                wait_for_sync: true,
                ..opts()
            },
        )
        .unwrap();
    }
    catalog.shutdown().unwrap();
    let databases = dir.join("databases");
    let db_dir = sim
        .list_dir(&databases)
        .unwrap()
        .into_iter()
        .map(|n| databases.join(n))
        .next()
        .unwrap();
    let collection_dir = sim
        .list_dir(&db_dir)
        .unwrap()
        .into_iter()
        .map(|n| db_dir.join(n))
        .find(|p| {
            sim.read_file(&p.join("parameter.json"))
                .is_some_and(|b| String::from_utf8_lossy(&b).contains("\"c\""))
        })
        .unwrap();
    (collection_dir, db_dir)
}

fn assert_refused_untouched(dir: &Path, sim: &SimFileIo) {
    let before = tree(sim, dir);
    let err = Catalog::open(config(dir, std::sync::Arc::new(sim.clone())))
        .expect_err("the catalog must refuse to open");
    assert_eq!(err.num(), 1101, "{err}");
    assert!(err.to_string().contains("parameter.json"), "{err}");
    assert_eq!(tree(sim, dir), before, "opening changed the data directory");
}

#[test]
fn a_collection_without_parameters_is_refused_not_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let (collection_dir, _) = populated(tmp.path(), &sim);
    sim.remove_file(&collection_dir.join("parameter.json"))
        .unwrap();
    assert_refused_untouched(tmp.path(), &sim);
}

#[test]
fn a_database_without_parameters_is_refused_not_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let (_, db_dir) = populated(tmp.path(), &sim);
    sim.remove_file(&db_dir.join("parameter.json")).unwrap();
    assert_refused_untouched(tmp.path(), &sim);
}

#[test]
fn interrupted_creates_and_drops_are_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let (_, db_dir) = populated(tmp.path(), &sim);
    // A create that stopped before its parameters were durable: no data in it.
    let empty = db_dir.join("collection-900");
    sim.create_dir_all(&empty).unwrap();
    let with_temp = db_dir.join("collection-901");
    sim.create_dir_all(&with_temp).unwrap();
    sim.create_new(&with_temp.join("parameter.json.tmp"))
        .unwrap()
        .write_all_at(b"{\"id\":", 0)
        .unwrap();
    // A drop that stopped after its commit point (the rename) and before the deletion.
    let dropped = db_dir.join("collection-902.dropped");
    sim.create_dir_all(&dropped).unwrap();
    sim.create_new(&dropped.join("journal-1.db")).unwrap();

    let catalog = Catalog::open(config(tmp.path(), std::sync::Arc::new(sim.clone()))).unwrap();
    for gone in [&empty, &with_temp, &dropped] {
        assert!(!sim.exists(gone), "{} was not cleaned up", gone.display());
    }
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    assert_eq!(c.count(), 20);
}

#[test]
fn a_damaged_parameter_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let (collection_dir, _) = populated(tmp.path(), &sim);
    let params = collection_dir.join("parameter.json");
    let text = String::from_utf8(sim.read_file(&params).unwrap()).unwrap();
    // The name "c" turned into "d": still valid JSON, but a different collection name.
    let bytes = text.replacen("\"c\"", "\"d\"", 1).into_bytes();
    let copy = sim.crash(0, false);
    let handle = copy.open(&params).unwrap();
    handle.write_all_at(&bytes, 0).unwrap();
    handle.sync_data().unwrap();
    let err = Catalog::open(config(tmp.path(), std::sync::Arc::new(copy)))
        .expect_err("a damaged parameter file must be refused");
    assert_eq!(err.num(), 1101, "{err}");
}
