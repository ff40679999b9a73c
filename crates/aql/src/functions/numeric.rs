//! Numeric functions of one or two numbers: rounding, trigonometry, logarithms, powers,
//! `PI`, `RAND`, `RANGE`.
//!
//! What it is: `f64` arithmetic with AQL's casts: arguments through `TO_NUMBER`, results
//! through [`crate::value::number`], so an undefined result (`LOG(0)`, `SQRT(-1)`,
//! `ACOS(2)`) is `null`.
//!
//! What it is not: the functions over arrays of numbers (`statistics.rs`), bits
//! (`bits.rs`), or vectors (`vectors.rs`).
//!
//! Invariants: never warns except `RANGE` with a zero step or a range too large to build.

use quince_errors::Result;
use rand::Rng;
use serde_json::Value;

use super::args::{arg, invalid, num};
use super::FunctionContext;
use crate::value::number;

type Out = Result<Value>;

fn unary(args: &[Value], f: impl Fn(f64) -> f64) -> Out {
    Ok(number(f(num(arg(args, 0)))))
}

pub fn abs(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::abs)
}
pub fn acos(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::acos)
}
pub fn asin(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::asin)
}
pub fn atan(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::atan)
}
pub fn atan2(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(number(num(arg(args, 0)).atan2(num(arg(args, 1)))))
}
pub fn ceil(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::ceil)
}
pub fn cos(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::cos)
}
pub fn degrees(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::to_degrees)
}
pub fn exp(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::exp)
}
pub fn exp2(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::exp2)
}
pub fn floor(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::floor)
}
pub fn log(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::ln)
}
pub fn log2(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::log2)
}
pub fn log10(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::log10)
}
pub fn pi(_: &mut dyn FunctionContext, _: &[Value]) -> Out {
    Ok(number(std::f64::consts::PI))
}
pub fn pow(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(number(num(arg(args, 0)).powf(num(arg(args, 1)))))
}
pub fn radians(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::to_radians)
}
pub fn rand(_: &mut dyn FunctionContext, _: &[Value]) -> Out {
    Ok(number(rand::thread_rng().gen::<f64>()))
}
/// `ROUND`: half-way values round up (`ROUND(-2.5)` is -2), as ArangoDB does.
pub fn round(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, |x| (x + 0.5).floor())
}
pub fn sin(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::sin)
}
pub fn sqrt(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::sqrt)
}
pub fn tan(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    unary(args, f64::tan)
}

/// The most elements `RANGE` builds.
const RANGE_ELEMENTS_MAX: f64 = 10_000_000.0;

/// `RANGE(start, stop, step)`: without a step, the bounds are truncated to integers and the
/// step is 1 or -1 towards `stop`; a step of 0 warns; a step pointing away from `stop` gives
/// an empty array.
pub fn range(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (mut start, mut stop) = (num(arg(args, 0)), num(arg(args, 1)));
    let step = match arg(args, 2) {
        Value::Null => {
            start = start.trunc();
            stop = stop.trunc();
            if start <= stop {
                1.0
            } else {
                -1.0
            }
        }
        other => num(other),
    };
    if step == 0.0 || ((stop - start) / step).abs() > RANGE_ELEMENTS_MAX {
        return invalid(ctx, "RANGE");
    }
    let mut out = Vec::new();
    if (step > 0.0 && start <= stop) || (step < 0.0 && start >= stop) {
        let count = ((stop - start) / step).floor() as u64;
        super::args::admit_elements(ctx, count + 1)?;
        // Exactly the room needed: growing by doubling would peak at 1.6 times it.
        out.reserve_exact(count as usize + 1);
        let mut steps = super::args::Steps::default();
        for i in 0..=count {
            steps.step(ctx)?;
            out.push(number(start + i as f64 * step));
        }
    }
    Ok(Value::Array(out))
}
