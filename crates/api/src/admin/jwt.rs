//! `GET`/`POST /_admin/server/jwt`: the token secrets in use, and reloading them from disk
//! without a restart.
//!
//! What it is: `GET` → `{error, code, result: {active: {sha256}, passive: [{sha256}]}}` (the
//! SHA-256 of each secret, never a secret); `POST` re-reads `--server.jwt-secret-keyfile` or
//! `--server.jwt-secret-folder` through the binary's [`SecretSource`](crate::SecretSource),
//! swaps the authenticator's secrets, and answers like `GET`. From the next request on, tokens
//! signed with the new signing secret work and tokens of a secret no longer on disk do not.
//!
//! What it is not: choosing where the secrets live (fixed at startup, as in arangod).
//!
//! Invariants: superusers only (a superuser JWT, or authentication off): 403/11 for anyone
//! else, administrators included, as arangod has it; a reload that cannot read its files, finds
//! no secret, or has nothing configured to read changes nothing and answers the error.

use http::Method;
use quince_errors::{ArangoError, HTTP_BAD_PARAMETER, NOT_IMPLEMENTED};
use serde_json::json;

use crate::error::method_not_allowed;
use crate::permission::forbidden;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// `GET` and `POST /_admin/server/jwt`.
pub(crate) fn handle(api: &Api, req: &ApiRequest) -> ApiResult {
    if req.method != Method::GET && req.method != Method::POST {
        return Err(method_not_allowed());
    }
    if !req.user.is_superuser() {
        return Err(forbidden());
    }
    if req.method == Method::POST {
        reload(api)?;
        tracing::info!(
            event = "auth.jwt_reloaded",
            "token secrets reloaded from disk"
        );
    }
    let (active, passive) = api.authenticator().secret_digests();
    let passive: Vec<_> = passive.iter().map(|s| json!({"sha256": s})).collect();
    Ok(ApiResponse::json(
        200,
        &json!({
            "error": false,
            "code": 200,
            "result": {"active": {"sha256": active}, "passive": passive},
        }),
    ))
}

fn reload(api: &Api) -> Result<(), ArangoError> {
    let source = api.hooks().secrets().ok_or_else(|| {
        ArangoError::with_message(NOT_IMPLEMENTED, "this server cannot reload its secrets")
    })?;
    let secrets = source
        .read()
        .map_err(|e| ArangoError::with_message(HTTP_BAD_PARAMETER, e))?
        .ok_or_else(|| {
            ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                "no --server.jwt-secret-keyfile or --server.jwt-secret-folder to reload from",
            )
        })?;
    if secrets.is_empty() || secrets.iter().any(Vec::is_empty) {
        return Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            "the secret files hold no usable secret",
        ));
    }
    api.authenticator().replace_secrets(&secrets);
    Ok(())
}
