//! The edge index in the local engine: listed after the primary index, neither creatable nor
//! droppable, kept by every write form (insert, update, replace, remove, truncate), rebuilt
//! on open, untouched by compaction, merged with a stream transaction's own writes, and a
//! property test that compares every edge lookup with a brute-force filter over the edges.

use crate::common;

use std::sync::Arc;

use proptest::prelude::*;
use quince_db::{
    Catalog, CollectionOps, CollectionType, DatabaseOps, IndexLookup, WriteKind, WriteOptions,
    WriteRequest,
};
use quince_errors::Result;
use quince_ops::{EdgeDirection, TransactionOptions, EDGE_INDEX_ID};
use serde_json::{json, Value};

use common::{create, open_os};

fn database(catalog: &Catalog) -> Arc<dyn DatabaseOps> {
    catalog.database("_system").unwrap()
}

/// The edge collection `name`, created when missing.
fn edges(catalog: &Catalog, name: &str) -> Arc<dyn CollectionOps> {
    let db = database(catalog);
    match db.collection(name) {
        Ok(c) => c,
        Err(_) => db
            .create_collection(quince_db::CreateCollection {
                kind: CollectionType::Edge,
                ..create(name)
            })
            .unwrap(),
    }
}

fn write(c: &dyn CollectionOps, kind: WriteKind, docs: Vec<Value>) -> Vec<Result<String>> {
    let request = WriteRequest::new(kind, docs, WriteOptions::default());
    c.write(request)
        .items
        .into_iter()
        .map(|item| item.map(|o| o.key))
        .collect()
}

fn edge(key: &str, from: &str, to: &str) -> Value {
    json!({"_key": key, "_from": from, "_to": to})
}

/// The keys of `vertex`'s edges in `direction`, in hit order; each hit's values checked:
/// `[vertex, the edge's other end]` as its document has it.
fn lookup(c: &dyn CollectionOps, direction: EdgeDirection, vertex: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let lookup = IndexLookup::Edge {
        direction,
        vertex: vertex.to_owned(),
    };
    c.index_lookup(EDGE_INDEX_ID, &lookup, &mut |hit| {
        hits.push((hit.key.to_owned(), hit.values.to_vec()));
        true
    })
    .unwrap();
    let other = match direction {
        EdgeDirection::Out => "_to",
        EdgeDirection::In => "_from",
    };
    for (key, values) in &hits {
        let document: serde_json::Value =
            serde_json::from_slice(&c.read(key).unwrap().json).unwrap();
        assert_eq!(values, &[json!(vertex), document[other].clone()]);
    }
    hits.into_iter().map(|(key, _)| key).collect()
}

fn out(c: &dyn CollectionOps, vertex: &str) -> Vec<String> {
    lookup(c, EdgeDirection::Out, vertex)
}

fn inbound(c: &dyn CollectionOps, vertex: &str) -> Vec<String> {
    lookup(c, EdgeDirection::In, vertex)
}

#[test]
fn listed_after_the_primary_index_and_neither_created_nor_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let e = edges(&catalog, "e");
    let indexes = e.indexes();
    assert_eq!(indexes.len(), 2);
    assert_eq!(indexes[1].json["id"], "e/1");
    assert_eq!(indexes[1].json["type"], "edge");
    assert_eq!(indexes[1].json["name"], "edge");
    assert_eq!(indexes[1].json["fields"], json!(["_from", "_to"]));
    assert_eq!(indexes[1].json["selectivityEstimate"], 1);
    assert_eq!(e.drop_index("1").unwrap_err().num(), 11);
    assert_eq!(e.drop_index("edge").unwrap_err().num(), 11);
    let body = json!({"type": "edge", "fields": ["_from"]});
    assert_eq!(e.create_index(&body).unwrap_err().num(), 10);
    let named = json!({"type": "persistent", "fields": ["x"], "name": "edge"});
    assert_eq!(e.create_index(&named).unwrap_err().num(), 1207);
    // A document collection has none, and may name an index `edge`.
    let d = database(&catalog).create_collection(create("d")).unwrap();
    assert_eq!(d.indexes().len(), 1);
    assert!(d.create_index(&named).unwrap().1);
    assert_eq!(e.figures().indexes[1].count, 0);
    // A sorted lookup on the edge index, and an edge lookup on another, are 400/10.
    let all = IndexLookup::all();
    let refused = e.index_lookup(EDGE_INDEX_ID, &all, &mut |_| true);
    assert_eq!(refused.unwrap_err().num(), 10);
    let by_x = d.indexes()[1].id;
    let edge_lookup = IndexLookup::Edge {
        direction: EdgeDirection::Out,
        vertex: "v/1".into(),
    };
    let refused = d.index_lookup(by_x, &edge_lookup, &mut |_| true);
    assert_eq!(refused.unwrap_err().num(), 10);
    catalog.shutdown().unwrap();
}

