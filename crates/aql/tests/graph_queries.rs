//! Graph traversals and path searches end to end (parse, plan, execute) over the fake engine
//! and the local engine, on small graphs rebuilt from the shapes of ArangoDB's documented
//! example graphs: "traversalGraph" (circles A..K, a tree of labelled edges) and
//! "kShortestPathsGraph" (train stations joined both ways, with travel times); results
//! checked by hand; plus the options, PRUNE, errors and warnings, explain, and a property
//! test that filters pushed into a traversal give the same rows as the same filters not
//! pushed.

mod engine;

/// Memory limits count what the query's thread allocates: the test binary counts as the server
/// does.
#[global_allocator]
static ALLOCATOR: quince_memory::Counting<std::alloc::System> =
    quince_memory::Counting(std::alloc::System);

use std::sync::Arc;
use std::time::Duration;

use engine::{insert, run_with};
use proptest::prelude::*;
use quince_aql::{prepare, Control, QueryOptions};
use quince_db::{Catalog, DbConfig};
use quince_ops::fake::FakeEngine;
use quince_ops::{CollectionOps, CollectionType, DatabaseOps, Engine};
use quince_storage::io::OsFileIo;
use serde_json::{json, Map, Value};

/// A database of each engine (the local engine's directory kept alive beside it).
type Db = (
    String,
    Arc<dyn DatabaseOps>,
    Option<(tempfile::TempDir, Arc<Catalog>)>,
);

fn engines() -> Vec<Db> {
    let fake = FakeEngine::new().database("_system").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = DbConfig {
        sync_interval: Duration::from_millis(50),
        ..DbConfig::new(dir.path().to_path_buf(), Arc::new(OsFileIo::new()))
    };
    let catalog = Catalog::open(config).unwrap();
    let local: Arc<dyn DatabaseOps> = Engine::database(&*catalog, "_system").unwrap();
    vec![
        ("fake".into(), fake, None),
        ("local".into(), local, Some((dir, catalog))),
    ]
}

fn collection(
    db: &Arc<dyn DatabaseOps>,
    name: &str,
    kind: CollectionType,
) -> Arc<dyn CollectionOps> {
    let mut request = engine::request(name);
    request.kind = kind;
    request.is_system = name.starts_with('_');
    db.create_collection(request).unwrap()
}

/// Stores a named graph's definition in `_graphs` (what gharial would write).
fn define_graph(db: &Arc<dyn DatabaseOps>, name: &str, definitions: Value) {
    let graphs = match db.collection("_graphs") {
        Ok(c) => c,
        Err(_) => collection(db, "_graphs", CollectionType::Document),
    };
    insert(
        &graphs,
        vec![json!({"_key": name, "edgeDefinitions": definitions, "orphanCollections": []})],
    );
}

/// ArangoDB's "traversalGraph" shape: circles A..K, edges (keys in tree order) labelled.
fn traversal_graph(db: &Arc<dyn DatabaseOps>) {
    let circles = collection(db, "circles", CollectionType::Document);
    insert(
        &circles,
        "ABCDEFGHIJK"
            .chars()
            .map(|c| json!({"_key": c.to_string(), "label": c.to_string(), "kind": "circle"}))
            .collect(),
    );
    let edges = collection(db, "edges", CollectionType::Edge);
    let list = [
        ("A", "B", "left_bar"),
        ("B", "C", "left_blarg"),
        ("C", "D", "left_blorg"),
        ("B", "E", "left_blub"),
        ("E", "F", "left_zip"),
        ("A", "G", "right_foo"),
        ("G", "H", "right_blob"),
        ("H", "I", "right_blub"),
        ("G", "J", "right_zip"),
        ("J", "K", "right_zup"),
    ];
    insert(
        &edges,
        list.iter()
            .enumerate()
            .map(|(i, (f, t, label))| {
                json!({"_key": format!("e{i:02}"), "_from": format!("circles/{f}"),
                       "_to": format!("circles/{t}"), "label": label, "w": i + 1})
            })
            .collect(),
    );
    define_graph(
        db,
        "traversalGraph",
        json!([{"collection": "edges", "from": ["circles"], "to": ["circles"]}]),
    );
}

