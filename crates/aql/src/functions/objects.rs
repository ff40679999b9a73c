//! Document and object functions: `ATTRIBUTES`/`KEYS`, `VALUES`, `ENTRIES`, `HAS`, `KEEP`,
//! `KEEP_RECURSIVE`, `UNSET`, `UNSET_RECURSIVE`, `MERGE`, `MERGE_RECURSIVE`, `MATCHES`,
//! `TRANSLATE`, `VALUE`, `ZIP`, `PARSE_IDENTIFIER`, `PARSE_COLLECTION`, `PARSE_KEY`,
//! `IS_SAME_COLLECTION`.
//!
//! What it is: new objects built from evaluated arguments, attribute order preserved
//! (serde_json's `preserve_order`).
//!
//! What it is not: document storage: `DOCUMENT` is in `misc.rs`.
//!
//! Invariants: an argument documented as an object (or a document identifier) that is not
//! one warns 1542 and answers `null`.

use std::collections::HashSet;

use quince_errors::Result;
use serde_json::{Map, Value};

use super::args::{arg, flag, invalid};
use super::FunctionContext;
use crate::value::{equal, to_string_value};

type Out = Result<Value>;

pub fn attributes(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Object(map) = arg(args, 0) else {
        return invalid(ctx, "ATTRIBUTES");
    };
    let skip_system = flag(args, 1, false);
    let mut names: Vec<&String> = map
        .keys()
        .filter(|k| !(skip_system && k.starts_with('_')))
        .collect();
    if flag(args, 2, false) {
        names.sort();
    }
    Ok(Value::Array(
        names
            .into_iter()
            .map(|k| Value::String(k.clone()))
            .collect(),
    ))
}

pub fn values(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Object(map) = arg(args, 0) else {
        return invalid(ctx, "VALUES");
    };
    let skip_system = flag(args, 1, false);
    Ok(Value::Array(
        map.iter()
            .filter(|(k, _)| !(skip_system && k.starts_with('_')))
            .map(|(_, v)| v.clone())
            .collect(),
    ))
}

pub fn entries(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Object(map) = arg(args, 0) else {
        return invalid(ctx, "ENTRIES");
    };
    Ok(Value::Array(
        map.iter()
            .map(|(k, v)| Value::Array(vec![Value::String(k.clone()), v.clone()]))
            .collect(),
    ))
}

pub fn has(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Object(map) = arg(args, 0) else {
        return Ok(Value::Bool(false));
    };
    Ok(Value::Bool(
        map.contains_key(&to_string_value(arg(args, 1))),
    ))
}

/// The attribute names of `KEEP`/`UNSET` style calls: one array, or the rest arguments.
fn names(args: &[Value]) -> HashSet<String> {
    match &args[1..] {
        [Value::Array(items)] => items.iter().map(to_string_value).collect(),
        rest => rest.iter().map(to_string_value).collect(),
    }
}

fn keep_in(
    map: &Map<String, Value>,
    names: &HashSet<String>,
    keep: bool,
    recursive: bool,
) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| names.contains(*k) == keep)
        .map(|(k, v)| {
            let v = match v {
                Value::Object(inner) if recursive => {
                    Value::Object(keep_in(inner, names, keep, true))
                }
                other => other.clone(),
            };
            (k.clone(), v)
        })
        .collect()
}

fn keep_or_unset(
    ctx: &mut dyn FunctionContext,
    args: &[Value],
    name: &str,
    keep: bool,
    recursive: bool,
) -> Out {
    let Value::Object(map) = arg(args, 0) else {
        return invalid(ctx, name);
    };
    Ok(Value::Object(keep_in(map, &names(args), keep, recursive)))
}

pub fn keep(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    keep_or_unset(ctx, args, "KEEP", true, false)
}
pub fn keep_recursive(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    keep_or_unset(ctx, args, "KEEP_RECURSIVE", true, true)
}
pub fn unset(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    keep_or_unset(ctx, args, "UNSET", false, false)
}
pub fn unset_recursive(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    keep_or_unset(ctx, args, "UNSET_RECURSIVE", false, true)
}

fn merge_into(target: &mut Map<String, Value>, source: &Map<String, Value>, recursive: bool) {
    for (k, v) in source {
        match (target.get_mut(k), v) {
            (Some(Value::Object(existing)), Value::Object(incoming)) if recursive => {
                merge_into(existing, incoming, true)
            }
            _ => {
                target.insert(k.clone(), v.clone());
            }
        }
    }
}

