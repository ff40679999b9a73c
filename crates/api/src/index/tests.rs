//! Tests of `/_api/index` against the local engine and the fake: status codes, bodies and
//! errors as ArangoDB answers them.

use http::Method;
use quince_ops::CollectionType;
use serde_json::{json, Value};

use crate::document::tests::support::{Fixture, Reply};

fn fixtures() -> [Fixture; 2] {
    [Fixture::new(), Fixture::fake()]
}

async fn create(fx: &Fixture, collection: &str, body: Value) -> Reply {
    fx.call(Method::POST, "index", &[])
        .query("collection", collection)
        .json(body)
        .index()
        .await
}

async fn list(fx: &Fixture, collection: &str) -> Reply {
    fx.call(Method::GET, "index", &[])
        .query("collection", collection)
        .index()
        .await
}

#[tokio::test]
async fn create_answers_201_then_200_for_the_same_definition() {
    for fx in fixtures() {
        fx.collection("c", CollectionType::Document);
        let body = json!({"type": "hash", "fields": ["a", "b"], "unique": true});
        let first = create(&fx, "c", body.clone()).await;
        assert_eq!(first.status, 201, "{}", first.body);
        let b = &first.body;
        assert_eq!(
            (b["error"].clone(), b["code"].clone()),
            (json!(false), json!(201))
        );
        assert_eq!(b["isNewlyCreated"], true);
        assert_eq!(b["type"], "persistent");
        assert_eq!(b["fields"], json!(["a", "b"]));
        assert_eq!(
            (b["unique"].clone(), b["sparse"].clone()),
            (json!(true), json!(false))
        );
        assert_eq!(b["deduplicate"], true);
        assert_eq!(b["selectivityEstimate"], 1);
        let id = b["id"].as_str().unwrap();
        let number = id.strip_prefix("c/").unwrap();
        assert_eq!(b["name"], format!("idx_{number}"));

        let again = create(&fx, "c", body).await;
        assert_eq!(again.status, 200);
        assert_eq!(again.body["isNewlyCreated"], false);
        assert_eq!(again.body["code"], 200);
        assert_eq!(again.body["id"], id);
    }
}

#[tokio::test]
async fn list_has_primary_first_and_identifiers() {
    for fx in fixtures() {
        fx.collection("c", CollectionType::Document);
        create(
            &fx,
            "c",
            json!({"type": "persistent", "fields": ["x"], "name": "byX"}),
        )
        .await;
        let reply = list(&fx, "c").await;
        assert_eq!(reply.status, 200);
        let indexes = reply.body["indexes"].as_array().unwrap();
        assert_eq!(indexes.len(), 2);
        assert_eq!(
            indexes[0],
            json!({"fields": ["_key"], "id": "c/0", "name": "primary", "selectivityEstimate": 1,
                   "sparse": false, "type": "primary", "unique": true})
        );
        assert_eq!(indexes[1]["name"], "byX");
        let identifiers = reply.body["identifiers"].as_object().unwrap();
        assert_eq!(identifiers["c/0"], indexes[0]);
        assert_eq!(identifiers[indexes[1]["id"].as_str().unwrap()], indexes[1]);
        assert_eq!(reply.body["error"], false);
        assert_eq!(reply.body["code"], 200);
    }
}