/// ArangoDB's "kShortestPathsGraph" shape: stations joined both ways, with travel times.
fn train_graph(db: &Arc<dyn DatabaseOps>) {
    let places = collection(db, "places", CollectionType::Document);
    let names = [
        "Inverness",
        "Aberdeen",
        "Leuchars",
        "StAndrews",
        "Edinburgh",
        "Glasgow",
        "York",
        "Carlisle",
        "Birmingham",
        "London",
        "Brussels",
        "Cologne",
        "Toronto",
        "Winnipeg",
        "Vancouver",
    ];
    insert(&places, names.iter().map(|n| json!({"_key": n})).collect());
    let connections = collection(db, "connections", CollectionType::Edge);
    let legs = [
        ("Inverness", "Aberdeen", 3.0),
        ("Aberdeen", "Leuchars", 1.5),
        ("Leuchars", "Edinburgh", 1.5),
        ("Edinburgh", "Glasgow", 1.0),
        ("Edinburgh", "York", 3.5),
        ("Glasgow", "Carlisle", 1.0),
        ("Carlisle", "York", 2.5),
        ("Carlisle", "Birmingham", 2.0),
        ("Birmingham", "London", 1.5),
        ("Leuchars", "StAndrews", 0.2),
        ("York", "London", 1.8),
        ("London", "Brussels", 2.5),
        ("Brussels", "Cologne", 2.0),
        ("Toronto", "Winnipeg", 36.0),
        ("Winnipeg", "Vancouver", 37.0),
    ];
    let mut docs = Vec::new();
    for (i, (a, b, t)) in legs.iter().enumerate() {
        for (k, (f, to)) in [(a, b), (b, a)].into_iter().enumerate() {
            docs.push(
                json!({"_key": format!("c{i:02}{k}"), "_from": format!("places/{f}"),
                             "_to": format!("places/{to}"), "travelTime": t}),
            );
        }
    }
    insert(&connections, docs);
    define_graph(
        db,
        "kShortestPathsGraph",
        json!([{"collection": "connections", "from": ["places"], "to": ["places"]}]),
    );
}

fn graphs() -> Vec<Db> {
    let dbs = engines();
    for (_, db, _) in &dbs {
        traversal_graph(db);
        train_graph(db);
    }
    dbs
}

/// Runs `query` on every engine; every engine must give `expected`.
fn check(dbs: &[Db], query: &str, expected: Value) {
    for (name, db, _) in dbs {
        let got = match run_with(db, query, json!({})) {
            Ok((rows, _)) => Value::Array(rows),
            Err(e) => panic!("{query} on {name}: {e:?}"),
        };
        assert_eq!(got, expected, "{query} on {name}");
    }
}

fn error_of(db: &Arc<dyn DatabaseOps>, query: &str, binds: Value) -> quince_errors::ArangoError {
    match run_with(db, query, binds) {
        Ok((rows, _)) => panic!("{query} succeeded: {rows:?}"),
        Err(e) => e,
    }
}

const G: &str = "GRAPH 'traversalGraph'";

