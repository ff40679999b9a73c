//! Renders an [`ArangoError`] as ArangoDB's error body: the one place errors leave the server.
//!
//! What it is: [`error_response`] and [`error_body`] for a request's error, [`item_error`] for
//! one failed item of a multi-document request, the errors every layer of the crate shares
//! (`unknown_path`, `method_not_allowed`, `unauthorized`), and the rule that keeps server-side details in
//! the log: an error the server answers with a 5xx status (other than the operational ones that
//! describe the server's state: queue full, shutting down, reply limits) goes out with its code's
//! generic message and an incident id, and its own message (which may name files and paths)
//! goes to the log with that id.
//!
//! What it is not: deciding statuses (the codes' defaults and the handlers do that). It sits at
//! the bottom of the crate and imports nothing but the reply type, so any module may use it.
//! `needs_javascript` is the one answer of every feature that would need a JavaScript engine.
//!
//! Invariants: every error body has `error`, `errorNum`, `errorMessage` and `code` (items have no
//! `code`), in ArangoDB's order; no file path or operating-system message reaches a client in a
//! 5xx reply.

use std::borrow::Cow;

use quince_errors::{
    ArangoError, CLUSTER_INSUFFICIENT_DBSERVERS, FORBIDDEN, HTTP_METHOD_NOT_ALLOWED,
    HTTP_NOT_FOUND, NOT_IMPLEMENTED, QUEUE_FULL, QUEUE_TIME_REQUIREMENT_VIOLATED, RESOURCE_LIMIT,
    SHUTTING_DOWN,
};
use serde_json::{Map, Value};

use crate::response::ApiResponse;

/// 404 for a path no route knows: errorNum 404, `unknown path '<path>'`.
pub(crate) fn unknown_path(path: &str) -> ArangoError {
    ArangoError::with_message(HTTP_NOT_FOUND, format!("unknown path '{path}'"))
}

/// 405 for a known path and a method it does not take.
pub(crate) fn method_not_allowed() -> ArangoError {
    ArangoError::new(HTTP_METHOD_NOT_ALLOWED)
}

/// 403/36 ("disabled") for a feature that needs JavaScript, which Quince does not have: the
/// answer arangod gives when its JavaScript is switched off (`--javascript.enabled false`).
/// `what` names the feature (`user-defined AQL functions`, `server tasks`).
pub(crate) fn needs_javascript(what: &str) -> ArangoError {
    ArangoError::with_message(
        quince_errors::DISABLED,
        format!("{what} need JavaScript, which Quince does not have"),
    )
}

/// The 401 of a request without valid credentials.
pub(crate) fn unauthorized() -> ArangoError {
    ArangoError::with_message(FORBIDDEN, "not authorized to execute this request").with_status(401)
}

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
        Value::String(public_message(err).into_owned()),
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
        Value::String(public_message(err).into_owned()),
    );
    Value::Object(body)
}

/// The message a client sees: the error's own, or, for a server-side failure, the code's
/// generic message with an incident id (the error itself is logged with that id).
fn public_message(err: &ArangoError) -> Cow<'_, str> {
    if !is_internal(err) {
        return Cow::Borrowed(&err.message);
    }
    let incident = format!("{:016x}", rand::random::<u64>());
    tracing::error!(
        event = "api.internal_error",
        %incident,
        error_num = err.code.num,
        status = err.status,
        message = %err.message,
        "answered with a generic message; the cause is here"
    );
    Cow::Owned(format!(
        "{} (incident {incident}; the server log has the cause)",
        err.code.message
    ))
}

/// True for errors whose message may hold server-side detail: a 5xx that is not one of the
/// operational answers about the server's state.
fn is_internal(err: &ArangoError) -> bool {
    err.status >= 500
        && ![
            QUEUE_FULL,
            SHUTTING_DOWN,
            RESOURCE_LIMIT,
            QUEUE_TIME_REQUIREMENT_VIOLATED,
            NOT_IMPLEMENTED,
            CLUSTER_INSUFFICIENT_DBSERVERS,
        ]
        .iter()
        .any(|code| err.is(*code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quince_errors::{ARANGO_CONFLICT, ARANGO_IO_ERROR};

    #[test]
    fn server_side_details_stay_in_the_log() {
        let err = ArangoError::with_message(
            ARANGO_IO_ERROR,
            "I/O error on /srv/data/databases/database-1/collection-7/journal-3.db: EIO",
        );
        let body = error_body(&err);
        let message = body["errorMessage"].as_str().unwrap();
        assert!(
            !message.contains("/srv") && !message.contains("EIO"),
            "{message}"
        );
        assert!(message.contains("incident"), "{message}");
        assert_eq!(
            (body["errorNum"].clone(), body["code"].clone()),
            (1305.into(), 500.into())
        );
        let item = item_error(&err);
        assert!(!item["errorMessage"].as_str().unwrap().contains("/srv"));
    }

    #[test]
    fn client_errors_and_operational_answers_keep_their_message() {
        let conflict =
            ArangoError::with_message(ARANGO_CONFLICT, "conflict, _rev values do not match");
        assert_eq!(
            error_body(&conflict)["errorMessage"],
            "conflict, _rev values do not match"
        );
        let full = ArangoError::new(QUEUE_FULL);
        assert_eq!(error_body(&full)["errorMessage"], "queue is full");
    }
}
