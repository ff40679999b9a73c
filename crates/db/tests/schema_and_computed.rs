//! A collection's `schema` and `computedValues` on the local engine: each schema level
//! (moderate with a document that was invalid before), per-item errors of multi-document
//! writes, overwriting inserts (the import's write form), stream transactions, AQL `INSERT`
//! and `UPDATE`, and both properties surviving a restart.

use crate::common;

use std::sync::Arc;

use quince_db::{
    Catalog, Collection, CollectionOps, DatabaseOps, OverwriteMode, PropertiesUpdate, WriteKind,
    WriteOptions, WriteRequest,
};
use quince_ops::TransactionOptions;
use serde_json::{json, Map, Value};

use common::{create, opts, read};

fn with_schema(catalog: &Catalog, name: &str, level: &str) -> Arc<Collection> {
    let mut request = create(name);
    request.schema = Some(json!({
        "rule": {"properties": {"n": {"type": "number"}}, "required": ["n"]},
        "level": level,
        "message": "n must be a number",
    }));
    catalog
        .database("_system")
        .unwrap()
        .create_collection(request)
        .expect("created")
}

fn write(c: &dyn CollectionOps, kind: WriteKind, docs: Vec<Value>) -> Vec<Result<String, u32>> {
    write_with(c, kind, docs, opts())
}

fn write_with(
    c: &dyn CollectionOps,
    kind: WriteKind,
    docs: Vec<Value>,
    options: WriteOptions,
) -> Vec<Result<String, u32>> {
    c.write(WriteRequest::new(kind, docs, options))
        .settle()
        .expect("durable")
        .into_iter()
        .map(|item| item.map(|o| o.key).map_err(|e| e.num()))
        .collect()
}

fn one(c: &dyn CollectionOps, kind: WriteKind, doc: Value) -> Result<String, u32> {
    write(c, kind, vec![doc]).pop().unwrap()
}

#[test]
fn each_level_decides_which_writes_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    use WriteKind::{Insert, Replace, Update};
    // (level, insert bad, update good->bad, replace good->bad)
    let cases = [
        ("none", Ok(()), Ok(()), Ok(())),
        ("new", Err(1620), Ok(()), Ok(())),
        ("moderate", Err(1620), Err(1620), Err(1620)),
        ("strict", Err(1620), Err(1620), Err(1620)),
    ];
    for (level, insert_bad, update_bad, replace_bad) in cases {
        let c = with_schema(&catalog, &format!("c_{level}"), level);
        let ok = |r: Result<String, u32>| r.map(|_| ());
        assert_eq!(
            ok(one(&*c, Insert, json!({"n": "x"}))),
            insert_bad,
            "{level}"
        );
        one(&*c, Insert, json!({"_key": "g", "n": 1})).unwrap();
        assert_eq!(
            ok(one(&*c, Update, json!({"_key": "g", "n": "x"}))),
            update_bad,
            "{level}"
        );
        one(&*c, Replace, json!({"_key": "g", "n": 2})).unwrap();
        assert_eq!(
            ok(one(&*c, Replace, json!({"_key": "g", "m": 1}))),
            replace_bad,
            "{level}"
        );
        // Removals are never validated.
        one(&*c, WriteKind::Remove, json!({"_key": "g"})).unwrap();
    }
}

#[test]
fn moderate_lets_an_invalid_document_stay_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let c = common::collection(&catalog, "m");
    one(&*c, WriteKind::Insert, json!({"_key": "bad", "n": "old"})).unwrap();
    one(&*c, WriteKind::Insert, json!({"_key": "good", "n": 1})).unwrap();
    let schema = json!({"rule": {"properties": {"n": {"type": "number"}}}, "level": "moderate",
                        "message": "n must be a number"});
    c.update_properties(PropertiesUpdate {
        schema: Some(schema),
        ..PropertiesUpdate::default()
    })
    .unwrap();
    // The invalid document may change and stay invalid; the valid one may not become so.
    one(&*c, WriteKind::Update, json!({"_key": "bad", "n": "older"})).unwrap();
    assert_eq!(read(&c, "bad")["n"], "older");
    assert_eq!(
        one(&*c, WriteKind::Update, json!({"_key": "good", "n": "x"})),
        Err(1620)
    );
    assert_eq!(read(&c, "good")["n"], 1);
    // A strict schema refuses both.
    let strict = json!({"rule": {"properties": {"n": {"type": "number"}}}});
    c.update_properties(PropertiesUpdate {
        schema: Some(strict),
        ..PropertiesUpdate::default()
    })
    .unwrap();
    assert_eq!(
        one(
            &*c,
            WriteKind::Update,
            json!({"_key": "bad", "n": "oldest"})
        ),
        Err(1620)
    );
}

