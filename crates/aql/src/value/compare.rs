//! Equality, membership and hashing consistent with AQL's type and value order.
//!
//! What it is: [`equal`] (`==`), [`in_array`] (`IN`), and [`hash_key`], a text key such that
//! two values have the same key exactly when they are [`equal`], for `UNIQUE`, `COLLECT`
//! groups and `RETURN DISTINCT`.
//!
//! What it is not: the order itself, which is [`quince_model::order::compare_values`].
//!
//! Invariants: `equal(a, b) == (hash_key(a) == hash_key(b))`. The order treats a missing array
//! element or object attribute as `null` (`[1] == [1, null]`, `{} == {a: null}`), numbers by
//! value (`1 == 1.0`), and strings as equal only when identical, so the key drops trailing
//! `null` elements and `null` attributes, sorts attributes, and spells numbers canonically.

use std::cmp::Ordering;

use quince_model::order::compare_values;
use serde_json::Value;

use super::format::format_number;

/// `a == b` in AQL: equal in the type and value order (no casts: `0 != "0"`, `null !=
/// false`).
pub fn equal(a: &Value, b: &Value) -> bool {
    compare_values(a, b) == Ordering::Equal
}

/// `needle IN haystack`: true when `haystack` is an array with an element equal to `needle`;
/// false for any other `haystack`.
pub fn in_array(needle: &Value, haystack: &Value) -> bool {
    match haystack {
        Value::Array(items) => items.iter().any(|item| equal(needle, item)),
        _ => false,
    }
}

/// A key equal for exactly the values [`equal`] calls equal (see the module doc).
pub fn hash_key(value: &Value) -> String {
    let mut out = String::new();
    write_key(value, &mut out);
    out
}

fn write_key(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push_str(if *b { "t" } else { "f" }),
        Value::Number(n) => {
            out.push('#');
            match (n.as_i64(), n.as_u64()) {
                // Integers beyond ±2^53 compare as doubles against doubles, but exactly
                // against each other; spelling them exactly keeps distinct integers apart.
                (Some(i), _) => out.push_str(&i.to_string()),
                (None, Some(u)) => out.push_str(&u.to_string()),
                _ => {
                    let f = n.as_f64().unwrap_or(0.0);
                    if f.fract() == 0.0 && f.abs() < 9.2e18 {
                        out.push_str(&(f as i64).to_string());
                    } else {
                        out.push_str(&format_number(f));
                    }
                }
            }
            out.push(';');
        }
        Value::String(s) => {
            out.push('"');
            out.push_str(&s.len().to_string());
            out.push(':');
            out.push_str(s);
        }
        Value::Array(items) => {
            let used = items
                .iter()
                .rposition(|item| !item.is_null())
                .map_or(0, |last| last + 1);
            out.push('[');
            for item in &items[..used] {
                write_key(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut names: Vec<&String> = map
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, _)| k)
                .collect();
            names.sort();
            out.push('{');
            for name in names {
                out.push_str(&name.len().to_string());
                out.push(':');
                out.push_str(name);
                write_key(&map[name.as_str()], out);
                out.push(',');
            }
            out.push('}');
        }
    }
}
