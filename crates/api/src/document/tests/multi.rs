//! Multi-document requests: input order, inline errors, `x-arango-error-codes`, `onlyget`.

use http::Method;
use quince_db::CollectionType;
use serde_json::{json, Value};

use super::support::Fixture;

/// A fixture with collection `c` holding documents `a`, `b` and `c` (attribute `n` = 1, 2, 3).
async fn fixture_with_docs(fx: Fixture) -> Fixture {
    fx.collection("c", CollectionType::Document);
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .json(json!([{"_key": "a", "n": 1}, {"_key": "b", "n": 2}, {"_key": "c", "n": 3}]))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.body.as_array().unwrap().len(), 3);
    assert!(reply.header("etag").is_none() && reply.header("location").is_none());
    fx
}

fn error_nums(body: &Value) -> Vec<Option<u64>> {
    body.as_array()
        .unwrap()
        .iter()
        .map(|item| item.get("errorNum").and_then(Value::as_u64))
        .collect()
}

async fn insert_many_reports_each_item_in_order(fx: Fixture) {
    let fx = fixture_with_docs(fx).await;
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .json(json!([{"_key": "new"}, {"_key": "a"}, 7, {"_key": "a"}, {"_key": "bad key"}]))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(
        error_nums(&reply.body),
        [None, Some(1210), Some(1227), Some(1210), Some(1221)]
    );
    assert_eq!(reply.body[0]["_id"], "c/new");
    let failed = &reply.body[1];
    assert_eq!(failed["error"], true);
    assert!(failed.get("code").is_none());
    let codes: Value = serde_json::from_str(reply.header("x-arango-error-codes").unwrap()).unwrap();
    assert_eq!(codes, json!({"1210": 2, "1227": 1, "1221": 1}));
}

