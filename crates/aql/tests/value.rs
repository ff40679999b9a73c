//! AQL's operators and casts: arithmetic with `TO_NUMBER` casts, comparison in type order,
//! `IN`, `LIKE`, regex matching, unary operators, quantified comparisons, the canonical
//! number and its text, and equality-consistent hashing.

use proptest::prelude::*;
use quince_aql::ast::{BinaryOp, UnaryOp};
use quince_aql::value::{
    binary, equal, format_number, hash_key, number, quantified, to_number, to_string_value, truthy,
    unary, Quantifier, Warning,
};
use serde_json::{json, Value};

fn eval(op: BinaryOp, a: Value, b: Value) -> (Value, Vec<u32>) {
    let mut warnings = Vec::new();
    let result = binary(op, &a, &b, &mut |w: Warning| warnings.push(w.code));
    (result, warnings)
}

fn ok(op: BinaryOp, a: Value, b: Value) -> Value {
    let (result, warnings) = eval(op, a.clone(), b.clone());
    assert!(warnings.is_empty(), "{a} {op:?} {b} warned {warnings:?}");
    result
}

#[test]
fn arithmetic_casts_its_operands_like_to_number() {
    use BinaryOp::*;
    let rows = [
        (Add, json!(1), json!(1), json!(2)),
        (Add, json!(1), json!("a"), json!(1)),
        (Add, json!(1), json!("99"), json!(100)),
        (Add, json!(1), json!(null), json!(1)),
        (Add, json!(null), json!(1), json!(1)),
        (Add, json!(3), json!([]), json!(3)),
        (Add, json!(24), json!([2]), json!(26)),
        (Add, json!(24), json!([2, 4]), json!(24)),
        (Sub, json!(25), json!(null), json!(25)),
        (Sub, json!(17), json!(true), json!(16)),
        (Mul, json!(23), json!({}), json!(0)),
        (Mul, json!(5), json!([7]), json!(35)),
        (Div, json!(24), json!("12"), json!(2)),
        (Div, json!(1), json!(4), json!(0.25)),
        (Mod, json!(23), json!(7), json!(2)),
        (Mod, json!(-5), json!(3), json!(-2)),
        (Mod, json!(5.5), json!(2), json!(1.5)),
        (Mul, json!(12.4), json!(4.5), json!(55.800000000000004)),
        (Add, json!(0.1), json!(0.2), json!(0.30000000000000004)),
    ];
    for (op, a, b, expected) in rows {
        let result = ok(op, a.clone(), b.clone());
        assert_eq!(result, expected, "{a} {op:?} {b}");
    }
    assert!(
        ok(Add, json!(1), json!(1)).is_i64(),
        "1 + 1 is the integer 2"
    );
    assert!(
        ok(Mul, json!(1.5), json!(2)).is_i64(),
        "integral results are integers"
    );
}

#[test]
fn division_and_modulo_by_zero_are_null_with_a_warning() {
    assert_eq!(
        eval(BinaryOp::Div, json!(1), json!(0)),
        (json!(null), vec![1562])
    );
    assert_eq!(
        eval(BinaryOp::Mod, json!(1), json!(0)),
        (json!(null), vec![1562])
    );
    assert_eq!(
        eval(BinaryOp::Div, json!(1), json!("x")),
        (json!(null), vec![1562])
    );
    assert_eq!(
        eval(BinaryOp::Mul, json!(1e308), json!(10)),
        (json!(null), vec![])
    );
}

#[test]
fn comparisons_use_the_type_order_without_casts() {
    use BinaryOp::*;
    let rows = [
        (Eq, json!(0), json!(null), false),
        (Gt, json!(1), json!(0), true),
        (Ne, json!(true), json!(null), true),
        (Le, json!(45), json!("yikes!"), true),
        (Ne, json!(65), json!("65"), true),
        (Eq, json!(65), json!(65), true),
        (Gt, json!(1.23), json!(1.32), false),
        (Eq, json!(null), json!(false), false),
        (Lt, json!(null), json!(false), true),
        (Lt, json!(true), json!(0), true),
        (Lt, json!(99), json!(""), true),
        (Lt, json!("z"), json!([]), true),
        (Lt, json!([]), json!({}), true),
        (Eq, json!([1, 2]), json!([1, 2]), true),
        (Lt, json!([1, 2]), json!([1, 3]), true),
        (Eq, json!([1]), json!([1, null]), true),
        (Eq, json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1}), true),
        (Eq, json!({"a": null}), json!({}), true),
        (Eq, json!(1), json!(1.0), true),
        (Eq, json!("abc"), json!("abc"), true),
        (Eq, json!("abc"), json!("ABC"), false),
        (Lt, json!("A"), json!("a"), true),
        (Lt, json!("a"), json!("B"), true),
        (Ge, json!("b"), json!("B"), true),
        (In, json!(1.5), json!([2, 3, 1.5]), true),
        (In, json!("foo"), json!(null), false),
        (In, json!("foo"), json!("foo"), false),
        (NotIn, json!(42), json!([17, 40, 50]), true),
        (NotIn, json!(17), json!([17, 40, 50]), false),
        (In, json!([1]), json!([[1], 2]), true),
    ];
    for (op, a, b, expected) in rows {
        assert_eq!(
            ok(op, a.clone(), b.clone()),
            json!(expected),
            "{a} {op:?} {b}"
        );
    }
}

