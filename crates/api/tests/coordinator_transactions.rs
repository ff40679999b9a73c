//! Stream transactions through a coordinator whose DB servers answer with Quince's own api
//! (each over a local engine on a temporary directory; the requests travel as HTTP requests
//! into `Api::serve`, without sockets): the coordinator begins a transaction on every leader of
//! the declared collections' shards, routes the transaction's operations to them with their
//! ids, and commits or aborts them all; an all-or-nothing import (`complete=true`) through the
//! api over the coordinator runs in such a transaction.

use crate::coordinator_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use quince_api::Api;
use quince_cluster::layout::{encode, Layout, ShardPlan};
use quince_db::Catalog;
use quince_ops::{
    DatabaseOps, TransactionOptions, TransactionStatus, WriteKind, WriteOptions, WriteRequest,
};
use serde_json::{json, Value};

use coordinator_support::{api_config, call, create, runtime, CoordinatorOverApi, IDS};

/// Running transactions on every DB server's `_system`.
fn running_on_servers(catalogs: &[Arc<Catalog>]) -> usize {
    catalogs
        .iter()
        .map(|c| c.database("_system").unwrap().running_transactions().len())
        .sum()
}

#[test]
fn coordinator_transactions_commit_and_abort_on_every_leader_and_imports_are_all_or_nothing() {
    let cluster = CoordinatorOverApi::start();
    let catalogs = &cluster.catalogs;
    let coordinator = &cluster.coordinator;
    let engine = coordinator.engine();
    let system: Arc<dyn DatabaseOps> = engine.database("_system").unwrap();
    let collection = system
        .create_collection_with(create("c"), &json!({"numberOfShards": 3}))
        .unwrap();
    system
        .create_collection_with(create("d"), &json!({"numberOfShards": 1}))
        .unwrap();

    // Commit: nothing is visible before, everything after; the id is a cluster-wide number.
    let trx = system
        .begin_transaction(TransactionOptions {
            write: vec!["c".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let id = trx.id();
    assert!(id.parse::<u64>().is_ok(), "{id}");
    let running: Vec<String> = system
        .running_transactions()
        .iter()
        .map(|t| t.id())
        .collect();
    assert_eq!(running, vec![id.clone()]);
    assert_eq!(running_on_servers(catalogs), 3, "one part per leader");
    let inside = trx.database().collection("c").unwrap();
    let items: Vec<Value> = (0..30)
        .map(|n| json!({"_key": format!("k{n}"), "n": n}))
        .collect();
    let written = inside
        .write(WriteRequest::new(
            WriteKind::Insert,
            items,
            WriteOptions::default(),
        ))
        .settle()
        .unwrap();
    assert!(written.iter().all(Result::is_ok));
    assert_eq!(
        inside.read("k7").unwrap().rev,
        written[7].as_ref().unwrap().rev
    );
    assert_eq!(inside.count(), 30, "the transaction sees its writes");
    assert_eq!(collection.count(), 0, "nobody else does");
    assert!(collection.read("k7").is_err());
    let undeclared = trx
        .database()
        .collection("d")
        .unwrap()
        .write(WriteRequest::new(
            WriteKind::Insert,
            vec![json!({})],
            WriteOptions::default(),
        ))
        .settle()
        .unwrap();
    assert_eq!(undeclared[0].as_ref().unwrap_err().num(), 1652);
    let found = system.transaction(&id).unwrap();
    found.commit().unwrap();
    assert_eq!(trx.status(), TransactionStatus::Committed);
    assert_eq!(collection.count(), 30);
    assert!(trx.commit().is_ok(), "committing again answers the status");
    assert_eq!(trx.abort().unwrap_err().num(), 1653);
    assert!(system.running_transactions().is_empty());
    assert_eq!(running_on_servers(catalogs), 0);

    // Abort: nothing stays, on any leader.
    let trx = system
        .begin_transaction(TransactionOptions {
            write: vec!["c".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let inside = trx.database().collection("c").unwrap();
    let items: Vec<Value> = (0..30).map(|n| json!({"_key": format!("a{n}")})).collect();
    inside
        .write(WriteRequest::new(
            WriteKind::Insert,
            items,
            WriteOptions::default(),
        ))
        .settle()
        .unwrap();
    trx.abort().unwrap();
    assert_eq!(trx.status(), TransactionStatus::Aborted);
    assert_eq!(collection.count(), 30);
    assert_eq!(running_on_servers(catalogs), 0);
    assert_eq!(trx.commit().unwrap_err().num(), 1653);
    assert_eq!(system.transaction("12345").err().unwrap().num(), 1655);

    // Imports with complete=true through the api over the coordinator.
    let coordinator_api = Api::new(engine.clone(), api_config());
    let client = runtime();
    let import = |body: &str| {
        let request = http::Request::builder()
            .method(http::Method::POST)
            .uri("/_db/_system/_api/import?collection=c&type=documents&complete=true")
            .header("content-type", "application/json")
            .body(Full::new(Bytes::copy_from_slice(body.as_bytes())))
            .unwrap();
        let (status, body) = call(&client, &coordinator_api, request);
        (status, serde_json::from_slice::<Value>(&body).unwrap())
    };
    let lines: String = (0..20)
        .map(|n| format!("{{\"_key\":\"i{n}\"}}\n"))
        .collect();
    let (status, body) = import(&lines);
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["created"], 20);
    assert_eq!(collection.count(), 50);
    // One document clashes with a stored key: nothing of the import stays, on any shard.
    let mut lines: String = (0..20)
        .map(|n| format!("{{\"_key\":\"j{n}\"}}\n"))
        .collect();
    lines.push_str("{\"_key\":\"k3\"}\n");
    let (status, body) = import(&lines);
    assert!(status >= 400, "{status} {body}");
    assert_eq!(body["errorNum"], 1210, "{body}");
    assert_eq!(collection.count(), 50);
    assert!(collection.read("j0").is_err());
    assert_eq!(running_on_servers(catalogs), 0);

    // A leader change during a transaction aborts it on every leader, with the honest error.
    let trx = system
        .begin_transaction(TransactionOptions {
            write: vec!["c".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let inside = trx.database().collection("c").unwrap();
    let entry = coordinator.catalog().collection("_system", "c").unwrap();
    let moved = entry.plan.shards[0].clone();
    let before = coordinator.catalog().shard_plans[&moved].clone();
    let new_leader = IDS
        .iter()
        .find(|id| **id != before.leader)
        .unwrap()
        .to_string();
    let plan = ShardPlan {
        leader: new_leader,
        followers: vec![before.leader.clone()],
        epoch: before.epoch + 1,
    };
    cluster
        .store
        .put(
            &Layout::default().shard_plan("_system", entry.plan.id, &moved),
            &encode(&plan),
        )
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while coordinator.catalog().shard_plans[&moved].epoch == before.epoch {
        assert!(
            Instant::now() < deadline,
            "the coordinator sees the new leader"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let items: Vec<Value> = (0..30).map(|n| json!({"_key": format!("m{n}")})).collect();
    let results = inside
        .write(WriteRequest::new(
            WriteKind::Insert,
            items,
            WriteOptions::default(),
        ))
        .settle()
        .unwrap();
    let refused: Vec<u32> = results
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| e.num()))
        .collect();
    assert!(
        !refused.is_empty() && refused.iter().all(|n| *n == 1496 || *n == 1654),
        "{refused:?}"
    );
    assert_eq!(trx.status(), TransactionStatus::Aborted);
    assert_eq!(running_on_servers(catalogs), 0, "every part was aborted");
    assert_eq!(trx.commit().unwrap_err().num(), 1653);
    // (The count is not checked here: these DB servers do not replicate, so the new leader's
    // copy of the moved shard is empty.)

    cluster.stop();
}
