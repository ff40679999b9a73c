//! Single-document replace, update and remove, overwrite modes, `silent` and preconditions.

use http::Method;
use quince_db::{CollectionType, PropertiesUpdate};
use serde_json::{json, Value};

use super::support::{Fixture, Reply};

/// A fixture with collection `c` holding `{"_key":"k","a":1,"o":{"x":1,"y":2}}`; returns its rev.
async fn fixture_with_doc() -> (Fixture, String) {
    let fx = Fixture::new();
    fx.collection("c", CollectionType::Document);
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .json(json!({"_key": "k", "a": 1, "o": {"x": 1, "y": 2}}))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    let rev = reply.body["_rev"].as_str().unwrap().to_owned();
    (fx, rev)
}

async fn read(fx: &Fixture, key: &str) -> Reply {
    fx.call(Method::GET, "document", &["c", key])
        .document()
        .await
}

#[tokio::test]
async fn replace_answers_meta_with_old_rev_and_url_key_wins() {
    let (fx, rev) = fixture_with_doc().await;
    let reply = fx
        .call(Method::PUT, "document", &["c", "k"])
        .query("returnNew", "true")
        .query("returnOld", "1")
        .json(json!({"_key": "other", "b": 2}))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.body["_id"], "c/k");
    assert_eq!(reply.body["_oldRev"], rev.as_str());
    assert_eq!(reply.body["new"]["b"], 2);
    assert!(reply.body["new"].get("a").is_none());
    assert_eq!(reply.body["old"]["a"], 1);
    assert_eq!(
        reply.header("location"),
        Some("/_db/_system/_api/document/c/k")
    );
    let new_rev = reply.body["_rev"].as_str().unwrap();
    assert_ne!(new_rev, rev);
    assert_eq!(
        reply.header("etag"),
        Some(format!("\"{new_rev}\"").as_str())
    );
    assert_eq!(read(&fx, "other").await.status, 404);
}

#[tokio::test]
async fn update_merges_and_honours_keep_null_and_merge_objects() {
    let (fx, rev) = fixture_with_doc().await;
    let reply = fx
        .call(Method::PATCH, "document", &["c", "k"])
        .json(json!({"b": 2, "o": {"z": 3}}))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.body["_oldRev"], rev.as_str());
    let doc = read(&fx, "k").await.body;
    assert_eq!((doc["a"].clone(), doc["b"].clone()), (json!(1), json!(2)));
    assert_eq!(doc["o"], json!({"x": 1, "y": 2, "z": 3}));

    fx.call(Method::PATCH, "document", &["c", "k"])
        .query("keepNull", "false")
        .query("mergeObjects", "false")
        .json(json!({"a": null, "o": {"w": 4}}))
        .document()
        .await;
    let doc = read(&fx, "k").await.body;
    assert!(doc.get("a").is_none(), "{doc:?}");
    assert_eq!(doc["o"], json!({"w": 4}));

    fx.call(Method::PATCH, "document", &["c", "k"])
        .json(json!({"n": null}))
        .document()
        .await;
    assert_eq!(read(&fx, "k").await.body["n"], Value::Null);
    assert!(read(&fx, "k").await.body.get("n").is_some());
}

#[tokio::test]
async fn replace_and_update_of_a_missing_document_are_404() {
    let (fx, _) = fixture_with_doc().await;
    for method in [Method::PUT, Method::PATCH] {
        let reply = fx
            .call(method, "document", &["c", "missing"])
            .json(json!({}))
            .document()
            .await;
        reply.assert_error(404, 1202);
    }
}

#[tokio::test]
async fn revision_preconditions_on_writes() {
    let (fx, rev) = fixture_with_doc().await;
    let wrong = format!("{rev}0");
    // If-Match with another revision: 412 naming the current one.
    let reply = fx
        .call(Method::PATCH, "document", &["c", "k"])
        .header("if-match", &wrong)
        .json(json!({"b": 1}))
        .document()
        .await;
    let body = reply.assert_error(412, 1200);
    assert_eq!(body["_rev"], rev.as_str());
    // A `_rev` in the body counts only with ignoreRevs=false.
    let reply = fx
        .call(Method::PUT, "document", &["c", "k"])
        .query("ignoreRevs", "false")
        .json(json!({"_rev": wrong, "b": 1}))
        .document()
        .await;
    reply.assert_error(412, 1200);
    let reply = fx
        .call(Method::PUT, "document", &["c", "k"])
        .json(json!({"_rev": wrong, "b": 1}))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    let current = reply.body["_rev"].as_str().unwrap().to_owned();
    // The right revision in If-Match (quoted) passes even if the body's `_rev` is wrong.
    let reply = fx
        .call(Method::PUT, "document", &["c", "k"])
        .header("if-match", &format!("\"{current}\""))
        .json(json!({"_rev": wrong}))
        .document()
        .await;
    assert_eq!(reply.status, 202, "{:?}", reply.body);
    let current = reply.body["_rev"].as_str().unwrap().to_owned();
    let reply = fx
        .call(Method::DELETE, "document", &["c", "k"])
        .header("if-match", &wrong)
        .document()
        .await;
    reply.assert_error(412, 1200);
    let reply = fx
        .call(Method::DELETE, "document", &["c", "k"])
        .header("if-match", &current)
        .document()
        .await;
    assert_eq!(reply.status, 202);
}

