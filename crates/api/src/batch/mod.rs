//! `POST /_api/batch` (<https://docs.arangodb.com/3.12/develop/http-api/batch-requests/>): several requests in one
//! multipart body, run in order, answered as one multipart reply.
//!
//! What it is: [`handle`]: checks the method (405), reads the envelope ([`multipart`]; any
//! malformed part makes the whole batch a 400 before any part runs), runs each part through
//! the same router and handlers as a standalone request, in the outer request's database and
//! as the outer request's user, and counts the parts that failed (`x-arango-errors`).
//!
//! What it is not: a way out of the database: a `/_db/{name}/` prefix inside a part is
//! ignored, so a part always runs in the batch's own database. Parts run synchronously (an
//! `x-arango-async` header in a part has no effect) and may not be batches themselves.
//!
//! Invariants: one reply part per request part, in order, with its `Content-Id` echoed; the
//! batch's own status is 200 once the envelope is valid, whatever the parts answer; each part
//! takes its own unit of the queue bound while it runs; the multipart reply is built as parts
//! finish, within the reply budget: the part whose reply does not fit is answered 400/32 (it
//! ran) and later parts are not run (400/32, "not run"), so a batch of many reads cannot build
//! an unbounded reply.

pub(crate) mod multipart;

use bytes::BytesMut;
use http::header::{HeaderName, CONTENT_TYPE};
use http::{Extensions, Method, Uri};
use quince_errors::{ArangoError, HTTP_BAD_PARAMETER, RESOURCE_LIMIT};

use crate::error::error_response;
use crate::error::method_not_allowed;
use crate::path::parse_target;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::{Api, Routed};

/// The reply header with the number of failed parts.
const ERRORS_HEADER: &str = "x-arango-errors";

/// `POST /_api/batch`.
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    if req.method != Method::POST {
        return Err(method_not_allowed());
    }
    let boundary = multipart::boundary(req.header(CONTENT_TYPE.as_str()), &req.body)?;
    let raw_parts = multipart::split(&req.body, &boundary)?;
    let parts = raw_parts
        .iter()
        .enumerate()
        .map(|(index, raw)| multipart::parse_part(raw, index))
        .collect::<Result<Vec<_>, _>>()?;

    let mut body = BytesMut::new();
    let mut budget = req.replies.budget();
    // Set once the reply outgrew its budget: later parts are not run.
    let mut exhausted: Option<ArangoError> = None;
    let mut errors = 0usize;
    for part in parts {
        let reply = match &exhausted {
            Some(err) => error_response(&not_run(err)),
            None => run_part(api, &req, part.request).await,
        };
        if reply.status.as_u16() >= 400 {
            errors += 1;
        }
        let before = body.len();
        multipart::render_part(&mut body, &boundary, part.content_id.as_deref(), &reply);
        if exhausted.is_none() {
            if let Err(err) = budget.grow(body.len()) {
                // This part ran, but its reply does not fit: say so in its place.
                body.truncate(before);
                let replaced = error_response(&ArangoError::with_message(
                    RESOURCE_LIMIT,
                    format!("this part ran, but its reply does not fit: {}", err.message),
                ));
                multipart::render_part(&mut body, &boundary, part.content_id.as_deref(), &replaced);
                if reply.status.as_u16() < 400 {
                    errors += 1;
                }
                exhausted = Some(err);
            }
        }
    }
    multipart::render_end(&mut body, &boundary);
    let body = body.freeze();
    let content_type = format!("multipart/form-data; boundary={boundary}");
    let mut reply = ApiResponse::json_bytes(200, body).with_header(CONTENT_TYPE, &content_type);
    if errors > 0 {
        reply = reply.with_header(HeaderName::from_static(ERRORS_HEADER), &errors.to_string());
    }
    Ok(reply)
}

/// Runs one part: it takes its own unit of the queue bound, like a request of its own (503/21003
/// when the queue is full).
async fn run_part(api: &Api, outer: &ApiRequest, part: multipart::PartRequest) -> ApiResponse {
    let _admission = match api.admit() {
        Ok(admission) => admission,
        Err(err) => return error_response(&err),
    };
    match routed(outer, part) {
        Ok(routed) => api.execute(routed).await,
        Err(err) => error_response(&err),
    }
}

/// The reply of a part that was not run because the batch's reply outgrew its budget.
fn not_run(cause: &ArangoError) -> ArangoError {
    ArangoError::with_message(
        RESOURCE_LIMIT,
        format!("not run: the batch's reply is full ({})", cause.message),
    )
    .with_status(cause.status)
}

/// A part's request, ready for the router, in the batch's database and as its user.
fn routed(outer: &ApiRequest, part: multipart::PartRequest) -> Result<Routed, ArangoError> {
    let target = parse_target(&part.target)?;
    if target.segments.len() >= 2 && target.segments[..2] == ["_api", "batch"] {
        return Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            "a batch part cannot be a batch request",
        ));
    }
    let uri = Uri::try_from(part.target.as_str()).map_err(|_| {
        ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            format!("invalid request target '{}'", part.target),
        )
    })?;
    Ok(Routed {
        request: ApiRequest {
            method: part.method,
            // The part's own `/_db/` prefix, if any, is ignored on purpose.
            database: outer.database.clone(),
            path: target.path,
            suffix: Vec::new(),
            query: target.query,
            headers: part.headers,
            body: part.body,
            user: outer.user.clone(),
            json_depth_max: outer.json_depth_max,
            replies: outer.replies.clone(),
        },
        segments: target.segments,
        uri,
        extensions: Extensions::new(),
    })
}
