//! Array functions: access (`FIRST`, `LAST`, `NTH`, `POSITION`), building (`APPEND`,
//! `PUSH`, `UNSHIFT`, `POP`, `SHIFT`, `SLICE`, `REMOVE_*`, `REPLACE_NTH`, `FLATTEN`,
//! `INTERLEAVE`), ordering (`SORTED`, `SORTED_UNIQUE`, `UNIQUE`) and `COUNT_DISTINCT`.
//!
//! What it is: new arrays built from evaluated arguments; equality and order are AQL's
//! ([`crate::value::equal`], [`crate::value::hash_key`], `compare_values`).
//!
//! What it is not: the set functions (`sets.rs`), `LENGTH` (`strings.rs`, it takes every
//! type) or `REVERSE` (`strings.rs`, it takes strings too).
//!
//! Invariants: an argument documented as an array that is not one warns 1542 and answers
//! `null`, except that `PUSH`, `APPEND` and `UNSHIFT` treat a `null` array as empty; the
//! padding `REPLACE_NTH` adds is admitted against the query's memory limits before it is
//! built; `FLATTEN` and `INTERLEAVE` check the query every `STEPS_PER_CHECK` elements.

use std::collections::HashSet;

use quince_errors::{ArangoError, Result, QUERY_FUNCTION_ARGUMENT_TYPE_MISMATCH};
use quince_model::order::compare_values;
use serde_json::Value;

use super::args::{admit_elements, arg, flag, int, invalid, Steps, GROWTH_MAX};
use super::FunctionContext;
use crate::value::{equal, hash_key};

type Out = Result<Value>;

pub fn first(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match arg(args, 0) {
        Value::Array(items) => Ok(items.first().cloned().unwrap_or(Value::Null)),
        _ => invalid(ctx, "FIRST"),
    }
}

pub fn last(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match arg(args, 0) {
        Value::Array(items) => Ok(items.last().cloned().unwrap_or(Value::Null)),
        _ => invalid(ctx, "LAST"),
    }
}

pub fn nth(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Array(items) = arg(args, 0) else {
        return invalid(ctx, "NTH");
    };
    let position = int(arg(args, 1));
    Ok(usize::try_from(position)
        .ok()
        .and_then(|p| items.get(p))
        .cloned()
        .unwrap_or(Value::Null))
}

/// `POSITION`/`CONTAINS_ARRAY`: whether `search` is an element, or its index (-1).
pub fn position(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Array(items) = arg(args, 0) else {
        return invalid(ctx, "POSITION");
    };
    let found = items.iter().position(|item| equal(item, arg(args, 1)));
    if flag(args, 2, false) {
        return Ok(Value::from(found.map_or(-1, |i| i as i64)));
    }
    Ok(Value::Bool(found.is_some()))
}

/// The array argument, with `null` read as empty; `None` for other types.
fn array_or_empty(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::Array(items) => Some(items.clone()),
        _ => None,
    }
}

pub fn append(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(mut out) = array_or_empty(arg(args, 0)) else {
        return invalid(ctx, "APPEND");
    };
    let values = match arg(args, 1) {
        Value::Null => Vec::new(),
        Value::Array(items) => items.clone(),
        other => vec![other.clone()],
    };
    if flag(args, 2, false) {
        let mut seen: HashSet<String> = out.iter().map(hash_key).collect();
        let mut unique: Vec<Value> = Vec::with_capacity(out.len());
        let mut kept = HashSet::new();
        for item in out.drain(..) {
            if kept.insert(hash_key(&item)) {
                unique.push(item);
            }
        }
        out = unique;
        for value in values {
            if seen.insert(hash_key(&value)) {
                out.push(value);
            }
        }
    } else {
        out.extend(values);
    }
    Ok(Value::Array(out))
}

pub fn push(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(mut out) = array_or_empty(arg(args, 0)) else {
        return invalid(ctx, "PUSH");
    };
    let value = arg(args, 1);
    if !(flag(args, 2, false) && out.iter().any(|item| equal(item, value))) {
        out.push(value.clone());
    }
    Ok(Value::Array(out))
}

pub fn unshift(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(mut out) = array_or_empty(arg(args, 0)) else {
        return invalid(ctx, "UNSHIFT");
    };
    let value = arg(args, 1);
    if !(flag(args, 2, false) && out.iter().any(|item| equal(item, value))) {
        out.insert(0, value.clone());
    }
    Ok(Value::Array(out))
}

pub fn pop(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Array(items) => Ok(Value::Array(
            items[..items.len().saturating_sub(1)].to_vec(),
        )),
        _ => invalid(ctx, "POP"),
    }
}

pub fn shift(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match arg(args, 0) {
        Value::Null => Ok(Value::Null),
        Value::Array(items) => Ok(Value::Array(items.iter().skip(1).cloned().collect())),
        _ => invalid(ctx, "SHIFT"),
    }
}

/// A position counted from the end when negative, clamped into `0..=len`.
fn resolve(position: i64, len: usize) -> usize {
    let len = len as i64;
    (if position < 0 {
        len + position
    } else {
        position
    })
    .clamp(0, len) as usize
}

/// `SLICE(array, start, length)`: a negative `length` is an end position from the end
/// (exclusive).
pub fn slice(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Array(items) = arg(args, 0) else {
        return invalid(ctx, "SLICE");
    };
    let start = resolve(int(arg(args, 1)), items.len());
    let end = match arg(args, 2) {
        Value::Null => items.len(),
        other => {
            let length = int(other);
            if length < 0 {
                resolve(length, items.len())
            } else {
                start.saturating_add(length as usize).min(items.len())
            }
        }
    };
    Ok(Value::Array(if start < end {
        items[start..end].to_vec()
    } else {
        Vec::new()
    }))
}

