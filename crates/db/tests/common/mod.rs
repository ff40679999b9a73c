//! Helpers shared by the db integration tests: opening catalogs on a real temporary directory
//! or on a simulated file system, and building requests.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use quince_db::{
    Catalog, Collection, CollectionType, CreateCollection, DbConfig, WriteOptions, WriteOutcome,
};
use quince_errors::Result;
use quince_storage::io::{FileIo, OsFileIo, SimFileIo};
use serde_json::{json, Value};

/// A catalog's configuration over `io` in `dir`.
pub fn config(dir: &Path, io: Arc<dyn FileIo>) -> DbConfig {
    DbConfig {
        default_journal_size: 1024 * 1024,
        sync_interval: Duration::from_millis(50),
        ..DbConfig::new(dir.to_path_buf(), io)
    }
}

/// A catalog on the real file system in `dir`.
pub fn open_os(dir: &Path) -> Arc<Catalog> {
    Catalog::open(config(dir, Arc::new(OsFileIo::new()))).expect("catalog opens")
}

/// A catalog on a simulated file system. `dir` is a real temporary directory: the data
/// directory's lock is always an OS lock.
pub fn open_sim(dir: &Path, sim: &SimFileIo) -> Arc<Catalog> {
    Catalog::open(config(dir, Arc::new(sim.clone()))).expect("catalog opens")
}

/// A create request with defaults.
pub fn create(name: &str) -> CreateCollection {
    CreateCollection {
        name: name.to_owned(),
        kind: CollectionType::Document,
        wait_for_sync: None,
        is_system: false,
        key_options: None,
        journal_size: None,
        schema: None,
        computed_values: None,
        cache_enabled: None,
    }
}

/// Creates a document collection in `_system`.
pub fn collection(catalog: &Catalog, name: &str) -> Arc<Collection> {
    catalog
        .database("_system")
        .unwrap()
        .create_collection(create(name))
        .expect("collection is created")
}

/// Default write options.
pub fn opts() -> WriteOptions {
    WriteOptions::default()
}

/// The document `key` as JSON.
pub fn read(collection: &Collection, key: &str) -> Value {
    serde_json::from_slice(&collection.read(key).expect("document exists").json).unwrap()
}

/// A write's outcome without its revisions (which differ between two runs), comparable across
/// runs: its id, key, whether it replaced, durability, new and old versions, or its error.
pub fn comparable(result: &Result<WriteOutcome>) -> Value {
    let strip = |doc: &Option<Value>| {
        doc.clone().map(|mut d| {
            d.as_object_mut().unwrap().remove("_rev");
            d
        })
    };
    match result {
        Ok(o) => json!({
            "id": o.id, "key": o.key, "replaced": o.old_rev.is_some(),
            "new": strip(&o.new), "old": strip(&o.old), "synced": o.synced,
        }),
        Err(e) => json!({ "error": e.num(), "status": e.status, "message": e.message.to_string() }),
    }
}
