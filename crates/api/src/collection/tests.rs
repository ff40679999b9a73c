//! Tests of `/_api/collection` and `/_api/key-generators` against a real catalog.

use http::Method;
use serde_json::{json, Value};

use crate::document::tests::support::{Fixture, Reply};

async fn create(fx: &Fixture, body: Value) -> Reply {
    fx.call(Method::POST, "collection", &[])
        .json(body)
        .collection()
        .await
}

async fn get(fx: &Fixture, suffix: &[&str]) -> Reply {
    fx.call(Method::GET, "collection", suffix)
        .collection()
        .await
}

async fn put(fx: &Fixture, suffix: &[&str], body: Value) -> Reply {
    fx.call(Method::PUT, "collection", suffix)
        .json(body)
        .collection()
        .await
}

async fn insert_docs(fx: &Fixture, collection: &str, docs: Value) {
    let reply = fx
        .call(Method::POST, "document", &[collection])
        .json(docs)
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert!(reply.header("x-arango-error-codes").is_none());
}

#[tokio::test]
async fn create_answers_200_with_full_properties() {
    let fx = Fixture::new();
    let reply = create(
        &fx,
        json!({"name": "c", "waitForSync": false, "isSystem": false,
               "keyOptions": {"type": "traditional", "allowUserKeys": true}, "type": 2,
               "numberOfShards": 1, "shardKeys": ["_key"], "replicationFactor": 1,
               "writeConcern": 1, "shardingStrategy": "", "smartJoinAttribute": ""}),
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let body = &reply.body;
    assert_eq!(
        (body["error"].clone(), body["code"].clone()),
        (json!(false), json!(200))
    );
    assert!(body.get("errorNum").is_none());
    assert_eq!(body["name"], "c");
    assert_eq!(body["type"], 2);
    assert_eq!(body["status"], 3);
    assert_eq!(body["statusString"], "loaded");
    assert!(body["id"].as_str().unwrap().parse::<u64>().is_ok());
    assert_eq!(body["journalSize"], 32 << 20);
    assert_eq!(body["keyOptions"]["type"], "traditional");
    assert_eq!(body["keyOptions"]["allowUserKeys"], true);
    assert_eq!(body["waitForSync"], false);
    assert_eq!(body["isSystem"], false);
    assert_eq!(body["writeConcern"], 1);
    assert_eq!(body["replicationFactor"], 1);
    assert_eq!(body["syncByRevision"], true);
}

#[tokio::test]
async fn create_takes_type_journal_size_and_key_options() {
    let fx = Fixture::new();
    let reply = create(
        &fx,
        json!({"name": "e", "type": 3, "waitForSync": true, "journalSize": 2 << 20,
               "schema": null, "cacheEnabled": true,
               "keyOptions": {"type": "autoincrement", "increment": 5, "offset": 10}}),
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body["type"], 3);
    assert_eq!(reply.body["waitForSync"], true);
    assert_eq!(reply.body["journalSize"], 2 << 20);
    assert_eq!(reply.body["schema"], Value::Null);
    assert_eq!(reply.body["cacheEnabled"], true);
    assert_eq!(reply.body["keyOptions"]["type"], "autoincrement");
    assert_eq!(reply.body["keyOptions"]["increment"], 5);
}

#[tokio::test]
async fn create_errors() {
    let fx = Fixture::new();
    let reply = create(&fx, json!({"name": "small", "journalSize": 1000})).await;
    let body = reply.assert_error(400, 400);
    assert_eq!(body["errorMessage"], "journalSize is too small");
    assert_eq!(get(&fx, &["small"]).await.status, 404);
    create(&fx, json!({"name": "c"})).await;
    create(&fx, json!({"name": "c"}))
        .await
        .assert_error(409, 1207);
    create(&fx, json!({"name": "bad/name"}))
        .await
        .assert_error(400, 1208);
    create(&fx, json!({"type": 2}))
        .await
        .assert_error(400, 1208);
    create(&fx, json!({"name": "t", "type": 7}))
        .await
        .assert_error(400, 1218);
    create(&fx, json!({"name": "k", "keyOptions": {"type": "nope"}}))
        .await
        .assert_error(400, 1232);
    let reply = fx
        .call(Method::POST, "collection", &[])
        .raw("{\"name\":")
        .collection()
        .await;
    reply.assert_error(400, 600);
}

#[tokio::test]
async fn list_and_get_and_exclude_system() {
    let fx = Fixture::new();
    create(&fx, json!({"name": "b"})).await;
    create(&fx, json!({"name": "a", "type": 3})).await;
    create(&fx, json!({"name": "_hidden", "isSystem": true})).await;
    let reply = get(&fx, &[]).await;
    assert_eq!(reply.status, 200);
    let names: Vec<&str> = reply.body["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"a") && names.contains(&"b") && names.contains(&"_hidden"));
    let entry = reply.body["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "a")
        .unwrap();
    let mut keys: Vec<&str> = entry
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "globallyUniqueId",
            "id",
            "isSystem",
            "name",
            "status",
            "type"
        ]
    );
    assert_eq!(entry["type"], 3);

    let reply = fx
        .call(Method::GET, "collection", &[])
        .query("excludeSystem", "true")
        .collection()
        .await;
    assert!(reply.body["result"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["isSystem"] == false));

    let reply = get(&fx, &["b"]).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body.as_object().unwrap().len(), 8);
    assert_eq!(reply.body["name"], "b");
    let id = reply.body["id"].as_str().unwrap().to_owned();
    assert_eq!(get(&fx, &[&id]).await.body["name"], "b");
    let body = get(&fx, &["nope"]).await;
    body.assert_error(404, 1203);
}