pub fn remove_nth(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Array(items) = arg(args, 0) else {
        return invalid(ctx, "REMOVE_NTH");
    };
    let mut out = items.clone();
    let position = int(arg(args, 1));
    let len = items.len() as i64;
    let index = if position < 0 {
        len + position
    } else {
        position
    };
    if (0..len).contains(&index) {
        out.remove(index as usize);
    }
    Ok(Value::Array(out))
}

/// `REPLACE_NTH(array, position, value, padding)`: beyond the end the array is padded with
/// `padding`; without one that fails the query (1542), as ArangoDB does. Padding that
/// would add more than [`GROWTH_MAX`] values (each copy of `padding` counting every value
/// nested in it) answers `null` with warning 1542.
pub fn replace_nth(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(mut out) = array_or_empty(arg(args, 0)) else {
        return invalid(ctx, "REPLACE_NTH");
    };
    let len = out.len() as i64;
    let mut position = int(arg(args, 1));
    if position < 0 {
        position = (len + position).max(0);
    }
    let value = arg(args, 2).clone();
    if position < len {
        out[position as usize] = value;
    } else {
        if position > len && args.len() < 4 {
            return Err(ArangoError::with_message(
                QUERY_FUNCTION_ARGUMENT_TYPE_MISMATCH,
                "invalid argument type in call to function 'REPLACE_NTH()'",
            ));
        }
        let copies = position - len;
        if copies > GROWTH_MAX || copies.saturating_mul(weight(arg(args, 3))) > GROWTH_MAX {
            return invalid(ctx, "REPLACE_NTH");
        }
        admit_elements(ctx, copies as u64 + 1)?;
        let mut steps = Steps::default();
        while (out.len() as i64) < position {
            steps.step(ctx)?;
            out.push(arg(args, 3).clone());
        }
        out.push(value);
    }
    Ok(Value::Array(out))
}

/// The values in `value`, itself included, counted up to just past [`GROWTH_MAX`].
fn weight(value: &Value) -> i64 {
    let mut count = 0i64;
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        count += 1;
        if count > GROWTH_MAX {
            break;
        }
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    count
}

pub fn remove_value(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Array(items) = arg(args, 0) else {
        return invalid(ctx, "REMOVE_VALUE");
    };
    let mut remaining = match arg(args, 2) {
        Value::Null => usize::MAX,
        other => int(other).max(0) as usize,
    };
    let value = arg(args, 1);
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        if remaining > 0 && equal(item, value) {
            remaining -= 1;
        } else {
            out.push(item.clone());
        }
    }
    Ok(Value::Array(out))
}

pub fn remove_values(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (Value::Array(items), Value::Array(values)) = (arg(args, 0), arg(args, 1)) else {
        return invalid(ctx, "REMOVE_VALUES");
    };
    let drop: HashSet<String> = values.iter().map(hash_key).collect();
    Ok(Value::Array(
        items
            .iter()
            .filter(|i| !drop.contains(&hash_key(i)))
            .cloned()
            .collect(),
    ))
}

fn flatten_into(
    ctx: &dyn FunctionContext,
    steps: &mut Steps,
    items: &[Value],
    depth: i64,
    out: &mut Vec<Value>,
) -> Result<()> {
    for item in items {
        steps.step(ctx)?;
        match item {
            Value::Array(inner) if depth > 0 => flatten_into(ctx, steps, inner, depth - 1, out)?,
            other => out.push(other.clone()),
        }
    }
    Ok(())
}

pub fn flatten(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Array(items) = arg(args, 0) else {
        return invalid(ctx, "FLATTEN");
    };
    let depth = match arg(args, 1) {
        Value::Null => 1,
        other => int(other),
    };
    let mut out = Vec::new();
    flatten_into(ctx, &mut Steps::default(), items, depth, &mut out)?;
    Ok(Value::Array(out))
}

pub fn interleave(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let mut arrays = Vec::with_capacity(args.len());
    for value in args {
        let Value::Array(items) = value else {
            return invalid(ctx, "INTERLEAVE");
        };
        arrays.push(items);
    }
    let longest = arrays.iter().map(|a| a.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    let mut steps = Steps::default();
    for i in 0..longest {
        steps.step(ctx)?;
        out.extend(arrays.iter().filter_map(|a| a.get(i)).cloned());
    }
    Ok(Value::Array(out))
}

/// The elements without duplicates (first occurrence kept), in order.
pub(crate) fn unique_values(items: &[Value]) -> Vec<Value> {
    let mut seen = HashSet::new();
    items
        .iter()
        .filter(|item| seen.insert(hash_key(item)))
        .cloned()
        .collect()
}

pub fn unique(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match arg(args, 0) {
        Value::Array(items) => Ok(Value::Array(unique_values(items))),
        _ => invalid(ctx, "UNIQUE"),
    }
}

pub fn sorted(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Array(items) = arg(args, 0) else {
        return invalid(ctx, "SORTED");
    };
    let mut out = items.clone();
    out.sort_by(compare_values);
    Ok(Value::Array(out))
}

pub fn sorted_unique(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Array(items) = arg(args, 0) else {
        return invalid(ctx, "SORTED_UNIQUE");
    };
    let mut out = items.clone();
    out.sort_by(compare_values);
    out.dedup_by(|a, b| equal(a, b));
    Ok(Value::Array(out))
}

pub fn count_distinct(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match arg(args, 0) {
        Value::Array(items) => Ok(Value::from(
            items.iter().map(hash_key).collect::<HashSet<_>>().len(),
        )),
        _ => invalid(ctx, "COUNT_DISTINCT"),
    }
}
