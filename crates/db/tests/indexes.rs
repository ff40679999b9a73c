//! Secondary indexes in the local engine: unique constraints through every write form (single,
//! multi, inside a stream transaction), sparse and array fields, what survives a restart, a
//! compaction and a truncate, dropping and renaming, and a property test that compares every
//! `index_lookup` with a brute-force filter and sort over the same documents.

use crate::common;

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use proptest::prelude::*;
use quince_db::{
    Catalog, CollectionOps, DatabaseOps, IndexLookup, WriteKind, WriteOptions, WriteRequest,
};
use quince_errors::Result;
use quince_model::order::compare_values;
use quince_ops::{compare_entries, TransactionOptions};
use serde_json::{json, Value};

use common::{create, open_os};

fn database(catalog: &Catalog) -> Arc<dyn DatabaseOps> {
    catalog.database("_system").unwrap()
}

fn collection(catalog: &Catalog, name: &str) -> Arc<dyn CollectionOps> {
    let db = database(catalog);
    match db.collection(name) {
        Ok(c) => c,
        Err(_) => db.create_collection(create(name)).unwrap(),
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

fn insert(c: &dyn CollectionOps, doc: Value) -> Result<String> {
    write(c, WriteKind::Insert, vec![doc]).pop().unwrap()
}

fn index(c: &dyn CollectionOps, body: Value) -> u64 {
    let (description, new) = c.create_index(&body).unwrap();
    assert!(new);
    description.id
}

/// The keys a lookup returns, in order.
fn keys(c: &dyn CollectionOps, id: u64, lookup: &IndexLookup) -> Vec<String> {
    let mut keys = Vec::new();
    c.index_lookup(id, lookup, &mut |hit| {
        keys.push(hit.key.to_owned());
        true
    })
    .unwrap();
    keys
}

fn all(c: &dyn CollectionOps, id: u64) -> Vec<String> {
    keys(c, id, &IndexLookup::all())
}

fn nums(results: &[Result<String>]) -> Vec<u32> {
    results
        .iter()
        .map(|r| r.as_ref().map_or_else(|e| e.num(), |_| 0))
        .collect()
}

#[test]
fn unique_violations_refuse_single_and_multi_writes_per_item() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    index(
        &*c,
        json!({"type": "persistent", "fields": ["u"], "unique": true}),
    );
    insert(&*c, json!({"_key": "a", "u": 1})).unwrap();
    let error = insert(&*c, json!({"_key": "b", "u": 1})).unwrap_err();
    assert_eq!(error.num(), 1210);
    assert!(error
        .message
        .ends_with("of type persistent over 'u'; conflicting key: a"));
    // Multi: items are independent, each decided seeing the earlier ones.
    let results = write(
        &*c,
        WriteKind::Insert,
        vec![
            json!({"_key": "c", "u": 2}),
            json!({"_key": "d", "u": 2}),
            json!({"_key": "e", "u": 1}),
            json!({"_key": "f", "u": 3}),
        ],
    );
    assert_eq!(nums(&results), [0, 1210, 1210, 0]);
    // An update that moves a value frees it for a later item of the same request.
    let mut moved = WriteRequest::new(
        WriteKind::Update,
        vec![json!({"_key": "a", "u": 10}), json!({"_key": "c", "u": 1})],
        WriteOptions::default(),
    );
    moved.key = None;
    let results: Vec<_> = c.write(moved).items;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    // Replacing a document with its own value is no conflict; removal frees the value.
    let mut same = WriteRequest::new(
        WriteKind::Replace,
        vec![json!({"u": 1})],
        WriteOptions::default(),
    );
    same.key = Some("c".into());
    c.write(same).settle_one().unwrap();
    write(&*c, WriteKind::Remove, vec![json!("c")])
        .pop()
        .unwrap()
        .unwrap();
    insert(&*c, json!({"_key": "g", "u": 1})).unwrap();
    assert_eq!(all(&*c, c.indexes()[1].id), ["g", "f", "a"]);
    // Failed writes left nothing behind in the index.
    assert_eq!(c.count(), 3);
    catalog.shutdown().unwrap();
}

#[test]
fn unique_violations_inside_a_transaction_refuse_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    index(
        &*c,
        json!({"type": "persistent", "fields": ["u"], "unique": true}),
    );
    insert(&*c, json!({"_key": "a", "u": 1})).unwrap();
    let begin = || {
        database(&catalog)
            .begin_transaction(TransactionOptions {
                write: vec!["c".into()],
                ..TransactionOptions::default()
            })
            .unwrap()
    };
    // Against a committed document: refused at commit, nothing written.
    let trx = begin();
    let inside = trx.database().collection("c").unwrap();
    insert(&*inside, json!({"_key": "b", "u": 1})).unwrap();
    assert_eq!(trx.commit().unwrap_err().num(), 1210);
    assert!(c.read("b").is_err());
    // Two of the transaction's own documents: refused at commit too.
    let trx = begin();
    let inside = trx.database().collection("c").unwrap();
    insert(&*inside, json!({"_key": "x", "u": 5})).unwrap();
    insert(&*inside, json!({"_key": "y", "u": 5})).unwrap();
    assert_eq!(trx.commit().unwrap_err().num(), 1210);
    assert_eq!(c.count(), 1);
    // A swap inside one transaction is fine; its lookups see its own writes.
    let trx = begin();
    let inside = trx.database().collection("c").unwrap();
    let id = c.indexes()[1].id;
    write(&*inside, WriteKind::Remove, vec![json!("a")])
        .pop()
        .unwrap()
        .unwrap();
    insert(&*inside, json!({"_key": "b", "u": 1})).unwrap();
    assert_eq!(
        keys(&*inside, id, &IndexLookup::equal(vec![json!(1)])),
        ["b"]
    );
    assert_eq!(keys(&*c, id, &IndexLookup::equal(vec![json!(1)])), ["a"]);
    trx.commit().unwrap();
    assert_eq!(keys(&*c, id, &IndexLookup::equal(vec![json!(1)])), ["b"]);
    catalog.shutdown().unwrap();
}

