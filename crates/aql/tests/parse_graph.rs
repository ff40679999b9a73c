//! The graph operations of the parser: traversals (depths, directions, `GRAPH` names and
//! edge-collection lists with per-collection directions, `PRUNE`, `OPTIONS`) and the path
//! searches, the errors ArangoDB gives for malformed ones (with positions), the collections
//! `POST /_api/query` lists for them, and their AST JSON.

use crate::common;

use common::*;
use quince_aql::ast::*;
use quince_aql::syntax::{ast_json, bind_parameters, collections, parse};
use serde_json::json;

fn traversal(text: &str) -> Traversal {
    match kinds(text)
        .into_iter()
        .find(|k| matches!(k, OperationKind::Traversal(_)))
    {
        Some(OperationKind::Traversal(t)) => *t,
        other => panic!("{text}: {other:?}"),
    }
}

fn search(text: &str) -> PathSearch {
    match kinds(text)
        .into_iter()
        .find(|k| matches!(k, OperationKind::PathSearch(_)))
    {
        Some(OperationKind::PathSearch(s)) => *s,
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn traversal_forms() {
    let t = traversal("FOR v IN OUTBOUND 'v/a' GRAPH 'g' RETURN v");
    assert_eq!(
        t,
        Traversal {
            vertex: "v".into(),
            edge: None,
            path: None,
            depth: None,
            direction: GraphDirection::Outbound,
            start: s("v/a"),
            graph: GraphRef::Named(s("g")),
            prune: None,
            options: None,
        }
    );
    let t = traversal("FOR v, e, p IN 1..3 inbound @start GRAPH @g RETURN p");
    assert_eq!(t.edge.as_deref(), Some("e"));
    assert_eq!(t.path.as_deref(), Some("p"));
    assert_eq!(
        t.depth,
        Some(Expr::Range(Box::new(int(1)), Box::new(int(3))))
    );
    assert_eq!(t.direction, GraphDirection::Inbound);
    assert_eq!(t.start, bind("start"));
    assert_eq!(t.graph, GraphRef::Named(bind("g")));
    let t = traversal("FOR v IN 2 ANY 'v/a' GRAPH social RETURN v");
    assert_eq!(t.depth, Some(int(2)));
    assert_eq!(t.graph, GraphRef::Named(s("social")));
    let t = traversal(
        "FOR x IN [1] FOR v, e IN 0..@max ANY x edges1, OUTBOUND 'edges2', INBOUND @@e3 RETURN e",
    );
    assert_eq!(
        t.graph,
        GraphRef::Collections(vec![
            (None, CollectionRef::Name("edges1".into())),
            (
                Some(GraphDirection::Outbound),
                CollectionRef::Name("edges2".into())
            ),
            (
                Some(GraphDirection::Inbound),
                CollectionRef::Bind("e3".into())
            ),
        ])
    );
    assert_eq!(t.start, name("x"));
    assert_eq!(
        t.depth,
        Some(Expr::Range(Box::new(int(0)), Box::new(bind("max"))))
    );
}

#[test]
fn prune_and_options() {
    let t = traversal(
        "FOR v, e, p IN 1..5 OUTBOUND 'v/a' e1 PRUNE v.stop == true OPTIONS { bfs: true } \
         RETURN v",
    );
    assert_eq!(
        t.prune,
        Some(Prune {
            variable: None,
            condition: bin(BinaryOp::Eq, attr(name("v"), "stop"), lit(json!(true))),
        })
    );
    assert_eq!(t.options, Some(obj(vec![("bfs", lit(json!(true)))])));
    let t = traversal("FOR v IN 1..5 OUTBOUND 'v/a' e1 PRUNE cut = v.x > 1 RETURN cut");
    assert_eq!(
        t.prune.as_ref().and_then(|p| p.variable.as_deref()),
        Some("cut")
    );
    // The prune variable is visible after the traversal, and cannot be declared twice.
    let e = parse_err("FOR v IN 1..5 OUTBOUND 'v/a' e1 PRUNE v = 1 RETURN v");
    assert_eq!(e.code.num, 1511, "{}", e.message);
    // Options must be known at compile time.
    let e = parse_err("FOR v IN OUTBOUND 'v/a' e1 OPTIONS { bfs: v } RETURN v");
    assert_eq!(e.code.num, 1575, "{}", e.message);
}

#[test]
fn path_searches() {
    let p = search("FOR v, e IN OUTBOUND SHORTEST_PATH 'v/a' TO 'v/b' GRAPH 'g' RETURN [v, e]");
    assert_eq!(
        p,
        PathSearch {
            kind: PathKind::Shortest,
            variable: "v".into(),
            edge: Some("e".into()),
            depth: None,
            direction: GraphDirection::Outbound,
            source: s("v/a"),
            target: s("v/b"),
            graph: GraphRef::Named(s("g")),
            options: None,
        }
    );
    let p = search(
        "FOR p IN ANY K_SHORTEST_PATHS @s to @t edges OPTIONS { weightAttribute: 'w' } RETURN p",
    );
    assert_eq!(p.kind, PathKind::KShortest);
    assert_eq!(p.target, bind("t"));
    assert!(p.options.is_some());
    let p = search("FOR p IN 2..4 INBOUND K_PATHS 'v/a' TO 'v/b' GRAPH 'g' RETURN p");
    assert_eq!(p.kind, PathKind::KPaths);
    assert_eq!(
        p.depth,
        Some(Expr::Range(Box::new(int(2)), Box::new(int(4))))
    );
    let p = search("FOR p IN OUTBOUND ALL_SHORTEST_PATHS 'v/a' TO 'v/b' e1, e2 RETURN p");
    assert_eq!(p.kind, PathKind::AllShortest);
}

#[test]
fn malformed_graph_operations_and_their_positions() {
    let cases: &[(&str, u32, &str)] = &[
        (
            "FOR a, b, c, d IN OUTBOUND 'v/a' e RETURN a",
            1501,
            "Traversals only have one, two or three return variables near 'FOR a, b, c, d IN \
             OUTBOUND 'v/a'...' at position 1:1",
        ),
        (
            "FOR a, b, c IN OUTBOUND SHORTEST_PATH 'v/a' TO 'v/b' e RETURN a",
            1501,
            "SHORTEST_PATH only has one or two return variables",
        ),
        (
            "FOR a, b IN OUTBOUND K_SHORTEST_PATHS 'v/a' TO 'v/b' e RETURN a",
            1501,
            "K_SHORTEST_PATHS only has one return variable",
        ),
        (
            "FOR p IN 1..2 OUTBOUND K_SHORTEST_PATHS 'v/a' TO 'v/b' e RETURN p",
            1501,
            "K_SHORTEST_PATHS does not take a depth",
        ),
        (
            "FOR p IN OUTBOUND SHORTEST_PATH 'v/a' 'v/b' e RETURN p",
            1501,
            "unexpected quoted string near ''v/b' e RETURN p' at position 1:39",
        ),
        (
            "FOR v IN OUTBOUND 'v/a' RETURN v",
            1501,
            "unexpected RETURN declaration near 'RETURN v' at position 1:25",
        ),
        (
            "FOR v IN OUTBOUND 'v/a' GRAPH RETURN v",
            1501,
            "unexpected RETURN declaration near 'RETURN v' at position 1:31",
        ),
        (
            "FOR v IN GRAPH 'g' RETURN v",
            1501,
            "unexpected GRAPH keyword near 'GRAPH 'g' RETURN v' at position 1:10",
        ),
    ];
    let e = parse_err("FOR p IN 1..2 OUTBOUND K_SHORTEST_PATHS 'v/a' TO 'v/b' e RETURN p");
    assert!(e.message.contains("at position 1:24"), "{}", e.message);
    for (text, code, message) in cases {
        let e = parse_err(text);
        assert_eq!(e.code.num, *code, "{text}: {}", e.message);
        assert!(e.message.contains(message), "{text}: {}", e.message);
    }
}

#[test]
fn collections_and_bind_parameters_of_graph_operations() {
    let q = parse(
        "WITH vs FOR v, e IN 1..2 OUTBOUND @start e1, INBOUND e2 PRUNE v.x FILTER e.y \
         RETURN v",
    )
    .unwrap();
    assert_eq!(collections(&q), vec!["e1", "e2", "vs"]);
    assert_eq!(bind_parameters(&q), vec!["start"]);
    let q = parse("FOR p IN ANY K_PATHS @s TO @t GRAPH @g RETURN p").unwrap();
    assert_eq!(bind_parameters(&q), vec!["s", "t", "g"]);
    assert!(collections(&q).is_empty());
}

#[test]
fn ast_json_of_graph_operations() {
    let q = parse("FOR v, e IN 1..2 OUTBOUND 'v/a' e1, ANY e2 PRUNE v.x RETURN e").unwrap();
    assert_eq!(
        ast_json(&q),
        json!([{"type": "root", "subNodes": [
            {"type": "traversal", "subNodes": [
                {"type": "direction", "subNodes": [
                    {"type": "value", "value": 2},
                    {"type": "range", "subNodes": [
                        {"type": "value", "value": 1}, {"type": "value", "value": 2}
                    ]}
                ]},
                {"type": "value", "value": "v/a"},
                {"type": "collection list", "subNodes": [
                    {"type": "collection", "name": "e1"},
                    {"type": "direction", "subNodes": [
                        {"type": "value", "value": 0}, {"type": "collection", "name": "e2"}
                    ]}
                ]},
                {"type": "attribute access", "name": "x", "subNodes": [
                    {"type": "reference", "name": "v", "id": 0}
                ]},
                {"type": "no-op"},
                {"type": "variable", "name": "v", "id": 0},
                {"type": "variable", "name": "e", "id": 1}
            ]},
            {"type": "return", "subNodes": [{"type": "reference", "name": "e", "id": 1}]}
        ]}])
    );
    let q = parse("FOR p IN INBOUND K_SHORTEST_PATHS 'v/a' TO 'v/b' GRAPH @g RETURN p").unwrap();
    let json = ast_json(&q);
    let node = &json[0]["subNodes"][0];
    assert_eq!(node["type"], "enumerate paths");
    assert_eq!(node["subNodes"][0]["value"], "K_SHORTEST_PATHS");
    assert_eq!(node["subNodes"][1]["subNodes"][0]["value"], 1);
    assert_eq!(
        node["subNodes"][4],
        json!({"type": "parameter", "name": "g"})
    );
    let q = parse("FOR v IN ANY SHORTEST_PATH 'v/a' TO 'v/b' e1 RETURN v").unwrap();
    assert_eq!(ast_json(&q)[0]["subNodes"][0]["type"], "shortest path");
}
