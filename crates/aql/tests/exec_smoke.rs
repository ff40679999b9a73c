//! The executor over hand-built syntax trees on the fake engine: the pipeline semantics
//! (filters, sort, limit with early stop, collect, subqueries, modifications) before and
//! independently of the parser.

use std::sync::Arc;

use quince_aql::ast::*;
use quince_aql::exec::{Context, Control, Executor};
use quince_aql::plan::{compile, optimize};
use quince_aql::QueryOptions;
use quince_ops::fake::FakeEngine;
use quince_ops::{
    CollectionType, CreateCollection, DatabaseOps, Engine, WriteKind, WriteOptions, WriteRequest,
};
use serde_json::{json, Map, Value};

fn database() -> Arc<dyn DatabaseOps> {
    let engine = FakeEngine::new();
    let db = engine.database("_system").unwrap();
    let c = db
        .create_collection(CreateCollection {
            name: "c".into(),
            kind: CollectionType::Document,
            wait_for_sync: None,
            is_system: false,
            key_options: None,
            journal_size: None,
            schema: None,
            computed_values: None,
            cache_enabled: None,
        })
        .unwrap();
    let docs: Vec<Value> = (0..10)
        .map(|i| json!({"_key": format!("k{i}"), "a": i, "g": i % 3}))
        .collect();
    let results = c.write(WriteRequest::new(
        WriteKind::Insert,
        docs,
        WriteOptions::default(),
    ));
    assert!(results.items.iter().all(|r| r.is_ok()));
    db
}

fn op(kind: OperationKind) -> Operation {
    Operation {
        span: Span::default(),
        kind,
    }
}

fn name(n: &str) -> Expr {
    Expr::Name(n.into())
}

fn attr(base: Expr, a: &str) -> Expr {
    Expr::Attribute(Box::new(base), a.into())
}

fn lit(v: Value) -> Expr {
    Expr::Literal(v)
}

fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(b))
}

fn run(db: &Arc<dyn DatabaseOps>, operations: Vec<Operation>) -> (Vec<Value>, quince_aql::Stats) {
    let query = Query {
        with: Vec::new(),
        operations,
    };
    let mut plan = compile(&query, db, &Map::new(), false).unwrap();
    optimize(&mut plan);
    let ctx = Context::new(
        Arc::clone(db),
        Control::new(None),
        None,
        &QueryOptions::default(),
    );
    let mut executor = Executor::new(&plan, ctx);
    let mut out = Vec::new();
    executor
        .run_plan(&mut |_, v| {
            out.push(v);
            Ok(true)
        })
        .unwrap();
    (out, executor.ctx.stats.clone())
}

fn for_c() -> Operation {
    op(OperationKind::For {
        variable: "d".into(),
        source: name("c"),
        options: None,
    })
}

#[test]
fn filter_sort_limit() {
    let db = database();
    let (out, stats) = run(
        &db,
        vec![
            for_c(),
            op(OperationKind::Filter(bin(
                BinaryOp::Gt,
                attr(name("d"), "a"),
                lit(json!(3)),
            ))),
            op(OperationKind::Sort(vec![SortKey {
                value: attr(name("d"), "a"),
                ascending: false,
            }])),
            op(OperationKind::Limit {
                offset: Some(lit(json!(1))),
                count: lit(json!(2)),
            }),
            op(OperationKind::Return {
                distinct: false,
                value: attr(name("d"), "a"),
            }),
        ],
    );
    assert_eq!(out, vec![json!(8), json!(7)]);
    assert_eq!(stats.scanned_full, 10);
    assert_eq!(stats.filtered, 4);
}

#[test]
fn limit_stops_the_scan() {
    let db = database();
    let (out, stats) = run(
        &db,
        vec![
            for_c(),
            op(OperationKind::Limit {
                offset: None,
                count: lit(json!(3)),
            }),
            op(OperationKind::Return {
                distinct: false,
                value: lit(json!(1)),
            }),
        ],
    );
    assert_eq!(out.len(), 3);
    assert_eq!(stats.scanned_full, 3);
}