#[test]
fn sparse_and_array_fields() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    let sparse = index(
        &*c,
        json!({"type": "persistent", "fields": ["s"], "sparse": true, "unique": true}),
    );
    let tags = index(&*c, json!({"type": "persistent", "fields": ["tags[*]"]}));
    // Sparse unique: many documents without the value coexist.
    for (key, s) in [("a", json!(null)), ("b", json!(null)), ("c", json!(1))] {
        insert(&*c, json!({"_key": key, "s": s, "tags": ["x", "y", "x"]})).unwrap();
    }
    insert(&*c, json!({"_key": "d", "tags": "x"})).unwrap();
    assert_eq!(all(&*c, sparse), ["c"]);
    assert_eq!(
        keys(&*c, tags, &IndexLookup::equal(vec![json!("x")])),
        ["a", "b", "c"]
    );
    assert_eq!(all(&*c, tags).len(), 6);
    let desc = &c.indexes()[2];
    assert_eq!(desc.json["selectivityEstimate"], json!(2.0 / 6.0));
    catalog.shutdown().unwrap();
}

#[test]
fn restart_compaction_and_truncate_keep_the_index_true() {
    let dir = tempfile::tempdir().unwrap();
    let id;
    {
        let catalog = open_os(dir.path());
        let c = collection(&catalog, "c");
        id = index(
            &*c,
            json!({"type": "persistent", "fields": ["n"], "name": "byN"}),
        );
        index(
            &*c,
            json!({"type": "ttl", "fields": ["at"], "expireAfter": 3600}),
        );
        let docs: Vec<Value> = (0..300)
            .map(|i| json!({"_key": format!("k{i}"), "n": i % 7}))
            .collect();
        write(&*c, WriteKind::Insert, docs);
        // Churn, then compact: records move, the index does not care.
        for round in 0..3 {
            let updates: Vec<Value> = (0..300)
                .map(|i| json!({"_key": format!("k{i}"), "n": (i + round) % 5}))
                .collect();
            write(&*c, WriteKind::Update, updates);
        }
        c.compact().unwrap();
        assert_eq!(keys(&*c, id, &IndexLookup::equal(vec![json!(0)])).len(), 60);
        catalog.shutdown().unwrap();
    }
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    let names: Vec<String> = c.indexes().iter().map(|i| i.name.clone()).collect();
    assert_eq!(names[..2], ["primary", "byN"]);
    assert_eq!(c.indexes()[2].json["type"], "ttl");
    assert_eq!(keys(&*c, id, &IndexLookup::equal(vec![json!(0)])).len(), 60);
    assert_eq!(all(&*c, id).len(), 300);
    c.truncate(false).unwrap();
    assert!(all(&*c, id).is_empty());
    insert(&*c, json!({"_key": "z", "n": 0})).unwrap();
    assert_eq!(all(&*c, id), ["z"]);
    // Drop by name: gone now and after a restart; the primary index cannot be dropped.
    assert_eq!(c.drop_index("0").unwrap_err().num(), 1212);
    assert_eq!(c.drop_index("byN").unwrap().id, id);
    assert_eq!(c.drop_index("byN").unwrap_err().num(), 1212);
    assert_eq!(
        c.index_lookup(id, &IndexLookup::all(), &mut |_| true)
            .unwrap_err()
            .num(),
        1212
    );
    catalog.shutdown().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    assert_eq!(c.indexes().len(), 2);
    // Rename: descriptions follow the name.
    database(&catalog).rename_collection("c", "d").unwrap();
    let d = collection(&catalog, "d");
    assert!(d.indexes()[1].json["id"]
        .as_str()
        .unwrap()
        .starts_with("d/"));
    catalog.shutdown().unwrap();
}

