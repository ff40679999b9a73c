//! Helpers for the parser tests: short constructors of syntax trees, span stripping (so
//! expected trees need no positions), and a printer of expressions as fully parenthesized
//! AQL for round-trip tests.

#![allow(dead_code)]

use quince_aql::ast::*;
use quince_aql::syntax;
use serde_json::{json, Value};

/// Parses `text` and strips spans; panics with the error if it does not parse.
pub fn parse_ok(text: &str) -> Query {
    match syntax::parse(text) {
        Ok(q) => strip_query(q),
        Err(e) => panic!("{text:?} did not parse: {e:?}"),
    }
}

/// The error `text` fails with; panics if it parses.
pub fn parse_err(text: &str) -> quince_errors::ArangoError {
    match syntax::parse(text) {
        Ok(q) => panic!("{text:?} parsed: {q:?}"),
        Err(e) => e,
    }
}

/// The value of `RETURN <expr>` (spans stripped).
pub fn expr_of(expr: &str) -> Expr {
    let mut q = parse_ok(&format!("RETURN {expr}"));
    match q.operations.pop().map(|o| o.kind) {
        Some(OperationKind::Return { value, .. }) => value,
        other => panic!("{other:?}"),
    }
}

/// The operation kinds of a parsed query.
pub fn kinds(text: &str) -> Vec<OperationKind> {
    parse_ok(text)
        .operations
        .into_iter()
        .map(|o| o.kind)
        .collect()
}

pub fn strip_query(q: Query) -> Query {
    Query {
        with: q.with,
        operations: q
            .operations
            .into_iter()
            .map(|o| Operation {
                span: Span::default(),
                kind: strip_kind(o.kind),
            })
            .collect(),
    }
}

fn strip_opt(e: Option<Expr>) -> Option<Expr> {
    e.map(strip)
}

fn strip_pairs(list: Vec<(String, Expr)>) -> Vec<(String, Expr)> {
    list.into_iter().map(|(n, e)| (n, strip(e))).collect()
}

fn strip_kind(k: OperationKind) -> OperationKind {
    use OperationKind as K;
    match k {
        K::For {
            variable,
            source,
            options,
        } => K::For {
            variable,
            source: strip(source),
            options: strip_opt(options),
        },
        K::Let { variable, value } => K::Let {
            variable,
            value: strip(value),
        },
        K::Filter(e) => K::Filter(strip(e)),
        K::Search { condition, options } => K::Search {
            condition: strip(condition),
            options: strip_opt(options),
        },
        K::Sort(keys) => K::Sort(
            keys.into_iter()
                .map(|k| SortKey {
                    value: strip(k.value),
                    ascending: k.ascending,
                })
                .collect(),
        ),
        K::Limit { offset, count } => K::Limit {
            offset: strip_opt(offset),
            count: strip(count),
        },
        K::Collect(c) => K::Collect(Collect {
            groups: strip_pairs(c.groups),
            aggregates: strip_pairs(c.aggregates),
            into: c.into.map(|i| CollectInto {
                variable: i.variable,
                value: strip_opt(i.value),
            }),
            keep: c.keep,
            count_into: c.count_into,
            options: strip_opt(c.options),
        }),
        K::Window(w) => K::Window(Window {
            range_value: strip_opt(w.range_value),
            bounds: strip(w.bounds),
            aggregates: strip_pairs(w.aggregates),
        }),
        K::Return { distinct, value } => K::Return {
            distinct,
            value: strip(value),
        },
        K::Modify(m) => {
            let kind = match m.kind {
                ModifyKind::Insert { document } => ModifyKind::Insert {
                    document: strip(document),
                },
                ModifyKind::Update { key, document } => ModifyKind::Update {
                    key: strip_opt(key),
                    document: strip(document),
                },
                ModifyKind::Replace { key, document } => ModifyKind::Replace {
                    key: strip_opt(key),
                    document: strip(document),
                },
                ModifyKind::Remove { key } => ModifyKind::Remove { key: strip(key) },
                ModifyKind::Upsert {
                    search,
                    insert,
                    update,
                    replace,
                } => ModifyKind::Upsert {
                    search: match search {
                        UpsertSearch::Example(e) => UpsertSearch::Example(strip(e)),
                        UpsertSearch::Filter(e) => UpsertSearch::Filter(strip(e)),
                    },
                    insert: strip(insert),
                    update: strip(update),
                    replace,
                },
            };
            K::Modify(Modify {
                kind,
                collection: m.collection,
                options: strip_opt(m.options),
            })
        }
        K::Traversal(mut t) => {
            t.depth = strip_opt(t.depth);
            t.start = strip(t.start);
            t.graph = strip_graph(t.graph);
            t.prune = t.prune.map(|p| Prune {
                variable: p.variable,
                condition: strip(p.condition),
            });
            t.options = strip_opt(t.options);
            K::Traversal(t)
        }
        K::PathSearch(mut s) => {
            s.depth = strip_opt(s.depth);
            s.source = strip(s.source);
            s.target = strip(s.target);
            s.graph = strip_graph(s.graph);
            s.options = strip_opt(s.options);
            K::PathSearch(s)
        }
    }
}

