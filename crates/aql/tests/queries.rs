//! The language, query by query: a table of AQL texts and the results ArangoDB's
//! documentation gives for them, run through the parser, the planner and the executor over
//! the fake engine; and the plans the optimizer makes for indexes.
//!
//! Every row fails if its construct breaks: the expected values are the documented ones
//! (type order, null handling, COLLECT's sorted groups, LIMIT's offset, subquery arrays).

use crate::engine;

use std::sync::Arc;

use engine::{create, insert, run_with};
use quince_aql::{prepare, QueryOptions};
use quince_ops::fake::FakeEngine;
use quince_ops::{CollectionType, CreateCollection, DatabaseOps, Engine};
use serde_json::{json, Map, Value};

/// `users` (6 documents: name, age, city, tags) and `nums` (k0..k19: a = i, g = i % 3).
fn database() -> Arc<dyn DatabaseOps> {
    let engine = FakeEngine::new();
    let db = engine.database("_system").unwrap();
    let users = create(&db, "users");
    let people = json!([
        {"_key": "ann", "name": "Ann", "age": 31, "city": "Oslo", "tags": ["a", "b"]},
        {"_key": "bob", "name": "Bob", "age": 25, "city": "Rome", "tags": ["b"]},
        {"_key": "cid", "name": "Cid", "age": 40, "city": "Oslo", "tags": []},
        {"_key": "dee", "name": "Dee", "age": 25, "city": "Lima"},
        {"_key": "eve", "name": "eve", "age": null, "city": "Rome", "tags": ["a", "c"]},
        {"_key": "fay", "name": "Fay", "age": 52, "city": "Lima", "tags": ["c"]},
    ]);
    insert(&users, people.as_array().unwrap().clone());
    let nums = create(&db, "nums");
    insert(
        &nums,
        (0..20)
            .map(|i| json!({"_key": format!("k{i}"), "a": i, "g": i % 3}))
            .collect(),
    );
    db
}

fn run(db: &Arc<dyn DatabaseOps>, query: &str) -> Vec<Value> {
    engine::results(db, query, json!({}))
}

fn check(rows: &[(&str, Value)]) {
    let db = database();
    for (query, expected) in rows {
        let got = Value::Array(run(&db, query));
        assert_eq!(&got, expected, "{query}");
    }
}

#[test]
fn loops_filters_sorts_and_limits() {
    check(&[
        ("FOR i IN [3, 1, 2] RETURN i", json!([3, 1, 2])),
        ("FOR i IN [3, 1, 2] SORT i RETURN i", json!([1, 2, 3])),
        ("FOR i IN [3, 1, 2] SORT i DESC RETURN i", json!([3, 2, 1])),
        (
            "FOR i IN 1..10 FILTER i % 2 == 0 LIMIT 1, 2 RETURN i",
            json!([4, 6]),
        ),
        (
            "FOR i IN 1..3 FOR j IN 1..2 RETURN [i, j]",
            json!([[1, 1], [1, 2], [2, 1], [2, 2], [3, 1], [3, 2]]),
        ),
        (
            "FOR i IN 1..3 FOR j IN 1..2 LIMIT 3 RETURN [i, j]",
            json!([[1, 1], [1, 2], [2, 1]]),
        ),
        (
            "FOR u IN users FILTER u.city == 'Oslo' SORT u.name RETURN u.name",
            json!(["Ann", "Cid"]),
        ),
        (
            "FOR u IN users SORT u.age, u.name RETURN u._key",
            json!(["eve", "bob", "dee", "ann", "cid", "fay"]),
        ),
        (
            "FOR u IN users SORT u.name RETURN u.name",
            json!(["Ann", "Bob", "Cid", "Dee", "eve", "Fay"]),
        ),
        (
            "FOR u IN users FILTER u.age > 30 AND u.age < 50 SORT u.age RETURN u.age",
            json!([31, 40]),
        ),
        (
            "FOR u IN users FILTER u.age < 30 SORT u.age RETURN u.age",
            json!([null, 25, 25]),
        ),
        (
            "FOR u IN users FILTER 'a' IN u.tags SORT u._key RETURN u._key",
            json!(["ann", "eve"]),
        ),
        (
            "FOR u IN users FILTER u.tags ANY == 'c' SORT u._key RETURN u._key",
            json!(["eve", "fay"]),
        ),
        (
            "FOR u IN users FILTER LENGTH(u.tags) == 0 SORT u._key RETURN u._key",
            json!(["cid", "dee"]),
        ),
        ("FOR u IN users LIMIT 0 RETURN u", json!([])),
        (
            "FOR u IN users LIMIT 2, null SORT u._key RETURN u._key",
            json!(["cid", "dee", "eve", "fay"]),
        ),
        (
            "FOR i IN [1, 2, 2, 3, 1] RETURN DISTINCT i",
            json!([1, 2, 3]),
        ),
        (
            "LET x = 5 FOR i IN 1..x FILTER i > 3 RETURN i * x",
            json!([20, 25]),
        ),
        ("FOR i IN [] RETURN i", json!([])),
        ("RETURN (FOR i IN 1..3 RETURN i * i)", json!([[1, 4, 9]])),
        (
            "FOR u IN users FILTER u._key == 'bob' RETURN u.name",
            json!(["Bob"]),
        ),
        (
            "FOR u IN users FILTER u._key IN ['bob', 'zed', 'ann'] SORT u._key RETURN u.name",
            json!(["Ann", "Bob"]),
        ),
        (
            "WITH users FOR u IN users FILTER u.name == 'Fay' RETURN u.age",
            json!([52]),
        ),
    ]);
}