#[test]
fn traversals_in_every_order_and_direction() {
    let dbs = graphs();
    let q = |body: &str| format!("FOR v, e, p IN {body} RETURN v._key");
    check(
        &dbs,
        &q(&format!("1..3 OUTBOUND 'circles/A' {G}")),
        json!(["B", "C", "D", "E", "F", "G", "H", "I", "J", "K"]),
    );
    check(
        &dbs,
        &q(&format!(
            "1..3 OUTBOUND 'circles/A' {G} OPTIONS {{order: 'bfs'}}"
        )),
        json!(["B", "G", "C", "E", "H", "J", "D", "F", "I", "K"]),
    );
    check(
        &dbs,
        &q(&format!(
            "1..3 OUTBOUND 'circles/A' {G} OPTIONS {{bfs: true}}"
        )),
        json!(["B", "G", "C", "E", "H", "J", "D", "F", "I", "K"]),
    );
    check(
        &dbs,
        &q(&format!("2..2 OUTBOUND 'circles/A' {G}")),
        json!(["C", "E", "H", "J"]),
    );
    check(
        &dbs,
        &q(&format!("2 OUTBOUND 'circles/A' {G}")),
        json!(["C", "E", "H", "J"]),
    );
    check(
        &dbs,
        &q(&format!("OUTBOUND 'circles/A' {G}")),
        json!(["B", "G"]),
    );
    check(
        &dbs,
        &q(&format!("1..3 INBOUND 'circles/D' {G}")),
        json!(["C", "B", "A"]),
    );
    check(
        &dbs,
        &q(&format!("1 ANY 'circles/B' {G}")),
        json!(["C", "E", "A"]),
    );
    // The start vertex as a document, the collection-list form.
    check(
        &dbs,
        "FOR s IN circles FILTER s._key == 'G' FOR v IN 1..2 OUTBOUND s edges RETURN v._key",
        json!(["H", "I", "J", "K"]),
    );
    check(
        &dbs,
        "FOR v IN 1..2 INBOUND 'circles/I' OUTBOUND edges RETURN v._key",
        json!([]),
    );
    check(
        &dbs,
        "FOR v IN 1..2 OUTBOUND 'circles/I' INBOUND edges RETURN v._key",
        json!(["H", "G"]),
    );
}

#[test]
fn depth_zero_emits_the_start_vertex() {
    let dbs = graphs();
    check(&dbs, &format!("FOR v, e, p IN 0 OUTBOUND 'circles/A' {G} RETURN {{v: v._key, e, p: p.vertices[*]._key, pe: p.edges}}"),
        json!([{"v": "A", "e": null, "p": ["A"], "pe": []}]));
    check(&dbs, &format!("FOR v, e, p IN 0..1 OUTBOUND 'circles/A' {G} RETURN [v._key, e.label, LENGTH(p.edges)]"),
        json!([["A", null, 0], ["B", "left_bar", 1], ["G", "right_foo", 1]]));
}

#[test]
fn paths_and_weights() {
    let dbs = graphs();
    check(&dbs, &format!("FOR v, e, p IN 2 OUTBOUND 'circles/A' {G} LIMIT 1 RETURN {{vs: p.vertices[*]._key, es: p.edges[*].label, has: HAS(p, 'weights')}}"),
        json!([{"vs": ["A", "B", "C"], "es": ["left_bar", "left_blarg"], "has": false}]));
    // Weighted order: by ascending sum of `w` (edge i has weight i + 1); p.weights are the sums.
    check(&dbs, &format!("FOR v, e, p IN 1..2 OUTBOUND 'circles/A' {G} OPTIONS {{order: 'weighted', weightAttribute: 'w'}} RETURN [v._key, p.weights]"),
        json!([["B", [0, 1]], ["C", [0, 1, 3]], ["E", [0, 1, 5]], ["G", [0, 6]], ["H", [0, 6, 13]], ["J", [0, 6, 15]]]));
}