#[tokio::test]
async fn remove_answers_meta_and_old_and_the_document_is_gone() {
    let (fx, rev) = fixture_with_doc().await;
    let reply = fx
        .call(Method::DELETE, "document", &["c", "k"])
        .query("returnOld", "true")
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.body["_id"], "c/k");
    assert_eq!(reply.body["_rev"], rev.as_str());
    assert!(reply.body.get("_oldRev").is_none());
    assert_eq!(reply.body["old"]["a"], 1);
    assert!(reply.header("location").is_none());
    assert_eq!(read(&fx, "k").await.status, 404);
    let reply = fx
        .call(Method::DELETE, "document", &["c", "k"])
        .document()
        .await;
    reply.assert_error(404, 1202);
}

#[tokio::test]
async fn synced_writes_answer_201_and_synced_removals_200() {
    let (fx, _) = fixture_with_doc().await;
    let reply = fx
        .call(Method::PATCH, "document", &["c", "k"])
        .query("waitForSync", "yes")
        .json(json!({"b": 1}))
        .document()
        .await;
    assert_eq!(reply.status, 201);
    let reply = fx
        .call(Method::DELETE, "document", &["c", "k"])
        .query("waitForSync", "1")
        .document()
        .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn the_collection_wait_for_sync_property_cannot_be_switched_off_by_the_request() {
    let (fx, _) = fixture_with_doc().await;
    let collection = fx.db.collection("c").unwrap();
    collection
        .update_properties(PropertiesUpdate {
            wait_for_sync: Some(true),
            ..PropertiesUpdate::default()
        })
        .unwrap();
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("waitForSync", "false")
        .json(json!({"_key": "s"}))
        .document()
        .await;
    assert_eq!(reply.status, 201);
    let reply = fx
        .call(Method::DELETE, "document", &["c", "s"])
        .document()
        .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn silent_writes_answer_an_empty_object() {
    let (fx, _) = fixture_with_doc().await;
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("silent", "true")
        .json(json!({"_key": "quiet"}))
        .document()
        .await;
    assert_eq!((reply.status, reply.body.clone()), (202, json!({})));
    let reply = fx
        .call(Method::PATCH, "document", &["c", "quiet"])
        .query("silent", "true")
        .json(json!({"b": 1}))
        .document()
        .await;
    assert_eq!(reply.body, json!({}));
    let reply = fx
        .call(Method::DELETE, "document", &["c", "quiet"])
        .query("silent", "true")
        .document()
        .await;
    assert_eq!(reply.body, json!({}));
    assert_eq!(read(&fx, "quiet").await.status, 404);
}

#[tokio::test]
async fn overwrite_modes_of_insert() {
    let (fx, rev) = fixture_with_doc().await;
    let post = |mode: &'static str, body: Value| {
        fx.call(Method::POST, "document", &["c"])
            .query("overwriteMode", mode)
            .query("returnNew", "true")
            .query("returnOld", "true")
            .json(body)
    };
    let reply = post("ignore", json!({"_key": "k", "a": 9}))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.body["_rev"], rev.as_str());
    assert!(reply.body.get("new").is_none() && reply.body.get("old").is_none());
    assert_eq!(read(&fx, "k").await.body["a"], 1);

    let reply = post("update", json!({"_key": "k", "b": 2}))
        .document()
        .await;
    assert_eq!(reply.body["_oldRev"], rev.as_str());
    assert_eq!(reply.body["new"]["a"], 1);
    assert_eq!(reply.body["new"]["b"], 2);
    assert_eq!(reply.body["old"]["a"], 1);

    let reply = post("replace", json!({"_key": "k", "c": 3}))
        .document()
        .await;
    assert!(reply.body["_oldRev"].is_string());
    assert!(reply.body["new"].get("a").is_none());

    let reply = post("conflict", json!({"_key": "k"})).document().await;
    reply.assert_error(409, 1210);

    let reply = post("replace", json!({"_key": "fresh"})).document().await;
    assert!(reply.body.get("_oldRev").is_none());
    assert!(reply.body.get("old").is_none());
    assert_eq!(reply.body["new"]["_key"], "fresh");

    // The legacy flag means replace.
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("overwrite", "true")
        .json(json!({"_key": "k", "d": 4}))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert!(reply.body["_oldRev"].is_string());
    let doc = read(&fx, "k").await.body;
    assert_eq!(doc["d"], 4);
    assert!(doc.get("c").is_none());
}

#[tokio::test]
async fn version_attribute_skips_older_versions() {
    let fx = Fixture::new();
    fx.collection("c", CollectionType::Document);
    fx.call(Method::POST, "document", &["c"])
        .json(json!({"_key": "v", "ver": 5, "x": "five"}))
        .document()
        .await;
    let reply = fx
        .call(Method::PUT, "document", &["c", "v"])
        .query("versionAttribute", "ver")
        .json(json!({"ver": 3, "x": "three"}))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.body["_rev"], reply.body["_oldRev"]);
    assert_eq!(read(&fx, "v").await.body["x"], "five");
    fx.call(Method::PATCH, "document", &["c", "v"])
        .query("versionAttribute", "ver")
        .json(json!({"ver": 7, "x": "seven"}))
        .document()
        .await;
    assert_eq!(read(&fx, "v").await.body["x"], "seven");
}