#[test]
fn create_answers_the_existing_index_and_refuses_a_taken_name() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    let body = json!({"type": "persistent", "fields": ["a"], "name": "n"});
    let id = index(&*c, body.clone());
    let (again, new) = c
        .create_index(&json!({"type": "hash", "fields": ["a"]}))
        .unwrap();
    assert_eq!((again.id, new), (id, false));
    let taken = c.create_index(&json!({"type": "persistent", "fields": ["b"], "name": "n"}));
    assert_eq!(taken.unwrap_err().num(), 1207);
    insert(&*c, json!({"_key": "x", "b": 1})).unwrap();
    insert(&*c, json!({"_key": "y", "b": 1})).unwrap();
    let clash = c.create_index(&json!({"type": "persistent", "fields": ["b"], "unique": true}));
    assert_eq!(clash.unwrap_err().num(), 1210);
    assert_eq!(c.indexes().len(), 2);
    catalog.shutdown().unwrap();
}

/// A document of the property test: small values of mixed types, sometimes missing.
fn arb_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..4).prop_map(Value::from),
        (-3i64..4).prop_map(|i| json!(i as f64 + 0.5)),
        prop::sample::select(vec!["", "a", "ab", "b", "B", "é"]).prop_map(Value::from),
        prop::collection::vec((-1i64..2).prop_map(Value::from), 0..3).prop_map(Value::Array),
    ]
}

fn arb_doc() -> impl Strategy<Value = (Option<Value>, Option<Value>)> {
    (
        prop::option::weighted(0.9, arb_value()),
        prop::option::weighted(0.9, arb_value()),
    )
}

fn arb_bound() -> impl Strategy<Value = Bound<Value>> {
    prop_oneof![
        Just(Bound::Unbounded),
        arb_value().prop_map(Bound::Included),
        arb_value().prop_map(Bound::Excluded),
    ]
}

fn arb_lookup() -> impl Strategy<Value = IndexLookup> {
    (
        prop::collection::vec(arb_value(), 0..2),
        arb_bound(),
        arb_bound(),
        any::<bool>(),
    )
        .prop_map(|(prefix, low, high, reverse)| {
            let (low, high) = if prefix.len() == 2 {
                (Bound::Unbounded, Bound::Unbounded)
            } else {
                (low, high)
            };
            IndexLookup::Sorted {
                prefix,
                low,
                high,
                reverse,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every lookup returns what a brute-force filter over the documents' entries, sorted by
    /// `compare_values` and then key, returns.
    #[test]
    fn lookups_equal_brute_force(
        docs in prop::collection::vec(arb_doc(), 0..40),
        lookups in prop::collection::vec(arb_lookup(), 1..12),
        sparse in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let catalog = open_os(dir.path());
        let c = collection(&catalog, "c");
        let id = index(&*c, json!({"type": "persistent", "fields": ["a", "b"], "sparse": sparse}));
        let mut entries: Vec<(Vec<Value>, String)> = Vec::new();
        let bodies: Vec<Value> = docs.iter().enumerate().map(|(i, (a, b))| {
            let key = format!("k{i:02}");
            let mut body = json!({"_key": key});
            if let Some(a) = a { body["a"] = a.clone(); }
            if let Some(b) = b { body["b"] = b.clone(); }
            let values = [a.clone().unwrap_or(Value::Null), b.clone().unwrap_or(Value::Null)];
            if !(sparse && values.iter().any(Value::is_null)) {
                entries.push((values.to_vec(), key));
            }
            body
        }).collect();
        write(&*c, WriteKind::Insert, bodies);
        entries.sort_by(|x, y| compare_entries(&x.0, &y.0).then_with(|| x.1.cmp(&y.1)));
        for lookup in &lookups {
            let mut expected: Vec<String> = entries
                .iter()
                .filter(|(values, _)| brute_match(lookup, values))
                .map(|(_, key)| key.clone())
                .collect();
            if lookup.reverse() {
                expected.reverse();
            }
            prop_assert_eq!(keys(&*c, id, lookup), expected, "{:?}", lookup);
        }
        catalog.shutdown().unwrap();
    }
}

/// The lookup's meaning written out with `compare_values` alone.
fn brute_match(lookup: &IndexLookup, values: &[Value]) -> bool {
    let IndexLookup::Sorted {
        prefix, low, high, ..
    } = lookup
    else {
        unreachable!()
    };
    let eq = |a: &Value, b: &Value| compare_values(a, b) == Ordering::Equal;
    if !prefix.iter().zip(values).all(|(p, v)| eq(p, v)) {
        return false;
    }
    let Some(next) = values.get(prefix.len()) else {
        return true;
    };
    let low_ok = match low {
        Bound::Unbounded => true,
        Bound::Included(l) => compare_values(next, l) != Ordering::Less,
        Bound::Excluded(l) => compare_values(next, l) == Ordering::Greater,
    };
    let high_ok = match high {
        Bound::Unbounded => true,
        Bound::Included(h) => compare_values(next, h) != Ordering::Greater,
        Bound::Excluded(h) => compare_values(next, h) == Ordering::Less,
    };
    low_ok && high_ok
}