#[test]
fn uniqueness_options_on_a_cycle() {
    let dbs = engines();
    for (_, db, _) in &dbs {
        let vs = collection(db, "vs", CollectionType::Document);
        insert(
            &vs,
            (0..3).map(|i| json!({"_key": format!("{i}")})).collect(),
        );
        let es = collection(db, "es", CollectionType::Edge);
        insert(
            &es,
            vec![
                json!({"_key": "a", "_from": "vs/0", "_to": "vs/1"}),
                json!({"_key": "b", "_from": "vs/1", "_to": "vs/2"}),
                json!({"_key": "c", "_from": "vs/2", "_to": "vs/0"}),
            ],
        );
    }
    let q =
        |options: &str| format!("FOR v IN 1..4 OUTBOUND 'vs/0' es OPTIONS {options} RETURN v._key");
    // By default no edge repeats on a path, so the cycle is walked once.
    check(&dbs, &q("{}"), json!(["1", "2", "0"]));
    check(
        &dbs,
        &q("{uniqueVertices: 'none', uniqueEdges: 'path'}"),
        json!(["1", "2", "0"]),
    );
    check(&dbs, &q("{uniqueVertices: 'path'}"), json!(["1", "2"]));
    check(
        &dbs,
        &q("{uniqueVertices: 'global', order: 'bfs'}"),
        json!(["1", "2"]),
    );
    check(
        &dbs,
        &q("{uniqueEdges: 'none'}"),
        json!(["1", "2", "0", "1"]),
    );
    check(
        &dbs,
        "FOR v IN 1..5 OUTBOUND 'vs/0' es OPTIONS {uniqueEdges: 'none'} RETURN v._key",
        json!(["1", "2", "0", "1", "2"]),
    );
    check(
        &dbs,
        "FOR v IN 1..5 OUTBOUND 'vs/0' es RETURN v._key",
        json!(["1", "2", "0"]),
    );
    let e = error_of(&dbs[0].1, &q("{uniqueVertices: 'global'}"), json!({}));
    assert_eq!(e.code.num, 10, "{}", e.message);
}

#[test]
fn prune_stops_expansion_but_emits() {
    let dbs = graphs();
    check(&dbs, &format!("FOR v, e, p IN 1..3 OUTBOUND 'circles/A' {G} PRUNE e.label == 'left_blarg' RETURN v._key"),
        json!(["B", "C", "E", "F", "G", "H", "I", "J", "K"]));
    // PRUNE also applies below the least depth and to the start vertex.
    check(
        &dbs,
        &format!("FOR v IN 2..3 OUTBOUND 'circles/A' {G} PRUNE v._key == 'B' RETURN v._key"),
        json!(["H", "I", "J", "K"]),
    );
    check(
        &dbs,
        &format!("FOR v IN 0..3 OUTBOUND 'circles/A' {G} PRUNE v._key == 'A' RETURN v._key"),
        json!(["A"]),
    );
    // The prune variable is visible after the traversal.
    check(
        &dbs,
        &format!(
            "FOR v IN 1 OUTBOUND 'circles/A' {G} PRUNE stop = v._key == 'G' RETURN [v._key, stop]"
        ),
        json!([["B", false], ["G", true]]),
    );
}

#[test]
fn edge_and_vertex_collection_options_and_bind_parameters() {
    let dbs = graphs();
    for (name, db, _) in &dbs {
        let (rows, _) = run_with(db,
            "FOR v IN 1..2 OUTBOUND @s GRAPH @g OPTIONS {vertexCollections: 'circles', edgeCollections: ['edges']} RETURN v._key",
            json!({"s": "circles/G", "g": "traversalGraph"})).unwrap();
        assert_eq!(
            rows,
            vec![json!("H"), json!("I"), json!("J"), json!("K")],
            "{name}"
        );
        let (rows, _) = run_with(
            db,
            "FOR v IN 1 OUTBOUND 'circles/A' @@e RETURN v._key",
            json!({"@e": "edges"}),
        )
        .unwrap();
        assert_eq!(rows, vec![json!("B"), json!("G")], "{name}");
        let (rows, _) = run_with(db, "FOR v IN 1 OUTBOUND 'circles/A' edges OPTIONS {vertexCollections: ['places']} RETURN v",
            json!({})).unwrap();
        assert!(rows.is_empty(), "{name}");
    }
}

