//! Miscellaneous functions: the database (`DOCUMENT`, `COLLECTIONS`, `COLLECTION_COUNT`,
//! `CURRENT_DATABASE`, `CURRENT_USER`, `CHECK_DOCUMENT`, `DECODE_REV`, `SHARD_ID`), control
//! (`FAIL`, `ASSERT`, `WARN`, `SLEEP`, `NOOPT`, `NOEVAL`, `PASSTHRU`, `V8`, `MIN_MATCH`,
//! `IN_RANGE`), dynamic calls (`APPLY`, `CALL`), `VERSION`, `MINHASH_COUNT`,
//! `MINHASH_ERROR`.
//!
//! What it is: the functions that reach the query's context through [`FunctionContext`].
//!
//! What it is not: `LENGTH(collection)` (the executor counts a collection variable itself).
//!
//! Invariants: `FAIL` and `ASSERT` fail the query (1569, 1593); `SLEEP` polls
//! [`FunctionContext::check_alive`] at least every 10 ms, so a killed query stops sleeping.

use std::cmp::Ordering;
use std::time::{Duration, Instant};

use quince_errors::{
    ArangoError, Result, QUERY_DISALLOWED_DYNAMIC_CALL, QUERY_FAIL_CALLED,
    QUERY_FUNCTION_ARGUMENT_NUMBER_MISMATCH, QUERY_FUNCTION_NAME_UNKNOWN, QUERY_FUNCTION_NOT_FOUND,
    QUERY_USER_ASSERT, QUERY_USER_WARN,
};
use quince_model::order::compare_values;
use quince_model::rev::RevisionId;
use serde_json::{json, Value};

use super::args::{arg, flag, invalid, num};
use super::dates_format::iso_string;
use super::{lookup, FunctionContext};
use crate::value::{to_string_value, truthy, Warning};

type Out = Result<Value>;

/// The version `VERSION()` reports: the ArangoDB version Quince's API follows.
pub const VERSION: &str = "3.12.4";

/// Reads one document by collection and key; `None` when either does not exist (or the key
/// is no key). Any other error, a collection the caller may not read among them, fails the
/// query, as in ArangoDB.
fn read(ctx: &dyn FunctionContext, collection: &str, key: &str) -> Result<Option<Value>> {
    let found = ctx
        .database()
        .collection(collection)
        .and_then(|c| c.read(key));
    match found {
        Ok(stored) => Ok(serde_json::from_slice(&stored.json).ok()),
        Err(e)
            if e.is(quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND)
                || e.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND)
                || e.is(quince_errors::ARANGO_DOCUMENT_KEY_BAD)
                || e.is(quince_errors::ARANGO_DOCUMENT_HANDLE_BAD)
                || e.is(quince_errors::BAD_PARAMETER) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Resolves a key or identifier against an optional collection name.
fn read_id(ctx: &dyn FunctionContext, collection: Option<&str>, id: &str) -> Result<Option<Value>> {
    match (id.split_once('/'), collection) {
        (Some((c, key)), Some(wanted)) if c == wanted => read(ctx, c, key),
        (Some(_), Some(_)) => Ok(None),
        (Some((c, key)), None) => read(ctx, c, key),
        (None, Some(c)) => read(ctx, c, id),
        (None, None) => Ok(None),
    }
}

/// The identifier an element of `DOCUMENT`'s argument names: a string, or an object's `_id`.
fn identifier(item: &Value) -> Option<&str> {
    match item {
        Value::String(id) => Some(id),
        Value::Object(map) => map.get("_id").and_then(Value::as_str),
        _ => None,
    }
}

/// `DOCUMENT(id)`, `DOCUMENT(ids)`, `DOCUMENT(collection, key or id)`,
/// `DOCUMENT(collection, keys or ids)`: a missing document is `null`, or left out of an
/// array result.
pub fn document(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (collection, ids) = match args {
        [ids] => (None, ids),
        [Value::String(c), ids] => (Some(c.as_str()), ids),
        _ => return invalid(ctx, "DOCUMENT"),
    };
    let context: &dyn FunctionContext = ctx;
    match ids {
        Value::String(_) | Value::Object(_) => Ok(match identifier(ids) {
            Some(id) => read_id(context, collection, id)?.unwrap_or(Value::Null),
            None => Value::Null,
        }),
        Value::Array(items) => {
            let mut found = Vec::new();
            for id in items.iter().filter_map(identifier) {
                context.check_alive()?;
                if let Some(document) = read_id(context, collection, id)? {
                    found.push(document);
                }
            }
            Ok(Value::Array(found))
        }
        _ => Ok(Value::Null),
    }
}

pub fn collections(ctx: &mut dyn FunctionContext, _: &[Value]) -> Out {
    Ok(Value::Array(
        ctx.database()
            .collections()
            .iter()
            .map(|c| json!({ "_id": c.id().to_string(), "name": c.name() }))
            .collect(),
    ))
}

pub fn collection_count(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::String(name) = arg(args, 0) else {
        return invalid(ctx, "COLLECTION_COUNT");
    };
    Ok(Value::from(ctx.database().collection(name)?.count()))
}

pub fn current_database(ctx: &mut dyn FunctionContext, _: &[Value]) -> Out {
    Ok(Value::String(ctx.database().name().to_string()))
}

pub fn current_user(ctx: &mut dyn FunctionContext, _: &[Value]) -> Out {
    Ok(ctx
        .user()
        .map_or(Value::Null, |u| Value::String(u.to_string())))
}

pub fn version(_: &mut dyn FunctionContext, _: &[Value]) -> Out {
    Ok(Value::String(VERSION.to_string()))
}

/// `CHECK_DOCUMENT`: true for an object (a parsed object cannot hold duplicate names).
pub fn check_document(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(arg(args, 0).is_object()))
}

