//! Type checks and casts: `TO_BOOL`, `TO_NUMBER`, `TO_STRING`, `TO_ARRAY`, `IS_*`,
//! `TYPENAME`, and the first-of functions `NOT_NULL`, `FIRST_LIST`, `FIRST_DOCUMENT`.
//!
//! What it is: thin wrappers over [`crate::value`]'s casts.
//!
//! What it is not: `IS_DATESTRING` (dates) and `IS_IPV4` (strings) live with their families.
//!
//! Invariants: none of these ever warns; every value has a cast.

use quince_errors::Result;
use serde_json::Value;

use super::args::arg;
use super::FunctionContext;
use crate::value::{number, to_number, to_string_value, truthy, type_name};

type Out = Result<Value>;

pub fn to_bool(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(truthy(arg(args, 0))))
}

pub fn to_number_fn(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(number(to_number(arg(args, 0))))
}

pub fn to_string_fn(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(to_string_value(arg(args, 0))))
}

pub fn to_array(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Array(match arg(args, 0) {
        Value::Null => Vec::new(),
        Value::Array(items) => items.clone(),
        Value::Object(map) => map.values().cloned().collect(),
        other => vec![other.clone()],
    }))
}

pub fn is_null(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(arg(args, 0).is_null()))
}

pub fn is_bool(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(arg(args, 0).is_boolean()))
}

pub fn is_number(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(arg(args, 0).is_number()))
}

pub fn is_string(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(arg(args, 0).is_string()))
}

pub fn is_array(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(arg(args, 0).is_array()))
}

pub fn is_object(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(arg(args, 0).is_object()))
}

pub fn is_key(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(
        arg(args, 0)
            .as_str()
            .is_some_and(quince_model::key::is_valid_key),
    ))
}

pub fn typename(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(type_name(arg(args, 0)).to_string()))
}

pub fn not_null(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(args
        .iter()
        .find(|v| !v.is_null())
        .cloned()
        .unwrap_or(Value::Null))
}

pub fn first_list(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(args
        .iter()
        .find(|v| v.is_array())
        .cloned()
        .unwrap_or(Value::Null))
}

pub fn first_document(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(args
        .iter()
        .find(|v| v.is_object())
        .cloned()
        .unwrap_or(Value::Null))
}
