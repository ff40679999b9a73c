//! `GET /_admin/sleep?duration=S`: answers `{"duration":S}` after S seconds.
//!
//! What it is: ArangoDB's test aid for slow requests. Run as an asynchronous job it occupies
//! a worker, which is how tests queue jobs behind it deterministically; cancelling the job
//! ends the wait early (it is the one handler that reacts to a cancel while running, since
//! it has nothing to leave half done).
//!
//! What it is not: a way to stall the server: the wait is a timer (no thread is held) and is
//! bounded by [`SLEEP_SECONDS_MAX`].
//!
//! Invariants: the reply is sent only after the duration has passed or the job was cancelled.

use std::time::Duration;

use http::Method;
use quince_errors::{ArangoError, HTTP_BAD_PARAMETER};
use serde_json::json;

use crate::error::method_not_allowed;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::job_store::cancelled;

/// The longest sleep accepted, in seconds.
pub(crate) const SLEEP_SECONDS_MAX: f64 = 300.0;

/// `GET /_admin/sleep`.
pub(crate) async fn sleep(req: ApiRequest) -> ApiResult {
    if req.method != Method::GET {
        return Err(method_not_allowed());
    }
    let seconds = req
        .param("duration")
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && (0.0..=SLEEP_SECONDS_MAX).contains(s))
        .ok_or_else(|| {
            ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                format!("'duration' must be a number of seconds from 0 to {SLEEP_SECONDS_MAX}"),
            )
        })?;
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {}
        _ = cancelled() => {}
    }
    Ok(ApiResponse::json(
        200,
        &json!({ "error": false, "code": 200, "duration": seconds }),
    ))
}