async fn a_request_whose_items_all_fail_still_answers_the_success_status(fx: Fixture) {
    let fx = fixture_with_docs(fx).await;
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .json(json!([{"_key": "a"}, {"_key": "b"}]))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(reply.header("x-arango-error-codes"), Some(r#"{"1210":2}"#));
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("waitForSync", "true")
        .json(json!([{"_key": "a"}]))
        .document()
        .await;
    assert_eq!(reply.status, 201);
}

async fn silent_multi_lists_only_the_failures(fx: Fixture) {
    let fx = fixture_with_docs(fx).await;
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("silent", "true")
        .json(json!([{"_key": "s1"}, {"_key": "a"}, {"_key": "s2"}]))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(error_nums(&reply.body), [Some(1210)]);
    let reply = fx
        .call(Method::POST, "document", &["c"])
        .query("silent", "true")
        .json(json!([{"_key": "s3"}]))
        .document()
        .await;
    assert_eq!(reply.body, json!([]));
    assert!(reply.header("x-arango-error-codes").is_none());
}

async fn replace_and_update_many(fx: Fixture) {
    let fx = fixture_with_docs(fx).await;
    let reply = fx
        .call(Method::PATCH, "document", &["c"])
        .query("returnNew", "true")
        .json(json!([{"_key": "a", "m": 1}, {"_key": "zz"}, {"m": 2}, "a"]))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(
        error_nums(&reply.body),
        [None, Some(1202), Some(1205), Some(1227)]
    );
    assert!(reply.body[0]["_oldRev"].is_string());
    assert_eq!(reply.body[0]["new"]["n"], 1);
    assert_eq!(reply.body[0]["new"]["m"], 1);

    let reply = fx
        .call(Method::PUT, "document", &["c"])
        .query("waitForSync", "true")
        .json(json!([{"_key": "b", "r": 1}]))
        .document()
        .await;
    assert_eq!(reply.status, 201);
    assert!(reply.body[0]["_oldRev"].is_string());
    let doc = fx
        .call(Method::GET, "document", &["c", "b"])
        .document()
        .await
        .body;
    assert!(doc.get("n").is_none());
    assert_eq!(doc["r"], 1);
}

async fn modify_many_checks_body_revisions_only_when_asked(fx: Fixture) {
    let fx = fixture_with_docs(fx).await;
    let body = json!([{"_key": "a", "_rev": "_wrong", "x": 1}]);
    let reply = fx
        .call(Method::PATCH, "document", &["c"])
        .query("ignoreRevs", "false")
        .json(body.clone())
        .document()
        .await;
    assert_eq!(error_nums(&reply.body), [Some(1200)]);
    assert_eq!(reply.header("x-arango-error-codes"), Some(r#"{"1200":1}"#));
    let reply = fx
        .call(Method::PATCH, "document", &["c"])
        .json(body)
        .document()
        .await;
    assert_eq!(error_nums(&reply.body), [None]);
}

async fn remove_many_takes_keys_ids_and_objects(fx: Fixture) {
    let fx = fixture_with_docs(fx).await;
    let rev_c = fx
        .call(Method::GET, "document", &["c", "c"])
        .document()
        .await
        .body["_rev"]
        .clone();
    let reply = fx
        .call(Method::DELETE, "document", &["c"])
        .query("returnOld", "true")
        .json(json!(["a", "c/b", "other/c", {"_key": "c", "_rev": rev_c}, "a", 5]))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(
        error_nums(&reply.body),
        [None, None, Some(1202), None, Some(1202), Some(1205)]
    );
    assert_eq!(reply.body[0]["_id"], "c/a");
    assert_eq!(reply.body[0]["old"]["n"], 1);
    assert_eq!(reply.body[1]["_key"], "b");
    let codes: Value = serde_json::from_str(reply.header("x-arango-error-codes").unwrap()).unwrap();
    assert_eq!(codes, json!({"1202": 2, "1205": 1}));
    let count = fx.db.collection("c").unwrap().count();
    assert_eq!(count, 0);
}

async fn remove_many_with_a_revision_mismatch_and_sync(fx: Fixture) {
    let fx = fixture_with_docs(fx).await;
    let reply = fx
        .call(Method::DELETE, "document", &["c"])
        .query("ignoreRevs", "false")
        .query("waitForSync", "true")
        .json(json!([{"_key": "a", "_rev": "_nope"}, {"_key": "b"}]))
        .document()
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(error_nums(&reply.body), [Some(1200), None]);
    let reply = fx.call(Method::DELETE, "document", &["c"]).document().await;
    reply.assert_error(400, 600);
    let reply = fx
        .call(Method::DELETE, "document", &["c"])
        .json(json!({"_key": "a"}))
        .document()
        .await;
    reply.assert_error(400, 1227);
}

async fn onlyget_reads_many_in_order(fx: Fixture) {
    let fx = fixture_with_docs(fx).await;
    let reply = fx
        .call(Method::PUT, "document", &["c"])
        .query("onlyget", "1")
        .json(json!(["b", "missing", "c/a", {"_key": "c"}]))
        .document()
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(error_nums(&reply.body), [None, Some(1202), None, None]);
    assert_eq!(reply.body[0]["n"], 2);
    assert_eq!(reply.body[0]["_id"], "c/b");
    assert_eq!(reply.body[2]["n"], 1);
    assert_eq!(reply.body[3]["n"], 3);
    assert_eq!(reply.header("x-arango-error-codes"), Some(r#"{"1202":1}"#));

    let reply = fx
        .call(Method::PUT, "document", &["c"])
        .query("onlyget", "")
        .json(json!([]))
        .document()
        .await;
    assert_eq!((reply.status, reply.body.clone()), (200, json!([])));

    let reply = fx
        .call(Method::PUT, "document", &["c"])
        .query("onlyget", "true")
        .query("ignoreRevs", "false")
        .json(json!([{"_key": "a", "_rev": "_nope"}]))
        .document()
        .await;
    assert_eq!(error_nums(&reply.body), [Some(1200)]);

    let reply = fx
        .call(Method::PUT, "document", &["missing"])
        .query("onlyget", "true")
        .json(json!(["a"]))
        .document()
        .await;
    reply.assert_error(404, 1203);
}

on_every_engine!(
    insert_many_reports_each_item_in_order,
    a_request_whose_items_all_fail_still_answers_the_success_status,
    silent_multi_lists_only_the_failures,
    replace_and_update_many,
    modify_many_checks_body_revisions_only_when_asked,
    remove_many_takes_keys_ids_and_objects,
    remove_many_with_a_revision_mismatch_and_sync,
    onlyget_reads_many_in_order,
);
