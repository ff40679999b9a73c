//! The collection, database, document and index endpoints over a cluster coordinator's
//! engine (a metadata store in memory, DB servers answered in process): the cluster
//! properties, `shards`, `responsibleShard`, create options, and documents routed to shards
//! from handlers that run on the blocking pool.

use http::Method;
use quince_cluster::coordinator::testing::TestCluster;
use quince_cluster::coordinator::Timeouts;
use serde_json::{json, Value};

use crate::document::tests::support::Fixture;

struct ClusterFixture {
    fx: Fixture,
    cluster: TestCluster,
}

impl std::ops::Deref for ClusterFixture {
    type Target = TestCluster;

    fn deref(&self) -> &TestCluster {
        &self.cluster
    }
}

/// An API over a coordinator with three DB servers.
fn cluster() -> ClusterFixture {
    let cluster = TestCluster::start(&["PRMR-a", "PRMR-b", "PRMR-c"], Timeouts::default());
    let fx = Fixture::over(cluster.coordinator.engine());
    ClusterFixture { fx, cluster }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collections_report_and_answer_their_shards() {
    let cluster = cluster();
    let fx = &cluster.fx;
    let reply = fx
        .call(Method::POST, "collection", &[])
        .json(
            json!({"name": "c", "numberOfShards": 3, "replicationFactor": 2,
                     "shardKeys": ["_key"], "minReplicationFactor": 2}),
        )
        .collection()
        .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body["numberOfShards"], 3);
    assert_eq!(reply.body["replicationFactor"], 2);
    assert_eq!(reply.body["writeConcern"], 2);
    assert_eq!(reply.body["minReplicationFactor"], 2);
    assert_eq!(reply.body["shardingStrategy"], "hash");
    assert_eq!(reply.body["shardKeys"], json!(["_key"]));

    let too_many = fx
        .call(Method::POST, "collection", &[])
        .json(json!({"name": "d", "numberOfShards": 5000}))
        .collection()
        .await;
    too_many.assert_error(400, 1450);
    let too_wide = fx
        .call(Method::POST, "collection", &[])
        .json(json!({"name": "d", "replicationFactor": 4}))
        .collection()
        .await;
    assert_eq!(too_wide.body["errorNum"], 1487);
    let waived = fx
        .call(Method::POST, "collection", &[])
        .query("enforceReplicationFactor", "false")
        .query("waitForSyncReplication", "false")
        .json(json!({"name": "d", "replicationFactor": 4}))
        .collection()
        .await;
    assert_eq!(waived.status, 200, "{:?}", waived.body);

    let changed = fx
        .call(Method::PUT, "collection", &["c", "properties"])
        .json(json!({"writeConcern": 1, "waitForSync": true}))
        .collection()
        .await;
    assert_eq!(changed.status, 200, "{:?}", changed.body);
    assert_eq!(changed.body["writeConcern"], 1);
    assert_eq!(changed.body["waitForSync"], true);
    fx.call(Method::PUT, "collection", &["c", "properties"])
        .json(json!({"writeConcern": 3}))
        .collection()
        .await
        .assert_error(400, 10);
    let raised = fx
        .call(Method::PUT, "collection", &["c", "properties"])
        .json(json!({"replicationFactor": 3}))
        .collection()
        .await;
    assert_eq!(raised.status, 200, "{:?}", raised.body);
    assert_eq!(raised.body["replicationFactor"], 3);
    let beyond = fx
        .call(Method::PUT, "collection", &["c", "properties"])
        .json(json!({"replicationFactor": 4}))
        .collection()
        .await;
    assert_eq!(beyond.body["errorNum"], 1487, "{:?}", beyond.body);

    let shards = fx
        .call(Method::GET, "collection", &["c", "shards"])
        .collection()
        .await;
    assert_eq!(shards.status, 200);
    assert_eq!(shards.body["shards"].as_array().unwrap().len(), 3);
    let details = fx
        .call(Method::GET, "collection", &["c", "shards"])
        .query("details", "true")
        .collection()
        .await;
    let placed = details.body["shards"].as_object().unwrap();
    assert!(placed
        .values()
        .all(|servers| servers.as_array().unwrap().len() == 2));

    // Documents, single and many, land where responsibleShard says.
    let one = fx
        .call(Method::POST, "document", &["c"])
        .json(json!({"_key": "k1", "a": 1}))
        .document()
        .await;
    assert_eq!(one.status, 201, "waitForSync is on: {:?}", one.body);
    assert_eq!(one.body["_id"], "c/k1");
    let many = fx
        .call(Method::POST, "document", &["c"])
        .json(json!([{"a": 2}, {"a": 3}, {"_key": "k1"}]))
        .document()
        .await;
    assert_eq!(
        many.body[0]["_id"].as_str().unwrap().split('/').next(),
        Some("c")
    );
    assert_eq!(many.body[2]["errorNum"], 1210);
    let read = fx
        .call(Method::GET, "document", &["c", "k1"])
        .document()
        .await;
    assert_eq!(read.status, 200);
    assert_eq!(read.body["_id"], "c/k1");
    let responsible = fx
        .call(Method::PUT, "collection", &["c", "responsibleShard"])
        .json(json!({"_key": "k1"}))
        .collection()
        .await;
    assert_eq!(responsible.status, 200, "{:?}", responsible.body);
    let shard = responsible.body["shardId"].as_str().unwrap().to_string();
    let leader = placed[&shard][0].as_str().unwrap();
    let local = cluster.servers.engine(leader).database("_system").unwrap();
    assert!(local.collection(&shard).unwrap().read("k1").is_ok());
    let count = fx
        .call(Method::GET, "collection", &["c", "count"])
        .collection()
        .await;
    assert_eq!(count.body["count"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn databases_take_and_report_cluster_options() {
    let cluster = cluster();
    let fx = &cluster.fx;
    let created = fx
        .call(Method::POST, "database", &[])
        .json(json!({"name": "one", "options": {"sharding": "single", "replicationFactor": 2}}))
        .database()
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let current = fx
        .call(Method::GET, "database", &["current"])
        .database()
        .await;
    let result: &Value = &current.body["result"];
    assert_eq!(result["name"], "_system");
    assert_eq!(result["sharding"], "");
    assert_eq!(result["replicationFactor"], 1);
    assert_eq!(result["writeConcern"], 1);
    let engine = cluster.coordinator.engine();
    let one = engine.database("one").unwrap();
    assert_eq!(one.cluster_properties().unwrap()["sharding"], "single");
    assert_eq!(one.cluster_properties().unwrap()["replicationFactor"], 2);
}
