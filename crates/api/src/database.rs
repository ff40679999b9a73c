//! `/_api/database`: list, current, user, create and drop
//! (<https://docs.arangodb.com/3.12/develop/http-api/databases/>).
//!
//! What it is: the handlers of the database endpoints, over the operations interface ([`quince_ops::Engine`]).
//!
//! What it is not: name validation or storage. The catalog decides whether a name is legal
//! (1229) or taken (1207) and owns the files.
//!
//! Invariants: list, create and drop run only in `_system` (403/1230 elsewhere); creating and
//! dropping need `rw` on `_system` (403/11) and a writable server (403/1004); users listed on
//! create are created when missing and get `rw` on the new database; a dropped database's
//! grants are forgotten, so a new database of the same name starts with nobody's old
//! permissions; creating and dropping touch the file system and fsync, so they run on the
//! blocking pool, never on an async worker thread.

use http::Method;
use quince_errors::{
    ArangoError, Result, ARANGO_DATABASE_NAME_INVALID, ARANGO_USE_SYSTEM_DATABASE,
    HTTP_BAD_PARAMETER, INTERNAL,
};
use serde_json::{json, Map, Value};

use crate::error::{method_not_allowed, unknown_path};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// Handles every request under `/_api/database`.
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix: Vec<&str> = req.suffix.iter().map(String::as_str).collect();
    match (&req.method, suffix.as_slice()) {
        (&Method::GET, []) => list(api, &req),
        (&Method::GET, ["user"]) => list_accessible(api, &req),
        (&Method::GET, ["current"]) => Ok(current(&req)),
        (&Method::POST, []) => create(api, &req).await,
        (&Method::DELETE, [name]) => drop(api, &req, name).await,
        (_, [] | [_]) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}

/// `{"error":false,"code":N,"result":…}`.
fn envelope(code: u16, result: Value) -> ApiResponse {
    ApiResponse::json(
        code,
        &json!({"error": false, "code": code, "result": result}),
    )
}

fn require_system(req: &ApiRequest) -> Result<()> {
    if req.database.is_system() {
        Ok(())
    } else {
        Err(ArangoError::new(ARANGO_USE_SYSTEM_DATABASE))
    }
}

/// `GET /_api/database`: every database (from `_system` only).
fn list(api: &Api, req: &ApiRequest) -> ApiResult {
    require_system(req)?;
    Ok(envelope(200, json!(api.engine().database_names())))
}

/// `GET /_api/database/user`: the databases the caller may use (a level other than `none`).
fn list_accessible(api: &Api, req: &ApiRequest) -> ApiResult {
    let names: Vec<String> = api
        .engine()
        .database_names()
        .into_iter()
        .filter(|name| req.user.level_on(name).can_read())
        .collect();
    Ok(envelope(200, json!(names)))
}

/// `GET /_api/database/current` (in a cluster also `sharding`, `replicationFactor` and
/// `writeConcern`, as the engine reports them).
fn current(req: &ApiRequest) -> ApiResponse {
    let db = &req.database;
    let mut result = json!({
        "id": db.id().to_string(),
        "name": db.name(),
        "isSystem": db.is_system(),
        "path": "none",
    });
    if let Some(Value::Object(cluster)) = db.cluster_properties() {
        for (name, value) in cluster {
            result[name] = value;
        }
    }
    envelope(200, result)
}

/// `POST /_api/database` with `{name, options?, users?}`.
async fn create(api: &Api, req: &ApiRequest) -> ApiResult {
    require_system(req)?;
    req.require_admin()?;
    req.user.check_writable()?;
    let body = req.required_json_body()?;
    let Some(fields) = body.as_object() else {
        return Err(bad_parameter("expecting a JSON object as body"));
    };
    let Some(name) = fields.get("name").and_then(Value::as_str) else {
        return Err(ArangoError::new(ARANGO_DATABASE_NAME_INVALID));
    };
    match fields.get("options") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(_) => return Err(bad_parameter("invalid database options")),
    }
    validate_users(fields.get("users"))?;
    let users = listed_users(fields.get("users"))?;
    let engine = std::sync::Arc::clone(api.engine());
    let name = name.to_string();
    let created = name.clone();
    // The options reach the engine: a single server ignores them, a coordinator plans with
    // them (`sharding`, `replicationFactor`, `writeConcern`).
    let options = fields.get("options").cloned().unwrap_or(Value::Null);
    tokio::task::spawn_blocking(move || engine.create_database_with(&created, &options))
        .await
        .map_err(|e| {
            ArangoError::with_message(INTERNAL, format!("database creation failed: {e}"))
        })??;
    crate::user::grant_database_users(api, &name, users).await?;
    crate::user::grant_creator(api, req, &name).await?;
    Ok(envelope(201, Value::Bool(true)))
}

