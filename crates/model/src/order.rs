//! AQL's type and value order: how any two JSON values compare, for `SORT`, the comparison
//! operators and the order of secondary indexes.
//!
//! What it is: [`compare_values`], a total order over JSON values: first by type (null <
//! boolean < number < string < array < object), then by value: false < true, numbers
//! numerically, strings by [`compare_strings`], arrays element by element (a missing element
//! is null), objects by their sorted attribute names, attribute by attribute.
//!
//! What it is not: AQL's equality of `==` on its own: that is `compare_values(..) == Equal`.
//!
//! Invariants: the order is total and consistent (antisymmetric, transitive), and the same
//! everywhere it is used, so an index scan returns documents in the order `SORT` would.

use std::cmp::Ordering;

use serde_json::Value;

/// The rank of a value's type in AQL's type order.
pub fn type_rank(value: &Value) -> u8 {
    match value {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

/// Compares two values in AQL's type and value order.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    let (ra, rb) = (type_rank(a), type_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y),
        (Value::String(x), Value::String(y)) => compare_strings(x, y),
        (Value::Array(x), Value::Array(y)) => {
            let null = Value::Null;
            for i in 0..x.len().max(y.len()) {
                let order = compare_values(x.get(i).unwrap_or(&null), y.get(i).unwrap_or(&null));
                if order != Ordering::Equal {
                    return order;
                }
            }
            Ordering::Equal
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut names: Vec<&String> = x.keys().chain(y.keys()).collect();
            names.sort();
            names.dedup();
            let null = Value::Null;
            for name in names {
                let order =
                    compare_values(x.get(name).unwrap_or(&null), y.get(name).unwrap_or(&null));
                if order != Ordering::Equal {
                    return order;
                }
            }
            Ordering::Equal
        }
        _ => Ordering::Equal,
    }
}

/// Compares two numbers by value (integers exactly, otherwise as doubles).
pub fn compare_numbers(a: &serde_json::Number, b: &serde_json::Number) -> Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x.cmp(&y);
    }
    let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

/// Compares two strings (by their UTF-8 bytes for now; see the module doc).
pub fn compare_strings(a: &str, b: &str) -> Ordering {
    a.cmp(b)
}