#[test]
fn operators_follow_aql_rules() {
    check(&[
        ("RETURN [1 + 2 * 3, (1 + 2) * 3, 7 % 3, -2 - -2]", json!([[7, 9, 1, 0]])),
        ("RETURN [null == false, null < false, false < 0, 0 < '', '' < [], [] < {}]", json!([[false, true, true, true, true, true]])),
        ("RETURN [1 / 0, 'a' + 1]", json!([[null, 1]])),
        ("RETURN [true && 'x', false || 0, null || 'y', 0 && 1]", json!([[ "x", 0, "y", 0]])),
        ("RETURN [1 ? 'yes' : 'no', 0 ?: 'other', 'set' ?: 'other']", json!([["yes", "other", "set"]])),
        ("RETURN ['abc' LIKE 'a%', 'abc' LIKE '_b_', 'abc' NOT LIKE 'b%', 'abc' =~ '^a.c$']", json!([[true, true, true, true]])),
        ("RETURN [2 IN [1, 2], 3 NOT IN [1, 2], [1, 2] ALL IN [1, 2, 3], [] ANY == 1, [1, 2] NONE > 5]", json!([[true, true, true, false, true]])),
        ("RETURN [1, 2, 3] AT LEAST (2) > 1", json!([true])),
        ("RETURN {a: {b: [10, 20, 30]}}.a.b[-1]", json!([30])),
        ("RETURN {a: 1}.missing.deeper", json!([null])),
        ("LET o = {a: 1} RETURN {o, [CONCAT('k', 1)]: 2, 'q': 3}", json!([{"o": {"a": 1}, "k1": 2, "q": 3}])),
        ("RETURN [1..3, 3..1]", json!([[[1, 2, 3], [3, 2, 1]]])),
    ]);
}

#[test]
fn array_expansion() {
    check(&[
        (
            "FOR u IN users FILTER u._key == 'ann' RETURN u.tags[*]",
            json!([["a", "b"]]),
        ),
        (
            "RETURN [{n: 1, t: [1, 2]}, {n: 2, t: [3]}][*].n",
            json!([[1, 2]]),
        ),
        (
            "RETURN [{n: 1, t: [1, 2]}, {n: 2, t: [3]}][**].t",
            json!([[[1, 2], [3]]]),
        ),
        ("RETURN [[1, 2], [3]][**]", json!([[1, 2, 3]])),
        (
            "RETURN [1, 2, 3, 4][* FILTER CURRENT % 2 == 0 RETURN CURRENT * 10]",
            json!([[20, 40]]),
        ),
        ("RETURN [1, 2, 3, 4][* LIMIT 1, 2]", json!([[2, 3]])),
        ("RETURN 5[*]", json!([[]])),
    ]);
}

