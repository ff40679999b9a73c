//! Set functions over arrays: `UNION`, `UNION_DISTINCT`, `INTERSECTION`, `MINUS`,
//! `OUTERSECTION`, `JACCARD`.
//!
//! What it is: set algebra with AQL's equality (through [`crate::value::hash_key`]).
//!
//! What it is not: ordered: ArangoDB documents the element order of these results as
//! undefined; Quince keeps first-occurrence order, which is one valid answer.
//!
//! Invariants: every argument must be an array (else warning 1542 and `null`); only `UNION`
//! keeps duplicates.

use std::collections::{HashMap, HashSet};

use quince_errors::Result;
use serde_json::Value;

use super::args::invalid;
use super::arrays::unique_values;
use super::FunctionContext;
use crate::value::{hash_key, number};

type Out = Result<Value>;

fn arrays(args: &[Value]) -> Option<Vec<&Vec<Value>>> {
    args.iter().map(Value::as_array).collect()
}

pub fn union(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(lists) = arrays(args) else {
        return invalid(ctx, "UNION");
    };
    Ok(Value::Array(lists.into_iter().flatten().cloned().collect()))
}

pub fn union_distinct(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(lists) = arrays(args) else {
        return invalid(ctx, "UNION_DISTINCT");
    };
    let all: Vec<Value> = lists.into_iter().flatten().cloned().collect();
    Ok(Value::Array(unique_values(&all)))
}

pub fn intersection(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(lists) = arrays(args) else {
        return invalid(ctx, "INTERSECTION");
    };
    let Some((first, rest)) = lists.split_first() else {
        return Ok(Value::Array(Vec::new()));
    };
    let others: Vec<HashSet<String>> = rest
        .iter()
        .map(|l| l.iter().map(hash_key).collect())
        .collect();
    let kept: Vec<Value> = first
        .iter()
        .filter(|item| {
            let key = hash_key(item);
            others.iter().all(|set| set.contains(&key))
        })
        .cloned()
        .collect();
    Ok(Value::Array(unique_values(&kept)))
}

pub fn minus(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(lists) = arrays(args) else {
        return invalid(ctx, "MINUS");
    };
    let Some((first, rest)) = lists.split_first() else {
        return Ok(Value::Array(Vec::new()));
    };
    let removed: HashSet<String> = rest.iter().flat_map(|l| l.iter().map(hash_key)).collect();
    let kept: Vec<Value> = first
        .iter()
        .filter(|item| !removed.contains(&hash_key(item)))
        .cloned()
        .collect();
    Ok(Value::Array(unique_values(&kept)))
}

/// `OUTERSECTION`: the values that occur exactly once across all arrays.
pub fn outersection(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(lists) = arrays(args) else {
        return invalid(ctx, "OUTERSECTION");
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for item in lists.iter().copied().flatten() {
        *counts.entry(hash_key(item)).or_default() += 1;
    }
    Ok(Value::Array(
        lists
            .into_iter()
            .flatten()
            .filter(|item| counts[&hash_key(item)] == 1)
            .cloned()
            .collect(),
    ))
}

/// `JACCARD`: |A ∩ B| / |A ∪ B| over distinct values; 1 for two empty arrays.
pub fn jaccard(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (Some(a), Some(b)) = (args[0].as_array(), args[1].as_array()) else {
        return invalid(ctx, "JACCARD");
    };
    let a: HashSet<String> = a.iter().map(hash_key).collect();
    let b: HashSet<String> = b.iter().map(hash_key).collect();
    let union = a.union(&b).count();
    if union == 0 {
        return Ok(number(1.0));
    }
    Ok(number(a.intersection(&b).count() as f64 / union as f64))
}