#[test]
fn errors_and_warnings() {
    for (name, db, _) in &graphs() {
        let e = error_of(
            db,
            "FOR v IN OUTBOUND 'circles/A' GRAPH 'nope' RETURN v",
            json!({}),
        );
        assert_eq!(e.code.num, 1924, "{name}: {}", e.message);
        let e = error_of(
            db,
            "FOR v IN OUTBOUND 'circles/A' circles RETURN v",
            json!({}),
        );
        assert_eq!(e.code.num, 1218, "{name}: {}", e.message);
        let e = error_of(
            db,
            "FOR v IN OUTBOUND 'circles/A' nothing RETURN v",
            json!({}),
        );
        assert_eq!(e.code.num, 1203, "{name}: {}", e.message);
        let e = error_of(
            db,
            "FOR v IN 3..1 OUTBOUND 'circles/A' edges RETURN v",
            json!({}),
        );
        assert_eq!(e.code.num, 1501, "{name}: {}", e.message);
        let e = error_of(db, "FOR v IN OUTBOUND 'circles/A' edges OPTIONS {defaultWeight: -1, order: 'weighted'} RETURN v", json!({}));
        assert_eq!(e.code.num, 1948, "{name}: {}", e.message);
        let e = error_of(
            db,
            "FOR v IN OUTBOUND 'circles/A' edges OPTIONS {order: 'sideways'} RETURN v",
            json!({}),
        );
        assert_eq!(e.code.num, 10, "{name}: {}", e.message);
        // An invalid start vertex: a warning and no rows.
        let (rows, outcome) =
            run_with(db, "FOR v IN OUTBOUND 42 edges RETURN v", json!({})).unwrap();
        assert!(rows.is_empty());
        assert_eq!(outcome.warnings.len(), 1, "{name}");
        assert_eq!(outcome.warnings[0].code, 10);
        assert!(outcome.warnings[0]
            .message
            .contains("Only id strings or objects with _id"));
        // Unknown options: a warning.
        let (_, outcome) = run_with(
            db,
            "FOR v IN 0 OUTBOUND 'circles/A' edges OPTIONS {fancy: 1, parallelism: 2} RETURN v",
            json!({}),
        )
        .unwrap();
        assert_eq!(outcome.warnings.len(), 1, "{name}: {:?}", outcome.warnings);
        assert_eq!(outcome.warnings[0].code, 1539);
    }
}

#[test]
fn negative_weights_and_missing_vertices_at_run_time() {
    let dbs = engines();
    for (name, db, _) in &dbs {
        let vs = collection(db, "vs", CollectionType::Document);
        insert(&vs, vec![json!({"_key": "a"}), json!({"_key": "b"})]);
        let es = collection(db, "es", CollectionType::Edge);
        insert(
            &es,
            vec![
                json!({"_key": "1", "_from": "vs/a", "_to": "vs/b", "w": -2}),
                json!({"_key": "2", "_from": "vs/a", "_to": "vs/gone", "w": 1}),
            ],
        );
        let e = error_of(db, "FOR v IN 1 OUTBOUND 'vs/a' es OPTIONS {order: 'weighted', weightAttribute: 'w'} RETURN v", json!({}));
        assert_eq!(e.code.num, 1948, "{name}: {}", e.message);
        let e = error_of(db, "FOR v IN OUTBOUND SHORTEST_PATH 'vs/a' TO 'vs/b' es OPTIONS {weightAttribute: 'w'} RETURN v", json!({}));
        assert_eq!(e.code.num, 1948, "{name}: {}", e.message);
        let (rows, outcome) =
            run_with(db, "FOR v IN 1 OUTBOUND 'vs/a' es RETURN v._key", json!({})).unwrap();
        assert_eq!(rows, vec![json!("b"), Value::Null], "{name}");
        assert_eq!(outcome.warnings.len(), 1, "{name}");
        assert_eq!(outcome.warnings[0].code, 1202);
        assert!(
            outcome.stats.scanned_index >= 2,
            "{name}: {:?}",
            outcome.stats
        );
    }
}

