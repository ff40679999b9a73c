//! `/_api/user`: accounts and their permissions (<https://docs.arangodb.com/3.12/develop/http-api/users/>).
//!
//! What it is: the dispatch of `/_api/user[/{user}[/database[/{db}[/{collection}]]]]` onto
//! `quince_auth::Users`, with the account endpoints here and the permission endpoints in
//! [`grants`].
//!
//! What it is not: the rules of names, passwords or levels (quince-auth's), or
//! authentication.
//!
//! Invariants: only administrators (`rw` on `_system`) create, remove, list everybody, or
//! change other users and permissions; any authenticated user may read their own account and
//! permissions and change their own password and `extra`; a password is never returned;
//! changes hash and fsync, so they run on the blocking pool; in read-only mode every change is
//! 403/1004.

mod grants;

use std::sync::Arc;

use http::Method;
use quince_auth::{Account, AccountChange, ExtraChange, NewUser, Users};
use quince_errors::{ArangoError, Result, HTTP_BAD_PARAMETER, INTERNAL, USER_INVALID_NAME};
use serde_json::{json, Map, Value};

use crate::error::{method_not_allowed, unknown_path};
use crate::permission::forbidden;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// Handles every request under `/_api/user`.
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix: Vec<&str> = req.suffix.iter().map(String::as_str).collect();
    match (&req.method, suffix.as_slice()) {
        (&Method::GET, []) => list(api, &req),
        (&Method::POST, []) => create(api, &req).await,
        (&Method::GET, [name]) => read(api, &req, name),
        (&Method::PUT, [name]) => change(api, &req, name, true).await,
        (&Method::PATCH, [name]) => change(api, &req, name, false).await,
        (&Method::DELETE, [name]) => remove(api, &req, name).await,
        (_, [] | [_]) => Err(method_not_allowed()),
        (_, [name, "database", rest @ ..]) if rest.len() <= 2 => {
            grants::handle(api, &req, name, rest).await
        }
        _ => Err(unknown_path(&req.path)),
    }
}

/// `{…account, error: false, code}`.
fn account_reply(code: u16, account: &Account) -> ApiResponse {
    let mut body = account.public();
    body["error"] = Value::Bool(false);
    body["code"] = json!(code);
    ApiResponse::json(code, &body)
}

/// 403/11 unless the caller administers users or is `name`.
fn require_self_or_admin(req: &ApiRequest, name: &str) -> Result<()> {
    if req.user.is_admin() || (req.user.is_authenticated() && req.user.name() == name) {
        Ok(())
    } else {
        Err(forbidden())
    }
}

/// The account `name`, or 404/1703.
fn existing(api: &Api, name: &str) -> Result<Arc<Account>> {
    api.users()
        .account(name)
        .ok_or_else(|| ArangoError::new(quince_errors::USER_NOT_FOUND))
}

/// Runs an account change (it hashes and fsyncs) on the blocking pool.
pub(crate) async fn on_blocking_pool<T, F>(users: &Arc<Users>, change: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&Users) -> Result<T> + Send + 'static,
{
    let users = Arc::clone(users);
    match tokio::task::spawn_blocking(move || change(&users)).await {
        Ok(result) => result,
        // A panic in the change is a bug: let it surface as one.
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(_) => Err(ArangoError::with_message(
            INTERNAL,
            "account change cancelled",
        )),
    }
}

/// `GET /_api/user`: everybody for an administrator, else only the caller.
fn list(api: &Api, req: &ApiRequest) -> ApiResult {
    let admin = req.user.is_admin();
    let result: Vec<Value> = api
        .users()
        .accounts()
        .iter()
        .filter(|a| admin || a.name == req.user.name())
        .map(|a| a.public())
        .collect();
    Ok(ApiResponse::json(
        200,
        &json!({"error": false, "code": 200, "result": result}),
    ))
}

/// `GET /_api/user/{user}`.
fn read(api: &Api, req: &ApiRequest, name: &str) -> ApiResult {
    require_self_or_admin(req, name)?;
    let account = existing(api, name)?;
    Ok(account_reply(200, &account))
}

/// `POST /_api/user` with `{user, passwd?, active?, extra?}`: 201.
async fn create(api: &Api, req: &ApiRequest) -> ApiResult {
    req.require_admin()?;
    req.user.check_writable()?;
    let body = req.required_json_body()?;
    let fields = body
        .as_object()
        .ok_or_else(|| bad_parameter("expecting a JSON object as body"))?;
    let Some(Value::String(name)) = fields.get("user") else {
        return Err(ArangoError::new(USER_INVALID_NAME));
    };
    let user = NewUser {
        name: name.clone(),
        password: optional_string(fields, "passwd")?.unwrap_or_default(),
        active: optional_bool(fields, "active")?.unwrap_or(true),
        extra: optional_object(fields, "extra")?.unwrap_or_default(),
    };
    let account = on_blocking_pool(api.users_handle(), move |users| users.create(user)).await?;
    tracing::info!(event = "auth.user_created", user = %account.name, by = req.user.name());
    Ok(account_reply(201, &account))
}