/// `DELETE /_api/database/{name}`.
async fn drop(api: &Api, req: &ApiRequest, name: &str) -> ApiResult {
    require_system(req)?;
    req.require_admin()?;
    req.user.check_writable()?;
    let engine = std::sync::Arc::clone(api.engine());
    let users = std::sync::Arc::clone(api.users_handle());
    let name = name.to_string();
    tokio::task::spawn_blocking(move || {
        engine.drop_database(&name)?;
        users.forget_database(&name)
    })
    .await
    .map_err(|e| ArangoError::with_message(INTERNAL, format!("database drop failed: {e}")))??;
    Ok(envelope(200, Value::Bool(true)))
}

/// The accounts of a `users` list (already checked by [`validate_users`]): names are checked
/// before the database exists (1700), passwords default to empty, `active` to true.
fn listed_users(users: Option<&Value>) -> Result<Vec<quince_auth::NewUser>> {
    let Some(Value::Array(list)) = users else {
        return Ok(Vec::new());
    };
    list.iter()
        .map(|user| {
            let name = user["username"].as_str().unwrap_or_default().to_owned();
            quince_auth::check_name(&name)?;
            Ok(quince_auth::NewUser {
                name,
                password: user["passwd"].as_str().unwrap_or_default().to_owned(),
                active: user["active"].as_bool().unwrap_or(true),
                extra: user["extra"].as_object().cloned().unwrap_or_default(),
            })
        })
        .collect()
}

/// Checks the shape of `users`: an array of objects with a string `username`, and optional
/// `passwd` (string), `active` (bool) and `extra` (object).
fn validate_users(users: Option<&Value>) -> Result<()> {
    let list = match users {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(bad_parameter("users must be an array")),
    };
    for user in list {
        let Some(user) = user.as_object() else {
            return Err(bad_parameter("each user must be an object"));
        };
        validate_user(user)?;
    }
    Ok(())
}

fn validate_user(user: &Map<String, Value>) -> Result<()> {
    match user.get("username") {
        Some(Value::String(name)) if !name.is_empty() => {}
        _ => {
            return Err(bad_parameter(
                "user must have a non-empty string 'username'",
            ))
        }
    }
    let ok = matches!(user.get("passwd"), None | Some(Value::String(_)))
        && matches!(user.get("active"), None | Some(Value::Bool(_)))
        && matches!(
            user.get("extra"),
            None | Some(Value::Null | Value::Object(_))
        );
    if ok {
        Ok(())
    } else {
        Err(bad_parameter(
            "user attributes must be 'passwd' (string), 'active' (bool), 'extra' (object)",
        ))
    }
}

fn bad_parameter(message: &'static str) -> ArangoError {
    ArangoError::with_message(HTTP_BAD_PARAMETER, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_users_are_accepted() {
        assert!(validate_users(None).is_ok());
        assert!(validate_users(Some(&Value::Null)).is_ok());
        let users = json!([
            {"username": "a"},
            {"username": "b", "passwd": "x", "active": true, "extra": {"k": 1}},
        ]);
        assert!(validate_users(Some(&users)).is_ok());
    }

    #[test]
    fn malformed_users_are_400() {
        for bad in [
            json!({"username": "a"}),
            json!(["a"]),
            json!([{}]),
            json!([{"username": ""}]),
            json!([{"username": 1}]),
            json!([{"username": "a", "passwd": 1}]),
            json!([{"username": "a", "active": "yes"}]),
            json!([{"username": "a", "extra": []}]),
        ] {
            let err = validate_users(Some(&bad)).unwrap_err();
            assert_eq!((err.status, err.num()), (400, 400), "{bad}");
        }
    }
}
