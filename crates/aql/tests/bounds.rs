//! The bounds of a running query, at the engine: every loop, function and path search stops
//! at its next check once the query is killed (or past its deadline), and memory is counted
//! at its real size (this binary counts allocations as the server does), refused with 32 when
//! a query's limit, or the limit of all queries together, is passed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_aql::query::control_for;
use quince_aql::{prepare, Control, QueryOptions};
use quince_memory::{Account, Pool};
use quince_ops::fake::FakeEngine;
use quince_ops::{CollectionType, DatabaseOps, Engine};
use serde_json::{json, Map, Value};

mod engine;
use engine::{insert, request};

#[global_allocator]
static ALLOCATOR: quince_memory::Counting<std::alloc::System> =
    quince_memory::Counting(std::alloc::System);

const MB: u64 = 1 << 20;

/// A database with `v` (12 vertices) and `e` (a complete graph over them).
fn graph() -> Arc<dyn DatabaseOps> {
    let db = FakeEngine::new().database("_system").unwrap();
    let v = db.create_collection(request("v")).unwrap();
    insert(
        &v,
        (0..12).map(|i| json!({"_key": i.to_string()})).collect(),
    );
    let mut edges = request("e");
    edges.kind = CollectionType::Edge;
    let e = db.create_collection(edges).unwrap();
    let mut all = Vec::new();
    for a in 0..12 {
        for b in 0..12 {
            if a != b {
                all.push(json!({"_from": format!("v/{a}"), "_to": format!("v/{b}"), "w": 1 + (a * 7 + b) % 5}));
            }
        }
    }
    insert(&e, all);
    db
}

/// Runs `query` with `control` to its end; the error it ends with, and how long it took.
fn run(
    db: &Arc<dyn DatabaseOps>,
    query: &str,
    binds: Value,
    control: Arc<Control>,
) -> (Option<quince_errors::ArangoError>, Duration) {
    let binds: Map<String, Value> = binds.as_object().cloned().unwrap_or_default();
    let prepared = prepare(Arc::clone(db), query, binds, QueryOptions::default()).unwrap();
    let started = Instant::now();
    let result = prepared.run(control, None, &mut |_| Ok(true));
    (result.err(), started.elapsed())
}

/// Queries each of which, unstopped, would run for hours.
const ENDLESS: [&str; 9] = [
    "FOR i IN 1..1e7 FOR j IN 1..1e7 COLLECT WITH COUNT INTO n RETURN n",
    "FOR i IN 1..1e15 FILTER i == 0 RETURN i",
    "LET a = (FOR i IN 1..20000 RETURN i) FOR x IN a FOR y IN a FILTER x == -y RETURN x",
    "FOR p IN OUTBOUND K_SHORTEST_PATHS 'v/0' TO 'v/11' e OPTIONS {weightAttribute: 'w'} RETURN 1",
    "FOR p IN 1..12 OUTBOUND K_PATHS 'v/0' TO 'v/11' e RETURN 1",
    "FOR v IN 1..12 OUTBOUND 'v/0' e OPTIONS {uniqueVertices: 'path'} RETURN 1",
    "FOR i IN 1..1e6 WINDOW i WITH {preceding: 1e9, following: 1e9} AGGREGATE s = SUM(i) RETURN s",
    "RETURN LEVENSHTEIN_DISTANCE(@a, @b)",
    "FOR i IN 1..1e9 FOR p IN ANY ALL_SHORTEST_PATHS 'v/0' TO 'v/1' e RETURN 1",
];

fn binds() -> Value {
    let long = "abcdefghij".repeat(5000);
    json!({"a": long, "b": long.chars().rev().collect::<String>()})
}

#[test]
fn a_killed_query_stops_in_every_loop() {
    let db = graph();
    for query in ENDLESS {
        let control = Control::new(None);
        let killer = Arc::clone(&control);
        let kill = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            killer.kill();
        });
        let binds = if query.contains('@') {
            binds()
        } else {
            json!({})
        };
        let (error, took) = run(&db, query, binds, control);
        kill.join().unwrap();
        let error = error.unwrap_or_else(|| panic!("{query}: finished"));
        assert_eq!(error.num(), 1500, "{query}: {}", error.message);
        assert!(took < Duration::from_secs(2), "{query}: ran {took:?}");
    }
}

