//! The AQL parser against a table of queries: each construct of the grammar and the syntax
//! tree it must give, operator precedence, python-arango's query templates, and the errors
//! (codes, wording and positions) ArangoDB gives for malformed queries.

use crate::common;

use common::*;
use quince_aql::ast::*;
use serde_json::json;
use BinaryOp::*;

#[test]
fn python_arango_templates() {
    let q = parse_ok(
        "FOR doc IN @@collection FILTER doc.`a` == {\"x\":[1,null]} AND doc.b.c == \"s\" \
         LIMIT 0, 5 SORT doc.x ASC RETURN doc",
    );
    let expected = vec![
        OperationKind::For {
            variable: "doc".into(),
            source: Expr::BindCollection("collection".into()),
            options: None,
        },
        OperationKind::Filter(bin(
            And,
            bin(
                Eq,
                attr(name("doc"), "a"),
                obj(vec![("x", Expr::Array(vec![int(1), lit(json!(null))]))]),
            ),
            bin(Eq, attr(attr(name("doc"), "b"), "c"), s("s")),
        )),
        OperationKind::Limit {
            offset: Some(int(0)),
            count: int(5),
        },
        OperationKind::Sort(vec![SortKey {
            value: attr(name("doc"), "x"),
            ascending: true,
        }]),
        OperationKind::Return {
            distinct: false,
            value: name("doc"),
        },
    ];
    assert_eq!(
        q.operations.into_iter().map(|o| o.kind).collect::<Vec<_>>(),
        expected
    );

    let q = kinds(
        "FOR doc IN @@collection FILTER doc.@field >= @lower && doc.@field < @upper \
         LIMIT @skip, @limit RETURN doc",
    );
    assert_eq!(
        q[1],
        OperationKind::Filter(bin(
            And,
            bin(Ge, index(name("doc"), bind("field")), bind("lower")),
            bin(Lt, index(name("doc"), bind("field")), bind("upper")),
        ))
    );
    assert_eq!(
        q[2],
        OperationKind::Limit {
            offset: Some(bind("skip")),
            count: bind("limit")
        }
    );

    let q = kinds(
        "UPDATE doc WITH @body IN @@collection OPTIONS { keepNull: @keep_none, \
         mergeObjects: @merge, waitForSync: True }",
    );
    assert_eq!(
        q,
        vec![OperationKind::Modify(Modify {
            kind: ModifyKind::Update {
                key: Some(name("doc")),
                document: bind("body")
            },
            collection: CollectionRef::Bind("collection".into()),
            options: Some(obj(vec![
                ("keepNull", bind("keep_none")),
                ("mergeObjects", bind("merge")),
                ("waitForSync", lit(json!(true))),
            ])),
        })]
    );

    let q = kinds("FOR doc IN @@collection SORT RAND() LIMIT 1 RETURN doc");
    assert_eq!(
        q[1],
        OperationKind::Sort(vec![SortKey {
            value: call("RAND", vec![]),
            ascending: true
        }])
    );
    assert_eq!(
        q[2],
        OperationKind::Limit {
            offset: None,
            count: int(1)
        }
    );

    assert_eq!(expr_of("SLEEP(0.1)"), call("SLEEP", vec![lit(json!(0.1))]));
}