/// `PUT` (`replace`: `extra` replaced, missing `passwd` empty, missing `active` true) or
/// `PATCH` (only what is given changes, `extra` merged) `/_api/user/{user}`.
async fn change(api: &Api, req: &ApiRequest, name: &str, replace: bool) -> ApiResult {
    require_self_or_admin(req, name)?;
    req.user.check_writable()?;
    let body = req.required_json_body()?;
    let fields = body
        .as_object()
        .ok_or_else(|| bad_parameter("expecting a JSON object as body"))?;
    existing(api, name)?;
    let password = optional_string(fields, "passwd")?;
    let active = optional_bool(fields, "active")?;
    let extra = optional_object(fields, "extra")?;
    let change = if replace {
        AccountChange {
            password: Some(password.unwrap_or_default()),
            active: Some(active.unwrap_or(true)),
            extra: ExtraChange::Replace(extra.unwrap_or_default()),
        }
    } else {
        AccountChange {
            password,
            active,
            extra: extra.map_or(ExtraChange::Keep, ExtraChange::Merge),
        }
    };
    // Users may change their own password and `extra`, not whether they are active.
    if !req.user.is_admin() && change.active.is_some_and(|a| !a) {
        return Err(forbidden());
    }
    let target = name.to_owned();
    let account = on_blocking_pool(api.users_handle(), move |users| {
        users.change(&target, change)
    })
    .await?;
    tracing::info!(event = "auth.user_changed", user = %account.name, by = req.user.name());
    Ok(account_reply(200, &account))
}

/// `DELETE /_api/user/{user}`: 202.
async fn remove(api: &Api, req: &ApiRequest, name: &str) -> ApiResult {
    req.require_admin()?;
    req.user.check_writable()?;
    let target = name.to_owned();
    on_blocking_pool(api.users_handle(), move |users| users.remove(&target)).await?;
    tracing::info!(
        event = "auth.user_removed",
        user = name,
        by = req.user.name()
    );
    Ok(ApiResponse::json(
        202,
        &json!({"error": false, "code": 202}),
    ))
}

fn bad_parameter(message: &'static str) -> ArangoError {
    ArangoError::with_message(HTTP_BAD_PARAMETER, message)
}

/// A string attribute; absent or null is `None`, another type 400.
fn optional_string(fields: &Map<String, Value>, name: &'static str) -> Result<Option<String>> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad_parameter("'passwd' must be a string")),
    }
}

/// A boolean attribute; absent or null is `None`, another type 400.
fn optional_bool(fields: &Map<String, Value>, name: &'static str) -> Result<Option<bool>> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(bad_parameter("'active' must be a boolean")),
    }
}

/// An object attribute; absent or null is `None`, another type 400.
fn optional_object(
    fields: &Map<String, Value>,
    name: &'static str,
) -> Result<Option<Map<String, Value>>> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o.clone())),
        Some(_) => Err(bad_parameter("'extra' must be an object")),
    }
}

/// Gives the user who created database `db` `rw` on it, as ArangoDB does, unless a wildcard
/// grant already gives them access (root), so their tokens are not voided for nothing.
pub(crate) async fn grant_creator(api: &Api, req: &ApiRequest, db: &str) -> Result<()> {
    let Some(account) = req.user.account() else {
        return Ok(());
    };
    if account.database_level(db) != quince_auth::Level::None {
        return Ok(());
    }
    let (name, db) = (account.name.clone(), db.to_owned());
    on_blocking_pool(api.users_handle(), move |users| {
        match users.set_grant(&name, &db, None, Some(quince_auth::Level::ReadWrite)) {
            // Removed meanwhile: there is nobody left to grant.
            Err(e) if e.is(quince_errors::USER_NOT_FOUND) => Ok(()),
            other => other.map(|_| ()),
        }
    })
    .await
}

/// Creates the users a `POST /_api/database` lists, when missing, and grants each `rw` on
/// the new database. `users` has been checked by the database module.
pub(crate) async fn grant_database_users(api: &Api, db: &str, users: Vec<NewUser>) -> Result<()> {
    let db = db.to_owned();
    on_blocking_pool(api.users_handle(), move |registry| {
        for user in users {
            let name = user.name.clone();
            if registry.account(&name).is_none() {
                match registry.create(user) {
                    Ok(_) => {}
                    // Created meanwhile by someone else: grant all the same.
                    Err(e) if e.is(quince_errors::USER_DUPLICATE) => {}
                    Err(e) => return Err(e),
                }
            }
            registry.set_grant(&name, &db, None, Some(quince_auth::Level::ReadWrite))?;
        }
        Ok(())
    })
    .await
}