#[test]
fn path_searches_on_the_train_graph() {
    let dbs = graphs();
    let k = "GRAPH 'kShortestPathsGraph'";
    check(&dbs, &format!("FOR v, e IN OUTBOUND SHORTEST_PATH 'places/Aberdeen' TO 'places/London' {k} OPTIONS {{weightAttribute: 'travelTime'}} RETURN [v._key, e.travelTime]"),
        json!([["Aberdeen", null], ["Leuchars", 1.5], ["Edinburgh", 1.5], ["York", 3.5], ["London", 1.8]]));
    check(
        &dbs,
        &format!(
            "FOR v IN ANY SHORTEST_PATH 'places/Aberdeen' TO 'places/London' {k} RETURN v._key"
        ),
        json!(["Aberdeen", "Leuchars", "Edinburgh", "York", "London"]),
    );
    check(
        &dbs,
        &format!(
            "FOR v IN OUTBOUND SHORTEST_PATH 'places/Aberdeen' TO 'places/Toronto' {k} RETURN v"
        ),
        json!([]),
    );
    check(&dbs, &format!("FOR p IN OUTBOUND K_SHORTEST_PATHS 'places/Aberdeen' TO 'places/London' {k} OPTIONS {{weightAttribute: 'travelTime', defaultWeight: 15}} LIMIT 3 RETURN {{places: p.vertices[*]._key, w: p.weight, n: LENGTH(p.edges)}}"),
        json!([
            {"places": ["Aberdeen", "Leuchars", "Edinburgh", "York", "London"], "w": 8.3, "n": 4},
            {"places": ["Aberdeen", "Leuchars", "Edinburgh", "Glasgow", "Carlisle", "Birmingham", "London"], "w": 8.5, "n": 6},
            {"places": ["Aberdeen", "Leuchars", "Edinburgh", "Glasgow", "Carlisle", "York", "London"], "w": 9.3, "n": 6},
        ]));
    check(
        &dbs,
        &format!(
            "FOR p IN OUTBOUND K_SHORTEST_PATHS 'places/Aberdeen' TO 'places/Toronto' {k} RETURN p"
        ),
        json!([]),
    );
    check(&dbs, &format!("FOR p IN 1..10 OUTBOUND K_PATHS 'places/Aberdeen' TO 'places/London' {k} SORT LENGTH(p.edges), p.vertices[*]._key RETURN p.vertices[*]._key"),
        json!([
            ["Aberdeen", "Leuchars", "Edinburgh", "York", "London"],
            ["Aberdeen", "Leuchars", "Edinburgh", "Glasgow", "Carlisle", "Birmingham", "London"],
            ["Aberdeen", "Leuchars", "Edinburgh", "Glasgow", "Carlisle", "York", "London"],
            ["Aberdeen", "Leuchars", "Edinburgh", "York", "Carlisle", "Birmingham", "London"],
        ]));
    check(&dbs, &format!("FOR p IN 1..4 OUTBOUND K_PATHS 'places/Aberdeen' TO 'places/London' {k} RETURN [LENGTH(p.edges), HAS(p, 'weight')]"),
        json!([[4, false]]));
    check(&dbs, &format!("FOR p IN OUTBOUND ALL_SHORTEST_PATHS 'places/Carlisle' TO 'places/London' {k} SORT p.vertices[1]._key RETURN p.vertices[*]._key"),
        json!([["Carlisle", "Birmingham", "London"], ["Carlisle", "York", "London"]]));
}