#[test]
fn precedence() {
    let (a, b, c) = (name("a"), name("b"), name("c"));
    assert_eq!(
        expr_of("1 + 2 * 3"),
        bin(Add, int(1), bin(Mul, int(2), int(3)))
    );
    assert_eq!(
        expr_of("1 - 2 - 3"),
        bin(Sub, bin(Sub, int(1), int(2)), int(3))
    );
    assert_eq!(
        expr_of("a || b && c"),
        bin(Or, a.clone(), bin(And, b.clone(), c.clone()))
    );
    assert_eq!(
        expr_of("a OR b AND c"),
        bin(Or, a.clone(), bin(And, b.clone(), c.clone()))
    );
    assert_eq!(
        expr_of("NOT a == b"),
        bin(Eq, un(UnaryOp::Not, a.clone()), b.clone())
    );
    assert_eq!(expr_of("!a.x"), un(UnaryOp::Not, attr(a.clone(), "x")));
    assert_eq!(
        expr_of("a IN b == true"),
        bin(Eq, bin(In, a.clone(), b.clone()), lit(json!(true)))
    );
    assert_eq!(
        expr_of("a == b IN c"),
        bin(Eq, a.clone(), bin(In, b.clone(), c.clone()))
    );
    assert_eq!(
        expr_of("a < b IN c"),
        bin(In, bin(Lt, a.clone(), b.clone()), c.clone())
    );
    assert_eq!(
        expr_of("1..2 + 3"),
        Expr::Range(Box::new(int(1)), Box::new(bin(Add, int(2), int(3))))
    );
    assert_eq!(expr_of("a NOT IN b"), bin(NotIn, a.clone(), b.clone()));
    assert_eq!(expr_of("a not like b"), bin(NotLike, a.clone(), b.clone()));
    assert_eq!(expr_of("a =~ b"), bin(RegexMatch, a.clone(), b.clone()));
    assert_eq!(
        expr_of("a NOT =~ b"),
        bin(RegexNotMatch, a.clone(), b.clone())
    );
    assert_eq!(expr_of("a NOT !~ b"), bin(RegexMatch, a.clone(), b.clone()));
    assert_eq!(
        expr_of("a LIKE b || c"),
        bin(Or, bin(Like, a.clone(), b.clone()), c.clone())
    );
    assert_eq!(
        expr_of("-a * b"),
        bin(Mul, un(UnaryOp::Minus, a.clone()), b.clone())
    );
    assert_eq!(expr_of("-1"), int(-1));
    assert_eq!(expr_of("- 2.5"), lit(json!(-2.5)));
    assert_eq!(expr_of("+3"), int(3));
    assert_eq!(
        expr_of("(1 + 2) * 3"),
        bin(Mul, bin(Add, int(1), int(2)), int(3))
    );
    let ternary = |c, t: Option<Expr>, o| Expr::Ternary {
        condition: Box::new(c),
        then: t.map(Box::new),
        otherwise: Box::new(o),
    };
    assert_eq!(
        expr_of("a || b ? 1 : c ? 2 : 3"),
        ternary(
            bin(Or, a.clone(), b.clone()),
            Some(int(1)),
            ternary(c.clone(), Some(int(2)), int(3))
        )
    );
    assert_eq!(expr_of("a ?: b"), ternary(a.clone(), None, b.clone()));
    assert_eq!(expr_of("a ? : b"), ternary(a.clone(), None, b.clone()));
}

#[test]
fn array_comparison_operators() {
    let arr = Expr::Array(vec![int(1), int(2)]);
    assert_eq!(
        expr_of("[1, 2] ALL == 1"),
        quant(Quantifier::All, Eq, arr.clone(), int(1))
    );
    assert_eq!(
        expr_of("[1, 2] any in [3]"),
        quant(Quantifier::Any, In, arr.clone(), Expr::Array(vec![int(3)]))
    );
    assert_eq!(
        expr_of("[1, 2] NONE > 0"),
        quant(Quantifier::None, Gt, arr.clone(), int(0))
    );
    assert_eq!(
        expr_of("[1, 2] ALL NOT IN [3]"),
        quant(
            Quantifier::All,
            NotIn,
            arr.clone(),
            Expr::Array(vec![int(3)])
        )
    );
    assert_eq!(
        expr_of("[1, 2] AT LEAST (1+1) == 2"),
        quant(
            Quantifier::AtLeast(Box::new(bin(Add, int(1), int(1)))),
            Eq,
            arr.clone(),
            int(2)
        )
    );
    // The quantifier binds looser than `==` on its left and tighter than `&&`.
    assert_eq!(
        expr_of("x && a == b ALL == c"),
        bin(
            And,
            name("x"),
            quant(
                Quantifier::All,
                Eq,
                bin(Eq, name("a"), name("b")),
                name("c")
            )
        )
    );
    assert_eq!(
        expr_of("a ANY < b + 1"),
        quant(Quantifier::Any, Lt, name("a"), bin(Add, name("b"), int(1)))
    );
}

