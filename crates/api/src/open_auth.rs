//! `POST /_open/auth` and `POST /_open/auth/renew`: trading root's password for a token.
//!
//! What it is: the login endpoint (`{username, password}` → `{"jwt": …}`, an HS256 token with
//! `iss`, `iat`, `exp` one hour ahead and `preferred_username`) and its renewal for a caller
//! that is already authenticated.
//!
//! What it is not: token checking (that is [`crate::auth::Authenticator::check`], on every
//! request).
//!
//! Invariants: with authentication off both answer 404, as ArangoDB does; wrong credentials
//! are 401 with errorNum 401 ("Wrong credentials"), never errorNum 11, so drivers do not
//! retry them as an expired session.

use http::Method;
use quince_errors::{ArangoError, Result, HTTP_BAD_PARAMETER, HTTP_UNAUTHORIZED};
use serde_json::{json, Value};

use crate::auth::ROOT_USER;
use crate::pipeline::{unauthorized, Api};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::router::{method_not_allowed, unknown_path};

fn require_post_with_auth(api: &Api, req: &ApiRequest) -> Result<()> {
    if !api.config().authentication {
        return Err(unknown_path(&req.path));
    }
    if req.method != Method::POST {
        return Err(method_not_allowed());
    }
    Ok(())
}

/// `POST /_open/auth` with `{username, password}`.
pub(crate) fn login(api: &Api, req: &ApiRequest) -> ApiResult {
    require_post_with_auth(api, req)?;
    let malformed = || ArangoError::with_message(HTTP_BAD_PARAMETER, "invalid authentication data");
    let body = req.required_json_body().map_err(|_| malformed())?;
    let (Some(username), Some(password)) = (
        body.get("username").and_then(Value::as_str),
        body.get("password").and_then(Value::as_str),
    ) else {
        return Err(malformed());
    };
    if !api.authenticator().password_matches(username, password) {
        return Err(ArangoError::with_message(
            HTTP_UNAUTHORIZED,
            "Wrong credentials",
        ));
    }
    let token = api.authenticator().issue_token(username);
    Ok(ApiResponse::json(200, &json!({"jwt": token})))
}

/// `POST /_open/auth/renew`: a fresh token for an authenticated caller.
pub(crate) fn renew(api: &Api, req: &ApiRequest) -> ApiResult {
    require_post_with_auth(api, req)?;
    if req.user != ROOT_USER {
        return Err(unauthorized());
    }
    let token = api.authenticator().issue_token(ROOT_USER);
    Ok(ApiResponse::json(200, &json!({"jwt": token})))
}
