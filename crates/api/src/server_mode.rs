//! `GET/PUT /_admin/server/mode`: the server's operation mode, `default` or `readonly`.
//!
//! What it is: the endpoint that reads and sets the mode (the flag itself,
//! `crate::state::server_mode::ServerMode`, lives with the API's state; the pipeline copies it
//! into every request's caller, so that every write check sees it).
//!
//! What it is not: persistent. Like ArangoDB's, the mode lasts until the process ends; a
//! restarted server is in `default` mode.
//!
//! Invariants: in `readonly` mode every write answers 403/1004 "read only", whoever asks
//! (user management included), except setting the mode back; only callers with `rw` on
//! `_system` may set the mode (403/11 otherwise); an unknown mode is 400/400.

use http::Method;
use quince_errors::{ArangoError, HTTP_BAD_PARAMETER};
use serde_json::{json, Value};

use crate::error::method_not_allowed;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::server_mode::ServerMode;
use crate::state::Api;

/// `GET` and `PUT /_admin/server/mode`.
pub(crate) fn handle(api: &Api, req: &ApiRequest) -> ApiResult {
    let mode = api.server_mode();
    match req.method {
        Method::GET => Ok(reply(mode)),
        Method::PUT => {
            req.require_admin()?;
            let body = req.required_json_body()?;
            let read_only = match body.get("mode").and_then(Value::as_str) {
                Some("readonly") => true,
                Some("default") => false,
                _ => {
                    return Err(ArangoError::with_message(
                        HTTP_BAD_PARAMETER,
                        "mode must be 'default' or 'readonly'",
                    ))
                }
            };
            mode.set_read_only(read_only);
            tracing::warn!(
                event = "server.mode_changed",
                mode = mode.name(),
                user = req.user.name(),
                "server operation mode changed"
            );
            Ok(reply(mode))
        }
        _ => Err(method_not_allowed()),
    }
}

fn reply(mode: &ServerMode) -> ApiResponse {
    ApiResponse::json(
        200,
        &json!({"error": false, "code": 200, "mode": mode.name()}),
    )
}