#[tokio::test]
async fn properties_change_and_journal_size_minimum() {
    let fx = Fixture::new();
    create(&fx, json!({"name": "c"})).await;
    let reply = put(
        &fx,
        &["c", "properties"],
        json!({"waitForSync": true, "journalSize": 4 << 20, "replicationFactor": 3,
               "writeConcern": 2, "computedValues": [], "cacheEnabled": true}),
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body["waitForSync"], true);
    assert_eq!(reply.body["journalSize"], 4 << 20);
    assert_eq!(reply.body["replicationFactor"], 1);
    let reply = get(&fx, &["c", "properties"]).await;
    assert_eq!(reply.body["waitForSync"], true);
    assert_eq!(reply.body["journalSize"], 4 << 20);
    assert_eq!(reply.body["cacheEnabled"], true);

    let reply = put(&fx, &["c", "properties"], json!({"journalSize": 1024})).await;
    let body = reply.assert_error(400, 400);
    assert_eq!(body["errorMessage"], "journalSize is too small");
    assert_eq!(
        get(&fx, &["c", "properties"]).await.body["journalSize"],
        4 << 20
    );
    let reply = put(&fx, &["c", "properties"], json!({"waitForSync": 1})).await;
    reply.assert_error(400, 400);
}

#[tokio::test]
async fn count_revision_and_checksum() {
    let fx = Fixture::new();
    create(&fx, json!({"name": "c"})).await;
    let reply = get(&fx, &["c", "checksum"]).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["checksum"], "0");
    assert!(reply.body["revision"].is_string());
    assert_eq!(get(&fx, &["c", "count"]).await.body["count"], 0);

    insert_docs(&fx, "c", json!([{"_key": "a", "x": 1}, {"_key": "b"}])).await;
    let reply = get(&fx, &["c", "count"]).await;
    assert_eq!(reply.body["count"], 2);
    assert_eq!(reply.body["journalSize"], 32 << 20);
    let revision = get(&fx, &["c", "revision"]).await.body["revision"].clone();
    assert!(revision.is_string() && revision != "0");

    let plain = get(&fx, &["c", "checksum"]).await.body["checksum"].clone();
    assert!(plain.as_str().unwrap().parse::<u64>().unwrap() != 0);
    let with_data = fx
        .call(Method::GET, "collection", &["c", "checksum"])
        .query("withRevision", "1")
        .query("withData", "1")
        .collection()
        .await;
    assert!(with_data.body["checksum"]
        .as_str()
        .unwrap()
        .parse::<u64>()
        .is_ok());
    assert_eq!(with_data.body.get("count"), None);
}

#[tokio::test]
async fn figures_have_mmfiles_shape() {
    let fx = Fixture::new();
    create(&fx, json!({"name": "c"})).await;
    insert_docs(
        &fx,
        "c",
        json!([{"_key": "a"}, {"_key": "b"}, {"_key": "c"}]),
    )
    .await;
    fx.call(Method::DELETE, "document", &["c", "a"])
        .document()
        .await;
    let reply = fx
        .call(Method::GET, "collection", &["c", "figures"])
        .query("details", "true")
        .collection()
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["count"], 2);
    assert_eq!(reply.body["journalSize"], 32 << 20);
    let figures = &reply.body["figures"];
    assert_eq!(figures["alive"]["count"], 2);
    assert!(figures["alive"]["size"].as_u64().unwrap() > 0);
    assert!(figures["dead"]["count"].is_u64());
    assert!(figures["dead"]["deletion"].as_u64().unwrap() >= 1);
    for part in ["datafiles", "journals", "compactors"] {
        assert!(figures[part]["count"].is_u64(), "{part}");
        assert!(figures[part]["fileSize"].is_u64(), "{part}");
    }
    assert_eq!(figures["journals"]["count"], 1);
    assert!(figures["indexes"]["count"].as_u64().unwrap() >= 1);
    assert!(figures["indexes"]["size"].is_u64());
    assert!(figures["documentsSize"].is_u64());
    assert_eq!(figures["cacheInUse"], false);
    assert!(figures["engine"]["indexes"].is_array());
}

