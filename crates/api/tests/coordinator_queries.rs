//! AQL on a coordinator whose DB servers answer with Quince's own api (the harness in
//! `coordinator_support/`): each query gives the results a single engine gives over the same
//! documents, and the shards send only what the query reads: the documents its filter keeps
//! (with the values of earlier variables), the attributes it reads, as many as its limit (the
//! first in its sort's order), the candidates of an index lookup or of an edge lookup, and
//! nothing for documents read by key.
//!
//! It fails if a filter, projection, sort or limit is not sent to the shards (the documents and bytes
//! the shards' cursors sent are counted), or if sending one changes a result.

use crate::coordinator_support;

use std::sync::Arc;

use quince_aql::{prepare, Control, Outcome, QueryOptions};
use quince_ops::fake::FakeEngine;
use quince_ops::{
    CollectionOps, CollectionType, DatabaseOps, Engine, WriteKind, WriteOptions, WriteRequest,
};
use serde_json::{json, Value};

use coordinator_support::{create, CoordinatorOverApi};

const DOCUMENTS: i64 = 3000;

fn load(db: &Arc<dyn DatabaseOps>, cluster: bool) {
    let body = json!({"numberOfShards": 3});
    let c = if cluster {
        db.create_collection_with(create("c"), &body).unwrap()
    } else {
        db.create_collection(create("c")).unwrap()
    };
    let docs: Vec<Value> = (0..DOCUMENTS)
        .map(|n| {
            json!({"_key": format!("k{n}"), "n": n, "tag": n % 10,
                   "text": "some words that make the document longer than its attributes"})
        })
        .collect();
    insert(&c, docs);
    c.create_index(&json!({"type": "persistent", "fields": ["tag", "n"]}))
        .unwrap();
    let mut edges_request = create("e");
    edges_request.kind = CollectionType::Edge;
    let e = if cluster {
        db.create_collection_with(edges_request, &body).unwrap()
    } else {
        db.create_collection(edges_request).unwrap()
    };
    let edges: Vec<Value> = (0..600)
        .map(|n| json!({"_key": format!("e{n}"), "_from": format!("v/{}", n % 30), "_to": format!("v/{}", n % 7)}))
        .collect();
    insert(&e, edges);
}

fn insert(c: &Arc<dyn CollectionOps>, docs: Vec<Value>) {
    let results = c.write(WriteRequest::new(
        WriteKind::Insert,
        docs,
        WriteOptions::default(),
    ));
    assert!(results.items.iter().all(Result::is_ok));
}

fn run(db: &Arc<dyn DatabaseOps>, query: &str) -> (Vec<Value>, Outcome) {
    let prepared = prepare(
        db.clone(),
        query,
        serde_json::Map::new(),
        QueryOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{query}: {e:?}"));
    let mut out = Vec::new();
    let outcome = prepared
        .run(Control::new(None), None, &mut |v| {
            out.push(v);
            Ok(true)
        })
        .unwrap_or_else(|e| panic!("{query}: {e:?}"));
    (out, outcome)
}

/// Results in a canonical order (the shards' order is not a single engine's).
fn sorted(mut values: Vec<Value>) -> Vec<Value> {
    values.sort_by_key(|v| v.to_string());
    values
}

fn rules(db: &Arc<dyn DatabaseOps>, query: &str) -> Vec<&'static str> {
    prepare(
        db.clone(),
        query,
        serde_json::Map::new(),
        QueryOptions::default(),
    )
    .unwrap()
    .plan()
    .rules
    .clone()
}