#[test]
fn collect_in_every_form() {
    check(&[
        ("FOR u IN users COLLECT city = u.city RETURN city", json!(["Lima", "Oslo", "Rome"])),
        ("FOR u IN users COLLECT city = u.city WITH COUNT INTO n RETURN [city, n]", json!([["Lima", 2], ["Oslo", 2], ["Rome", 2]])),
        ("FOR u IN users COLLECT city = u.city INTO g RETURN [city, LENGTH(g)]", json!([["Lima", 2], ["Oslo", 2], ["Rome", 2]])),
        ("FOR u IN users FILTER u.city == 'Oslo' COLLECT city = u.city INTO g = u.name RETURN g", json!([["Ann", "Cid"]])),
        ("FOR u IN users FILTER u.city == 'Lima' LET n = u.name COLLECT c = u.city INTO g KEEP n RETURN g", json!([[{"n": "Dee"}, {"n": "Fay"}]])),
        ("FOR u IN users COLLECT AGGREGATE lo = MIN(u.age), hi = MAX(u.age), s = SUM(u.age), n = LENGTH(u) RETURN [lo, hi, s, n]", json!([[25, 52, 173, 6]])),
        ("FOR u IN users COLLECT city = u.city AGGREGATE avg = AVERAGE(u.age) RETURN [city, avg]", json!([["Lima", 38.5], ["Oslo", 35.5], ["Rome", 25]])),
        ("FOR n IN nums COLLECT WITH COUNT INTO c RETURN c", json!([20])),
        ("FOR i IN [] COLLECT WITH COUNT INTO c RETURN c", json!([0])),
        ("FOR n IN nums COLLECT g = n.g WITH COUNT INTO c RETURN {g, c}", json!([{"g": 0, "c": 7}, {"g": 1, "c": 7}, {"g": 2, "c": 6}])),
        ("FOR i IN [1, 1, 2] COLLECT x = i RETURN x", json!([1, 2])),
        ("FOR i IN [{a: 1, b: 2}, {a: 1, b: 3}] COLLECT a = i.a, b = i.b RETURN [a, b]", json!([[1, 2], [1, 3]])),
    ]);
}

#[test]
fn window_aggregates() {
    check(&[
        ("FOR i IN [1, 2, 3, 4] WINDOW { preceding: 1, following: 0 } AGGREGATE s = SUM(i) RETURN s", json!([1, 3, 5, 7])),
        ("FOR i IN [1, 2, 3, 4] WINDOW { preceding: 'unbounded', following: 0 } AGGREGATE s = SUM(i) RETURN s", json!([1, 3, 6, 10])),
        ("FOR i IN [1, 2, 4, 8] WINDOW i WITH { preceding: 2, following: 0 } AGGREGATE n = LENGTH(i) RETURN n", json!([1, 2, 2, 1])),
        // Bounds past any row count (issue 34: `following` overflowed).
        ("FOR i IN [1, 2, 3] WINDOW { preceding: 1e300, following: 1e300 } AGGREGATE s = SUM(i) RETURN s", json!([6, 6, 6])),
        ("FOR i IN [1, 2, 3] WINDOW { preceding: 1, following: 'inf' } AGGREGATE s = SUM(i) RETURN s", json!([6, 6, 5])),
    ]);
}