/// `DECODE_REV`: the time and counter a `_rev` encodes.
pub fn decode_rev(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(rev) = arg(args, 0).as_str().and_then(RevisionId::decode) else {
        return invalid(ctx, "DECODE_REV");
    };
    let date = iso_string(rev.timestamp_ms() as i64);
    Ok(json!({ "date": date, "count": rev.0 & ((1 << 20) - 1) }))
}

/// `SHARD_ID`: on a single server, the collection's own name.
pub fn shard_id(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::String(name) = arg(args, 0) else {
        return invalid(ctx, "SHARD_ID");
    };
    ctx.database().collection(name)?;
    Ok(Value::String(name.clone()))
}

pub fn fail(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let message = match arg(args, 0) {
        Value::Null => QUERY_FAIL_CALLED.message.to_string(),
        other => to_string_value(other),
    };
    Err(ArangoError::with_message(QUERY_FAIL_CALLED, message))
}

pub fn assert(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    if truthy(arg(args, 0)) {
        return Ok(Value::Bool(true));
    }
    Err(ArangoError::with_message(
        QUERY_USER_ASSERT,
        to_string_value(arg(args, 1)),
    ))
}

pub fn warn(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    if truthy(arg(args, 0)) {
        return Ok(Value::Bool(true));
    }
    ctx.warn(Warning::with_message(
        QUERY_USER_WARN,
        to_string_value(arg(args, 1)),
    ));
    Ok(Value::Bool(false))
}

/// How often `SLEEP` checks whether the query was killed.
const SLEEP_POLL: Duration = Duration::from_millis(10);

pub fn sleep(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let seconds = match arg(args, 0) {
        Value::Number(n) => n.as_f64().unwrap_or(-1.0),
        _ => return invalid(ctx, "SLEEP"),
    };
    if !(seconds >= 0.0 && seconds.is_finite()) {
        return invalid(ctx, "SLEEP");
    }
    let deadline = Instant::now() + Duration::from_secs_f64(seconds.min(1e9));
    loop {
        ctx.check_alive()?;
        let now = Instant::now();
        if now >= deadline {
            return Ok(Value::Null);
        }
        std::thread::sleep(SLEEP_POLL.min(deadline - now));
    }
}

/// `NOOPT`, `NOEVAL`, `PASSTHRU`, `V8`: the argument unchanged.
pub fn passthru(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(arg(args, 0).clone())
}

/// `IN_RANGE(value, low, high, includeLow, includeHigh)` in AQL's type order.
pub fn in_range(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let value = arg(args, 0);
    let low = compare_values(value, arg(args, 1));
    let high = compare_values(value, arg(args, 2));
    let above = low == Ordering::Greater || (flag(args, 3, true) && low == Ordering::Equal);
    let below = high == Ordering::Less || (flag(args, 4, true) && high == Ordering::Equal);
    Ok(Value::Bool(above && below))
}

/// `MIN_MATCH(expr1, ..., exprN, minMatchCount)`.
pub fn min_match(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some((count, conditions)) = args.split_last() else {
        return Ok(Value::Bool(false));
    };
    let needed = num(count).max(0.0);
    let matched = conditions.iter().filter(|c| truthy(c)).count() as f64;
    Ok(Value::Bool(matched >= needed))
}

pub fn minhash_count(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let error = match arg(args, 0) {
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        _ => return invalid(ctx, "MINHASH_COUNT"),
    };
    if !(error > 0.0 && error < 1.0) {
        return invalid(ctx, "MINHASH_COUNT");
    }
    Ok(Value::from((1.0 / (error * error)).ceil() as u64))
}

pub fn minhash_error(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let count = match arg(args, 0) {
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        _ => return invalid(ctx, "MINHASH_ERROR"),
    };
    if count < 1.0 {
        return invalid(ctx, "MINHASH_ERROR");
    }
    Ok(crate::value::number(1.0 / count.sqrt()))
}

/// Calls a built-in function by name with the given arguments, checking its arity.
fn dynamic_call(ctx: &mut dyn FunctionContext, name: &Value, args: &[Value]) -> Out {
    let Value::String(name) = name else {
        return invalid(ctx, "CALL");
    };
    let upper = name.to_uppercase();
    if upper.contains("::") {
        return Err(ArangoError::with_message(
            QUERY_FUNCTION_NOT_FOUND,
            format!("user function '{name}()' not found"),
        ));
    }
    if matches!(upper.as_str(), "CALL" | "APPLY") {
        return Err(ArangoError::with_message(
            QUERY_DISALLOWED_DYNAMIC_CALL,
            format!("disallowed dynamic call to '{upper}'"),
        ));
    }
    let Some(function) = lookup(&upper) else {
        return Err(ArangoError::with_message(
            QUERY_FUNCTION_NAME_UNKNOWN,
            format!("usage of unknown function '{upper}()'"),
        ));
    };
    if args.len() < function.min_args || args.len() > function.max_args {
        return Err(ArangoError::with_message(
            QUERY_FUNCTION_ARGUMENT_NUMBER_MISMATCH,
            format!(
                "invalid number of arguments for function '{upper}()', expected number of arguments: minimum: {}, maximum: {}",
                function.min_args, function.max_args
            ),
        ));
    }
    (function.call)(ctx, args)
}

pub fn apply(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let rest = match arg(args, 1) {
        Value::Null => Vec::new(),
        Value::Array(items) => items.clone(),
        _ => return invalid(ctx, "APPLY"),
    };
    dynamic_call(ctx, arg(args, 0), &rest)
}

pub fn call(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    dynamic_call(ctx, arg(args, 0), &args[1..])
}
