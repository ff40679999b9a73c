//! Vector and decay functions: `COSINE_SIMILARITY`, `L1_DISTANCE`, `L2_DISTANCE`,
//! `DECAY_GAUSS`, `DECAY_EXP`, `DECAY_LINEAR`.
//!
//! What it is: exact computations over arrays of numbers; a 2D first argument (an array of
//! vectors) gives an array of results, one per row.
//!
//! What it is not: the index-accelerated `APPROX_NEAR_*` functions of vector search.
//!
//! Invariants: vectors of different lengths, empty vectors or non-numbers warn 1542 and
//! answer `null`; decay parameters outside their domain (scale ≤ 0, offset < 0, decay not
//! in (0, 1)) do too.

use quince_errors::Result;
use serde_json::Value;

use super::args::{arg, invalid};
use super::FunctionContext;
use crate::value::number;

type Out = Result<Value>;

fn vector(value: &Value) -> Option<Vec<f64>> {
    let items = value.as_array()?;
    if items.is_empty() {
        return None;
    }
    items.iter().map(Value::as_f64).collect()
}

/// Applies a metric to `(x, y)`, or to each row of a 2D `x` against `y`.
fn metric(
    ctx: &mut dyn FunctionContext,
    args: &[Value],
    name: &str,
    f: fn(&[f64], &[f64]) -> Option<f64>,
) -> Out {
    let Some(y) = vector(arg(args, 1)) else {
        return invalid(ctx, name);
    };
    let x = arg(args, 0);
    let one = |row: &Value| {
        vector(row)
            .filter(|r| r.len() == y.len())
            .and_then(|r| f(&r, &y))
    };
    if let Some(rows) = x
        .as_array()
        .filter(|rows| rows.first().is_some_and(Value::is_array))
    {
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            match one(row) {
                Some(v) => out.push(number(v)),
                None => return invalid(ctx, name),
            }
        }
        return Ok(Value::Array(out));
    }
    match one(x) {
        Some(v) => Ok(number(v)),
        None => invalid(ctx, name),
    }
}

pub fn cosine_similarity(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    metric(ctx, args, "COSINE_SIMILARITY", |x, y| {
        let dot: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
        let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
        let denominator = norm(x) * norm(y);
        (denominator != 0.0).then(|| dot / denominator)
    })
}

pub fn l1_distance(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    metric(ctx, args, "L1_DISTANCE", |x, y| {
        Some(x.iter().zip(y).map(|(a, b)| (a - b).abs()).sum())
    })
}

pub fn l2_distance(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    metric(ctx, args, "L2_DISTANCE", |x, y| {
        Some(
            x.iter()
                .zip(y)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt(),
        )
    })
}

/// The shape of a decay function.
#[derive(Clone, Copy)]
enum Decay {
    Gauss,
    Exp,
    Linear,
}

fn decay(ctx: &mut dyn FunctionContext, args: &[Value], name: &str, shape: Decay) -> Out {
    let params: Option<Vec<f64>> = args[1..].iter().map(Value::as_f64).collect();
    let Some([origin, scale, offset, decay]) =
        params.as_deref().and_then(|p| <[f64; 4]>::try_from(p).ok())
    else {
        return invalid(ctx, name);
    };
    if scale <= 0.0 || offset < 0.0 || !(decay > 0.0 && decay < 1.0) {
        return invalid(ctx, name);
    }
    let score = |x: f64| {
        let distance = ((x - origin).abs() - offset).max(0.0);
        match shape {
            Decay::Gauss => {
                let sigma2 = -(scale * scale) / (2.0 * decay.ln());
                (-(distance * distance) / (2.0 * sigma2)).exp()
            }
            Decay::Exp => (decay.ln() / scale * distance).exp(),
            Decay::Linear => {
                let s = scale / (1.0 - decay);
                ((s - distance) / s).max(0.0)
            }
        }
    };
    match arg(args, 0) {
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let Some(x) = item.as_f64() else {
                    return invalid(ctx, name);
                };
                out.push(number(score(x)));
            }
            Ok(Value::Array(out))
        }
        Value::Number(n) => Ok(number(score(n.as_f64().unwrap_or(0.0)))),
        _ => invalid(ctx, name),
    }
}

pub fn decay_gauss(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    decay(ctx, args, "DECAY_GAUSS", Decay::Gauss)
}
pub fn decay_exp(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    decay(ctx, args, "DECAY_EXP", Decay::Exp)
}
pub fn decay_linear(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    decay(ctx, args, "DECAY_LINEAR", Decay::Linear)
}
