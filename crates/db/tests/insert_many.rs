//! `Collection::insert_many_deferred`: the batched insert answers, item by item, exactly what
//! the same inserts made one by one answer (errors, overwrite modes, returnNew/returnOld,
//! repeated keys within the batch), leaves the same documents, and hands back one durability
//! for a synced batch that covers every write.

use crate::common;

use common::{collection, comparable, create, open_os, opts, read};
use quince_db::{Collection, CollectionType, OverwriteMode, WriteOptions, WriteOutcome};
use quince_errors::Result;
use serde_json::{json, Value};

fn items() -> Vec<Value> {
    vec![
        json!({"_key": "a", "v": 1, "o": {"x": 1}}),
        json!({"_key": "b", "v": 1}),
        json!([1, 2]),
        json!({"_key": "a", "v": 2, "o": {"y": 2}, "gone": null}),
        json!({"_key": "bad key", "v": 1}),
        json!({"_key": 17}),
        json!({"_key": "pre", "w": true}),
        json!({"_key": "c"}),
        json!("text"),
        json!({"_key": "a", "v": 3}),
        json!({"_key": "c", "v": 4}),
    ]
}

/// Runs `items` into a fresh collection `c` (holding `{"_key": "pre"}`), batched or one by one.
fn run(batched: bool, options: &WriteOptions) -> (Vec<Value>, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    c.insert(json!({"_key": "pre", "old": 1}), &opts()).unwrap();
    let results: Vec<Result<WriteOutcome>> = if batched {
        let (results, durability) = c.insert_many_deferred(items(), options);
        assert_eq!(durability.is_some(), options.wait_for_sync);
        if let Some(durability) = durability {
            durability.wait().unwrap();
        }
        results
    } else {
        items()
            .into_iter()
            .map(|item| c.insert_deferred(item, options).map(|(o, _)| o))
            .collect()
    };
    (results.iter().map(comparable).collect(), documents(&c))
}

/// Every document of `c` by key, without `_rev`.
fn documents(c: &Collection) -> Vec<Value> {
    ["a", "b", "c", "pre"]
        .iter()
        .map(|key| match c.read(key) {
            Ok(_) => {
                let mut doc = read(c, key);
                doc.as_object_mut().unwrap().remove("_rev");
                doc
            }
            Err(e) => json!({ "missing": e.num() }),
        })
        .collect()
}

#[test]
fn batched_inserts_answer_as_single_inserts_in_every_overwrite_mode() {
    for mode in [
        OverwriteMode::Conflict,
        OverwriteMode::Ignore,
        OverwriteMode::Replace,
        OverwriteMode::Update,
    ] {
        for (return_new, return_old, keep_null) in [
            (false, false, true),
            (true, true, false),
            (true, false, true),
        ] {
            let options = WriteOptions {
                overwrite_mode: mode,
                return_new,
                return_old,
                keep_null,
                ..opts()
            };
            let batched = run(true, &options);
            let single = run(false, &options);
            assert_eq!(
                batched, single,
                "{mode:?} new={return_new} old={return_old}"
            );
        }
    }
}

#[test]
fn errors_are_per_item_with_single_insert_codes() {
    let (results, _) = run(true, &opts());
    let errors: Vec<Option<u64>> = results
        .iter()
        .map(|r| r.get("error").and_then(Value::as_u64))
        .collect();
    assert_eq!(
        errors,
        vec![
            None,
            None,
            Some(1227),
            Some(1210),
            Some(1221),
            Some(1221),
            Some(1210),
            None,
            Some(1227),
            Some(1210),
            Some(1210)
        ]
    );
}

#[test]
fn a_synced_batch_is_durable_when_its_one_durability_resolves() {
    let options = WriteOptions {
        wait_for_sync: true,
        ..opts()
    };
    let (results, _) = run(true, &options);
    assert!(results[0]["synced"].as_bool().unwrap());
}

#[test]
fn generated_keys_and_edge_checks_per_item() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let db = catalog.database("_system").unwrap();
    let edges = db
        .create_collection(quince_db::CreateCollection {
            kind: CollectionType::Edge,
            ..create("e")
        })
        .unwrap();
    let (results, durability) = edges.insert_many_deferred(
        vec![
            json!({"_from": "v/1", "_to": "v/2"}),
            json!({"_from": "v/1"}),
            json!({"_key": "k", "_from": "v/1", "_to": 3}),
            json!({"_key": "k2", "_from": "v/2", "_to": "v/3"}),
        ],
        &opts(),
    );
    assert!(durability.is_none());
    let generated = results[0].as_ref().unwrap().key.clone();
    assert!(!generated.is_empty());
    assert_eq!(read(&edges, &generated)["_to"], "v/2");
    assert!(results[1].is_err() && results[2].is_err());
    let single_error = |doc: Value| edges.insert(doc, &opts()).unwrap_err().num();
    assert_eq!(
        results[1].as_ref().unwrap_err().num(),
        single_error(json!({"_from": "v/1"}))
    );
    assert_eq!(
        results[2].as_ref().unwrap_err().num(),
        single_error(json!({"_key": "k", "_from": "v/1", "_to": 3}))
    );
    assert_eq!(read(&edges, "k2")["_from"], "v/2");
    assert_eq!(edges.count(), 2);
}

#[test]
fn a_large_batch_runs_in_several_locked_runs_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    let docs: Vec<Value> = (0..2500)
        .map(|i| json!({"_key": format!("k{}", i % 2000), "i": i}))
        .collect();
    let options = WriteOptions {
        overwrite_mode: OverwriteMode::Replace,
        ..opts()
    };
    let (results, _) = c.insert_many_deferred(docs, &options);
    assert!(results.iter().all(Result::is_ok));
    // Keys 0..500 were written twice; the later write won and replaced the earlier one.
    assert!(results[2100].as_ref().unwrap().old_rev.is_some());
    assert_eq!(read(&c, "k100")["i"], 2100);
    assert_eq!(read(&c, "k1999")["i"], 1999);
    assert_eq!(c.count(), 2000);
}