#[test]
fn like_and_regex_operators() {
    use BinaryOp::*;
    let rows = [
        (Like, json!("foo"), json!("f%"), json!(true)),
        (NotLike, json!("foo"), json!("f%"), json!(false)),
        (Like, json!("abc"), json!("a%"), json!(true)),
        (Like, json!("abc"), json!("_bc"), json!(true)),
        (Like, json!("a_b_foo"), json!("a\\_b\\_foo"), json!(true)),
        (Like, json!("ABC"), json!("a%"), json!(false)),
        (Like, json!("line\nbreak"), json!("line%"), json!(true)),
        (Like, json!(123), json!("1%"), json!(true)),
        (RegexMatch, json!("foo"), json!("^f[o].$"), json!(true)),
        (
            RegexNotMatch,
            json!("foo"),
            json!("[a-z]+bar$"),
            json!(true),
        ),
        (RegexMatch, json!("Foo"), json!("^f"), json!(false)),
    ];
    for (op, a, b, expected) in rows {
        assert_eq!(ok(op, a.clone(), b.clone()), expected, "{a} {op:?} {b}");
    }
    assert_eq!(
        eval(RegexMatch, json!("a"), json!("(")),
        (json!(null), vec![1543])
    );
    assert_eq!(
        eval(RegexNotMatch, json!("a"), json!("[")),
        (json!(null), vec![1543])
    );
    assert_eq!(
        eval(RegexMatch, json!("aa"), json!("(a)\\1")),
        (json!(null), vec![1543])
    );
}

#[test]
fn logical_operators_are_left_to_the_executor() {
    assert_eq!(ok(BinaryOp::And, json!(true), json!(23)), json!(null));
    assert_eq!(ok(BinaryOp::Or, json!(1), json!(7)), json!(null));
}

#[test]
fn unary_operators() {
    assert_eq!(unary(UnaryOp::Not, &json!(0)), json!(true));
    assert_eq!(unary(UnaryOp::Not, &json!([])), json!(false));
    assert_eq!(unary(UnaryOp::Not, &json!("")), json!(true));
    assert_eq!(unary(UnaryOp::Plus, &json!("5")), json!(5));
    assert_eq!(unary(UnaryOp::Plus, &json!([8])), json!(8));
    assert_eq!(unary(UnaryOp::Plus, &json!([8, 9])), json!(0));
    assert_eq!(unary(UnaryOp::Plus, &json!({})), json!(0));
    assert_eq!(unary(UnaryOp::Minus, &json!("5")), json!(-5));
    assert_eq!(unary(UnaryOp::Minus, &json!([8])), json!(-8));
    assert_eq!(unary(UnaryOp::Minus, &json!(0)), json!(0));
    assert!(
        unary(UnaryOp::Minus, &json!(0)).is_i64(),
        "-0 is the integer 0"
    );
}

fn q(quantifier: Quantifier, op: BinaryOp, lhs: Value, rhs: Value) -> Value {
    quantified(quantifier, op, &lhs, &rhs, &mut |w| panic!("warned {w:?}"))
}

#[test]
fn quantified_comparisons() {
    use BinaryOp::*;
    use Quantifier::*;
    let rows = [
        (All, In, json!([1, 2, 3]), json!([2, 3, 4]), false),
        (All, In, json!([1, 2, 3]), json!([1, 2, 3]), true),
        (None, In, json!([1, 2, 3]), json!([3]), false),
        (None, In, json!([1, 2, 3]), json!([23, 42]), true),
        (Any, In, json!([1, 2, 3]), json!([4, 5, 6]), false),
        (Any, In, json!([1, 2, 3]), json!([1, 42]), true),
        (Any, Eq, json!([1, 2, 3]), json!(2), true),
        (Any, Eq, json!([1, 2, 3]), json!(4), false),
        (Any, Gt, json!([1, 2, 3]), json!(0), true),
        (Any, Le, json!([1, 2, 3]), json!(1), true),
        (None, Lt, json!([1, 2, 3]), json!(99), false),
        (None, Gt, json!([1, 2, 3]), json!(10), true),
        (All, Gt, json!([1, 2, 3]), json!(2), false),
        (All, Gt, json!([1, 2, 3]), json!(0), true),
        (All, Ge, json!([1, 2, 3]), json!(3), false),
        (All, Ne, json!(["foo", "bar"]), json!("moo"), true),
        (None, Eq, json!(["foo", "bar"]), json!("bar"), false),
        (Any, Eq, json!(["foo", "bar"]), json!("foo"), true),
        (AtLeast(2), In, json!([1, 2, 3]), json!([2, 3, 4]), true),
        (AtLeast(2), Eq, json!(["foo", "bar"]), json!("foo"), false),
        (AtLeast(0), Eq, json!([1]), json!(2), true),
        // Empty arrays.
        (All, Eq, json!([]), json!(1), true),
        (Any, Eq, json!([]), json!(1), false),
        (None, Eq, json!([]), json!(1), true),
        (AtLeast(1), Eq, json!([]), json!(1), false),
        (AtLeast(0), Eq, json!([]), json!(1), true),
        // Not an array.
        (All, Eq, json!(1), json!(1), false),
        (None, Eq, json!(null), json!(1), false),
    ];
    for (quantifier, op, lhs, rhs, expected) in rows {
        assert_eq!(
            q(quantifier, op, lhs.clone(), rhs.clone()),
            json!(expected),
            "{lhs} {quantifier:?} {op:?} {rhs}"
        );
    }
}