#[tokio::test]
async fn read_by_id_or_name_and_drop() {
    for fx in fixtures() {
        fx.collection("c", CollectionType::Document);
        let made = create(
            &fx,
            "c",
            json!({"type": "skiplist", "fields": ["x"], "name": "n"}),
        )
        .await;
        let id = made.body["id"].as_str().unwrap().to_owned();
        let number = id.strip_prefix("c/").unwrap().to_owned();
        for handle in [number.as_str(), "n"] {
            let reply = fx.call(Method::GET, "index", &["c", handle]).index().await;
            assert_eq!(reply.status, 200);
            assert_eq!(reply.body["id"], id);
            assert_eq!(reply.body["code"], 200);
        }
        let primary = fx.call(Method::GET, "index", &["c", "0"]).index().await;
        assert_eq!(primary.body["type"], "primary");
        let dropped = fx.call(Method::DELETE, "index", &["c", "n"]).index().await;
        assert_eq!(dropped.status, 200);
        assert_eq!(
            dropped.body,
            json!({"id": "c/n", "error": false, "code": 200})
        );
        fx.call(Method::GET, "index", &["c", "n"])
            .index()
            .await
            .assert_error(404, 1212);
        fx.call(Method::DELETE, "index", &["c", &number])
            .index()
            .await
            .assert_error(404, 1212);
        fx.call(Method::DELETE, "index", &["c", "0"])
            .index()
            .await
            .assert_error(404, 1212);
        fx.call(Method::DELETE, "index", &["c", "a\u{1}b"])
            .index()
            .await
            .assert_error(400, 1214);
        assert_eq!(
            list(&fx, "c").await.body["indexes"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
}

#[tokio::test]
async fn errors_follow_arangodb() {
    for fx in fixtures() {
        fx.collection("c", CollectionType::Document);
        // No or unknown collection: 404/1203.
        fx.call(Method::POST, "index", &[])
            .json(json!({"type": "persistent", "fields": ["a"]}))
            .index()
            .await
            .assert_error(404, 1203);
        create(&fx, "nope", json!({"type": "persistent", "fields": ["a"]}))
            .await
            .assert_error(404, 1203);
        list(&fx, "nope").await.assert_error(404, 1203);
        fx.call(Method::GET, "index", &[])
            .index()
            .await
            .assert_error(404, 1203);
        // Bad definitions: 400/10, the message naming the type.
        let mdi = create(&fx, "c", json!({"type": "mdi", "fields": ["a"]})).await;
        let error = mdi.assert_error(400, 10);
        assert!(error["errorMessage"].as_str().unwrap().contains("'mdi'"));
        create(&fx, "c", json!({"type": "geo", "fields": ["a", "b", "c"]}))
            .await
            .assert_error(400, 10);
        create(&fx, "c", json!({"fields": ["a"]}))
            .await
            .assert_error(400, 10);
        create(&fx, "c", json!({"type": "ttl", "fields": ["a"]}))
            .await
            .assert_error(400, 10);
        // A taken name with another definition: 400/1207 (ArangoDB answers 400 for it).
        create(
            &fx,
            "c",
            json!({"type": "persistent", "fields": ["a"], "name": "n"}),
        )
        .await;
        create(
            &fx,
            "c",
            json!({"type": "persistent", "fields": ["b"], "name": "n"}),
        )
        .await
        .assert_error(400, 1207);
        // Paths: a suffix on POST, a wrong shape on DELETE and GET, another method.
        fx.call(Method::POST, "index", &["c"])
            .query("collection", "c")
            .json(json!({"type": "persistent", "fields": ["a"]}))
            .index()
            .await
            .assert_error(400, 400);
        fx.call(Method::DELETE, "index", &["c"])
            .index()
            .await
            .assert_error(400, 400);
        fx.call(Method::GET, "index", &["c", "1", "2"])
            .index()
            .await
            .assert_error(400, 400);
        fx.call(Method::PUT, "index", &[])
            .index()
            .await
            .assert_error(405, 405);
    }
}

#[tokio::test]
async fn a_unique_index_over_clashing_documents_is_400_1210_and_absent() {
    for fx in fixtures() {
        fx.collection("c", CollectionType::Document);
        let docs = json!([{"_key": "a", "u": 1}, {"_key": "b", "u": 1}]);
        let wrote = fx
            .call(Method::POST, "document", &["c"])
            .json(docs)
            .document()
            .await;
        assert_eq!(wrote.status, 202);
        let reply = create(
            &fx,
            "c",
            json!({"type": "persistent", "fields": ["u"], "unique": true}),
        )
        .await;
        let error = reply.assert_error(400, 1210);
        let message = error["errorMessage"].as_str().unwrap();
        assert!(
            message.starts_with("unique constraint violated - in index idx_"),
            "{message}"
        );
        assert!(
            message.ends_with("of type persistent over 'u'; conflicting key: b"),
            "{message}"
        );
        assert_eq!(
            list(&fx, "c").await.body["indexes"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
}

#[tokio::test]
async fn unique_violations_of_document_writes_are_409_and_per_item() {
    for fx in fixtures() {
        fx.collection("c", CollectionType::Document);
        create(
            &fx,
            "c",
            json!({"type": "persistent", "fields": ["u"], "unique": true}),
        )
        .await;
        let one = fx
            .call(Method::POST, "document", &["c"])
            .json(json!({"_key": "a", "u": 1}))
            .document()
            .await;
        assert_eq!(one.status, 202);
        fx.call(Method::POST, "document", &["c"])
            .json(json!({"_key": "b", "u": 1}))
            .document()
            .await
            .assert_error(409, 1210);
        let many = fx
            .call(Method::POST, "document", &["c"])
            .json(json!([{"_key": "c", "u": 2}, {"_key": "d", "u": 2}, {"_key": "e", "u": 1}]))
            .document()
            .await;
        assert_eq!(many.status, 202);
        assert_eq!(many.header("x-arango-error-codes"), Some("{\"1210\":2}"));
        assert_eq!(many.body[1]["errorNum"], 1210);
        assert_eq!(many.body[0]["_key"], "c");
    }
}
