//! `/_api/aqlfunction`: user-defined AQL functions, which ArangoDB writes in JavaScript.
//!
//! What it is: the honest answers of a server without a JavaScript engine: the list of user
//! functions is empty (`GET`), registering one is refused with 403/36 ("disabled", the error
//! of a feature switched off), and removing one finds none (404/1582).
//!
//! What it is not: a JavaScript engine.
//!
//! Invariants: nothing is stored; the answers are the same for every caller with access to
//! the database.

use http::Method;
use quince_errors::ArangoError;
use serde_json::json;

use crate::error::{method_not_allowed, needs_javascript, unknown_path};
use crate::permission::Access;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

/// Every request under `/_api/aqlfunction`.
pub(crate) async fn handle(req: ApiRequest) -> ApiResult {
    req.require_database(Access::Read)?;
    match (&req.method, req.suffix.len()) {
        (&Method::GET, 0) => Ok(ApiResponse::json(
            200,
            &json!({"result": [], "error": false, "code": 200}),
        )),
        (&Method::POST, 0) => Err(needs_javascript("user-defined AQL functions")),
        (&Method::DELETE, 1) => Err(ArangoError::with_message(
            quince_errors::QUERY_FUNCTION_NOT_FOUND,
            format!("user function '{}()' not found", req.suffix[0]),
        )),
        (_, 0 | 1) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}
