//! Round trip: random expression trees, printed as fully parenthesized AQL, parse back to
//! the same tree. Covers every operator, quantifiers, ternaries, ranges, calls, member
//! access, literals with escapes and bind parameters.

use crate::common;

use common::*;
use proptest::prelude::*;
use quince_aql::ast::*;
use serde_json::json;

const NAMES: &[&str] = &[
    "a", "doc", "_key", "x1", "Value", "count", "filter", "my-coll",
];
const OPS: &[BinaryOp] = &[
    BinaryOp::Or,
    BinaryOp::And,
    BinaryOp::Eq,
    BinaryOp::Ne,
    BinaryOp::Lt,
    BinaryOp::Le,
    BinaryOp::Gt,
    BinaryOp::Ge,
    BinaryOp::In,
    BinaryOp::NotIn,
    BinaryOp::Like,
    BinaryOp::NotLike,
    BinaryOp::RegexMatch,
    BinaryOp::RegexNotMatch,
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Mod,
];
const COMPARISONS: &[BinaryOp] = &[
    BinaryOp::Eq,
    BinaryOp::Ne,
    BinaryOp::Lt,
    BinaryOp::Le,
    BinaryOp::Gt,
    BinaryOp::Ge,
    BinaryOp::In,
    BinaryOp::NotIn,
];

/// AQL's reserved keywords (3.12), which cannot name a function.
const RESERVED: &[&str] = &[
    "FOR",
    "RETURN",
    "FILTER",
    "SEARCH",
    "SORT",
    "LIMIT",
    "LET",
    "COLLECT",
    "WINDOW",
    "INSERT",
    "UPDATE",
    "REPLACE",
    "REMOVE",
    "UPSERT",
    "WITH",
    "AGGREGATE",
    "ALL",
    "ALL_SHORTEST_PATHS",
    "AND",
    "ANY",
    "ASC",
    "DESC",
    "DISTINCT",
    "FALSE",
    "GRAPH",
    "IN",
    "INBOUND",
    "INTO",
    "K_PATHS",
    "K_SHORTEST_PATHS",
    "LIKE",
    "NONE",
    "NOT",
    "NULL",
    "OR",
    "OUTBOUND",
    "SHORTEST_PATH",
    "TRUE",
];

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        any::<i64>().prop_map(int),
        (0.0f64..1e12).prop_map(|f| lit(json!(f))),
        "[a-z \"'\\\\\n\t]{0,8}".prop_map(|t| s(&t)),
        Just(lit(json!(null))),
        any::<bool>().prop_map(|b| lit(json!(b))),
        prop::sample::select(NAMES).prop_map(name),
        "[a-z][a-z0-9_]{0,5}".prop_map(|n| bind(&n)),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(5, 48, 4, |inner| {
        let not_a_number = inner
            .clone()
            .prop_filter("a sign before a number literal folds", |e| {
                !matches!(e, Expr::Literal(serde_json::Value::Number(_)))
            });
        prop_oneof![
            (prop::sample::select(OPS), inner.clone(), inner.clone())
                .prop_map(|(op, l, r)| bin(op, l, r)),
            (
                prop::sample::select(&[UnaryOp::Not, UnaryOp::Minus, UnaryOp::Plus][..]),
                not_a_number
            )
                .prop_map(|(op, e)| un(op, e)),
            (inner.clone(), prop::sample::select(NAMES)).prop_map(|(b, n)| attr(b, n)),
            (inner.clone(), inner.clone()).prop_map(|(b, i)| index(b, i)),
            prop::collection::vec(inner.clone(), 0..3).prop_map(Expr::Array),
            prop::collection::vec(("[a-z]{1,4}", inner.clone()), 0..3).prop_map(|entries| {
                Expr::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (ObjectKey::Static(k), v))
                        .collect(),
                )
            }),
            (
                "[A-Z]{1,6}(::[A-Z]{1,4})?".prop_filter("a keyword is no function name", |n| {
                    !n.split("::").any(|part| RESERVED.contains(&part))
                }),
                prop::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(|(n, args)| call(&n, args)),
            (
                inner.clone(),
                inner.clone(),
                prop::option::of(inner.clone())
            )
                .prop_map(|(c, o, t)| {
                    Expr::Ternary {
                        condition: Box::new(c),
                        then: t.map(Box::new),
                        otherwise: Box::new(o),
                    }
                }),
            (inner.clone(), inner.clone()).prop_map(|(l, r)| Expr::Range(Box::new(l), Box::new(r))),
            (
                0..4u8,
                prop::sample::select(COMPARISONS),
                inner.clone(),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(q, op, l, r, n)| {
                    let quantifier = match q {
                        0 => Quantifier::All,
                        1 => Quantifier::Any,
                        2 => Quantifier::None,
                        _ => Quantifier::AtLeast(Box::new(n)),
                    };
                    quant(quantifier, op, l, r)
                }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn printed_expressions_parse_back_to_the_same_tree(e in expr()) {
        let text = print(&e);
        prop_assert_eq!(expr_of(&text), e, "{}", text);
    }
}