#[test]
fn filters_on_the_path_are_pushed_and_give_the_same_rows() {
    let dbs = graphs();
    let cases = [
        (
            "p.edges[0].label == 'right_foo'",
            json!(["G", "H", "I", "J", "K"]),
        ),
        // B itself passes: its path has no third vertex, and null._key != 'C'.
        (
            "p.vertices[1]._key == 'B' && p.vertices[2]._key != 'C'",
            json!(["B", "E", "F"]),
        ),
        (
            "p.edges[*].label ALL != 'right_foo'",
            json!(["B", "C", "D", "E", "F"]),
        ),
        (
            "p.vertices[*].kind ALL == 'circle' AND p.edges[1].w > 7",
            json!(["J", "K"]),
        ),
        (
            "p.vertices[3] == null",
            json!(["B", "C", "E", "G", "H", "J"]),
        ),
    ];
    for (filter, expected) in cases {
        let pushed =
            format!("FOR v, e, p IN 1..3 OUTBOUND 'circles/A' {G} FILTER {filter} RETURN v._key");
        let kept = format!(
            "FOR v, e, p IN 1..3 OUTBOUND 'circles/A' {G} FILTER NOOPT({filter}) RETURN v._key"
        );
        check(&dbs, &pushed, expected.clone());
        check(&dbs, &kept, expected);
    }
    // Explain names the rules and the pushed conditions; a covered filter is gone.
    let db = &dbs[0].1;
    let prepared = prepare(Arc::clone(db),
        &format!("FOR v, e, p IN 1..3 OUTBOUND 'circles/A' {G} FILTER p.edges[0].label == 'right_foo' RETURN v._key"),
        Map::new(), QueryOptions::default()).unwrap();
    let plan = quince_aql::explain::plan_json(prepared.plan());
    let types: Vec<&str> = plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["SingletonNode", "TraversalNode", "ReturnNode"]);
    let rules: Vec<&str> = plan["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"optimize-traversals")
            && rules.contains(&"remove-filter-covered-by-traversal"),
        "{rules:?}"
    );
    assert_eq!(
        plan["nodes"][1]["pushedConditions"],
        json!([{"on": "edge", "depth": 0}])
    );
    assert!(plan["nodes"][1].get("pathOutVariable").is_none());
}

#[test]
fn explain_names_graph_nodes_as_arangodb_3_12() {
    let dbs = graphs();
    let db = &dbs[0].1;
    let node = |query: &str| {
        let prepared = prepare(Arc::clone(db), query, Map::new(), QueryOptions::default()).unwrap();
        let plan = quince_aql::explain::plan_json(prepared.plan());
        let collections = plan["collections"].clone();
        (plan["nodes"][1].clone(), collections)
    };
    let (t, collections) = node(&format!(
        "FOR v, e, p IN 1..3 OUTBOUND 'circles/A' {G} OPTIONS {{order: 'bfs'}} RETURN p"
    ));
    assert_eq!(t["type"], "TraversalNode");
    assert_eq!(t["graph"], "traversalGraph");
    assert_eq!(t["options"]["minDepth"], 1);
    assert_eq!(t["options"]["maxDepth"], 3);
    assert_eq!(t["options"]["order"], "bfs");
    assert_eq!(t["edgeCollections"], json!(["edges"]));
    assert_eq!(t["vertexCollections"], json!(["circles"]));
    assert_eq!(
        collections,
        json!([{"name": "edges", "type": "read"}, {"name": "circles", "type": "read"}])
    );
    let (s, _) = node("FOR v IN ANY SHORTEST_PATH 'places/A' TO 'places/B' connections RETURN v");
    assert_eq!(s["type"], "ShortestPathNode");
    assert_eq!(s["directions"], json!([0]));
    for (keyword, depth) in [
        ("K_SHORTEST_PATHS", ""),
        ("K_PATHS", "1..3"),
        ("ALL_SHORTEST_PATHS", ""),
    ] {
        let (p, _) = node(&format!(
            "FOR p IN {depth} OUTBOUND {keyword} 'places/A' TO 'places/B' connections RETURN p"
        ));
        assert_eq!(p["type"], "EnumeratePathsNode");
        assert_eq!(p["pathType"], keyword);
    }
}