fn strip_graph(g: GraphRef) -> GraphRef {
    match g {
        GraphRef::Named(e) => GraphRef::Named(strip(e)),
        other => other,
    }
}

/// `e` with every call's span reset.
pub fn strip(e: Expr) -> Expr {
    let b = |e: Box<Expr>| Box::new(strip(*e));
    match e {
        Expr::Array(items) => Expr::Array(items.into_iter().map(strip).collect()),
        Expr::Object(entries) => Expr::Object(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let k = match k {
                        ObjectKey::Computed(k) => ObjectKey::Computed(strip(k)),
                        other => other,
                    };
                    (k, strip(v))
                })
                .collect(),
        ),
        Expr::Attribute(base, name) => Expr::Attribute(b(base), name),
        Expr::Index(base, index) => Expr::Index(b(base), b(index)),
        Expr::Expansion(x) => Expr::Expansion(Box::new(Expansion {
            base: strip(x.base),
            depth: x.depth,
            filter: strip_opt(x.filter),
            limit: x.limit.map(|(o, c)| (strip_opt(o), strip(c))),
            projection: strip_opt(x.projection),
        })),
        Expr::Unary(op, e) => Expr::Unary(op, b(e)),
        Expr::Binary(op, l, r) => Expr::Binary(op, b(l), b(r)),
        Expr::Quantified {
            quantifier,
            op,
            lhs,
            rhs,
        } => Expr::Quantified {
            quantifier: match quantifier {
                Quantifier::AtLeast(n) => Quantifier::AtLeast(b(n)),
                q => q,
            },
            op,
            lhs: b(lhs),
            rhs: b(rhs),
        },
        Expr::Ternary {
            condition,
            then,
            otherwise,
        } => Expr::Ternary {
            condition: b(condition),
            then: then.map(b),
            otherwise: b(otherwise),
        },
        Expr::Range(l, r) => Expr::Range(b(l), b(r)),
        Expr::Call { name, args, .. } => Expr::Call {
            name,
            args: args.into_iter().map(strip).collect(),
            span: Span::default(),
        },
        Expr::Subquery(q) => Expr::Subquery(Box::new(strip_query(*q))),
        other => other,
    }
}

// ---- constructors -----------------------------------------------------------------------

