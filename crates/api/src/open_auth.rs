//! `POST /_open/auth` and `POST /_open/auth/renew`: trading a user's password for a token.
//!
//! What it is: the login endpoint (`{username, password}` → `{"jwt": …}`, an HS256 token with
//! `iss`, `iat`, `exp` one hour ahead, `preferred_username` and the user's credential
//! generation `gen`) for any active user, and its renewal for a caller that is already
//! authenticated. The password may be an access token (`/_api/token`), with an empty username
//! or the token's own user; the JWT is then the token owner's.
//!
//! What it is not: token checking (that is [`crate::auth`], on every request).
//!
//! Invariants: with authentication off both answer 404, as ArangoDB does; wrong credentials
//! are 401 with errorNum 401 ("Wrong credentials"), never errorNum 11, so drivers do not
//! retry them as an expired session; they are counted and logged like any failed login; the
//! password check runs off the async workers; an access token named with another user's name
//! is wrong credentials.

use http::{Extensions, Method};
use quince_auth::access_token::looks_like_token;
use quince_errors::{ArangoError, Result, HTTP_BAD_PARAMETER, HTTP_UNAUTHORIZED};
use serde_json::{json, Value};

use crate::auth::record_failed_login;
use crate::error::unauthorized;
use crate::error::{method_not_allowed, unknown_path};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

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
pub(crate) async fn login(api: &Api, req: &ApiRequest, extensions: &Extensions) -> ApiResult {
    require_post_with_auth(api, req)?;
    let malformed = || ArangoError::with_message(HTTP_BAD_PARAMETER, "invalid authentication data");
    let body = req.required_json_body().map_err(|_| malformed())?;
    let (Some(username), Some(password)) = (
        body.get("username").and_then(Value::as_str),
        body.get("password").and_then(Value::as_str),
    ) else {
        return Err(malformed());
    };
    let account = if looks_like_token(password) {
        // An access token as the password: the user may be left empty, or must be the
        // token's own.
        let named = (!username.is_empty()).then_some(username);
        api.users().verify_access_token(named, password)
    } else if username.is_empty() {
        None
    } else {
        match api.users().verified_before(username, password) {
            Some(account) => Some(account),
            None => crate::auth::check_password(api, username, password.to_owned()).await?,
        }
    };
    let Some(account) = account else {
        record_failed_login(api, extensions, username, "login with wrong credentials");
        return Err(ArangoError::with_message(
            HTTP_UNAUTHORIZED,
            "Wrong credentials",
        ));
    };
    let token = api.authenticator().issue_token(&account);
    Ok(ApiResponse::json(200, &json!({"jwt": token})))
}

/// `POST /_open/auth/renew`: a fresh token for an authenticated caller (a superuser gets a
/// token of root).
pub(crate) fn renew(api: &Api, req: &ApiRequest) -> ApiResult {
    require_post_with_auth(api, req)?;
    let account = match req.user.account() {
        Some(account) => api.users().account(&account.name),
        None if req.user.is_superuser() => api.users().account(quince_auth::ROOT_USER),
        None => None,
    };
    let Some(account) = account else {
        return Err(unauthorized());
    };
    let token = api.authenticator().issue_token(&account);
    Ok(ApiResponse::json(200, &json!({"jwt": token})))
}
