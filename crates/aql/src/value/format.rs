//! How AQL spells numbers and values as text: `TO_STRING`, `CONCAT`, `JSON_STRINGIFY`.
//!
//! What it is: [`format_number`], the shortest text that reads back as the same `f64`, laid
//! out as JavaScript's `Number.prototype.toString` does (and so as ArangoDB prints doubles:
//! `0.0000002` is `"2e-7"`, `1e21` is `"1e+21"`, `2.0` is `"2"`), and [`to_json_text`],
//! compact JSON whose numbers follow the same rule.
//!
//! What it is not: the HTTP layer's JSON encoder (serde_json renders cursor results).
//!
//! Invariants: `format_number(x).parse::<f64>() == x` for every finite `x`.

use serde_json::Value;

/// Spells a finite double as AQL prints it (see the module doc). Non-finite input, which no
/// AQL value holds, prints as `"null"`.
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return "null".to_string();
    }
    if value == 0.0 {
        return "0".to_string();
    }
    // `{:e}` gives the shortest round-trip digits: "d.ddde±x".
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if value < 0.0 { "-" } else { "" };
    let k = digits.len() as i32;
    let n = exponent + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let tail = if k > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let sign = if n > 0 { "+" } else { "-" };
        format!("{}{tail}e{sign}{}", &digits[..1], (n - 1).abs())
    };
    format!("{sign}{body}")
}

/// Compact JSON text of a value, numbers spelled by [`format_number`] (integral doubles
/// without a fraction).
pub fn to_json_text(value: &Value) -> String {
    let mut out = String::new();
    write_json(value, &mut out);
    out
}

fn write_json(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(u)) => out.push_str(&u.to_string()),
            _ => out.push_str(&format_number(n.as_f64().unwrap_or(0.0))),
        },
        Value::String(s) => {
            out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string()))
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(key).unwrap_or_else(|_| "\"\"".to_string()));
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
    }
}
