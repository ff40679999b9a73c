//! Renders an [`ArangoError`] as ArangoDB's error body.

use quince_errors::ArangoError;
use serde_json::{Map, Value};

use crate::response::ApiResponse;

/// `{"error":true,"errorNum":N,"errorMessage":"…","code":S}` (plus any extra attributes, such
/// as the current `_id`/`_key`/`_rev` of a 412), in ArangoDB's key order.
pub fn error_response(err: &ArangoError) -> ApiResponse {
    ApiResponse::json(err.status, &error_body(err))
}

/// The error body as a JSON value.
pub fn error_body(err: &ArangoError) -> Value {
    let mut body = Map::new();
    body.insert("error".into(), Value::Bool(true));
    body.insert("errorNum".into(), Value::from(err.code.num));
    body.insert(
        "errorMessage".into(),
        Value::String(err.message.to_string()),
    );
    body.insert("code".into(), Value::from(err.status));
    for (name, value) in &err.extra {
        body.insert((*name).into(), Value::String(value.clone()));
    }
    Value::Object(body)
}

/// The inline error object of one failed item of a multi-document request (no `code`).
pub fn item_error(err: &ArangoError) -> Value {
    let mut body = Map::new();
    body.insert("error".into(), Value::Bool(true));
    body.insert("errorNum".into(), Value::from(err.code.num));
    body.insert(
        "errorMessage".into(),
        Value::String(err.message.to_string()),
    );
    Value::Object(body)
}
