//! `/_api/cursor`: create a cursor (run a query), read its next batch (again, with
//! `allowRetry`), delete it.
//!
//! What it is: the three endpoints over `QueryService::create_cursor`, `next_batch` and the
//! cursor store.
//!
//! What it is not: batching or expiry (the query service's).
//!
//! Invariants: `POST /_api/cursor` answers 201, a next batch 200, a delete 202; a cursor id
//! that is not a number is 1600 like a missing cursor.

use http::Method;
use quince_aql::CursorRequest;
use quince_errors::Result;
use serde_json::json;

use crate::blocking::blocking;
use crate::error::{method_not_allowed, unknown_path};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// Every request under `/_api/cursor`.
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix: Vec<String> = req.suffix.clone();
    let suffix: Vec<&str> = suffix.iter().map(String::as_str).collect();
    match (&req.method, suffix.as_slice()) {
        (&Method::POST, []) => create(api, req).await,
        (&Method::POST | &Method::PUT, [id]) => next(api, req, cursor_id(id)?, None).await,
        (&Method::POST, [id, batch]) => {
            let batch = batch
                .parse::<u64>()
                .map_err(|_| quince_aql::query::bad_request("illegal batch id"))?;
            next(api, req, cursor_id(id)?, Some(batch)).await
        }
        (&Method::DELETE, [id]) => delete(api, &req, cursor_id(id)?),
        (_, [] | [_] | [_, _]) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}

fn cursor_id(text: &str) -> Result<u64> {
    text.parse::<u64>()
        .map_err(|_| quince_aql::service::cursors::not_found())
}

async fn create(api: &Api, req: ApiRequest) -> ApiResult {
    let (database, rule) = super::guarded(&req)?;
    let request =
        CursorRequest::parse(&req.required_json_body()?, api.config().query_memory_limit)?;
    let in_transaction = req.header(crate::transaction::TRX_HEADER).is_some();
    let user = req.user.name().to_owned();
    let api = super::shared(api)?;
    let body = blocking(move || {
        let name = database.name().to_owned();
        api.queries()
            .create_cursor(database, &user, in_transaction, request, &|collections| {
                super::authorize(&rule, &name, collections)
            })
    })
    .await?;
    Ok(ApiResponse::json_bytes(201, body))
}

async fn next(api: &Api, req: ApiRequest, id: u64, batch: Option<u64>) -> ApiResult {
    let database = req.database.name().to_owned();
    let user = req.user.name().to_owned();
    let api = super::shared(api)?;
    let body = blocking(move || api.queries().next_batch(id, &database, &user, batch)).await?;
    Ok(ApiResponse::json_bytes(200, body))
}

fn delete(api: &Api, req: &ApiRequest, id: u64) -> ApiResult {
    api.queries()
        .cursors
        .delete(id, req.database.name(), req.user.name())?;
    Ok(ApiResponse::json(
        202,
        &json!({"id": id.to_string(), "error": false, "code": 202}),
    ))
}