#[test]
fn data_modification_with_new_and_old() {
    let db = database();
    let inserted = run(
        &db,
        "FOR i IN 1..3 INSERT {_key: CONCAT('n', i), v: i} INTO nums RETURN NEW.v",
    );
    assert_eq!(inserted, vec![json!(1), json!(2), json!(3)]);
    let updated = run(&db, "FOR d IN nums FILTER d.v != null UPDATE d WITH {v: d.v * 10} IN nums RETURN [OLD.v, NEW.v]");
    assert_eq!(updated.len(), 3);
    assert!(updated.contains(&json!([2, 20])));
    let replaced = run(&db, "REPLACE 'n1' WITH {w: 1} IN nums RETURN NEW");
    assert_eq!(replaced[0]["w"], json!(1));
    assert!(replaced[0].get("v").is_none());
    let removed = run(
        &db,
        "FOR k IN ['n1', 'n2'] REMOVE k IN nums RETURN OLD._key",
    );
    assert_eq!(removed, vec![json!("n1"), json!("n2")]);
    let upserted = run(&db, "UPSERT {_key: 'n3'} INSERT {_key: 'n3', c: 1} UPDATE {c: OLD.c + 1, seen: true} IN nums RETURN NEW.seen");
    assert_eq!(upserted, vec![json!(true)]);
    let fresh = run(&db, "UPSERT {name: 'new'} INSERT {name: 'new', c: 1} UPDATE {c: OLD.c + 1} IN nums RETURN NEW.c");
    assert_eq!(fresh, vec![json!(1)]);
    let again = run(&db, "UPSERT {name: 'new'} INSERT {name: 'new', c: 1} UPDATE {c: OLD.c + 1} IN nums RETURN NEW.c");
    assert_eq!(again, vec![json!(2)]);
    let (_, outcome) = run_with(
        &db,
        "FOR i IN [1, 1] INSERT {_key: 'dup'} INTO nums OPTIONS {ignoreErrors: true}",
        json!({}),
    )
    .unwrap();
    assert_eq!(
        (outcome.stats.writes_executed, outcome.stats.writes_ignored),
        (1, 1)
    );
    let failed = run_with(&db, "INSERT {_key: 'dup'} INTO nums", json!({})).unwrap_err();
    assert_eq!(failed.num(), 1210);
    let kept = run(
        &db,
        "UPDATE 'k1' WITH {a: null, z: {y: 1}} IN nums OPTIONS {keepNull: false} RETURN NEW",
    );
    assert!(kept[0].get("a").is_none());
}

#[test]
fn compile_errors() {
    let db = database();
    let cases: &[(&str, Value, u32)] = &[
        ("FOR x IN RETURN x", json!({}), 1501),
        ("RETURN @missing", json!({}), 1551),
        ("RETURN 1", json!({"extra": 1}), 1552),
        ("FOR d IN @@c RETURN d", json!({"@c": 7}), 1553),
        ("FOR d IN nowhere RETURN d", json!({}), 1203),
        ("RETURN users", json!({}), 1568),
        ("RETURN NOPE(1)", json!({}), 1540),
        ("RETURN LENGTH()", json!({}), 1541),
        ("LET a = 1 LET a = 2 RETURN a", json!({}), 1511),
        (
            "INSERT {} INTO nums FOR d IN nums RETURN d",
            json!({}),
            1579,
        ),
        ("FOR i IN 1..3 LIMIT -1 RETURN i", json!({}), 1504),
        (
            "FOR u IN users COLLECT AGGREGATE x = CONCAT(u.name) RETURN x",
            json!({}),
            1574,
        ),
        ("FOR i IN 5 RETURN i", json!({}), 1563),
    ];
    for (query, binds, code) in cases {
        match run_with(&db, query, binds.clone()) {
            Ok(out) => panic!("{query} ran: {out:?}"),
            Err(e) => assert_eq!(e.num(), *code, "{query}: {e:?}"),
        }
    }
}

#[test]
fn warnings_are_reported() {
    let db = database();
    let (out, outcome) = run_with(&db, "RETURN 1 / 0", json!({})).unwrap();
    assert_eq!(out, vec![json!(null)]);
    assert_eq!(outcome.warnings[0].code, 1562);
}

