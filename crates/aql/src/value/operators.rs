//! AQL's operators: arithmetic, comparison, membership, `LIKE`, regex match, unary, and the
//! quantified array comparisons.
//!
//! What it is: [`binary`] for every [`BinaryOp`] but `&&`/`||`, [`unary`], and
//! [`quantified`] (`ALL`, `ANY`, `NONE`, `AT LEAST (n)`).
//!
//! What it is not: `&&` and `||`: the executor short-circuits them and returns the deciding
//! operand (`null || "foo"` is `"foo"`), so [`binary`] answers `null` for them.
//!
//! Invariants: comparisons never cast (`0 == "0"` is false) and always answer a boolean;
//! arithmetic casts both operands with `TO_NUMBER` and answers a number or `null` (division
//! and modulo by zero warn 1562); `LIKE` and the regex operators cast both operands to
//! strings, and an invalid regex answers `null` with warning 1543.

use std::cmp::Ordering;

use quince_model::order::compare_values;
use serde_json::Value;

use super::cast::{arithmetic_operand, number, to_number, to_string_value, truthy};
use super::compare::{equal, in_array};
use super::regex_cache::with_thread_cache;
use super::warning::Warning;
use crate::ast::{BinaryOp, UnaryOp};

/// A quantifier with its count evaluated: the executor evaluates `AT LEAST (expr)` first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    /// `ALL`: every element satisfies the comparison (true for an empty array).
    All,
    /// `ANY`: at least one element does (false for an empty array).
    Any,
    /// `NONE`: no element does (true for an empty array).
    None,
    /// `AT LEAST (n)`: at least `n` elements do (true for an empty array only when `n` is 0).
    AtLeast(u64),
}

/// Applies a binary operator (see the module doc). `&&` and `||` answer `null`: the executor
/// evaluates them itself.
pub fn binary(op: BinaryOp, a: &Value, b: &Value, warn: &mut dyn FnMut(Warning)) -> Value {
    match op {
        BinaryOp::And | BinaryOp::Or => Value::Null,
        BinaryOp::Eq => Value::Bool(equal(a, b)),
        BinaryOp::Ne => Value::Bool(!equal(a, b)),
        BinaryOp::Lt => Value::Bool(compare_values(a, b) == Ordering::Less),
        BinaryOp::Le => Value::Bool(compare_values(a, b) != Ordering::Greater),
        BinaryOp::Gt => Value::Bool(compare_values(a, b) == Ordering::Greater),
        BinaryOp::Ge => Value::Bool(compare_values(a, b) != Ordering::Less),
        BinaryOp::In => Value::Bool(in_array(a, b)),
        BinaryOp::NotIn => Value::Bool(!in_array(a, b)),
        BinaryOp::Like => Value::Bool(like(a, b, false)),
        BinaryOp::NotLike => Value::Bool(!like(a, b, false)),
        BinaryOp::RegexMatch => regex_match(a, b, warn).map_or(Value::Null, Value::Bool),
        BinaryOp::RegexNotMatch => regex_match(a, b, warn).map_or(Value::Null, |m| Value::Bool(!m)),
        BinaryOp::Add => number(arithmetic_operand(a) + arithmetic_operand(b)),
        BinaryOp::Sub => number(arithmetic_operand(a) - arithmetic_operand(b)),
        BinaryOp::Mul => number(arithmetic_operand(a) * arithmetic_operand(b)),
        BinaryOp::Div | BinaryOp::Mod => {
            let (x, y) = (arithmetic_operand(a), arithmetic_operand(b));
            if y == 0.0 {
                warn(Warning::division_by_zero());
                return Value::Null;
            }
            number(if op == BinaryOp::Div { x / y } else { x % y })
        }
    }
}

/// Applies a prefix operator: `NOT` answers a boolean, `-` and `+` a number.
pub fn unary(op: UnaryOp, value: &Value) -> Value {
    match op {
        UnaryOp::Not => Value::Bool(!truthy(value)),
        UnaryOp::Minus => number(-to_number(value)),
        UnaryOp::Plus => number(to_number(value)),
    }
}

/// `lhs <quantifier> <op> rhs`: `op` between each element of the array `lhs` and `rhs`,
/// counted. A `lhs` that is not an array answers false. `op` is a comparison or `IN`/`NOT
/// IN`; other operators count an element when their result is truthy.
pub fn quantified(
    quantifier: Quantifier,
    op: BinaryOp,
    lhs: &Value,
    rhs: &Value,
    warn: &mut dyn FnMut(Warning),
) -> Value {
    let Value::Array(items) = lhs else {
        return Value::Bool(false);
    };
    let mut satisfied = 0u64;
    for item in items {
        if truthy(&binary(op, item, rhs, warn)) {
            satisfied += 1;
            // Early answers: ANY and AT LEAST are decided, NONE is refuted.
            match quantifier {
                Quantifier::Any => return Value::Bool(true),
                Quantifier::None => return Value::Bool(false),
                Quantifier::AtLeast(n) if satisfied >= n => return Value::Bool(true),
                _ => {}
            }
        } else if quantifier == Quantifier::All {
            return Value::Bool(false);
        }
    }
    Value::Bool(match quantifier {
        Quantifier::All | Quantifier::None => true,
        Quantifier::Any => false,
        Quantifier::AtLeast(n) => satisfied >= n,
    })
}

/// `text LIKE pattern`, both cast to strings.
pub(crate) fn like(text: &Value, pattern: &Value, case_insensitive: bool) -> bool {
    let (text, pattern) = (to_string_value(text), to_string_value(pattern));
    with_thread_cache(|cache| {
        cache
            .like(&pattern, case_insensitive)
            .is_some_and(|regex| regex.is_match(&text))
    })
}

/// `text =~ pattern`, both cast to strings; `None` (with a warning) for an invalid pattern.
fn regex_match(text: &Value, pattern: &Value, warn: &mut dyn FnMut(Warning)) -> Option<bool> {
    let (text, pattern) = (to_string_value(text), to_string_value(pattern));
    let result = with_thread_cache(|cache| {
        cache
            .regex(&pattern, false)
            .map(|regex| regex.is_match(&text))
    });
    if result.is_none() {
        warn(Warning::invalid_regex());
    }
    result
}
