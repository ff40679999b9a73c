//! Single-document reads, inserts and the request-shape errors.

use http::Method;
use quince_db::CollectionType;
use serde_json::json;

use super::support::{Fixture, Reply};

/// Inserts `{"_key": key, …body}` into `c` and returns the reply.
async fn insert(fx: &Fixture, collection: &str, body: serde_json::Value) -> Reply {
    fx.call(Method::POST, "document", &[collection])
        .json(body)
        .document()
        .await
}

async fn insert_answers_202_with_meta_etag_and_location(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    let reply = insert(&fx, "c", json!({"_key": "k1", "a": 1})).await;
    assert_eq!(reply.status, 202);
    let rev = reply.body["_rev"].as_str().unwrap().to_owned();
    assert_eq!(reply.body["_id"], "c/k1");
    assert_eq!(reply.body["_key"], "k1");
    assert_eq!(reply.body.as_object().unwrap().len(), 3, "{:?}", reply.body);
    assert_eq!(reply.header("etag"), Some(format!("\"{rev}\"").as_str()));
    assert_eq!(
        reply.header("location"),
        Some("/_db/_system/_api/document/c/k1")
    );
    assert!(reply.header("x-arango-error-codes").is_none());
}

async fn insert_with_wait_for_sync_answers_201(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("waitForSync", "true")
        .json(json!({"a": 1}))
        .document()
        .await;
    assert_eq!(reply.status, 201);
    assert!(reply.body["_key"].is_string());
}

async fn legacy_collection_parameter_inserts(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    let reply = fx
        .call(Method::POST, "document", &[])
        .query("collection", "c")
        .json(json!({"_key": "legacy"}))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.body["_id"], "c/legacy");
    let missing = fx
        .call(Method::POST, "document", &[])
        .json(json!({}))
        .document()
        .await;
    missing.assert_error(400, 1204);
}

async fn read_returns_the_stored_document_and_its_etag(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    let rev = insert(&fx, "c", json!({"_key": "k", "a": [1, 2]}))
        .await
        .body["_rev"]
        .clone();
    let reply = fx
        .call(Method::GET, "document", &["c", "k"])
        .document()
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["_id"], "c/k");
    assert_eq!(reply.body["_rev"], rev);
    assert_eq!(reply.body["a"], json!([1, 2]));
    assert_eq!(
        reply.header("etag"),
        Some(format!("\"{}\"", rev.as_str().unwrap()).as_str())
    );
}

async fn missing_document_and_missing_collection_are_404(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    let reply = fx
        .call(Method::GET, "document", &["c", "nope"])
        .document()
        .await;
    reply.assert_error(404, 1202);
    let reply = fx
        .call(Method::GET, "document", &["nocoll", "k"])
        .document()
        .await;
    let body = reply.assert_error(404, 1203);
    assert_eq!(body["errorMessage"], "collection or view not found");
    let reply = insert(&fx, "nocoll", json!({})).await;
    reply.assert_error(404, 1203);
}

async fn if_none_match_and_if_match_on_get(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    let rev = insert(&fx, "c", json!({"_key": "k"})).await.body["_rev"]
        .as_str()
        .unwrap()
        .to_owned();
    let quoted = format!("\"{rev}\"");
    for value in [rev.as_str(), quoted.as_str()] {
        let reply = fx
            .call(Method::GET, "document", &["c", "k"])
            .header("if-none-match", value)
            .document()
            .await;
        assert_eq!(reply.status, 304);
        assert!(reply.raw.is_empty());
        let reply = fx
            .call(Method::GET, "document", &["c", "k"])
            .header("if-match", value)
            .document()
            .await;
        assert_eq!(reply.status, 200);
    }
    let reply = fx
        .call(Method::GET, "document", &["c", "k"])
        .header("if-none-match", "_other")
        .document()
        .await;
    assert_eq!(reply.status, 200);
    let reply = fx
        .call(Method::GET, "document", &["c", "k"])
        .header("if-match", &format!("{rev}0"))
        .document()
        .await;
    let body = reply.assert_error(412, 1200);
    assert_eq!(body["_id"], "c/k");
    assert_eq!(body["_key"], "k");
    assert_eq!(body["_rev"], rev.as_str());
}

