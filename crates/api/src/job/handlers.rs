//! `/_api/job` and `/_admin/job` (<https://docs.arangodb.com/3.12/develop/http-api/jobs/>): fetch, status, lists,
//! cancel and delete of stored asynchronous jobs.
//!
//! What it is: [`handle`], one match over method and path suffix.
//!
//! What it is not: running jobs (`crate::async_exec`) or keeping them (`crate::state::job_store`).
//!
//! Invariants: every call sees only the caller's own jobs of the request's database (a
//! superuser: every user's), and another's job answers exactly as a missing one (404);
//! `PUT /{id}` hands a done job's reply out once, with its original status, headers and body
//! plus `x-arango-async-id`; a pending job is 204 without the id header; an unknown or
//! non-numeric id is 404/404; list types other than `pending` and `done` are 400/400.

use http::header::HeaderName;
use http::Method;
use quince_errors::{ArangoError, HTTP_BAD_PARAMETER, HTTP_NOT_FOUND};
use serde_json::{json, Value};

use crate::error::{method_not_allowed, unknown_path};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::job_store::{cancelled_reply, Fetched, JobId, Status, Viewer, ASYNC_ID_HEADER};
use crate::state::Api;

/// How many ids a list returns when `count` is absent.
const LIST_COUNT_DEFAULT: usize = 100;

/// Who is asking, for the job table: jobs are the caller's own, in the request's database.
fn viewer(req: &ApiRequest) -> Viewer<'_> {
    Viewer {
        user: req.user.name(),
        database: req.database.name(),
        superuser: req.user.is_superuser(),
    }
}

/// Answers one job-management request.
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix: Vec<&str> = req.suffix.iter().map(String::as_str).collect();
    let jobs = api.jobs();
    let me = viewer(&req);
    match (&req.method, suffix.as_slice()) {
        (&Method::PUT, []) => Err(bad_parameter("bad parameter: no job id given")),
        (&Method::PUT, [id]) => {
            let id = job_id(id)?;
            match jobs.fetch(id, me) {
                Fetched::Done(reply) => Ok(
                    reply.with_header(HeaderName::from_static(ASYNC_ID_HEADER), &id.to_string())
                ),
                Fetched::Pending => Ok(ApiResponse::empty(204)),
                Fetched::Unknown => Err(not_found()),
            }
        }
        (&Method::PUT, [id, "cancel"]) => {
            if jobs.cancel(job_id(id)?, me, cancelled_reply) {
                Ok(result_true())
            } else {
                Err(not_found())
            }
        }
        (&Method::GET, [name]) if starts_like_an_id(name) => match jobs.status(job_id(name)?, me) {
            Status::Done => Ok(ApiResponse::empty(200)),
            Status::Pending => Ok(ApiResponse::empty(204)),
            Status::Unknown => Err(not_found()),
        },
        (&Method::GET, [kind @ ("pending" | "done")]) => {
            let count = match req.param("count") {
                None => LIST_COUNT_DEFAULT,
                Some(text) => text
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| bad_parameter("invalid value for 'count'"))?,
            };
            let ids: Vec<Value> = jobs
                .list(*kind == "done", count, me)
                .into_iter()
                .map(|id| Value::String(id.to_string()))
                .collect();
            Ok(ApiResponse::json(200, &Value::Array(ids)))
        }
        (&Method::GET, [] | [_]) => Err(bad_parameter(
            "invalid type: expected 'pending', 'done' or a job id",
        )),
        (&Method::DELETE, ["all"]) => {
            jobs.delete_all(me);
            Ok(result_true())
        }
        (&Method::DELETE, ["expired"]) => {
            let stamp = req
                .param("stamp")
                .and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite())
                .ok_or_else(|| bad_parameter("missing or invalid 'stamp'"))?;
            jobs.delete_expired(stamp, me);
            Ok(result_true())
        }
        (&Method::DELETE, [id]) => {
            if jobs.delete(job_id(id)?, me) {
                Ok(result_true())
            } else {
                Err(not_found())
            }
        }
        (&Method::DELETE, []) => Err(bad_parameter("bad parameter: no job id given")),
        (_, [] | [_]) | (_, [_, "cancel"]) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}

/// ArangoDB reads a suffix as a job id when it starts with a digit 1-9.
fn starts_like_an_id(text: &str) -> bool {
    text.as_bytes()
        .first()
        .is_some_and(|b| (b'1'..=b'9').contains(b))
}

/// A job id from the path; anything but a decimal number names no job (404).
fn job_id(text: &str) -> Result<JobId, ArangoError> {
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_found());
    }
    text.parse::<JobId>().map_err(|_| not_found())
}

fn not_found() -> ArangoError {
    ArangoError::new(HTTP_NOT_FOUND)
}

fn bad_parameter(message: &str) -> ArangoError {
    ArangoError::with_message(HTTP_BAD_PARAMETER, message.to_string())
}

fn result_true() -> ApiResponse {
    ApiResponse::json(200, &json!({ "result": true }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_decimal_numbers() {
        assert_eq!(job_id("42").unwrap(), 42);
        assert_eq!(job_id("abc").unwrap_err().status, 404);
        assert_eq!(job_id("-1").unwrap_err().status, 404);
        assert_eq!(job_id("99999999999999999999999").unwrap_err().status, 404);
        assert!(starts_like_an_id("12"));
        assert!(!starts_like_an_id("0"));
        assert!(!starts_like_an_id("done"));
    }
}