#[test]
fn bind_parameters_everywhere() {
    let db = database();
    let (out, _) = run_with(
        &db,
        "FOR d IN @@c FILTER d.@field >= @low && d.@field < @high SORT d.a LIMIT @skip, @limit RETURN d.a",
        json!({"@c": "nums", "field": "a", "low": 5, "high": 10, "skip": 1, "limit": 2}),
    )
    .unwrap();
    assert_eq!(out, vec![json!(6), json!(7)]);
}

fn plan_of(db: &Arc<dyn DatabaseOps>, query: &str) -> Value {
    let prepared = prepare(Arc::clone(db), query, Map::new(), QueryOptions::default()).unwrap();
    quince_aql::explain::plan_json(prepared.plan())
}

fn node_types(plan: &Value) -> Vec<String> {
    plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn persistent_indexes_serve_equality_ranges_in_and_sort() {
    let db = database();
    let nums = db.collection("nums").unwrap();
    nums.create_index(&json!({"type": "persistent", "fields": ["g", "a"]}))
        .unwrap();
    nums.create_index(&json!({"type": "persistent", "fields": ["a"], "unique": true}))
        .unwrap();

    let query = "FOR d IN nums FILTER d.a >= 3 && d.a < 6 SORT d.a DESC RETURN d.a";
    let plan = plan_of(&db, query);
    assert_eq!(
        node_types(&plan),
        ["SingletonNode", "IndexNode", "ReturnNode"]
    );
    let rules: Vec<&str> = plan["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(rules.contains(&"use-indexes") && rules.contains(&"use-index-for-sort"));
    assert!(rules.contains(&"reduce-extraction-to-projection"));
    let (out, outcome) = run_with(&db, query, json!({})).unwrap();
    assert_eq!(out, vec![json!(5), json!(4), json!(3)]);
    assert_eq!(outcome.stats.scanned_full, 0);
    assert_eq!(outcome.stats.scanned_index, 3);

    let (out, _) = run_with(
        &db,
        "FOR d IN nums FILTER d.g == 1 && d.a > 10 SORT d.a RETURN d._key",
        json!({}),
    )
    .unwrap();
    assert_eq!(out, vec![json!("k13"), json!("k16"), json!("k19")]);
    let (out, outcome) = run_with(
        &db,
        "FOR d IN nums FILTER d.a IN [2, 17, 2, 40] RETURN d",
        json!({}),
    )
    .unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(outcome.stats.scanned_index, 2);
    assert_eq!(
        out[0]["g"],
        json!(2),
        "a document read through an index is whole"
    );

    // Sorting alone through an index stops as soon as the limit is reached.
    let (out, outcome) =
        run_with(&db, "FOR d IN nums SORT d.a LIMIT 3 RETURN d.a", json!({})).unwrap();
    assert_eq!(out, vec![json!(0), json!(1), json!(2)]);
    assert_eq!(outcome.stats.scanned_index, 3);

    // An outer loop keeps the SORT: the index orders only within each outer row.
    let plan = plan_of(
        &db,
        "FOR x IN [1, 2] FOR d IN nums FILTER d.a > 15 SORT d.a RETURN d.a",
    );
    assert!(node_types(&plan).contains(&"SortNode".to_owned()));
}

#[test]
fn scans_build_only_what_the_query_reads() {
    let db = database();
    let plan = plan_of(&db, "FOR u IN users FILTER u.age > 30 RETURN u");
    let rules: Vec<&str> = plan["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"late-document-materialization"),
        "{rules:?}"
    );
    assert_eq!(plan["nodes"][1]["filterProjections"], json!(["age"]));
    let (out, _) = run_with(
        &db,
        "FOR u IN users FILTER u.age > 30 SORT u.age RETURN u",
        json!({}),
    )
    .unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(
        out[0]["name"],
        json!("Ann"),
        "a document that passes is built whole"
    );
    let plan = plan_of(&db, "FOR u IN users FILTER u.age > 30 RETURN u.name");
    assert_eq!(plan["nodes"][1]["projections"], json!(["age", "name"]));
}

#[test]
fn upsert_finds_its_example_through_an_index() {
    let db = database();
    let nums = db.collection("nums").unwrap();
    nums.create_index(&json!({"type": "persistent", "fields": ["g", "a"]}))
        .unwrap();
    let query = "UPSERT {g: 1, a: 4} INSERT {g: 1, a: 4, new: true} UPDATE {hit: true} IN nums RETURN [NEW._key, NEW.hit]";
    let (out, outcome) = run_with(&db, query, json!({})).unwrap();
    assert_eq!(out, vec![json!(["k4", true])]);
    assert_eq!(
        (outcome.stats.scanned_full, outcome.stats.scanned_index),
        (0, 1)
    );
    let (out, _) = run_with(&db, "UPSERT {g: 1, a: 5} INSERT {g: 1, a: 5, new: true} UPDATE {hit: true} IN nums RETURN NEW.new", json!({})).unwrap();
    assert_eq!(out, vec![json!(true)]);
}

#[test]
fn sparse_indexes_are_not_used_where_nulls_could_match() {
    let db = database();
    let users = db.collection("users").unwrap();
    users
        .create_index(&json!({"type": "persistent", "fields": ["age"], "sparse": true}))
        .unwrap();
    let plan = plan_of(&db, "FOR u IN users FILTER u.age < 30 RETURN u");
    assert!(!node_types(&plan).contains(&"IndexNode".to_owned()));
    let (out, _) = run_with(
        &db,
        "FOR u IN users FILTER u.age < 30 SORT u.age RETURN u.age",
        json!({}),
    )
    .unwrap();
    assert_eq!(out, vec![json!(null), json!(25), json!(25)]);
    let plan = plan_of(&db, "FOR u IN users FILTER u.age == 25 RETURN u");
    assert!(node_types(&plan).contains(&"IndexNode".to_owned()));
    let plan = plan_of(&db, "FOR u IN users FILTER u.age > 26 RETURN u");
    assert!(node_types(&plan).contains(&"IndexNode".to_owned()));
}

/// `knows`: an edge collection around `p/a` (one edge loops on it).
fn graph_database() -> Arc<dyn DatabaseOps> {
    let db = database();
    let knows = db
        .create_collection(CreateCollection {
            name: "knows".into(),
            kind: CollectionType::Edge,
            wait_for_sync: None,
            is_system: false,
            key_options: None,
            journal_size: None,
            schema: None,
            computed_values: None,
            cache_enabled: None,
        })
        .unwrap();
    insert(
        &knows,
        vec![
            json!({"_key": "e1", "_from": "p/a", "_to": "p/b", "w": 1}),
            json!({"_key": "e2", "_from": "p/a", "_to": "p/c", "w": 2}),
            json!({"_key": "e3", "_from": "p/b", "_to": "p/a", "w": 3}),
            json!({"_key": "e4", "_from": "p/c", "_to": "p/b", "w": 4}),
            json!({"_key": "e5", "_from": "p/a", "_to": "p/a", "w": 5}),
        ],
    );
    db
}

#[test]
fn the_edge_index_serves_from_and_to_equality_and_in() {
    let db = graph_database();
    let plan = plan_of(&db, "FOR e IN knows FILTER e._from == 'p/a' RETURN e");
    assert_eq!(
        node_types(&plan),
        ["SingletonNode", "IndexNode", "ReturnNode"]
    );
    let index = &plan["nodes"][1]["indexes"][0];
    assert_eq!(index["type"], "edge");
    assert_eq!(index["name"], "edge");
    assert_eq!(index["id"], "knows/1");
    assert_eq!(index["fields"], json!(["_from"]));
    let plan = plan_of(&db, "FOR e IN knows FILTER 'p/b' == e._to RETURN e");
    assert_eq!(plan["nodes"][1]["indexes"][0]["fields"], json!(["_to"]));

    let cases: Vec<(&str, Value, u64)> = vec![
        (
            "FOR e IN knows FILTER e._from == 'p/a' RETURN e._key",
            json!(["e1", "e2", "e5"]),
            3,
        ),
        (
            "FOR e IN knows FILTER e._to == 'p/a' RETURN e._key",
            json!(["e3", "e5"]),
            2,
        ),
        // Both filters stay: the index serves one, the other is checked on each edge.
        (
            "FOR e IN knows FILTER e._from == 'p/a' FILTER e._to == 'p/a' RETURN e.w",
            json!([5]),
            3,
        ),
        (
            "FOR e IN knows FILTER e._from == 'p/a' && e.w > 1 RETURN e.w",
            json!([2, 5]),
            3,
        ),
        (
            "FOR e IN knows FILTER e._from IN ['p/c', 'p/b', 'p/c', 7] RETURN e._key",
            json!(["e3", "e4"]),
            2,
        ),
        ("FOR e IN knows FILTER e._to == 42 RETURN e", json!([]), 0),
        (
            "FOR v IN ['p/b', 'p/c'] FOR e IN knows FILTER e._to == v RETURN [v, e._key]",
            json!([["p/b", "e1"], ["p/b", "e4"], ["p/c", "e2"]]),
            3,
        ),
    ];
    for (query, expected, scanned) in cases {
        let (out, outcome) = run_with(&db, query, json!({})).unwrap();
        assert_eq!(Value::Array(out), expected, "{query}");
        assert_eq!(outcome.stats.scanned_full, 0, "{query}");
        assert_eq!(outcome.stats.scanned_index, scanned, "{query}");
    }
    // A bind parameter is a value like any other.
    let (out, _) = run_with(
        &db,
        "FOR e IN knows FILTER e._from == @v SORT e.w DESC RETURN e.w",
        json!({"v": "p/a"}),
    )
    .unwrap();
    assert_eq!(out, vec![json!(5), json!(2), json!(1)]);
    // Reading only `_from` and `_key` needs no document.
    let plan = plan_of(&db, "FOR e IN knows FILTER e._from == 'p/a' RETURN e._key");
    assert_eq!(plan["nodes"][1]["indexCoversProjections"], true);
    // Other conditions, and document collections, keep the full scan.
    for query in [
        "FOR e IN knows FILTER e._from != 'p/a' RETURN e",
        "FOR e IN knows FILTER e._from == 'p/a' || e._to == 'p/a' RETURN e",
        "FOR u IN users FILTER u._from == 'p/a' RETURN u",
    ] {
        let plan = plan_of(&db, query);
        assert!(
            !node_types(&plan).contains(&"IndexNode".to_owned()),
            "{query}"
        );
    }
}

#[test]
fn writes_into_edge_collections_need_valid_from_and_to() {
    let db = graph_database();
    for query in [
        "INSERT {_to: 'p/b'} INTO knows",
        "INSERT {_from: 'p/a', _to: 'nohandle'} INTO knows",
        "INSERT {_from: 'p/a', _to: 7} INTO knows",
        "UPDATE 'e1' WITH {_from: 'bad'} IN knows",
        "REPLACE 'e1' WITH {w: 9} IN knows",
        "REPLACE {_key: 'e1', _from: 'p/a', _to: null} IN knows",
    ] {
        let error = run_with(&db, query, json!({})).unwrap_err();
        assert_eq!(error.num(), 1233, "{query}: {}", error.message);
    }
    // Valid writes keep the edge index true.
    for query in [
        "INSERT {_key: 'e6', _from: 'p/z', _to: 'p/a'} INTO knows",
        "UPDATE 'e1' WITH {_from: 'p/z'} IN knows",
    ] {
        run_with(&db, query, json!({})).unwrap();
    }
    let (out, _) = run_with(
        &db,
        "FOR e IN knows FILTER e._from == 'p/z' RETURN e._key",
        json!({}),
    )
    .unwrap();
    assert_eq!(out, vec![json!("e1"), json!("e6")]);
}