#[test]
fn member_access_calls_and_literals() {
    assert_eq!(
        expr_of("a.b[0][\"c\"]"),
        index(index(attr(name("a"), "b"), int(0)), s("c"))
    );
    assert_eq!(
        expr_of("doc.@attr.@sub"),
        index(index(name("doc"), bind("attr")), bind("sub"))
    );
    assert_eq!(
        expr_of("concat('a', 1)"),
        call("CONCAT", vec![s("a"), int(1)])
    );
    assert_eq!(expr_of("my::ns::Func()"), call("MY::NS::FUNC", vec![]));
    assert_eq!(
        expr_of("LIKE(a, 'x%')"),
        call("LIKE", vec![name("a"), s("x%")])
    );
    assert_eq!(
        expr_of("[1, 'a', null, true, false,]"),
        Expr::Array(vec![
            int(1),
            s("a"),
            lit(json!(null)),
            lit(json!(true)),
            lit(json!(false))
        ])
    );
    assert_eq!(expr_of("True"), lit(json!(true)));
    assert_eq!(expr_of("FALSE"), lit(json!(false)));
    let q = parse_ok("LET a = 1 RETURN { a, 'b c': 2, [CONCAT('x', 'y')]: 3, @k: 4, d: @v, }");
    let OperationKind::Return { value, .. } = &q.operations[1].kind else {
        panic!()
    };
    assert_eq!(
        value,
        &Expr::Object(vec![
            (ObjectKey::Static("a".into()), name("a")),
            (ObjectKey::Static("b c".into()), int(2)),
            (
                ObjectKey::Computed(call("CONCAT", vec![s("x"), s("y")])),
                int(3)
            ),
            (ObjectKey::Bind("k".into()), int(4)),
            (ObjectKey::Static("d".into()), bind("v")),
        ])
    );
    assert_eq!(expr_of("`filter`.`sort`"), attr(name("filter"), "sort"));
    assert_eq!(expr_of("´my-coll´"), name("my-coll"));
    assert_eq!(
        expr_of("a.options.keep.count"),
        attr(attr(attr(name("a"), "options"), "keep"), "count")
    );
}

