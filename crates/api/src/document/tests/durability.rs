//! Synced writes (`waitForSync`) on a simulated disk: the reply comes only after the write is in
//! the durable image, the wait parks the request's task and not the runtime's thread, and a
//! failed fsync answers the storage error instead of 201.

use std::sync::Arc;
use std::time::Duration;

use http::Method;
use quince_db::CollectionType;
use quince_storage::io::SimFileIo;
use serde_json::json;

use super::support::Fixture;

/// A fixture on a simulated disk whose fsyncs take `delay`, with a collection `c`.
fn sim_fixture(delay: Duration) -> (SimFileIo, Fixture) {
    let sim = SimFileIo::new();
    let fx = Fixture::on(Arc::new(sim.clone()));
    fx.collection("c", CollectionType::Document);
    sim.set_sync_delay(Some(delay));
    (sim, fx)
}

/// True when a crash now would keep a record of the document `key`: some journal or datafile
/// of the durable image holds its `_key` attribute (recovery itself is tested in storage).
fn durable(sim: &SimFileIo, key: &str) -> bool {
    let image = sim.crash(0, false);
    let needle = format!("\"_key\":\"{key}\"");
    image
        .paths()
        .iter()
        .filter(|path| path.extension().is_some_and(|e| e == "db"))
        .filter_map(|path| image.read_file(path))
        .any(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

#[tokio::test]
async fn a_synced_insert_is_durable_when_201_arrives() {
    let (sim, fx) = sim_fixture(Duration::from_millis(50));
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("waitForSync", "true")
        .json(json!({"_key": "single"}))
        .document()
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    assert!(durable(&sim, "single"));
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("waitForSync", "true")
        .json(json!([{"_key": "m1"}, {"_key": "m2"}, {"_key": "m3"}]))
        .document()
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    assert!(["m1", "m2", "m3"].iter().all(|k| durable(&sim, k)));
    let reply = fx
        .call(Method::PATCH, "document", &["c", "single"])
        .query("waitForSync", "true")
        .json(json!({"patched": "yes-durable"}))
        .document()
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let image = sim.crash(0, false);
    assert!(image.paths().iter().any(|p| image
        .read_file(p)
        .is_some_and(|b| b.windows(11).any(|w| w == b"yes-durable"))));
}

#[tokio::test(flavor = "current_thread")]
async fn the_fsync_wait_does_not_hold_the_runtime_thread() {
    let (sim, fx) = sim_fixture(Duration::from_millis(300));
    let insert = fx
        .call(Method::POST, "document", &["c"])
        .query("waitForSync", "true")
        .json(json!({"_key": "slow"}));
    let insert = tokio::spawn(insert.document());
    // On this one-thread runtime the insert runs now, until it waits for its fsync.
    tokio::task::yield_now().await;
    // The write is in (readable), not yet acknowledged, and this thread is free to serve a read.
    let read = fx
        .call(Method::GET, "document", &["c", "slow"])
        .document()
        .await;
    assert_eq!(read.status, 200);
    assert!(!insert.is_finished());
    assert!(!durable(&sim, "slow"));
    assert_eq!(insert.await.unwrap().status, 201);
    assert!(durable(&sim, "slow"));
}

#[tokio::test]
async fn a_failed_fsync_answers_the_storage_error_not_201() {
    let (sim, fx) = sim_fixture(Duration::ZERO);
    sim.fail_sync_after(0);
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("waitForSync", "true")
        .json(json!({"_key": "lost"}))
        .document()
        .await;
    // The syncer's failed fsync is reported as the I/O error; should the maintenance thread's
    // background fsync have failed first, the store is already read-only. Never 201.
    assert!(
        [(500, 1305), (503, 1004)]
            .contains(&(reply.status, reply.body["errorNum"].as_u64().unwrap())),
        "{reply:?}"
    );
    // The store is now read-only: single and multi writes are refused.
    fx.call(Method::POST, "document", &["c"])
        .query("waitForSync", "true")
        .json(json!({"_key": "after"}))
        .document()
        .await
        .assert_error(503, 1004);
    let (sim, fx) = sim_fixture(Duration::ZERO);
    // A first write starts the journal (with fsyncs of its own), so the fsync that fails is the
    // one covering the batch.
    fx.call(Method::POST, "document", &["c"])
        .json(json!({"_key": "first"}))
        .document()
        .await;
    sim.fail_sync_after(0);
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("waitForSync", "true")
        .json(json!([{"_key": "a"}, {"_key": "b"}]))
        .document()
        .await;
    assert!(
        [(500, 1305), (503, 1004)]
            .contains(&(reply.status, reply.body["errorNum"].as_u64().unwrap())),
        "{reply:?}"
    );
}
