//! Bit functions over unsigned 32-bit integers: `BIT_AND`, `BIT_OR`, `BIT_XOR`,
//! `BIT_NEGATE`, `BIT_TEST`, `BIT_POPCOUNT`, `BIT_SHIFT_LEFT`, `BIT_SHIFT_RIGHT`,
//! `BIT_CONSTRUCT`, `BIT_DECONSTRUCT`, `BIT_TO_STRING`, `BIT_FROM_STRING`.
//!
//! What it is: ArangoDB's bit functions, whose domain is the integers 0..=2^32-1 so that
//! results stay exact in any client's number type.
//!
//! What it is not: AQL operators (AQL has no bitwise operators).
//!
//! Invariants: any input outside the domain (not a number, negative, fractional, too large,
//! a bit count or position out of range) answers `null` with warning 1542.

use quince_errors::Result;
use serde_json::Value;

use super::args::{arg, invalid};
use super::FunctionContext;

type Out = Result<Value>;

/// The value as an unsigned 32-bit integer, if it is one.
fn bits(value: &Value) -> Option<u64> {
    let f = value.as_f64()?;
    (f >= 0.0 && f <= f64::from(u32::MAX) && f.fract() == 0.0).then_some(f as u64)
}

/// A small count (bit position or width) within `0..=max`.
fn small(value: &Value, max: u64) -> Option<u64> {
    bits(value).filter(|n| *n <= max)
}

fn mask(width: u64) -> u64 {
    if width >= 32 {
        u64::from(u32::MAX)
    } else {
        (1u64 << width) - 1
    }
}

/// `BIT_AND`/`BIT_OR`/`BIT_XOR` of an array (nulls ignored; `null` when empty) or of two
/// numbers.
fn combine(
    ctx: &mut dyn FunctionContext,
    args: &[Value],
    name: &str,
    f: fn(u64, u64) -> u64,
) -> Out {
    let values: Vec<&Value> = match args {
        [Value::Array(items)] => items.iter().filter(|v| !v.is_null()).collect(),
        [a, b] => vec![a, b],
        _ => return invalid(ctx, name),
    };
    let mut acc: Option<u64> = None;
    for value in values {
        let Some(n) = bits(value) else {
            return invalid(ctx, name);
        };
        acc = Some(acc.map_or(n, |a| f(a, n)));
    }
    Ok(acc.map_or(Value::Null, Value::from))
}

pub fn bit_and(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    combine(ctx, args, "BIT_AND", |a, b| a & b)
}
pub fn bit_or(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    combine(ctx, args, "BIT_OR", |a, b| a | b)
}
pub fn bit_xor(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    combine(ctx, args, "BIT_XOR", |a, b| a ^ b)
}

pub fn bit_negate(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match (bits(arg(args, 0)), small(arg(args, 1), 32)) {
        (Some(n), Some(width)) => Ok(Value::from(!n & mask(width))),
        _ => invalid(ctx, "BIT_NEGATE"),
    }
}

pub fn bit_test(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match (bits(arg(args, 0)), small(arg(args, 1), 31)) {
        (Some(n), Some(index)) => Ok(Value::Bool(n & (1 << index) != 0)),
        _ => invalid(ctx, "BIT_TEST"),
    }
}

pub fn bit_popcount(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match bits(arg(args, 0)) {
        Some(n) => Ok(Value::from(n.count_ones())),
        None => invalid(ctx, "BIT_POPCOUNT"),
    }
}

pub fn bit_shift_left(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match (
        bits(arg(args, 0)),
        small(arg(args, 1), 32),
        small(arg(args, 2), 32),
    ) {
        (Some(n), Some(shift), Some(width)) => Ok(Value::from((n << shift) & mask(width))),
        _ => invalid(ctx, "BIT_SHIFT_LEFT"),
    }
}

pub fn bit_shift_right(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match (
        bits(arg(args, 0)),
        small(arg(args, 1), 32),
        small(arg(args, 2), 32),
    ) {
        (Some(n), Some(shift), Some(width)) => Ok(Value::from((n >> shift) & mask(width))),
        _ => invalid(ctx, "BIT_SHIFT_RIGHT"),
    }
}

pub fn bit_construct(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Array(positions) = arg(args, 0) else {
        return invalid(ctx, "BIT_CONSTRUCT");
    };
    let mut n = 0u64;
    for position in positions {
        let Some(p) = small(position, 31) else {
            return invalid(ctx, "BIT_CONSTRUCT");
        };
        n |= 1 << p;
    }
    Ok(Value::from(n))
}

pub fn bit_deconstruct(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match bits(arg(args, 0)) {
        Some(n) => Ok(Value::Array(
            (0..32u64)
                .filter(|i| n & (1 << i) != 0)
                .map(Value::from)
                .collect(),
        )),
        None => invalid(ctx, "BIT_DECONSTRUCT"),
    }
}

/// `BIT_TO_STRING(number, digits)`: the lowest `digits` bits (32 by default), most
/// significant first.
pub fn bit_to_string(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let width = match arg(args, 1) {
        Value::Null => Some(32),
        other => small(other, 32),
    };
    match (bits(arg(args, 0)), width) {
        (Some(n), Some(width)) => Ok(Value::String(
            (0..width)
                .rev()
                .map(|i| if n & (1 << i) != 0 { '1' } else { '0' })
                .collect(),
        )),
        _ => invalid(ctx, "BIT_TO_STRING"),
    }
}

pub fn bit_from_string(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::String(s) = arg(args, 0) else {
        return invalid(ctx, "BIT_FROM_STRING");
    };
    if s.len() > 32 || !s.bytes().all(|b| b == b'0' || b == b'1') {
        return invalid(ctx, "BIT_FROM_STRING");
    }
    Ok(Value::from(
        s.bytes().fold(0u64, |n, b| (n << 1) | u64::from(b - b'0')),
    ))
}