#[test]
fn a_deadline_stops_every_loop() {
    let db = graph();
    for query in ENDLESS {
        let control = Control::new(Some(Instant::now() + Duration::from_millis(200)));
        let binds = if query.contains('@') {
            binds()
        } else {
            json!({})
        };
        let (error, took) = run(&db, query, binds, control);
        let error = error.unwrap_or_else(|| panic!("{query}: finished"));
        assert_eq!(error.num(), 1500, "{query}: {}", error.message);
        assert!(took < Duration::from_secs(2), "{query}: ran {took:?}");
    }
}

fn limited(limit: u64) -> Arc<Control> {
    let options = QueryOptions {
        memory_limit: limit,
        ..QueryOptions::default()
    };
    control_for(&options, &Pool::new(0))
}

#[test]
fn memory_is_refused_before_or_as_it_passes_the_limit() {
    let db = FakeEngine::new().database("_system").unwrap();
    let hungry = [
        "LET a = 1..(1e7 - 0) RETURN LENGTH(a)",
        "RETURN LENGTH(RANGE(1, 1e7 - 0))",
        "RETURN LENGTH(FLATTEN([1..(1e6 - 0), 1..(1e6 - 0)]))",
        "FOR i IN 1..1e7 COLLECT k = i % 100 INTO g RETURN LENGTH(g)",
        "FOR i IN 1..1e7 SORT i DESC LIMIT 1 RETURN i",
        "LET s = (FOR i IN 1..1e7 RETURN i) RETURN LENGTH(s)",
        "FOR i IN 1..1e7 RETURN DISTINCT i",
        "RETURN LENGTH(REPLACE_NTH([], 5e6, 1, 0))",
        "RETURN LENGTH(SPLIT(CONCAT_SEPARATOR('', (FOR i IN 1..100000 RETURN 'abcdefghij')), ''))",
        "RETURN LENGTH(CONCAT_SEPARATOR(CONCAT_SEPARATOR('', (FOR i IN 1..10000 RETURN 'x')), 1..(1e5 - 0)))",
        "RETURN REGEX_MATCHES(@text, @pattern)",
    ];
    let binds = json!({"text": "a".repeat(17000), "pattern": "(a)?".repeat(4000)});
    for query in hungry {
        let control = limited(16 * MB);
        let memory = Arc::clone(control.memory());
        let binds = if query.contains('@') {
            binds.clone()
        } else {
            json!({})
        };
        let (error, _) = run(&db, query, binds, control);
        let error = error.unwrap_or_else(|| panic!("{query}: finished"));
        assert_eq!(error.num(), 32, "{query}: {}", error.message);
        assert!(
            memory.peak() < 32 * MB,
            "{query}: held {} MB",
            memory.peak() / MB
        );
    }
}

#[test]
fn a_streamed_range_holds_nothing_and_a_built_one_is_counted() {
    let db = FakeEngine::new().database("_system").unwrap();
    let control = limited(MB);
    let memory = Arc::clone(control.memory());
    let (error, _) = run(
        &db,
        "FOR i IN 1..2000000 FILTER i == 0 RETURN i",
        json!({}),
        control,
    );
    assert!(error.is_none(), "{error:?}");
    assert!(memory.peak() < MB, "{}", memory.peak());
    let (error, _) = run(
        &db,
        "LET a = 1..(1e6 - 0) RETURN LENGTH(a)",
        json!({}),
        limited(MB),
    );
    assert_eq!(error.map(|e| e.num()), Some(32));
}

#[test]
fn the_pool_stops_a_query_that_grows_while_all_of_them_hold_too_much() {
    let db = FakeEngine::new().database("_system").unwrap();
    let pool = Pool::new(8 * MB);
    let other = Account::new(0, Arc::clone(&pool));
    let held = {
        let _charging = other.charge_this_thread();
        vec![0u8; 6 * MB as usize]
    };
    let control = control_for(&QueryOptions::default(), &pool);
    let (error, _) = run(
        &db,
        "FOR i IN 1..1e6 SORT i DESC LIMIT 1 RETURN i",
        json!({}),
        control,
    );
    let error = error.expect("refused");
    assert_eq!(error.num(), 32);
    assert!(
        error.message.contains("global-memory-limit"),
        "{}",
        error.message
    );
    drop(held);
    drop(other);
    let control = control_for(&QueryOptions::default(), &pool);
    let (error, _) = run(
        &db,
        "FOR i IN 1..1e4 SORT i DESC LIMIT 1 RETURN i",
        json!({}),
        control,
    );
    assert!(error.is_none(), "{error:?}");
}