#[test]
fn queries_send_the_shards_only_what_they_read() {
    let cluster = CoordinatorOverApi::start();
    let coordinator = cluster.coordinator.engine().database("_system").unwrap();
    load(&coordinator, true);
    let single_engine = FakeEngine::new();
    let single = single_engine.database("_system").unwrap();
    load(&single, false);
    cluster.sent.take();

    // (query, ordered result, the most documents the shards may send)
    let cases: Vec<(&str, bool, usize)> =
        vec![
        ("FOR d IN c FILTER d.n < 25 RETURN UNSET(d, '_rev')", false, 25),
        ("FOR d IN c FILTER d.n >= 100 && d.n < 110 RETURN d.n", false, 10),
        ("FOR d IN c FILTER d.text == 'nothing' RETURN UNSET(d, '_rev')", false, 0),
        ("FOR d IN c LIMIT 10 RETURN d._key", false, 30),
        ("FOR d IN c FILTER d.n % 100 == 0 LIMIT 2, 5 RETURN d.n", false, 21),
        ("LET x = 2990 FOR d IN c FILTER d.n > x RETURN d._id", false, 9),
        ("FOR x IN [5, 6] FOR d IN c FILTER d.n == x * 100 RETURN [x, d._key]", false, 2),
        ("FOR d IN c FILTER d.n < 5 && d._id != 'c/k3' RETURN d.n", false, 5),
        ("FOR d IN c FILTER d._id == 'c/k7' RETURN d.n", false, DOCUMENTS as usize),
        ("FOR d IN c FILTER d.tag == 1 COLLECT WITH COUNT INTO k RETURN k", false, 300),
        (
            "FOR d IN c FILTER d.tag == 4 && d.n >= 100 && d.n < 200 SORT d.tag, d.n RETURN d.n",
            true,
            10,
        ),
        ("FOR d IN c FILTER d.tag == 4 SORT d.tag DESC, d.n DESC LIMIT 3 RETURN d.n", true, 300),
        ("FOR e IN e FILTER e._from == 'v/4' SORT e._key RETURN e._to", true, 20),
        ("FOR v IN 1..1 OUTBOUND 'v/5' e RETURN v._id", false, 20),
        ("FOR d IN c FILTER d._key IN ['k1', 'k2999', 'nope', 'c/k2', ''] RETURN d.n", false, 0),
        ("FOR d IN c FILTER d._key == 'c/k1' RETURN d.n", false, 0),
        ("FOR d IN c FILTER d.n % 3 == 0 SORT d.n DESC LIMIT 5 RETURN d.n", true, 15),
        ("FOR d IN c SORT d.text, d.n LIMIT 2, 3 RETURN d.n", true, 15),
        ("LET k = 5 FOR d IN c SORT ABS(d.n - 1000 * k) LIMIT 2 RETURN d.n", true, 6),
        ("FOR d IN c LET m = d.n % 7 SORT m, d.n LIMIT 3 RETURN d.n", true, DOCUMENTS as usize),
    ];
    for (query, ordered, most) in cases {
        let (got, _) = run(&coordinator, query);
        let (want, _) = run(&single, query);
        let (documents, _) = cluster.sent.take();
        let (got, want) = if ordered {
            (got, want)
        } else {
            (sorted(got), sorted(want))
        };
        // A limit without order may pick any documents: compare the count only.
        if query.contains("LIMIT") && !ordered {
            assert_eq!(got.len(), want.len(), "{query}");
        } else {
            assert_eq!(got, want, "{query}");
        }
        assert!(
            documents <= most,
            "{query}: the shards sent {documents} documents, at most {most} were needed"
        );
    }

    // Only the attributes read travel.
    let (_, whole) = {
        run(&coordinator, "FOR d IN c FILTER d.n % 10 == 3 RETURN d");
        cluster.sent.take()
    };
    let (_, projected) = {
        run(&coordinator, "FOR d IN c FILTER d.n % 10 == 3 RETURN d.n");
        cluster.sent.take()
    };
    assert!(
        projected * 3 < whole,
        "a projection sends less: {projected} bytes against {whole}"
    );

    // An index plan that reads only indexed values has the shards send just those.
    let (_, indexed_whole) = {
        run(&coordinator, "FOR d IN c FILTER d.tag == 3 RETURN d");
        cluster.sent.take()
    };
    let (_, indexed_values) = {
        run(&coordinator, "FOR d IN c FILTER d.tag == 3 RETURN d.n");
        cluster.sent.take()
    };
    assert!(
        indexed_values * 3 < indexed_whole,
        "indexed values only: {indexed_values} bytes against {indexed_whole}"
    );
    let (mut got, _) = run(&coordinator, "FOR d IN c FILTER d.tag == 3 RETURN d.n");
    got.sort_by_key(|v| v.as_i64());
    let want: Vec<Value> = (0..DOCUMENTS)
        .filter(|n| n % 10 == 3)
        .map(|n| json!(n))
        .collect();
    assert_eq!(got, want);

    // The shards' work is in the query's statistics, as a single engine's would be.
    let (_, outcome) = run(&coordinator, "FOR d IN c FILTER d.n < 25 RETURN d.n");
    assert_eq!(outcome.stats.scanned_full, DOCUMENTS as u64);
    assert_eq!(outcome.stats.filtered, DOCUMENTS as u64 - 25);

    // The plan says where the work went.
    let applied = rules(&coordinator, "FOR d IN c FILTER d.n < 25 RETURN d.n");
    assert!(applied.contains(&"scatter-in-cluster"), "{applied:?}");
    assert!(
        applied.contains(&"distribute-filtercalc-to-cluster"),
        "{applied:?}"
    );
    let sorted_rules = rules(&coordinator, "FOR d IN c SORT d.n LIMIT 3 RETURN d.n");
    assert!(
        sorted_rules.contains(&"distribute-sort-to-cluster"),
        "{sorted_rules:?}"
    );
    let local = rules(&single, "FOR d IN c FILTER d.n < 25 RETURN d.n");
    assert!(!local.contains(&"scatter-in-cluster"), "{local:?}");
    cluster.stop();
}