async fn head_answers_like_get_without_a_body(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    let rev = insert(&fx, "c", json!({"_key": "k"})).await.body["_rev"]
        .as_str()
        .unwrap()
        .to_owned();
    let etag = format!("\"{rev}\"");
    let reply = fx
        .call(Method::HEAD, "document", &["c", "k"])
        .document()
        .await;
    assert_eq!((reply.status, reply.raw.len()), (200, 0));
    assert_eq!(reply.header("etag"), Some(etag.as_str()));
    let reply = fx
        .call(Method::HEAD, "document", &["c", "k"])
        .header("if-match", "_wrong")
        .document()
        .await;
    assert_eq!((reply.status, reply.raw.len()), (412, 0));
    assert_eq!(reply.header("etag"), Some(etag.as_str()));
    let reply = fx
        .call(Method::HEAD, "document", &["c", "k"])
        .header("if-none-match", &etag)
        .document()
        .await;
    assert_eq!((reply.status, reply.raw.len()), (304, 0));
    for suffix in [["c", "missing"], ["missing", "k"]] {
        let reply = fx.call(Method::HEAD, "document", &suffix).document().await;
        assert_eq!((reply.status, reply.raw.len()), (404, 0));
    }
}

async fn body_errors_come_before_collection_errors(fx: Fixture) {
    let reply = fx
        .call(Method::POST, "document", &["nocoll"])
        .raw("{\"a\":")
        .document()
        .await;
    reply.assert_error(400, 600);
    let reply = fx
        .call(Method::POST, "document", &["nocoll"])
        .raw("{\"a\":1,\"a\":2}")
        .document()
        .await;
    reply.assert_error(400, 600);
    let reply = fx
        .call(Method::POST, "document", &["nocoll"])
        .json(json!(12))
        .document()
        .await;
    reply.assert_error(400, 1227);
}

async fn unique_violation_body_has_exactly_the_error_keys(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    insert(&fx, "c", json!({"_key": "k"})).await;
    let reply = insert(&fx, "c", json!({"_key": "k"})).await;
    let body = reply.assert_error(409, 1210);
    assert_eq!(body.as_object().unwrap().len(), 4, "{body:?}");
    assert!(body["errorMessage"]
        .as_str()
        .unwrap()
        .starts_with("unique constraint violated"));
}

async fn bad_keys_are_rejected(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    for key in [json!("a/b"), json!("with space"), json!(12), json!("")] {
        let reply = insert(&fx, "c", json!({ "_key": key })).await;
        reply.assert_error(400, 1221);
    }
}

async fn wrong_shapes_and_methods_are_rejected(fx: Fixture) {
    fx.collection("c", CollectionType::Document);
    let reply = fx.call(Method::GET, "document", &["c"]).document().await;
    reply.assert_error(400, 400);
    let reply = fx
        .call(Method::POST, "document", &["c", "k"])
        .json(json!({}))
        .document()
        .await;
    reply.assert_error(400, 601);
    let reply = fx
        .call(Method::OPTIONS, "document", &["c", "k"])
        .document()
        .await;
    reply.assert_error(405, 405);
    let reply = fx
        .call(Method::PUT, "document", &["c", "k"])
        .json(json!([{}]))
        .document()
        .await;
    reply.assert_error(400, 1227);
    let reply = fx
        .call(Method::PATCH, "document", &["c"])
        .json(json!({"_key": "k"}))
        .document()
        .await;
    reply.assert_error(400, 1227);
    let reply = fx
        .call(Method::PUT, "document", &[])
        .json(json!({}))
        .document()
        .await;
    reply.assert_error(400, 400);
}

async fn edge_documents_need_from_and_to(fx: Fixture) {
    fx.collection("e", CollectionType::Edge);
    let reply = insert(&fx, "e", json!({"_key": "x"})).await;
    reply.assert_error(400, 1233);
    let reply = insert(&fx, "e", json!({"_from": "v/1", "_to": "v/2"})).await;
    assert_eq!(reply.status, 202, "{:?}", reply.body);
    let key = reply.body["_key"].as_str().unwrap();
    let read = fx
        .call(Method::GET, "document", &["e", key])
        .document()
        .await;
    assert_eq!(read.body["_from"], "v/1");
    assert_eq!(read.body["_to"], "v/2");
}

#[test]
fn the_family_future_can_move_between_threads() {
    fn assert_send<T: Send>(_: &T) {}
    let fx = Fixture::new();
    let call = fx.call(Method::GET, "document", &["c", "k"]);
    let future = crate::document::handle(call.request);
    assert_send(&future);
}

on_every_engine!(
    insert_answers_202_with_meta_etag_and_location,
    insert_with_wait_for_sync_answers_201,
    legacy_collection_parameter_inserts,
    read_returns_the_stored_document_and_its_etag,
    missing_document_and_missing_collection_are_404,
    if_none_match_and_if_match_on_get,
    head_answers_like_get_without_a_body,
    body_errors_come_before_collection_errors,
    unique_violation_body_has_exactly_the_error_keys,
    bad_keys_are_rejected,
    wrong_shapes_and_methods_are_rejected,
    edge_documents_need_from_and_to,
);