#[test]
fn multi_document_writes_fail_item_by_item() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let c = with_schema(&catalog, "multi", "strict");
    let results = write(
        &*c,
        WriteKind::Insert,
        vec![
            json!({"_key": "a", "n": 1}),
            json!({"_key": "b"}),
            json!({"_key": "c", "n": 3}),
        ],
    );
    assert_eq!(results, vec![Ok("a".into()), Err(1620), Ok("c".into())]);
    assert_eq!(c.count(), 2);
    // Overwriting inserts (an import with onDuplicate update or replace) are validated as the
    // update or replace they become.
    let update = WriteOptions {
        overwrite_mode: OverwriteMode::Update,
        ..opts()
    };
    let results = write_with(
        &*c,
        WriteKind::Insert,
        vec![json!({"_key": "a", "n": "x"}), json!({"_key": "c", "m": 1})],
        update,
    );
    assert_eq!(results, vec![Err(1620), Ok("c".into())]);
    let replace = WriteOptions {
        overwrite_mode: OverwriteMode::Replace,
        ..opts()
    };
    let results = write_with(
        &*c,
        WriteKind::Insert,
        vec![json!({"_key": "c", "m": 1})],
        replace,
    );
    assert_eq!(results, vec![Err(1620)]);
    // skipDocumentValidation writes past the schema.
    let skip = WriteOptions {
        skip_document_validation: true,
        ..opts()
    };
    let results = write_with(&*c, WriteKind::Insert, vec![json!({"_key": "d"})], skip);
    assert_eq!(results, vec![Ok("d".into())]);
}

#[test]
fn computed_values_on_insert_update_and_replace() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let mut request = create("cv");
    request.computed_values = Some(json!([
        {"name": "id", "expression": "RETURN @doc._id", "overwrite": true,
         "computeOn": ["insert"]},
        {"name": "sum", "expression": "RETURN @doc.a + @doc.b", "overwrite": true},
        {"name": "tag", "expression": "RETURN 'computed'", "overwrite": false,
         "computeOn": ["update", "replace"]},
        {"name": "gone", "expression": "RETURN null", "overwrite": true, "keepNull": false},
    ]));
    // A schema sees computed values: `sum` is required.
    request.schema = Some(json!({"rule": {"required": ["sum"]}, "message": "no sum"}));
    let c = catalog
        .database("_system")
        .unwrap()
        .create_collection(request)
        .unwrap();
    one(
        &*c,
        WriteKind::Insert,
        json!({"_key": "k", "a": 1, "b": 2, "gone": 1}),
    )
    .unwrap();
    let doc = read(&c, "k");
    assert_eq!(
        (&doc["id"], &doc["sum"], doc.get("tag"), doc.get("gone")),
        (&json!("cv/k"), &json!(3), None, None)
    );
    one(&*c, WriteKind::Update, json!({"_key": "k", "b": 5})).unwrap();
    let doc = read(&c, "k");
    assert_eq!(
        (&doc["sum"], &doc["tag"], &doc["id"]),
        (&json!(6), &json!("computed"), &json!("cv/k"))
    );
    one(
        &*c,
        WriteKind::Replace,
        json!({"_key": "k", "a": 10, "b": 1, "tag": "mine"}),
    )
    .unwrap();
    let doc = read(&c, "k");
    assert_eq!(
        (&doc["sum"], &doc["tag"], doc.get("id")),
        (&json!(11), &json!("mine"), None)
    );
    // The properties come back with every option, and `[]` removes them.
    let reported = c.properties().computed_values;
    assert_eq!(reported[2]["computeOn"], json!(["update", "replace"]));
    assert_eq!(reported[3]["keepNull"], false);
    c.update_properties(PropertiesUpdate {
        computed_values: Some(json!([])),
        schema: Some(Value::Null),
        ..PropertiesUpdate::default()
    })
    .unwrap();
    assert_eq!(c.properties().computed_values, Value::Null);
    one(
        &*c,
        WriteKind::Insert,
        json!({"_key": "plain", "a": 1, "b": 2}),
    )
    .unwrap();
    assert!(read(&c, "plain").get("sum").is_none());
}