#[test]
fn every_write_form_keeps_it_and_a_restart_and_compaction_rebuild_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let catalog = open_os(dir.path());
        let e = edges(&catalog, "e");
        write(
            &*e,
            WriteKind::Insert,
            vec![
                edge("a", "v/1", "v/2"),
                edge("b", "v/1", "v/3"),
                edge("c", "v/2", "v/1"),
                edge("loop", "v/1", "v/1"),
            ],
        );
        assert_eq!(out(&*e, "v/1"), ["a", "b", "loop"]);
        assert_eq!(inbound(&*e, "v/1"), ["c", "loop"]);
        assert_eq!(inbound(&*e, "v/3"), ["b"]);
        // An update that leaves the ends alone, one that moves `_to`, a replace, a remove.
        write(&*e, WriteKind::Update, vec![json!({"_key": "a", "w": 1})]);
        assert_eq!(inbound(&*e, "v/2"), ["a"]);
        write(
            &*e,
            WriteKind::Update,
            vec![json!({"_key": "b", "_to": "v/2"})],
        );
        assert_eq!(inbound(&*e, "v/2"), ["a", "b"]);
        assert!(inbound(&*e, "v/3").is_empty());
        write(&*e, WriteKind::Replace, vec![edge("c", "w/9", "v/1")]);
        assert_eq!(out(&*e, "w/9"), ["c"]);
        assert!(out(&*e, "v/2").is_empty());
        write(&*e, WriteKind::Remove, vec![json!("loop")]);
        assert_eq!(out(&*e, "v/1"), ["a", "b"]);
        assert_eq!(inbound(&*e, "v/1"), ["c"]);
        // Churn, then compact: records move, the index does not care.
        let many: Vec<Value> = (0..200)
            .map(|i| edge(&format!("m{i:03}"), &format!("h/{}", i % 4), "t/0"))
            .collect();
        write(&*e, WriteKind::Insert, many);
        for round in 0..3 {
            let updates: Vec<Value> = (0..200)
                .map(|i| json!({"_key": format!("m{i:03}"), "round": round}))
                .collect();
            write(&*e, WriteKind::Update, updates);
        }
        e.compact().unwrap();
        assert_eq!(out(&*e, "h/0").len(), 50);
        assert_eq!(e.figures().indexes[1].count, 203);
        catalog.shutdown().unwrap();
    }
    let catalog = open_os(dir.path());
    let e = edges(&catalog, "e");
    assert_eq!(e.indexes()[1].json["type"], "edge");
    assert_eq!(out(&*e, "v/1"), ["a", "b"]);
    assert_eq!(inbound(&*e, "v/2"), ["a", "b"]);
    assert_eq!(out(&*e, "w/9"), ["c"]);
    assert_eq!(inbound(&*e, "t/0").len(), 200);
    // 6 distinct `_from` (v/1, w/9, h/0..h/3) and 3 distinct `_to`, over 203 edges.
    let estimate = e.indexes()[1].json["selectivityEstimate"].as_f64().unwrap();
    assert!((estimate - 9.0 / 406.0).abs() < 1e-9, "{estimate}");
    e.truncate(false).unwrap();
    assert!(out(&*e, "v/1").is_empty() && inbound(&*e, "t/0").is_empty());
    assert_eq!(e.indexes()[1].json["selectivityEstimate"], 1);
    catalog.shutdown().unwrap();
}