#[test]
fn casts() {
    for (value, expected) in [
        (json!(null), false),
        (json!(false), false),
        (json!(0), false),
        (json!(0.0), false),
        (json!(""), false),
        (json!(" "), true),
        (json!(-1), true),
        (json!([]), true),
        (json!({}), true),
    ] {
        assert_eq!(truthy(&value), expected, "{value}");
    }
    for (value, expected) in [
        (json!(" 12 "), 12.0),
        ("\t-3.5e1\n".into(), -35.0),
        (json!(".5"), 0.5),
        (json!("1e"), 0.0),
        (json!("12abc"), 0.0),
        (json!("inf"), 0.0),
        (json!("NaN"), 0.0),
        (json!(""), 0.0),
        (json!([[["7"]]]), 7.0),
    ] {
        assert_eq!(to_number(&value), expected, "{value}");
    }
    assert_eq!(
        to_string_value(&json!([1.0, 2.5, "x", null])),
        "[1,2.5,\"x\",null]"
    );
    assert_eq!(to_string_value(&json!(1.0)), "1");
    assert_eq!(to_string_value(&json!(-0.0)), "0");
}

#[test]
fn the_canonical_number() {
    assert_eq!(number(f64::NAN), json!(null));
    assert_eq!(number(f64::INFINITY), json!(null));
    assert_eq!(number(f64::NEG_INFINITY), json!(null));
    assert_eq!(number(2.0), json!(2));
    assert!(number(2.0).is_i64());
    assert!(number(-0.0).is_i64());
    assert!(number(9_007_199_254_740_992.0).is_i64());
    assert!(
        number(18_014_398_509_481_984.0).is_f64(),
        "beyond 2^53 stays a double"
    );
    assert_eq!(number(0.5), json!(0.5));
}

#[test]
fn numbers_print_as_javascript_does() {
    for (value, text) in [
        (0.0000002, "2e-7"),
        (1.23, "1.23"),
        (-1.23, "-1.23"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456.789, "123456.789"),
        (0.000001, "0.000001"),
        (1.5e-7, "1.5e-7"),
        (2.0, "2"),
        (-0.0, "0"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
    ] {
        assert_eq!(format_number(value), text);
    }
}

#[test]
fn equal_values_hash_equally() {
    let groups = [
        vec![json!(1), json!(1.0)],
        vec![json!([1]), json!([1, null]), json!([1.0, null, null])],
        vec![
            json!({"a": 1, "b": null}),
            json!({"a": 1.0}),
            json!({"a": 1}),
        ],
        vec![json!("1")],
        vec![json!(null)],
        vec![json!(false)],
        vec![json!("")],
        vec![json!([])],
        vec![json!({})],
        vec![json!(["a", "b"])],
        vec![json!(["ab"])],
    ];
    for (i, group) in groups.iter().enumerate() {
        for a in group {
            for b in group {
                assert!(equal(a, b), "{a} == {b}");
                assert_eq!(hash_key(a), hash_key(b), "{a} and {b}");
            }
        }
        for (j, other) in groups.iter().enumerate() {
            if i != j {
                assert!(!equal(&group[0], &other[0]));
                assert_ne!(
                    hash_key(&group[0]),
                    hash_key(&other[0]),
                    "{} vs {}",
                    group[0],
                    other[0]
                );
            }
        }
    }
}

fn small_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..3).prop_map(Value::from),
        (-3i64..3).prop_map(|n| json!(n as f64 + 0.5)),
        "[aAb]{0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[ab]", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn hash_keys_agree_with_equality(a in small_value(), b in small_value()) {
        prop_assert_eq!(equal(&a, &b), hash_key(&a) == hash_key(&b), "{} vs {}", a, b);
    }

    #[test]
    fn formatted_numbers_read_back(x in any::<f64>().prop_filter("finite", |x| x.is_finite())) {
        prop_assert_eq!(format_number(x).parse::<f64>().unwrap(), x);
    }
}
