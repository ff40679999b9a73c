//! The casts of AQL: to boolean, to number, to string, and the canonical number.
//!
//! What it is: `TO_BOOL`, `TO_NUMBER` and `TO_STRING` as ArangoDB defines them, which are
//! also the implicit casts of the logical and arithmetic operators, and [`number`], the one
//! way a computed `f64` becomes a value.
//!
//! What it is not: comparison (AQL never casts to compare) nor JSON parsing.
//!
//! Invariants: [`to_number`] is total and finite (invalid input is 0); [`number`] never
//! produces NaN or an infinity (they become `null`), and gives integers for integral values
//! within ±2^53, so `1 + 1` is `2`, not `2.0`.

use serde_json::Value;

use super::format::{format_number, to_json_text};

/// The largest integer every `f64` up to which represents exactly: 2^53.
const EXACT_INTEGER_MAX: f64 = 9_007_199_254_740_992.0;

/// AQL's cast to boolean: `null`, `false`, `0` and `""` are false; every other value
/// (arrays and objects included, even empty ones) is true.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `TO_NUMBER`: `null` and `false` are 0, `true` is 1, a number is itself, a string is the
/// number it spells (whitespace around it allowed) or 0, an array of one element is that
/// element's number, any other array and every object is 0.
pub fn to_number(value: &Value) -> f64 {
    match value {
        Value::Null | Value::Bool(false) => 0.0,
        Value::Bool(true) => 1.0,
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()).unwrap_or(0.0),
        Value::String(s) => parse_number(s).unwrap_or(0.0),
        Value::Array(items) if items.len() == 1 => to_number(&items[0]),
        Value::Array(_) | Value::Object(_) => 0.0,
    }
}

/// The cast the arithmetic operators apply to their operands: the same as [`to_number`]
/// (ArangoDB documents them as one).
pub fn arithmetic_operand(value: &Value) -> f64 {
    to_number(value)
}

/// Parses a string that spells a decimal number (sign, digits, fraction, exponent), with
/// whitespace around it; `None` for anything else, infinities and NaN included.
pub(crate) fn parse_number(text: &str) -> Option<f64> {
    let trimmed =
        text.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'));
    if trimmed.is_empty() {
        return Some(0.0);
    }
    let spelled = trimmed
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    if !spelled || !trimmed.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    trimmed.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// `TO_STRING`: `null` is `""`, booleans and numbers are spelled as AQL prints them, a
/// string is itself, arrays and objects are their JSON text without whitespace.
pub fn to_string_value(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => format_number(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => to_json_text(value),
    }
}

/// The canonical AQL number for a computed `f64`: `null` for NaN and the infinities (AQL has
/// neither), a JSON integer for integral values within ±2^53 (negative zero is 0), a float
/// otherwise.
pub fn number(value: f64) -> Value {
    if !value.is_finite() {
        return Value::Null;
    }
    if value.fract() == 0.0 && value.abs() <= EXACT_INTEGER_MAX {
        // Exact: integral and within the range where every integer is representable.
        return Value::from(value as i64);
    }
    Value::from(value)
}

/// `TYPENAME`: `"null"`, `"bool"`, `"number"`, `"string"`, `"array"` or `"object"`.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
