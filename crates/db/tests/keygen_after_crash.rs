//! Regression test: when the document holding the highest generated key was removed (or the
//! collection truncated) and the server then crashed before a clean shutdown wrote the key
//! generator's `lastValue`, the generator could hand the same key out again. Keys of the
//! traditional, autoincrement and padded generators never repeat, crash or no crash.

use crate::common;

use std::sync::Arc;

use common::{config, create, opts};
use quince_db::{Catalog, CreateCollection, WriteOptions};
use quince_storage::io::SimFileIo;
use serde_json::json;

fn synced() -> WriteOptions {
    WriteOptions {
        wait_for_sync: true,
        ..opts()
    }
}

fn numeric(key: &str) -> u64 {
    key.parse()
        .or_else(|_| u64::from_str_radix(key, 16))
        .unwrap()
}

/// Inserts ten documents with generated keys, then `forget` removes the newest one(s) (synced),
/// the process crashes (only synced bytes survive) and the next generated key is checked.
fn check(key_options: serde_json::Value, truncate: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let catalog = Catalog::open(config(tmp.path(), Arc::new(sim.clone()))).unwrap();
    let c = catalog
        .database("_system")
        .unwrap()
        .create_collection(CreateCollection {
            key_options: Some(key_options.clone()),
            ..create("gen")
        })
        .unwrap();
    let mut highest = 0;
    let mut last_key = String::new();
    for i in 0..10 {
        let out = c.insert(json!({"i": i}), &synced()).unwrap();
        highest = highest.max(numeric(&out.key));
        last_key = out.key;
    }
    if truncate {
        c.truncate(true).unwrap();
    } else {
        c.remove(&last_key, None, &synced()).unwrap();
    }
    // A crash: only what was synced survives. The image is taken before the catalog's clean
    // shutdown (which writes `lastValue`) can reach it.
    let after = sim.crash(5, false);
    drop(catalog);
    let catalog = Catalog::open(config(tmp.path(), Arc::new(after))).unwrap();
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("gen")
        .unwrap();
    let next = c.insert(json!({"after": true}), &synced()).unwrap();
    assert!(
        numeric(&next.key) > highest,
        "{key_options}: key {} handed out again (highest generated was {highest})",
        next.key
    );
}

#[test]
fn traditional_keys_never_repeat() {
    check(json!({"type": "traditional"}), false);
    check(json!({"type": "traditional"}), true);
}

#[test]
fn autoincrement_keys_never_repeat() {
    check(
        json!({"type": "autoincrement", "increment": 5, "offset": 3}),
        false,
    );
    check(json!({"type": "autoincrement"}), true);
}

#[test]
fn padded_keys_never_repeat() {
    check(json!({"type": "padded"}), false);
    check(json!({"type": "padded"}), true);
}