#[test]
fn numbers_and_strings() {
    assert_eq!(expr_of("0x1F"), int(31));
    assert_eq!(expr_of("0b1010"), int(10));
    assert_eq!(expr_of("1.5e3"), lit(json!(1500.0)));
    assert_eq!(expr_of("9223372036854775807"), int(i64::MAX));
    assert_eq!(
        expr_of("9223372036854775808"),
        lit(json!(9223372036854775808.0))
    );
    assert_eq!(expr_of("-9223372036854775807"), int(-i64::MAX));
    assert_eq!(expr_of(".25"), lit(json!(0.25)));
    assert_eq!(expr_of(r#""a\tb\u0041\ud83d\ude00""#), s("a\tbA😀"));
    assert_eq!(expr_of(r"'single \'quoted\''"), s("single 'quoted'"));
    let e = parse_err("RETURN 1e400");
    assert_eq!(e.num(), 1504);
    assert!(e.message.contains("at position 1:8"), "{}", e.message);
    assert_eq!(parse_err("RETURN 0x10000000000000000").num(), 1504);
}

#[test]
fn expansion_and_inline_operations() {
    assert_eq!(
        expr_of("u.friends[*].name"),
        expansion(
            attr(name("u"), "friends"),
            1,
            None,
            None,
            Some(attr(Expr::Current, "name"))
        )
    );
    assert_eq!(expr_of("a[*]"), expansion(name("a"), 1, None, None, None));
    assert_eq!(
        expr_of("a[** FILTER CURRENT % 2 == 0 LIMIT 1, 2 RETURN CURRENT.x]"),
        expansion(
            name("a"),
            2,
            Some(bin(Eq, bin(Mod, Expr::Current, int(2)), int(0))),
            Some((Some(int(1)), int(2))),
            Some(attr(Expr::Current, "x")),
        )
    );
    assert_eq!(
        expr_of("a[*].b[*].c"),
        expansion(
            name("a"),
            1,
            None,
            None,
            Some(expansion(
                attr(Expr::Current, "b"),
                1,
                None,
                None,
                Some(attr(Expr::Current, "c"))
            )),
        )
    );
    assert_eq!(
        expr_of("(a[*]).b"),
        attr(expansion(name("a"), 1, None, None, None), "b")
    );
    assert_eq!(
        expr_of("a[*].b[**]"),
        expansion(
            expansion(name("a"), 1, None, None, Some(attr(Expr::Current, "b"))),
            2,
            None,
            None,
            None
        )
    );
    // CURRENT outside an inline expression is just a name.
    assert_eq!(expr_of("CURRENT"), name("CURRENT"));
}

#[test]
fn subqueries() {
    let inner = Query {
        with: vec![],
        operations: vec![
            Operation {
                span: Span::default(),
                kind: OperationKind::For {
                    variable: "x".into(),
                    source: name("c"),
                    options: None,
                },
            },
            Operation {
                span: Span::default(),
                kind: OperationKind::Return {
                    distinct: false,
                    value: name("x"),
                },
            },
        ],
    };
    assert_eq!(
        expr_of("(FOR x IN c RETURN x)"),
        Expr::Subquery(Box::new(inner.clone()))
    );
    assert_eq!(
        expr_of("LENGTH(FOR x IN c RETURN x)"),
        call("LENGTH", vec![Expr::Subquery(Box::new(inner))])
    );
    assert_eq!(
        expr_of("(RETURN 1)[0]"),
        index(
            Expr::Subquery(Box::new(Query {
                with: vec![],
                operations: vec![Operation {
                    span: Span::default(),
                    kind: OperationKind::Return {
                        distinct: false,
                        value: int(1)
                    }
                }]
            })),
            int(0)
        )
    );
}

#[test]
fn for_let_filter_search_sort_limit() {
    assert_eq!(
        kinds("for u in users OPTIONS { indexHint: 'x' } let a = 1, b = a filter u.a sort u.a DESC, u.b return distinct u"),
        vec![
            OperationKind::For {
                variable: "u".into(),
                source: name("users"),
                options: Some(obj(vec![("indexHint", s("x"))])),
            },
            OperationKind::Let { variable: "a".into(), value: int(1) },
            OperationKind::Let { variable: "b".into(), value: name("a") },
            OperationKind::Filter(attr(name("u"), "a")),
            OperationKind::Sort(vec![
                SortKey { value: attr(name("u"), "a"), ascending: false },
                SortKey { value: attr(name("u"), "b"), ascending: true },
            ]),
            OperationKind::Return { distinct: true, value: name("u") },
        ]
    );
    assert_eq!(
        kinds("FOR d IN v SEARCH d.x == 1 OPTIONS { waitForSync: true } RETURN d")[1],
        OperationKind::Search {
            condition: bin(Eq, attr(name("d"), "x"), int(1)),
            options: Some(obj(vec![("waitForSync", lit(json!(true)))])),
        }
    );
    assert_eq!(
        kinds("FOR i IN 1..3 RETURN i")[0],
        OperationKind::For {
            variable: "i".into(),
            source: Expr::Range(Box::new(int(1)), Box::new(int(3))),
            options: None,
        }
    );
    assert_eq!(
        kinds("FOR x IN c SORT x.a 'DESC' RETURN x")[1],
        OperationKind::Sort(vec![SortKey {
            value: attr(name("x"), "a"),
            ascending: false
        }])
    );
}

#[test]
fn collect_forms() {
    let collect = |text: &str| {
        let found = kinds(text).into_iter().find_map(|k| match k {
            OperationKind::Collect(c) => Some(c),
            _ => None,
        });
        found.unwrap_or_else(|| panic!("no COLLECT in {text}"))
    };
    let empty = Collect {
        groups: vec![],
        aggregates: vec![],
        into: None,
        keep: vec![],
        count_into: None,
        options: None,
    };
    assert_eq!(
        collect("FOR u IN c COLLECT WITH COUNT INTO n RETURN n"),
        Collect {
            count_into: Some("n".into()),
            ..empty.clone()
        }
    );
    assert_eq!(
        collect("FOR u IN c COLLECT a = u.a WITH COUNT INTO n RETURN n"),
        Collect {
            groups: vec![("a".into(), attr(name("u"), "a"))],
            count_into: Some("n".into()),
            ..empty.clone()
        }
    );
    assert_eq!(
        collect("FOR u IN c COLLECT a = u.a AGGREGATE m = MAX(u.x), s = SUM(u.y) INTO g OPTIONS { method: 'hash' } RETURN a"),
        Collect {
            groups: vec![("a".into(), attr(name("u"), "a"))],
            aggregates: vec![
                ("m".into(), call("MAX", vec![attr(name("u"), "x")])),
                ("s".into(), call("SUM", vec![attr(name("u"), "y")])),
            ],
            into: Some(CollectInto { variable: "g".into(), value: None }),
            options: Some(obj(vec![("method", s("hash"))])),
            ..empty.clone()
        }
    );
    assert_eq!(
        collect("FOR u IN c COLLECT AGGREGATE m = MIN(u.x) RETURN m"),
        Collect {
            aggregates: vec![("m".into(), call("MIN", vec![attr(name("u"), "x")]))],
            ..empty.clone()
        }
    );
    assert_eq!(
        collect("FOR u IN c COLLECT a = u.a, b = u.b INTO g = u.name RETURN g"),
        Collect {
            groups: vec![
                ("a".into(), attr(name("u"), "a")),
                ("b".into(), attr(name("u"), "b"))
            ],
            into: Some(CollectInto {
                variable: "g".into(),
                value: Some(attr(name("u"), "name"))
            }),
            ..empty.clone()
        }
    );
    assert_eq!(
        collect("FOR u IN c LET k = 1 COLLECT a = u.a INTO g KEEP u, k RETURN g"),
        Collect {
            groups: vec![("a".into(), attr(name("u"), "a"))],
            into: Some(CollectInto {
                variable: "g".into(),
                value: None
            }),
            keep: vec!["u".into(), "k".into()],
            ..empty.clone()
        }
    );
    // After COLLECT in a loop, the loop variable is gone and may be declared again.
    parse_ok("FOR u IN c COLLECT a = u.a FOR u IN d RETURN [a, u]");
    assert_eq!(
        parse_err("FOR u IN c COLLECT a = u.a KEEP u RETURN a").num(),
        1501
    );
    assert_eq!(
        parse_err("FOR u IN c COLLECT a = u.a INTO g KEEP zz RETURN a").num(),
        1501
    );
    assert_eq!(
        parse_err("FOR u IN c COLLECT a = u.a AGGREGATE m = MAX(a) RETURN a").num(),
        1512
    );
    assert_eq!(
        parse_err("FOR u IN c COLLECT WITH COUNTS INTO n RETURN n").num(),
        1501
    );
    assert_eq!(
        parse_err("FOR u IN c COLLECT a = u.a AGGREGATE m = 1 RETURN a").num(),
        1501
    );
}

#[test]
fn window_forms() {
    assert_eq!(
        kinds("FOR t IN c WINDOW { preceding: 1, following: 'unbounded' } AGGREGATE s = SUM(t.v) RETURN s")[1],
        OperationKind::Window(Window {
            range_value: None,
            bounds: obj(vec![("preceding", int(1)), ("following", s("unbounded"))]),
            aggregates: vec![("s".into(), call("SUM", vec![attr(name("t"), "v")]))],
        })
    );
    assert_eq!(
        kinds(
            "FOR t IN c WINDOW t.time WITH { preceding: 'PT1H' } AGGREGATE a = AVG(t.v) RETURN a"
        )[1],
        OperationKind::Window(Window {
            range_value: Some(attr(name("t"), "time")),
            bounds: obj(vec![("preceding", s("PT1H"))]),
            aggregates: vec![("a".into(), call("AVG", vec![attr(name("t"), "v")]))],
        })
    );
    assert_eq!(
        parse_err("FOR t IN c WINDOW { } AGGREGATE s = SUM(t) RETURN s").num(),
        1501
    );
    assert_eq!(
        parse_err("FOR t IN c WINDOW { before: 1 } AGGREGATE s = SUM(t) RETURN s").num(),
        1501
    );
}

#[test]
fn data_modification() {
    let modify = |text: &str| match kinds(text).pop() {
        Some(OperationKind::Modify(m)) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        modify("INSERT { a: 1 } INTO c"),
        Modify {
            kind: ModifyKind::Insert {
                document: obj(vec![("a", int(1))])
            },
            collection: CollectionRef::Name("c".into()),
            options: None,
        }
    );
    assert_eq!(
        modify("FOR d IN c UPDATE d IN c"),
        Modify {
            kind: ModifyKind::Update {
                key: None,
                document: name("d")
            },
            collection: CollectionRef::Name("c".into()),
            options: None,
        }
    );
    assert_eq!(
        modify("FOR d IN c REPLACE d._key WITH { b: 2 } INTO 'c'"),
        Modify {
            kind: ModifyKind::Replace {
                key: Some(attr(name("d"), "_key")),
                document: obj(vec![("b", int(2))])
            },
            collection: CollectionRef::Name("c".into()),
            options: None,
        }
    );
    assert_eq!(
        modify("REMOVE 'k' IN @@c OPTIONS { ignoreErrors: true }"),
        Modify {
            kind: ModifyKind::Remove { key: s("k") },
            collection: CollectionRef::Bind("c".into()),
            options: Some(obj(vec![("ignoreErrors", lit(json!(true)))])),
        }
    );
    assert_eq!(
        modify("UPSERT { a: 1 } INSERT { a: 1 } UPDATE { b: OLD.b + 1 } IN c"),
        Modify {
            kind: ModifyKind::Upsert {
                search: UpsertSearch::Example(obj(vec![("a", int(1))])),
                insert: obj(vec![("a", int(1))]),
                update: obj(vec![("b", bin(Add, attr(name("OLD"), "b"), int(1)))]),
                replace: false,
            },
            collection: CollectionRef::Name("c".into()),
            options: None,
        }
    );
    assert_eq!(
        modify("UPSERT FILTER CURRENT.a == 1 INSERT {} REPLACE {} INTO c"),
        Modify {
            kind: ModifyKind::Upsert {
                search: UpsertSearch::Filter(bin(Eq, attr(Expr::Current, "a"), int(1))),
                insert: obj(vec![]),
                update: obj(vec![]),
                replace: true,
            },
            collection: CollectionRef::Name("c".into()),
            options: None,
        }
    );
    // `IN` inside the document is still an operator when a collection does not follow.
    assert_eq!(
        modify("FOR d IN c UPDATE d.x IN [1] IN c").kind,
        ModifyKind::Update {
            key: None,
            document: bin(In, attr(name("d"), "x"), Expr::Array(vec![int(1)]))
        }
    );
    // A modification may be followed by more operations.
    let q = kinds("FOR d IN c INSERT d INTO e LET n = NEW RETURN n");
    assert_eq!(q.len(), 4);
    assert_eq!(kinds("FOR d IN c REMOVE d IN c RETURN OLD").len(), 3);
}

#[test]
fn with_and_keywords_in_any_case() {
    let q = parse_ok("with a, @@b c FoR x In a ReTuRn x");
    assert_eq!(
        q.with,
        vec![
            CollectionRef::Name("a".into()),
            CollectionRef::Bind("b".into()),
            CollectionRef::Name("c".into())
        ]
    );
    parse_ok("/* comment */ RETURN // line\n 1 /* x */");
}

#[test]
fn syntax_errors_and_positions() {
    let cases: &[(&str, u32, &str)] = &[
        ("INVALID QUERY", 1501, "AQL: syntax error, unexpected identifier near 'INVALID QUERY' at position 1:1 (while parsing)"),
        ("this is not AQL", 1501, "AQL: syntax error, unexpected identifier near 'this is not AQL' at position 1:1 (while parsing)"),
        ("FOR i IN 1..100 FILTER i = 1 LIMIT 2 RETURN i * 3", 1501, "AQL: syntax error, unexpected assignment near '= 1 LIMIT 2 RETURN i * 3' at position 1:26 (while parsing)"),
        ("FOR x IN c\n  FILTER x.a ==\n  RETURN x", 1501, "unexpected RETURN declaration near 'RETURN x' at position 3:3"),
        ("FOR x IN c FILTER x", 1501, "unexpected end of query string near 'x' at position 1:19"),
        ("FOR x IN c\nFILTER x.a > 1\n", 1501, "unexpected end of query string near '' at position 3:15"),
        ("RETURN 1 RETURN 2", 1501, "unexpected RETURN declaration near 'RETURN 2' at position 1:10"),
        ("RETURN doc.filter", 1501, "unexpected FILTER declaration"),
        ("RETURN {filter: 1}", 1501, "unexpected FILTER declaration"),
        ("RETURN [1, 2", 1501, "unexpected end of query string"),
        ("RETURN (FOR x IN c)", 1501, "unexpected ) near ')' at position 1:19"),
        ("RETURN 1;", 1501, "unexpected invalid token near ';' at position 1:9"),
        ("LET x = 1, RETURN x", 1501, "unexpected RETURN declaration"),
        ("RETURN \"abc", 1501, "unexpected unterminated string literal near '\"abc' at position 1:8"),
        ("RETURN 1 /* open", 1501, "unexpected unterminated multi-line comment"),
        ("FOR x, y IN c RETURN x", 1501, "Collections and views FOR loops only allow a single return variable near 'FOR x, y IN c RETURN x' at position 1:1"),
        ("RETURN [1][? FILTER CURRENT > 0]", 1501, "question mark operator"),
        ("RETURN DISTINCT 1", 1501, "cannot use DISTINCT modifier on top-level query element"),
        ("FOR x IN c OPTIONS 1 RETURN x", 1501, "'OPTIONS' have to be an object"),
        ("FOR x IN c OPTIONS { a: x } RETURN x", 1575, "'OPTIONS' have to be known at query compile time"),
        ("FOR x IN c FOO {} RETURN x", 1501, "unexpected qualifier 'FOO', expecting 'SEARCH' or 'OPTIONS'"),
        ("INSERT {} INTO c OPTION {}", 1501, "unexpected qualifier 'OPTION', expecting 'OPTIONS'"),
        ("INSERT {} INTO @c", 1501, "unexpected bind parameter"),
        ("FOR x IN [1] SEARCH x.a == 1 RETURN x", 1501, "SEARCH condition used on non-view"),
        ("LET x = 1 LET x = 2 RETURN x", 1511, "AQL: variable 'x' is assigned multiple times (while parsing)"),
        ("LET x = 1 RETURN (FOR x IN c RETURN x)", 1511, "variable 'x' is assigned multiple times"),
        ("FOR x IN c FOR x IN d RETURN x", 1511, "variable 'x' is assigned multiple times"),
        ("RETURN { nope }", 1512, "use of unknown variable 'nope' in object literal"),
        ("RETURN ´ü and é´.x.", 1501, "unexpected end of query string"),
        ("RETURN   \n\t  (1 +)", 1501, "unexpected ) near ')' at position 2:8"),
    ];
    for (text, code, message) in cases {
        let e = parse_err(text);
        assert_eq!(e.num(), *code, "{text}: {}", e.message);
        assert_eq!(e.status, 400, "{text}");
        assert!(
            e.message.contains(message),
            "{text}:\n  got      {}\n  expected {message}",
            e.message
        );
    }
}

#[test]
fn empty_and_blank_queries() {
    let e = parse_err("");
    assert_eq!((e.num(), e.message.as_ref()), (1502, "query is empty"));
    assert_eq!(parse_err("   ").num(), 1501);
    assert_eq!(parse_err("// only a comment").num(), 1501);
}

#[test]
fn too_deep_nesting_is_an_error_not_a_crash() {
    let text = format!("RETURN {}1{}", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(parse_err(&text).num(), 1524);
    let text = format!("RETURN {}1", "-".repeat(5000));
    assert_eq!(parse_err(&text).num(), 1524);
    let text = format!("RETURN 1{}", " + 1".repeat(100_000));
    assert_eq!(parse_err(&text).num(), 1524);
    let text = format!("RETURN a{}", ".b".repeat(100_000));
    assert_eq!(parse_err(&text).num(), 1524);
    parse_ok(&format!("RETURN {}1{}", "[".repeat(40), "]".repeat(40)));
    parse_ok(&format!("RETURN 1{}", " + 1".repeat(300)));
}