#[test]
fn a_traversal_respects_the_memory_limit_and_the_kill_switch() {
    let dbs = engines();
    for (name, db, _) in &dbs {
        let vs = collection(db, "vs", CollectionType::Document);
        insert(
            &vs,
            (0..200)
                .map(|i| json!({"_key": format!("{i}"), "pad": "x".repeat(200)}))
                .collect(),
        );
        let es = collection(db, "es", CollectionType::Edge);
        let mut edges = Vec::new();
        for i in 0..200 {
            for j in [1, 7, 31] {
                edges.push(
                    json!({"_from": format!("vs/{i}"), "_to": format!("vs/{}", (i + j) % 200)}),
                );
            }
        }
        insert(&es, edges);
        let query = "FOR v, e, p IN 1..6 OUTBOUND 'vs/0' es RETURN LENGTH(p.edges)";
        let options = QueryOptions {
            memory_limit: 50_000,
            ..QueryOptions::default()
        };
        let control = quince_aql::query::control_for(&options, &quince_memory::Pool::new(0));
        let prepared = prepare(Arc::clone(db), query, Map::new(), options).unwrap();
        let e = prepared.run(control, None, &mut |_| Ok(true)).unwrap_err();
        assert_eq!(e.code.num, 32, "{name}: {}", e.message);
        let control = Control::new(None);
        control.kill();
        let prepared = prepare(Arc::clone(db), query, Map::new(), QueryOptions::default()).unwrap();
        let e = prepared.run(control, None, &mut |_| Ok(true)).unwrap_err();
        assert_eq!(e.code.num, 1500, "{name}: {}", e.message);
    }
}

/// A random small graph: vertex keys 0..n, edges with a small weight `w`.
fn random_graph() -> impl Strategy<Value = (usize, Vec<(usize, usize, u8)>)> {
    (2usize..6).prop_flat_map(|n| (Just(n), prop::collection::vec((0..n, 0..n, 0u8..3), 0..12)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn pushed_filters_agree_with_filters_kept(
        (n, edges) in random_graph(),
        value in 0u8..3,
        which in 0usize..5,
        order in prop::sample::select(vec!["dfs", "bfs", "weighted"]),
        unique in prop::sample::select(vec!["none", "path"]),
        direction in prop::sample::select(vec!["OUTBOUND", "INBOUND", "ANY"]),
    ) {
        let db = FakeEngine::new().database("_system").unwrap();
        let vs = collection(&db, "vs", CollectionType::Document);
        insert(&vs, (0..n).map(|i| json!({"_key": format!("{i}"), "g": i % 2})).collect());
        let es = collection(&db, "es", CollectionType::Edge);
        insert(&es, edges.iter().map(|(f, t, w)| json!({"_from": format!("vs/{f}"), "_to": format!("vs/{t}"), "w": w})).collect());
        let filter = [
            format!("p.edges[*].w ALL <= {value}"),
            format!("p.edges[0].w == {value}"),
            format!("p.vertices[1].g == {}", value % 2),
            format!("p.vertices[*].g ALL == 0 || p.edges[1].w == {value}"),
            format!("p.edges[1].w != {value} AND p.vertices[2] != null"),
        ][which].clone();
        let query = |f: &str| format!(
            "FOR v, e, p IN 0..3 {direction} 'vs/0' es OPTIONS {{order: '{order}', uniqueVertices: '{unique}', weightAttribute: 'w'}} \
             FILTER {f} RETURN [p.vertices[*]._key, p.edges[*]._key]");
        let pushed = engine::results(&db, &query(&filter), json!({}));
        let kept = engine::results(&db, &query(&format!("NOOPT({filter})")), json!({}));
        prop_assert_eq!(pushed, kept, "{}", filter);
    }
}
