//! TEMPORARY stand-in for the value semantics being written on the `aql-values` branch; the
//! merge replaces this file. Only what the executor needs, with the agreed signatures.

use std::cmp::Ordering;

use quince_model::order::compare_values;
use serde_json::Value;

use crate::ast::{BinaryOp, UnaryOp};

/// A warning of a query: `{code, message}` in `extra.warnings`.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    /// The errorNum.
    pub code: u32,
    /// The text.
    pub message: String,
}

/// AQL's cast to boolean.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// The canonical AQL number.
pub fn number(f: f64) -> Value {
    if !f.is_finite() {
        return Value::Null;
    }
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        return Value::from(f as i64);
    }
    Value::from(f)
}

/// AQL's cast to number.
pub fn to_number(v: &Value) -> Option<f64> {
    Some(match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        Value::String(s) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    })
}

/// AQL equality.
pub fn equal(a: &Value, b: &Value) -> bool {
    compare_values(a, b) == Ordering::Equal
}

/// An infix operator other than AND/OR.
pub fn binary(op: BinaryOp, a: &Value, b: &Value, warn: &mut dyn FnMut(Warning)) -> Value {
    let order = || compare_values(a, b);
    let arith = |f: fn(f64, f64) -> f64| {
        number(f(to_number(a).unwrap_or(0.0), to_number(b).unwrap_or(0.0)))
    };
    match op {
        BinaryOp::Eq => Value::Bool(order() == Ordering::Equal),
        BinaryOp::Ne => Value::Bool(order() != Ordering::Equal),
        BinaryOp::Lt => Value::Bool(order() == Ordering::Less),
        BinaryOp::Le => Value::Bool(order() != Ordering::Greater),
        BinaryOp::Gt => Value::Bool(order() == Ordering::Greater),
        BinaryOp::Ge => Value::Bool(order() != Ordering::Less),
        BinaryOp::In => Value::Bool(b.as_array().is_some_and(|xs| xs.iter().any(|x| equal(a, x)))),
        BinaryOp::NotIn => {
            Value::Bool(!b.as_array().is_some_and(|xs| xs.iter().any(|x| equal(a, x))))
        }
        BinaryOp::Add => arith(|x, y| x + y),
        BinaryOp::Sub => arith(|x, y| x - y),
        BinaryOp::Mul => arith(|x, y| x * y),
        BinaryOp::Div | BinaryOp::Mod => {
            if to_number(b).unwrap_or(0.0) == 0.0 {
                warn(Warning { code: 1562, message: "division by zero".into() });
                return Value::Null;
            }
            if op == BinaryOp::Div { arith(|x, y| x / y) } else { arith(|x, y| x % y) }
        }
        _ => Value::Null,
    }
}

/// A prefix operator.
pub fn unary(op: UnaryOp, v: &Value) -> Value {
    match op {
        UnaryOp::Not => Value::Bool(!truthy(v)),
        UnaryOp::Minus => number(-to_number(v).unwrap_or(0.0)),
        UnaryOp::Plus => number(to_number(v).unwrap_or(0.0)),
    }
}

/// AQL's cast to string.
pub fn to_string_value(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
