//! `Collection::insert_texts` (the insert fast route from checked object text) against
//! `Collection::write` of the parsed bodies: for random documents, in document and edge
//! collections, with and without a schema, in every overwrite mode and with `returnNew`, both
//! answer the same outcomes and errors item by item and leave the same stored bytes (up to the
//! revisions, which differ between two runs).

use crate::common;

use std::sync::Arc;

use common::{comparable, create, open_os, opts};
use proptest::prelude::*;
use quince_db::{
    Catalog, Collection, CollectionOps, CollectionType, OverwriteMode, WriteKind, WriteOptions,
    WriteRequest,
};
use quince_model::object_text::ObjectText;
use serde_json::{json, Map, Value};

/// The stored bytes of every document (as reads render them), `_rev` values blanked, by key.
fn stored(c: &Collection) -> Vec<(String, String)> {
    let mut docs = Vec::new();
    c.scan(&mut |doc| {
        let text = String::from_utf8(doc.json).unwrap();
        let at = text.find("\"_rev\":\"").unwrap() + 8;
        let end = at + text[at..].find('"').unwrap();
        let blanked = format!("{}{}", &text[..at], &text[end..]);
        let key: Value = serde_json::from_str(&text).unwrap();
        docs.push((key["_key"].as_str().unwrap().to_owned(), blanked));
        true
    })
    .unwrap();
    docs.sort();
    docs
}

/// A fresh collection `name` holding `{"_key": "pre", "old": 1}` (an edge collection's holds
/// edge ends too).
fn fresh(catalog: &Catalog, name: &str, edge: bool, schema: bool) -> Arc<Collection> {
    let mut request = create(name);
    if edge {
        request.kind = CollectionType::Edge;
    }
    if schema {
        request.schema = Some(json!({
            "rule": {"properties": {"n": {"type": "number"}}},
            "level": "moderate", "message": "n must be a number"
        }));
    }
    let c = catalog
        .database("_system")
        .unwrap()
        .create_collection(request)
        .unwrap();
    c.insert(
        json!({"_key": "pre", "old": 1, "_from": "v/0", "_to": "v/0"}),
        &opts(),
    )
    .unwrap();
    c
}

fn attribute() -> impl Strategy<Value = (String, Value)> {
    let plain = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| Value::from((f * 100.0).round() / 100.0)),
        "\\PC{0,8}".prop_map(Value::from),
        proptest::collection::vec(any::<u8>().prop_map(Value::from), 0..3).prop_map(Value::from),
        ("[a-c]", any::<i32>()).prop_map(|(k, v)| json!({ k.clone(): v, "z": [k] })),
    ];
    let key = prop_oneof![
        Just(json!("k1")),
        Just(json!("k2")),
        Just(json!("pre")),
        Just(json!("bad key")),
        Just(json!(7)),
    ];
    let end = prop_oneof![
        Just(json!("v/1")),
        Just(json!("w/2")),
        Just(json!("nohandle")),
        Just(json!(3)),
    ];
    prop_oneof![
        4 => ("[a-e]|n|\\PC{1,4}", plain.clone()).prop_map(|(k, v)| (k, v)),
        2 => key.prop_map(|v| ("_key".to_owned(), v)),
        1 => Just(("_id".to_owned(), json!("x/y"))),
        1 => Just(("_rev".to_owned(), json!("_abc"))),
        1 => Just(("n".to_owned(), json!("not a number"))),
        2 => end.clone().prop_map(|v| ("_from".to_owned(), v)),
        2 => end.prop_map(|v| ("_to".to_owned(), v)),
    ]
}

fn document() -> impl Strategy<Value = Map<String, Value>> {
    proptest::collection::vec(attribute(), 0..8).prop_map(|members| {
        let mut doc: Map<String, Value> = members.into_iter().collect();
        // Every document names its key: generated keys differ between two collections.
        doc.entry("_key").or_insert(json!("k3"));
        doc
    })
}

fn options() -> Vec<WriteOptions> {
    let mut all = Vec::new();
    for mode in [
        OverwriteMode::Conflict,
        OverwriteMode::Ignore,
        OverwriteMode::Replace,
        OverwriteMode::Update,
    ] {
        for return_new in [false, true] {
            all.push(WriteOptions {
                overwrite_mode: mode,
                return_new,
                return_old: return_new,
                ..opts()
            });
        }
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn texts_insert_what_parsed_bodies_insert(
        docs in proptest::collection::vec(document(), 1..6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let catalog = open_os(dir.path());
        let mut n = 0;
        for edge in [false, true] {
            for schema in [false, true] {
                for options in options() {
                    n += 1;
                    let slow = fresh(&catalog, &format!("slow{n}"), edge, schema);
                    let fast = fresh(&catalog, &format!("fast{n}"), edge, schema);
                    let items: Vec<Value> = docs.iter().cloned().map(Value::Object).collect();
                    let texts: Vec<ObjectText> = docs
                        .iter()
                        .map(|d| ObjectText::scan(&serde_json::to_vec(d).unwrap(), 64).unwrap())
                        .collect();
                    let request = WriteRequest::new(WriteKind::Insert, items, options.clone());
                    let slow_results = slow.write(request).settle().unwrap();
                    let fast_results = CollectionOps::insert_texts(&*fast, texts, options.clone())
                        .settle()
                        .unwrap();
                    let slow_results: Vec<Value> = slow_results.iter().map(comparable).collect();
                    let fast_results: Vec<Value> = fast_results.iter().map(comparable).collect();
                    let slow_name = format!("slow{n}");
                    let fast_name = format!("fast{n}");
                    let rename = |v: Vec<Value>| -> String {
                        serde_json::to_string(&v).unwrap().replace(&fast_name, &slow_name)
                    };
                    prop_assert_eq!(
                        rename(fast_results),
                        rename(slow_results),
                        "edge={} schema={} {:?}", edge, schema, options
                    );
                    let rename_docs = |v: Vec<(String, String)>| -> Vec<(String, String)> {
                        v.into_iter()
                            .map(|(k, d)| (k, d.replace(&fast_name, &slow_name)))
                            .collect()
                    };
                    prop_assert_eq!(rename_docs(stored(&fast)), rename_docs(stored(&slow)));
                }
            }
        }
    }
}

#[test]
fn generated_keys_and_single_documents_take_the_fast_route() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = fresh(&catalog, "c", false, false);
    let text = ObjectText::scan(br#"{ "a" : 1, "_id": "x/y", "b": "s" }"#, 64).unwrap();
    let results = CollectionOps::insert_texts(&*c, vec![text], opts())
        .settle()
        .unwrap();
    let outcome = results[0].as_ref().unwrap();
    let doc = c.read(&outcome.key).unwrap();
    assert_eq!(
        String::from_utf8(doc.json).unwrap(),
        format!(
            r#"{{"_key":"{}","_id":"c/{}","_rev":"{}","a":1,"b":"s"}}"#,
            outcome.key, outcome.key, outcome.rev
        )
    );
}
