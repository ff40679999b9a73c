//! `/_api/user/{user}/database[/{db}[/{collection}]]`: reading, granting and revoking levels.
//!
//! What it is: the permission endpoints of <https://docs.arangodb.com/3.12/develop/http-api/users/>: the list
//! (`?full=true` adds collections and the `*` defaults), one database's or collection's
//! effective level, `PUT {grant}` and `DELETE`.
//!
//! What it is not: how levels resolve (quince-auth's `Account`) or where they are enforced
//! (`crate::permission`).
//!
//! Invariants: reading is for the user themself or an administrator; granting and revoking is
//! for administrators only, and voids the user's tokens (a new generation); a grant names an
//! existing database (404/1228) and collection (404/1203), or `*`; a grant other than `rw`,
//! `ro` or `none` is 400.

use http::Method;
use quince_auth::{Account, Level, ANY};
use quince_errors::{
    ArangoError, Result, ARANGO_DATABASE_NOT_FOUND, ARANGO_DATA_SOURCE_NOT_FOUND,
    HTTP_BAD_PARAMETER,
};
use serde_json::{json, Map, Value};

use super::{existing, on_blocking_pool, require_self_or_admin};
use crate::error::method_not_allowed;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// The text of a level that was never granted, in full listings.
const UNDEFINED: &str = "undefined";

/// Handles `/_api/user/{name}/database` and below; `rest` is what follows `database`.
pub(super) async fn handle(api: &Api, req: &ApiRequest, name: &str, rest: &[&str]) -> ApiResult {
    match (&req.method, rest) {
        (&Method::GET, []) => list(api, req, name),
        (&Method::GET, [db]) => {
            require_self_or_admin(req, name)?;
            let account = existing(api, name)?;
            Ok(result(account.database_level(db).as_str()))
        }
        (&Method::GET, [db, collection]) => {
            require_self_or_admin(req, name)?;
            let account = existing(api, name)?;
            Ok(result(account.collection_level(db, collection).as_str()))
        }
        (&Method::PUT, [db, rest @ ..]) => {
            let level = requested_level(req)?;
            set(api, req, name, db, rest.first().copied(), Some(level)).await
        }
        (&Method::DELETE, [db, rest @ ..]) => {
            set(api, req, name, db, rest.first().copied(), None).await
        }
        _ => Err(method_not_allowed()),
    }
}

fn result(level: &str) -> ApiResponse {
    ApiResponse::json(200, &json!({"error": false, "code": 200, "result": level}))
}

/// The `grant` of a `PUT` body.
fn requested_level(req: &ApiRequest) -> Result<Level> {
    let body = req.required_json_body()?;
    body.get("grant")
        .and_then(Value::as_str)
        .and_then(Level::parse)
        .ok_or_else(|| {
            ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                "expecting {\"grant\": \"rw\" | \"ro\" | \"none\"}",
            )
        })
}

/// `GET /_api/user/{name}/database[?full=true]`.
fn list(api: &Api, req: &ApiRequest, name: &str) -> ApiResult {
    require_self_or_admin(req, name)?;
    let account = existing(api, name)?;
    let full = req.bool_param("full", false);
    let mut listing = Map::new();
    for db_name in api.engine().database_names() {
        let level = account.database_level(&db_name);
        if !full {
            if level != Level::None {
                listing.insert(db_name, Value::from(level.as_str()));
            }
            continue;
        }
        let mut collections = Map::new();
        if let Some(db) = api.engine().database(&db_name) {
            for collection in db.collections() {
                let c = collection.name();
                collections.insert(c.clone(), explicit(&account, &db_name, &c));
            }
        }
        collections.insert(ANY.to_owned(), explicit(&account, &db_name, ANY));
        listing.insert(
            db_name,
            json!({"permission": level.as_str(), "collections": collections}),
        );
    }
    if full {
        let any = account
            .grants
            .get(ANY)
            .and_then(|g| g.level)
            .unwrap_or(Level::None);
        listing.insert(ANY.to_owned(), json!({"permission": any.as_str()}));
    }
    Ok(ApiResponse::json(
        200,
        &json!({"error": false, "code": 200, "result": listing}),
    ))
}

/// A collection's own grant (or the database's `*` collection grant), or "undefined".
fn explicit(account: &Account, db: &str, collection: &str) -> Value {
    let own = account.grants.get(db).and_then(|g| {
        g.collections
            .get(collection)
            .or_else(|| g.collections.get(ANY))
    });
    Value::from(own.map_or(UNDEFINED, |l| l.as_str()))
}

/// `PUT` (grant `Some`) or `DELETE` (`None`) on a database or collection.
async fn set(
    api: &Api,
    req: &ApiRequest,
    name: &str,
    db: &str,
    collection: Option<&str>,
    level: Option<Level>,
) -> ApiResult {
    req.require_admin()?;
    req.user.check_writable()?;
    existing(api, name)?;
    if db != ANY {
        let database = api
            .engine()
            .database(db)
            .ok_or_else(|| ArangoError::new(ARANGO_DATABASE_NOT_FOUND))?;
        // Revoking may name a collection that is gone; granting needs an existing one.
        if let (Some(c), Some(_)) = (collection, level) {
            if c != ANY && database.collection(c).is_err() {
                return Err(ArangoError::new(ARANGO_DATA_SOURCE_NOT_FOUND));
            }
        }
    }
    let (user, database, coll) = (
        name.to_owned(),
        db.to_owned(),
        collection.map(str::to_owned),
    );
    on_blocking_pool(api.users_handle(), move |users| {
        users.set_grant(&user, &database, coll.as_deref(), level)
    })
    .await?;
    tracing::info!(
        event = "auth.permission_changed",
        user = name,
        database = db,
        collection = collection.unwrap_or(""),
        level = level.map_or("cleared", Level::as_str),
        by = req.user.name(),
    );
    match level {
        Some(level) => {
            let target = match collection {
                Some(c) => format!("{db}/{c}"),
                None => db.to_owned(),
            };
            let mut body = Map::new();
            body.insert(target, Value::from(level.as_str()));
            body.insert("error".into(), Value::Bool(false));
            body.insert("code".into(), json!(200));
            Ok(ApiResponse::json(200, &Value::Object(body)))
        }
        None => Ok(ApiResponse::json(
            202,
            &json!({"error": false, "code": 202}),
        )),
    }
}
