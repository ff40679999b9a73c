//! `schema` and `computedValues` through `/_api/collection` and `/_api/document`, on the local
//! engine and on the fake: what is reported, what is refused, and what writes answer.

use http::Method;
use serde_json::{json, Value};

use crate::document::tests::support::{Fixture, Reply};

async fn create(fx: &Fixture, body: Value) -> Reply {
    fx.call(Method::POST, "collection", &[])
        .json(body)
        .collection()
        .await
}

async fn properties(fx: &Fixture, name: &str, body: Option<Value>) -> Reply {
    let call = match &body {
        Some(_) => fx.call(Method::PUT, "collection", &[name, "properties"]),
        None => fx.call(Method::GET, "collection", &[name, "properties"]),
    };
    match body {
        Some(body) => call.json(body).collection().await,
        None => call.collection().await,
    }
}

async fn insert(fx: &Fixture, name: &str, body: Value, query: &[(&str, &str)]) -> Reply {
    let mut call = fx.call(Method::POST, "document", &[name]);
    for (key, value) in query {
        call = call.query(key, value);
    }
    call.json(body).document().await
}

fn number_rule() -> Value {
    json!({"rule": {"properties": {"n": {"type": "number"}}, "required": ["n"]},
           "level": "moderate", "message": "n must be a number"})
}

async fn schema_is_reported_and_refuses_writes(fx: Fixture) {
    let reply = create(&fx, json!({"name": "s", "schema": number_rule()})).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let reported = json!({"message": "n must be a number", "level": "moderate", "type": "json",
                          "rule": {"properties": {"n": {"type": "number"}}, "required": ["n"]}});
    assert_eq!(reply.body["schema"], reported);
    assert_eq!(properties(&fx, "s", None).await.body["schema"], reported);

    let body = insert(&fx, "s", json!({"n": "x"}), &[]).await;
    let error = body.assert_error(400, 1620);
    assert_eq!(error["errorMessage"], "n must be a number");
    assert_eq!(insert(&fx, "s", json!({"n": 1}), &[]).await.status, 202);

    let reply = insert(&fx, "s", json!([{"n": 1}, {"n": "x"}, {"m": 2}]), &[]).await;
    assert_eq!(reply.status, 202);
    assert!(reply.body[0]["_key"].is_string());
    assert_eq!(reply.body[1]["errorNum"], 1620);
    assert_eq!(reply.body[2]["errorMessage"], "n must be a number");
    assert_eq!(reply.header("x-arango-error-codes"), Some(r#"{"1620":2}"#));

    // An administrator may write past the schema.
    let skipped = insert(
        &fx,
        "s",
        json!({"n": "x"}),
        &[("skipDocumentValidation", "true")],
    );
    assert_eq!(skipped.await.status, 202);

    // `{}` removes it; so does null.
    let reply = properties(&fx, "s", Some(json!({"schema": {}}))).await;
    assert_eq!(reply.body["schema"], Value::Null);
    assert_eq!(insert(&fx, "s", json!({"n": "x"}), &[]).await.status, 202);
}

async fn bad_properties_are_refused(fx: Fixture) {
    for schema in [
        json!(1),
        json!({"rule": 1}),
        json!({"rule": {}, "level": "often"}),
        json!({"rule": {"type": 12}}),
    ] {
        let reply = create(&fx, json!({"name": "b", "schema": schema})).await;
        reply.assert_error(400, 1621);
    }
    for computed in [
        json!({}),
        json!([{"name": "a", "expression": "RETURN 1"}]),
        json!([{"name": "_key", "expression": "RETURN 1", "overwrite": true}]),
        json!([{"name": "a", "expression": "FOR d IN b RETURN d", "overwrite": true}]),
        json!([{"name": "a", "expression": "RETURN @other", "overwrite": true}]),
    ] {
        let reply = create(&fx, json!({"name": "b", "computedValues": computed})).await;
        let body = reply.assert_error(400, 10);
        let message = body["errorMessage"].as_str().unwrap();
        assert!(message.contains("omputed"), "{message}");
    }
    fx.call(Method::GET, "collection", &["b"])
        .collection()
        .await
        .assert_error(404, 1203);

    create(&fx, json!({"name": "b"})).await;
    let reply = properties(&fx, "b", Some(json!({"schema": {"rule": 2}}))).await;
    reply.assert_error(400, 1621);
    assert_eq!(properties(&fx, "b", None).await.body["schema"], Value::Null);
}

async fn computed_values_are_reported_and_computed(fx: Fixture) {
    create(&fx, json!({"name": "c"})).await;
    let computed = json!([
        {"name": "full", "expression": "RETURN CONCAT(@doc.first, ' ', @doc.last)",
         "overwrite": true},
        {"name": "made", "expression": "RETURN 'insert'", "overwrite": false,
         "computeOn": ["insert"], "keepNull": false},
    ]);
    let reply = properties(&fx, "c", Some(json!({"computedValues": computed}))).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(
        reply.body["computedValues"],
        json!([
            {"name": "full", "expression": "RETURN CONCAT(@doc.first, ' ', @doc.last)",
             "computeOn": ["insert", "update", "replace"], "overwrite": true,
             "failOnWarning": false, "keepNull": true},
            {"name": "made", "expression": "RETURN 'insert'", "computeOn": ["insert"],
             "overwrite": false, "failOnWarning": false, "keepNull": false},
        ])
    );
    let reply = insert(
        &fx,
        "c",
        json!({"_key": "p", "first": "Paula", "last": "Plant", "full": "x"}),
        &[("returnNew", "true")],
    )
    .await;
    assert_eq!(reply.body["new"]["full"], "Paula Plant");
    assert_eq!(reply.body["new"]["made"], "insert");
    let reply = fx
        .call(Method::PATCH, "document", &["c", "p"])
        .query("returnNew", "true")
        .json(json!({"last": "Pine"}))
        .document()
        .await;
    assert_eq!(reply.body["new"]["full"], "Paula Pine");
    // With `overwrite: false`, what the client writes wins.
    let reply = insert(
        &fx,
        "c",
        json!({"made": "by hand"}),
        &[("returnNew", "true")],
    )
    .await;
    assert_eq!(reply.body["new"]["made"], "by hand");
    assert_eq!(reply.body["new"]["full"], " ");
}

#[tokio::test]
async fn schema_on_the_local_engine() {
    schema_is_reported_and_refuses_writes(Fixture::new()).await;
}

#[tokio::test]
async fn schema_on_the_fake_engine() {
    schema_is_reported_and_refuses_writes(Fixture::fake()).await;
}

#[tokio::test]
async fn bad_properties_on_the_local_engine() {
    bad_properties_are_refused(Fixture::new()).await;
}

#[tokio::test]
async fn bad_properties_on_the_fake_engine() {
    bad_properties_are_refused(Fixture::fake()).await;
}

#[tokio::test]
async fn computed_values_on_the_local_engine() {
    computed_values_are_reported_and_computed(Fixture::new()).await;
}

#[tokio::test]
async fn computed_values_on_the_fake_engine() {
    computed_values_are_reported_and_computed(Fixture::fake()).await;
}