#[test]
fn a_transaction_sees_its_own_edges() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let e = edges(&catalog, "e");
    write(
        &*e,
        WriteKind::Insert,
        vec![edge("a", "v/1", "v/2"), edge("b", "v/1", "v/3")],
    );
    let trx = database(&catalog)
        .begin_transaction(TransactionOptions {
            write: vec!["e".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let inside = trx.database().collection("e").unwrap();
    write(&*inside, WriteKind::Remove, vec![json!("a")]);
    write(&*inside, WriteKind::Insert, vec![edge("c", "v/1", "v/9")]);
    write(
        &*inside,
        WriteKind::Update,
        vec![json!({"_key": "b", "_from": "v/5"})],
    );
    assert_eq!(out(&*inside, "v/1"), ["c"]);
    assert_eq!(out(&*inside, "v/5"), ["b"]);
    assert_eq!(inbound(&*inside, "v/9"), ["c"]);
    assert_eq!(out(&*e, "v/1"), ["a", "b"]);
    let all = IndexLookup::all();
    let refused = inside.index_lookup(EDGE_INDEX_ID, &all, &mut |_| true);
    assert_eq!(refused.unwrap_err().num(), 10);
    trx.commit().unwrap();
    assert_eq!(out(&*e, "v/1"), ["c"]);
    assert_eq!(out(&*e, "v/5"), ["b"]);
    // A truncate inside a transaction empties its view, then the collection.
    let trx = database(&catalog)
        .begin_transaction(TransactionOptions {
            write: vec!["e".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let inside = trx.database().collection("e").unwrap();
    inside.truncate(false).unwrap();
    assert!(out(&*inside, "v/1").is_empty());
    assert_eq!(out(&*e, "v/1"), ["c"]);
    trx.commit().unwrap();
    assert!(out(&*e, "v/1").is_empty());
    catalog.shutdown().unwrap();
}

/// One step of the property test: write an edge (or remove it) by key index.
#[derive(Clone, Debug)]
enum Step {
    Put(usize, usize, usize),
    Remove(usize),
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0usize..12, 0usize..5, 0usize..5).prop_map(|(k, f, t)| Step::Put(k, f, t)),
        1 => (0usize..12).prop_map(Step::Remove),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// After any run of inserts, replaces and removes (and a restart), every edge lookup
    /// returns the keys a brute-force filter over the live edges returns, in key order.
    #[test]
    fn lookups_equal_brute_force(steps in prop::collection::vec(arb_step(), 1..60)) {
        let dir = tempfile::tempdir().unwrap();
        let vertex = |i: usize| format!("v/{i}");
        let mut model: std::collections::BTreeMap<String, (String, String)> = Default::default();
        {
            let catalog = open_os(dir.path());
            let e = edges(&catalog, "e");
            for step in &steps {
                match step {
                    Step::Put(k, f, t) => {
                        let key = format!("k{k:02}");
                        let kind = if model.contains_key(&key) {
                            WriteKind::Replace
                        } else {
                            WriteKind::Insert
                        };
                        let body = edge(&key, &vertex(*f), &vertex(*t));
                        write(&*e, kind, vec![body]).pop().unwrap().unwrap();
                        model.insert(key, (vertex(*f), vertex(*t)));
                    }
                    Step::Remove(k) => {
                        let key = format!("k{k:02}");
                        let removed = write(&*e, WriteKind::Remove, vec![json!(key)]);
                        prop_assert_eq!(removed[0].is_ok(), model.remove(&key).is_some());
                    }
                }
            }
            check(&*e, &model)?;
            catalog.shutdown().unwrap();
        }
        let catalog = open_os(dir.path());
        check(&*edges(&catalog, "e"), &model)?;
        catalog.shutdown().unwrap();
    }
}

fn check(
    e: &dyn CollectionOps,
    model: &std::collections::BTreeMap<String, (String, String)>,
) -> std::result::Result<(), TestCaseError> {
    for i in 0..5 {
        let v = format!("v/{i}");
        let expected = |pick: fn(&(String, String)) -> &String| -> Vec<String> {
            model
                .iter()
                .filter(|(_, ends)| *pick(ends) == v)
                .map(|(k, _)| k.clone())
                .collect()
        };
        prop_assert_eq!(out(e, &v), expected(|e| &e.0));
        prop_assert_eq!(inbound(e, &v), expected(|e| &e.1));
    }
    Ok(())
}