#[test]
fn stream_transactions_apply_both() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let c = with_schema(&catalog, "t", "strict");
    c.update_properties(PropertiesUpdate {
        computed_values: Some(json!([{"name": "double", "expression": "RETURN @doc.n * 2",
                                      "overwrite": true}])),
        ..PropertiesUpdate::default()
    })
    .unwrap();
    let db: Arc<dyn DatabaseOps> = catalog.database("_system").unwrap();
    let trx = db
        .begin_transaction(TransactionOptions {
            write: vec!["t".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let view = trx.database().collection("t").unwrap();
    assert_eq!(
        one(&*view, WriteKind::Insert, json!({"_key": "x"})),
        Err(1620)
    );
    one(&*view, WriteKind::Insert, json!({"_key": "y", "n": 4})).unwrap();
    trx.commit().unwrap();
    assert_eq!(read(&c, "y")["double"], 8);
    assert!(c.read("x").is_err());
}

fn query(catalog: &Catalog, text: &str) -> quince_errors::Result<Vec<Value>> {
    let db: Arc<dyn DatabaseOps> = catalog.database("_system").unwrap();
    let prepared = quince_aql::prepare(db, text, Map::new(), quince_aql::QueryOptions::default())?;
    let mut out = Vec::new();
    prepared.run(quince_aql::Control::new(None), None, &mut |v| {
        out.push(v);
        Ok(true)
    })?;
    Ok(out)
}

#[test]
fn aql_modifications_apply_both() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let c = with_schema(&catalog, "q", "strict");
    c.update_properties(PropertiesUpdate {
        computed_values: Some(json!([{"name": "up", "expression": "RETURN UPPER(@doc.s)",
                                      "overwrite": true}])),
        ..PropertiesUpdate::default()
    })
    .unwrap();
    let error = query(&catalog, "INSERT {_key: 'a', s: 'x'} INTO q").unwrap_err();
    assert_eq!(error.num(), 1620);
    let new = query(
        &catalog,
        "INSERT {_key: 'a', n: 1, s: 'x'} INTO q RETURN NEW",
    )
    .unwrap();
    assert_eq!(new[0]["up"], "X");
    let error = query(&catalog, "UPDATE 'a' WITH {n: 'one'} IN q").unwrap_err();
    assert_eq!(error.num(), 1620);
    query(&catalog, "UPDATE 'a' WITH {s: 'y'} IN q").unwrap();
    assert_eq!(read(&c, "a")["up"], "Y");
    // ignoreErrors counts the refused document and goes on.
    let out = query(
        &catalog,
        "FOR d IN [{n: 2}, {s: 'no n'}] INSERT d INTO q OPTIONS {ignoreErrors: true} \
         RETURN NEW._key",
    )
    .unwrap();
    assert_eq!(out.iter().filter(|key| key.is_string()).count(), 1);
    assert_eq!(c.count(), 2);
}

#[test]
fn both_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (schema, computed) = {
        let catalog = common::open_os(dir.path());
        let c = with_schema(&catalog, "r", "new");
        c.update_properties(PropertiesUpdate {
            computed_values: Some(json!([{"name": "len", "expression":
                                          "RETURN LENGTH(@doc.s)", "overwrite": true}])),
            ..PropertiesUpdate::default()
        })
        .unwrap();
        let properties = c.properties();
        catalog.shutdown().unwrap();
        (properties.schema, properties.computed_values)
    };
    let catalog = common::open_os(dir.path());
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("r")
        .unwrap();
    let properties = c.properties();
    assert_eq!(properties.schema, schema);
    assert_eq!(properties.schema["level"], "new");
    assert_eq!(properties.computed_values, computed);
    assert_eq!(one(&*c, WriteKind::Insert, json!({"s": "abc"})), Err(1620));
    one(
        &*c,
        WriteKind::Insert,
        json!({"_key": "z", "n": 0, "s": "abcd"}),
    )
    .unwrap();
    assert_eq!(read(&c, "z")["len"], 4);
    catalog.shutdown().unwrap();
}
