//! Functions over arrays of values: `SUM`, `PRODUCT`, `AVERAGE`, `MEDIAN`, `PERCENTILE`,
//! `MIN`, `MAX`, `VARIANCE_*`, `STDDEV_*`.
//!
//! What it is: the aggregates `COLLECT AGGREGATE` and `WINDOW` apply to a group's values, and
//! the same functions called directly on an array.
//!
//! What it is not: streaming: each call sees the whole array.
//!
//! Invariants: `null` elements are ignored; a non-array argument, or (except for `MIN` and
//! `MAX`, which take any values in AQL's order) an element that is not a number, warns 1542
//! and answers `null`. An empty input gives `SUM` 0, `PRODUCT` 1 and `null` elsewhere.

use std::cmp::Ordering;

use quince_errors::Result;
use quince_model::order::compare_values;
use serde_json::Value;

use super::args::{arg, invalid};
use super::FunctionContext;
use crate::value::number;

type Out = Result<Value>;

/// The non-null numbers of the array argument, or `None` (the caller warns).
fn numbers(args: &[Value]) -> Option<Vec<f64>> {
    let Value::Array(items) = arg(args, 0) else {
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::Null => {}
            Value::Number(n) => out.push(n.as_f64()?),
            _ => return None,
        }
    }
    Some(out)
}

fn with_numbers(
    ctx: &mut dyn FunctionContext,
    args: &[Value],
    name: &str,
    f: impl FnOnce(&mut Vec<f64>) -> Value,
) -> Out {
    match numbers(args) {
        Some(mut values) => Ok(f(&mut values)),
        None => invalid(ctx, name),
    }
}

pub fn sum(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    with_numbers(ctx, args, "SUM", |v| number(v.iter().sum()))
}

pub fn product(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    with_numbers(ctx, args, "PRODUCT", |v| number(v.iter().product()))
}

pub fn average(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    with_numbers(ctx, args, "AVERAGE", |v| {
        if v.is_empty() {
            Value::Null
        } else {
            number(v.iter().sum::<f64>() / v.len() as f64)
        }
    })
}

fn sort(values: &mut [f64]) {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
}

pub fn median(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    with_numbers(ctx, args, "MEDIAN", |v| {
        if v.is_empty() {
            return Value::Null;
        }
        sort(v);
        let mid = v.len() / 2;
        if v.len() % 2 == 1 {
            number(v[mid])
        } else {
            number((v[mid - 1] + v[mid]) / 2.0)
        }
    })
}

/// `PERCENTILE(values, p, method)`: `"rank"` (the default) picks the element at rank
/// `ceil(p/100 * n)`; `"interpolation"` interpolates at position `p/100 * (n + 1)`.
pub fn percentile(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let p = match arg(args, 1) {
        Value::Number(n) => n.as_f64().unwrap_or(-1.0),
        _ => return invalid(ctx, "PERCENTILE"),
    };
    let interpolate = match arg(args, 2) {
        Value::Null => false,
        Value::String(s) if s == "rank" => false,
        Value::String(s) if s == "interpolation" => true,
        _ => return invalid(ctx, "PERCENTILE"),
    };
    if !(p > 0.0 && p <= 100.0) {
        return invalid(ctx, "PERCENTILE");
    }
    with_numbers(ctx, args, "PERCENTILE", |v| {
        if v.is_empty() {
            return Value::Null;
        }
        sort(v);
        let n = v.len();
        if interpolate {
            let position = p / 100.0 * (n as f64 + 1.0);
            let whole = position.floor() as usize;
            if whole == 0 {
                return number(v[0]);
            }
            if whole >= n {
                return number(v[n - 1]);
            }
            let fraction = position - whole as f64;
            number(v[whole - 1] + fraction * (v[whole] - v[whole - 1]))
        } else {
            let rank = ((p / 100.0 * n as f64).ceil() as usize).clamp(1, n);
            number(v[rank - 1])
        }
    })
}

fn extreme(ctx: &mut dyn FunctionContext, args: &[Value], name: &str, want: Ordering) -> Out {
    let Value::Array(items) = arg(args, 0) else {
        return invalid(ctx, name);
    };
    let best =
        items
            .iter()
            .filter(|v| !v.is_null())
            .fold(None, |best: Option<&Value>, v| match best {
                Some(b) if compare_values(v, b) != want => Some(b),
                _ => Some(v),
            });
    Ok(best.cloned().unwrap_or(Value::Null))
}

pub fn min(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    extreme(ctx, args, "MIN", Ordering::Less)
}

pub fn max(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    extreme(ctx, args, "MAX", Ordering::Greater)
}

/// The variance of `values` (Welford's algorithm), population or sample; `None` when there
/// are too few values.
fn variance(values: &[f64], sample: bool) -> Option<f64> {
    let (mut count, mut mean, mut m2) = (0.0, 0.0, 0.0);
    for x in values {
        count += 1.0;
        let delta = x - mean;
        mean += delta / count;
        m2 += delta * (x - mean);
    }
    let divisor = if sample { count - 1.0 } else { count };
    (divisor > 0.0).then(|| m2 / divisor)
}

fn spread(
    ctx: &mut dyn FunctionContext,
    args: &[Value],
    name: &str,
    sample: bool,
    root: bool,
) -> Out {
    with_numbers(ctx, args, name, |v| match variance(v, sample) {
        Some(var) => number(if root { var.sqrt() } else { var }),
        None => Value::Null,
    })
}

pub fn variance_population(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    spread(ctx, args, "VARIANCE_POPULATION", false, false)
}
pub fn variance_sample(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    spread(ctx, args, "VARIANCE_SAMPLE", true, false)
}
pub fn stddev_population(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    spread(ctx, args, "STDDEV_POPULATION", false, true)
}
pub fn stddev_sample(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    spread(ctx, args, "STDDEV_SAMPLE", true, true)
}
