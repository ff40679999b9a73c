//! `NEAR`, `WITHIN`, `WITHIN_RECTANGLE` and `FULLTEXT` over the fake engine: documents in
//! the index's order, the distance attribute, the collection named directly, by a value bind
//! parameter (as python-arango's `find_near` sends it) or by a collection bind parameter, and
//! ArangoDB's errors without a suitable index (1570, 1571).

use crate::engine;

use std::sync::Arc;

use engine::{create, results as run, run_with};
use quince_ops::fake::FakeEngine;
use quince_ops::{DatabaseOps, Engine};
use serde_json::{json, Value};

/// `places` (a geo index over `[lat, lon]` in `loc`), `texts` (a fulltext index over `t`)
/// and `plain` (no index).
/// The elements of a JSON array.
fn array(docs: Value) -> Vec<Value> {
    docs.as_array().unwrap().clone()
}

fn database() -> Arc<dyn DatabaseOps> {
    let engine = FakeEngine::new();
    let db = engine.database("_system").unwrap();
    let places = create(&db, "places");
    places
        .create_index(&json!({"type": "geo", "fields": ["loc"]}))
        .unwrap();
    let docs = json!([
        {"_key": "berlin", "loc": [52.52, 13.40]},
        {"_key": "potsdam", "loc": [52.39, 13.06]},
        {"_key": "hamburg", "loc": [53.55, 9.99]},
        {"_key": "paris", "loc": [48.86, 2.35]},
        {"_key": "unknown"},
    ]);
    engine::insert(&places, array(docs));
    let texts = create(&db, "texts");
    texts
        .create_index(&json!({"type": "fulltext", "fields": ["t"]}))
        .unwrap();
    let docs = json!([
        {"_key": "a", "t": "Hello Alice, how are you doing?"},
        {"_key": "b", "t": "Hello Bob"},
        {"_key": "c", "t": "Goodbye all"},
    ]);
    engine::insert(&texts, array(docs));
    let plain = create(&db, "plain");
    engine::insert(
        &plain,
        array(json!([{"_key": "x", "loc": [0, 0], "t": "hello"}])),
    );
    db
}

#[test]
fn near_and_within_return_documents_nearest_first() {
    let db = database();
    let keys = run(
        &db,
        "FOR d IN NEAR(places, 52.5, 13.4, 2) RETURN d._key",
        json!({}),
    );
    assert_eq!(keys, [json!("berlin"), json!("potsdam")]);
    // As python-arango's `find_near` sends it: the collection as a value bind parameter.
    let all = run(
        &db,
        "FOR doc IN NEAR(@collection, @latitude, @longitude) RETURN doc",
        json!({"collection": "places", "latitude": 52.5, "longitude": 13.4}),
    );
    assert_eq!(all.len(), 4);
    assert_eq!(all[0]["_id"], "places/berlin");
    assert_eq!(all[3]["_key"], "paris");
    let with_distance = run(
        &db,
        "FOR d IN NEAR(places, 52.52, 13.40, 1, 'dist') RETURN [d._key, d.dist]",
        json!({}),
    );
    assert_eq!(with_distance, [json!(["berlin", 0])]);
    let within = run(
        &db,
        "FOR d IN WITHIN(@@c, 52.52, 13.40, @r, 'm') RETURN [d._key, ROUND(d.m / 1000)]",
        json!({"@c": "places", "r": 300_000}),
    );
    assert_eq!(
        within,
        [
            json!(["berlin", 0]),
            json!(["potsdam", 27]),
            json!(["hamburg", 255])
        ]
    );
}

#[test]
fn within_rectangle_returns_the_documents_inside() {
    let db = database();
    let keys = run(
        &db,
        "FOR d IN WITHIN_RECTANGLE(places, 52, 14, 54, 9) RETURN d._key",
        json!({}),
    );
    assert_eq!(keys, [json!("berlin"), json!("hamburg"), json!("potsdam")]);
}

#[test]
fn fulltext_follows_the_query_syntax() {
    let db = database();
    let q = |query: &str| -> Vec<Value> {
        run(
            &db,
            "FOR d IN FULLTEXT(texts, 't', @q) RETURN d._key",
            json!({"q": query}),
        )
    };
    assert_eq!(q("hello"), [json!("a"), json!("b")]);
    assert_eq!(q("hello,-bob"), [json!("a")]);
    assert_eq!(q("prefix:al,|goodbye"), [json!("a"), json!("c")]);
    assert_eq!(q("complete:al"), Vec::<Value>::new());
    let limited = run(
        &db,
        "FOR doc IN FULLTEXT(@collection, @field, @query, @limit) RETURN doc._key",
        json!({"collection": "texts", "field": "t", "query": "hello", "limit": 1}),
    );
    assert_eq!(limited, [json!("a")]);
}

#[test]
fn missing_indexes_fail_with_arangodb_errors() {
    let db = database();
    let error = run_with(&db, "RETURN NEAR(plain, 0, 0)", json!({})).unwrap_err();
    assert_eq!(error.num(), 1570);
    assert!(error.message.contains("'plain'"), "{}", error.message);
    let error = run_with(&db, "RETURN WITHIN_RECTANGLE(plain, 0, 0, 1, 1)", json!({}));
    assert_eq!(error.unwrap_err().num(), 1570);
    let error = run_with(&db, "RETURN FULLTEXT(plain, 't', 'hello')", json!({}));
    assert_eq!(error.unwrap_err().num(), 1571);
    let error = run_with(&db, "RETURN FULLTEXT(texts, 'other', 'hello')", json!({}));
    assert_eq!(error.unwrap_err().num(), 1571);
    let error = run_with(&db, "RETURN NEAR(nothere, 0, 0)", json!({}));
    assert_eq!(error.unwrap_err().num(), 1203);
    // A bad argument warns and answers null.
    let (out, outcome) = run_with(&db, "RETURN NEAR(places, 'x', 0)", json!({})).unwrap();
    assert_eq!(out, [Value::Null]);
    assert_eq!(outcome.warnings[0].code, 1542);
}