#[test]
fn collect_with_count_and_aggregate() {
    let db = database();
    let (out, _) = run(
        &db,
        vec![
            for_c(),
            op(OperationKind::Collect(Collect {
                groups: vec![("g".into(), attr(name("d"), "g"))],
                aggregates: vec![(
                    "total".into(),
                    Expr::Call {
                        name: "SUM".into(),
                        args: vec![attr(name("d"), "a")],
                        span: Span::default(),
                    },
                )],
                into: None,
                keep: Vec::new(),
                count_into: Some("n".into()),
                options: None,
            })),
            op(OperationKind::Return {
                distinct: false,
                value: Expr::Array(vec![name("g"), name("n"), name("total")]),
            }),
        ],
    );
    assert_eq!(
        out,
        vec![json!([0, 4, 18]), json!([1, 3, 12]), json!([2, 3, 15])]
    );
}

#[test]
fn collect_count_of_nothing_is_one_row() {
    let db = database();
    let (out, _) = run(
        &db,
        vec![
            op(OperationKind::For {
                variable: "x".into(),
                source: lit(json!([])),
                options: None,
            }),
            op(OperationKind::Collect(Collect {
                groups: Vec::new(),
                aggregates: Vec::new(),
                into: None,
                keep: Vec::new(),
                count_into: Some("n".into()),
                options: None,
            })),
            op(OperationKind::Return {
                distinct: false,
                value: name("n"),
            }),
        ],
    );
    assert_eq!(out, vec![json!(0)]);
}

#[test]
fn key_lookup_uses_the_primary_index() {
    let db = database();
    let (out, stats) = run(
        &db,
        vec![
            for_c(),
            op(OperationKind::Filter(bin(
                BinaryOp::Eq,
                attr(name("d"), "_key"),
                lit(json!("k4")),
            ))),
            op(OperationKind::Return {
                distinct: false,
                value: attr(name("d"), "a"),
            }),
        ],
    );
    assert_eq!(out, vec![json!(4)]);
    assert_eq!(stats.scanned_full, 0);
    assert_eq!(stats.scanned_index, 1);
}

#[test]
fn update_in_a_loop_sees_each_document_once() {
    let db = database();
    let (_, stats) = run(
        &db,
        vec![
            for_c(),
            op(OperationKind::Modify(Modify {
                kind: ModifyKind::Update {
                    key: None,
                    document: Expr::Object(vec![
                        (ObjectKey::Static("_key".into()), attr(name("d"), "_key")),
                        (
                            ObjectKey::Static("a".into()),
                            bin(BinaryOp::Add, attr(name("d"), "a"), lit(json!(100))),
                        ),
                    ]),
                },
                collection: CollectionRef::Name("c".into()),
                options: None,
            })),
        ],
    );
    assert_eq!(stats.writes_executed, 10);
    let (out, _) = run(
        &db,
        vec![
            for_c(),
            op(OperationKind::Sort(vec![SortKey {
                value: attr(name("d"), "a"),
                ascending: true,
            }])),
            op(OperationKind::Return {
                distinct: false,
                value: attr(name("d"), "a"),
            }),
        ],
    );
    assert_eq!(out, (100..110).map(|i| json!(i)).collect::<Vec<_>>());
}

#[test]
fn subquery_and_return_distinct() {
    let db = database();
    let sub = Query {
        with: Vec::new(),
        operations: vec![
            for_c(),
            op(OperationKind::Return {
                distinct: true,
                value: attr(name("d"), "g"),
            }),
        ],
    };
    let (out, _) = run(
        &db,
        vec![op(OperationKind::Return {
            distinct: false,
            value: Expr::Call {
                name: "LENGTH".into(),
                args: vec![Expr::Subquery(Box::new(sub))],
                span: Span::default(),
            },
        })],
    );
    assert_eq!(out, vec![json!(3)]);
}
