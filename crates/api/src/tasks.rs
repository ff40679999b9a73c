//! `/_api/tasks`: server tasks, which ArangoDB writes in JavaScript.
//!
//! What it is: the honest answers of a server without a JavaScript engine, sharing
//! [`needs_javascript`] with `/_api/aqlfunction`: the list is empty (`GET`), creating a task
//! (`POST`, or `PUT` with an id) is refused with 403/36 ("disabled", arangod's answer with
//! JavaScript switched off), and a task id names no task (404/1852 for `GET` and `DELETE`).
//!
//! What it is not: a scheduler.
//!
//! Invariants: nothing is stored; creating is refused only after the caller's right to write
//! to the database was checked (the router's check by method), so the refusal says nothing to
//! a caller who may not create anything.

use http::Method;
use quince_errors::{ArangoError, TASK_NOT_FOUND};
use serde_json::json;

use crate::error::{method_not_allowed, needs_javascript, unknown_path};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

/// Every request under `/_api/tasks`.
pub(crate) fn handle(req: &ApiRequest) -> ApiResult {
    match (&req.method, req.suffix.as_slice()) {
        (&Method::GET, []) => Ok(ApiResponse::json(200, &json!([]))),
        (&Method::POST, []) | (&Method::PUT, [_]) => Err(needs_javascript("server tasks")),
        (&Method::GET | &Method::DELETE, [id]) => Err(ArangoError::with_message(
            TASK_NOT_FOUND,
            format!("task '{id}' not found"),
        )),
        (_, [] | [_]) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}
