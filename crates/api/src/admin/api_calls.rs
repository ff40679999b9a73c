//! `GET /_admin/server/api-calls`: the most recent requests (ArangoDB 3.12.5), from the API's
//! [`ApiCallLog`](crate::state::api_calls::ApiCallLog).
//!
//! What it is: `{error, code, result: {calls: [{timeStamp, requestType, path, database}]}}`,
//! newest first; empty when `--server.api-call-recording` is off.
//!
//! What it is not: the recorder (the pipeline records each request once it has found its
//! database).
//!
//! Invariants: only whom `--log.recording-api-enabled` lets through (`true`, the default:
//! administrators; `jwt`: the superuser; `false`: nobody; 403/11 otherwise); at most the ring's
//! bound of calls.

use http::Method;
use serde_json::json;

use crate::error::method_not_allowed;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// `GET /_admin/server/api-calls`.
pub(crate) fn api_calls(api: &Api, req: &ApiRequest) -> ApiResult {
    if req.method != Method::GET {
        return Err(method_not_allowed());
    }
    api.config().recording_api.check(&req.user)?;
    let calls: Vec<_> = api
        .api_calls()
        .newest_first()
        .into_iter()
        .map(|call| {
            let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(call.unix_secs);
            json!({
                "timeStamp": quince_aql::service::registry::iso8601(time),
                "requestType": call.method,
                "path": call.path,
                "database": call.database,
            })
        })
        .collect();
    Ok(ApiResponse::json(
        200,
        &json!({"error": false, "code": 200, "result": {"calls": calls}}),
    ))
}