fn merge_all(ctx: &mut dyn FunctionContext, args: &[Value], name: &str, recursive: bool) -> Out {
    let documents: &[Value] = match args {
        [Value::Array(items)] => items,
        _ => args,
    };
    let mut out = Map::new();
    for document in documents {
        let Value::Object(map) = document else {
            return invalid(ctx, name);
        };
        merge_into(&mut out, map, recursive);
    }
    Ok(Value::Object(out))
}

pub fn merge(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    merge_all(ctx, args, "MERGE", false)
}
pub fn merge_recursive(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    merge_all(ctx, args, "MERGE_RECURSIVE", true)
}

/// `MATCHES(document, examples, returnIndex)`: the first example whose every attribute
/// equals the document's (a `null` in the example also matches a missing attribute).
pub fn matches(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Object(document) = arg(args, 0) else {
        return invalid(ctx, "MATCHES");
    };
    let examples: Vec<&Value> = match arg(args, 1) {
        Value::Object(_) => vec![arg(args, 1)],
        Value::Array(items) if !items.is_empty() => items.iter().collect(),
        _ => return invalid(ctx, "MATCHES"),
    };
    let null = Value::Null;
    let found = examples.iter().position(|example| {
        example.as_object().is_some_and(|example| {
            example
                .iter()
                .all(|(k, v)| equal(document.get(k).unwrap_or(&null), v))
        })
    });
    if flag(args, 2, false) {
        return Ok(Value::from(found.map_or(-1, |i| i as i64)));
    }
    Ok(Value::Bool(found.is_some()))
}

pub fn translate(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::Object(lookup) = arg(args, 1) else {
        return invalid(ctx, "TRANSLATE");
    };
    let value = arg(args, 0);
    match lookup.get(&to_string_value(value)) {
        Some(found) => Ok(found.clone()),
        None if args.len() > 2 => Ok(arg(args, 2).clone()),
        None => Ok(value.clone()),
    }
}

/// `VALUE(document, path)`: follows strings as attribute names and numbers as array
/// positions (negative from the end); `null` where the path leads nowhere.
pub fn value(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (Value::Object(_), Value::Array(path)) = (arg(args, 0), arg(args, 1)) else {
        return invalid(ctx, "VALUE");
    };
    let mut current = arg(args, 0);
    for step in path {
        let next = match (current, step) {
            (Value::Object(map), Value::String(name)) => map.get(name),
            (Value::Array(items), Value::Number(n)) => {
                let i = n.as_f64().unwrap_or(0.0) as i64;
                let i = if i < 0 { items.len() as i64 + i } else { i };
                usize::try_from(i).ok().and_then(|i| items.get(i))
            }
            (_, Value::String(_) | Value::Number(_)) => None,
            _ => return invalid(ctx, "VALUE"),
        };
        match next {
            Some(v) => current = v,
            None => return Ok(Value::Null),
        }
    }
    Ok(current.clone())
}

pub fn zip(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (Value::Array(keys), Value::Array(values)) = (arg(args, 0), arg(args, 1)) else {
        return invalid(ctx, "ZIP");
    };
    if keys.len() != values.len() {
        return invalid(ctx, "ZIP");
    }
    let mut out = Map::new();
    for (k, v) in keys.iter().zip(values) {
        let key = to_string_value(k);
        if !out.contains_key(&key) {
            out.insert(key, v.clone());
        }
    }
    Ok(Value::Object(out))
}

/// The `_id` a document identifier argument stands for: a string, or an object's `_id`.
fn identifier(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s),
        Value::Object(map) => map.get("_id").and_then(Value::as_str),
        _ => None,
    }
}

fn parse(value: &Value) -> Option<(&str, &str)> {
    identifier(value)?.split_once('/')
}

pub fn parse_identifier(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match parse(arg(args, 0)) {
        Some((collection, key)) => Ok(serde_json::json!({ "collection": collection, "key": key })),
        None => invalid(ctx, "PARSE_IDENTIFIER"),
    }
}

pub fn parse_collection(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match parse(arg(args, 0)) {
        Some((collection, _)) => Ok(Value::String(collection.to_string())),
        None => invalid(ctx, "PARSE_COLLECTION"),
    }
}

pub fn parse_key(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match parse(arg(args, 0)) {
        Some((_, key)) => Ok(Value::String(key.to_string())),
        None => invalid(ctx, "PARSE_KEY"),
    }
}

pub fn is_same_collection(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(id) = identifier(arg(args, 1)) else {
        return invalid(ctx, "IS_SAME_COLLECTION");
    };
    let collection = to_string_value(arg(args, 0));
    Ok(Value::Bool(
        id.split_once('/').is_some_and(|(c, _)| c == collection),
    ))
}
