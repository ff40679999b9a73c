//! The deferred document operations: a synced write returns at once with a `Durability`
//! handle whose `on_done` fires after an fsync covered the write (checked against the simulated
//! file system's durable image), or with the storage error when the fsync fails; an unsynced
//! write, or one that writes nothing, has no handle.

use crate::common;

use std::sync::mpsc;
use std::time::Duration;

use common::{collection, open_sim, opts};
use quince_db::{Durability, OverwriteMode, PropertiesUpdate, WriteOptions};
use quince_errors::Result;
use quince_storage::io::SimFileIo;
use serde_json::json;

/// Generous bound on waiting for a callback: a failure detector for hangs, not synchronisation.
const HANG: Duration = Duration::from_secs(20);

fn synced() -> WriteOptions {
    WriteOptions {
        wait_for_sync: true,
        ..opts()
    }
}

/// Registers a callback that sends the result and the durable image at the moment it fired.
fn report(durability: Durability, sim: &SimFileIo) -> mpsc::Receiver<(Result<()>, SimFileIo)> {
    let (sender, receiver) = mpsc::channel();
    let sim = sim.clone();
    durability.on_done(move |result| {
        sender.send((result, sim.crash(0, false))).unwrap();
    });
    receiver
}

#[test]
fn synced_deferred_writes_are_durable_when_on_done_fires() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let image = {
        let catalog = open_sim(dir.path(), &sim);
        let c = collection(&catalog, "c");
        let (outcome, durability) = c
            .insert_deferred(json!({"_key": "a", "v": 1}), &synced())
            .unwrap();
        assert!(outcome.synced);
        let (result, _) = report(durability.unwrap(), &sim)
            .recv_timeout(HANG)
            .unwrap();
        result.unwrap();
        c.insert(json!({"_key": "b", "v": 1}), &opts()).unwrap();
        let (_, durability) = c.update_deferred("a", json!({"v": 2}), &synced()).unwrap();
        report(durability.unwrap(), &sim)
            .recv_timeout(HANG)
            .unwrap()
            .0
            .unwrap();
        let (_, durability) = c.replace_deferred("b", json!({"w": 3}), &synced()).unwrap();
        report(durability.unwrap(), &sim)
            .recv_timeout(HANG)
            .unwrap()
            .0
            .unwrap();
        let (outcome, durability) = c.remove_deferred("a", None, &synced()).unwrap();
        assert_eq!(outcome.key, "a");
        let (result, image) = report(durability.unwrap(), &sim)
            .recv_timeout(HANG)
            .unwrap();
        result.unwrap();
        image
    };
    // The image was taken inside the last callback: what a crash at that moment keeps.
    let catalog = open_sim(dir.path(), &image);
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    assert_eq!(c.read("a").unwrap_err().num(), 1202);
    let b: serde_json::Value = serde_json::from_slice(&c.read("b").unwrap().json).unwrap();
    assert_eq!((b["w"].clone(), b.get("v")), (json!(3), None));
}

#[test]
fn only_synced_writes_that_wrote_something_have_a_durability() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let catalog = open_sim(dir.path(), &sim);
    let c = collection(&catalog, "c");
    let (outcome, durability) = c.insert_deferred(json!({"_key": "a"}), &opts()).unwrap();
    assert!(!outcome.synced);
    assert!(durability.is_none());
    // overwriteMode ignore over an existing key writes nothing.
    let ignore = WriteOptions {
        overwrite_mode: OverwriteMode::Ignore,
        ..synced()
    };
    let (_, durability) = c.insert_deferred(json!({"_key": "a"}), &ignore).unwrap();
    assert!(durability.is_none());
    // The collection's waitForSync makes every write synced.
    c.update_properties(PropertiesUpdate {
        wait_for_sync: Some(true),
        ..Default::default()
    })
    .unwrap();
    let (outcome, durability) = c.insert_deferred(json!({"_key": "b"}), &opts()).unwrap();
    assert!(outcome.synced);
    let first = c.insert_deferred(json!({"_key": "c"}), &opts()).unwrap().1;
    // Of two handles, the newer one's durability implies the older one's.
    let newest = Durability::newest(durability, first).unwrap();
    newest.wait().unwrap();
    let image = sim.crash(0, false);
    drop(catalog);
    let catalog = open_sim(dir.path(), &image);
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    c.read("b").unwrap();
    c.read("c").unwrap();
}

#[test]
fn a_failed_fsync_reaches_on_done_and_later_writes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let catalog = open_sim(dir.path(), &sim);
    let c = collection(&catalog, "c");
    // A first write starts the journal (with fsyncs of its own), so the fsync that fails is the
    // one covering the synced write.
    c.insert(json!({"_key": "first"}), &opts()).unwrap();
    sim.fail_sync_after(0);
    let (_, durability) = c.insert_deferred(json!({"_key": "a"}), &synced()).unwrap();
    let (result, _) = report(durability.unwrap(), &sim)
        .recv_timeout(HANG)
        .unwrap();
    let error = result.unwrap_err();
    assert_eq!((error.num(), error.status), (1305, 500), "{error:?}");
    let refused = c.insert(json!({"_key": "b"}), &synced()).unwrap_err();
    assert_eq!((refused.num(), refused.status), (1004, 503));
}
