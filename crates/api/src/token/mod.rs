//! `/_api/token/{user}[/{id}]`: access tokens (ArangoDB 3.12), made, listed and revoked.
//!
//! What it is: `POST` `{name, valid_until}` → the token's description and, this once, the
//! token itself (without `valid_until` the token does not expire: it lists `valid_until: 0`); `GET` → `{tokens: […]}` without the tokens; `DELETE /{id}`.
//!
//! What it is not: checking a presented token (`crate::auth`, through quince-auth).
//!
//! Invariants: a user manages their own tokens, an administrator anybody's (403/11
//! otherwise); the token text appears only in the reply that made it; in read-only mode
//! making and revoking are 403/1004.

use http::Method;
use quince_auth::unix_now_secs;
use quince_errors::{ArangoError, HTTP_BAD_PARAMETER};
use serde_json::{json, Value};

use crate::error::{method_not_allowed, unknown_path};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;
use crate::user::on_blocking_pool;

/// Handles every request under `/_api/token`.
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix: Vec<&str> = req.suffix.iter().map(String::as_str).collect();
    let name = match suffix.first() {
        Some(name) => *name,
        None => return Err(unknown_path(&req.path)),
    };
    if !(req.user.is_admin() || (req.user.is_authenticated() && req.user.name() == name)) {
        return Err(crate::permission::forbidden());
    }
    match (&req.method, &suffix[1..]) {
        (&Method::GET, []) => {
            let account = api
                .users()
                .account(name)
                .ok_or_else(|| ArangoError::new(quince_errors::USER_NOT_FOUND))?;
            let now = unix_now_secs();
            let tokens: Vec<Value> = account.tokens.iter().map(|t| t.describe(now)).collect();
            Ok(ApiResponse::json(200, &json!({"tokens": tokens})))
        }
        (&Method::POST, []) => create(api, &req, name).await,
        (&Method::DELETE, [id]) => {
            req.user.check_writable()?;
            let id: u64 = id.parse().map_err(|_| {
                ArangoError::with_message(quince_errors::HTTP_NOT_FOUND, "access token not found")
            })?;
            let user = name.to_owned();
            on_blocking_pool(api.users_handle(), move |users| {
                users.delete_token(&user, id)
            })
            .await?;
            tracing::info!(
                event = "auth.token_revoked",
                user = name,
                id,
                by = req.user.name()
            );
            Ok(ApiResponse::json(
                200,
                &json!({"error": false, "code": 200}),
            ))
        }
        (_, [] | [_]) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}

/// `POST /_api/token/{user}` with `{name, valid_until}` (`valid_until` optional).
async fn create(api: &Api, req: &ApiRequest, name: &str) -> ApiResult {
    req.user.check_writable()?;
    let body = req.required_json_body()?;
    let Some(token_name) = body.get("name").and_then(Value::as_str) else {
        return Err(bad_body());
    };
    // Without `valid_until` (or with `null`) the token does not expire, as in ArangoDB 3.12.
    let valid_until = match body.get("valid_until") {
        None | Some(Value::Null) => None,
        Some(value) => Some(value.as_u64().ok_or_else(bad_body)?),
    };
    let (user, token_name) = (name.to_owned(), token_name.to_owned());
    let (record, token) = on_blocking_pool(api.users_handle(), move |users| {
        users.create_token(&user, &token_name, valid_until)
    })
    .await?;
    tracing::info!(
        event = "auth.token_created",
        user = name,
        id = record.id,
        fingerprint = %record.fingerprint,
        by = req.user.name()
    );
    let mut reply = record.describe(unix_now_secs());
    reply["token"] = Value::String(token);
    Ok(ApiResponse::json(200, &reply))
}

fn bad_body() -> ArangoError {
    ArangoError::with_message(
        HTTP_BAD_PARAMETER,
        "expecting {\"name\": string, \"valid_until\": unix seconds (optional)}",
    )
}