pub fn lit(v: Value) -> Expr {
    Expr::Literal(v)
}
pub fn int(i: i64) -> Expr {
    Expr::Literal(json!(i))
}
pub fn s(text: &str) -> Expr {
    Expr::Literal(json!(text))
}
pub fn name(n: &str) -> Expr {
    Expr::Name(n.into())
}
pub fn bind(n: &str) -> Expr {
    Expr::Bind(n.into())
}
pub fn attr(base: Expr, n: &str) -> Expr {
    Expr::Attribute(Box::new(base), n.into())
}
pub fn index(base: Expr, i: Expr) -> Expr {
    Expr::Index(Box::new(base), Box::new(i))
}
pub fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::Binary(op, Box::new(l), Box::new(r))
}
pub fn un(op: UnaryOp, e: Expr) -> Expr {
    Expr::Unary(op, Box::new(e))
}
pub fn call(n: &str, args: Vec<Expr>) -> Expr {
    Expr::Call {
        name: n.into(),
        args,
        span: Span::default(),
    }
}
pub fn obj(entries: Vec<(&str, Expr)>) -> Expr {
    Expr::Object(
        entries
            .into_iter()
            .map(|(k, v)| (ObjectKey::Static(k.into()), v))
            .collect(),
    )
}
pub fn quant(quantifier: Quantifier, op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::Quantified {
        quantifier,
        op,
        lhs: Box::new(l),
        rhs: Box::new(r),
    }
}
pub fn expansion(
    base: Expr,
    depth: u32,
    filter: Option<Expr>,
    limit: Option<(Option<Expr>, Expr)>,
    projection: Option<Expr>,
) -> Expr {
    Expr::Expansion(Box::new(Expansion {
        base,
        depth,
        filter,
        limit,
        projection,
    }))
}

// ---- printing ---------------------------------------------------------------------------

/// `e` as AQL with every compound expression in parentheses.
pub fn print(e: &Expr) -> String {
    match e {
        Expr::Literal(v) => v.to_string(),
        Expr::Array(items) => format!(
            "[{}]",
            items.iter().map(print).collect::<Vec<_>>().join(", ")
        ),
        Expr::Object(entries) => {
            let parts: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        ObjectKey::Static(n) => Value::from(n.as_str()).to_string(),
                        ObjectKey::Computed(k) => format!("[{}]", print(k)),
                        ObjectKey::Bind(n) => format!("@{n}"),
                    };
                    format!("{key}: {}", print(v))
                })
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Expr::Name(n) => format!("`{n}`"),
        Expr::Bind(n) => format!("@{n}"),
        Expr::BindCollection(n) => format!("@@{n}"),
        Expr::Current => "CURRENT".into(),
        Expr::Attribute(base, n) => format!("({}).`{n}`", print(base)),
        Expr::Index(base, i) => format!("({})[{}]", print(base), print(i)),
        Expr::Expansion(_) => unreachable!("the generator makes no expansions"),
        Expr::Unary(op, e) => {
            let op = match op {
                UnaryOp::Not => "NOT ",
                UnaryOp::Minus => "-",
                UnaryOp::Plus => "+",
            };
            format!("({op}{})", print(e))
        }
        Expr::Binary(op, l, r) => format!("({} {} {})", print(l), op_text(*op), print(r)),
        Expr::Quantified {
            quantifier,
            op,
            lhs,
            rhs,
        } => {
            let q = match quantifier {
                Quantifier::All => "ALL".to_string(),
                Quantifier::Any => "ANY".to_string(),
                Quantifier::None => "NONE".to_string(),
                Quantifier::AtLeast(n) => format!("AT LEAST ({})", print(n)),
            };
            format!("({} {q} {} {})", print(lhs), op_text(*op), print(rhs))
        }
        Expr::Ternary {
            condition,
            then: Some(t),
            otherwise,
        } => {
            format!(
                "({} ? {} : {})",
                print(condition),
                print(t),
                print(otherwise)
            )
        }
        Expr::Ternary {
            condition,
            then: None,
            otherwise,
        } => {
            format!("({} ?: {})", print(condition), print(otherwise))
        }
        Expr::Range(l, r) => format!("({}..{})", print(l), print(r)),
        Expr::Call { name, args, .. } => {
            format!(
                "{name}({})",
                args.iter().map(print).collect::<Vec<_>>().join(", ")
            )
        }
        Expr::Subquery(_) => unreachable!("the generator makes no subqueries"),
    }
}

pub fn op_text(op: BinaryOp) -> &'static str {
    op.token()
}