#[tokio::test]
async fn truncate_load_unload_and_friends() {
    let fx = Fixture::new();
    create(&fx, json!({"name": "c"})).await;
    insert_docs(&fx, "c", json!([{}, {}, {}])).await;
    let reply = put(&fx, &["c", "load"], json!({})).await;
    assert_eq!(reply.body["count"], 3);
    assert_eq!(reply.body["status"], 3);
    let reply = put(&fx, &["c", "recalculateCount"], json!({})).await;
    assert_eq!(
        (reply.body["result"].clone(), reply.body["count"].clone()),
        (json!(true), json!(3))
    );
    let reply = put(&fx, &["c", "loadIndexesIntoMemory"], json!({})).await;
    assert_eq!(reply.body["result"], true);
    let reply = put(&fx, &["c", "unload"], json!({})).await;
    assert_eq!(
        (reply.status, reply.body["name"].clone()),
        (200, json!("c"))
    );
    let reply = fx
        .call(Method::PUT, "collection", &["c", "truncate"])
        .query("waitForSync", "true")
        .collection()
        .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.body["name"], "c");
    assert_eq!(get(&fx, &["c", "count"]).await.body["count"], 0);
    let reply = put(&fx, &["c", "compact"], json!({})).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(get(&fx, &["c", "checksum"]).await.body["checksum"], "0");
}

#[tokio::test]
async fn rename_including_to_the_same_name() {
    let fx = Fixture::new();
    create(&fx, json!({"name": "c"})).await;
    create(&fx, json!({"name": "taken"})).await;
    insert_docs(&fx, "c", json!([{"_key": "k"}])).await;
    let reply = put(&fx, &["c", "rename"], json!({"name": "c"})).await;
    assert_eq!(
        (reply.status, reply.body["name"].clone()),
        (200, json!("c"))
    );
    let reply = put(&fx, &["c", "rename"], json!({"name": "d"})).await;
    assert_eq!(
        (reply.status, reply.body["name"].clone()),
        (200, json!("d"))
    );
    get(&fx, &["c"]).await.assert_error(404, 1203);
    let doc = fx
        .call(Method::GET, "document", &["d", "k"])
        .document()
        .await;
    assert_eq!(doc.body["_id"], "d/k");
    put(&fx, &["d", "rename"], json!({"name": "taken"}))
        .await
        .assert_error(409, 1207);
    put(&fx, &["d", "rename"], json!({}))
        .await
        .assert_error(400, 1208);
}

#[tokio::test]
async fn drop_answers_the_id_and_guards_system_collections() {
    let fx = Fixture::new();
    let id = create(&fx, json!({"name": "c"})).await.body["id"].clone();
    let reply = fx
        .call(Method::DELETE, "collection", &["c"])
        .collection()
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, json!({"error": false, "code": 200, "id": id}));
    get(&fx, &["c"]).await.assert_error(404, 1203);
    fx.call(Method::DELETE, "collection", &["c"])
        .collection()
        .await
        .assert_error(404, 1203);

    create(&fx, json!({"name": "_sys", "isSystem": true})).await;
    let reply = fx
        .call(Method::DELETE, "collection", &["_sys"])
        .collection()
        .await;
    assert_eq!(reply.status, 403, "{:?}", reply.body);
    let reply = fx
        .call(Method::DELETE, "collection", &["_sys"])
        .query("isSystem", "true")
        .collection()
        .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn cluster_resources_unknown_resources_and_methods() {
    let fx = Fixture::new();
    create(&fx, json!({"name": "c"})).await;
    get(&fx, &["c", "shards"]).await.assert_error(501, 9);
    put(&fx, &["c", "responsibleShard"], json!({"_key": "a"}))
        .await
        .assert_error(501, 9);
    get(&fx, &["c", "nonsense"]).await.assert_error(404, 404);
    put(&fx, &["c", "nonsense"], json!({}))
        .await
        .assert_error(400, 400);
    get(&fx, &["missing", "count"])
        .await
        .assert_error(404, 1203);
    fx.call(Method::PATCH, "collection", &["c"])
        .collection()
        .await
        .assert_error(405, 405);
}

#[tokio::test]
async fn key_generators_lists_the_four_generators() {
    let fx = Fixture::new();
    let reply = fx
        .call(Method::GET, "key-generators", &[])
        .key_generators()
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.body,
        json!({"keyGenerators": ["padded", "autoincrement", "traditional", "uuid"]})
    );
    let reply = fx
        .call(Method::POST, "key-generators", &[])
        .key_generators()
        .await;
    reply.assert_error(405, 405);
}
